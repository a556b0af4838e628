"""code_quality's opt-in stub cap and wrong-answer gate with a fake sandbox/embedder."""

from __future__ import annotations

from typing import Any

import pytest
from code_testkit import REFERENCE, TESTS, WRONG

from lift_metrics.code import (
    DEFAULT_CODE_QUALITY_WEIGHTS,
    GATED_COMPONENTS,
    code_quality,
    code_quality_breakdown,
    gate_by_wrong_answers,
    is_stub,
)
from lift_metrics.code._tests import count_wrong
from lift_metrics.sandbox import ExecutionResult, TestOutcome

RENAMED = '''def plus(a, b):
    """Return the sum of a and b."""
    return a + b
'''  # right logic, entry point missing: every test fails without a value coming back
CRASHES = '''def add(a, b):
    """Return the sum of a and b."""
    return [a][b]
'''  # a=-1, b=1 and a=1, b=2 raise IndexError; a=2, b=2 raises too: no value ever returned

# --- is_stub: the placeholder shapes -----------------------------------------------------

STUBS = {
    "pass": "def add(a, b):\n    pass\n",
    "ellipsis": "def add(a, b):\n    ...\n",
    "docstring only": 'def add(a, b):\n    """Return the sum."""\n',
    "docstring and pass": 'def add(a, b):\n    """Return the sum."""\n    pass\n',
    "raise NotImplementedError": "def add(a, b):\n    raise NotImplementedError\n",
    "raise NotImplementedError(msg)": "def add(a, b):\n    raise NotImplementedError('todo')\n",
    "bare return": "def add(a, b):\n    return\n",
    "return None": "def add(a, b):\n    return None\n",
    "return 0": "def add(a, b):\n    return 0\n",
    "return -1": "def add(a, b):\n    return -1\n",
    "return []": "def add(a, b):\n    return []\n",
    "return {}": "def add(a, b):\n    return {}\n",
    "return an argument": "def add(a, b):\n    return a\n",
    "async pass": "async def add(a, b):\n    pass\n",
}

NOT_STUBS = {
    "real body": REFERENCE,
    "wrong but real": WRONG,
    "a call": "def add(a, b):\n    return sum([a, b])\n",
    "assignment then return": "def add(a, b):\n    c = a\n    return c\n",
    "raise ValueError": "def add(a, b):\n    raise ValueError('no')\n",
    "return a global name": "LIMIT = 3\n\ndef add(a, b):\n    return LIMIT\n",
    "does not parse": "def add(a, b)\n    pass\n",
    "entry point missing": "def plus(a, b):\n    pass\n",
}


@pytest.mark.parametrize("shape", sorted(STUBS))
def test_is_stub_flags_every_placeholder_shape(shape: str) -> None:
    assert is_stub(STUBS[shape], REFERENCE, entry_point="add") is True
    assert is_stub(STUBS[shape]) is True  # no reference, the only function


@pytest.mark.parametrize("shape", sorted(NOT_STUBS))
def test_is_stub_does_not_flag_working_or_unscorable_code(shape: str) -> None:
    assert is_stub(NOT_STUBS[shape], REFERENCE, entry_point="add") is False


def test_is_stub_is_not_fooled_by_a_reference_that_is_itself_that_short() -> None:
    identity = "def same(x):\n    return x\n"
    constant = "def answer():\n    return 42\n"
    assert is_stub(identity, identity) is False
    assert is_stub(constant, constant, entry_point="answer") is False
    assert is_stub(identity, "def same(x):\n    return list(x)\n") is True


def test_is_stub_looks_at_the_entry_point_only() -> None:
    code = "def helper(x):\n    pass\n\ndef add(a, b):\n    return a + b\n"
    assert is_stub(code, entry_point="add") is False
    assert is_stub(code, entry_point="helper") is True
    assert is_stub(code) is False  # two functions and no entry point: cannot tell


def test_is_stub_rejects_bad_arguments() -> None:
    with pytest.raises(TypeError, match="predicted"):
        is_stub(b"def f(): pass")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="expected"):
        is_stub("def f(): pass", 3)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="entry_point"):
        is_stub("def f(): pass", entry_point="not a name")


# --- the stub cap --------------------------------------------------------------------------


