"""The gaming check (``gaming_check``, ``lift-metrics validate --gaming``): outputs that are
what they claim, reports that say which tricks win, and the shipped code metrics checked."""

from __future__ import annotations

import ast
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lift_metrics._tasks import task_records
from lift_metrics.validation import CODE_TRICKS, GamingReport, format_gaming, gaming_check
from lift_metrics.validation._gaming_tricks import operator_bugs

#: a few tasks with loops, branches and one-liners
FEW = ("t001", "t006", "t020", "t041")


@pytest.fixture(scope="module")
def tasks() -> list[dict[str, Any]]:
    return [t for t in task_records() if t["id"] in FEW]


@pytest.fixture(scope="module")
def sandbox() -> Iterator[Any]:
    from lift_metrics.sandbox import Sandbox

    with Sandbox(workers=2) as box:
        yield box


def _built(task: dict[str, Any], name: str) -> str:
    (code, *_) = CODE_TRICKS[name][1](task)
    return code


def test_the_outputs_are_what_they_claim(tasks: list[dict[str, Any]], sandbox: Any) -> None:
    cases = {t["id"]: [(c["inputs"], c["expected"]) for c in t["tests"]] for t in tasks}
    for task in tasks:
        run = {
            name: sandbox.run_tests(
                _built(task, name), cases[task["id"]], entry_point=task["entry_point"]
            )
            for name in ("reference", "restyled", "dead_code", "comments_only", "lookup_table")
        }
        assert run["reference"].status == "passed"
        assert run["restyled"].status == "passed"
        assert run["lookup_table"].status == "passed"  # it answers the given tests
        assert run["dead_code"].passed_count == 0 or any(
            c["expected"] is None for c in task["tests"]
        )
        restyled = _built(task, "restyled")
        assert '"""' not in restyled
        assert task["expected_code"] not in restyled
        assert "return None" in _built(task, "dead_code")
        body = _built(task, "comments_only").split("return None", 1)[1]
        assert all(line.strip().startswith("#") for line in body.splitlines() if line.strip())
    assert any(
        sandbox.run_tests(bug, cases[t["id"]], entry_point=t["entry_point"]).status != "passed"
        for t in tasks
        for bug in operator_bugs(t)
    )
    for task in tasks:
        for bug in operator_bugs(task):
            assert ast.dump(ast.parse(bug)) != ast.dump(ast.parse(task["expected_code"]))


def test_a_metric_that_pays_everything_loses_to_every_trick(
    tasks: list[dict[str, Any]], sandbox: Any
) -> None:
    report = gaming_check(lambda item: 1.0, tasks=tasks, sandbox=sandbox, name="constant")
    won = {row.trick for row in report.winning}
    assert won == {name for name, (trick, _) in CODE_TRICKS.items() if trick.role != "correct"}
    assert not report.passed
    assert "constant" in repr(report)


def test_a_metric_that_runs_the_tests_is_only_fooled_by_the_table(
    tasks: list[dict[str, Any]], sandbox: Any
) -> None:
    def pass_rate(item: dict[str, Any]) -> float:
        cases = [(c["inputs"], c["expected"]) for c in item["tests"]]
        result = sandbox.run_tests(item["code"], cases, entry_point=item["entry_point"])
        return result.pass_rate

    report = gaming_check(pass_rate, tasks=tasks, sandbox=sandbox, settings=("tests",))
    assert {row.trick for row in report.winning} == {"lookup_table"}
    rows = {row.trick: row for row in report.rows}
    assert rows["reference"].mean_score == 1.0
    assert rows["lookup_table"].wins == rows["lookup_table"].n == len(tasks)
    assert rows["dead_code"].wins == 0


