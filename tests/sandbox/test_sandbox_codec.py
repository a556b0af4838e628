"""The value codec, the framing, the judging and the seccomp program, without a sandbox."""

from __future__ import annotations

import contextlib
import json
import marshal
import math
import os
import threading
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, strategies as st

from lift_metrics.sandbox import _worker
from lift_metrics.sandbox._judge import judge
from lift_metrics.sandbox._worker import (
    MAX_DEPTH,
    MAX_FRAME_BYTES,
    MAX_VALUE_BYTES,
    DecodeError,
    EncodeError,
    Unsupported,
    _encode_json,
    _seccomp_program,
    canonical,
    decode_value,
    encode_value,
    pack_call,
    pack_frame,
    pack_request,
    remove_tree,
    tree_repr,
    unpack_frames,
)

scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text() | st.binary()
hashables = st.recursive(
    scalars, lambda inner: st.tuples(inner) | st.frozensets(inner, max_size=3), max_leaves=8
)
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.tuples(inner, inner)
        | st.dictionaries(hashables, inner, max_size=3)
        | st.sets(hashables, max_size=3)
        | st.frozensets(hashables, max_size=3)
    ),
    max_leaves=12,
)


def typed_equal(a: Any, b: Any) -> bool:
    """Independent reference: equal value and equal type all the way down, NaN == NaN."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return (math.isnan(a) and math.isnan(b)) or a == b
    if isinstance(a, list | tuple):
        return len(a) == len(b) and all(typed_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, set | frozenset | dict):  # equal as multisets (NaNs may repeat)
        xs = list(a.items()) if isinstance(a, dict) else list(a)
        ys = list(b.items()) if isinstance(b, dict) else list(b)
        return all(
            sum(typed_equal(x, z) for z in xs) == sum(typed_equal(x, z) for z in ys)
            for x in xs + ys
        )
    return bool(a == b)


@pytest.mark.slow
@given(values)
def test_round_trip_through_json_keeps_value_and_type(value: Any) -> None:
    tree = json.loads(json.dumps(encode_value(value)))
    assert typed_equal(decode_value(tree), value)
    assert canonical(tree) == canonical(encode_value(value))


@pytest.mark.slow
@given(values, values)
def test_canonical_equality_is_typed_equality(a: Any, b: Any) -> None:
    same = canonical(encode_value(a)) == canonical(encode_value(b))
    assert same == typed_equal(a, b)


@pytest.mark.parametrize(
    ("a", "b"), [(1, 1.0), (1, True), (0, False), ({1}, frozenset({1})), ({1: 2}, {True: 2})]
)
def test_types_that_python_calls_equal_stay_apart(a: Any, b: Any) -> None:
    assert a == b
    assert canonical(encode_value(a)) != canonical(encode_value(b))


def test_unsupported_values_never_compare_equal() -> None:
    class Liar:
        def __eq__(self, other: object) -> bool:
            return True

        __hash__ = object.__hash__

    tree = encode_value(Liar())
    assert tree[0] == "?"
    assert tree[1].endswith("Liar")
    assert canonical(tree) != canonical(tree)
    assert isinstance(decode_value(tree), Unsupported)


def test_encoding_is_bounded() -> None:
    with pytest.raises(EncodeError, match="larger than 100 bytes"):
        encode_value("x" * 200, max_bytes=100)
    nested: list[Any] = []
    for _ in range(100):
        nested = [nested]
    with pytest.raises(EncodeError, match="nested deeper"):
        encode_value(nested)
    with pytest.raises(EncodeError, match="too many digits"):
        encode_value(10**5000)
    cyclic: list[Any] = []
    cyclic.append(cyclic)
    with pytest.raises(EncodeError):
        encode_value(cyclic)


@pytest.mark.parametrize(
    "tree",
    [
        [],
        ["i", "12x"],
        ["i", 12],
        ["b", 2],
        ["S", [["l", []]]],  # unhashable set element
        ["F", [["t", [["S", []]]]]],
        ["d", [[["l", []], ["N"]]]],  # unhashable key
        ["d", [[["t", [["d", []]]], ["N"]]]],
        ["y", "zz"],
        ["Q", 1],
        ["l", "not a list"],
        ["f", [1]],
        "i",
        # a payload of the wrong JSON type or spelling: the encoder writes one spelling only
        ["f", 10**400],  # a JSON integer too large for a float
        ["f", 1],
        ["f", True],
        ["f", "1.5"],
        ["y", "0 0"],  # bytes.fromhex would skip the spaces
        ["y", " 00"],
        ["y", "0A"],
        ["y", "000"],
        ["y", "\uff10\uff10"],  # full-width digits
        ["i", "\u0663"],  # an Arabic-Indic digit, which int() reads as 3
        ["i", "007"],
        ["i", "-0"],
        ["i", "-"],
        ["i", "+1"],
        ["i", " 1"],
        ["b", True],
        ["b", 1.0],
        ["s", 1],
        ["s", None],
        # the wrong number of items
        ["N", 1],
        ["i", "1", "2"],
        ["s"],
        ["?", "a"],
        ["?", "a", 1],
        ["l", [], []],
        ["d", [[["s", "a"], ["N"], ["N"]]]],
        ["d", [[["s", "a"]]]],
        ["d", ["not a pair"]],
        [1, "i"],
        {"i": "1"},
        # unhashable members, also among many (the hash-spread check)
        ["S", [["i", str(i)] for i in range(100)] + [["l", []]]],
        ["d", [[["i", str(i)], ["N"]] for i in range(100)] + [[["l", []], ["N"]]]],
    ],
)
def test_malformed_trees_are_rejected(tree: Any) -> None:
    with pytest.raises(DecodeError):
        decode_value(tree)
    with pytest.raises(DecodeError):
        canonical(tree)


# any JSON value, and lists that start with a tag so that the checks past the tag are reached
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=2), inner),
    max_leaves=10,
)
tagged = st.recursive(
    json_values,
    lambda inner: st.builds(
        lambda tag, rest: [tag, *rest],
        st.sampled_from(["N", "b", "i", "f", "s", "y", "?", "l", "t", "S", "F", "d", "x"]),
        st.lists(inner | st.lists(inner, max_size=3), max_size=3),
    ),
    max_leaves=12,
)


@pytest.mark.slow
@given(tagged)
@example(["f", 10**400])
@example(["l", [["?", "T", "t"], ["y", "0 0 0"]]])
def test_any_json_tree_decodes_or_raises_decode_error_only(tree: Any) -> None:
    with contextlib.suppress(DecodeError):
        decode_value(tree)
    try:
        canonical(tree)
    except DecodeError:
        return
    assert isinstance(tree_repr(tree), str)  # a tree that canonical accepts can be shown


def _forged_frame(obj: Any) -> bytes:
    """A frame as a child may forge it: any JSON, NaN and Infinity literals included."""
    data = json.dumps(obj).encode()
    return len(data).to_bytes(4, "big") + data


NONCE = "0" * 32


def _judge_pipe(res: bytes, *, cases: int = 1, expected: Any = 1) -> Any:
    """Judge the result pipe ``res`` of ``cases`` I/O cases that all expect ``expected``."""
    result, _ = judge(
        mode="io",
        cases=[({}, expected)] * cases,
        expected_canon=[canonical(encode_value(expected))] * cases,
        nonce=NONCE,
        header={"exit_code": 0},
        res=res,
        err=b"",
        timeout_s=1.0,
        elapsed_ms=1.0,
    )
    return result


def _judged(value_tree: Any) -> Any:
    """Judge a result pipe holding load, a case frame with ``value_tree`` and done."""
    frames = ({"k": "load"}, {"k": "case", "i": 0, "v": value_tree}, {"k": "done"})
    return _judge_pipe(b"".join(_forged_frame({**frame, "n": NONCE}) for frame in frames))


@pytest.mark.slow
@given(tagged)
@example(["f", 10**400])
@example(["y", "00 " * 200])  # a pair split where the shown value is cut
def test_any_reported_value_is_judged_never_raised(tree: Any) -> None:
    result = _judged(tree)
    assert result.status in ("passed", "failed")
    assert result.status == "passed" or result.passed_count == 0
    if result.status == "passed":  # only the one spelling of 1 passes
        assert tree == ["i", "1"]


@pytest.mark.parametrize(
    "tree",
    [
        ["f", 10**400],
        ["l", [["f", 10**400]]],
        ["S", [["f", 10**400]]],
        ["y", "00 00"],
        # a value that is never equal, then a malformed one: the whole tree is still checked
        ["l", [["?", "T", "t"], ["y", " 0"]]],
        ["i", "\u0661"],  # would read as 1
        ["i", "01"],
    ],
)
def test_forged_values_fail_as_tampering(tree: Any) -> None:
    result = _judged(tree)
    assert result.status == "failed"
    assert "tampered" in result.reason


def test_encoded_size_bounds_the_json() -> None:
    for value in (None, True, -12, 1.5e-300, float("nan"), "\ud83d\ude00\x01\"", b"\x00",
                  [1, (2.0,)], {1: {"a": b""}}, {frozenset({1})}, object()):  # fmt: skip
        size = len(_encode_json(encode_value(value)))
        assert encode_value(value, max_bytes=2 * size)  # the charge adds separators only
        with pytest.raises(EncodeError):
            encode_value(value, max_bytes=size - 1)


@pytest.mark.slow
@given(values)
def test_any_value_within_the_budget_encodes_within_it(value: Any) -> None:
    size = len(_encode_json(encode_value(value)))
    with pytest.raises(EncodeError):
        encode_value(value, max_bytes=size - 1)


def test_the_largest_value_sent_fits_in_one_frame() -> None:
    # an astral character is 12 bytes of JSON: the budget counts bytes, not characters
    text = "\U0001f600" * ((MAX_VALUE_BYTES - 9) // 12)  # ["s","..."], is 9 bytes more
    frame = pack_frame({"k": "case", "i": 10**6, "v": encode_value(text), "n": "0" * 32})
    assert len(frame) - 4 <= MAX_FRAME_BYTES
    with pytest.raises(EncodeError):
        encode_value(text + "\U0001f600")


def _counting_json(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Record the length of every text the codec parses as JSON."""
    parsed: list[int] = []
    loads = json.loads

    def counting(data: Any) -> Any:
        parsed.append(len(data))
        return loads(data)

    monkeypatch.setattr(_worker.json, "loads", counting)
    return parsed


