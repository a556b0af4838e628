"""The fork server that runs inside the sandbox, and the value codec both sides share.

This file is standard-library only. The parent reads its source and runs it with the real
interpreter (``python -I -S -B -c SOURCE CONFIG``), inside bwrap or as a plain process; it is
also imported by the parent (``lift_metrics.sandbox._worker``) for :func:`encode_value`,
:func:`decode_value` and :func:`canonical`, so the wire format has one implementation.

Protocol (parent <-> server, over the server's stdin/stdout, which it moves to private fds):

* parent -> server, once: this file's source, then the compiled server loop (``_native.c``;
  empty when there is none), each as 4-byte big-endian length + bytes.
* server -> parent, once: a frame ``{"ready": true, ...capabilities}``.
* parent -> server, per execution: a 20-byte header (payload length, timeout in seconds as a
  big-endian double, the request's sequence number, echoed in the answer;
  :data:`REQUEST_HEADER`) and the payload: a one-byte mode mark (``i`` for I/O cases, ``s``
  for a check script), then two frames of marshal data, what the code under test may see
  (``code``, ``mode``, ``entry_point``, ``cases`` as keyword dicts, ``timeout_s``,
  ``max_value_bytes``) and what it must not (``nonce``, and for a check script ``script``,
  ``asserts`` and copies of ``entry_point``, ``timeout_s`` and ``max_value_bytes``;
  :func:`pack_request`). The server hands the request to a child it forked in advance
  (already isolated, waiting on a pipe). For I/O cases the child gets all of it. For a check
  script the child gets the mark and the first frame only, and the second frame goes to the
  server's checking process (below) over a unix socket, with the child's result and stderr
  pipes and the two ends of the pipes that connect the check to the code (``SCM_RIGHTS``).
* server -> parent: a frame with the execution's header (exit status, timing, lengths), then
  the raw bytes written on the execution's result pipe, then the first bytes of its stderr.

The checking process (:func:`_checker_main`): each server keeps one, forked from the server
once it is warm and holds nothing of any execution (its buffers are zeroed in the checker
right after the fork), confined as a child is (no new privileges, Landlock, the children's
uid and memory limits, the seccomp filter), and forked again when it died, was killed (a
check that ran past the deadline by itself), or ran :data:`CHECKER_RUNS` checks. It runs
each check script with the code's functions as stubs that send plain data to the code's
process and rebuild plain data from its answers (:func:`_check_remotely`): it never runs
the code under test and holds none of its objects, and the code's process holds neither the
script, nor its expected values, nor the nonce, nor the result pipe. The code's process is
the execution's child: its exit status (a signal, ``sys.exit``, a timeout, SIGXCPU) is the
one reported. An execution of a check script ends when the code's process exited and the
checker closed the result pipe, or at the deadline.

Apart from the request, a frame is a 4-byte big-endian length followed by compact JSON. The
child writes such frames on its result pipe; the parent (never the server) decodes and judges
them. The one exception runs the other way, from trusted to untrusted: a check's call to the
code under test is marshal data (:func:`pack_call`); the code's answers are JSON frames. The
server loop runs in C when the parent could compile ``_native.c`` (see there why), otherwise
in Python (:func:`serve`); both follow this protocol.
"""

from __future__ import annotations

import contextlib
import json
import marshal
import math
import os
import struct
import sys
from collections.abc import Callable
from json.scanner import make_scanner
from typing import Any, cast

_HEADER = struct.Struct(">I")
_CONTAINER_TAGS: dict[type, str] = {list: "l", tuple: "t", set: "S", frozenset: "F"}
MAX_DEPTH = 64
#: The most bytes the compact JSON of one returned value may take (:func:`encode_value`).
MAX_VALUE_BYTES = 1_000_000

# ----------------------------------------------------------------------------------------------
# Value codec: tagged JSON, exact types.
#
# None -> ["N"]; bool -> ["b", 0|1]; int -> ["i", "digits"]; float -> ["f", x | "nan" | "inf" |
# "-inf"]; str -> ["s", x]; bytes -> ["y", hex]; list -> ["l", [...]]; tuple -> ["t", [...]];
# set -> ["S", [...]]; frozenset -> ["F", [...]]; dict -> ["d", [[k, v], ...]];
# anything else -> ["?", type name, truncated repr] (never equal to anything).
# Subclasses (an int subclass with a rigged __eq__, numpy scalars, enums) are "anything else".
#
# The encoder writes one spelling of each value (digits without leading zeros and no "-0",
# lowercase hex, a JSON number for a finite float); the decoder accepts that spelling only.
# ----------------------------------------------------------------------------------------------


class EncodeError(ValueError):
    """A value that cannot be sent: too large, too deep, or an int with too many digits."""


class DecodeError(ValueError):
    """Bytes that are not a well-formed tagged value."""


_escape = json.encoder.encode_basestring_ascii  # the JSON of a str, quotes included


def encode_value(value: Any, *, max_bytes: int = MAX_VALUE_BYTES) -> Any:
    """Return the tagged-JSON tree of ``value``.

    Raise EncodeError when the tree's compact JSON (as :func:`pack_frame` writes it) would be
    longer than ``max_bytes`` bytes, or the value is nested deeper than :data:`MAX_DEPTH`.
    Each node is charged its own bytes and one separator, so the charge bounds the JSON.
    """
    t = type(value)
    if t in _SCALARS:  # the usual answer of a check's call: no walk
        tree, charge = _encode_scalar(value, t)
        if charge <= max_bytes:
            return tree
    budget = [max_bytes]

    def spend(n: int) -> None:
        budget[0] -= n
        if budget[0] < 0:
            raise EncodeError(f"value is larger than {max_bytes} bytes when encoded")

    def enc(x: Any, depth: int) -> Any:
        if depth > MAX_DEPTH:
            raise EncodeError(f"value is nested deeper than {MAX_DEPTH} levels")
        t = type(x)
        if t in _SCALARS:
            tree, charge = _encode_scalar(x, t)
            spend(charge)
            return tree
        if t is bytes:
            spend(9 + 2 * len(x))  # ["y","..."], (before the hex is made)
            return ["y", bytes.hex(x)]
        if t is list or t is tuple or t is set or t is frozenset:
            spend(9)  # ["l",[]],
            tag = _CONTAINER_TAGS[t]
            items = list.__iter__(x) if t is list else iter(x)
            return [tag, [enc(item, depth + 1) for item in items]]
        if t is dict:
            spend(9)  # ["d",[]],
            pairs = []
            for k, v in dict.items(x):
                spend(2)  # the brackets of [k,v]: the comma inside is the key's separator
                pairs.append([enc(k, depth + 1), enc(v, depth + 1)])
            return ["d", pairs]
        tree = _encode_unsupported(x)
        spend(9 + len(_escape(tree[1])) + len(_escape(tree[2])))  # ["?","...","..."],
        return tree

    return enc(value, 0)


#: the exact types whose tree :func:`_encode_scalar` makes (bytes are charged before their hex)
_SCALARS = frozenset({type(None), bool, int, float, str})


def _encode_scalar(x: Any, t: type) -> tuple[list[Any], int]:
    """Return the tree of ``x``, of the exact type ``t`` in :data:`_SCALARS`, and its charge."""
    if x is None:
        return ["N"], 6  # ["N"],
    if t is bool:
        return ["b", 1 if x else 0], 8  # ["b",1],
    if t is int:
        digits = _int_digits(x)
        return ["i", digits], 9 + len(digits)  # ["i","..."],
    if t is float:
        tree = _encode_float(x)
        payload = tree[1]
        return tree, 7 + (len(payload) + 2 if type(payload) is str else len(float.__repr__(x)))
    return ["s", x], 7 + len(_escape(x))  # ["s","..."],


def _int_digits(x: int) -> str:
    """Return the decimal digits of ``x``; raise EncodeError past the interpreter's limit."""
    try:
        return int.__repr__(x)
    except ValueError as exc:  # more digits than sys.get_int_max_str_digits()
        raise EncodeError("integer has too many digits to send") from exc


def _encode_float(x: float) -> list[Any]:
    """Return the tagged tree of a float (nan and the infinities as text)."""
    if math.isnan(x):
        return ["f", "nan"]
    if math.isinf(x):
        return ["f", "inf" if x > 0 else "-inf"]
    return ["f", x]


def _encode_unsupported(x: Any) -> list[Any]:
    """Return the ``"?"`` tree of a value that cannot be sent: its type and a short repr."""
    t = type(x)
    try:
        text = repr(x)
    except BaseException:  # a hostile __repr__: say nothing about it
        text = "<repr failed>"
    text = text if len(text) <= 200 else text[:197] + "..."
    return ["?", f"{t.__module__}.{t.__qualname__}", text]


_CONTAINERS = ("l", "t", "S", "F", "d")
_ARITY = {"N": 1, "b": 2, "i": 2, "f": 2, "s": 2, "y": 2, "?": 3}
_FLOAT_WORDS = ("nan", "inf", "-inf")
_HEX_DIGITS = "0123456789abcdef"


def _tag(tree: Any, depth: int) -> str:
    """Return the tag of the node ``tree`` once its shape is checked (not its items').

    Raise DecodeError unless the node is exactly what :func:`encode_value` writes: a
    container tag with a list, or a scalar tag with the right number of items, each of the
    right JSON type and spelling.
    """
    if depth > MAX_DEPTH + 1:
        raise DecodeError("value nested too deeply")
    if type(tree) is not list or not tree or type(tree[0]) is not str:
        raise DecodeError("a value must be a non-empty list starting with a tag")
    tag: str = tree[0]
    if tag in _CONTAINERS:
        if len(tree) != 2 or type(tree[1]) is not list:
            raise DecodeError(f"malformed container with tag {tag!r}")
        return tag
    if len(tree) != _ARITY.get(tag, 0) or not _well_spelled(tag, tree):
        raise DecodeError(f"malformed value with tag {tag[:10]!r}")
    return tag


def _well_spelled(tag: str, tree: list[Any]) -> bool:
    """Whether a scalar node of the right length holds what the encoder writes for ``tag``."""
    if tag == "N":
        return True
    payload = tree[1]
    kind = type(payload)
    if tag == "b":
        return kind is int and (payload == 0 or payload == 1)
    if tag == "f":
        return kind is float or (kind is str and payload in _FLOAT_WORDS)
    if kind is not str:
        return False
    if tag == "s":
        return True
    if tag == "i":
        digits: str = payload[1:] if payload[:1] == "-" else payload
        return digits.isascii() and digits.isdigit() and (digits[0] != "0" or payload == "0")
    if tag == "y":
        return len(payload) % 2 == 0 and payload.isascii() and not payload.strip(_HEX_DIGITS)
    return type(tree[2]) is str  # "?"


def decode_value(tree: Any, *, _depth: int = 0) -> Any:
    """Return the Python value of a tagged tree; raise DecodeError on anything malformed.

    Unsupported values (tag ``"?"``) decode to an :class:`Unsupported` marker. No other
    exception escapes, whatever ``tree`` holds.
    """
    return _decode(tree, _depth)


def _decode(tree: Any, depth: int) -> Any:
    tag = _tag(tree, depth)
    if tag == "d":
        return _decode_dict(tree[1], depth)
    if tag in _CONTAINERS:
        items = [_decode(v, depth + 1) for v in tree[1]]
        if tag == "l":
            return items
        if tag == "t":
            return tuple(items)
        _check_hash_spread(items)
        try:
            return set(items) if tag == "S" else frozenset(items)
        except TypeError:
            raise DecodeError("a set member is unhashable") from None
    if tag == "N":
        return None
    payload = tree[1]
    if tag == "i":
        try:
            return int(payload)
        except ValueError:  # more digits than this interpreter converts
            raise DecodeError("integer has too many digits") from None
    if tag == "f":
        return float(payload)
    if tag == "y":
        return bytes.fromhex(payload)
    if tag == "b":
        return payload == 1
    if tag == "?":
        return Unsupported(payload[:200], tree[2][:200])
    return payload  # "s": the text


def _decode_dict(payload: list[Any], depth: int) -> dict[Any, Any]:
    """Return the dict of a ``"d"`` payload: a list of [key, value] trees."""
    pairs = []
    for pair in payload:
        if type(pair) is not list or len(pair) != 2:
            raise DecodeError("a dict item must be a [key, value] pair")
        key = _decode(pair[0], depth + 1)
        pairs.append((key, _decode(pair[1], depth + 1)))
    keys = [key for key, _ in pairs]
    _check_hash_spread(keys)
    try:
        return dict(pairs)
    except TypeError:
        raise DecodeError("a dict key is unhashable") from None


MAX_SAME_HASH = 64


def _check_hash_spread(members: list[Any]) -> None:
    """Refuse set members or dict keys of which many hash alike (or one is unhashable).

    Building the set would take time quadratic in their number (a hash-flooding attack on whoever
    decodes the value).
    """
    if len(members) <= MAX_SAME_HASH:
        return
    counts: dict[int, int] = {}
    for member in members:
        try:
            code = hash(member)
        except TypeError:
            raise DecodeError("a set member or dict key is unhashable") from None
        counts[code] = counts.get(code, 0) + 1
        if counts[code] > MAX_SAME_HASH:
            raise DecodeError(f"more than {MAX_SAME_HASH} set members or dict keys hash alike")


class Unsupported:
    """Marker for a returned value whose type cannot cross the channel (never equal to data)."""

    __slots__ = ("text", "type_name")

    def __init__(self, type_name: str, text: str) -> None:
        self.type_name = type_name
        self.text = text

    def __repr__(self) -> str:
        return f"<{self.type_name} (not plain data): {self.text}>"


