"""Static code-quality analysis with radon and ``ast`` (docs/code.md#static-analysis)."""

from __future__ import annotations

import ast
import math
import os
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from lift_metrics import _pyast as pyast
from lift_metrics.errors import InputTypeError, InputValueError

_SKIPPED_DIRS = frozenset({"__pycache__", "node_modules", "site-packages", "build", "dist"})

MAX_SOURCE_CHARS = 1_000_000
"""The longest source :func:`analyze_code` reads (radon takes about 6 s at the limit).

It analyses the caller's own files, which are often longer than the metrics' bound on
generated code (``MAX_CODE_CHARS``, 100,000 characters), and raises on one it cannot read.
"""


@dataclass(frozen=True, repr=False)
class StaticAnalysis:
    """Static metrics of one Python source file (docs/code.md#static-analysis).

    Attributes
    ----------
    path : str or None
        The file analysed (``None`` for a source string).
    sloc : int
        Source lines of code (radon: blank and comment-only lines excluded).
    comment_lines : int
        Lines holding a comment (radon's ``comments``, inline comments included).
    comment_ratio : float
        ``comment_lines / sloc``; nan when ``sloc`` is 0.
    avg_complexity, max_complexity : float, int
        Mean and highest cyclomatic complexity over functions and methods (nested functions
        included); nan and 0 when there is no function.
    complexity_grade : str or None
        Radon's letter grade (A-F) of ``avg_complexity``; ``None`` without functions.
    maintainability_index : float
        Radon's maintainability index, 0-100 (higher is easier to maintain).
    maintainability_grade : str
        ``"A"`` (>= 20), ``"B"`` (10-19) or ``"C"`` (< 10), as radon grades it.
    halstead_volume, halstead_difficulty, halstead_bugs : float
        Radon's Halstead metrics for the whole file (bugs = volume / 3000).
    total_imports, framework_imports : int
        Imported modules: one per name in ``import a, b``, one per ``from m import ...``
        statement; framework imports are those whose module is one of the framework
        prefixes or inside one (``dspy`` matches ``dspy`` and ``dspy.teleprompt``).
    classes, functions : int
        Class and function definitions (methods and nested functions included).
    return_annotation_coverage : float
        Fraction of functions with a return annotation; nan without functions.
    """

    path: str | None
    sloc: int
    comment_lines: int
    comment_ratio: float
    avg_complexity: float
    max_complexity: int
    complexity_grade: str | None
    maintainability_index: float
    maintainability_grade: str
    halstead_volume: float
    halstead_difficulty: float
    halstead_bugs: float
    total_imports: int
    framework_imports: int
    classes: int
    functions: int
    return_annotation_coverage: float

    def __repr__(self) -> str:
        name = "<source>" if self.path is None else self.path
        return (
            f"StaticAnalysis({name}: sloc={self.sloc}, "
            f"avg_complexity={self.avg_complexity:.3g}, "
            f"mi={self.maintainability_index:.1f} {self.maintainability_grade})"
        )

    def to_dict(self) -> dict[str, Any]:
        """Field -> value (nan stays nan; :func:`lift_metrics._io.to_jsonable` writes null)."""
        return asdict(self)


def maintainability_grade(index: float) -> str:
    """Grade of a maintainability index: A (>= 20), B (10 to < 20), C (< 10).

    Examples
    --------
    >>> maintainability_grade(20.0), maintainability_grade(19.9), maintainability_grade(9.99)
    ('A', 'B', 'C')
    """
    if index >= 20:
        return "A"
    if index >= 10:
        return "B"
    return "C"


def _check_prefixes(framework_prefixes: Any) -> tuple[str, ...]:
    if isinstance(framework_prefixes, str):
        return (framework_prefixes,)
    if not isinstance(framework_prefixes, Iterable):
        raise InputTypeError(
            "framework_prefixes must be a str or a sequence of module names, "
            f"got {type(framework_prefixes).__name__}"
        )
    prefixes = tuple(framework_prefixes)
    for prefix in prefixes:
        if not isinstance(prefix, str) or not prefix:
            raise InputTypeError(f"framework_prefixes must hold non-empty str, got {prefix!r}")
    return prefixes


def _is_framework(module: str, prefixes: tuple[str, ...]) -> bool:
    return any(module == prefix or module.startswith(prefix + ".") for prefix in prefixes)


