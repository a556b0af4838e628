"""calibrate_weights recovers known weights; save/load of weight files."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from lift_metrics.validation import CalibrationResult, calibrate_weights, load_weights, save_weights


def _synthetic(n: int = 80, seed: int = 3) -> tuple[dict[str, np.ndarray], np.ndarray]:
    rng = np.random.default_rng(seed)
    comps = {name: rng.random(n) for name in ("syntax", "tests", "semantic", "style")}
    labels = 0.1 * comps["syntax"] + 0.6 * comps["tests"] + 0.3 * comps["semantic"]
    return comps, labels


@pytest.mark.parametrize("objective", ["squared_error", "pearson"])
def test_recovers_known_weights(objective: str) -> None:
    comps, labels = _synthetic()
    rng = np.random.default_rng(0)
    noisy = labels + rng.normal(0, 0.01, labels.size)
    fit = calibrate_weights(comps, noisy, objective=objective, folds=4)
    expected = {"syntax": 0.1, "tests": 0.6, "semantic": 0.3, "style": 0.0}
    for key, value in expected.items():
        assert fit.weights[key] == pytest.approx(value, abs=0.03), key
    assert sum(fit.weights.values()) == pytest.approx(1.0)
    assert all(v >= 0 for v in fit.weights.values())
    assert fit.in_sample_pearson > 0.99
    assert fit.cv_pearson > 0.99
    assert len(fit.fold_weights) == 4
    assert len(fit.cv_fold_pearson) == 4


def test_default_weights_are_reported_next_to_the_fit() -> None:
    comps, labels = _synthetic()
    defaults = {"syntax": 0.2, "tests": 0.4, "semantic": 0.3, "style": 0.1}
    fit = calibrate_weights(comps, labels, default_weights=defaults, metric="code_quality")
    assert fit.default_weights == pytest.approx(defaults)
    x = np.column_stack([comps[k] for k in defaults])
    ref = np.corrcoef(x @ np.array(list(defaults.values())), labels)[0, 1]
    assert fit.default_pearson == pytest.approx(ref)
    assert fit.in_sample_pearson >= fit.default_pearson
    assert isinstance(fit, CalibrationResult)
    assert "code_quality" in repr(fit)


def test_cross_validation_is_out_of_fold() -> None:
    # pure-noise labels: in-sample fit finds some correlation, CV must not reproduce it
    rng = np.random.default_rng(7)
    comps = {k: rng.random(40) for k in "abcdef"}
    fit = calibrate_weights(comps, rng.random(40), folds=5)
    assert fit.cv_pearson < fit.in_sample_pearson


def test_groups_stay_in_one_fold() -> None:
    comps, labels = _synthetic(n=40)
    groups = [f"g{i // 4}" for i in range(40)]  # 10 groups of 4
    fit = calibrate_weights(comps, labels, groups=groups, folds=5)
    assert fit.folds == 5
    with pytest.raises(ValueError, match="number of groups"):
        calibrate_weights(comps, labels, groups=["a", "b"] * 20, folds=5)


def test_fold_ids_keep_each_group_whole_and_fill_every_fold() -> None:
    from lift_metrics.validation._calibrate import _fold_ids

    groups = [f"g{i % 13}" for i in range(60)]
    ids = _fold_ids(60, 5, groups, seed=0)
    assert sorted(set(ids)) == [0, 1, 2, 3, 4]
    for group in set(groups):
        assert len({ids[i] for i, g in enumerate(groups) if g == group}) == 1
    assert (ids == _fold_ids(60, 5, groups, seed=0)).all()  # seed=0 fixes the folds
    ungrouped = _fold_ids(23, 4, None, seed=1)
    assert sorted(np.bincount(ungrouped)) == [5, 6, 6, 6]


def test_bad_inputs() -> None:
    comps, labels = _synthetic(n=20)
    with pytest.raises(ValueError, match="2 \\* folds"):
        calibrate_weights({k: v[:8] for k, v in comps.items()}, labels[:8], folds=5)
    with pytest.raises(ValueError, match="has 20 values but labels has 19"):
        calibrate_weights(comps, labels[:19])
    with pytest.raises(ValueError, match="objective"):
        calibrate_weights(comps, labels, objective="mae")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="default_weights must have the keys"):
        calibrate_weights(comps, labels, default_weights={"tests": 1.0})


@pytest.mark.parametrize("suffix", [".json", ".toml"])
def test_save_and_load_weights(tmp_path: Path, suffix: str) -> None:
    comps, labels = _synthetic()
    fit = calibrate_weights(comps, labels, metric="code_quality")
    path = save_weights(
        tmp_path / f"w{suffix}", fit.weights, metric="code_quality", metadata=fit.to_dict()
    )
    assert load_weights(path, metric="code_quality") == pytest.approx(fit.weights)
    with pytest.raises(ValueError, match="holds weights for 'code_quality'"):
        load_weights(path, metric="ir_quality")


def test_load_weights_errors(tmp_path: Path) -> None:
    bad = tmp_path / "w.json"
    bad.write_text(json.dumps({"weights": {"tests": -1}}), encoding="utf-8")
    with pytest.raises(ValueError, match=">= 0"):
        load_weights(bad)
    with pytest.raises(FileNotFoundError):
        load_weights(tmp_path / "none.json")
    with pytest.raises(ValueError, match=r"\.json or \.toml"):
        save_weights(tmp_path / "w.yaml", {"a": 1.0}, metric="m")
