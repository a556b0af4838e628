"""Labelled data: items with human scores, read from JSON Lines or CSV with a field mapping."""

from __future__ import annotations

import csv
import math
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from lift_metrics._checks import check_path
from lift_metrics._io import existing_file, jsonl_values, parse_json, read_text_file
from lift_metrics._profiles import shipped_labels_file
from lift_metrics.errors import (
    InputTypeError,
    InputValueError,
    JSONTextError,
    LabelFileError as LabelFileError,
    RecordError,
)

SHIPPED_LABELS: Mapping[str, str] = {
    "ir_quality": "ir_pairs.jsonl",
    "code_quality": "code_pairs.jsonl",
    "test_pass_rate": "code_pairs.jsonl",
}
"""Metric name -> file in ``datasets/labels/`` holding its hand-labelled pairs."""

_SPLITS = ("heldout", "calibration", "all")


@dataclass(frozen=True)
class ShippedDataset:
    """A labelled dataset that ships with the package (``lift-metrics validate --labels NAME``).

    Attributes
    ----------
    path : str
        File under ``datasets/``.
    score_field : str
        The field holding the label.
    fields : mapping of str to str
        Item key -> file field: what the metrics are called on.
    group_field : str or None
        Field naming the item's group, if any.
    metrics : tuple of str
        The metrics validated when none is named.
    """

    path: str
    score_field: str
    fields: Mapping[str, str]
    group_field: str | None = None
    metrics: tuple[str, ...] = ()


SHIPPED_DATASETS: Mapping[str, ShippedDataset] = {
    "conala": ShippedDataset(
        path="conala/dev.jsonl",
        score_field="grade",
        fields={
            "predicted_code": "prediction",
            "expected_code": "reference",
            "intent": "intent",
            "system": "system",
        },
        metrics=("reference_score",),
    ),
}
"""Name -> shipped human-graded dataset (see ``datasets/conala/README.md``)."""


def shipped_dataset_path(name: str) -> Path:
    """Path of the shipped labelled dataset ``name`` (see :data:`SHIPPED_DATASETS`).

    Examples
    --------
    >>> shipped_dataset_path("conala").name
    'dev.jsonl'
    """
    from lift_metrics._paths import datasets_dir

    if not isinstance(name, str):
        raise InputTypeError(f"name must be a dataset name (str), got {type(name).__name__}")
    if name not in SHIPPED_DATASETS:
        raise InputValueError(f"labels must be one of {sorted(SHIPPED_DATASETS)}, got {name!r}")
    return datasets_dir() / SHIPPED_DATASETS[name].path


@dataclass(frozen=True, repr=False)
class LabelledItem:
    """One item to score with its label.

    Attributes
    ----------
    id : str
        Item id (the file's id field, or the line number).
    item : object
        What the metric is called on: for loaded files, a dict of the mapped item fields.
    label : float
        The label the metric is compared with.
    ratings : tuple of (float or None)
        Every rater's rating (``None`` where a rater skipped the item); empty means just
        ``label``.
    split : str or None
        ``"calibration"``/``"heldout"`` (or whatever the file says); None if absent.
    group : str or None
        Items of one group stay in one fold when weights are cross-validated.
    line : int or None
        Line of the file the item came from (1-based; CSV counts the header as line 1).
    """

    id: str
    item: Any
    label: float
    ratings: tuple[float | None, ...] = field(default=())
    split: str | None = None
    group: str | None = None
    line: int | None = None

    def __repr__(self) -> str:
        return f"LabelledItem(id={self.id!r}, label={self.label:g}, split={self.split!r})"


def shipped_labels_path(metric: str) -> Path:
    """Path of the hand-labelled pairs shipped for ``metric`` (``ir_quality``/``code_quality``).

    Examples
    --------
    >>> shipped_labels_path("code_quality").name
    'code_pairs.jsonl'
    """
    return shipped_labels_file(SHIPPED_LABELS, metric, "to use the shipped labels")


