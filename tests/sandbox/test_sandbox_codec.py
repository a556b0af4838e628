"""The value codec and the seccomp program, without starting a sandbox."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lift_metrics.sandbox._worker import (
    DecodeError,
    EncodeError,
    Unsupported,
    _seccomp_program,
    canonical,
    decode_value,
    encode_value,
    pack_frame,
    remove_tree,
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
        ["d", [[["l", []], ["N"]]]],  # unhashable key
        ["y", "zz"],
        ["Q", 1],
        ["l", "not a list"],
        ["f", [1]],
        "i",
    ],
)
def test_malformed_trees_are_rejected(tree: Any) -> None:
    with pytest.raises(DecodeError):
        decode_value(tree)


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
    # Subdirectories beside subdirectories (two or more of them not empty used to stop the
    # walk), symbolic links (never followed), odd names, and directories made read-only,
    # unreadable, or searchable only.
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
