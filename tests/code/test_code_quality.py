"""test_pass_rate, code_quality and code_quality_breakdown with a fake sandbox and embedder."""

from __future__ import annotations

import math
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from code_testkit import REFERENCE, TESTS, WRONG

import lift_metrics.code as code_metrics
from lift_metrics.code import (
    DEFAULT_CODE_QUALITY_WEIGHTS,
    CodeQualityBreakdown,
    code_quality,
    code_quality_breakdown,
    semantic_similarity,
    structural_similarity,
    style_conformance,
)

# --- test_pass_rate ---------------------------------------------------------------------------


def test_pass_rate_counts_passed_cases(fake_sandbox) -> None:
    assert code_metrics.test_pass_rate(REFERENCE, TESTS, sandbox=fake_sandbox) == 1.0
    assert code_metrics.test_pass_rate(WRONG, TESTS, sandbox=fake_sandbox) == pytest.approx(1 / 3)


def test_pass_rate_passes_entry_point_and_timeout_to_the_sandbox(fake_sandbox) -> None:
    code_metrics.test_pass_rate(
        REFERENCE, TESTS, sandbox=fake_sandbox, entry_point="add", timeout_s=2
    )
    (_, tests, entry_point, timeout_s) = fake_sandbox.calls[0]
    assert tests == TESTS
    assert entry_point == "add"
    assert timeout_s == 2.0


def test_pass_rate_accepts_json_style_lists(fake_sandbox) -> None:
    as_lists = [[{"a": 1, "b": 2}, 3], [{"a": 0, "b": 0}, 1]]
    assert code_metrics.test_pass_rate(REFERENCE, as_lists, sandbox=fake_sandbox) == 0.5


def test_pass_rate_with_an_assertion_script(fake_sandbox) -> None:
    script = "def check(candidate):\n    assert candidate(2, 3) == 5\n"
    assert code_metrics.test_pass_rate(REFERENCE, script, sandbox=fake_sandbox) == 1.0
    assert code_metrics.test_pass_rate(WRONG, script, sandbox=fake_sandbox) == 0.0


def test_pass_rate_without_tests_is_an_error_not_a_pass(fake_sandbox) -> None:
    for empty in ([], "  \n"):
        with pytest.raises(ValueError, match=r"^tests is empty"):
            code_metrics.test_pass_rate(REFERENCE, empty, sandbox=fake_sandbox)
    assert fake_sandbox.calls == []  # nothing to run, no process


def test_pass_rate_of_unparsable_code_is_zero_without_a_process() -> None:
    from code_testkit import ExplodingSandbox

    assert (
        code_metrics.test_pass_rate("def add(a, b) return", TESTS, sandbox=ExplodingSandbox())
        == 0.0
    )


def test_pass_rate_missing_entry_point_scores_zero_not_raises(fake_sandbox) -> None:
    assert (
        code_metrics.test_pass_rate(REFERENCE, TESTS, entry_point="nope", sandbox=fake_sandbox)
        == 0.0
    )


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"code": None}, TypeError, "^code must be a str"),
        ({"tests": {"a": 1}}, TypeError, "^tests must be a list"),
        ({"tests": None}, TypeError, "^tests must be a list"),
        ({"tests": [({"a": 1}, 2, 3)]}, TypeError, r"^tests\[0\] must be an \(inputs_dict"),
        ({"tests": [([1, 2], 3)]}, TypeError, r"^tests\[0\]\[0\] must be a dict"),
        ({"tests": [({1: 2}, 3)]}, ValueError, r"keys must be argument names"),
        ({"entry_point": 3}, TypeError, "^entry_point must be a str"),
        ({"entry_point": "not valid"}, ValueError, "^entry_point must be a Python identifier"),
        ({"entry_point": "class"}, ValueError, "^entry_point must be a Python identifier"),
        ({"timeout_s": 0}, ValueError, "^timeout_s must be > 0"),
        ({"timeout_s": -1.0}, ValueError, "^timeout_s must be > 0"),
        ({"timeout_s": "5"}, TypeError, "^timeout_s must be a real number"),
        ({"sandbox": object()}, TypeError, "^sandbox must have a run_tests"),
    ],
)
def test_pass_rate_bad_input_names_the_parameter(kwargs, error, match) -> None:
    from code_testkit import ExplodingSandbox

    arguments = {"code": REFERENCE, "tests": TESTS, "sandbox": ExplodingSandbox()}
    arguments.update(kwargs)
    with pytest.raises(error, match=match):
        code_metrics.test_pass_rate(**arguments)


# --- code_quality ------------------------------------------------------------------------------


