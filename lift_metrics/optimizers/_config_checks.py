"""Checks of a run configuration that read DSPy and the LM option lists.

The optimizer arguments are checked against the optimizer's ``__init__`` and ``compile``
signatures (COPRO's ``**kwargs`` would swallow typos silently, so its real parameters are
used), with DSPy's known traps (MIPROv2 ``auto`` vs ``num_trials``/``num_candidates``,
``seed = 0`` ignored by MIPROv2, COPRO ``breadth`` and ``eval_kwargs``, GEPA's single budget).
The ``[lm]`` options are checked against the option lists of
:mod:`lift_metrics.lm`. Every check raises :class:`ValueError` with one line
naming the table, the key and what to change; the pydantic models of
:mod:`lift_metrics.optimizers._config` call them as validators.
"""

from __future__ import annotations

import inspect
import math
import types
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from pydantic_core import ErrorDetails

from lift_metrics._checks import check_int, check_positive, check_real, check_unit_interval
from lift_metrics.errors import InputTypeError, InputValueError

#: config name -> dspy.teleprompt class name
OPTIMIZERS: dict[str, str] = {"mipro": "MIPROv2", "copro": "COPRO", "gepa": "GEPA"}
_ALIASES = {"miprov2": "mipro", "mipro_v2": "mipro"}

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


def _where(source: Path | None) -> str:
    """Return the file named in front of an error message (nothing without one)."""
    return f"{source}: " if source is not None else ""


def _is_local(model: str) -> bool:
    return model == "local" or model.lower().endswith(".gguf")


def _check_lm_options(key: str, table: Mapping[str, Any]) -> None:
    """Return the option names and values of an ``[lm]``/``[prompt_lm]`` table, without building it.

    The local model is loaded when its LM is built, so everything that would fail there is
    checked here first: unknown options, ``api_base`` with the local model, a temperature
    that is not a finite number in [0, 2], ``max_tokens < 1`` (or above ``n_ctx`` locally).
    """
    from lift_metrics.lm import (
        DEFAULT_N_CTX,
        LOCAL_OPTIONS as _LOCAL_OPTIONS,
        REMOTE_OPTIONS as _REMOTE_OPTIONS,
        check_max_tokens,
    )

    model = table["model"]
    local = _is_local(model)
    allowed = {"model", *(_LOCAL_OPTIONS if local else _REMOTE_OPTIONS)} - {"api_key"}
    kind = "the local LM" if local else repr(model)
    for name in sorted(table):
        if name == "api_base" and local:
            raise InputValueError(
                f"[{key}] api_base applies to a remote model string ('openai/NAME'), not to "
                f"the local LM ({model!r})"
            )
        if name not in allowed:
            raise InputValueError(
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
            raise InputTypeError(f"cache must be true or false, got {table['cache']!r}")
        model_type = table.get("model_type", "chat")
        if model_type not in ("chat", "text", "responses"):
            raise InputValueError(f"model_type must be chat, text or responses, got {model_type!r}")
        if local and "max_tokens" in table:
            check_max_tokens(table["max_tokens"], table.get("n_ctx", DEFAULT_N_CTX))
    except (TypeError, ValueError) as exc:
        raise InputValueError(f"[{key}] {exc}") from None


def _in_range(value: float, name: str, low: float, high: float) -> float:
    if not low <= value <= high:
        raise InputValueError(f"{name} must be in [{low}, {high}], got {value}")
    return value


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


def _check_ranges(name: str, where: str, args: Mapping[str, Any]) -> None:
    """Check counts are at least their minimum, every float finite (TOML accepts nan and inf)."""
    minimums = _MINIMUMS[name][where]
    for key, value in args.items():
        if isinstance(value, bool):
            continue
        if isinstance(value, float) and not math.isfinite(value):
            raise InputValueError(
                f"[optimizer.{where}] {key} must be a finite number, got {value!r}"
            )
        if key in minimums and isinstance(value, int) and value < minimums[key]:
            raise InputValueError(
                f"[optimizer.{where}] {key} must be >= {minimums[key]}, got {value!r}"
            )


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
    name: str,
    where: str,
    args: Mapping[str, Any],
    params: Mapping[str, inspect.Parameter],
) -> None:
    table = f"[optimizer.{where}]"
    runner_set = _RUNNER_SET[name]
    for key, value in args.items():
        if key in runner_set and not (key in _STRING_OK and isinstance(value, str)):
            raise InputValueError(
                f"{table} {key}: the runner sets it from {runner_set[key]}; remove it"
            )
        if key not in params:
            other = "compile" if where == "init" else "init"
            cls = _optimizer_class(name)
            other_params = _parameters(
                cls.compile if other == "compile" else cls.__init__, name, other
            )
            hint = f"; it belongs in [optimizer.{other}]" if key in other_params else ""
            settable = sorted(k for k in params if k not in runner_set or k in _STRING_OK)
            raise InputValueError(
                f"{OPTIMIZERS[name]}.{'__init__' if where == 'init' else 'compile'} does not "
                f"accept {key!r}{hint}; {table} accepts: {', '.join(settable)}"
            )
        problem = _type_problem(value, params[key])
        if problem:
            raise InputValueError(f"{table} {key} {problem}")


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
    if literals and any(value == literal for literal in literals):  # a TOML array: unhashable
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