def test_a_frame_over_the_bound_is_refused_unparsed(monkeypatch: pytest.MonkeyPatch) -> None:
    parsed = _counting_json(monkeypatch)
    big = b'["s","' + b"x" * MAX_FRAME_BYTES + b'"]'
    blob = pack_frame({"k": "load"}) + len(big).to_bytes(4, "big") + big + pack_frame({})
    frames, well_formed = unpack_frames(blob, max_frames=3)
    assert (frames, well_formed) == ([{"k": "load"}], False)
    assert parsed == [len(pack_frame({"k": "load"})) - 4]  # the big frame was never parsed


def test_judging_parses_at_most_one_frame_per_expected_message(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # a forged 8 MiB frame (the most a result pipe carries) costs no parsing at all, and the
    # JSON parsed for n cases is at most (n + 2) frames of MAX_FRAME_BYTES
    items = ",".join(['["N"]'] * 1_398_000)
    flood = f'{{"k":"case","i":0,"n":"{NONCE}","v":["l",[{items}]]}}'.encode()
    load = pack_frame({"k": "load", "n": NONCE})
    res = load + _forged_frame(json.loads(flood))
    assert len(res) > 8_000_000
    parsed = _counting_json(monkeypatch)
    result = _judge_pipe(res)
    assert result.status == "failed"
    assert "tampered" in result.reason
    assert parsed == [len(load) - 4]  # the load frame only
    parsed.clear()
    small = pack_frame({"k": "case", "i": 0, "v": ["i", "1"], "n": NONCE})
    result = _judge_pipe(load + small * 50_000, cases=3)
    assert result.status == "failed"
    assert len(parsed) == 3 + 2


def test_a_request_too_deeply_nested_to_marshal_is_an_encode_error() -> None:
    code = compile("f = " + "lambda: " * 2000 + "0\n", "<candidate>", "exec")
    with pytest.raises(EncodeError, match="cannot be marshalled"):
        pack_request({"code": code}, {})


@pytest.mark.slow
@given(
    st.lists(values, max_size=3),
    st.dictionaries(st.from_regex(r"[a-z]{1,5}", fullmatch=True), values, max_size=2),
)
def test_a_call_reaches_the_code_with_exact_types_and_no_shared_objects(
    args: list[Any], kwargs: dict[str, Any]
) -> None:
    frame = pack_call("f", tuple(args), kwargs)
    assert int.from_bytes(frame[:4], "big") == len(frame) - 4
    name, got_args, got_kwargs = marshal.loads(frame[4:])
    assert name == "f"
    assert typed_equal(list(got_args), args)
    assert typed_equal(got_kwargs, kwargs)


def test_a_call_sends_fresh_objects_where_the_check_shared_one() -> None:
    shared = [1, 2]
    _, args, _ = marshal.loads(pack_call("f", (shared, shared), {})[4:])
    assert args[0] == args[1] == shared
    assert args[0] is not args[1]  # as decode_value rebuilt them: mutating one spares the other


@pytest.mark.parametrize(
    "argument",
    [  # marshal would send all but the first and the last (bytearray as bytes)
        object(),
        bytearray(b"x"),
        1j,
        ...,
        compile("0", "<s>", "eval"),
        Unsupported("a", "b"),
    ],
)
def test_a_call_with_anything_but_plain_data_is_a_type_error(argument: Any) -> None:
    class Integer(int):
        pass

    for bad in (argument, Integer(1), [Integer(1)], {"k": (Integer(1),)}, {Integer(1): 2}):
        with pytest.raises(TypeError, match="only plain data"):
            pack_call("f", (bad,), {})
    with pytest.raises(TypeError, match="only plain data"):
        pack_call("f", (), {"k": argument})


def test_a_call_is_bounded_in_size_and_depth() -> None:
    with pytest.raises(EncodeError, match="larger than 100 bytes"):
        pack_call("f", ("x" * 200,), {}, max_bytes=100)
    with pytest.raises(EncodeError, match="larger than 100 bytes"):
        pack_call("f", ([0] * 10**6,), {}, max_bytes=100)  # the walk stops early
    nested: list[Any] = []
    for _ in range(MAX_DEPTH):  # MAX_DEPTH levels below args: the deepest item is at MAX_DEPTH
        nested = [nested]
    pack_call("f", (nested[0],), {})
    with pytest.raises(EncodeError, match="nested deeper"):
        pack_call("f", (nested,), {})
    loop: list[Any] = []
    loop.append(loop)
    with pytest.raises(EncodeError, match="nested deeper"):
        pack_call("f", (loop,), {})


def test_an_answer_is_read_as_pack_frame_writes_it_and_nothing_else() -> None:
    assert _worker._parse_frame(pack_frame({"v": ["s", "é"]})[4:]) == {"v": ["s", "é"]}
    for bad in (b"", b" {}", b"{} ", b"{}{}", b"{", '{"v":"é"}'.encode(), "{}".encode("utf-16")):
        with pytest.raises(ValueError, match=r"JSON value|Expecting|codec can't decode"):
            _worker._parse_frame(bad)
    with pytest.raises(RecursionError):
        _worker._parse_frame(b"[" * 100_000)


def test_frames_are_read_whole_however_the_bytes_arrive() -> None:
    read_fd, write_fd = os.pipe()
    try:
        one, two = pack_frame({"k": 1}), pack_frame({"k": "x" * 100_000})
        reader = _worker._FrameReader(read_fd, 200_000)
        os.write(write_fd, one + two[:3])  # a frame and the start of a header in one read
        assert reader.read() == one[4:]
        writer = threading.Thread(target=_worker._write_all, args=(write_fd, two[3:]))
        writer.start()  # the rest, larger than a pipe holds, in pieces
        assert reader.read() == two[4:]
        writer.join()
        os.write(write_fd, b"\x00\x00\x01\x00")  # a header over the limit, body unread
        with pytest.raises(ValueError, match="over 10"):
            _worker._FrameReader(read_fd, 10).read()
        os.write(write_fd, one[:-1])
        os.close(write_fd)
        write_fd = -1
        assert reader.read() is None  # the end of the file within a frame
    finally:
        os.close(read_fd)
        if write_fd >= 0:
            os.close(write_fd)


def test_the_warm_up_runs_each_check_through_both_sides_of_its_pipes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    reports: list[tuple[dict[str, Any], ...]] = []
    exchange = _worker._warm_exchange

    def recorded(req: Any, secret: Any, calls: bytes, send: Any, print_exc: Any) -> None:
        exchange(req, secret, calls, lambda *objs: reports.append(objs), print_exc)

    monkeypatch.setattr(_worker, "_warm_exchange", recorded)
    monkeypatch.setattr(_worker, "WARM_UP_ROUNDS", 1)
    descriptors = sorted(os.listdir("/proc/self/fd"))
    _worker._warm_up()
    assert sorted(os.listdir("/proc/self/fd")) == descriptors  # its pipes are closed
    failed = (
        "AssertionError at line 2: assert candidate([1, 2], 2) == False; left: True, right: False"
    )
    assert reports == [  # each answer reached the check: a pass, a failed assert, an exception
        ({"k": "load"},),
        ({"k": "script", "ok": 1}, {"k": "done"}),
        ({"k": "load"},),
        ({"k": "script", "e": failed},),
        ({"k": "done"},),
        ({"k": "load"},),
        ({"k": "script", "e": "TypeError: 'NoneType' object is not iterable"},),
        ({"k": "done"},),
    ]


def test_frames_round_trip_and_detect_garbage() -> None:
    blob = pack_frame({"k": "load"}) + pack_frame({"k": "done"})
    assert unpack_frames(blob) == ([{"k": "load"}, {"k": "done"}], True)
    assert unpack_frames(blob[:-1]) == ([{"k": "load"}], False)
    assert unpack_frames(b"\x00\x00\x00\x02{]")[1] is False


def test_seccomp_program_jumps_stay_inside_the_program() -> None:
    for machine in ("x86_64", "aarch64"):
        program = _seccomp_program(machine, 1234)
        assert program is not None
        for index, (code, jt, jf, _k) in enumerate(program):
            if code & 0x07 == 0x05:  # BPF_JMP
                assert index + 1 + max(jt, jf) < len(program)
        assert program[-1] == (0x06, 0, 0, 0x7FFF0000)  # ends with RET ALLOW
    assert _seccomp_program("sparc", 1) is None


ALLOW, EPERM, ENOSYS = 0x7FFF0000, 0x00050001, 0x00050026
MY_PID, OTHER_PID = 4242, 4243


def run_filter(machine: str, name: str, *args: int) -> int:
    """Return what the child's seccomp program answers to the call ``name(*args)``.

    A small interpreter of the classic BPF instructions the program uses, reading the
    kernel's ``struct seccomp_data`` layout (little-endian: nr, arch, instruction pointer,
    six 64-bit arguments); the installing process's pid is :data:`MY_PID`.
    """
    import struct

    from lift_metrics.sandbox._worker import _ARCHES

    audit_arch, numbers, _ = _ARCHES[machine]
    padded = [a & 0xFFFFFFFFFFFFFFFF for a in args] + [0] * (6 - len(args))
    data = struct.pack("<iIQ6Q", numbers[name], audit_arch, 0, *padded)
    program = _seccomp_program(machine, MY_PID)
    assert program is not None
    acc, pc = 0, 0
    while True:
        code, jt, jf, k = program[pc]
        pc += 1
        if code == 0x20:  # BPF_LD | BPF_W | BPF_ABS
            acc = struct.unpack_from("<I", data, k)[0]
        elif code == 0x54:  # BPF_ALU | BPF_AND | BPF_K
            acc &= k
        elif code == 0x06:  # BPF_RET | BPF_K
            return k
        else:
            taken = {0x15: acc == k, 0x35: acc >= k, 0x25: acc > k, 0x45: bool(acc & k)}[code]
            pc += jt if taken else jf


MACHINES = ("x86_64", "aarch64")
OWN_PROCESS_PROBES = [
    ("prlimit64", 7, 0, 0),  # RLIMIT_NOFILE, read only
    ("sched_setaffinity", 8, 0),
    ("sched_getaffinity", 8, 0),
    ("sched_setscheduler", 0, 0),
    ("sched_setparam", 0),
    ("sched_getparam", 0),
    ("sched_getscheduler",),
    ("sched_getattr", 0, 48, 0),
    ("get_robust_list", 0, 0),
]


@pytest.mark.parametrize("machine", MACHINES)
@pytest.mark.parametrize("probe", OWN_PROCESS_PROBES, ids=[p[0] for p in OWN_PROCESS_PROBES])
def test_calls_that_name_a_process_are_allowed_on_the_caller_only(
    machine: str, probe: tuple[Any, ...]
) -> None:
    name, *rest = probe
    assert run_filter(machine, name, 0, *rest) == ALLOW
    assert run_filter(machine, name, MY_PID, *rest) == ALLOW
    for pid in (OTHER_PID, 1, -1, -MY_PID, MY_PID + (1 << 32) - 1):
        assert run_filter(machine, name, pid, *rest) == EPERM, (name, pid)


@pytest.mark.parametrize("machine", MACHINES)
def test_the_other_calls_on_processes_are_refused(machine: str) -> None:
    for name in ("process_madvise", "process_mrelease", "migrate_pages", "move_pages", "kcmp"):
        assert run_filter(machine, name, OTHER_PID, 0, 0, 0) == EPERM
    for name in ("ioprio_set", "ioprio_get"):  # IOPRIO_WHO_PROCESS, itself included
        assert run_filter(machine, name, 1, 0, 0) == EPERM


@pytest.mark.parametrize("machine", MACHINES)
def test_priorities_only_of_the_caller(machine: str) -> None:
    for name in ("getpriority", "setpriority"):
        for which, who in ((0, 0), (0, MY_PID)):  # PRIO_PROCESS
            assert run_filter(machine, name, which, who, 0) == ALLOW
        for which, who in ((0, OTHER_PID), (1, 0), (1, MY_PID), (2, 0), (2, 1000)):
            assert run_filter(machine, name, which, who, 0) == EPERM  # ... PRIO_PGRP, PRIO_USER


@pytest.mark.parametrize("machine", MACHINES)
def test_sockets_reach_only_the_peer_of_a_connected_pair(machine: str) -> None:
    cloexec, nonblock = 0x80000, 0x800
    for kind in (1, 1 | cloexec | nonblock, 5):  # SOCK_STREAM, SOCK_SEQPACKET
        assert run_filter(machine, "socketpair", 1, kind, 0, 0x1000) == ALLOW
    for family, kind in ((1, 2), (1, 2 | cloexec), (1, 3), (2, 1), (10, 1)):  # SOCK_DGRAM ...
        assert run_filter(machine, "socketpair", family, kind, 0, 0x1000) == EPERM
    assert run_filter(machine, "sendto", 3, 0x1000, 4, 0, 0, 0) == ALLOW
    for address in (0x1000, 1 << 32, 0x7FFF_0000_1000):
        assert run_filter(machine, "sendto", 3, 0x1000, 4, 0, address, 110) == EPERM
    for name in ("socket", "connect", "bind", "listen", "accept", "accept4"):
        assert run_filter(machine, name, 3, 0x1000, 110) == EPERM


@pytest.mark.parametrize("machine", MACHINES)
def test_memory_outside_the_address_space_limit_is_refused(machine: str) -> None:
    for name in ("memfd_create", "memfd_secret"):
        assert run_filter(machine, name, 0x1000, 0) == ENOSYS


@pytest.mark.parametrize("machine", MACHINES)
def test_signals_reach_the_caller_and_its_group_only(machine: str) -> None:
    for pid in (0, MY_PID, -MY_PID):
        assert run_filter(machine, "kill", pid, 9) == ALLOW
    for pid in (OTHER_PID, -1, 1, -OTHER_PID):
        assert run_filter(machine, "kill", pid, 0) == EPERM
    assert run_filter(machine, "tgkill", MY_PID, MY_PID + 1, 0) == ALLOW
    assert run_filter(machine, "tgkill", OTHER_PID, OTHER_PID, 0) == EPERM


def test_removing_a_tree_of_any_fan_out_depth_and_mode(tmp_path: Path) -> None:
    # Subdirectories beside subdirectories (two or more of them not empty), symbolic links
    # (never followed), odd names, and directories made read-only, unreadable, or searchable
    # only.
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "kept").write_text("x")
    root = tmp_path / "tree"
    for top in "abc":
        for mid in "xyz":
            (root / top / mid / "deep").mkdir(parents=True)
            (root / top / mid / "deep" / "f").write_text("x")
            (root / top / mid / "g").write_text("x")
    (root / "a" / "to-outside").symlink_to(outside)
    (root / "b" / "x" / "up").symlink_to("..")
    odd = bytes(root) + b"/odd\n\xff -"
    import os

    os.mkdir(odd)
    with open(odd + b"/\x01f", "w") as handle:
        handle.write("x")
    for path, mode in (("a/x", 0o500), ("a/y", 0o000), ("b", 0o300), ("c/z/deep", 0o100)):
        (root / path).chmod(mode)
    remove_tree(str(root))
    assert not os.path.lexists(root)
    assert (outside / "kept").read_text() == "x"


