r"""Scoring generation files: samples x tasks -> per-sample verdicts and pass@k.

:func:`score_samples` runs every sample of a human-eval / EvalPlus JSON Lines file against
its task's tests in the sandbox, writes one result line per sample (resumable: a rerun
skips what is already scored) and returns pass@k with bootstrap intervals over tasks. The
jobs go through a :class:`ScoringBackend`; :class:`LocalBackend` runs them on this machine.
:class:`RayBackend` runs them on a Ray cluster. :func:`load_scoring_tasks` reads the tasks
(HumanEval, the shipped tasks, or a file). ``lift-metrics score`` is the command-line
form. :func:`humaneval_examples` and :func:`mbpp_examples` build ``dspy.Example`` objects for
the metric objects, and :func:`score_program` samples a DSPy program n times per example and
reports pass@k through the same path.

Importable from here but outside ``__all__``: the result types ``SampleResult``,
``ScoreSummary`` and ``TaskCount``; the file names ``RESULTS_NAME`` and ``SUMMARY_NAME``;
the helper ``assert_lines_script``; ``load_tasks``, another name for
:func:`load_scoring_tasks` (the shipped tasks as ``dspy.Example`` objects are
:func:`lift_metrics.optimizers.load_tasks`); and ``SampleError``, whose home is
:mod:`lift_metrics.errors`.

>>> from lift_metrics.scoring import score_samples
>>> score_samples([{"task_id": "t001", "solution": "def add(a, b):\n    return a + b\n"}],
...               "project").pass_at_k
{'pass@1': 1.0}
"""

from __future__ import annotations

from lift_metrics.errors import SampleError as SampleError
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
from lift_metrics.scoring._results import RESULTS_NAME as RESULTS_NAME, SampleResult as SampleResult
from lift_metrics.scoring._samples import Sample, load_samples
from lift_metrics.scoring._score import score_samples
from lift_metrics.scoring._summary import (
    SUMMARY_NAME as SUMMARY_NAME,
    ScoreSummary as ScoreSummary,
    TaskCount as TaskCount,
    summarize_results,
)
from lift_metrics.scoring._tasks import (
    ScoringTask,
    assert_lines_script as assert_lines_script,
    load_scoring_tasks,
)

load_tasks = load_scoring_tasks

__all__ = [
    "JobResult",
    "LocalBackend",
    "RayBackend",
    "Sample",
    "ScoringBackend",
    "ScoringJob",
    "ScoringTask",
    "execute_job",
    "humaneval_examples",
    "load_samples",
    "load_scoring_tasks",
    "mbpp_examples",
    "sample_program",
    "score_program",
    "score_samples",
    "summarize_results",
    "tasks_from_examples",
]
