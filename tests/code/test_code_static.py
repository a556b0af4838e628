"""Static analysis (radon + ast) and the ``lift-metrics analyze`` command."""

from __future__ import annotations

import json
import math

import pytest
from radon.complexity import cc_visit
from radon.metrics import h_visit, mi_visit
from radon.raw import analyze

from lift_metrics.cli import main
from lift_metrics.code import (
    StaticAnalysis,
    analyze_code,
    analyze_path,
    maintainability_grade,
    python_files,
)

SOURCE = '''"""A module."""
import os
import dspy
from dspy.teleprompt import MIPROv2
from collections import OrderedDict, defaultdict


class Pipeline(dspy.Module):
    """Doc."""

    def __init__(self) -> None:
        self.cache = OrderedDict()

    def forward(self, x):
        # branch on the sign
        if x > 0 and x < 10:
            return "small"
        for i in range(x):
            if i % 2:
                continue
        return "big"


async def fetch(path: str) -> str:
    def inner():
        return os.sep if path else ""

    return inner()
'''


def test_analyze_code_counts_by_hand() -> None:
    result = analyze_code(SOURCE, framework_prefixes=("dspy",))
    assert result.classes == 1
    assert result.functions == 4  # __init__, forward, fetch, inner
    assert result.return_annotation_coverage == pytest.approx(2 / 4)
    # import os; import dspy; from dspy.teleprompt ...; from collections ...
    assert result.total_imports == 4
    assert result.framework_imports == 2  # dspy and dspy.teleprompt, not collections
    assert result.comment_lines == 1


def test_analyze_code_agrees_with_radon() -> None:
    result = analyze_code(SOURCE)
    raw = analyze(SOURCE)
    assert result.sloc == raw.sloc
    assert result.comment_ratio == pytest.approx(raw.comments / raw.sloc)
    assert result.maintainability_index == pytest.approx(mi_visit(SOURCE, multi=True))
    halstead = h_visit(SOURCE).total
    assert result.halstead_volume == pytest.approx(halstead.volume)
    assert result.halstead_difficulty == pytest.approx(halstead.difficulty)
    assert result.halstead_bugs == pytest.approx(halstead.volume / 3000)  # seed: volume / 3000
    # functions and methods: __init__ 1, forward 1 + if + and + for + if = 5, fetch 1 (+ 'inner'
    # closure 2: a conditional expression)
    assert result.max_complexity == 5
    assert result.avg_complexity == pytest.approx((1 + 5 + 1 + 2) / 4)
    assert result.complexity_grade == "A"
    functions = [b for b in cc_visit(SOURCE) if not hasattr(b, "methods")]
    assert max(b.complexity for b in functions) == result.max_complexity


def test_module_without_functions_gives_nan_not_a_warning() -> None:
    result = analyze_code("X = 1\n")
    assert math.isnan(result.avg_complexity)
    assert result.max_complexity == 0
    assert result.complexity_grade is None
    assert math.isnan(result.return_annotation_coverage)
    empty = analyze_code("")
    assert empty.sloc == 0
    assert math.isnan(empty.comment_ratio)


@pytest.mark.parametrize(
    ("index", "grade"), [(100.0, "A"), (20.0, "A"), (19.99, "B"), (10.0, "B"), (9.9, "C"), (0, "C")]
)
def test_maintainability_grade_follows_the_seed_table(index: float, grade: str) -> None:
    assert maintainability_grade(index) == grade


def test_complex_code_gets_worse_grades() -> None:
    branches = "".join(f"    if x == {i}:\n        return {i}\n" for i in range(30))
    result = analyze_code(f"def f(x):\n{branches}    return -1\n")
    assert result.max_complexity == 31
    assert result.complexity_grade == "E"  # radon: 31-40 is E


