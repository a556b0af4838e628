"""run_optimizer end to end with DummyLM (MIPROv2, COPRO, GEPA), budgets, interruption, CLI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import dspy
import pytest
from optimizers_testkit import dummy_lm, make_config
from testkit import local_model_or_skip

import lift_metrics.cli
from lift_metrics._tasks import default_tasks_path, task_records
from lift_metrics.optimizers import _provenance, _runner, _setup
from lift_metrics.optimizers._config import RunConfig
from lift_metrics.optimizers._pipeline import LiftPipeline
from lift_metrics.optimizers._runner import OptimizationResult, run_optimizer


@pytest.fixture(scope="module")
def task() -> dict[str, Any]:
    return task_records("train")[0]  # t001, add(a, b)


def no_temp_files(folder: Path) -> None:
    leftovers = [p for p in folder.rglob("*.tmp") if "cache" not in p.parts]
    assert leftovers == []


@pytest.mark.slow
@pytest.mark.parametrize("name", ["mipro", "copro", "gepa"])
def test_each_optimizer_runs_end_to_end(tmp_path: Path, task: dict[str, Any], name: str) -> None:
    result = run_optimizer(make_config(tmp_path, name), lm=dummy_lm(task), progress=False)
    out = tmp_path / "out"
    assert isinstance(result, OptimizationResult)
    assert result.stop_reason is None
    assert result.baseline is not None
    assert result.optimized is not None
    assert len(result.baseline.examples) == 3
    assert [d.metric for d in result.deltas] == [
        "end_to_end",
        "ir_quality",
        "code_quality",
        "tests_passed",
        "tasks_solved",
    ]
    for name_ in (
        "config.json",
        "program.json",
        "trials.json",
        "comparison.json",
        "result.json",
        "report.md",
        "baseline/baseline.json",
        "baseline/baseline_run1.json",
        "optimized/optimized.json",
        "optimized/optimized.md",
        "code/baseline/t002.py",
        "code/optimized/t002.py",
    ):
        assert (out / name_).is_file(), name_
    for file in out.rglob("*.json"):
        if "cache" not in file.parts and "gepa_logs" not in file.parts:
            json.loads(file.read_text())  # every file is whole
    no_temp_files(out)
    comparison = json.loads((out / "comparison.json").read_text())
    assert comparison["verdict"] == result.verdict
    assert comparison["ab"]["n_pairs"] == 3
    provenance = json.loads((out / "config.json").read_text())["provenance"]
    assert provenance["versions"]["dspy"] == dspy.__version__
    assert len(provenance["dataset_hash"]) == 64
    assert provenance["lm"]["model"] == "dummy"
    loaded = LiftPipeline()
    loaded.load(str(out / "program.json"))  # DSPy's own format
    assert json.loads((out / "trials.json").read_text())["optimizer"] == name
    assert "OptimizationResult(" in repr(result)
    assert len(repr(result)) < 300
    # the DummyLM answers every task with add(a, b): it compiles but passes no test task
    saved = json.loads((out / "result.json").read_text())
    for arm in ("baseline", "optimized"):
        assert saved["code"][arm]["n_tasks"] == 3
        assert saved["code"][arm]["degenerate"] == {"empty": 0, "placeholder": 0, "no_function": 3}
    assert set(saved["predictors"]) == {"to_ir", "to_code"}
    report = (out / "report.md").read_text()
    assert "## Generated code" in report
    assert "## Optimized predictors" in report


@pytest.mark.slow
def test_paired_deltas_follow_the_per_example_scores(tmp_path: Path, task: dict[str, Any]) -> None:
    result = run_optimizer(make_config(tmp_path, "mipro"), lm=dummy_lm(task), progress=False)
    assert result.baseline is not None
    assert result.optimized is not None
    head = result.deltas[0]
    expected = (
        sum(o - b for o, b in zip(result.optimized.scores, result.baseline.scores, strict=True)) / 3
    )
    assert head.mean_delta == pytest.approx(expected)
    assert head.ci_low <= head.mean_delta <= head.ci_high
    assert head.baseline_mean == pytest.approx(sum(result.baseline.scores) / 3)
    assert head.optimized_mean == pytest.approx(sum(result.optimized.scores) / 3)


def test_budget_stop_saves_what_it_has(tmp_path: Path, task: dict[str, Any]) -> None:
    # the baseline needs 6 calls (3 tasks x 2 steps); compile needs many more
    config = make_config(tmp_path, "mipro", budget={"max_lm_calls": 8})
    result = run_optimizer(config, lm=dummy_lm(task), progress=False)
    out = tmp_path / "out"
    assert result.stop_reason is not None
    assert "MIPROv2.compile" in result.stop_reason
    assert "8 LM calls" in result.stop_reason
    assert result.baseline is not None
    assert result.baseline.complete
    assert result.optimized is None
    assert result.program is None
    assert result.deltas == ()
    assert result.usage.lm_calls == 8
    assert (out / "baseline" / "baseline.json").is_file()
    assert not (out / "program.json").exists()
    saved = json.loads((out / "result.json").read_text())
    assert saved["stop_reason"] == result.stop_reason
    assert saved["verdict"] == "not compared"
    assert "stopped early" in (out / "report.md").read_text()


def test_budget_stop_in_the_baseline_keeps_the_partial_evaluation(
    tmp_path: Path, task: dict[str, Any]
) -> None:
    config = make_config(tmp_path, "copro", budget={"max_lm_calls": 3})
    result = run_optimizer(config, lm=dummy_lm(task), progress=False)
    assert result.stop_reason is not None
    assert "baseline" in result.stop_reason
    assert result.baseline is not None
    assert not result.baseline.complete
    assert len(result.baseline.examples) == 1
    saved = json.loads((tmp_path / "out" / "baseline" / "baseline.json").read_text())
    assert saved["complete"] is False
    assert saved["n_examples"] == 1


def test_interrupt_leaves_only_whole_files(
    tmp_path: Path, task: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    def interrupted(*args: Any, **kwargs: Any) -> Any:
        raise KeyboardInterrupt

    monkeypatch.setattr(_runner, "_compile", interrupted)
    with pytest.raises(KeyboardInterrupt):
        run_optimizer(make_config(tmp_path, "mipro"), lm=dummy_lm(task), progress=False)
    out = tmp_path / "out"
    assert (out / "baseline" / "baseline.json").is_file()
    assert not (out / "result.json").exists()
    no_temp_files(out)


def test_lm_cache_points_into_the_output_folder_and_is_restored(tmp_path: Path) -> None:
    before = dspy.cache
    with _provenance._lm_cache(tmp_path / "cache"):
        assert dspy.cache is not before
        assert (tmp_path / "cache").is_dir()
    assert dspy.cache is before


# --------------------------------------------------------------------------- the CLI


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch) -> Any:
    modules = lift_metrics.cli._COMMAND_MODULES
    if "lift_metrics.optimizers._cli" not in modules:
        monkeypatch.setattr(
            lift_metrics.cli, "_COMMAND_MODULES", (*modules, "lift_metrics.optimizers._cli")
        )
    return lift_metrics.cli.main


def write(tmp_path: Path, text: str) -> str:
    file = tmp_path / "run.toml"
    file.write_text(text)
    return str(file)


GOOD = """
name = "t"
seed = 3
[optimizer]
name = "copro"
[optimizer.init]
breadth = 2
[lm]
model = "local"
"""


def test_cli_check_accepts_a_good_config(cli: Any, tmp_path: Path, capsys: Any) -> None:
    assert cli(["optimize", write(tmp_path, GOOD), "--check"]) == 0
    assert "OK" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (GOOD.replace('"copro"', '"simba"'), "unknown optimizer 'simba'"),
        (GOOD.replace("breadth = 2", "bredth = 2"), "does not accept 'bredth'"),
        (GOOD + "[dataset]\npath = 'no/such/tasks.jsonl'\n", "dataset file not found"),
        (
            GOOD.replace(
                'model = "local"', 'model = "openai/m"\napi_base = "http://127.0.0.1:9/v1"'
            ),
            "cannot reach the LM server",
        ),
        (GOOD + "[budget]\nmax_dollars = 1\n", "unknown key 'max_dollars'"),
    ],
)
def test_cli_bad_input_is_one_line_and_exit_code_2(
    cli: Any, tmp_path: Path, capsys: Any, text: str, message: str
) -> None:
    assert cli(["optimize", write(tmp_path, text), "--check"]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err
    assert "\n" not in err


def test_cli_missing_config_file(cli: Any, tmp_path: Path, capsys: Any) -> None:
    assert cli(["optimize", str(tmp_path / "absent.toml")]) == 2
    assert "config file not found" in capsys.readouterr().err


def test_cli_non_gguf_model_is_refused_before_work(cli: Any, tmp_path: Path, capsys: Any) -> None:
    fake = tmp_path / "model.gguf"
    fake.write_text("not a model")
    text = GOOD.replace('model = "local"', f'model = "{fake}"')
    assert cli(["optimize", write(tmp_path, text), "--output-dir", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip()
    assert "GGUF" in err
    assert "\n" not in err
    assert not (tmp_path / "o" / "baseline").exists()  # stopped before any evaluation


def test_cli_evaluate_bad_input(cli: Any, tmp_path: Path, capsys: Any) -> None:
    assert cli(["evaluate", "--program", str(tmp_path / "nope.json")]) == 2
    assert "program file not found" in capsys.readouterr().err
    assert cli(["evaluate", "--dataset", str(tmp_path / "none.jsonl")]) == 2
    assert "not found" in capsys.readouterr().err


def test_metric_time_is_measured_and_reported(tmp_path: Path, task: dict[str, Any]) -> None:
    result = run_optimizer(make_config(tmp_path, "copro"), lm=dummy_lm(task), progress=False)
    # summed over evaluation threads, so it may exceed the wall time (docstring)
    assert result.metric_time_s > 0
    assert result.wall_time_s > 0
    saved = json.loads((tmp_path / "out" / "result.json").read_text())
    assert saved["metric_time_fraction"] == pytest.approx(result.metric_time_s / result.wall_time_s)
    assert "in the metrics" in (tmp_path / "out" / "report.md").read_text()


def test_timed_metric_keeps_gepas_five_argument_protocol() -> None:
    import inspect

    calls: list[tuple[Any, ...]] = []

    def metric(*args: Any) -> float:
        calls.append(args)
        return 0.5

    timed = _setup.TimedMetric(metric)
    inspect.signature(timed).bind(None, None, None, None, None)  # what GEPA checks
    assert timed("ex", "pred", pred_name="to_ir") == 0.5
    assert calls == [("ex", "pred", None, "to_ir", None)]
    assert timed.calls == 1
    assert timed.seconds >= 0


def test_cli_evaluate_writes_runs_aggregate_and_report(
    cli: Any, tmp_path: Path, capsys: Any, task: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    import lift_metrics.lm as lm_package

    monkeypatch.setattr(lm_package, "resolve_lm", lambda spec: dummy_lm(task))
    out = tmp_path / "ev"
    code = cli(
        [
            "evaluate",
            "--split",
            "dev",
            "--limit",
            "2",
            "--runs",
            "2",
            "--quiet",
            "--metric",
            "ir_quality",
            "--output-dir",
            str(out),
        ]
    )
    assert code == 0, capsys.readouterr().err
    names = sorted(p.name for p in out.iterdir() if p.name != "cache")
    assert names == [
        ".lift-metrics-output.json",  # what this evaluation wrote (lift_metrics._io)
        "evaluation.json",
        "evaluation.md",
        "evaluation_run1.json",
        "evaluation_run2.json",
        "usage.json",
    ]
    aggregate = json.loads((out / "evaluation.json").read_text())
    assert aggregate["n_runs"] == 2
    assert aggregate["n_examples"] == 2
    assert aggregate["metric_names"] == ["ir_quality", "tests_passed", "tasks_solved"]
    assert aggregate["provenance"]["split"] == "dev"
    assert len(aggregate["provenance"]["dataset_hash"]) == 64
    assert len(aggregate["provenance"]["settings_hash"]) == 64
    assert aggregate["provenance"]["config_hash"] is None  # no --config given
    assert aggregate["provenance"]["versions"]["dspy"]
    assert json.loads((out / "usage.json").read_text())["lm_calls"] == 8  # 2 tasks x 2 steps x 2
    assert "2 tasks, 0 timed out" in capsys.readouterr().out


@pytest.mark.slow
def test_real_optimization_with_the_local_lm(tmp_path: Path) -> None:
    """A real (tiny) run: the bundled GGUF model, COPRO, a budget that stops compile.

    About a minute on an idle 2-core machine (max_tokens is kept small on purpose).
    """

    local_model_or_skip()
    config = RunConfig.from_mapping(
        {
            "name": "real-local",
            "seed": 3,
            "output_dir": str(tmp_path / "out"),
            "optimizer": {"name": "copro", "init": {"breadth": 2, "depth": 1}},
            "lm": {"model": "local", "max_tokens": 48, "n_ctx": 2048},
            "metric": {"name": "end_to_end"},
            "dataset": {"train_limit": 1, "test_limit": 1},
            "evaluation": {"n_resamples": 200, "timeout_s": 1800},
            "budget": {"max_lm_calls": 6},
        }
    )
    result = run_optimizer(config, progress=False)
    assert result.baseline is not None
    assert result.baseline.complete
    assert result.usage.lm_calls == 6
    assert result.usage.total_tokens > 0
    assert result.stop_reason is not None
    assert "COPRO.compile" in result.stop_reason
    first = result.baseline.runs[0][0]
    # 2 steps; JSONAdapter retries a step in JSON mode when its answer does not parse
    assert 2 <= first.lm_calls <= 4
    assert first.total_tokens > 0
    assert first.cost_usd == 0.0
    saved = json.loads((tmp_path / "out" / "result.json").read_text())
    assert saved["provenance"]["lm"]["model"].startswith("local/")
    # a rerun of the same config replays the finished calls from the LM cache for free
    again = run_optimizer(config, progress=False)
    assert again.baseline is not None
    assert again.baseline.runs[0][0].total_tokens == 0  # cache hits are not billed
    for name in ("ir_quality", "code_quality"):  # end_to_end also scores latency, which differs
        assert again.baseline.scores_of(name) == result.baseline.scores_of(name)


@pytest.mark.slow
def test_a_rerun_that_stops_early_leaves_no_stale_outputs(
    tmp_path: Path, task: dict[str, Any]
) -> None:
    run_optimizer(make_config(tmp_path, "copro"), lm=dummy_lm(task), progress=False)
    out = tmp_path / "out"
    assert (out / "program.json").is_file()
    assert (out / "optimized").is_dir()
    stopped = make_config(tmp_path, "copro", budget={"max_lm_calls": 8})
    result = run_optimizer(stopped, lm=dummy_lm(task), progress=False)
    assert result.stop_reason is not None
    assert not (out / "program.json").exists()  # the first run's program is gone
    assert not (out / "optimized").exists()
    assert not (out / "comparison.json").exists()
    assert json.loads((out / "result.json").read_text())["stop_reason"] == result.stop_reason


def test_train_examples_get_labels_named_like_the_pipeline_fields() -> None:
    from lift_metrics._tasks import load_tasks
    from lift_metrics.ir import IR

    example = load_tasks("train")[0]
    labelled = _setup.with_pipeline_labels(example)
    assert labelled.ir == IR.model_validate(example.expected_ir)
    assert labelled.header == "def add(a: int, b: int):"
    assert labelled.body == "    return a + b"
    assert set(labelled.inputs().keys()) == set(example.inputs().keys()) == {"prompt"}
    assert labelled.expected_ir == example.expected_ir  # the metrics' fields are untouched


def _without_test_split(tmp_path: Path) -> Path:
    shipped = Path(default_tasks_path())
    no_test = tmp_path / "no_test.jsonl"
    no_test.write_text(
        "".join(
            line + "\n"
            for line in shipped.read_text(encoding="utf-8").splitlines()
            if line.strip() and json.loads(line)["split"] != "test"
        ),
        encoding="utf-8",
    )
    return no_test


def test_cli_evaluate_without_test_tasks_is_an_error_naming_the_file(
    cli: Any, tmp_path: Path, capsys: Any, task: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    import lift_metrics.lm as lm_package

    no_test = _without_test_split(tmp_path)
    monkeypatch.setattr(lm_package, "resolve_lm", lambda spec: dummy_lm(task))
    out = tmp_path / "ev"
    assert cli(["evaluate", "--dataset", str(no_test), "--quiet", "--output-dir", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert f"{no_test}: no test tasks" in err
    assert "\n" not in err
    assert not out.exists()


@pytest.mark.parametrize(
    ("option", "named"), [("--lm", "--lm must name a model"), ("--api-base", "--api-base")]
)
def test_cli_evaluate_empty_lm_options_are_errors(
    cli: Any, tmp_path: Path, capsys: Any, option: str, named: str
) -> None:
    out = tmp_path / "ev"
    assert cli(["evaluate", option, "", "--quiet", "--output-dir", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert named in err
    assert "got ''" in err
    assert "\n" not in err
    assert not out.exists()


def test_cli_evaluate_removes_a_previous_result_before_it_runs(
    cli: Any, tmp_path: Path, capsys: Any, task: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    import lift_metrics.lm as lm_package
    from lift_metrics.optimizers import _evaluate

    out = tmp_path / "ev"
    out.mkdir()
    stale = ["evaluation.json", "evaluation.md", "evaluation_run3.json", "usage.json"]
    stale += [".evaluation.json.abc123.tmp", ".usage.json.x1.tmp"]
    for name in stale:
        (out / name).write_text("{}", encoding="utf-8")
    (out / "notes.txt").write_text("mine", encoding="utf-8")
    monkeypatch.setattr(lm_package, "resolve_lm", lambda spec: dummy_lm(task))

    def interrupted(*args: Any, **kwargs: Any) -> Any:
        raise KeyboardInterrupt

    monkeypatch.setattr(_evaluate, "evaluate_program", interrupted)
    args = ["evaluate", "--split", "dev", "--limit", "1", "--quiet", "--output-dir", str(out)]
    assert cli([*args, "--metric", "ir_quality"]) == 130
    left = sorted(p.name for p in out.iterdir() if p.name != "cache")
    assert left == ["notes.txt"]  # nothing of the earlier run looks current; others' files stay


def test_the_choice_is_checked_on_the_validation_split(
    tmp_path: Path, task: dict[str, Any]
) -> None:
    """The DummyLM answers every task alike, so no candidate can differ on validation."""
    result = run_optimizer(make_config(tmp_path, "mipro"), lm=dummy_lm(task), progress=False)
    check = json.loads((tmp_path / "out" / "trials.json").read_text())["validation"]
    assert check["n"] == 3
    assert check["metric"] == "end_to_end"
    assert check["separable"] is False
    assert check["ci_low"] <= 0 <= check["ci_high"]
    assert "cannot tell the chosen program from the unoptimized one" in check["warning"]
    assert result.trials["validation"] == check
    report = (tmp_path / "out" / "report.md").read_text()
    assert "## The optimizer's choice on the validation split" in report
    assert "**Warning:** the validation set (3 tasks) cannot tell" in report


def test_validation_choice_separates_a_clear_gain() -> None:
    from types import SimpleNamespace

    from lift_metrics.optimizers._comparison import validation_choice

    def evaluation(scores: list[float]) -> Any:  # what the paired deltas read of an Evaluation
        examples = [
            SimpleNamespace(index=i, mean_scores={"end_to_end": s}) for i, s in enumerate(scores)
        ]
        return SimpleNamespace(metric_names=("end_to_end",), examples=examples)

    clear = validation_choice(
        evaluation([0.1, 0.2, 0.1, 0.2, 0.1, 0.2]),
        evaluation([0.9, 0.8, 0.9, 0.8, 0.9, 0.9]),
        n_resamples=500,
        level=0.95,
        seed=0,
    )
    assert clear is not None
    assert clear["separable"] is True
    assert clear["warning"] is None
    assert clear["verdict"] == "improved"
