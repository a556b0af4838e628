"""The numbers and truth values of an intent, which a word-level reading misses.

An intent that differs from the expected one only in a number ("0! = 0" for "0! = 1", "the
third largest" for "the second largest", "F = C * 5 / 9 + 32" for "* 9 / 5"), in the order of
two ordinals ("the second by the first") or in which truth value it answers ("Answer False
when it holds") reads almost the same to a sentence embedding and is still another task.
:func:`value_defect` compares what both intents say about numbers and truth values
(docs/ir.md#intent-defects). Its input is text already folded as a person reads it
(``lift_metrics.ir._intent``), in lower case.
"""

from __future__ import annotations

import collections
import functools
import re
from fractions import Fraction

__all__ = ["value_defect"]

_LEXEME = re.compile(
    r"(?P<num>(?<![\w)])-?\d+(?:\.\d+)?(?:\s*/\s*\d+(?:\.\d+)?)?(?!\w))"
    r"|(?P<word>\w+(?:[-'\u2019]\w+)*)"
    r"|(?P<op>[-+*/=<>^%])"
    r"|(?P<stop>[.;:,!?()\[\]])"
)


def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


_CARDINALS = {
    word: str(value)
    for value, word in enumerate(
        _words(
            """zero one two three four five six seven eight nine ten eleven twelve thirteen
            fourteen fifteen sixteen seventeen eighteen nineteen twenty"""
        )
    )
}
_TENS = {
    word: str(10 * value)
    for value, word in enumerate(_words("twenty thirty forty fifty sixty seventy eighty ninety"), 2)
}
#: words that name a number without being one ("a pair", "a dozen", "twice")
_CARDINALS.update(_TENS)
_CARDINALS.update({"pair": "2", "couple": "2", "twice": "2", "thrice": "3", "dozen": "12"})
_ORDINALS = {
    word: value
    for value, word in enumerate(
        _words("first second third fourth fifth sixth seventh eighth ninth tenth"), start=1
    )
}
_ORDINAL_DIGITS = re.compile(r"(\d+)(?:st|nd|rd|th)")
#: words that are a number only before a word they count ("one bit", "the second number"):
#: "a new one", "one of", "a second" are not
_AMBIGUOUS = frozenset({"one", "second"})
#: words after which an ambiguous word is not a number
_FUNCTION_WORDS = frozenset(
    _words(
        """a an the and or but nor of to in on at by for from with as is are was were be been
        it its that this which who whom when where if then than so not no another other
        others each every all any more less"""
    )
)
#: a number that appears only beside one of these adds or takes away from the result
_ADDITIVE = frozenset(
    {"+", "-", "plus", "minus", "add", "adds", "subtract", "subtracts", "increment", "decrement"}
)
_RANK_WORDS = frozenset({"last", "largest", "smallest", "biggest", "highest", "lowest"})
_CONDITIONS = frozenset({"if", "when", "whenever", "iff", "unless", "where", "provided"})
_FLIPS = frozenset(
    {"not", "no", "never", "nor", "neither", "cannot", "unless", "otherwise", "else", "without"}
)
_PREDICATE_HEADS = frozenset(
    {"check", "checks", "validate", "validates", "verify", "verifies", "test", "tests"}
)


@functools.lru_cache(maxsize=4096)
def _lexemes(text: str) -> tuple[tuple[str, str], ...]:
    """Return (kind, text) pairs: ``num``, ``word``, ``op`` or ``stop``."""
    found = []
    for match in _LEXEME.finditer(text):
        kind = match.lastgroup or "stop"
        found.append((kind, re.sub(r"\s+", "", match.group(0))))
    return tuple(found)


def _number(raw: str) -> str:
    """Return a number in one spelling (``05`` -> ``5``, ``9 / 5`` and ``1.8`` -> ``9/5``)."""
    try:
        value = Fraction(raw.replace(" ", ""))
    except (ValueError, ZeroDivisionError):
        parts = [p.lstrip("0") or "0" if p.isdigit() else p for p in raw.split("/")]
        return "/".join(parts)
    return (
        str(value.numerator) if value.denominator == 1 else f"{value.numerator}/{value.denominator}"
    )


