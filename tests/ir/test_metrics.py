"""ir_quality and its sub-metrics against hand-computed values and independent references."""

from __future__ import annotations

import copy
import math
from typing import Any

import pytest
from hypothesis import given, settings, strategies as st
from pydantic import ValidationError
from testkit import TokenizingEmbedder, edit_distance

from lift_metrics.ir import (
    IR,
    EffectKind,
    constraint_match,
    constraint_satisfied,
    intent_match,
    ir_quality,
    ir_quality_breakdown,
    signature_match,
    structure_match,
)

NO_INTENT = {"intent": 0, "signature": 0.3, "structure": 0.2, "constraints": 0.2}


def make_ir(
    *,
    name: str = "f",
    params: list[tuple[str, str | None]] | None = None,
    returns: str | None = "int",
    effects: list[str] | None = None,
    constraints: list[dict[str, Any]] | None = None,
    intent: str = "Do something.",
) -> IR:
    return IR.model_validate(
        {
            "intent": {"description": intent},
            "signature": {
                "name": name,
                "parameters": [{"name": n, "type_hint": t} for n, t in (params or [])],
                "return_type": returns,
            },
            "effects": [{"kind": k} for k in (effects or [])],
            "constraints": constraints or [],
        }
    )


# ------------------------------------------------------------------ constraints


@pytest.mark.parametrize(
    ("constraint", "satisfied", "violated"),
    [
        (
            {"kind": "return_type", "type_hint": "list[int]"},
            make_ir(returns="List[int]"),
            make_ir(returns="list[str]"),
        ),
        (
            {"kind": "return_type", "type_hint": "str | None"},
            make_ir(returns="Optional[str]"),
            make_ir(returns=None),
        ),
        (
            {"kind": "has_parameter", "name": "n", "type_hint": "int"},
            make_ir(params=[("x", "str"), ("n", "int")]),
            make_ir(params=[("n", "float")]),
        ),
        (
            {"kind": "has_parameter", "name": "n", "type_hint": None},
            make_ir(params=[("n", "float")]),
            make_ir(params=[("m", "float")]),
        ),
        (
            {"kind": "param_count", "count": 2},
            make_ir(params=[("a", None), ("b", None)]),
            make_ir(),
        ),
        ({"kind": "param_count", "count": 0}, make_ir(), make_ir(params=[("a", None)])),
        ({"kind": "effect_present", "effect": "raises"}, make_ir(effects=["raises"]), make_ir()),
        (
            {"kind": "effect_absent", "effect": "io"},
            make_ir(effects=["returns"]),
            make_ir(effects=["returns", "io"]),
        ),
        (
            {"kind": "max_effects", "limit": 2},
            make_ir(effects=["reads", "returns"]),
            make_ir(effects=["reads", "returns", "raises"]),
        ),
        (
            {"kind": "pure"},
            make_ir(effects=["reads", "calls", "raises", "returns"]),
            make_ir(effects=["returns", "mutation"]),
        ),
    ],
)
def test_constraint_satisfied_decides_each_kind(
    constraint: dict[str, Any], satisfied: IR, violated: IR
) -> None:
    assert constraint_satisfied(satisfied, constraint) is True
    assert constraint_satisfied(violated, constraint) is False
    model = IR.model_validate({**satisfied.model_dump(), "constraints": [constraint]}).constraints[
        0
    ]
    assert constraint_satisfied(satisfied, model) is True
    assert constraint_satisfied(violated, model) is False


@pytest.mark.parametrize("impure", ["io", "network", "writes", "mutation"])
def test_pure_rejects_each_impure_kind(impure: str) -> None:
    assert not constraint_satisfied(make_ir(effects=["returns", impure]), {"kind": "pure"})


