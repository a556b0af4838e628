"""Any registered metric as a DSPy metric object: :class:`DSPyMetric`."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import lift_metrics._builtin_metrics  # noqa: F401  (registers the built-in metrics)
from lift_metrics._checks import check_bool, check_method
from lift_metrics._registry import registered_metric
from lift_metrics.errors import InputTypeError, InputValueError

if TYPE_CHECKING:
    from typing import Unpack

from lift_metrics.dspy_metrics._cache import _cache_key
from lift_metrics.dspy_metrics._fields import (
    _MISSING,
    _all_tests_passed,
    _ExampleError,
    _fields_of,
    _PartFailedError,
    _prediction_field,
    _read,
    _safe_str,
    _score_part,
)
from lift_metrics.dspy_metrics._protocol import MetricBreakdown, _Metric, _ProtocolOptions

_SIDES = ("prediction", "example")


def _source(key: str, where: Any, required: bool) -> tuple[str, str] | None:
    """Check one field's source (``"prediction.<field>"``, ``"example.<field>"`` or None)."""
    if where is None:
        if required:
            raise InputValueError(f"fields[{key!r}] cannot be None: the metric needs {key!r}")
        return None
    side, _, field = where.partition(".") if isinstance(where, str) else ("", "", "")
    if side not in _SIDES or not field.isidentifier():
        raise InputValueError(
            f"fields[{key!r}] must be 'prediction.<field>' or 'example.<field>' "
            f"(or None for an optional field), got {where!r}"
        )
    return side, field


