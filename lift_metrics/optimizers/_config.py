"""Run configurations: a TOML file -> a validated, frozen :class:`RunConfig`.

Everything that can be checked without calling an LM is checked here, with a message that
says what to change: unknown keys anywhere, optimizer arguments that DSPy does not accept
(found by introspecting the optimizer's ``__init__`` and ``compile`` signatures; COPRO's
``**kwargs`` would swallow typos silently, so its real parameters are used), argument types,
and DSPy's known traps (MIPROv2 ``auto`` vs ``num_trials``/``num_candidates``,
minibatch larger than the validation set, ``seed = 0`` ignored by MIPROv2, COPRO ``breadth``
and ``eval_kwargs``, GEPA's single budget). The data-dependent checks (split sizes) and the LM
server check run in :func:`preflight`, still before any LM call.

The format is documented in ``optimizers/README.md``. TOML has no null: write ``"none"``
where a DSPy argument should be ``None`` (``auto = "none"``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import inspect
import json
import math
import os
import socket
import tomllib
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from lift_metrics._checks import (
    check_int,
    check_positive,
    check_real,
    check_unit_interval,
)
from lift_metrics.optimizers._budget import Budget
from lift_metrics.optimizers._evaluate import MAX_RUNS

__all__ = [
    "INSTRUCTION_SOURCES",
    "OPTIMIZERS",
    "DatasetSpec",
    "EvaluationSpec",
    "MetricSpec",
    "OptimizerSpec",
    "RunConfig",
    "build_metric",
    "load_config",
    "preflight",
]

#: config name -> (dspy.teleprompt class name, aliases)
OPTIMIZERS: dict[str, str] = {"mipro": "MIPROv2", "copro": "COPRO", "gepa": "GEPA"}
_ALIASES = {"miprov2": "mipro", "mipro_v2": "mipro"}

#: where MIPROv2's instruction candidates come from ("default": "candidates" for MIPROv2
#: without [prompt_lm], "proposed" otherwise)
INSTRUCTION_SOURCES: tuple[str, ...] = ("default", "candidates", "proposed")

#: metric name -> class in lift_metrics.dspy_metrics
METRICS: dict[str, str] = {
    "end_to_end": "EndToEnd",
    "aggregate": "Aggregate",
    "ir_quality": "IRQuality",
    "code_quality": "CodeQuality",
}
# metric constructor arguments that are objects or field wiring, not TOML settings
_METRIC_RESERVED = frozenset({"embedder", "sandbox", "history_size"})

# arguments the runner sets itself: name -> where it comes from
_RUNNER_SET: dict[str, dict[str, str]] = {
    "mipro": {
        "metric": "[metric]",
        "prompt_model": "[prompt_lm]",
        "task_model": "[lm]",
        "student": "the reference pipeline",
        "trainset": "[dataset] train",
        "valset": "[dataset] val",
        "teacher": "the runner (no teacher program)",
        "requires_permission_to_run": "DSPy (deprecated; it would wait for keyboard input)",
    },
    "copro": {
        "metric": "[metric]",
        "prompt_model": "[prompt_lm]",
        "student": "the reference pipeline",
        "trainset": "[dataset] train",
    },
    "gepa": {
        "metric": "[metric]",
        "reflection_lm": "[prompt_lm]",
        "instruction_proposer": "code (a callable cannot be written in TOML)",
        "code_proposer": "code (a callable cannot be written in TOML)",
        "component_selector": "code when it is an object (a string works in [optimizer.init])",
        "student": "the reference pipeline",
        "trainset": "[dataset] train",
        "valset": "[dataset] val",
        "teacher": "the runner (GEPA does not support a teacher)",
        "wandb_api_key": "the WANDB_API_KEY environment variable (keep secrets out of configs)",
    },
}
# component_selector accepts strings, so it is only reserved for non-strings
_STRING_OK = frozenset({"component_selector"})

_TOP_KEYS = {
    "name",
    "seed",
    "output_dir",
    "cache_dir",
    "optimizer",
    "lm",
    "prompt_lm",
    "metric",
    "dataset",
    "evaluation",
    "budget",
}
_SPLITS = ("train", "dev", "test")


def _where(source: Path | None) -> str:
    return f"{source}: " if source is not None else ""


class _Errors:
    """Collects the first error with the config file named in front."""

    def __init__(self, source: Path | None) -> None:
        self.prefix = _where(source)

    def fail(self, message: str) -> typing.NoReturn:
        raise ValueError(self.prefix + message)


def _none(value: Any) -> Any:
    return None if isinstance(value, str) and value.strip().lower() == "none" else value


def _check_keys(err: _Errors, table: str, data: Mapping[str, Any], allowed: set[str]) -> None:
    unknown = sorted(set(data) - allowed)
    if unknown:
        err.fail(
            f"unknown key {unknown[0]!r} in {table}; allowed keys: {', '.join(sorted(allowed))}"
        )


def _table(err: _Errors, data: Mapping[str, Any], key: str) -> dict[str, Any]:
    value = data.get(key, {})
    if not isinstance(value, Mapping):
        err.fail(f"[{key}] must be a table, got {type(value).__name__}")
    return dict(value)


@dataclass(frozen=True)
class OptimizerSpec:
    """Which DSPy optimizer to run and the arguments passed to it unchanged.

    ``init_args`` go to the constructor (``dspy.MIPROv2(**init_args)``), ``compile_args`` to
    ``compile``; ``"none"`` strings are already turned into ``None``. ``instructions`` says
    where MIPROv2's instruction candidates come from: ``"proposed"`` (written by the prompt
    model, DSPy's default) or ``"candidates"`` (the reference pipeline's hand-written
    candidates, no proposer calls; the default for MIPROv2 without ``[prompt_lm]``).
    """

    name: str
    init_args: Mapping[str, Any] = field(default_factory=dict)
    compile_args: Mapping[str, Any] = field(default_factory=dict)
    instructions: str = "proposed"

    @property
    def class_name(self) -> str:
        """The ``dspy.teleprompt`` class (``"MIPROv2"``)."""
        return OPTIMIZERS[self.name]

    def to_dict(self) -> dict[str, Any]:
        """Plain-dict form for JSON output."""
        return {
            "name": self.name,
            "instructions": self.instructions,
            "init": dict(self.init_args),
            "compile": dict(self.compile_args),
        }


@dataclass(frozen=True)
class MetricSpec:
    """The metric (a class of :mod:`lift_metrics.dspy_metrics`) and its constructor options."""

    name: str = "end_to_end"
    options: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """Plain-dict form for JSON output."""
        return {"name": self.name, **dict(self.options)}


@dataclass(frozen=True)
class DatasetSpec:
    """Task file, split names and per-split limits (``None`` = the whole split)."""

    path: Path | None = None
    train: str = "train"
    val: str = "dev"
    test: str = "test"
    train_limit: int | None = None
    val_limit: int | None = None
    test_limit: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """Plain-dict form for JSON output."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}