def test_stub_cap_caps_a_stub_and_says_why(fake_sandbox, hash_embedder) -> None:
    stub = STUBS["return 0"]  # passes the (1, -1) -> 0 test: 1 of 3
    plain = code_quality_breakdown(
        stub, REFERENCE, TESTS, sandbox=fake_sandbox, embedder=hash_embedder, profile="seed"
    )
    capped = code_quality_breakdown(
        stub, REFERENCE, TESTS, sandbox=fake_sandbox, embedder=hash_embedder, stub_cap=0.1
    )
    assert plain.stub is True
    assert capped.stub is True
    assert plain.components["tests"] == pytest.approx(1 / 3)
    assert plain.score > 0.1  # syntax and style alone give 0.3 here
    assert capped.score == 0.1
    assert capped.components == plain.components  # components are reported before the cap
    assert any(r.startswith("stub:") and "return a constant" in r for r in capped.reasons)
    assert not any(r.startswith("stub:") for r in plain.reasons)


def test_stub_cap_leaves_other_code_and_low_scores_alone(fake_sandbox, hash_embedder) -> None:
    # the gate and the cap are options of profile="seed" (the plain weighted sum)
    options: dict[str, Any] = {
        "sandbox": fake_sandbox,
        "embedder": hash_embedder,
        "profile": "seed",
    }
    for code in (REFERENCE, WRONG):
        assert code_quality(code, REFERENCE, TESTS, stub_cap=0.0, **options) == code_quality(
            code, REFERENCE, TESTS, **options
        )
    # a cap above the stub's score changes nothing
    stub = STUBS["raise NotImplementedError"]
    low = code_quality(stub, REFERENCE, TESTS, **options)
    assert code_quality(stub, REFERENCE, TESTS, stub_cap=1.0, **options) == low


def test_stub_cap_zero_zeroes_a_stub(fake_sandbox, hash_embedder) -> None:
    score = code_quality(
        STUBS["pass"],
        REFERENCE,
        TESTS,
        sandbox=fake_sandbox,
        embedder=hash_embedder,
        stub_cap=0,
    )
    assert score == 0.0


@pytest.mark.parametrize(
    ("value", "error"),
    [(1.5, ValueError), (-0.1, ValueError), (float("nan"), ValueError), ("0.1", TypeError)],
)
def test_bad_stub_cap_raises_naming_it(value: object, error: type[Exception]) -> None:
    with pytest.raises(error, match="stub_cap"):
        code_quality(REFERENCE, REFERENCE, [], weights=_NO_MODEL, stub_cap=value)  # type: ignore[arg-type]


# --- the wrong-answer gate -----------------------------------------------------------------

_NO_MODEL = {"syntax": 0.2, "tests": 0.4, "semantic": 0, "style": 0.1, "structural": 0.3}


def _by_hand(components: dict[str, float], weights: dict[str, float], keep: float) -> float:
    """Independent reference: sum of w * c, the resemblance components times ``keep``."""
    total = sum(weights.values())
    return sum(
        w
        / total
        * components.get(k, 0.0)
        * (keep if k in ("semantic", "style", "structural") else 1.0)
        for k, w in weights.items()
    )


def test_breakdown_reports_the_wrong_answer_fraction(fake_sandbox, hash_embedder) -> None:
    # the gate and the cap are options of profile="seed" (the plain weighted sum)
    options: dict[str, Any] = {
        "sandbox": fake_sandbox,
        "embedder": hash_embedder,
        "profile": "seed",
    }
    options["entry_point"] = "add"  # the tests call add: the renamed function is not found
    wrong = code_quality_breakdown(WRONG, REFERENCE, TESTS, **options)
    assert wrong.components["tests"] == pytest.approx(1 / 3)
    assert wrong.components["tests.wrong_answers"] == pytest.approx(2 / 3)
    for code in (RENAMED, CRASHES):  # failures, but no wrong value came back
        result = code_quality_breakdown(code, REFERENCE, TESTS, **options)
        assert result.components["tests"] == 0.0
        assert result.components["tests.wrong_answers"] == 0.0
    right = code_quality_breakdown(REFERENCE, REFERENCE, TESTS, **options)
    assert right.components["tests.wrong_answers"] == 0.0
    no_tests = code_quality_breakdown(WRONG, REFERENCE, [], **options)
    assert "tests.wrong_answers" not in no_tests.components


@pytest.mark.parametrize("weights", [None, _NO_MODEL])
def test_gate_scales_resemblance_by_the_share_of_tests_not_answered_wrongly(
    fake_sandbox, hash_embedder, weights: dict[str, float] | None
) -> None:
    # the gate and the cap are options of profile="seed" (the plain weighted sum)
    options: dict[str, Any] = {
        "sandbox": fake_sandbox,
        "embedder": hash_embedder,
        "profile": "seed",
    }
    plain = code_quality_breakdown(WRONG, REFERENCE, TESTS, weights=weights, **options)
    gated = code_quality_breakdown(
        WRONG, REFERENCE, TESTS, weights=weights, wrong_answer_gate=True, **options
    )
    used = dict(DEFAULT_CODE_QUALITY_WEIGHTS) if weights is None else weights
    assert plain.score == pytest.approx(_by_hand(plain.components, used, 1.0))
    assert gated.score == pytest.approx(_by_hand(plain.components, used, 1 / 3))
    assert gated.score < plain.score
    assert any(r.startswith("gate:") and "2 of 3 tests" in r for r in gated.reasons)


