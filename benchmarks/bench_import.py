"""How long ``import lift_metrics`` takes in a fresh interpreter (bar: 150 ms).

Run: .venv/bin/python benchmarks/bench_import.py
"""

from __future__ import annotations

import statistics
import subprocess
import sys

BAR_MS = 150.0
RUNS = 15
PROBE = (
    "import time; t = time.perf_counter(); import lift_metrics; "
    "print((time.perf_counter() - t) * 1000)"
)


def main() -> None:
    """Time ``import lift_metrics`` in fresh interpreters and print the median."""
    times = [
        float(
            subprocess.run(
                [sys.executable, "-c", PROBE], check=True, capture_output=True, text=True
            ).stdout
        )
        for _ in range(RUNS)
    ]
    median = statistics.median(times)
    print(
        f"import lift_metrics: median {median:.1f} ms over {RUNS} fresh interpreters "
        f"(min {min(times):.1f}, max {max(times):.1f}); bar {BAR_MS:.0f} ms: "
        f"{'PASS' if median < BAR_MS else 'FAIL'}"
    )


if __name__ == "__main__":
    main()