def canonical(tree: Any) -> Any:
    """Return a hashable form of a tagged tree in which equal means equal value AND type.

    ``1``, ``1.0`` and ``True`` differ; ``[1]`` and ``(1,)`` differ; NaN equals NaN; element
    order of sets and dicts does not matter. A tree holding an unsupported value (tag ``"?"``)
    gives a form equal to nothing. Raises DecodeError on malformed trees (the whole tree is
    checked, as :func:`decode_value` checks it), and nothing else.

    The form is a string built in time linear in the tree (up to sorting the members of each
    set and dict by their own forms) from the spelling the encoder wrote: no number is
    converted and no Python set or dict is built, so members that all hash alike (a
    hash-flooding attack on the judging parent) cost nothing extra.
    """
    unsupported: list[bool] = []
    form = _canon(tree, 0, unsupported)
    if unsupported:
        return ("?", object())  # unique: never equal to anything
    return form


def _canon(tree: Any, depth: int, unsupported: list[bool], hashed: bool = False) -> str:
    """Return the form of ``tree``, checked.

    ``hashed``: the tree is a set member or dict key, or inside one through tuples, so it must
    be hashable (not a list, set or dict); checked once per node.
    """
    tag = _tag(tree, depth)
    if hashed and tag in ("l", "S", "d"):
        raise DecodeError("a set member or dict key is unhashable")
    if tag == "d":
        pairs = []
        for pair in tree[1]:
            if type(pair) is not list or len(pair) != 2:
                raise DecodeError("a dict item must be a [key, value] pair")
            key = _canon(pair[0], depth + 1, unsupported, True)
            pairs.append(key + ":" + _canon(pair[1], depth + 1, unsupported))
        pairs.sort()
        return "d{" + ",".join(pairs) + "}"
    if tag in _CONTAINERS:
        members = tag in ("S", "F") or (hashed and tag == "t")
        parts = [_canon(v, depth + 1, unsupported, members) for v in tree[1]]
        if tag in ("S", "F"):
            parts.sort()
            return tag + "{" + ",".join(parts) + "}"
        return tag + "[" + ",".join(parts) + "]"
    if tag == "N":
        return "N"
    payload = tree[1]
    if tag == "f":
        if type(payload) is str:
            return "f" + payload  # "nan", "inf", "-inf": repr() of those floats
        value = payload + 0.0  # -0.0 == 0.0, as in Python
        return "fnan" if value != value else "f" + repr(value)
    if tag == "s":
        return "s" + _escape(payload)
    if tag == "?":
        unsupported.append(True)
        return "?"
    return tag + str(payload)  # "i" digits, "y" hex, "b" 0 or 1


def tree_repr(tree: Any, limit: int = 300) -> str:
    """Return the Python ``repr`` of a tagged tree's value, cut near ``limit``.

    The value is not rebuilt: bounded work for any tree. ``tree`` must be well formed
    (:func:`canonical` accepted it).
    """
    out: list[str] = []
    budget = [limit]

    def put(text: str) -> None:
        if budget[0] > 0:
            text = text[: budget[0]]
            out.append(text)
            budget[0] -= len(text)

    def walk(node: Any) -> None:
        if budget[0] <= 0:
            return
        tag = node[0]
        if tag in _CONTAINERS:
            items = node[1]
            brackets = {"l": "[]", "t": "()", "S": "{}", "F": "{}", "d": "{}"}[tag]
            opener, closer = brackets[0], brackets[1]
            if not items:
                put({"l": "[]", "t": "()", "S": "set()", "F": "frozenset()", "d": "{}"}[tag])
                return
            put("frozenset(" + opener if tag == "F" else opener)
            for position, item in enumerate(items):
                if budget[0] <= 0:
                    return
                if position:
                    put(", ")
                if tag == "d":
                    walk(item[0])
                    put(": ")
                    walk(item[1])
                else:
                    walk(item)
            put("," if tag == "t" and len(items) == 1 else "")
            put(closer + (")" if tag == "F" else ""))
            return
        if tag == "s":
            put(repr(node[1][: budget[0] + 2]))
        elif tag == "y":
            put(repr(bytes.fromhex(node[1][: 2 * budget[0] + 4])))
        elif tag == "i":
            put(node[1][: budget[0] + 1])
        else:
            put(repr(decode_value(node)))

    walk(tree)
    text = "".join(out)
    return text if budget[0] > 0 else text[: max(0, limit - 3)] + "..."


# ----------------------------------------------------------------------------------------------
# Framing
# ----------------------------------------------------------------------------------------------


def _make_encoder() -> Callable[[Any], str]:
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


def pack_request(candidate: dict[str, Any], checker: dict[str, Any]) -> bytes:
    """Return the parent's request for a child: a mode mark and two frames of ``marshal`` data.

    ``candidate`` is what the code under test may see (``code``, ``mode``, ``entry_point``,
    the inputs of I/O ``cases``, ``timeout_s``, ``max_value_bytes``); ``checker`` is what it
    must not see (the ``nonce`` and, for a check script, the ``script`` and its ``asserts``).
    The request starts with one byte, ``b"s"`` when ``candidate["mode"]`` is ``"script"``,
    else ``b"i"``: the server reads it to send the second frame of a check script to its
    checking process, never to the child (see the module's protocol notes). A check
    script's second frame also carries ``entry_point``, ``timeout_s`` and
    ``max_value_bytes``, which the checking process needs.

    The parent is trusted and writes only plain data, so the child reads it with one C call
    and gets the inputs with their exact types; marshal version 2 shares no objects between
    cases. Nothing the child sends is ever read with marshal: that is JSON, judged by the
    parent. Raise EncodeError when marshal refuses the request (code objects nested deeper
    than its limit, as thousands of nested lambdas give): the child could not read it either.
    """
    script = candidate.get("mode") == "script"
    if script:
        shared = ("entry_point", "timeout_s", "max_value_bytes")
        checker = {**checker, **{key: candidate[key] for key in shared if key in candidate}}
    frames = [b"s" if script else b"i"]
    for part in (candidate, checker):
        try:
            data = marshal.dumps(part, 2)
        except ValueError as exc:  # "object too deeply nested to marshal": nested code objects
            raise EncodeError(f"the request cannot be marshalled: {exc}") from None
        frames.append(_HEADER.pack(len(data)) + data)
    return b"".join(frames)


#: The longest frame an honest child writes: a case frame around a value of at most
#: :data:`MAX_VALUE_BYTES`, or a message of at most a few thousand characters (12 bytes each
#: at most once escaped).
MAX_FRAME_BYTES = MAX_VALUE_BYTES + 65_536


def unpack_frames(
    blob: bytes, *, max_frames: int = 100_000, max_frame_bytes: int = MAX_FRAME_BYTES
) -> tuple[list[Any], bool]:
    """Split ``blob`` into decoded frames; the flag says whether all of it was well formed.

    At most ``max_frames`` frames are decoded, none longer than ``max_frame_bytes``: the first
    frame past either bound ends the reading unparsed, as do bytes that do not form a frame
    (the flag is then False). The JSON parsed is therefore at most ``max_frames *
    max_frame_bytes`` bytes, whatever ``blob`` holds.
    """
    frames: list[Any] = []
    pos = 0
    while pos < len(blob):
        if pos + 4 > len(blob) or len(frames) >= max_frames:
            return frames, False
        (size,) = _HEADER.unpack_from(blob, pos)
        end = pos + 4 + size
        if size > max_frame_bytes or end > len(blob):
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


def _write_all(fd: int, data: bytes | memoryview) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def pack_call(
    name: str, args: tuple[Any, ...], kwargs: dict[str, Any], *, max_bytes: int = MAX_VALUE_BYTES
) -> bytes:
    """Return the frame of a call from a check to the code under test: 4-byte length + marshal.

    The frame holds ``(name, args, kwargs)`` as marshal data, version 2 (no object shared
    between two places: the code gets fresh values, as from :func:`decode_value`). This
    direction runs from the trusted check to the untrusted code, which reads it with one C
    call, as it reads its request. The values must be plain data of the exact built-in
    types that :func:`encode_value` tags (anything else, a subclass included, is TypeError),
    nested at most :data:`MAX_DEPTH` levels below ``args`` and ``kwargs``; EncodeError when
    nested deeper or longer than ``max_bytes`` once marshalled. The answers, which come from
    the code, stay tagged JSON (:func:`encode_value`).
    """
    size = 0
    for value in (*args, *kwargs, *kwargs.values()):
        size += _plain_size(value, 1, max_bytes)
        if size > max_bytes:
            break
    data = marshal.dumps((name, args, kwargs), 2) if size <= max_bytes else b""
    if not data or len(data) > max_bytes:
        raise EncodeError(f"value is larger than {max_bytes} bytes when encoded")
    return _HEADER.pack(len(data)) + data


def _plain_size(x: Any, depth: int, max_bytes: int) -> int:
    """Check that ``x`` is plain data (:func:`pack_call`); return at most its marshal size.

    The walk stops once the size passes ``max_bytes``: its work is bounded by ``max_bytes``.
    """
    if depth > MAX_DEPTH:
        raise EncodeError(f"value is nested deeper than {MAX_DEPTH} levels")
    t = type(x)
    if t is str or t is bytes:
        return 1 + len(x)
    if t in _SCALARS:  # None, bool, int, float
        return 1
    if t in _CONTAINER_TAGS or t is dict:  # exact types: their own iteration, nothing patched
        size = 5
        for item in x.items() if t is dict else x:
            if t is dict:
                size += _plain_size(item[0], depth + 1, max_bytes)
                item = item[1]
            size += _plain_size(item, depth + 1, max_bytes)
            if size > max_bytes:
                break
        return size
    raise TypeError("only plain data can be passed to the code under test")


# ----------------------------------------------------------------------------------------------
# Seccomp. x86_64: an allowlist of the system calls CPython and the usual extension modules
# make; anything else fails with ENOSYS (as on an older kernel: glibc falls back). aarch64: a
# blocklist (the same dangerous calls). Either way: no new processes (threads only), no exec,
# no ptrace or access to other processes' memory, signals only to itself, the calls that name
# a process (its limits, scheduling, priority, robust futex list) only for itself, no owner
# set on a descriptor (F_SETOWN: the kernel would signal that process on I/O), no sockets
# but connected socketpairs (no connect, bind, listen, accept, nor sendto with an address), no
# namespaces, no mount API (old or new), no io_uring, no memfd (memory outside RLIMIT_AS), no
# System V IPC or POSIX message queues (memory that would outlive the child), no keyrings,
# bpf, perf_event_open or userfaultfd.
# ----------------------------------------------------------------------------------------------

# x86_64 system calls the child may make, by number (see the names in the comment). Those in
# _CONDITIONS are allowed only with the arguments their handler in _seccomp_program accepts.
_X86_64_ALLOWED = frozenset(
    [
        *range(0, 29),  # read .. madvise (no System V shm: 29-31)
        *range(32, 41),  # dup .. sendfile (not socket, connect, accept: 41-43)
        *range(44, 49),  # sendto, recvfrom, sendmsg, recvmsg, shutdown (not bind, listen)
        *range(51, 56),  # getsockname, getpeername, socketpair, setsockopt, getsockopt
        56,  # clone (threads only; not fork, vfork, execve: 57-59)
        60,  # exit
        61,  # wait4
        62,  # kill
        63,  # uname (not semget .. msgctl: 64-71)
        *range(72, 101),  # fcntl .. times (files, dirs, chmod/chown, rlimits, getrusage)
        102,  # getuid
        104,  # getgid
        107,  # geteuid
        108,  # getegid
        110,  # getppid
        111,  # getpgrp
        115,  # getgroups
        118,  # getresuid
        120,  # getresgid
        121,  # getpgid
        124,  # getsid
        125,  # capget
        *range(127, 129),  # rt_sigpending, rt_sigtimedwait (not rt_sigqueueinfo: 129)
        130,  # rt_sigsuspend
        131,  # sigaltstack
        132,  # utime
        136,  # ustat
        137,  # statfs
        138,  # fstatfs
        *range(140, 142),  # getpriority, setpriority
        *range(142, 149),  # sched_*param/scheduler/priority/rr_get_interval
        157,  # prctl
        158,  # arch_prctl
        160,  # setrlimit (can only lower)
        186,  # gettid
        187,  # readahead
        *range(191, 197),  # getxattr .. flistxattr
        201,  # time
        202,  # futex
        203,  # sched_setaffinity
        204,  # sched_getaffinity
        205,  # set_thread_area
        211,  # get_thread_area
        213,  # epoll_create
        217,  # getdents64
        218,  # set_tid_address
        219,  # restart_syscall
        *range(221, 227),  # fadvise64, timer_*
        228,  # clock_gettime
        229,  # clock_getres
        230,  # clock_nanosleep
        231,  # exit_group
        232,  # epoll_wait
        233,  # epoll_ctl
        234,  # tgkill
        235,  # utimes
        239,  # get_mempolicy
        247,  # waitid
        *range(253, 256),  # inotify
        *range(257, 259),  # openat, mkdirat
        *range(260, 272),  # fchownat .. ppoll
        *range(273, 278),  # set/get_robust_list, splice, tee, sync_file_range
        280,  # utimensat
        *range(281, 288),  # epoll_pwait .. fallocate (not accept4: 288)
        *range(289, 297),  # signalfd4 .. pwritev
        299,  # recvmmsg
        302,  # prlimit64
        306,  # syncfs
        307,  # sendmmsg
        309,  # getcpu
        315,  # sched_getattr
        316,  # renameat2
        317,  # seccomp (a filter can only add restrictions)
        318,  # getrandom
        324,  # membarrier (not memfd_create: 319)
        *range(326, 329),  # copy_file_range, preadv2, pwritev2
        *range(329, 333),  # pkey_*, statx
        334,  # rseq
        436,  # close_range
        437,  # openat2
        439,  # faccessat2
        441,  # epoll_pwait2
        449,  # futex_waitv
        452,  # fchmodat2
        *range(454, 457),  # futex_wake, futex_wait, futex_requeue
    ]
)

