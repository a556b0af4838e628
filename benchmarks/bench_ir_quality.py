"""Latency of one ir_quality call on a pair whose intent texts are already embedded.

Bar: median under 2 ms with the real embedder (bundled all-MiniLM-L6-v2).

The pair differs in every part (intent text, a parameter type, effects, a violated
constraint), so every sub-metric does real work; both intent texts are embedded once before
timing (the embedder's cache), as when an optimizer scores many candidates whose intents repeat.
IRs are passed as validated ``IR`` objects and, separately, as dicts (validation included).

Run: ``.venv/bin/python benchmarks/bench_ir_quality.py [--calls 500]``
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

BAR_MS = 2.0

EXPECTED = {
    "intent": {"description": "Return the n-th Fibonacci number, starting from fib(0) = 0."},
    "signature": {
        "name": "fibonacci",
        "parameters": [{"name": "n", "type_hint": "int"}],
        "return_type": "int",
    },
    "effects": [
        {"kind": "raises", "description": "ValueError when n is negative"},
        {"kind": "returns", "description": "the n-th Fibonacci number"},
    ],
    "constraints": [
        {"kind": "return_type", "type_hint": "int"},
        {"kind": "has_parameter", "name": "n", "type_hint": "int"},
        {"kind": "effect_absent", "effect": "io"},
        {"kind": "pure"},
    ],
}
PREDICTED = {
    "intent": {"description": "Compute the nth Fibonacci number iteratively."},
    "signature": {
        "name": "fibonacci",
        "parameters": [{"name": "n", "type_hint": "Optional[int]"}],
        "return_type": "int",
    },
    "effects": [{"kind": "returns"}, {"kind": "io", "description": "prints progress"}],
    "constraints": [],
}


def _summary(name: str, samples_ms: list[float]) -> str:
    ordered = sorted(samples_ms)
    p90 = ordered[int(0.9 * (len(ordered) - 1))]
    return (
        f"{name:<40} median {statistics.median(ordered):7.3f} ms   p90 {p90:7.3f} ms   "
        f"min {ordered[0]:6.3f} ms   n={len(ordered)}"
    )


def _time(fn: object, calls: int) -> list[float]:
    samples = []
    for _ in range(calls):
        start = time.perf_counter()
        fn()  # type: ignore[operator]
        samples.append((time.perf_counter() - start) * 1000)
    return samples


def main() -> int:
    """Time ir_quality calls and print the figures; return the exit code."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=500, help="measured ir_quality calls")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")

    from lift_metrics.ir import IR, ir_quality, ir_quality_breakdown
    from lift_metrics.similarity import get_default_embedder

    embedder = get_default_embedder()
    predicted, expected = IR.model_validate(PREDICTED), IR.model_validate(EXPECTED)
    warm = ir_quality_breakdown(predicted, expected, embedder=embedder)  # loads + caches
    print(f"score {warm.score:.4f}  components {warm.components}")

    objects = _time(lambda: ir_quality(predicted, expected, embedder=embedder), args.calls)
    dicts = _time(lambda: ir_quality(PREDICTED, EXPECTED, embedder=embedder), args.calls)
    print(_summary("ir_quality(IR, IR), intents cached", objects))
    print(_summary("ir_quality(dict, dict), intents cached", dicts))
    median = statistics.median(objects)
    verdict = "PASS" if median < BAR_MS else "FAIL"
    print(f"bar: median < {BAR_MS} ms (IR objects) -> {median:.3f} ms: {verdict}")
    return 0 if median < BAR_MS else 1


if __name__ == "__main__":
    raise SystemExit(main())
