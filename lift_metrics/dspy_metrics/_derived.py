"""A metric object derived from a registered metric's spec: :class:`_SpecMetric`.

The spec (``lift_metrics.validation.MetricSpec``) names the core and the fields it reads; an
object made from it reads each field in DSPy's ``(example, prediction)`` pair where its
source says, calls the scorer's ``compute`` and turns the core's result into a
:class:`MetricBreakdown`. :class:`DSPyMetric` is this for any registered metric;
:class:`IRQuality` is it for ``ir_quality``, reading the IR its own way.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, ClassVar

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
from lift_metrics.dspy_metrics._protocol import MetricBreakdown, _Metric
from lift_metrics.errors import InputTypeError, InputValueError

_SIDES = ("prediction", "example")

#: where a field is read: ("prediction" or "example", the field's name), or None (never)
Source = tuple[str, str] | None


def _source(key: str, where: Any, required: bool) -> Source:
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


class _SpecMetric(_Metric):
    """Scoring with a registered metric's scorer: fields read, core called, breakdown made.

    A subclass binds the spec's fields with :meth:`_bind_fields` and gives the scorer
    (:meth:`_scorer`). ``_part`` names the one part the whole score is reported as
    (``"ir"``: components ``{"ir": score}``, reasons ``"ir/..."``, the result in the
    breakdown's ``ir``); None reports the result's own components under the metric's name.

    What a metric reads or reports its own way, a subclass overrides: :meth:`_read_field`
    (one value into the core's argument; with ``_reads_none`` it is also handed None from
    a required example field), :meth:`_required`, :meth:`_naming_hint` (the fix an error
    for a missing example field suggests), :meth:`_lines` (reasons and hints) and
    :meth:`_verdict` (whether the code passed every test) and :meth:`_score_of` (the score of
    the core's result).
    """

    _part: ClassVar[str | None] = None
    #: the breakdown's attribute that holds the core's result (default: ``_part``, else
    #: ``result``)
    _result_field: ClassVar[str | None] = None
    #: whether :meth:`_read_field` reads None in a required example field itself
    _reads_none: ClassVar[bool] = False
    #: the registered metric's name
    name: str
    #: each field of the spec -> where it is read, as given ("prediction.code")
    fields: dict[str, str | None]
    _sources: list[tuple[Any, Source]]

    def _bind_fields(self, spec: Any, given: Mapping[str, str | None] | None) -> None:
        """Read each field of ``spec`` where ``given`` says, else where its ``source`` says."""
        self.name = spec.name
        given = {} if given is None else given
        if not isinstance(given, Mapping):
            raise InputTypeError(f"fields must be a mapping, got {type(given).__name__}")
        keys = [field.key for field in spec.fields]
        unknown = sorted(set(given) - set(keys))
        if unknown:
            raise InputValueError(f"fields: {self.name} has the fields {keys}, got {unknown}")
        self.fields = {}
        self._sources = []
        for field in spec.fields:
            where = given.get(field.key, field.source)
            if where == "":
                where = f"example.{field.key}"
            self._sources.append((field, _source(field.key, where, field.required)))
            self.fields[field.key] = where

    def _scorer(self) -> Any:
        """Return the scorer whose ``compute(arguments)`` gives the core's result."""
        raise NotImplementedError

    def _owner(self) -> str:
        """Return how errors about the example name this object."""
        return self._label()

    def _prefix(self) -> str:
        return self._part or self.name

    def _parts_of(self, produced: set[str]) -> set[str]:
        """Return the metric's one part when one of its prediction fields is produced."""
        own = {source[1] for _, source in self._sources if source and source[0] == "prediction"}
        return {self._prefix()} if produced & own else set()

    def _missing(self, example: Any, field: Any, name: str, value: Any) -> _ExampleError:
        """Return the error for an example without the field (or with None in it)."""
        found = (
            f"example.{name} is None"
            if value is None
            else f"the example has no field {name!r} (its fields: {_fields_of(example)})"
        )
        return _ExampleError(f"{self._owner()}: {found}; {self._naming_hint(field)}")

    def _naming_hint(self, field: Any) -> str:
        """Return how to name the example's field that holds ``field``."""
        return (
            f"name the field that holds {field.key!r}: fields={{{field.key!r}: 'example.<field>'}}"
        )

    def _read_field(self, field: Any, source: Source, raw: Any) -> Any:
        """Return the core's argument for one field's raw value (the spec's parse applied).

        A prediction value that cannot be read raises :class:`_PartFailedError`, an example
        value :class:`_ExampleError`.
        """
        try:
            return field.read(raw)
        except Exception as exc:
            side, name = source or ("example", field.key)
            detail = f"{side}.{name} cannot be read: {type(exc).__name__}: {_safe_str(exc)}"
            if side == "prediction":
                raise _PartFailedError(detail) from exc
            raise _ExampleError(f"{self._owner()}: {detail}") from exc

    def _required(self, field: Any) -> bool:
        """Return whether the example must have the field (the spec's ``required``)."""
        return bool(field.required)

    def _arguments(self, example: Any, prediction: Any) -> tuple[dict[str, Any], tuple[Any, ...]]:
        """Return the core's arguments and the cache key of the values read.

        A required example field that is absent, or None without ``_reads_none``, raises
        (:meth:`_missing`).
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
                required = self._required(field)
                if required and (raw is _MISSING or (raw is None and not self._reads_none)):
                    raise self._missing(example, field, source[1], raw)
                raw = None if raw is _MISSING else raw
            key.append(_cache_key(raw))
            arguments[field.name] = self._read_field(field, source, raw)
        return arguments, tuple(key)

    def _verdict(self, example: Any, result: Any) -> bool | None:
        """Return whether the code passed every test of the example (None: no tests)."""
        return None if result is None else _tests_verdict(result)

    def _lines(self, result: Any, arguments: Mapping[str, Any]) -> tuple[list[str], list[str]]:
        """Return the result's reasons and hints, each after the part's name.

        Without hints in the result, the hints are the components below 1: reasons may
        quote the reference.
        """
        prefix = self._prefix()
        reasons = [f"{prefix}/{r}" for r in getattr(result, "reasons", ()) or ()]
        given = getattr(result, "hints", None)
        if given is not None:
            return reasons, [f"{prefix}/{h}" for h in given]
        components = self._components(result, float(result.score))[0]
        return reasons, [f"{prefix}/{k}: {v:.2f}" for k, v in components.items() if v < 1]

    def _components(self, result: Any, score: float) -> tuple[dict[str, float], dict[str, float]]:
        """Return the breakdown's components and weights: the part alone, or the result's."""
        if self._part:
            return {self._part: score}, {self._part: 1.0}
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
        return components, weights

    def _score_of(self, result: Any) -> float:
        """Return the score of the core's result; one that is not in [0, 1] raises."""
        return _checked_score(self.name, result)

    def _failed(self, example: Any, reason: str) -> MetricBreakdown:
        components, weights = ({self._part: 0.0}, {self._part: 1.0}) if self._part else ({}, {})
        return MetricBreakdown(
            self._label(),
            0.0,
            components,
            weights,
            (reason,),
            hints=(reason,),
            all_tests_passed=self._verdict(example, None),
        )

    def _breakdown(self, example: Any, prediction: Any) -> MetricBreakdown:
        """Score one pair: a bad prediction scores 0 with the reason, a bad example raises."""
        prefix = self._prefix()
        try:
            arguments, key = self._arguments(example, prediction)
        except _PartFailedError as exc:
            return self._failed(example, f"{prefix}: scored 0 because {exc}")
        result, failure = _score_part(
            prefix,
            lambda: self._cache.fetch(key, lambda: self._scorer().compute(arguments)),
            core=self.name,
            log=f"{self.name} raised; scoring 0",
        )
        if result is None:
            return self._failed(example, str(failure))
        score = self._score_of(result)
        components, weights = self._components(result, score)
        reasons, hints = self._lines(result, arguments)
        where = {self._result_field or self._part or "result": result}
        return MetricBreakdown(
            self._label(),
            score,
            components,
            weights,
            tuple(reasons),
            hints=tuple(hints),
            all_tests_passed=self._verdict(example, result),
            **where,
        )


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
