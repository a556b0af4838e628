"""Fault injection: a prompt too long for the local model is refused before it is sent.

A prompt that does not fit the local model's context, if sent, fails every call inside the
pipeline: every example scores 0 and ``evaluate`` exits 0. A prompt that fits only without
its answer is read for a minute on a busy machine, cut short, and the exit then waits 60 s
for it. So the engine counts the prompt with the model's own template and tokenizer first
and refuses ``prompt tokens + max_tokens > n_ctx`` at once, and an evaluation stops at the
first refusal with one line naming the length and the limit.
These tests run the REAL bundled model (the refused calls never reach it).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

dspy = pytest.importorskip("dspy")
pytest.importorskip("xllamacpp", reason="the local LM needs xllamacpp (lift-metrics[local])")

from dspy.lm15 import Config, ContextLengthError, Message, Request  # noqa: E402
from testkit import local_model_or_skip  # noqa: E402

import lift_metrics  # noqa: E402
from lift_metrics.lm import (  # noqa: E402
    LocalEngine,
    PromptTooLongError,
    _generation,
    _prompt,
    _server,
    local_lm,
    refused_prompts,
)
from lift_metrics.optimizers import evaluate_program  # noqa: E402

PACKAGE_ROOT = Path(lift_metrics.__file__).resolve().parents[1]  # the code under test
N_CTX = 512
SETTINGS: dict[str, Any] = {"n_ctx": N_CTX, "n_threads": 1}


@pytest.fixture(scope="module")
def engine() -> LocalEngine:
    local_model_or_skip()
    return LocalEngine(**SETTINGS)


def _request(prompt: str, **config: Any) -> Request:
    return Request(model="local/test", messages=(Message.user(prompt),), config=Config(**config))


def _prompt_tokens(engine: LocalEngine, text: str) -> int:
    access = _server._access(engine.model_path, engine.n_ctx, engine.n_threads, engine.n_parallel)
    assert access is not None
    count = _prompt.count_prompt_tokens(*access, [{"role": "user", "content": text}])
    assert count is not None
    return count


class _Sent:
    """Stands in for the generation: records what reached the model and answers at once."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []

    def __call__(self, server: Any, body: dict[str, Any]) -> dict[str, Any]:
        self.bodies.append(body)
        message = {"role": "assistant", "content": "ok"}
        return {"choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}


def test_the_count_is_the_count_the_model_bills(engine: LocalEngine) -> None:
    text = "Name three colours of the rainbow."
    response = engine.complete(_request(text, max_tokens=2, temperature=0.0))
    assert response.usage.input_tokens == _prompt_tokens(engine, text)


def test_a_prompt_without_room_for_its_answer_is_refused_before_it_is_sent(
    engine: LocalEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    sent = _Sent()
    monkeypatch.setattr(_generation, "_generate", sent)
    text = "word " * 300  # fits the context alone, not with 512 tokens of answer
    tokens = _prompt_tokens(engine, text)
    assert tokens < N_CTX
    room = N_CTX - tokens
    engine.complete(_request(text, max_tokens=room))  # exactly full: sent
    assert [body["max_tokens"] for body in sent.bodies] == [room]
    started = time.perf_counter()
    with refused_prompts() as refusals, pytest.raises(ContextLengthError) as refused:
        engine.complete(_request(text, max_tokens=room + 1))
    assert time.perf_counter() - started < 5.0  # counted, not read by the model
    assert len(sent.bodies) == 1  # the refused request never reached the model
    expected = (
        f"the prompt is {tokens} tokens and max_tokens {room + 1}, {N_CTX + 1} in all, over "
        f"the local model's context of {N_CTX} tokens (n_ctx)"
    )
    assert str(refused.value).startswith(expected)
    assert len(refusals) == 1
    assert refusals[0].startswith(expected)
    assert refusals[0] in str(refused.value)


def test_a_prompt_over_the_context_is_a_context_window_error_for_dspy() -> None:
    local_model_or_skip()
    small = local_lm(**SETTINGS, max_tokens=8, cache=False)
    with pytest.raises(dspy.utils.exceptions.ContextWindowExceededError) as refused:
        small("word " * 1000)
    assert f"over the local model's context of {N_CTX} tokens" in str(refused.value)


def test_an_evaluation_stops_at_the_first_refused_prompt(engine: LocalEngine) -> None:
    lm = local_lm(**SETTINGS, max_tokens=8, cache=False)
    seen: list[str] = []

    def program(prompt: str) -> Any:  # like the reference pipeline: a failed call scores 0
        seen.append(prompt)
        try:
            answer = lm(prompt)[0]
        except Exception as exc:
            answer = f"error: {exc}"
        return dspy.Prediction(answer=answer)

    examples = [
        dspy.Example(prompt="word " * 1000, task_id="long").with_inputs("prompt"),
        dspy.Example(prompt="Say hi.", task_id="short").with_inputs("prompt"),
    ]
    with pytest.raises(PromptTooLongError) as refused:
        evaluate_program(program, examples, metrics={"one": lambda example, prediction: 1.0})
    assert str(refused.value).startswith("example long: the prompt is ")
    assert f"context of {N_CTX} tokens (n_ctx)" in str(refused.value)
    assert seen == [examples[0].prompt]  # no example after the refused one ran


@pytest.mark.slow  # a real `lift-metrics evaluate` in a child process (loads dspy and the model)
def test_evaluate_refuses_a_program_whose_prompt_is_too_long_in_one_line(tmp_path: Path) -> None:
    local_model_or_skip()
    from lift_metrics.optimizers._pipeline import LiftPipeline
    from lift_metrics.optimizers._provenance import save_program

    state = json.loads(save_program(LiftPipeline(), tmp_path / "base.json").read_text())
    state["to_ir"]["signature"]["instructions"] += " Be careful." * 1000
    program = tmp_path / "program.json"
    program.write_text(json.dumps(state), encoding="utf-8")
    out = tmp_path / "out"
    started = time.perf_counter()
    command = [sys.executable, "-m", "lift_metrics", "evaluate", "--program", str(program)]
    done = subprocess.run(
        [*command, "--limit", "2", "--quiet", "--output-dir", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        cwd=PACKAGE_ROOT,
    )
    assert done.returncode == 2, done.stdout + done.stderr[-2000:]
    assert time.perf_counter() - started < 60.0  # no wait for a request reading its prompt
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("lift-metrics evaluate: error: example ")
    assert "over the local model's context of 4096 tokens (n_ctx)" in lines[0]
    assert not (out / "evaluation.json").exists()
