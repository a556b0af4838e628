"""The generic item scorer and the metric registry: every registered metric, and a toy one."""

from __future__ import annotations

import inspect
import pickle
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

from lift_metrics.errors import InputTypeError, InputValueError
from lift_metrics.validation import (
    BUILTIN_METRICS,
    FIELD_METRICS,
    FieldMetricScorer,
    ItemField,
    MetricScorer,
    MetricSpec,
    builtin_scorer,
    metric_names,
    register_metric,
    registered_metric,
    unregister_metric,
)


@pytest.mark.parametrize("name", BUILTIN_METRICS)
def test_every_builtin_metric_has_a_spec_that_builtin_scorer_builds(name: str) -> None:
    spec = registered_metric(name)
    assert spec.name == name
    assert not spec.baseline
    scorer = builtin_scorer(name)
    assert isinstance(scorer, MetricScorer)
    assert scorer.spec is spec
    assert scorer.name == scorer.__name__ == name
    assert scorer.similarity_component == spec.similarity_component
    assert repr(scorer).startswith(f"{type(scorer).__name__}(")
    # the options are the keyword parameters of the metric's class, and builtin_scorer makes it
    assert spec.scorer is type(scorer)
    assert spec.options == tuple(inspect.signature(type(scorer)).parameters)
    if spec.default_weights is not None:
        defaults = dict(spec.default_weights())
        assert scorer.components == tuple(defaults)
        assert scorer.default_weights == defaults
        assert sum(defaults.values()) == pytest.approx(1.0)
    if spec.similarity_component is not None:
        assert spec.similarity_component in scorer.components


@pytest.mark.parametrize("name", FIELD_METRICS)
def test_every_field_metric_has_a_baseline_spec(name: str) -> None:
    spec = registered_metric(name)
    assert spec.baseline
    scorer = spec.make()
    assert isinstance(scorer, FieldMetricScorer)
    assert repr(scorer) == f"FieldMetricScorer({name!r})"
    assert scorer.breakdown({"prediction": "x", "reference": "x"}).score == scorer(
        {"predicted_code": "x", "expected_code": "x"}
    )


def test_the_name_lists_are_the_registry() -> None:
    assert metric_names() == BUILTIN_METRICS
    assert metric_names(baseline=True) == FIELD_METRICS
    assert not set(BUILTIN_METRICS) & set(FIELD_METRICS)


@dataclass(frozen=True)
class ToyResult:
    score: float
    reasons: tuple[str, ...] = ()


def toy_core(predicted: str, expected: str, n: int | None = None, *, scale: Any) -> ToyResult:
    """Share of the expected text's characters the prediction repeats, times ``scale``."""
    if not expected:
        return ToyResult(0.0)
    same = sum(a == b for a, b in zip(predicted, expected, strict=False))
    value = min(1.0, (scale or 1.0) * same / len(expected))
    return ToyResult(value, (f"n={n}",))


TOY = MetricSpec(
    name="toy",
    core=toy_core,
    fields=(
        ItemField("guess", "predicted"),
        ItemField("answer", "expected"),
        ItemField("n", required=False, parse=lambda v: None if v is None else int(v)),
    ),
    aliases={"guess": "prediction", "answer": "reference"},
    options=("scale", "embedder"),
    passes={"scale": "scale"},
    embeds=lambda arguments: [arguments["predicted"], arguments["expected"]],
    shown=lambda scorer: {"scale": scorer.scale} if scorer.scale is not None else {},
)


@pytest.fixture
def toy() -> Iterator[MetricSpec]:
    """The toy metric registered for one test, and removed after it."""
    registered = metric_names()
    register_metric(TOY)
    try:
        yield TOY
    finally:
        if "toy" in metric_names():
            unregister_metric("toy")
    assert metric_names() == registered == BUILTIN_METRICS


