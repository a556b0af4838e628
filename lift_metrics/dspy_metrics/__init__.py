"""Metric objects that DSPy's evaluators and optimizers accept as they are.

Each class binds configuration (field names, weights, threshold, embedder, sandbox) to a pure
metric from this package and speaks DSPy's metric protocol
``metric(example, prediction, trace=None, pred_name=None, pred_trace=None)``:

* ``trace is None`` (``dspy.Evaluate``, MIPROv2/COPRO scoring, GEPA's evaluation): the score,
  a float in [0, 1];
* ``trace`` given (``BootstrapFewShot`` and MIPROv2's bootstrapping decide whether a
  demonstration is good enough): ``score >= threshold``, a bool (DSPy counts any truthy value
  as success, so returning the float would accept a score of 0.01). Set the threshold on the
  metric object: ``BootstrapFewShot(metric_threshold=...)`` would only compare that bool.
  To let ``metric_threshold`` decide instead, build the metric with
  ``trace_returns="float"``: it then returns the score under a trace too;
* ``pred_name`` or ``pred_trace`` given (GEPA asking for feedback on one predictor):
  ``dspy.Prediction(score=..., feedback=...)`` where the feedback lists what lost points
  (sub-metric, failing test with input / expected / actual, violated constraint), addressed to
  that predictor.

A bad prediction (missing field, ``None``, malformed IR, code that is not a string, an
exception inside a sub-metric) never raises: the affected parts score 0 and the reason is kept
in the :class:`MetricBreakdown` and the feedback. A raising metric would count against DSPy's
``max_errors`` and end the whole run. Configuration errors (bad field names, weights,
threshold, profiles) raise at construction; an example that lacks a configured field raises,
naming it.

A calibrated profile (:func:`lift_metrics.validation.load_profile`; ``"shipped"`` for the files
in ``datasets/labels/``) sets the IR and code metrics' weights and their other options
(``similarity_floor``, ``wrong_answer_gate``, ``stub_cap``): ``IRQuality(profile=...)``,
``CodeQuality(profile=...)``, ``EndToEnd(ir_profile=..., code_profile=...)``. Without one the
metrics use their default weights (docs/ir.md, docs/code.md).

All objects are thread-safe (DSPy evaluates in a thread pool): they hold only configuration
and a lock-protected history of recent breakdowns.

They can be pickled (a ``multiprocessing`` pool, ``dspy.Evaluate`` in worker processes) and
copied with ``copy.deepcopy``; a copy keeps every option, profile and weight and starts with
an empty history and cache. ``copy.deepcopy`` shares the embedder and the sandbox (resources,
not configuration); pickling carries a :class:`~lift_metrics.sandbox.Sandbox` given as
``sandbox`` as its settings (workers, timeout, memory, isolation), and the copy starts its own
pool on first use. A :class:`~lift_metrics.similarity.SentenceTransformerEmbedder` travels
as its settings too (the copy loads the model on first use; the process-wide default embedder
becomes the copy's process-wide default); another embedder is pickled as it is.

``import lift_metrics.dspy_metrics`` does not import dspy; returning feedback does.
"""

from __future__ import annotations

import collections
import copy
import dataclasses
import hashlib
import json
import logging
import math
import os
import threading
import types
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from lift_metrics._checks import (
    check_choice,
    check_int,
    check_positive,
    check_unit_interval,
    normalize_weights,
)
from lift_metrics.aggregate import (
    DEFAULT_AGGREGATE_WEIGHTS,
    DEFAULT_COST_CEILING_USD,
    DEFAULT_LATENCY_CEILING_MS,
    AggregateBreakdown,
    aggregate_breakdown,
)
from lift_metrics.code._quality import DEFAULT_CODE_QUALITY_WEIGHTS, score_code
from lift_metrics.end_to_end import (
    DEFAULT_E2E_WEIGHTS,
    DEFAULT_TARGET_MS,
    EndToEndBreakdown,
    _assemble,
)
from lift_metrics.ir import (
    DEFAULT_IR_WEIGHTS,
    IR,
    IRQualityBreakdown,
    ir_quality_breakdown,
    parse_ir,
)

if TYPE_CHECKING:
    from lift_metrics.code import CodeQualityOptions
    from lift_metrics.sandbox import Sandbox
    from lift_metrics.similarity import Embedder
    from lift_metrics.validation import CalibrationProfile

    ProfileLike: TypeAlias = "CalibrationProfile | str | os.PathLike[str]"

#: what a metric object returns under a trace (when DSPy bootstraps demonstrations)
TraceReturns: TypeAlias = Literal["bool", "float"]

__all__ = [
    "Aggregate",
    "AllTestsPass",
    "CodeQuality",
    "EndToEnd",
    "IRQuality",
    "MetricBreakdown",
    "TestPassRate",
]

logger = logging.getLogger(__name__)

_MISSING = object()
_UNCACHEABLE = object()
_MAX_FAILED_TESTS_SHOWN = 5
#: options of a calibrated profile that each metric takes besides ``weights``
_PROFILE_OPTIONS = {
    "ir_quality": ("similarity_floor",),
    "code_quality": ("similarity_floor", "wrong_answer_gate", "stub_cap"),
}


@dataclasses.dataclass(frozen=True, repr=False)
class MetricBreakdown:
    """What a metric object computed for one (example, prediction) pair.

    Attributes
    ----------
    metric : str
        The metric's class name.
    score : float
        The score returned to DSPy, in [0, 1].
    components : dict
        Top-level parts -> score (``ir``, ``code``, ``latency``, ``quality``, ``cost``...).
    weights : dict
        Normalised weights of ``components``.
    reasons : tuple of str
        What lost points, one line each, prefixed with the part (``"ir/signature: ..."``).
        Parts zeroed because of a bad prediction say why (``"code: prediction.code is None"``).
    ir, code, end_to_end, aggregate
        The pure metrics' breakdowns where computed (``None`` otherwise).
    example_id : str or None
        Which example was scored, so that results from DSPy's threads can be matched to
        their examples: the example's ``id`` or ``task_id`` field where it has one, else a
        stable hash of its inputs (see :meth:`IRQuality.example_id`).
    """

    metric: str
    score: float
    components: dict[str, float]
    weights: dict[str, float]
    reasons: tuple[str, ...] = ()
    ir: IRQualityBreakdown | None = None
    code: Any = None
    end_to_end: EndToEndBreakdown | None = None
    aggregate: AggregateBreakdown | None = None
    example_id: str | None = None

    def __repr__(self) -> str:
        parts = ", ".join(f"{k}={v:.3f}" for k, v in self.components.items())
        return f"MetricBreakdown({self.metric}, score={self.score:.3f}, {parts})"

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-ready dict."""
        return {
            "metric": self.metric,
            "example_id": self.example_id,
            "score": self.score,
            "components": dict(self.components),
            "weights": dict(self.weights),
            "reasons": list(self.reasons),
            "ir": self.ir.to_dict() if self.ir is not None else None,
            "code": self.code.to_dict() if hasattr(self.code, "to_dict") else None,
            "aggregate": self.aggregate.to_dict() if self.aggregate is not None else None,
        }


def _is_pool(sandbox: Any) -> bool:
    """Whether ``sandbox`` is this package's worker pool (not a user's stand-in)."""
    from lift_metrics.sandbox import Sandbox

    return isinstance(sandbox, Sandbox)


def _is_bundled_embedder(embedder: Any) -> bool:
    """Whether ``embedder`` is this package's sentence-transformers embedder."""
    from lift_metrics.similarity import SentenceTransformerEmbedder

    return isinstance(embedder, SentenceTransformerEmbedder)


@dataclasses.dataclass(frozen=True)
class _EmbedderSettings:
    """A :class:`~lift_metrics.similarity.SentenceTransformerEmbedder` as it is pickled.

    Its settings, not its locks, cache or loaded model: the copy loads the model on its first
    embedding. The process-wide default embedder is the copy's process-wide default.
    """

    default: bool
    model: str
    batch_size: int
    cache_size: int
    device: str
    backend: str

    @classmethod
    def of(cls, embedder: Any) -> _EmbedderSettings:
        from lift_metrics import similarity

        return cls(
            default=embedder is similarity._default_embedder,
            model=embedder.model_name,
            batch_size=embedder.batch_size,
            cache_size=embedder.cache_size,
            device=embedder.device,
            backend=embedder.backend,
        )

    def build(self) -> Embedder:
        from lift_metrics.similarity import SentenceTransformerEmbedder, get_default_embedder

        if self.default:
            return get_default_embedder()
        return SentenceTransformerEmbedder(
            self.model,
            batch_size=self.batch_size,
            cache_size=self.cache_size,
            device=self.device,
            backend=self.backend,
        )


