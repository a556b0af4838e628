"""What an optimizer run did to the generated code: test results, degenerate outputs, files.

The reference pipeline's job is code that passes the task's tests. Besides the optimizer's
metric, every evaluation of a run therefore scores

- ``tests_passed``: the share of the task's I/O tests the generated function passes
  (:func:`lift_metrics.code.test_pass_rate`, run in the sandbox), and
- ``tasks_solved``: 1 when it passes all of them, else 0,

so that the run's paired deltas (:func:`lift_metrics.stats.paired_bootstrap`) give the mean
share of tests passed and the share of tasks solved, each with a paired interval. This module
also classifies degenerate outputs, writes every generated program to ``code/<arm>/`` and
describes the optimized predictors (instruction and demonstrations).

Importing it does not import dspy.
"""

from __future__ import annotations

import ast
import threading
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from lift_metrics import _pyast as pyast
from lift_metrics._io import atomic_write_text
from lift_metrics.errors import InputTypeError

__all__ = [
    "DEGENERATE_KINDS",
    "PassRateMetric",
    "code_summary",
    "degenerate_kind",
    "predictor_summary",
    "save_generated_code",
]

#: Kinds of degenerate output, in the order they are checked.
DEGENERATE_KINDS: tuple[str, ...] = ("empty", "placeholder", "no_function")

_CACHE_SIZE = 512
# test results shared by all PassRateMetric objects: (code, tests, entry point) -> share passed
_RATES: dict[tuple[str, str, str | None], float] = {}
_RATES_LOCK = threading.Lock()


class PassRateMetric:
    r"""The share of an example's tests that ``prediction.code`` passes, as a DSPy metric.

    Parameters
    ----------
    all_or_nothing : bool, default False
        Score 1.0 only when every test passes (else 0.0) instead of the share passed.

    Notes
    -----
    The example needs ``tests`` (``(kwargs, expected)`` pairs) and ``entry_point``; code
    that is missing, ``None`` or not a string scores 0. Results are cached per (code, tests,
    entry point), so the two instances of a run execute each program once per repetition
    of the same code. With a ``trace`` (bootstrapping) it answers ``score >= 1`` / ``> 0``.

    Examples
    --------
    >>> from types import SimpleNamespace as NS
    >>> example = NS(tests=[({"a": 1, "b": 2}, 3), ({"a": 0, "b": 0}, 1)], entry_point="add")
    >>> prediction = NS(code="def add(a, b):\n    return a + b\n")
    >>> solved = PassRateMetric(all_or_nothing=True)
    >>> PassRateMetric()(example, prediction), solved(example, prediction)
    (0.5, 0.0)
    """

    def __init__(self, *, all_or_nothing: bool = False) -> None:
        if not isinstance(all_or_nothing, bool):
            raise InputTypeError(
                f"all_or_nothing must be True or False, got {type(all_or_nothing).__name__}"
            )
        self.all_or_nothing = all_or_nothing

    def __repr__(self) -> str:
        return f"PassRateMetric(all_or_nothing={self.all_or_nothing})"

    def rate(self, example: Any, prediction: Any) -> float:
        """Return the share of the example's tests the prediction's code passes."""
        from lift_metrics.code import test_pass_rate

        code = getattr(prediction, "code", None)
        if not isinstance(code, str) or not code.strip():
            return 0.0
        tests = [(dict(kwargs), expected) for kwargs, expected in example.tests]
        entry_point = getattr(example, "entry_point", None)
        key = (code, repr(tests), entry_point)
        with _RATES_LOCK:
            cached = _RATES.get(key)
        if cached is not None:
            return cached
        rate = float(test_pass_rate(code, tests, entry_point=entry_point))
        with _RATES_LOCK:
            if len(_RATES) >= _CACHE_SIZE:
                _RATES.pop(next(iter(_RATES)))
            _RATES[key] = rate
        return rate

    def __call__(self, example: Any, prediction: Any, trace: Any = None, *_: Any) -> float | bool:
        """Return the score; with a ``trace`` (DSPy bootstrapping) whether it is above 0."""
        rate = self.rate(example, prediction)
        score = (1.0 if rate >= 1.0 else 0.0) if self.all_or_nothing else rate
        return score if trace is None else score > 0.0


def _defines(code: str, name: str | None) -> bool:
    try:
        tree = pyast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    functions = {n.name for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}
    return name in functions if name else bool(functions)


