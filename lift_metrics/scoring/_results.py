"""The results file of a scoring run: one :class:`SampleResult` per line, appended and resumable.

A rerun reads the earlier results back (dropping a line a kill cut short) after checking that
they were scored against the same tasks and time limit (``run.json``).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lift_metrics._io import parse_json
from lift_metrics._records import short_repr
from lift_metrics.errors import InputValueError
from lift_metrics.scoring._samples import Sample
from lift_metrics.scoring._tasks import ScoringTask

__all__ = ["RESULTS_NAME", "SampleResult", "read_results"]

RESULTS_NAME = "results.jsonl"
RUN_NAME = "run.json"
_FLUSH_LINES = 256
_FLUSH_SECONDS = 1.0


@dataclass(frozen=True)
class SampleResult:
    """The verdict on one sample (one line of ``results.jsonl``).

    Attributes
    ----------
    line : int
        Line of the sample in the samples file.
    digest : str
        Content hash of the sample (a resumed run refuses a changed file).
    task_id : str
    sample_id : str or None
    passed : bool
        Every test passed.
    status : str
        ``passed``, ``failed`` (a test failed or raised), ``error`` (does not parse, no such
        function, raised while loading), ``timeout``, ``memory`` or ``crashed``.
    tests_passed, tests_total : int
        Test cases that passed, and all of them (1 for a check script).
    outcomes : tuple of dict
        Per test: ``index``, ``passed``, ``actual_repr``, ``error``.
    elapsed_ms : float
        Wall-clock time of the execution.
    reason : str
        One line on why the status is what it is.
    code_quality : float or None
        :func:`lift_metrics.code.code_quality` against the task's reference, when asked for
        and the task has one.
    """

    line: int
    digest: str
    task_id: str
    sample_id: str | None
    passed: bool
    status: str
    tests_passed: int
    tests_total: int
    outcomes: tuple[dict[str, Any], ...]
    elapsed_ms: float
    reason: str
    code_quality: float | None = None

    def __repr__(self) -> str:
        return short_repr(
            self, "line task_id!r status!r tests", tests=f"{self.tests_passed}/{self.tests_total}"
        )

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON object written to ``results.jsonl``."""
        out: dict[str, Any] = {
            "line": self.line,
            "digest": self.digest,
            "task_id": self.task_id,
            "sample_id": self.sample_id,
            "passed": self.passed,
            "status": self.status,
            "tests_passed": self.tests_passed,
            "tests_total": self.tests_total,
            "elapsed_ms": round(self.elapsed_ms, 3),
            "reason": self.reason,
            "outcomes": list(self.outcomes),
        }
        if self.code_quality is not None:
            out["code_quality"] = self.code_quality
        return out

    @classmethod
    def from_dict(cls, record: Mapping[str, Any]) -> SampleResult:
        """Read one line of ``results.jsonl`` back (KeyError/TypeError when malformed)."""
        return cls(
            line=int(record["line"]),
            digest=str(record["digest"]),
            task_id=str(record["task_id"]),
            sample_id=record["sample_id"],
            passed=bool(record["passed"]),
            status=str(record["status"]),
            tests_passed=int(record["tests_passed"]),
            tests_total=int(record["tests_total"]),
            outcomes=tuple(record["outcomes"]),
            elapsed_ms=float(record["elapsed_ms"]),
            reason=str(record["reason"]),
            code_quality=record.get("code_quality"),
        )


def _tasks_digest(tasks: Mapping[str, ScoringTask]) -> str:
    """Return a hash of everything about the tasks that decides a verdict."""
    import hashlib

    digest = hashlib.sha256()
    for task in tasks.values():
        digest.update(repr((task.task_id, task.prompt, task.entry_point, task.tests)).encode())
    return digest.hexdigest()[:16]