def _uncacheable(key: Any) -> bool:
    return key is _UNCACHEABLE or (
        isinstance(key, tuple) and any(part is _UNCACHEABLE for part in key)
    )


class _ResultCache:
    """A small thread-safe LRU map from a key to a computed part breakdown."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._data: collections.OrderedDict[Any, Any] = collections.OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Any) -> Any:
        if not self.size or _uncacheable(key):
            return _MISSING
        with self._lock:
            value = self._data.get(key, _MISSING)
            if value is not _MISSING:
                self._data.move_to_end(key)
            return value

    def put(self, key: Any, value: Any) -> None:
        if not self.size or _uncacheable(key):
            return
        with self._lock:
            self._data[key] = value
            self._data.move_to_end(key)
            while len(self._data) > self.size:
                self._data.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._data.clear()

    def __len__(self) -> int:
        with self._lock:
            return len(self._data)


def _cache_key(value: Any) -> Any:
    """A hashable, content-based key for IR/test values (dicts, lists, models, strings).

    :data:`_UNCACHEABLE` for a value with no usable key (nested too deep to encode, or one
    whose ``repr`` raises); a key holding it is never looked up or stored.
    """
    if isinstance(value, str | bytes | int | float | bool) or value is None:
        return value
    try:
        if hasattr(value, "model_dump_json"):
            return ("model", value.model_dump_json())
        try:
            return ("json", json.dumps(value, sort_keys=True, default=repr))
        except (TypeError, ValueError):
            return ("repr", repr(value))
    except Exception:  # RecursionError, or a value whose encoding raises
        return _UNCACHEABLE


class _ExampleError(ValueError):
    """The example (the reference side) cannot be used: a caller's mistake, raised."""


def _safe_str(value: Any, show: Callable[[Any], str] = str, limit: int = 200) -> str:
    """``show(value)`` (``str`` or ``repr``) shortened, or a placeholder when it fails."""
    try:
        text = show(value)
    except Exception:
        return f"<{type(value).__name__} that cannot be shown>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


class _PartFailedError(Exception):
    """A part of the prediction could not be scored; the message is the reason."""


def _check_field(name: str, value: Any, *, optional: bool = False) -> str | None:
    if value is None and optional:
        return None
    if not isinstance(value, str) or not value.isidentifier():
        allowed = "a Python identifier" + (" or None" if optional else "")
        raise ValueError(f"{name} must be {allowed} naming a field, got {value!r}")
    return value


def _check_embedder(embedder: Any) -> Any:
    if embedder is not None and not callable(getattr(embedder, "embed", None)):
        raise TypeError(f"embedder must have an embed(texts) method, got {type(embedder).__name__}")
    return embedder


def _resolve_profile(metric: str, name: str, profile: Any) -> CalibrationProfile:
    """``profile`` (a CalibrationProfile, a path or "shipped") as a profile for ``metric``."""
    from lift_metrics.validation._calibrate import resolve_profile

    return resolve_profile(metric, name, profile)


def _weights_and_options(
    metric: str,
    *,
    weights: Mapping[str, float] | None,
    profile: ProfileLike | None,
    weights_name: str,
    profile_name: str,
    defaults: Mapping[str, float],
) -> tuple[dict[str, float], types.MappingProxyType[str, Any], CalibrationProfile | None]:
    """Normalised weights, the extra options for the pure metric and the resolved profile.

    Without a profile: ``weights`` (or the defaults) and no options, the metric as before.
    With one: its weights and its other options (``similarity_floor``, and for code
    ``wrong_answer_gate`` and ``stub_cap`` where set); ``weights`` must then be None.
    """
    if profile is None:
        # errors name the attribute (ir_weights / code_weights), as they always have
        attribute = "ir_weights" if metric == "ir_quality" else "code_weights"
        return normalize_weights(attribute, weights, defaults), types.MappingProxyType({}), None
    if weights is not None:
        raise ValueError(
            f"give {weights_name} or {profile_name}, not both: the profile's weights replace "
            f"{weights_name}; got {weights_name}={weights!r} and {profile_name}={profile!r}"
        )
    resolved = _resolve_profile(metric, profile_name, profile)
    options = resolved.metric_options()
    fitted = options.pop("weights")
    unknown = sorted(set(options) - set(_PROFILE_OPTIONS[metric]))
    if unknown:
        raise ValueError(
            f"{profile_name} must be a profile for {metric!r}, got one that sets {unknown}, "
            f"which {metric} does not take"
        )
    normalized = normalize_weights(f"{profile_name} weights", fitted, defaults)
    return normalized, types.MappingProxyType(options), resolved


def _fields_of(obj: Any) -> list[str]:
    try:
        if isinstance(obj, Mapping):
            return sorted(map(str, obj))
        keys = getattr(obj, "keys", None)
        if callable(keys):
            return sorted(map(str, keys()))
        if hasattr(obj, "__dict__"):
            return sorted(k for k in vars(obj) if not k.startswith("_"))
    except Exception:  # an odd object; the field list is only for the message
        pass
    return []


def _inputs_of(example: Any) -> dict[str, Any]:
    """The input fields of a ``dspy.Example`` (all fields without ``with_inputs``), as a dict."""
    if isinstance(example, Mapping):
        return {str(k): v for k, v in example.items()}
    if getattr(example, "_input_keys", None):
        example = example.inputs()
    to_dict = getattr(example, "toDict", None)
    if callable(to_dict):
        return dict(to_dict())
    return {k: v for k, v in vars(example).items() if not k.startswith("_")}


def _read(obj: Any, field: str) -> Any:
    """Value of ``field`` in a dspy.Example/Prediction, a mapping or an object; else _MISSING.

    Containers (``dspy.Example`` supports ``in`` and ``[]``) are read by key first, so that a
    field called ``keys`` or ``copy`` is not confused with the method of that name.
    """
    if obj is None:
        return _MISSING
    try:
        if isinstance(obj, Mapping):
            return obj.get(field, _MISSING)
        if hasattr(obj, "__contains__") and hasattr(obj, "__getitem__"):
            return obj[field] if field in obj else _MISSING  # noqa: SIM401 (no .get on Example)
        return getattr(obj, field)
    except Exception:  # a prediction whose field access raises is a bad prediction
        return _MISSING


def _example_field(metric: str, example: Any, field: str) -> Any:
    value = _read(example, field)
    if value is _MISSING:
        raise _ExampleError(
            f"{metric}: the example has no field {field!r} (its fields: {_fields_of(example)}); "
            f"pass the right field name to {metric}(...)"
        )
    return value


def _prediction_field(prediction: Any, field: str) -> Any:
    if prediction is None:
        raise _PartFailedError("the prediction is None")
    value = _read(prediction, field)
    if value is _MISSING:
        raise _PartFailedError(
            f"the prediction has no field {field!r} (its fields: {_fields_of(prediction)})"
        )
    if value is None:
        raise _PartFailedError(f"prediction.{field} is None")
    return value


def _as_tests(metric: str, value: Any) -> list[tuple[dict[str, Any], Any]] | str:
    """Convert data-file tests ``{"inputs": ..., "expected": ...}`` to ``(kwargs, expected)``."""
    if value is None:
        return []
    if isinstance(value, str):
        return value
    if not isinstance(value, Sequence):
        raise _ExampleError(
            f"{metric}: tests must be a list or a check script, got {type(value).__name__}"
        )
    cases: list[tuple[dict[str, Any], Any]] = []
    for index, case in enumerate(value):
        if isinstance(case, Mapping) and set(case) == {"inputs", "expected"}:
            cases.append((dict(case["inputs"]), case["expected"]))
        elif isinstance(case, Sequence) and not isinstance(case, str) and len(case) == 2:
            cases.append((dict(case[0]), case[1]))
        else:
            raise _ExampleError(
                f"{metric}: tests[{index}] must be {{'inputs': ..., 'expected': ...}} "
                f"or an (inputs, expected) pair, got {case!r:.80}"
            )
    return cases