def test_constraint_satisfied_rejects_non_constraints() -> None:
    with pytest.raises(ValidationError):
        constraint_satisfied(make_ir(), {"kind": "always_true"})
    with pytest.raises(TypeError, match="constraint must be an IR constraint"):
        constraint_satisfied(make_ir(), "pure")  # type: ignore[arg-type]


def test_constraint_match_counts_the_expected_constraints() -> None:
    expected = make_ir(
        constraints=[
            {"kind": "return_type", "type_hint": "int"},
            {"kind": "param_count", "count": 1},
            {"kind": "pure"},
            {"kind": "effect_present", "effect": "raises"},
        ]
    )
    predicted = make_ir(returns="int", params=[("x", None)], effects=["io"])
    # return type and param count hold, pure and effect_present do not: 2 / 4
    assert constraint_match(predicted, expected) == 0.5
    assert constraint_match(predicted, make_ir()) == 1.0  # no constraints: 1.0 (docs/ir.md)


# ------------------------------------------------------------------ signature


def test_signature_match_hand_computed() -> None:
    e = make_ir(name="fib", params=[("n", "int")], returns="int")
    assert signature_match(e, e) == 1.0
    # name wrong (0), params equal (1), return equal (1) -> 2/3
    assert signature_match(make_ir(name="fibo", params=[("n", "int")]), e) == pytest.approx(2 / 3)
    # wrong return type keeps 0.5 (docs/decisions.md): (1 + 1 + 0.5) / 3
    assert signature_match(make_ir(name="fib", params=[("n", "int")], returns="str"), e) == (
        pytest.approx(2.5 / 3)
    )
    # param type differs: same name 0.5, other type 0 -> (1 + 0.5 + 1) / 3
    e_one = make_ir(name="fib", params=[("n", "int")])
    assert signature_match(make_ir(name="fib", params=[("n", "float")]), e_one) == pytest.approx(
        2.5 / 3
    )
    # type unknown: same name 0.5, unknown type 0.25 -> (1 + 0.75 + 1) / 3
    assert signature_match(make_ir(name="fib", params=[("n", None)]), e_one) == pytest.approx(
        2.75 / 3
    )
    # order matters: [b, a] against [a, b] matches at no position -> (1 + 0 + 1) / 3
    ab = make_ir(params=[("a", "int"), ("b", "int")])
    assert signature_match(make_ir(params=[("b", "int"), ("a", "int")]), ab) == pytest.approx(2 / 3)
    # an extra third parameter: 2 of the longer list's 3 positions match -> (1 + 2/3 + 1) / 3
    abc = make_ir(params=[("a", "int"), ("b", "int"), ("c", "int")])
    assert signature_match(abc, ab) == pytest.approx((2 + 2 / 3) / 3)
    # two zero-argument signatures match (docs/decisions.md: two empty lists match)
    assert signature_match(make_ir(), make_ir()) == 1.0
    # spelling differences of the same type do not matter
    assert (
        signature_match(
            make_ir(params=[("xs", "List[int]")], returns="Optional[int]"),
            make_ir(params=[("xs", "list[int]")], returns="int | None"),
        )
        == 1.0
    )


names = st.sampled_from(["a", "b", "n", "xs"])
hints = st.sampled_from([None, "int", "str", "list[int]"])
params_strategy = st.lists(st.tuples(names, hints), max_size=4, unique_by=lambda p: p[0])


@given(params_strategy, params_strategy, st.booleans(), hints, hints)
def test_signature_match_matches_an_independent_reference(
    p: list[tuple[str, str | None]],
    e: list[tuple[str, str | None]],
    same_name: bool,
    p_ret: str | None,
    e_ret: str | None,
) -> None:
    predicted = make_ir(name="f" if same_name else "g", params=p, returns=p_ret)
    expected = make_ir(name="f", params=e, returns=e_ret)
    # position i: 0 for another name, else 1 (same type) / 0.75 (one unknown) / 0.5 (other)
    credit = {True: 1.0, False: 0.5}
    points = 0.0
    for i in range(min(len(p), len(e))):
        (pn, pt), (en, et) = p[i], e[i]
        if pn == en:
            points += 0.75 if (pt is None) != (et is None) else credit[pt == et]
    longest = max(len(p), len(e))
    params = points / longest if longest else 1.0
    reference = ((1.0 if same_name else 0.0) + params + (1.0 if p_ret == e_ret else 0.5)) / 3
    assert signature_match(predicted, expected) == pytest.approx(reference)