_ARCHES = {
    # machine: (AUDIT_ARCH, {name: nr}, allowlist or None)
    "x86_64": (
        0xC000003E,
        {
            "fork": 57,
            "vfork": 58,
            "execve": 59,
            "execveat": 322,
            "clone": 56,
            "clone3": 435,
            "ioctl": 16,
            "fcntl": 72,
            "ptrace": 101,
            "process_vm_readv": 310,
            "process_vm_writev": 311,
            "kill": 62,
            "tkill": 200,
            "tgkill": 234,
            "rt_sigqueueinfo": 129,
            "rt_tgsigqueueinfo": 297,
            "pidfd_open": 434,
            "pidfd_send_signal": 424,
            "pidfd_getfd": 438,
            "socket": 41,
            "connect": 42,
            "accept": 43,
            "sendto": 44,
            "bind": 49,
            "listen": 50,
            "socketpair": 53,
            "accept4": 288,
            "unshare": 272,
            "setns": 308,
            "mount": 165,
            "umount2": 166,
            "memfd_create": 319,
            "memfd_secret": 447,
            "prlimit64": 302,
            "sched_setparam": 142,
            "sched_getparam": 143,
            "sched_setscheduler": 144,
            "sched_getscheduler": 145,
            "sched_rr_get_interval": 148,
            "sched_setaffinity": 203,
            "sched_getaffinity": 204,
            "sched_setattr": 314,
            "sched_getattr": 315,
            "get_robust_list": 274,
            "getpriority": 140,
            "setpriority": 141,
            "ioprio_set": 251,
            "ioprio_get": 252,
            "migrate_pages": 256,
            "move_pages": 279,
            "kcmp": 312,
            "process_madvise": 440,
            "process_mrelease": 448,
        },
        _X86_64_ALLOWED,
    ),
    "aarch64": (
        0xC00000B7,
        {
            "execve": 221,
            "execveat": 281,
            "clone": 220,
            "clone3": 435,
            "ioctl": 29,
            "fcntl": 25,
            "ptrace": 117,
            "process_vm_readv": 270,
            "process_vm_writev": 271,
            "kill": 129,
            "tkill": 130,
            "tgkill": 131,
            "rt_sigqueueinfo": 138,
            "rt_tgsigqueueinfo": 240,
            "pidfd_open": 434,
            "pidfd_send_signal": 424,
            "pidfd_getfd": 438,
            "socket": 198,
            "socketpair": 199,
            "bind": 200,
            "listen": 201,
            "accept": 202,
            "connect": 203,
            "sendto": 206,
            "accept4": 242,
            "unshare": 97,
            "setns": 268,
            "mount": 40,
            "umount2": 39,
            "pivot_root": 41,
            "chroot": 51,
            "shmget": 194,
            "shmctl": 195,
            "shmat": 196,
            "semget": 190,
            "semop": 193,
            "semtimedop": 192,
            "msgget": 186,
            "msgsnd": 189,
            "mq_open": 180,
            "keyctl": 219,
            "add_key": 217,
            "request_key": 218,
            "bpf": 280,
            "perf_event_open": 241,
            "userfaultfd": 282,
            "io_uring_setup": 425,
            "io_uring_enter": 426,
            "io_uring_register": 427,
            "open_tree": 428,
            "move_mount": 429,
            "fsopen": 430,
            "fsconfig": 431,
            "fsmount": 432,
            "fspick": 433,
            "mount_setattr": 442,
            "open_tree_attr": 467,
            "memfd_create": 279,
            "memfd_secret": 447,
            "prlimit64": 261,
            "sched_setparam": 118,
            "sched_setscheduler": 119,
            "sched_getscheduler": 120,
            "sched_getparam": 121,
            "sched_setaffinity": 122,
            "sched_getaffinity": 123,
            "sched_rr_get_interval": 127,
            "sched_setattr": 274,
            "sched_getattr": 275,
            "get_robust_list": 100,
            "setpriority": 140,
            "getpriority": 141,
            "ioprio_set": 30,
            "ioprio_get": 31,
            "migrate_pages": 238,
            "move_pages": 239,
            "process_madvise": 440,
            "process_mrelease": 448,
            "kcmp": 272,
            "open_by_handle_at": 265,
            "setpgid": 154,
            "setsid": 157,
        },
        None,
    ),
}
# Refused with EPERM (the errors candidates and tests expect), on every architecture that has
# them; on aarch64 every other call named in _ARCHES that has no condition is refused too.
_EPERM_CALLS = (
    "fork",
    "vfork",
    "execve",
    "execveat",
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "tkill",
    "rt_sigqueueinfo",
    "rt_tgsigqueueinfo",
    "pidfd_open",
    "pidfd_send_signal",
    "pidfd_getfd",
    "socket",
    "connect",
    "accept",
    "accept4",
    "bind",
    "listen",
    "unshare",
    "setns",
    "mount",
    "umount2",
    # the other calls that act on another process named by its pid
    "ioprio_set",
    "ioprio_get",
    "migrate_pages",
    "move_pages",
    "kcmp",
    "process_madvise",
    "process_mrelease",
)
# Refused with ENOSYS, as by a kernel without them, for callers that fall back. clone3: glibc
# falls back to clone, which _seccomp_program checks. memfd_*: memory that RLIMIT_AS does not
# count (a library that falls back to a file is bounded by the temp dir and RLIMIT_FSIZE).
_ENOSYS_CALLS = ("clone3", "memfd_create", "memfd_secret")
# The calls whose first argument names a process: allowed for the caller only (0, or its own
# pid). On another process of the same uid they would let a candidate lower the server's
# RLIMIT_NOFILE (every later execution fails), put an RLIMIT_CPU on the parent, or pin it to
# one CPU at the lowest priority.
_OWN_PROCESS_CALLS = (
    "prlimit64",
    "sched_setparam",
    "sched_getparam",
    "sched_setscheduler",
    "sched_getscheduler",
    "sched_rr_get_interval",
    "sched_setaffinity",
    "sched_getaffinity",
    "sched_setattr",
    "sched_getattr",
    "get_robust_list",
)
# The calls allowed only with some arguments, by name: the label of their check in
# _seccomp_program. On x86_64 a call must also be in the allowlist.
_CONDITIONS = {
    "clone": "clone",  # threads only, no namespaces
    "kill": "kill_sys",  # itself or its own process group
    "tgkill": "tgkill",  # its own threads
    "getpriority": "priority",  # PRIO_PROCESS, itself
    "setpriority": "priority",
    "sendto": "no_address",  # to the connected peer only
    "socketpair": "connected_pair",  # AF_UNIX, SOCK_STREAM or SOCK_SEQPACKET
    "fcntl": "no_owner",  # not F_SETOWN, F_SETOWN_EX, F_SETSIG, F_SETLEASE, O_ASYNC
    "ioctl": "no_owner_ioctl",  # not FIOSETOWN, SIOCSPGRP, FIOASYNC, nor a terminal's TIOCS*
    **{name: "own_process" for name in _OWN_PROCESS_CALLS},
}
# fcntl commands that make the kernel signal a process the descriptor's owner names (SIGIO,
# or any signal F_SETSIG picks, on I/O or a lease break): a way to signal another process
# that kill() refuses. F_SETOWN 8, F_SETSIG 10, F_SETOWN_EX 15, F_SETLEASE 1024. And
# F_SETFL (4) with O_ASYNC: on a terminal the kernel makes its foreground process group the
# owner by itself, so input on a terminal the child opened would signal that group.
_OWNER_FCNTL = (8, 10, 15, 1024)
_F_SETFL, _O_ASYNC = 4, 0o20000
# ioctl commands that do the same, or act on a terminal another process reads: FIOSETOWN,
# SIOCSPGRP, FIOASYNC, TIOCSPGRP (its foreground group), TIOCSCTTY (make it the controlling
# terminal), TIOCSTI (type input into it), TIOCLINUX.
_OWNER_IOCTL = (0x8901, 0x8902, 0x5452, 0x5410, 0x540E, 0x5412, 0x541C)
_CLONE_NAMESPACES = 0x7E020080  # CLONE_NEWNS|NEWCGROUP|NEWUTS|NEWIPC|NEWUSER|NEWPID|NEWNET|NEWTIME