@dataclass(frozen=True)
class EvaluationSpec:
    """How the test split is evaluated (before and after optimizing) and compared."""

    runs: int = 1
    timeout_s: float = 120.0
    num_threads: int = 1
    n_resamples: int = 10_000
    confidence_level: float = 0.95

    def to_dict(self) -> dict[str, Any]:
        """Plain-dict form for JSON output."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}


@dataclass(frozen=True)
class RunConfig:
    """A validated optimizer run configuration (see ``optimizers/README.md``).

    Build it with :func:`load_config` (a TOML file) or :meth:`from_mapping` (a dict in the
    same shape). Relative paths are kept as written and resolved against the current
    directory when the run starts.
    """

    name: str
    optimizer: OptimizerSpec
    lm: Mapping[str, Any]
    prompt_lm: Mapping[str, Any] | None = None
    metric: MetricSpec = field(default_factory=MetricSpec)
    dataset: DatasetSpec = field(default_factory=DatasetSpec)
    evaluation: EvaluationSpec = field(default_factory=EvaluationSpec)
    budget: Budget = field(default_factory=Budget)
    output_dir: Path = Path("runs")
    cache_dir: Path | None = None
    seed: int = 7
    source: Path | None = None

    def __repr__(self) -> str:
        return (
            f"RunConfig(name={self.name!r}, optimizer={self.optimizer.class_name}, "
            f"lm={self.lm.get('model')!r}, metric={self.metric.name!r}, "
            f"output_dir='{self.output_dir}')"
        )

    def to_dict(self) -> dict[str, Any]:
        """Plain-dict form (the provenance record of a run); ``source`` is left out."""
        return {
            "name": self.name,
            "seed": self.seed,
            "output_dir": str(self.output_dir),
            "cache_dir": None if self.cache_dir is None else str(self.cache_dir),
            "optimizer": self.optimizer.to_dict(),
            "lm": dict(self.lm),
            "prompt_lm": None if self.prompt_lm is None else dict(self.prompt_lm),
            "metric": self.metric.to_dict(),
            "dataset": {
                **self.dataset.to_dict(),
                "path": None if self.dataset.path is None else str(self.dataset.path),
            },
            "evaluation": self.evaluation.to_dict(),
            "budget": self.budget.to_dict(),
        }

    @property
    def config_hash(self) -> str:
        """SHA-256 of the canonical JSON of :meth:`to_dict` (secrets left out)."""
        data = self.to_dict()
        for key in ("lm", "prompt_lm"):
            if data[key]:
                data[key] = {k: v for k, v in data[key].items() if k != "api_key"}
        text = json.dumps(data, sort_keys=True, default=str)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    @property
    def resolved_cache_dir(self) -> Path:
        """Where DSPy's LM cache lives: ``cache_dir`` or ``<output_dir>/cache``."""
        return self.cache_dir if self.cache_dir is not None else self.output_dir / "cache"

    def replace(self, **changes: Any) -> RunConfig:
        """A copy with some fields changed (``config.replace(output_dir=Path("x"))``)."""
        return dataclasses.replace(self, **changes)

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], *, source: Path | None = None) -> RunConfig:
        """Validate a config in the TOML shape (see ``optimizers/README.md``).

        Raises
        ------
        ValueError
            One line naming the first problem and what to change (unknown key, unknown
            optimizer or metric, an argument DSPy does not accept, a DSPy trap).
        """
        err = _Errors(source)
        if not isinstance(data, Mapping):
            err.fail(f"a config must be a table, got {type(data).__name__}")
        _check_keys(err, "the top level", data, _TOP_KEYS)
        optimizer = _optimizer_spec(err, _table(err, data, "optimizer"))
        seed = data.get("seed", 7)
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            err.fail(f"seed must be a non-negative integer, got {seed!r}")
        if "lm" not in data:
            err.fail('[lm] is missing; add [lm] with model = "local" (or a DSPy model string)')
        lm = _lm_table(err, "lm", data["lm"])
        prompt_lm = _lm_table(err, "prompt_lm", data["prompt_lm"]) if "prompt_lm" in data else None
        metric = _metric_spec(err, _table(err, data, "metric"))
        dataset = _dataset_spec(err, _table(err, data, "dataset"))
        evaluation = _evaluation_spec(err, _table(err, data, "evaluation"))
        budget_data = _table(err, data, "budget")
        _check_keys(err, "[budget]", budget_data, {"max_lm_calls", "max_tokens", "max_cost_usd"})
        try:
            budget = Budget(**budget_data)
        except (TypeError, ValueError) as exc:
            err.fail(f"[budget]: {exc}")
        name = data.get("name", source.stem if source is not None else "run")
        if not isinstance(name, str) or not name:
            err.fail(f"name must be a non-empty string, got {name!r}")
        output_dir = Path(_path(err, "output_dir", data.get("output_dir", f"runs/{name}")))
        cache_raw = data.get("cache_dir")
        cache_dir = None if cache_raw is None else Path(_path(err, "cache_dir", cache_raw))
        _check_seed_trap(err, optimizer, seed)
        if optimizer.instructions == "default":
            chosen = "candidates" if optimizer.name == "mipro" and prompt_lm is None else "proposed"
            optimizer = dataclasses.replace(optimizer, instructions=chosen)
        return cls(
            name=name,
            optimizer=optimizer,
            lm=types.MappingProxyType(lm),
            prompt_lm=None if prompt_lm is None else types.MappingProxyType(prompt_lm),
            metric=metric,
            dataset=dataset,
            evaluation=evaluation,
            budget=budget,
            output_dir=output_dir,
            cache_dir=cache_dir,
            seed=seed,
            source=source,
        )


