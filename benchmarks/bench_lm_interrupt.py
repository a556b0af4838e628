"""Ctrl-C and per-example timeouts during local-LM generation: crashes and time to stop.

Bar: "Ctrl-C and per-example timeouts during local-LM generation: 0 segfaults in 20
tries, and the generation thread stops within 2 s". Three series with the bundled
SmolLM2-135M-Instruct (every generation is made long: ``ignore_eos`` and 900 tokens, so
nothing ends by itself during a try):

- ``evaluate`` + SIGINT: ``lift-metrics evaluate --limit 2`` in a child process; at the
  first generated token the child prints ``GENERATING``, the parent sends SIGINT at once.
  Counted: exit codes (segfault = -11 or 139; the expected code is 130), a crash mark
  ("Segmentation fault", "Fatal Python error", a traceback) on stderr, the time from SIGINT
  to the end of the native generation call (printed by the child) and to process exit.
- ``optimize`` + SIGINT: the same with ``lift-metrics optimize optimizers/quick.toml``.
- per-example timeout: ``evaluate_program`` in this process with ``timeout_s=1`` on a
  program that generates; the time from the end of ``evaluate_program`` (the timeout was
  just detected and the example cancelled) to the end of the example's thread.

Seen on the 2-core development machine (load average about 10: other jobs running),
``--tries 20``, 2026-11-26:

    evaluate + SIGINT: 20 tries, segfaults 0, other exit codes 0, crash marks on stderr 0,
      never generated 0; generation stop after SIGINT median 0.237 s, max 1.531 s;
      process exit median 1.67 s, max 4.43 s
    optimize + SIGINT: 20 tries, segfaults 0, other exit codes 0, crash marks on stderr 0,
      never generated 0; generation stop after SIGINT median 0.090 s, max 0.483 s;
      process exit median 0.57 s, max 1.98 s
    per-example timeout (timeout_s=1): 20 tries, generation thread ended after
      median 0.007 s, max 0.034 s
    bar (0 segfaults, stop within 2 s): met

Run: ``.venv/bin/python benchmarks/bench_lm_interrupt.py [--tries 20]`` from the repository
root (about 5-8 minutes on the 2-core machine; ``--tries 3`` for a quick look).
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # this checkout's package, as in the child processes
MAX_TOKENS = 900
CRASH_MARKS = ("Segmentation fault", "Fatal Python error", "Traceback", "core dumped")

CHILD = textwrap.dedent(
    """
    import sys, time
    from lift_metrics.lm import _generation

    real = _generation._generate

    def announced(server, body):
        seen = []

        class Announcing:
            def handle_chat_completions(self, streamed, callback):
                def first(chunk):
                    if not seen:
                        seen.append(1)
                        print("GENERATING", time.monotonic(), flush=True)
                    return callback(chunk)

                try:
                    return server.handle_chat_completions(streamed, first)
                finally:
                    print("STOPPED", time.monotonic(), flush=True)

        return real(Announcing(), {{**body, "max_tokens": {max_tokens}, "ignore_eos": True}})

    _generation._generate = announced
    from lift_metrics.cli import main
    sys.exit(main(sys.argv[1:]))
    """
).format(max_tokens=MAX_TOKENS)


def _default_sigint() -> None:
    """In the child: restore SIGINT as at a terminal.

    A shell starts background jobs with SIGINT ignored, and Python then installs no
    KeyboardInterrupt handler.
    """
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO), "PYTHONWARNINGS": "ignore"}


def sigint_try(command: list[str]) -> dict[str, Any]:
    """One child run interrupted at its first generated token."""
    with subprocess.Popen(
        [sys.executable, "-c", CHILD, *command],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(),
        cwd=REPO,
        preexec_fn=_default_sigint,
    ) as child:
        assert child.stdout is not None
        sent = None
        for line in child.stdout:
            if line.startswith("GENERATING"):
                sent = time.monotonic()
                child.send_signal(signal.SIGINT)
                break
        rest, stderr = child.communicate(timeout=300)
        exited = time.monotonic()
    stops = [float(line.split()[1]) for line in rest.splitlines() if line.startswith("STOPPED")]
    return {
        "rc": child.returncode,
        "crash_mark": any(mark in stderr for mark in CRASH_MARKS),
        "stop_s": (stops[0] - sent) if (stops and sent is not None) else None,
        "exit_s": (exited - sent) if sent is not None else None,
        "signalled": sent is not None,
    }


def timeout_try(engine: Any) -> float:
    """Seconds from the end of a timed-out evaluation to the end of its example's thread."""
    import dspy

    from lift_metrics.lm import _generation
    from lift_metrics.optimizers._evaluate import evaluate_program

    body = {
        "messages": [{"role": "user", "content": "Tell a very long story about a lighthouse."}],
        "max_tokens": MAX_TOKENS,
        "ignore_eos": True,
    }

    def program(**inputs: Any) -> Any:
        with engine._lease() as server:
            return _generation._generate(server, body)

    example = dspy.Example(question="q").with_inputs("question")
    before = set(threading.enumerate())
    result = evaluate_program(program, [example], metrics={"m": lambda e, p: 1.0}, timeout_s=1.0)
    ended = time.perf_counter()
    if not result.runs[0][0].timed_out:
        raise RuntimeError("the example did not time out; the bench measures nothing")
    workers = [t for t in set(threading.enumerate()) - before if t.name.startswith("lift-eval")]
    for worker in workers:
        worker.join(120)
        if worker.is_alive():
            return float("inf")
    return time.perf_counter() - ended