def test_gate_keeps_credit_when_tests_fail_for_the_interface_or_a_crash(
    fake_sandbox, hash_embedder
) -> None:
    # the gate and the cap are options of profile="seed" (the plain weighted sum)
    options: dict[str, Any] = {
        "sandbox": fake_sandbox,
        "embedder": hash_embedder,
        "profile": "seed",
    }
    options["entry_point"] = "add"
    for code in (RENAMED, CRASHES, REFERENCE):
        gated = code_quality(code, REFERENCE, TESTS, wrong_answer_gate=True, **options)
        assert gated == code_quality(code, REFERENCE, TESTS, **options)


def test_gate_counts_a_failed_assertion_script_as_a_wrong_answer(fake_sandbox) -> None:
    script = "def check(candidate):\n    assert candidate(1, 2) == 3\n"
    result = code_quality_breakdown(
        WRONG, REFERENCE, script, weights=_NO_MODEL, sandbox=fake_sandbox, wrong_answer_gate=True
    )
    assert result.components["tests.wrong_answers"] == 1.0
    assert result.score == pytest.approx(0.2 * 1.0 + 0.4 * 0.0)  # all resemblance gated away


def test_gate_and_cap_default_to_the_seed_metric(fake_sandbox, hash_embedder) -> None:
    # the gate and the cap are options of profile="seed" (the plain weighted sum)
    options: dict[str, Any] = {
        "sandbox": fake_sandbox,
        "embedder": hash_embedder,
        "profile": "seed",
    }
    for code in (WRONG, STUBS["return 0"], REFERENCE):
        default = code_quality(code, REFERENCE, TESTS, **options)
        explicit = code_quality(
            code, REFERENCE, TESTS, wrong_answer_gate=False, stub_cap=None, **options
        )
        components = code_quality_breakdown(code, REFERENCE, TESTS, **options).components
        seed = 0.2 * components["syntax"] + 0.4 * components["tests"]
        seed += 0.3 * components["semantic"] + 0.1 * components["style"]
        assert default == explicit == pytest.approx(seed)


@pytest.mark.parametrize("value", ["yes", 1, 0.0])
def test_bad_wrong_answer_gate_raises_naming_it(value: object) -> None:
    with pytest.raises(TypeError, match="wrong_answer_gate"):
        code_quality(REFERENCE, REFERENCE, [], weights=_NO_MODEL, wrong_answer_gate=value)  # type: ignore[arg-type]


def test_gate_by_wrong_answers_hand_values() -> None:
    components = {
        "syntax": 1.0,
        "tests": 0.25,
        "semantic": 0.8,
        "style": 0.6,
        "structural": 0.5,
        "style.naming": 1.0,
        "tests.wrong_answers": 0.75,
    }
    gated = gate_by_wrong_answers(components)
    assert gated["semantic"] == pytest.approx(0.2)
    assert gated["style"] == pytest.approx(0.15)
    assert gated["structural"] == pytest.approx(0.125)
    assert gated["syntax"] == 1.0
    assert gated["tests"] == 0.25
    assert gated["style.naming"] == 1.0
    assert components["semantic"] == 0.8  # the input is not changed
    assert gate_by_wrong_answers({"semantic": 0.8}) == {"semantic": 0.8}  # no tests ran
    assert set(GATED_COMPONENTS) == {"semantic", "style", "structural"}


def test_count_wrong_tells_wrong_values_from_other_failures() -> None:
    outcomes = (
        TestOutcome(0, True, {}, 1, "1", None),
        TestOutcome(1, False, {}, 1, "2", None),  # a wrong value
        TestOutcome(2, False, {}, 1, None, "IndexError: list index out of range"),
        TestOutcome(3, False, {}, 1, None, "did not run: the code failed to load"),
    )
    assert count_wrong(ExecutionResult("failed", outcomes, 0.1, "", ""), script=False) == 1
    failed_check = (TestOutcome(0, False, None, None, None, "AssertionError: 2 != 3"),)
    crashed_check = (TestOutcome(0, False, None, None, None, "ZeroDivisionError"),)
    assert count_wrong(ExecutionResult("failed", failed_check, 0.1, "", ""), script=True) == 1
    assert count_wrong(ExecutionResult("failed", crashed_check, 0.1, "", ""), script=True) == 0