def test_a_registered_toy_metric_scores_items(toy: MetricSpec) -> None:
    scorer = builtin_scorer("toy")
    assert type(scorer) is MetricScorer
    assert scorer.name == scorer.__name__ == "toy"
    assert scorer.scale is None  # type: ignore[attr-defined]
    item = {"guess": "abcx", "answer": "abcd", "n": "3", "entry_point": "f"}
    breakdown = scorer.breakdown(item)
    assert breakdown == ToyResult(0.75, ("n=3",))
    assert scorer(item) == 0.75
    assert isinstance(scorer(item), float)
    assert scorer({"prediction": "abcd", "reference": "abcd"}) == 1.0  # the aliases
    assert scorer.group(item) == "f"
    assert scorer.group({"guess": "a", "answer": "b"}) is None
    assert repr(scorer) == "MetricScorer('toy')"
    scaled = MetricScorer("toy", scale=2.0)
    assert scaled(item) == 1.0
    assert repr(scaled) == "MetricScorer('toy', scale=2)"


def test_the_toy_metric_refuses_bad_items_and_options(toy: MetricSpec) -> None:
    scorer = MetricScorer(toy)
    with pytest.raises(InputValueError, match=r"toy: the item has no field 'answer'"):
        scorer({"guess": "a"})
    with pytest.raises(InputValueError, match=r"no field 'reference'"):
        scorer({"prediction": "a", "answer": "b"})  # one key style per item
    with pytest.raises(InputTypeError, match="toy scores mapping items, got list"):
        scorer(["a", "b"])
    with pytest.raises(ValueError, match="invalid literal"):
        scorer({"guess": "a", "answer": "b", "n": "three"})
    with pytest.raises(InputTypeError, match=r"takes the options \['scale', 'embedder'\]"):
        MetricScorer("toy", weights={"a": 1.0})
    with pytest.raises(InputValueError, match="toy takes no weights or similarity_floor"):
        builtin_scorer("toy", weights={"a": 1.0})
    with pytest.raises(InputValueError, match="stub_cap applies to code_quality only"):
        builtin_scorer("toy", stub_cap=0.1)
    with pytest.raises(InputValueError, match="registered already"):
        register_metric(toy)
    with pytest.raises(InputTypeError, match="must be a MetricSpec"):
        register_metric("toy")  # type: ignore[arg-type]


def test_an_unregistered_metric_is_unknown(toy: MetricSpec) -> None:
    assert builtin_scorer("toy").name == "toy"
    assert unregister_metric("toy") is toy
    with pytest.raises(InputValueError, match="metric must be one of"):
        builtin_scorer("toy")
    with pytest.raises(InputValueError, match="name must be one of"):
        unregister_metric("toy")
    assert "toy" not in metric_names()


class CountingEmbedder:
    def __init__(self) -> None:
        self.batches: list[list[str]] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.batches.append(list(texts))
        return np.ones((len(texts), 4), dtype=np.float32) / 2


def test_a_scorer_pickles_by_its_metric_name(toy: MetricSpec) -> None:
    scaled = MetricScorer("toy", scale=2.0)
    data = pickle.dumps(scaled)
    clone = pickle.loads(data)
    assert clone.spec is TOY
    assert clone.scale == 2.0  # type: ignore[attr-defined]
    assert clone({"guess": "abcx", "answer": "abcd"}) == 1.0
    unregister_metric("toy")
    with pytest.raises(InputValueError, match="metric 'toy' is not registered in this process"):
        pickle.loads(data)


def test_prefetch_embeds_each_text_once_and_skips_bad_items(toy: MetricSpec) -> None:
    embedder = CountingEmbedder()
    scorer = MetricScorer("toy", embedder=embedder)
    items = [{"guess": "a", "answer": "b"}, {"guess": "b", "answer": "c"}, {"guess": "z"}, 7]
    scorer.prefetch(items)
    assert embedder.batches == [["a", "b", "c"]]
    scorer.prefetch([])
    assert len(embedder.batches) == 1  # nothing to embed: no call