def test_a_score_that_cannot_be_computed_is_reported_not_zero(
    tasks: list[dict[str, Any]], sandbox: Any
) -> None:
    def judge(item: dict[str, Any]) -> float:
        if "return None" in item["code"]:
            raise RuntimeError("judge timed out")
        return 0.5

    report = gaming_check(judge, tasks=tasks[:1], sandbox=sandbox, settings=("no_tests",))
    assert not report.passed
    assert any("judge timed out" in why for why in report.missing)
    assert "return_none" not in {row.trick for row in report.rows}
    assert json.loads(json.dumps(report.to_dict()))["missing"] == list(report.missing)


def _pass_rate_metric(sandbox: Any, cut_off: float, calls: list[Any]) -> Any:
    """A DSPy metric: the share of the example's tests passed; ``>= cut_off`` under a trace."""

    def metric(example: Any, prediction: Any, trace: Any = None) -> Any:
        cases = [(c["inputs"], c["expected"]) for c in example.tests]
        result = sandbox.run_tests(prediction.code, cases, entry_point=example.entry_point)
        if trace is None:
            return result.pass_rate
        calls.append(trace)
        return result.pass_rate >= cut_off

    return metric


def test_a_lenient_cut_off_under_a_trace_fails_the_check(
    tasks: list[dict[str, Any]], sandbox: Any
) -> None:
    """The float ranks every output below the correct ones; the bool accepts wrong code."""
    calls: list[Any] = []
    tricks = ["reference", "one_operator_bug", "return_none", "dead_code"]
    options: dict[str, Any] = {"tasks": tasks, "tricks": tricks, "settings": ("tests",)}
    lenient = _pass_rate_metric(sandbox, 0.3, calls)
    report = gaming_check(lenient, call="dspy", sandbox=sandbox, name="lenient", **options)
    assert not report.winning
    assert not report.passed
    assert {row.trick for row in report.accepted_wrongly} == {"one_operator_bug"}
    rows = {row.trick: row for row in report.rows}
    assert rows["reference"].accepted == rows["reference"].traced == len(tasks)
    assert rows["one_operator_bug"].accepted_wrongly
    assert rows["dead_code"].accepted == 0
    (predictor, inputs, prediction), *rest = calls[0]  # a trace as DSPy hands it over
    assert not rest
    assert hasattr(predictor, "signature")
    assert "prompt" in inputs
    assert hasattr(prediction, "code")
    text = format_gaming(report)
    assert "ACCEPTED" in text
    assert "accepted as a demonstration under a trace: one_operator_bug (tests)" in text
    saved = json.loads(json.dumps(report.to_dict()))
    assert saved["traced"] is True
    assert [r["accepted"] for r in saved["rows"]] == [r.accepted for r in report.rows]
    strict = _pass_rate_metric(sandbox, 1.0, calls)
    assert gaming_check(strict, call="dspy", sandbox=sandbox, **options).passed


def test_a_value_under_a_trace_is_read_as_dspy_reads_it(
    tasks: list[dict[str, Any]], sandbox: Any
) -> None:
    """Truthy accepts (a float above 0 included); ``metric_threshold`` compares instead."""

    def floats(example: Any, prediction: Any, trace: Any = None) -> float:
        return 1.0 if prediction.code == example.expected_code else 0.25

    options: dict[str, Any] = {
        "tasks": tasks[:1],
        "tricks": ["reference", "dead_code"],
        "settings": ("no_tests",),
        "call": "dspy",
        "sandbox": sandbox,
    }
    truthy = gaming_check(floats, **options)
    assert {row.trick for row in truthy.accepted_wrongly} == {"dead_code"}
    assert not truthy.winning
    assert gaming_check(floats, metric_threshold=0.5, **options).passed
    assert not gaming_check(floats, metric_threshold=0.25, **options).passed

    def raises(example: Any, prediction: Any, trace: Any = None) -> float:
        if trace is not None:
            raise RuntimeError("no verdict")
        return floats(example, prediction)

    failed = gaming_check(raises, **options)
    assert not failed.passed
    assert any("under a trace): RuntimeError: no verdict" in why for why in failed.missing)