def _ranges(numbers: frozenset[int]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for number in sorted(numbers):
        if out and out[-1][1] == number - 1:
            out[-1] = (out[-1][0], number)
        else:
            out.append((number, number))
    return out


def _seccomp_program(machine: str, my_pid: int) -> list[tuple[int, int, int, int]] | None:
    """Return the BPF program for ``machine`` as (code, jt, jf, k) tuples, or None if unknown.

    ``my_pid`` is the pid the process that installs the filter has (a placeholder, patched
    in by each installing process: see :func:`_prepare_seccomp`); the calls that name a
    process accept 0 and that pid only. Pids are ``int``: the kernel reads only the low word
    of their argument, and so does the program.
    """
    if machine not in _ARCHES:
        return None
    audit_arch, nr, allowed = _ARCHES[machine]
    ld_w_abs, jeq, jge, jgt, jset, ret, and_k = 0x20, 0x15, 0x35, 0x25, 0x45, 0x06, 0x54
    allow, kill = 0x7FFF0000, 0x80000000
    eperm, enosys = 0x00050000 | 1, 0x00050000 | 38
    clone_thread = 0x00010000
    af_unix, sock_stream, sock_seqpacket, sock_type_mask = 1, 1, 5, 0xF

    def arg(index: int, high: bool = False) -> tuple[int, int, int, int]:
        """Load the low (or high) 32-bit word of the syscall's argument ``index``."""
        return (ld_w_abs, 0, 0, 16 + 8 * index + (4 if high else 0))

    # labels are resolved after layout: ("J", code, k, label_true, label_false)
    prog: list[Any] = [
        (ld_w_abs, 0, 0, 4),  # arch
        ("J", jeq, audit_arch, None, "kill"),
        (ld_w_abs, 0, 0, 0),  # syscall nr
    ]
    if machine == "x86_64":
        prog.append(("J", jge, 0x40000000, "kill", None))  # x32 ABI
    for name in _EPERM_CALLS:
        if name in nr:  # aarch64 has no fork or vfork
            prog.append(("J", jeq, nr[name], "eperm", None))
    for name in _ENOSYS_CALLS:
        prog.append(("J", jeq, nr[name], "enosys", None))
    if allowed is None:  # blocklist: every other listed call without a condition is refused
        for name, number in nr.items():
            if name not in _EPERM_CALLS + _ENOSYS_CALLS and name not in _CONDITIONS:
                prog.append(("J", jeq, number, "eperm", None))
    for name, label in _CONDITIONS.items():
        if name in nr and (allowed is None or nr[name] in allowed):
            prog.append(("J", jeq, nr[name], label, None))
    prog.append(("J", jeq, 0xFFFFFFFF, "eperm", "checks"))  # (never true) skip the handlers
    prog.append(("L", "clone"))
    prog.append(arg(0))  # clone flags
    prog.append(("J", jset, _CLONE_NAMESPACES, "eperm", None))
    prog.append(("J", jset, clone_thread, "allow_end", "eperm"))
    prog.append(("L", "kill_sys"))
    prog.append(arg(0))  # pid
    prog.append(("J", jeq, 0, "allow_end", None))
    prog.append(("J", jeq, my_pid, "allow_end", None))
    prog.append(("J", jeq, (-my_pid) & 0xFFFFFFFF, "allow_end", "eperm"))
    prog.append(("L", "tgkill"))
    prog.append(arg(0))  # tgid
    prog.append(("J", jeq, my_pid, "allow_end", "eperm"))
    prog.append(("L", "priority"))
    prog.append(arg(0))  # which: PRIO_PROCESS (0), not a process group or a user
    prog.append(("J", jeq, 0, None, "eperm"))
    prog.append(arg(1))  # who
    prog.append(("J", jeq, 0, "allow_end", None))
    prog.append(("J", jeq, my_pid, "allow_end", "eperm"))
    prog.append(("L", "own_process"))
    prog.append(arg(0))  # pid
    prog.append(("J", jeq, 0, "allow_end", None))
    prog.append(("J", jeq, my_pid, "allow_end", "eperm"))
    prog.append(("L", "no_address"))  # sendto(fd, buf, len, flags, dest_addr, addrlen)
    prog.append(arg(4))
    prog.append(("J", jeq, 0, None, "eperm"))
    prog.append(arg(4, high=True))
    prog.append(("J", jeq, 0, "allow_end", "eperm"))
    prog.append(("L", "connected_pair"))  # socketpair(domain, type, protocol, sv)
    prog.append(arg(0))
    prog.append(("J", jeq, af_unix, None, "eperm"))
    prog.append(arg(1))
    prog.append((and_k, 0, 0, sock_type_mask))  # without SOCK_NONBLOCK and SOCK_CLOEXEC
    prog.append(("J", jeq, sock_stream, "allow_end", None))
    prog.append(("J", jeq, sock_seqpacket, "allow_end", "eperm"))
    prog += _refusing("no_owner", arg(1), _OWNER_FCNTL, then="async")  # fcntl(fd, cmd, arg)
    prog.append(("L", "async"))  # F_SETFL: any flags but O_ASYNC
    prog.append(("J", jeq, _F_SETFL, None, "allow_end"))
    prog.append(arg(2))
    prog.append(("J", jset, _O_ASYNC, "eperm", "allow_end"))
    prog += _refusing("no_owner_ioctl", arg(1), _OWNER_IOCTL)  # ioctl(fd, request, arg)
    prog.append(("L", "eperm"))
    prog.append((ret, 0, 0, eperm))
    prog.append(("L", "enosys"))
    prog.append((ret, 0, 0, enosys))
    prog.append(("L", "kill"))
    prog.append((ret, 0, 0, kill))
    prog.append(("L", "allow_end"))
    prog.append((ret, 0, 0, allow))
    prog.append(("L", "checks"))
    if allowed is not None:
        # ascending ranges, each: above it -> next range; inside -> allow; below -> refuse
        for low, high in _ranges(allowed):
            prog.append((jgt, 3, 0, high))  # JGT high: jt -> the next range
            prog.append((jge, 0, 1, low))  # JGE low: allow, else refuse
            prog.append((ret, 0, 0, allow))
            prog.append((ret, 0, 0, enosys))
        prog.append((ret, 0, 0, enosys))
    prog.append((ret, 0, 0, allow))  # blocklist: everything else; allowlist: unreachable
    return _resolve_labels(prog)


def _refusing(
    label: str, load: tuple[int, int, int, int], values: tuple[int, ...], then: str = "allow_end"
) -> list[Any]:
    """Return the handler ``label``: refuse (EPERM) when the loaded word is one of ``values``.

    Otherwise go on at ``then`` (the loaded word still in the accumulator).
    """
    jeq = 0x15
    return [
        ("L", label),
        load,
        *(("J", jeq, value, "eperm", None) for value in values),
        ("J", jeq, 0xFFFFFFFF, "eperm", then),  # (never true) go on with the rest
    ]


def _resolve_labels(prog: list[Any]) -> list[tuple[int, int, int, int]]:
    """Return ``prog`` with its labels dropped and its jumps' labels made relative offsets."""
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


def _prepare_seccomp(libc: Any) -> Any:
    """Build the filter once in the server; the child only patches its own pid in.

    The program lives in a plain byte buffer (``struct sock_filter`` is 8 bytes: u16 code,
    u8 jt, u8 jf, u32 k) that the child patches with ``struct.pack_into``: fewer objects
    touched after the fork than with ctypes structures.
    """
    import ctypes  # already loaded by serve(); imported here so SockFprog's base is typed

    program = _seccomp_program(os.uname().machine, _PID_PLACEHOLDER)
    if program is None or libc is None:
        return None
    buffer = (ctypes.c_ubyte * (8 * len(program)))()
    for index, instruction in enumerate(program):
        struct.pack_into("=HBBI", buffer, 8 * index, *instruction)

    class SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

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
# Landlock: the child may read only the interpreter's trees and the system libraries, and
# write only its temp root; it may not ptrace or signal processes outside its domain (the
# server, the parent, other candidates), even with the same uid.
# ----------------------------------------------------------------------------------------------

_LANDLOCK_FS_BITS = {1: 13, 2: 14, 3: 15, 4: 15, 5: 16}  # ABI -> number of handled fs rights
_LL_EXECUTE, _LL_WRITE_FILE, _LL_READ_FILE, _LL_READ_DIR = 1, 2, 4, 8
_LL_TRUNCATE = 1 << 14
_LANDLOCK_SCOPES = 3  # ABI 6: LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | LANDLOCK_SCOPE_SIGNAL


def _prepare_landlock(ctypes: Any, libc: Any, spec: dict[str, list[str]] | None) -> int | None:
    """Build the child's Landlock ruleset once in the server.

    Return its fd, or None where the kernel has no Landlock (the child then runs without it).

    ``spec``: ``{"read": [paths], "list": [directories whose names only may be listed],
    "write": [paths], "dev": [device files]}``. Paths that do not exist are skipped.
    """
    if libc is None or not spec or os.uname().machine not in ("x86_64", "aarch64"):
        return None
    syscall = libc.syscall
    syscall.restype = ctypes.c_long
    abi = syscall(444, None, 0, 1)  # landlock_create_ruleset(NULL, 0, ..._VERSION)
    if abi < 1:
        return None
    fs_all = (1 << _LANDLOCK_FS_BITS.get(abi, 16)) - 1
    fields = [fs_all, 3 if abi >= 4 else 0, _LANDLOCK_SCOPES if abi >= 6 else 0]
    size = 8 * (1 if abi < 4 else 2 if abi < 6 else 3)
    attr = (ctypes.c_uint64 * 3)(*fields)
    ruleset = syscall(444, ctypes.byref(attr), size, 0)
    if ruleset < 0:
        return None
    read = _LL_EXECUTE | _LL_READ_FILE | _LL_READ_DIR
    device = _LL_READ_FILE | _LL_WRITE_FILE | (_LL_TRUNCATE if abi >= 3 else 0)
    rules = [(path, read) for path in spec.get("read", [])]
    rules += [(path, _LL_READ_DIR) for path in spec.get("list", [])]
    rules += [(path, fs_all) for path in spec.get("write", [])]
    rules += [(path, device) for path in spec.get("dev", [])]
    rule = ctypes.create_string_buffer(12)  # struct landlock_path_beneath_attr (packed)
    for path, access in rules:
        try:
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
        except OSError:
            continue
        try:
            if not os.path.isdir(f"/proc/self/fd/{fd}"):
                access &= _LL_EXECUTE | _LL_READ_FILE | _LL_WRITE_FILE | _LL_TRUNCATE
            struct.pack_into("=Qi", rule, 0, access, fd)
            if syscall(445, ruleset, 1, rule, 0) != 0:
                os.close(ruleset)
                return None
        finally:
            os.close(fd)
    return int(ruleset)


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


def _confine(fds: tuple[int, int, int, int, int], workdir: str, cfg: dict[str, Any]) -> None:
    """Confine the freshly forked child before any request arrives; exit 71 on any failure.

    ``fds``: its ends of the result, stderr, request, calls and replies pipes. Mirrored step
    for step, in the same order, by ``confine_child`` in ``_native.c``, which the compiled
    server loop runs instead of this function.
    """
    res_fd, err_fd, req_fd, calls_fd, replies_fd = fds
    # --- descriptors: 0 and 1 read and discard (/dev/null, as in the server), 2 <- stderr
    # pipe, 3 <- result pipe, 4 <- request pipe (closed once read), 5 <- the check's calls,
    # 6 <- the answers to them (both closed at once for I/O cases). The server keeps its
    # descriptors 0 to 6 open, so these sources are all above 6. Every Python call here
    # costs page faults on pages shared with the server: what can be done once in the server
    # (/dev/null on 0 and 1, SIGINT's default action, RLIMIT_FSIZE and RLIMIT_CORE; see
    # _server_limits) is inherited instead.
    os.dup2(err_fd, 2)
    os.dup2(res_fd, 3)
    os.dup2(req_fd, 4)
    os.dup2(calls_fd, 5)
    os.dup2(replies_fd, 6)
    os.setpgid(0, 0)
    os.chdir(workdir)
    _restrict(7, cfg)


def _restrict(first_closed: int, cfg: dict[str, Any]) -> None:
    """Take the steps a child and the checking process share; exit 71 on any failure.

    No new privileges, Landlock, every descriptor from ``first_closed`` up closed, the
    limits, the uid change, death with the server.
    """
    import resource

    exit_now = os._exit
    prctl = _PRCTL[0]
    if prctl is not None and prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS
        exit_now(CHILD_SETUP_FAILED_EXIT)
    landlock = _LANDLOCK[0]
    if landlock is not None and _SYSCALL[0](446, landlock, 0) != 0:  # landlock_restrict_self
        exit_now(CHILD_SETUP_FAILED_EXIT)
    # the control pipe to the parent, the Landlock ruleset and everything else
    os.closerange(first_closed, 0x7FFFFFFF)
    # Per process, not in the server: the server must hold a large request (RLIMIT_AS), fork
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
        if os.getresuid() != (drop_uid,) * 3 or os.getresgid() != (drop_uid,) * 3:
            exit_now(CHILD_SETUP_FAILED_EXIT)
    if prctl is not None:  # after the uid change, which clears it: die with the server
        prctl(1, 9, 0, 0, 0)  # PR_SET_PDEATHSIG, SIGKILL
        if os.getppid() == 1:
            exit_now(CHILD_SETUP_FAILED_EXIT)


def _confine_checker(sock_fd: int, cfg: dict[str, Any]) -> None:
    """Confine the freshly forked checking process as a child is (:func:`_confine`).

    Without RLIMIT_CPU, which counts all its checks: the server's deadline bounds each one.
    Its socket to the server goes to descriptor 3; 0, 1 and 2 are /dev/null. Both server
    loops run this (in Python: it happens once per :data:`CHECKER_RUNS` checks).
    """
    os.dup2(sock_fd, 3)
    os.setpgid(0, 0)
    _restrict(4, cfg)
    if _PRCTL[0] is not None:  # not dumpable, whatever the uid change left
        _PRCTL[0](4, 0, 0, 0, 0)  # PR_SET_DUMPABLE


def _child(
    fds: tuple[int, int, int, int, int],
    workdir: str,
    cfg: dict[str, Any],
    *,
    confined: bool = False,
) -> None:
    """Set up the isolated child, wait for the request, run it, report; never return.

    The server forks this child ahead of time, so that descriptors, limits and the uid change
    are in place before a request arrives (off the critical path). ``confined``: the compiled
    server loop already took those steps, in the same order (``confine_child`` in
    ``_native.c``); the descriptors are then 2 to 6 (see :func:`_confine`).

    The request starts with its mode mark (:func:`pack_request`). For I/O cases the child
    reads both frames, installs the seccomp filter, runs the code and reports on fd 3. For a
    check script it closes the result pipe at once, reads the first frame (the second goes
    to the checking process), installs the filter and answers the check's calls, which
    arrive on fd 5, on fd 6, until the check closes its end (:func:`_serve_calls`): the code
    under test never holds the script (its expected values), the nonce or the result pipe,
    and the process that runs ``check`` never runs that code.
    """
    import resource

    exit_now = os._exit
    if not confined:
        _confine(fds, workdir, cfg)
    out_fd = 3
    mark = _read_exact(4, 1)
    script = mark == b"s"
    if script:
        os.close(out_fd)
    req = _read_child_request(4) if mark is not None else None
    if req is None:  # the server is shutting down
        exit_now(CHILD_OK_EXIT)
    cpu_s = math.ceil(float(req["timeout_s"])) + 1
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_s, cpu_s))
    if script:
        os.close(4)
        try:
            if cfg.get("seccomp") and not _install_seccomp(_SECCOMP[0]):
                exit_now(CHILD_SETUP_FAILED_EXIT)
            _serve_calls(req, 5, 6)
        finally:
            exit_now(CHILD_OK_EXIT)
    os.close(5)
    os.close(6)
    if cfg.get("seccomp") and not _install_seccomp(_SECCOMP[0]):
        exit_now(CHILD_SETUP_FAILED_EXIT)
    secret = _read_child_request(4)
    os.close(4)
    if secret is None:
        exit_now(CHILD_OK_EXIT)
    nonce = secret.pop("nonce")
    write_all = _write_all
    pack = pack_frame

    def send(*objs: dict[str, Any]) -> None:
        frames = []
        for obj in objs:
            obj["n"] = nonce
            frames.append(pack(obj))
        write_all(out_fd, b"".join(frames))

    try:
        _run_candidate(req, send, _print_exc)
    except BaseException:  # the harness itself was broken by the code (patched json, ...)
        exit_now(CHILD_OK_EXIT)  # results are missing: the parent reports a crash
    exit_now(CHILD_OK_EXIT)


def _print_exc() -> None:
    """Write the traceback of the exception being handled to fd 2 (the stderr pipe)."""
    with contextlib.suppress(BaseException):
        _write_all(2, format_exc(sys.exc_info()[1]).encode("utf-8", "backslashreplace"))


#: the checks a checking process runs before the server forks a fresh one
CHECKER_RUNS = 256


def _checker_main(sock_fd: int, cfg: dict[str, Any]) -> None:
    """Run one check script per message from the server, in the checking process; never return.

    A message is the second frame of a check script's request (:func:`pack_request`) with
    four descriptors: the execution's result pipe, its stderr pipe, the calls pipe to the
    code's process and the replies pipe from it. The check runs with stderr on the stderr
    pipe, its frames go to the result pipe, and all four are closed after it (the server
    sees the end of the result pipe).
    """
    import socket  # before the uid change: the children's uid may not read the stdlib

    exit_now = os._exit
    _confine_checker(sock_fd, cfg)

    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM, 0, 3)
    if cfg.get("seccomp") and not _install_seccomp(_SECCOMP[0]):
        exit_now(CHILD_SETUP_FAILED_EXIT)
    while True:
        try:
            data, fds, _flags, _address = socket.recv_fds(sock, _HEADER.size, 4)
            while data and len(data) < _HEADER.size:
                more = sock.recv(_HEADER.size - len(data))
                data = data + more if more else b""
            body = _read_exact(3, _HEADER.unpack(data)[0]) if data else None
        except (OSError, ValueError):
            exit_now(CHILD_SETUP_FAILED_EXIT)
        if body is None or len(fds) != 4:  # the server closed the socket (or broke)
            exit_now(CHILD_OK_EXIT)
        try:
            _check_one(body, fds)
        except BaseException:  # a broken harness: the server forks a fresh checker
            exit_now(CHILD_SETUP_FAILED_EXIT)