# ------------------------------------------------------------------ structure


kinds = st.lists(st.sampled_from([k.value for k in EffectKind]), max_size=7)


@given(kinds, kinds)
@settings(max_examples=200)
def test_structure_match_is_normalised_levenshtein(a: list[str], b: list[str]) -> None:
    longest = max(len(a), len(b))
    reference = 1.0 if longest == 0 else 1.0 - edit_distance(a, b) / longest
    assert structure_match(make_ir(effects=a), make_ir(effects=b)) == pytest.approx(reference)


def test_structure_match_order_matters_and_edges() -> None:
    assert (
        structure_match(
            make_ir(effects=["reads", "returns"]), make_ir(effects=["returns", "reads"])
        )
        == 0.0
    )
    assert structure_match(make_ir(), make_ir()) == 1.0
    assert structure_match(make_ir(), make_ir(effects=["returns"])) == 0.0


# ------------------------------------------------------------------ intent and ir_quality


def test_intent_match_uses_the_given_embedder(hash_embedder: Any) -> None:
    a = make_ir(intent="Sort the list in place.")
    b = make_ir(intent="Sort the list in place.")
    c = make_ir(intent="Open a network socket.")
    assert intent_match(a, b, embedder=hash_embedder) == 1.0  # identical text: exactly 1
    assert hash_embedder.calls == []  # identical strings short-circuit
    assert intent_match(a, c, embedder=hash_embedder) < intent_match(
        a, make_ir(intent="Sort the list."), embedder=hash_embedder
    )
    assert len(hash_embedder.calls) == 2


def test_a_lone_surrogate_in_an_intent_is_embedded_as_a_replacement_character() -> None:
    # JSON's "\ud800" gives a str that the model's tokenizer refuses (TypeError)
    broken = '{"intent": {"description": "Sort the list \\ud800 in place."}, ' + (
        '"signature": {"name": "f", "parameters": []}}'
    )
    embedder = TokenizingEmbedder()
    reference = make_ir(intent="Sort the list in place.")
    score = ir_quality(broken, reference, embedder=embedder)
    assert score == ir_quality(
        broken.replace("\\ud800", "\ufffd"), reference, embedder=TokenizingEmbedder()
    )
    assert "\ufffd" in embedder.calls[0][0]


def test_ir_quality_is_the_weighted_sum_of_its_parts(
    fib_ir: dict[str, Any], hash_embedder: Any
) -> None:
    predicted = copy.deepcopy(fib_ir)
    predicted["intent"]["description"] = "Compute Fibonacci numbers."
    predicted["signature"]["return_type"] = "str"
    predicted["effects"] = [{"kind": "returns"}, {"kind": "io"}]
    parts = {
        "intent": intent_match(predicted, fib_ir, embedder=hash_embedder),
        "signature": signature_match(predicted, fib_ir),
        "structure": structure_match(predicted, fib_ir),
        "constraints": constraint_match(predicted, fib_ir),
    }
    # hand-computed: signature (1 + 1 + 0.5)/3; structure [returns, io] vs [raises, returns]
    # = 2 edits / 2 = 0; constraints: return_type and effect_absent io and pure fail: 1/4 of
    # the expected ones met, and the same three of its own (copied) constraints contradict
    # its own return type and io effect: 1/4 kept -> 1/16, and one usability defect (x 0.7)
    assert parts["signature"] == pytest.approx(2.5 / 3)
    assert parts["structure"] == 0.0
    assert parts["constraints"] == 0.25 * 0.25
    weighted = 0.3 * parts["intent"] + 0.3 * parts["signature"] + 0.2 * 0.0 + 0.2 / 16
    result = ir_quality_breakdown(predicted, fib_ir, embedder=hash_embedder)
    assert result.score == pytest.approx(0.7 * weighted)
    assert result.usability == 0.7
    assert result.defects == ("3 of its own constraint(s) contradict its signature or effects",)
    assert ir_quality(predicted, fib_ir, embedder=hash_embedder) == result.score
    assert result.components == pytest.approx(parts)
    assert set(result.failed_constraints) == {
        "returns int",
        "lists no 'io' effect",
        "is pure (no io, network, writes or mutation effects)",
    }
    assert any(r.startswith("signature: return type str, expected int") for r in result.reasons)
    assert any(r.startswith("structure: effect kinds ['returns', 'io']") for r in result.reasons)
    assert result.to_dict()["score"] == result.score


