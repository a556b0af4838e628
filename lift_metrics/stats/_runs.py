"""Run records of an A/B comparison: the schema, validation, loading and splitting by arm.

Records follow the run-record schema of :class:`RunRecord` (docs/statistics.md#paired-ab).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from lift_metrics._checks import check_iterable, check_path
from lift_metrics.errors import InputValueError
from lift_metrics.stats._records import (
    get_bool,
    get_float,
    get_int,
    get_str,
    load_jsonl_records,
)

#: The arm names :func:`split_arms` reads as treatment and control when none are given.
TREATMENT_ARM = "treatment"
CONTROL_ARM = "control"


@dataclass(frozen=True)
class RunRecord:
    """One benchmark run of one task in one arm (a run-level record).

    ``total_tokens`` sums all four token counts; ``non_cache_tokens`` is input + output.
    """

    task_id: str
    arm: str
    repeat: int
    success: bool
    duration_seconds: float
    total_cost_usd: float
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int

    @property
    def total_tokens(self) -> int:
        """``input + output + cache_read + cache_write`` tokens."""
        return (
            self.input_tokens
            + self.output_tokens
            + self.cache_read_tokens
            + self.cache_write_tokens
        )

    @property
    def non_cache_tokens(self) -> int:
        """``input + output`` tokens."""
        return self.input_tokens + self.output_tokens

    @classmethod
    def from_dict(cls, record: Mapping[str, Any], *, index: int | str = 0) -> RunRecord:
        """Validate one record against the schema; errors name the record and the field.

        Examples
        --------
        >>> RunRecord.from_dict({"task_id": "t1", "arm": "a", "repeat": 0})
        Traceback (most recent call last):
        ...
        lift_metrics.errors.RecordError: record 0: missing required field 'success'
        """
        task_id = record.get("task_id") if isinstance(record, Mapping) else None
        if isinstance(task_id, int) and not isinstance(task_id, bool):
            record = {**record, "task_id": str(task_id)}
        return cls(
            task_id=get_str(record, index, "task_id"),
            arm=get_str(record, index, "arm"),
            repeat=get_int(record, index, "repeat"),
            success=get_bool(record, index, "success"),
            duration_seconds=get_float(record, index, "duration_seconds"),
            total_cost_usd=get_float(record, index, "total_cost_usd"),
            input_tokens=get_int(record, index, "input_tokens"),
            output_tokens=get_int(record, index, "output_tokens"),
            cache_read_tokens=get_int(record, index, "cache_read_tokens"),
            cache_write_tokens=get_int(record, index, "cache_write_tokens"),
        )


def validate_run_records(
    records: Iterable[RunRecord | Mapping[str, Any]], *, name: str = "records"
) -> tuple[RunRecord, ...]:
    """Validate run records (mappings or :class:`RunRecord`) against the run-record schema.

    Parameters
    ----------
    records : iterable of mapping or RunRecord
    name : str, default "records"
        The caller's name for ``records``, used in the error messages.

    Returns
    -------
    tuple of RunRecord

    Raises
    ------
    ValueError
        For a missing field or a bad value, naming the record index and the field, and for
        an empty input.

    Examples
    --------
    >>> rec = {"task_id": "t1", "arm": "a", "repeat": 0, "success": True,
    ...        "duration_seconds": 3.0, "total_cost_usd": 0.1, "input_tokens": 10,
    ...        "output_tokens": 5, "cache_read_tokens": 0, "cache_write_tokens": 0}
    >>> validate_run_records([rec])[0].total_tokens
    15
    >>> validate_run_records([rec, {**rec, "input_tokens": -1}])
    Traceback (most recent call last):
    ...
    lift_metrics.errors.RecordError: record 1: field 'input_tokens' must be >= 0, got -1
    """
    check_iterable(name, records, of="run records")
    out = tuple(
        r if isinstance(r, RunRecord) else RunRecord.from_dict(r, index=i)
        for i, r in enumerate(records)
    )
    if not out:
        raise InputValueError(f"{name} must not be empty")
    return out


def load_run_records(path: str | os.PathLike[str]) -> tuple[RunRecord, ...]:
    """Read and validate a JSONL file of A/B run records.

    Parameters
    ----------
    path : str or os.PathLike
        The JSONL file, one run record per line (blank lines skipped, extra fields ignored).

    Returns
    -------
    tuple of RunRecord

    Raises
    ------
    FileNotFoundError
        If the file does not exist.
    ValueError
        For invalid JSON, missing fields or bad values, naming the file, the record index,
        the line and the field; or for a file without records.

    Examples
    --------
    >>> from lift_metrics._paths import datasets_dir
    >>> runs = load_run_records(datasets_dir() / "examples" / "ab_runs.jsonl")
    >>> len(runs), sorted({r.arm for r in runs})
    (60, ['control', 'treatment'])
    """
    return load_jsonl_records(check_path("path", path), RunRecord.from_dict, "run records")


def split_arms(
    records: Iterable[RunRecord | Mapping[str, Any]],
    *,
    treatment: str | None = None,
    control: str | None = None,
) -> tuple[tuple[RunRecord, ...], tuple[RunRecord, ...]]:
    """Split mixed records into ``(treatment_runs, control_runs)``.

    Without names: when the two arms are literally named ``"treatment"`` and ``"control"``,
    they are what they say; otherwise the first arm in record order is the control and the
    second the treatment. Exactly two arms are required.

    Parameters
    ----------
    records : iterable of RunRecord or mapping
        Runs of both arms.
    treatment, control : str, optional
        Arm names; when only one is given the other is the remaining arm.

    Returns
    -------
    tuple
        ``(treatment_runs, control_runs)``, each a tuple of RunRecord in record order.

    Raises
    ------
    ValueError
        For other than two arms, an unknown arm name or the same name twice.

    Examples
    --------
    >>> base = {"task_id": "t", "repeat": 0, "success": True, "duration_seconds": 1.0,
    ...         "total_cost_usd": 0.0, "input_tokens": 1, "output_tokens": 1,
    ...         "cache_read_tokens": 0, "cache_write_tokens": 0}
    >>> t, c = split_arms([{**base, "arm": "baseline"}, {**base, "arm": "candidate"}])
    >>> t[0].arm, c[0].arm
    ('candidate', 'baseline')
    """
    runs = validate_run_records(records)
    arms = list(dict.fromkeys(r.arm for r in runs))
    if treatment is None and control is None:
        if set(arms) == {TREATMENT_ARM, CONTROL_ARM}:
            treatment, control = TREATMENT_ARM, CONTROL_ARM
        elif len(arms) == 2:
            control, treatment = arms
        else:
            raise InputValueError(f"records must hold exactly two arms, got {arms}")
    elif treatment is None or control is None:
        others = [arm for arm in arms if arm not in (treatment, control)]
        if len(others) != 1:
            raise InputValueError(
                f"cannot infer the other arm: arms are {arms}, treatment={treatment!r}, "
                f"control={control!r}"
            )
        treatment = treatment if treatment is not None else others[0]
        control = control if control is not None else others[0]
    for name, value in (("treatment", treatment), ("control", control)):
        if value not in arms:
            raise InputValueError(f"{name} arm {value!r} not found; arms are {arms}")
    if treatment == control:
        raise InputValueError(f"treatment and control must differ, got {treatment!r} twice")
    extra = [arm for arm in arms if arm not in (treatment, control)]
    if extra:
        raise InputValueError(f"records must hold exactly two arms, got {arms}")
    return (
        tuple(r for r in runs if r.arm == treatment),
        tuple(r for r in runs if r.arm == control),
    )
