"""``--mlflow URI``: the target is checked before the run, and a tracking failure at the end
never loses the run's own files.

Before, an unreachable server cost minutes of MLflow retries after the whole run and ended in
a traceback (exit 1); a malformed URI was a traceback too.
"""

from __future__ import annotations

import contextlib
import http.server
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from optimizers_testkit import pipeline_lm

from lift_metrics._paths import configs_dir
from lift_metrics._tasks import task_records
from lift_metrics.cli import main
from lift_metrics.errors import InputValueError
from lift_metrics.optimizers import _runner, _tracking
from lift_metrics.optimizers._tracking import TrackingError, check_tracking_uri

pytest.importorskip("mlflow", reason="mlflow is optional: pip install '.[tracking]'")


def _closed_port() -> int:
    """A local port nothing listens on (bound once, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.parametrize(
    ("uri", "fragment"),
    [
        ("htp://localhost:5000", "unsupported scheme 'htp'"),
        ("not a uri", "unsupported scheme"),
        ("http://", "names no host"),
        ("http://localhost:port", "bad port"),
        ("sqlite://", "names no database file"),
        ("   ", "non-empty"),
        ("http://[::1", "is not a URL"),
        ("http://a b:5000", "cannot reach"),
    ],
)
def test_malformed_uris_are_refused(uri: str, fragment: str) -> None:
    with pytest.raises(InputValueError, match=fragment) as info:
        check_tracking_uri(uri)
    assert "\n" not in str(info.value)


def test_an_unreachable_server_is_refused_naming_the_uri() -> None:
    uri = f"http://127.0.0.1:{_closed_port()}"
    with pytest.raises(ValueError, match=f"cannot reach the MLflow tracking server at {uri}"):
        check_tracking_uri(uri)


@contextlib.contextmanager
def _http_server(status: int) -> Iterator[str]:
    """A local HTTP server answering every GET with ``status`` (and a JSON body)."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(b'{"experiments": []}')

        def log_message(self, *args: Any) -> None:  # keep the test output clean
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.slow
@pytest.mark.parametrize("status", [200, 401, 403])
def test_a_server_answering_like_mlflow_is_accepted(status: int) -> None:
    with _http_server(status) as uri:
        assert check_tracking_uri(uri) == uri


@pytest.mark.slow
def test_a_server_that_is_not_mlflow_is_refused() -> None:
    """A TCP connection proves little (a proxy accepts any): the REST API must answer."""
    with _http_server(404) as uri, pytest.raises(ValueError, match="HTTP 404") as info:
        check_tracking_uri(uri)
    assert "does not answer as an MLflow tracking server" in str(info.value)


@pytest.mark.slow
def test_a_server_that_never_answers_is_refused_after_the_timeout() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(1)  # the connection is accepted by the kernel; nothing ever answers
        uri = f"http://127.0.0.1:{silent.getsockname()[1]}"
        with pytest.raises(ValueError, match="cannot reach the MLflow tracking server"):
            check_tracking_uri(uri)


@pytest.mark.parametrize("uri", ["sqlite:///runs/mlflow.db", "databricks", "databricks-uc"])
def test_good_uris_pass_unchanged(uri: str) -> None:
    assert check_tracking_uri(f" {uri} ") == uri


def _no_lm(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError("an LM was built: the tracking URI should have been refused first")


@pytest.mark.parametrize("check", [True, False], ids=["--check", "run"])
@pytest.mark.parametrize("kind", ["malformed", "unreachable", "empty"])
def test_cli_refuses_a_bad_target_before_the_run(
    kind: str,
    check: bool,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_runner, "_resolve_lms", _no_lm)
    uri = {
        "malformed": "htp://localhost:5000",
        "unreachable": f"http://127.0.0.1:{_closed_port()}",
        "empty": "",
    }[kind]
    output = tmp_path / "out"
    args = ["optimize", str(configs_dir() / "quick.toml"), "--output-dir", str(output)]
    args += ["--quiet", "--mlflow", uri] + (["--check"] if check else [])
    code = main(args)
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert code == 2, (out, err)
    assert len(lines) == 1, err
    assert "Traceback" not in err, err
    assert (uri or "non-empty") in lines[0], lines[0]
    assert not output.exists()


_ANSWERS = {
    "new_instruction": {"new_instruction": "Answer more precisely."},
    "proposed_instruction": {
        "proposed_instruction": "Answer precisely.",
        "proposed_prefix_for_output_field": "Answer:",
    },
}

_CONFIG = """
name = "tracked"
seed = 3
[optimizer]
name = "copro"
[optimizer.init]
breadth = 2
depth = 1
[lm]
model = "local"
[dataset]
train_limit = 2
test_limit = 2
[evaluation]
n_resamples = 100
"""


def test_a_tracking_failure_keeps_the_runs_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    task = task_records("train")[0]
    lm = pipeline_lm(task["expected_ir"], task["expected_code"], _ANSWERS)
    monkeypatch.setattr(_runner, "_resolve_lms", lambda config, lm_, prompt_lm: (lm, lm))

    def broken_store(*args: Any, **kwargs: Any) -> Any:
        raise OSError("the tracking store went away")

    monkeypatch.setattr(_tracking, "log_run_to_mlflow", broken_store)
    config = tmp_path / "run.toml"
    config.write_text(_CONFIG, encoding="utf-8")
    output = tmp_path / "out"
    uri = f"sqlite:///{tmp_path / 'store' / 'mlflow.db'}"
    code = main(["optimize", str(config), "--quiet", "--output-dir", str(output), "--mlflow", uri])
    _, err = capsys.readouterr()
    # DSPy's own INFO log lines come first (the optimizer ran); then one error line
    errors = [line for line in err.strip().splitlines() if " INFO " not in line]
    assert code == 2, err
    assert len(errors) == 1, err
    assert "Traceback" not in err, err
    assert uri in errors[0], err
    assert "went away" in errors[0], err
    for name in ("result.json", "report.md", "config.json", "program.json", "comparison.json"):
        assert (output / name).is_file(), name


@pytest.mark.slow
def test_tracking_error_is_raised_by_the_library(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from lift_metrics.optimizers._config import load_config

    task = task_records("train")[0]
    lm = pipeline_lm(task["expected_ir"], task["expected_code"], _ANSWERS)

    def broken_store(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("refused")

    monkeypatch.setattr(_tracking, "log_run_to_mlflow", broken_store)
    config = tmp_path / "run.toml"
    config.write_text(_CONFIG, encoding="utf-8")
    cfg = load_config(config).replace(output_dir=tmp_path / "out")
    with pytest.raises(TrackingError, match=r"failed \(RuntimeError: refused\)"):
        _runner.run_optimizer(cfg, lm=lm, progress=False, mlflow=True)
    assert (tmp_path / "out" / "result.json").is_file()
    assert (tmp_path / "out" / "report.md").is_file()