def degenerate_kind(outputs: Mapping[str, Any], entry_point: str | None = None) -> str | None:
    r"""How a pipeline output is degenerate, or ``None`` when it is a real attempt.

    Parameters
    ----------
    outputs : mapping
        The prediction's fields (``code`` and, from the reference pipeline, ``body``: the
        code step's raw answer).
    entry_point : str or None
        The function the tests call.

    Returns
    -------
    str or None
        ``"empty"`` (no code), ``"placeholder"`` (the answer or the code is a copy of a
        template placeholder such as ``{code}``), ``"no_function"`` (the code does not
        parse or does not define ``entry_point``), else ``None``.

    Examples
    --------
    >>> degenerate_kind({"code": "{code}"}), degenerate_kind({"code": ""})
    ('placeholder', 'empty')
    >>> degenerate_kind({"code": "def g():\n    return 1\n"}, "f")
    'no_function'
    >>> degenerate_kind({"code": "def f():\n    return 1\n"}, "f") is None
    True
    """
    from lift_metrics.optimizers._functions import is_placeholder

    code = outputs.get("code")
    body = outputs.get("body")
    if isinstance(body, str) and is_placeholder(body):
        return "placeholder"
    if not isinstance(code, str) or not code.strip():
        return "empty"
    if is_placeholder(code):
        return "placeholder"
    if not _defines(code, entry_point):
        return "no_function"
    return None


def _entry_points(examples: Sequence[Any]) -> dict[str, str | None]:
    return {str(e.get("task_id")): e.get("entry_point") for e in examples}


def code_summary(evaluation: Any, examples: Sequence[Any]) -> dict[str, Any]:
    """Per-arm code figures of an evaluation: tasks solved, tests passed, degenerate outputs.

    Parameters
    ----------
    evaluation : Evaluation
        An evaluation whose metrics include ``tests_passed`` and ``tasks_solved``.
    examples : sequence of dspy.Example
        The evaluated examples (for the entry points).

    Returns
    -------
    dict
        ``n_tasks``, ``tasks_solved`` (tasks whose tests all pass, averaged over runs),
        ``solved_share``, ``mean_tests_passed`` (mean share of tests passed),
        ``degenerate`` (count per kind of :data:`DEGENERATE_KINDS` over all runs) and
        ``degenerate_tasks`` (task ids per kind).
    """
    entry = _entry_points(examples)
    kinds: Counter[str] = Counter()
    tasks: dict[str, list[str]] = {kind: [] for kind in DEGENERATE_KINDS}
    for run in evaluation.runs:
        for result in run:
            kind = degenerate_kind(result.outputs, entry.get(result.task_id))
            if kind is not None:
                kinds[kind] += 1
                if result.task_id not in tasks[kind]:
                    tasks[kind].append(result.task_id)
    n = len(evaluation.examples)
    names = evaluation.metric_names
    solved = (
        sum(e.mean_scores["tasks_solved"] for e in evaluation.examples)
        if "tasks_solved" in names
        else None
    )
    passed = (
        sum(e.mean_scores["tests_passed"] for e in evaluation.examples) / n
        if "tests_passed" in names and n
        else None
    )
    return {
        "n_tasks": n,
        "tasks_solved": solved,
        "solved_share": None if solved is None or not n else solved / n,
        "mean_tests_passed": passed,
        "degenerate": {kind: kinds[kind] for kind in DEGENERATE_KINDS},
        "degenerate_tasks": tasks,
    }


def save_generated_code(evaluation: Any, folder: str | Path) -> list[Path]:
    r"""Write each task's generated code to ``folder/<task_id>.py``, atomically.

    Runs after the first write ``<task_id>_run<r>.py``; a task without code gets an empty file.

    Examples
    --------
    >>> import tempfile, dspy
    >>> from lift_metrics.optimizers._evaluate import evaluate_program
    >>> ev = evaluate_program(lambda prompt: dspy.Prediction(code="x = 1\n"),
    ...                       [dspy.Example(prompt="p", task_id="t1").with_inputs("prompt")],
    ...                       metrics={"one": lambda ex, pred: 1.0})
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     [p.name for p in save_generated_code(ev, tmp)]
    ['t1.py']
    """
    target = Path(folder)
    written = []
    for index, run in enumerate(evaluation.runs):
        for result in run:
            code = result.outputs.get("code")
            name = result.task_id if index == 0 else f"{result.task_id}_run{index + 1}"
            safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in name)
            text = code if isinstance(code, str) else ""
            written.append(atomic_write_text(target / f"{safe}.py", text))
    return written


def _demo_record(demo: Any) -> dict[str, Any]:
    data = dict(demo.items()) if hasattr(demo, "items") else dict(demo)
    record: dict[str, Any] = {}
    for key in ("task_id", "prompt", "header", "body", "ir", "augmented"):
        if key in data:
            value = data[key]
            if hasattr(value, "model_dump_json"):
                value = value.model_dump_json()
            record[key] = value if isinstance(value, str | int | float | bool) else str(value)
    return record


def predictor_summary(program: Any) -> dict[str, Any]:
    """Per predictor of ``program``: its instruction and its demonstrations.

    Returns
    -------
    dict
        ``{name: {"instructions": str, "demos": [{"task_id", "prompt", ...}, ...]}}``;
        a demonstration lists its task id (labelled demonstrations come from the training
        split), the prompt and the output fields of that step.
    """
    out: dict[str, Any] = {}
    for name, predictor in program.named_predictors():
        out[name] = {
            "instructions": predictor.signature.instructions,
            "demos": [_demo_record(d) for d in getattr(predictor, "demos", []) or []],
        }
    return out
