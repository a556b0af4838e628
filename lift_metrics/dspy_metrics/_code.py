"""The code metric object, :class:`CodeQuality`, and the code part shared with the composites."""

from __future__ import annotations

import dataclasses
import types
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from lift_metrics._checks import (
    check_bool,
    check_timeout,
)
from lift_metrics._profiles import FAIL_CEILING
from lift_metrics.code import DEFAULT_CODE_QUALITY_WEIGHTS

if TYPE_CHECKING:
    from typing import Unpack

    from lift_metrics._profiles import CalibrationProfile
    from lift_metrics.code import CodeQualityOptions
    from lift_metrics.dspy_metrics._profiles import ProfileLike
    from lift_metrics.sandbox import Sandbox
    from lift_metrics.similarity import Embedder


from lift_metrics._registry import registered_metric
from lift_metrics.dspy_metrics._cache import _cache_key
from lift_metrics.dspy_metrics._derived import Source, _SpecMetric
from lift_metrics.dspy_metrics._feedback import _failed_tests, _tests_line
from lift_metrics.dspy_metrics._fields import (
    _MISSING,
    _agreed_everywhere,
    _all_tests_passed,
    _as_tests,
    _check_embedder,
    _check_field,
    _check_sandbox,
    _example_field,
    _ExampleError,
    _PartFailedError,
    _prediction_field,
    _read,
    _score_part,
)
from lift_metrics.dspy_metrics._profiles import (
    _weights_and_options,
)
from lift_metrics.dspy_metrics._protocol import _Metric, _ProtocolOptions


class _RunOptions(_ProtocolOptions, total=False):
    """The keywords of running a prediction's code: see :class:`_CodePart`."""

    entry_point_field: str | None
    prompt_field: str | None
    code_field: str
    sandbox: Sandbox | None
    timeout_s: float | None
    require_all_tests: bool


class _CodeOptions(_RunOptions, total=False):
    """:class:`_RunOptions` and the tests field, which None turns off (no tests)."""

    tests_field: str | None


