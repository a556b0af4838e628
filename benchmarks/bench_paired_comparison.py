"""Speed of lift_metrics.stats.paired_comparison: 10,000 pairs x 10,000 resamples.

Bar: under 3 s on the project's machine; bit-identical results for a fixed seed.
Run: .venv/bin/python benchmarks/bench_paired_comparison.py [--with-scipy]
``--with-scipy`` also times scipy.stats.bootstrap (paired, one delta, percentile and BCa)
on the same data, the reference the own vectorised resampling replaces.
Exit code 1 when the bar is missed or results differ between runs.
"""

from __future__ import annotations

import sys
import time

import numpy as np

from lift_metrics._io import dumps_json
from lift_metrics.stats import RunRecord, paired_comparison, paired_deltas

BAR_SECONDS = 3.0
PAIRS = 10_000
RESAMPLES = 10_000
REPEATS = 3


def _arms() -> tuple[list[RunRecord], list[RunRecord]]:
    rng = np.random.default_rng(2026)
    arms: tuple[list[RunRecord], list[RunRecord]] = ([], [])
    for i in range(PAIRS):
        for side, (arm, p) in enumerate((("treatment", 0.62), ("control", 0.58))):
            arms[side].append(
                RunRecord(
                    task_id=f"task-{i // 10:04d}",
                    arm=arm,
                    repeat=i % 10,
                    success=bool(rng.random() < p),
                    duration_seconds=float(rng.gamma(4.0, 30.0)),
                    total_cost_usd=float(rng.gamma(2.0, 0.05)),
                    input_tokens=int(rng.integers(5_000, 80_000)),
                    output_tokens=int(rng.integers(200, 6_000)),
                    cache_read_tokens=int(rng.integers(0, 40_000)),
                    cache_write_tokens=int(rng.integers(0, 8_000)),
                )
            )
    return arms


def main() -> int:
    """Time paired_comparison and check that it is reproducible; return the exit code."""
    treatment, control = _arms()
    best = float("inf")
    outputs = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        result = paired_comparison(treatment, control, n_resamples=RESAMPLES, seed=7)
        best = min(best, time.perf_counter() - start)
        outputs.append(dumps_json(result))
    identical = all(out == outputs[0] for out in outputs)
    passed = best < BAR_SECONDS and identical
    print(
        f"paired_comparison, {PAIRS:,} pairs x {RESAMPLES:,} resamples (5 deltas, bootstrap + "
        f"sign-flip test), best of {REPEATS}: {best:.3f} s  (bar {BAR_SECONDS} s)  "
        f"bit-identical across runs: {identical}  {'PASS' if passed else 'FAIL'}"
    )
    if "--with-scipy" in sys.argv[1:]:
        from scipy import stats

        delta = paired_deltas(treatment, control).values["duration_delta_seconds"]
        for method in ("percentile", "BCa"):
            start = time.perf_counter()
            stats.bootstrap(
                (delta,),
                np.mean,
                n_resamples=RESAMPLES,
                method=method,
                batch=500,
                random_state=np.random.default_rng(7),
            )
            print(
                f"  (reference) scipy.stats.bootstrap {method}, one delta: "
                f"{time.perf_counter() - start:.3f} s"
            )
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