def test_code_quality_is_the_seed_weighted_sum(fake_sandbox, hash_embedder) -> None:
    predicted = "def add(a, b):\n    total = b + a\n    return total\n"
    result = code_quality_breakdown(
        predicted, REFERENCE, TESTS, sandbox=fake_sandbox, embedder=hash_embedder, profile="seed"
    )
    semantic = semantic_similarity(predicted, REFERENCE, embedder=hash_embedder)
    style = style_conformance(predicted, REFERENCE)
    expected = (
        0.2 * 1.0 + 0.4 * 1.0 + 0.3 * semantic + 0.1 * style
    )  # profile="seed" weights, docs/code.md
    assert result.score == pytest.approx(expected)
    assert result.components["syntax"] == 1.0
    assert result.components["tests"] == 1.0
    assert result.components["semantic"] == pytest.approx(semantic)
    assert result.components["style"] == pytest.approx(style)
    assert result.components["structural"] == structural_similarity(predicted, REFERENCE)
    assert result.weights == pytest.approx(dict(DEFAULT_CODE_QUALITY_WEIGHTS))
    assert result.tests_passed == 3
    assert result.tests_total == 3
    assert result.execution is not None
    assert result.execution.status == "passed"
    assert code_quality(
        predicted, REFERENCE, TESTS, sandbox=fake_sandbox, embedder=hash_embedder, profile="seed"
    ) == pytest.approx(result.score)


def test_code_quality_of_the_reference_itself_is_one(fake_sandbox, hash_embedder) -> None:
    result = code_quality_breakdown(
        REFERENCE, REFERENCE, TESTS, sandbox=fake_sandbox, embedder=hash_embedder
    )
    assert result.score == pytest.approx(1.0)
    assert result.reasons == ()
    assert hash_embedder.calls == []  # identical strings do not need the model


def test_wrong_code_scores_low_with_reasons(fake_sandbox, hash_embedder) -> None:
    result = code_quality_breakdown(
        WRONG, REFERENCE, TESTS, sandbox=fake_sandbox, embedder=hash_embedder
    )
    assert result.components["tests"] == pytest.approx(1 / 3)
    assert result.tests_passed == 1
    assert any(reason.startswith("tests: 1/3 passed (failed)") for reason in result.reasons)
    right = code_quality(REFERENCE, REFERENCE, TESTS, sandbox=fake_sandbox, embedder=hash_embedder)
    assert result.score < right


def test_unparsable_prediction_scores_zero_on_syntax_tests_style(hash_embedder) -> None:
    from code_testkit import ExplodingSandbox

    broken = "def add(a, b)\n    return a + b\n"
    result = code_quality_breakdown(
        broken, REFERENCE, TESTS, sandbox=ExplodingSandbox(), embedder=hash_embedder, profile="seed"
    )
    components = result.components
    assert components["syntax"] == components["tests"] == components["style"] == 0.0
    assert components["structural"] == 0.0
    assert result.execution is None
    assert result.tests_passed == 0
    assert result.tests_total == 3
    assert result.score == pytest.approx(0.3 * components["semantic"])
    assert result.reasons[0].startswith("syntax: SyntaxError")
    assert any("not run: the code does not parse" in reason for reason in result.reasons)


def test_zero_weight_components_are_not_computed() -> None:
    from code_testkit import ExplodingEmbedder, ExplodingSandbox

    weights = {"syntax": 1, "tests": 0, "semantic": 0, "style": 1}
    result = code_quality_breakdown(
        "def f(x):\n    return x\n",
        REFERENCE,
        TESTS,
        weights=weights,
        sandbox=ExplodingSandbox(),
        embedder=ExplodingEmbedder(),
    )
    assert "tests" not in result.components
    assert "semantic" not in result.components
    assert result.weights == {"syntax": 0.5, "tests": 0.0, "semantic": 0.0, "style": 0.5}
    style = style_conformance("def f(x):\n    return x\n", REFERENCE)
    assert result.score == pytest.approx(0.5 + 0.5 * style)


def test_structural_weight_replaces_the_neural_model(fake_sandbox) -> None:
    from code_testkit import ExplodingEmbedder

    predicted = "def add(a, b):\n    # the sum\n    return a + b\n"
    weights = {"syntax": 0.2, "tests": 0.4, "semantic": 0, "style": 0.1, "structural": 0.3}
    result = code_quality_breakdown(
        predicted,
        REFERENCE,
        TESTS,
        weights=weights,
        sandbox=fake_sandbox,
        embedder=ExplodingEmbedder(),
    )
    assert result.components["structural"] == 1.0  # same tree, comment instead of docstring
    style = style_conformance(predicted, REFERENCE)
    assert result.score == pytest.approx(0.2 + 0.4 + 0.3 + 0.1 * style)


