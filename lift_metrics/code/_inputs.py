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
import re
from collections.abc import Iterable, Sequence
from typing import Any, cast

from lift_metrics import _pyast as pyast
from lift_metrics.code._prompt_calls import prompt_examples, quoted_texts

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

# an unannotated parameter's type guessed from its name (only when nothing else tells)
_NAME_HINTS: tuple[tuple[str, Any], ...] = (
    (r"^(n|k|i|j|m|count|size|width|num|index|shift|limit|depth|base)$", ("int",)),
    (r"(text|string|word|name|line|sentence|title|s|prefix|sep)$", ("str",)),
    (r"^(words|names|strings|tokens|lines)$", ("list", ("str",))),
    (r"^(items|numbers|nums|values|lst|arr|array|xs|data|seq|l)$", ("list", ("int",))),
    (r"^(x|y|a|b|value|number|low|high|lo|hi)$", ("int",)),
)

Spec = tuple[Any, ...]
"""A type: ``("int",)``, ``("list", elem)``, ``("dict", key, value)``, ``("union", [..])``, ..."""


_SIMPLE = {"int": "int", "float": "float", "str": "str", "bool": "bool", "bytes": "bytes"}
_GENERIC: dict[str, Spec] = {
    "list": ("list", ("any",)),
    "List": ("list", ("any",)),
    "Sequence": ("list", ("any",)),
    "Iterable": ("list", ("any",)),
    "dict": ("dict", ("any",), ("any",)),
    "Dict": ("dict", ("any",), ("any",)),
    "Mapping": ("dict", ("any",), ("any",)),
    "tuple": ("tuple_of", ("any",)),
    "Tuple": ("tuple_of", ("any",)),
    "set": ("set", ("any",)),
    "Set": ("set", ("any",)),
    "frozenset": ("set", ("any",)),
}


def _spec(node: ast.expr | None) -> Spec:
    """Read a type hint (a syntax tree) as a :data:`Spec`; ``("any",)`` when unknown."""
    if node is None:
        return ("any",)
    if isinstance(node, ast.Constant):
        if node.value is None:
            return ("none",)
        if isinstance(node.value, str):  # a quoted hint
            try:
                return _spec(pyast.parse(node.value, mode="eval").body)
            except (SyntaxError, ValueError, RecursionError):
                return ("any",)
        return ("any",)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return ("union", [_spec(node.left), _spec(node.right)])
    if isinstance(node, ast.Name | ast.Attribute):
        name = node.id if isinstance(node, ast.Name) else node.attr
        if name in _SIMPLE:
            return (_SIMPLE[name],)
        return _GENERIC.get(name, ("any",))
    if isinstance(node, ast.Subscript):
        return _subscript_spec(node)
    return ("any",)


def _subscript_spec(node: ast.Subscript) -> Spec:
    """Read ``list[int]``, ``dict[str, int]``, ``tuple[int, ...]``, ``Optional[str]``, ..."""
    outer = getattr(node.value, "id", getattr(node.value, "attr", ""))
    base = _GENERIC.get(outer, ("any",))[0]
    args = list(node.slice.elts) if isinstance(node.slice, ast.Tuple) else [node.slice]
    if outer == "Optional":
        return ("union", [_spec(args[0]), ("none",)])
    if outer == "Union":
        return ("union", [_spec(a) for a in args])
    if base in ("list", "set"):
        return (base, _spec(args[0]))
    if base == "dict" and len(args) == 2:
        return ("dict", _spec(args[0]), _spec(args[1]))
    if base == "tuple_of":
        if len(args) == 2 and isinstance(args[1], ast.Constant) and args[1].value is ...:
            return ("tuple_of", _spec(args[0]))
        return ("tuple", [_spec(a) for a in args])
    return ("any",)


def _of_value(value: Any) -> Spec:
    """Return the :data:`Spec` of a sample value (its first element for containers)."""
    if isinstance(value, bool):
        return ("bool",)
    for kind in (int, float, str, bytes):
        if isinstance(value, kind):
            return (kind.__name__,)
    if value is None:
        return ("none",)
    if isinstance(value, list):
        return ("list", _of_value(value[0]) if value else ("any",))
    if isinstance(value, tuple):
        return ("tuple", [_of_value(v) for v in value])
    if isinstance(value, set | frozenset):
        return ("set", _of_value(next(iter(value))) if value else ("any",))
    if isinstance(value, dict):
        if not value:
            return ("dict", ("any",), ("any",))
        key, item = next(iter(value.items()))
        return ("dict", _of_value(key), _of_value(item))
    return ("any",)


