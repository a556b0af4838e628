"""The IR pydantic model: JSON round trip, validation, JSON schema, type-hint normalisation."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import given, strategies as st
from pydantic import ValidationError

from lift_metrics.ir import (
    IR,
    EffectKind,
    HasParameterConstraint,
    PureConstraint,
    ReturnTypeConstraint,
    normalize_type_hint,
)

REPO = Path(__file__).resolve().parents[2]


def test_contract_example_validates_with_the_right_classes(fib_ir: dict[str, Any]) -> None:
    ir = IR.model_validate(fib_ir)
    assert ir.signature.parameters[0].type_hint == "int"
    assert [e.kind for e in ir.effects] == [EffectKind.RAISES, EffectKind.RETURNS]
    assert isinstance(ir.constraints[0], ReturnTypeConstraint)
    assert isinstance(ir.constraints[1], HasParameterConstraint)
    assert isinstance(ir.constraints[3], PureConstraint)


def test_json_round_trip_is_lossless(fib_ir: dict[str, Any]) -> None:
    ir = IR.model_validate(fib_ir)
    assert IR.model_validate_json(ir.model_dump_json()) == ir
    assert IR.model_validate(json.loads(ir.model_dump_json())) == ir
    # dumping without None fields gives back exactly the contract's JSON
    assert ir.model_dump(mode="json", exclude_none=True) == fib_ir


def test_missing_effects_and_constraints_are_empty_lists() -> None:
    ir = IR.model_validate({"intent": {"description": "x"}, "signature": {"name": "f"}})
    assert ir.effects == []
    assert ir.constraints == []
    assert ir.signature.parameters == []
    assert ir.signature.return_type is None


@pytest.mark.parametrize(
    ("patch", "where"),
    [
        ({"signature": None}, "signature"),
        ({"effects": [{"kind": "teleports"}]}, "effects.0.kind"),
        ({"constraints": [{"kind": "no_such_kind"}]}, "constraints.0"),
        (
            {"constraints": [{"kind": "param_count", "count": -1}]},
            "constraints.0.param_count.count",
        ),
        ({"constraints": [{"kind": "max_effects"}]}, "constraints.0.max_effects.limit"),
        ({"constraints": [{"type_hint": "int"}]}, "constraints.0"),
    ],
)
def test_invalid_shapes_are_rejected(
    fib_ir: dict[str, Any], patch: dict[str, Any], where: str
) -> None:
    with pytest.raises(ValidationError) as info:
        IR.model_validate({**fib_ir, **patch})
    locations = {".".join(map(str, e["loc"])) for e in info.value.errors()}
    assert any(loc.startswith(where) for loc in locations), locations


def test_models_are_frozen(fib_ir: dict[str, Any]) -> None:
    ir = IR.model_validate(fib_ir)
    with pytest.raises(ValidationError):
        ir.signature.name = "other"  # type: ignore[misc]


def test_effect_kind_taxonomy_is_the_contracts_eight_kinds() -> None:
    assert {k.value for k in EffectKind} == {
        "reads", "writes", "calls", "raises", "returns", "io", "network", "mutation",
    }  # fmt: skip
    assert EffectKind.IO == "io"


# ------------------------------------------------------------------ JSON schema

# keywords llama.cpp's json-schema-to-grammar and OpenAI-style response_format understand
SIMPLE_KEYWORDS = {
    "type", "properties", "required", "items", "enum", "const", "anyOf", "$ref", "$defs",
    "default", "minimum",
}  # fmt: skip


def _keywords(node: Any, inside_properties: bool = False) -> set[str]:
    found: set[str] = set()
    if isinstance(node, dict):
        for key, value in node.items():
            if not inside_properties and key not in ("$defs",):
                found.add(key)
            found |= _keywords(value, inside_properties=key in ("properties", "$defs"))
    elif isinstance(node, list):
        for item in node:
            found |= _keywords(item)
    return found


def test_json_schema_is_valid_and_uses_only_simple_keywords() -> None:
    schema = IR.json_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    assert _keywords(schema) - SIMPLE_KEYWORDS - {"$defs"} == set()
    json.dumps(schema)  # serialisable
    assert IR.json_schema() is not IR.json_schema()  # callers may mutate their copy


def test_json_schema_accepts_valid_irs_and_rejects_invalid_ones(fib_ir: dict[str, Any]) -> None:
    validator = jsonschema.Draft202012Validator(IR.json_schema())
    assert validator.is_valid(fib_ir)
    assert not validator.is_valid({**fib_ir, "signature": None})
    assert not validator.is_valid({**fib_ir, "effects": [{"kind": "teleports"}]})
    # a constraint must carry its kind so that a decoder emits it and pydantic can dispatch
    assert not validator.is_valid({**fib_ir, "constraints": [{"type_hint": "int"}]})


def _dataset_irs() -> list[Any]:
    irs: list[Any] = []
    for path, keys in (
        (REPO / "datasets" / "tasks" / "tasks.jsonl", ("expected_ir",)),
        (REPO / "datasets" / "labels" / "ir_pairs.jsonl", ("predicted", "expected")),
    ):
        if path.exists():
            for line in path.read_text().splitlines():
                if line.strip():
                    record = json.loads(line)
                    irs.extend(record[key] for key in keys if key in record)
    return irs


def test_every_ir_in_the_datasets_validates_against_model_and_schema() -> None:
    irs = _dataset_irs()
    if not irs:
        pytest.skip("datasets/tasks and datasets/labels hold no IRs yet")
    validator = jsonschema.Draft202012Validator(IR.json_schema())
    for ir in irs:
        IR.model_validate(ir)
        errors = [e.message for e in validator.iter_errors(ir)]
        assert errors == [], (ir, errors)


# ------------------------------------------------------------------ type hints


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("List[int]", "list[int]"),
        ("typing.List[int]", "list[int]"),
        ("dict[str,int]", "dict[str, int]"),
        ("Dict[str, List[int]]", "dict[str, list[int]]"),
        ("Optional[str]", "str | None"),
        ("None | str", "str | None"),
        ("Union[str, None]", "str | None"),
        ("Union[int, str]", "str | int"),
        ("Optional[Union[int, str]]", "int | str | None"),
        ("Tuple[int, ...]", "tuple[int, ...]"),
        ("'Node'", "Node"),
        ("  int ", "int"),
        ("NoneType", "None"),
    ],
)
def test_equivalent_type_hints_normalise_equal(a: str, b: str) -> None:
    assert normalize_type_hint(a) == normalize_type_hint(b)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("list[int]", "list[str]"),
        ("int", "int | None"),
        ("list[int]", "set[int]"),
        ("Literal['a']", "Literal['b']"),
        ("Tuple[int, str]", "tuple[str, int]"),
    ],
)
def test_different_type_hints_stay_different(a: str, b: str) -> None:
    assert normalize_type_hint(a) != normalize_type_hint(b)


def test_unparsable_and_empty_type_hints() -> None:
    assert normalize_type_hint(None) is None
    assert normalize_type_hint("   ") is None
    assert normalize_type_hint("a list  of ints") == "a list of ints"


@given(st.sampled_from(["int", "str", "float", "bytes", "bool"]), st.permutations(range(3)))
def test_union_order_does_not_matter(first: str, order: list[int]) -> None:
    members = [first, "list[int]", "None"]
    shuffled = " | ".join(members[i] for i in order)
    assert normalize_type_hint(shuffled) == normalize_type_hint(" | ".join(members))
    assert normalize_type_hint(shuffled).endswith("None")  # type: ignore[union-attr]
