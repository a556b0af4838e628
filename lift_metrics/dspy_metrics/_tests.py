"""The test-running metric objects: :class:`TestPassRate` and :class:`AllTestsPass` (pass@1).

Both are the registered ``test_pass_rate`` metric's object (its core is
:func:`lift_metrics.code.test_pass_rate_breakdown`, as for the plain function), with the
fields named by the ``*_field`` keywords and the failing tests spelled out in the reasons.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from typing import Unpack

    from lift_metrics.dspy_metrics._code import _RunOptions


from lift_metrics._registry import registered_metric
from lift_metrics.dspy_metrics._code import _CodePart
from lift_metrics.dspy_metrics._derived import Source, _checked_score, _SpecMetric
from lift_metrics.dspy_metrics._fields import _as_tests, _ExampleError


class TestPassRate(_CodePart, _SpecMetric):
    r"""The share of tests a prediction's code passes, as a DSPy metric (pass@1 as objective).

    The code is read as :func:`lift_metrics.code.code_quality` reads it (fences and prose
    removed, ``prompt + answer`` for a body-only completion) and run in the sandbox; an
    answer that is not code (:func:`lift_metrics.code.degenerate_kind`) is not run and scores
    0. No reference is needed. For GEPA the feedback lists each failing test: input, expected
    and actual value for I/O cases, the failing assertion and its values for a check script.

    Parameters
    ----------
    tests_field : str, default "tests"
        Example field with the tests, as in :class:`CodeQuality`. An example without tests
        raises ValueError: a pass rate without tests is not a number (never a pass).
    entry_point_field, prompt_field, code_field, sandbox, timeout_s
        As in :class:`CodeQuality`.
    threshold : float, default 1.0
        ``score >= threshold`` accepts a demonstration when bootstrapping: by default only
        code that passes every test.
    require_all_tests, reveal_expected
        As in :class:`CodeQuality`: under a trace, code that fails a test is rejected
        whatever the threshold; GEPA's feedback shows no expected value unless
        ``reveal_expected=True``.
    history_size, cache_size, trace_returns
        As in :class:`IRQuality`.

    Notes
    -----
    ``score = k / n`` for ``k`` of ``n`` tests passed (a check script is one test). A
    timeout, crash, ``sys.exit``, memory blow-up or missing entry point fails the tests; a
    sandbox that cannot run at all raises :class:`lift_metrics.sandbox.
    SandboxUnavailableError`.

    Examples
    --------
    >>> example = {"tests": [{"inputs": {"a": 1, "b": 2}, "expected": 3},
    ...                      {"inputs": {"a": 0, "b": 0}, "expected": 0}]}
    >>> metric = TestPassRate()
    >>> metric(example, {"code": "def add(a, b):\n    return a * b\n"})
    0.5
    >>> metric(example, {"code": "{code}"})
    0.0
    >>> AllTestsPass()(example, {"code": "```python\ndef add(a, b):\n    return a + b\n```"})
    1.0
    """

    __test__ = False  # pytest: not a test class
    _strict = False
    _tests_required = True
    _part = "tests"
    _result_field = "code"

    def __init__(
        self,
        *,
        tests_field: str = "tests",
        threshold: float = 1.0,
        **options: Unpack[_RunOptions],
    ) -> None:
        super().__init__(tests_field=tests_field, threshold=threshold, **options)

        def example(field: str | None) -> str | None:
            return None if field is None else f"example.{field}"

        sources = {
            "predicted_code": f"prediction.{self.code_field}",
            "tests": example(self.tests_field),
            "entry_point": example(self.entry_point_field),
            "prompt": example(self.prompt_field),
        }
        self._bind_fields(registered_metric("test_pass_rate"), sources)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(tests_field={self.tests_field!r}, "
            f"code_field={self.code_field!r}, threshold={self.threshold})"
        )

    def _scorer(self) -> Any:
        return self._registered_scorer(
            "test_pass_rate", sandbox=self._sandbox(), timeout_s=self.timeout_s
        )

    def _read_field(self, field: Any, source: Source, raw: Any) -> Any:
        """Return one argument: the code, the tests (none is an error) or a task text."""
        from lift_metrics.code import normalize_tests

        if field.key == "predicted_code":
            return self._predicted_code(raw)
        if field.key == "tests":
            name = type(self).__name__
            tests = _as_tests(name, raw)
            if normalize_tests(tests).count == 0:
                raise _ExampleError(
                    f"{name}: example.{self.tests_field} holds no tests; a pass rate needs "
                    "tests (no tests is absent evidence, never a pass)"
                )
            return tests
        return self._task_value(None if source is None else source[1], raw)

    def _naming_hint(self, field: Any) -> str:
        return f"pass the right field name to {type(self).__name__}(...)"

    def _score_of(self, result: Any) -> float:
        rate = _checked_score(self.name, result)
        return (1.0 if rate >= 1.0 else 0.0) if self._strict else rate

    def _verdict(self, example: Any, result: Any) -> bool | None:
        return result is not None and result.tests_passed >= result.tests_total

    def _lines(self, result: Any, arguments: Mapping[str, Any]) -> tuple[list[str], list[str]]:
        reasons, hints = self._code_lines(result, None, arguments["entry_point"], "")
        if self._strict and result.score < 1.0 and result.tests_total:
            line = (
                f"tests: {result.tests_passed} of {result.tests_total} passed; every test must pass"
            )
            reasons.insert(0, line)
            hints.insert(0, line)
        return reasons, hints


class AllTestsPass(TestPassRate):
    r"""1.0 when a prediction's code passes every test, else 0.0 (strict pass@1), for DSPy.

    The code is read as :class:`TestPassRate` reads it; the feedback lists the failing tests
    in the same way.

    Parameters
    ----------
    tests_field : str, default "tests"
        Example field with the tests; an example without tests raises ValueError.
    entry_point_field : str or None, default "entry_point"
        Optional example field naming the function to test (absent: the only top-level one).
    prompt_field : str or None, default "prompt"
        Optional example field with a HumanEval-style prompt that completes a body-only
        answer (absent or None: not used).
    code_field : str, default "code"
        Prediction field with the generated code.
    sandbox, timeout_s
        As in :class:`CodeQuality` (defaults: the process-wide sandbox and its time limit).
    threshold : float, default 1.0
        ``score >= threshold`` accepts a demonstration when bootstrapping.
    require_all_tests, reveal_expected
        As in :class:`CodeQuality`.
    history_size, cache_size, trace_returns
        As in :class:`IRQuality`.

    Examples
    --------
    >>> example = {"tests": "def check(candidate):\n    assert candidate(2) == 4\n",
    ...            "entry_point": "double"}
    >>> AllTestsPass()(example, {"code": "def double(x):\n    return x + 2\n"})
    1.0
    >>> AllTestsPass()(example, {"code": "def double(x):\n    return x * 3\n"})
    0.0
    """

    __test__ = False
    _strict = True