def _short(value: Any, limit: int = 120) -> str:
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _failed_tests(code: Any, entry_point: str | None) -> list[str]:
    execution = getattr(code, "execution", None)
    if execution is None:
        return []
    lines: list[str] = []
    outcomes = [o for o in getattr(execution, "outcomes", ()) if not o.passed]
    for outcome in outcomes[:_MAX_FAILED_TESTS_SHOWN]:
        if outcome.inputs is None:  # the error names the failing assertion and its values
            failure = outcome.error or f"{execution.status}: {execution.reason}"
            lines.append(_short(f"test {outcome.index}: the check script failed: {failure}", 400))
            continue
        else:
            args = ", ".join(f"{k}={v!r}" for k, v in outcome.inputs.items())
            call = f"{entry_point or 'the function'}({args})"
        got = f"raised {outcome.error}" if outcome.error else f"returned {outcome.actual_repr}"
        expected = "" if outcome.inputs is None else f" expected {outcome.expected!r},"
        lines.append(_short(f"test {outcome.index}: {call}{expected} {got}", 300))
    if len(outcomes) > _MAX_FAILED_TESTS_SHOWN:
        lines.append(f"... and {len(outcomes) - _MAX_FAILED_TESTS_SHOWN} more failing tests")
    if not outcomes and getattr(execution, "status", "passed") != "passed":
        lines.append(f"execution {execution.status}: {_short(execution.reason, 300)}")
    return lines


class _Metric:
    """Shared protocol handling: score / bool / feedback, history, thread safety."""

    #: example/prediction fields of each part, filled in by subclasses
    _part_fields: dict[str, str]
    #: set by the metrics that run code
    sandbox: Sandbox | None

    def __init__(
        self,
        *,
        threshold: float | None,
        history_size: int,
        cache_size: int,
        trace_returns: TraceReturns,
    ) -> None:
        # None: the class's default, set by the subclass once its weights are known
        self.threshold = 0.5 if threshold is None else check_unit_interval("threshold", threshold)
        self.trace_returns: TraceReturns = check_choice(  # type: ignore[assignment]
            "trace_returns", trace_returns, ("bool", "float")
        )
        size = check_int("history_size", history_size, minimum=0)
        self._lock = threading.Lock()
        self._history: collections.deque[MetricBreakdown] = collections.deque(maxlen=size)
        self._cache = _ResultCache(check_int("cache_size", cache_size, minimum=0))
        self._sandbox_spec: dict[str, Any] | None = None  # set on a copy made by pickling

    def breakdown(self, example: Any, prediction: Any) -> MetricBreakdown:
        """Score one pair and return the breakdown (never raises for a bad prediction).

        Whatever the prediction is (a value too deep to encode, a number too large for a
        float, an object whose attribute access raises), a failure while scoring it gives
        score 0 with the reason in ``reasons``. Raised: an example the metric cannot use
        (a missing or malformed reference field: a ValueError naming it) and a sandbox that
        cannot run at all (:class:`lift_metrics.sandbox.SandboxUnavailableError`).
        """
        try:
            result = self._breakdown(example, prediction)
        except _ExampleError:
            raise
        except Exception as exc:
            from lift_metrics.sandbox import SandboxUnavailableError

            if isinstance(exc, SandboxUnavailableError):
                raise
            logger.warning("%s raised; scoring 0", type(self).__name__, exc_info=True)
            reason = f"scored 0 because the metric raised {type(exc).__name__}: {_safe_str(exc)}"
            result = MetricBreakdown(type(self).__name__, 0.0, {}, {}, (reason,))
        return dataclasses.replace(result, example_id=self.example_id(example))

    @staticmethod
    def example_id(example: Any) -> str | None:
        """The id that breakdowns and history entries carry for ``example``.

        The example's ``id`` field, else its ``task_id`` field (as text), else ``"sha256:"``
        and 16 hex digits of the SHA-256 of its inputs as sorted JSON: the fields named by
        ``dspy.Example.with_inputs``, or all fields when none are named or the example is a
        mapping. The hash does not depend on the process (unlike ``hash``), so ids match
        across threads, processes and runs. None when the example has no readable fields.

        Examples
        --------
        >>> IRQuality.example_id({"task_id": "HumanEval/3", "prompt": "..."})
        'HumanEval/3'
        >>> IRQuality.example_id({"prompt": "Add a and b."})
        'sha256:6575995b44df3b69'
        """
        for field in ("id", "task_id"):
            value = _read(example, field)
            if isinstance(value, str | int) and not isinstance(value, bool) and value != "":
                return str(value)
        try:
            fields = _inputs_of(example)
            text = json.dumps(fields, sort_keys=True, default=repr, ensure_ascii=False)
        except Exception:  # an odd example: no id rather than a failed score
            return None
        if not fields:
            return None
        digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
        return f"sha256:{digest[:16]}"

    def _breakdown(self, example: Any, prediction: Any) -> MetricBreakdown:
        raise NotImplementedError

    #: attributes that are rebuilt, not copied, by pickling and copy.deepcopy
    _RUNTIME_STATE = ("_lock", "_history", "_cache", "_sandbox_spec")

    def __getstate__(self) -> dict[str, Any]:
        """The configuration, without the lock, the history, the cache or a sandbox's workers.

        A :class:`~lift_metrics.sandbox.Sandbox` given as ``sandbox`` travels as its settings
        (workers, timeout, memory, isolation): the copy starts its own pool on first use.
        """
        state = {k: v for k, v in self.__dict__.items() if k not in self._RUNTIME_STATE}
        state["_history_size"] = self._history.maxlen or 0
        state["_cache_size"] = self._cache.size
        for key in ("_ir_options", "_code_options"):
            if key in state:
                state[key] = dict(state[key])
        spec = getattr(self, "_sandbox_spec", None)
        sandbox = state.get("sandbox")
        if sandbox is not None and _is_pool(sandbox):
            spec = {
                "workers": sandbox.workers,
                "timeout_s": sandbox.timeout_s,
                "memory_mb": sandbox.memory_mb,
                "isolation": sandbox.isolation,
            }
            state["sandbox"] = None
        state["_sandbox_spec"] = spec
        embedder = state.get("embedder")
        if embedder is not None and _is_bundled_embedder(embedder):
            state["embedder"] = _EmbedderSettings.of(embedder)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        """Rebuild from :meth:`__getstate__`: an empty history and cache, a fresh lock."""
        state = dict(state)
        history_size = state.pop("_history_size")
        cache_size = state.pop("_cache_size")
        for key in ("_ir_options", "_code_options"):
            if key in state:
                state[key] = types.MappingProxyType(state[key])
        if isinstance(state.get("embedder"), _EmbedderSettings):
            state["embedder"] = state["embedder"].build()
        self.__dict__.update(state)
        self._lock = threading.Lock()
        self._history = collections.deque(maxlen=history_size)
        self._cache = _ResultCache(cache_size)

    def __deepcopy__(self, memo: dict[int, Any]) -> Any:
        """A copy with its own configuration; the sandbox and the embedder are shared.

        Both are resources (worker processes, a loaded model), thread-safe, and hold no
        configuration of the metric; the history and the cache start empty.
        """
        state = self.__getstate__()
        sandbox = getattr(self, "sandbox", None)
        if sandbox is not None:
            state["sandbox"], state["_sandbox_spec"] = sandbox, None
        for shared in (sandbox, getattr(self, "embedder", None)):
            if shared is not None:
                memo[id(shared)] = shared
        clone = self.__class__.__new__(self.__class__)
        memo[id(self)] = clone
        clone.__setstate__(copy.deepcopy(state, memo))
        return clone

    def _sandbox(self) -> Sandbox | None:
        """The sandbox to run code in; a copy made by pickling starts its pool here, once."""
        spec = getattr(self, "_sandbox_spec", None)
        sandbox = getattr(self, "sandbox", None)
        if sandbox is None and spec is not None:
            from lift_metrics.sandbox import Sandbox

            with self._lock:
                if self.sandbox is None:
                    self.sandbox = Sandbox(**spec)
                sandbox = self.sandbox
        return sandbox

    def __call__(
        self,
        example: Any,
        prediction: Any,
        trace: Any = None,
        pred_name: str | None = None,
        pred_trace: Any = None,
    ) -> Any:
        """Score ``prediction`` against ``example`` in DSPy's metric protocol.

        Returns
        -------
        float, bool or dspy.Prediction
            The score when ``trace`` is None; ``score >= threshold`` when ``trace`` is given
            (the score again with ``trace_returns="float"``);
            ``dspy.Prediction(score=..., feedback=...)`` when ``pred_name`` or
            ``pred_trace`` is given (GEPA).
        """
        result = self.breakdown(example, prediction)
        if self._history.maxlen:
            with self._lock:
                self._history.append(result)
        if pred_name is not None or pred_trace is not None:
            import dspy

            feedback = self.feedback(result, pred_name=pred_name, pred_trace=pred_trace)
            return dspy.Prediction(score=result.score, feedback=feedback)
        if trace is not None and self.trace_returns == "bool":
            return result.score >= self.threshold
        return result.score

    @property
    def history(self) -> tuple[MetricBreakdown, ...]:
        """The most recent breakdowns (up to ``history_size``), oldest first; a snapshot."""
        with self._lock:
            return tuple(self._history)

    def clear_history(self) -> None:
        """Forget the recorded breakdowns."""
        with self._lock:
            self._history.clear()

    def clear_cache(self) -> None:
        """Forget the cached part results (the next calls recompute everything)."""
        self._cache.clear()

    def _relevant_parts(self, pred_trace: Any) -> set[str] | None:
        """Parts whose prediction field the traced predictor produced (None = unknown)."""
        if not pred_trace:
            return None
        produced: set[str] = set()
        try:
            for entry in pred_trace:
                outputs = entry[2]
                produced |= set(_fields_of(outputs))
        except Exception:  # an unexpected trace shape: fall back to "all parts"
            return None
        parts = {part for part, field in self._part_fields.items() if field in produced}
        return parts or None

    def feedback(
        self, result: MetricBreakdown, *, pred_name: str | None = None, pred_trace: Any = None
    ) -> str:
        """Text for GEPA's reflection: the score and every reason it is below 1.

        Parameters
        ----------
        result : MetricBreakdown
        pred_name : str, optional
            The predictor GEPA is improving; the text is addressed to it.
        pred_trace : list, optional
            GEPA's ``[(predictor, inputs, outputs)]``; parts computed from fields this
            predictor produced come first, the rest are marked as context.

        Returns
        -------
        str
        """
        who = f"predictor `{pred_name}`" if pred_name else "the program"
        head = (
            f"Feedback for {who}: {type(self).__name__} score {result.score:.3f} of 1.0 "
            f"(a score >= {self.threshold:.2f} counts as good)."
        )
        if not result.reasons:
            return head + " Nothing lost points: keep this behaviour."
        relevant = self._relevant_parts(pred_trace)
        own: list[str] = []
        other: list[str] = []
        for reason in result.reasons:
            part = reason.split("/", 1)[0].split(":", 1)[0]
            (own if relevant is None or part in relevant else other).append(reason)
        lines = [head]
        weights = ", ".join(
            f"{k} {result.components.get(k, float('nan')):.2f} (weight {w:.2f})"
            for k, w in result.weights.items()
        )
        lines.append(f"Parts: {weights}.")
        if own:
            target = "your outputs" if relevant is not None else "the outputs"
            lines.append(f"What lost points in {target}:")
            lines.extend(f"- {reason}" for reason in own)
        if other:
            lines.append("Also lost points (in outputs of other steps; for context):")
            lines.extend(f"- {reason}" for reason in other)
        return "\n".join(lines)


