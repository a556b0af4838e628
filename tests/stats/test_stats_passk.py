"""pass@k and pass^k (docs/statistics.md), exact against math.comb / fractions."""

from __future__ import annotations

import math
import re
from fractions import Fraction
from math import comb
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from lift_metrics.stats import pass_at_k, pass_hat_k


@st.composite
def nck(draw: st.DrawFn, max_n: int = 400) -> tuple[int, int, int]:
    n = draw(st.integers(1, max_n))
    return n, draw(st.integers(0, n)), draw(st.integers(1, n))


def exact_pass_at_k(n: int, c: int, k: int) -> Fraction:
    return 1 - Fraction(comb(n - c, k), comb(n, k))


@settings(deadline=None)  # timing-independent: the machine may be busy
@given(nck())
def test_pass_at_k_exact_against_math_comb(args: tuple[int, int, int]) -> None:
    n, c, k = args
    expected = float(exact_pass_at_k(n, c, k))
    got = pass_at_k(n, c, k)
    assert isinstance(got, float)
    assert got == pytest.approx(expected, rel=1e-12, abs=0.0)


@settings(deadline=None)  # timing-independent: the machine may be busy
@given(nck())
def test_pass_hat_k_exact_against_math_comb(args: tuple[int, int, int]) -> None:
    n, c, k = args
    expected = float(Fraction(comb(c, k), comb(n, k)))
    assert pass_hat_k(n, c, k) == pytest.approx(expected, rel=1e-12, abs=0.0)


@settings(deadline=None)  # timing-independent: the machine may be busy
@given(st.lists(nck(60), min_size=1, max_size=30))
def test_vectorised_equals_scalar(triples: list[tuple[int, int, int]]) -> None:
    n, c, k = (np.array(col) for col in zip(*triples, strict=True))
    got = pass_at_k(n, c, k)
    assert got.shape == n.shape
    assert got.tolist() == [pass_at_k(*t) for t in triples]


def test_tiny_pass_at_k_keeps_relative_precision() -> None:
    # 1 correct of a million samples: pass@1 = 1e-6 exactly (math.comb reference)
    assert pass_at_k(1_000_000, 1, 1) == pytest.approx(1e-6, rel=1e-14)
    assert pass_at_k(10**6, 3, 10) == pytest.approx(float(exact_pass_at_k(10**6, 3, 10)), rel=1e-12)


def test_known_values_and_edges() -> None:
    assert pass_at_k(10, 3, 1) == pytest.approx(0.3)
    assert pass_at_k(10, 0, 5) == 0.0
    assert pass_at_k(10, 6, 5) == 1.0  # n - c < k: every draw of 5 holds a correct one
    assert pass_at_k(5, 5, 5) == 1.0
    assert pass_hat_k(10, 3, 1) == pytest.approx(0.3)
    assert pass_hat_k(10, 10, 10) == 1.0


def test_broadcast_scalar_k_over_arrays_and_array_k() -> None:
    n = np.array([[10, 20], [30, 40]])
    c = np.array([[1, 2], [3, 4]])
    got = pass_at_k(n, c, 1)
    assert got.shape == (2, 2)
    assert np.allclose(got, c / n)
    by_k = pass_at_k(10, 3, np.array([1, 2, 5, 8]))
    assert np.all(np.diff(by_k) > 0)
    assert by_k[-1] == 1.0


@pytest.mark.parametrize(
    ("args", "error", "match"),
    [
        ((10, 3, 11), ValueError, "k must be <= n"),
        ((10, 11, 1), ValueError, "c must be <= n"),
        ((10, -1, 1), ValueError, "c must be >= 0"),
        ((10, 3, 0), ValueError, "k must be >= 1"),
        ((0, 0, 1), ValueError, "n must be >= 1"),
        ((10.0, 3, 1), TypeError, "n must be an integer"),
        ((10, True, 1), TypeError, "c must be an integer"),
        (([10, 5], [3, 2], [1, 6]), ValueError, r"k must be <= n.*at index 1"),
        (([10, 5], [3, 2, 1], 1), ValueError, "broadcast"),
    ],
)
def test_bad_input(args: tuple[object, object, object], error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        pass_at_k(*args)


def test_large_distinct_triples_are_exact() -> None:
    rng = np.random.default_rng(3)
    n = rng.integers(1, 3000, size=500)
    c = rng.integers(0, n + 1)
    k = rng.integers(1, np.minimum(n, 50) + 1)
    got = pass_at_k(n, c, k)
    expected = [
        float(exact_pass_at_k(int(a), int(b), int(d))) for a, b, d in zip(n, c, k, strict=True)
    ]
    assert np.allclose(got, expected, rtol=1e-12, atol=0.0)


def test_zero_probability_is_positive_zero() -> None:
    # -expm1(0.0) is -0.0, which prints as "-0."; a probability of zero must be +0.0
    assert math.copysign(1.0, pass_at_k(n=10, c=0, k=5)) == 1.0
    values = pass_at_k(np.array([10, 10]), np.array([0, 3]), 5)
    assert math.copysign(1.0, float(values[0])) == 1.0


@pytest.mark.parametrize(
    ("n", "c", "k", "message"),
    [
        ([], [], 1, "n must not be empty"),
        (10**400, 3, 1, "n holds an integer too large"),
        (10, 3, 10**400, "k holds an integer too large"),
        ([10**400], [1], 1, "n holds an integer too large"),
        (2**63, 1, 1, "n holds an integer too large"),
    ],
)
def test_pass_at_k_names_the_argument_of_empty_or_huge_input(n, c, k, message) -> None:
    with pytest.raises(ValueError, match=message):
        pass_at_k(n, c, k)


@pytest.mark.parametrize(
    ("args", "shown"),
    [
        ((10, 3.0, 1), "c must be an integer or an array of integers, got 3.0"),
        ((10, "3", 1), "c must be an integer or an array of integers, got '3'"),
        (([10], [3.5], 1), "c must be an integer or an array of integers, got an array of dtype"),
    ],
)
def test_a_non_integer_argument_is_shown_as_given(args: tuple[Any, ...], shown: str) -> None:
    with pytest.raises(TypeError, match=re.escape(shown)):
        pass_at_k(*args)


def test_empty_arrays_say_so_not_their_dtype() -> None:
    with pytest.raises(ValueError, match=r"^n must not be empty$"):
        pass_at_k([], [], 1)
