"""The no-test score: how useful generated code is, judged against a reference only.

A small calibrated model over similarity features (embedding cosine, chrF, token edit
similarity, called-name and literal overlap, syntax-tree node bag, BLEU, length, parse and
``<unk>`` indicators), fitted to programmers' grades of CoNaLa snippets
(``datasets/conala/README.md``) by :func:`fit_reference_model`
(``scripts/fit_reference_model.py`` writes ``lift_metrics/code/reference_model.json``). At run
time it is plain numpy: a non-negative linear combination of the features, then a monotone
piecewise-linear map to [0, 1].
"""

from __future__ import annotations

import ast
import functools
import io
import json
import keyword
import math
import re
import tokenize
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from lift_metrics import _pyast as pyast
from lift_metrics.code._features import MAX_CODE_CHARS, check_code
from lift_metrics.similarity import Embedder, resolve_embedder, sequence_similarity

__all__ = [
    "REFERENCE_FEATURES",
    "ReferenceScoreBreakdown",
    "fit_reference_model",
    "reference_feature_matrix",
    "reference_model_path",
    "reference_score",
    "reference_score_breakdown",
    "reference_scores",
]

REFERENCE_FEATURES: tuple[str, ...] = (
    "embedding",
    "chrf",
    "token_edit",
    "bleu",
    "calls",
    "identifiers",
    "literals",
    "ast_bag",
    "length",
    "parses",
    "unk",
)
"""The features of one (prediction, reference) pair, each in [0, 1] (``unk``: 1 = no ``<unk>``)."""

DEGENERATE_CAP = 0.05
"""The most an empty, placeholder or prose prediction can score."""

_MAX_CHARS = 20_000  # features are computed on at most this many characters of each side
_UNK = re.compile(r"<\s*unk\s*>", re.IGNORECASE)
_TOKEN = re.compile(r"[A-Za-z_]\w*|\d+(?:\.\d+)?|'[^'\n]*'|\S")
_CALL = re.compile(r"([A-Za-z_]\w*(?:\s*\.\s*[A-Za-z_]\w*)*)\s*\(")
_WORD = re.compile(r"[A-Za-z0-9]+(?:'[a-z]+)?[.,;:!?]?")
_CODE_MARK = re.compile(r"[()\[\]{}=<>+*/%&|^~@]|\w\.\w|\w_|_\w|:\S")
_PLACEHOLDER_WORDS = frozenset(
    (
        "code",
        "your",
        "the",
        "a",
        "here",
        "answer",
        "solution",
        "output",
        "program",
        "placeholder",
        "todo",
        "insert",
        "python",
        "snippet",
        "function",
        "implementation",
        "fill",
        "in",
        "write",
        "goes",
        "body",
        "result",
        "response",
        "completion",
        "generated",
    )
)
# common English words that are neither Python keywords nor usual variable names
_PROSE_WORDS = frozenset(
    (
        "the",
        "to",
        "of",
        "you",
        "this",
        "that",
        "it",
        "use",
        "can",
        "should",
        "here",
        "we",
        "will",
        "your",
        "please",
        "using",
        "which",
        "how",
        "following",
        "would",
        "then",
        "returns",
        "there",
        "need",
        "just",
    )
)
_WRAPPED = re.compile(r"^(\{\{?|<|\[\[?|\$\{)\s*([A-Za-z_][\w \-.]*?)\s*(\}\}?|>|\]\]?)$")


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
    data = json.loads(reference_model_path().read_text(encoding="utf-8"))
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
        ``"empty"``, ``"placeholder"`` or ``"prose"`` when the prediction is not code (its
        score is capped at 0.05), else None.
    """

    score: float
    features: Mapping[str, float] = field(default_factory=dict)
    reasons: tuple[str, ...] = ()
    degenerate: str | None = None


# ---------------------------------------------------------------------------- text handling


def _canonical(text: str) -> str:
    """Undo surface noise that says nothing about the code: quote styles, tokenizer marks."""
    text = text[:_MAX_CHARS].replace("#SPACE#", " ").replace("#NEWLINE#", "\n")
    text = re.sub(r'``````|""""""|\'\'\'\'\'\'', "''", text)
    return text.replace("`", "'").replace('"', "'").strip()


@functools.lru_cache(maxsize=4096)
def _parse(text: str) -> ast.AST | None:
    if len(text) > MAX_CODE_CHARS:
        return None
    try:
        return pyast.parse(text)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None


@functools.lru_cache(maxsize=4096)
def _tokens(text: str) -> tuple[tuple[str, str], ...]:
    """``(kind, text)`` tokens: Python's tokenizer, a regex where it fails."""
    out: list[tuple[str, str]] = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type in (tokenize.NAME, tokenize.NUMBER, tokenize.STRING, tokenize.OP):
                kind = tokenize.tok_name[token.type]
                if kind == "NAME" and keyword.iskeyword(token.string):
                    kind = "KEYWORD"
                out.append((kind, token.string))
            elif token.type == tokenize.ERRORTOKEN and not token.string.isspace():
                out.append(("OP", token.string))
        return tuple(out)
    except (tokenize.TokenError, SyntaxError, ValueError):
        pass
    for piece in _TOKEN.findall(text):
        if piece[0].isalpha() or piece[0] == "_":
            kind = "KEYWORD" if keyword.iskeyword(piece) else "NAME"
        elif piece[0].isdigit():
            kind = "NUMBER"
        elif piece[0] == "'" and len(piece) > 1:
            kind = "STRING"
        else:
            kind = "OP"
        out.append((kind, piece))
    return tuple(out)