class _IRPart:
    """Scoring of the IR part, shared by IRQuality, EndToEnd and Aggregate."""

    def _init_ir(
        self,
        *,
        expected_ir_field: str,
        ir_field: str,
        ir_weights: Mapping[str, float] | None,
        ir_profile: ProfileLike | None,
        embedder: Embedder | None,
        names: tuple[str, str] = ("ir_weights", "ir_profile"),
    ) -> None:
        self.expected_ir_field = _check_field("expected_ir_field", expected_ir_field)
        self.ir_field = _check_field("ir_field", ir_field)
        self.ir_weights, self._ir_options, self.ir_profile = _weights_and_options(
            "ir_quality",
            weights=ir_weights,
            profile=ir_profile,
            weights_name=names[0],
            profile_name=names[1],
            defaults=DEFAULT_IR_WEIGHTS,
        )
        self.embedder = _check_embedder(embedder)

    @property
    def ir_options(self) -> Mapping[str, Any]:
        """Options passed to :func:`lift_metrics.ir.ir_quality_breakdown` besides the weights.

        Read-only; empty without a profile (the default metric), ``{"similarity_floor": ...}``
        with one.
        """
        return self._ir_options

    _cache: _ResultCache

    def _expected_ir(self, example: Any, value: Any) -> IR:
        name = type(self).__name__
        try:
            return parse_ir(value)
        except (ValueError, TypeError) as exc:
            raise _ExampleError(
                f"{name}: example.{self.expected_ir_field} is not a valid IR: {exc}"
            ) from exc

    def _score_ir(
        self, example: Any, prediction: Any
    ) -> tuple[IRQualityBreakdown | None, float, str | None]:
        expected_value = _example_field(type(self).__name__, example, str(self.expected_ir_field))
        raw = _read(prediction, str(self.ir_field))
        key = ("ir", _cache_key(expected_value), _cache_key(raw)) if raw is not _MISSING else None
        cached = self._cache.get(key) if key is not None else _MISSING
        if isinstance(cached, IRQualityBreakdown):
            return cached, cached.score, None
        expected = self._expected_ir(example, expected_value)
        try:
            raw = _prediction_field(prediction, str(self.ir_field))
            if not isinstance(raw, IR | Mapping | str | bytes):
                raise _PartFailedError(
                    f"prediction.{self.ir_field} is a {type(raw).__name__}, "
                    "not an IR, dict or JSON text"
                )
            try:
                predicted = parse_ir(raw)
            except ValueError as exc:
                message = f"prediction.{self.ir_field} is not a valid IR: {exc}"
                raise _PartFailedError(message) from exc
            result = ir_quality_breakdown(
                predicted,
                expected,
                weights=self.ir_weights,
                embedder=self.embedder,
                **self._ir_options,
            )
        except _PartFailedError as exc:
            return None, 0.0, f"ir: scored 0 because {exc}"
        except Exception as exc:
            logger.warning("ir_quality raised; scoring the IR part 0", exc_info=True)
            return None, 0.0, f"ir: scored 0 because ir_quality raised {type(exc).__name__}: {exc}"
        if key is not None:
            self._cache.put(key, result)
        return result, result.score, None


class _CodePart:
    """Scoring of the code part, shared by CodeQuality, EndToEnd and Aggregate."""

    _cache: _ResultCache
    _sandbox: Callable[[], Sandbox | None]

    def _init_code(
        self,
        *,
        expected_code_field: str,
        tests_field: str | None,
        entry_point_field: str | None,
        prompt_field: str | None,
        code_field: str,
        code_weights: Mapping[str, float] | None,
        code_profile: ProfileLike | CodeQualityOptions | None,
        embedder: Embedder | None,
        sandbox: Sandbox | None,
        timeout_s: float | None,
        names: tuple[str, str] = ("code_weights", "code_profile"),
    ) -> None:
        from lift_metrics.code import CodeQualityOptions, code_quality_options

        self.expected_code_field = _check_field("expected_code_field", expected_code_field)
        self.tests_field = _check_field("tests_field", tests_field, optional=True)
        self.entry_point_field = _check_field("entry_point_field", entry_point_field, optional=True)
        self.prompt_field = _check_field("prompt_field", prompt_field, optional=True)
        self.code_field = _check_field("code_field", code_field)
        self.timeout_s = None if timeout_s is None else check_positive("timeout_s", timeout_s)
        self.code_profile: CalibrationProfile | None = None
        if isinstance(code_profile, CodeQualityOptions) or code_profile in (
            None,
            "validated",
            "seed",
        ):
            options = code_quality_options(
                code_profile,
                weights=code_weights,
                timeout_s=self.timeout_s,
                name=names[1],
                weights_name="code_weights",  # the attribute's name, as the IR part does
            )
        else:
            _, _, resolved = _weights_and_options(
                "code_quality",
                weights=code_weights,
                profile=code_profile,
                weights_name=names[0],
                profile_name=names[1],
                defaults=DEFAULT_CODE_QUALITY_WEIGHTS,
            )
            self.code_profile = resolved
            options = code_quality_options(resolved, timeout_s=self.timeout_s, name=names[1])
            label = "shipped" if code_profile == "shipped" else options.profile
            options = dataclasses.replace(options, profile=label)
        self.code_quality_options: CodeQualityOptions = options
        self.code_weights: dict[str, float] = dict(options.weights or {})
        self._code_options = types.MappingProxyType(options.metric_options())
        self.embedder = _check_embedder(embedder)
        if sandbox is not None and not callable(getattr(sandbox, "run_tests", None)):
            raise TypeError(f"sandbox must have a run_tests method, got {type(sandbox).__name__}")
        self.sandbox = sandbox

    def _failing_code_ceiling(self) -> float:
        """The most the code part can score when the code fails every test."""
        from lift_metrics.code._quality import FAIL_CEILING

        if self.code_quality_options.validated:
            return FAIL_CEILING
        return 1.0 - self.code_weights.get("tests", 0.0)

    @property
    def code_options(self) -> Mapping[str, Any]:
        """The weighted-sum options besides the weights (read-only).

        Empty for the validated profile and for a weighted sum without them; else
        ``similarity_floor``, ``wrong_answer_gate`` and ``stub_cap`` where set. The whole
        configuration is :attr:`code_quality_options`.
        """
        return self._code_options

    def _code_inputs(self, example: Any) -> tuple[str, Any, str | None, str | None]:
        """(reference, tests, entry point, prompt) from the example; config errors raise."""
        name = type(self).__name__
        expected = _example_field(name, example, str(self.expected_code_field))
        if not isinstance(expected, str):
            raise _ExampleError(
                f"{name}: example.{self.expected_code_field} must be a str, "
                f"got {type(expected).__name__}"
            )
        tests: Any = []
        if self.tests_field is not None:
            tests = _as_tests(name, _example_field(name, example, self.tests_field))
        return expected, tests, *self._task_fields(example)

    def _task_fields(self, example: Any) -> tuple[str | None, str | None]:
        """The optional entry point and prompt of the example (absent: None)."""
        found: list[str | None] = []
        for field in (self.entry_point_field, self.prompt_field):
            value = _MISSING if field is None else _read(example, field)
            if value is _MISSING or value is None or value == "":
                found.append(None)
            elif isinstance(value, str):
                found.append(value)
            else:
                raise _ExampleError(
                    f"{type(self).__name__}: example.{field} must be a str, "
                    f"got {type(value).__name__}"
                )
        return found[0], found[1]

    def _score_code(
        self, example: Any, prediction: Any
    ) -> tuple[Any, float, str | None, str | None]:
        from lift_metrics.code._tests import check_entry_point, normalize_tests
        from lift_metrics.sandbox import SandboxUnavailableError

        expected, tests, entry_point, prompt = self._code_inputs(example)
        try:
            code = _prediction_field(prediction, str(self.code_field))
            if not isinstance(code, str):
                raise _PartFailedError(
                    f"prediction.{self.code_field} is a {type(code).__name__}, not a str"
                )
            key = ("code", code, expected, _cache_key(tests), entry_point, prompt)
            cached = self._cache.get(key)
            if cached is not _MISSING:
                return cached, float(cached.score), None, entry_point
            result = score_code(
                code,
                expected,
                normalize_tests(tests),
                self.code_quality_options,
                entry_point=check_entry_point(entry_point),
                prompt=prompt,
                embedder=self.embedder,
                sandbox=self._sandbox(),
            )
        except _PartFailedError as exc:
            return None, 0.0, f"code: scored 0 because {exc}", entry_point
        except SandboxUnavailableError:
            raise  # the score cannot be computed: an error the caller sees, never a 0
        except Exception as exc:
            logger.warning("code_quality raised; scoring the code part 0", exc_info=True)
            reason = f"code: scored 0 because code_quality raised {type(exc).__name__}: {exc}"
            return None, 0.0, reason, entry_point
        execution = getattr(result, "execution", None)
        if getattr(execution, "status", None) != "crashed":  # a crash may be the machine's fault
            self._cache.put(key, result)
        return result, float(result.score), None, entry_point

    @staticmethod
    def _code_reasons(code: Any, entry_point: str | None, prefix: str) -> list[str]:
        lines = []
        for reason in getattr(code, "reasons", ()) or ():
            lines.append(f"{prefix}{reason}")
            if reason.startswith("tests"):
                lines.extend(f"{prefix}tests: {t}" for t in _failed_tests(code, entry_point))
        return lines


