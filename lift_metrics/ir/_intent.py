"""Word-level checks of a predicted intent that an embedding cosine cannot make.

Sentence embeddings rate topical closeness: "Add two integers. It does NOT do this." and
"Return the smallest integer in a list" sit close to "Add two integers" and "Return the
largest integer in a list". :func:`intent_defects` finds, with word lists and no model, the
ways an intent can be close in topic and useless to the step that writes the code
(docs/ir.md#intent-defects):

- *generic*: no word beyond the vocabulary that fits every function ("This function processes
  the input and returns a result");
- *negated*: a negation (``not``, ``never``, ``no``, ``without``, ``n't``, ``rather than``,
  ``instead of``, ...) whose first content word is one the expected intent asserts, or that
  has no content word at all beyond words about the behaviour itself ("It does NOT do
  this", "That is not the behaviour wanted", "Avoid doing this:"); "fails to", "refuses to",
  "anything but", "no longer" and ``unlike`` are negations too; a negation the expected
  intent makes too is not a defect;
- *negated*, too: a phrase that sets aside what came before ("actually", "except that", "in
  fact") or a clause with no condition that returns None, nothing or 0, where the expected
  intent has neither;
- *opposite*: a word of a contrast group (largest/smallest, first/last, even/odd,
  vowel/consonant, mean/median/mode, ...) where the expected intent has another word of that
  group and not this one, or two words that swap sides of "to"/"into" ("Celsius to
  Fahrenheit" against "Fahrenheit to Celsius"); named first even when the expected word
  follows ("the smallest, as opposed to the largest one"); words for characters where the
  expected intent has only words, and "root" or "reciprocal" that only the intent has;
- *number* and *truth*: a number, ordinal or truth value that differs
  (``lift_metrics.ir._intent_values``);
- *padded*: more than three times the expected intent's words and more than 60, so that the
  embedding, which reads 256 word pieces, never sees the end;
- *confusable*: a word mixing Latin with Cyrillic or Greek letters.

The text is read as a person reads it: compatibility forms folded (NFKC: fullwidth letters),
invisible format characters (zero-width spaces) dropped, Cyrillic and Greek look-alikes read
as Latin letters, and a negation spelled with digits for letters ("N0T", "n3ver") read as the
negation.
"""

from __future__ import annotations

import functools
import re
import unicodedata

from lift_metrics._text import visible_text
from lift_metrics.ir._intent_values import value_defect
from lift_metrics.ir._intent_words import CONTRASTS, INVERTING, SYNONYMS, UNITS

__all__ = ["intent_defects"]


def _wordset(text: str) -> frozenset[str]:
    return frozenset(text.split())


