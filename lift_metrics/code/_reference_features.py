"""The features of a (prediction, reference) pair that the no-test reference score is fitted on."""

from __future__ import annotations

import ast
import functools
import io
import keyword
import math
import re
import tokenize
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from lift_metrics import _pyast as pyast
from lift_metrics._pyast import MAX_CODE_CHARS
from lift_metrics.code._executed import ExecutedView, executed_view
from lift_metrics.code._features import check_code, over_limit
from lift_metrics.errors import InputTypeError, InputValueError
from lift_metrics.similarity import Embedder, resolve_embedder, sequence_similarity

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
    "chrf_recall",
    "coverage",
    "token_recall",
    "function",
)
"""The features of one (prediction, reference) pair, each in [0, 1] (``unk``: 1 = no ``<unk>``).

``function`` is 1 when the reference is a function or a function body (it holds ``return``,
``def``, ``class`` or ``yield``): the fitted model weighs the other features differently there.
"""

_RECALL_CHARS = 4_000  # chrf_recall reads at most this many non-space characters of each side
_FUNCTION_WORDS = frozenset(("return", "def", "class", "yield"))


_MAX_CHARS = 20_000  # features are computed on at most this many characters of each side
_UNK = re.compile(r"<\s*unk\s*>", re.IGNORECASE)
_TOKEN = re.compile(r"[A-Za-z_]\w*|\d+(?:\.\d+)?|'[^'\n]*'|\S")
# a dotted name and, after it, the "(" that makes it a call (see _calls)
_CHAIN = re.compile(r"[A-Za-z_]\w*(?:\s*\.\s*[A-Za-z_]\w*)*")
_OPEN = re.compile(r"\s*\(")
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
# possessive, so that a long text is read once (a lazy group before \s* would backtrack over it)
_WRAPPED = re.compile(r"^(\{\{?|<|\[\[?|\$\{)\s*([A-Za-z_][\w \-.]*+)\s*(\}\}?|>|\]\]?)$")


_DEGENERATE_TEXT = {
    "empty": "empty",
    "placeholder": "a template placeholder",
    "prose": "prose",
    "comments": "only comments or bare strings (nothing that runs)",
}


def _marks(text: str) -> str:
    """Undo tokenizer marks (``#SPACE#``, ``#NEWLINE#``) before comments are looked for."""
    return text[:_MAX_CHARS].replace("#SPACE#", " ").replace("#NEWLINE#", "\n")


def _canonical(text: str) -> str:
    """Undo surface noise that says nothing about the code: quote styles."""
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
    """Return the called names, dotted (``os.path.join``) and by their last part (``join``)."""
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
        # Each maximal dotted name followed by "(", as re.findall of name-then-"(" finds them,
        # but in one pass: a name inside a longer one is a call exactly when the longer one is,
        # and trying every start inside it took time quadratic in its length.
        for chain in _CHAIN.finditer(text):
            if _OPEN.match(text, chain.end()):
                dotted = re.sub(r"\s+", "", chain.group())
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
    """``"empty"``, ``"placeholder"``, ``"prose"`` or ``"comments"`` when it is not code.

    ``"comments"``: nothing is left once comments and bare strings are dropped.

    ``"too long"`` when it is over ``MAX_CODE_CHARS``: it is not read at all.
    """
    if over_limit(predicted) is not None:
        return "too long"
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
    if not executed_view(_marks(predicted)).text.strip():
        return "comments"
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

    executed: ExecutedView
    text: str
    parses: bool
    values: tuple[str, ...]
    joined: str
    literals: Counter[str]
    identifiers: frozenset[str]
    calls: frozenset[str]
    nodes: Counter[str]
    kinds: Counter[str]
    counts: Counter[str]
    grams: tuple[Counter[str], ...]
    function: bool


def _char_grams(text: str) -> tuple[Counter[str], ...]:
    """Character 1- to 6-gram counts of ``text`` without whitespace (as chrF reads it)."""
    chars = "".join(text.split())[:_RECALL_CHARS]
    return tuple(Counter(chars[i : i + n] for i in range(len(chars) - n + 1)) for n in range(1, 7))


def _char_recall(pred: _Side, ref: _Side) -> float:
    """Mean over n = 1..6 of the share of the reference's character n-grams the prediction has."""
    shares = [
        sum((p & r).values()) / total
        for p, r in zip(pred.grams, ref.grams, strict=True)
        if (total := sum(r.values()))
    ]
    return float(np.mean(shares)) if shares else 1.0


@functools.lru_cache(maxsize=8192)
def _side(raw: str) -> _Side:
    executed = executed_view(_marks(raw))
    text = _canonical(executed.text)
    tree = _parse(text)
    tokens = _tokens(text)
    values = tuple(t for _, t in tokens)
    return _Side(
        executed=executed,
        text=text,
        parses=tree is not None,
        values=values,
        joined=" ".join(values),
        literals=Counter(t for k, t in tokens if k in ("STRING", "NUMBER")),
        identifiers=frozenset(t for k, t in tokens if k == "NAME"),
        calls=frozenset(_calls(text, tree)),
        nodes=Counter() if tree is None else _node_bag(tree),
        kinds=Counter(k for k, _ in tokens),
        counts=Counter(values),
        grams=_char_grams(text),
        function=any(k == "KEYWORD" and t in _FUNCTION_WORDS for k, t in tokens),
    )