def _threshold_above(ceiling: float) -> float:
    """A default bootstrapping threshold: 0.05 above ``ceiling``, at least 0.5, at most 0.99."""
    return round(min(0.99, max(0.5, ceiling + 0.05)), 4)


def _number_field(prediction: Any, field: str, unit: str) -> tuple[float, str | None]:
    """A non-negative number from the prediction, or (inf, reason) when it is not one."""
    try:
        value = _prediction_field(prediction, field)
    except _PartFailedError as exc:
        return math.inf, str(exc)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return (
            math.inf,
            f"prediction.{field} is {_short(_safe_str(value, repr), 40)}, not a number of {unit}",
        )
    try:
        number = float(value)
    except OverflowError:
        return (
            math.inf,
            f"prediction.{field} is an int too large for a float, not a number of {unit}",
        )
    if math.isinf(number):
        return math.inf, f"prediction.{field} is {number}, not a finite number of {unit}"
    if math.isnan(number) or number < 0:
        return (
            math.inf,
            f"prediction.{field} is {number}, not a non-negative number of {unit}",
        )
    return number, None


class IRQuality(_IRPart, _Metric):
    """:func:`lift_metrics.ir.ir_quality` as a DSPy metric.

    Parameters
    ----------
    expected_ir_field : str, default "expected_ir"
        Example field with the ground-truth IR (IR, dict or JSON text).
    ir_field : str, default "ir"
        Prediction field with the generated IR (IR, dict, or text that :func:`parse_ir`
        accepts: JSON, fenced JSON, JSON after prose).
    weights : mapping, optional
        ``intent``/``signature``/``structure``/``constraints``; default 0.3/0.3/0.2/0.2.
        Normalised to sum to 1 in the attribute ``ir_weights``.
    profile : CalibrationProfile, path or "shipped", optional
        A calibrated ``ir_quality`` profile (:func:`lift_metrics.validation.load_profile`):
        a :class:`~lift_metrics.validation.CalibrationProfile`, the path of a profile file,
        or ``"shipped"`` for ``datasets/labels/calibrated_ir_quality.json``. Its weights
        replace the defaults (giving ``weights`` too is an error) and its other options
        (``similarity_floor``) are passed to :func:`lift_metrics.ir.ir_quality_breakdown`
        on every call; they are in the read-only attribute ``ir_options`` (empty without a
        profile: the default metric). A profile for another metric raises ValueError.
    embedder : Embedder, optional
        For intent similarity; default the bundled all-MiniLM-L6-v2.
    threshold : float, default 0.5
        ``score >= threshold`` is a success when bootstrapping demonstrations.
    history_size : int, default 256
        How many recent breakdowns :attr:`history` keeps (0 keeps none).
    trace_returns : {"bool", "float"}, default "bool"
        What the metric returns when DSPy passes a ``trace`` (bootstrapping demonstrations).
        ``"bool"``: ``score >= threshold``; ``BootstrapFewShot(metric_threshold=...)`` then
        compares that bool (``True >= 0.8`` holds), so only ``threshold`` decides.
        ``"float"``: the score itself, for ``BootstrapFewShot(metric=...,
        metric_threshold=t)`` to compare with ``t``; give ``metric_threshold`` then, since
        DSPy takes any non-zero float as success without one.
    cache_size : int, default 4096
        How many part results to remember. A part (the IR part, the code part) whose inputs
        were scored before - same prediction value, same reference, same tests - is not
        recomputed: optimizers score the same outputs again and again (DSPy caches LM
        answers), and the cache also makes repeated scores identical. 0 disables it (for
        example for generated code whose behaviour is random). Latency and cost are never
        cached.

    Examples
    --------
    >>> ir = {"intent": {"description": "Add a and b."}, "signature": {"name": "add"}}
    >>> metric = IRQuality(weights={"intent": 0, "signature": 1, "structure": 1, "constraints": 1})
    >>> metric({"expected_ir": ir}, {"ir": ir})
    1.0
    >>> metric({"expected_ir": ir}, {"ir": "not json"})
    0.0
    >>> print(metric.history[-1].reasons[0])
    ir: scored 0 because prediction.ir is not a valid IR: no JSON object found in the text ...

    The shipped calibrated profile (fitted weights and a floor for the intent similarity):

    >>> calibrated = IRQuality(profile="shipped")
    >>> dict(calibrated.ir_options), round(calibrated.ir_weights["intent"], 3)
    ({'similarity_floor': 0.44}, 0.474)
    """

    def __init__(
        self,
        *,
        expected_ir_field: str = "expected_ir",
        ir_field: str = "ir",
        weights: Mapping[str, float] | None = None,
        profile: ProfileLike | None = None,
        embedder: Embedder | None = None,
        threshold: float = 0.5,
        history_size: int = 256,
        cache_size: int = 4096,
        trace_returns: TraceReturns = "bool",
    ) -> None:
        _Metric.__init__(
            self,
            threshold=threshold,
            history_size=history_size,
            cache_size=cache_size,
            trace_returns=trace_returns,
        )
        self._init_ir(
            expected_ir_field=expected_ir_field,
            ir_field=ir_field,
            ir_weights=weights,
            ir_profile=profile,
            embedder=embedder,
            names=("weights", "profile"),
        )
        self._part_fields = {"ir": str(self.ir_field)}

    def __repr__(self) -> str:
        return (
            f"IRQuality(expected_ir_field={self.expected_ir_field!r}, ir_field={self.ir_field!r}, "
            f"threshold={self.threshold})"
        )

    def _breakdown(self, example: Any, prediction: Any) -> MetricBreakdown:
        """Score one pair; see the class docstring."""
        ir, score, failure = self._score_ir(example, prediction)
        if ir is not None:
            reasons = tuple(f"ir/{r}" for r in ir.reasons)
            return MetricBreakdown(
                "IRQuality", ir.score, {"ir": ir.score}, {"ir": 1.0}, reasons, ir=ir
            )
        return MetricBreakdown("IRQuality", score, {"ir": score}, {"ir": 1.0}, (str(failure),))


