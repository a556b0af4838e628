"""The command line's one progress display (lift_metrics._progress)."""

from __future__ import annotations

import threading

import pytest

from lift_metrics._progress import ProgressBar


def test_a_disabled_bar_counts_and_shows_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    with ProgressBar("scored", 4, enabled=False) as bar:
        bar.advance()
        bar.update(3, 5)
        bar.advance()
    assert (bar.done, bar.total) == (4, 5)
    assert capsys.readouterr() == ("", "")


def test_an_enabled_bar_writes_its_count_to_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    with ProgressBar("scored", 0) as bar:
        bar.update(2, 7)
        bar.update(7, 7)
    out, err = capsys.readouterr()
    assert out == ""
    assert "scored" in err
    assert "7/7" in err


def test_threads_advancing_at_once_lose_no_step() -> None:
    with ProgressBar("evaluate", 800) as bar:
        workers = [
            threading.Thread(target=lambda: [bar.advance() for _ in range(200)]) for _ in range(4)
        ]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
    assert bar.done == 800


def test_a_bar_without_a_total_shows_nothing_until_the_first_count(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with ProgressBar("scored", 0):
        pass  # a run refused before it starts
    assert capsys.readouterr() == ("", "")


def test_a_bar_for_the_terminal_report_writes_to_stdout(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with ProgressBar("baseline", 2, stderr=False) as bar:
        bar.advance()
        bar.advance()
    out, err = capsys.readouterr()
    assert "baseline" in out
    assert "2/2" in out
    assert err == ""