_TOKEN = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*(?:'[a-z]+)?")
_CLAUSE_END = frozenset({"and", "or", "but", "so", "then", "while", "whereas"})
_NEGATIONS = frozenset(
    {
        "not",
        "no",
        "never",
        "nor",
        "neither",
        "without",
        "cannot",
        "unless",
        "nothing",
        "n't",
        "rather",  # "rather than the largest"
        "instead",  # "instead of the maximum"
        "unlike",  # "unlike a function that would add them"
    }
)
#: verbs that negate what follows their "to" ("fails to add", "refuses to sort"); the pair is
#: read as one "not"
_NEGATING_VERBS = frozenset(
    {"fail", "fails", "failed", "refuse", "refuses", "refused", "decline", "declines"}
    | {"neglect", "neglects", "ceases", "cease"}
)
#: negations that count only when they negate the whole intent ("Avoid doing this:", "ignore
#: all of the above"): "avoid duplicates" and "ignore case" are requirements, not negations
_BARE_WHOLE_NEGATIONS = frozenset({"avoid", "ignore", "disregard", "forget", "opposite"})
#: the verbs count only with a word after them ("Undo this:", not "equal to its reverse.")
_WHOLE_NEGATIONS = _BARE_WHOLE_NEGATIONS | {"undo", "reverse", "invert", "negate", "contradict"}
#: words about the behaviour itself: a negation of only these negates the whole intent
_BEHAVIOUR_WORDS = frozenset(
    {"behaviour", "behavior", "wanted", "desired", "intended", "asked", "described", "above"}
    | {"say", "said", "stated", "written", "following", "below", "really", "actually", "truly"}
    | {"request", "requested", "instruction", "description", "specification"}
)
#: phrases that set aside what the intent said before them ("..., except that it always
#: returns 0", "Actually, it returns the input reversed"); a defect unless the expected intent
#: has the same phrase
_OVERRIDES: tuple[tuple[str, ...], ...] = (
    ("actually",),
    ("secretly",),
    ("pretend",),
    ("pretends",),
    ("except", "that"),
    ("in", "reality"),
    ("in", "fact"),
)
_RETURN_VERBS = frozenset(
    {"return", "returns", "give", "gives", "output", "outputs", "yield", "yields", "answer"}
    | {"answers", "produce", "produces"}
)
#: what an intent that gives up on the task returns ("this one returns None")
_GIVE_UP_VALUES = frozenset({"none", "null", "nothing", "zero", "0"})
#: conditions, which make a return in the next clause a case ("If it is missing, return 0")
_CONDITIONS = frozenset({"if", "when", "whenever", "unless", "otherwise", "else", "where", "once"})
#: words that make a return a case of the task rather than all of it ("None for an empty list")
_CASE_WORDS = frozenset(
    {"if", "when", "whenever", "unless", "for", "on", "otherwise", "or", "else", "where"}
    | {"instead", "until", "while", "once", "after", "before", "in", "with"}
)
#: digits read as the letters they stand in for, in a negation spelled with them ("n0t")
_DIGIT_LETTERS = str.maketrans({"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t"})
_STOPWORDS = _wordset(
    """a an the this that these those it its it's they them their there here of to in on at
    by for from with as is are was were be been being do does did doing done has have had
    having will would shall should can could may might must and or but if then else when
    where which who whom whose what how why so such than too very just also only each every
    all any some both either one ones into onto over under up down out about after before
    again further once same other another own i you he she we me my your our us him her
    not no never nor neither without cannot unless nothing ca wo"""
)
#: words that fit every function; an intent made only of these says nothing specific
_GENERIC = _wordset(
    """function functions method procedure routine code program logic task job operation
    operations process processes processing processed perform performs performing handle
    handles handling handled input inputs output outputs result results return returns
    returning returned value values given data thing things something stuff argument
    arguments parameter parameters compute computes computing calculate calculates
    calculation work works working implement implements implementation appropriate
    appropriately accordingly specified required needed necessary expected correct
    correctly properly provided certain some way ways run runs execute executes use uses
    used using make makes produce produces get gets take takes based relevant
    corresponding respective specific particular"""
)
_DIRECTION = frozenset({"to", "into"})
#: the words that list two ends of a range or a pair ("shortest to longest", "start, end")
_JOINS = frozenset({"to", "or", "and", "through", ".", "the", "from"})
#: an intent longer than this many times the expected one's words, and than
#: ``_PADDED_WORDS`` words, buries what it asks for
_PADDED_RATIO = 3
_PADDED_WORDS = 60


def _stem(word: str) -> str:
    """Return a light stem: plural and third-person ``s`` dropped, synonyms merged."""
    word = SYNONYMS.get(word, word)
    if len(word) > 4 and word.endswith("ies"):
        word = word[:-3] + "y"
    elif len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    return SYNONYMS.get(word, word)


#: Cyrillic and Greek letters that look like Latin ones, read as those
_LOOK_ALIKES = str.maketrans(
    "\u0430\u0432\u0435\u043a\u043c\u043d\u043e\u0440\u0441\u0442\u0443\u0445"
    "\u0456\u0458\u0455\u0501\u04bb\u04cf\u051b\u051d"
    "\u03b1\u03b9\u03ba\u03bd\u03bf\u03c1\u03c5",
    "abekmhopctyxijsdhlqwaikvopu",
)


def _readable(text: str) -> str:
    """Return ``text`` folded as it reads: NFKC forms, no invisible format characters.

    Cyrillic and Greek letters that look like Latin ones are read as those (an ``о`` inside
    "smallest" reads "smallest").
    """
    return visible_text(text).lower().translate(_LOOK_ALIKES)


def _word(token: str) -> str:
    """Return the negation a token spells with digits for letters (``n0t``), else the token."""
    if token.isalpha() or token.isdigit() or not any(ch.isalpha() for ch in token):
        return token
    read = token.translate(_DIGIT_LETTERS)
    return read if read in _NEGATIONS or read in _WHOLE_NEGATIONS else token


def _tokens(text: str) -> list[str]:
    """Return lower-case words (``doesn't`` -> ``does n't``); punctuation becomes ``.``."""
    tokens: list[str] = []
    for piece in re.split(r"([.;:,!?()\[\]])", _readable(text)):
        if piece and piece in ".;:,!?()[]":
            tokens.append(".")
            continue
        for word in _TOKEN.findall(piece.replace("\u2019", "'")):
            if word.endswith("n't"):
                tokens += [word[:-3] or "do", "n't"]
            else:
                tokens.append(_word(word))
    return _negating_phrases(tokens)


def _negating_phrases(tokens: list[str]) -> list[str]:
    """Return ``tokens`` with each phrase that negates what follows read as one ``not``.

    "fails to", "refuses to", "anything but" and "no longer" (not "no longer than": a
    bound) negate the words after them.
    """
    out: list[str] = []
    i = 0
    while i < len(tokens):
        pair = tuple(tokens[i : i + 2])
        after = tokens[i + 2] if i + 2 < len(tokens) else ""
        if (
            (len(pair) == 2 and pair[0] in _NEGATING_VERBS and pair[1] == "to")
            or pair == ("anything", "but")
            or (pair == ("no", "longer") and after != "than")
        ):
            out.append("not")
            i += 2
            continue
        out.append(tokens[i])
        i += 1
    return out


def _is_content(token: str) -> bool:
    return token not in _STOPWORDS and token != "." and token != "n't" and not token.isdigit()


@functools.lru_cache(maxsize=4096)
def _analysis(text: str) -> tuple[tuple[str, ...], frozenset[str], frozenset[str], list[str]]:
    """Return (tokens, content stems, stems inside a negation's clause, first negated stems)."""
    tokens = tuple(_tokens(text))
    content = frozenset(_stem(t) for t in tokens if _is_content(t))
    negated: set[str] = set()
    first_negated: list[str] = []
    for i, token in enumerate(tokens):
        if token not in _NEGATIONS and token not in _WHOLE_NEGATIONS:
            continue
        scope: list[str] = []
        for later in tokens[i + 1 : i + 7]:
            if later == "." or later in _CLAUSE_END:
                break
            if _is_content(later):
                scope.append(_stem(later))
        specific = [stem for stem in scope if stem not in _BEHAVIOUR_WORDS]
        if token in _WHOLE_NEGATIONS:
            # "Undo this:", not "equal to its reverse."
            said = token in _BARE_WHOLE_NEGATIONS or tokens[i + 1 : i + 2] not in ((), (".",))
            if not specific and said:
                first_negated.append("")
            continue
        negated.update(scope)
        # the first word that is not one every function has ("unlike a function that adds")
        telling = [stem for stem in specific if stem not in _generic_stems()]
        first_negated.append((telling or specific or [""])[0])
    return tokens, content, frozenset(negated), first_negated


def _sides(tokens: tuple[str, ...]) -> tuple[set[str], set[str]] | None:
    """Return the content stems before and just after the first ``to``/``into``.

    Before: the clause up to it; after: its next three content words. None without one.
    """
    for i, token in enumerate(tokens):
        if token in _DIRECTION:
            # the two clauses before it: a comma may set off an aside ("Parse a Roman
            # numeral string, including subtractive pairs, into an integer")
            clauses = " ".join(tokens[:i]).split(" . ")[-2:]
            left = {_stem(t) for t in " ".join(clauses).split() if _is_content(t)}
            right: list[str] = []
            for later in tokens[i + 1 :]:
                if later == "." or len(right) == 3:
                    break
                if _is_content(later):
                    right.append(_stem(later))
            return left, set(right)
    return None


@functools.cache
def _generic_stems() -> frozenset[str]:
    return frozenset(_stem(w) for w in _GENERIC)


@functools.cache
def _groups() -> dict[str, list[frozenset[str]]]:
    index: dict[str, list[frozenset[str]]] = {}
    for group in CONTRASTS:
        stems = frozenset(_stem(w) for w in group)
        for stem in stems:
            index.setdefault(stem, []).append(stems)
    return index


def _negation_defect(predicted: str, expected: str) -> str | None:
    _, e_content, e_negated, _ = _analysis(expected)
    for first in _analysis(predicted)[3]:
        if not first:
            return "negated: a negation with nothing specific after it negates the whole intent"
        if first in e_content and first not in e_negated:
            return f"negated: it negates {first!r}, which the expected intent asserts"
    return None


def _has_phrase(tokens: tuple[str, ...], phrase: tuple[str, ...]) -> bool:
    n = len(phrase)
    return any(tokens[i : i + n] == phrase for i in range(len(tokens) - n + 1))


def _gives_up(tokens: tuple[str, ...]) -> str | None:
    """Return the value a clause returns for every input ("this one returns None"), if any.

    A condition in the clause or in the one before it ("If the target is not found, return
    0") makes the return a case of the task.
    """
    start = previous = 0
    for i, token in enumerate(tokens):
        if token == "." or token in _CLAUSE_END:
            previous, start = start, i + 1
            continue
        if token not in _RETURN_VERBS:
            continue
        value = next((t for t in tokens[i + 1 : i + 3] if t not in ("a", "an", "the")), "")
        clause_end = next((j for j in range(i + 1, len(tokens)) if tokens[j] == "."), len(tokens))
        clause, before = set(tokens[start:clause_end]), set(tokens[previous:start])
        if value in _GIVE_UP_VALUES and not (clause & _CASE_WORDS or before & _CONDITIONS):
            return value
    return None


def _override_defect(predicted: str, expected: str) -> str | None:
    """Find a phrase that sets the intent aside, or a return of nothing for every input."""
    p_tokens, e_tokens = _analysis(predicted)[0], _analysis(expected)[0]
    for phrase in _OVERRIDES:
        if _has_phrase(p_tokens, phrase) and not _has_phrase(e_tokens, phrase):
            return f"negated: {' '.join(phrase)!r} sets aside what the intent said before it"
    value = _gives_up(p_tokens)
    if value is not None and value not in e_tokens:
        return f"negated: it returns {value!r} whatever the input, which the expected does not"
    return None


def _joined(
    tokens: tuple[str, ...], word: str, others: frozenset[str], group: frozenset[str]
) -> bool:
    """Return whether ``word`` is listed with a word of ``others`` ("shortest to longest").

    A range or a list ("[start, end]", "hours, minutes and seconds": only joining words and
    words of the ``group`` between them) names each; it does not swap one for the other.
    """
    stems = [_stem(t) for t in tokens]
    for i, stem in enumerate(stems):
        if stem != word:
            continue
        for j in range(max(0, i - 6), min(len(stems), i + 7)):
            between = stems[min(i, j) + 1 : max(i, j)]
            if stems[j] in others and set(between) <= _JOINS | group:
                return True
    return False


def _asked_for(
    tokens: tuple[str, ...], word: str, expected: frozenset[str], group: frozenset[str]
) -> bool:
    """Return whether the intent asks for ``word`` rather than for the ``expected`` words.

    It does when it names none of them, or names ``word`` first ("the smallest, as opposed
    to the largest") and not as one end of a range or a pair with them. One it negates
    ("rather than the largest") is left to the negation check.
    """
    stems = [_stem(t) for t in tokens]
    firsts = [stems.index(w) for w in expected if w in stems]
    if not firsts:
        return True
    if expected & _analysis(" ".join(tokens))[2]:
        return False
    return stems.index(word) < min(firsts) and not _joined(tokens, word, expected, group)


def _opposite_defect(predicted: str, expected: str) -> str | None:
    p_tokens, p_content, _, _ = _analysis(predicted)
    e_tokens, e_content, _, _ = _analysis(expected)
    groups = _groups()
    for word in sorted(p_content - e_content):
        for group in groups.get(word, ()):
            # the expected word mentioned too ("..., as opposed to the largest one") still
            # leaves this word the one the intent asks for
            others = sorted((group - {word}) & e_content)
            if others and _asked_for(p_tokens, word, frozenset(others), group):
                return f"opposite: {word!r} where the expected intent has {others[0]!r}"
    for group in UNITS:
        mine, theirs = (p_content - e_content) & group, (e_content - p_content) & group
        if mine and theirs and not p_content & e_content & group:
            return (
                f"opposite: {sorted(mine)[0]!r} where the expected intent has {sorted(theirs)[0]!r}"
            )
    inverting = sorted((p_content - e_content) & INVERTING)
    if inverting:
        return f"opposite: {inverting[0]!r} makes the expected task its inverse"
    p_sides, e_sides = _sides(p_tokens), _sides(e_tokens)
    if p_sides is None or e_sides is None:
        return None
    (p_left, p_right), (e_left, e_right) = p_sides, e_sides
    moved_right = (e_left - e_right) & (p_right - p_left)
    moved_left = (e_right - e_left) & (p_left - p_right)
    if moved_right and moved_left:
        a, b = sorted(moved_right)[0], sorted(moved_left)[0]
        return f"opposite: {b!r} to {a!r} where the expected intent goes from {a!r} to {b!r}"
    return None


def _padded_defect(predicted: str, expected: str) -> str | None:
    p_words = sum(t != "." for t in _analysis(predicted)[0])
    e_words = sum(t != "." for t in _analysis(expected)[0])
    if p_words > _PADDED_WORDS and p_words > _PADDED_RATIO * e_words:
        return (
            f"padded: it has {p_words} words, more than {_PADDED_RATIO} times the expected "
            "intent's: the embedding reads only its beginning"
        )
    return None


def _script(ch: str) -> str:
    return unicodedata.name(ch, "").partition(" ")[0]


def _confusable_defect(predicted: str, expected: str) -> str | None:
    """Find a word that mixes Latin letters with Cyrillic or Greek ones (a look-alike)."""
    for word in re.findall(r"[^\W\d_]+", unicodedata.normalize("NFKC", predicted)):
        scripts = {_script(ch) for ch in word if ch not in "\u03bc\u00b5"}  # micro: "μs"
        if "LATIN" in scripts and scripts & {"CYRILLIC", "GREEK"}:
            return f"confusable: the word {word!a} mixes Latin with Cyrillic or Greek letters"
    return None


def _value_defect(predicted: str, expected: str) -> str | None:
    return value_defect(_readable(predicted), _readable(expected))


_CHECKS = (
    _negation_defect,
    _override_defect,
    _opposite_defect,
    _value_defect,
    _padded_defect,
    _confusable_defect,
)


def intent_defects(predicted: str, expected: str) -> tuple[str, ...]:
    """Return why the predicted intent is unusable against the expected one (empty: usable).

    Parameters
    ----------
    predicted, expected : str
        The two intent descriptions.

    Returns
    -------
    tuple of str
        Each line starts with the defect: ``generic:``, ``negated:``, ``opposite:``,
        ``number:``, ``truth:``, ``padded:`` or ``confusable:``.

    Notes
    -----
    The checks are word lists (module docstring), cheap and deterministic. They are
    conservative where an honest paraphrase could trip them: a negation the expected intent
    makes too ("no leading zeros" / "without leading zeros") and a contrast word the expected
    intent also contains are not defects. An expected intent that is itself generic makes no
    predicted intent generic.

    Examples
    --------
    >>> intent_defects("Return the smallest integer in a list.", "Return the largest integer.")
    ("opposite: 'smallest' where the expected intent has 'largest'",)
    >>> intent_defects("Add two numbers. It does NOT do this.", "Add two integers.")
    ('negated: a negation with nothing specific after it negates the whole intent',)
    >>> intent_defects("Sum a pair of integers.", "Add two integers and return their sum.")
    ()
    """
    defects: list[str] = []
    generic = _generic_stems()
    p_content = _analysis(predicted)[1]
    e_specific = _analysis(expected)[1] - generic
    if not (p_content - generic) and e_specific:
        defects.append("generic: it names nothing specific to the task")
    for check in _CHECKS:
        found = check(predicted, expected)
        if found is not None:
            defects.append(found)
    return tuple(defects)