class CodeQuality(_CodePart, _Metric):
    """:func:`lift_metrics.code.code_quality` as a DSPy metric.

    Parameters
    ----------
    expected_code_field : str, default "expected_code"
        Example field with the reference solution (Python source).
    tests_field : str or None, default "tests"
        Example field with the tests: ``[{"inputs": {...}, "expected": ...}, ...]``,
        ``[(kwargs, expected), ...]`` or a ``check(candidate)`` script. None: no tests.
    entry_point_field : str or None, default "entry_point"
        Optional example field naming the function to test (absent: the only top-level one).
    prompt_field : str or None, default "prompt"
        Optional example field with a HumanEval-style prompt (signature and docstring): a
        prediction that does not define the entry function itself is scored as
        ``prompt + prediction`` (a body-only completion). Absent or None: not used.
    code_field : str, default "code"
        Prediction field with the generated code (fences and prose around it are read
        through, :func:`lift_metrics.code.extract_code`).
    profile : str, CodeQualityOptions, CalibrationProfile or path, optional
        ``"validated"`` (the default; see :func:`lift_metrics.code.code_quality`),
        ``"seed"`` (the plain weighted sum), ``"shipped"`` (the calibrated weighted sum in
        ``datasets/labels/calibrated_code_quality.json``), a profile file, a
        :class:`~lift_metrics.validation.CalibrationProfile` or options from
        :func:`lift_metrics.code.code_quality_options`. The whole configuration is in the
        attribute ``code_quality_options``; a calibrated profile itself in ``code_profile``.
        A profile for another metric raises ValueError.
    weights : mapping, optional
        Weighted-sum weights ``syntax``/``tests``/``semantic``/``style``; giving them
        selects the plain weighted sum with them (not with ``"validated"`` or a calibrated
        profile: an error). Normalised in the attribute ``code_weights`` (empty for the
        validated profile).
    embedder, sandbox, timeout_s
        Passed to the scoring core (defaults: the bundled embedder and the process-wide
        sandbox).
    threshold : float, default 0.5
        ``score >= threshold`` accepts a demonstration when bootstrapping. With tests the
        validated score of code that fails every test is at most 0.2, so the default never
        accepts it; code that passes at least about a third of the tests is accepted.
    history_size, cache_size, trace_returns
        As in :class:`IRQuality`.

    Notes
    -----
    A bad prediction (missing, None, not a str) scores 0 with the reason recorded. A
    sandbox that cannot run at all (:class:`lift_metrics.sandbox.SandboxUnavailableError`)
    raises: that is a broken machine, not a bad prediction, and a silent 0 would mislead
    the optimizer.

    Examples
    --------
    A toy embedder here, so that no model is loaded; no tests, so that nothing runs in the
    sandbox. A placeholder scores 0 by default (the reference asks for a function):

    >>> import numpy as np
    >>> class Parallel:  # every text -> the same unit vector: cosine 1
    ...     def embed(self, texts):
    ...         return np.ones((len(texts), 2)) / np.sqrt(2)
    >>> example = {"expected_code": "def add(a, b):\\n    return a + b\\n"}
    >>> stub = {"code": "def add(a, b):\\n    pass\\n"}
    >>> CodeQuality(embedder=Parallel(), tests_field=None)(example, stub)
    0.0
    >>> CodeQuality(embedder=Parallel(), tests_field=None, profile="seed")(example, stub) > 0.9
    True
    >>> calibrated = CodeQuality(profile="shipped", embedder=Parallel(), tests_field=None)
    >>> dict(calibrated.code_options)
    {'similarity_floor': 0.44, 'wrong_answer_gate': True, 'stub_cap': 0.1}
    >>> calibrated(example, stub)
    0.1
    """

    def __init__(
        self,
        *,
        expected_code_field: str = "expected_code",
        tests_field: str | None = "tests",
        entry_point_field: str | None = "entry_point",
        prompt_field: str | None = "prompt",
        code_field: str = "code",
        weights: Mapping[str, float] | None = None,
        profile: ProfileLike | CodeQualityOptions | None = None,
        embedder: Embedder | None = None,
        sandbox: Sandbox | None = None,
        timeout_s: float | None = None,
        threshold: float = 0.5,
        history_size: int = 256,
        cache_size: int = 4096,
        trace_returns: TraceReturns = "bool",
    ) -> None:
        _Metric.__init__(
            self,
            threshold=threshold,
            history_size=history_size,
            cache_size=cache_size,
            trace_returns=trace_returns,
        )
        self._init_code(
            expected_code_field=expected_code_field,
            tests_field=tests_field,
            entry_point_field=entry_point_field,
            prompt_field=prompt_field,
            code_field=code_field,
            code_weights=weights,
            code_profile=profile,
            embedder=embedder,
            sandbox=sandbox,
            timeout_s=timeout_s,
            names=("weights", "profile"),
        )
        self._part_fields = {"code": str(self.code_field)}

    def __repr__(self) -> str:
        return (
            f"CodeQuality(expected_code_field={self.expected_code_field!r}, "
            f"code_field={self.code_field!r}, tests_field={self.tests_field!r}, "
            f"threshold={self.threshold})"
        )

    def _breakdown(self, example: Any, prediction: Any) -> MetricBreakdown:
        """Score one pair; see the class docstring."""
        code, score, failure, entry_point = self._score_code(example, prediction)
        reasons = [failure] if failure else self._code_reasons(code, entry_point, "code/")
        return MetricBreakdown(
            "CodeQuality", score, {"code": score}, {"code": 1.0}, tuple(reasons), code=code
        )


