"""The README's code runs as written (real embedder, real sandbox)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


def _python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.DOTALL)


def test_readme_has_exactly_two_setup_commands() -> None:
    bash_blocks = re.findall(r"```bash\n(.*?)```", README.read_text(), flags=re.DOTALL)
    assert [b.strip() for b in bash_blocks] == [
        "bash scripts/bootstrap.sh && .venv/bin/lift-metrics optimize optimizers/quick.toml",
        "bash scripts/bootstrap.sh && bash scripts/test.sh",
    ]
    ci = (README.parent / ".ci" / "run").read_text()
    assert "bash scripts/bootstrap.sh && bash scripts/test.sh" in ci


@pytest.mark.slow
def test_readme_python_examples_run() -> None:
    blocks = _python_blocks()
    assert len(blocks) >= 2
    namespace: dict[str, object] = {}
    for block in blocks:
        exec(compile(block, str(README), "exec"), namespace)
    assert namespace["breakdown"].components["tests"] == 0.0  # type: ignore[attr-defined]
    # both tests fail: the validated default keeps it at most 0.2 (no credit for looks)
    assert (
        0.0
        < namespace["code_quality"](  # type: ignore[operator]
            namespace["wrong"], namespace["right"], namespace["tests"]
        )
        <= 0.2
    )
