"""The opt-in similarity floor and the calibrated profiles (agreement with labels)."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, strategies as st

import lift_metrics.validation._calibrate_metric as calibrate_module
from lift_metrics.code import code_quality_breakdown, semantic_similarity
from lift_metrics.ir import intent_match, ir_quality, ir_quality_breakdown
from lift_metrics.similarity import rescale_similarity
from lift_metrics.validation import (
    CalibrationProfile,
    LabelledItem,
    builtin_scorer,
    load_profile,
    save_weights,
    shipped_labels_path,
    shipped_profile_path,
    unrelated_similarity_floor,
)

_VECTORS = {"A": (1.0, 0.0, 0.0), "B": (0.6, 0.8, 0.0), "C": (0.8, 0.0, 0.6)}


class TableEmbedder:
    """Texts -> fixed unit vectors, so every cosine is known: cos(A, B) = 0.6, cos(A, C) = 0.8."""

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        keys = ["A" if "alpha" in t else "B" if "beta" in t else "C" for t in texts]
        return np.array([_VECTORS[k] for k in keys])


def _ir(description: str) -> dict[str, object]:
    return {"intent": {"description": description}, "signature": {"name": "f"}}


# --- the formula -------------------------------------------------------------------------


def test_rescale_similarity_hand_values() -> None:
    # (0.72 - 0.44) / 0.56 = 0.5 by hand; at or below the floor 0; 1 stays 1
    assert rescale_similarity(0.72, 0.44) == pytest.approx(0.5)
    assert rescale_similarity(0.44, 0.44) == 0.0
    assert rescale_similarity(0.1, 0.44) == 0.0
    assert rescale_similarity(1.0, 0.44) == 1.0
    assert rescale_similarity(0.37, 0.0) == 0.37


@pytest.mark.parametrize("floor", [-0.1, 1.0, 1.5])
def test_rescale_similarity_rejects_floor_outside_unit_interval(floor: float) -> None:
    with pytest.raises(ValueError, match=r"similarity_floor must be in \[0, 1\)"):
        rescale_similarity(0.5, floor)


@given(
    st.floats(0, 1),
    st.floats(0, 1),
    st.floats(0, 0.99),
)
def test_rescale_similarity_is_monotone_and_in_unit_interval(a: float, b: float, f: float) -> None:
    lo, hi = sorted((a, b))
    r_lo, r_hi = rescale_similarity(lo, f), rescale_similarity(hi, f)
    assert 0.0 <= r_lo <= r_hi <= 1.0
    # independent reference: the piecewise-linear map written out
    assert r_hi == pytest.approx(max(0.0, (hi - f) / (1 - f)), abs=1e-9)


# --- the metrics: floor changes scores as documented, default unchanged ----------------


def test_intent_match_with_floor() -> None:
    embedder = TableEmbedder()
    plain = intent_match(_ir("alpha"), _ir("beta"), embedder=embedder)
    floored = intent_match(_ir("alpha"), _ir("beta"), embedder=embedder, similarity_floor=0.5)
    assert plain == pytest.approx(0.6)
    assert floored == pytest.approx((0.6 - 0.5) / 0.5)


def test_ir_quality_default_has_no_floor() -> None:
    embedder = TableEmbedder()
    p, e = _ir("alpha"), _ir("beta")
    default = ir_quality(p, e, embedder=embedder)
    assert default == ir_quality(p, e, embedder=embedder, similarity_floor=0.0)
    # signature/structure/constraints all 1 here, intent 0.6: 0.3 * 0.6 + 0.7 by hand
    assert default == pytest.approx(0.88)
    floored = ir_quality_breakdown(p, e, embedder=embedder, similarity_floor=0.5)
    assert floored.components["intent"] == pytest.approx(0.2)
    assert floored.score == pytest.approx(0.3 * 0.2 + 0.7)


def test_semantic_similarity_and_code_quality_with_floor() -> None:
    embedder = TableEmbedder()
    p = "def f():\n    return 'alpha'\n"
    e = "def f():\n    return 'gamma'\n"
    assert semantic_similarity(p, e, embedder=embedder) == pytest.approx(0.8)
    assert semantic_similarity(p, e, embedder=embedder, similarity_floor=0.6) == pytest.approx(0.5)
    weights = {"syntax": 0, "tests": 0, "semantic": 1, "style": 0}
    default = code_quality_breakdown(p, e, [], weights=weights, embedder=embedder)
    floored = code_quality_breakdown(
        p, e, [], weights=weights, embedder=embedder, similarity_floor=0.6
    )
    assert default.score == pytest.approx(0.8)
    assert floored.components["semantic"] == pytest.approx(0.5)
    assert floored.score == pytest.approx(0.5)


@pytest.mark.parametrize("floor", [1.0, -0.2])
def test_metrics_reject_a_bad_floor(floor: float) -> None:
    with pytest.raises(ValueError, match="similarity_floor"):
        ir_quality(_ir("alpha"), _ir("beta"), embedder=TableEmbedder(), similarity_floor=floor)
    with pytest.raises(ValueError, match="similarity_floor"):
        semantic_similarity("a", "b", embedder=TableEmbedder(), similarity_floor=floor)


# --- profiles -----------------------------------------------------------------------------


@pytest.mark.parametrize("metric", ["ir_quality", "code_quality"])
def test_shipped_profiles_load(metric: str) -> None:
    profile = load_profile(shipped_profile_path(metric), metric=metric)
    defaults = builtin_scorer(metric).default_weights
    assert isinstance(profile, CalibrationProfile)
    assert profile.metric == metric
    assert set(profile.weights) == set(defaults)
    assert math.isclose(sum(profile.weights.values()), 1.0, abs_tol=1e-6)
    assert profile.similarity_floor == 0.44  # p95 of unrelated references, README section
    document = json.loads(shipped_profile_path(metric).read_text())
    assert document["calibration"]["fitted_on"].endswith("split=calibration")
    scorer = builtin_scorer(metric, **profile.metric_options())
    assert scorer.similarity_floor == 0.44


def test_profile_round_trip_and_validation(tmp_path: Path) -> None:
    path = save_weights(
        tmp_path / "p.toml",
        {"tests": 0.7, "semantic": 0.3},
        metric="code_quality",
        similarity_floor=0.25,
    )
    profile = load_profile(path, metric="code_quality")
    assert profile.to_dict() == {
        "metric": "code_quality",
        "weights": {"tests": 0.7, "semantic": 0.3},
        "similarity_floor": 0.25,
    }
    plain = save_weights(tmp_path / "w.json", {"tests": 1.0}, metric="code_quality")
    assert load_profile(plain).similarity_floor == 0.0  # no floor in the file: none used
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"weights": {"tests": 1}, "similarity_floor": 1.2}))
    with pytest.raises(ValueError, match="similarity_floor"):
        load_profile(bad)
    with pytest.raises(ValueError, match="similarity_floor"):
        save_weights(tmp_path / "x.json", {"tests": 1.0}, metric="m", similarity_floor=1.0)


def test_unrelated_similarity_floor_is_a_quantile_of_pairwise_cosines() -> None:
    # pairs: (A, B) 0.6, (A, C) 0.8, (B, C) 0.48 -> numpy's linear quantile by hand
    texts = ["alpha", "beta", "gamma"]
    assert unrelated_similarity_floor(texts, embedder=TableEmbedder(), quantile=0.5) == 0.6
    expected = round(float(np.quantile([0.6, 0.8, 0.48], 0.95)), 2)
    assert unrelated_similarity_floor(texts, embedder=TableEmbedder()) == expected
    with pytest.raises(ValueError, match="at least 3 distinct"):
        unrelated_similarity_floor(["alpha", "alpha", "beta"], embedder=TableEmbedder())


# --- the CLI: the fit reads the calibration split only -------------------------------------


def _small_ir_labels() -> list[dict[str, Any]]:
    """The first 20 calibration and 10 held-out rows of the shipped ir_quality labels."""
    rows = [json.loads(line) for line in shipped_labels_path("ir_quality").read_text().splitlines()]
    picked = [r for r in rows if r["split"] == "calibration"][:20]
    return picked + [r for r in rows if r["split"] == "heldout"][:10]


@pytest.mark.slow
def test_calibrate_with_floor_fits_on_calibration_items_only(
    cli_main, tmp_path: Path, write_jsonl, monkeypatch: pytest.MonkeyPatch
) -> None:
    picked = _small_ir_labels()
    data = write_jsonl(tmp_path / "ir.jsonl", picked)
    seen: list[str] = []
    original = calibrate_module.metric_components

    def recording(scorer: object, items: Sequence[LabelledItem]) -> object:
        seen.extend(item.id for item in items)
        return original(scorer, items)

    monkeypatch.setattr(calibrate_module, "metric_components", recording)
    out = tmp_path / "r"
    args = ["validate", "ir_quality", "--data", str(data), "--calibrate", "--folds", "3"]
    code = cli_main([*args, "--similarity-floor", "0.5", "--target", "-1", "--out", str(out)])
    assert code == 0
    calibration_ids = {r["id"] for r in picked if r["split"] == "calibration"}
    assert seen
    assert set(seen) == calibration_ids
    profile = load_profile(out / "weights_ir_quality.json", metric="ir_quality")
    assert profile.similarity_floor == 0.5
    assert (
        json.loads((out / "validation.json").read_text())["calibration"]["ir_quality"]["fit"]["n"]
        == 20
    )


def test_similarity_floor_needs_calibrate(cli_main, tmp_path: Path) -> None:
    args = ["validate", "ir_quality", "--similarity-floor", "0.5", "--out", str(tmp_path)]
    assert cli_main(args) == 2
    args = ["validate", "ir_quality", "--calibrate", "--similarity-floor", "2", "--out", "x"]
    assert cli_main(args) == 2


@pytest.mark.slow
def test_shipped_profile_rows_next_to_the_default(
    cli_main, tmp_path: Path, write_jsonl, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = shipped_labels_path("ir_quality").read_text().splitlines()[:16]
    data = write_jsonl(tmp_path / "ir.jsonl", [json.loads(line) for line in lines])
    out = tmp_path / "r"
    args = ["validate", "ir_quality", "--data", str(data), "--split", "all", "--target", "-1"]
    assert cli_main([*args, "--shipped-profile", "--out", str(out)]) == 0
    results = json.loads((out / "validation.json").read_text())["results"]
    assert [r["metric"] for r in results] == ["ir_quality", "ir_quality (shipped profile)"]
    assert results[0]["pearson"] != results[1]["pearson"]
    assert "ir_quality (shipped profile)" in capsys.readouterr().out


@pytest.mark.slow
def test_calibrated_weights_land_with_the_report_or_not_at_all(
    cli_main, tmp_path: Path, write_jsonl, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A report that cannot be written (a full disk) leaves no weights file behind either."""
    data = write_jsonl(tmp_path / "ir.jsonl", _small_ir_labels())

    def disk_full(*args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("lift_metrics.validation._plot.plot_validation", disk_full)
    out = tmp_path / "r"
    args = ["validate", "ir_quality", "--data", str(data), "--calibrate", "--folds", "3"]
    code = cli_main([*args, "--target", "-1", "--out", str(out)])
    assert code == 2
    assert not list(out.glob("*"))  # neither the weights nor any report file
