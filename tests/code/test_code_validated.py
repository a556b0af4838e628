"""The validated code_quality profile: extraction, non-code, correctness first, no-test score.

Real sandbox throughout; a deterministic fake embedder for speed, and one test with the real
bundled embedding model.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings, strategies as st

from lift_metrics.code import (
    FAIL_CEILING,
    CodeQualityOptions,
    code_quality,
    code_quality_breakdown,
    code_quality_options,
    degenerate_kind,
    extract_code,
)
from lift_metrics.code._validated import validated_score

PROMPT = '''def add(a: int, b: int) -> int:
    """Return the sum of a and b.
    >>> add(1, 2)
    3
    """
'''
BODY = "    return a + b\n"
REFERENCE = PROMPT + BODY
TESTS = [({"a": i, "b": 2 * i}, 3 * i) for i in range(5)]
CHECK = "def check(candidate):\n    assert candidate(1, 2) == 3\n    assert candidate(-1, 1) == 0\n"

VARIANTS: dict[str, str] = {
    "stub": PROMPT + "    pass\n",
    "return None": PROMPT + "    return None\n",
    "constant": PROMPT + "    return 7\n",
    "infinite loop": PROMPT + "    while True:\n        pass\n",
    "crash": PROMPT + "    raise ValueError('boom')\n",
    "sys.exit(0)": PROMPT + "    import sys\n    sys.exit(0)\n",
    "placeholder": "{code}",
    "prompt echo": PROMPT,
    "imports only": "import math\nfrom typing import List\n",
    "mutated operator": PROMPT + "    return a - b\n",
    "prose": "You can add the two numbers together and return the result.",
}
DEGENERATE = {"stub", "placeholder", "prompt echo", "imports only", "prose"}


@pytest.fixture
def score(real_sandbox: Any, hash_embedder: Any) -> Any:
    def run(code: str, tests: Any = TESTS, **kwargs: Any) -> Any:
        return code_quality_breakdown(
            code,
            REFERENCE,
            tests,
            sandbox=real_sandbox,
            embedder=hash_embedder,
            entry_point="add",
            timeout_s=1.0,
            **kwargs,
        )

    return run


# --- correctness dominates --------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("tests", [TESTS, CHECK], ids=["io-cases", "check-script"])
def test_every_failing_variant_scores_at_most_0_2_and_below_the_correct_one(
    score: Any, tests: Any
) -> None:
    correct = score(REFERENCE, tests)
    assert correct.score == 1.0
    assert correct.reasons == ()
    for name, code in VARIANTS.items():
        if name == "mutated operator" and tests is TESTS:
            continue  # a - b passes the a=b=0 case: checked below
        result = score(code, tests)
        assert result.tests_passed == 0, name
        assert result.score <= FAIL_CEILING, name
        if name in DEGENERATE:
            assert result.score <= 0.05, name
            assert result.degenerate, name
            assert any(r.startswith("degenerate:") for r in result.reasons), name


@pytest.mark.slow
def test_timeouts_crashes_and_exits_are_failures_with_reasons(score: Any) -> None:
    for name in ("infinite loop", "crash", "sys.exit(0)"):
        result = score(VARIANTS[name])
        assert result.tests_passed == 0, name
        assert result.execution is not None, name
        assert any("no test passed" in r for r in result.reasons), name
    assert score(VARIANTS["infinite loop"]).execution.status == "timeout"


@pytest.mark.slow
def test_one_passed_test_beats_any_failing_output(score: Any) -> None:
    mutated = score(VARIANTS["mutated operator"])  # a - b: only a=b=0 passes
    assert mutated.tests_passed == 1
    others = [score(code).score for name, code in VARIANTS.items() if name != "mutated operator"]
    assert mutated.score >= 0.25 > max(others)


def test_a_missing_entry_point_fails_the_tests(score: Any) -> None:
    renamed = REFERENCE.replace("def add", "def plus")
    result = score(renamed)
    assert result.tests_passed == 0
    assert result.score <= FAIL_CEILING


def test_code_that_does_not_parse_fails_without_a_process(score: Any) -> None:
    result = score("def add(a, b) return a + b")
    assert result.execution is None
    assert result.score <= FAIL_CEILING
    assert result.components["syntax"] == 0.0


# --- read code as users hand it over ----------------------------------------------------------


def test_fenced_and_prose_wrapped_correct_code_scores_as_the_code(score: Any) -> None:
    for answer in (
        "```python\n" + REFERENCE + "```",
        "Here is the function:\n\n```\n" + REFERENCE + "```\n\nIt adds the numbers.",
        "~~~py\n" + REFERENCE + "~~~\n",
        "Here is the function you asked for:\n" + REFERENCE + "\nThis returns their sum.\n",
    ):
        result = score(answer)
        assert result.score == 1.0, answer
        assert result.code is not None, answer
        assert result.code.strip() == REFERENCE.strip()


def test_a_body_only_completion_is_scored_with_the_prompt(score: Any) -> None:
    assert score(BODY, prompt=PROMPT).score == 1.0
    assert score(BODY).score <= FAIL_CEILING  # without the prompt it is not a function
    assert score("    pass\n", prompt=PROMPT).degenerate is not None
    assert score(PROMPT, prompt=PROMPT).degenerate == "the prompt echoed with no body"


def test_extract_code_picks_the_block_with_the_entry_function() -> None:
    text = "```python\nimport math\n```\ntext\n```python\ndef f():\n    return 1\n```\n"
    assert extract_code(text, entry_point="f") == "def f():\n    return 1\n"
    assert extract_code(text) == "import math\n"  # first that parses without an entry point
    assert extract_code("```python\ndef f(:\n```") == "def f(:\n"  # broken code is kept
    assert extract_code("def f(x) return x") == "def f(x) return x"  # nothing cut from it
    assert extract_code("```python\ndef f():\n    return 1\n") == "def f():\n    return 1\n"
    assert extract_code("`sorted(d)`") == "sorted(d)"


# --- non-code -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("", "empty text"),
        ("   \n\t", "empty text"),
        ("{code}", "template placeholder"),
        ("{ ... }", "template placeholder"),
        ("<code>", "template placeholder"),
        ("TODO: implement", "template placeholder"),
        ("...", "template placeholder"),
        ("```python\n```", "empty code block"),
        ("I could not solve this task, sorry about that.", "prose"),
    ],
)
def test_non_code_is_degenerate_everywhere(text: str, kind: str) -> None:
    for function in (True, False):
        found = degenerate_kind(text, function=function)
        assert found is not None, (text, function)
        assert found.startswith(kind), (text, function)


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("result", "a bare name"),
        ("import os\nimport sys\n", "import lines only"),
        ("# just a comment\n", "no code"),
        ("'Here is the code'", "only a string"),
        ("def add(a, b):\n    raise NotImplementedError\n", "the entry function has no body"),
        ('def add(a, b):\n    import math\n    """Doc."""\n', "the entry function has no body"),
    ],
)
def test_where_a_function_is_asked_these_are_degenerate_too(text: str, kind: str) -> None:
    found = degenerate_kind(text, entry_point="add")
    assert found is not None
    assert found.startswith(kind)


@pytest.mark.parametrize(
    "snippet",
    ["result", "sorted(d)", "x[::-1]", "import os", "{'a': 1}", "{1, 2}", "{k: v for k, v in d}"],
)
def test_a_snippet_is_legitimate_without_a_function_asked(snippet: str) -> None:
    assert degenerate_kind(snippet) is None


def test_degenerate_answers_score_0_without_tests_too(hash_embedder: Any) -> None:
    for code in ("{code}", "def add(a, b):\n    pass\n", "def plus(a, b):\n    return a + b\n"):
        result = code_quality_breakdown(code, REFERENCE, [], embedder=hash_embedder)
        assert result.score == 0.0, code
        assert result.degenerate, code
    snippet = code_quality_breakdown("{code}", "sorted(d)", [], embedder=hash_embedder)
    assert snippet.score == 0.0


# --- without tests ----------------------------------------------------------------------------


def test_without_tests_the_score_is_the_reference_score(hash_embedder: Any) -> None:
    from lift_metrics.code import reference_score

    snippet = "sorted(d.items(), key=lambda kv: kv[1])"
    expected = "sorted(d, key=d.get)"
    result = code_quality_breakdown(snippet, expected, [], embedder=hash_embedder)
    assert result.score == reference_score(snippet, expected, embedder=hash_embedder)
    assert "tests" not in result.components
    assert result.execution is None


def test_a_reference_that_does_not_parse_never_raises(hash_embedder: Any) -> None:
    fragment = "df.groupby('a').agg("
    result = code_quality_breakdown("df.groupby('a').sum()", fragment, [], embedder=hash_embedder)
    assert 0.0 <= result.score <= 1.0
    assert any(r.startswith("reference: does not parse") for r in result.reasons)
    seed = code_quality_breakdown(
        "df.groupby('a').sum()", fragment, [], embedder=hash_embedder, profile="seed"
    )
    assert any(r.startswith("reference: does not parse") for r in seed.reasons)


# --- the formula ------------------------------------------------------------------------------


@given(
    n=st.integers(1, 20),
    data=st.data(),
    r1=st.floats(0, 1),
    r2=st.floats(0, 1),
)
@settings(max_examples=300, deadline=None)
def test_more_passed_tests_never_score_lower_whatever_the_resemblance(
    n: int, data: Any, r1: float, r2: float
) -> None:
    k = data.draw(st.integers(0, n - 1))
    assert validated_score(k + 1, n, r2) > validated_score(k, n, r1)
    assert validated_score(0, n, r1) <= FAIL_CEILING < 0.25 <= validated_score(1, n, r2)
    assert validated_score(n, n, 1.0) == 1.0


# --- options ----------------------------------------------------------------------------------


def test_options_are_one_frozen_object() -> None:
    options = code_quality_options()
    assert options == CodeQualityOptions()
    assert options.validated
    with pytest.raises(AttributeError):
        options.profile = "seed"  # type: ignore[misc]
    assert code_quality_options(options) is options
    assert code_quality_options(options, timeout_s=2).timeout_s == 2.0
    neutral = code_quality_options(similarity_floor=0.0, wrong_answer_gate=False)
    assert neutral.validated  # the neutral values of profile="seed"'s options select nothing
    assert code_quality_options(stub_cap=0.0).profile == "custom"


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"profile": "validated", "weights": {"tests": 1}}, ValueError, "not a weighted sum"),
        ({"profile": "shipped", "stub_cap": 0.1}, ValueError, "not both"),
        ({"profile": "best"}, ValueError, "profile must be one of"),
        ({"profile": 3}, TypeError, "profile must be one of"),
        ({"prompt": 3}, TypeError, "prompt must be a str"),
    ],
)
def test_bad_options_raise_naming_them(kwargs: dict[str, Any], error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        code_quality(REFERENCE, REFERENCE, [], **kwargs)


def test_a_sandbox_that_cannot_run_raises() -> None:
    from lift_metrics.sandbox import SandboxUnavailableError

    class Broken:
        def run_tests(self, *args: Any, **kwargs: Any) -> Any:
            raise SandboxUnavailableError("no sandbox here")

    with pytest.raises(SandboxUnavailableError):
        code_quality(REFERENCE, REFERENCE, TESTS, sandbox=Broken(), embedder=_Parallel())


class _Parallel:
    def embed(self, texts: list[str]) -> Any:
        import numpy as np

        return np.ones((len(texts), 2)) / np.sqrt(2)


@pytest.mark.slow
def test_the_rules_hold_with_the_real_embedding_model(real_sandbox: Any) -> None:
    scores = {
        name: code_quality(
            code, REFERENCE, TESTS, sandbox=real_sandbox, entry_point="add", timeout_s=1.0
        )
        for name, code in VARIANTS.items()
    }
    correct = code_quality(REFERENCE, REFERENCE, TESTS, sandbox=real_sandbox)
    assert correct == 1.0
    for name, value in scores.items():
        if name == "mutated operator":
            assert 0.25 <= value < correct
        elif name in DEGENERATE:
            assert value <= 0.05, name
        else:
            assert value <= FAIL_CEILING, name
    seed_stub = code_quality(
        VARIANTS["stub"], REFERENCE, CHECK, sandbox=real_sandbox, profile="seed"
    )
    assert seed_stub > 0.4  # what profile="seed" gives a stub: why it is not the default
