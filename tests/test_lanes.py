"""The fast and slow lanes of scripts/test.sh cover the suite: the lane record and its check."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from testkit import LONGEST_FIRST, check_lanes

ROOT = Path(__file__).resolve().parents[1]


def _record(path: Path, markexpr: str, collected: int, selected: int, **extra: object) -> None:
    row = {"markexpr": markexpr, "keyword": "", "args": ["tests"], "collected": collected}
    row |= {"selected": selected, **extra}
    with path.open("a") as fh:
        fh.write(json.dumps(row) + "\n")


def test_two_lanes_that_add_up_pass(tmp_path: Path) -> None:
    lanes = tmp_path / "lanes"
    _record(lanes, "not slow", 10, 7)
    _record(lanes, "slow", 10, 3)
    assert check_lanes(str(lanes)) == "lanes: not slow: 7, slow: 3; 10 of 10 tests"


@pytest.mark.parametrize(
    ("second", "message"),
    [
        ({"markexpr": "slow and not gpu", "collected": 10, "selected": 2}, "select 9 of 10"),
        ({"markexpr": "slow", "collected": 11, "selected": 4}, "different suites"),
        ({"markexpr": "slow", "collected": 10, "selected": 3, "keyword": "x"}, "with -k"),
    ],
)
def test_a_lost_test_or_a_partial_run_fails(
    tmp_path: Path, second: dict[str, object], message: str
) -> None:
    lanes = tmp_path / "lanes"
    _record(lanes, "not slow", 10, 7)
    _record(lanes, **second)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=message):
        check_lanes(str(lanes))


def test_one_lane_alone_is_not_the_suite(tmp_path: Path) -> None:
    lanes = tmp_path / "lanes"
    _record(lanes, "", 10, 10)
    with pytest.raises(ValueError, match="expected two lane records"):
        check_lanes(str(lanes))


@pytest.mark.slow  # two pytest start-ups; scripts/test.sh exercises it on every run
def test_pytest_writes_the_lane_record(tmp_path: Path) -> None:
    lanes = tmp_path / "lanes"
    command = [sys.executable, "-m", "pytest", "tests/test_lanes.py", "--collect-only", "-q"]
    command += ["-p", "no:cacheprovider", f"--lane-record={lanes}"]
    for markexpr in ("not slow", "slow"):
        done = subprocess.run([*command, "-m", markexpr], cwd=ROOT, capture_output=True, text=True)
        assert done.returncode == 0, done.stdout + done.stderr
    records = [json.loads(line) for line in lanes.read_text().splitlines()]
    assert [r["markexpr"] for r in records] == ["not slow", "slow"]
    assert records[0]["collected"] == records[1]["collected"]
    # the fast lane runs under pytest-xdist: two workers collect it, one record is written
    spread = tmp_path / "spread"
    command = [sys.executable, "-m", "pytest", "tests/test_lanes.py", "-q", "-m", "not slow"]
    command += ["-p", "no:cacheprovider", "-n", "2", f"--lane-record={spread}"]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert [json.loads(line) for line in spread.read_text().splitlines()] == [records[0]]
    assert records[1]["selected"] == 3  # the file's three slow tests
    assert records[0]["selected"] == records[0]["collected"] - 3
    assert check_lanes(str(lanes)).endswith(f"of {records[0]['collected']} tests")


@pytest.mark.slow
def test_whole_dataset_checks_skip_with_their_reason_unless_full_is_given() -> None:
    command = [sys.executable, "-m", "pytest", "tests/code/test_gaming.py", "-m", "slow and full"]
    command += ["-p", "no:cacheprovider", "-q", "-rs", "--setup-only"]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 skipped" in done.stdout, done.stdout
    assert "whole-dataset check" in done.stdout, done.stdout
    assert "run with --full" in done.stdout, done.stdout
    done = subprocess.run([*command, "--full"], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "skipped" not in done.stdout, done.stdout
    assert "SETUP    M sandbox" in done.stdout, done.stdout


@pytest.mark.slow  # a pytest start-up
def test_the_longest_first_files_exist_and_start_the_slow_lane(pytestconfig: pytest.Config) -> None:
    root = Path(__file__).parent.parent
    assert len(set(LONGEST_FIRST)) == len(LONGEST_FIRST)
    for name in LONGEST_FIRST:  # a renamed file would silently lose its place
        assert (root / name).is_file(), name
    command = [sys.executable, "-m", "pytest", "--collect-only", "-q", "-m", "slow"]
    command += ["tests/test_judge.py", "tests/ir", "tests/optimizers/test_runner.py"]
    out = subprocess.run(command, cwd=root, capture_output=True, text=True, check=True).stdout
    files = list(dict.fromkeys(line.split("::")[0] for line in out.splitlines() if "::" in line))
    assert files[:2] == ["tests/optimizers/test_runner.py", "tests/test_judge.py"]