def test_the_seed_profile_gives_full_test_credit_without_tests(hash_embedder) -> None:
    from code_testkit import ExplodingSandbox

    result = code_quality_breakdown(
        REFERENCE, REFERENCE, [], sandbox=ExplodingSandbox(), embedder=hash_embedder, profile="seed"
    )
    assert result.components["tests"] == 1.0
    assert result.execution is None


def test_the_default_counts_no_tests_as_absent_evidence(hash_embedder) -> None:
    from code_testkit import ExplodingSandbox

    other = "def add(a, b):\n    return sum([a, b, 1])\n"
    result = code_quality_breakdown(
        other, REFERENCE, [], sandbox=ExplodingSandbox(), embedder=hash_embedder
    )
    assert "tests" not in result.components
    assert result.execution is None
    assert result.score == pytest.approx(result.components["reference"])
    assert result.score < 1.0


@pytest.mark.parametrize(
    ("weights", "error", "match"),
    [
        ({"syntax": 1}, ValueError, "weights must have exactly the keys"),
        ({"syntax": 1, "tests": 1, "semantic": 1, "style": 1, "x": 1}, ValueError, "exactly"),
        ({"syntax": 0, "tests": 0, "semantic": 0, "style": 0}, ValueError, "positive number"),
        ({"syntax": -1, "tests": 1, "semantic": 1, "style": 1}, ValueError, r"must be >= 0"),
        ([0.2, 0.4, 0.3, 0.1], TypeError, "weights must be a mapping"),
    ],
)
def test_code_quality_rejects_bad_weights(weights, error, match, hash_embedder) -> None:
    from code_testkit import ExplodingSandbox

    with pytest.raises(error, match=match):
        code_quality(
            REFERENCE,
            REFERENCE,
            TESTS,
            weights=weights,
            embedder=hash_embedder,
            sandbox=ExplodingSandbox(),
        )


@pytest.mark.parametrize(
    ("args", "kwargs", "error", "match"),
    [
        ((None, REFERENCE, TESTS), {}, TypeError, "^predicted must be a str"),
        ((REFERENCE, 42, TESTS), {}, TypeError, "^expected must be a str"),
        ((REFERENCE, REFERENCE, 5), {}, TypeError, "^tests must be a list"),
        ((REFERENCE, REFERENCE, TESTS), {"timeout_s": 0}, ValueError, "^timeout_s"),
        ((REFERENCE, REFERENCE, TESTS), {"entry_point": "1x"}, ValueError, "^entry_point"),
        ((REFERENCE, REFERENCE, TESTS), {"embedder": "minilm"}, TypeError, "^embedder"),
    ],
)
def test_code_quality_bad_input_raises_before_running_anything(args, kwargs, error, match):
    from code_testkit import ExplodingSandbox

    kwargs = {"sandbox": ExplodingSandbox(), **kwargs}
    with pytest.raises(error, match=match):
        code_quality(*args, **kwargs)


@pytest.mark.parametrize("profile", ["validated", "seed"])
@pytest.mark.parametrize("tests", [TESTS, []], ids=["tests", "no-tests"])
def test_lone_surrogates_are_read_as_replacement_characters(fake_sandbox, profile, tests) -> None:
    # JSON's "\ud800" in a model's answer: the tokenizer refused it (TypeError), ruff's stdin
    # and UTF-8 files too. Every code metric reads it as U+FFFD, the replacement character.
    from testkit import TokenizingEmbedder

    broken = REFERENCE.replace("return a + b", "return a + b  # \ud800 sum") + "x = '\udfff'\n"
    clean = broken.replace("\ud800", "\ufffd").replace("\udfff", "\ufffd")
    scored = [
        code_quality_breakdown(
            text, REFERENCE, tests, embedder=TokenizingEmbedder(), sandbox=fake_sandbox,
            profile=profile, prompt="def add(a, b):\n    \"\"\"\ud800\"\"\"\n",
        )
        for text in (broken, clean)
    ]  # fmt: skip
    assert scored[0].score == scored[1].score > 0.5
    assert scored[0].code == scored[1].code
    assert all("\ufffd" in call[0] and "\ud800" not in call[0] for call in fake_sandbox.calls)
    assert semantic_similarity(broken, REFERENCE, embedder=TokenizingEmbedder()) == (
        semantic_similarity(clean, REFERENCE, embedder=TokenizingEmbedder())
    )
    assert style_conformance(broken, REFERENCE) == style_conformance(clean, REFERENCE)
    assert structural_similarity(broken, REFERENCE) == structural_similarity(clean, REFERENCE)
    assert code_metrics.syntax_correctness(broken) == 1.0
    assert code_metrics.lint_code(broken) == code_metrics.lint_code(clean)
    assert code_metrics.reference_score(broken, REFERENCE, embedder=TokenizingEmbedder()) == (
        code_metrics.reference_score(clean, REFERENCE, embedder=TokenizingEmbedder())
    )


