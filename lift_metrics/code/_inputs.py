"""Inputs for the behaviour check: from type hints, the prompt's examples and the tests' inputs.

:func:`generate_inputs` proposes keyword-argument dicts for the reference's entry function,
as EvalPlus does: the given inputs mutated one value at a time (type-aware: a number moved,
a character dropped, the characters reordered, a list element repeated, ...), values drawn
from the parameters' type hints (two arguments of one type now and then made a copy of each
other, reordered or changed: anagrams, equal lists), and the calls the prompt shows
(``>>> f(2, 3)`` or ``f(2, 3) == 5``) or, for a function of one string, the strings the
prompt or the reference's docstring quote (``such as "1h30m"``). The same reference, tests and
prompt always give the same inputs (the random generator is seeded from them), and every
input is small (see the constants). Which of them are valid is decided by running the
reference (:mod:`lift_metrics.code._behaviour`).
"""

from __future__ import annotations

import ast
import hashlib
import random
from collections.abc import Sequence
from typing import Any

from lift_metrics import _pyast as pyast
from lift_metrics.code._hints import Spec, _known, _spec, _specs, conforms
from lift_metrics.code._prompt_calls import (
    in_order,
    prompt_examples,
    quoted_texts,
    sorted_arguments,
)

MAX_INT = 1000
"""Generated integers stay within [-MAX_INT, MAX_INT] (mutation never leaves that range)."""
MAX_LENGTH = 12
"""The longest generated string, list, tuple, set or dict."""
MAX_INPUT_CHARS = 2000
"""An input whose ``repr`` is longer is dropped."""

_ALPHABET = "abcdeXYZ019 ,.-_!"
_SMALL_INTS = (0, 1, -1, 2, 3, 5, 7, 10, 12, 100)
_SMALL_FLOATS = (0.0, 1.0, -1.0, 0.5, 2.5, -3.25, 10.0, 100.0)
_SMALL_STRINGS = ("", "a", "ab", "abc", "Hello", "a b", "aAbB", "xyz 1", "racecar", "12")