class DSPyMetric(_Metric):
    r"""A registered metric (a validation item scorer) as a DSPy metric object.

    The metric is defined once: its core (a function returning a result with ``.score``,
    ``components`` and ``reasons``) and its registered
    :class:`~lift_metrics.validation.MetricSpec` (the fields it reads, the options it takes).
    :class:`~lift_metrics.validation.MetricScorer` scores labelled items with it
    (:func:`~lift_metrics.validation.validate_metric`); this object scores DSPy's
    ``(example, prediction)`` pairs with the same scorer, reading each field of the spec
    where its ``source`` says.

    Parameters
    ----------
    scorer : str or MetricScorer
        A registered metric's name (its scorer with the default options), or a scorer:
        ``builtin_scorer("code_quality", weights=...)``, ``MetricScorer("my_metric")`` or any
        object with a ``spec`` and a ``compute(arguments)`` method; its options (weights,
        embedder, sandbox) are the metric's.
    fields : mapping of str to str or None, optional
        Where each field of the spec is read, by the spec's field name:
        ``{"predicted_code": "prediction.answer", "tests": "example.cases"}``. None for an
        optional field leaves it out. Default: the spec's ``source`` of each field.
    threshold : float, default 0.5
        ``score >= threshold`` is a success when bootstrapping demonstrations.
    require_all_tests : bool, default True
        Under a trace, reject code that fails a test of the example (when the core's result
        counts tests: ``tests_passed``/``tests_total``, on itself or on its ``code`` part).
    history_size, cache_size, trace_returns, reveal_expected
        As in :class:`IRQuality`.

    Notes
    -----
    A bad prediction (a missing field, None, a value the spec's parse rejects, a core that
    raises on it) scores 0 with the reason recorded; a missing or unreadable example field
    raises, naming it. A core whose score is not a number in [0, 1] raises: the metric is
    broken, and a 0 would hide it.

    Copies (``copy.deepcopy``) share the scorer, which holds configuration and resources
    only; pickling carries the scorer with its registered metric's name (the metric must be
    registered where the copy is loaded).

    GEPA's feedback quotes the result's ``hints`` when the core gives them (they quote no
    reference); otherwise only the components below 1, since a core's reasons may quote the
    reference (``reveal_expected=True`` quotes the reasons).

    The dedicated objects (:class:`IRQuality`, :class:`CodeQuality`, :class:`EndToEnd`)
    give the same scores for the built-in metrics and add what is particular to them:
    calibrated profiles by name, failing tests in GEPA's feedback, measured latency.

    Examples
    --------
    >>> metric = DSPyMetric("exact_match")
    >>> metric
    DSPyMetric('exact_match', threshold=0.5)
    >>> metric({"expected_code": "x = 1"}, {"code": "x = 1"})
    1.0
    >>> metric({"expected_code": "x = 1"}, {"code": None})
    0.0
    >>> print(metric.history[-1].reasons[0])
    exact_match: scored 0 because prediction.code is None
    """

    def __init__(
        self,
        scorer: Any,
        *,
        fields: Mapping[str, str | None] | None = None,
        threshold: float = 0.5,
        require_all_tests: bool = True,
        **options: Unpack[_ProtocolOptions],
    ) -> None:
        super().__init__(threshold=threshold, **options)
        if isinstance(scorer, str):
            try:
                scorer = registered_metric(scorer).make()
            except InputValueError as exc:
                raise InputValueError(f"scorer: {exc}") from None
        check_method("scorer", scorer, "compute", wanted="be a MetricScorer or a metric's name")
        spec = getattr(scorer, "spec", None)
        if spec is None or not hasattr(spec, "fields"):
            raise InputTypeError(f"scorer must be a MetricScorer, got {type(scorer).__name__}")
        self.scorer = scorer
        self.name: str = spec.name
        self.require_all_tests = check_bool("require_all_tests", require_all_tests)
        given = {} if fields is None else fields
        if not isinstance(given, Mapping):
            raise InputTypeError(f"fields must be a mapping, got {type(given).__name__}")
        keys = [field.key for field in spec.fields]
        unknown = sorted(set(given) - set(keys))
        if unknown:
            raise InputValueError(f"fields: {self.name} has the fields {keys}, got {unknown}")
        self.fields: dict[str, str | None] = {}
        self._sources: list[tuple[Any, tuple[str, str] | None]] = []
        for field in spec.fields:
            where = given.get(field.key, field.source)
            if where == "":
                where = f"example.{field.key}"
            self._sources.append((field, _source(field.key, where, field.required)))
            self.fields[field.key] = where

    def __repr__(self) -> str:
        return f"DSPyMetric({self.name!r}, threshold={self.threshold})"

    def _label(self) -> str:
        return self.name

    def _parts_of(self, produced: set[str]) -> set[str]:
        """Return the metric's one part when one of its prediction fields is produced."""
        own = {source[1] for _, source in self._sources if source and source[0] == "prediction"}
        return {self.name} if produced & own else set()

    def _arguments(self, example: Any, prediction: Any) -> tuple[dict[str, Any], tuple[Any, ...]]:
        """Return the core's arguments and the cache key of the values read.

        A bad prediction raises :class:`_PartFailedError`, an unusable example
        :class:`_ExampleError`.
        """
        arguments: dict[str, Any] = {}
        key: list[Any] = []
        for field, source in self._sources:
            if source is None:
                raw = None
            elif source[0] == "prediction":
                required = field.required
                raw = (_prediction_field if required else _read)(prediction, source[1])
                raw = None if raw is _MISSING else raw
            else:
                raw = _read(example, source[1])
                if field.required and (raw is _MISSING or raw is None):
                    found = (
                        f"example.{source[1]} is None"
                        if raw is None
                        else f"the example has no field {source[1]!r}"
                    )
                    raise _ExampleError(
                        f"DSPyMetric({self.name!r}): {found} (its fields: "
                        f"{_fields_of(example)}); name the field that holds {field.key!r}: "
                        f"fields={{{field.key!r}: 'example.<field>'}}"
                    )
                raw = None if raw is _MISSING else raw
            key.append(_cache_key(raw))
            try:
                arguments[field.name] = field.read(raw)
            except Exception as exc:
                side, name = source or ("example", field.key)
                detail = f"{side}.{name} cannot be read: {type(exc).__name__}: {_safe_str(exc)}"
                if side == "prediction":
                    raise _PartFailedError(detail) from exc
                raise _ExampleError(f"DSPyMetric({self.name!r}): {detail}") from exc
        return arguments, tuple(key)

    def _compute(self, arguments: dict[str, Any], key: tuple[Any, ...]) -> Any:
        cached = self._cache.get(key)
        if cached is not _MISSING:
            return cached
        result = self.scorer.compute(arguments)
        self._cache.put(key, result)  # a crashed run is not kept
        return result

    def _breakdown(self, example: Any, prediction: Any) -> MetricBreakdown:
        """Score one pair; see the class docstring."""
        try:
            arguments, key = self._arguments(example, prediction)
        except _PartFailedError as exc:
            reason = f"{self.name}: scored 0 because {exc}"
            return MetricBreakdown(self.name, 0.0, {}, {}, (reason,))
        result, failure = _score_part(
            self.name,
            lambda: self._compute(arguments, key),
            core=self.name,
            log=f"{self.name} raised; scoring 0",
        )
        if result is None:
            return MetricBreakdown(self.name, 0.0, {}, {}, (str(failure),))
        score = _checked_score(self.name, result)
        components = {
            str(k): float(v)
            for k, v in (getattr(result, "components", None) or {self.name: score}).items()
            if "." not in str(k)
        }
        weights = {
            str(k): float(v)
            for k, v in (getattr(result, "weights", None) or {}).items()
            if str(k) in components
        }
        reasons = tuple(f"{self.name}/{r}" for r in getattr(result, "reasons", ()) or ())
        given = getattr(result, "hints", None)
        if given is not None:
            hints = tuple(f"{self.name}/{h}" for h in given)
        else:  # reasons may quote the reference: show the parts that lost points
            hints = tuple(f"{self.name}/{k}: {v:.2f}" for k, v in components.items() if v < 1)
        return MetricBreakdown(
            self.name,
            score,
            components,
            weights,
            reasons,
            hints=hints,
            all_tests_passed=_tests_verdict(result),
            result=result,
        )

    def __deepcopy__(self, memo: dict[int, Any]) -> Any:
        """Return a copy with its own history and cache, sharing the scorer (configuration)."""
        memo[id(self.scorer)] = self.scorer
        return super().__deepcopy__(memo)


def _checked_score(name: str, result: Any) -> float:
    """Return the result's score; a score that is not a number in [0, 1] raises."""
    score = getattr(result, "score", None)
    if (
        isinstance(score, bool)
        or not isinstance(score, int | float)
        or not math.isfinite(score)
        or not 0.0 <= score <= 1.0
    ):
        raise _ExampleError(
            f"{name}'s core returned score {_safe_str(score, repr)} "
            f"({type(result).__name__}); a metric's score must be a number in [0, 1]"
        )
    return float(score)


def _tests_verdict(result: Any) -> bool | None:
    """Return whether the code passed every test (None: the result counts no tests)."""
    verdict = _all_tests_passed(result)
    return _all_tests_passed(getattr(result, "code", None)) if verdict is None else verdict