def test_a_metric_not_called_the_dspy_way_says_the_trace_was_not_checked(
    tasks: list[dict[str, Any]], sandbox: Any
) -> None:
    report = gaming_check(lambda item: 0.0, tasks=tasks[:1], tricks=["dead_code"], sandbox=sandbox)
    assert not report.traced
    assert all(row.accepted is None for row in report.rows)
    assert "not called under a trace (call='item')" in format_gaming(report)


@pytest.mark.slow
def test_a_user_metric_with_a_low_cut_off_fails_and_code_quality_passes(
    tasks: list[dict[str, Any]], sandbox: Any
) -> None:
    """CodeQuality's float, with the hand-written cut-off ``score >= 0.3`` under a trace."""
    from lift_metrics.dspy_metrics import CodeQuality

    quality = CodeQuality(trace_returns="float", sandbox=sandbox)

    def cq_low_cutoff(example: Any, prediction: Any, trace: Any = None) -> Any:
        score = quality(example, prediction)
        return score >= 0.3 if trace is not None else score

    tricks = ["reference", "restyled", "one_operator_bug", "return_none", "lookup_table"]
    options: dict[str, Any] = {"tasks": tasks, "tricks": tricks, "settings": ("tests",)}
    report = gaming_check(cq_low_cutoff, call="dspy", sandbox=sandbox, **options)
    assert not report.winning  # the float alone passes
    assert {row.trick for row in report.accepted_wrongly} == {"one_operator_bug", "lookup_table"}
    assert not report.passed
    shipped = gaming_check(CodeQuality(sandbox=sandbox), call="dspy", sandbox=sandbox, **options)
    assert shipped.passed, format_gaming(shipped)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"tricks": ["nope"]}, "tricks must be names"),
        ({"settings": ("sometimes",)}, "settings must be"),
        ({"tasks": []}, "tasks must hold"),
        ({"num_threads": 0}, "num_threads"),
        ({"metric_threshold": 0.5}, "metric_threshold applies with call='dspy' only"),
    ],
)
def test_bad_options_name_the_parameter(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        gaming_check(lambda item: 1.0, **options)


USER_METRIC = """
import dspy

def lazy(item):
    return 0.9 if "return" in item["code"] else 0.0

class Strict:
    def __call__(self, example, prediction, trace=None):
        return 1.0 if prediction.code == example.expected_code else 0.0

class Lenient(Strict):
    def __call__(self, example, prediction, trace=None):
        return True if trace is not None else super().__call__(example, prediction)
"""


@pytest.fixture
def user_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "my_gaming_metrics.py").write_text(USER_METRIC, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


@pytest.mark.slow
def test_cli_checks_a_user_metric_by_import_path(
    cli_main: Any, user_module: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = user_module / "report"
    tricks = ["--trick", "reference", "--trick", "dead_code", "--trick", "one_operator_bug"]
    code = cli_main(["validate", "--gaming", "my_gaming_metrics:lazy", *tricks, "--out", str(out)])
    text = capsys.readouterr().out
    assert code == 1
    assert "dead_code" in text
    assert "WINS" in text
    (saved,) = json.loads((out / "gaming.json").read_text())
    assert saved["metric"] == "my_gaming_metrics:lazy"
    assert saved["passed"] is False
    assert "not called under a trace (call='item')" in text
    strict = ["validate", "--gaming", "my_gaming_metrics:Strict", "--call", "dspy"]
    code = cli_main([*strict, *tricks, "--out", str(out)])
    text = capsys.readouterr().out
    assert code == 0, text
    assert "no trick or wrong output won" in text
    assert "no trick or wrong output accepted as a demonstration under a trace" in text
    lenient = ["validate", "--gaming", "my_gaming_metrics:Lenient", "--call", "dspy"]
    code = cli_main([*lenient, "--trick", "reference", "--trick", "dead_code", "--out", str(out)])
    text = capsys.readouterr().out
    assert code == 1, text
    assert "ACCEPTED" in text
    (saved,) = json.loads((out / "gaming.json").read_text())
    dead = next(row for row in saved["rows"] if row["trick"] == "dead_code")
    assert dead["accepted"] == dead["n"] > 0
    assert dead["accepted_wrongly"] is True


def test_cli_refuses_an_unknown_trick_before_scoring(
    cli_main: Any, user_module: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = cli_main(["validate", "--gaming", "code_quality", "--trick", "nope"])
    assert code == 2
    assert "--trick must name one of" in capsys.readouterr().err
    assert not (user_module / "validation-report").exists()


def test_ir_outputs_are_the_expected_ir_and_its_mutations(tasks: list[dict[str, Any]]) -> None:
    """``ir_quality``'s item scorer refuses invalid IRs: they are listed, not missing."""
    from testkit import HashEmbedder

    from lift_metrics.validation import IRPairScorer, builtin_scorer

    report = gaming_check(IRPairScorer(embedder=HashEmbedder()), kind="ir", tasks=tasks)
    rows = {row.trick: row for row in report.rows}
    assert rows["expected"].mean_score == 1.0
    assert rows["expected"].role == rows["no_type_hints"].role == "correct"
    assert rows["wrong_name"].role == "trick"
    assert "duplicated_parameter" not in rows
    assert any("duplicated_parameter: rejected (not a valid IR)" in s for s in report.skipped)
    assert not report.missing
    assert builtin_scorer("ir_quality")  # the name the command resolves
    flat = gaming_check(lambda item: 0.5, kind="ir", tasks=tasks, name="flat")
    assert {row.trick for row in flat.winning} >= {"wrong_name", "generic_intent"}


def test_cli_refuses_gaming_options_without_gaming(
    cli_main: Any, user_module: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli_main(["validate", "ir_quality", "--trick", "wrong_name"]) == 2
    assert "apply with --gaming only" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.parametrize("metric", ["ir_quality", "IRQuality"])
def test_the_shipped_ir_metric_is_not_won_by_a_trick(metric: str) -> None:
    """All 64 tasks' expected IRs and their mutations, with the real embedder."""
    from lift_metrics.validation import builtin_scorer

    if metric == "ir_quality":
        report = gaming_check(builtin_scorer("ir_quality"), kind="ir", num_threads=2)
    else:
        from lift_metrics.dspy_metrics import IRQuality

        report = gaming_check(IRQuality(), kind="ir", call="dspy", num_threads=2)
    assert report.passed, (report.winning, report.accepted_wrongly, report.missing[:3])
    assert {row.trick for row in report.rows} >= {"wrong_name", "negated_intent"}
    if metric == "IRQuality":  # called under a trace too: no trick became a demonstration
        assert all(row.accepted is not None for row in report.rows)
        assert sum(row.accepted or 0 for row in report.rows if row.role == "trick") == 0


@pytest.mark.slow
@pytest.mark.parametrize("metric", ["code_quality", "CodeQuality"])
def test_the_shipped_code_metric_is_not_won_by_a_trick(metric: str, sandbox: Any) -> None:
    """All 64 tasks, with the task's tests and with the reference only."""
    from lift_metrics.validation import builtin_scorer

    if metric == "code_quality":
        report = gaming_check(builtin_scorer("code_quality"), sandbox=sandbox, num_threads=2)
    else:
        from lift_metrics.dspy_metrics import CodeQuality

        report = gaming_check(CodeQuality(), call="dspy", sandbox=sandbox, num_threads=2)
    assert isinstance(report, GamingReport)
    assert not report.missing, report.missing[:3]
    won = [
        f"{r.trick} ({r.setting}): {r.mean_score:.3f} against {r.mean_correct:.3f}, wins "
        f"on {r.wins} of {r.n}"
        for r in report.winning
    ]
    assert not report.winning, "\n".join(won)
    if metric == "CodeQuality":  # under a trace: no trick, and no code failing a test
        assert not report.accepted_wrongly, format_gaming(report)
        reference = next(r for r in report.rows if r.trick == "reference")
        assert reference.accepted == reference.traced == reference.n