def _check_traps(name: str, init: Mapping[str, Any], comp: Mapping[str, Any]) -> None:
    """DSPy's known traps in the optimizer arguments (after the signature checks)."""
    if name == "mipro":
        auto = init.get("auto", "light")
        tuned = [k for k in ("num_candidates",) if init.get(k) is not None]
        tuned += [k for k in ("num_trials",) if comp.get(k) is not None]
        if auto is not None and tuned:
            raise InputValueError(
                f"MIPROv2 with auto={auto!r} chooses {' and '.join(tuned)} itself; remove "
                f'{" and ".join(tuned)}, or set auto = "none" in [optimizer.init] and give both '
                "num_candidates ([optimizer.init]) and num_trials ([optimizer.compile])"
            )
        if auto is None and (init.get("num_candidates") is None or comp.get("num_trials") is None):
            raise InputValueError(
                'MIPROv2 with auto = "none" needs num_candidates in [optimizer.init] and '
                "num_trials in [optimizer.compile] (or set auto to light, medium or heavy)"
            )
    elif name == "copro":
        breadth = init.get("breadth", 10)
        if isinstance(breadth, int) and breadth <= 1:
            raise InputValueError(f"COPRO breadth must be greater than 1, got {breadth}")
        eval_kwargs = comp.get("eval_kwargs")
        if eval_kwargs is not None:
            if not isinstance(eval_kwargs, Mapping):
                raise InputValueError("[optimizer.compile] eval_kwargs must be a table")
            allowed = _copro_eval_keys()
            bad = sorted(set(eval_kwargs) - allowed)
            if bad:
                raise InputValueError(
                    f"COPRO eval_kwargs key {bad[0]!r} is not accepted by both dspy.Evaluate() "
                    f"and Evaluate.__call__; allowed keys: {', '.join(sorted(allowed))}"
                )
    elif name == "gepa":
        budgets = [k for k in ("auto", "max_full_evals", "max_metric_calls") if init.get(k)]
        if len(budgets) != 1:
            got = ", ".join(budgets) if budgets else "none of them"
            raise InputValueError(
                "GEPA needs exactly one of auto, max_full_evals, max_metric_calls in "
                f"[optimizer.init]; got {got}"
            )
        if init.get("track_best_outputs") and not init.get("track_stats", False):
            raise InputValueError("GEPA track_best_outputs = true needs track_stats = true")


def _copro_eval_keys() -> set[str]:
    from dspy.evaluate import Evaluate

    init = set(inspect.signature(Evaluate.__init__).parameters)
    call = set(inspect.signature(Evaluate.__call__).parameters)
    return (init & call) - {"self", "devset", "metric", "program", "kwargs"}


