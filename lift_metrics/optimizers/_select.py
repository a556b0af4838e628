"""Choosing one of several sampled code answers without tests: checks, then agreement.

The code step can draw several answers for one request (:class:`LiftPipeline`'s
``code_samples``). :func:`choose_code` picks one without looking at any test: it drops answers
that are not code (:func:`lift_metrics.code.degenerate_kind`) or do not parse, runs the rest in
the sandbox on a few probe inputs made from the header's type hints (:func:`probe_inputs`), and
keeps the answer whose results agree with the most other answers' (minimum-Bayes-risk
selection by execution, as in MBR-exec and CodeT: independent samples that compute the same
values are more often right than an answer no other sample agrees with). Crashes count for
nothing; raising ``ValueError`` counts like a value, since requests often ask for it. Ties go to
the earlier answer, so the greedy answer (the first) wins when nothing agrees.

Nothing here imports dspy.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from lift_metrics import _pyast as pyast
from lift_metrics._pyast import parses
from lift_metrics.code import degenerate_kind

__all__ = ["MAX_CODE_SAMPLES", "PROBE_VALUES", "CodeChoice", "choose_code", "probe_inputs"]

_LIST_INT: tuple[Any, ...] = ([], [3], [1, 2, 2, 5], [4, -1, 9, 4, 0], [10, 20, 30], [-2, -2])
_DICT_STR_INT: tuple[Any, ...] = ({}, {"a": 1}, {"a": 2, "b": 3}, {"x": 0, "y": -4})

#: Probe values per type hint (as :func:`ast.unparse` writes it). A parameter whose hint is
#: missing or not listed leaves the request without probes.
PROBE_VALUES: dict[str, tuple[Any, ...]] = {
    "int": (0, 1, 7, -3, 12, 5),
    "float": (0.0, 2.5, -1.5, 10.0, 1.0, 3.25),
    "bool": (True, False),
    "str": ("", "a", "hello world", "Racecar", "abc 123", "AbBa"),
    "list": _LIST_INT,
    "list[int]": _LIST_INT,
    "list[float]": ([], [1.5], [2.0, 3.5, -1.0], [0.25, 0.25]),
    "list[str]": ([], ["a"], ["hello", "world", "hello"], ["b", "A", "c"]),
    "list[list[int]]": ([], [[1, 2], [3]], [[], [4, 5, 6]], [[7]]),
    "dict": _DICT_STR_INT,
    "dict[str, int]": _DICT_STR_INT,
    "dict[str, str]": ({}, {"a": "x"}, {"a": "1", "b": "2"}),
}

#: Most answers the code step may draw per request.
MAX_CODE_SAMPLES = 32
#: Probe inputs per request.
N_PROBES = 6
#: Time limit for running one answer on all its probes, in seconds.
PROBE_TIMEOUT_S = 1.0

#: ``run(code, entry_point, probes)`` -> one key per probe: ``"=" + repr(value)``,
#: ``"!ValueError"``, or ``None`` for a crash or a probe that did not run.
ProbeRunner = Callable[[str, str, list[dict[str, Any]]], list[str | None]]


@dataclass(frozen=True)
class CodeChoice:
    """The answer :func:`choose_code` kept, and why.

    Attributes
    ----------
    index : int
        Position of the kept answer among the candidates (0 is the first, greedy one).
    code : str
        The kept answer (``""`` when there were no candidates).
    reason : str
        One line: how many answers were code, and how the choice was made.
    """

    index: int
    code: str
    reason: str


def probe_inputs(header: str, n: int = N_PROBES) -> list[dict[str, Any]] | None:
    """Make ``n`` keyword-argument dicts for the function that ``header`` declares.

    Parameters
    ----------
    header : str
        A ``def`` line such as ``"def add(a: int, b: int):"``.
    n : int, default 6
        How many probes.

    Returns
    -------
    list of dict or None
        Probe inputs built from :data:`PROBE_VALUES` (parameter ``p`` of probe ``j`` takes
        value ``(j * (p + 1) + p) % len(values)``, so that parameters vary together and
        apart), or ``None`` when the header does not parse or a parameter has no listed type
        hint. A function without parameters gets one empty probe.

    Examples
    --------
    >>> probe_inputs("def add(a: int, b: int):", 3)
    [{'a': 0, 'b': 1}, {'a': 1, 'b': -3}, {'a': 7, 'b': 5}]
    >>> probe_inputs("def f(x):") is None
    True
    """
    try:
        tree = pyast.parse(header.strip() + "\n    pass\n")
    except (SyntaxError, ValueError):
        return None
    function = tree.body[0] if tree.body else None
    if not isinstance(function, ast.FunctionDef):
        return None
    args = function.args
    if args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs:
        return None
    tables = []
    for arg in args.args:
        hint = ast.unparse(arg.annotation) if arg.annotation is not None else None
        if hint not in PROBE_VALUES:
            return None
        tables.append((arg.arg, PROBE_VALUES[hint]))
    if not tables:
        return [{}]
    return [
        {name: values[(j * (p + 1) + p) % len(values)] for p, (name, values) in enumerate(tables)}
        for j in range(n)
    ]


def sandbox_probe_runner(
    code: str, entry_point: str, probes: list[dict[str, Any]]
) -> list[str | None]:
    """Run ``code``'s ``entry_point`` on each probe in the default sandbox (one process)."""
    from lift_metrics.sandbox import get_default_sandbox

    result = get_default_sandbox().run_tests(
        code,
        [(probe, None) for probe in probes],
        entry_point=entry_point,
        timeout_s=PROBE_TIMEOUT_S,
    )
    keys: list[str | None] = [None] * len(probes)
    for outcome in result.outcomes:
        if outcome.actual_repr is not None:
            keys[outcome.index] = "=" + outcome.actual_repr
        elif outcome.error is not None and outcome.error.startswith("ValueError"):
            keys[outcome.index] = "!ValueError"
    return keys


