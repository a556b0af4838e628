"""Model prices: name normalisation, litellm's bundled cost map, TOML overrides, unknown models."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from lift_metrics.pricing import (
    ModelPrice,
    cost_usd_for_model,
    litellm_cost_map,
    load_price_overrides,
    lookup_price,
    normalize_model_name,
)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("openai/gpt-4o", "gpt-4o"),
        ("GPT-4o", "gpt-4o"),
        ("openrouter/openai/gpt-4o-mini", "gpt-4o-mini"),
        ("gpt-4o-2024-08-06", "gpt-4o"),
        ("anthropic/claude-3-5-sonnet-20241022", "claude-3-5-sonnet"),
        ("claude-3-5-sonnet-latest", "claude-3-5-sonnet"),
    ],
)
def test_spellings_of_one_model_normalise_equal(a: str, b: str) -> None:
    assert normalize_model_name(a) == normalize_model_name(b)


@pytest.mark.parametrize(("a", "b"), [("gpt-4o", "gpt-4o-mini"), ("llama3:8b", "llama3:70b")])
def test_different_models_stay_different(a: str, b: str) -> None:
    assert normalize_model_name(a) != normalize_model_name(b)


def test_prices_come_from_litellms_bundled_map() -> None:
    entry = litellm_cost_map()["gpt-4o"]
    price = lookup_price("openai/gpt-4o")
    assert price is not None
    assert price.source == "litellm"
    assert price.input_price_per_m == pytest.approx(entry["input_cost_per_token"] * 1e6)
    assert price.output_price_per_m == pytest.approx(entry["output_cost_per_token"] * 1e6)
    assert lookup_price("gpt-4o") == price


def test_a_snapshot_litellm_knows_keeps_its_own_price() -> None:
    cost_map = litellm_cost_map()
    if "gpt-4o-2024-05-13" not in cost_map:
        pytest.skip("this litellm version has no gpt-4o-2024-05-13 entry")
    price = lookup_price("openai/gpt-4o-2024-05-13")
    assert price is not None
    assert price.model == "gpt-4o-2024-05-13"
    assert price.input_price_per_m == pytest.approx(
        cost_map["gpt-4o-2024-05-13"]["input_cost_per_token"] * 1e6
    )


def test_an_unknown_snapshot_is_priced_as_its_base_model() -> None:
    price = lookup_price("gpt-4o-2031-01-01")
    assert price is not None
    assert price.model == "gpt-4o"


def test_cost_for_model_uses_stats_cost_usd() -> None:
    from lift_metrics.stats import cost_usd

    estimate = cost_usd_for_model("openai/gpt-4o", 12_345, 678)
    price = lookup_price("gpt-4o")
    assert price is not None
    assert estimate.known
    assert estimate.cost_usd == cost_usd(
        12_345,
        678,
        input_price_per_m=price.input_price_per_m,
        output_price_per_m=price.output_price_per_m,
    )
    assert estimate.to_dict()["priced_as"] == "gpt-4o"


def test_unknown_models_are_flagged_never_zero() -> None:
    estimate = cost_usd_for_model("acme/secret-model-v9", 1_000, 1_000)
    assert estimate.known is False
    assert math.isnan(estimate.cost_usd)
    assert estimate.price is None
    assert estimate.to_dict()["cost_usd"] is None
    assert "unknown model" in repr(estimate)


def test_toml_overrides_add_and_replace_prices(tmp_path: Path) -> None:
    path = tmp_path / "prices.toml"
    path.write_text(
        '[models."acme/secret-model-v9"]\ninput_price_per_m = 1.0\noutput_price_per_m = 2.0\n'
        '[models."gpt-4o"]\ninput_price_per_m = 0.5\noutput_price_per_m = 0.5\n'
    )
    overrides = load_price_overrides(path)
    assert overrides["secret-model-v9"] == ModelPrice("secret-model-v9", 1.0, 2.0, "override")
    estimate = cost_usd_for_model("secret-model-v9", 1_000_000, 500_000, overrides=overrides)
    assert estimate.known
    assert estimate.cost_usd == pytest.approx(2.0)
    # an override wins over litellm, whatever the spelling; a path works too
    assert cost_usd_for_model(
        "openai/gpt-4o", 2_000_000, 0, overrides=path
    ).cost_usd == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[other]\nx = 1\n", "expected \\[models"),
        (
            '[models."m"]\ninput_price_per_m = 1.0\n',
            "must set input_price_per_m and output_price_per_m",
        ),
        ('[models."m"]\ninput_price_per_m = -1.0\noutput_price_per_m = 1.0\n', "must be >= 0"),
    ],
)
def test_bad_override_files(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "prices.toml"
    path.write_text(text)
    with pytest.raises(ValueError, match=message):
        load_price_overrides(path)


def test_argument_validation() -> None:
    with pytest.raises(TypeError, match="model must be a non-empty str"):
        cost_usd_for_model("", 1, 1)
    with pytest.raises(ValueError, match="input_tokens must be >= 0"):
        cost_usd_for_model("gpt-4o", -1, 1)
    with pytest.raises(TypeError, match="overrides must be a TOML path or a mapping"):
        lookup_price("gpt-4o", overrides={"gpt-4o": 1.0})  # type: ignore[dict-item]