def same_program(predicted: str, expected: str) -> bool:
    r"""Whether two texts are one program once what never runs is dropped (:func:`executed_view`).

    Code that parses is compared by syntax tree (layout and quote style aside); other text by
    its tokens.

    Examples
    --------
    >>> same_program("x = f(a)  # call f", "x = f( a )")
    True
    >>> same_program("if a:\n    b()\nc()", "if a:\n    b()\n    c()")
    False
    """
    pred, ref = _side(predicted), _side(expected)
    if pred.values != ref.values or pred.parses != ref.parses:
        return False
    if not pred.parses:
        return True
    return ast.dump(pyast.parse(pred.text)) == ast.dump(pyast.parse(ref.text))


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
    for name, side in (("prediction", pred), ("reference", ref)):
        dropped = side.executed.notes()
        if dropped:
            reasons.append(f"the {name}'s {', '.join(dropped)} never run: not compared")
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
        "chrf_recall": _char_recall(pred, ref),
        "coverage": min(1.0, len(pred.values) / len(ref.values)) if ref.values else 1.0,
        "token_recall": (
            sum((pred.counts & ref.counts).values()) / len(ref.values) if ref.values else 1.0
        ),
        "function": 1.0 if ref.function else 0.0,
    }
    return features, reasons


def _cosines(
    predicted: Sequence[str], expected: Sequence[str], embedder: Embedder | None
) -> list[float]:
    """Embedding cosine of each pair, one batch for all distinct texts (identical pairs: 1).

    The texts are those the features read (:func:`executed_view`): a comment or dead code
    copied from the reference does not move the embedding either.
    """
    pairs = zip(predicted, expected, strict=True)
    pending = [i for i, (p, e) in enumerate(pairs) if p.strip() != e.strip()]
    out = [1.0] * len(predicted)
    if not pending:
        return out
    texts = list(dict.fromkeys(t for i in pending for t in (predicted[i], expected[i])))
    rows = np.asarray(resolve_embedder(embedder).embed(texts), dtype=np.float64)
    if rows.ndim != 2 or rows.shape[0] != len(texts):
        raise InputValueError(f"embedder returned shape {rows.shape} for {len(texts)} texts")
    index = {text: k for k, text in enumerate(texts)}
    for i in pending:
        a = rows[index[predicted[i]]]
        b = rows[index[expected[i]]]
        norm = float(np.linalg.norm(a) * np.linalg.norm(b))
        out[i] = min(1.0, max(0.0, float(a @ b) / norm)) if norm else 0.0
    return out


def _check_pairs(predicted: Any, expected: Any) -> tuple[list[str], list[str]]:
    if isinstance(predicted, str) or not isinstance(predicted, Sequence):
        raise InputTypeError(f"predicted must be a sequence of str, got {type(predicted).__name__}")
    if isinstance(expected, str) or not isinstance(expected, Sequence):
        raise InputTypeError(f"expected must be a sequence of str, got {type(expected).__name__}")
    if len(predicted) != len(expected):
        raise InputValueError(
            f"predicted and expected must have the same length, got {len(predicted)} "
            f"and {len(expected)}"
        )
    preds = [check_code(f"predicted[{i}]", p) for i, p in enumerate(predicted)]
    refs = [check_code(f"expected[{i}]", e) for i, e in enumerate(expected)]
    return preds, refs


def reference_feature_matrix(
    predicted: Sequence[str], expected: Sequence[str], *, embedder: Embedder | None = None
) -> tuple[np.ndarray, list[str | None], list[list[str]]]:
    """Return the feature rows of many pairs, with each pair's degenerate kind and reasons.

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
        ``"empty"``/``"placeholder"``/``"prose"``/``"too long"`` (over ``MAX_CODE_CHARS``,
        not analysed) per pair, or None.
    reasons : list of list of str

    Raises
    ------
    TypeError, ValueError
        For non-str items or sequences of different lengths.

    Examples
    --------
    >>> matrix, kinds, _ = reference_feature_matrix(["x = 1", "{code}"], ["x = 1", "x = 1"])
    >>> matrix.shape, kinds
    ((2, 15), [None, 'placeholder'])
    """
    preds, refs = _check_pairs(predicted, expected)
    kinds = [_degenerate(p) for p in preds]
    live = [i for i, kind in enumerate(kinds) if kind is None]
    cosines = _cosines(
        [_side(preds[i]).executed.text.strip() for i in live],
        [_side(refs[i]).executed.text.strip() for i in live],
        embedder,
    )
    matrix = np.zeros((len(preds), len(REFERENCE_FEATURES)))
    reasons: list[list[str]] = [[] for _ in preds]
    for i, kind in enumerate(kinds):
        if kind == "too long":
            reasons[i].append(f"the prediction is not analysed: {over_limit(preds[i])}")
        elif kind is not None:
            reasons[i].append(f"the prediction is {_DEGENERATE_TEXT[kind]}: not code")
    for i, cosine in zip(live, cosines, strict=True):
        features, why = _pair_features(preds[i], refs[i], cosine)
        matrix[i] = [features[name] for name in REFERENCE_FEATURES]
        reasons[i].extend(why)
    return matrix, kinds, reasons
