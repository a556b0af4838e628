"""The metric registry: one :class:`MetricSpec` per metric, and its item scorer.

A metric's core is a pure function that returns a result with ``.score`` (a breakdown). Its
spec says how a labelled item becomes the core's arguments, which options the scorer takes and
passes on, how items are grouped into folds, which texts are embedded ahead in one batch, and
which components ``--calibrate`` fits. :class:`MetricScorer` does the rest the same way for
every metric, as scikit-learn's ``make_scorer`` turns a metric function into a scorer: adding
a metric is writing its core and calling :func:`register_metric`. The DSPy metric object
(:class:`~lift_metrics.dspy_metrics.DSPyMetric`) is made from the same spec, and the common
tests check every registered metric in both forms.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from lift_metrics.errors import InputTypeError, InputValueError

__all__ = [
    "ItemField",
    "MetricScorer",
    "MetricSpec",
    "Score",
    "entry_point_group",
    "lazy",
    "metric_names",
    "read_fields",
    "register_metric",
    "registered_metric",
    "unregister_metric",
]


@dataclass(frozen=True)
class Score:
    """The result of a core that computes a bare number (the field's metrics)."""

    score: float


@dataclass(frozen=True)
class ItemField:
    """One argument of a metric's core, read from a labelled item.

    ``ItemField("predicted_code", "predicted")`` passes the item's ``predicted_code`` as the
    core's ``predicted``; a missing required field is an error that names it, a missing
    optional one reads None; ``parse`` (when given) turns the value into the argument.

    ``source`` says where the metric's DSPy object
    (:class:`~lift_metrics.dspy_metrics.DSPyMetric`) reads the field in DSPy's
    ``(example, prediction)`` pair: ``"prediction.code"``, ``"example.tests"``; empty (the
    default) for the example's field of the same name; None for a field it never reads (an
    optional one: a self-reported latency, say).
    """

    key: str
    argument: str = ""
    required: bool = True
    parse: Callable[[Any], Any] | None = None
    source: str | None = ""

    @property
    def name(self) -> str:
        """The core's keyword for this field."""
        return self.argument or self.key

    def read(self, value: Any) -> Any:
        """Return the core's argument for the item's ``value`` (``parse`` applied)."""
        return value if self.parse is None else self.parse(value)


def lazy(module: str, attribute: str) -> Callable[..., Any]:
    """Return a function that calls ``module.attribute``, importing the module on first use.

    Examples
    --------
    >>> lazy("math", "hypot")(3, 4)
    5.0
    """

    def call(*args: Any, **kwargs: Any) -> Any:
        return getattr(importlib.import_module(module), attribute)(*args, **kwargs)

    call.__name__ = call.__qualname__ = attribute
    return call


def entry_point_group(item: Any) -> str | None:
    """Return the item's entry point, when given (pairs built on one function share a fold).

    Examples
    --------
    >>> entry_point_group({"entry_point": "add"}), entry_point_group({})
    ('add', None)
    """
    value = item.get("entry_point") if isinstance(item, Mapping) else None
    return None if value is None else str(value)


def read_fields(
    item: Any, fields: Sequence[ItemField], aliases: Mapping[str, str], metric: str
) -> dict[str, Any]:
    """Return the core's arguments read from ``item``: every field first, then every parse.

    An item that has the alias of the first field and not the field itself reads every
    field by its alias (``prediction``/``reference`` for ``predicted_code``/``expected_code``).
    The errors name ``metric``: a TypeError for an item that is not a mapping, a ValueError for
    a missing required field; a parse raises its own.

    Examples
    --------
    >>> fields = [ItemField("predicted_code", "predicted"), ItemField("n", required=False)]
    >>> read_fields({"predicted_code": "x = 1"}, fields, {}, "toy")
    {'predicted': 'x = 1', 'n': None}
    """
    if not isinstance(item, Mapping):
        raise InputTypeError(f"{metric} scores mapping items, got {type(item).__name__}")
    first = fields[0].key if fields else ""
    renamed = first not in item and aliases.get(first, first) in item
    raw: list[tuple[ItemField, Any]] = []
    for spec in fields:
        key = aliases.get(spec.key, spec.key) if renamed else spec.key
        if key in item:
            raw.append((spec, item[key]))
        elif spec.required:
            raise InputValueError(
                f"{metric}: the item has no field {key!r} (it has {sorted(item)})"
            )
        else:
            raw.append((spec, None))
    return {spec.name: spec.read(value) for spec, value in raw}


def _always(scorer: Any) -> bool:
    return True


def _nothing_shown(scorer: Any) -> Mapping[str, Any]:
    return {}


@dataclass(frozen=True)
class MetricSpec:
    """How a metric scores a labelled item: all that :class:`MetricScorer` needs to know.

    Attributes
    ----------
    name : str
        The metric's name: ``builtin_scorer(name)``, the scorer's ``name`` and ``__name__``.
    core : callable
        ``core(**arguments, **passed)`` returns a result with ``.score`` in [0, 1] (a
        breakdown). It imports what is heavy when called (:func:`lazy`).
    fields : tuple of ItemField
        The item's fields the core is called with, read in this order.
    aliases : mapping of str to str
        Other names of the fields (see :func:`read_fields`).
    options : tuple of str
        The keyword options the scorer takes, each an attribute of the scorer (default: the
        parameters of ``scorer``).
    passes : mapping of str to str
        The core's keyword -> the scorer's attribute passed as it on every call.
    default_weights : callable or None
        Returns the weighted components and their default weights: the scorer's
        ``components`` and ``default_weights``, what ``--calibrate`` fits.
    similarity_component : str or None
        The component that is an embedding similarity (a similarity floor rescales it).
    group : callable
        ``group(item)``: the item's fold key or None (default: its entry point).
    embeds : callable or None
        ``embeds(arguments)``: the texts of one item :meth:`MetricScorer.prefetch` embeds.
    embeds_if : callable
        ``embeds_if(scorer)``: whether the scorer's options use the embeddings.
    shown : callable
        ``shown(scorer)``: the options the scorer's repr shows, by name.
    scorer : callable or None
        What :meth:`make` calls with the options (a class made for the metric); None:
        :class:`MetricScorer`.
    baseline : bool, default False
        One of the field's metrics (``--baselines``) rather than a built-in metric.
    """

    name: str
    core: Callable[..., Any]
    fields: tuple[ItemField, ...]
    aliases: Mapping[str, str] = field(default_factory=dict)
    options: tuple[str, ...] = ()
    passes: Mapping[str, str] = field(default_factory=dict)
    default_weights: Callable[[], Mapping[str, float]] | None = None
    similarity_component: str | None = None
    group: Callable[[Any], str | None] = entry_point_group
    embeds: Callable[[Mapping[str, Any]], Sequence[Any]] | None = None
    embeds_if: Callable[[Any], bool] = _always
    shown: Callable[[Any], Mapping[str, Any]] = _nothing_shown
    scorer: Callable[..., MetricScorer] | None = None
    baseline: bool = False

    def __post_init__(self) -> None:
        if not self.options and self.scorer is not None:
            parameters = inspect.signature(self.scorer).parameters
            object.__setattr__(self, "options", tuple(parameters))

    def arguments(self, item: Any) -> dict[str, Any]:
        """Return the core's arguments read from one item (:func:`read_fields`)."""
        return read_fields(item, self.fields, self.aliases, self.name)

    def make(self, **options: Any) -> MetricScorer:
        """Return the metric's scorer with these options."""
        if self.scorer is None:
            return MetricScorer(self, **options)
        return self.scorer(**options)


_REGISTRY: dict[str, MetricSpec] = {}


def register_metric(spec: MetricSpec) -> MetricSpec:
    """Register a metric under its name (``builtin_scorer`` then builds it); return ``spec``.

    A TypeError when ``spec`` is not a :class:`MetricSpec`, a ValueError when a metric of that
    name is registered already; :func:`unregister_metric` removes one.
    """
    if not isinstance(spec, MetricSpec):
        raise InputTypeError(f"spec must be a MetricSpec, got {type(spec).__name__}")
    if spec.name in _REGISTRY:
        raise InputValueError(f"a metric named {spec.name!r} is registered already")
    _REGISTRY[spec.name] = spec
    return spec


def unregister_metric(name: str) -> MetricSpec:
    """Remove a registered metric; return its spec."""
    spec = registered_metric(name)
    del _REGISTRY[name]
    return spec


def registered_metric(name: str) -> MetricSpec:
    """Return the spec registered under ``name`` (a ValueError names the registered ones)."""
    if not isinstance(name, str):
        raise InputTypeError(f"name must be a registered metric's name, got {name!r}")
    if name not in _REGISTRY:
        raise InputValueError(f"name must be one of {tuple(_REGISTRY)}, got {name!r}")
    return _REGISTRY[name]


def metric_names(*, baseline: bool = False) -> tuple[str, ...]:
    """Return the registered names in order: the built-in metrics, or the field's (``baseline``)."""
    return tuple(name for name, spec in _REGISTRY.items() if spec.baseline is baseline)


def _shown_value(value: Any) -> str:
    return f"{value:g}" if isinstance(value, float) else repr(value)


class MetricScorer:
    """Score labelled items with a metric: ``scorer(item)`` is its breakdown's ``score``.

    Parameters
    ----------
    metric : str or MetricSpec
        A registered metric's name, or a spec.
    **options
        The spec's options (another name is a TypeError); each becomes an attribute, None
        when not given.

    Attributes
    ----------
    spec : MetricSpec
    name, __name__ : str
        The metric's name (what :func:`validate_metric` reports).
    components, default_weights
        The weighted components and their default weights, for a metric with weights.
    similarity_component : str or None
        The component a similarity floor rescales.

    Notes
    -----
    A subclass made for one metric takes the metric's options as keyword parameters,
    validates them and keeps them as attributes, after :meth:`_bind` (not ``__init__``).

    Examples
    --------
    >>> scorer = MetricScorer("reference_score")
    >>> scorer({"predicted_code": "x = 1", "expected_code": "x = 1"})
    1.0
    >>> scorer.group({"prediction": "y", "reference": "x = 1"})
    'x = 1'
    """

    #: whether the repr shows the metric's name (a class made for one metric does not)
    _shows_name: ClassVar[bool] = True
    embedder: Any = None
    components: tuple[str, ...]
    default_weights: dict[str, float]

    def __init__(self, metric: str | MetricSpec, /, **options: Any) -> None:
        self._bind(metric if isinstance(metric, MetricSpec) else registered_metric(metric))
        unknown = sorted(set(options) - set(self.spec.options))
        if unknown:
            raise InputTypeError(
                f"{self.name} takes the options {list(self.spec.options)}, got {unknown}"
            )
        for name in self.spec.options:
            setattr(self, name, options.get(name))

    def _bind(self, spec: MetricSpec) -> None:
        """Take the metric's spec, name, components and similarity component."""
        self.spec = spec
        self.name = self.__name__ = spec.name
        self.similarity_component = spec.similarity_component
        if spec.default_weights is not None:
            defaults = spec.default_weights()
            self.components = tuple(defaults)
            self.default_weights = dict(defaults)

    def __repr__(self) -> str:
        shown = [repr(self.name)] if self._shows_name else []
        shown += [f"{k}={_shown_value(v)}" for k, v in self.spec.shown(self).items()]
        return f"{type(self).__name__}({', '.join(shown)})"

    def breakdown(self, item: Any) -> Any:
        """Return the metric's breakdown of one item (its core's result)."""
        return self.compute(self.spec.arguments(item))

    def compute(self, arguments: Mapping[str, Any]) -> Any:
        """Return the core's result for its arguments, with the scorer's options passed."""
        passed = {keyword: getattr(self, name) for keyword, name in self.spec.passes.items()}
        return self.spec.core(**arguments, **passed)

    def __getstate__(self) -> dict[str, Any]:
        """Return the options; the spec travels as its registered name."""
        state = {k: v for k, v in self.__dict__.items() if k != "spec"}
        state["spec"] = self.spec.name
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        """Rebuild from :meth:`__getstate__`.

        The metric must be registered where the copy is loaded: the built-in ones are
        registered by the module of their scorer classes, which loading imports first.
        """
        state = dict(state)
        name = state.pop("spec")
        if name not in _REGISTRY:
            raise InputValueError(
                f"metric {name!r} is not registered in this process: import the module that "
                "registers it before loading its scorer"
            )
        self.__dict__.update(state)
        self.spec = registered_metric(name)

    def __call__(self, item: Any) -> float:
        return float(self.breakdown(item).score)

    def group(self, item: Any) -> str | None:
        """Return the item's fold key (``spec.group``), or None."""
        return self.spec.group(item)

    def prefetch(self, items: Sequence[Any]) -> None:
        """Embed the texts the metric compares in one batch (fills the embedder's cache).

        Best effort: an item that cannot be read is left to be reported when it is scored.
        """
        embeds = self.spec.embeds
        if embeds is None or not self.spec.embeds_if(self):
            return
        texts: list[str] = []
        for item in items:
            try:
                texts += [t for t in embeds(self.spec.arguments(item)) if isinstance(t, str)]
            except Exception:  # a bad item is reported when it is scored
                continue
        if texts:
            from lift_metrics.similarity import resolve_embedder

            self.embedder = resolve_embedder(self.embedder)
            self.embedder.embed(list(dict.fromkeys(texts)))
