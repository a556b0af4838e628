"""Crash-safe file output and JSON encoding shared by reports, runs and the CLI.

Nothing a run has written may be lost or corrupted when it is interrupted, so every file is
written to a temporary sibling, flushed, fsynced and then renamed over the target (an atomic
operation on POSIX file systems).
"""

from __future__ import annotations

import contextlib
import dataclasses
import enum
import errno
import gzip
import json
import math
import os
import shutil
import signal
import sys
import tempfile
import threading
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from lift_metrics.errors import InputValueError, JSONTextError, TOMLTextError


def existing_file(path: str | os.PathLike[str], what: str) -> Path:
    """Return ``path`` as a Path when it names a file.

    Raises
    ------
    IsADirectoryError
        When it names a directory (the message says so, with ``what`` and the path).
    FileNotFoundError
        When nothing is there: ``"{what} not found: {path}"``.
    """
    file = Path(path)
    if file.is_dir():
        raise IsADirectoryError(errno.EISDIR, f"{what} is a directory, not a file", str(file))
    if not file.is_file():
        raise FileNotFoundError(f"{what} not found: {file}")
    return file


def read_text_file(
    path: str | os.PathLike[str], what: str, *, error: type[InputValueError] = InputValueError
) -> str:
    """Read a UTF-8 text file (gzip-compressed when its name ends in ``.gz``).

    Errors name the file (and for bad bytes, the line); they are ``error`` (a subclass of
    :class:`~lift_metrics.errors.InputValueError` that names the kind of file).

    Raises
    ------
    IsADirectoryError, FileNotFoundError
        As :func:`existing_file`.
    InputValueError
        When the file is not UTF-8 text: ``"{path}: line N is not UTF-8 text (...)"``, or a
        ``.gz`` file that does not decompress: ``"{path}: not a readable gzip file (...)"``.
    """
    file = existing_file(path, what)
    data = file.read_bytes()
    if file.suffix == ".gz":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as exc:  # BadGzipFile is an OSError
            raise error(f"{file}: not a readable gzip file ({exc})") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise error(
            f"{file}: line {line} is not UTF-8 text (byte {exc.start}: {exc.reason})"
        ) from None


class _NotJSONError(ValueError):
    """Raised from inside the decoder for a value JSON does not have."""


def _no_constant(name: str) -> Any:
    raise _NotJSONError(f"{name} is not a JSON value")


def _finite_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise _NotJSONError(f"the number {text[:40]} is too large for a float")
    return value


class _ParserLimits:
    """Raise ``error`` with the reason when a parser in the block stops at a limit of Python's.

    The limits: an integer of more than ``sys.get_int_max_str_digits()`` digits (``int()``
    raises ``ValueError: Exceeds the limit (4300 digits) for integer string ...``) and nesting
    deeper than the recursion limit. Any other exception passes through unchanged.
    """

    def __init__(self, error: type[InputValueError]) -> None:
        self.error = error

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: object, exc: BaseException | None, traceback: object) -> None:
        if isinstance(exc, RecursionError):
            raise self.error("nested too deeply to read") from None
        if isinstance(exc, ValueError) and not isinstance(exc, self.error) and "digits" in str(exc):
            limit = sys.get_int_max_str_digits()
            raise self.error(f"an integer has more than {limit} digits") from None


def parse_json(text: str | bytes) -> Any:
    """Parse untrusted JSON text; every problem is a :class:`JSONTextError`.

    Stricter than :func:`json.loads`: ``NaN``, ``Infinity`` and ``-Infinity`` (Python's
    extensions, not JSON) and numbers beyond a float's range (``1e400``) are refused rather
    than read as ``nan``/``inf``; an integer of more than 4300 digits (Python's limit on
    converting text to int) and nesting too deep to read are refused with a reason instead
    of a ``ValueError``/``RecursionError`` from deep inside.

    Examples
    --------
    >>> parse_json('{"expected": [1, 2.5]}')
    {'expected': [1, 2.5]}
    >>> parse_json('{"expected": NaN}')
    Traceback (most recent call last):
    ...
    lift_metrics.errors.JSONTextError: NaN is not a JSON value
    """
    with _ParserLimits(JSONTextError):
        try:
            return json.loads(text, parse_constant=_no_constant, parse_float=_finite_float)
        except json.JSONDecodeError as exc:
            raise JSONTextError(f"{exc.msg}: line {exc.lineno} column {exc.colno}") from None
        except _NotJSONError as exc:
            raise JSONTextError(str(exc)) from None


