"""parse_ir: sloppy language-model output into an IR, or a clear IRParseError."""

from __future__ import annotations

import json
from typing import Any

import pytest

from lift_metrics.ir import IR, EffectKind, IRParseError, parse_ir


def test_ir_and_dict_and_plain_json(fib_ir: dict[str, Any]) -> None:
    expected = IR.model_validate(fib_ir)
    assert parse_ir(expected) is expected
    assert parse_ir(fib_ir) == expected
    assert parse_ir(json.dumps(fib_ir)) == expected
    assert parse_ir(json.dumps(fib_ir).encode()) == expected


@pytest.mark.parametrize(
    "template",
    [
        "```json\n{ir}\n```",
        "```\n{ir}\n```",
        "Here is the IR you asked for:\n```json\n{ir}\n```\nLet me know if you need more.",
        "Sure! The IR is {ir} and that is all.",
        "[[ ## ir ## ]]\n{ir}\n\n[[ ## completed ## ]]",
    ],
)
def test_fenced_and_embedded_json(fib_ir: dict[str, Any], template: str) -> None:
    text = template.replace("{ir}", json.dumps(fib_ir, indent=2))
    assert parse_ir(text) == IR.model_validate(fib_ir)


def test_forgiving_rewrites() -> None:
    text = json.dumps(
        {
            "ir": {
                "intent": "Print a greeting.",
                "signature": {"name": "greet", "parameters": ["name"], "return_type": None},
                "effects": ["I/O", {"kind": "Returns"}, "mutates"],
                "constraints": None,
                "confidence": 0.9,
            }
        }
    )
    ir = parse_ir(text)
    assert ir.intent.description == "Print a greeting."
    assert ir.signature.parameters[0].name == "name"
    assert ir.signature.parameters[0].type_hint is None
    assert [e.kind for e in ir.effects] == [EffectKind.IO, EffectKind.RETURNS, EffectKind.MUTATION]
    assert ir.constraints == []


def test_almost_json_is_repaired() -> None:
    text = "{'intent': {'description': 'x'}, 'signature': {'name': 'f',},}"
    assert parse_ir(text).signature.name == "f"


def test_first_valid_candidate_wins(fib_ir: dict[str, Any]) -> None:
    text = '```json\n{"not": "an ir"}\n```\n```json\n' + json.dumps(fib_ir) + "\n```"
    assert parse_ir(text).signature.name == "fibonacci"


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("", "no JSON object found"),
        ("I could not produce an IR.", "no JSON object found in the text 'I could not"),
        ('{"intent": {"description": "x"}}', "signature: Field required"),
        ('{"intent": {"description": "x"}, "signature": {"name": "f"}, "effects": [{"kind": "x"}]}',
         "effects.0.kind"),
        ("[1, 2, 3]", "no JSON object found"),
    ],
)  # fmt: skip
def test_errors_say_what_is_wrong(source: str, message: str) -> None:
    with pytest.raises(IRParseError, match=None) as info:
        parse_ir(source)
    assert message in str(info.value)
    assert isinstance(info.value, ValueError)


def test_wrong_type_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="parse_ir expects an IR, a mapping or a string, got int"):
        parse_ir(42)  # type: ignore[arg-type]


def test_long_prose_is_abbreviated_in_the_message() -> None:
    with pytest.raises(IRParseError) as info:
        parse_ir("word " * 500)
    assert len(str(info.value)) < 200
