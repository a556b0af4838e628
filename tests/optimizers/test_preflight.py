"""``optimize --check`` and the start of ``optimize`` reject the same bad configs.

Each config below is well formed but cannot work: unless refused up front, it fails only
after the whole optimization has run (or silently runs nothing). Both paths exit 2 with one
line naming the key, and the run stops before any LM is built (``_resolve_lms`` is replaced
by a function that fails the test) and before anything is written.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lift_metrics._paths import configs_dir, datasets_dir
from lift_metrics.cli import main
from lift_metrics.optimizers import _runner

QUICK = (configs_dir() / "quick.toml").read_text(encoding="utf-8")
_EVALUATION_END = "num_threads = 1\n\n[budget]"

# name -> (text replaced in quick.toml, replacement, what the error line must name)
CASES: dict[str, tuple[str, str, str]] = {
    "confidence_level = 1.0": (
        _EVALUATION_END,
        "num_threads = 1\nconfidence_level = 1.0\n\n[budget]",
        "[evaluation] confidence_level must be in (0, 1), got 1.0",
    ),
    "n_resamples = 1e12": (
        _EVALUATION_END,
        "num_threads = 1\nn_resamples = 1_000_000_000_000\n\n[budget]",
        "[evaluation] n_resamples must be <= 1,000,000",
    ),
    "an unknown [lm] key": (
        "temperature = 0.0",
        "temperature = 0.0\ncolour = 1",
        "[lm] unknown LM option 'colour'",
    ),
    "a missing model file": (
        'model = "local"',
        'model = "MISSING/nope.gguf"',
        "nope.gguf' does not exist",
    ),
    "a model file that is not GGUF": (
        'model = "local"',
        'model = "NOT_GGUF"',
        "is not a GGUF model file",
    ),
    'temperature = "hot"': (
        "temperature = 0.0",
        'temperature = "hot"',
        "[lm] temperature must be a real number, got str 'hot'",
    ),
    "temperature = nan": ("temperature = 0.0", "temperature = nan", "[lm] temperature"),
    "temperature = 3": ("temperature = 0.0", "temperature = 3.0", "[lm] temperature"),
    "max_tokens = -5": (
        "max_tokens = 320",
        "max_tokens = -5",
        "[lm] max_tokens must be >= 1, got -5",
    ),
    "num_trials = -2": (
        "num_trials = 4",
        "num_trials = -2",
        "[optimizer.compile] num_trials must be >= 1, got -2",
    ),
    "num_trials = 0": ("num_trials = 4", "num_trials = 0", "num_trials must be >= 1"),
    "num_candidates = 0": (
        "num_candidates = 3",
        "num_candidates = 0",
        "[optimizer.init] num_candidates must be >= 1",
    ),
    "a task file without the test split": (
        "[dataset]",
        '[dataset]\npath = "NO_TEST_SPLIT"',
        "the test split 'test' of ",
    ),
    "api_base with the local model": (
        "temperature = 0.0",
        'temperature = 0.0\napi_base = "http://127.0.0.1:9/v1"',
        "[lm] api_base applies to a remote model",
    ),
    "an api_base that is not a URL": (
        'model = "local"',
        'model = "openai/gpt-4o-mini"\napi_base = "http://[::1/v1"',
        "[lm] api_base 'http://[::1/v1' is not a URL",
    ),
}


def _write_config(tmp_path: Path, name: str) -> Path:
    old, new, _ = CASES[name]
    assert old in QUICK, f"quick.toml does not contain {old!r}; update the case"
    not_gguf = tmp_path / "weights.gguf"
    not_gguf.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(64))
    no_test = tmp_path / "no_test.jsonl"
    shipped = (datasets_dir() / "tasks" / "tasks.jsonl").read_text("utf-8")
    no_test.write_text(
        "".join(line + "\n" for line in shipped.splitlines() if '"split": "test"' not in line),
        encoding="utf-8",
    )
    new = new.replace("MISSING", str(tmp_path / "missing")).replace("NOT_GGUF", str(not_gguf))
    new = new.replace("NO_TEST_SPLIT", str(no_test))
    path = tmp_path / "bad.toml"
    text = QUICK.replace(old, new, 1).replace('output_dir = "runs/quick"', "")
    path.write_text(text, encoding="utf-8")
    return path


def _run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("name", sorted(CASES))
def test_check_rejects_with_one_line(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write_config(tmp_path, name)
    code, out, err = _run(["optimize", "--check", str(path)], capsys)
    assert code == 2, (name, out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err, err
    assert CASES[name][2] in lines[0], lines[0]
    if name == "a task file without the test split":
        assert "no_test.jsonl holds no tasks" in lines[0], lines[0]
    assert out == ""


@pytest.mark.parametrize("name", sorted(CASES))
def test_run_rejects_before_any_lm_is_built(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_lm(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("an LM was built: the config should have been rejected first")

    monkeypatch.setattr(_runner, "_resolve_lms", no_lm)
    path = _write_config(tmp_path, name)
    output = tmp_path / "out"
    code, _, err = _run(["optimize", str(path), "--quiet", "--output-dir", str(output)], capsys)
    assert code == 2, (name, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert CASES[name][2] in lines[0], err
    assert not output.exists()  # nothing written


def test_the_shipped_quick_config_still_passes(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(["optimize", "--check", str(configs_dir() / "quick.toml")], capsys)
    assert (code, err) == (0, "")
    assert "OK" in out
