"""DSPy's metric protocol (score, bool under a trace, feedback), the breakdown and history."""

from __future__ import annotations

import collections
import copy
import dataclasses
import hashlib
import inspect
import json
import logging
import threading
import types
from typing import TYPE_CHECKING, Any, Literal, TypeAlias, TypedDict, cast

import lift_metrics._builtin_metrics  # noqa: F401  (registers the built-in metrics)
from lift_metrics._checks import (
    check_bool,
    check_choice,
    check_int,
    check_unit_interval,
)
from lift_metrics._records import format_scores, record_dict
from lift_metrics._registry import registered_metric
from lift_metrics.composite import (
    AggregateBreakdown,
    EndToEndBreakdown,
)
from lift_metrics.ir import (
    IRQualityBreakdown,
)

if TYPE_CHECKING:
    from lift_metrics.sandbox import Sandbox


from lift_metrics.dspy_metrics._cache import _ResultCache
from lift_metrics.dspy_metrics._copying import _EmbedderSettings, _is_bundled_embedder, _is_pool
from lift_metrics.dspy_metrics._feedback import _feedback_text
from lift_metrics.dspy_metrics._fields import (
    _ExampleError,
    _fields_of,
    _inputs_of,
    _read,
    _safe_str,
)

logger = logging.getLogger(__name__)


#: what a metric object returns under a trace (when DSPy bootstraps demonstrations)
TraceReturns: TypeAlias = Literal["bool", "float"]


