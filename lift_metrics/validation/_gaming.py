"""The gaming check: whether a metric can be climbed without solving the task.

An optimizer maximizes whatever a metric rewards. Before handing a metric to one, score
outputs that compute nothing (tricks) beside honest correct and honest wrong outputs, on the
project's tasks, and see which tricks score like the correct ones (docs/validation.md,
"The gaming check").
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Literal

from lift_metrics._checks import check_int, score_value
from lift_metrics._records import record_dict
from lift_metrics.errors import InputTypeError, InputValueError
from lift_metrics.ir import IR_MUTATIONS
from lift_metrics.validation._gaming_tricks import CODE_TRICKS, Trick
from lift_metrics.validation._validate_metric import _caller, metric_name

IR_KINDS: tuple[str, ...] = tuple(IR_MUTATIONS)

Setting = Literal["tests", "no_tests", "ir"]
_SETTINGS: tuple[Setting, ...] = ("tests", "no_tests")
Kind = Literal["code", "ir"]
Output = tuple[int, Trick, Any]  # (task index, what it is, the code or the IR)


@dataclass(frozen=True)
class TrickResult:
    """How one kind of output scored, over the tasks where it was built and scored.

    Attributes
    ----------
    trick, role, description : str
        The output (:data:`~lift_metrics.validation.CODE_TRICKS`): its name, ``"correct"``,
        ``"wrong"`` or ``"trick"``, and what it is.
    setting : {"tests", "no_tests"}
        Whether the metric saw the task's tests, or only the reference.
    n : int
        Tasks scored.
    mean_score : float
        Its mean score.
    mean_correct, mean_wrong : float
        On the same tasks, the mean of the honest correct outputs' scores and of the honest
        wrong outputs' scores (nan when there were none).
    wins : int
        Tasks where it scored at least as high as the lowest-scoring correct output (for a
        correct output: 0).
    above_wrong : int
        Tasks where it scored above every honest wrong output.
    """

    trick: str
    role: str
    description: str
    setting: str
    n: int
    mean_score: float
    mean_correct: float
    mean_wrong: float
    wins: int
    above_wrong: int

    @property
    def won(self) -> bool:
        """Whether this wrong output or trick scored like a correct output on some task."""
        return self.role != "correct" and self.wins > 0

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-friendly dict of the row."""
        return {**self.__dict__, "won": self.won}


