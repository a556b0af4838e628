"""The fork server that runs inside the sandbox, and the value codec both sides share.

This file is standard-library only. The parent reads its source and runs it with the real
interpreter (``python -I -S -B -c SOURCE CONFIG``), inside bwrap or as a plain process; it is
also imported by the parent (``lift_metrics.sandbox._worker``) for :func:`encode_value`,
:func:`decode_value` and :func:`canonical`, so the wire format has one implementation.

Protocol (parent <-> server, over the server's stdin/stdout, which it moves to private fds):

* parent -> server, once: this file's source, then the compiled server loop (``_native.c``;
  empty when there is none), each as 4-byte big-endian length + bytes.
* server -> parent, once: a frame ``{"ready": true, ...capabilities}``.
* parent -> server, per execution: a 12-byte header (payload length, timeout in seconds as a
  big-endian double; :data:`REQUEST_HEADER`) and the payload, the child's request: a frame of
  marshal data (``code``, ``mode``, ``entry_point``, ``cases`` as keyword dicts, or
  ``script``, ``timeout_s``, ``nonce``, ``max_value_bytes``; :func:`pack_request`). The server
  passes it unread to a child it forked in advance (already isolated, waiting on a pipe).
* server -> parent: a frame with the execution's header (exit status, timing, lengths), then
  the raw bytes the child wrote on its result pipe, then the first bytes of its stderr.

Apart from the request, a frame is a 4-byte big-endian length followed by compact JSON. The
child writes such frames on its result pipe; the parent (never the server) decodes and judges
them. The server loop runs in C when the parent could compile ``_native.c`` (see there why),
otherwise in Python (:func:`serve`); both follow this protocol.
"""

from __future__ import annotations

import contextlib
import json
import marshal
import math
import os
import struct
import sys
from typing import Any

_HEADER = struct.Struct(">I")
_CONTAINER_TAGS: dict[type, str] = {list: "l", tuple: "t", set: "S", frozenset: "F"}
MAX_DEPTH = 64

# ----------------------------------------------------------------------------------------------
# Value codec: tagged JSON, exact types.
#
# None -> ["N"]; bool -> ["b", 0|1]; int -> ["i", "digits"]; float -> ["f", x | "nan" | "inf" |
# "-inf"]; str -> ["s", x]; bytes -> ["y", hex]; list -> ["l", [...]]; tuple -> ["t", [...]];
# set -> ["S", [...]]; frozenset -> ["F", [...]]; dict -> ["d", [[k, v], ...]];
# anything else -> ["?", type name, truncated repr] (never equal to anything).
# Subclasses (an int subclass with a rigged __eq__, numpy scalars, enums) are "anything else".
# ----------------------------------------------------------------------------------------------


class EncodeError(ValueError):
    """A value that cannot be sent: too large, too deep, or an int with too many digits."""


class DecodeError(ValueError):
    """Bytes that are not a well-formed tagged value."""


def encode_value(value: Any, *, max_bytes: int = 1_000_000) -> Any:
    """Return the tagged-JSON tree of ``value``; raise EncodeError past ``max_bytes`` or depth."""
    budget = [max_bytes]

    def spend(n: int) -> None:
        budget[0] -= n
        if budget[0] < 0:
            raise EncodeError(f"value is larger than {max_bytes} bytes when encoded")

    def enc(x: Any, depth: int) -> Any:
        if depth > MAX_DEPTH:
            raise EncodeError(f"value is nested deeper than {MAX_DEPTH} levels")
        t = type(x)
        spend(8)
        if x is None:
            return ["N"]
        if t is bool:
            return ["b", 1 if x else 0]
        if t is int:
            try:
                digits = int.__repr__(x)
            except ValueError as exc:  # more digits than sys.get_int_max_str_digits()
                raise EncodeError("integer has too many digits to send") from exc
            spend(len(digits))
            return ["i", digits]
        if t is float:
            if math.isnan(x):
                return ["f", "nan"]
            if math.isinf(x):
                return ["f", "inf" if x > 0 else "-inf"]
            return ["f", x]
        if t is str:
            spend(len(x))
            return ["s", x]
        if t is bytes:
            spend(2 * len(x))
            return ["y", bytes.hex(x)]
        if t is list or t is tuple or t is set or t is frozenset:
            tag = _CONTAINER_TAGS[t]
            items = list.__iter__(x) if t is list else iter(x)
            return [tag, [enc(item, depth + 1) for item in items]]
        if t is dict:
            return ["d", [[enc(k, depth + 1), enc(v, depth + 1)] for k, v in dict.items(x)]]
        try:
            text = repr(x)
        except BaseException:  # a hostile __repr__: say nothing about it
            text = "<repr failed>"
        text = text if len(text) <= 200 else text[:197] + "..."
        return ["?", f"{t.__module__}.{t.__qualname__}", text]

    return enc(value, 0)


