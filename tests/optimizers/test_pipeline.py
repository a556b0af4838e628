"""The reference pipeline with DSPy's DummyLM: IR step through JSON, code step as a body."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import dspy
import pytest
from dspy.utils import DummyLM
from optimizers_testkit import pipeline_lm

from lift_metrics._tasks import load_tasks
from lift_metrics._usage import Budget, BudgetExceeded, UsageMeter, budget_callback
from lift_metrics.ir import IR
from lift_metrics.optimizers._adapters import CompactJSONAdapter, FencedCodeAdapter
from lift_metrics.optimizers._functions import assemble_function, function_body, function_header
from lift_metrics.optimizers._pipeline import CODE_STOP, LiftPipeline
from lift_metrics.optimizers._provenance import save_program
from lift_metrics.optimizers._setup import with_pipeline_labels

# the expected IR of task t001 in datasets/tasks/tasks.jsonl
ADD_IR: dict[str, Any] = {
    "intent": {"description": "Add two integers and return their sum."},
    "signature": {
        "name": "add",
        "parameters": [{"name": "a", "type_hint": "int"}, {"name": "b", "type_hint": "int"}],
        "return_type": "int",
    },
    "effects": [{"kind": "returns", "description": "the sum a + b"}],
    "constraints": [{"kind": "pure"}],
}
ADD_CODE = "def add(a: int, b: int):\n    return a + b\n"


def run(lm: Any, prompt: str = "Write add(a, b).") -> dspy.Prediction:
    with dspy.context(lm=lm):
        return LiftPipeline()(prompt=prompt)


def test_the_pipeline_writes_the_header_and_the_lm_the_body() -> None:
    out = run(pipeline_lm(ADD_IR, "```python\n    return a + b\n```"))
    assert isinstance(out.ir, IR)
    assert out.ir == IR.model_validate(ADD_IR)
    assert out.header == "def add(a: int, b: int):"
    assert out.code == ADD_CODE  # fence removed, body indented under the header
    assert out.ir_error is None
    assert out.code_error is None
    assert json.loads(out.ir_json)["signature"]["name"] == "add"


def test_a_whole_function_from_the_lm_is_kept() -> None:
    out = run(pipeline_lm(ADD_IR, "```python\ndef add(a, b):\n    return b + a\n```"))
    assert out.code == "def add(a, b):\n    return b + a\n"


def test_the_code_step_sends_stop_sequences_and_fenced_demos() -> None:
    lm = pipeline_lm(ADD_IR, "return a + b")
    program = LiftPipeline()
    program.to_code.demos = [
        dspy.Example(prompt="p", header="def f(x):", body="    return x").with_inputs(
            "prompt", "header"
        )
    ]
    with dspy.context(lm=lm):
        program(prompt="Write add(a, b).")
    code_call = lm.history[-1]
    assert code_call["kwargs"]["stop"] == list(CODE_STOP)
    messages = code_call["messages"]
    assert messages[0]["content"].startswith("Write the Python function")  # the instructions
    assert messages[2] == {"role": "assistant", "content": "```python\n    return x\n```"}
    assert "{body}" not in json.dumps(messages)  # nothing in the prompt to copy


def test_prediction_records_latency_and_usage() -> None:
    out = run(pipeline_lm(ADD_IR, "return a + b"))
    assert out.latency_ms > 0
    assert out.lm_calls == 2  # one call per step; DummyLM is never cached
    assert out.total_tokens == 0
    assert out.cost_usd == 0.0


def test_bad_ir_answer_is_kept_as_an_error_and_the_code_step_is_skipped() -> None:
    out = run(pipeline_lm("this is not an IR", "return 1"))
    assert out.ir is None
    assert out.ir_error
    assert "\n" not in out.ir_error
    assert out.code == ""
    assert "no code" in out.code_error


def test_ir_that_misses_required_fields_is_an_error() -> None:
    broken = {"intent": {"description": "x"}}  # no signature
    out = run(pipeline_lm(broken, "return 1"))
    assert out.ir is None
    assert out.ir_error


def test_a_placeholder_answer_gives_no_code() -> None:
    out = run(pipeline_lm(ADD_IR, "{body}"))
    assert out.code == ""
    assert out.code_error
    assert "placeholder" in out.code_error


def test_nothing_parsable_gives_empty_code() -> None:
    out = run(DummyLM([{"wrong": "x"}] * 4, adapter=dspy.JSONAdapter()))
    assert out.ir is None
    assert out.code == ""
    assert out.code_error


def test_end_to_end_metric_scores_the_prediction() -> None:
    from lift_metrics.dspy_metrics import IRQuality

    out = run(pipeline_lm(ADD_IR, "return a + b"))
    example = dspy.Example(prompt="p", expected_ir=ADD_IR).with_inputs("prompt")
    assert IRQuality()(example, out) == pytest.approx(1.0)


def test_save_and_load_round_trip_in_dspys_format(tmp_path: Path) -> None:
    program = LiftPipeline()
    program.to_ir.signature = program.to_ir.signature.with_instructions("Describe it as an IR.")
    program.to_code.demos = [
        dspy.Example(prompt="p", header="def f():", body="    return 1").with_inputs(
            "prompt", "header"
        )
    ]
    path = save_program(program, tmp_path / "program.json")
    state = json.loads(path.read_text())
    assert set(state) >= {"to_ir.predict", "to_code.predict"} or set(state) >= {"to_ir", "to_code"}
    loaded = LiftPipeline()
    loaded.load(str(path))
    assert loaded.to_ir.signature.instructions == "Describe it as an IR."
    assert loaded.to_code.demos[0]["body"] == "    return 1"
    assert [p.name for p in tmp_path.iterdir()] == ["program.json"]  # no temp file left
    assert loaded.code_samples == 1


def test_the_code_step_settings_travel_with_the_saved_program(tmp_path: Path) -> None:
    program = LiftPipeline(code_samples=4, sample_temperature=0.5, code_max_tokens=64)
    path = save_program(program, tmp_path / "program.json")
    assert json.loads(path.read_text())["pipeline"] == {
        "code_max_tokens": 64,
        "code_samples": 4,
        "sample_temperature": 0.5,
    }
    loaded = LiftPipeline()
    loaded.load(str(path))
    assert (loaded.code_samples, loaded.sample_temperature, loaded.code_max_tokens) == (4, 0.5, 64)
    state = json.loads(path.read_text())
    state["pipeline"]["code_samples"] = 0
    with pytest.raises(ValueError, match="code_samples"):
        LiftPipeline().load_state(state)


def test_budget_exceeded_cuts_through_the_pipeline() -> None:
    meter = UsageMeter(Budget(max_lm_calls=1))
    lm = pipeline_lm(ADD_IR, "return a + b")
    with (
        dspy.context(lm=lm, usage_tracker=meter, callbacks=[budget_callback(meter)]),
        pytest.raises(BudgetExceeded, match="1 LM calls"),
    ):
        LiftPipeline()(prompt="p")
    assert meter.totals().lm_calls == 1  # the second call was refused before it ran


@pytest.mark.parametrize(
    ("signature", "expected"),
    [
        ({"name": "f"}, "def f():"),
        ({"name": "f", "return_type": "int"}, "def f():"),  # no return annotation by default
        ({"name": "add(a, b)", "parameters": [{"name": "a"}]}, "def add(a):"),
        (
            {"name": "g", "parameters": [{"name": "x", "type_hint": "List[int]"}]},
            "def g(x):",  # would need an import: left out
        ),
        (
            {"name": "g", "parameters": [{"name": "x", "type_hint": "list[int] | None"}]},
            "def g(x: list[int] | None):",
        ),
        ({"name": "h", "return_type": "json", "parameters": [{"name": "x"}]}, "def h(x):"),
    ],
)
def test_function_header_is_always_valid_python(signature: dict[str, Any], expected: str) -> None:
    header = function_header({"intent": {"description": "d"}, "signature": signature})
    assert header == expected
    compile(header + "\n    pass\n", "<header>", "exec")


@pytest.mark.parametrize(
    ("parameters", "message"),
    [
        ([{"name": "x"}, {"name": "x"}], "parameter 'x' is listed more than once"),
        ([{"name": "class"}], "parameter name 'class' is a Python keyword"),
        ([{"name": "1y"}], "parameter name '1y' is not a Python identifier"),
    ],
)
def test_a_signature_no_code_can_have_is_not_an_ir(
    parameters: list[dict[str, str]], message: str
) -> None:
    # repeated and invalid parameter names are rejected by the IR model, so the IR step
    # reports a parse failure (the code step then writes its header from callable_ir)
    ir = {"intent": {"description": "d"}, "signature": {"name": "k", "parameters": parameters}}
    with pytest.raises(ValueError, match=message):
        function_header(ir)


def test_an_ir_refused_for_its_parameters_still_gets_code_but_no_ir() -> None:
    repeated = {
        "intent": {"description": "Add two integers."},
        "signature": {
            "name": "add",
            "parameters": [{"name": "a"}, {"name": "b"}, {"name": "a"}, {"name": "class"}],
        },
    }
    out = run(pipeline_lm(repeated, "    return a + b"))
    assert out.ir is None  # the IR metrics score the refused answer
    assert "listed more than once" in out.ir_error
    assert out.header == "def add(a, b):"
    assert out.code == "def add(a, b):\n    return a + b\n"


def test_function_header_writes_the_return_type_on_request() -> None:
    ir = {"intent": {"description": "d"}, "signature": {"name": "f", "return_type": "int"}}
    assert function_header(ir, return_type=True) == "def f() -> int:"


def test_function_header_refuses_a_name_that_is_not_an_identifier() -> None:
    with pytest.raises(ValueError, match="identifier"):
        function_header({"intent": {"description": "d"}, "signature": {"name": "1st"}})


@pytest.mark.parametrize(
    "answer",
    [
        "return x + 1",  # first line's indentation stripped by a parser
        "    return x + 1",
        "if x:\n        return x + 1\n    return 1",  # indented body, first line stripped
        "if x:\n    return x + 1\nreturn 1",  # dedented body
    ],
)
def test_assemble_function_indents_any_body_so_it_parses(answer: str) -> None:
    code = assemble_function("def f(x):", answer)
    namespace: dict[str, Any] = {}
    exec(compile(code, "<code>", "exec"), namespace)  # our own test code
    assert namespace["f"](1) == 2


@pytest.mark.parametrize(
    "tail",
    [
        "\n\nExample:",  # prose after the function
        "\n\nprint(first(3))\nExample usage: first([])",
        "\n\ndef first(empty_list, empty_list):\n    return sum(empty_list",  # cut off
        "\n\ndef first_list(items):\n    return first(first_list(items)\n\nUsage:",
    ],
)
def test_a_whole_function_keeps_its_first_function_and_drops_what_follows(tail: str) -> None:
    function = "def first(items):\n    if not items:\n        return None\n    return items[0]"
    assert assemble_function("def first(xs):", function + tail) == function + "\n"
    imported = "import math\n" + function
    assert assemble_function("def first(xs):", imported + tail) == imported + "\n"


def test_a_whole_function_that_does_not_parse_is_not_cut_down() -> None:
    broken = "def first(items):\n    return items[0\n\nExample:"
    code = assemble_function("def first(xs):", broken)
    assert code.startswith("def first(xs):\n")  # placed under the header, as a body is


def test_assemble_function_returns_nothing_for_empty_or_placeholder_answers() -> None:
    assert assemble_function("def f():", "") == ""
    assert assemble_function("def f():", "  \n") == ""
    assert assemble_function("def f():", "{code}") == ""


def test_every_training_task_labels_the_code_step_with_a_body_that_passes() -> None:
    from lift_metrics.code import test_pass_rate

    for example in load_tasks("train"):
        labelled = with_pipeline_labels(example)
        code = assemble_function(labelled.header, labelled.body)
        assert test_pass_rate(code, example.tests, entry_point=example.entry_point) == 1.0, (
            example.task_id
        )


def test_function_body_drops_the_docstring_and_moves_imports() -> None:
    code = 'import math\n\ndef f(x):\n    """Doc."""\n    return math.floor(x)\n'
    assert function_body(code, "f") == "    import math\n    return math.floor(x)"
    with pytest.raises(ValueError, match="'g'"):
        function_body(code, "g")


def test_compact_json_adapter_writes_one_line_answers() -> None:
    text = CompactJSONAdapter().format_assistant_message_content(
        dspy.Signature("prompt -> ir"), {"ir": IR.model_validate(ADD_IR)}
    )
    assert "\n" not in text
    assert "null" not in text
    assert json.loads(text)["ir"]["signature"]["name"] == "add"


def test_fenced_adapter_keeps_chat_behaviour_for_several_outputs() -> None:
    signature = dspy.Signature("question -> answer, reason")
    text = FencedCodeAdapter().format_assistant_message_content(
        signature, {"answer": "a", "reason": "r"}
    )
    assert "[[ ## answer ## ]]" in text
    assert FencedCodeAdapter().parse(signature, text) == {"answer": "a", "reason": "r"}
