"""The code_quality metric: one scoring core, one options object, several profiles.

The default profile, ``"validated"``, ranks code the way people do: tests dominate when
they exist, answers that are not code score near zero, and without tests the score is the
no-test reference score. The weighted-sum family (``"seed"``, ``"shipped"``, custom
``weights``) is the plain syntax/tests/semantic/style weighted sum, for comparison.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, TypedDict

from lift_metrics._checks import check_method
from lift_metrics._keywords import keyword_arguments, takes_keywords
from lift_metrics._text import clean_text
from lift_metrics.code._features import check_code
from lift_metrics.code._tests import (
    NormalizedTests,
    SandboxLike,
    TestCases,
    check_entry_point,
    normalize_tests,
    resolve_sandbox,
)
from lift_metrics.similarity import (
    Embedder,
)

if TYPE_CHECKING:  # pragma: no cover
    from typing import Unpack

    from lift_metrics._profiles import CalibrationProfile

from lift_metrics.code._breakdown import CodeQualityBreakdown
from lift_metrics.code._options import CodeQualityOptions, code_quality_options
from lift_metrics.code._validated import _validated
from lift_metrics.code._weighted import _weighted


class _CodeQualityKeywords(TypedDict, total=False):
    """The keywords of :func:`code_quality` and :func:`code_quality_breakdown`, default None."""

    profile: str | os.PathLike[str] | CalibrationProfile | CodeQualityOptions | None
    weights: Mapping[str, float] | None
    embedder: Embedder | None
    sandbox: SandboxLike | None
    entry_point: str | None
    prompt: str | None
    timeout_s: float | None
    similarity_floor: float | None
    wrong_answer_gate: bool | None
    stub_cap: float | None
    behaviour: bool | None


@takes_keywords(_CodeQualityKeywords)
def code_quality_breakdown(
    predicted: str, expected: str, tests: TestCases, **options: Unpack[_CodeQualityKeywords]
) -> CodeQualityBreakdown:
    r"""Score generated code like :func:`code_quality` and say why.

    Parameters and raised errors are those of :func:`code_quality`.

    Returns
    -------
    CodeQualityBreakdown
        ``score`` plus ``components``, ``weights`` (empty for the validated profile), the
        sandbox ``execution`` with per-test outcomes, ``tests_passed``/``tests_total``,
        ``reasons``, ``stub``, ``profile``, ``degenerate`` and the scored ``code``.

    Examples
    --------
    >>> reference = "def add(a, b):\n    return a + b\n"
    >>> result = code_quality_breakdown("{code}", reference, [], entry_point="add")
    >>> result.score, result.degenerate
    (0.0, "template placeholder '{code}'")

    The ``"seed"`` weighted sum without a neural model (``structural`` instead of ``semantic``):

    >>> no_model = {"syntax": 0.2, "tests": 0.4, "semantic": 0, "style": 0.1, "structural": 0.3}
    >>> result = code_quality_breakdown("def add(a, b) return a + b", reference, [],
    ...                                 weights=no_model)
    >>> result.score, result.components["syntax"], result.components["tests"], result.execution
    (0.0, 0.0, 0.0, None)
    >>> result.reasons[0]
    "syntax: SyntaxError: expected ':' (line 1)"
    """
    given = keyword_arguments(code_quality_breakdown, options)
    predicted = check_code("predicted", predicted)
    expected = check_code("expected", expected)
    prompt = given.get("prompt")
    if prompt is not None:
        prompt = check_code("prompt", prompt)
    normalized = normalize_tests(tests)
    entry = check_entry_point(given.get("entry_point"))
    resolved = code_quality_options(
        given.get("profile"),
        weights=given.get("weights"),
        similarity_floor=given.get("similarity_floor"),
        wrong_answer_gate=given.get("wrong_answer_gate"),
        stub_cap=given.get("stub_cap"),
        timeout_s=given.get("timeout_s"),
        behaviour=given.get("behaviour"),
    )
    embedder, sandbox = given.get("embedder"), given.get("sandbox")
    if embedder is not None:
        check_method("embedder", embedder, "embed", wanted="have an embed(texts) method")
    if sandbox is not None:
        sandbox = resolve_sandbox(sandbox)
    return score_code(
        predicted,
        expected,
        normalized,
        resolved,
        entry_point=entry,
        prompt=prompt,
        embedder=embedder,
        sandbox=sandbox,
    )


def score_code(
    predicted: str,
    expected: str,
    tests: NormalizedTests,
    options: CodeQualityOptions,
    *,
    entry_point: str | None,
    prompt: str | None,
    embedder: Embedder | None,
    sandbox: SandboxLike | None,
) -> CodeQualityBreakdown:
    r"""Return the scoring core on validated inputs: every code scorer calls it.

    :func:`code_quality_breakdown` validates its arguments and calls this; the DSPy metric
    objects (:mod:`lift_metrics.dspy_metrics`) call it directly with options built once.

    Parameters
    ----------
    predicted, expected : str
        The generated code and the reference.
    tests : NormalizedTests
        From :func:`normalize_tests`.
    options : CodeQualityOptions
        From :func:`code_quality_options`.
    entry_point : str or None
        Checked by :func:`check_entry_point`.
    prompt : str or None
    embedder : Embedder or None
    sandbox : SandboxLike or None

    Returns
    -------
    CodeQualityBreakdown

    Notes
    -----
    The texts are read as valid Unicode, as every code metric reads them: a lone surrogate
    (JSON's ``"\ud800"``) becomes U+FFFD, the replacement character.
    """
    predicted, expected = clean_text(predicted), clean_text(expected)
    prompt = None if prompt is None else clean_text(prompt)
    if options.validated:
        return _validated(
            predicted, expected, tests, options, entry_point, prompt, embedder, sandbox
        )
    return _weighted(predicted, expected, tests, options, entry_point, embedder, sandbox, prompt)


@takes_keywords(_CodeQualityKeywords)
def code_quality(
    predicted: str, expected: str, tests: TestCases, **options: Unpack[_CodeQualityKeywords]
) -> float:
    r"""Quality of generated code against a reference and tests, in [0, 1].

    Parameters
    ----------
    predicted : str
        The generated answer: plain code, code in Markdown fences or among prose, or (with
        ``prompt``) a body-only completion.
    expected : str
        The reference (human-written) code. It need not parse (a fragment is scored on its
        text, and the reasons say so).
    tests : list of (dict, object) pairs, or str
        I/O cases ``[(kwargs, expected_output), ...]`` or a HumanEval-style assertion script;
        see :func:`~lift_metrics.code.test_pass_rate`. ``[]`` means no tests.
    profile : str, path, CalibrationProfile, CodeQualityOptions or None, default None
        ``"validated"`` (the default; see Notes), ``"seed"`` (the plain weighted sum
        ``0.2 syntax + 0.4 tests + 0.3 semantic + 0.1 style``), ``"shipped"`` (that sum with
        the weights, floor, gate and cap fitted in ``datasets/labels/
        calibrated_code_quality.json``), a profile file, a
        :class:`~lift_metrics.validation.CalibrationProfile`, or options from
        :func:`code_quality_options`.
    weights : mapping or None, default None
        Weighted-sum family only: ``syntax``/``tests``/``semantic``/``style``, optionally
        plus ``structural`` (:func:`~lift_metrics.code.structural_similarity`; use
        ``semantic=0, structural=0.3`` to score without a neural model); rescaled to sum to
        1. Giving it (or the three options below) without a profile selects the plain
        weighted sum with it (docs/code.md#profiles).
    embedder : Embedder or None, default None
        For the reference score and ``semantic``; ``None`` means the bundled
        all-MiniLM-L6-v2 (cached by text).
    sandbox : Sandbox or None, default None
        For the tests; ``None`` means :func:`lift_metrics.sandbox.get_default_sandbox`.
    entry_point : str or None, default None
        The function asked for, which the I/O cases call; ``None`` means the only top-level
        function. Given without tests, the answer must define it with a body.
    prompt : str or None, default None
        HumanEval-style prompt (signature and docstring). When given and the answer does
        not define the entry function itself, ``prompt + answer`` is scored (if it parses),
        so a body-only completion is read as the whole function. An answer that only echoes
        the prompt is degenerate.
    timeout_s : float or None, default None
        Per-execution time limit; ``None`` means the sandbox's own.
    similarity_floor : float or None, default None
        Weighted-sum family only: rescale ``semantic`` to ``max(0, (cos - floor) / (1 -
        floor))``; None means 0.
    wrong_answer_gate : bool or None, default None
        Weighted-sum family only: multiply ``semantic``, ``style`` and ``structural`` by
        ``1 - r`` (``r``: the share of tests that returned a wrong value).
    stub_cap : float or None, default None
        Weighted-sum family only: the most a placeholder entry function
        (:func:`~lift_metrics.code.is_stub`) can score.
    behaviour : bool or None, default None
        Validated profile only: compare the code with the reference on generated inputs
        when the reference runs (see Notes, step 4). None means on; False scores on the
        given tests and the resemblance alone.

    Returns
    -------
    float
        The score in [0, 1].

    Raises
    ------
    TypeError
        If ``predicted``/``expected``/``prompt`` is not a str, ``tests`` has the wrong
        shape, or another option has the wrong type.
    ValueError
        For an unknown profile, weighted-sum options given with ``"validated"`` or a
        calibrated profile, bad weights, ``timeout_s <= 0``, or an ``entry_point`` that is
        not an identifier.
    lift_metrics.sandbox.SandboxUnavailableError
        When the sandbox cannot run at all (a score that could not be computed is an error,
        never a 0).

    Notes
    -----
    The validated profile reads the answer as a person would
    (:func:`~lift_metrics.code.extract_code`, then ``prompt + answer`` for a body-only
    completion) and then:

    1. **Not code** (:func:`~lift_metrics.code.degenerate_kind`): empty text, a template
       placeholder (``{code}``) or prose scores 0; where a function is asked for (tests or
       an entry point), so do import lines only, a bare name, and the prompt or signature
       echoed with no body. Without tests but with an entry point, a missing entry function
       or a placeholder body (:func:`~lift_metrics.code.is_stub`) is degenerate too. So is
       an answer over ``MAX_CODE_CHARS`` (100,000 characters), which is neither read nor run
       ("too long to analyse"; the weighted sum gives it 0 on every component, each with
       its reason).
    2. **With tests** (n tests, k passed, r = the no-test reference score of the code
       against ``expected``, :func:`lift_metrics.code.reference_score`):

       .. math::

           s = \begin{cases} 0.2\,r & k = 0 \\
               0.25 + 0.75\,\dfrac{k - 1 + (1 - 0.3\,(1 - r))}{n} & k \ge 1 \end{cases}

       An output that fails every test (wrong value, exception, timeout, crash, memory
       limit, ``sys.exit``, missing entry point, code that does not parse) scores at most
       0.2; one that passes a test at least 0.25 + 0.525 / n (0.25 after step 4); one more
       passed test always scores higher whatever the resemblance (at the same behaviour);
       a correct solution identical to the reference scores 1.0. An assertion script
       counts as one test.
    3. **Without tests**: ``s = r``. Code that does not parse where a function is asked for
       cannot run: ``0.2 r``.
    4. **Behaviour** (``behaviour``, on by default; docs/code.md#behaviour-on-generated-inputs):
       where the reference is a function that runs, up to 20 inputs are generated (the
       tests' inputs mutated, the type hints, the reference's constants and the prompt's
       example calls; seeded, so always the same), those on which the reference raises
       are dropped, and the code is run on the rest in the sandbox; ``b`` is the share on
       which it returns what the reference returns (exact types, floats within 1e-9).
       Without tests the generated inputs are the tests: ``s`` is step 2's formula with
       ``k`` = the inputs agreed on and ``n`` = those compared, so code that computes
       nothing (the reference left as dead code or as comments) scores at most 0.2. With
       tests, ``f = 1 - 0.7 (1 - b)`` scales what is above the pass floor:
       ``0.25 + (s - 0.25) f`` when a test passed, ``s f`` when none did; a lookup table
       of the tests' answers falls from about 0.98 to about 0.47, and code that passes a
       test still scores above code that fails them all. ``tests`` (and
       :func:`test_pass_rate`) count the given tests only; the score and the ``behaviour``
       component of :func:`code_quality_breakdown` include the generated inputs. Where
       nothing runs (no reference function, a reference that raises on every input, a
       sandbox that cannot return values), steps 2-3 apply unchanged.

    The ``"seed"`` profile's weighted sum gives a ``pass`` stub 0.58 on average over the 164
    HumanEval problems with their check scripts (0.51 to 0.60; 0.564 on problem 0): no test
    passes, but syntax, style and the embedding resemblance still count. It also counts no
    tests as all tests passed. It is kept for comparison, not as an objective. A wrong
    prediction never raises; the reasons are in :func:`code_quality_breakdown`. Thread-safe:
    the sandbox runs while the calling thread computes the reference score.

    Examples
    --------
    A fake embedder keeps these examples free of the neural model:

    >>> import numpy as np
    >>> class Parallel:  # every text -> the same unit vector: cosine 1
    ...     def embed(self, texts):
    ...         return np.ones((len(texts), 2)) / np.sqrt(2)
    >>> reference = "def add(a, b):\n    return a + b\n"
    >>> tests = [({"a": 1, "b": 2}, 3), ({"a": 2, "b": 2}, 4)]
    >>> code_quality(reference, reference, tests, embedder=Parallel())
    1.0
    >>> fenced = "Sure:\n```python\n" + reference + "```\n"
    >>> code_quality(fenced, reference, tests, embedder=Parallel())
    1.0
    >>> wrong = "def add(a, b):\n    return a * b\n"  # passes the second test only
    >>> 0.25 < code_quality(wrong, reference, tests, embedder=Parallel()) <= 0.625
    True
    >>> stub = "def add(a, b):\n    pass\n"
    >>> code_quality(stub, reference, tests, embedder=Parallel())
    0.0
    >>> round(code_quality(stub, reference, tests, embedder=Parallel(), profile="seed"), 3)
    0.583
    """
    given = keyword_arguments(code_quality, options)
    return code_quality_breakdown(predicted, expected, tests, **given).score