def _refine(spec: Spec, sample: Spec) -> Spec:
    """Fill the unknown parts of ``spec`` from a sample value's spec."""
    if spec[0] == "any":
        return sample
    if spec[0] == sample[0] and spec[0] in ("list", "set", "tuple_of"):
        return (spec[0], _refine(spec[1], sample[1]))
    if spec[0] == "dict" and sample[0] == "dict":
        return ("dict", _refine(spec[1], sample[1]), _refine(spec[2], sample[2]))
    return spec


def _known(spec: Spec) -> bool:
    """Whether a value can be drawn for ``spec`` (no unknown part at the top)."""
    return spec[0] != "any" and not (spec[0] == "union" and not any(_known(s) for s in spec[1]))


class _Source(random.Random):
    """A seeded generator that also knows the reference's constants (boundary values).

    ``ints``: each integer constant of the reference and its neighbours; ``texts``: its
    short string constants that read as data rather than messages (``"01"``, ``"+"``,
    ``"aeiou"``); ``seps``: those of one punctuation character (``"."``, ``","``, ``"="``),
    which join random tokens into strings shaped like what a parser of that reference reads
    (``"12.0.255.7"``); ``chars``: the one-character constants together (``"()[]{}"``);
    ``lengths``: the integer constants that can be a string's length (``16``, ``17``: a
    word of 17 letters for a check of "at most 16 characters").
    """

    def __init__(self, seed: int, function: ast.AST | None) -> None:
        super().__init__(seed)
        ints: set[int] = set()
        texts: set[str] = set()
        for node in ast.walk(function) if function is not None else ():
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


def conforms(value: Any, spec: Spec) -> bool:
    """Whether ``value`` has the type ``spec`` (an int is a float, as type checkers say)."""
    kind = spec[0]
    if kind == "any":
        return True
    if kind == "union":
        return any(conforms(value, s) for s in spec[1])
    simple: dict[str, tuple[type, ...]] = {
        "int": (int,),
        "str": (str,),
        "bool": (bool,),
        "bytes": (bytes,),
        "float": (int, float),
    }
    if kind in simple:
        return isinstance(value, simple[kind]) and (kind == "bool" or type(value) is not bool)
    if kind == "none":
        return value is None
    if kind in ("list", "tuple_of", "set"):
        shapes: dict[str, tuple[type, ...]] = {
            "list": (list,),
            "tuple_of": (tuple,),
            "set": (set, frozenset),
        }
        if not isinstance(value, shapes[kind]):
            return False
        return all(conforms(v, spec[1]) for v in cast(Iterable[Any], value))
    if kind == "tuple":
        return (
            isinstance(value, tuple)
            and len(value) == len(spec[1])
            and all(conforms(v, s) for v, s in zip(value, spec[1], strict=True))
        )
    if kind == "dict":
        return isinstance(value, dict) and all(
            conforms(k, spec[1]) and conforms(v, spec[2]) for k, v in value.items()
        )
    return True


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


def _specs(params: list[tuple[str, Spec]], samples: list[dict[str, Any]]) -> dict[str, Spec]:
    """Return each parameter's type: its hint, filled from sample values, else its name's."""
    specs = {}
    for name, spec in params:
        for sample in samples:
            spec = _refine(spec, _of_value(sample[name]))
        if not _known(spec):
            for pattern, hinted in _NAME_HINTS:
                if re.search(pattern, name, flags=re.IGNORECASE):
                    spec = hinted
                    break
        specs[name] = spec
    return specs


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
    if not examples and len(names) == 1 and params[0][1][0] in ("str", "any"):
        docstring = ast.get_docstring(function)
        examples = [{names[0]: text} for text in quoted_texts(prompt, docstring)]
    specs = _specs(params, [*seeds, *examples])
    typed = all(_known(spec) for spec in specs.values())
    digest = hashlib.sha256(
        repr((reference, entry_point, [_key(s) for s in (*seeds, *examples)], variant)).encode()
    ).digest()
    rng = _Source(int.from_bytes(digest[:8], "big"), function)
    seen = {_key(s) for s in seeds}
    out: list[dict[str, Any]] = []

    def offer(candidate: dict[str, Any]) -> None:
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
