"""Fault injection for ``score``: bad options touch no file, and no candidate stops a run.

Every option is checked before the output folder is touched: otherwise ``--no-resume`` with a
bad ``--concurrency`` would empty ``results.jsonl`` and then refuse, and a ``--timeout-s`` of
1e308 would write ``run.json`` before failing, after which the folder refuses a normal resume.
A candidate is untrusted code: one that raises ``ValueError('\\ud800')`` (a lone surrogate in
its error) must not crash the result writer, which would then crash at the same sample on
every rerun.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lift_metrics.cli import main
from lift_metrics.scoring import score_samples

ADD = "def add(a, b):\n    return a + b\n"


def _samples(tmp_path: Path, *solutions: str) -> Path:
    path = tmp_path / "samples.jsonl"
    lines = [json.dumps({"task_id": "t001", "solution": text}) for text in solutions]
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


@pytest.fixture
def scored(tmp_path: Path) -> tuple[Path, Path]:
    """(samples file, output folder) after one finished run."""
    samples = _samples(tmp_path, ADD, ADD.replace("+", "-"))
    out = tmp_path / "out"
    assert main(["score", str(samples), "--tasks", "project", "--output", str(out)]) == 0
    assert len((out / "results.jsonl").read_text().splitlines()) == 2
    return samples, out


BAD_OPTIONS = {
    "--concurrency 0": (["--concurrency", "0"], "--concurrency must be >= 1, got 0"),
    "--concurrency 2000": (
        ["--concurrency", "2000"],
        "--concurrency must be <= 1,024, got 2,000",
    ),
    "--timeout-s 1e308": (
        ["--timeout-s", "1e308"],
        "--timeout-s must be <= 86400 (a day), got 1e+308",
    ),
    "--timeout-s nan": (["--timeout-s", "nan"], "--timeout-s must not be NaN"),
    "--k 0": (["--k", "0"], "--k must be >= 1, got 0"),
}


@pytest.mark.parametrize("resume", [True, False], ids=["resume", "no-resume"])
@pytest.mark.parametrize("name", sorted(BAD_OPTIONS))
def test_a_bad_option_leaves_an_earlier_output_as_it_was(
    name: str,
    resume: bool,
    scored: tuple[Path, Path],
    capsys: pytest.CaptureFixture[str],
) -> None:
    samples, out = scored
    before = _snapshot(out)
    capsys.readouterr()
    options, message = BAD_OPTIONS[name]
    args = ["score", str(samples), "--tasks", "project", "--output", str(out), *options]
    with pytest.raises(SystemExit) as exit_info:
        main([*args, *([] if resume else ["--no-resume"])])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2
    assert len(err.strip().splitlines()) == 1, err
    assert message in err
    assert _snapshot(out) == before
    # the folder still resumes: nothing is scored again
    assert main(["score", str(samples), "--tasks", "project", "--output", str(out)]) == 0
    assert _snapshot(out)["results.jsonl"] == before["results.jsonl"]


@pytest.mark.parametrize(
    ("option", "value"),
    [("concurrency", 0), ("concurrency", 5000), ("timeout_s", 1e308), ("timeout_s", 0.0)],
)
def test_the_library_checks_every_argument_before_touching_the_output(
    option: str, value: float, scored: tuple[Path, Path]
) -> None:
    samples, out = scored
    before = _snapshot(out)
    with pytest.raises(ValueError, match=option):
        score_samples(samples, "project", output=out, resume=False, **{option: value})
    assert _snapshot(out) == before
    fresh = out.parent / "fresh"
    with pytest.raises(ValueError, match=option):
        score_samples(samples, "project", output=fresh, **{option: value})
    assert not fresh.exists()


RAISES_SURROGATE = (
    "def add(a, b):\n    raise ValueError('\\ud800 and \\udfff')\n"  # lone surrogates at run time
)
PRINTS_SURROGATE = "import sys\nsys.stderr.write('\\udc80')\n" + ADD


def test_a_candidate_whose_error_is_not_unicode_text_is_scored(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    samples = _samples(tmp_path, ADD, RAISES_SURROGATE, PRINTS_SURROGATE, ADD)
    out = tmp_path / "out"
    code = main(["score", str(samples), "--tasks", "project", "--output", str(out)])
    err = capsys.readouterr().err
    assert code == 0, err
    assert "Traceback" not in err
    raw = (out / "results.jsonl").read_bytes()
    raw.decode("utf-8")  # the file is UTF-8 text
    results = {r["line"]: r for r in map(json.loads, raw.decode().splitlines())}
    assert sorted(results) == [1, 2, 3, 4]
    assert [results[n]["passed"] for n in (1, 2, 3, 4)] == [True, False, True, True]
    assert results[2]["status"] == "failed"
    # the error is kept; the sandbox reads the candidate's text as Unicode (a lone surrogate
    # becomes U+FFFD), so the record is plain UTF-8
    assert "ValueError: \ufffd and \ufffd" in json.dumps(results[2], ensure_ascii=False)
    # a rerun resumes the finished file instead of failing on it
    assert main(["score", str(samples), "--tasks", "project", "--output", str(out)]) == 0
    assert (out / "results.jsonl").read_bytes() == raw


@pytest.mark.parametrize("resume", [True, False], ids=["resume", "no-resume"])
def test_a_sandbox_that_cannot_run_refuses_before_any_file_is_written(
    resume: bool,
    scored: tuple[Path, Path],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The sandbox's start-up check comes before the output: no empty results.jsonl/run.json.

    A sandbox that cannot run here (root without CAP_DAC_OVERRIDE, run for real in
    test_reduced_capabilities.py) is simulated by a default sandbox that refuses to start.
    """
    import lift_metrics.sandbox as sandbox_package
    from lift_metrics.sandbox import SandboxUnavailableError

    def refuse(**kwargs: object) -> None:
        raise SandboxUnavailableError("the sandbox cannot run a known-good program: crashed")

    monkeypatch.setattr(sandbox_package, "get_default_sandbox", refuse)
    samples, out = scored
    before = _snapshot(out)
    fresh = out.parent / "fresh"
    with pytest.raises(SandboxUnavailableError):
        score_samples(samples, "project", output=fresh, resume=resume)
    assert not fresh.exists()
    capsys.readouterr()
    args = ["score", str(samples), "--tasks", "project", "--output", str(out)]
    assert main([*args, *([] if resume else ["--no-resume"])]) == 2
    err = capsys.readouterr().err
    assert err.strip().splitlines() == [
        "lift-metrics score: error: the sandbox cannot run a known-good program: crashed"
    ]
    assert _snapshot(out) == before
