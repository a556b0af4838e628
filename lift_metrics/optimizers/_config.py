"""Run configurations: a TOML file -> a validated, frozen :class:`RunConfig`.

Each TOML table is one frozen pydantic model (unknown keys forbidden, no type coercion), and
that model is also the spec the runner reads: :class:`OptimizerSpec` is ``[optimizer]``,
:class:`MetricSpec` is ``[metric]``, :class:`DatasetSpec` is ``[dataset]``,
:class:`EvaluationSpec` is ``[evaluation]`` and :class:`RunConfig` is the top level.
Everything that can be checked without calling an LM is checked while they validate, with one
line that names the file, the table, the key and what to change. The optimizer arguments and
the ``[lm]`` options are checked against DSPy and the LM option lists by
:mod:`lift_metrics.optimizers._config_checks`; the data-dependent checks (split sizes) and the
LM server check run in :func:`preflight` (:mod:`lift_metrics.optimizers._preflight`), still
before any LM call.

The format is documented in ``optimizers/README.md``. TOML has no null: write ``"none"``
where a DSPy argument should be ``None`` (``auto = "none"``).
"""

from __future__ import annotations

import inspect
import os
import types
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    GetPydanticSchema,
    PrivateAttr,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError, core_schema

from lift_metrics._checks import check_confidence_level, check_path
from lift_metrics._usage import Budget
from lift_metrics.errors import InputTypeError, InputValueError
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
from lift_metrics.optimizers._provenance import json_sha256
from lift_metrics.optimizers._select import MAX_CODE_SAMPLES
from lift_metrics.stats import MAX_RESAMPLES

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


def _optimizer_key(name: Any) -> str | None:
    """Return the key of :data:`OPTIMIZERS` that ``name`` spells (``"MIPROv2"`` -> ``"mipro"``)."""
    return _ALIASES.get(name.lower(), name.lower()) if isinstance(name, str) else None


# --- field types -----------------------------------------------------------------------------
# Each validator raises ValueError with the whole line (table, key, what to change); the
# errors pydantic finds itself (unknown key, wrong type, out of range) are worded by
# pydantic_error_line in the same style.


def _as_path(value: Any) -> Any:
    # a file gives a non-empty string (``~`` is expanded); code may pass a Path
    if isinstance(value, Path):
        return value
    if not isinstance(value, str):
        raise PydanticCustomError("string_type", "Input should be a valid string")
    if not value:
        raise PydanticCustomError("string_too_short", "String should have at least 1 character")
    return Path(os.path.expanduser(value))


def _read_only(value: Mapping[str, Any]) -> Mapping[str, Any]:
    return types.MappingProxyType(dict(value))


def _nones(value: Mapping[str, Any]) -> dict[str, Any]:
    return {k: _none(v) for k, v in value.items()}


def _checked_by(table: type[BaseModel], convert: Callable[[Any], Any]) -> GetPydanticSchema:
    """Validate a field as ``table`` (its keys, types and error locations), then convert it."""
    return GetPydanticSchema(
        lambda _, handler: core_schema.no_info_after_validator_function(convert, handler(table))
    )


_Count = Annotated[int, Field(ge=1)]
_Split = Literal["train", "dev", "test"]
_PathText = Annotated[Path, BeforeValidator(_as_path)]
#: a table of options, stored read-only
_Options = Annotated[Mapping[str, Any], AfterValidator(_read_only)]
#: a table of arguments passed on unchanged, ``"none"`` strings turned into ``None``
_Arguments = Annotated[Mapping[str, Any], AfterValidator(_nones), AfterValidator(_read_only)]


class _Table(BaseModel):
    # Field names are the attribute names; a file's key names are the validation aliases
    # (from_mapping validates by alias only, keyword construction by name too)
    model_config = ConfigDict(
        extra="forbid", strict=True, frozen=True, validate_by_name=True, validate_by_alias=True
    )


