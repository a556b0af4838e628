"""Run configurations: a TOML file -> a validated, frozen :class:`RunConfig`.

The shape of the file is a set of pydantic models (one per TOML table, unknown keys
forbidden); everything that can be checked without calling an LM is checked while they
validate, with one line that names the file, the table, the key and what to change. The
optimizer arguments and the ``[lm]`` options are checked against DSPy and the LM option lists
by :mod:`lift_metrics.optimizers._config_checks`; the data-dependent checks (split sizes) and
the LM server check run in :func:`preflight` (:mod:`lift_metrics.optimizers._preflight`),
still before any LM call.

The format is documented in ``optimizers/README.md``. TOML has no null: write ``"none"``
where a DSPy argument should be ``None`` (``auto = "none"``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import inspect
import json
import os
import types
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from lift_metrics._checks import check_path
from lift_metrics._usage import Budget
from lift_metrics.errors import InputValueError
from lift_metrics.optimizers._config_checks import (
    _ALIASES,
    OPTIMIZERS,
    _check_lm_options,
    _check_seed_trap,
    _type_problem,
    _where,
    check_optimizer_arguments,
    pydantic_error_line,
)
from lift_metrics.optimizers._evaluate import MAX_RUNS
from lift_metrics.optimizers._select import MAX_CODE_SAMPLES
from lift_metrics.stats import MAX_RESAMPLES, check_confidence_level

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
]

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


def _none(value: Any) -> Any:
    return None if isinstance(value, str) and value.strip().lower() == "none" else value


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
    pipeline: Mapping[str, Any] = field(default_factory=dict)
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
            "pipeline": dict(self.pipeline),
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
        """Return a copy with some fields changed (``config.replace(output_dir=Path("x"))``)."""
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
        tables = _validate(data, source)
        opt = tables.optimizer
        assert opt.name is not None
        assert tables.lm is not None
        instructions = opt.instructions
        if instructions == "default":
            no_prompt_lm = opt.name == "mipro" and tables.prompt_lm is None
            instructions = "candidates" if no_prompt_lm else "proposed"
        name = tables.name or (source.stem if source is not None else "run")
        return cls(
            name=name,
            optimizer=OptimizerSpec(
                name=opt.name,
                init_args=types.MappingProxyType(opt.init),
                compile_args=types.MappingProxyType(opt.compile),
                instructions=instructions,
            ),
            lm=types.MappingProxyType(tables.lm),
            prompt_lm=None
            if tables.prompt_lm is None
            else types.MappingProxyType(tables.prompt_lm),
            metric=MetricSpec(
                name=tables.metric.name, options=types.MappingProxyType(tables.metric.options)
            ),
            dataset=tables.dataset.spec(),
            evaluation=EvaluationSpec(**tables.evaluation.model_dump()),
            pipeline=types.MappingProxyType(tables.pipeline.model_dump()),
            budget=tables.budget.budget(),
            output_dir=Path(os.path.expanduser(tables.output_dir or f"runs/{name}")),
            cache_dir=None
            if tables.cache_dir is None
            else Path(os.path.expanduser(tables.cache_dir)),
            seed=tables.seed,
            source=source,
        )


# --- the TOML tables -------------------------------------------------------------------------
# Each validator raises ValueError with the whole line (table, key, what to change); the
# errors pydantic finds itself (unknown key, wrong type, out of range) are worded by
# pydantic_error_line in the same style.

_Count = Annotated[int, Field(ge=1)]
_Split = Literal["train", "dev", "test"]
_PathText = Annotated[str, Field(min_length=1)]


class _Table(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class _OptimizerTable(_Table):
    name: str | None = Field(default=None, validate_default=True)
    init: dict[str, Any] = Field(default_factory=dict)
    compile: dict[str, Any] = Field(default_factory=dict)
    instructions: Literal["default", "candidates", "proposed"] = "default"

    @field_validator("name")
    @classmethod
    def _known(cls, value: str | None) -> str:
        if value is None:
            raise InputValueError(f"[optimizer] name is required: one of {', '.join(OPTIMIZERS)}")
        name = _ALIASES.get(value.lower(), value.lower())
        if name not in OPTIMIZERS:
            raise InputValueError(
                f"unknown optimizer {value!r}; choose one of {', '.join(OPTIMIZERS)}"
            )
        return name

    @field_validator("init", "compile")
    @classmethod
    def _nones(cls, value: dict[str, Any]) -> dict[str, Any]:
        return {k: _none(v) for k, v in value.items()}

    @model_validator(mode="after")
    def _dspy_arguments(self) -> _OptimizerTable:
        assert self.name is not None  # the field validator refused None
        check_optimizer_arguments(self.name, self.init, self.compile)
        if self.instructions == "candidates" and self.name != "mipro":
            raise InputValueError(
                '[optimizer] instructions = "candidates" works with MIPROv2 only; '
                f"{OPTIMIZERS[self.name]} writes its instructions with the prompt model "
                "([prompt_lm])"
            )
        return self


class _MetricTable(_Table):
    # the other keys are the metric class's constructor arguments, checked below
    model_config = ConfigDict(extra="allow", strict=True)

    name: str = "end_to_end"

    @property
    def options(self) -> dict[str, Any]:
        return {k: _none(v) for k, v in (self.model_extra or {}).items()}

    @model_validator(mode="after")
    def _constructor_arguments(self) -> _MetricTable:
        if self.name not in METRICS:
            raise InputValueError(
                f"unknown metric {self.name!r}; choose one of {', '.join(METRICS)}"
            )
        import lift_metrics.dspy_metrics as dm

        cls = getattr(dm, METRICS[self.name])
        params = {
            k: p
            for k, p in inspect.signature(cls.__init__).parameters.items()
            if k != "self" and k not in _METRIC_RESERVED
        }
        for key, value in (self.model_extra or {}).items():
            if key not in params:
                raise InputValueError(
                    f"[metric] {METRICS[self.name]} does not accept {key!r}; allowed keys: name, "
                    + ", ".join(sorted(params))
                )
            if isinstance(value, Mapping) or _none(value) is None:
                continue  # weights tables and "none": the constructor validates them below
            problem = _type_problem(_none(value), params[key])
            if problem:
                raise InputValueError(f"[metric] {key} {problem}")
        try:
            cls(**self.options)  # validates weights and threshold; models load on first use
        except (TypeError, ValueError) as exc:
            raise InputValueError(f"[metric] {exc}") from None
        return self


class _DatasetTable(_Table):
    path: _PathText | None = None
    train: _Split = "train"
    val: _Split = "dev"
    test: _Split = "test"
    train_limit: _Count | None = None
    val_limit: _Count | None = None
    test_limit: _Count | None = None

    @model_validator(mode="after")
    def _test_split_unseen(self) -> _DatasetTable:
        if self.test in (self.train, self.val):
            raise InputValueError(
                f"[dataset] test split {self.test!r} is also used for optimizing; "
                "evaluate on a split the optimizer does not see"
            )
        return self

    def spec(self) -> DatasetSpec:
        path = None if self.path is None else Path(os.path.expanduser(self.path))
        return DatasetSpec(**{**self.model_dump(), "path": path})


class _EvaluationTable(_Table):
    runs: Annotated[int, Field(ge=1, le=MAX_RUNS)] = 1
    timeout_s: Annotated[float, Field(gt=0, allow_inf_nan=False)] = 120.0
    num_threads: _Count = 1
    n_resamples: Annotated[int, Field(ge=100, le=MAX_RESAMPLES)] = 10_000
    confidence_level: float = 0.95

    @field_validator("confidence_level")
    @classmethod
    def _level(cls, value: float) -> float:
        try:
            return check_confidence_level(value)
        except (TypeError, ValueError) as exc:
            raise InputValueError(f"[evaluation] {exc}") from None


class _PipelineTable(_Table):
    code_samples: Annotated[int, Field(ge=1, le=MAX_CODE_SAMPLES)] = 1
    sample_temperature: Annotated[float, Field(gt=0, le=2, allow_inf_nan=False)] = 0.8


class _BudgetTable(_Table):
    # Budget's own checks run in budget(); the model only fixes the key names
    max_lm_calls: Any = None
    max_tokens: Any = None
    max_cost_usd: Any = None

    @model_validator(mode="after")
    def _caps(self) -> _BudgetTable:
        self.budget()
        return self

    def budget(self) -> Budget:
        try:
            return Budget(**self.model_dump())
        except (TypeError, ValueError) as exc:
            raise InputValueError(f"[budget]: {exc}") from None


class _ConfigFile(_Table):
    """The top level of a config file; fields in the order they are checked."""

    optimizer: _OptimizerTable = Field(default_factory=dict, validate_default=True)
    seed: Annotated[int, Field(ge=0)] = 7
    lm: Any = Field(default=None, validate_default=True)
    prompt_lm: Any = None
    metric: _MetricTable = Field(default_factory=dict, validate_default=True)
    dataset: _DatasetTable = Field(default_factory=_DatasetTable)
    evaluation: _EvaluationTable = Field(default_factory=_EvaluationTable)
    pipeline: _PipelineTable = Field(default_factory=_PipelineTable)
    budget: _BudgetTable = Field(default_factory=_BudgetTable)
    name: Annotated[str, Field(min_length=1)] | None = None
    output_dir: _PathText | None = None
    cache_dir: _PathText | None = None

    @field_validator("lm", "prompt_lm")
    @classmethod
    def _lm_table(cls, value: Any, info: Any) -> dict[str, Any] | None:
        key = info.field_name
        if value is None:
            if key == "prompt_lm":
                return None
            raise InputValueError(
                '[lm] is missing; add [lm] with model = "local" (or a DSPy model string)'
            )
        if isinstance(value, str):
            value = {"model": value}
        if not isinstance(value, Mapping):
            raise InputValueError(
                f"[{key}] must be a table with a 'model' key, got {type(value).__name__}"
            )
        table = dict(value)
        model = table.setdefault("model", "local")
        if not isinstance(model, str) or not model:
            raise InputValueError(
                f"[{key}] model must be a string ('local', a .gguf path or 'provider/name')"
            )
        if "api_key" in table:
            raise InputValueError(
                f"[{key}] api_key: keep secrets out of config files; set the provider's "
                "environment variable (OPENAI_API_KEY, ...) instead"
            )
        _check_lm_options(key, table)
        return table

    @model_validator(mode="after")
    def _seed_trap(self) -> _ConfigFile:
        opt = self.optimizer
        assert opt.name is not None
        _check_seed_trap(opt.name, opt.init, opt.compile, self.seed)
        return self


# the table each error location points into, for the "allowed keys" of an unknown key
_TABLES: dict[tuple[str, ...], type[BaseModel]] = {
    (): _ConfigFile,
    ("optimizer",): _OptimizerTable,
    ("dataset",): _DatasetTable,
    ("evaluation",): _EvaluationTable,
    ("pipeline",): _PipelineTable,
    ("budget",): _BudgetTable,
}


def _validate(data: Mapping[str, Any], source: Path | None) -> _ConfigFile:
    if not isinstance(data, Mapping):
        raise InputValueError(
            f"{_where(source)}a config must be a table, got {type(data).__name__}"
        )
    try:
        return _ConfigFile.model_validate(dict(data))
    except ValidationError as exc:
        # an unknown key is reported first: it is often the cause of a missing value
        errors = sorted(exc.errors(), key=lambda e: e["type"] != "extra_forbidden")
        raise InputValueError(_where(source) + pydantic_error_line(errors[0], _TABLES)) from None


def build_metric(spec: MetricSpec) -> Any:
    """Construct the DSPy metric object that ``spec`` names.

    Examples
    --------
    >>> build_metric(MetricSpec("ir_quality", {"threshold": 0.6}))
    IRQuality(...threshold=0.6)
    """
    import lift_metrics.dspy_metrics as dm

    return getattr(dm, METRICS[spec.name])(**dict(spec.options))


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
    from lift_metrics._io import TOMLTextError, parse_toml, read_text_file

    file = check_path("path", path)
    text = read_text_file(file, "config file")
    try:
        data = parse_toml(text)
    except TOMLTextError as exc:
        raise InputValueError(f"{file}: not valid TOML: {exc}") from None
    return RunConfig.from_mapping(data, source=file)
