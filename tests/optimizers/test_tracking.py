"""log_run_to_mlflow: a DummyLM run logged to a temporary local store, read back with MLflow's
own client (params, metrics with steps, tags, artifacts)."""

from __future__ import annotations

import builtins
import json
from pathlib import Path
from typing import Any

import dspy
import pytest
from optimizers_testkit import dummy_lm

from lift_metrics._tasks import task_records
from lift_metrics.optimizers._config import RunConfig
from lift_metrics.optimizers._run_metrics import trial_metrics
from lift_metrics.optimizers._runner import OptimizationResult, run_optimizer
from lift_metrics.optimizers._tracking import (
    TrackedRun,
    default_tracking_uri,
    log_run_to_mlflow,
    require_mlflow,
)

mlflow = pytest.importorskip("mlflow", reason="mlflow is optional: pip install '.[tracking]'")


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory: pytest.TempPathFactory) -> OptimizationResult:
    out = tmp_path_factory.mktemp("run") / "out"
    config = RunConfig.from_mapping(
        {
            "name": "tracked",
            "seed": 3,
            "output_dir": str(out),
            "optimizer": {
                "name": "mipro",
                "init": {
                    "auto": "none",
                    "num_candidates": 2,
                    "max_bootstrapped_demos": 1,
                    "max_labeled_demos": 1,
                },
                "compile": {"num_trials": 2, "minibatch": False},
            },
            "lm": {"model": "local"},
            "metric": {"name": "end_to_end"},
            "dataset": {"train_limit": 3, "val_limit": 3, "test_limit": 3},
            "evaluation": {"n_resamples": 200},
        }
    )
    task = task_records("train")[0]
    return run_optimizer(config, lm=dummy_lm(task), progress=False)


@pytest.mark.slow
def test_logged_run_reads_back_with_mlflow_client(
    tmp_path: Path, finished_run: OptimizationResult
) -> None:
    uri = f"sqlite:///{tmp_path / 'store' / 'mlflow.db'}"
    tracked = log_run_to_mlflow(finished_run, tracking_uri=uri, experiment="tests")
    assert isinstance(tracked, TrackedRun)
    assert tracked.tracking_uri == uri

    client = mlflow.MlflowClient(tracking_uri=uri)
    assert client.get_experiment(tracked.experiment_id).name == "tests"
    run = client.get_run(tracked.run_id)
    assert run.info.status == "FINISHED"
    assert run.info.run_name == "tracked"
    # artifacts of a SQLite store sit next to the database
    assert run.info.artifact_uri.startswith((tmp_path / "store" / "artifacts").as_uri())

    params = run.data.params
    assert params["optimizer.name"] == "mipro"
    assert params["optimizer.init.num_candidates"] == "2"
    assert params["optimizer.compile.num_trials"] == "2"
    assert params["metric.name"] == "end_to_end"
    assert params["seed"] == "3"

    metrics = run.data.metrics  # latest value per key
    baseline, optimized = finished_run.baseline, finished_run.optimized
    assert baseline is not None
    assert optimized is not None
    stats = baseline.statistics["end_to_end"]
    assert metrics["baseline.end_to_end.mean"] == pytest.approx(stats.mean)
    assert metrics["optimized.end_to_end.mean"] == pytest.approx(optimized.mean_score)
    head = finished_run.deltas[0]
    assert metrics["delta.end_to_end"] == pytest.approx(head.mean_delta)
    assert metrics["delta.end_to_end.ci_low"] == pytest.approx(head.ci_low)
    assert metrics["delta.end_to_end.ci_high"] == pytest.approx(head.ci_high)
    assert metrics["ab.n_pairs"] == 3
    assert metrics["usage.lm_calls"] == finished_run.usage.lm_calls

    # per-example scores: one step per test example
    history = client.get_metric_history(tracked.run_id, "baseline.end_to_end")
    assert sorted(m.step for m in history) == [e.index for e in baseline.examples]
    by_step = {m.step: m.value for m in history}
    for example in baseline.examples:
        assert by_step[example.index] == pytest.approx(example.mean_scores["end_to_end"])

    # per-trial scores: MIPROv2's trial logs (DSPy's 0-100 scale), one step per trial
    trials = json.loads((finished_run.output_dir / "trials.json").read_text())
    expected = {
        int(k): v["full_eval_score"]
        for k, v in trials["trial_logs"].items()
        if "full_eval_score" in v
    }
    logged = {m.step: m.value for m in client.get_metric_history(tracked.run_id, "trial_score")}
    assert expected
    assert logged == pytest.approx(expected)

    tags = run.data.tags
    assert tags["verdict"] == finished_run.verdict
    assert tags["verdict.ir_quality"] == finished_run.deltas[1].verdict
    assert tags["ab.verdict"] == finished_run.comparison.verdict
    assert tags["lift_metrics.optimizer"] == "mipro"
    assert tags["lift_metrics.version.dspy"] == dspy.__version__
    assert len(tags["lift_metrics.config_hash"]) == 64
    assert tags["stop_reason"] == ""

    top = {a.path for a in client.list_artifacts(tracked.run_id)}
    assert {
        "program.json",
        "report.md",
        "config.json",
        "trials.json",
        "comparison.json",
        "result.json",
        "baseline",
        "optimized",
    } <= top
    assert "cache" not in top
    inner = {a.path for a in client.list_artifacts(tracked.run_id, "optimized")}
    assert "optimized/optimized.json" in inner
    local = Path(client.download_artifacts(tracked.run_id, "report.md", str(tmp_path)))
    assert local.read_text() == (finished_run.output_dir / "report.md").read_text()