class _CodePart(_Metric):
    """Scoring of the code part, shared by CodeQuality, TestPassRate, EndToEnd and Aggregate.

    The constructor owns what running the code reads (its fields, the sandbox, the time
    limit) and ``require_all_tests``; :meth:`_init_code` binds the reference and the scoring.
    """

    embedder: Embedder | None
    #: True where an example without tests is an error (the tests field cannot be None)
    _tests_required = False

    def __init__(
        self,
        *,
        tests_field: str | None = "tests",
        entry_point_field: str | None = "entry_point",
        prompt_field: str | None = "prompt",
        code_field: str = "code",
        sandbox: Sandbox | None = None,
        timeout_s: float | None = None,
        threshold: float | None,
        require_all_tests: bool = True,
        **options: Unpack[_ProtocolOptions],
    ) -> None:
        super().__init__(threshold=threshold, **options)
        self.require_all_tests = check_bool("require_all_tests", require_all_tests)
        optional = not self._tests_required
        self.tests_field = _check_field("tests_field", tests_field, optional=optional)
        self.entry_point_field = _check_field("entry_point_field", entry_point_field, optional=True)
        self.prompt_field = _check_field("prompt_field", prompt_field, optional=True)
        self.code_field = _check_field("code_field", code_field)
        self.timeout_s = check_timeout(timeout_s)
        self.sandbox = _check_sandbox(sandbox)

    def _init_code(
        self,
        *,
        expected_code_field: str,
        code_weights: Mapping[str, float] | None,
        code_profile: ProfileLike | CodeQualityOptions | None,
        embedder: Embedder | None,
        names: tuple[str, str] = ("code_weights", "code_profile"),
        behaviour: bool | None = None,
    ) -> None:
        """Check and bind the reference field, the code weights or profile and the embedder."""
        from lift_metrics.code import CodeQualityOptions, code_quality_options

        self.expected_code_field = _check_field("expected_code_field", expected_code_field)
        self.code_profile: CalibrationProfile | None = None
        if isinstance(code_profile, CodeQualityOptions) or code_profile in (
            None,
            "validated",
            "seed",
        ):
            options = code_quality_options(
                code_profile,
                weights=code_weights,
                timeout_s=self.timeout_s,
                behaviour=behaviour,
                name=names[1],
                weights_name="code_weights",  # the attribute's name, as the IR part does
            )
        else:
            _, _, resolved = _weights_and_options(
                "code_quality",
                weights=code_weights,
                profile=code_profile,
                weights_name=names[0],
                profile_name=names[1],
                defaults=DEFAULT_CODE_QUALITY_WEIGHTS,
            )
            self.code_profile = resolved
            options = code_quality_options(
                resolved, timeout_s=self.timeout_s, behaviour=behaviour, name=names[1]
            )
            label = "shipped" if code_profile == "shipped" else options.profile
            options = dataclasses.replace(options, profile=label)
        self.code_quality_options: CodeQualityOptions = options
        self.code_weights: dict[str, float] = dict(options.weights or {})
        self._code_options = types.MappingProxyType(options.metric_options())
        self.embedder = _check_embedder(embedder)

    def _failing_code_ceiling(self) -> float:
        """Return the most the code part can score when the code fails every test."""
        if self.code_quality_options.validated:
            return FAIL_CEILING
        return 1.0 - self.code_weights.get("tests", 0.0)

    @property
    def code_options(self) -> Mapping[str, Any]:
        """The weighted-sum options besides the weights (read-only).

        Empty for the validated profile and for a weighted sum without them; else
        ``similarity_floor``, ``wrong_answer_gate`` and ``stub_cap`` where set. The whole
        configuration is :attr:`code_quality_options`.
        """
        return self._code_options

    def _code_inputs(self, example: Any) -> tuple[str, Any, str | None, str | None]:
        """Return (reference, tests, entry point, prompt) from the example; config errors raise."""
        name = type(self).__name__
        expected = self._expected_code(_example_field(name, example, str(self.expected_code_field)))
        tests: Any = []
        if self.tests_field is not None:
            tests = _as_tests(name, _example_field(name, example, self.tests_field))
        return expected, tests, *self._task_fields(example)

    def _expected_code(self, value: Any) -> str:
        """Return the example's reference code; one that is not a str raises, naming the field."""
        if not isinstance(value, str):
            raise _ExampleError(
                f"{type(self).__name__}: example.{self.expected_code_field} must be a str, "
                f"got {type(value).__name__}"
            )
        return value

    def _task_fields(self, example: Any) -> tuple[str | None, str | None]:
        """Return the optional entry point and prompt of the example (absent: None)."""
        found = [
            self._task_value(field, _MISSING if field is None else _read(example, field))
            for field in (self.entry_point_field, self.prompt_field)
        ]
        return found[0], found[1]

    def _task_value(self, field: str | None, value: Any) -> str | None:
        """Return an optional text of the example (absent, None or empty: None)."""
        if value is _MISSING or value is None or value == "":
            return None
        if not isinstance(value, str):
            raise _ExampleError(
                f"{type(self).__name__}: example.{field} must be a str, got {type(value).__name__}"
            )
        return value

    def _code_scorer(self) -> Any:
        """Return the ``code_quality`` scorer with this object's options, embedder and sandbox."""
        return self._registered_scorer(
            "code_quality",
            profile=self.code_quality_options,
            embedder=self.embedder,
            sandbox=self._sandbox(),
        )

    def _score_code(
        self, example: Any, prediction: Any
    ) -> tuple[Any, float, str | None, str | None]:
        expected, tests, entry_point, prompt = self._code_inputs(example)
        arguments = {
            "expected": expected,
            "tests": tests,
            "entry_point": entry_point,
            "prompt": prompt,
        }
        result, failure = _score_part(
            "code",
            lambda: self._run_code(
                prediction,
                ("code", expected, _cache_key(tests), entry_point, prompt),
                lambda code: self._code_scorer().compute({"predicted": code, **arguments}),
            ),
            core="code_quality",
            log="code_quality raised; scoring the code part 0",
        )
        return result, 0.0 if result is None else float(result.score), failure, entry_point

    def _run_code(self, prediction: Any, key: tuple[Any, ...], run: Callable[[str], Any]) -> Any:
        """Return ``run(code)`` for the prediction's code, from the cache when it holds it.

        ``key`` with the code appended is the cache key. A run that crashed is not kept:
        a crash may be the machine's fault. A prediction without code as a str raises
        :class:`_PartFailedError`.
        """
        code = self._predicted_code(_prediction_field(prediction, str(self.code_field)))
        return self._cache.fetch((*key, code), lambda: run(code))  # a crash is not kept

    def _predicted_code(self, value: Any) -> str:
        """Return the prediction's code; one that is not a str raises :class:`_PartFailedError`."""
        if not isinstance(value, str):
            raise _PartFailedError(
                f"prediction.{self.code_field} is a {type(value).__name__}, not a str"
            )
        return value

    def _runs_tests(self) -> bool:
        """Return False when the code part is configured not to run tests (tests weight 0)."""
        options = getattr(self, "code_quality_options", None)
        if options is None or options.validated:
            return True
        return self.code_weights.get("tests", 0.0) > 0

    def _tests_verdict(self, example: Any, code: Any) -> bool | None:
        """Return whether the code passed every test and agreed on every generated input.

        None when neither was checked: no tests (or none are run) and no generated input
        compared with the reference. Code that could not be run fails the example's tests.
        """
        from lift_metrics.code import normalize_tests

        if self.tests_field is None or not self._runs_tests():
            return _agreed_everywhere(code)
        if isinstance(getattr(code, "tests_total", None), int):
            return _all_tests_passed(code)
        name = type(self).__name__
        tests = _as_tests(name, _example_field(name, example, self.tests_field))
        return None if normalize_tests(tests).count == 0 else False

    def _code_lines(
        self, code: Any, failure: str | None, entry_point: str | None, prefix: str
    ) -> tuple[list[str], list[str]]:
        """Return the code part's reasons and hints: the failure alone when it has one."""
        if failure:
            return [failure], [failure]
        return (
            self._code_reasons(code, entry_point, prefix),
            self._code_reasons(code, entry_point, prefix, reveal_expected=False),
        )

    @staticmethod
    def _code_reasons(
        code: Any, entry_point: str | None, prefix: str, *, reveal_expected: bool = True
    ) -> list[str]:
        """Return the code part's reasons, each failing test spelled out after the tests line.

        ``reveal_expected=False`` gives the hints: no expected value (see
        :attr:`MetricBreakdown.hints`).
        """
        lines = []
        for reason in getattr(code, "reasons", ()) or ():
            if not reason.startswith("tests"):
                lines.append(f"{prefix}{reason}")
                continue
            line = _tests_line(code, reason, reveal_expected=reveal_expected)
            lines.append(f"{prefix}{line}")
            failed = _failed_tests(code, entry_point, reveal_expected=reveal_expected)
            lines.extend(f"{prefix}tests: {t}" for t in failed)
        return lines