def _check_items(payload: Any) -> list[Any]:
    if type(payload) is not list:
        raise DecodeError("container payload is not a list")
    return payload


def decode_value(tree: Any, *, _depth: int = 0) -> Any:
    """Return the Python value of a tagged tree; raise DecodeError on anything malformed.

    Unsupported values (tag ``"?"``) decode to an :class:`Unsupported` marker.
    """
    if _depth > MAX_DEPTH + 1:
        raise DecodeError("value nested too deeply")
    if type(tree) is not list or not tree or type(tree[0]) is not str:
        raise DecodeError("a value must be a non-empty list starting with a tag")
    tag = tree[0]
    try:
        if tag == "N" and len(tree) == 1:
            return None
        if len(tree) == 2:
            payload = tree[1]
            if tag == "b" and payload in (0, 1) and type(payload) is int:
                return payload == 1
            if tag == "i" and type(payload) is str and payload.lstrip("-").isdigit():
                return int(payload)
            if tag == "f":
                if type(payload) is str and payload in ("nan", "inf", "-inf"):
                    return float(payload)
                if type(payload) in (int, float):
                    return float(payload)
            if tag == "s" and type(payload) is str:
                return payload
            if tag == "y" and type(payload) is str:
                return bytes.fromhex(payload)
            if tag in ("l", "t", "S", "F"):
                items = [decode_value(v, _depth=_depth + 1) for v in _check_items(payload)]
                return {"l": list, "t": tuple, "S": set, "F": frozenset}[tag](items)
            if tag == "d":
                out = {}
                for pair in _check_items(payload):
                    if type(pair) is not list or len(pair) != 2:
                        raise DecodeError("a dict item must be a [key, value] pair")
                    key = decode_value(pair[0], _depth=_depth + 1)
                    out[key] = decode_value(pair[1], _depth=_depth + 1)
                return out
        if tag == "?" and len(tree) == 3 and all(type(v) is str for v in tree[1:]):
            return Unsupported(tree[1][:200], tree[2][:200])
    except DecodeError:
        raise
    except (TypeError, ValueError, RecursionError) as exc:  # unhashable key, bad hex, huge int
        raise DecodeError(f"malformed value: {type(exc).__name__}") from exc
    raise DecodeError(f"malformed value with tag {tag[:10]!r}")


class Unsupported:
    """Marker for a returned value whose type cannot cross the channel (never equal to data)."""

    __slots__ = ("text", "type_name")

    def __init__(self, type_name: str, text: str) -> None:
        self.type_name = type_name
        self.text = text

    def __repr__(self) -> str:
        return f"<{self.type_name} (not plain data): {self.text}>"


def canonical(tree: Any, _depth: int = 0) -> Any:
    """Return a hashable form of a tagged tree in which equal means equal value AND type.

    ``1``, ``1.0`` and ``True`` differ; ``[1]`` and ``(1,)`` differ; NaN equals NaN; element
    order of sets and dicts does not matter. Raises DecodeError on malformed trees.
    """
    if _depth > MAX_DEPTH + 1:
        raise DecodeError("value nested too deeply")
    if type(tree) is not list or not tree or type(tree[0]) is not str:
        raise DecodeError("a value must be a non-empty list starting with a tag")
    tag = tree[0]
    if tag in ("l", "t", "S", "F", "d"):
        items = _check_items(tree[1] if len(tree) == 2 else None)
        if tag == "d":
            pairs = []
            for pair in items:
                if type(pair) is not list or len(pair) != 2:
                    raise DecodeError("a dict item must be a [key, value] pair")
                pairs.append((canonical(pair[0], _depth + 1), canonical(pair[1], _depth + 1)))
            return ("d", frozenset(pairs), len(pairs))
        parts = [canonical(v, _depth + 1) for v in items]
        if tag in ("S", "F"):
            return (tag, frozenset(parts), len(parts))
        return (tag, tuple(parts))
    if tag == "?":
        return ("?", object())  # unique: never equal to anything
    value = decode_value(tree, _depth=_depth)
    if tag == "f" and math.isnan(value):
        return ("f", "nan")
    return (tag, value)


# ----------------------------------------------------------------------------------------------
# Framing
# ----------------------------------------------------------------------------------------------


