"""Style conformance (docs/code.md#style_conformance): imports, naming conventions, docstrings."""

from __future__ import annotations

from lift_metrics.code._features import CodeFeatures, check_code, pair_features


def _jaccard(left: frozenset[str], right: frozenset[str]) -> float:
    union = left | right
    if not union:
        return 1.0  # two import-free files match (docs/decisions.md)
    return len(left & right) / len(union)


def style_parts(predicted: str, expected: str) -> tuple[float, float, float, CodeFeatures]:
    """(import score, naming score, docstring score, predicted features); inputs validated."""
    candidate, reference = pair_features(predicted, expected)
    if not candidate.parses:
        return 0.0, 0.0, 0.0, candidate
    imports = _jaccard(candidate.imports, reference.imports)
    naming = candidate.well_named / candidate.named if candidate.named else 1.0
    if candidate.functions:
        docstrings = 0.5 + 0.5 * candidate.documented_functions / candidate.functions
    else:
        docstrings = 1.0 if candidate.has_module_docstring else 0.5
    return imports, naming, docstrings, candidate


def style_conformance(predicted: str, expected: str) -> float:
    r"""How well the predicted code follows the reference's imports and Python conventions.

    Parameters
    ----------
    predicted, expected : str
        Generated code and the reference code.

    Returns
    -------
    float
        In [0, 1]: the mean of an import score, a naming score and a docstring score.

    Raises
    ------
    TypeError
        If either argument is not a str.
    ValueError
        If ``expected`` (the reference, a caller's input) does not parse.

    Notes
    -----
    .. math:: \text{style} = (I + N + D) / 3

    - **Imports** :math:`I = |P \cap E| / |P \cup E|`, the Jaccard index of the imported
      names (``import a.b`` gives ``a.b``; ``from a import b`` gives ``a.b``; relative
      imports keep their dots), collected anywhere in the module. Two import-free programs
      score 1.0 (docs/decisions.md#jaccard-of-two-empty-sets-is-1).
    - **Naming** :math:`N` = conforming names / distinct names defined in the prediction,
      checked on the AST (PEP 8): functions and methods and their arguments in snake_case
      (dunders allowed), variables (assignment, loop, ``with`` and comprehension targets) in
      snake_case or UPPER_CASE (CapWords also allowed for module-level type aliases),
      classes in CapWords; leading underscores allowed. No names defined: 1.0.
    - **Docstrings** :math:`D = 0.5 + 0.5 \cdot f_{doc}` where :math:`f_{doc}` is the fraction
      of function definitions (methods and nested functions included) that have a
      docstring; without any function, 1.0 if the module has a docstring, else 0.5
      (1.0 / 0.5).

    Only the import score uses the reference. A prediction that does not parse scores 0.0.

    Examples
    --------
    >>> reference = "import math\n\ndef area(r):\n    return math.pi * r ** 2\n"
    >>> good = (
    ...     'import math\n\ndef area(r):\n    \"\"\"Disk area.\"\"\"\n'
    ...     "    return math.pi * r**2\n"
    ... )
    >>> style_conformance(good, reference)
    1.0
    >>> style_conformance("def Area(R):\n    return 3.14159 * R * R\n", reference)
    0.16666666666666666
    """
    predicted = check_code("predicted", predicted)
    expected = check_code("expected", expected)
    imports, naming, docstrings, _ = style_parts(predicted, expected)
    return (imports + naming + docstrings) / 3.0