def _check_one(body: bytes, fds: list[int]) -> None:
    """In the checking process: run one check (see :func:`_checker_main`), close ``fds``."""
    res_w, err_w, calls_w, replies_r = fds
    os.dup2(err_w, 2)
    os.close(err_w)
    channel = _PipeChannel(calls_w, replies_r)
    try:
        secret = marshal.loads(body)
        nonce = secret.pop("nonce")
        write_all = _write_all
        pack = pack_frame

        def send(*objs: dict[str, Any]) -> None:
            frames = []
            for obj in objs:
                obj["n"] = nonce
                frames.append(pack(obj))
            write_all(res_w, b"".join(frames))

        with contextlib.suppress(_CodeEnded):  # the code's process ended: its status tells
            _check_remotely(secret, channel, send, _print_exc)
    finally:
        channel.close()
        os.close(replies_r)
        os.dup2(0, 2)  # /dev/null again
        os.close(res_w)  # last: the server now sees the end of the result pipe


_REPEATS_SHOWN = 3


def format_exc(exc: BaseException | None, _seen: set[int] | None = None) -> str:
    """Return a traceback of ``exc`` in the layout of ``traceback.print_exc``, without source lines.

    Each frame is one ``File "...", line N, in name`` line, a run of the same frame is cut
    after 3 (``[Previous line repeated N more times]``), and causes and contexts come first,
    as Python prints them. The standard module costs a child about 0.7 ms of page faults and
    file look-ups (the candidate's code has no file: no line would be shown for it anyway).
    """
    if exc is None:
        return ""
    seen = set() if _seen is None else _seen
    seen.add(id(exc))
    parts: list[str] = []
    cause, context = exc.__cause__, exc.__context__
    if cause is not None and id(cause) not in seen:
        parts.append(format_exc(cause, seen))
        parts.append("\nThe above exception was the direct cause of the following exception:\n\n")
    elif context is not None and not exc.__suppress_context__ and id(context) not in seen:
        parts.append(format_exc(context, seen))
        parts.append("\nDuring handling of the above exception, another exception occurred:\n\n")
    tb = exc.__traceback__
    remote = getattr(exc, REMOTE_FRAMES, None)
    if tb is not None:
        parts.append("Traceback (most recent call last):\n")
        lines = _frame_lines(tb)
        if type(remote) is str:  # raised by the code under test, in the other process
            while lines and lines[-1].startswith(f'  File "{HARNESS_FILENAME}"'):
                lines.pop()
            lines.append(remote)
        parts.extend(lines)
    kind = type(exc)
    name = kind.__qualname__
    if kind.__module__ not in ("builtins", "__main__"):
        name = f"{kind.__module__}.{name}"
    try:
        text = str(exc)
    except BaseException:
        text = "<exception str() failed>"
    parts.append(f"{name}: {text}\n" if text else f"{name}\n")
    notes = getattr(exc, "__notes__", None)
    if isinstance(notes, list | tuple):
        parts.extend(f"{note}\n" for note in notes if isinstance(note, str))
    return "".join(parts)


HARNESS_FILENAME = "lift_sandbox_worker"  # this file's name in the server (BOOTSTRAP)
#: the attribute of an exception rebuilt from one the code under test raised in its own
#: process (:func:`_rebuilt_exception`) that holds that process's traceback lines
REMOTE_FRAMES = "_lift_sandbox_frames"


def _frame_lines(tb: Any) -> list[str]:
    """Return one ``File "...", line N, in name`` line per frame of ``tb``, runs cut after 3."""
    lines: list[str] = []
    last: tuple[str, int, str] | None = None
    count = 0
    while tb is not None:
        code = tb.tb_frame.f_code
        frame = (code.co_filename, tb.tb_lineno, code.co_name)
        tb = tb.tb_next
        if frame != last:
            lines.extend(_repeated(count))
            last, count = frame, 0
        count += 1
        if count <= _REPEATS_SHOWN:
            lines.append(f'  File "{frame[0]}", line {frame[1]}, in {frame[2]}\n')
    lines.extend(_repeated(count))
    return lines


def _repeated(count: int) -> list[str]:
    extra = count - _REPEATS_SHOWN
    if extra <= 0:
        return []
    times = "time" if extra == 1 else "times"
    return [f"  [Previous line repeated {extra} more {times}]\n"]


_VALUE_CHARS = 200
SCRIPT_FILENAME = "<tests>"


def _bounded_repr(value: Any) -> str:
    try:
        text = repr(value)
    except BaseException:
        return "<repr failed>"
    return text if len(text) <= _VALUE_CHARS else text[: _VALUE_CHARS - 3] + "..."


#: one assert of a check script: first line, last line, text, kind, left, right (the
#: parent's ``_assert_table``)
AssertEntry = tuple[int, int, str, str, Any, Any]


def _explain_assertion(exc: AssertionError, asserts: bytes) -> str:
    """Name the failing assertion of a check script and the values involved.

    For example ``AssertionError at line 3: assert candidate(2) == 5; left: 4, right: 5``.

    Only on failure, in the child: the assert statement is the first entry of ``asserts``
    (the parent's table of the script's asserts, :data:`AssertEntry` tuples as marshal data)
    spanning the line of the innermost frame of the script; for a comparison, each operand is
    evaluated again in that frame (a bare ``assert x`` shows ``x``), each repr cut to 200
    characters. Anything that goes wrong leaves the plain ``AssertionError`` text.
    """
    plain = _short_exc(exc)
    try:
        tb = exc.__traceback__
        frame, line = None, 0
        while tb is not None:
            if tb.tb_frame.f_code.co_filename == SCRIPT_FILENAME:
                frame, line = tb.tb_frame, tb.tb_lineno
            tb = tb.tb_next
        if frame is None:
            return plain
        table = marshal.loads(asserts) if asserts else ()
        entry = next((item for item in table if item[0] <= line <= item[1]), None)
        if entry is None:
            return plain
        first, _, text, kind, left_source, right_source = entry
        detail = str(exc)
        if len(detail) > _VALUE_CHARS:  # the frame stays within MAX_FRAME_BYTES
            detail = detail[: _VALUE_CHARS - 3] + "..."
        message = f": {detail}" if exc.args else ""
        head = f"AssertionError{message} at line {first}: {text}"

        def value_of(source: Any) -> str:
            # compiled by the parent, or its source where compiling it there gave a warning
            code = compile(source, SCRIPT_FILENAME, "eval") if type(source) is str else source
            try:
                return _bounded_repr(eval(code, frame.f_globals, dict(frame.f_locals)))
            except BaseException as error:
                return f"<{type(error).__name__} when evaluated again>"

        if kind == "cmp":
            left, right = value_of(left_source), value_of(right_source)
            return f"{head}; left: {left}, right: {right}"
        if kind == "const":
            return head
        return f"{head}; value: {value_of(left_source)}"
    except BaseException:
        return plain


def _load(
    req: dict[str, Any], report: Callable[[dict[str, Any]], None], print_exc: Callable[[], None]
) -> dict[str, Any] | None:
    """Run the code's top level; return its globals, or None once ``report`` has said why not."""
    import builtins

    glb: dict[str, Any] = {"__name__": "__candidate__", "__builtins__": builtins}
    try:
        exec(req["code"], glb)  # compiled by the parent
    except MemoryError:
        report({"k": "load", "m": 1})
        return None
    except BaseException as exc:
        print_exc()
        report({"k": "load", "e": _short_exc(exc)})
        return None
    name = req["entry_point"]
    if not callable(glb.get(name)):
        report({"k": "load", "e": f"entry point {name!r} is not a function defined by the code"})
        return None
    return glb


def _run_candidate(req: dict[str, Any], send: Any, print_exc: Any) -> None:
    """Load the code and run the I/O cases, reporting each step through ``send``."""
    glb = _load(req, send, print_exc)
    if glb is None:
        return
    fn = glb[req["entry_point"]]
    max_value_bytes = int(req["max_value_bytes"])
    send({"k": "load"})
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
    send({"k": "done"})


# -- check scripts: the check and the code under test in two processes ----------------------------

#: the most names of functions the code under test offers the check (each at most 100 characters)
MAX_OFFERED_NAMES = 1000


def _exc_text(exc: BaseException) -> str:
    try:
        text = str(exc)
    except BaseException:
        text = "<str() failed>"
    return text if len(text) <= 300 else text[:297] + "..."


def _answerer(
    glb: dict[str, Any], max_value_bytes: int, print_exc: Callable[[], None]
) -> tuple[list[str], Callable[[Any], dict[str, Any]]]:
    """In the process of the code under test: the functions it offers, and how a call is answered.

    A call is the body of a :func:`pack_call` frame (marshal data, from the check: trusted);
    the answer is ``{"v": tree}``, ``{"t": exception type name, "e": its text}`` or
    ``{"m": 1}`` (out of memory). The functions are those the code's top level defined.
    """
    offered = {
        name: value
        for name, value in list(glb.items())
        if type(name) is str and len(name) <= 100 and name.isidentifier() and callable(value)
    }
    names = sorted(offered)[:MAX_OFFERED_NAMES]
    functions = {name: offered[name] for name in names}

    def answer(call: bytes) -> dict[str, Any]:
        value: Any = None
        try:
            name, args, kwargs = marshal.loads(call)
            value = functions[name](*args, **kwargs)
            return {"v": encode_value(value, max_bytes=max_value_bytes)}
        except MemoryError:
            value = None  # free what can be freed before answering
            return {"m": 1}
        except EncodeError as exc:
            return {"t": "TypeError", "e": f"the result cannot be sent back: {exc}"}
        except BaseException as exc:
            raised: dict[str, Any] = {"t": type(exc).__name__[:100], "e": _exc_text(exc)}
            with contextlib.suppress(BaseException):  # below this frame: the code's own
                tb = exc.__traceback__
                raised["tb"] = "".join(_frame_lines(tb.tb_next if tb else None))[-4000:]
            with contextlib.suppress(BaseException):
                raised["a"] = encode_value(list(exc.args), max_bytes=4000)
            return raised

    return names, answer


def _serve_calls(req: dict[str, Any], calls_fd: int, replies_fd: int) -> None:
    """In the process of the code under test: load it, then answer the check's calls.

    This process holds neither the check script nor the nonce nor the result pipe: whatever
    it does, it can only answer calls, and the answers are data (:func:`_check_remotely`).
    """

    def reply(obj: dict[str, Any]) -> None:
        _write_all(replies_fd, pack_frame(obj))

    glb = _load(req, reply, _print_exc)
    if glb is None:
        return
    names, answer = _answerer(glb, int(req["max_value_bytes"]), _print_exc)
    reply({"k": "load", "names": names})
    calls = _FrameReader(calls_fd, MAX_RESULT_BYTES)
    while (call := calls.read()) is not None:
        reply(answer(call))


class _FrameReader:
    """The frames (4-byte length + body) that arrive on a pipe, one system call each.

    A writer writes a frame whole (:func:`pack_frame`, :func:`pack_call`), so one read of up
    to 64 KiB usually holds it; the bytes read past a frame wait for the next one.
    """

    __slots__ = ("fd", "limit", "pending")

    def __init__(self, fd: int, limit: int) -> None:
        self.fd, self.limit = fd, limit
        self.pending = b""

    def read(self) -> bytes | None:
        """Return the next frame's body; None at the end of the file.

        Raises ValueError for a frame longer than ``limit`` bytes (its body is not read).
        """
        data = self.pending
        while len(data) < _HEADER.size:
            chunk = os.read(self.fd, 1 << 16)
            if not chunk:
                return None
            data += chunk
        end = _HEADER.size + _HEADER.unpack_from(data)[0]
        if end - _HEADER.size > self.limit:
            raise ValueError(f"a frame of {end - _HEADER.size} bytes, over {self.limit}")
        if len(data) < end:
            rest = _read_exact(self.fd, end - len(data))
            if rest is None:
                return None
            data += rest
        self.pending = data[end:]
        return data[_HEADER.size : end]


# the C scanner that json.loads runs (typeshed's stub types its context argument wrongly)
_scan_json = make_scanner(cast(Any, json.JSONDecoder()))


def _parse_frame(body: bytes) -> Any:
    """Return the JSON value of a frame's body; ValueError (or RecursionError) if malformed.

    The body must be as :func:`pack_frame` writes it: ASCII, no whitespace around the value.
    This is the scanner that ``json.loads`` runs, without its look for an encoding and for
    whitespace, which cost more than the scan of a short answer.
    """
    text = body.decode("ascii")
    try:
        value, end = _scan_json(text, 0)
    except StopIteration:
        raise ValueError("not a JSON value") from None
    if end != len(text):
        raise ValueError("bytes after the JSON value")
    return value


class _CodeEnded(BaseException):
    """The process of the code under test closed its end of the pipes (it ended).

    Not an ``Exception``: a check's ``except Exception`` must not swallow it.
    """


MALFORMED = "the code under test sent a malformed answer"


class _PipeChannel:
    """The check's side of the pipes to the process of the code under test."""

    def __init__(self, calls_fd: int, replies_fd: int) -> None:
        self.calls_fd = calls_fd
        self.replies = _FrameReader(replies_fd, MAX_FRAME_BYTES)
        self.ended = False  # the other end was closed
        self.broken = False  # it sent something that is not a frame: nothing more is read

    def read(self) -> Any:
        if self.ended:
            raise _CodeEnded
        if self.broken:
            raise RuntimeError(MALFORMED)
        try:
            body = self.replies.read()
            if body is None:
                self.ended = True
                raise _CodeEnded
            return _parse_frame(body)
        except (ValueError, RecursionError):
            self.broken = True
            raise RuntimeError(MALFORMED) from None

    def ask(self, call: bytes) -> Any:
        """Send ``call`` (a :func:`pack_call` frame); return the answer's JSON."""
        try:
            _write_all(self.calls_fd, call)
        except OSError:
            raise _CodeEnded from None
        return self.read()

    def close(self) -> None:
        """Close the calls pipe (once): the code's process reads its end and exits."""
        if self.calls_fd >= 0:
            os.close(self.calls_fd)
            self.calls_fd = -1


