"""Reading and validating JSON / JSONL records with errors that name the record and field."""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from lift_metrics._io import existing_file, parse_json, read_jsonl as _io_read_jsonl, read_text_file
from lift_metrics.errors import InputValueError, JSONTextError, RecordError as RecordError

T = TypeVar("T")


def _where(index: int | str, field: str) -> str:
    return f"record {index}: field {field!r}"


def require(record: Mapping[str, Any], index: int | str, field: str) -> Any:
    """Return ``record[field]``; a missing field is a :class:`RecordError` naming both."""
    if not isinstance(record, Mapping):
        raise RecordError(f"record {index}: must be a JSON object, got {type(record).__name__}")
    if field not in record:
        raise RecordError(f"record {index}: missing required field {field!r}")
    return record[field]


def check_text(value: str, where: str) -> str:
    r"""Return ``value`` if it can be written as UTF-8.

    A lone surrogate (JSON's ``"\ud800"``) is a :class:`RecordError` naming ``where``.
    """
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise RecordError(
            f"{where} must be Unicode text, got {value!r:.80} with a lone surrogate at "
            f"position {exc.start}"
        ) from None
    return value


def in_file(path: str | os.PathLike[str], exc: RecordError) -> RecordError:
    """``exc`` with the file's name in front, unless its message already starts with it."""
    name = os.fspath(path)
    message = str(exc)
    return RecordError(message if message.startswith(str(name)) else f"{name}: {message}")


def get_str(record: Mapping[str, Any], index: int | str, field: str) -> str:
    """Return a required non-empty string field (valid Unicode: no lone surrogates)."""
    value = require(record, index, field)
    if not isinstance(value, str) or not value:
        raise RecordError(f"{_where(index, field)} must be a non-empty string, got {value!r}")
    return check_text(value, _where(index, field))


def get_bool(record: Mapping[str, Any], index: int | str, field: str) -> bool:
    """Return a required boolean field (``0``/``1``/``"true"`` are refused, not guessed)."""
    value = require(record, index, field)
    if not isinstance(value, bool | np.bool_):
        raise RecordError(f"{_where(index, field)} must be true or false, got {value!r}")
    return bool(value)


def get_int(record: Mapping[str, Any], index: int | str, field: str, *, default: Any = ...) -> int:
    """Return a required (or defaulted) non-negative integer field."""
    if default is not ... and field not in record:
        return int(default)
    value = require(record, index, field)
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise RecordError(f"{_where(index, field)} must be an integer, got {value!r}")
    if value < 0:
        raise RecordError(f"{_where(index, field)} must be >= 0, got {value!r}")
    return int(value)


def get_float(
    record: Mapping[str, Any],
    index: int | str,
    field: str,
    *,
    unit_interval: bool = False,
    default: Any = ...,
) -> float:
    """Return a required (or defaulted) finite, non-negative number (optionally at most 1)."""
    if default is not ... and field not in record:
        return float(default)
    value = require(record, index, field)
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        raise RecordError(f"{_where(index, field)} must be a number, got {value!r}")
    try:
        number = float(value)
    except OverflowError:
        bits = int(value).bit_length()
        raise RecordError(
            f"{_where(index, field)} must be finite, got an integer of {bits} bits"
        ) from None
    if not math.isfinite(number):
        raise RecordError(f"{_where(index, field)} must be finite, got {value!r}")
    if number < 0:
        raise RecordError(f"{_where(index, field)} must be >= 0, got {value!r}")
    if unit_interval and number > 1:
        raise RecordError(f"{_where(index, field)} must be in [0, 1], got {value!r}")
    return number


def _existing_file(path: str | os.PathLike[str]) -> Path:
    """:func:`lift_metrics._io.existing_file`; a directory is a :class:`RecordError` here."""
    try:
        return existing_file(path, "file")
    except IsADirectoryError:
        raise RecordError(f"{os.fspath(path)} is a directory, not a file") from None


def _loads(text: str | bytes, where: str) -> Any:
    """:func:`lift_metrics._io.parse_json` whose errors say where."""
    try:
        return parse_json(text)
    except JSONTextError as exc:
        raise RecordError(f"{where} is not valid JSON: {exc}") from None


def read_jsonl(path: str | os.PathLike[str]) -> Iterator[tuple[str, Any]]:
    """Yield ``(label, object)`` for every non-blank line of a JSONL file.

    The label reads ``"2 (line 3)"`` (record index from 0, line number from 1) so that error
    messages point into the file. The file is read by :func:`lift_metrics._io.read_jsonl`.
    """
    file = _existing_file(path)
    lines = _io_read_jsonl(
        file,
        "file",
        lambda n, why: RecordError(f"{file}: line {n} is not valid JSON: {why}"),
        error=RecordError,
    )
    for index, (line_number, value) in enumerate(lines):
        yield f"{index} (line {line_number})", value


def load_jsonl_records(
    path: str | os.PathLike[str], from_dict: Callable[..., T], what: str
) -> tuple[T, ...]:
    """Every line of a JSONL file as ``from_dict(obj, index=label)`` (see :func:`read_jsonl`).

    A :class:`RecordError` names the file; a file with no records is a ValueError
    ``"{path}: no {what} in the file"``.
    """
    records = []
    try:
        for label, obj in read_jsonl(path):
            records.append(from_dict(obj, index=label))
    except RecordError as exc:
        raise in_file(path, exc) from exc
    if not records:
        raise InputValueError(f"{os.fspath(path)}: no {what} in the file")
    return tuple(records)


def read_json(path: str | os.PathLike[str]) -> Any:
    """Parse a JSON file; errors name the file."""
    file = _existing_file(path)
    return _loads(read_text_file(file, "file", error=RecordError), str(file))