def test_cleaning_the_temp_root_spares_the_mount_points_it_started_with(tmp_path: Path) -> None:
    # under bwrap, a virtualenv living under /tmp is bound read-only into the private /tmp;
    # the server records such entries at start and must neither delete nor walk them
    from lift_metrics.sandbox._worker import _clean_dir

    (tmp_path / "venv" / "lib").mkdir(parents=True)
    (tmp_path / "venv" / "lib" / "site.py").write_text("x = 1\n")
    (tmp_path / "left_by_candidate").mkdir()
    (tmp_path / "left_by_candidate" / "f").write_text("data")
    (tmp_path / "file.txt").write_text("data")
    _clean_dir(str(tmp_path), frozenset({"venv"}))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["venv"]
    assert (tmp_path / "venv" / "lib" / "site.py").read_text() == "x = 1\n"


@pytest.mark.parametrize(
    "source",
    [
        "def check(c):\n    assert c(1) == [1,\n        2], 'm'\n"
        "    assert c('\u00fc') == '\u00e9'\n",
        "assert 1\r\nassert (2 ==\r 3)\n\x0cassert x == '\u00e9' ,  'm'\n\n",
        "def check(c):\n    assert (c)\n\n    assert True",
    ],
)
def test_script_source_segments_match_the_standard_function(source: str) -> None:
    import ast

    from lift_metrics.sandbox._prepare import _LINE, _source_segment

    lines = _LINE.findall(source)
    assert "".join(lines) == source
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.expr | ast.stmt):
            assert _source_segment(lines, node) == (ast.get_source_segment(source, node) or "")


def test_assert_operands_travel_compiled_unless_compiling_them_warns() -> None:
    import ast
    import warnings

    from lift_metrics.sandbox._prepare import _assert_table

    source = 'def check(c):\n    assert c(1) == [1, 2]\n    assert c("\\d") == 3\n'
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tree = ast.parse(source)
    filters = list(warnings.filters)
    with warnings.catch_warnings(record=True) as outside:
        warnings.simplefilter("always")
        table = _assert_table(tree, source)
    clean, warned = table
    assert clean[3] == "cmp"
    assert all(type(side).__name__ == "code" for side in clean[4:])
    assert eval(clean[5]) == [1, 2]
    # the invalid escape warns when compiled: it stays source, for the child to compile
    assert warned[4] == '(c("\\d"))'
    assert type(warned[5]).__name__ == "code"
    assert not outside  # the warning was not passed on to the caller
    assert warnings.filters == filters