def analyze_code(
    source: str, *, framework_prefixes: Sequence[str] | str = (), path: str | None = None
) -> StaticAnalysis:
    r"""Compute static code-quality metrics of Python source (radon + ``ast``).

    Parameters
    ----------
    source : str
        Python source of one module.
    framework_prefixes : sequence of str, default ()
        Modules that count as framework imports, e.g. ``("dspy",)``.
    path : str or None, default None
        Recorded in the result (``analyze_path`` fills it in).

    Returns
    -------
    StaticAnalysis

    Raises
    ------
    TypeError
        If ``source`` is not a str or ``framework_prefixes`` holds non-strings.
    ValueError
        If ``source`` does not parse or exceeds :data:`MAX_SOURCE_CHARS` (1,000,000
        characters).

    Notes
    -----
    Formulas are radon's (``radon.raw.analyze``, ``radon.complexity.cc_visit``,
    ``radon.metrics.mi_visit`` with multi-line strings counted as comments,
    ``radon.metrics.h_visit``); the grades follow radon's. A file without functions
    has no per-function complexity or annotation coverage: those are nan (and the grade
    ``None``) without a warning, because modules such as ``__init__.py`` are normal input here.

    Examples
    --------
    >>> result = analyze_code(
    ...     "import dspy\nimport os\n\n\ndef f(x: int) -> int:\n"
    ...     "    if x > 0:  # positive\n        return x\n    return -x\n",
    ...     framework_prefixes=("dspy",),
    ... )
    >>> result.sloc, result.comment_lines, result.functions, result.max_complexity
    (6, 1, 1, 2)
    >>> result.total_imports, result.framework_imports, result.return_annotation_coverage
    (2, 1, 1.0)
    >>> result.complexity_grade, result.maintainability_grade
    ('A', 'A')
    """
    if not isinstance(source, str):
        raise InputTypeError(f"source must be a str, got {type(source).__name__}")
    prefixes = _check_prefixes(framework_prefixes)
    where = "" if path is None else f" ({path})"
    if len(source) > MAX_SOURCE_CHARS:
        raise InputValueError(f"source{where} is over the {MAX_SOURCE_CHARS:,}-character limit")
    try:
        tree = pyast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise InputValueError(f"source{where} does not parse: {exc}") from exc

    from radon.complexity import cc_rank, cc_visit
    from radon.metrics import h_visit, mi_visit
    from radon.raw import analyze

    raw = analyze(source)
    complexities: list[int] = []
    stack = [block for block in cc_visit(source) if not hasattr(block, "methods")]
    while stack:
        block = stack.pop()
        complexities.append(int(block.complexity))
        stack.extend(block.closures)
    avg = sum(complexities) / len(complexities) if complexities else math.nan
    index = float(mi_visit(source, multi=True))
    halstead = h_visit(source).total

    total_imports = 0
    framework_imports = 0
    classes = 0
    functions = 0
    annotated = 0
    for node in ast.walk(tree):
        modules: list[str] = []
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            modules = ["." * node.level + (node.module or "")]
        elif isinstance(node, ast.ClassDef):
            classes += 1
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            functions += 1
            annotated += node.returns is not None
        total_imports += len(modules)
        framework_imports += sum(_is_framework(module, prefixes) for module in modules)

    return StaticAnalysis(
        path=path,
        sloc=int(raw.sloc),
        comment_lines=int(raw.comments),
        comment_ratio=raw.comments / raw.sloc if raw.sloc else math.nan,
        avg_complexity=avg,
        max_complexity=max(complexities, default=0),
        complexity_grade=cc_rank(avg) if complexities else None,
        maintainability_index=index,
        maintainability_grade=maintainability_grade(index),
        halstead_volume=float(halstead.volume),
        halstead_difficulty=float(halstead.difficulty),
        halstead_bugs=float(halstead.bugs),
        total_imports=total_imports,
        framework_imports=framework_imports,
        classes=classes,
        functions=functions,
        return_annotation_coverage=annotated / functions if functions else math.nan,
    )


def python_files(path: str | os.PathLike[str]) -> list[Path]:
    """``path`` itself if it is a file, else the ``*.py`` files under it, sorted.

    Hidden directories (``.venv``, ``.git``), ``__pycache__``, ``site-packages``,
    ``node_modules``, ``build`` and ``dist`` are skipped.

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    """
    root = Path(path)
    if root.is_file():
        return [root]
    if not root.is_dir():
        raise FileNotFoundError(f"no such file or directory: {root}")
    found: list[Path] = []
    for directory, subdirs, files in os.walk(root):
        subdirs[:] = sorted(d for d in subdirs if not d.startswith(".") and d not in _SKIPPED_DIRS)
        found.extend(Path(directory) / name for name in sorted(files) if name.endswith(".py"))
    return found


def analyze_path(
    path: str | os.PathLike[str], *, framework_prefixes: Sequence[str] | str = ()
) -> list[StaticAnalysis]:
    """Compute static metrics of a Python file, or of every ``*.py`` file under a directory.

    Parameters
    ----------
    path : path-like
        A file, or a directory searched recursively (see :func:`python_files`).
    framework_prefixes : sequence of str, default ()
        As in :func:`analyze_code`.

    Returns
    -------
    list of StaticAnalysis
        One per file, in path order.

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    ValueError
        If a file does not parse (the message names it) or is not UTF-8.
    """
    results = []
    for file in python_files(path):
        try:
            source = file.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise InputValueError(f"{file} is not UTF-8 text: {exc}") from exc
        results.append(analyze_code(source, framework_prefixes=framework_prefixes, path=str(file)))
    return results
