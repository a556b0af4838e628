"""Local LM throughput (tokens/s) on 2 cores, with and without constrained decoding.

Bar: "Local LM throughput in tokens/s on 2 cores, with and without constrained
decoding". Runs the bundled SmolLM2-135M-Instruct through ``LocalEngine`` (what DSPy calls),
greedy decoding, no cache, the same prompts in both modes:

- free text: a plain chat completion;
- JSON schema: ``response_format`` with a JSON schema (llama.cpp turns it into a grammar that
  masks every sampling step), the schema of a small function description.

Figures: end-to-end tokens/s = completion tokens / wall time of the calls (prompt processing
included: what a DSPy run sees), and decode-only tokens/s from llama.cpp's own timings.
Each mode runs ``--repeats`` times and the median is printed, for 1 and 2 llama.cpp threads
(1 is the default on 2 cores, see ``default_n_threads``). On a machine with more than
``--cores`` CPUs the process is pinned to that many, so "2 cores" means 2 cores.

Run: ``.venv/bin/python benchmarks/bench_local_lm.py [--cores 2] [--threads 1 2]``
(about 3-4 minutes on an idle 2-core machine); ``--quick``: 1 thread, 3 prompts, 1 repeat
(under a minute).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from typing import Any

from lift_metrics.optimizers import LocalEngine

PROMPTS = (
    "Write a Python function that returns the n-th Fibonacci number.",
    "Write a Python function that checks whether a string is a palindrome.",
    "Write a Python function that merges two sorted lists into one sorted list.",
    "Write a Python function that counts the vowels in a string.",
    "Write a Python function that returns the largest element of a list.",
    "Write a Python function that converts Celsius to Fahrenheit.",
)

FUNCTION_SCHEMA = {
    "type": "object",
    "properties": {
        "function_name": {"type": "string"},
        "parameters": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"name": {"type": "string"}, "type": {"type": "string"}},
                "required": ["name", "type"],
                "additionalProperties": False,
            },
        },
        "return_type": {"type": "string"},
        "description": {"type": "string"},
        "code": {"type": "string"},
    },
    "required": ["function_name", "parameters", "return_type", "description", "code"],
    "additionalProperties": False,
}


def _pin(cores: int) -> str:
    try:
        cpus = sorted(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return "affinity not available"
    if len(cpus) > cores:
        os.sched_setaffinity(0, cpus[:cores])
        return f"pinned to CPUs {cpus[:cores]} of {len(cpus)}"
    return f"{len(cpus)} CPUs available"


def _run(
    engine: LocalEngine, *, constrained: bool, max_tokens: int, prompts: tuple[str, ...] = PROMPTS
) -> dict[str, float]:
    from dspy.lm15 import Config, Message, Request

    response_format = (
        {"type": "json_schema", "name": "Function", "schema": FUNCTION_SCHEMA}
        if constrained
        else None
    )
    tokens = 0
    decode_ms = 0.0
    wall = 0.0
    for prompt in prompts:
        request = Request(
            model=engine.model_name,
            messages=(Message.user(prompt),),
            config=Config(max_tokens=max_tokens, temperature=0.0, response_format=response_format),
        )
        start = time.perf_counter()
        response = engine.complete(request)
        wall += time.perf_counter() - start
        tokens += response.usage.output_tokens or 0
        timings: dict[str, Any] = (response.provider_data or {}).get("timings", {})
        decode_ms += float(timings.get("predicted_ms", 0.0))
    return {
        "tokens": tokens,
        "end_to_end_tokens_per_s": tokens / wall,
        "decode_tokens_per_s": tokens / (decode_ms / 1000.0) if decode_ms else float("nan"),
    }


def main(argv: list[str] | None = None) -> int:
    """Measure the local LM's tokens/s with and without constrained decoding; return 0."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--cores", type=int, default=2, help="CPUs to pin the process to")
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--max-tokens", type=int, default=96)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument(
        "--quick", action="store_true", help="1 thread, 3 prompts, 1 repeat (under a minute)"
    )
    args = parser.parse_args(argv)
    prompts = PROMPTS
    if args.quick:
        args.threads, args.repeats, prompts = [1], 1, PROMPTS[:3]
    pinning = _pin(args.cores)
    print(f"cores: {args.cores} ({pinning}); load average (1 min): {os.getloadavg()[0]:.2f}")
    print("(figures are noisy when the load exceeds the cores: llama.cpp then waits for CPU)")
    print(
        f"{len(prompts)} prompts x {args.repeats} repeats (median), "
        f"max_tokens={args.max_tokens}, greedy, no cache"
    )
    header = f"{'threads':>7} {'mode':<12} {'tokens':>7} {'end-to-end tok/s':>17}"
    print(header + f" {'decode-only tok/s':>18}")
    for threads in args.threads:
        engine = LocalEngine(n_ctx=2048, n_threads=threads)
        _run(engine, constrained=False, max_tokens=8)  # warm-up: first-call allocations
        figures = {}
        for label, constrained in (("free text", False), ("JSON schema", True)):
            runs = [
                _run(engine, constrained=constrained, max_tokens=args.max_tokens, prompts=prompts)
                for _ in range(args.repeats)
            ]
            figures[label] = {key: statistics.median(run[key] for run in runs) for key in runs[0]}
            row = figures[label]
            print(
                f"{threads:>7} {label:<12} {row['tokens']:>7.0f} "
                f"{row['end_to_end_tokens_per_s']:>17.1f} {row['decode_tokens_per_s']:>18.1f}"
            )
        ratio = (
            figures["JSON schema"]["end_to_end_tokens_per_s"]
            / figures["free text"]["end_to_end_tokens_per_s"]
        )
        print(f"{threads:>7} constrained / free end-to-end: {ratio:.2f}x")
    print(
        "bar: report local LM tokens/s on 2 cores with and without constrained "
        "decoding (no target figure)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