def _calls(text: str, tree: ast.AST | None) -> set[str]:
    """Called names, dotted (``os.path.join``) and by their last part (``join``)."""
    names: set[str] = set()
    if tree is not None:
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                parts: list[str] = []
                func: ast.AST = node.func
                while isinstance(func, ast.Attribute):
                    parts.append(func.attr)
                    func = func.value
                if isinstance(func, ast.Name):
                    parts.append(func.id)
                if parts:
                    names.add(".".join(reversed(parts)))
                    names.add(parts[0])
    else:
        for match in _CALL.findall(text):
            dotted = re.sub(r"\s+", "", match)
            names.add(dotted)
            names.add(dotted.rsplit(".", 1)[-1])
    return names


def _node_bag(tree: ast.AST) -> Counter[str]:
    return Counter(type(node).__name__ for node in ast.walk(tree))


def _f1(a: set[str] | Counter[str], b: set[str] | Counter[str]) -> float:
    """F1 of two sets (or multisets); 1.0 when both are empty."""
    ca = Counter(a) if isinstance(a, set) else a
    cb = Counter(b) if isinstance(b, set) else b
    total = sum(ca.values()) + sum(cb.values())
    if total == 0:
        return 1.0
    common = sum((ca & cb).values())
    return 2.0 * common / total


def _cosine_counts(a: Counter[str], b: Counter[str]) -> float:
    dot = sum(a[k] * b[k] for k in a.keys() & b.keys())
    norm = math.sqrt(sum(v * v for v in a.values()) * sum(v * v for v in b.values()))
    return dot / norm if norm else 0.0