class _Remote:
    """A function of the code under test, as the check sees it: calls go out as data."""

    __slots__ = ("__name__", "_channel")

    def __init__(self, name: str, channel: Any) -> None:
        self.__name__ = name
        self._channel = channel

    def __repr__(self) -> str:
        return f"<function {self.__name__}>"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        try:
            call = pack_call(self.__name__, args, kwargs)
        except EncodeError as exc:
            raise TypeError(f"an argument cannot be sent to the code under test: {exc}") from None
        except TypeError as exc:  # not plain data
            raise TypeError(str(exc)) from None
        answer = self._channel.ask(call)
        if type(answer) is dict:
            if "v" in answer:
                try:
                    return decode_value(answer["v"])
                except DecodeError:
                    pass
            elif answer.get("m") == 1:
                raise MemoryError
            elif type(answer.get("t")) is str and type(answer.get("e")) is str:
                raise _rebuilt_exception(answer)
        raise RuntimeError(MALFORMED)


def has_unsupported(tree: Any) -> bool:
    """Whether a tagged tree holds a value that is not plain data (tag ``"?"``)."""
    if tree[0] == "?":
        return True
    if tree[0] in ("l", "t", "S", "F"):
        return any(has_unsupported(item) for item in tree[1])
    if tree[0] == "d":
        return any(has_unsupported(k) or has_unsupported(v) for k, v in tree[1])
    return False


def _rebuilt_exception(answer: dict[str, Any]) -> BaseException:
    """Return a fresh exception for one the code under test raised (an answer with ``"t"``).

    Of the built-in type of that name, with the same arguments where they are plain data,
    where there is one (so that a check expecting a ValueError sees one), else a RuntimeError
    naming it. Its traceback in the other process rides along for :func:`format_exc`.
    """
    import builtins

    type_name, text = answer["t"], answer["e"]
    kind = getattr(builtins, type_name, None)
    exc: BaseException = RuntimeError(f"{type_name}: {text}")
    if (
        isinstance(kind, type)
        and issubclass(kind, Exception)
        and not issubclass(kind, StopIteration | StopAsyncIteration)
    ):
        try:
            args = decode_value(answer["a"]) if "a" in answer else [text]
            exc = kind(*args) if type(args) is list else kind(text)
        except BaseException:
            with contextlib.suppress(BaseException):
                exc = kind(text)
    if type(answer.get("tb")) is str:
        setattr(exc, REMOTE_FRAMES, answer["tb"])
    return exc


def _remote_namespace(req: dict[str, Any], channel: Any, send: Any) -> dict[str, Any] | None:
    """Wait until the code under test is loaded; return the check's fresh namespace.

    It holds a :class:`_Remote` for the entry point and for each other function the code's
    top level defined, and this process's own builtins. A name of a builtin (``abs``,
    ``tuple``, ``sorted``...) or a dunder name is never the code's, except the entry point:
    a check that wraps the candidate's answer in ``abs(...)`` calls the real one, whatever
    the code defined. (The script's own definitions, run next, replace any of these names.)
    None once ``send`` reported why the code could not be loaded.
    """
    import builtins

    try:
        load = channel.read()
    except RuntimeError:
        load = None
    names = load.get("names") if type(load) is dict and load.get("k") == "load" else None
    if type(load) is dict and load.get("m") == 1:
        send({"k": "load", "m": 1})
    elif type(load) is dict and "e" in load:
        send({"k": "load", "e": str(load["e"])[:300]})
    elif type(names) is not list or req["entry_point"] not in names:
        send({"k": "load", "e": MALFORMED})
    else:
        glb: dict[str, Any] = {"__name__": "__candidate__", "__builtins__": builtins}
        entry_point = req["entry_point"]
        for name in names:
            if type(name) is not str or not name.isidentifier():
                continue
            if name == entry_point or not (
                hasattr(builtins, name) or (name.startswith("__") and name.endswith("__"))
            ):
                glb[name] = _Remote(name, channel)
        send({"k": "load"})
        return glb
    return None


def _check_remotely(secret: dict[str, Any], channel: Any, send: Any, print_exc: Any) -> None:
    """Run the check script against the code under test, which runs in another process.

    ``secret`` is the second frame of the request (the script, its asserts, the entry
    point). The script runs here in a fresh namespace with this process's own builtins. Each
    function that the code's top level defined (the entry point, and helpers a script may
    call by name) is a :class:`_Remote`: its arguments go out as tagged data, its result
    comes back as plain built-in values rebuilt here, never an object of the code's making.
    Reported through ``send`` as a one-process run would be. Raises :class:`_CodeEnded` when
    the code's process ended before the check did: the server reports how it ended.
    """
    try:
        glb = _remote_namespace(secret, channel, send)
        if glb is not None:
            _run_check(secret, glb, glb[secret["entry_point"]], channel, send, print_exc)
    finally:
        channel.close()


def _run_check(
    secret: dict[str, Any],
    glb: dict[str, Any],
    candidate: Any,
    channel: Any,
    send: Any,
    print_exc: Any,
) -> None:
    """Run ``check(candidate)`` in ``glb``; report its outcome as a one-process run would."""
    try:
        exec(secret["script"], glb)
        glb["check"](candidate)
        if channel.ended:  # the check caught what the code's end raised
            raise _CodeEnded
    except _CodeEnded:
        raise
    except MemoryError:
        send({"k": "script", "m": 1})
    except AssertionError as exc:
        print_exc()
        send({"k": "script", "e": _explain_assertion(exc, secret.get("asserts") or b"")})
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

_WARM_CODE = (
    "from typing import List\n\n\n"
    "def warm(numbers: List[int], k: int) -> bool:\n"
    "    total = 0\n"
    "    for index, number in enumerate(numbers):\n"
    "        if number % k == 0 and index >= 0:\n"
    "            total += number\n"
    "    return total > 0 and len(str(total)) < 9\n"
)
_WARM_SCRIPTS = (
    "METADATA = {}\n\n\ndef check(candidate):\n    assert candidate([1, 2, 4], 2) == True\n"
    "    assert candidate([1, 3], 2) == False\n    assert not candidate([], 3)\n",
    "def check(candidate):\n    assert candidate([1, 2], 2) == False\n",
    "def check(candidate):\n    assert candidate(None, 2)\n",
)
# the parent's table of the asserts of each script (see _prepare._assert_table; there the
# operands are compiled)
_WARM_ASSERTS: tuple[tuple[AssertEntry, ...], ...] = (
    (),
    ((2, 2, "assert candidate([1, 2], 2) == False", "cmp", "(candidate([1, 2], 2))", "(False)"),),
    ((2, 2, "assert candidate(None, 2)", "value", "(candidate(None, 2))", ""),),
)
# the arguments of each call the check of each script makes, in order (a failed assert
# calls again to show its operands)
_WARM_CALLS: tuple[tuple[tuple[Any, ...], ...], ...] = (
    (([1, 2, 4], 2), ([1, 3], 2), ([], 3)),
    (([1, 2], 2), ([1, 2], 2)),
    ((None, 2),),
)
WARM_UP_ROUNDS = 12


def _warm_exchange(
    req: dict[str, Any], secret: dict[str, Any], calls: bytes, send: Any, print_exc: Any
) -> None:
    """Run a check of :func:`_warm_up` through both sides of the pipes, in this process.

    Trusted programs only. The code's side (:func:`_serve_calls`) runs first, on ``calls``
    written ahead into its calls pipe: the check's calls, as the check will make them. Then
    the check runs (:func:`_check_remotely`) and reads the answers left in the replies pipe;
    the calls it writes go to a pipe that nobody reads.
    """
    calls_r, calls_w = os.pipe()
    replies_r, replies_w = os.pipe()
    sink_r, sink_w = os.pipe()
    try:
        _write_all(calls_w, calls)
        os.close(calls_w)
        _serve_calls(req, calls_r, replies_w)
        os.close(replies_w)
        with contextlib.suppress(_CodeEnded):
            _check_remotely(secret, _PipeChannel(sink_w, replies_r), send, print_exc)
    finally:
        for fd in (calls_r, replies_r, sink_r):
            os.close(fd)


def _warm_up() -> None:
    """Run the child's harness in the server on fixed, trusted programs, a few times over.

    A forked child then finds what the harness touches already built in the pages it shares
    with the server (the interpreter's method cache filled, the harness's bytecode
    specialized, the strings interned), instead of writing it into copies of those pages:
    each write to a page shared with the server is a page fault and a page copy. Only the
    programs above run, in the server's own interpreter; a check's two sides talk through
    pipes of their own (:func:`_warm_exchange`), and nothing is written to any other pipe.
    """
    requests = []
    frames: list[bytes] = []  # the calls of each check (pack_call)
    for script, entries, arguments in zip(_WARM_SCRIPTS, _WARM_ASSERTS, _WARM_CALLS, strict=True):
        table = tuple(
            (*entry[:4], *(compile(s, SCRIPT_FILENAME, "eval") if s else s for s in entry[4:]))
            for entry in entries
        )
        candidate = {
            "code": compile(_WARM_CODE, "<candidate>", "exec", dont_inherit=True),
            "mode": "script",
            "entry_point": "warm",
            "cases": [],
            "timeout_s": 3.0,
            "max_value_bytes": MAX_VALUE_BYTES,
        }
        checker = {
            "nonce": "0" * 32,
            "script": compile(script, SCRIPT_FILENAME, "exec", dont_inherit=True),
            "asserts": marshal.dumps(table, 2),
        }
        requests.append((candidate, checker))
        frames.append(b"".join(pack_call("warm", args, {}) for args in arguments))
    cases = [{"numbers": [1, 2, 4], "k": 2}, {"numbers": [1.5, "a", (1,)], "k": 2}]
    requests.append(({**requests[0][0], "mode": "io", "cases": cases}, {"nonce": "0" * 32}))
    frames.append(b"")
    packed = [pack_request(*parts) for parts in requests]

    def send(*objs: dict[str, Any]) -> None:
        b"".join([pack_frame({**obj, "n": "0" * 32}) for obj in objs])

    def print_exc() -> None:
        format_exc(sys.exc_info()[1]).encode("utf-8", "backslashreplace")

    for _ in range(WARM_UP_ROUNDS):
        for data, calls in zip(packed, frames, strict=True):
            size = _HEADER.unpack_from(data, 1)[0]  # after the mode mark
            req = marshal.loads(data[1 + _HEADER.size : 1 + _HEADER.size + size])
            secret = marshal.loads(data[1 + 2 * _HEADER.size + size :])
            if req["mode"] == "io":
                _run_candidate(req, send, print_exc)
            else:
                _warm_exchange(req, secret, calls, send, print_exc)


_SECCOMP: list[Any] = [None]
_PRCTL: list[Any] = [None]
_SYSCALL: list[Any] = [None]
_LANDLOCK: list[Any] = [None]
MAX_RESULT_BYTES = 8 * 1024 * 1024
MAX_STDERR_BYTES = 8 * 1024


def _remove_entry(dir_fd: int, name: str) -> None:
    """Remove ``name`` under ``dir_fd`` and everything below it, without recursion.

    Any depth and any fan-out: the walk holds one descriptor at a time (it goes down by name
    and back up through ``..``) and, for each directory on the way down, the names of its
    subdirectories still to visit, so neither the Python stack nor the descriptors bound the
    depth. Every directory is entered at most once, so the walk ends, in time linear in the
    tree. Symbolic links are removed, never followed; a directory made unreadable or read-only
    gets back its owner's rights before it is entered; a mount point (a directory on another
    file system than ``dir_fd``) is left alone. What cannot be removed is skipped.
    """
    try:
        os.unlink(name, dir_fd=dir_fd)
        return
    except OSError:
        pass
    try:
        os.rmdir(name, dir_fd=dir_fd)
        return
    except OSError:
        pass
    try:
        device = os.fstat(dir_fd).st_dev
    except OSError:
        return
    fd = _enter(dir_fd, name, device)
    if fd < 0:
        return
    # for each directory above the current one: the name of the one entered from it, and the
    # names of its subdirectories still to visit
    above: list[tuple[str, list[str]]] = []
    try:
        pending = _remove_all_but_subdirs(fd)
        while True:
            if pending:
                entry = pending.pop()
                below = _enter(fd, entry, device)
                if below < 0:
                    continue
                os.close(fd)
                above.append((entry, pending))
                fd, pending = below, _remove_all_but_subdirs(below)
                continue
            if not above:
                break
            try:
                up = os.open("..", _DIR_FLAGS, dir_fd=fd)
            except OSError:  # the rest stays
                break
            os.close(fd)
            fd = up
            entry, pending = above.pop()
            with contextlib.suppress(OSError):
                os.rmdir(entry, dir_fd=fd)
    finally:
        os.close(fd)
    with contextlib.suppress(OSError):
        os.rmdir(name, dir_fd=dir_fd)


_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def _enter(dir_fd: int, name: str, device: int) -> int:
    """Open the directory ``name`` under ``dir_fd`` to empty it; return its fd, or -1.

    -1 for anything but a directory on the file system ``device``. Its mode becomes 0o700, so
    that its owner (the child's uid) can list and remove its entries, as root can; one that
    cannot be opened at all (mode 0) is made so first.
    """
    try:
        fd = os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
    except PermissionError:
        import stat

        try:
            st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
            if not stat.S_ISDIR(st.st_mode) or st.st_dev != device:
                return -1
            os.chmod(name, 0o700, dir_fd=dir_fd)  # a directory, not a link: lstat said so
            fd = os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
        except OSError:
            return -1
    except OSError:
        return -1
    try:
        if os.fstat(fd).st_dev != device:
            os.close(fd)
            return -1
        os.fchmod(fd, 0o700)
    except OSError:
        pass
    return fd