class EndToEnd(_IRPart, _CodePart, _Metric):
    """:func:`lift_metrics.end_to_end.end_to_end` as a DSPy metric (0.4 IR, 0.5 code, 0.1 latency).

    Parameters
    ----------
    expected_ir_field, ir_field
        As in :class:`IRQuality`.
    expected_code_field, tests_field, entry_point_field, code_field
        As in :class:`CodeQuality`.
    latency_field : str or None, default "latency_ms"
        Prediction field with the pipeline latency in ms. None: latency is not scored and the
        IR and code weights are rescaled to sum to 1. A prediction without a usable latency
        scores 0 on latency.
    target_ms : float, default 16000
        Latency budget for :func:`lift_metrics.end_to_end.latency_penalty`.
    weights : mapping, optional
        ``ir``/``code``/``latency``; default 0.4/0.5/0.1. An ``ir`` weight of 0 scores a
        single-step program without an IR: neither the example's ``expected_ir`` field nor
        the prediction's IR is read, the breakdown has no ``ir`` part, and the attribute
        ``scores_ir`` is False.
    ir_weights, code_weights : mapping, optional
        Weights inside the IR and code metrics.
    ir_profile, code_profile : optional
        Profiles of the IR and code parts, as ``profile`` in :class:`IRQuality` and
        :class:`CodeQuality` (``"shipped"`` picks the shipped profile of each metric; the
        code part defaults to ``"validated"``). A calibrated profile replaces
        ``ir_weights``/``code_weights`` (giving both is an error); its other options are in
        the read-only attributes ``ir_options`` and ``code_options``.
    prompt_field
        As in :class:`CodeQuality`.
    threshold : float or None, default None
        ``score >= threshold`` accepts a demonstration when bootstrapping. None: 0.05 above
        the best score an output whose code fails every test can reach with a perfect IR
        and latency (at least 0.5). With the default weights and the validated code
        profile that best is ``0.4 + 0.5 * 0.2 + 0.1 = 0.6``, so the default is 0.65: a
        perfect IR cannot carry failing code into the demonstrations.
    embedder, sandbox, timeout_s, history_size, cache_size, trace_returns
        As in :class:`CodeQuality`.

    Examples
    --------
    >>> EndToEnd().threshold
    0.65
    >>> metric = EndToEnd(ir_profile="shipped", code_profile="shipped")
    >>> dict(metric.ir_options)
    {'similarity_floor': 0.44}
    >>> dict(metric.code_options)
    {'similarity_floor': 0.44, 'wrong_answer_gate': True, 'stub_cap': 0.1}
    """

    def __init__(
        self,
        *,
        expected_ir_field: str = "expected_ir",
        ir_field: str = "ir",
        expected_code_field: str = "expected_code",
        tests_field: str | None = "tests",
        entry_point_field: str | None = "entry_point",
        prompt_field: str | None = "prompt",
        code_field: str = "code",
        latency_field: str | None = "latency_ms",
        target_ms: float = DEFAULT_TARGET_MS,
        weights: Mapping[str, float] | None = None,
        ir_weights: Mapping[str, float] | None = None,
        code_weights: Mapping[str, float] | None = None,
        ir_profile: ProfileLike | None = None,
        code_profile: ProfileLike | CodeQualityOptions | None = None,
        embedder: Embedder | None = None,
        sandbox: Sandbox | None = None,
        timeout_s: float | None = None,
        threshold: float | None = None,
        history_size: int = 256,
        cache_size: int = 4096,
        trace_returns: TraceReturns = "bool",
    ) -> None:
        _Metric.__init__(
            self,
            threshold=threshold,
            history_size=history_size,
            cache_size=cache_size,
            trace_returns=trace_returns,
        )
        self._init_ir(
            expected_ir_field=expected_ir_field,
            ir_field=ir_field,
            ir_weights=ir_weights,
            ir_profile=ir_profile,
            embedder=embedder,
        )
        self._init_code(
            expected_code_field=expected_code_field,
            tests_field=tests_field,
            entry_point_field=entry_point_field,
            prompt_field=prompt_field,
            code_field=code_field,
            code_weights=code_weights,
            code_profile=code_profile,
            embedder=embedder,
            sandbox=sandbox,
            timeout_s=timeout_s,
        )
        self.latency_field = _check_field("latency_field", latency_field, optional=True)
        self.target_ms = check_positive("target_ms", target_ms)
        self.weights = normalize_weights("weights", weights, DEFAULT_E2E_WEIGHTS)
        if self.latency_field is None and self.weights["ir"] + self.weights["code"] <= 0:
            raise ValueError(
                f"weights for 'ir' and 'code' must not both be 0 without latency, got {weights}"
            )
        #: an IR weight of 0: a program without an IR (no IR read from example or prediction)
        self.scores_ir = self.weights["ir"] > 0
        self._part_fields = {"code": str(self.code_field)}
        if self.scores_ir:
            self._part_fields["ir"] = str(self.ir_field)
        if self.latency_field is not None:
            self._part_fields["latency"] = self.latency_field
        if threshold is None:  # Aggregate sets its own once its weights are known
            self.threshold = _threshold_above(EndToEnd._failing_ceiling(self))

    def _failing_ceiling(self) -> float:
        """The best score of an output whose code fails every test (all else perfect)."""
        w = dict(self.weights)
        if self.latency_field is None:
            rest = w["ir"] + w["code"]
            w = {"ir": w["ir"] / rest, "code": w["code"] / rest, "latency": 0.0}
        return w["ir"] + w["latency"] + w["code"] * self._failing_code_ceiling()

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(ir_field={self.ir_field!r}, code_field={self.code_field!r}, "
            f"latency_field={self.latency_field!r}, threshold={self.threshold})"
        )

    def _end_to_end(self, example: Any, prediction: Any) -> tuple[EndToEndBreakdown, float | None]:
        ir: IRQualityBreakdown | None = None
        ir_score, ir_failure = 0.0, None
        if self.scores_ir:
            ir, ir_score, ir_failure = self._score_ir(example, prediction)
        code, code_score, code_failure, entry_point = self._score_code(example, prediction)
        reasons = [r for r in (ir_failure, code_failure) if r]
        latency: float | None = None
        if self.latency_field is not None:
            latency, latency_failure = _number_field(prediction, self.latency_field, "milliseconds")
            if latency_failure:
                reasons.append(f"latency: scored 0 because {latency_failure}")
        result = _assemble(
            ir=ir,
            ir_score=ir_score,
            code=None,  # code reasons are added below with the failing tests spelled out
            code_score=code_score,
            latency_ms=latency,
            target_ms=self.target_ms,
            weights=self.weights,
            reasons=reasons,
        )
        code_lines = self._code_reasons(code, entry_point, "code/")
        result = dataclasses.replace(result, code=code, reasons=result.reasons + tuple(code_lines))
        if not self.scores_ir:  # weight 0: the part is absent, not a 0
            result = dataclasses.replace(
                result,
                components={k: v for k, v in result.components.items() if k != "ir"},
                weights={k: v for k, v in result.weights.items() if k != "ir"},
            )
        return result, latency

    def _breakdown(self, example: Any, prediction: Any) -> MetricBreakdown:
        """Score one pair; see the class docstring."""
        e2e, _ = self._end_to_end(example, prediction)
        return MetricBreakdown(
            "EndToEnd",
            e2e.score,
            dict(e2e.components),
            dict(e2e.weights),
            e2e.reasons,
            ir=e2e.ir,
            code=e2e.code,
            end_to_end=e2e,
        )


class Aggregate(EndToEnd):
    """:func:`lift_metrics.aggregate.aggregate_metric` as a DSPy metric.

    Quality is the mean of the IR, code and end-to-end scores, cost and latency are
    normalised against ceilings (docs/composite.md#aggregate_metric); default weights
    0.7 / 0.2 / 0.1.

    Parameters
    ----------
    cost_field : str, default "cost_usd"
        Prediction field with the request's cost in USD. A prediction without a usable cost
        scores 0 on cost (an unknown cost is not free).
    aggregate_weights : mapping, optional
        ``quality``/``cost``/``latency``; default 0.7/0.2/0.1.
    cost_ceiling_usd : float, default 0.10
    latency_ceiling_ms : float, default 60000
    latency_field : str, default "latency_ms"
        Required here (the aggregate always scores latency).
    weights : mapping, optional
        The end-to-end weights, as in :class:`EndToEnd`. An ``ir`` weight of 0 scores a
        program without an IR: no ``expected_ir`` field is needed, and quality is the mean
        of the code and end-to-end scores (:func:`lift_metrics.aggregate.aggregate_metric`
        with ``ir_score=None``).
    threshold : float or None, default None
        None: 0.05 above the best aggregate an output whose code fails every test can reach
        (perfect IR, free, instant). With the default weights and the validated code
        profile: quality ``(1 + 0.2 + 0.6) / 3 = 0.6``, aggregate ``0.7 * 0.6 + 0.2 + 0.1 =
        0.72``, so the default is 0.77.
    others
        As in :class:`EndToEnd` (``weights`` are the end-to-end weights; ``ir_profile`` and
        ``code_profile`` the profiles of the IR and code parts).

    Examples
    --------
    >>> Aggregate().threshold
    0.77
    """

    def __init__(
        self,
        *,
        expected_ir_field: str = "expected_ir",
        ir_field: str = "ir",
        expected_code_field: str = "expected_code",
        tests_field: str | None = "tests",
        entry_point_field: str | None = "entry_point",
        prompt_field: str | None = "prompt",
        code_field: str = "code",
        latency_field: str = "latency_ms",
        cost_field: str = "cost_usd",
        target_ms: float = DEFAULT_TARGET_MS,
        weights: Mapping[str, float] | None = None,
        aggregate_weights: Mapping[str, float] | None = None,
        ir_weights: Mapping[str, float] | None = None,
        code_weights: Mapping[str, float] | None = None,
        ir_profile: ProfileLike | None = None,
        code_profile: ProfileLike | CodeQualityOptions | None = None,
        cost_ceiling_usd: float = DEFAULT_COST_CEILING_USD,
        latency_ceiling_ms: float = DEFAULT_LATENCY_CEILING_MS,
        embedder: Embedder | None = None,
        sandbox: Sandbox | None = None,
        timeout_s: float | None = None,
        threshold: float | None = None,
        history_size: int = 256,
        cache_size: int = 4096,
        trace_returns: TraceReturns = "bool",
    ) -> None:
        if latency_field is None:
            raise ValueError("latency_field must name a prediction field for Aggregate, got None")
        super().__init__(
            expected_ir_field=expected_ir_field,
            ir_field=ir_field,
            expected_code_field=expected_code_field,
            tests_field=tests_field,
            entry_point_field=entry_point_field,
            prompt_field=prompt_field,
            code_field=code_field,
            latency_field=latency_field,
            target_ms=target_ms,
            weights=weights,
            ir_weights=ir_weights,
            code_weights=code_weights,
            ir_profile=ir_profile,
            code_profile=code_profile,
            embedder=embedder,
            sandbox=sandbox,
            timeout_s=timeout_s,
            threshold=threshold,
            history_size=history_size,
            cache_size=cache_size,
            trace_returns=trace_returns,
        )
        self.cost_field = _check_field("cost_field", cost_field)
        self.aggregate_weights = normalize_weights(
            "aggregate_weights", aggregate_weights, DEFAULT_AGGREGATE_WEIGHTS
        )
        self.cost_ceiling_usd = check_positive("cost_ceiling_usd", cost_ceiling_usd)
        self.latency_ceiling_ms = check_positive("latency_ceiling_ms", latency_ceiling_ms)
        self._part_fields["cost"] = str(self.cost_field)
        if threshold is None:
            self.threshold = _threshold_above(self._failing_ceiling())

    def _failing_ceiling(self) -> float:
        """The best aggregate of an output whose code fails every test (all else perfect)."""
        e2e = EndToEnd._failing_ceiling(self)
        parts = [self._failing_code_ceiling(), e2e] + ([1.0] if self.scores_ir else [])
        quality = sum(parts) / len(parts)
        w = self.aggregate_weights
        return w["quality"] * quality + w["cost"] + w["latency"]

    def _breakdown(self, example: Any, prediction: Any) -> MetricBreakdown:
        """Score one pair; see the class docstring."""
        e2e, latency = self._end_to_end(example, prediction)
        cost, cost_failure = _number_field(prediction, str(self.cost_field), "US dollars")
        agg = aggregate_breakdown(
            e2e.components.get("ir"),  # absent with an IR weight of 0
            e2e.components["code"],
            e2e.score,
            cost,
            math.inf if latency is None else latency,
            weights=self.aggregate_weights,
            cost_ceiling_usd=self.cost_ceiling_usd,
            latency_ceiling_ms=self.latency_ceiling_ms,
        )
        reasons = list(e2e.reasons)
        if cost_failure:
            reasons.append(f"cost: scored 0 because {cost_failure}")
        elif agg.components["cost"] < 1.0:
            reasons.append(
                f"cost: ${cost:.4f} per request (score {agg.components['cost']:.3f}; "
                f"${self.cost_ceiling_usd:.2f} scores 0)"
            )
        return MetricBreakdown(
            "Aggregate",
            agg.score,
            dict(agg.components),
            dict(agg.weights),
            tuple(reasons),
            ir=e2e.ir,
            code=e2e.code,
            end_to_end=e2e,
            aggregate=agg,
        )