class CodeQuality(_CodePart, _SpecMetric):
    r""":func:`lift_metrics.code.code_quality` as a DSPy metric.

    The registered ``code_quality`` metric's object (as :class:`DSPyMetric` makes it), with
    the fields named by the ``*_field`` keywords, profiles by name, failing tests spelled out
    in the reasons, and the score reported as the one part ``code``.

    Parameters
    ----------
    expected_code_field : str, default "expected_code"
        Example field with the reference solution (Python source).
    tests_field : str or None, default "tests"
        Example field with the tests: ``[{"inputs": {...}, "expected": ...}, ...]``,
        ``[(kwargs, expected), ...]`` or a ``check(candidate)`` script. None: no tests.
    entry_point_field : str or None, default "entry_point"
        Optional example field naming the function to test (absent: the only top-level one).
    prompt_field : str or None, default "prompt"
        Optional example field with a HumanEval-style prompt (signature and docstring): a
        prediction that does not define the entry function itself is scored as
        ``prompt + prediction`` (a body-only completion). Absent or None: not used.
    code_field : str, default "code"
        Prediction field with the generated code (fences and prose around it are read
        through, :func:`lift_metrics.code.extract_code`).
    profile : str, CodeQualityOptions, CalibrationProfile or path, optional
        ``"validated"`` (the default; see :func:`lift_metrics.code.code_quality`),
        ``"seed"`` (the plain weighted sum), ``"shipped"`` (the calibrated weighted sum in
        ``datasets/labels/calibrated_code_quality.json``), a profile file, a
        :class:`~lift_metrics.validation.CalibrationProfile` or options from
        :func:`lift_metrics.code.code_quality_options`. The whole configuration is in the
        attribute ``code_quality_options``; a calibrated profile itself in ``code_profile``.
        A profile for another metric raises ValueError.
    weights : mapping, optional
        Weighted-sum weights ``syntax``/``tests``/``semantic``/``style``; giving them
        selects the plain weighted sum with them (not with ``"validated"`` or a calibrated
        profile: an error). Normalised in the attribute ``code_weights`` (empty for the
        validated profile).
    embedder, sandbox, timeout_s
        Passed to the scoring core (defaults: the bundled embedder and the process-wide
        sandbox).
    behaviour : bool or None, default None
        Validated profile only: compare the code with a runnable reference on generated
        inputs (on by default; False turns it off; see :func:`lift_metrics.code.code_quality`
        and docs/code.md#behaviour-on-generated-inputs). The score includes them, and so does
        the verdict used by ``require_all_tests``.
    threshold : float, default 0.5
        ``score >= threshold`` accepts a demonstration when bootstrapping. With tests the
        validated score of code that fails every test is at most 0.2.
    require_all_tests : bool, default True
        Under a trace (bootstrapping), code that fails any test of the example, or returns
        another value than the reference on a generated input it was compared on (the
        behaviour check), is never accepted as a demonstration, whatever its score: the call
        returns False (0.0 with ``trace_returns="float"``). An example where neither ran (no
        tests, no runnable reference) is left to the threshold. False: the threshold alone
        decides (code passing a third of the tests can score above 0.5).
    reveal_expected : bool, default False
        What GEPA's feedback quotes. False: each failing test with its inputs and what the
        code returned or raised, never the expected value (a check script's failure as its
        exception and line, not the assertion). True (opt-in): the expected values too, an
        answer key a reflection LM can copy into the prompt.
    history_size, cache_size, trace_returns
        As in :class:`IRQuality`.

    Notes
    -----
    A bad prediction (missing, None, not a str) scores 0 with the reason recorded. A
    sandbox that cannot run at all (:class:`lift_metrics.sandbox.SandboxUnavailableError`)
    raises: that is a broken machine, not a bad prediction, and a silent 0 would mislead
    the optimizer.

    Examples
    --------
    A toy embedder here, so that no model is loaded; no tests, so that nothing runs in the
    sandbox. A placeholder scores 0 by default (the reference asks for a function):

    >>> import numpy as np
    >>> class Parallel:  # every text -> the same unit vector: cosine 1
    ...     def embed(self, texts):
    ...         return np.ones((len(texts), 2)) / np.sqrt(2)
    >>> example = {"expected_code": "def add(a, b):\n    return a + b\n"}
    >>> stub = {"code": "def add(a, b):\n    pass\n"}
    >>> CodeQuality(embedder=Parallel(), tests_field=None)(example, stub)
    0.0
    >>> CodeQuality(embedder=Parallel(), tests_field=None, profile="seed")(example, stub) > 0.9
    True
    >>> calibrated = CodeQuality(profile="shipped", embedder=Parallel(), tests_field=None)
    >>> dict(calibrated.code_options)
    {'similarity_floor': 0.44, 'wrong_answer_gate': True, 'stub_cap': 0.1}
    >>> calibrated(example, stub)
    0.1
    """

    def __init__(
        self,
        *,
        expected_code_field: str = "expected_code",
        weights: Mapping[str, float] | None = None,
        profile: ProfileLike | CodeQualityOptions | None = None,
        embedder: Embedder | None = None,
        threshold: float = 0.5,
        behaviour: bool | None = None,
        **options: Unpack[_CodeOptions],
    ) -> None:
        super().__init__(threshold=threshold, **options)
        self._init_code(
            expected_code_field=expected_code_field,
            code_weights=weights,
            code_profile=profile,
            embedder=embedder,
            names=("weights", "profile"),
            behaviour=behaviour,
        )
        self._bind_fields(registered_metric("code_quality"), self._sources_of_fields())

    _part = "code"
    _reads_none = True

    def _sources_of_fields(self) -> dict[str, str | None]:
        """Return where each field of the ``code_quality`` spec is read (``*_field``)."""

        def example(field: str | None) -> str | None:
            return None if field is None else f"example.{field}"

        return {
            "predicted_code": f"prediction.{self.code_field}",
            "expected_code": f"example.{self.expected_code_field}",
            "tests": example(self.tests_field),
            "entry_point": example(self.entry_point_field),
            "prompt": example(self.prompt_field),
        }

    def __repr__(self) -> str:
        return (
            f"CodeQuality(expected_code_field={self.expected_code_field!r}, "
            f"code_field={self.code_field!r}, tests_field={self.tests_field!r}, "
            f"threshold={self.threshold})"
        )

    def _scorer(self) -> Any:
        return self._code_scorer()

    def _required(self, field: Any) -> bool:
        return field.key in ("expected_code", "tests")

    def _read_field(self, field: Any, source: Source, raw: Any) -> Any:
        """Return one argument, read the way the composites read it."""
        if field.key == "predicted_code":
            return self._predicted_code(raw)
        if field.key == "expected_code":
            return self._expected_code(raw)
        if field.key == "tests":
            return [] if source is None else _as_tests(type(self).__name__, raw)
        return self._task_value(None if source is None else source[1], raw)

    def _naming_hint(self, field: Any) -> str:
        return "pass the right field name to CodeQuality(...)"

    def _verdict(self, example: Any, result: Any) -> bool | None:
        return self._tests_verdict(example, result)

    def _lines(self, result: Any, arguments: Mapping[str, Any]) -> tuple[list[str], list[str]]:
        return self._code_lines(result, None, arguments["entry_point"], "code/")