def _path(err: _Errors, key: str, value: Any) -> str:
    if not isinstance(value, str) or not value:
        err.fail(f"{key} must be a non-empty path string, got {value!r}")
    return os.path.expanduser(value)


def _lm_table(err: _Errors, key: str, value: Any) -> dict[str, Any]:
    if isinstance(value, str):
        value = {"model": value}
    if not isinstance(value, Mapping):
        err.fail(f"[{key}] must be a table with a 'model' key, got {type(value).__name__}")
    table = dict(value)
    model = table.get("model", "local")
    if not isinstance(model, str) or not model:
        err.fail(f"[{key}] model must be a string ('local', a .gguf path or 'provider/name')")
    table["model"] = model
    if "api_key" in table:
        err.fail(
            f"[{key}] api_key: keep secrets out of config files; set the provider's "
            "environment variable (OPENAI_API_KEY, ...) instead"
        )
    _check_lm_options(err, key, table)
    return table


def _is_local(model: str) -> bool:
    return model == "local" or model.lower().endswith(".gguf")


def _check_lm_options(err: _Errors, key: str, table: Mapping[str, Any]) -> None:
    """The option names and values of an ``[lm]``/``[prompt_lm]`` table, without building it.

    The local model is loaded when its LM is built, so everything that would fail there is
    checked here first: unknown options, ``api_base`` with the local model, a temperature
    that is not a finite number in [0, 2], ``max_tokens < 1`` (or above ``n_ctx`` locally).
    """
    from lift_metrics.lm import DEFAULT_N_CTX
    from lift_metrics.lm import LOCAL_OPTIONS as _LOCAL_OPTIONS
    from lift_metrics.lm import REMOTE_OPTIONS as _REMOTE_OPTIONS

    model = table["model"]
    local = _is_local(model)
    allowed = {"model", *(_LOCAL_OPTIONS if local else _REMOTE_OPTIONS)} - {"api_key"}
    kind = "the local LM" if local else repr(model)
    for name in sorted(table):
        if name == "api_base" and local:
            err.fail(
                f"[{key}] api_base applies to a remote model string ('openai/NAME'), not to "
                f"the local LM ({model!r})"
            )
        if name not in allowed:
            err.fail(
                f"[{key}] unknown LM option {name!r} for {kind}; allowed: "
                + ", ".join(sorted(allowed))
            )
    checks: dict[str, Any] = {
        "temperature": lambda v: _in_range(check_real("temperature", v), "temperature", 0, 2),
        "top_p": lambda v: check_unit_interval("top_p", v),
        "max_tokens": lambda v: check_int("max_tokens", v, minimum=1),
        "seed": lambda v: check_int("seed", v, minimum=0),
        "num_retries": lambda v: check_int("num_retries", v, minimum=0),
        "timeout": lambda v: check_positive("timeout", v),
        "n_ctx": lambda v: check_int("n_ctx", v, minimum=64),
        "n_threads": lambda v: check_int("n_threads", v, minimum=1),
        "n_parallel": lambda v: check_int("n_parallel", v, minimum=1),
    }
    try:
        for name, check in checks.items():
            if name in table:
                check(table[name])
        if "cache" in table and not isinstance(table["cache"], bool):
            raise TypeError(f"cache must be true or false, got {table['cache']!r}")
        model_type = table.get("model_type", "chat")
        if model_type not in ("chat", "text", "responses"):
            raise ValueError(f"model_type must be chat, text or responses, got {model_type!r}")
        n_ctx = table.get("n_ctx", DEFAULT_N_CTX)
        if local and table.get("max_tokens", 1) > n_ctx:
            raise ValueError(f"max_tokens must be <= n_ctx ({n_ctx}), got {table['max_tokens']}")
    except (TypeError, ValueError) as exc:
        err.fail(f"[{key}] {exc}")


