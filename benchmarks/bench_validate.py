"""Validation bars on the shipped hand-labelled data.

1. ``lift-metrics validate ir_quality code_quality`` (heldout split, defaults) in a fresh
   interpreter, embedding-model load included: bar under 60 s.
2. ``ir_quality`` and ``code_quality`` with their defaults on the heldout split: bar
   Pearson >= 0.8, reported with the 95% interval.
3. What calibration gives: weights fitted on the calibration split only (5-fold CV, folds
   grouped by function), reported in-sample, cross-validated and on the heldout split.
4. The shipped calibrated profiles (``datasets/labels/calibrated_*.json``: fitted weights and
   a similarity floor, opt-in) on the heldout split, next to the defaults
   (``lift-metrics validate --shipped-profile``).

Labels are never changed; the heldout split is never fitted on.

Run: .venv/bin/python benchmarks/bench_validate.py
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BAR_SECONDS = 60.0
BAR_PEARSON = 0.8
# the validate command, registered here too in case the CLI does not list it yet
RUN = (
    "import sys, lift_metrics.cli as c\n"
    "m = 'lift_metrics.validation._cli'\n"
    "c._COMMAND_MODULES = c._COMMAND_MODULES + (() if m in c._COMMAND_MODULES else (m,))\n"
    "sys.exit(c.main(sys.argv[1:]))\n"
)


def _validate(out: Path, *extra: str) -> tuple[float, int, dict[str, object]]:
    started = time.perf_counter()
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            RUN,
            "validate",
            "ir_quality",
            "code_quality",
            "--out",
            str(out),
            *extra,
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    elapsed = time.perf_counter() - started
    if done.returncode not in (0, 1):
        raise SystemExit(f"validate failed ({done.returncode}):\n{done.stderr}")
    return elapsed, done.returncode, json.loads((out / "validation.json").read_text())


def main() -> None:
    """Run the validation bars on the shipped labels and print the figures."""
    with tempfile.TemporaryDirectory() as tmp:
        elapsed, code, data = _validate(Path(tmp) / "plain")
        print(
            f"lift-metrics validate ir_quality code_quality (heldout, model load included): "
            f"{elapsed:.1f} s; bar {BAR_SECONDS:.0f} s: "
            f"{'PASS' if elapsed < BAR_SECONDS else 'FAIL'} (exit code {code})"
        )
        _print_results(data, " defaults")
        elapsed, code, data = _validate(Path(tmp) / "calibrated", "--calibrate")
        print(f"with --calibrate: {elapsed:.1f} s")
        for name, entry in data["calibration"].items():  # type: ignore[attr-defined]
            fit, reported = entry["fit"], entry["reported"]
            weights = ", ".join(f"{k} {v:.3f}" for k, v in fit["weights"].items())
            low, high = reported["pearson_ci"]
            print(
                f"{name:>12} calibrated on {fit['n']} calibration items ({weights}): Pearson "
                f"in-sample {fit['in_sample_pearson']:.3f} (default weights "
                f"{fit['default_pearson']:.3f}), {fit['folds']}-fold CV "
                f"{fit['cv_pearson']:.3f}, heldout {reported['pearson']:.3f} "
                f"[95% CI {low:.3f}, {high:.3f}]"
            )
        elapsed, code, data = _validate(Path(tmp) / "profile", "--shipped-profile")
        print(f"with --shipped-profile: {elapsed:.1f} s (exit code {code})")
        _print_results(data, "")


def _print_results(data: dict[str, object], label: str) -> None:
    for result in data["results"]:  # type: ignore[attr-defined]
        low, high = result["pearson_ci"]
        verdict = "PASS" if result["pearson"] >= BAR_PEARSON else "FAIL"
        print(
            f"{result['metric']:>30}{label}, heldout n={result['n']}: Pearson "
            f"{result['pearson']:.3f} [95% CI {low:.3f}, {high:.3f}], Spearman "
            f"{result['spearman']:.3f}, Kendall {result['kendall']:.3f}; bar "
            f"{BAR_PEARSON}: {verdict}"
        )


if __name__ == "__main__":
    main()