def _make_encoder() -> Any:
    """Return a function giving the compact ASCII JSON of a tree (no NaN, no circular check).

    Built once: ``json.dumps`` with options builds an encoder object per call, which costs
    page faults in a freshly forked child.
    """
    from json import encoder

    c_make_encoder = getattr(encoder, "c_make_encoder", None)
    if c_make_encoder is None:  # pragma: no cover - CPython always has the C encoder
        return lambda obj: json.dumps(obj, separators=(",", ":"), allow_nan=False)

    def default(obj: Any) -> Any:
        raise TypeError(f"Object of type {type(obj).__name__} is not JSON serializable")

    make = c_make_encoder(
        None, default, encoder.encode_basestring_ascii, None, ":", ",", False, False, False
    )
    join = "".join
    return lambda obj: join(make(obj, 0))


_encode_json = _make_encoder()


def pack_frame(obj: Any) -> bytes:
    """Return ``obj`` as one frame: 4-byte big-endian length + compact ASCII JSON."""
    data = _encode_json(obj).encode("ascii")
    return _HEADER.pack(len(data)) + data


def pack_request(request: dict[str, Any]) -> bytes:
    """Return the parent's request for a child as a frame of ``marshal`` data (version 2).

    The parent is trusted and writes only plain data, so the child reads it with one C call
    and gets the inputs with their exact types; version 2 shares no objects between cases.
    Nothing the child sends is ever read with marshal: that is JSON, judged by the parent.
    """
    data = marshal.dumps(request, 2)
    return _HEADER.pack(len(data)) + data


def unpack_frames(blob: bytes, *, max_frames: int = 100_000) -> tuple[list[Any], bool]:
    """Split ``blob`` into decoded frames; the flag says whether all of it was well formed."""
    frames: list[Any] = []
    pos = 0
    while pos < len(blob):
        if pos + 4 > len(blob) or len(frames) >= max_frames:
            return frames, False
        (size,) = _HEADER.unpack_from(blob, pos)
        end = pos + 4 + size
        if end > len(blob):
            return frames, False
        try:
            frames.append(json.loads(blob[pos + 4 : end]))
        except (ValueError, RecursionError):
            return frames, False
        pos = end
    return frames, True


def _read_exact(fd: int, size: int) -> bytes | None:
    chunks = []
    while size:
        data = os.read(fd, min(size, 1 << 20))
        if not data:
            return None
        chunks.append(data)
        size -= len(data)
    return b"".join(chunks)


def _read_child_request(fd: int) -> Any:
    """In the child: read the parent's request (:func:`pack_request`); None at end of file."""
    head = _read_exact(fd, 4)
    if head is None:
        return None
    body = _read_exact(fd, _HEADER.unpack(head)[0])
    return None if body is None else marshal.loads(body)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


# ----------------------------------------------------------------------------------------------
# Seccomp: no new processes, no ptrace, no sockets, signals only to oneself.
# ----------------------------------------------------------------------------------------------

_ARCHES = {
    # machine: (AUDIT_ARCH, {name: nr})
    "x86_64": (
        0xC000003E,
        {
            "fork": 57,
            "vfork": 58,
            "clone": 56,
            "clone3": 435,
            "ptrace": 101,
            "process_vm_readv": 310,
            "process_vm_writev": 311,
            "kill": 62,
            "tkill": 200,
            "tgkill": 234,
            "pidfd_open": 434,
            "pidfd_send_signal": 424,
            "socket": 41,
            "unshare": 272,
            "setns": 308,
            "mount": 165,
        },
    ),
    "aarch64": (
        0xC00000B7,
        {
            "clone": 220,
            "clone3": 435,
            "ptrace": 117,
            "process_vm_readv": 270,
            "process_vm_writev": 271,
            "kill": 129,
            "tkill": 130,
            "tgkill": 131,
            "pidfd_open": 434,
            "pidfd_send_signal": 424,
            "socket": 198,
            "unshare": 97,
            "setns": 268,
            "mount": 40,
        },
    ),
}