def _unreadable(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make a parse of code over the bound fail the test: such text must not be read."""
    from lift_metrics import _pyast
    from lift_metrics.code import MAX_CODE_CHARS

    parse = _pyast.parse

    def bounded(source: str, *args: Any, **kwargs: Any) -> Any:
        if len(source) > MAX_CODE_CHARS:
            raise AssertionError("code over MAX_CODE_CHARS was parsed")
        return parse(source, *args, **kwargs)

    monkeypatch.setattr(_pyast, "parse", bounded)


@pytest.mark.parametrize("tests", [TESTS, []], ids=["tests", "no-tests"])
def test_an_answer_over_the_bound_is_not_analysed_and_scores_0_with_the_reason(
    monkeypatch: pytest.MonkeyPatch, tests: list[object]
) -> None:
    from code_testkit import ExplodingEmbedder, ExplodingSandbox

    from lift_metrics.code import MAX_CODE_CHARS

    huge = "```python\n" + "x = 1\n" * (MAX_CODE_CHARS // 6) + "```\n"  # just over
    _unreadable(monkeypatch)
    kwargs = {"embedder": ExplodingEmbedder(), "sandbox": ExplodingSandbox()}
    validated = code_quality_breakdown(huge, REFERENCE, tests, entry_point="add", **kwargs)
    assert validated.score == 0.0
    assert validated.degenerate == (
        f"too long to analyse (code is {len(huge):,} characters, over the 100,000 limit)"
    )
    assert validated.reasons[-1] == f"degenerate: {validated.degenerate}; scored 0"
    assert validated.execution is None
    assert set(validated.components.values()) == {0.0}
    seed = code_quality_breakdown(huge, REFERENCE, tests, profile="seed", **kwargs)
    assert seed.score == 0.0
    assert seed.components["syntax"] == seed.components["semantic"] == 0.0
    assert f"syntax: code is {len(huge):,} characters, over the 100,000 limit" in seed.reasons
    assert any(r.startswith("semantic: 0 because the code is not embedded") for r in seed.reasons)


def test_every_analysis_refuses_text_over_the_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    from code_testkit import ExplodingEmbedder

    from lift_metrics.code import MAX_CODE_CHARS

    huge = "def add(a, b):\n    return a + b\n" + "#" * MAX_CODE_CHARS
    _unreadable(monkeypatch)
    assert code_metrics.syntax_correctness(huge) == 0.0
    assert style_conformance(huge, REFERENCE) == structural_similarity(huge, REFERENCE) == 0.0
    assert semantic_similarity(huge, REFERENCE, embedder=ExplodingEmbedder()) == 0.0
    assert code_metrics.extract_code(huge) is huge
    assert code_metrics.degenerate_kind(huge).startswith("too long to analyse")
    assert code_metrics.lint_code(huge)[0].code == "too-large"
    result = code_metrics.reference_score_breakdown(huge, REFERENCE, embedder=ExplodingEmbedder())
    assert (result.score, result.degenerate) == (0.0, "too long")
    assert result.reasons == (
        f"the prediction is not analysed: code is {len(huge):,} characters, over the 100,000 limit",
    )


def test_breakdown_repr_float_and_to_dict(fake_sandbox, hash_embedder) -> None:
    result = code_quality_breakdown(
        WRONG, REFERENCE, TESTS, sandbox=fake_sandbox, embedder=hash_embedder
    )
    assert isinstance(result, CodeQualityBreakdown)
    assert float(result) == result.score
    assert repr(result).startswith(f"CodeQualityBreakdown(score={result.score:.4g}, syntax=1")
    data = result.to_dict()
    assert data["score"] == result.score
    assert data["tests_passed"] == 1
    assert data["execution"]["status"] == "failed"
    assert data["reasons"] == list(result.reasons)
    with pytest.raises(AttributeError):
        result.score = 1.0  # type: ignore[misc]


def test_code_quality_is_thread_safe_and_deterministic(fake_sandbox, hash_embedder) -> None:
    candidates = [REFERENCE, WRONG, "def add(a, b):\n    return b + a\n", "def add(a b):"]
    expected = [
        code_quality(c, REFERENCE, TESTS, sandbox=fake_sandbox, embedder=hash_embedder)
        for c in candidates
    ]
    barrier = threading.Barrier(8)

    def score(index: int) -> float:
        barrier.wait()
        candidate = candidates[index % len(candidates)]
        return code_quality(
            candidate, REFERENCE, TESTS, sandbox=fake_sandbox, embedder=hash_embedder
        )

    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(score, range(64)))
    assert results == [expected[i % len(candidates)] for i in range(64)]
    assert all(0.0 <= value <= 1.0 and not math.isnan(value) for value in results)