def _in_range(value: float, name: str, low: float, high: float) -> float:
    if not low <= value <= high:
        raise ValueError(f"{name} must be in [{low}, {high}], got {value}")
    return value


def _optimizer_spec(err: _Errors, table: dict[str, Any]) -> OptimizerSpec:
    _check_keys(err, "[optimizer]", table, {"name", "init", "compile", "instructions"})
    raw_name = table.get("name")
    if not isinstance(raw_name, str):
        err.fail(f"[optimizer] name is required: one of {', '.join(OPTIMIZERS)}")
    name = _ALIASES.get(raw_name.lower(), raw_name.lower())
    if name not in OPTIMIZERS:
        err.fail(f"unknown optimizer {raw_name!r}; choose one of {', '.join(OPTIMIZERS)}")
    init_raw = _table(err, table, "init")
    compile_raw = _table(err, table, "compile")
    init_args = {k: _none(v) for k, v in init_raw.items()}
    compile_args = {k: _none(v) for k, v in compile_raw.items()}
    cls = _optimizer_class(name)
    _check_arguments(err, name, "init", init_args, _parameters(cls.__init__, name, "init"))
    _check_arguments(err, name, "compile", compile_args, _parameters(cls.compile, name, "compile"))
    _check_ranges(err, name, "init", init_args)
    _check_ranges(err, name, "compile", compile_args)
    instructions = table.get("instructions", "default")
    if instructions not in INSTRUCTION_SOURCES:
        err.fail(
            f"[optimizer] instructions must be one of {', '.join(INSTRUCTION_SOURCES)}, "
            f"got {instructions!r}"
        )
    if instructions == "candidates" and name != "mipro":
        err.fail(
            f'[optimizer] instructions = "candidates" works with MIPROv2 only; '
            f"{OPTIMIZERS[name]} writes its instructions with the prompt model ([prompt_lm])"
        )
    spec = OptimizerSpec(
        name=name,
        init_args=types.MappingProxyType(init_args),
        compile_args=types.MappingProxyType(compile_args),
        instructions=instructions,
    )
    _check_traps(err, spec)
    return spec