def _seccomp_program(machine: str, my_pid: int) -> list[tuple[int, int, int, int]] | None:
    """Return the BPF program for ``machine`` as (code, jt, jf, k) tuples, or None if unknown."""
    if machine not in _ARCHES:
        return None
    audit_arch, nr = _ARCHES[machine]
    ld_w_abs, jeq, jge, jset, ret = 0x20, 0x15, 0x35, 0x45, 0x06
    allow, kill = 0x7FFF0000, 0x80000000
    eperm, enosys = 0x00050000 | 1, 0x00050000 | 38
    clone_thread = 0x00010000
    # labels are resolved after layout: ("J", code, k, label_true, label_false)
    prog: list[Any] = [
        (ld_w_abs, 0, 0, 4),  # arch
        ("J", jeq, audit_arch, None, "kill"),
        (ld_w_abs, 0, 0, 0),  # syscall nr
    ]
    if machine == "x86_64":
        prog.append(("J", jge, 0x40000000, "kill", None))  # x32 ABI
    deny = ["fork", "vfork", "ptrace", "process_vm_readv", "process_vm_writev", "tkill"]
    deny += ["pidfd_open", "pidfd_send_signal", "socket", "unshare", "setns", "mount"]
    for name in deny:
        if name in nr:
            prog.append(("J", jeq, nr[name], "eperm", None))
    prog.append(("J", jeq, nr["clone3"], "enosys", None))  # glibc falls back to clone
    prog.append(("J", jeq, nr["clone"], "clone", None))
    prog.append(("J", jeq, nr["kill"], "kill_sys", None))
    prog.append(("J", jeq, nr["tgkill"], "tgkill", None))
    prog.append(("L", "allow"))
    prog.append((ret, 0, 0, allow))
    prog.append(("L", "clone"))
    prog.append((ld_w_abs, 0, 0, 16))  # args[0] low word: clone flags
    prog.append(("J", jset, clone_thread, "allow_end", "eperm"))
    prog.append(("L", "kill_sys"))
    prog.append((ld_w_abs, 0, 0, 16))  # args[0] low word: pid
    prog.append(("J", jeq, 0, "allow_end", None))
    prog.append(("J", jeq, my_pid, "allow_end", None))
    prog.append(("J", jeq, (-my_pid) & 0xFFFFFFFF, "allow_end", "eperm"))
    prog.append(("L", "tgkill"))
    prog.append((ld_w_abs, 0, 0, 16))  # args[0] low word: tgid
    prog.append(("J", jeq, my_pid, "allow_end", "eperm"))
    prog.append(("L", "eperm"))
    prog.append((ret, 0, 0, eperm))
    prog.append(("L", "enosys"))
    prog.append((ret, 0, 0, enosys))
    prog.append(("L", "kill"))
    prog.append((ret, 0, 0, kill))
    prog.append(("L", "allow_end"))  # BPF only jumps forward
    prog.append((ret, 0, 0, allow))
    labels: dict[str, int] = {}
    index = 0
    for ins in prog:
        if ins[0] == "L":
            labels[ins[1]] = index
        else:
            index += 1
    out: list[tuple[int, int, int, int]] = []
    for ins in prog:
        if ins[0] == "L":
            continue
        if ins[0] == "J":
            _, code, k, if_true, if_false = ins
            here = len(out) + 1
            jt = 0 if if_true is None else labels[if_true] - here
            jf = 0 if if_false is None else labels[if_false] - here
            if not (0 <= jt < 256 and 0 <= jf < 256):
                raise ValueError("seccomp jump out of range")
            out.append((code, jt, jf, k))
        else:
            out.append(ins)
    return out


_PID_PLACEHOLDER = 0x7FFFFFF0


def _prepare_seccomp(ctypes: Any, libc: Any) -> Any:
    """Build the filter once in the server; the child only patches its own pid in.

    The program lives in a plain byte buffer (``struct sock_filter`` is 8 bytes: u16 code,
    u8 jt, u8 jf, u32 k) that the child patches with ``struct.pack_into``: fewer objects
    touched after the fork than with ctypes structures.
    """
    program = _seccomp_program(os.uname().machine, _PID_PLACEHOLDER)
    if program is None or libc is None:
        return None
    buffer = (ctypes.c_ubyte * (8 * len(program)))()
    for index, instruction in enumerate(program):
        struct.pack_into("=HBBI", buffer, 8 * index, *instruction)

    class SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]  # noqa: RUF012

    fprog = SockFprog(len(program), ctypes.addressof(buffer))
    negative = (-_PID_PLACEHOLDER) & 0xFFFFFFFF
    plus = tuple(8 * i + 4 for i, ins in enumerate(program) if ins[3] == _PID_PLACEHOLDER)
    minus = tuple(8 * i + 4 for i, ins in enumerate(program) if ins[3] == negative)
    return libc.prctl, ctypes.byref(fprog), buffer, plus, minus, fprog


def _install_seccomp(prepared: Any) -> bool:
    if prepared is None:
        return False
    prctl, fprog_ref, buffer, plus, minus, _keep = prepared
    pid = os.getpid()
    pack_into = struct.pack_into
    for offset in plus:
        pack_into("=I", buffer, offset, pid)
    for offset in minus:
        pack_into("=I", buffer, offset, (-pid) & 0xFFFFFFFF)
    if prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS
        return False
    return bool(prctl(22, 2, fprog_ref, 0, 0) == 0)  # PR_SET_SECCOMP, SECCOMP_MODE_FILTER


# ----------------------------------------------------------------------------------------------
# The child: runs the candidate code once, reports on fd 3.
# ----------------------------------------------------------------------------------------------

CHILD_OK_EXIT = 0
CHILD_SETUP_FAILED_EXIT = 71


