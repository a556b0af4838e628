"""sequence_similarity on rapidfuzz gives the values python-Levenshtein gave."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import given, settings, strategies as st
from testkit import edit_distance

from lift_metrics.similarity import sequence_similarity

# computed with the python-Levenshtein package (Levenshtein 0.27.1), an independent implementation
KNOWN: list[tuple[Sequence[Any], Sequence[Any], float]] = [
    ("kitten", "sitting", 0.5714285714285714),
    ("flaw", "lawn", 0.5),
    ("", "", 1.0),
    ("a", "", 0.0),
    ("intention", "execution", 0.4444444444444444),
    ("héllo wörld", "hello world", 0.8181818181818181),
    (["Read", "Write", "Call"], ["Write", "Read", "Call"], 0.33333333333333337),
    ([1, 2, 3, 4], [4, 3, 2, 1], 0.0),
    (("x", None, 2.0), ("x", 2.0), 0.6666666666666667),
    ("def add(a, b):\n    return a + b\n", "def add(x, y):\n    return x+y\n", 0.8125),
    ("🙂🙃", "🙃🙂🙂", 0.33333333333333337),
    (list("abcdef"), list("azced"), 0.5),
]


@pytest.mark.parametrize(("a", "b", "expected"), KNOWN)
def test_the_values_of_the_former_implementation(
    a: Sequence[Any], b: Sequence[Any], expected: float
) -> None:
    assert sequence_similarity(a, b) == expected  # bit-identical, not approximately


# both sequences of one kind: both libraries compare a one-character string equal to the
# integer of its code point ("A" and 65), a quirk both keep
texts = st.text(max_size=30)
kinds = st.lists(st.sampled_from(["Read", "Write", "Call", 1, None]), max_size=12)
pairs = st.one_of(st.tuples(texts, texts), st.tuples(kinds, kinds))


@settings(max_examples=300, deadline=None)
@given(pairs)
def test_agrees_with_python_levenshtein_and_the_textbook_distance(
    pair: tuple[Sequence[Any], Sequence[Any]],
) -> None:
    a, b = pair
    longest = max(len(a), len(b))
    expected = 1.0 if longest == 0 else 1.0 - edit_distance(a, b) / longest
    assert sequence_similarity(a, b) == expected
    try:
        import Levenshtein  # the former implementation, when still installed
    except ImportError:
        return
    if longest:
        assert sequence_similarity(a, b) == 1.0 - Levenshtein.distance(a, b) / longest