class TestPassRate(_CodePart, _Metric):
    """The share of tests a prediction's code passes, as a DSPy metric (pass@1 as objective).

    The code is read as :func:`lift_metrics.code.code_quality` reads it (fences and prose
    removed, ``prompt + answer`` for a body-only completion) and run in the sandbox; an
    answer that is not code (:func:`lift_metrics.code.degenerate_kind`) is not run and scores
    0. No reference is needed. For GEPA the feedback lists each failing test: input, expected
    and actual value for I/O cases, the failing assertion and its values for a check script.

    Parameters
    ----------
    tests_field : str, default "tests"
        Example field with the tests, as in :class:`CodeQuality`. An example without tests
        raises ValueError: a pass rate without tests is not a number (never a pass).
    entry_point_field, prompt_field, code_field, sandbox, timeout_s
        As in :class:`CodeQuality`.
    threshold : float, default 1.0
        ``score >= threshold`` accepts a demonstration when bootstrapping: by default only
        code that passes every test.
    history_size, cache_size, trace_returns
        As in :class:`IRQuality`.

    Notes
    -----
    ``score = k / n`` for ``k`` of ``n`` tests passed (a check script is one test). A
    timeout, crash, ``sys.exit``, memory blow-up or missing entry point fails the tests; a
    sandbox that cannot run at all raises :class:`lift_metrics.sandbox.
    SandboxUnavailableError`.

    Examples
    --------
    >>> example = {"tests": [{"inputs": {"a": 1, "b": 2}, "expected": 3},
    ...                      {"inputs": {"a": 0, "b": 0}, "expected": 0}]}
    >>> metric = TestPassRate()
    >>> metric(example, {"code": "def add(a, b):\\n    return a * b\\n"})
    0.5
    >>> metric(example, {"code": "{code}"})
    0.0
    >>> AllTestsPass()(example, {"code": "```python\\ndef add(a, b):\\n    return a + b\\n```"})
    1.0
    """

    __test__ = False  # pytest: not a test class
    _strict = False

    def __init__(
        self,
        *,
        tests_field: str = "tests",
        entry_point_field: str | None = "entry_point",
        prompt_field: str | None = "prompt",
        code_field: str = "code",
        sandbox: Sandbox | None = None,
        timeout_s: float | None = None,
        threshold: float = 1.0,
        history_size: int = 256,
        cache_size: int = 4096,
        trace_returns: TraceReturns = "bool",
    ) -> None:
        _Metric.__init__(
            self,
            threshold=threshold,
            history_size=history_size,
            cache_size=cache_size,
            trace_returns=trace_returns,
        )
        self.tests_field = _check_field("tests_field", tests_field)
        self.entry_point_field = _check_field("entry_point_field", entry_point_field, optional=True)
        self.prompt_field = _check_field("prompt_field", prompt_field, optional=True)
        self.code_field = _check_field("code_field", code_field)
        self.timeout_s = None if timeout_s is None else check_positive("timeout_s", timeout_s)
        if sandbox is not None and not callable(getattr(sandbox, "run_tests", None)):
            raise TypeError(f"sandbox must have a run_tests method, got {type(sandbox).__name__}")
        self.sandbox = sandbox
        self._part_fields = {"tests": str(self.code_field)}

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(tests_field={self.tests_field!r}, "
            f"code_field={self.code_field!r}, threshold={self.threshold})"
        )

    def _run(self, example: Any, prediction: Any) -> tuple[Any, str | None, str | None]:
        from lift_metrics.code._quality import run_answer
        from lift_metrics.code._tests import check_entry_point, normalize_tests
        from lift_metrics.sandbox import SandboxUnavailableError

        name = type(self).__name__
        tests = normalize_tests(
            _as_tests(name, _example_field(name, example, str(self.tests_field)))
        )
        if tests.count == 0:
            raise _ExampleError(
                f"{name}: example.{self.tests_field} holds no tests; a pass rate needs tests "
                "(no tests is absent evidence, never a pass)"
            )
        entry_point, prompt = self._task_fields(example)
        try:
            code = _prediction_field(prediction, str(self.code_field))
            if not isinstance(code, str):
                raise _PartFailedError(
                    f"prediction.{self.code_field} is a {type(code).__name__}, not a str"
                )
            key = ("tests", code, _cache_key(tests.payload()), entry_point, prompt)
            cached = self._cache.get(key)
            if cached is not _MISSING:
                return cached, None, entry_point
            result = run_answer(
                code,
                tests,
                entry_point=check_entry_point(entry_point),
                prompt=prompt,
                sandbox=self._sandbox(),
                timeout_s=self.timeout_s,
            )
        except _PartFailedError as exc:
            return None, f"tests: scored 0 because {exc}", entry_point
        except SandboxUnavailableError:
            raise  # the score cannot be computed: an error the caller sees, never a 0
        except Exception as exc:
            logger.warning("the tests raised; scoring 0", exc_info=True)
            return None, f"tests: scored 0 because {type(exc).__name__}: {exc}", entry_point
        if getattr(result.execution, "status", None) != "crashed":
            self._cache.put(key, result)
        return result, None, entry_point

    def _breakdown(self, example: Any, prediction: Any) -> MetricBreakdown:
        """Score one pair; see the class docstring."""
        result, failure, entry_point = self._run(example, prediction)
        if result is None:
            score = 0.0
            reasons = [str(failure)]
        else:
            rate = float(result.score)
            score = (1.0 if rate >= 1.0 else 0.0) if self._strict else rate
            reasons = self._code_reasons(result, entry_point, "")
            if self._strict and score < 1.0 and result.tests_total:
                reasons.insert(
                    0,
                    f"tests: {result.tests_passed} of {result.tests_total} passed; "
                    "every test must pass",
                )
        name = type(self).__name__
        return MetricBreakdown(
            name, score, {"tests": score}, {"tests": 1.0}, tuple(reasons), code=result
        )


class AllTestsPass(TestPassRate):
    """1.0 when a prediction's code passes every test, else 0.0 (strict pass@1), for DSPy.

    Parameters and reading of the code are those of :class:`TestPassRate`; the feedback
    lists the failing tests in the same way.

    Examples
    --------
    >>> example = {"tests": "def check(candidate):\\n    assert candidate(2) == 4\\n",
    ...            "entry_point": "double"}
    >>> AllTestsPass()(example, {"code": "def double(x):\\n    return x + 2\\n"})
    1.0
    >>> AllTestsPass()(example, {"code": "def double(x):\\n    return x * 3\\n"})
    0.0
    """

    __test__ = False
    _strict = True