# the smallest value each count argument of the optimizers may take (DSPy runs 0 or a
# negative number of trials without a word)
_MINIMUMS: dict[str, dict[str, dict[str, int]]] = {
    "mipro": {
        "init": {
            "max_bootstrapped_demos": 0,
            "max_labeled_demos": 0,
            "num_candidates": 1,
            "num_threads": 1,
            "max_errors": 0,
            "seed": 0,
        },
        "compile": {
            "num_trials": 1,
            "max_bootstrapped_demos": 0,
            "max_labeled_demos": 0,
            "seed": 0,
            "minibatch_size": 1,
            "minibatch_full_eval_steps": 1,
            "view_data_batch_size": 1,
        },
    },
    "copro": {"init": {"depth": 1}, "compile": {}},
    "gepa": {
        "init": {
            "max_full_evals": 1,
            "max_metric_calls": 1,
            "reflection_minibatch_size": 1,
            "max_merge_invocations": 0,
            "num_threads": 1,
            "seed": 0,
        },
        "compile": {},
    },
}


def _check_ranges(err: _Errors, name: str, where: str, args: Mapping[str, Any]) -> None:
    """Counts at or above their minimum; every float finite (TOML accepts nan and inf)."""
    minimums = _MINIMUMS[name][where]
    for key, value in args.items():
        if isinstance(value, bool):
            continue
        if isinstance(value, float) and not math.isfinite(value):
            err.fail(f"[optimizer.{where}] {key} must be a finite number, got {value!r}")
        if key in minimums and isinstance(value, int) and value < minimums[key]:
            err.fail(f"[optimizer.{where}] {key} must be >= {minimums[key]}, got {value!r}")


def _optimizer_class(name: str) -> Any:
    import dspy.teleprompt

    return getattr(dspy.teleprompt, OPTIMIZERS[name])


# COPRO.__init__ takes **_kwargs and drops whatever it gets: its real parameters are these
_COPRO_INIT = ("prompt_model", "metric", "breadth", "depth", "init_temperature", "track_stats")


def _parameters(function: Any, name: str, where: str) -> dict[str, inspect.Parameter]:
    params = dict(inspect.signature(function).parameters)
    params.pop("self", None)
    params = {
        k: p
        for k, p in params.items()
        if p.kind not in (inspect.Parameter.VAR_KEYWORD, inspect.Parameter.VAR_POSITIONAL)
    }
    if name == "copro" and where == "init":
        params = {k: p for k, p in params.items() if k in _COPRO_INIT}
    return params


def _check_arguments(
    err: _Errors,
    name: str,
    where: str,
    args: Mapping[str, Any],
    params: Mapping[str, inspect.Parameter],
) -> None:
    table = f"[optimizer.{where}]"
    runner_set = _RUNNER_SET[name]
    for key, value in args.items():
        if key in runner_set and not (key in _STRING_OK and isinstance(value, str)):
            err.fail(f"{table} {key}: the runner sets it from {runner_set[key]}; remove it")
        if key not in params:
            other = "compile" if where == "init" else "init"
            cls = _optimizer_class(name)
            other_params = _parameters(
                cls.compile if other == "compile" else cls.__init__, name, other
            )
            hint = f"; it belongs in [optimizer.{other}]" if key in other_params else ""
            settable = sorted(k for k in params if k not in runner_set or k in _STRING_OK)
            err.fail(
                f"{OPTIMIZERS[name]}.{'__init__' if where == 'init' else 'compile'} does not "
                f"accept {key!r}{hint}; {table} accepts: {', '.join(settable)}"
            )
        problem = _type_problem(value, params[key])
        if problem:
            err.fail(f"{table} {key} {problem}")