def _compound(word: str) -> str | None:
    """Return the value of a hyphenated number word ("thirty-two" -> "32"), else None."""
    tens, _, unit = word.partition("-")
    if tens in _TENS and unit in _CARDINALS and 0 < int(_CARDINALS[unit]) < 10:
        return str(int(_TENS[tens]) + int(_CARDINALS[unit]))
    return None


def _word_value(word: str, following: str | None) -> tuple[str, str] | None:
    """Return (kind, value) of a number word, ``("card", "2")`` or ``("ord", "2")``."""
    if word in _AMBIGUOUS and (following is None or following in _FUNCTION_WORDS):
        return None
    if word in _CARDINALS:
        return "card", _CARDINALS[word]
    if word in _ORDINALS:
        return "ord", str(_ORDINALS[word])
    digits = _ORDINAL_DIGITS.fullmatch(word)
    return ("ord", digits.group(1)) if digits else None


def _other_follows(lexemes: tuple[tuple[str, str], ...], i: int) -> bool:
    """Return whether "other" follows in the clause: "one string into the other" counts none."""
    for kind, word in lexemes[i + 1 :]:
        if kind == "stop":
            return False
        if word in ("other", "another"):
            return True
    return False


@functools.lru_cache(maxsize=4096)
def _values(text: str) -> tuple[tuple[str, str, str, int], ...]:
    """Return (kind, value, surface, position) for each number, ordinal and fraction."""
    lexemes = _lexemes(text)
    found: list[tuple[str, str, str, int]] = []
    for i, (kind, raw) in enumerate(lexemes):
        if kind == "num":
            found.append(("card", _number(raw), raw, i))
        elif kind == "word" and _compound(raw) is not None:  # "thirty-two"
            found.append(("card", str(_compound(raw)), raw, i))
        elif kind == "word" and "-" in raw:  # "second-to-last", "one-based"
            for part in raw.split("-"):
                value = _word_value(part, "")
                if value is not None:
                    found.append((*value, raw, i))
        elif kind == "word" and not (raw == "one" and _other_follows(lexemes, i)):
            after = lexemes[i + 1] if i + 1 < len(lexemes) else None
            value = _word_value(raw, after[1] if after and after[0] == "word" else None)
            if value is not None:
                found.append((*value, raw, i))
    return tuple(found)


def _surface(values: tuple[tuple[str, str, str, int], ...], kind: str, value: str) -> str:
    return next(s for k, v, s, _ in values if k == kind and v == value)


def _changed(predicted: str, expected: str) -> str | None:
    """Find a number or ordinal of the expected intent replaced by another."""
    p_values, e_values = _values(predicted), _values(expected)
    for kind in ("card", "ord"):
        p_count = collections.Counter(v for k, v, _, _ in p_values if k == kind)
        e_count = collections.Counter(v for k, v, _, _ in e_values if k == kind)
        extra, missing = p_count - e_count, e_count - p_count
        if extra and missing:
            new = _surface(p_values, kind, sorted(extra)[0])
            old = _surface(e_values, kind, sorted(missing)[0])
            return f"number: {new!r} where the expected intent has {old!r}"
    return None


def _neighbours(lexemes: tuple[tuple[str, str], ...], i: int) -> set[str]:
    return {lexemes[j][1] for j in (i - 1, i + 1) if 0 <= j < len(lexemes)}