def _remove_all_but_subdirs(fd: int) -> list[str]:
    """Remove the entries of the directory ``fd``; return the subdirectories left (not empty).

    Files, links and the like are unlinked, empty subdirectories removed; a file that cannot
    be removed stays.
    """
    try:
        with os.scandir(fd) as entries:
            found = [(e.name, e.is_dir(follow_symlinks=False)) for e in entries]
    except OSError:
        return []
    left = []
    for entry, is_dir in found:
        try:
            if is_dir:
                os.rmdir(entry, dir_fd=fd)
            else:
                os.unlink(entry, dir_fd=fd)
        except OSError:
            if is_dir:
                left.append(entry)
    return left


def _clean_dir(path: str, keep: frozenset[str] = frozenset()) -> None:
    """Empty ``path``, leaving the entries named in ``keep`` (read-only bind mounts) alone.

    Never raises: what cannot be removed stays (the server then fails to prepare the next
    execution and the parent restarts it with a fresh temp dir).
    """
    try:
        dir_fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return
    try:
        try:
            names = os.listdir(dir_fd)
        except OSError:
            return
        for name in names:
            if name not in keep:
                _remove_entry(dir_fd, name)
    finally:
        os.close(dir_fd)


def remove_tree(path: str) -> None:
    """Remove the directory ``path`` and everything in it, as :func:`_remove_entry` does.

    Never raises.
    """
    parent, name = os.path.split(os.path.abspath(path))
    try:
        dir_fd = os.open(parent or "/", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return
    try:
        _remove_entry(dir_fd, name)
    finally:
        os.close(dir_fd)


def _children_of(pid: int) -> list[int]:
    """Return the pids whose parent is ``pid`` (zombies included)."""
    try:  # one read where the kernel lists them (the server has a single thread)
        with open(f"/proc/{pid}/task/{pid}/children", "rb") as fh:
            return [int(field) for field in fh.read().split()]
    except OSError:
        pass
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        fields = _stat_fields(name)
        if len(fields) > 1 and int(fields[1]) == pid:
            found.append(int(name))
    return found


def _stat_fields(pid: int | str) -> list[bytes]:
    """Return the fields of ``/proc/PID/stat`` after the name (state first); [] unreadable."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read()
    except OSError:
        return []
    return stat[stat.rfind(b")") + 2 :].split()


def _sweep(pgid: int, *, kill_group: bool = True, checker: int = 0) -> bool:
    """Kill the child's process group (unless done) and every remaining descendant; reap them.

    ``checker``: the pid of the server's checking process, a known child that is neither
    killed nor waited for. Return whether it was reaped here (it had ended).
    """
    import signal
    import time

    if kill_group:
        with contextlib.suppress(OSError):
            os.killpg(pgid, signal.SIGKILL)
    me = os.getpid()
    reaped_checker = False
    for _ in range(2000):
        try:
            pid, _status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return reaped_checker  # no children left: everything is reaped
        if pid:
            if pid == checker:
                reaped_checker, checker = True, 0
            continue
        # Children remain (escaped the group with setsid, or still dying): kill them by pid.
        others = [child for child in _children_of(me) if child != checker]
        if not others:
            return reaped_checker  # the checking process alone, alive
        for child in others:
            for target in (-child, child):
                with contextlib.suppress(OSError):
                    os.kill(target, signal.SIGKILL)
        time.sleep(0.001)
    return reaped_checker


class _Spare:
    """The server's side of a pre-forked child.

    Its pid, pidfd (or -1), the ends of its pipes that the server reads or writes, and the
    ends it hands to the checking process for a check script (``handed``: result and stderr
    pipes, calls and replies pipes).
    """

    __slots__ = ("err_r", "handed", "pid", "pidfd", "req_w", "res_r")

    def __init__(
        self, pid: int, pidfd: int, res_r: int, err_r: int, req_w: int, handed: list[int]
    ) -> None:
        self.pid, self.pidfd, self.res_r, self.err_r, self.req_w = pid, pidfd, res_r, err_r, req_w
        self.handed = handed

    def close_handed(self) -> None:
        """Close the server's copies of the ends handed to the checker (or not needed)."""
        for fd in self.handed:
            os.close(fd)
        self.handed = []


def _prefork(cfg: dict[str, Any]) -> _Spare:
    """Fork the next child, which prepares itself and waits for a request."""
    workdir = os.path.join(cfg["tmp_root"], "run")
    os.mkdir(workdir, 0o700)
    if cfg.get("drop_uid") is not None:
        os.chown(workdir, cfg["drop_uid"], cfg["drop_uid"])
    res_r, res_w = os.pipe()
    err_r, err_w = os.pipe()
    req_r, req_w = os.pipe()
    calls_r, calls_w = os.pipe()
    replies_r, replies_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            for fd in (res_r, err_r, req_w, calls_w, replies_r):
                os.close(fd)
            _child((res_w, err_w, req_r, calls_r, replies_w), workdir, cfg)
        finally:
            os._exit(CHILD_SETUP_FAILED_EXIT)
    for fd in (req_r, calls_r, replies_w):
        os.close(fd)
    with contextlib.suppress(OSError):
        os.setpgid(pid, pid)
    try:
        pidfd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        pidfd = -1
    return _Spare(pid, pidfd, res_r, err_r, req_w, [res_w, err_w, calls_w, replies_r])


def _exiting(pid: int) -> bool:
    """Return whether the process is exiting (``PF_EXITING`` in ``/proc/PID/stat``).

    The kernel sets the flag first thing in an exit, before the descriptors are released: a
    checker that a check killed is seen ending even while its socket still reads as open.
    """
    fields = _stat_fields(pid)
    return len(fields) > 6 and fields[6].isdigit() and bool(int(fields[6]) & 0x4)


class _Checker:
    """The server's side of its checking process (:func:`_checker_main`): pid and socket."""

    def __init__(self) -> None:
        self.pid = 0
        self.sock: Any = None
        self.runs = 0

    def ready(self, cfg: dict[str, Any], buffers: tuple[_Buffer, ...]) -> None:
        """Make sure a checking process runs and has not run :data:`CHECKER_RUNS` checks.

        The checker never writes to its socket: a socket that reads as closed is a checker
        that ended (or is ending: not reaped yet, a check that killed it just closed its
        pipes), which is stopped and replaced rather than handed the next check.
        """
        import select

        if self.pid:
            try:
                done, _status = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:
                done = self.pid
            if done:
                self.gone()
        if self.pid:
            ended = select.poll()
            ended.register(self.sock, select.POLLIN)
            if ended.poll(0) or _exiting(self.pid):
                self.stop()
        if self.pid and self.runs >= CHECKER_RUNS:
            self.stop()
        if not self.pid:
            self.start(cfg, buffers)

    def start(self, cfg: dict[str, Any], buffers: tuple[_Buffer, ...]) -> None:
        """Fork a checking process; in it, zero the buffers and never come back."""
        import socket

        server_end, checker_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the checking process
            try:
                for buffer in buffers:  # nothing of any execution in its memory
                    buffer.scrub()
                server_end.close()
                _checker_main(checker_end.detach(), cfg)
            finally:
                os._exit(CHILD_SETUP_FAILED_EXIT)
        checker_end.close()
        self.pid, self.sock, self.runs = pid, server_end, 0

    def send(self, secret: memoryview, fds: list[int]) -> bool:
        """Send the check's frame and descriptors; False (the checker stopped) if it failed."""
        import socket

        try:
            sent = socket.send_fds(self.sock, [secret], fds)
            if sent < len(secret):
                self.sock.sendall(secret[sent:])
        except OSError:
            self.stop()
            return False
        self.runs += 1
        return True

    def gone(self) -> None:
        """Forget a checking process that was reaped."""
        if self.sock is not None:
            self.sock.close()
        self.pid, self.sock = 0, None

    def stop(self) -> None:
        """Kill the checking process and reap it."""
        import signal

        if self.pid:
            with contextlib.suppress(OSError):
                os.kill(self.pid, signal.SIGKILL)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(self.pid, 0)
        self.gone()


def _discard(child: _Spare, cfg: dict[str, Any]) -> None:
    """Kill a pre-forked child that will get no request, and clean up after it."""
    child.close_handed()
    for fd in (child.req_w, child.res_r, child.err_r) + (
        (child.pidfd,) if child.pidfd >= 0 else ()
    ):
        with contextlib.suppress(OSError):
            os.close(fd)
    _sweep(child.pid)
    _clean_dir(cfg["tmp_root"], cfg["keep"])


class _Buffer:
    """Bytes of one execution that the server holds, zeroed by :meth:`scrub` before a fork.

    The next child is a copy of the server's memory: it must find nothing of an earlier
    execution there. So the request and what the child wrote are read straight into these
    buffers (``os.readv``, no intermediate bytes object), never copied elsewhere, and every
    byte is zeroed before the next child is forked; a buffer that grows is copied and the
    old one zeroed before it is freed.
    """

    def __init__(self, size: int = 0) -> None:
        self.data = bytearray(size)
        self.length = 0

    def reserve(self, size: int) -> None:
        """Make room for ``size`` bytes in all."""
        if size <= len(self.data):
            return
        grown = bytearray(max(size, 2 * len(self.data), 1 << 16))
        grown[: self.length] = memoryview(self.data)[: self.length]
        self.data[:] = bytes(len(self.data))
        self.data = grown

    def read_from(self, fd: int, size: int) -> int:
        """Read at most ``size`` bytes of ``fd`` onto the end; return how many (0 at its end)."""
        self.reserve(self.length + size)
        got = os.readv(fd, [memoryview(self.data)[self.length : self.length + size]])
        self.length += got
        return got

    def view(self) -> memoryview:
        return memoryview(self.data)[: self.length]

    def scrub(self) -> None:
        """Zero what the buffer held."""
        self.data[: self.length] = bytes(self.length)
        self.length = 0


class _Reports:
    """What a child wrote to its result and stderr pipes, each cut to its size limit."""

    def __init__(self, res_r: int, res: _Buffer, err: _Buffer, scratch: _Buffer) -> None:
        self.res_r = res_r
        self.res, self.err, self.scratch = res, err, scratch
        self.res_overflow = False
        self.err_total = 0

    def pump(self, fd: int) -> int:
        """Read once from ``fd`` within the limit of its pipe; return the bytes read (0: end)."""
        if fd == self.res_r and self.res.length < MAX_RESULT_BYTES:
            return self.res.read_from(fd, min(1 << 16, MAX_RESULT_BYTES - self.res.length))
        scratch = self.scratch  # past the limit, or stderr: read, keep the first bytes
        scratch.length = 0
        got = scratch.read_from(fd, 1 << 16)
        if fd == self.res_r:
            self.res_overflow = self.res_overflow or got > 0
        else:
            self.err_total += got
            keep = min(got, MAX_STDERR_BYTES - self.err.length)
            if keep > 0:
                self.err.reserve(self.err.length + keep)
                self.err.data[self.err.length : self.err.length + keep] = scratch.view()[:keep]
                self.err.length += keep
        return got


def _drain(open_fds: list[int], reports: _Reports) -> None:
    """Read what an exited child left in its pipes, without waiting for more."""
    for fd in list(open_fds):
        os.set_blocking(fd, False)
        try:
            while reports.pump(fd):
                pass
        except BlockingIOError:
            pass


def _collect(
    child: _Spare, open_fds: list[int], reports: _Reports, deadline: float, script: bool
) -> tuple[int, bool, bool, int]:
    """Read the execution's pipes until it ends or ``deadline`` passes.

    It ends when the child exited and, for a check script, the checking process closed the
    result pipe. Return ``(pid, exited, timed_out, status)``: ``pid`` is negated once it has
    been reaped here (no pidfd), ``status`` is then its wait status. Pipes that reach their
    end are closed and leave ``open_fds``.
    """
    import select
    import time

    pid, pidfd, res_r = child.pid, child.pidfd, child.res_r
    exited = False
    status = 0
    while True:
        if exited and not (script and res_r in open_fds):
            _drain(open_fds, reports)  # what was left in the pipes
            return pid, exited, False, status
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return pid, exited, True, status
        watch = list(open_fds)
        if pidfd >= 0 and not exited:
            watch.append(pidfd)
        elif not exited:
            remaining = min(remaining, 0.005)
        ready = select.select(watch, [], [], remaining)[0] if watch else []
        for fd in ready:
            if fd == pidfd:
                exited = True
                continue
            if not reports.pump(fd):
                open_fds.remove(fd)
                os.close(fd)
        if pidfd < 0 and not exited:
            done_pid, status = os.waitpid(pid, os.WNOHANG)
            exited = done_pid != 0
            if exited:
                pid = -pid  # already reaped


def _end_child(pid: int, exited: bool, status: int, checker: _Checker) -> int:
    """Kill the child's group, reap it unless reaped already (``pid`` < 0); return its status."""
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
    # then descendants that escaped the group (reaped already without a pidfd: only those)
    if _sweep(abs(pid), kill_group=False, checker=checker.pid):
        checker.gone()
    return status


def _clean_after_child(tmp_root: str, cfg: dict[str, Any]) -> None:
    """Remove what the child left in its temp root (and in a private ``/dev/shm``)."""
    with contextlib.suppress(OSError):
        os.rmdir(os.path.join(tmp_root, "run"))  # the usual case: the child left nothing
    if set(os.listdir(tmp_root)) - cfg["keep"]:
        _clean_dir(tmp_root, cfg["keep"])
    if cfg.get("clean_shm") and os.listdir("/dev/shm"):
        _clean_dir("/dev/shm")


def _run_one(
    request: _Buffer,
    timeout_s: float,
    cfg: dict[str, Any],
    child: _Spare,
    reports: _Reports,
    checker: _Checker,
    buffers: tuple[_Buffer, ...],
) -> dict[str, Any]:
    """Hand the request to the waiting ``child``; collect the reports until the end or timeout.

    A check script's second frame goes to the checking process instead. Return the answer's
    header; what was written is in ``reports``. The Python twin of ``run_one`` in
    ``_native.c``.
    """
    import time

    reports.res_r = child.res_r
    start = time.monotonic()
    data = request.view()
    script = len(data) > 1 + _HEADER.size and data[0] == ord("s")
    if script:
        checker.ready(cfg, buffers)
        split = min(1 + _HEADER.size + _HEADER.unpack_from(data, 1)[0], len(data))
        with contextlib.suppress(OSError):  # a child that died early is reported below
            _write_all(child.req_w, data[:split])
        # the checker gets the check's frame and the pipes; the server keeps no copy of
        # them, or the checker's end of the result pipe would never read as closed
        checker.send(data[split:], child.handed)
        child.close_handed()
    else:
        child.close_handed()
        with contextlib.suppress(OSError):
            _write_all(child.req_w, data)
    os.close(child.req_w)
    open_fds = [child.res_r, child.err_r]
    pid, exited, timed_out, status = _collect(child, open_fds, reports, start + timeout_s, script)
    elapsed_ms = (time.monotonic() - start) * 1000.0
    if script and child.res_r in open_fds:  # the check ran past the deadline by itself
        checker.stop()
    status = _end_child(pid, exited, status, checker)
    if child.pidfd >= 0:
        os.close(child.pidfd)
    for fd in open_fds:
        os.close(fd)
    _clean_after_child(cfg["tmp_root"], cfg)
    return {
        "exit_code": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
        "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
        "timed_out": timed_out,
        "elapsed_ms": elapsed_ms,
        "res_overflow": reports.res_overflow,
        "err_total": reports.err_total,
    }


# What a root server keeps: CHOWN (the child's work dir), DAC_OVERRIDE and FOWNER (remove
# what the child left), KILL (its processes), SETGID and SETUID (the child's uid change).
_SERVER_CAPS = (0, 1, 3, 5, 6, 7)


def _drop_server_capabilities(ctypes: Any, libc: Any) -> None:
    """Drop, as root, every capability the server does not need.

    Shrink the bounding set to :data:`_SERVER_CAPS` (where CAP_SETPCAP allows), clear the ambient
    and inheritable sets, keep only those capabilities; the children lose the rest with their uid
    change.
    """
    for cap in range(64):
        if cap not in _SERVER_CAPS and cap != 8:
            libc.prctl(24, cap, 0, 0, 0)  # PR_CAPBSET_DROP (fails harmlessly past the last)
    libc.prctl(24, 8, 0, 0, 0)  # and CAP_SETPCAP itself
    libc.prctl(47, 4, 0, 0, 0)  # PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL
    header = (ctypes.c_uint32 * 2)(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this process
    data = (ctypes.c_uint32 * 6)()  # 2 x (effective, permitted, inheritable)
    if libc.capget(header, data) != 0:
        raise SystemExit("the sandbox server could not read its capabilities")
    keep = sum(1 << cap for cap in _SERVER_CAPS)
    data[0] &= keep
    data[1] &= keep
    data[2] = data[3] = data[4] = data[5] = 0
    if libc.capset(header, data) != 0:
        raise SystemExit("the sandbox server could not drop its capabilities")


class _NamedOnly:
    """The finder of one added ``sys.path`` directory that finds only the named modules.

    Under process isolation the directory (a site-packages) still lists every installed
    package, whose files Landlock keeps unreadable; without this, importing one of them
    would fail with PermissionError instead of ModuleNotFoundError.
    """

    def __init__(self, finder: Any, names: frozenset[str]) -> None:
        self._finder = finder
        self._names = names

    def find_spec(self, fullname: str, target: Any = None) -> Any:
        if fullname.partition(".")[0] not in self._names:
            return None
        return self._finder.find_spec(fullname, target)

    def invalidate_caches(self) -> None:
        self._finder.invalidate_caches()


def _add_import_paths(entries: list[str], modules: list[str]) -> None:
    """Append ``entries`` to ``sys.path``, each finding only the top-level ``modules``."""
    names = frozenset(modules)
    for entry in entries:
        if entry in sys.path:
            continue
        sys.path.append(entry)
        for hook in sys.path_hooks:
            try:
                finder = hook(entry)
            except ImportError:
                continue
            sys.path_importer_cache[entry] = _NamedOnly(finder, names)
            break


def serve(cfg: dict[str, Any]) -> None:
    """Serve executions over fds 0/1 until the parent closes the control pipe."""
    import ctypes
    import signal

    # The parent starts the server with LD_BIND_NOW=1: the dynamic linker binds every symbol
    # of the interpreter's libraries (and of those loaded later) at load time, in the
    # server, rather than at each first call, which in every child would be a symbol look-up
    # and a write to a page shared with the server. The children get the environment without it.
    os.environ.pop("LD_BIND_NOW", None)
    ctl_in = os.dup(0)
    ctl_out = os.dup(1)
    native_size = _read_exact(ctl_in, 4)  # the compiled server loop (see _native.c), if any
    native_bytes = _read_exact(ctl_in, int.from_bytes(native_size or b"", "big")) or b""
    # nothing inherited but the control pipe reaches the children
    keep_fds = sorted((ctl_in, ctl_out))
    os.closerange(3, keep_fds[0])
    os.closerange(keep_fds[0] + 1, keep_fds[1])
    os.closerange(keep_fds[1] + 1, 0x7FFFFFFF)
    # /dev/null on 0 to 6 where the control pipe is not: every descriptor opened later is
    # above 6, so a child can move its pipes onto 2 to 6 in any order (see _confine)
    devnull = os.open("/dev/null", os.O_RDWR)
    for fd in range(7):
        if fd not in keep_fds and fd != devnull:
            os.dup2(devnull, fd, inheritable=fd < 3)
    if devnull > 6:
        os.close(devnull)
    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:
        libc = None
    if libc is None:
        raise SystemExit("the sandbox server needs libc (prctl) to protect itself")
    # Not dumpable: /proc/<server>/mem, /fd, /environ are closed to its children even with
    # the same uid; no new privileges for it and everything it forks.
    if libc.prctl(4, 0, 0, 0, 0) != 0 or libc.prctl(38, 1, 0, 0, 0) != 0:
        raise SystemExit("the sandbox server could not make itself non-dumpable")
    if os.geteuid() == 0:
        _drop_server_capabilities(ctypes, libc)
    _PRCTL[0] = libc.prctl
    _SYSCALL[0] = libc.syscall
    _SECCOMP[0] = _prepare_seccomp(libc) if cfg.get("seccomp") else None
    _LANDLOCK[0] = _prepare_landlock(ctypes, libc, cfg.get("landlock"))
    libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG: die with the parent
    subreaper = libc.prctl(36, 1, 0, 0, 0) == 0  # PR_SET_CHILD_SUBREAPER
    _add_import_paths(cfg.get("sys_path", []), cfg.get("modules", []))
    # Warm the modules candidate code usually imports, so that each fork gets them for free
    # (the child itself needs neither ast nor traceback: see format_exc and _explain_assertion).
    # Not hashlib nor shutil: with the libraries they load (libcrypto, zlib, bz2, lzma) they
    # make up a third of the server's memory mappings and a sixth of its private pages, which
    # every fork copies and every exit tears down (about 0.07 ms of CPU per execution); a
    # candidate that imports one pays 2 to 3 ms, a net loss only where more than one
    # execution in thirty does (one HumanEval task in 164 imports hashlib).
    import builtins  # noqa: F401
    import collections  # noqa: F401
    import functools  # noqa: F401
    import heapq  # noqa: F401
    import itertools  # noqa: F401
    import re  # noqa: F401
    import resource  # noqa: F401
    import select  # noqa: F401
    import string  # noqa: F401
    import time  # noqa: F401
    import typing  # noqa: F401

    cfg["seccomp"] = _SECCOMP[0] is not None
    _server_limits()
    # What the temp root holds before any candidate ran: under bwrap, the mount points of
    # read-only binds (a virtualenv living under /tmp). Cleaning must skip them: they cannot
    # be deleted, and walking a whole virtualenv after every execution would be slow.
    cfg["keep"] = frozenset(os.listdir(cfg["tmp_root"]))
    _warm_up()
    import gc

    gc.collect()
    # Give the free pages of the C heap back (about 2 MiB of the server's 9 MiB after start-up):
    # every page the server keeps is a page-table entry that each fork copies and each child's
    # exit tears down.
    trim = getattr(libc, "malloc_trim", None)  # glibc; absent from musl
    if trim is not None:
        trim(0)
    gc.freeze()  # the children's collector leaves the server's objects (and their pages) alone
    native = _load_native(ctypes, native_bytes)
    ready = {
        "ready": True,
        "seccomp": cfg["seccomp"],
        "subreaper": subreaper,
        "native": native is not None,
        "landlock": _LANDLOCK[0] is not None,
        "pid": os.getpid(),
    }
    _write_all(ctl_out, pack_frame(ready))
    if native is not None:
        _serve_native(native, ctypes, cfg, ctl_in, ctl_out)
        return
    buffers = request, res, err, scratch = _Buffer(), _Buffer(), _Buffer(), _Buffer()
    checker = _Checker()
    checker.start(cfg, buffers)
    child = _prefork(cfg)
    while True:
        head = _read_request(ctl_in, request)
        if head is None:
            checker.stop()
            _discard(child, cfg)
            return
        reports = _Reports(-1, res, err, scratch)
        header = _run_one(request, head[0], cfg, child, reports, checker, buffers)
        header["seq"] = head[1]
        header["res_len"] = res.length
        header["err_len"] = err.length
        _write_all(ctl_out, pack_frame(header))
        _write_all(ctl_out, res.view())
        _write_all(ctl_out, err.view())
        for buffer in buffers:  # nothing of this execution reaches the next child
            buffer.scrub()
        child = _prefork(cfg)  # while the parent judges, the next child gets ready


REQUEST_HEADER = struct.Struct(">IdQ")  # payload length, timeout in seconds, sequence number


def _read_request(fd: int, payload: _Buffer) -> tuple[float, int] | None:
    """Read one request: the header, then the payload (the child's request frame) into ``payload``.

    Return (timeout in seconds, sequence number), or None at end of file.
    """
    head = _read_exact(fd, REQUEST_HEADER.size)
    if head is None:
        return None
    size, timeout_s, seq = REQUEST_HEADER.unpack(head)
    payload.reserve(size)
    while payload.length < size:
        if not payload.read_from(fd, min(size - payload.length, 1 << 20)):
            return None
    return timeout_s, seq


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
        confine_fn = library.lift_confine_children
    except (AttributeError, OSError):
        return None
    int_ = ctypes.c_int
    serve_fn.argtypes = [int_, int_, ctypes.c_char_p, ctypes.c_char_p, int_, int_, int_]
    serve_fn.argtypes.append(ctypes.POINTER(int_))
    serve_fn.restype = int_
    confine_fn.argtypes = [int_, ctypes.c_longlong, int_]
    confine_fn.restype = int_
    return serve_fn, confine_fn


def _confine_natively(confine_fn: Any, cfg: dict[str, Any]) -> bool:
    """Hand the child's confinement (:func:`_confine`) to the compiled loop; False if refused."""
    landlock = -1 if _LANDLOCK[0] is None else int(_LANDLOCK[0])
    drop = -1 if cfg.get("drop_uid") is None else int(cfg["drop_uid"])
    memory = int(cfg["memory_mb"]) * 1024 * 1024
    return bool(confine_fn(landlock, memory, drop) == 0)


def _serve_native(native: Any, ctypes: Any, cfg: dict[str, Any], ctl_in: int, ctl_out: int) -> None:
    """Run the compiled loop; come back to Python in each child, and for rare cleaning."""
    serve_fn, confine_fn = native
    # the compiled loop confines each child right after the fork (no Python objects touched)
    confined = _confine_natively(confine_fn, cfg)
    tmp_root = cfg["tmp_root"]
    workdir = os.path.join(tmp_root, "run")
    keep = b"".join(os.fsencode(name) + b"\0" for name in sorted(cfg["keep"])) + b"\0"
    drop = -1 if cfg.get("drop_uid") is None else int(cfg["drop_uid"])
    clean_shm = 1 if cfg.get("clean_shm") else 0
    root = os.fsencode(tmp_root)
    fds = (ctypes.c_int * 8)()
    resume = 0
    while True:
        rc = serve_fn(ctl_in, ctl_out, root, keep, drop, clean_shm, resume, fds)
        if rc == 0:  # pragma: no cover - in the child forked by the compiled loop
            try:
                _child((fds[0], fds[1], fds[2], fds[3], fds[4]), workdir, cfg, confined=confined)
            finally:
                os._exit(CHILD_SETUP_FAILED_EXIT)
        if rc == 2:  # pragma: no cover - in the checking process forked by the compiled loop
            try:
                _checker_main(fds[0], cfg)
            finally:
                os._exit(CHILD_SETUP_FAILED_EXIT)
        if rc == 1:  # leftovers: escaped processes, files in the temp root or /dev/shm
            reaped_checker = _sweep(0, kill_group=False, checker=fds[7])
            _clean_dir(tmp_root, cfg["keep"])
            if clean_shm:
                _clean_dir("/dev/shm")
            resume = 2 if reaped_checker else 1  # 2: the checking process was reaped here
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
    f"exec(compile(s, {HARNESS_FILENAME!r}, 'exec'), {{'__name__': '__main__'}})\n"
)

if __name__ == "__main__":
    serve(json.loads(sys.argv[1]))