def test_analyze_code_bad_input() -> None:
    with pytest.raises(TypeError, match=r"^source must be a str"):
        analyze_code(b"x = 1")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="does not parse"):
        analyze_code("def f(:")
    with pytest.raises(TypeError, match="framework_prefixes"):
        analyze_code("x = 1", framework_prefixes=(1,))  # type: ignore[arg-type]


def test_result_is_frozen_with_short_repr_and_dict() -> None:
    result = analyze_code(SOURCE, path="pipeline.py")
    assert isinstance(result, StaticAnalysis)
    assert repr(result).startswith("StaticAnalysis(pipeline.py: sloc=")
    assert result.to_dict()["sloc"] == result.sloc
    with pytest.raises(AttributeError):
        result.sloc = 3  # type: ignore[misc]


def test_python_files_and_analyze_path(tmp_path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "a.py").write_text("def f():\n    return 1\n")
    (tmp_path / "pkg" / "b.txt").write_text("not python")
    (tmp_path / ".venv").mkdir()
    (tmp_path / ".venv" / "hidden.py").write_text("x = 1\n")
    (tmp_path / "__pycache__").mkdir()
    (tmp_path / "__pycache__" / "c.py").write_text("x = 1\n")
    (tmp_path / "top.py").write_text("import dspy\n")
    files = python_files(tmp_path)
    assert [f.relative_to(tmp_path).as_posix() for f in files] == ["top.py", "pkg/a.py"]
    results = analyze_path(tmp_path, framework_prefixes="dspy")
    assert [r.path for r in results] == [str(f) for f in files]
    assert results[0].framework_imports == 1
    with pytest.raises(FileNotFoundError):
        analyze_path(tmp_path / "missing")


# --- CLI ---------------------------------------------------------------------------------------


def test_cli_json_output(tmp_path, capsys) -> None:
    file = tmp_path / "mod.py"
    file.write_text(SOURCE)
    assert main(["analyze", str(file), "--format", "json", "--framework-prefix", "dspy"]) == 0
    records = json.loads(capsys.readouterr().out)
    assert len(records) == 1
    expected = analyze_code(SOURCE, framework_prefixes=("dspy",), path=str(file)).to_dict()
    lint = records[0].pop("lint_findings")
    assert records[0] == pytest.approx(expected)
    assert lint == 2  # F401: MIPROv2 and defaultdict are imported but unused


def test_cli_json_writes_null_for_nan_and_counts_lint(tmp_path, capsys) -> None:
    file = tmp_path / "consts.py"
    file.write_text("import os\nX = 1\n")
    assert main(["analyze", str(file), "--format", "json"]) == 0
    (record,) = json.loads(capsys.readouterr().out)
    assert record["avg_complexity"] is None
    assert record["complexity_grade"] is None
    assert record["lint_findings"] == 1  # F401 os


def test_cli_table_output_for_a_directory(tmp_path, capsys) -> None:
    (tmp_path / "one.py").write_text("def f() -> int:\n    return 1\n")
    (tmp_path / "two.py").write_text("class A:\n    pass\n")
    assert main(["analyze", str(tmp_path)]) == 0
    out = capsys.readouterr().out.replace("\n", "")  # a title wraps at the table's width
    assert "one.py" in out
    assert "two.py" in out
    assert "Maintainability grade" in out
    assert "Return annotation coverage" in out


def test_cli_bad_paths_exit_2(tmp_path, capsys) -> None:
    assert main(["analyze", str(tmp_path / "nope.py")]) == 2
    assert "no such file" in capsys.readouterr().err
    broken = tmp_path / "broken.py"
    broken.write_text("def f(:\n")
    good = tmp_path / "good.py"
    good.write_text("x = 1\n")
    assert main(["analyze", str(broken), str(good), "--format", "json", "--no-lint"]) == 2
    captured = capsys.readouterr()
    assert [r["path"] for r in json.loads(captured.out)] == [str(good)]
    assert "broken.py" in captured.err
    assert "does not parse" in captured.err