def summary(name: str, tries: list[dict[str, Any]]) -> bool:
    """Print one line on ``tries``; return whether every try stopped cleanly and fast."""
    segfaults = sum(t["rc"] in (-signal.SIGSEGV, 128 + signal.SIGSEGV) for t in tries)
    other = sum(t["rc"] != 130 for t in tries) - segfaults
    marks = sum(t["crash_mark"] for t in tries)
    missed = sum(not t["signalled"] for t in tries)
    stops = [t["stop_s"] for t in tries if t["stop_s"] is not None]
    exits = [t["exit_s"] for t in tries if t["exit_s"] is not None]
    print(
        f"{name}: {len(tries)} tries, segfaults {segfaults}, other exit codes {other}, "
        f"crash marks on stderr {marks}, never generated {missed}; "
        f"generation stop after SIGINT median {statistics.median(stops):.3f} s, "
        f"max {max(stops):.3f} s; process exit median {statistics.median(exits):.2f} s, "
        f"max {max(exits):.2f} s"
    )
    return segfaults == 0 and other == 0 and marks == 0 and missed == 0 and max(stops) <= 2.0


def main() -> int:
    """Interrupt local-LM generations repeatedly; return 0 when every try stopped cleanly."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tries", type=int, default=20)
    args = parser.parse_args()
    ok = True
    with tempfile.TemporaryDirectory(prefix="bench-lm-interrupt-") as tmp:
        for name, command in (
            ("evaluate + SIGINT", ["evaluate", "--limit", "2", "--quiet"]),
            ("optimize + SIGINT", ["optimize", "optimizers/quick.toml", "--quiet"]),
        ):
            tries = []
            for i in range(args.tries):
                out = Path(tmp) / f"{name.split()[0]}-{i}"
                tries.append(sigint_try([*command, "--output-dir", str(out)]))
            ok = summary(name, tries) and ok
    from lift_metrics.optimizers import LocalEngine

    engine = LocalEngine(n_ctx=1024, n_threads=1)
    waits = [timeout_try(engine) for _ in range(args.tries)]
    print(
        f"per-example timeout (timeout_s=1): {len(waits)} tries, generation thread ended after "
        f"median {statistics.median(waits):.3f} s, max {max(waits):.3f} s"
    )
    ok = ok and max(waits) <= 2.0
    print("bar (0 segfaults, stop within 2 s):", "met" if ok else "NOT met")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