class _Source(random.Random):
    """A seeded generator that also knows the reference's constants (boundary values).

    ``ints``: each integer constant of the reference and its neighbours; ``texts``: its
    short string constants that read as data rather than messages (``"01"``, ``"+"``,
    ``"aeiou"``); ``seps``: those of one punctuation character (``"."``, ``","``, ``"="``),
    which join random tokens into strings shaped like what a parser of that reference reads
    (``"12.0.255.7"``); ``chars``: the one-character constants together (``"()[]{}"``);
    ``lengths``: the integer constants that can be a string's length (``16``, ``17``: a
    word of 17 letters for a check of "at most 16 characters"); ``numeric``: whether the
    reference reads numbers from text (``int(token)``, ``float(text)``), so that a string
    is now and then a number's text (``"-3"``: an operand of a reverse Polish evaluator).
    """

    def __init__(self, seed: int, function: ast.AST | None) -> None:
        super().__init__(seed)
        ints: set[int] = set()
        texts: set[str] = set()
        self.numeric = False
        for node in ast.walk(function) if function is not None else ():
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in ("int", "float")
                and len(node.args) == 1
                and not isinstance(node.args[0], ast.Constant)
            ):
                self.numeric = True
            if isinstance(node, ast.Constant) and type(node.value) is int:
                ints.update(_clamp(node.value + d) for d in (-1, 0, 1))
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                text = node.value
                if text and len(text) <= 26 and text.isprintable() and text.count(" ") <= 1:
                    texts.add(text)
        self.ints = tuple(sorted(ints))
        self.texts = tuple(sorted(texts))
        self.seps = tuple(t for t in self.texts if len(t) == 1 and not t.isalnum())
        self.lengths = tuple(i for i in self.ints if 2 <= i <= 2 * MAX_LENGTH)
        singles = "".join(t for t in self.texts if len(t) == 1)
        self.chars = singles if len(singles) > 1 else ""

    def integer(self) -> int:
        """Draw a small integer, now and then a boundary value of the reference's constants."""
        if self.ints and self.random() < 0.3:
            return self.choice(self.ints)
        return self.choice(_SMALL_INTS) if self.random() < 0.5 else self.randint(-20, 60)

    def text(self) -> str:
        """Draw a short string: a usual one, or one built from the reference's constants."""
        if self.numeric and self.random() < 0.3:  # a number's text, for code that reads one
            return str(self.integer())
        if self.lengths and self.random() < 0.15:  # a word at a length the reference names
            size = self.choice(self.lengths)
            word = self.choice(("abc", "Hello", "racecar", "xyz1"))
            return (word * (size // len(word) + 1))[:size]
        roll = self.random()
        if roll < 0.25 or (not self.texts and roll < 0.6):
            return self.choice(_SMALL_STRINGS)
        if not self.texts:
            return "".join(self.choice(_ALPHABET) for _ in range(self.randint(0, 8)))
        if roll < 0.4:
            return self.choice(self.texts)
        if roll < 0.75 or not self.seps:  # the characters of one constant ("01": binary),
            # or of all the one-character ones ("(", ")", "[", "]": a bracket matcher's)
            pool = self.choice(self.texts) if roll < 0.6 or not self.chars else self.chars
            return "".join(self.choice(pool) for _ in range(self.randint(1, 8)))
        numbers = self.ints or (0, 1, 10)
        counts = [i for i in self.ints if 1 <= i <= 8]  # "four parts": a count it checks
        count = self.choice(counts) if counts and self.random() < 0.7 else self.randint(1, 5)
        tokens = [
            str(self.choice((self.randint(0, 300), self.choice(numbers))))
            if self.random() < 0.85
            else self.choice(("a", "ab", "x"))
            for _ in range(count)
        ]
        return self.choice(self.seps).join(tokens)


def _draw(spec: Spec, rng: random.Random, depth: int = 0) -> Any:
    """Draw a small random value of the type ``spec`` (unknown element types are ints)."""
    kind = spec[0]
    if kind == "union":
        options = [s for s in spec[1] if _known(s)] or [("int",)]
        return _draw(rng.choice(options), rng, depth)
    if kind in ("int", "any"):
        return rng.integer() if isinstance(rng, _Source) else rng.choice(_SMALL_INTS)
    if kind == "float":
        if rng.random() < 0.5:
            return rng.choice(_SMALL_FLOATS)
        return round(rng.uniform(-50, 100), 2)
    if kind == "bool":
        return rng.random() < 0.5
    if kind == "none":
        return None
    if kind in ("str", "bytes"):
        text = rng.text() if isinstance(rng, _Source) else rng.choice(_SMALL_STRINGS)
        return text.encode() if kind == "bytes" else text
    length = rng.randint(0, 5 if depth else 7)
    if not depth and rng.random() < 0.25:  # now and then a long one: 8 to 12 elements
        length = rng.randint(8, MAX_LENGTH)
    if depth >= 2:
        length = min(length, 2)
    if kind == "list":
        return [_draw(spec[1], rng, depth + 1) for _ in range(length)]
    if kind == "tuple_of":
        return tuple(_draw(spec[1], rng, depth + 1) for _ in range(length))
    if kind == "tuple":
        return tuple(_draw(s, rng, depth + 1) for s in spec[1])
    if kind == "set":
        return {_hashable(_draw(spec[1], rng, depth + 1)) for _ in range(length)}
    if kind == "dict":
        return {
            _hashable(_draw(spec[1], rng, depth + 1)): _draw(spec[2], rng, depth + 1)
            for _ in range(length)
        }
    return rng.choice(_SMALL_INTS)


def _hashable(value: Any) -> Any:
    """``value`` as a set member or dict key (lists become tuples, other unhashables str)."""
    if isinstance(value, list):
        return tuple(_hashable(v) for v in value)
    try:
        hash(value)
    except TypeError:
        return repr(value)
    return value


def _clamp(number: int) -> int:
    return max(-MAX_INT, min(MAX_INT, number))


def _mutate(value: Any, rng: random.Random, depth: int = 0, spec: Spec = ("any",)) -> Any:
    """Return one type-aware mutation of ``value`` (as EvalPlus mutates seed inputs).

    ``spec`` (the parameter's type) gives the element of an empty list.
    """
    if isinstance(value, list) and not value and spec[0] == "list" and _known(spec[1]):
        return [_draw(spec[1], rng, depth + 1)]
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        choices = (value + 1, value - 1, -value, 0, value * 2, value + rng.randint(2, 9))
        return _clamp(rng.choice(choices))
    if isinstance(value, float):
        return rng.choice((value + 0.5, value - 1.0, -value, 0.0, value * 2, round(value / 3, 3)))
    if isinstance(value, str | bytes):
        return _mutate_text(value, rng)
    if isinstance(value, list | tuple):
        items = _mutate_items(list(value), rng, depth)
        return type(value)(items) if isinstance(value, tuple) else items
    if isinstance(value, set | frozenset):
        members = list(value)
        if members and rng.random() < 0.5:
            members.pop(rng.randrange(len(members)))
        elif members:
            members.append(_hashable(_mutate(rng.choice(members), rng, depth + 1)))
        else:
            members.append(rng.choice(_SMALL_INTS))
        return type(value)(members)
    if isinstance(value, dict):
        return _mutate_pairs(dict(value), rng, depth)
    return value


def _mutate_items(items: list[Any], rng: random.Random, depth: int) -> list[Any]:
    """Drop, repeat, add, reorder or change an element of a list."""
    if not items:
        return [rng.choice(_SMALL_INTS)]
    position = rng.randrange(len(items))
    move = rng.randrange(6)
    if move == 0:
        del items[position]
    elif move == 1 and len(items) < MAX_LENGTH:
        items.insert(position, items[position])
    elif move == 2 and len(items) < MAX_LENGTH:
        items.append(_mutate(items[position], rng, depth + 1))
    elif move == 3:
        items.reverse()
    elif move == 4:
        rng.shuffle(items)
    else:
        items[position] = _mutate(items[position], rng, depth + 1)
    return items


def _mutate_pairs(pairs: dict[Any, Any], rng: random.Random, depth: int) -> dict[Any, Any]:
    """Drop a key, change a value or add a mutated key of a dict."""
    if not pairs:
        return {"a": rng.choice(_SMALL_INTS)}
    key = rng.choice(list(pairs))
    move = rng.randrange(3)
    if move == 0:
        del pairs[key]
    elif move == 1:
        pairs[key] = _mutate(pairs[key], rng, depth + 1)
    elif len(pairs) < MAX_LENGTH:
        pairs[_hashable(_mutate(key, rng, depth + 1))] = _mutate(pairs[key], rng, depth + 1)
    return pairs


def _mutate_text(value: str | bytes, rng: random.Random) -> str | bytes:
    text = value.decode("latin-1") if isinstance(value, bytes) else value
    # mostly the text's own characters (a binary string stays binary), sometimes others
    others = _ALPHABET + ("".join(rng.texts) if isinstance(rng, _Source) else "")
    pool = (text or others) if rng.random() < 0.8 else others
    if not text:
        text = "".join(rng.choice(pool) for _ in range(rng.randint(1, 4)))
    else:
        position = rng.randrange(len(text))
        move = rng.randrange(8)
        if move == 0:
            text = text[:position] + text[position + 1 :]
        elif move == 1:
            text = text[:position] + rng.choice(pool) + text[position:]
        elif move == 2:
            text = text[:position] + rng.choice(pool) + text[position + 1 :]
        elif move == 3:
            text = text.swapcase()
        elif move == 4:
            text = text[position:] + text[:position]
        elif move == 5:
            text = text[: max(1, position)]
        elif move == 6:
            text = text + text[position]
        else:  # the same characters in another order (an anagram)
            chars = list(text)
            rng.shuffle(chars)
            text = "".join(chars)
    text = text[: MAX_LENGTH * 2]
    return text.encode("latin-1", "replace") if isinstance(value, bytes) else text


def _function(code: str, entry_point: str | None) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    try:
        tree = pyast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    functions = [n for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
    if entry_point is not None:
        return next((f for f in functions if f.name == entry_point), None)
    return functions[0] if len(functions) == 1 else None


def parameters(code: str, entry_point: str | None) -> list[tuple[str, Spec]] | None:
    """Return the entry function's keyword-callable parameters and their hinted types.

    None when ``code`` does not parse, has no such function, or the function takes
    positional-only parameters, ``*args`` or ``**kwargs`` (a call by keywords cannot reach
    them).
    """
    function = _function(code, entry_point)
    if function is None or isinstance(function, ast.AsyncFunctionDef):
        return None
    args = function.args
    if args.posonlyargs or args.vararg is not None or args.kwarg is not None:
        return None
    return [(arg.arg, _spec(arg.annotation)) for arg in (*args.args, *args.kwonlyargs)]


def _key(inputs: dict[str, Any]) -> str:
    """Return a typed identity for an input (``1``, ``True`` and ``1.0`` differ)."""
    return repr(sorted((name, _typed(value)) for name, value in inputs.items()))


def _typed(value: Any) -> Any:
    if isinstance(value, list | tuple):
        return (type(value).__name__, [_typed(v) for v in value])
    if isinstance(value, dict):
        return ("dict", sorted((repr(_typed(k)), _typed(v)) for k, v in value.items()))
    if isinstance(value, set | frozenset):
        return (type(value).__name__, sorted(repr(_typed(v)) for v in value))
    return (type(value).__name__, repr(value))


def generate_inputs(
    reference: str,
    entry_point: str | None,
    seeds: Sequence[dict[str, Any]] = (),
    *,
    prompt: str | None = None,
    count: int = 40,
    variant: int = 0,
) -> tuple[dict[str, Any], ...]:
    r"""Propose up to ``count`` distinct inputs for the reference's entry function.

    Parameters
    ----------
    reference : str
        The reference code; its entry function's parameters and type hints are read.
    entry_point : str or None
        The function; None means the only top-level function.
    seeds : sequence of dict
        Known inputs (the I/O tests'): mutated, never proposed themselves.
    prompt : str or None
        Its calls of the entry function with literal arguments are proposed first.
    count : int, default 40
        The most inputs returned.
    variant : int, default 0
        Another value draws other inputs from the same arguments (a second round).

    Returns
    -------
    tuple of dict
        Keyword-argument dicts, deterministic for the same arguments; empty when the
        function cannot be called by keywords or nothing says what its parameters take.

    Examples
    --------
    >>> reference = "def add(a: int, b: int) -> int:\n    return a + b\n"
    >>> inputs = generate_inputs(reference, "add", [{"a": 2, "b": 3}], count=5)
    >>> len(inputs), all(set(i) == {"a", "b"} for i in inputs), {"a": 2, "b": 3} in inputs
    (5, True, False)
    >>> inputs == generate_inputs(reference, "add", [{"a": 2, "b": 3}], count=5)
    True
    """
    function = _function(reference, entry_point)
    params = parameters(reference, entry_point)
    if function is None or not params:
        return ()
    names = [name for name, _ in params]
    seeds = [dict(s) for s in seeds if set(s) == set(names)]
    examples = prompt_examples(prompt, function.name, names)
    docstring = ast.get_docstring(function)
    if not examples and len(names) == 1 and params[0][1][0] in ("str", "any"):
        examples = [{names[0]: text} for text in quoted_texts(prompt, docstring)]
    specs = _specs(params, [*seeds, *examples])
    lists = [name for name in names if specs[name][0] == "list"]
    ordered = sorted_arguments(names, lists, prompt, docstring)
    typed = all(_known(spec) for spec in specs.values())
    digest = hashlib.sha256(
        repr((reference, entry_point, [_key(s) for s in (*seeds, *examples)], variant)).encode()
    ).digest()
    rng = _Source(int.from_bytes(digest[:8], "big"), function)
    seen = {_key(s) for s in seeds}
    out: list[dict[str, Any]] = []

    def offer(candidate: dict[str, Any]) -> None:
        candidate = in_order(candidate, ordered)
        key = _key(candidate)
        if key in seen or len(out) >= count or len(repr(candidate)) > MAX_INPUT_CHARS:
            return
        if not all(conforms(candidate[name], specs[name]) for name in names):
            return  # outside the type hints: the reference's contract does not cover it
        seen.add(key)
        out.append(candidate)

    for example in examples:
        offer(example)
    pool = seeds + examples
    attempts = 0
    while len(out) < count and attempts < count * 8:
        attempts += 1
        if pool and (not typed or attempts % 3):
            base = dict(rng.choice(pool))
            changed = rng.sample(names, k=1 if rng.random() < 0.7 else len(names))
            for name in changed:
                base[name] = _mutate(base[name], rng, spec=specs[name])
            offer(_related(base, names, rng))
            if rng.random() < 0.3:
                pool.append(base)  # mutate mutants too, as EvalPlus does
        elif typed:
            offer(_related({name: _draw(specs[name], rng) for name in names}, names, rng))
        else:
            break
    return tuple(out)


def _related(inputs: dict[str, Any], names: Sequence[str], rng: random.Random) -> dict[str, Any]:
    """Now and then make one argument a copy of another of its type, reordered or changed.

    Two independent random strings or lists are almost never anagrams, equal or one a
    rearrangement of the other, the cases a function of two such arguments is about.
    """
    kinds: dict[type, list[str]] = {}
    for name in names:
        if type(inputs[name]) in (str, bytes, list, tuple):
            kinds.setdefault(type(inputs[name]), []).append(name)
    pairs = [group for group in kinds.values() if len(group) > 1]
    if not pairs or rng.random() >= 0.4:
        return inputs
    source, target = rng.sample(rng.choice(pairs), k=2)
    value = inputs[source]
    items = list(value)
    move = rng.randrange(4)
    if move == 1:
        rng.shuffle(items)
    elif move == 2:
        items.reverse()
    if isinstance(value, str):
        related: Any = "".join(items)
    elif isinstance(value, bytes):
        related = bytes(items)
    else:
        related = type(value)(items)
    if move == 3:
        related = _mutate(related, rng)
    return {**inputs, target: related}
