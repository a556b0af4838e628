"""Speed of lift_metrics.stats.pass_at_k over 1,000,000 (n, c) pairs.

Bar: under 0.5 s on the project's machine; results bit-identical across runs.
Run: .venv/bin/python benchmarks/bench_pass_at_k.py
Exit code 1 when the bar is missed or results differ between runs.
"""

from __future__ import annotations

import sys
import time

import numpy as np

from lift_metrics.stats import pass_at_k

BAR_SECONDS = 0.5
PAIRS = 1_000_000
REPEATS = 5


def _problems(seed: int, max_n: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    n = rng.integers(10, max_n + 1, size=PAIRS)
    c = rng.integers(0, n + 1)
    return n, c


def _best_time(n: np.ndarray, c: np.ndarray, k: int | np.ndarray) -> tuple[float, np.ndarray]:
    best = float("inf")
    result = np.empty(0)
    for _ in range(REPEATS):
        start = time.perf_counter()
        result = pass_at_k(n, c, k)
        best = min(best, time.perf_counter() - start)
    return best, result


def main() -> int:
    """Time pass_at_k on 1,000,000 pairs and check results repeat; return the exit code."""
    ok = True
    n, c = _problems(0, 200)
    cases = [
        ("k=1", 1),
        ("k=10", 10),
        ("k in {1, 5, 10} per problem", np.random.default_rng(1).choice([1, 5, 10], PAIRS)),
    ]
    print(f"pass_at_k over {PAIRS:,} (n, c) pairs, n in [10, 200], best of {REPEATS}:")
    for label, k in cases:
        seconds, first = _best_time(n, c, k)
        second = pass_at_k(*_problems(0, 200), k)
        identical = np.array_equal(first, second)
        passed = seconds < BAR_SECONDS and identical
        ok &= passed
        print(
            f"  {label:<30} {seconds:.3f} s  (bar {BAR_SECONDS} s)  "
            f"bit-identical: {identical}  {'PASS' if passed else 'FAIL'}"
        )
    # informational: nearly all pairs distinct, n up to 100,000
    n_big, c_big = _problems(2, 100_000)
    seconds, _ = _best_time(n_big, c_big, 1)
    print(f"  (info) n in [10, 100000], k=1, ~all pairs distinct: {seconds:.3f} s")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
