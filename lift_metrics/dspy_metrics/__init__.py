"""Metric objects that DSPy's evaluators and optimizers accept as they are.

Each class binds configuration (field names, weights, threshold, embedder, sandbox) to a
registered metric's scorer (``lift_metrics.validation.MetricSpec``): :class:`DSPyMetric` for
any registered metric, your own included (``DSPyMetric(name)`` after
:func:`lift_metrics.validation.register_metric`); :class:`IRQuality` and :class:`CodeQuality`
for ``ir_quality`` and ``code_quality``, with their own field keywords and profiles; the
composites for their parts.
Each speaks DSPy's metric protocol
``metric(example, prediction, trace=None, pred_name=None, pred_trace=None)``:

* ``trace is None`` (``dspy.Evaluate``, MIPROv2/COPRO scoring, GEPA's evaluation): the score,
  a float in [0, 1];
* ``trace`` given (``BootstrapFewShot`` and MIPROv2's bootstrapping decide whether a
  demonstration is good enough): ``score >= threshold``, a bool (DSPy counts any truthy value
  as success, so returning the float would accept a score of 0.01). Set the threshold on the
  metric object: ``BootstrapFewShot(metric_threshold=...)`` would only compare that bool.
  To let ``metric_threshold`` decide instead, build the metric with
  ``trace_returns="float"``: it then returns the score under a trace too. Code that fails a
  test of the example is never accepted, whatever its score (``require_all_tests=False``
  leaves it to the threshold);
* ``pred_name`` or ``pred_trace`` given (GEPA asking for feedback on one predictor):
  ``dspy.Prediction(score=..., feedback=...)`` where the feedback lists what lost points
  (sub-metric, failing test with its input and what the code returned or raised, the part
  of the IR that is wrong, violated constraint kinds), addressed to that predictor. It never
  quotes an expected value or the expected IR (:attr:`MetricBreakdown.hints`): a reflection
  LM could copy them into the prompt. ``reveal_expected=True`` opts in to quoting them.

Latency and cost (:class:`EndToEnd`, :class:`Aggregate`) come by default from a
:class:`Measurement` recorded while the program ran, by the project's runner or by
:func:`measured` around your own program (or :func:`record_measurement`), never from the
prediction's ``latency_ms``/``cost_usd`` fields, which the program and its LM outputs can set.
Reading those fields is an opt-in: ``latency_field="latency_ms"``, ``cost_field="cost_usd"``.

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

Importable from here but outside ``__all__``: the result types :class:`MetricBreakdown`
(what a metric object's ``history`` holds) and :class:`Measurement` (what
:func:`measurement_of` returns), and ``TraceReturns``, the type of ``trace_returns``.

``import lift_metrics.dspy_metrics`` does not import dspy; returning feedback does.
"""

from lift_metrics.dspy_metrics._code import CodeQuality
from lift_metrics.dspy_metrics._composite import Aggregate, EndToEnd
from lift_metrics.dspy_metrics._ir import IRQuality
from lift_metrics.dspy_metrics._measured import (
    Measurement as Measurement,
    measured,
    measurement_of,
    record_measurement,
)
from lift_metrics.dspy_metrics._protocol import (
    MetricBreakdown as MetricBreakdown,
    TraceReturns as TraceReturns,
)
from lift_metrics.dspy_metrics._registered import DSPyMetric
from lift_metrics.dspy_metrics._tests import AllTestsPass, TestPassRate

__all__ = [
    "Aggregate",
    "AllTestsPass",
    "CodeQuality",
    "DSPyMetric",
    "EndToEnd",
    "IRQuality",
    "TestPassRate",
    "measured",
    "measurement_of",
    "record_measurement",
]