def parse_toml(text: str) -> dict[str, Any]:
    """Parse untrusted TOML text; every problem is a :class:`TOMLTextError`.

    :func:`tomllib.loads`, with an integer of more than 4300 digits (Python's limit on
    converting text to int) refused with that reason instead of a bare ``ValueError``.

    Examples
    --------
    >>> parse_toml("seed = 3")
    {'seed': 3}
    >>> parse_toml("seed = " + "1" * 5000)
    Traceback (most recent call last):
    ...
    lift_metrics.errors.TOMLTextError: an integer has more than 4300 digits
    """
    import tomllib

    with _ParserLimits(TOMLTextError):
        try:
            return tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise TOMLTextError(str(exc)) from None


def jsonl_values(
    lines: Iterable[str], bad_line: Callable[[int, str], Exception]
) -> Iterator[tuple[int, Any]]:
    """Yield ``(line number, value)`` for each non-blank line of a JSONL text.

    ``lines`` are the file's lines (split at newlines only: a JSON string may hold other line
    separators, such as U+2028); numbers count from 1. Each line is read by
    :func:`parse_json`. A line that is not JSON raises ``bad_line(number, reason)``
    (``reason``: why, without the place), so each file kind keeps its own error type and
    wording.

    Examples
    --------
    >>> list(jsonl_values(['{"a": 1}', "", "[2]"], lambda n, why: ValueError(f"{n}: {why}")))
    [(1, {'a': 1}), (3, [2])]
    """
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            value = parse_json(line)
        except JSONTextError as exc:
            raise bad_line(number, str(exc)) from None
        yield number, value


def read_jsonl(
    path: str | os.PathLike[str],
    what: str,
    bad_line: Callable[[int, str], Exception],
    *,
    error: type[InputValueError] = InputValueError,
) -> Iterator[tuple[int, Any]]:
    """Yield ``(line number, value)`` for each non-blank line of a JSON Lines file.

    The one reader of every JSONL input: the file is read by :func:`read_text_file` (UTF-8,
    ``.gz`` decompressed; its errors are ``error``) and its lines by :func:`jsonl_values`
    (a line that is not JSON raises ``bad_line(number, reason)``).

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     file = Path(tmp, "rows.jsonl")
    ...     _ = file.write_text('{"id": 1}' + chr(10) * 2 + '{"id": 2}' + chr(10))
    ...     list(read_jsonl(file, "rows file", lambda n, why: ValueError(f"{n}: {why}")))
    [(1, {'id': 1}), (3, {'id': 2})]
    """
    text = read_text_file(path, what, error=error)
    yield from jsonl_values(text.split("\n"), bad_line)


