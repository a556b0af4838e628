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
from typing import Any, Literal, NamedTuple

from lift_metrics._checks import check_int, check_real, score_value
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
    accepted : int or None
        Tasks where the metric, called as DSPy's bootstrapping calls it (under a trace),
        accepted it as a demonstration; None when the metric was not called under a trace
        (``call`` other than ``"dspy"``).
    traced : int
        Tasks where the call under a trace returned (``accepted`` is out of these).
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
    accepted: int | None = None
    traced: int = 0

    @property
    def won(self) -> bool:
        """Whether this wrong output or trick scored like a correct output on some task."""
        return self.role != "correct" and self.wins > 0

    @property
    def accepted_wrongly(self) -> bool:
        """Whether this wrong output or trick was accepted as a demonstration on some task."""
        return self.role != "correct" and bool(self.accepted)

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-friendly dict of the row."""
        return {**self.__dict__, "won": self.won, "accepted_wrongly": self.accepted_wrongly}


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
        ``"task: output (setting): why"`` for scores the metric could not compute, and
        ``"task: output (setting, under a trace): why"`` for calls under a trace that raised.
    call : {"item", "kwargs", "dspy"}
        How the metric was called; only ``"dspy"`` calls it under a trace as well.
    """

    metric: str
    rows: tuple[TrickResult, ...]
    skipped: tuple[str, ...] = field(default=())
    missing: tuple[str, ...] = field(default=())
    call: str = "item"

    @property
    def traced(self) -> bool:
        """Whether the metric was also called under a trace (``call="dspy"``)."""
        return self.call == "dspy"

    @property
    def winning(self) -> tuple[TrickResult, ...]:
        """The rows whose wrong output or trick scored like a correct output somewhere."""
        return tuple(row for row in self.rows if row.won)

    @property
    def accepted_wrongly(self) -> tuple[TrickResult, ...]:
        """The rows whose wrong output or trick was accepted as a demonstration somewhere."""
        return tuple(row for row in self.rows if row.accepted_wrongly)

    @property
    def passed(self) -> bool:
        """True when no trick or wrong output won or was accepted, and every score was computed."""
        return not self.winning and not self.accepted_wrongly and not self.missing

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-friendly dict of the report."""
        return record_dict(self, "metric passed call traced rows skipped missing")

    def __repr__(self) -> str:
        won = ", ".join(f"{r.trick}/{r.setting}" for r in self.winning) or "none"
        accepted = ", ".join(sorted({r.trick for r in self.accepted_wrongly}))
        return f"GamingReport(metric={self.metric!r}, rows={len(self.rows)}, won: {won}" + (
            f", accepted under a trace: {accepted})" if accepted else ")"
        )


def format_gaming(report: GamingReport) -> str:
    """Return a plain-text table of ``report``, one line per output and setting.

    The ``accepted`` column is the number of tasks where the metric, called under a trace,
    accepted the output as a DSPy demonstration, out of the tasks where that call returned
    (``-`` when the metric was not called under a trace).
    """
    if not isinstance(report, GamingReport):
        raise InputTypeError(f"report must be a GamingReport, got {type(report).__name__}")
    lines = [
        f"gaming check: {report.metric}",
        f"{'output':<26}{'role':<8}{'setting':<9}{'n':>4}{'score':>8}{'correct':>9}"
        f"{'wrong':>8}{'wins':>6}{'>wrong':>8}{'accepted':>10}",
    ]
    for row in report.rows:
        accepted = "-" if row.accepted is None else f"{row.accepted}/{row.traced}"
        flags = ("  WINS" if row.won else "") + ("  ACCEPTED" if row.accepted_wrongly else "")
        lines.append(
            f"{row.trick:<26}{row.role:<8}{row.setting:<9}{row.n:>4}{row.mean_score:>8.3f}"
            f"{row.mean_correct:>9.3f}{row.mean_wrong:>8.3f}{row.wins:>6}{row.above_wrong:>8}"
            f"{accepted:>10}{flags}"
        )
    won = sorted({row.trick for row in report.winning})
    lines.append(f"won: {', '.join(won)}" if won else "no trick or wrong output won")
    lines.extend(_trace_lines(report))
    if report.missing:
        lines.append(f"{len(report.missing)} score(s) could not be computed, first:")
        lines.append(f"  {report.missing[0]}")
    return "\n".join(lines)


def _trace_lines(report: GamingReport) -> list[str]:
    """Return the lines saying what the metric accepted as a demonstration under a trace."""
    if not report.traced:
        return [
            f"not called under a trace (call={report.call!r}): whether it accepts a wrong "
            "output as a DSPy demonstration was not checked (call='dspy' checks it)"
        ]
    accepted = [f"{r.trick} ({r.setting}) {r.accepted}/{r.traced}" for r in report.accepted_wrongly]
    refused = [
        f"{r.trick} ({r.setting}) {r.traced - (r.accepted or 0)}/{r.traced}"
        for r in report.rows
        if r.role == "correct" and r.traced > (r.accepted or 0)
    ]
    lines = [
        f"accepted as a demonstration under a trace: {', '.join(accepted)}"
        if accepted
        else "no trick or wrong output accepted as a demonstration under a trace"
    ]
    if refused:
        lines.append(f"correct outputs rejected under a trace: {', '.join(refused)}")
    return lines


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
    metric_threshold: float | None = None,
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

    With ``call="dspy"`` the metric is also called once per output and setting under a
    trace, as DSPy's bootstrapping (``BootstrapFewShot``, and the optimizers built on it)
    calls it to decide whether a run becomes a demonstration: ``metric(example, prediction,
    trace)`` with a trace holding one ``(predictor, inputs, prediction)`` step. The output is
    accepted when the value is truthy, or, with ``metric_threshold``, when it is at least
    the threshold, as DSPy reads it. A trick or wrong output accepted on any task fails the
    check (a wrong output must never become a demonstration); a correct output rejected is
    reported, not counted against the metric.

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
        Only ``"dspy"`` calls the metric under a trace as well.
    metric_threshold : float, optional
        With ``call="dspy"``: the ``metric_threshold`` of DSPy's ``BootstrapFewShot``
        (and MIPROv2): a value under a trace is accepted when it is at least this. None (or
        0, which DSPy treats alike) reads the value as a truth value.
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
        that scored at least as high as a correct output on some task,
        ``.accepted_wrongly`` those accepted as a demonstration under a trace on some task,
        ``.passed`` is True when there are none and every score was computed.

    Raises
    ------
    ValueError
        An unknown kind, trick or setting, no task to check, or ``metric_threshold``
        without ``call="dspy"``.
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
    if metric_threshold is not None:
        metric_threshold = check_real("metric_threshold", metric_threshold)
        if call != "dspy":
            raise InputValueError(
                f"metric_threshold applies with call='dspy' only, got call={call!r}"
            )
    fields = prediction_fields or (("ir",) if kind == "ir" else ("code",))
    caller = _caller(metric, call, fields)
    traced = _bootstrap_caller(metric, fields, metric_threshold) if call == "dspy" else None
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

    def score(job: tuple[Output, Setting]) -> _Scored:
        (index, _, output), setting = job
        return _score(caller, traced, _item(tasks[index], output, setting), setting)

    with ThreadPoolExecutor(max_workers=num_threads) as pool:
        scores = list(pool.map(score, jobs))
    metric_label = name or metric_name(metric)
    return _report(metric_label, tasks, jobs, scores, skipped, order=known, call=call)


class _Scored(NamedTuple):
    """What the metric said of one output in one setting."""

    value: float | None  # the score (None: not computed)
    why: str | None  # why there is no score
    accepted: bool | None = None  # accepted under a trace (None: not called, or it raised)
    trace_why: str | None = None  # why the call under a trace gave no verdict


def _why(exc: BaseException) -> str:
    return " ".join(f"{type(exc).__name__}: {exc}".split())[:300]


def _score(
    caller: Callable[[Any], Any],
    traced: Callable[[Any], bool] | None,
    item: Mapping[str, Any],
    setting: Setting,
) -> _Scored:
    """Score ``item`` and, where ``traced`` is given, ask whether it is a demonstration."""
    try:
        value, why = score_value(caller(item))
    except Exception as exc:  # the metric failed on this output: a missing score
        if setting == "ir" and not _valid_ir(item["ir"]):
            return _Scored(None, REJECTED + _why(exc))
        return _Scored(None, _why(exc))
    if value is None or traced is None:
        return _Scored(value, why)
    try:
        return _Scored(value, why, accepted=traced(item))
    except Exception as exc:  # DSPy counts it as an error and keeps no demonstration
        return _Scored(value, why, trace_why=_why(exc))


def _bootstrap_caller(
    metric: Callable[..., Any], fields: Sequence[str], metric_threshold: float | None
) -> Callable[[Any], bool]:
    """Return ``item -> accepted``: the metric called and read as DSPy's bootstrapping does.

    ``BootstrapFewShot`` calls ``metric(example, prediction, trace)`` with the trace of the
    run, a list of ``(predictor, inputs, outputs)`` steps, and keeps the run as a
    demonstration when the value is truthy, or at least ``metric_threshold`` when one is set.
    """
    import dspy

    try:
        predictor = dspy.Predict(f"prompt -> {', '.join(fields)}")
    except Exception:  # field names a signature cannot hold: the step's predictor is generic
        predictor = dspy.Predict("prompt -> output")

    def under_trace(example: Any, prediction: Any) -> bool:
        trace = [(predictor, {"prompt": example.get("prompt")}, prediction)]
        value = metric(example, prediction, trace)
        if metric_threshold:
            return bool(value >= metric_threshold)
        return bool(value)

    return _caller(under_trace, "dspy", fields)


Cell = tuple[Trick, float, bool | None]  # (what it is, its score, accepted under a trace)


def _report(
    name: str,
    tasks: Sequence[Mapping[str, Any]],
    jobs: Sequence[tuple[Output, Setting]],
    scores: Sequence[_Scored],
    skipped: Sequence[str],
    *,
    order: Sequence[str],
    call: str,
) -> GamingReport:
    table: dict[tuple[str, int], dict[str, Cell]] = {}
    missing: list[str] = []
    skipped = list(skipped)
    for ((index, made, _), setting), scored in zip(jobs, scores, strict=True):
        where = f"{tasks[index].get('id', index)}: {made.name}"
        if scored.trace_why is not None:
            missing.append(f"{where} ({setting}, under a trace): {scored.trace_why}")
        if scored.value is not None:
            table.setdefault((setting, index), {})[made.name] = (
                made,
                scored.value,
                scored.accepted,
            )
        elif scored.why is not None and scored.why.startswith(REJECTED):
            skipped.append(f"{where}: {scored.why}")  # refusing an invalid IR is no missing score
        else:
            missing.append(f"{where} ({setting}): {scored.why}")
    settings = list(dict.fromkeys(setting for (_, setting) in jobs))
    present = {made.name for ((_, made, _), _) in jobs}
    tricks = [name for name in order if name in present]
    traced = call == "dspy"
    rows = [
        row
        for setting in settings
        for trick_name in tricks
        if (row := _row(table, setting, trick_name, traced=traced)) is not None
    ]
    return GamingReport(
        metric=name, rows=tuple(rows), skipped=tuple(skipped), missing=tuple(missing), call=call
    )


def _row(
    table: Mapping[tuple[str, int], Mapping[str, Cell]],
    setting: str,
    trick_name: str,
    *,
    traced: bool,
) -> TrickResult | None:
    """Return the row of one output in one setting (None when it was never scored)."""
    mine: list[float] = []
    correct: list[float] = []
    wrong: list[float] = []
    verdicts: list[bool] = []
    wins = above = 0
    trick: Trick | None = None
    for (where, _), cell in table.items():
        if where != setting or trick_name not in cell:
            continue
        trick, value, accepted = cell[trick_name]
        rights = [v for t, v, _ in cell.values() if t.role == "correct"]
        wrongs = [v for t, v, _ in cell.values() if t.role == "wrong"]
        mine.append(value)
        if accepted is not None:
            verdicts.append(accepted)
        if rights:
            correct.append(statistics.fmean(rights))
            wins += trick.role != "correct" and value >= min(rights)
        if wrongs:
            wrong.append(statistics.fmean(wrongs))
            above += trick.role != "wrong" and value > max(wrongs)
    if trick is None:
        return None
    return TrickResult(
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
        accepted=sum(verdicts) if traced else None,
        traced=len(verdicts),
    )