def _short_exc(exc: BaseException) -> str:
    try:
        text = str(exc)
    except BaseException:
        text = "<str() failed>"
    name = type(exc).__name__
    text = f"{name}: {text}" if text else name
    return text if len(text) <= 300 else text[:297] + "..."


def _server_limits() -> None:
    """Set, once in the server, the limits and signal action the children inherit."""
    import resource
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)
    for which, limit in ((resource.RLIMIT_FSIZE, 16 * 1024 * 1024), (resource.RLIMIT_CORE, 0)):
        resource.setrlimit(which, (limit, limit))


def _child(res_fd: int, err_fd: int, req_fd: int, workdir: str, cfg: dict[str, Any]) -> None:
    """Set up the isolated child, wait for the request, run it, report on fd 3; never return.

    The server forks this child ahead of time, so that descriptors, limits, the uid change
    and the seccomp filter are in place before a request arrives (off the critical path).
    """
    import resource
    import traceback

    exit_now = os._exit
    pack = pack_frame
    # --- descriptors: 0 and 1 read and discard (/dev/null, as in the server), 2 <- stderr
    # pipe, 3 <- result pipe, 4 <- request pipe (closed once read). Every Python call here
    # costs page faults on pages shared with the server: what can be done once in the server
    # (/dev/null on 0 and 1, SIGINT's default action, RLIMIT_FSIZE and RLIMIT_CORE; see
    # _server_limits) is inherited instead.
    os.dup2(err_fd, 2)
    os.dup2(res_fd, 3)
    os.dup2(req_fd, 4)
    # the control pipe to the parent and everything else (the server's fds are few and low)
    os.closerange(5, 1024)
    out_fd = 3
    os.setpgid(0, 0)
    os.chdir(workdir)
    # Per child, not in the server: the server must hold a large request (RLIMIT_AS), fork
    # when its uid runs many processes (RLIMIT_NPROC) and remove deep trees (RLIMIT_NOFILE).
    limits = [
        (resource.RLIMIT_AS, int(cfg["memory_mb"]) * 1024 * 1024),
        (resource.RLIMIT_NPROC, 512),
        (resource.RLIMIT_NOFILE, 256),
    ]
    for which, limit in limits:
        resource.setrlimit(which, (limit, limit))
    drop_uid = cfg.get("drop_uid")
    if drop_uid is not None:
        os.setgroups([])
        os.setresgid(drop_uid, drop_uid, drop_uid)
        os.setresuid(drop_uid, drop_uid, drop_uid)
    if cfg.get("seccomp") and not _install_seccomp(_SECCOMP[0]):
        exit_now(CHILD_SETUP_FAILED_EXIT)
    req = _read_child_request(4)
    os.close(4)
    if req is None:  # the server is shutting down
        exit_now(CHILD_OK_EXIT)
    cpu_s = math.ceil(float(req["timeout_s"])) + 1
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_s, cpu_s))
    nonce = req.pop("nonce")
    write_all = _write_all

    def send(*objs: dict[str, Any]) -> None:
        frames = []
        for obj in objs:
            obj["n"] = nonce
            frames.append(pack(obj))
        write_all(out_fd, b"".join(frames))

    def print_exc() -> None:
        with contextlib.suppress(BaseException):  # sys.stderr may have been replaced
            traceback.print_exc()

    try:
        _run_candidate(req, send, print_exc)
    except BaseException:  # the harness itself was broken by the code (patched json, ...)
        exit_now(CHILD_OK_EXIT)  # results are missing: the parent reports a crash
    exit_now(CHILD_OK_EXIT)


def _run_candidate(req: dict[str, Any], send: Any, print_exc: Any) -> None:
    """Load the code, run the cases or the script, report each step through ``send``."""
    import builtins

    exit_now = os._exit
    max_value_bytes = int(req["max_value_bytes"])
    glb: dict[str, Any] = {"__name__": "__candidate__", "__builtins__": builtins}
    try:
        exec(req["code"], glb)  # compiled by the parent
    except MemoryError:
        send({"k": "load", "m": 1})
        exit_now(CHILD_OK_EXIT)
    except BaseException as exc:
        print_exc()
        send({"k": "load", "e": _short_exc(exc)})
        exit_now(CHILD_OK_EXIT)
    name = req["entry_point"]
    fn = glb.get(name)
    if not callable(fn):
        send({"k": "load", "e": f"entry point {name!r} is not a function defined by the code"})
        exit_now(CHILD_OK_EXIT)
    send({"k": "load"})
    if req["mode"] == "io":
        last = len(req["cases"]) - 1
        for index, kwargs in enumerate(req["cases"]):
            try:
                value = fn(**kwargs)
                tree = encode_value(value, max_bytes=max_value_bytes)
            except MemoryError:
                value = None  # free what can be freed before reporting
                send({"k": "case", "i": index, "m": 1})
                continue
            except EncodeError as exc:
                send({"k": "case", "i": index, "e": f"the result cannot be sent back: {exc}"})
                continue
            except BaseException as exc:
                print_exc()
                send({"k": "case", "i": index, "e": _short_exc(exc)})
                continue
            if index == last:  # nothing can fail between the last case and "done"
                send({"k": "case", "i": index, "v": tree}, {"k": "done"})
                return
            send({"k": "case", "i": index, "v": tree})
    else:
        try:
            exec(req["script"], glb)
            glb["check"](fn)
        except MemoryError:
            send({"k": "script", "m": 1})
        except BaseException as exc:
            print_exc()
            send({"k": "script", "e": _short_exc(exc)})
        else:
            send({"k": "script", "ok": 1}, {"k": "done"})
            return
    send({"k": "done"})