class OptimizerSpec(_Table):
    """Which DSPy optimizer to run and the arguments passed to it unchanged (``[optimizer]``).

    ``init_args`` go to the constructor (``dspy.MIPROv2(**init_args)``), ``compile_args`` to
    ``compile``; ``"none"`` strings are already turned into ``None``. In a file they are the
    ``[optimizer.init]`` and ``[optimizer.compile]`` tables. ``instructions`` says where
    MIPROv2's instruction candidates come from: ``"proposed"`` (written by the prompt model,
    DSPy's default) or ``"candidates"`` (the reference pipeline's hand-written candidates, no
    proposer calls). A file may also say ``"default"``, which :class:`RunConfig` resolves:
    ``"candidates"`` for MIPROv2 without ``[prompt_lm]``, ``"proposed"`` otherwise.
    """

    name: str = Field(default=None, validate_default=True)
    init_args: _Arguments = Field(
        default_factory=dict, validate_default=True, validation_alias="init"
    )
    compile_args: _Arguments = Field(
        default_factory=dict, validate_default=True, validation_alias="compile"
    )
    instructions: Literal["candidates", "proposed"] = "proposed"

    @field_validator("name", mode="before")
    @classmethod
    def _known(cls, value: Any) -> Any:
        if value is None:
            raise InputValueError(f"[optimizer] name is required: one of {', '.join(OPTIMIZERS)}")
        name = _optimizer_key(value)
        if name is None:
            return value  # not a string: the type check words it
        if name not in OPTIMIZERS:
            raise InputValueError(
                f"unknown optimizer {value!r}; choose one of {', '.join(OPTIMIZERS)}"
            )
        return name

    @model_validator(mode="after")
    def _dspy_arguments(self) -> OptimizerSpec:
        check_optimizer_arguments(self.name, self.init_args, self.compile_args)
        if self.instructions == "candidates" and self.name != "mipro":
            raise InputValueError(
                '[optimizer] instructions = "candidates" works with MIPROv2 only; '
                f"{OPTIMIZERS[self.name]} writes its instructions with the prompt model "
                "([prompt_lm])"
            )
        return self

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


class MetricSpec(_Table):
    """The metric (a class of :mod:`lift_metrics.dspy_metrics`) and its constructor options.

    In a file the options sit beside the name (``[metric] name = "ir_quality"``,
    ``threshold = 0.6``); in code they are ``options``.
    """

    name: str = "end_to_end"
    options: _Arguments = Field(default_factory=dict, validate_default=True)

    @model_validator(mode="before")
    @classmethod
    def _options_beside_the_name(cls, data: Any, info: ValidationInfo) -> Any:
        if info.context is None or not isinstance(data, dict):
            return data  # keyword construction, or not a table (the type check words it)
        options = {k: v for k, v in data.items() if k != "name"}
        return {**({"name": data["name"]} if "name" in data else {}), "options": options}

    @model_validator(mode="after")
    def _constructor_arguments(self) -> MetricSpec:
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
        for key, value in self.options.items():
            if key not in params:
                raise InputValueError(
                    f"[metric] {METRICS[self.name]} does not accept {key!r}; allowed keys: name, "
                    + ", ".join(sorted(params))
                )
            if isinstance(value, Mapping) or value is None:
                continue  # weights tables and "none": the constructor validates them below
            problem = _type_problem(value, params[key])
            if problem:
                raise InputValueError(f"[metric] {key} {problem}")
        try:
            cls(**self.options)  # validates weights and threshold; models load on first use
        except (TypeError, ValueError) as exc:
            raise InputValueError(f"[metric] {exc}") from None
        return self

    def to_dict(self) -> dict[str, Any]:
        """Plain-dict form for JSON output."""
        return {"name": self.name, **dict(self.options)}