@dataclass(frozen=True)
class GamingReport:
    """What :func:`gaming_check` found for one metric.

    Attributes
    ----------
    metric : str
        The metric's name.
    rows : tuple of TrickResult
        One per output kind and setting.
    skipped : tuple of str
        ``"task: output: why"`` for outputs that could not be built or did not fit their
        role (a mutant that still passes every test is not a wrong output).
    missing : tuple of str
        ``"task: output (setting): why"`` for scores the metric could not compute.
    """

    metric: str
    rows: tuple[TrickResult, ...]
    skipped: tuple[str, ...] = field(default=())
    missing: tuple[str, ...] = field(default=())

    @property
    def winning(self) -> tuple[TrickResult, ...]:
        """The rows whose wrong output or trick scored like a correct output somewhere."""
        return tuple(row for row in self.rows if row.won)

    @property
    def passed(self) -> bool:
        """True when no trick or wrong output won and every score could be computed."""
        return not self.winning and not self.missing

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-friendly dict of the report."""
        return record_dict(self, "metric passed rows skipped missing")

    def __repr__(self) -> str:
        won = ", ".join(f"{r.trick}/{r.setting}" for r in self.winning) or "none"
        return f"GamingReport(metric={self.metric!r}, rows={len(self.rows)}, won: {won})"


def format_gaming(report: GamingReport) -> str:
    """Return a plain-text table of ``report``, one line per output and setting."""
    if not isinstance(report, GamingReport):
        raise InputTypeError(f"report must be a GamingReport, got {type(report).__name__}")
    lines = [
        f"gaming check: {report.metric}",
        f"{'output':<26}{'role':<8}{'setting':<9}{'n':>4}{'score':>8}{'correct':>9}"
        f"{'wrong':>8}{'wins':>6}{'>wrong':>8}",
    ]
    for row in report.rows:
        lines.append(
            f"{row.trick:<26}{row.role:<8}{row.setting:<9}{row.n:>4}{row.mean_score:>8.3f}"
            f"{row.mean_correct:>9.3f}{row.mean_wrong:>8.3f}{row.wins:>6}{row.above_wrong:>8}"
            + ("  WINS" if row.won else "")
        )
    won = sorted({row.trick for row in report.winning})
    lines.append(f"won: {', '.join(won)}" if won else "no trick or wrong output won")
    if report.missing:
        lines.append(f"{len(report.missing)} score(s) could not be computed, first:")
        lines.append(f"  {report.missing[0]}")
    return "\n".join(lines)


def _test_cases(task: Mapping[str, Any]) -> list[tuple[dict[str, Any], Any]]:
    return [(dict(case["inputs"]), case["expected"]) for case in task["tests"]]


def _fits(sandbox: Any, task: Mapping[str, Any], code: str, role: str) -> str | None:
    """Why ``code`` does not fit ``role`` on ``task`` (None when it does)."""
    if role == "trick":
        return None
    result = sandbox.run_tests(code, _test_cases(task), entry_point=str(task["entry_point"]))
    if role == "correct" and result.status != "passed":
        return f"does not pass every test ({result.status}: {result.reason})"
    if role == "wrong" and result.status == "passed":
        return "passes every test"
    return None


#: how a reason starts when the metric refused an output that is not a valid IR
REJECTED = "rejected (not a valid IR): "


def _valid_ir(value: Any) -> bool:
    from lift_metrics.ir import IR

    try:
        IR.model_validate(value)
    except Exception:
        return False
    return True


def _ir_outputs(tasks: Sequence[Mapping[str, Any]], names: Sequence[str] | None) -> list[Output]:
    """Return the IR outputs: each task's expected IR and its mutations (``ir_mutations``)."""
    from lift_metrics.ir import ir_mutations

    expected = Trick("expected", "correct", "the expected IR")
    outputs: list[Output] = []
    for index, task in enumerate(tasks):
        if names is None or "expected" in names:
            outputs.append((index, expected, dict(task["expected_ir"])))
        kinds = None if names is None else tuple(n for n in names if n != "expected")
        for mutation in ir_mutations(task["expected_ir"], prompt=task.get("prompt"), kinds=kinds):
            if mutation.usable:
                made = Trick(mutation.name, "correct", "usable by the next step")
            else:
                made = Trick(mutation.name, "trick", "unusable by the next step")
            outputs.append((index, made, mutation.ir))
    return outputs


def _outputs(
    tasks: Sequence[Mapping[str, Any]], names: Sequence[str], sandbox: Any
) -> tuple[list[Output], list[str]]:
    """Return the outputs to score, ``(task index, trick, code)``, and why others were not."""
    outputs: list[Output] = []
    skipped: list[str] = []
    for index, task in enumerate(tasks):
        for name in names:
            trick, build = CODE_TRICKS[name]
            why = "cannot be built from this reference"
            for code in build(task):
                why = _fits(sandbox, task, code, trick.role) or ""
                if not why:
                    outputs.append((index, trick, code))
                    break
            if why:
                skipped.append(f"{task.get('id', index)}: {name}: {why}")
    return outputs, skipped


def _item(task: Mapping[str, Any], code: Any, setting: Setting) -> dict[str, Any]:
    """Return the item the metric scores (the fields of the label files and of DSPy examples)."""
    if setting == "ir":
        return {"predicted": code, "ir": code, "expected": task["expected_ir"]} | {
            "expected_ir": task["expected_ir"],
            "prompt": task["prompt"],
        }
    tests = list(task["tests"]) if setting == "tests" else []
    return {
        "predicted_code": code,
        "code": code,
        "expected_code": task["expected_code"],
        "entry_point": task["entry_point"],
        "prompt": task["prompt"],
        "tests": tests,
    }


def _mean(values: Sequence[float]) -> float:
    return statistics.fmean(values) if values else math.nan


