"""The code metrics on the real sandbox and the real bundled embedding model."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

import lift_metrics.code as code_metrics
from lift_metrics.code import code_quality, code_quality_breakdown, forge_inputs

REFERENCE = '''def add(a, b):
    """Return the sum of a and b."""
    return a + b
'''
TESTS = [({"a": i, "b": 2 * i}, 3 * i) for i in range(5)]


@pytest.fixture
def hash_free_weights() -> dict[str, float]:
    return {"syntax": 0.2, "tests": 0.4, "semantic": 0.0, "style": 0.1, "structural": 0.3}


def test_real_sandbox_pass_rates(real_sandbox) -> None:
    assert code_metrics.test_pass_rate(REFERENCE, TESTS, sandbox=real_sandbox) == 1.0
    wrong = "def add(a, b):\n    return a * b\n"  # passes only a=0 (0*0 == 0)
    assert code_metrics.test_pass_rate(wrong, TESTS, sandbox=real_sandbox) == pytest.approx(0.2)


def test_real_sandbox_exact_types(real_sandbox) -> None:
    floats = "def add(a, b):\n    return float(a + b)\n"  # 3.0 != 3 with exact types
    assert code_metrics.test_pass_rate(floats, TESTS, sandbox=real_sandbox) == 0.0


@pytest.mark.slow
def test_real_sandbox_hostile_or_broken_code_scores_zero(real_sandbox) -> None:
    for code in (
        "def add(a, b):\n    while True:\n        pass\n",
        "def add(a, b):\n    raise SystemExit(0)\n",
        "import os\n\ndef add(a, b):\n    os._exit(0)\n",
        "def add(a, b):\n    return add(a, b)\n",
    ):
        assert code_metrics.test_pass_rate(code, TESTS, sandbox=real_sandbox, timeout_s=1) == 0.0


def test_real_sandbox_missing_entry_point_is_a_reasoned_zero(real_sandbox, hash_embedder) -> None:
    result = code_quality_breakdown(
        REFERENCE,
        REFERENCE,
        TESTS,
        entry_point="subtract",
        sandbox=real_sandbox,
        embedder=hash_embedder,
    )
    assert result.components["tests"] == 0.0
    assert result.execution is not None
    assert result.execution.status == "error"
    assert any("subtract" in reason for reason in result.reasons)


def test_real_sandbox_assertion_script(real_sandbox) -> None:
    script = "def check(candidate):\n    assert candidate(2, 3) == 5\n"
    assert code_metrics.test_pass_rate(REFERENCE, script, sandbox=real_sandbox) == 1.0
    assert (
        code_metrics.test_pass_rate("def add(a, b):\n    return 0\n", script, sandbox=real_sandbox)
        == 0.0
    )


def test_real_forge_inputs(real_sandbox) -> None:
    inputs = forge_inputs(
        "import os\n\ndef add(a, b):\n    return a + b\n", TESTS, sandbox=real_sandbox
    )
    assert (inputs.compiled, inputs.passed, inputs.failed, inputs.lint_warnings) == (
        True,
        5,
        0,
        1,
    )
    assert inputs.score == pytest.approx(0.4 + 0.5 + 0.1 * 0.9)


def test_real_sandbox_without_a_neural_model(real_sandbox, hash_free_weights) -> None:
    renamed = "def add(a, b):\n    # sum of both\n    return a + b\n"
    result = code_quality_breakdown(
        renamed, REFERENCE, TESTS, weights=hash_free_weights, sandbox=real_sandbox
    )
    assert result.components["tests"] == 1.0
    assert result.components["structural"] == 1.0
    assert "semantic" not in result.components


@pytest.mark.slow
def test_real_model_and_sandbox_rank_right_above_wrong(real_sandbox) -> None:
    right = "def add(a, b):\n    return b + a\n"
    wrong = "def add(a, b):\n    return a - b\n"
    unrelated = "import requests\n\ndef fetch(url):\n    return requests.get(url).text\n"
    scores = [
        code_quality(code, REFERENCE, TESTS, sandbox=real_sandbox)
        for code in (REFERENCE, right, wrong, unrelated)
    ]
    assert scores[0] == pytest.approx(1.0)
    assert scores[0] > scores[1] > scores[2] > scores[3]


@pytest.mark.slow
def test_real_model_semantic_similarity_prefers_the_same_task() -> None:
    same_task = "def sum_two(x, y):\n    return x + y\n"
    other_task = "def read_config(path):\n    with open(path) as f:\n        return f.read()\n"
    assert code_metrics.semantic_similarity(same_task, REFERENCE) > (
        code_metrics.semantic_similarity(other_task, REFERENCE)
    )


_code_like = st.one_of(
    st.text(max_size=80),
    st.sampled_from(
        ["def add(a, b):\n", "def add(a, b):\n    return ", "lambda: 0", "add = 3\n"]
    ).flatmap(lambda head: st.text(max_size=30).map(lambda tail: head + tail)),
)


@pytest.mark.slow
@given(_code_like)
@settings(max_examples=40, deadline=None)
def test_any_string_prediction_scores_in_range_and_never_raises(real_sandbox, predicted) -> None:
    from testkit import HashEmbedder

    result = code_quality_breakdown(
        predicted, REFERENCE, TESTS, sandbox=real_sandbox, embedder=HashEmbedder(), timeout_s=2
    )
    assert 0.0 <= result.score <= 1.0
    assert all(0.0 <= value <= 1.0 for value in result.components.values())
    if result.components["syntax"] == 0.0:
        assert result.execution is None  # no process for code that does not parse


@pytest.mark.slow
def test_huge_prediction_is_bounded(real_sandbox) -> None:
    huge = "x = 1\n" * 400_000  # 2.4 MB of valid Python, over MAX_CODE_CHARS
    result = code_quality_breakdown(huge, REFERENCE, TESTS, sandbox=real_sandbox)
    assert result.components == {"syntax": 0.0, "reference": 0.0, "tests": 0.0}
    assert result.execution is None
    assert result.degenerate == (
        "too long to analyse (code is 2,400,000 characters, over the 100,000 limit)"
    )
    assert result.score == 0.0


@pytest.mark.slow
def test_real_code_quality_from_many_threads_matches_sequential(real_sandbox) -> None:
    from concurrent.futures import ThreadPoolExecutor

    candidates = [
        REFERENCE,
        "def add(a, b):\n    return b + a\n",
        "def add(a, b):\n    return a - b\n",
        "def add(a, b) return",
    ]
    sequential = [code_quality(c, REFERENCE, TESTS, sandbox=real_sandbox) for c in candidates]
    with ThreadPoolExecutor(8) as pool:
        threaded = list(
            pool.map(
                lambda i: code_quality(candidates[i % 4], REFERENCE, TESTS, sandbox=real_sandbox),
                range(32),
            )
        )
    assert threaded == pytest.approx([sequential[i % 4] for i in range(32)], abs=1e-6)