def test_custom_weights_are_normalised(fib_ir: dict[str, Any]) -> None:
    predicted = {**fib_ir, "signature": {**fib_ir["signature"], "name": "fib"}}
    weights = {"intent": 0, "signature": 2, "structure": 1, "constraints": 1}
    # signature (0 + 1 + 1)/3 weighted 1/2, structure and constraints 1 weighted 1/4 each;
    # the wrong name is a usability defect (x 0.7)
    assert ir_quality(predicted, fib_ir, weights=weights) == pytest.approx(
        0.7 * (0.5 * 2 / 3 + 0.5)
    )


class ExplodingEmbedder:
    def embed(self, texts: Any) -> Any:
        raise AssertionError("the embedder must not be called when the intent weight is 0")


def test_zero_intent_weight_never_touches_the_embedder(fib_ir: dict[str, Any]) -> None:
    other = {**fib_ir, "intent": {"description": "Something else entirely."}}
    result = ir_quality_breakdown(other, fib_ir, weights=NO_INTENT, embedder=ExplodingEmbedder())
    assert result.score == 1.0
    assert math.isnan(result.components["intent"])


@pytest.mark.parametrize(
    ("weights", "error", "message"),
    [
        ({"intent": 1.0}, ValueError, "weights must have exactly the keys"),
        ({**NO_INTENT, "style": 1}, ValueError, "weights must have exactly the keys"),
        ({**NO_INTENT, "signature": -1}, ValueError, "weights\\['signature'\\] must be >= 0"),
        ({k: 0 for k in NO_INTENT}, ValueError, "weights must sum to a positive number"),
        ([0.3, 0.3, 0.2, 0.2], TypeError, "weights must be a mapping"),
    ],
)
def test_bad_weights_name_the_problem(
    fib_ir: dict[str, Any], weights: Any, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        ir_quality(fib_ir, fib_ir, weights=weights)


def test_inputs_that_are_not_irs() -> None:
    with pytest.raises(TypeError, match="predicted must be an IR"):
        ir_quality(42, make_ir())  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="no JSON object found"):
        ir_quality("garbage", make_ir())


@pytest.mark.slow
def test_real_embedder_ranks_a_paraphrase_above_an_unrelated_intent() -> None:
    pytest.importorskip("sentence_transformers")
    base = make_ir(intent="Return the n-th Fibonacci number.")
    paraphrase = make_ir(intent="Compute the nth number of the Fibonacci sequence.")
    unrelated = make_ir(intent="Send an email to every user in the database.")
    close = intent_match(paraphrase, base)
    far = intent_match(unrelated, base)
    assert 0.0 <= far < close <= 1.0
    assert close > 0.7
    # a lone surrogate reaches the model's tokenizer as U+FFFD, not as a TypeError
    assert intent_match(make_ir(intent="Return the n-th Fibonacci number.\ud800"), base) > 0.9