def _records(path: Path, fmt: str, json_fields: Sequence[str]) -> list[tuple[int, dict[str, Any]]]:
    text = read_text_file(path, "labelled data file")
    records: list[tuple[int, dict[str, Any]]] = []
    if fmt == "jsonl":
        for number, value in jsonl_values(
            text.split("\n"),
            lambda n, why: RecordError(f"{path}:{n}: not valid JSON: {why}"),
        ):
            if not isinstance(value, dict):
                raise RecordError(
                    f"{path}:{number}: each line must be a JSON object, got {type(value).__name__}"
                )
            records.append((number, value))
        return records
    reader = csv.DictReader(text.splitlines())
    if not reader.fieldnames:
        raise RecordError(f"{path}:1: the CSV file has no header line")
    for row in reader:
        number = reader.line_num
        if None in row:
            raise RecordError(f"{path}:{number}: more cells than header fields")
        record: dict[str, Any] = {}
        for key, cell in row.items():
            if cell is None:
                raise RecordError(f"{path}:{number}: field {key!r}: missing cell")
            if key in json_fields and cell != "":
                try:
                    record[key] = parse_json(cell)
                except JSONTextError as exc:
                    raise RecordError(
                        f"{path}:{number}: field {key!r}: not valid JSON: {exc}"
                    ) from None
            else:
                record[key] = cell
        records.append((number, record))
    return records


def _number(path: Path, line: int, name: str, value: Any, *, optional: bool) -> float | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        if optional:
            return None
        raise RecordError(f"{path}:{line}: field {name!r} is empty")
    if isinstance(value, bool):
        raise RecordError(f"{path}:{line}: field {name!r} must be a number, got {value!r}")
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise RecordError(
            f"{path}:{line}: field {name!r} must be a number, got {value!r:.40}"
        ) from None
    if not math.isfinite(number):
        raise RecordError(f"{path}:{line}: field {name!r} must be finite, got {value!r}")
    return number


def _file_format(file: Path, file_format: str | None) -> str:
    """Return ``file_format``, checked, or the format the file's suffix names."""
    if file_format is None:
        suffix = file.suffix.lower()
        if suffix in (".jsonl", ".ndjson"):
            return "jsonl"
        if suffix == ".csv":
            return "csv"
        raise InputValueError(
            f"cannot tell the format of {file.name!r} from its suffix: use .jsonl or .csv, "
            "or pass file_format"
        )
    if file_format not in ("jsonl", "csv"):
        raise InputValueError(f"file_format must be 'jsonl' or 'csv', got {file_format!r}")
    return file_format


def _rater_fields(
    records: Sequence[tuple[int, Mapping[str, Any]]],
    score_field: str,
    rater_fields: Sequence[str] | None,
) -> tuple[str, ...]:
    """Return the raters' fields: given, or ``score_field`` and its ``_<n>`` siblings."""
    if rater_fields is not None:
        return tuple(rater_fields)
    pattern = re.compile(re.escape(score_field) + r"_\d+")
    extra = sorted(
        {key for _, rec in records for key in rec if pattern.fullmatch(key)},
        key=lambda k: int(k.rsplit("_", 1)[1]),
    )
    return (score_field, *extra)


def _item_fields(
    where: str,
    record: Mapping[str, Any],
    fields: Mapping[str, str] | Sequence[str] | None,
    reserved: set[str],
) -> dict[str, Any]:
    """Return the item of ``record``: its ``fields`` (renamed), or every unreserved field."""
    if fields is None:
        return {k: v for k, v in record.items() if k not in reserved}
    mapping = dict(fields) if isinstance(fields, Mapping) else {f: f for f in fields}
    absent = [source for source in mapping.values() if source not in record]
    if absent:
        raise RecordError(
            f"{where}: field {absent[0]!r} is missing (the item has {sorted(record)})"
        )
    return {key: record[source] for key, source in mapping.items()}