def _umask() -> int:
    """Return the process's file-creation mask, read without changing it (Linux: /proc/self/status).

    ``os.umask`` can only be read by setting it, which races with other threads creating
    files; where /proc does not say, the common default 022 is assumed.
    """
    try:
        with open("/proc/self/status", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    return 0o022


def atomic_write_with(
    path: str | os.PathLike[str], write: Callable[[Path], object], *, suffix: str = ".tmp"
) -> Path:
    """Have ``write`` write a temporary sibling of ``path``, then make it ``path``; return it.

    The temporary file (named ``.<name>.<random><suffix>``, so a writer that picks its format
    by the file's ending sees ``suffix``) is fsynced and renamed over ``path`` once ``write``
    returns, and the rename itself made durable: an interrupted write never leaves a
    half-written ``path``. On any error the temporary file is removed. The file gets the
    permissions any new file of the user's gets (``0666`` less the umask), like one written by
    ``open(path, "w")``, not the ``0600`` of a temporary file.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    prefix = f".{target.name}." if suffix == ".tmp" else f".{target.stem}."
    fd, tmp_name = tempfile.mkstemp(prefix=prefix, suffix=suffix, dir=target.parent)
    try:
        try:
            os.fchmod(fd, 0o666 & ~_umask())
        finally:
            os.close(fd)
        write(Path(tmp_name))
        with open(tmp_name, "rb") as handle:
            os.fsync(handle.fileno())
        os.replace(tmp_name, target)
    except OSError as exc:
        Path(tmp_name).unlink(missing_ok=True)
        raise _naming(exc, target) from exc
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise
    try:  # make the rename itself durable
        dir_fd = os.open(target.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
    except OSError:  # pragma: no cover - some file systems refuse fsync on directories
        pass
    return target


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically (:func:`atomic_write_with`); return the path."""
    return atomic_write_with(path, lambda tmp: tmp.write_bytes(data))


def atomic_write_leftovers(directory: str | os.PathLike[str], pattern: str) -> list[Path]:
    """Return the temporary files :func:`atomic_write_with` left for names matching ``pattern``.

    A killed process leaves ``.<name>.<random>.tmp`` or ``.<stem>.<random><suffix>`` unrenamed.
    """
    target, name = Path(directory), Path(pattern)
    found = [*target.glob(f".{pattern}.*.tmp"), *target.glob(f".{name.stem}.*{name.suffix}")]
    return [path for path in dict.fromkeys(found) if path.is_file() or path.is_symlink()]


def remove_outputs(directory: str | os.PathLike[str], patterns: Iterable[str]) -> None:
    """Delete the entries of ``directory`` matching ``patterns`` (glob) and their leftovers.

    Folders go whole; the leftovers are :func:`atomic_write_leftovers`.
    """
    target = Path(directory)
    if not target.is_dir():
        return
    for pattern in patterns:
        for path in [*target.glob(pattern), *atomic_write_leftovers(target, pattern)]:
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            elif os.path.lexists(path):
                path.unlink()


def check_output_dir(path: str | os.PathLike[str], *, option: str) -> Path:
    """Check, before any work, that ``path`` can hold a command's output; return it.

    ``path`` must be a directory or not exist yet, with nothing but directories on the way to
    it, and the nearest existing one must let a file be created (a probe file is created and
    removed; nothing else is written and no directory is created).

    Parameters
    ----------
    path : path-like
        The output directory.
    option : str
        How the user gave it (``"--out"``, ``"output_dir"``), for the message.

    Raises
    ------
    ValueError
        One line naming ``option`` and the path: a file is in the way, or the directory
        cannot be written (read-only file system, no permission, no space).

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     _ = Path(tmp, "report").write_text("a file")
    ...     check_output_dir(Path(tmp, "report", "out"), option="--out")
    Traceback (most recent call last):
    ...
    lift_metrics.errors.InputValueError: --out .../report/out: not a directory (... is a file)
    """
    target = Path(path)
    probe_dir = target
    while not probe_dir.exists():
        if probe_dir.parent == probe_dir:
            break
        probe_dir = probe_dir.parent
    if probe_dir.exists() and not probe_dir.is_dir():
        where = "" if probe_dir == target else f" ({probe_dir} is a file)"
        raise InputValueError(f"{option} {target}: not a directory{where}")
    try:
        fd, probe = tempfile.mkstemp(prefix=".lift-metrics-probe.", dir=probe_dir)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise InputValueError(
            f"{option} {target}: cannot write in {probe_dir} ({reason})"
        ) from None
    return target


#: The file in an output folder that lists what the last :func:`staged_output` put there.
OUTPUT_MANIFEST = ".lift-metrics-output.json"


@contextlib.contextmanager
def staged_output(directory: str | os.PathLike[str], *, last: str | None = None) -> Iterator[Path]:
    """All of a command's output files, or none of them.

    Yields a hidden staging folder inside ``directory``; write every output there. When the
    block ends without an error the stage is committed: renamed at once to a hidden
    ``.committed.*`` folder (one atomic rename: from here on the output counts as written),
    then its entries are moved into ``directory``, ``last`` (the main result file, whose
    presence says the output is whole) after the others. The files an earlier commit put in
    ``directory`` that this one does not write are removed (a manifest,
    :data:`OUTPUT_MANIFEST`, lists them), so no result of an earlier run is left beside the
    new ones. Ctrl-C (SIGINT, also SIGTERM and SIGHUP) is held back while the entries move and
    delivered once they are all in place. On an error in the block (a full disk, an interrupt)
    the stage is removed, so ``directory`` holds no partial output. A process killed
    outright leaves a staging folder, removed on the next use, or a committed one, whose
    move the next use finishes.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     with staged_output(tmp) as stage:
    ...         _ = atomic_write_text(stage / "report.md", "# done")
    ...     sorted(p.name for p in Path(tmp).iterdir())
    ['.lift-metrics-output.json', 'report.md']
    """
    target = Path(directory)
    created = not target.exists()
    target.mkdir(parents=True, exist_ok=True)
    _finish_leftovers(target)
    stage = Path(tempfile.mkdtemp(prefix=".staging.", dir=target))
    try:
        yield stage
        names = sorted(entry.name for entry in stage.iterdir())
        if last in names:  # moved after the others
            names = [name for name in names if name != last] + [last]
        atomic_write_json(stage / OUTPUT_MANIFEST, names)
        committed = Path(tempfile.mkdtemp(prefix=".committed.", dir=target))
        os.replace(stage, committed)  # the commit: one rename
    except OSError as exc:
        _remove_stage(stage, target, created)
        raise _naming(exc, target, stage) from exc
    except BaseException:
        _remove_stage(stage, target, created)
        raise
    with _signals_held():
        try:
            _finish_commit(committed, target)
        except OSError as exc:
            raise _naming(exc, target, committed) from exc


def _finish_leftovers(target: Path) -> None:
    """Remove what a killed process staged; finish moving what it had committed."""
    for leftover in target.glob(".staging.*"):
        if leftover.is_dir() and not leftover.is_symlink():
            shutil.rmtree(leftover, ignore_errors=True)
    committed = [p for p in target.glob(".committed.*") if p.is_dir() and not p.is_symlink()]
    for leftover in sorted(committed, key=lambda p: p.stat().st_mtime):
        with _signals_held():
            _finish_commit(leftover, target)


def _finish_commit(committed: Path, target: Path) -> None:
    """Move a committed stage's entries into ``target`` in the manifest's order.

    Idempotent, so that a move cut short (SIGKILL) is finished by running it again: the
    files of the earlier manifest that the new one lacks are removed, each entry still in
    ``committed`` is moved, the manifest last.
    """
    manifest = committed / OUTPUT_MANIFEST
    try:
        names = json.loads(manifest.read_text(encoding="utf-8"))
    except (OSError, ValueError):  # a commit cut short before its manifest: nothing to do
        names = None
    if not isinstance(names, list) or not all(isinstance(name, str) for name in names):
        shutil.rmtree(committed, ignore_errors=True)
        return
    for name in _earlier_outputs(target):
        stale = target / name
        if name not in names and os.path.lexists(stale):
            if stale.is_dir() and not stale.is_symlink():
                shutil.rmtree(stale)
            else:
                stale.unlink()
    for name in [*names, OUTPUT_MANIFEST]:
        entry = committed / name
        if not os.path.lexists(entry):  # moved before the process was killed
            continue
        destination = target / name
        if entry.is_dir() and destination.is_dir() and not destination.is_symlink():
            shutil.rmtree(destination)
        os.replace(entry, destination)
    shutil.rmtree(committed, ignore_errors=True)


def _earlier_outputs(target: Path) -> list[str]:
    """Return the names the manifest in ``target`` lists (plain names; none without one)."""
    try:
        names = json.loads((target / OUTPUT_MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    if not isinstance(names, list):
        return []
    return [n for n in names if isinstance(n, str) and n not in ("", ".", "..") and "/" not in n]


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """Hold back SIGINT, SIGTERM and SIGHUP for the block, then deliver them as they came.

    Python runs signal handlers on the main thread, whichever thread the signal reached; so
    on the main thread a recording handler takes each signal and the block's end hands it to
    the handler it replaced (or, for the default action, raises it again). Elsewhere the
    signals are blocked for this thread, and the main thread handles them as usual.
    """
    held = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
    if threading.current_thread() is not threading.main_thread():
        previous_mask = signal.pthread_sigmask(signal.SIG_BLOCK, held)
        try:
            yield
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, previous_mask)
        return
    arrived: list[tuple[int, Any]] = []
    previous: dict[int, Any] = {number: signal.getsignal(number) for number in held}
    for number in held:
        signal.signal(number, lambda signum, frame: arrived.append((signum, frame)))
    try:
        yield
    finally:
        for signal_number, handler in previous.items():
            signal.signal(signal_number, handler)
        for signum, frame in arrived[:1]:  # the first is enough: it ends the command
            handler = previous[signum]
            if callable(handler):
                handler(signum, frame)
            elif handler == signal.SIG_DFL:
                signal.raise_signal(signum)


def _remove_stage(stage: Path, target: Path, created: bool) -> None:
    shutil.rmtree(stage, ignore_errors=True)
    if created:
        with contextlib.suppress(OSError):
            target.rmdir()  # only when empty: the folder did not exist before


def _naming(exc: OSError, path: Path, stage: Path | None = None) -> OSError:
    """Return the same error naming the file the user asked for.

    The error names ``path`` when ``exc`` names none (a failed write on a full disk names no file),
    and the final place of a staged file instead of the staged one.
    """
    name = exc.filename
    if name is not None and stage is not None:
        with contextlib.suppress(ValueError):  # a file outside the stage keeps its name
            name = path / Path(os.fsdecode(name)).relative_to(stage)
    if name is exc.filename and name is not None:
        return exc
    return type(exc)(exc.errno, exc.strerror or str(exc), str(name if name is not None else path))


def atomic_write_text(path: str | os.PathLike[str], text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically."""
    return atomic_write_bytes(path, text.encode("utf-8"))


def to_jsonable(value: Any) -> Any:
    """Convert ``value`` into plain JSON types.

    Non-finite floats become ``None`` (JSON has no infinity); a mapping that held one gets a
    ``"<key>_is_infinite": true`` flag next to it so that readers can tell ``inf`` from missing.
    Dataclasses, enums, numpy scalars/arrays, paths, sets and tuples are converted too.
    """
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        to_dict = getattr(value, "to_dict", None)
        if callable(to_dict):
            return to_jsonable(to_dict())
        return to_jsonable({f.name: getattr(value, f.name) for f in dataclasses.fields(value)})
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for key, item in value.items():
            converted = to_jsonable(item)
            out[str(key)] = converted
            if isinstance(item, float) and math.isinf(item):
                out[f"{key}_is_infinite"] = True
        return out
    if isinstance(value, enum.Enum):
        return to_jsonable(value.value)
    if isinstance(value, bool) or value is None or isinstance(value, str | int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if isinstance(value, list | tuple | set | frozenset):
        items = sorted(value, key=repr) if isinstance(value, set | frozenset) else value
        return [to_jsonable(item) for item in items]
    tolist = getattr(value, "tolist", None)  # numpy arrays and scalars
    if callable(tolist):
        return to_jsonable(tolist())
    model_dump = getattr(value, "model_dump", None)  # pydantic models
    if callable(model_dump):
        return to_jsonable(model_dump(mode="json"))
    raise TypeError(f"cannot convert {type(value).__name__} to JSON")


def dumps_json(value: Any, *, indent: int | None = 2) -> str:
    """Serialize ``value`` with :func:`to_jsonable`; never emits ``Infinity``/``NaN``."""
    return json.dumps(to_jsonable(value), indent=indent, allow_nan=False, ensure_ascii=False)


def atomic_write_json(path: str | os.PathLike[str], value: Any) -> Path:
    """Write ``value`` as JSON (see :func:`dumps_json`) to ``path`` atomically."""
    return atomic_write_text(path, dumps_json(value) + "\n")


def format_number(value: float, *, digits: int = 4) -> str:
    """Human-readable number for reports: ``∞`` for infinities, ``nan`` for NaN."""
    if math.isinf(value):
        return "∞" if value > 0 else "-∞"
    if math.isnan(value):
        return "nan"
    return f"{value:.{digits}g}"