@pytest.mark.slow
def test_default_store_is_under_the_output_folder(finished_run: OptimizationResult) -> None:
    # a folder path works as well as the result object; two logs make two runs
    first = log_run_to_mlflow(finished_run.output_dir)
    second = log_run_to_mlflow(str(finished_run.output_dir), run_name="again")
    database = finished_run.output_dir / "mlflow" / "mlflow.db"
    assert first.tracking_uri == default_tracking_uri(finished_run.output_dir)
    assert database.is_file()
    client = mlflow.MlflowClient(tracking_uri=first.tracking_uri)
    runs = client.search_runs([first.experiment_id])
    assert {r.info.run_id for r in runs} == {first.run_id, second.run_id}
    assert client.get_run(second.run_id).info.run_name == "again"
    assert first.artifact_uri.startswith((finished_run.output_dir / "mlflow").resolve().as_uri())


def test_not_a_run_folder(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"config\.json not found"):
        log_run_to_mlflow(tmp_path)
    assert not (tmp_path / "mlflow").exists()


def test_bad_arguments(finished_run: OptimizationResult) -> None:
    with pytest.raises(TypeError, match="experiment must be a non-empty string"):
        log_run_to_mlflow(finished_run, experiment="")
    with pytest.raises(TypeError, match="run_name must be"):
        log_run_to_mlflow(finished_run, run_name="  ")


def test_without_mlflow_says_how_to_install(
    monkeypatch: pytest.MonkeyPatch, finished_run: OptimizationResult
) -> None:
    real_import = builtins.__import__

    def no_mlflow(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "mlflow" or name.startswith("mlflow."):
            raise ImportError(f"No module named {name!r}")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_mlflow)
    with pytest.raises(ImportError, match=r"pip install 'lift-metrics\[tracking\]'"):
        log_run_to_mlflow(finished_run)
    with pytest.raises(ImportError, match=r"pip install 'lift-metrics\[tracking\]'"):
        require_mlflow()


def test_trial_metrics_of_copro_and_gepa() -> None:
    # shapes of trials.json as run_optimizer writes them (tests/optimizers/test_runner.py runs)
    copro = {
        "optimizer": "copro",
        "results_best": {
            "1": {"depth": [0, 1], "max": [40.0, 55.0], "average": [30.0, 41.0]},
            "2": {"depth": [0, 1], "max": [45.0, 50.0], "average": [20.0, 42.0]},
        },
        "candidate_programs": [{"score": 55.0}, {"score": 40.0}],
    }
    assert trial_metrics(copro) == [
        ("copro.best_score", 45.0, 0),
        ("copro.average_score", 30.0, 0),
        ("copro.best_score", 55.0, 1),
        ("copro.average_score", 42.0, 1),
        ("candidate_score", 55.0, 0),
        ("candidate_score", 40.0, 1),
    ]
    gepa = {
        "optimizer": "gepa",
        "gepa": {"val_aggregate_scores": [0.4, 0.6], "best_idx": 1, "total_metric_calls": 12},
    }
    assert trial_metrics(gepa) == [
        ("trial_score", 0.4, 0),
        ("trial_score", 0.6, 1),
        ("gepa.best_idx", 1.0, 0),
        ("gepa.total_metric_calls", 12.0, 0),
    ]


@pytest.mark.slow
def test_run_optimizer_logs_with_mlflow_argument(tmp_path: Path) -> None:
    config = RunConfig.from_mapping(
        {
            "name": "wired",
            "seed": 3,
            "output_dir": str(tmp_path / "out"),
            "optimizer": {"name": "copro", "init": {"breadth": 2, "depth": 1}},
            "lm": {"model": "local"},
            "metric": {"name": "end_to_end"},
            "dataset": {"train_limit": 2, "test_limit": 2},
            "evaluation": {"n_resamples": 100},
        }
    )
    task = task_records("train")[0]
    lm = dummy_lm(task)
    uri = f"sqlite:///{tmp_path / 'store.db'}"
    result = run_optimizer(config, lm=lm, progress=False, mlflow=uri)
    client = mlflow.MlflowClient(tracking_uri=uri)
    (run,) = client.search_runs([client.get_experiment_by_name("lift-metrics").experiment_id])
    assert run.data.params["optimizer.name"] == "copro"
    assert run.data.tags["verdict"] == result.verdict
    assert "program.json" in {a.path for a in client.list_artifacts(run.info.run_id)}
