"""RayBackend and ``lift-metrics score --ray``: same verdicts as the local backend, resume,
no Ray on the default path, a one-line error without Ray, nothing left running."""

from __future__ import annotations

import json
import math
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from testkit import KeyRecordingBackend, humaneval_variants, write_jsonl

from lift_metrics.scoring import (
    LocalBackend,
    RayBackend,
    ScoringJob,
    score_samples,
)

ROOT = Path(__file__).resolve().parents[2]
# tasks whose checks draw no random inputs, so that even the failure messages repeat
HUMANEVAL_IDS = ("HumanEval/0", "HumanEval/2", "HumanEval/12", "HumanEval/29", "HumanEval/55")

try:
    import ray  # noqa: F401

    HAVE_RAY = True
except ImportError:
    HAVE_RAY = False
needs_ray = pytest.mark.skipif(not HAVE_RAY, reason="ray is not installed (lift-metrics[ray])")
pytestmark = pytest.mark.slow  # Ray start-ups and command-line runs, seconds each


def _humaneval_samples() -> list[dict[str, str]]:
    """Canonical solutions and variants that fail, raise, do not parse, loop forever; each
    canonical solution twice."""
    samples = []
    for task_id in HUMANEVAL_IDS:
        variants = humaneval_variants([task_id])
        samples += [*variants, variants[0]]
    samples.append({"task_id": HUMANEVAL_IDS[0], "completion": "    while True:\n        pass\n"})
    return samples


def _records(folder: Path) -> dict[int, dict[str, Any]]:
    """results.jsonl by line, without the wall-clock times (the only field that may differ)."""
    records = {}
    for text in (folder / "results.jsonl").read_text().splitlines():
        record = json.loads(text)
        del record["elapsed_ms"]
        records[record["line"]] = record
    return records


def _summary(folder: Path) -> dict[str, Any]:
    summary = json.loads((folder / "summary.json").read_text())
    for key in ("elapsed_s", "scored_now", "resumed", "output"):
        summary.pop(key, None)
    return summary


def _processes_mentioning(text: str) -> list[str]:
    """Command lines of live processes that mention ``text`` (Ray's session paths do)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            raw = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        command = raw.replace(b"\0", b" ").decode(errors="replace")
        if text in command:
            found.append(f"{entry.name}: {command[:120]}")
    return found


@pytest.fixture(scope="module")
def ray_tmp() -> Iterator[str]:
    # Ray's sockets live under this folder: short, so their paths fit the 107-byte limit
    folder = tempfile.mkdtemp(prefix="lmray", dir="/tmp")
    yield folder
    subprocess.run(["rm", "-rf", folder], check=False)


@pytest.fixture(scope="module")
def backend(ray_tmp: str) -> Iterator[RayBackend]:
    """One local Ray runtime with 2 actors for the module (Ray takes seconds to start)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("RAY_TMPDIR", ray_tmp)
        box = RayBackend(workers=2, batch_size=4)
        try:
            yield box
        finally:
            box.close()


# -- no Ray needed ------------------------------------------------------------------------------
def test_the_default_path_never_imports_ray(tmp_path: Path) -> None:
    script = (
        "import sys\n"
        "import lift_metrics, lift_metrics.scoring\n"
        "from lift_metrics.scoring import score_samples\n"
        "s = score_samples([{'task_id': 't001', 'solution': 'def add(a, b):\\n    return a+b\\n'}],"
        " 'project', output=sys.argv[1])\n"
        "assert s.pass_at_k == {'pass@1': 1.0}, s.pass_at_k\n"
        "print(sorted(m for m in sys.modules if m == 'ray' or m.startswith('ray.')))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "out")],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_cli_without_ray_names_the_extra_and_writes_nothing(tmp_path: Path) -> None:
    samples = write_jsonl(
        tmp_path / "s.jsonl",
        [{"task_id": "t001", "solution": "def add(a, b):\n    return a + b\n"}],
    )
    script = (
        "import sys\n"
        "sys.modules['ray'] = None  # what a missing package looks like to import\n"
        "from lift_metrics.cli import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, "score", str(samples), "--tasks", "project", "--ray"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        cwd=ROOT,
    )
    assert done.returncode == 2
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert "pip install 'lift-metrics[ray]'" in lines[0]
    assert lines[0].startswith("lift-metrics score: error: --ray:")
    assert not (tmp_path / "s_scores").exists()


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"address": ""}, "address must be None"),
        ({"address": 6379}, "address must be None"),
        ({"address": "head.example"}, "HOST:PORT"),
        ({"address": "ray://head.example:port"}, "HOST:PORT"),
        ({"address": "10.0.0.1:70000"}, "a port from 1 to 65535"),
        ({"workers": 0}, "workers"),
        ({"batch_size": 0}, "batch_size"),
        ({"importable": "numpy"}, "importable must be a sequence"),
        ({"importable": ["lift_metrics"]}, "importable must not name lift_metrics"),
    ],
)
def test_bad_arguments_are_refused_before_ray_starts(kwargs: dict[str, Any], match: str) -> None:
    with pytest.raises((TypeError, ValueError), match=match):
        RayBackend(**kwargs)