class _ProtocolOptions(TypedDict, total=False):
    """The keywords of DSPy's protocol that every metric object takes: see :class:`_Metric`."""

    history_size: int
    cache_size: int
    trace_returns: TraceReturns
    reveal_expected: bool


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
        They quote the reference: the expected values of failing tests, the expected IR.
    hints : tuple of str or None
        ``reasons`` without the reference: failing tests with their inputs and what the code
        returned or raised, which part of the IR is wrong quoting only the predicted IR.
        GEPA's feedback shows these unless the metric was built with
        ``reveal_expected=True``. None when the reasons quote no reference.
    all_tests_passed : bool or None
        Whether the code passed every test of the example and returned what the reference
        returns on every generated input it was compared on (the behaviour check): None
        when neither ran; False too when the code could not be run.
        Under a trace (bootstrapping) a False rejects the demonstration by default
        (``require_all_tests``).
    ir, code, end_to_end, aggregate
        The pure metrics' breakdowns where computed (``None`` otherwise).
    result : object or None
        The core's result where it is none of the above (:class:`DSPyMetric`).
    ir_usable : bool or None
        Whether the IR part clears :class:`IRQuality`'s default threshold, where the metric
        checks it (:class:`EndToEnd` and :class:`Aggregate` with ``require_usable_ir``);
        under a trace a False rejects the demonstration.
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
    hints: tuple[str, ...] | None = None
    all_tests_passed: bool | None = None
    ir: IRQualityBreakdown | None = None
    code: Any = None
    end_to_end: EndToEndBreakdown | None = None
    aggregate: AggregateBreakdown | None = None
    result: Any = None
    example_id: str | None = None
    ir_usable: bool | None = None

    def __repr__(self) -> str:
        parts = format_scores(self.components)
        return f"MetricBreakdown({self.metric}, score={self.score:.3f}, {parts})"

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-ready dict."""
        extra = {} if self.result is None else {"result": record_dict(self.result)}
        return record_dict(
            self,
            "metric example_id score components weights reasons hints all_tests_passed ir_usable"
            " ir code aggregate",
            code=self.code.to_dict() if hasattr(self.code, "to_dict") else None,
            **extra,
        )


class _Metric:
    """Shared protocol handling: score / bool / feedback, history, thread safety.

    The constructor owns the keywords of the protocol (their defaults and checks). A metric
    class names its own keywords and passes the rest on as ``**options`` (typed with
    ``Unpack`` of a TypedDict such as :class:`_ProtocolOptions`); :meth:`__init_subclass__`
    gives its constructor the whole signature, so that ``inspect.signature``, ``help()``
    and the run configuration's checks see every keyword with its default.
    """

    #: example/prediction fields of each part, filled in by subclasses
    _part_fields: dict[str, str]
    #: set by the metrics that run code
    sandbox: Sandbox | None
    #: under a trace, reject code that fails a test (the metrics that run code take it)
    require_all_tests: bool = True

    def __init__(
        self,
        *,
        threshold: float | None,
        history_size: int = 256,
        cache_size: int = 4096,
        trace_returns: TraceReturns = "bool",
        reveal_expected: bool = False,
    ) -> None:
        # None: the class's default, set by the subclass once its weights are known
        self.threshold = 0.5 if threshold is None else check_unit_interval("threshold", threshold)
        self.reveal_expected = check_bool("reveal_expected", reveal_expected)
        # one of "bool" and "float" once checked: a TraceReturns
        self.trace_returns = cast(
            TraceReturns, check_choice("trace_returns", trace_returns, ("bool", "float"))
        )
        size = check_int("history_size", history_size, minimum=0)
        self._lock = threading.Lock()
        self._history: collections.deque[MetricBreakdown] = collections.deque(maxlen=size)
        self._cache = _ResultCache(check_int("cache_size", cache_size, minimum=0))
        self._sandbox_spec: dict[str, Any] | None = None  # set on a copy made by pickling

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Give a constructor that ends in ``**options`` the signature it accepts.

        ``**options`` stands for the keyword-only parameters of the parent's constructor
        that the class does not name itself; the signature lists them after its own.
        """
        super().__init_subclass__(**kwargs)
        init: Any = vars(cls).get("__init__")
        if init is None:
            return
        own = inspect.signature(init)
        params = [p for p in own.parameters.values() if p.kind is not p.VAR_KEYWORD]
        if len(params) == len(own.parameters):
            return
        named = {p.name for p in params}
        parent = inspect.signature(super(cls, cls).__init__).parameters.values()
        params += [p for p in parent if p.kind is p.KEYWORD_ONLY and p.name not in named]
        init.__signature__ = own.replace(parameters=params)

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
            from lift_metrics.errors import SandboxUnavailableError

            if isinstance(exc, SandboxUnavailableError):
                raise
            logger.warning("%s raised; scoring 0", type(self).__name__, exc_info=True)
            reason = f"scored 0 because the metric raised {type(exc).__name__}: {_safe_str(exc)}"
            result = MetricBreakdown(self._label(), 0.0, {}, {}, (reason,))
        return dataclasses.replace(result, example_id=self.example_id(example))

    @staticmethod
    def example_id(example: Any) -> str | None:
        """Return the id that breakdowns and history entries carry for ``example``.

        The example's ``id`` field, else its ``task_id`` field (as text), else ``"sha256:"``
        and 16 hex digits of the SHA-256 of its inputs as sorted JSON: the fields named by
        ``dspy.Example.with_inputs``, or all fields when none are named or the example is a
        mapping. The hash does not depend on the process (unlike ``hash``), so ids match
        across threads, processes and runs. None when the example has no readable fields.

        Examples
        --------
        >>> from lift_metrics.dspy_metrics import IRQuality
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

    def _label(self) -> str:
        """Return the metric's name in breakdowns and feedback."""
        return type(self).__name__

    #: attributes that are rebuilt, not copied, by pickling and copy.deepcopy (the scorers
    #: made from the configuration, ``_scorers``, are made again on first use)
    _RUNTIME_STATE = ("_lock", "_history", "_cache", "_sandbox_spec", "_scorers")

    def __getstate__(self) -> dict[str, Any]:
        """Return the configuration: no lock, history, cache or sandbox workers.

        A :class:`~lift_metrics.sandbox.Sandbox` given as ``sandbox`` travels as its settings
        (workers, timeout, memory, isolation, importable packages): the copy starts its own
        pool on first use.
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
                "importable": tuple(getattr(sandbox, "importable", ())),
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
        """Return a copy with its own configuration; the sandbox and the embedder are shared.

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

    def _registered_scorer(self, name: str, **options: Any) -> Any:
        """Return the registered metric ``name``'s scorer with these options, made once.

        The options come from this object's configuration, so a copy makes its own scorer
        from the same settings (``_scorers`` is runtime state).
        """
        scorers: dict[str, Any] = self.__dict__.setdefault("_scorers", {})
        scorer = scorers.get(name)
        if scorer is None:
            scorer = scorers[name] = registered_metric(name).make(**options)
        return scorer

    def _sandbox(self) -> Sandbox | None:
        """Return the sandbox to run code in; a copy made by pickling starts its pool here, once."""
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

        Notes
        -----
        Under a trace, code that fails a test of the example (or disagrees with the
        reference on a generated input) is never accepted while
        ``require_all_tests`` is True (the default): False, or 0.0 with
        ``trace_returns="float"``, whatever the score; nor is an unusable IR where the
        breakdown's ``ir_usable`` is False.
        """
        result = self.breakdown(example, prediction)
        if self._history.maxlen:
            with self._lock:
                self._history.append(result)
        if pred_name is not None or pred_trace is not None:
            import dspy

            feedback = self.feedback(result, pred_name=pred_name, pred_trace=pred_trace)
            return dspy.Prediction(score=result.score, feedback=feedback)
        if trace is not None:
            rejected = (
                self.require_all_tests and result.all_tests_passed is False
            ) or result.ir_usable is False
            if self.trace_returns == "bool":
                return not rejected and result.score >= self.threshold
            return 0.0 if rejected else result.score
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
        return self._parts_of(produced) or None

    def _parts_of(self, produced: set[str]) -> set[str]:
        """Return the parts computed from these prediction fields (``_part_fields``)."""
        return {part for part, field in self._part_fields.items() if field in produced}

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
            Lines from ``result.hints``: no expected value of a test and no text of the
            expected IR, so that a reflection LM cannot copy the answers into the prompt.
            With ``reveal_expected=True`` the lines of ``result.reasons``, which quote them.
        """
        return _feedback_text(
            self._label(),
            self.threshold,
            result,
            pred_name=pred_name,
            relevant_parts=lambda: self._relevant_parts(pred_trace),
            reveal_expected=getattr(self, "reveal_expected", False),
        )


def _threshold_above(ceiling: float) -> float:
    """Return the default bootstrapping threshold: ``ceiling`` + 0.05, within [0.5, 0.99]."""
    return round(min(0.99, max(0.5, ceiling + 0.05)), 4)
