"""Error messages about the LM that must name what was wrong in readable terms: a file that
is not GGUF shows its first bytes as hex (it showed ``b"b'\\x89\\xdd"``), and a bad port in
``api_base`` names ``api_base`` (it said only "Port out of range 0-65535")."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from lift_metrics.lm import check_gguf
from lift_metrics.optimizers._config import RunConfig
from lift_metrics.optimizers._preflight import preflight

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("content", "shown"),
    [
        (b"\x89\xdd\x00\x01junk", "it starts with 89 dd 00 01 6a 75 6e 6b, not GGUF"),
        (b"GGU", "it starts with 47 47 55 ('GGU'), not GGUF"),
        (b"", "it is empty, not GGUF"),
    ],
)
def test_a_file_that_is_not_gguf_shows_its_first_bytes_readably(
    tmp_path: Path, content: bytes, shown: str
) -> None:
    model = tmp_path / "model.gguf"
    model.write_bytes(content)
    with pytest.raises(ValueError, match="is not a GGUF model file") as caught:
        check_gguf(model)
    message = str(caught.value)
    assert message.startswith(f"model_path {str(model)!r} is not a GGUF model file: {shown}")
    assert "b'" not in message
    assert 'b"' not in message
    assert "\\x" not in message


@pytest.mark.parametrize(
    ("api_base", "detail"),
    [
        ("http://127.0.0.1:99999/v1", "Port out of range 0-65535"),
        ("http://127.0.0.1:abc/v1", "Port could not be cast to integer value as 'abc'"),
    ],
)
def test_an_invalid_port_names_api_base(api_base: str, detail: str) -> None:
    table = {"optimizer": {"name": "mipro"}, "lm": {"model": "openai/m", "api_base": api_base}}
    with pytest.raises(ValueError, match="has an invalid port") as caught:
        preflight(RunConfig.from_mapping(table))
    assert str(caught.value) == (
        f"[lm] api_base {api_base!r} has an invalid port ({detail}); "
        "expected http://host:port/v1 with a port from 1 to 65535"
    )


@pytest.mark.slow
def test_evaluate_with_an_invalid_api_base_port_is_one_line_naming_api_base(
    tmp_path: Path,
) -> None:
    out = tmp_path / "out"
    args = ["--lm", "openai/m", "--api-base", "http://127.0.0.1:99999/v1"]
    done = subprocess.run(
        [sys.executable, "-m", "lift_metrics.cli", "evaluate", *args, "--output-dir", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
    )
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert re.search(r"api_base '.*:99999/v1' has an invalid port", lines[0]), lines[0]
    assert not out.exists()
