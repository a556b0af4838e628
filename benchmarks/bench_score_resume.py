"""A scoring run killed with SIGKILL midway and rerun: nothing lost, nothing scored twice.

Run: ``PYTHONPATH=$PWD .venv/bin/python benchmarks/bench_score_resume.py``

The HumanEval samples of ``bench_score.py`` (canonical solutions and mutants, ``--per-task``
62 a problem: 10,168 samples) are scored twice with ``lift-metrics score``:

1. uninterrupted, into one folder;
2. into another folder, killed with SIGKILL once ``--kill-at`` of the samples (default 50%)
   have a result line, then run again with the same command until it finishes.

Both use a 10 s time limit, so that a slow mutant on a loaded machine does not time out in
one run and not in the other (the two samples that sleep past any limit still time out).

Bars: after the rerun every sample has exactly one result line; the lines written
before the kill are kept as they were (the rerun only appends, after dropping a line cut
short by the kill), so the rerun scored exactly the samples that had no complete line; every
verdict and the final ``summary.json`` equal the uninterrupted run's. Exit code 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench_score import make_samples

ROOT = Path(__file__).resolve().parents[1]


def _command(samples: Path, out: Path) -> list[str]:
    return [
        sys.executable, "-m", "lift_metrics", "score", str(samples), "--tasks", "humaneval",
        "--output", str(out), "--no-progress", "--format", "json", "--timeout-s", "10",
    ]  # fmt: skip


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


def _run(samples: Path, out: Path) -> float:
    start = time.perf_counter()
    done = subprocess.run(
        _command(samples, out), capture_output=True, text=True, env=_env(), check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"lift-metrics score failed ({done.returncode}): {done.stderr}")
    return time.perf_counter() - start


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _complete_lines(path: Path) -> int:
    if not path.exists():
        return 0
    with path.open("rb") as handle:
        return handle.read().count(b"\n")


def main(argv: list[str] | None = None) -> int:
    """Kill a scoring run with SIGKILL midway, rerun it and compare; return the exit code."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-task", type=int, default=62, help="samples per problem")
    parser.add_argument("--kill-at", type=float, default=0.5, help="share scored at the kill")
    args = parser.parse_args(argv)
    print(f"load average: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    samples = make_samples(args.per_task)
    total = len(samples)
    ok = True
    with tempfile.TemporaryDirectory(prefix="bench_score_resume_") as tmp:
        path = Path(tmp) / "samples.jsonl"
        path.write_text("".join(json.dumps(s) + "\n" for s in samples), encoding="utf-8")
        print(f"{total:,} samples")
        whole, killed = Path(tmp) / "whole", Path(tmp) / "killed"
        whole_s = _run(path, whole)
        print(f"uninterrupted run: {whole_s:.1f} s")

        results = killed / "results.jsonl"
        proc = subprocess.Popen(
            _command(path, killed),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=_env(),
        )
        target = int(total * args.kill_at)
        while _complete_lines(results) < target and proc.poll() is None:
            time.sleep(0.02)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        raw = results.read_bytes()
        kept = raw[: raw.rfind(b"\n") + 1]
        cut = len(raw) - len(kept)
        before = [json.loads(line) for line in kept.splitlines()]
        print(
            f"killed (SIGKILL) with {len(before):,} complete result lines"
            f"{f' and a line cut short ({cut} bytes)' if cut else ''}; "
            f"summary.json written: {(killed / 'summary.json').exists()}"
        )
        ok &= 0 < len(before) < total and not (killed / "summary.json").exists()
        rerun_s = _run(path, killed)
        after = _lines(results)
        lines = [record["line"] for record in after]
        print(f"rerun: {rerun_s:.1f} s, {len(after) - len(before):,} samples scored")
        once = sorted(lines) == list(range(1, total + 1))
        print(
            f"every sample exactly once: {once} "
            f"({len(after):,} lines, {len(set(lines)):,} distinct)"
        )
        kept_same = after[: len(before)] == before
        print(f"lines from before the kill kept unchanged: {kept_same}")
        reference = {r["line"]: (r["passed"], r["status"]) for r in _lines(whole / "results.jsonl")}
        differ = [r for r in after if reference[r["line"]] != (r["passed"], r["status"])]
        for record in differ[:5]:
            print(
                f"  differs: line {record['line']} {record['task_id']}: "
                f"{reference[record['line']]} vs {(record['passed'], record['status'])} "
                f"({record['elapsed_ms']:.0f} ms)"
            )
        same_verdicts = not differ
        print(f"verdicts equal the uninterrupted run's: {same_verdicts}")
        summary_a = json.loads((whole / "summary.json").read_text())
        summary_b = json.loads((killed / "summary.json").read_text())
        same_summary = summary_a == summary_b
        print(f"summary.json equal: {same_summary}  pass@k: {summary_b['pass_at_k']}")
        print(f"status counts: {summary_b['status_counts']}")
        ok &= once and kept_same and same_verdicts and same_summary
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