def _check_settings(path: Path, settings: Mapping[str, Any], results: Path) -> None:
    """Refuse to resume results computed against other tasks, time limit or importable packages.

    ``importable`` is recorded only when some packages were named.
    """
    if not path.exists() or not results.exists():
        return
    try:
        earlier = parse_json(path.read_bytes())
    except (OSError, ValueError):
        earlier = None
    if not isinstance(earlier, dict):
        raise InputValueError(
            f"{path}: unreadable; score into a new output folder or turn resume off"
        )
    for key, label in (
        ("tasks_digest", "other tasks"),
        ("timeout_s", "another time limit"),
        ("importable", "other importable packages"),
    ):
        if earlier.get(key, []) != settings.get(key, []):
            raise InputValueError(
                f"{results.parent}: its results were scored against {label} "
                f"({key} {earlier.get(key)!r}, now {settings.get(key)!r}); score into a new "
                "output folder or turn resume off"
            )


def read_results(
    path: Path, samples: Mapping[int, Sample], samples_label: str
) -> list[SampleResult]:
    """Read an earlier run's results; drop a truncated last line (a killed run's).

    Raises ValueError when a result does not belong to the current samples (a changed file).
    """
    if not path.exists():
        return []
    data = path.read_bytes()
    end = data.rfind(b"\n") + 1
    if end < len(data):  # a line cut short by a kill: scored again
        with path.open("r+b") as handle:
            handle.truncate(end)
            handle.flush()
            os.fsync(handle.fileno())
        data = data[:end]
    results: list[SampleResult] = []
    seen: set[int] = set()
    for number, raw in enumerate(data.splitlines(), start=1):
        where = f"{path}: line {number}"
        if not raw.strip():
            continue
        try:
            result = SampleResult.from_dict(parse_json(raw))
        except (ValueError, KeyError, TypeError) as exc:
            raise InputValueError(
                f"{where}: not a result written by this command ({type(exc).__name__}: {exc}); "
                "score into a new output folder"
            ) from None
        sample = samples.get(result.line)
        if sample is None or sample.digest != result.digest:
            raise InputValueError(
                f"{where}: the sample on line {result.line} of {samples_label} changed since it "
                "was scored; score into a new output folder or turn resume off"
            )
        if result.line in seen:
            raise InputValueError(f"{where}: line {result.line} of {samples_label} is scored twice")
        seen.add(result.line)
        results.append(result)
    return results


def result_line(result: SampleResult) -> bytes:
    r"""Return ``result`` as one line of ``results.jsonl``: UTF-8 JSON and a newline.

    Whatever a candidate program made of its error or output is written: a lone surrogate
    (``ValueError('\ud800')``), which UTF-8 cannot encode, is written as JSON's own escape
    ``\ud800`` and reads back as the same string.

    Examples
    --------
    >>> error = "ValueError: \ud800"
    >>> result = SampleResult(1, "d", "t", None, False, "failed", 0, 1, (), 2.0, error)
    >>> result_line(result).endswith(b'"reason": "ValueError: \\ud800", "outcomes": []}\n')
    True
    """
    line = json.dumps(result.to_dict(), ensure_ascii=False, allow_nan=False)
    # only lone surrogates cannot be encoded; "backslashreplace" writes them as "\udXXX"
    return line.encode("utf-8", "backslashreplace") + b"\n"


class _Appender:
    """Appends result lines in batches: one write, flush and fsync per batch."""

    def __init__(self, path: Path) -> None:
        self._handle = path.open("ab")
        self._buffer: list[bytes] = []
        self._last = time.monotonic()

    def add(self, result: SampleResult) -> None:
        self._buffer.append(result_line(result))
        if len(self._buffer) >= _FLUSH_LINES or time.monotonic() - self._last >= _FLUSH_SECONDS:
            self.flush()

    def flush(self) -> None:
        if self._buffer:
            # cleared first: an interrupt between the two may lose lines (scored again on
            # resume), never write them twice
            data = b"".join(self._buffer)
            self._buffer.clear()
            self._handle.write(data)
            self._handle.flush()
            os.fsync(self._handle.fileno())
        self._last = time.monotonic()

    def close(self) -> None:
        try:
            self.flush()
        finally:
            self._handle.close()