def test_an_actors_sandbox_imports_the_packages_the_backend_names() -> None:
    from lift_metrics.scoring import execute_job
    from lift_metrics.scoring._ray import _ScoringActor

    solution = "def add(a, b):\n    import numpy\n    return int(numpy.add(a, b))\n"
    job = ScoringJob(1, solution, [({"a": 1, "b": 2}, 3)], "add", 3.0)
    plain, named = _ScoringActor(), _ScoringActor(RayBackend(importable=["numpy"]).importable)
    try:
        assert execute_job(plain._box, job).status == "failed"
        assert execute_job(named._box, job).status == "passed"
    finally:
        plain._box.close()
        named._box.close()


@needs_ray
def test_cli_with_an_unreachable_address_fails_fast_in_one_line(tmp_path: Path) -> None:
    samples = write_jsonl(
        tmp_path / "s.jsonl",
        [{"task_id": "t001", "solution": "def add(a, b):\n    return a + b\n"}],
    )
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    done = subprocess.run(
        [
            *(sys.executable, "-m", "lift_metrics", "score", str(samples)),
            *("--tasks", "project", "--ray", f"ray://127.0.0.1:{port}"),
        ],
        capture_output=True,
        text=True,
        timeout=60,  # Ray alone retries an unreachable address for minutes
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        cwd=ROOT,
    )
    assert done.returncode == 2
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert f"cannot reach the Ray cluster at 'ray://127.0.0.1:{port}'" in lines[0]
    assert not (tmp_path / "s_scores").exists()


# -- a real local Ray runtime -------------------------------------------------------------------
@needs_ray
def test_ray_gives_the_local_backends_results(tmp_path: Path, backend: RayBackend) -> None:
    path = write_jsonl(tmp_path / "samples.jsonl", _humaneval_samples())
    with LocalBackend(concurrency=2) as local:
        score_samples(path, "humaneval", output=tmp_path / "local", timeout_s=1.0, backend=local)
    summary = score_samples(
        path, "humaneval", output=tmp_path / "ray", timeout_s=1.0, backend=backend
    )
    assert backend.workers == 2
    assert len(backend.hosts) == 2
    assert backend.isolation in ("bwrap", "process")
    local_records, ray_records = _records(tmp_path / "local"), _records(tmp_path / "ray")
    assert ray_records == local_records
    statuses = {record["status"] for record in ray_records.values()}
    assert {"passed", "failed", "error", "timeout"} <= statuses
    assert _summary(tmp_path / "ray") == _summary(tmp_path / "local")
    assert summary.n_samples == len(local_records)