def _check_seed_trap(
    name: str, init: Mapping[str, Any], comp: Mapping[str, Any], seed: int
) -> None:
    """MIPROv2 uses ``seed or self.seed``: a seed of 0 is silently replaced."""
    if name != "mipro":
        return
    for where, args in (("init", init), ("compile", comp)):
        if args.get("seed") == 0:
            raise InputValueError(
                f"[optimizer.{where}] seed = 0 is ignored by MIPROv2 (it uses "
                "'seed or self.seed'); use a non-zero seed"
            )
    if seed == 0 and "seed" not in init and "seed" not in comp:
        raise InputValueError(
            "seed = 0 would be ignored by MIPROv2 (it uses 'seed or self.seed'); "
            "use a non-zero seed"
        )


def check_optimizer_arguments(name: str, init: Mapping[str, Any], comp: Mapping[str, Any]) -> None:
    """Every check of ``[optimizer.init]`` and ``[optimizer.compile]`` that needs no data.

    Names against the DSPy signatures (and the arguments the runner sets itself), types
    against the annotations, counts against :data:`_MINIMUMS`, then DSPy's traps.

    Raises
    ------
    ValueError
        One line naming the table, the argument and what to change.
    """
    cls = _optimizer_class(name)
    _check_arguments(name, "init", init, _parameters(cls.__init__, name, "init"))
    _check_arguments(name, "compile", comp, _parameters(cls.compile, name, "compile"))
    _check_ranges(name, "init", init)
    _check_ranges(name, "compile", comp)
    _check_traps(name, init, comp)


_TYPE_WORDS = {
    "int_type": "an integer",
    "float_type": "a number",
    "string_type": "a string",
    "bool_type": "true or false",
    "dict_type": "a table",
}


def _file_keys(table: type[BaseModel]) -> list[str]:
    """Return the keys a file may write in ``table``: validation aliases, else field names."""
    return sorted(
        field.validation_alias if isinstance(field.validation_alias, str) else name
        for name, field in table.model_fields.items()
    )


def pydantic_error_line(
    error: ErrorDetails, tables: Mapping[tuple[str, ...], type[BaseModel]]
) -> str:
    """One line for a pydantic error, in the wording of the hand-written checks.

    ``tables`` maps an error location's parent to its table model (for the allowed keys).
    """
    loc = tuple(str(part) for part in error["loc"])
    kind, ctx, value = error["type"], error.get("ctx", {}), error["input"]
    if kind in ("value_error", "assertion_error") and "error" in ctx:
        return str(ctx["error"])  # a validator above wrote the whole line
    parent, key = loc[:-1], loc[-1] if loc else ""
    where = f"[{'.'.join(parent)}] " if parent else ""
    if kind == "extra_forbidden":
        table = f"[{'.'.join(parent)}]" if parent else "the top level"
        allowed = ", ".join(_file_keys(tables[parent])) if parent in tables else "?"
        return f"unknown key {key!r} in {table}; allowed keys: {allowed}"
    if kind in ("model_type", "model_attributes_type") or (kind == "dict_type" and not parent):
        return f"[{'.'.join(loc)}] must be a table, got {type(value).__name__}"
    if kind in _TYPE_WORDS:
        phrase = f"must be {_TYPE_WORDS[kind]}"
    elif kind == "literal_error":
        phrase = f"must be one of {ctx['expected']}"
    elif kind == "greater_than_equal" and type(value) is int and ctx["ge"] in (0, 1):
        phrase = (
            "must be a non-negative integer" if ctx["ge"] == 0 else "must be a positive integer"
        )
    elif kind in ("greater_than_equal", "greater_than", "less_than_equal", "less_than"):
        sign, bound = {"ge": ">=", "gt": ">", "le": "<=", "lt": "<"}, next(iter(ctx.items()))
        phrase = f"must be {sign[bound[0]]} {bound[1]:,}"
    elif kind == "finite_number":
        phrase = "must be a finite number"
    elif kind == "string_too_short":
        phrase = "must be a non-empty string"
    else:
        phrase = error["msg"][:1].lower() + error["msg"][1:]
    shown = f"{value:,}" if type(value) is int else repr(value)
    return f"{where}{key} {phrase}, got {shown}"