def _allowed(annotation: Any) -> tuple[set[type], set[Any], bool] | None:
    """(types, literal values, none_ok) for simple annotations; None when not checkable."""
    if annotation is inspect.Parameter.empty or isinstance(annotation, str):
        return None
    kinds: set[type] = set()
    literals: set[Any] = set()
    none_ok = False
    stack = [annotation]
    while stack:
        item = stack.pop()
        origin = typing.get_origin(item)
        if item is None or item is type(None):
            none_ok = True
        elif origin is typing.Literal:
            literals.update(typing.get_args(item))
        elif origin in (typing.Union, types.UnionType):
            stack.extend(typing.get_args(item))
        elif item in (int, float, bool, str):
            kinds.add(item)
        elif origin in (dict, list) or item in (dict, list):
            kinds.add(origin or item)
        else:
            return None  # an object type (an LM, a callable): not expressible in TOML
    return kinds, literals, none_ok


def _type_problem(value: Any, param: inspect.Parameter) -> str | None:
    allowed = _allowed(param.annotation)
    if allowed is None:
        default = param.default
        if default is inspect.Parameter.empty or default is None:
            return None
        allowed = ({type(default)}, set(), False)
    kinds, literals, none_ok = allowed
    if value is None:
        return None if none_ok else "must not be none"
    if literals and value in literals:
        return None
    if isinstance(value, bool):
        ok = bool in kinds
    elif isinstance(value, int):
        ok = int in kinds or float in kinds
    else:
        ok = any(isinstance(value, k) for k in kinds if k is not bool)
    if ok:
        return None
    wanted = [repr(v) for v in sorted(literals, key=str)] + sorted(k.__name__ for k in kinds)
    if none_ok:
        wanted.append('"none"')
    return f"must be {' or '.join(wanted)}, got {value!r}"


def _check_traps(err: _Errors, spec: OptimizerSpec) -> None:
    init, comp = spec.init_args, spec.compile_args
    if spec.name == "mipro":
        auto = init.get("auto", "light")
        tuned = [k for k in ("num_candidates",) if init.get(k) is not None]
        tuned += [k for k in ("num_trials",) if comp.get(k) is not None]
        if auto is not None and tuned:
            err.fail(
                f"MIPROv2 with auto={auto!r} chooses {' and '.join(tuned)} itself; remove "
                f'{" and ".join(tuned)}, or set auto = "none" in [optimizer.init] and give both '
                "num_candidates ([optimizer.init]) and num_trials ([optimizer.compile])"
            )
        if auto is None and (init.get("num_candidates") is None or comp.get("num_trials") is None):
            err.fail(
                'MIPROv2 with auto = "none" needs num_candidates in [optimizer.init] and '
                "num_trials in [optimizer.compile] (or set auto to light, medium or heavy)"
            )
    elif spec.name == "copro":
        breadth = init.get("breadth", 10)
        if isinstance(breadth, int) and breadth <= 1:
            err.fail(f"COPRO breadth must be greater than 1, got {breadth}")
        eval_kwargs = comp.get("eval_kwargs")
        if eval_kwargs is not None:
            if not isinstance(eval_kwargs, Mapping):
                err.fail("[optimizer.compile] eval_kwargs must be a table")
            allowed = _copro_eval_keys()
            bad = sorted(set(eval_kwargs) - allowed)
            if bad:
                err.fail(
                    f"COPRO eval_kwargs key {bad[0]!r} is not accepted by both dspy.Evaluate() "
                    f"and Evaluate.__call__; allowed keys: {', '.join(sorted(allowed))}"
                )
    elif spec.name == "gepa":
        budgets = [k for k in ("auto", "max_full_evals", "max_metric_calls") if init.get(k)]
        if len(budgets) != 1:
            got = ", ".join(budgets) if budgets else "none of them"
            err.fail(
                "GEPA needs exactly one of auto, max_full_evals, max_metric_calls in "
                f"[optimizer.init]; got {got}"
            )
        if init.get("track_best_outputs") and not init.get("track_stats", False):
            err.fail("GEPA track_best_outputs = true needs track_stats = true")


def _copro_eval_keys() -> set[str]:
    from dspy.evaluate import Evaluate

    init = set(inspect.signature(Evaluate.__init__).parameters)
    call = set(inspect.signature(Evaluate.__call__).parameters)
    return (init & call) - {"self", "devset", "metric", "program", "kwargs"}


def _check_seed_trap(err: _Errors, spec: OptimizerSpec, seed: int) -> None:
    if spec.name != "mipro":
        return
    for where, args in (("init", spec.init_args), ("compile", spec.compile_args)):
        if args.get("seed") == 0:
            err.fail(
                f"[optimizer.{where}] seed = 0 is ignored by MIPROv2 (it uses "
                "'seed or self.seed'); use a non-zero seed"
            )
    if seed == 0 and "seed" not in spec.init_args and "seed" not in spec.compile_args:
        err.fail(
            "seed = 0 would be ignored by MIPROv2 (it uses 'seed or self.seed'); "
            "use a non-zero seed"
        )


