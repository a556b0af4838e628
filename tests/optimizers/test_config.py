"""Run configuration validation: unknown keys, DSPy arguments, DSPy traps, bad input.

Every rejected config must fail in ``RunConfig.from_mapping`` / ``preflight`` (no LM is built
or called) with one line that names what to change.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from lift_metrics._paths import configs_dir
from lift_metrics._usage import Budget
from lift_metrics.optimizers._config import OptimizerSpec, RunConfig, load_config
from lift_metrics.optimizers._preflight import preflight

BASE: dict[str, Any] = {
    "name": "t",
    "seed": 3,
    "optimizer": {"name": "mipro", "init": {}, "compile": {}},
    "lm": {"model": "local"},
}


def config(**changes: Any) -> dict[str, Any]:
    data = copy.deepcopy(BASE)
    for key, value in changes.items():
        data[key] = value
    return data


def optimizer(name: str, init: dict[str, Any] | None = None, comp: dict[str, Any] | None = None):
    return config(optimizer={"name": name, "init": init or {}, "compile": comp or {}})


def rejects(data: dict[str, Any], *fragments: str) -> str:
    # every caller names at least one fragment; the first one is matched here
    with pytest.raises(ValueError, match=re.escape(fragments[0])) as info:
        RunConfig.from_mapping(data)
    message = str(info.value)
    assert "\n" not in message, message
    for fragment in fragments:
        assert fragment in message, message
    return message


@pytest.mark.parametrize("name", ["quick", "mipro", "copro", "gepa"])
def test_shipped_configs_validate_and_pass_preflight(name: str) -> None:
    cfg = load_config(configs_dir() / f"{name}.toml")
    preflight(cfg)  # the shipped dataset has the splits and sizes the configs ask for
    assert cfg.name == name
    assert cfg.optimizer.name == ("mipro" if name == "quick" else name)
    assert not cfg.budget.is_unlimited  # every shipped run is capped


def test_values_pass_through_and_none_strings_become_none() -> None:
    cfg = RunConfig.from_mapping(
        optimizer("mipro", {"auto": "none", "num_candidates": 3}, {"num_trials": 4})
    )
    assert cfg.optimizer.init_args == {"auto": None, "num_candidates": 3}
    assert cfg.optimizer.compile_args == {"num_trials": 4}
    assert cfg.optimizer.class_name == "MIPROv2"


def test_config_hash_is_stable_and_changes_with_content() -> None:
    a = RunConfig.from_mapping(config())
    b = RunConfig.from_mapping(config())
    c = RunConfig.from_mapping(config(seed=4))
    assert a.config_hash == b.config_hash != c.config_hash
    assert json.loads(json.dumps(a.to_dict()))["seed"] == 3


def test_unknown_optimizer() -> None:
    rejects(optimizer("bootstrap"), "unknown optimizer 'bootstrap'", "mipro, copro, gepa")


def test_unknown_top_level_key() -> None:
    rejects(config(epochs=3), "unknown key 'epochs'", "allowed keys")


def test_unknown_mipro_argument_lists_the_accepted_ones() -> None:
    rejects(optimizer("mipro", {"num_trails": 3}), "does not accept 'num_trails'", "auto")


def test_argument_in_the_wrong_table_says_where_it_belongs() -> None:
    rejects(
        optimizer("mipro", {"num_trials": 3, "auto": "none"}),
        "'num_trials'",
        "[optimizer.compile]",
    )


def test_copro_swallows_unknown_kwargs_but_the_config_does_not() -> None:
    # dspy.COPRO(**_kwargs) would silently ignore this typo
    rejects(optimizer("copro", {"bredth": 4}), "COPRO.__init__ does not accept 'bredth'")


def test_copro_eval_kwargs_keys_must_fit_both_evaluate_signatures() -> None:
    rejects(
        optimizer("copro", comp={"eval_kwargs": {"failure_score": 0.0}}),
        "eval_kwargs key 'failure_score'",
        "num_threads",
    )
    ok = RunConfig.from_mapping(optimizer("copro", comp={"eval_kwargs": {"num_threads": 2}}))
    assert ok.optimizer.compile_args["eval_kwargs"] == {"num_threads": 2}


def test_copro_breadth_must_exceed_one() -> None:
    rejects(optimizer("copro", {"breadth": 1}), "breadth must be greater than 1")


def test_mipro_auto_with_num_trials_is_rejected() -> None:
    rejects(
        optimizer("mipro", {"auto": "light"}, {"num_trials": 5}),
        "auto='light'",
        'auto = "none"',
    )


@pytest.mark.parametrize("value", [["light"], {"mode": "light"}])
def test_an_array_or_table_for_a_choice_is_bad_input_not_a_crash(value: Any) -> None:
    # a TOML array is unhashable: the check of the allowed values must not raise TypeError
    rejects(optimizer("mipro", {"auto": value}), "[optimizer.init] auto must be", "'light'")


def test_mipro_default_auto_with_num_candidates_is_rejected() -> None:
    # MIPROv2's auto defaults to "light"
    rejects(optimizer("mipro", {"num_candidates": 5}), "num_candidates")


def test_mipro_auto_none_needs_both_counts() -> None:
    rejects(optimizer("mipro", {"auto": "none", "num_candidates": 3}), "num_trials")


def test_mipro_seed_zero_is_rejected_everywhere() -> None:
    rejects(optimizer("mipro", {"seed": 0}), "seed = 0 is ignored")
    rejects(optimizer("mipro", comp={"seed": 0}), "seed = 0 is ignored")
    rejects(config(seed=0), "seed = 0 would be ignored")
    # other optimizers take seed 0 as it is
    assert RunConfig.from_mapping({**optimizer("copro"), "seed": 0}).seed == 0


def test_mipro_minibatch_larger_than_valset_is_caught_before_any_lm_call() -> None:
    cfg = RunConfig.from_mapping(
        {
            **optimizer("mipro", {"auto": "none", "num_candidates": 2}, {"num_trials": 2}),
            "dataset": {"val_limit": 10},
        }
    )
    with pytest.raises(ValueError, match="minibatch_size 35 exceeds the 10 validation"):
        preflight(cfg)
    fixed = RunConfig.from_mapping(
        {
            **optimizer(
                "mipro",
                {"auto": "none", "num_candidates": 2},
                {"num_trials": 2, "minibatch": False},
            ),
            "dataset": {"val_limit": 10},
        }
    )
    preflight(fixed)


def test_gepa_needs_exactly_one_budget() -> None:
    rejects(optimizer("gepa"), "exactly one of auto, max_full_evals, max_metric_calls")
    rejects(
        optimizer("gepa", {"auto": "light", "max_metric_calls": 10}),
        "got auto, max_metric_calls",
    )
    assert RunConfig.from_mapping(optimizer("gepa", {"max_full_evals": 2}))


def test_runner_owned_arguments_are_rejected_with_their_source() -> None:
    rejects(optimizer("mipro", {"metric": "x"}), "metric", "[metric]")
    rejects(optimizer("gepa", {"reflection_lm": "openai/x", "auto": "light"}), "[prompt_lm]")
    rejects(optimizer("mipro", comp={"requires_permission_to_run": True}), "remove it")


def test_argument_types_are_checked() -> None:
    rejects(optimizer("copro", {"breadth": "ten"}), "breadth must be", "int")
    rejects(optimizer("mipro", {"auto": "extreme"}), "'heavy'", "'extreme'")
    rejects(optimizer("gepa", {"auto": "light", "use_merge": "yes"}), "use_merge must be bool")


def test_metric_validation() -> None:
    rejects(config(metric={"name": "bleu"}), "unknown metric 'bleu'")
    rejects(config(metric={"name": "ir_quality", "target_ms": 5}), "does not accept 'target_ms'")
    rejects(config(metric={"threshold": 1.5}), "threshold")
    ok = RunConfig.from_mapping(config(metric={"name": "end_to_end", "threshold": 0.7}))
    assert ok.metric.options == {"threshold": 0.7}


def test_dataset_budget_and_evaluation_validation() -> None:
    rejects(config(dataset={"test": "train"}), "also used for optimizing")
    rejects(config(dataset={"train_limit": 0}), "train_limit must be a positive integer")
    rejects(config(dataset={"split": "x"}), "unknown key 'split' in [dataset]")
    rejects(config(budget={"max_calls": 3}), "unknown key 'max_calls' in [budget]")
    rejects(config(budget={"max_lm_calls": 0}), "[budget]", "max_lm_calls")
    rejects(config(evaluation={"runs": 0}), "[evaluation]", "runs")
    rejects(config(evaluation={"runs": 10**9}), "[evaluation]", "runs must be <= 1,000")
    cfg = RunConfig.from_mapping(config(budget={"max_tokens": 5000, "max_cost_usd": 0.5}))
    assert cfg.budget == Budget(max_tokens=5000, max_cost_usd=0.5)


def test_api_key_in_a_config_is_refused() -> None:
    rejects(config(lm={"model": "openai/gpt-4o-mini", "api_key": "sk-x"}), "environment")


def test_missing_config_and_dataset_files(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="config file not found"):
        load_config(tmp_path / "none.toml")
    cfg = RunConfig.from_mapping(config(dataset={"path": str(tmp_path / "missing.jsonl")}))
    with pytest.raises(FileNotFoundError, match=r"missing\.jsonl"):
        preflight(cfg)


def test_bad_toml_names_the_file(tmp_path: Path) -> None:
    file = tmp_path / "bad.toml"
    file.write_text("name = [unclosed\n")
    with pytest.raises(ValueError, match=r"bad\.toml: not valid TOML"):
        load_config(file)


def test_unreachable_lm_server_is_caught_before_work() -> None:
    cfg = RunConfig.from_mapping(
        config(lm={"model": "openai/m", "api_base": "http://127.0.0.1:9/v1"})
    )
    with pytest.raises(
        ValueError, match=re.escape("cannot reach the LM server at http://127.0.0.1:9/v1")
    ):
        preflight(cfg)


# every argument of the optimizer's __init__ / compile that the runner does not set itself,
# read from the signatures at test time (so a new DSPy argument is covered automatically)
_TRAP_BASES: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    # a base that satisfies the traps, so that one argument at a time can be added
    "mipro": ({"auto": "none", "num_candidates": 2}, {"num_trials": 2, "minibatch": False}),
    "copro": ({"breadth": 2}, {}),
    "gepa": ({"max_metric_calls": 12}, {}),
}
# arguments whose value the traps couple to others: the value to test and the base to use
_COUPLED: dict[tuple[str, str], tuple[Any, dict[str, Any], dict[str, Any]]] = {
    ("mipro", "auto"): ("light", {}, {}),
    ("mipro", "num_candidates"): (3, {"auto": "none"}, {"num_trials": 2, "minibatch": False}),
    ("mipro", "num_trials"): (3, {"auto": "none", "num_candidates": 2}, {"minibatch": False}),
    ("mipro", "minibatch"): (False, {"auto": "none", "num_candidates": 2}, {"num_trials": 2}),
    ("gepa", "auto"): ("light", {}, {}),
    ("gepa", "max_full_evals"): (2, {}, {}),
    ("gepa", "max_metric_calls"): (20, {}, {}),
}


def _settable() -> list[tuple[str, str, str, Any]]:
    import inspect

    from lift_metrics.optimizers._config_checks import _RUNNER_SET, _optimizer_class, _parameters

    cases = []
    for name in ("mipro", "copro", "gepa"):
        cls = _optimizer_class(name)
        for where, function in (("init", cls.__init__), ("compile", cls.compile)):
            for key, param in _parameters(function, name, where).items():
                if key in _RUNNER_SET[name] and key != "component_selector":
                    continue
                default = param.default
                if key == "component_selector":
                    value: Any = "round_robin"
                elif default is inspect.Parameter.empty or default is None:
                    value = "none"
                else:
                    value = default
                cases.append((name, where, key, value))
    return cases


@pytest.mark.parametrize(("name", "where", "key", "value"), _settable())
def test_every_dspy_argument_of_the_optimizer_can_be_set(
    name: str, where: str, key: str, value: Any
) -> None:
    init, comp = copy.deepcopy(_TRAP_BASES[name])
    if (name, key) in _COUPLED:
        value, init, comp = copy.deepcopy(_COUPLED[(name, key)])
    (init if where == "init" else comp)[key] = value
    cfg = RunConfig.from_mapping(optimizer(name, init, comp))
    args = cfg.optimizer.init_args if where == "init" else cfg.optimizer.compile_args
    assert key in args
    assert args[key] == (None if value == "none" else value)


def test_the_settable_argument_list_is_read_from_dspy() -> None:
    keys = {(n, w, k) for n, w, k, _ in _settable()}
    # spot checks of arguments the DSPy 3.4 signatures have (a regression in _parameters
    # dropping a whole table would lose them)
    assert ("mipro", "init", "max_errors") in keys
    assert ("mipro", "compile", "view_data_batch_size") in keys
    assert ("copro", "init", "init_temperature") in keys
    assert ("copro", "compile", "eval_kwargs") in keys
    assert ("gepa", "init", "reflection_minibatch_size") in keys
    assert ("mipro", "init", "metric") not in keys  # the runner sets it from [metric]


def test_all_init_arguments_reach_the_optimizer_object() -> None:
    from lift_metrics.optimizers._setup import _build_optimizer

    cfg = RunConfig.from_mapping(
        optimizer(
            "copro",
            {"breadth": 3, "depth": 2, "init_temperature": 0.3, "track_stats": True},
        )
    )
    built = _build_optimizer(cfg, metric=lambda *a: 1.0, task_lm=None, prompt_lm=None)
    assert (built.breadth, built.depth, built.init_temperature, built.track_stats) == (
        3,
        2,
        0.3,
        True,
    )


def test_instruction_source_defaults_to_candidates_for_mipro_without_a_prompt_model() -> None:
    assert RunConfig.from_mapping(config()).optimizer.instructions == "candidates"
    with_prompt = RunConfig.from_mapping(config(prompt_lm={"model": "openai/gpt-4o-mini"}))
    assert with_prompt.optimizer.instructions == "proposed"
    explicit = config(optimizer={"name": "mipro", "instructions": "proposed"})
    assert RunConfig.from_mapping(explicit).optimizer.instructions == "proposed"
    copro = RunConfig.from_mapping(optimizer("copro"))
    assert copro.optimizer.instructions == "proposed"


def test_instruction_source_is_validated() -> None:
    rejects(
        config(optimizer={"name": "mipro", "instructions": "handwritten"}),
        "[optimizer] instructions must be one of",
        "'handwritten'",
    )
    rejects(
        config(optimizer={"name": "copro", "instructions": "candidates"}),
        "MIPROv2 only",
        "[prompt_lm]",
    )


@pytest.mark.slow
def test_a_bad_prompt_model_fails_at_check_time() -> None:
    cfg = RunConfig.from_mapping(config(prompt_lm={"model": "nosuchprovider/model"}))
    with pytest.raises(ValueError, match=r"^\[prompt_lm\] unknown LM provider 'nosuchprovider'"):
        preflight(cfg)
    rejects(
        config(prompt_lm={"model": "openai/gpt-4o-mini", "colour": 1}),
        "[prompt_lm] unknown LM option 'colour'",
    )


def test_pipeline_settings_reach_the_run_config() -> None:
    assert dict(RunConfig.from_mapping(config()).pipeline) == {
        "code_samples": 1,
        "sample_temperature": 0.8,
    }
    cfg = RunConfig.from_mapping(config(pipeline={"code_samples": 4, "sample_temperature": 0.6}))
    assert dict(cfg.pipeline) == {"code_samples": 4, "sample_temperature": 0.6}
    assert cfg.to_dict()["pipeline"] == {"code_samples": 4, "sample_temperature": 0.6}
    assert cfg.config_hash != RunConfig.from_mapping(config()).config_hash


def test_metric_options_accept_none() -> None:
    cfg = RunConfig.from_mapping(config(metric={"name": "end_to_end", "latency_field": "none"}))
    assert cfg.metric.options["latency_field"] is None


@pytest.mark.parametrize(
    ("changes", "line"),
    [
        ({"seed": "x"}, "seed must be an integer, got 'x'"),
        ({"dataset": 3}, "[dataset] must be a table, got int"),
        ({"dataset": {"val": "x"}}, "[dataset] val must be one of 'train', 'dev' or 'test'"),
        ({"evaluation": {"timeout_s": float("inf")}}, "[evaluation] timeout_s must be a finite"),
        ({"evaluation": {"runs": "2"}}, "[evaluation] runs must be an integer, got '2'"),
        ({"optimizer": {"name": "mipro", "init": 3}}, "[optimizer] init must be a table"),
        ({"optimizer": {"name": "mipro", "x": 1}}, "unknown key 'x' in [optimizer]"),
        ({"name": ""}, "name must be a non-empty string"),
        ({"pipeline": {"code_samples": 0}}, "[pipeline] code_samples must be a positive integer"),
        ({"pipeline": {"code_samples": 33}}, "[pipeline] code_samples must be <= 32, got 33"),
        ({"pipeline": {"sample_temperature": 0}}, "[pipeline] sample_temperature must be > 0"),
        ({"pipeline": {"samples": 4}}, "unknown key 'samples' in [pipeline]"),
    ],
)
def test_schema_errors_name_the_file_table_and_key(changes: dict[str, Any], line: str) -> None:
    with pytest.raises(ValueError, match=re.escape(line)) as info:
        RunConfig.from_mapping(config(**changes), source=Path("run.toml"))
    assert str(info.value).startswith("run.toml: ")
    assert line in str(info.value)
    assert "\n" not in str(info.value)


def test_a_file_writes_the_key_names_and_code_the_attribute_names() -> None:
    rejects(
        config(optimizer={"name": "mipro", "init_args": {}}),
        "unknown key 'init_args' in [optimizer]; allowed keys: compile, init, instructions, name",
    )
    rejects(config(source="x.toml"), "unknown key 'source' in the top level")
    spec = OptimizerSpec(name="COPRO", init_args={"breadth": 3})
    assert (spec.name, dict(spec.init_args), spec.to_dict()["init"]) == (
        "copro",
        {"breadth": 3},
        {"breadth": 3},
    )
    with pytest.raises(ValueError, match="does not accept 'bredth'"):
        OptimizerSpec(name="copro", init_args={"bredth": 3})


def test_configs_and_specs_are_frozen() -> None:
    cfg = RunConfig.from_mapping(config(), source=Path("t.toml"))
    assert cfg.source == Path("t.toml")
    for obj, key in ((cfg, "seed"), (cfg.optimizer, "name"), (cfg.dataset, "test")):
        with pytest.raises(ValidationError, match="frozen"):
            setattr(obj, key, "x")
    with pytest.raises(TypeError):
        cfg.lm["model"] = "other"  # type: ignore[index]
    moved = cfg.replace(output_dir=Path("elsewhere"))
    assert (moved.output_dir, moved.source, cfg.output_dir) == (
        Path("elsewhere"),
        Path("t.toml"),
        Path("runs/t"),
    )