def _added(predicted: str, expected: str) -> str | None:
    """Find a number added or taken away, or a rank ("second largest"), the expected lacks."""
    p_values, e_values = _values(predicted), _values(expected)
    e_count = collections.Counter((k, v) for k, v, _, _ in e_values)
    lexemes = _lexemes(predicted)
    for kind, value, surface, i in p_values:
        if e_count[(kind, value)] > 0:
            e_count[(kind, value)] -= 1
            continue
        near = _neighbours(lexemes, i)
        if kind == "card" and near & _ADDITIVE:
            op = sorted(near & _ADDITIVE)[0]
            return f"number: {op} {surface!r}, which the expected intent does not have"
        ranked = "-" in surface or bool(near & _RANK_WORDS)
        if kind == "ord" and value != "1" and ranked:
            return f"number: {surface!r}, a rank the expected intent does not have"
    return None


def _ordinal_order(text: str) -> list[int]:
    lexemes = _lexemes(text)
    return [
        int(value)
        for kind, value, surface, i in _values(text)
        if kind == "ord" and "-" not in surface and not _neighbours(lexemes, i) & _RANK_WORDS
    ]


def _swapped(predicted: str, expected: str) -> str | None:
    """Find two ordinals named in the other order ("the second by the first")."""
    p_order, e_order = _ordinal_order(predicted), _ordinal_order(expected)
    if len(p_order) < 2 or p_order == sorted(p_order) or p_order == e_order:
        return None
    if " from " in predicted:  # "subtract the second from the first" keeps the order
        return None
    return "number: it names the ordinals in another order than the task's roles"


def _truth(text: str) -> bool | None:
    """Return the truth value the intent answers when its condition holds (None: none)."""
    lexemes = _lexemes(text)
    start = 0
    for i, (kind, word) in enumerate(lexemes):
        if kind == "stop":
            start = i + 1
        if word not in ("true", "false"):
            continue
        end = next((j for j in range(i + 1, len(lexemes)) if lexemes[j][0] == "stop"), len(lexemes))
        later = next((j for j in range(i + 1, end) if lexemes[j][1] in ("true", "false")), end)
        clause = [w for k, w in lexemes[start:later] if k == "word"]
        if not set(clause) & _CONDITIONS:
            continue
        flips = sum(w in _FLIPS or w.endswith(("n't", "n\u2019t")) for w in clause)
        return (word == "true") != (flips % 2 == 1)
    return None


def _expected_truth(text: str) -> bool | None:
    """Return the expected intent's answer when its condition holds: a predicate says True."""
    said = _truth(text)
    if said is not None:
        return said
    words = [w for k, w in _lexemes(text) if k == "word"]
    if "whether" in words or (words and words[0] in _PREDICATE_HEADS):
        return True
    return None


def _inverted(predicted: str, expected: str) -> str | None:
    p_truth, e_truth = _truth(predicted), _expected_truth(expected)
    if p_truth is None or e_truth is None or p_truth == e_truth:
        return None
    answer, other = ("True", "False") if p_truth else ("False", "True")
    return f"truth: it answers {answer} when the condition holds, the expected intent {other}"


def value_defect(predicted: str, expected: str) -> str | None:
    """Return why the numbers or truth values of ``predicted`` differ (None: they agree).

    Parameters
    ----------
    predicted, expected : str
        The two intents, folded as a person reads them and in lower case.

    Returns
    -------
    str or None
        ``number: ...`` for a number, ordinal or fraction replaced by another (digits,
        number words zero to twenty, ordinals first to tenth and 1st, 2nd, ...; "one" and
        "second" only before a word they count), a number added with ``+``/``-``/``plus``/
        ``add``..., a rank ("second largest", "second-to-last") the expected intent lacks, or
        two ordinals named in another order; ``truth: ...`` for the other truth value
        answered when the condition holds. None when none of these differ.

    Examples
    --------
    >>> value_defect("add three integers.", "add two integers.")
    "number: 'three' where the expected intent has 'two'"
    >>> value_defect("answer false when it holds, true otherwise.", "tell whether n is even.")
    'truth: it answers False when the condition holds, the expected intent True'
    >>> value_defect("return true if n is prime, false otherwise.", "tell whether n is prime.")
    """
    for check in (_changed, _added, _swapped, _inverted):
        found = check(predicted, expected)
        if found is not None:
            return found
    return None