# ----------------------------------------------------------------------------------------------
# The server
# ----------------------------------------------------------------------------------------------

_SECCOMP: list[Any] = [None]
MAX_RESULT_BYTES = 8 * 1024 * 1024
MAX_STDERR_BYTES = 8 * 1024


def _clean_dir(path: str, keep: frozenset[str] = frozenset()) -> None:
    """Empty ``path``, leaving the entries named in ``keep`` (read-only bind mounts) alone."""
    import shutil

    def on_error(func: Any, target: str, _exc: Any) -> None:
        try:
            os.chmod(os.path.dirname(target) or target, 0o700)
            os.chmod(target, 0o700)
            func(target)
        except OSError:
            pass

    try:
        names = os.listdir(path)
    except OSError:
        return
    for name in names:
        if name in keep:
            continue
        target = os.path.join(path, name)
        if os.path.isdir(target) and not os.path.islink(target):
            shutil.rmtree(target, onerror=on_error)
        else:
            with contextlib.suppress(OSError):
                os.unlink(target)


def _children_of(pid: int) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) > 1 and int(fields[1]) == pid:
            found.append(int(name))
    return found


def _sweep(pgid: int, *, kill_group: bool = True) -> None:
    """Kill the child's process group (unless done) and every remaining descendant; reap them."""
    import signal
    import time

    if kill_group:
        with contextlib.suppress(OSError):
            os.killpg(pgid, signal.SIGKILL)
    me = os.getpid()
    for _ in range(2000):
        try:
            pid, _status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return  # no children left: everything is reaped
        if pid:
            continue
        # Children remain (escaped the group with setsid, or still dying): kill them by pid.
        for child in _children_of(me):
            for target in (-child, child):
                with contextlib.suppress(OSError):
                    os.kill(target, signal.SIGKILL)
        time.sleep(0.001)


def _prefork(cfg: dict[str, Any]) -> tuple[int, int, int, int, int]:
    """Fork the next child, which prepares itself and waits for a request.

    Returns (pid, pidfd or -1, result pipe, stderr pipe, request pipe) as seen by the server.
    """
    workdir = os.path.join(cfg["tmp_root"], "run")
    os.mkdir(workdir, 0o700)
    if cfg.get("drop_uid") is not None:
        os.chown(workdir, cfg["drop_uid"], cfg["drop_uid"])
    res_r, res_w = os.pipe()
    err_r, err_w = os.pipe()
    req_r, req_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            for fd in (res_r, err_r, req_w):
                os.close(fd)
            _child(res_w, err_w, req_r, workdir, cfg)
        finally:
            os._exit(CHILD_SETUP_FAILED_EXIT)
    for fd in (res_w, err_w, req_r):
        os.close(fd)
    with contextlib.suppress(OSError):
        os.setpgid(pid, pid)
    try:
        pidfd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        pidfd = -1
    return pid, pidfd, res_r, err_r, req_w


def _discard(child: tuple[int, int, int, int, int], cfg: dict[str, Any]) -> None:
    """Kill a pre-forked child that will get no request, and clean up after it."""
    pid, pidfd, res_r, err_r, req_w = child
    for fd in (req_w, res_r, err_r) + ((pidfd,) if pidfd >= 0 else ()):
        with contextlib.suppress(OSError):
            os.close(fd)
    _sweep(pid)
    _clean_dir(cfg["tmp_root"], cfg["keep"])


