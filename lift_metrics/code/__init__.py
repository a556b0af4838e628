"""The code_quality metric family, the eval-report score's inputs and static analysis.

Scores follow scikit-learn's naming: every ``*_similarity``/``*_correctness``/``*_rate``/
``*_conformance``/``code_quality`` value is higher-is-better in [0, 1].

- :func:`code_quality` / :func:`code_quality_breakdown`: the score of generated code and the
  breakdown behind it. The default ``"validated"`` profile: tests dominate when they exist,
  non-code scores near zero, and without tests the no-test reference score; ``"seed"`` is the
  plain weighted sum (syntax 0.2, tests 0.4, semantic 0.3, style 0.1). One options object,
  :class:`CodeQualityOptions` (:func:`code_quality_options`), serves every code scorer.
- :func:`extract_code`: the code in an answer (Markdown fences, prose around it).
- :func:`degenerate_kind`: why an answer is not code (placeholder, prose, imports only...).
- :func:`syntax_correctness`, :func:`test_pass_rate` / :func:`test_pass_rate_breakdown` (run in
  :mod:`lift_metrics.sandbox`),
  :func:`semantic_similarity` (embeddings), :func:`structural_similarity` (AST, no model),
  :func:`style_conformance`.
- :func:`is_stub`: whether generated code is a placeholder (``code_quality``'s opt-in
  ``stub_cap``; its other opt-in is ``wrong_answer_gate``).
- :func:`reference_score` / :func:`reference_scores` / :func:`reference_score_breakdown`: the
  no-test score of code against a reference only, calibrated on programmers' grades
  (``datasets/conala/README.md``).
- :func:`chrf_score`, :func:`bleu_score`, :func:`codebleu_score`, :func:`exact_match`: the
  field's reference metrics (sacrebleu, the optional ``codebleu`` package), for comparison.
- :func:`forge_inputs` / :func:`forge_score_from_code`: the eval-report score of Python code
  (compiles, tests, ruff findings) through :func:`lift_metrics.stats.forge_score`.
- :func:`lint_code`, :func:`count_lint_findings`, :func:`lint_paths`: ruff's pyflakes rules.
- :func:`analyze_code` / :func:`analyze_path`: radon + ``ast`` static metrics
  (``lift-metrics analyze PATH``).

Importable from here but outside ``__all__`` (internals that other subpackages share: the
DSPy metric objects, calibration, scoring): ``run_answer`` (the pass-rate core on checked
arguments), ``normalize_tests`` / ``NormalizedTests``, ``check_entry_point``,
``complete_with_prompt``, ``gate_by_wrong_answers`` (``GATED_COMPONENTS``) and
``score_code``, the scoring core on validated inputs that the DSPy metric objects call;
``parses`` and ``FAIL_CEILING``, whose home is a shared internal module
(``lift_metrics._pyast``, ``lift_metrics._profiles``); and the option checks
``check_stub_cap`` and ``check_wrong_answer_gate`` (``lift_metrics._checks``). Also importable
from here but outside ``__all__``: the result types the functions return
(``CodeQualityBreakdown``, ``ReferenceScoreBreakdown``, ``ForgeInputs``, ``LintFinding``,
``StaticAnalysis``); the defaults ``DEFAULT_CODE_QUALITY_WEIGHTS`` and ``MAX_CODE_CHARS``;
the sandbox protocol ``SandboxLike``; and the helpers ``code_quality_options`` (profile ->
options), ``codebleu_available``, ``is_stub``, ``count_lint_findings``, ``lint_backend``,
``maintainability_grade`` and ``python_files``.
"""

from __future__ import annotations

# "name as name": importable from here, outside __all__ (internals, see the docstring)
from lift_metrics._checks import (
    check_stub_cap as check_stub_cap,
    check_wrong_answer_gate as check_wrong_answer_gate,
)
from lift_metrics._profiles import FAIL_CEILING as FAIL_CEILING
from lift_metrics._pyast import MAX_CODE_CHARS as MAX_CODE_CHARS, parses as parses
from lift_metrics.code._breakdown import CodeQualityBreakdown as CodeQualityBreakdown
from lift_metrics.code._degenerate import degenerate_kind
from lift_metrics.code._extract import complete_with_prompt as complete_with_prompt, extract_code
from lift_metrics.code._field import (
    bleu_score,
    chrf_score,
    codebleu_available as codebleu_available,
    codebleu_score,
    exact_match,
)
from lift_metrics.code._gate import (
    GATED_COMPONENTS as GATED_COMPONENTS,
    gate_by_wrong_answers as gate_by_wrong_answers,
)
from lift_metrics.code._lint import (
    LintFinding as LintFinding,
    count_lint_findings as count_lint_findings,
    lint_backend as lint_backend,
    lint_code,
    lint_paths,
)
from lift_metrics.code._options import (
    DEFAULT_CODE_QUALITY_WEIGHTS as DEFAULT_CODE_QUALITY_WEIGHTS,
    CodeQualityOptions,
    code_quality_options as code_quality_options,
)
from lift_metrics.code._pass_rate import (
    run_answer as run_answer,
    test_pass_rate,
    test_pass_rate_breakdown,
)
from lift_metrics.code._quality import (
    code_quality,
    code_quality_breakdown,
    score_code as score_code,
)
from lift_metrics.code._reference import (
    ReferenceScoreBreakdown as ReferenceScoreBreakdown,
    reference_score,
    reference_score_breakdown,
    reference_scores,
)
from lift_metrics.code._report_score import (
    ForgeInputs as ForgeInputs,
    forge_inputs,
    forge_score_from_code,
)
from lift_metrics.code._semantic import semantic_similarity
from lift_metrics.code._static import (
    StaticAnalysis as StaticAnalysis,
    analyze_code,
    analyze_path,
    maintainability_grade as maintainability_grade,
    python_files as python_files,
)
from lift_metrics.code._structural import structural_similarity
from lift_metrics.code._stub import is_stub as is_stub
from lift_metrics.code._style import style_conformance
from lift_metrics.code._syntax import syntax_correctness
from lift_metrics.code._tests import (
    NormalizedTests as NormalizedTests,
    SandboxLike as SandboxLike,
    check_entry_point as check_entry_point,
    normalize_tests as normalize_tests,
)

__all__ = [
    "CodeQualityOptions",
    "analyze_code",
    "analyze_path",
    "bleu_score",
    "chrf_score",
    "code_quality",
    "code_quality_breakdown",
    "codebleu_score",
    "degenerate_kind",
    "exact_match",
    "extract_code",
    "forge_inputs",
    "forge_score_from_code",
    "lint_code",
    "lint_paths",
    "reference_score",
    "reference_score_breakdown",
    "reference_scores",
    "semantic_similarity",
    "structural_similarity",
    "style_conformance",
    "syntax_correctness",
    "test_pass_rate",
    "test_pass_rate_breakdown",
]