def _metric_spec(err: _Errors, table: dict[str, Any]) -> MetricSpec:
    name = table.pop("name", "end_to_end")
    if name not in METRICS:
        err.fail(f"unknown metric {name!r}; choose one of {', '.join(METRICS)}")
    import lift_metrics.dspy_metrics as dm

    cls = getattr(dm, METRICS[name])
    params = {
        k: p
        for k, p in inspect.signature(cls.__init__).parameters.items()
        if k != "self" and k not in _METRIC_RESERVED
    }
    for key, value in table.items():
        if key not in params:
            err.fail(
                f"[metric] {METRICS[name]} does not accept {key!r}; allowed keys: name, "
                + ", ".join(sorted(params))
            )
        if isinstance(value, Mapping) or _none(value) is None:
            continue  # weights tables and "none": the metric's constructor validates them below
        problem = _type_problem(_none(value), params[key])
        if problem:
            err.fail(f"[metric] {key} {problem}")
    options = {k: _none(v) for k, v in table.items()}
    try:
        cls(**options)  # validates weights and threshold; cheap (models load on first use)
    except (TypeError, ValueError) as exc:
        err.fail(f"[metric] {exc}")
    return MetricSpec(name=name, options=types.MappingProxyType(options))


def build_metric(spec: MetricSpec) -> Any:
    """Construct the DSPy metric object that ``spec`` names.

    Examples
    --------
    >>> build_metric(MetricSpec("ir_quality", {"threshold": 0.6}))
    IRQuality(...threshold=0.6)
    """
    import lift_metrics.dspy_metrics as dm

    return getattr(dm, METRICS[spec.name])(**dict(spec.options))