def _run_one(
    payload: bytes, timeout_s: float, cfg: dict[str, Any], child: tuple[int, int, int, int, int]
) -> tuple[dict[str, Any], bytes, bytes]:
    """Hand ``payload`` to the waiting ``child``; collect its reports until it exits or times out.

    The Python twin of ``run_one`` in ``_native.c``.
    """
    import select
    import time

    tmp_root = cfg["tmp_root"]
    pid, pidfd, res_r, err_r, req_w = child
    start = time.monotonic()
    deadline = start + timeout_s
    with contextlib.suppress(OSError):  # a child that died early is reported below
        _write_all(req_w, payload)
    os.close(req_w)
    res_chunks: list[bytes] = []
    res_len = 0
    res_overflow = False
    err_chunks: list[bytes] = []
    err_len = 0
    err_total = 0
    open_fds = [res_r, err_r]
    exited = False
    timed_out = False
    status = 0

    def consume(fd: int, data: bytes) -> None:
        nonlocal res_len, res_overflow, err_len, err_total
        if fd == res_r:
            if res_len + len(data) > MAX_RESULT_BYTES:
                res_overflow = True
                data = data[: max(0, MAX_RESULT_BYTES - res_len)]
            res_chunks.append(data)
            res_len += len(data)
        else:
            err_total += len(data)
            keep = data[: max(0, MAX_STDERR_BYTES - err_len)]
            if keep:
                err_chunks.append(keep)
                err_len += len(keep)

    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            timed_out = True
            break
        watch = list(open_fds)
        if pidfd >= 0:
            watch.append(pidfd)
        else:
            remaining = min(remaining, 0.005)
        ready = select.select(watch, [], [], remaining)[0] if watch else []
        for fd in ready:
            if fd == pidfd:
                exited = True
                continue
            data = os.read(fd, 1 << 16)
            if data:
                consume(fd, data)
            else:
                open_fds.remove(fd)
                os.close(fd)
        if pidfd < 0 and not exited:
            done_pid, status = os.waitpid(pid, os.WNOHANG)
            exited = done_pid != 0
            if exited:
                pid = -pid  # already reaped
        if exited:
            for fd in list(open_fds):  # drain what the child left in the pipes
                os.set_blocking(fd, False)
                try:
                    while data := os.read(fd, 1 << 16):
                        consume(fd, data)
                except BlockingIOError:
                    pass
            break
    elapsed_ms = (time.monotonic() - start) * 1000.0
    if pid > 0:
        import signal

        # Kill the child's group while the child is unreaped (a zombie at most): its pid, the
        # group id, cannot have been reused yet. After waitpid an unrelated process that got
        # the same pid and made itself a group leader could be hit.
        try:
            os.killpg(pid, signal.SIGKILL)
        except OSError:
            if not exited:
                os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
        _sweep(pid, kill_group=False)
    else:  # reaped already (no pidfd): only escaped descendants are left to find
        _sweep(-pid, kill_group=False)
    if pidfd >= 0:
        os.close(pidfd)
    for fd in open_fds:
        os.close(fd)
    with contextlib.suppress(OSError):
        os.rmdir(os.path.join(tmp_root, "run"))  # the usual case: the child left nothing
    if set(os.listdir(tmp_root)) - cfg["keep"]:
        _clean_dir(tmp_root, cfg["keep"])
    if cfg.get("clean_shm") and os.listdir("/dev/shm"):
        _clean_dir("/dev/shm")
    header = {
        "exit_code": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
        "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
        "timed_out": timed_out,
        "elapsed_ms": elapsed_ms,
        "res_overflow": res_overflow,
        "err_total": err_total,
    }
    return header, b"".join(res_chunks), b"".join(err_chunks)


