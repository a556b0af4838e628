"""Any registered metric as a DSPy metric object: :class:`DSPyMetric`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from lift_metrics._checks import check_bool, check_method
from lift_metrics._registry import registered_metric
from lift_metrics.dspy_metrics._derived import _SpecMetric
from lift_metrics.dspy_metrics._protocol import _ProtocolOptions
from lift_metrics.errors import InputTypeError, InputValueError

if TYPE_CHECKING:
    from typing import Unpack


class DSPyMetric(_SpecMetric):
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
        Under a trace, reject code that fails a test of the example or disagrees with the
        reference on a generated input (when the core's result counts them:
        ``tests_passed``/``tests_total``, ``behaviour_agreed``/``behaviour_total``, on itself
        or on its ``code`` part).
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

    :class:`IRQuality` and :class:`CodeQuality` are made the same way from the
    ``ir_quality`` and ``code_quality`` specs, and add what is particular to them:
    keywords for their fields, calibrated profiles by name, failing tests in GEPA's
    feedback. :class:`EndToEnd` and :class:`Aggregate` score their IR and code parts with
    the same registered scorers and add the measured latency and cost.

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
        self.require_all_tests = check_bool("require_all_tests", require_all_tests)
        self._bind_fields(spec, fields)

    def __repr__(self) -> str:
        return f"DSPyMetric({self.name!r}, threshold={self.threshold})"

    def _label(self) -> str:
        return self.name

    def _scorer(self) -> Any:
        return self.scorer

    def _owner(self) -> str:
        return f"DSPyMetric({self.name!r})"

    def __deepcopy__(self, memo: dict[int, Any]) -> Any:
        """Return a copy with its own history and cache, sharing the scorer (configuration)."""
        memo[id(self.scorer)] = self.scorer
        return super().__deepcopy__(memo)
