"""syntax_correctness, style_conformance, structural_similarity and semantic_similarity."""

from __future__ import annotations

import ast
import keyword

import pytest
from hypothesis import given, settings, strategies as st

from lift_metrics.code import (
    MAX_CODE_CHARS,
    semantic_similarity,
    structural_similarity,
    style_conformance,
    syntax_correctness,
)

REFERENCE = '''import math


def circle_area(radius):
    """Area of a circle."""
    return math.pi * radius**2
'''

# --- syntax_correctness ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("", 1.0),  # the empty module is valid Python
        ("x = 1\n", 1.0),
        ("def f(:\n    pass\n", 0.0),
        ("def f():\nreturn 1\n", 0.0),  # indentation error is a SyntaxError subclass
        ("x = 1\x00\n", 0.0),  # null byte: ValueError in ast.parse on 3.11
        ("(" * 5000 + ")" * 5000, 0.0),  # nesting beyond the parser's limit
        ("return 1\n", 1.0),  # ast.parse accepts it; compile() does not (see forge tests)
    ],
)
def test_syntax_correctness_matches_ast_parse(code: str, expected: float) -> None:
    assert syntax_correctness(code) == expected


def test_syntax_correctness_bounds_huge_code() -> None:
    huge = "x = 1\n" * (MAX_CODE_CHARS // 6 + 1)
    assert len(huge) > MAX_CODE_CHARS
    assert syntax_correctness(huge) == 0.0


@pytest.mark.parametrize("bad", [None, b"x = 1", 3, ["x = 1"]])
def test_syntax_correctness_rejects_non_str_naming_the_parameter(bad: object) -> None:
    with pytest.raises(TypeError, match=r"^code must be a str"):
        syntax_correctness(bad)  # type: ignore[arg-type]


@given(st.text(max_size=60))
@settings(max_examples=200, deadline=None)
def test_syntax_correctness_agrees_with_ast_parse_on_random_text(text: str) -> None:
    try:
        ast.parse(text)
        reference = 1.0
    except (SyntaxError, ValueError):
        reference = 0.0
    assert syntax_correctness(text) == reference


# --- style_conformance ----------------------------------------------------------------------


def test_style_perfect_when_imports_match_names_conform_and_functions_documented() -> None:
    assert style_conformance(REFERENCE, REFERENCE) == 1.0


def test_style_formula_by_hand() -> None:
    # imports {os} vs {math}: Jaccard 0; names: functions getArea (bad) and helper (ok),
    # argument radius (ok), variable Result (bad) -> 2/4; 2 functions, 1 documented ->
    # 0.5 + 0.5 * 1/2 = 0.75
    code = (
        "import os\n\n"
        "def getArea(radius):\n"
        "    Result = 3.14 * radius\n"
        "    return Result\n\n"
        "def helper():\n"
        '    """Documented."""\n'
        "    return 1\n"
    )
    assert style_conformance(code, REFERENCE) == pytest.approx((0.0 + 2 / 4 + 0.75) / 3)


def test_style_two_import_free_programs_match_on_imports() -> None:
    # docs/decisions.md: Jaccard of two empty sets is 1.0 (x / max(|union|, 1) would give 0)
    code = 'def f(x):\n    """Doc."""\n    return x\n'
    assert style_conformance(code, "def g(y):\n    return y\n") == 1.0


def test_style_import_jaccard_uses_dotted_names() -> None:
    # {os.path, sys} vs {os.path, json}: 1/3; naming 1 (no names); no function, no docstring 0.5
    predicted = "from os import path\nimport sys\n"
    expected = "import os.path\nimport json\n"
    assert style_conformance(predicted, expected) == pytest.approx((1 / 3 + 1.0 + 0.5) / 3)


def test_style_docstrings_counted_on_functions_not_only_module() -> None:
    module_doc_only = '"""Module docstring."""\n\ndef f(x):\n    return x\n'
    documented = '"""Module docstring."""\n\ndef f(x):\n    """Doc."""\n    return x\n'
    reference = "def f(x):\n    return x\n"
    # imports 1, naming 1, docstrings 0.5 (0 of 1 function) vs 1.0
    assert style_conformance(module_doc_only, reference) == pytest.approx(2.5 / 3)
    assert style_conformance(documented, reference) == 1.0


def test_style_module_docstring_counts_when_there_is_no_function() -> None:
    assert style_conformance('"""Constants."""\nLIMIT = 3\n', "X = 1\n") == 1.0
    assert style_conformance("LIMIT = 3\n", "X = 1\n") == pytest.approx(2.5 / 3)


@pytest.mark.parametrize(
    ("code", "naming"),
    [
        ("class my_class:\n    pass\n", 0.0),  # class not CapWords
        ("class MyClass:\n    def Method(self):\n        pass\n", 2 / 3),  # method bad
        ("def f(BadArg, good_arg, *Args, **kw):\n    pass\n", 3 / 5),
        ("for myItem in range(3):\n    pass\n", 0.0),  # loop target must be snake/UPPER
        ("MAX_SIZE = 3\n_private = 1\n", 1.0),
        ("Vector = list\n", 1.0),  # module-level type alias may use CapWords
        ("def f():\n    Vector = 1\n    return Vector\n", 0.5),  # not inside a function
        ("def __init__(self):\n    pass\n", 1.0),  # dunder and self are fine
        ("with open('f') as fileHandle:\n    pass\n", 0.0),
        ("xs = [itemValue for itemValue in range(3)]\n", 0.5),
    ],
)
def test_style_naming_conventions_on_the_ast(code: str, naming: float) -> None:
    # imports: both empty -> 1.0; docstrings: derive from the code itself
    tree = ast.parse(code)
    functions = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]
    documented = sum(ast.get_docstring(f) is not None for f in functions)
    if functions:
        docs = 0.5 + 0.5 * documented / len(functions)
    else:
        docs = 1.0 if ast.get_docstring(tree) else 0.5
    assert style_conformance(code, "") == pytest.approx((1.0 + naming + docs) / 3)