def _degenerate(predicted: str) -> str | None:
    """``"empty"``, ``"placeholder"`` or ``"prose"`` when the prediction is not code."""
    text = predicted.strip()
    if not text:
        return "empty"
    wrapped = _WRAPPED.match(text)
    if wrapped:
        inside = set(re.split(r"[\s_\-.]+", wrapped.group(2).lower())) - {""}
        if text.startswith("<") or inside <= _PLACEHOLDER_WORDS:
            return "placeholder"
    if _UNK.sub("", text).strip() == "":
        return "placeholder"
    if _parse(text) is None:
        words = text.split()
        prose_words = [w for w in words if _WORD.fullmatch(w)]
        marks = len(_CODE_MARK.findall(text))
        english = any(w.lower().strip(".,;:!?") in _PROSE_WORDS for w in words)
        mostly_words = len(words) >= 3 and len(prose_words) >= 0.8 * len(words)
        if english and mostly_words and marks <= max(1, len(words) // 8):
            return "prose"
    return None


@dataclass(frozen=True)
class _Side:
    """What the features need from one text (cached: a reference is read once)."""

    text: str
    parses: bool
    values: tuple[str, ...]
    joined: str
    literals: Counter[str]
    identifiers: frozenset[str]
    calls: frozenset[str]
    nodes: Counter[str]
    kinds: Counter[str]


@functools.lru_cache(maxsize=8192)
def _side(raw: str) -> _Side:
    text = _canonical(raw)
    tree = _parse(text)
    tokens = _tokens(text)
    values = tuple(t for _, t in tokens)
    return _Side(
        text=text,
        parses=tree is not None,
        values=values,
        joined=" ".join(values),
        literals=Counter(t for k, t in tokens if k in ("STRING", "NUMBER")),
        identifiers=frozenset(t for k, t in tokens if k == "NAME"),
        calls=frozenset(_calls(text, tree)),
        nodes=Counter() if tree is None else _node_bag(tree),
        kinds=Counter(k for k, _ in tokens),
    )


def _pair_features(
    predicted: str, expected: str, cosine: float
) -> tuple[dict[str, float], list[str]]:
    """Every feature of one pair (the prediction is not degenerate) and the reasons to note."""
    from lift_metrics.code._field import bleu_score, chrf_score

    reasons: list[str] = [
        f"the {name} is longer than {_MAX_CHARS} characters: only its start is compared"
        for name, text in (("prediction", predicted), ("reference", expected))
        if len(text) > _MAX_CHARS
    ]
    pred = _side(predicted)
    ref = _side(expected)
    unk = len(_UNK.findall(pred.text))
    if unk:
        reasons.append(f"the prediction holds {unk} <unk> token(s)")
    if not pred.parses:
        reasons.append("the prediction does not parse: names and tokens are read with a regex")
    if not ref.parses:
        reasons.append("the reference does not parse: names and tokens are read with a regex")
    if pred.parses and ref.parses:
        ast_bag = _cosine_counts(pred.nodes, ref.nodes)
    else:
        reasons.append("no syntax-tree comparison: token kinds compared instead")
        ast_bag = _cosine_counts(pred.kinds, ref.kinds)
    longer = max(len(pred.values), len(ref.values))
    features = {
        "embedding": float(cosine),
        "chrf": chrf_score(pred.text, ref.text),
        "token_edit": sequence_similarity(pred.values, ref.values),
        "bleu": bleu_score(pred.joined, ref.joined),
        "calls": _f1(set(pred.calls), set(ref.calls)),
        "identifiers": _f1(set(pred.identifiers), set(ref.identifiers)),
        "literals": _f1(pred.literals, ref.literals),
        "ast_bag": ast_bag,
        "length": min(len(pred.values), len(ref.values)) / longer if longer else 1.0,
        "parses": 1.0 if pred.parses else 0.0,
        "unk": 1.0 / (1.0 + unk),
    }
    return features, reasons


def _cosines(
    predicted: Sequence[str], expected: Sequence[str], embedder: Embedder | None
) -> list[float]:
    """Embedding cosine of each pair, one batch for all distinct texts (identical pairs: 1)."""
    pairs = zip(predicted, expected, strict=True)
    pending = [i for i, (p, e) in enumerate(pairs) if p.strip() != e.strip()]
    out = [1.0] * len(predicted)
    if not pending:
        return out
    texts = list(dict.fromkeys(t for i in pending for t in (predicted[i], expected[i])))
    rows = np.asarray(resolve_embedder(embedder).embed(texts), dtype=np.float64)
    if rows.ndim != 2 or rows.shape[0] != len(texts):
        raise ValueError(f"embedder returned shape {rows.shape} for {len(texts)} texts")
    index = {text: k for k, text in enumerate(texts)}
    for i in pending:
        a = rows[index[predicted[i]]]
        b = rows[index[expected[i]]]
        norm = float(np.linalg.norm(a) * np.linalg.norm(b))
        out[i] = min(1.0, max(0.0, float(a @ b) / norm)) if norm else 0.0
    return out


def _check_pairs(predicted: Any, expected: Any) -> tuple[list[str], list[str]]:
    if isinstance(predicted, str) or not isinstance(predicted, Sequence):
        raise TypeError(f"predicted must be a sequence of str, got {type(predicted).__name__}")
    if isinstance(expected, str) or not isinstance(expected, Sequence):
        raise TypeError(f"expected must be a sequence of str, got {type(expected).__name__}")
    if len(predicted) != len(expected):
        raise ValueError(
            f"predicted and expected must have the same length, got {len(predicted)} "
            f"and {len(expected)}"
        )
    for i, (p, e) in enumerate(zip(predicted, expected, strict=True)):
        check_code(f"predicted[{i}]", p)
        check_code(f"expected[{i}]", e)
    return list(predicted), list(expected)


def reference_feature_matrix(
    predicted: Sequence[str], expected: Sequence[str], *, embedder: Embedder | None = None
) -> tuple[np.ndarray, list[str | None], list[list[str]]]:
    """The feature rows of many pairs, with each pair's degenerate kind and reasons.

    Parameters
    ----------
    predicted, expected : sequence of str
        Generated snippets and their references, paired by position.
    embedder : Embedder, optional
        Default :func:`lift_metrics.similarity.get_default_embedder` (bundled MiniLM).

    Returns
    -------
    matrix : numpy.ndarray
        Shape ``(n, len(REFERENCE_FEATURES))``, columns in :data:`REFERENCE_FEATURES` order;
        rows of degenerate predictions are zero.
    degenerate : list of (str or None)
        ``"empty"``/``"placeholder"``/``"prose"`` per pair, or None.
    reasons : list of list of str

    Raises
    ------
    TypeError, ValueError
        For non-str items or sequences of different lengths.

    Examples
    --------
    >>> matrix, kinds, _ = reference_feature_matrix(["x = 1", "{code}"], ["x = 1", "x = 1"])
    >>> matrix.shape, kinds
    ((2, 11), [None, 'placeholder'])
    """
    preds, refs = _check_pairs(predicted, expected)
    kinds = [_degenerate(p) for p in preds]
    live = [i for i, kind in enumerate(kinds) if kind is None]
    cosines = _cosines([preds[i] for i in live], [refs[i] for i in live], embedder)
    matrix = np.zeros((len(preds), len(REFERENCE_FEATURES)))
    reasons: list[list[str]] = [[] for _ in preds]
    for i, kind in enumerate(kinds):
        if kind is not None:
            reasons[i].append(f"the prediction is {_DEGENERATE_TEXT[kind]}: not code")
    for i, cosine in zip(live, cosines, strict=True):
        features, why = _pair_features(preds[i], refs[i], cosine)
        matrix[i] = [features[name] for name in REFERENCE_FEATURES]
        reasons[i].extend(why)
    return matrix, kinds, reasons


_DEGENERATE_TEXT = {
    "empty": "empty",
    "placeholder": "a template placeholder",
    "prose": "prose",
}


def _apply_model(matrix: np.ndarray, model: Mapping[str, Any]) -> np.ndarray:
    """The model's score of each feature row: linear combination, then the monotone map."""
    columns = [REFERENCE_FEATURES.index(name) for name in model["features"]]
    weights = np.asarray(model["weights"], dtype=np.float64)
    linear = matrix[:, columns] @ weights + float(model["intercept"])
    knots_x = np.asarray(model["calibration"]["x"], dtype=np.float64)
    knots_y = np.asarray(model["calibration"]["y"], dtype=np.float64)
    return np.clip(np.interp(linear, knots_x, knots_y), 0.0, 1.0)


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
    check_code("predicted", predicted)
    check_code("expected", expected)
    return _breakdowns([predicted], [expected], embedder)[0]


def reference_score(predicted: str, expected: str, *, embedder: Embedder | None = None) -> float:
    """Score ``predicted`` against the reference ``expected`` without tests, in [0, 1].

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
        prediction equals the reference (surrounding whitespace aside); at most 0.05
        (in fact 0.0) for empty text, a template placeholder (``{code}``, ``<code>``) or
        prose.

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
    :math:`1 / (1 + \\#\\text{<unk>})`. Quote styles and tokenizer marks (backticks,
    ``#SPACE#``) are normalised first. The score is

    .. math:: s = g\\left(b + \\sum_k w_k x_k\\right), \\quad w_k \\ge 0,

    where :math:`g` is a monotone piecewise-linear map to [0, 1]. :math:`w`, :math:`b` and
    :math:`g` come from ``lift_metrics/code/reference_model.json``, fitted by
    :func:`fit_reference_model` on programmers' grades of CoNaLa snippets
    (``datasets/conala/``); the figures are in ``benchmarks/bench_reference_score.py``.
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


# ---------------------------------------------------------------------------- fitting


def fit_reference_model(
    matrix: np.ndarray,
    grades: Sequence[float],
    *,
    features: Sequence[str] = REFERENCE_FEATURES,
    alpha: float = 1.0,
    knots: int = 21,
    grade_max: float = 4.0,
) -> dict[str, Any]:
    """Fit the no-test score's model: non-negative ridge, then a monotone map to [0, 1].

    Parameters
    ----------
    matrix : numpy.ndarray
        Feature rows from :func:`reference_feature_matrix` (all of its columns).
    grades : sequence of float
        The human grade of each row, 0 to ``grade_max``.
    features : sequence of str, default every feature
        The columns the model uses.
    alpha : float, default 1.0
        Ridge penalty on the (standardised) weights.
    knots : int, default 21
        Points of the piecewise-linear calibration map (at quantiles of the linear score).
    grade_max : float, default 4.0
        The top grade (grades are divided by it).

    Returns
    -------
    dict
        ``{"features", "weights", "intercept", "calibration": {"x", "y"}}``, the content of
        ``reference_model.json`` (plain JSON).

    Raises
    ------
    ImportError
        Without scikit-learn (``pip install 'lift-metrics[validation]'``).
    ValueError
        For an unknown feature, mismatched lengths or bad options.

    Notes
    -----
    The linear part is scikit-learn's ``Ridge(positive=True)`` on standardised columns of
    ``grades / grade_max`` (folded back into raw-feature weights); the map is an
    ``IsotonicRegression`` of the grade on the linear score, read at ``knots`` quantiles and
    interpolated linearly in between, so the stored model stays small and smooth.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> x = rng.random((200, len(REFERENCE_FEATURES)))
    >>> y = 4 * x[:, 1]
    >>> model = fit_reference_model(x, y, features=["chrf", "embedding"])
    >>> model["weights"][0] > model["weights"][1]
    True
    """
    from sklearn.isotonic import IsotonicRegression
    from sklearn.linear_model import Ridge

    names = list(features)
    unknown = [name for name in names if name not in REFERENCE_FEATURES]
    if unknown or not names:
        raise ValueError(
            f"features must be a non-empty subset of {REFERENCE_FEATURES}, got {names}"
        )
    x_all = np.asarray(matrix, dtype=np.float64)
    y = np.asarray(grades, dtype=np.float64) / float(grade_max)
    if x_all.ndim != 2 or x_all.shape[1] != len(REFERENCE_FEATURES) or len(y) != len(x_all):
        raise ValueError(
            f"matrix must have shape (n, {len(REFERENCE_FEATURES)}) with one grade per row, "
            f"got {x_all.shape} and {len(y)} grades"
        )
    if knots < 2:
        raise ValueError(f"knots must be >= 2, got {knots}")
    x = x_all[:, [REFERENCE_FEATURES.index(name) for name in names]]
    mean = x.mean(axis=0)
    std = x.std(axis=0)
    std[std == 0] = 1.0
    ridge = Ridge(alpha=alpha, positive=True).fit((x - mean) / std, y)
    weights = ridge.coef_ / std
    intercept = float(ridge.intercept_ - np.sum(weights * mean))
    linear = x @ weights + intercept
    iso = IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip").fit(linear, y)
    qx = np.unique(np.quantile(linear, np.linspace(0.0, 1.0, knots)))
    qy = np.maximum.accumulate(iso.predict(qx))
    return {
        "features": names,
        "weights": [round(float(w), 6) for w in weights],
        "intercept": round(intercept, 6),
        "calibration": {
            "x": [round(float(v), 6) for v in qx],
            "y": [round(float(v), 6) for v in qy],
        },
    }


def cross_validated_reference_scores(
    matrix: np.ndarray,
    grades: Sequence[float],
    groups: Sequence[str],
    *,
    folds: int = 5,
    **options: Any,
) -> np.ndarray:
    """Out-of-fold scores of :func:`fit_reference_model`, folds grouped (scikit-learn GroupKFold).

    Parameters
    ----------
    matrix : numpy.ndarray
        Feature rows (:func:`reference_feature_matrix`).
    grades : sequence of float
    groups : sequence of str
        Rows of one group (one task or intent) stay in one fold.
    folds : int, default 5
    **options
        Passed to :func:`fit_reference_model`.

    Returns
    -------
    numpy.ndarray
        Each row's score from the model fitted on the other folds.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> x = rng.random((100, len(REFERENCE_FEATURES)))
    >>> out = cross_validated_reference_scores(x, 4 * x[:, 0], [str(i // 5) for i in range(100)])
    >>> bool(np.corrcoef(out, x[:, 0])[0, 1] > 0.9)
    True
    """
    from sklearn.model_selection import GroupKFold

    x = np.asarray(matrix, dtype=np.float64)
    y = np.asarray(grades, dtype=np.float64)
    labels = np.asarray(groups)
    out = np.zeros(len(y))
    for train, test in GroupKFold(n_splits=folds).split(x, y, labels):
        out[test] = _apply_model(x[test], fit_reference_model(x[train], y[train], **options))
    return out


def grouped_bootstrap_interval(
    scores: Sequence[float],
    grades: Sequence[float],
    groups: Sequence[str],
    *,
    statistic: str = "pearson",
    n_resamples: int = 2000,
    confidence_level: float = 0.95,
    seed: int = 0,
) -> tuple[float, float, float]:
    """A correlation and its percentile bootstrap interval, resampling whole groups.

    Parameters
    ----------
    scores, grades : sequence of float
    groups : sequence of str
        Resampled with replacement as units (all rows of an intent together), since rows of
        one intent share a reference and are not independent.
    statistic : {"pearson", "spearman", "kendall"}, default "pearson"
    n_resamples : int, default 2000
    confidence_level : float, default 0.95
    seed : int, default 0

    Returns
    -------
    (value, low, high) : tuple of float

    Examples
    --------
    >>> value, low, high = grouped_bootstrap_interval([0.1, 0.5, 0.4, 0.9, 0.2, 0.7],
    ...                                               [0, 2, 1, 4, 1, 3], "aabbcc",
    ...                                               n_resamples=200)
    >>> round(value, 3), low <= value <= high
    (0.97, True)
    """
    from scipy import stats

    if statistic not in ("pearson", "spearman", "kendall"):
        raise ValueError(f"statistic must be 'pearson', 'spearman' or 'kendall', got {statistic!r}")
    x = np.asarray(scores, dtype=np.float64)
    y = np.asarray(grades, dtype=np.float64)
    labels = np.asarray(list(groups))

    def corr(a: np.ndarray, b: np.ndarray) -> float:
        if statistic == "pearson":
            return float(np.corrcoef(a, b)[0, 1])
        if statistic == "spearman":
            return float(stats.spearmanr(a, b).statistic)
        return float(stats.kendalltau(a, b).statistic)

    unique, inverse = np.unique(labels, return_inverse=True)
    members = [np.flatnonzero(inverse == k) for k in range(len(unique))]
    rng = np.random.default_rng(seed)
    values = []
    for _ in range(n_resamples):
        picked = np.concatenate([members[k] for k in rng.integers(0, len(unique), len(unique))])
        a, b = x[picked], y[picked]
        if np.all(a == a[0]) or np.all(b == b[0]):
            continue
        values.append(corr(a, b))
    tail = (1.0 - confidence_level) / 2.0
    low, high = np.quantile(values, [tail, 1.0 - tail])
    return corr(x, y), float(low), float(high)


def graders_mean(row: Mapping[str, Any]) -> float:
    """The mean of a CoNaLa row's per-grader grades (``grades``), else its ``grade``.

    The model is fitted on this mean: it uses every grader's judgement, and is less noisy than
    the aggregated ``grade`` it is then judged against.

    Examples
    --------
    >>> graders_mean({"grade": 3.0, "grades": {"a": 4, "b": 1, "c": 4}})
    3.0
    >>> graders_mean({"grade": 2.0})
    2.0
    """
    grades = row.get("grades")
    if isinstance(grades, Mapping) and grades:
        return float(np.mean([float(v) for v in grades.values()]))
    return float(row["grade"])