@needs_ray
def test_ray_resumes_and_scores_nothing_twice(tmp_path: Path, backend: RayBackend) -> None:
    path = write_jsonl(tmp_path / "samples.jsonl", _humaneval_samples()[:24])
    out = tmp_path / "out"
    full = score_samples(path, "humaneval", output=out, backend=backend)
    results = out / "results.jsonl"
    lines = results.read_bytes().splitlines(keepends=True)
    kept, cut = lines[:9], lines[9]
    results.write_bytes(b"".join(kept) + cut[: len(cut) // 2])  # killed mid-line
    counting = KeyRecordingBackend(backend)
    resumed = score_samples(path, "humaneval", output=out, backend=counting)
    scored_before = {json.loads(line)["line"] for line in kept}
    assert sorted(counting.keys) == sorted(set(range(1, 25)) - scored_before)
    final = [json.loads(line)["line"] for line in results.read_text().splitlines()]
    assert sorted(final) == list(range(1, 25))  # each exactly once
    assert resumed.pass_at_k == full.pass_at_k
    assert resumed.per_task == full.per_task
    assert resumed.resumed == 9
    assert resumed.scored_now == 15


@needs_ray
def test_an_interrupted_run_cancels_its_batches_and_the_backend_runs_again(
    backend: RayBackend,
) -> None:
    import ray

    # a batch of 4 takes 4 s, so the batches still running when the stream is closed are
    # cancelled long before they could end, on a loaded machine too
    slow = "def f(x):\n    import time\n    time.sleep(1.0)\n    return x\n"
    jobs = [ScoringJob(i, slow + "#" * i, [({"x": 1}, 1)], "f", 10.0) for i in range(16)]
    fast = [
        ScoringJob(i, "def f(x):\n    return x\n" + "#" * i, [({"x": 1}, 1)], "f", 5.0)
        for i in range(6)
    ]
    list(backend.run(fast[:1]))  # the actors are up

    def executed() -> int:
        described = ray.get([actor.describe.remote() for actor in backend._actors])
        return sum(info["executed"] for info in described)

    before = executed()
    stream = backend.run(jobs)  # 2 actors x 2 batches of 4 in flight: every job sent
    next(stream)
    stream.close()  # what an interrupt does
    # an actor's tasks run in order: describe answers once the cancelled batches have stopped
    assert executed() - before < len(jobs)  # running batches stopped early, queued ones never ran
    again = list(backend.run(fast))
    assert sorted(result.key for result in again) == list(range(6))
    assert {result.status for result in again} == {"passed"}


@needs_ray
def test_more_workers_than_the_clusters_cpus_is_refused(backend: RayBackend) -> None:
    import ray

    list(backend.run([]))  # the module's runtime (2 CPUs) is up: a new backend joins it
    with pytest.raises(ValueError, match=r"workers=3 is more than the 2 CPUs of the Ray cluster"):
        RayBackend(workers=3).connect()
    assert ray.is_initialized()  # the runtime it joined is not its to stop


@needs_ray
def test_a_killed_actor_is_restarted_and_its_batches_scored_once(backend: RayBackend) -> None:
    import ray

    slow = "def f(x):\n    import time\n    time.sleep(0.2)\n    return x\n"
    jobs = [ScoringJob(i, slow + "#" * i, [({"x": 1}, 1)], "f", 5.0) for i in range(24)]
    list(backend.run(jobs[:1]))  # the actors are up
    victim = ray.get(backend._actors[0].describe.remote())["pid"]
    stream = backend.run(jobs)
    results = [next(stream)]
    os.kill(victim, signal.SIGKILL)  # a lost node, as far as Ray can tell
    results += list(stream)
    assert sorted(result.key for result in results) == list(range(24))  # each exactly once
    assert {result.status for result in results} == {"passed"}
    assert ray.get(backend._actors[0].describe.remote())["pid"] != victim  # restarted


@needs_ray
# two Ray start-ups and 4 s of sleeping samples
def test_cli_ray_ctrl_c_then_rerun_scores_each_sample_once(tmp_path: Path) -> None:
    slow = "def add(a, b):\n    import time\n    time.sleep(0.1)\n    return {}\n"
    bodies = ("a + b", "a - b") * 20
    samples = [
        {"task_id": "t001", "solution": slow.format(body) + "#" * i}
        for i, body in enumerate(bodies)
    ]
    path = write_jsonl(tmp_path / "s.jsonl", samples)
    out = tmp_path / "out"
    ray_tmp = tempfile.mkdtemp(prefix="lmray", dir="/tmp")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "RAY_TMPDIR": ray_tmp}
    command = [
        *(sys.executable, "-m", "lift_metrics", "score", str(path), "--tasks", "project"),
        *("--output", str(out), "--no-progress", "--format", "json", "--concurrency", "2"),
        "--ray",
    ]
    try:
        proc = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT
        )
        results = out / "results.jsonl"
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and (not results.exists() or results.stat().st_size == 0):
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=60)
        assert proc.returncode == 130, stderr
        assert stderr.count("\n") == 1
        assert "rerun the same command to resume" in stderr
        partial = [json.loads(line) for line in results.read_text().splitlines()]
        assert 0 < len(partial) < 40
        assert _processes_mentioning(ray_tmp) == []

        done = subprocess.run(
            command, capture_output=True, text=True, timeout=180, env=env, cwd=ROOT
        )
        assert done.returncode == 0, done.stderr
        summary = json.loads(done.stdout)
        pass_at_10 = 1 - math.comb(20, 10) / math.comb(40, 10)  # n=40, c=20: math.comb
        assert summary["pass_at_k"] == {"pass@1": 0.5, "pass@10": pytest.approx(pass_at_10)}
        assert summary["n_samples"] == 40
        final = [json.loads(line) for line in results.read_text().splitlines()]
        assert final[: len(partial)] == partial
        assert sorted(record["line"] for record in final) == list(range(1, 41))  # once each
        assert [r["passed"] for r in sorted(final, key=lambda r: r["line"])] == [True, False] * 20
        assert _processes_mentioning(ray_tmp) == []
    finally:
        subprocess.run(["rm", "-rf", ray_tmp], check=False)


@needs_ray
def test_closing_the_backend_stops_ray_and_leaves_no_process(
    ray_tmp: str, backend: RayBackend
) -> None:
    import ray

    job = ScoringJob(1, "def f(x):\n    return x\n", [({"x": 1}, 1)], "f", 3.0)
    assert [result.status for result in backend.run([job])] == ["passed"]
    assert ray.is_initialized()
    assert _processes_mentioning(ray_tmp)
    backend.close()
    backend.close()  # idempotent
    assert not ray.is_initialized()
    assert _processes_mentioning(ray_tmp) == []