def gaming_check(
    metric: Callable[..., Any],
    *,
    kind: Kind = "code",
    tasks: Sequence[Mapping[str, Any]] | None = None,
    tricks: Sequence[str] | None = None,
    settings: Sequence[Setting] = _SETTINGS,
    call: Literal["item", "kwargs", "dspy"] = "item",
    prediction_fields: Sequence[str] | None = None,
    name: str | None = None,
    num_threads: int = 1,
    sandbox: Any = None,
) -> GamingReport:
    """Score honest outputs and tricks with ``metric`` and report which tricks win.

    For each task, the check builds the outputs of
    :data:`~lift_metrics.validation.CODE_TRICKS` from its reference: honest correct ones
    (the reference, a restyled rewrite), honest wrong ones (one changed operator or
    constant, ``return None``) and tricks that compute nothing (dead code after ``return
    None``, the reference as comments, a lookup table of the tests' answers, an object equal
    to anything, a ``pass`` stub, the prompt). Each honest output is run against the task's
    tests in the sandbox first, so a correct one is known to pass and a wrong one to fail.
    Each output is scored twice: with the task's tests, and with the reference only.

    With ``kind="ir"`` the outputs are the task's expected IR and its mutations
    (:func:`lift_metrics.ir.ir_mutations`): the usable ones count as correct, the unusable
    ones (a wrong function name, parameters renamed, reordered or repeated, a negated,
    opposite or generic intent, a constraint the signature breaks, ...) as tricks; the
    setting is ``"ir"``.

    Parameters
    ----------
    metric : callable
        The metric to check, called as in :func:`validate_metric` (``call``). Code items
        carry ``predicted_code`` and ``code`` (the output), ``expected_code``,
        ``entry_point``, ``prompt`` and ``tests`` (``[{"inputs": ..., "expected": ...}]``,
        empty in the ``"no_tests"`` setting): the fields of ``datasets/labels/code_pairs.jsonl``
        and of the project's DSPy examples (so ``call="dspy"`` hands a DSPy metric such as
        :class:`~lift_metrics.dspy_metrics.CodeQuality` an example and a prediction with
        ``code``). IR items carry ``predicted`` and ``ir`` (the output, a dict in the IR's
        JSON shape), ``expected`` and ``expected_ir``, and ``prompt`` (the fields of
        ``ir_pairs.jsonl``, and of :class:`~lift_metrics.dspy_metrics.IRQuality`'s example and
        prediction).
    kind : {"code", "ir"}, default "code"
    tasks : sequence of mapping, optional
        Task records (:func:`lift_metrics.optimizers.task_records`); default all 64 shipped
        tasks.
    tricks : sequence of str, optional
        Names from ``CODE_TRICKS`` (for IR: ``"expected"`` and the keys of
        :data:`lift_metrics.ir.IR_MUTATIONS`); default all of them.
    settings : sequence of {"tests", "no_tests"}
        Code only.
    call : {"item", "kwargs", "dspy"}, default "item"
    prediction_fields : sequence of str, optional
        With ``call="dspy"``: the item fields that form the prediction; default ``("code",)``
        for code and ``("ir",)`` for IR.
    name : str, optional
        Name in the report; default the metric's.
    num_threads : int, default 1
        Outputs are scored in a thread pool of this size.
    sandbox : Sandbox, optional
        Runs the honest outputs against the tests; a default one is made and closed.

    Returns
    -------
    GamingReport
        One row per output and setting; ``.winning`` lists the wrong outputs and tricks
        that scored at least as high as a correct output on some task, ``.passed`` is True
        when there are none and every score was computed.

    Raises
    ------
    ValueError
        An unknown kind, trick or setting, or no task to check.
    """
    if not callable(metric):
        raise InputTypeError(f"metric must be callable, got {type(metric).__name__}")
    if kind not in ("code", "ir"):
        raise InputValueError(f"kind must be 'code' or 'ir', got {kind!r}")
    known = ["expected", *IR_KINDS] if kind == "ir" else list(CODE_TRICKS)
    names = known if tricks is None else list(tricks)
    unknown = [n for n in names if n not in known]
    if unknown:
        raise InputValueError(f"tricks must be names from {sorted(known)}, got {unknown}")
    bad = [s for s in settings if s not in _SETTINGS]
    if bad or not settings:
        raise InputValueError(f"settings must be a non-empty subset of {_SETTINGS}, got {bad}")
    check_int("num_threads", num_threads, minimum=1)
    if tasks is None:
        from lift_metrics._tasks import task_records

        tasks = task_records()
    if not tasks:
        raise InputValueError("tasks must hold at least one task, got none")
    fields = prediction_fields or (("ir",) if kind == "ir" else ("code",))
    caller = _caller(metric, call, fields)
    skipped: list[str] = []
    if kind == "ir":
        outputs = _ir_outputs(tasks, None if tricks is None else names)
        settings = ("ir",)
    elif sandbox is None:
        from lift_metrics.sandbox import Sandbox

        with Sandbox() as box:
            outputs, skipped = _outputs(tasks, names, box)
    else:
        outputs, skipped = _outputs(tasks, names, sandbox)
    jobs = [(out, setting) for setting in settings for out in outputs]

    def score(job: tuple[Output, Setting]) -> tuple[float | None, str | None]:
        (index, _, output), setting = job
        try:
            return score_value(caller(_item(tasks[index], output, setting)))
        except Exception as exc:  # the metric failed on this output: a missing score
            why = " ".join(f"{type(exc).__name__}: {exc}".split())[:300]
            if setting == "ir" and not _valid_ir(output):
                return None, REJECTED + why
            return None, why

    with ThreadPoolExecutor(max_workers=num_threads) as pool:
        scores = list(pool.map(score, jobs))
    return _report(name or metric_name(metric), tasks, jobs, scores, skipped, order=known)


