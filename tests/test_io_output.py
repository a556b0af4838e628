"""Output folders: checked before work, and written all or nothing (``lift_metrics._io``)."""

from __future__ import annotations

import errno
from pathlib import Path

import pytest

from lift_metrics._io import (
    OUTPUT_MANIFEST,
    atomic_write_text,
    atomic_write_with,
    check_output_dir,
    remove_outputs,
    staged_output,
)


def _names(folder: Path) -> list[str]:
    """The entries of ``folder``, sorted, without the output manifest."""
    return sorted(p.name for p in folder.iterdir() if p.name != OUTPUT_MANIFEST)


def test_check_output_dir_creates_and_leaves_nothing(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b"
    assert check_output_dir(target, option="--out") == target
    assert list(tmp_path.iterdir()) == []  # no folder made, the probe file removed


def test_check_output_dir_names_the_file_in_the_way(tmp_path: Path) -> None:
    (tmp_path / "taken").write_text("x")
    with pytest.raises(ValueError, match=r"^--out .*taken/run: not a directory \(.*taken is a"):
        check_output_dir(tmp_path / "taken" / "run", option="--out")
    with pytest.raises(ValueError, match=r"^output_dir .*taken: not a directory$"):
        check_output_dir(tmp_path / "taken", option="output_dir")


def test_staged_output_keeps_the_previous_files_when_writing_fails(tmp_path: Path) -> None:
    atomic_write_text(tmp_path / "report.md", "previous report")

    def write_then_fail() -> None:
        with staged_output(tmp_path) as stage:
            atomic_write_text(stage / "report.md", "new report")
            raise OSError(errno.ENOSPC, "No space left on device")  # as a full disk would

    with pytest.raises(OSError, match="No space left on device") as info:
        write_then_fail()
    assert info.value.filename == str(tmp_path)  # the error names the output folder
    assert _names(tmp_path) == ["report.md"]
    assert (tmp_path / "report.md").read_text() == "previous report"


def test_staged_output_names_the_final_file_not_the_staged_one(tmp_path: Path) -> None:
    with (
        pytest.raises(OSError, match="No space left on device") as info,
        staged_output(tmp_path / "out") as stage,
    ):
        raise OSError(errno.ENOSPC, "No space left on device", str(stage / "plot.png"))
    assert info.value.filename == str(tmp_path / "out" / "plot.png")
    assert not (tmp_path / "out").exists()  # it did not exist before: removed again


def test_staged_output_replaces_whole_folders(tmp_path: Path) -> None:
    atomic_write_text(tmp_path / "runs" / "old.json", "{}")
    with staged_output(tmp_path) as stage:
        atomic_write_text(stage / "runs" / "new.json", "{}")
    assert [p.name for p in (tmp_path / "runs").iterdir()] == ["new.json"]
    assert _names(tmp_path) == ["runs"]


def test_a_killed_processs_staging_folder_is_removed_on_the_next_use(tmp_path: Path) -> None:
    atomic_write_text(tmp_path / ".staging.killed" / "half.png", "half a plot")
    with staged_output(tmp_path) as stage:
        atomic_write_text(stage / "report.md", "# done")
    assert _names(tmp_path) == ["report.md"]


def _temporary_name(path: Path, suffix: str) -> str:
    """The name of the temporary file that :func:`atomic_write_with` writes for ``path``."""
    seen: list[str] = []
    atomic_write_with(path, lambda tmp: seen.append(tmp.name) or tmp.write_text("x"), suffix=suffix)
    return seen[0]


def test_remove_outputs_removes_matches_folders_and_temporary_files_only(tmp_path: Path) -> None:
    leftovers = [
        _temporary_name(tmp_path / "program.json", ".json"),  # .program.<random>.json
        _temporary_name(tmp_path / "report_run2.md", ".tmp"),  # .report_run2.md.<random>.tmp
    ]
    for name in [*leftovers, "report_run1.md", "notes.md", ".notes.md.abc.tmp"]:
        (tmp_path / name).write_text("left", encoding="utf-8")
    (tmp_path / "baseline").mkdir()
    (tmp_path / "baseline" / "a.json").write_text("{}", encoding="utf-8")
    remove_outputs(tmp_path, ["program.json", "report_run*.md", "baseline"])
    assert _names(tmp_path) == [".notes.md.abc.tmp", "notes.md"]
    remove_outputs(tmp_path / "absent", ["notes.md"])  # no folder: nothing to do