def serve(cfg: dict[str, Any]) -> None:
    """Serve executions over fds 0/1 until the parent closes the control pipe."""
    import ctypes
    import signal

    ctl_in = os.dup(0)
    ctl_out = os.dup(1)
    native_size = _read_exact(ctl_in, 4)  # the compiled server loop (see _native.c), if any
    native_bytes = _read_exact(ctl_in, int.from_bytes(native_size or b"", "big")) or b""
    devnull = os.open("/dev/null", os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    os.close(devnull)
    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:
        libc = None
    _SECCOMP[0] = _prepare_seccomp(ctypes, libc) if cfg.get("seccomp") else None
    subreaper = False
    if libc is not None:
        libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG: die with the parent
        subreaper = libc.prctl(36, 1, 0, 0, 0) == 0  # PR_SET_CHILD_SUBREAPER
    sys.path.extend(cfg.get("sys_path", []))
    # Warm the modules candidate code usually imports, so that each fork gets them for free.
    import builtins  # noqa: F401
    import collections  # noqa: F401
    import functools  # noqa: F401
    import heapq  # noqa: F401
    import itertools  # noqa: F401
    import re  # noqa: F401
    import resource  # noqa: F401
    import select  # noqa: F401
    import shutil  # noqa: F401
    import string  # noqa: F401
    import time  # noqa: F401
    import traceback  # noqa: F401
    import typing  # noqa: F401

    cfg["seccomp"] = _SECCOMP[0] is not None
    _server_limits()
    # What the temp root holds before any candidate ran: under bwrap, the mount points of
    # read-only binds (a virtualenv living under /tmp). Cleaning must skip them: they cannot
    # be deleted, and walking a whole virtualenv after every execution would be slow.
    cfg["keep"] = frozenset(os.listdir(cfg["tmp_root"]))
    import gc

    gc.collect()
    gc.freeze()  # the children's collector leaves the server's objects (and their pages) alone
    native = _load_native(ctypes, native_bytes)
    ready = {
        "ready": True,
        "seccomp": cfg["seccomp"],
        "subreaper": subreaper,
        "native": native is not None,
        "pid": os.getpid(),
    }
    _write_all(ctl_out, pack_frame(ready))
    if native is not None:
        _serve_native(native, ctypes, cfg, ctl_in, ctl_out)
        return
    child = _prefork(cfg)
    while True:
        request = _read_request(ctl_in)
        if request is None:
            _discard(child, cfg)
            return
        header, res, err = _run_one(request[0], request[1], cfg, child)
        header["res_len"] = len(res)
        header["err_len"] = len(err)
        _write_all(ctl_out, pack_frame(header) + res + err)
        child = _prefork(cfg)  # while the parent judges, the next child gets ready


REQUEST_HEADER = struct.Struct(">Id")  # payload length, timeout in seconds


def _read_request(fd: int) -> tuple[bytes, float] | None:
    """Read one request: the header, then the payload (the child's request frame, unread)."""
    head = _read_exact(fd, REQUEST_HEADER.size)
    if head is None:
        return None
    size, timeout_s = REQUEST_HEADER.unpack(head)
    payload = _read_exact(fd, size)
    return None if payload is None else (payload, timeout_s)


def _load_native(ctypes: Any, data: bytes) -> Any:
    """Load the compiled server loop sent by the parent, from a memfd; None if there is none."""
    if not data:
        return None
    try:
        fd = os.memfd_create("lift-sandbox-native", 0)
        try:
            _write_all(fd, data)
            library = ctypes.PyDLL(f"/proc/self/fd/{fd}")  # PyDLL: the GIL stays held
        finally:
            os.close(fd)
        serve_fn = library.lift_serve
    except (AttributeError, OSError):
        return None
    int_ = ctypes.c_int
    serve_fn.argtypes = [int_, int_, ctypes.c_char_p, ctypes.c_char_p, int_, int_, int_]
    serve_fn.argtypes.append(ctypes.POINTER(int_))
    serve_fn.restype = int_
    return serve_fn


def _serve_native(
    serve_fn: Any, ctypes: Any, cfg: dict[str, Any], ctl_in: int, ctl_out: int
) -> None:
    """Run the compiled loop; come back to Python in each child, and for rare cleaning."""
    tmp_root = cfg["tmp_root"]
    workdir = os.path.join(tmp_root, "run")
    keep = b"".join(os.fsencode(name) + b"\0" for name in sorted(cfg["keep"])) + b"\0"
    drop = -1 if cfg.get("drop_uid") is None else int(cfg["drop_uid"])
    clean_shm = 1 if cfg.get("clean_shm") else 0
    root = os.fsencode(tmp_root)
    fds = (ctypes.c_int * 3)()
    resume = 0
    while True:
        rc = serve_fn(ctl_in, ctl_out, root, keep, drop, clean_shm, resume, fds)
        if rc == 0:  # pragma: no cover - in the child forked by the compiled loop
            try:
                _child(fds[0], fds[1], fds[2], workdir, cfg)
            finally:
                os._exit(CHILD_SETUP_FAILED_EXIT)
        if rc == 1:  # leftovers: escaped processes, files in the temp root or /dev/shm
            _sweep(0, kill_group=False)
            _clean_dir(tmp_root, cfg["keep"])
            if clean_shm:
                _clean_dir("/dev/shm")
            resume = 1
            continue
        if rc == -1:  # the parent closed the control pipe
            _clean_dir(tmp_root, cfg["keep"])
            return
        raise SystemExit(1)  # unexpected error: the parent restarts this worker


# The parent starts the interpreter with this bootstrap and then sends this file's source as
# the first frame on stdin (a short command line; no file needed inside the sandbox).
BOOTSTRAP = (
    "import os\n"
    "def r(n):\n"
    "    b = b''\n"
    "    while len(b) < n:\n"
    "        c = os.read(0, n - len(b))\n"
    "        if not c: raise SystemExit(1)\n"
    "        b += c\n"
    "    return b\n"
    "s = r(int.from_bytes(r(4), 'big')).decode()\n"
    "exec(compile(s, 'lift_sandbox_worker', 'exec'), {'__name__': '__main__'})\n"
)

if __name__ == "__main__":
    serve(json.loads(sys.argv[1]))
