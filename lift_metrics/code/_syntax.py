"""Syntax correctness (docs/code.md#syntax_correctness)."""

from __future__ import annotations

from lift_metrics.code._features import check_code, code_features


def syntax_correctness(code: str) -> float:
    r"""Whether ``code`` is syntactically valid Python: 1.0 or 0.0.

    Parameters
    ----------
    code : str
        Python source.

    Returns
    -------
    float
        1.0 if :func:`ast.parse` accepts the code, else 0.0.

    Raises
    ------
    TypeError
        If ``code`` is not a str (bytes, None, ...): that is a caller's mistake, not bad code.

    Notes
    -----
    As specified this is :func:`ast.parse`, which accepts a few programs that
    :func:`compile` rejects later (``return`` outside a function, ``break`` outside a loop);
    :func:`~lift_metrics.code.forge_inputs` uses the stricter ``compile``. Null bytes,
    absurdly deep nesting and code over ``MAX_CODE_CHARS`` (100,000 characters) score 0.0.
    The empty string is a valid (empty) module: 1.0.

    Examples
    --------
    >>> syntax_correctness("def add(a, b):\n    return a + b\n")
    1.0
    >>> syntax_correctness("def add(a, b) return a + b")
    0.0
    """
    return 1.0 if code_features(check_code("code", code)).parses else 0.0