class DatasetSpec(_Table):
    """Task file, split names and per-split limits (``None`` = the whole split)."""

    path: _PathText | None = None
    train: _Split = "train"
    val: _Split = "dev"
    test: _Split = "test"
    train_limit: _Count | None = None
    val_limit: _Count | None = None
    test_limit: _Count | None = None

    @model_validator(mode="after")
    def _test_split_unseen(self) -> DatasetSpec:
        if self.test in (self.train, self.val):
            raise InputValueError(
                f"[dataset] test split {self.test!r} is also used for optimizing; "
                "evaluate on a split the optimizer does not see"
            )
        return self

    def to_dict(self) -> dict[str, Any]:
        """Plain-dict form for JSON output."""
        return self.model_dump()


class EvaluationSpec(_Table):
    """How the test split is evaluated (before and after optimizing) and compared."""

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

    def to_dict(self) -> dict[str, Any]:
        """Plain-dict form for JSON output."""
        return self.model_dump()


class _PipelineTable(_Table):
    # the keys of [pipeline]; RunConfig.pipeline is their read-only mapping (settings())
    code_samples: Annotated[int, Field(ge=1, le=MAX_CODE_SAMPLES)] = 1
    sample_temperature: Annotated[float, Field(gt=0, le=2, allow_inf_nan=False)] = 0.8

    def settings(self) -> Mapping[str, Any]:
        return _read_only(self.model_dump())


class _BudgetTable(_Table):
    # the keys of [budget]; Budget (lift_metrics._usage) checks the values
    max_lm_calls: Any = None
    max_tokens: Any = None
    max_cost_usd: Any = None

    @model_validator(mode="before")
    @classmethod
    def _from_budget(cls, data: Any) -> Any:
        return data.to_dict() if isinstance(data, Budget) else data

    def budget(self) -> Budget:
        try:
            return Budget(**self.model_dump())
        except (TypeError, ValueError) as exc:
            raise InputValueError(f"[budget]: {exc}") from None


#: [pipeline] as the keyword arguments of LiftPipeline, read-only
_Pipeline = Annotated[Mapping[str, Any], _checked_by(_PipelineTable, _PipelineTable.settings)]
#: [budget] as a Budget
_Budget = Annotated[Budget, _checked_by(_BudgetTable, _BudgetTable.budget)]


