"""The main job (``optimizers/quick.toml``) with several seeds, to see if the gain is stable.

Bars, checked on the run of every seed:

- the run takes under 8.5 minutes (the README's 10 minutes minus about 1.5 for the install);
- no generated program is a template placeholder;
- the optimized program's code passes all tests on at least a quarter of the test tasks;
- the share of tests passed (``tests_passed``) or of tasks solved (``tasks_solved``) improves
  with a paired 95% interval that excludes 0.

Then, per metric, the median and the range (min..max) of the paired delta (optimized -
baseline) over all seeds. Each seed is a full run of the main job with ``seed`` replaced
(MIPROv2's seed and the bootstrap's), each in its own output folder with its own LM cache, so
nothing is replayed from another seed. The load average is printed: on a shared machine the
wall times are only as good as the load allows.

Run: ``.venv/bin/python benchmarks/bench_main_job.py [--seeds 7 11 23] [--out DIR]``
(three full runs: about three times the main job).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

TIME_BAR_S = 8.5 * 60
SOLVED_BAR = 0.25


def _one(seed: int, out: Path, config_path: str) -> Any:
    from lift_metrics.optimizers import load_config, run_optimizer

    config = load_config(config_path)
    config = config.replace(seed=seed, output_dir=out / f"seed{seed}", cache_dir=None)
    print(f"seed {seed}: running (load average {os.getloadavg()[0]:.2f}) ...", flush=True)
    result = run_optimizer(config, progress=False)
    print(f"seed {seed}: {result!r}", flush=True)
    return result


def _bars(result: Any) -> dict[str, bool]:
    deltas = {d.metric: d for d in result.deltas}
    optimized = result.code.get("optimized", {})
    placeholders = sum(c["degenerate"]["placeholder"] for c in result.code.values())
    improved = any(
        name in deltas and deltas[name].ci_low > 0 for name in ("tests_passed", "tasks_solved")
    )
    return {
        f"wall time < {TIME_BAR_S / 60:.1f} min": result.wall_time_s < TIME_BAR_S,
        "no placeholder program": placeholders == 0,
        f"optimized solves >= {SOLVED_BAR:.0%} of test tasks": (
            (optimized.get("solved_share") or 0.0) >= SOLVED_BAR
        ),
        "tests_passed or tasks_solved improved (95% CI > 0)": improved,
    }


def main(argv: list[str] | None = None) -> int:
    """Run the main job once per seed and check the bars; return the exit code."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[7, 11, 23])
    parser.add_argument("--config", default="optimizers/quick.toml")
    parser.add_argument("--out", default=None, help="output folder (default: a temporary one)")
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(args.out) if args.out else Path(tmp)
        results = [_one(seed, out, args.config) for seed in args.seeds]
        print(f"\n{len(results)} runs of {args.config}; cpus {os.cpu_count()}")
        print(f"{'seed':>5} {'wall s':>7} {'solved base->opt':>17} {'degenerate':>11}  bars")
        all_ok = True
        for seed, result in zip(args.seeds, results, strict=True):
            code = result.code
            base, opt = code.get("baseline", {}), code.get("optimized", {})
            bars = _bars(result)
            all_ok &= all(bars.values())
            failed = [name for name, ok in bars.items() if not ok]
            print(
                f"{seed:>5} {result.wall_time_s:>7.0f} "
                f"{base.get('tasks_solved', 0):>7.0f} -> {opt.get('tasks_solved', 0):<4.0f}"
                f"/{opt.get('n_tasks', 0):<3} "
                f"{sum(opt.get('degenerate', {}).values()):>10}  "
                + ("all met" if not failed else "NOT MET: " + "; ".join(failed))
            )
        print(f"\n{'metric':<14} {'median delta':>12}  {'range (min..max)':>20}  CI > 0 in")
        names = [d.metric for d in results[0].deltas]
        for name in names:
            values = [next(d for d in r.deltas if d.metric == name) for r in results]
            deltas = [d.mean_delta for d in values]
            positive = sum(d.ci_low > 0 for d in values)
            print(
                f"{name:<14} {statistics.median(deltas):>+12.3f}  "
                f"{min(deltas):>+9.3f}..{max(deltas):<+9.3f}  {positive}/{len(values)} seeds"
            )
        print(f"\nbars on every seed: {'met' if all_ok else 'NOT met'}")
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main())
