"""IR gaming suite figures: per mutation, mean score and inversions over the 64 project tasks.

Bar: 0 inversions for ``ir_quality`` and ``IRQuality``: every unusable mutation of
a task (wrong name, wrong/reordered/duplicated parameters, negated, opposite, generic or empty
intent, a contradictory constraint) scores below every usable one (no type hints, reworded
intent, the restated prompt, reordered constraints, effect details dropped) and below the
expected IR (``lift_metrics.ir.ir_mutations``). Also printed: how many unusable mutations clear
``IRQuality``'s bootstrapping cut-off, and how many usable ones it rejects.

``ir_quality`` raises on an IR the model rejects (duplicate or keyword parameter names); such a
mutation is counted as 0, which is what ``IRQuality`` scores it. The real bundled embedder.

Run: ``PYTHONPATH=. .venv/bin/python benchmarks/bench_ir_gaming.py [--tasks 64]``
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from collections import defaultdict
from typing import Any

for _name, _value in (
    ("HF_HUB_OFFLINE", "1"),
    ("TRANSFORMERS_OFFLINE", "1"),
    ("LITELLM_LOCAL_MODEL_COST_MAP", "True"),
):
    os.environ.setdefault(_name, _value)

BAR_INVERSIONS = 0


def _score_pure(predicted: dict[str, Any], expected: dict[str, Any], embedder: Any) -> float:
    from lift_metrics.ir import ir_quality

    try:
        return ir_quality(predicted, expected, embedder=embedder)
    except ValueError:  # the IR model rejects it: IRQuality scores it 0
        return 0.0


def main() -> int:
    """Score every mutation of every task with both metrics; print the table; exit code."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=64, help="how many tasks (file order)")
    args = parser.parse_args()

    from lift_metrics.dspy_metrics import IRQuality
    from lift_metrics.ir import IR_MUTATIONS, ir_mutations, mutation_inversions
    from lift_metrics.optimizers import task_records
    from lift_metrics.similarity import get_default_embedder

    embedder = get_default_embedder()
    metric = IRQuality(embedder=embedder)
    records = task_records()[: args.tasks]
    start = time.perf_counter()
    scores: dict[str, dict[str, list[float]]] = {"ir_quality": defaultdict(list)}
    scores["IRQuality"] = defaultdict(list)
    inversions: dict[str, dict[str, int]] = {"ir_quality": defaultdict(int)}
    inversions["IRQuality"] = defaultdict(int)
    cleared: dict[str, int] = defaultdict(int)
    for record in records:
        expected = record["expected_ir"]
        mutations = ir_mutations(expected, prompt=record["prompt"])
        per_task: dict[str, dict[str, float]] = {"ir_quality": {}, "IRQuality": {}}
        exact = {
            "ir_quality": _score_pure(expected, expected, embedder),
            "IRQuality": float(metric({"expected_ir": expected}, {"ir": expected})),
        }
        for name in ("ir_quality", "IRQuality"):
            scores[name]["expected"].append(exact[name])
        for m in mutations:
            pure = _score_pure(m.ir, expected, embedder)
            wrapped = float(metric({"expected_ir": expected}, {"ir": json.dumps(m.ir)}))
            per_task["ir_quality"][m.name] = pure
            per_task["IRQuality"][m.name] = wrapped
            scores["ir_quality"][m.name].append(pure)
            scores["IRQuality"][m.name].append(wrapped)
            if (wrapped >= metric.threshold) != m.usable:
                cleared[m.name] += 1
        for name, table in per_task.items():
            for bad, _good in mutation_inversions(table, reference_score=exact[name]):
                inversions[name][bad] += 1
    elapsed = time.perf_counter() - start

    print(f"{len(records)} tasks, IRQuality threshold {metric.threshold}, {elapsed:.1f} s")
    header = f"{'mutation':<26}{'usable':>7}{'n':>4}"
    header += f"{'ir_quality':>12}{'inv':>6}{'IRQuality':>12}{'inv':>6}{'wrong side':>12}"
    print(header)
    for kind in ("expected", *IR_MUTATIONS):
        if kind not in scores["ir_quality"]:
            continue
        usable = IR_MUTATIONS.get(kind, True)
        pure = scores["ir_quality"][kind]
        wrapped = scores["IRQuality"][kind]
        print(
            f"{kind:<26}{'yes' if usable else 'no':>7}{len(pure):>4}"
            f"{statistics.mean(pure):>12.3f}{inversions['ir_quality'][kind]:>6}"
            f"{statistics.mean(wrapped):>12.3f}{inversions['IRQuality'][kind]:>6}"
            f"{cleared[kind]:>12}"
        )
    print("inv: (unusable, usable-or-expected) pairs of one task in the wrong order;")
    print("wrong side: unusable mutations at or above the cut-off, usable ones below it")
    totals = {name: sum(inversions[name].values()) for name in inversions}
    ok = all(total <= BAR_INVERSIONS for total in totals.values())
    for name, total in totals.items():
        print(f"bar: {name} inversions <= {BAR_INVERSIONS} -> {total}")
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