def choose_code(
    header: str,
    candidates: Sequence[str],
    *,
    entry_point: str,
    run: ProbeRunner | None = None,
) -> CodeChoice:
    r"""Choose one of the code step's answers for one request, without tests.

    Parameters
    ----------
    header : str
        The ``def`` line the answers complete (it gives the probe inputs' types).
    candidates : sequence of str
        The assembled answers, the greedy one first.
    entry_point : str
        The function's name.
    run : callable or None, default None
        How to run an answer on the probes (see ``ProbeRunner``); ``None`` runs it in the
        default sandbox.

    Returns
    -------
    CodeChoice
        With one candidate, or when none is code, the first. Otherwise the code answer with
        the most agreement: a candidate's score is the number of (other code answer, probe)
        pairs with the same value (or the same ``ValueError``); an answer that returns a value
        on no probe ranks below every answer that does; ties go to the earlier answer.
        Without probes (a parameter without a usable type hint), the first code answer.

    Examples
    --------
    >>> answers = ["def f(x: int):\n    return x / 0\n",
    ...            "def f(x: int):\n    return x + 1\n",
    ...            "def f(x: int):\n    return 1 + x\n"]
    >>> fake = lambda code, name, probes: [
    ...     None if "/ 0" in code else "=" + repr(p["x"] + 1) for p in probes]
    >>> choose_code("def f(x: int):", answers, entry_point="f", run=fake).index
    1
    """
    if not candidates:
        return CodeChoice(0, "", "no answers")
    valid = [
        i
        for i, code in enumerate(candidates)
        if code.strip() and parses(code) and degenerate_kind(code, entry_point=entry_point) is None
    ]
    head = f"{len(valid)} of {len(candidates)} answers are code"
    if len(candidates) == 1 or not valid:
        return CodeChoice(0, candidates[0], head)
    probes = probe_inputs(header)
    if probes is None:
        return CodeChoice(valid[0], candidates[valid[0]], f"{head}; no probes: kept the first")
    runner = sandbox_probe_runner if run is None else run
    keys = {i: runner(candidates[i], entry_point, probes) for i in valid}

    def score(i: int) -> tuple[bool, int, int]:
        agree = sum(
            1
            for other in valid
            if other != i
            for mine, theirs in zip(keys[i], keys[other], strict=True)
            if mine is not None and mine == theirs
        )
        returns = any(key is not None and key.startswith("=") for key in keys[i])
        return returns, agree, -i

    best = max(valid, key=score)
    returns, agree, _ = score(best)
    how = f"agreement {agree} on {len(probes)} probes" if returns else "no answer returned a value"
    return CodeChoice(best, candidates[best], f"{head}; kept answer {best} ({how})")