def _limit(err: _Errors, key: str, value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        err.fail(f"[dataset] {key} must be a positive integer, got {value!r}")
    return int(value)


def _dataset_spec(err: _Errors, table: dict[str, Any]) -> DatasetSpec:
    keys = {"path", "train", "val", "test", "train_limit", "val_limit", "test_limit"}
    _check_keys(err, "[dataset]", table, keys)
    splits = {}
    for key, default in (("train", "train"), ("val", "dev"), ("test", "test")):
        value = table.get(key, default)
        if value not in _SPLITS:
            err.fail(f"[dataset] {key} must be one of {', '.join(_SPLITS)}, got {value!r}")
        splits[key] = value
    if splits["test"] in (splits["train"], splits["val"]):
        err.fail(
            f"[dataset] test split {splits['test']!r} is also used for optimizing; "
            "evaluate on a split the optimizer does not see"
        )
    path = table.get("path")
    return DatasetSpec(
        path=None if path is None else Path(_path(err, "[dataset] path", path)),
        train=splits["train"],
        val=splits["val"],
        test=splits["test"],
        train_limit=_limit(err, "train_limit", table.get("train_limit")),
        val_limit=_limit(err, "val_limit", table.get("val_limit")),
        test_limit=_limit(err, "test_limit", table.get("test_limit")),
    )


def _evaluation_spec(err: _Errors, table: dict[str, Any]) -> EvaluationSpec:
    from lift_metrics.stats import MAX_RESAMPLES, check_confidence_level

    keys = {f.name for f in dataclasses.fields(EvaluationSpec)}
    _check_keys(err, "[evaluation]", table, keys)
    try:
        return EvaluationSpec(
            runs=check_int("runs", table.get("runs", 1), minimum=1, maximum=MAX_RUNS),
            timeout_s=check_positive("timeout_s", table.get("timeout_s", 120.0)),
            num_threads=check_int("num_threads", table.get("num_threads", 1), minimum=1),
            n_resamples=check_int(
                "n_resamples",
                table.get("n_resamples", 10_000),
                minimum=100,
                maximum=MAX_RESAMPLES,
            ),
            confidence_level=check_confidence_level(table.get("confidence_level", 0.95)),
        )
    except (TypeError, ValueError) as exc:
        err.fail(f"[evaluation] {exc}")


def load_config(path: str | os.PathLike[str]) -> RunConfig:
    """Read and validate a TOML run configuration.

    Parameters
    ----------
    path : path-like
        A TOML file in the format of ``optimizers/README.md``.

    Returns
    -------
    RunConfig

    Raises
    ------
    FileNotFoundError
        When the file does not exist.
    ValueError
        One line naming the file and the first problem: TOML syntax, unknown key, unknown
        optimizer or metric, an argument DSPy does not accept, a DSPy trap.

    Examples
    --------
    >>> from lift_metrics._paths import configs_dir
    >>> load_config(configs_dir() / "quick.toml").optimizer.class_name
    'MIPROv2'
    """
    from lift_metrics._io import read_text_file

    file = Path(path)
    text = read_text_file(file, "config file")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{file}: not valid TOML: {exc}") from None
    return RunConfig.from_mapping(data, source=file)


def _check_reachable(table: Mapping[str, Any], key: str) -> None:
    api_base = table.get("api_base")
    if not api_base:
        return
    parsed = urlparse(str(api_base))
    host = parsed.hostname
    if not host:
        raise ValueError(f"[{key}] api_base {api_base!r} is not a URL (http://host:port/v1)")
    try:
        port = parsed.port or (443 if parsed.scheme == "https" else 80)
    except ValueError as exc:  # "Port out of range 0-65535", named after nothing
        raise ValueError(
            f"[{key}] api_base {api_base!r} has an invalid port ({exc}); "
            "expected http://host:port/v1 with a port from 1 to 65535"
        ) from None
    try:
        with socket.create_connection((host, port), timeout=3.0):
            pass
    except OSError as exc:
        raise ValueError(
            f"[{key}] cannot reach the LM server at {api_base} ({exc.strerror or exc}); "
            "start it or fix api_base"
        ) from None


def preflight(config: RunConfig) -> None:
    """Checks that need files or the network but no LM call: the task file, split sizes
    against the optimizer's needs, the output and cache folders (writable, no file in the
    way), the local model files (exist, GGUF), the LM server's address. ``optimize --check``
    runs it and so does every run, before any LM is built.

    Raises
    ------
    FileNotFoundError
        A missing task file.
    ValueError
        Empty splits, a MIPROv2 minibatch larger than the validation set, a local model file
        that is not a GGUF model, an unknown LM provider, an unreachable ``api_base``.
    """
    from lift_metrics._io import check_output_dir, existing_file
    from lift_metrics.optimizers._tasks import task_records

    check_output_dir(config.output_dir, option=f"{_where(config.source)}output_dir")
    if config.cache_dir is not None:
        check_output_dir(config.cache_dir, option=f"{_where(config.source)}cache_dir")
    spec = config.dataset
    if spec.path is not None:
        existing_file(spec.path, "dataset file")
    sizes: dict[str, int] = {}
    for role, split, limit in (
        ("train", spec.train, spec.train_limit),
        ("val", spec.val, spec.val_limit),
        ("test", spec.test, spec.test_limit),
    ):
        n = len(task_records(split, path=spec.path))
        n = n if limit is None else min(n, limit)
        if n == 0:
            where = "the bundled tasks" if spec.path is None else str(spec.path)
            raise ValueError(f"[dataset] the {role} split {split!r} of {where} holds no tasks")
        sizes[role] = n
    opt = config.optimizer
    if opt.name == "mipro" and opt.init_args.get("auto", "light") is None:
        minibatch = opt.compile_args.get("minibatch", True)
        size = opt.compile_args.get("minibatch_size", 35)
        if minibatch and size > sizes["val"]:
            raise ValueError(
                f"MIPROv2 minibatch_size {size} exceeds the {sizes['val']} validation examples; "
                "set minibatch = false in [optimizer.compile], lower minibatch_size, or use "
                f"more validation examples (>= {size})"
            )
    _check_lm(config.lm, "lm", config.source)
    if config.prompt_lm is not None:
        _check_lm(config.prompt_lm, "prompt_lm", config.source)


def _check_lm(table: Mapping[str, Any], key: str, source: Path | None) -> None:
    """The LM of ``[key]`` without a call: a local model file must exist and start with the
    GGUF magic (it is not loaded); a remote model is built once (an unknown provider fails
    here) and its ``api_base`` must accept a connection."""
    from lift_metrics.lm import check_gguf as _check_gguf
    from lift_metrics.lm import resolve_lm

    model = str(table.get("model", "local"))
    try:
        if _is_local(model):
            _check_gguf(None if model == "local" else model)
            return
        resolve_lm(dict(table))
    except FileNotFoundError as exc:
        raise FileNotFoundError(f"{_where(source)}[{key}] {exc}") from None
    except (TypeError, ValueError, OSError) as exc:
        raise ValueError(f"{_where(source)}[{key}] {exc}") from None
    _check_reachable(table, key)
