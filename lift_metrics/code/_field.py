"""The field's reference-based code metrics: chrF, BLEU, CodeBLEU and exact match.

These are the scores papers on code generation report, kept here so that this package's
metrics can be shown next to them (``lift-metrics validate`` adds them as extra rows). chrF
and BLEU come from ``sacrebleu`` and CodeBLEU from the ``codebleu`` package; both load on the
first call, not on ``import lift_metrics``.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from lift_metrics.code._features import check_code

if TYPE_CHECKING:
    from sacrebleu.metrics.base import Metric

_LOCK = threading.Lock()


@functools.cache
def _chrf() -> Metric:
    from sacrebleu.metrics.chrf import CHRF

    return CHRF()  # character 6-grams, beta 2, no word n-grams: chrF as in sacrebleu


@functools.cache
def _bleu() -> Metric:
    from sacrebleu.metrics.bleu import BLEU

    return BLEU(effective_order=True)  # sentence BLEU: orders with no n-gram are skipped


def _sentence_score(metric: Callable[[], Metric], predicted: str, expected: str) -> float:
    """Return a sacrebleu metric's sentence score (0-100) of one pair, in [0, 1]."""
    predicted = check_code("predicted", predicted)
    expected = check_code("expected", expected)
    with _LOCK:  # sacrebleu metric objects cache references: not thread-safe
        value = metric().sentence_score(predicted, [expected]).score
    return min(1.0, max(0.0, float(value) / 100.0))


def chrf_score(predicted: str, expected: str) -> float:
    """Character n-gram F-score (chrF, sacrebleu's defaults) of ``predicted`` against ``expected``.

    Parameters
    ----------
    predicted, expected : str
        Generated text and the reference.

    Returns
    -------
    float
        In [0, 1] (sacrebleu reports 0-100; divided by 100 here).

    Raises
    ------
    TypeError
        If either argument is not a str.

    Notes
    -----
    Popović (2015): the F-beta score (beta = 2, recall weighted twice) of character 1- to
    6-grams, whitespace ignored. Among the classical metrics it agrees best with programmers'
    grades of code snippets (Evtikhiev et al. 2023; see ``datasets/conala/README.md``).

    Examples
    --------
    >>> chrf_score("os.kill(os.getpid(), 9)", "os.kill(os.getpid(), 9)")
    1.0
    >>> round(chrf_score("os.getpid()", "os.kill(os.getpid(), 9)"), 3)
    0.487
    """
    return _sentence_score(_chrf, predicted, expected)


def bleu_score(predicted: str, expected: str) -> float:
    """Sentence BLEU (sacrebleu, 13a tokenizer, exponential smoothing) in [0, 1].

    Parameters
    ----------
    predicted, expected : str
        As in :func:`chrf_score`.

    Returns
    -------
    float
        In [0, 1] (sacrebleu's 0-100 divided by 100).

    Raises
    ------
    TypeError
        As in :func:`chrf_score`.

    Notes
    -----
    Papineni et al. (2002) with ``effective_order=True``, as sacrebleu recommends for single
    sentences: n-gram orders longer than the hypothesis are left out instead of zeroing the
    score.

    Examples
    --------
    >>> bleu_score("x = sorted(a, key=len)", "x = sorted(a, key=len)")
    1.0
    >>> bleu_score("", "x = 1")
    0.0
    """
    return _sentence_score(_bleu, predicted, expected)


def exact_match(predicted: str, expected: str) -> float:
    r"""1.0 when the two texts are equal after stripping surrounding whitespace, else 0.0.

    Parameters
    ----------
    predicted, expected : str

    Returns
    -------
    float
        1.0 or 0.0.

    Raises
    ------
    TypeError
        If either argument is not a str.

    Examples
    --------
    >>> exact_match("x = 1\n", "x = 1"), exact_match("x=1", "x = 1")
    (1.0, 0.0)
    """
    predicted = check_code("predicted", predicted)
    expected = check_code("expected", expected)
    return 1.0 if predicted.strip() == expected.strip() else 0.0


def codebleu_available() -> bool:
    """Whether the optional ``codebleu`` package (with ``tree-sitter-python``) is importable.

    Returns
    -------
    bool
        True when :func:`codebleu_score` can run.

    Examples
    --------
    >>> isinstance(codebleu_available(), bool)
    True
    """
    import importlib.util

    return (
        importlib.util.find_spec("codebleu") is not None
        and importlib.util.find_spec("tree_sitter_python") is not None
    )


def codebleu_score(predicted: str, expected: str) -> float:
    """CodeBLEU (Ren et al. 2020, the ``codebleu`` package) of Python code, in [0, 1].

    Parameters
    ----------
    predicted, expected : str
        Generated code and the reference code.

    Returns
    -------
    float
        The equal-weight mean of BLEU, keyword-weighted BLEU, syntax-tree match and data-flow
        match, as the package computes it.

    Raises
    ------
    TypeError
        If either argument is not a str.
    ImportError
        If ``codebleu`` or ``tree-sitter-python`` is not installed (``pip install
        'lift-metrics[codebleu]'``).

    Notes
    -----
    The package finds no data flow in a snippet without assignments and scores that part 0,
    so a one-line expression scores below 1 even against itself (0.64 for
    ``os.kill(os.getpid(), 9)``). It is slow next to chrF (a tree-sitter parse of both sides
    per call). The package's warning about missing data flow (on the root logger) is silenced
    during the call.

    Examples
    --------
    >>> if codebleu_available():
    ...     print(round(codebleu_score("y = x + 1", "y = x + 1"), 3))
    ... else:
    ...     print(1.0)
    1.0
    """
    predicted = check_code("predicted", predicted)
    expected = check_code("expected", expected)
    if not codebleu_available():
        raise ImportError(
            "codebleu_score needs the codebleu and tree-sitter-python packages: "
            "pip install 'lift-metrics[codebleu]'"
        )
    import logging

    from codebleu import calc_codebleu

    # codebleu calls logging.warning() for every snippet without data flow; that would also
    # configure the root logger (basicConfig) when it has no handler. A temporary NullHandler
    # and level keep both from happening.
    root = logging.getLogger()
    guard = logging.NullHandler()
    with _LOCK:
        level = root.level
        root.addHandler(guard)
        root.setLevel(logging.ERROR)
        try:
            result = calc_codebleu([expected], [predicted], lang="python")
        finally:
            root.setLevel(level)
            root.removeHandler(guard)
    return min(1.0, max(0.0, float(result["codebleu"])))
