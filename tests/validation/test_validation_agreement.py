"""krippendorff_alpha against published values and an independent two-rater formula."""

from __future__ import annotations

import math

import numpy as np
import pytest

from lift_metrics.validation import ConstantInputWarning, krippendorff_alpha

NAN = math.nan
# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section C: 4 observers,
# 12 units; published alpha: nominal 0.743, interval 0.849.
KRIPPENDORFF_2011 = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, NAN, NAN, NAN],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, NAN, 3],
    [NAN, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, NAN],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, NAN],
]


def test_published_example() -> None:
    assert krippendorff_alpha(KRIPPENDORFF_2011) == pytest.approx(0.849, abs=5e-4)
    assert krippendorff_alpha(KRIPPENDORFF_2011, level="nominal") == pytest.approx(0.743, abs=5e-4)


def _two_rater_interval_alpha(a: list[float], b: list[float]) -> float:
    """Interval alpha for two raters, no missing values: 1 - D_o / D_e over the pooled values."""
    values = np.array(a + b)
    n = values.size
    d_o = np.mean((np.array(a) - np.array(b)) ** 2)
    d_e = np.sum((values[:, None] - values[None, :]) ** 2) / (n * (n - 1))
    return float(1 - d_o / d_e)


def test_tiny_example_matches_independent_formula() -> None:
    a = [0.0, 0.5, 1.0, 0.25]
    b = [0.1, 0.5, 0.9, 0.5]
    expected = _two_rater_interval_alpha(a, b)
    assert krippendorff_alpha([a, b]) == pytest.approx(expected, rel=1e-9)
    assert krippendorff_alpha([a, a]) == pytest.approx(1.0)


def test_none_counts_as_missing() -> None:
    with_none = [[1, 2, None, 4], [1, 3, 3, 4]]
    dropped = [[1, 2, 4], [1, 3, 4]]
    assert krippendorff_alpha(with_none) == pytest.approx(krippendorff_alpha(dropped))


def test_constant_ratings_warn_and_give_nan() -> None:
    with pytest.warns(ConstantInputWarning):
        assert math.isnan(krippendorff_alpha([[1, 1, 1], [1, 1, 1]]))


def test_bad_shapes() -> None:
    with pytest.raises(ValueError, match="at least 2 raters"):
        krippendorff_alpha([[1, 2, 3]])
    with pytest.raises(ValueError, match="same items"):
        krippendorff_alpha([[1, 2, 3], [1, 2]])
    with pytest.raises(ValueError, match="level"):
        krippendorff_alpha([[1, 2], [1, 2]], level="ratioo")  # type: ignore[arg-type]