def _report(
    name: str,
    tasks: Sequence[Mapping[str, Any]],
    jobs: Sequence[tuple[Output, Setting]],
    scores: Sequence[tuple[float | None, str | None]],
    skipped: Sequence[str],
    *,
    order: Sequence[str],
) -> GamingReport:
    table: dict[tuple[str, int], dict[str, tuple[Trick, float]]] = {}
    missing: list[str] = []
    skipped = list(skipped)
    for ((index, made, _), setting), (value, why) in zip(jobs, scores, strict=True):
        where = f"{tasks[index].get('id', index)}: {made.name}"
        if value is None and why is not None and why.startswith(REJECTED):
            skipped.append(f"{where}: {why}")  # refusing an invalid IR is no missing score
        elif value is None:
            missing.append(f"{where} ({setting}): {why}")
        if value is None:
            continue
        table.setdefault((setting, index), {})[made.name] = (made, value)
    rows: list[TrickResult] = []
    settings = list(dict.fromkeys(setting for (_, setting) in jobs))
    present = {made.name for ((_, made, _), _) in jobs}
    tricks = [name for name in order if name in present]
    for setting in settings:
        for trick_name in tricks:
            mine, correct, wrong = [], [], []
            wins = above = 0
            trick: Trick | None = None
            for (where, _), cell in table.items():
                if where != setting or trick_name not in cell:
                    continue
                trick, value = cell[trick_name]
                rights = [v for t, v in cell.values() if t.role == "correct"]
                wrongs = [v for t, v in cell.values() if t.role == "wrong"]
                mine.append(value)
                if rights:
                    correct.append(statistics.fmean(rights))
                    if trick.role != "correct" and value >= min(rights):
                        wins += 1
                if wrongs:
                    wrong.append(statistics.fmean(wrongs))
                    if trick.role != "wrong" and value > max(wrongs):
                        above += 1
            if trick is None:
                continue
            rows.append(
                TrickResult(
                    trick=trick_name,
                    role=trick.role,
                    description=trick.description,
                    setting=setting,
                    n=len(mine),
                    mean_score=_mean(mine),
                    mean_correct=_mean(correct),
                    mean_wrong=_mean(wrong),
                    wins=wins,
                    above_wrong=above,
                )
            )
    return GamingReport(
        metric=name, rows=tuple(rows), skipped=tuple(skipped), missing=tuple(missing)
    )