def load_labels(
    path: str | os.PathLike[str],
    *,
    score_field: str = "human_score",
    fields: Mapping[str, str] | Sequence[str] | None = None,
    rater_fields: Sequence[str] | None = None,
    id_field: str = "id",
    split_field: str = "split",
    group_field: str | None = None,
    split: Literal["heldout", "calibration", "all"] | None = None,
    json_fields: Sequence[str] = (),
    file_format: Literal["jsonl", "csv"] | None = None,
) -> list[LabelledItem]:
    """Read labelled items from a JSON Lines or CSV file.

    Parameters
    ----------
    path : path-like
        ``*.jsonl``/``*.ndjson`` (one JSON object a line) or ``*.csv`` (header line first).
    score_field : str, default "human_score"
        The field holding the label.
    fields : mapping or sequence of str, optional
        Which fields form the item the metric is called on. A mapping renames
        (``{"predicted": "predicted_code"}``: item key -> file field); a sequence keeps names.
        Default: every field except the id, score, rater, split and group fields.
    rater_fields : sequence of str, optional
        Fields with each rater's rating (empty/absent where a rater skipped the item).
        Default: ``score_field`` and any ``<score_field>_<n>`` fields present
        (``human_score``, ``human_score_2``).
    id_field : str, default "id"
        Item id; items without one are named by their line number.
    split_field : str, default "split"
    group_field : str, optional
        Field naming the item's group (kept together in cross-validation folds).
    split : {"heldout", "calibration", "all"} or None, default None
        Keep only that split; None or ``"all"`` keeps everything.
    json_fields : sequence of str
        CSV columns whose cells hold JSON (lists of tests, IR objects).
    file_format : {"jsonl", "csv"}, optional
        Default: from the file's suffix.

    Returns
    -------
    list of LabelledItem

    Raises
    ------
    FileNotFoundError
        If the file does not exist.
    RecordError
        (``LabelFileError``, a ValueError) naming the file, line and field: bad JSON, a
        missing or non-numeric score, a missing mapped field, a duplicate id, an item without
        a split when one was asked for.
    ValueError
        For an unknown suffix or option.

    Examples
    --------
    >>> items = load_labels(shipped_labels_path("code_quality"), split="heldout",
    ...                     fields={"predicted": "predicted_code", "expected": "expected_code"})
    >>> len(items), items[0].split, sorted(items[0].item), len(items[0].ratings)
    (48, 'heldout', ['expected', 'predicted'], 2)
    """
    file = existing_file(check_path("path", path), "labelled data file")
    if split is not None and split not in _SPLITS:
        raise InputValueError(f"split must be one of {_SPLITS} or None, got {split!r}")
    fmt = _file_format(file, file_format)
    if isinstance(fields, str):
        raise InputTypeError("fields must be a mapping or a sequence of field names, not a str")
    try:
        records = _records(file, fmt, tuple(json_fields))
    except csv.Error as exc:  # a field over csv's size limit
        raise RecordError(f"{file}: not valid CSV: {exc}") from None
    if not records:
        raise RecordError(f"{file}: no items")

    raters = _rater_fields(records, score_field, rater_fields)
    reserved = {id_field, score_field, split_field, *raters}
    if group_field is not None:
        reserved.add(group_field)

    items: list[LabelledItem] = []
    seen: dict[str, int] = {}
    for line, record in records:
        if score_field not in record:
            raise RecordError(f"{file}:{line}: field {score_field!r} (the label) is missing")
        label = _number(file, line, score_field, record[score_field], optional=True)
        if label is None:
            raise RecordError(f"{file}:{line}: field {score_field!r} (the label) is empty")
        ratings = tuple(
            _number(file, line, name, record.get(name), optional=True) for name in raters
        )
        item_split = record.get(split_field)
        if item_split is not None:
            item_split = str(item_split)
        if split not in (None, "all"):
            if item_split is None or item_split == "":
                raise RecordError(
                    f"{file}:{line}: field {split_field!r} is missing, so split={split!r} "
                    "cannot be applied (use split='all')"
                )
            if item_split != split:
                continue
        item = _item_fields(f"{file}:{line}", record, fields, reserved)
        item_id = str(record.get(id_field, "") or f"line{line}")
        if item_id in seen:
            raise RecordError(
                f"{file}:{line}: field {id_field!r}: duplicate id {item_id!r} "
                f"(first on line {seen[item_id]})"
            )
        seen[item_id] = line
        group = None if group_field is None else record.get(group_field)
        items.append(
            LabelledItem(
                id=item_id,
                item=item,
                label=label,
                ratings=ratings if len(ratings) > 1 else (),
                split=item_split or None,
                group=None if group is None else str(group),
                line=line,
            )
        )
    return items


def item_categories(items: Sequence[LabelledItem]) -> dict[str, str]:
    """Item id -> its ``category`` field, where the items have one (the report's breakdown).

    Examples
    --------
    >>> item_categories([LabelledItem("a", {"category": "stub"}, 0.1),
    ...                  LabelledItem("b", "no fields", 1.0)])
    {'a': 'stub'}
    """
    found: dict[str, str] = {}
    for item in items:
        value = item.item.get("category") if isinstance(item.item, dict) else None
        if isinstance(value, str):
            found[item.id] = value
    return found