def test_style_of_code_that_does_not_parse_is_zero() -> None:
    assert style_conformance("def f(:", REFERENCE) == 0.0


def test_style_rejects_a_reference_that_does_not_parse() -> None:
    with pytest.raises(ValueError, match="expected must be valid Python"):
        style_conformance(REFERENCE, "def f(:")


def test_style_rejects_non_str() -> None:
    with pytest.raises(TypeError, match=r"^predicted must be a str"):
        style_conformance(None, REFERENCE)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^expected must be a str"):
        style_conformance(REFERENCE, 1)  # type: ignore[arg-type]


_module_names = st.sampled_from(["os", "sys", "json", "math", "re", "itertools", "abc"])


@given(st.sets(_module_names), st.sets(_module_names))
def test_style_import_part_is_the_jaccard_index(left: set[str], right: set[str]) -> None:
    predicted = "".join(f"import {name}\n" for name in sorted(left))
    expected = "".join(f"import {name}\n" for name in sorted(right))
    union = left | right
    jaccard = len(left & right) / len(union) if union else 1.0  # independent set arithmetic
    # no names are defined and there is no function or docstring: naming 1.0, docstrings 0.5
    assert style_conformance(predicted, expected) == pytest.approx((jaccard + 1.0 + 0.5) / 3)


# --- structural_similarity ------------------------------------------------------------------


def test_structural_similarity_ignores_names_comments_and_docstrings() -> None:
    renamed = "import math\n\n\ndef area_of(r):\n    # pi r squared\n    return math.pi * r**2\n"
    assert structural_similarity(renamed, REFERENCE) == 1.0


def test_structural_similarity_sees_control_flow() -> None:
    reference = "def f(x):\n    return x\n"
    branching = "def f(x):\n    if x:\n        return x\n    return 0\n"
    score = structural_similarity(branching, reference)
    assert 0.0 < score < 1.0


def test_structural_similarity_by_hand() -> None:
    # reference: Module FunctionDef arguments arg arg Return BinOp Name Add Name (10 labels);
    # prediction drops "BinOp Name Add" -> distance 3 -> 1 - 3/10
    reference = "def add(a, b):\n    return a + b\n"
    assert structural_similarity("def add(a, b):\n    return a\n", reference) == pytest.approx(0.7)


def test_structural_similarity_literals_reduced_to_their_type() -> None:
    assert structural_similarity("x = 1\n", "y = 99\n") == 1.0
    assert structural_similarity("x = 1\n", "y = 'a'\n") < 1.0


def test_structural_similarity_of_unparsable_prediction_is_zero() -> None:
    assert structural_similarity("def f(:", REFERENCE) == 0.0


def test_structural_similarity_rejects_an_unparsable_reference() -> None:
    with pytest.raises(ValueError, match="expected must be valid Python"):
        structural_similarity(REFERENCE, "def f(:")


_identifiers = st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True).filter(
    lambda name: not keyword.iskeyword(name) and not keyword.issoftkeyword(name)
)


@given(st.lists(_identifiers, min_size=3, max_size=3, unique=True))
def test_structural_similarity_renaming_any_identifiers_scores_one(names: list[str]) -> None:
    function, first, second = names
    renamed = f"def {function}({first}, {second}):\n    return {first} * {second} + 1\n"
    assert structural_similarity(renamed, "def mul(a, b):\n    return a * b + 1\n") == 1.0


@given(st.integers(0, 6), st.integers(0, 6))
def test_structural_similarity_is_symmetric_and_in_range(m: int, n: int) -> None:
    left = "".join(f"x{i} = {i}\n" for i in range(m)) + "def f():\n    return 1\n"
    right = "".join(f"if y{i}:\n    pass\n" for i in range(n))
    forward = structural_similarity(left, right)
    assert forward == structural_similarity(right, left)
    assert 0.0 <= forward <= 1.0


# --- semantic_similarity (deterministic embedder; the real model is in test_code_real.py) ---


def test_semantic_similarity_identical_code_is_one_without_the_model(hash_embedder) -> None:
    assert semantic_similarity(REFERENCE, REFERENCE, embedder=hash_embedder) == 1.0
    assert hash_embedder.calls == []


def test_semantic_similarity_is_the_clipped_cosine_of_the_embeddings(hash_embedder) -> None:
    predicted = "def f(x):\n    return x + 1\n"
    rows = hash_embedder.embed([predicted, REFERENCE])
    expected = max(0.0, min(1.0, float(rows[0] @ rows[1])))
    assert semantic_similarity(predicted, REFERENCE, embedder=hash_embedder) == pytest.approx(
        expected
    )


def test_semantic_similarity_of_disjoint_token_sets_is_zero(hash_embedder) -> None:
    # the hash embedder is a bag of tokens: no shared token and no bucket collision -> 0
    assert semantic_similarity("alpha", "omega", embedder=hash_embedder) == pytest.approx(0.0)


def test_semantic_similarity_validates_arguments(hash_embedder) -> None:
    with pytest.raises(TypeError, match=r"^predicted must be a str"):
        semantic_similarity(b"x", "y", embedder=hash_embedder)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="embedder must have an embed"):
        semantic_similarity("x", "y", embedder=object())  # type: ignore[arg-type]
