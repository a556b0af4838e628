"""The no-test score: how useful generated code is, judged against a reference only.

A small calibrated model over similarity features (embedding cosine, chrF and its recall, token
edit similarity, token recall and coverage, called-name and literal overlap, syntax-tree node
bag, BLEU, length, parse and ``<unk>`` indicators) of the two texts as they run (comments,
docstrings and unreachable statements dropped first: ``lift_metrics/code/_executed.py``). It has
two parts: one for snippets, fitted to programmers' grades of CoNaLa snippets
(``datasets/conala/README.md``), one for references that are functions or function bodies,
fitted to execution verdicts of HumanEval completions; the features of each part were chosen
on both sets together (``benchmarks/fit_reference_model.py`` writes
``lift_metrics/code/reference_model.json`` with :func:`fit_reference_model`). At run time it is
plain numpy: a non-negative linear combination of the features, then a monotone piecewise-linear
map to [0, 1].
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from lift_metrics.code._features import check_code
from lift_metrics.code._reference_features import (
    REFERENCE_FEATURES,
    _check_pairs,
    reference_feature_matrix,
    same_program,
)
from lift_metrics.similarity import Embedder

DEGENERATE_CAP = 0.05
"""The most an empty, placeholder or prose prediction can score."""


def reference_model_path() -> Path:
    """Path of the fitted model shipped with the package (``reference_model.json``).

    Examples
    --------
    >>> reference_model_path().name
    'reference_model.json'
    """
    return Path(__file__).resolve().parent / "reference_model.json"


@functools.cache
def _model() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(reference_model_path().read_text(encoding="utf-8"))
    missing = [name for name in data["features"] if name not in REFERENCE_FEATURES]
    if missing:  # pragma: no cover - the shipped file is written by fit_reference_model
        raise ValueError(f"{reference_model_path()}: unknown features {missing}")
    return data


@dataclass(frozen=True)
class ReferenceScoreBreakdown:
    """The no-test score of one prediction and what it is made of.

    Attributes
    ----------
    score : float
        In [0, 1].
    features : mapping of str to float
        Every feature in :data:`REFERENCE_FEATURES` (empty when the prediction is degenerate).
    reasons : tuple of str
        Why the score is what it is where that is not plain similarity: a degenerate
        prediction, a side that does not parse (features that need a syntax tree fell back
        to tokens), ``<unk>`` tokens.
    degenerate : str or None
        ``"empty"``, ``"placeholder"``, ``"prose"`` or ``"comments"`` (nothing left once
        comments and bare strings are dropped) when the prediction is not code (its score is
        capped at 0.05), ``"too long"`` when it is over ``MAX_CODE_CHARS`` (100,000
        characters: not analysed, scored 0), else None.
    """

    score: float
    features: Mapping[str, float] = field(default_factory=dict)
    reasons: tuple[str, ...] = ()
    degenerate: str | None = None


def _linear(matrix: np.ndarray, part: Mapping[str, Any]) -> np.ndarray:
    columns = [REFERENCE_FEATURES.index(name) for name in part["features"]]
    weights = np.asarray(part["weights"], dtype=np.float64)
    return np.asarray(matrix[:, columns] @ weights + float(part["intercept"]), dtype=np.float64)


def _apply_model(matrix: np.ndarray, model: Mapping[str, Any]) -> np.ndarray:
    """Return the model's score of each feature row: linear combination, then the monotone map.

    A model with a ``"function"`` part uses that part's weights and map on rows whose reference
    is a function or a function body (the ``function`` feature), the top-level ones elsewhere.
    """
    scores = _calibrated(_linear(matrix, model), model["calibration"])
    if "function" in model:
        part = matrix[:, REFERENCE_FEATURES.index("function")] >= 0.5
        if part.any():
            function = model["function"]
            scores[part] = _calibrated(_linear(matrix[part], function), function["calibration"])
    return scores


def _calibrated(linear: np.ndarray, calibration: Mapping[str, Any]) -> np.ndarray:
    knots_x = np.asarray(calibration["x"], dtype=np.float64)
    knots_y = np.asarray(calibration["y"], dtype=np.float64)
    return np.asarray(np.clip(np.interp(linear, knots_x, knots_y), 0.0, 1.0), dtype=np.float64)


def _breakdowns(
    predicted: Sequence[str], expected: Sequence[str], embedder: Embedder | None
) -> list[ReferenceScoreBreakdown]:
    matrix, kinds, reasons = reference_feature_matrix(predicted, expected, embedder=embedder)
    scores = _apply_model(matrix, _model()) if len(kinds) else np.zeros(0)
    out: list[ReferenceScoreBreakdown] = []
    for i, kind in enumerate(kinds):
        if kind is not None:
            out.append(
                ReferenceScoreBreakdown(
                    score=0.0, features={}, reasons=tuple(reasons[i]), degenerate=kind
                )
            )
            continue
        score = float(scores[i])
        if predicted[i].strip() == expected[i].strip():
            score = 1.0
            reasons[i].append("the prediction equals the reference")
        elif same_program(predicted[i], expected[i]):
            score = 1.0
            reasons[i].append(
                "the prediction is the reference's program (comments, docstrings, unreachable "
                "code and layout aside)"
            )
        features = {name: float(matrix[i, k]) for k, name in enumerate(REFERENCE_FEATURES)}
        out.append(
            ReferenceScoreBreakdown(score=score, features=features, reasons=tuple(reasons[i]))
        )
    return out


def reference_score_breakdown(
    predicted: str, expected: str, *, embedder: Embedder | None = None
) -> ReferenceScoreBreakdown:
    """:func:`reference_score` with its features and the reasons behind it.

    Parameters
    ----------
    predicted, expected : str
        Generated code and the reference code (fragments and unparseable code are fine).
    embedder : Embedder, optional
        Default the bundled all-MiniLM-L6-v2.

    Returns
    -------
    ReferenceScoreBreakdown

    Raises
    ------
    TypeError
        If either argument is not a str.

    Examples
    --------
    >>> result = reference_score_breakdown("{code}", "x = 1")
    >>> result.score, result.degenerate, result.reasons
    (0.0, 'placeholder', ('the prediction is a template placeholder: not code',))
    """
    predicted = check_code("predicted", predicted)
    expected = check_code("expected", expected)
    return _breakdowns([predicted], [expected], embedder)[0]


def reference_score(predicted: str, expected: str, *, embedder: Embedder | None = None) -> float:
    r"""Score ``predicted`` against the reference ``expected`` without tests, in [0, 1].

    Parameters
    ----------
    predicted, expected : str
        Generated code and the reference code: whole programs or one-line fragments; either
        may fail to parse (the features that need a syntax tree then read tokens instead).
    embedder : Embedder, optional
        Default :func:`lift_metrics.similarity.get_default_embedder` (bundled MiniLM).

    Returns
    -------
    float
        In [0, 1]: an estimate of how useful a programmer would find the prediction for the
        task the reference solves (0 useless, 1 as good as the reference). 1.0 when the
        prediction is the reference's program (comments, docstrings, unreachable statements
        and layout aside); at most 0.05 (in fact 0.0) for empty text, a template placeholder
        (``{code}``, ``<code>``), prose or comments only; 0.0 for a prediction over
        ``MAX_CODE_CHARS`` (100,000 characters), which is not analysed
        (:func:`reference_score_breakdown` says so).

    Raises
    ------
    TypeError
        If either argument is not a str. A prediction never raises otherwise.

    Notes
    -----
    The features (:data:`REFERENCE_FEATURES`, all in [0, 1]) are the cosine of the two
    texts' MiniLM embeddings; chrF; the normalised Levenshtein similarity of the token
    sequences (Python's tokenizer, a regex where it fails); sentence BLEU over those tokens;
    F1 of the called names (``os.path.join`` and ``join``), of the identifiers and of the
    literals; the cosine of the syntax-tree node-type counts (token-kind counts when a side
    does not parse); the token length ratio; whether the prediction parses; and
    :math:`1 / (1 + \#\text{<unk>})`; chrF's character n-gram recall; coverage (prediction
    tokens over reference tokens, at most 1); the share of the reference's tokens the
    prediction has; and whether the reference is a function or a function body (it holds
    ``return``, ``def``, ``class`` or ``yield``). They are computed on both texts as they run
    (:func:`~lift_metrics.code._executed.executed_view`: comments, docstrings and statements
    that never run are dropped), after quote styles and tokenizer marks (backticks,
    ``#SPACE#``) are normalised. The score is

    .. math:: s = g_p\left(b_p + \sum_k w_{p,k} x_k\right), \quad w_{p,k} \ge 0,

    where the part :math:`p` is "function" when the reference is one and "snippet" otherwise,
    and :math:`g_p` is a monotone piecewise-linear map to [0, 1]. :math:`w`, :math:`b` and
    :math:`g` come from ``lift_metrics/code/reference_model.json``, written by
    ``benchmarks/fit_reference_model.py``: the snippet part fitted on programmers' grades of
    CoNaLa snippets (``datasets/conala/``), the function part on execution verdicts of
    HumanEval completions, the features of each chosen on both together (figures in
    ``docs/code.md``).
    Missing tests are absent evidence: this score says how close the code is to the
    reference, never that it runs.

    Examples
    --------
    >>> reference_score("os.kill(os.getpid(), 9)", "os.kill(os.getpid(), 9)")
    1.0
    >>> reference_score("", "os.kill(os.getpid(), 9)")
    0.0
    """
    return reference_score_breakdown(predicted, expected, embedder=embedder).score


def reference_scores(
    predicted: Sequence[str], expected: Sequence[str], *, embedder: Embedder | None = None
) -> list[float]:
    """:func:`reference_score` for many pairs at once (one embedding batch).

    Parameters
    ----------
    predicted, expected : sequence of str
        Paired by position; same length.
    embedder : Embedder, optional

    Returns
    -------
    list of float

    Raises
    ------
    TypeError, ValueError
        For non-str items or sequences of different lengths.

    Examples
    --------
    >>> reference_scores(["x = 1", "<code>"], ["x = 1", "x = 1"])
    [1.0, 0.0]
    """
    preds, refs = _check_pairs(predicted, expected)
    return [b.score for b in _breakdowns(preds, refs, embedder)]