class RunConfig(_Table):
    """A validated optimizer run configuration (see ``optimizers/README.md``).

    Build it with :func:`load_config` (a TOML file) or :meth:`from_mapping` (a dict in the
    same shape). Relative paths are kept as written and resolved against the current
    directory when the run starts. The fields are in the order a file is checked.
    """

    optimizer: OptimizerSpec = Field(default_factory=dict, validate_default=True)
    seed: Annotated[int, Field(ge=0)] = 7
    lm: _Options = Field(default=None, validate_default=True)
    prompt_lm: _Options | None = None
    metric: MetricSpec = Field(default_factory=dict, validate_default=True)
    dataset: DatasetSpec = Field(default_factory=DatasetSpec)
    evaluation: EvaluationSpec = Field(default_factory=EvaluationSpec)
    pipeline: _Pipeline = Field(default_factory=dict, validate_default=True)
    budget: _Budget = Field(default_factory=Budget)
    name: Annotated[str, Field(min_length=1)]
    output_dir: _PathText = Path("runs")
    cache_dir: _PathText | None = None
    # the file the config was read from: not a key of the file
    _source: Path | None = PrivateAttr(default=None)

    @model_validator(mode="before")
    @classmethod
    def _file_defaults(cls, data: Any, info: ValidationInfo) -> Any:
        # the defaults of a file (from_mapping) that depend on other keys
        if info.context is None or not isinstance(data, dict):
            return data
        source = info.context["source"]
        name = data.get("name", source.stem if source is not None else "run")
        data = {"name": name, "output_dir": f"runs/{name}", **data}
        optimizer = data.get("optimizer", {})
        if isinstance(optimizer, dict) and optimizer.get("instructions", "default") == "default":
            mipro = _optimizer_key(optimizer.get("name")) == "mipro"
            instructions = "candidates" if mipro and data.get("prompt_lm") is None else "proposed"
            data["optimizer"] = {**optimizer, "instructions": instructions}
        return data

    @field_validator("lm", "prompt_lm", mode="before")
    @classmethod
    def _lm_table(cls, value: Any, info: ValidationInfo) -> dict[str, Any] | None:
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
        _check_lm_options(str(key), table)
        return table

    @model_validator(mode="after")
    def _seed_trap(self) -> RunConfig:
        opt = self.optimizer
        _check_seed_trap(opt.name, opt.init_args, opt.compile_args, self.seed)
        return self

    def __repr__(self) -> str:
        return (
            f"RunConfig(name={self.name!r}, optimizer={self.optimizer.class_name}, "
            f"lm={self.lm.get('model')!r}, metric={self.metric.name!r}, "
            f"output_dir='{self.output_dir}')"
        )

    @property
    def source(self) -> Path | None:
        """The TOML file the config was read from (``None`` when built from a mapping)."""
        return self._source

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
        return json_sha256(data)

    @property
    def resolved_cache_dir(self) -> Path:
        """Where DSPy's LM cache lives: ``cache_dir`` or ``<output_dir>/cache``."""
        return self.cache_dir if self.cache_dir is not None else self.output_dir / "cache"

    def replace(self, **changes: Any) -> RunConfig:
        """Return a copy with some fields changed (``config.replace(output_dir=Path("x"))``).

        The new values are not validated again, like :func:`dataclasses.replace`.
        """
        fields = type(self).model_fields
        unknown = sorted(set(changes) - set(fields))
        if unknown:
            raise InputTypeError(
                f"RunConfig has no field {', '.join(unknown)}; fields: {', '.join(fields)}"
            )
        return self.model_copy(update=changes)

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], *, source: Path | None = None) -> RunConfig:
        """Validate a config in the TOML shape (see ``optimizers/README.md``).

        Raises
        ------
        ValueError
            One line naming the first problem and what to change (unknown key, unknown
            optimizer or metric, an argument DSPy does not accept, a DSPy trap).
        """
        if not isinstance(data, Mapping):
            raise InputValueError(
                f"{_where(source)}a config must be a table, got {type(data).__name__}"
            )
        try:
            # by alias only: a file says [optimizer.init], never init_args
            config = cls.model_validate(
                dict(data), context={"source": source}, by_alias=True, by_name=False
            )
        except ValidationError as exc:
            # an unknown key is reported first: it is often the cause of a missing value
            errors = sorted(exc.errors(), key=lambda e: e["type"] != "extra_forbidden")
            line = pydantic_error_line(errors[0], _TABLES)
            raise InputValueError(_where(source) + line) from None
        config._source = source
        return config


# the table each error location points into, for the "allowed keys" of an unknown key
_TABLES: dict[tuple[str, ...], type[BaseModel]] = {
    (): RunConfig,
    ("optimizer",): OptimizerSpec,
    ("dataset",): DatasetSpec,
    ("evaluation",): EvaluationSpec,
    ("pipeline",): _PipelineTable,
    ("budget",): _BudgetTable,
}


def build_metric(spec: MetricSpec) -> Any:
    """Construct the DSPy metric object that ``spec`` names.

    Examples
    --------
    >>> build_metric(MetricSpec(name="ir_quality", options={"threshold": 0.6}))
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
    from lift_metrics._io import parse_toml, read_text_file
    from lift_metrics.errors import TOMLTextError

    file = check_path("path", path)
    text = read_text_file(file, "config file")
    try:
        data = parse_toml(text)
    except TOMLTextError as exc:
        raise InputValueError(f"{file}: not valid TOML: {exc}") from None
    return RunConfig.from_mapping(data, source=file)
