"""The no-test score (reference_score) and the field's metrics (chrF, BLEU, CodeBLEU, EM)."""

from __future__ import annotations

import dataclasses
import json
import re

import numpy as np
import pytest
from code_testkit import ExplodingEmbedder
from hypothesis import given, settings, strategies as st
from testkit import HashEmbedder

from lift_metrics.code import (
    ReferenceScoreBreakdown,
    bleu_score,
    chrf_score,
    codebleu_available,
    codebleu_score,
    exact_match,
    reference_score,
    reference_score_breakdown,
    reference_scores,
)
from lift_metrics.code._reference import reference_model_path
from lift_metrics.code._reference_features import (
    _WRAPPED,
    REFERENCE_FEATURES,
    _calls,
    reference_feature_matrix,
)
from lift_metrics.code._reference_fit import fit_reference_model, grouped_bootstrap_interval

REFERENCE = "os.kill(os.getpid(), signal.SIGUSR1)"

DEGENERATE = [
    ("", "empty"),
    ("   \n\t", "empty"),
    ("{code}", "placeholder"),
    ("{{code}}", "placeholder"),
    ("<code>", "placeholder"),
    ("<your code here>", "placeholder"),
    ("[your code]", "placeholder"),
    ("{ solution }", "placeholder"),
    ("<unk> <unk>", "placeholder"),
    ("Use the sorted function with the key parameter.", "prose"),
    ("This function sends a signal to the current process.", "prose"),
    ("I think you should use os.kill here", "prose"),
    ("Sure! Here is how you can do it: call the kill function.", "prose"),
]


@pytest.mark.parametrize(("text", "kind"), DEGENERATE)
def test_non_code_scores_at_most_005_with_a_reason(text: str, kind: str) -> None:
    result = reference_score_breakdown(text, REFERENCE, embedder=ExplodingEmbedder())
    assert result.score <= 0.05
    assert result.degenerate == kind
    assert result.reasons
    assert "not code" in result.reasons[0]
    assert reference_score(text, REFERENCE, embedder=ExplodingEmbedder()) <= 0.05


@pytest.mark.parametrize(
    "code",
    ["x = 1", "{x}", "[x]", "print(x)", "for x in y: print x", "sorted(a, key=len)", "a.b"],
)
def test_code_is_not_taken_for_a_placeholder_or_prose(code: str) -> None:
    assert reference_score_breakdown(code, REFERENCE, embedder=HashEmbedder()).degenerate is None


def test_identical_code_scores_one_and_says_so() -> None:
    result = reference_score_breakdown(REFERENCE + "\n", REFERENCE, embedder=ExplodingEmbedder())
    assert result.score == 1.0
    assert "the prediction equals the reference" in result.reasons


def test_closer_code_scores_higher() -> None:
    embedder = HashEmbedder()
    near = reference_score("os.kill(os.getpid(), signal.SIGTERM)", REFERENCE, embedder=embedder)
    far = reference_score("print(sum([1, 2, 3]))", REFERENCE, embedder=embedder)
    assert 0.0 <= far < near < 1.0


@pytest.mark.parametrize(
    ("predicted", "expected", "why"),
    [
        ("def f(:\n  return", "def f(): pass", "the prediction does not parse"),
        ("os.kill(os.getpid(), 9)", "print 'python 2'", "the reference does not parse"),
        ("sys.signal(`signal.SIGUSR1`)", REFERENCE, None),
        ("pd.concat([df ['A'], how = ['A','<unk>']))", REFERENCE, "<unk>"),
        ("else:", "if x:", "does not parse"),
        ("\x00\x01 )))(((", "'''", "does not parse"),
        ("(" * 5000 + ")" * 5000, "x", "does not parse"),
        ("x = 1\n" * 10000, "x = 1", "only its start is compared"),
    ],
)
def test_fragments_and_unparseable_code_never_raise(
    predicted: str, expected: str, why: str | None
) -> None:
    result = reference_score_breakdown(predicted, expected, embedder=HashEmbedder())
    assert 0.0 <= result.score <= 1.0
    assert set(result.features) == set(REFERENCE_FEATURES)
    assert all(0.0 <= value <= 1.0 for value in result.features.values())
    if why is not None:
        assert any(why in reason for reason in result.reasons), result.reasons


# The features' first patterns, kept as the reference: their searches took time quadratic in
# a long name or run of spaces (seconds at the 20,000 characters a feature reads).
_FIRST_CALL = re.compile(r"([A-Za-z_]\w*(?:\s*\.\s*[A-Za-z_]\w*)*)\s*\(")
_FIRST_WRAPPED = re.compile(r"^(\{\{?|<|\[\[?|\$\{)\s*([A-Za-z_][\w \-.]*?)\s*(\}\}?|>|\]\]?)$")


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet="ab_3. (\n\t)\u00e9", max_size=16))
def test_called_names_are_those_of_the_first_pattern(text: str) -> None:
    expected: set[str] = set()
    for match in _FIRST_CALL.findall(text):
        dotted = re.sub(r"\s+", "", match)
        expected |= {dotted, dotted.rsplit(".", 1)[-1]}
    assert _calls(text, None) == expected


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet="{}<>[]$ a_b-.\t\n3\u00e9", max_size=12))
def test_placeholder_words_are_those_of_the_first_pattern(text: str) -> None:
    first, now = _FIRST_WRAPPED.match(text), _WRAPPED.match(text)
    assert (first is None) == (now is None)
    if first is not None and now is not None:
        words = [set(re.split(r"[\s_\-.]+", m.group(2).lower())) - {""} for m in (first, now)]
        assert words[0] == words[1]
        assert first.group(1) == now.group(1)


def test_backtick_quotes_are_read_as_quotes() -> None:
    embedder = HashEmbedder()
    ticks = reference_score_breakdown(
        "''.join([`a`, `b`])", "''.join(['a', 'b'])", embedder=embedder
    )
    assert ticks.features["chrf"] == 1.0
    assert ticks.features["parses"] == 1.0


def test_batch_equals_one_by_one_and_embeds_once() -> None:
    predicted = ["os.kill(1, 9)", "{code}", REFERENCE, "print(x)", "os.kill(1, 9)"]
    expected = [REFERENCE] * 5
    embedder = HashEmbedder()
    batch = reference_scores(predicted, expected, embedder=embedder)
    assert len(embedder.calls) == 1
    assert sorted(embedder.calls[0]) == sorted({"os.kill(1, 9)", "print(x)", REFERENCE})
    single = [
        reference_score(p, e, embedder=HashEmbedder())
        for p, e in zip(predicted, expected, strict=True)
    ]
    assert batch == pytest.approx(single)
    assert reference_scores([], [], embedder=ExplodingEmbedder()) == []


def test_bad_arguments_are_named() -> None:
    with pytest.raises(TypeError, match="predicted"):
        reference_score(None, "x")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="expected"):
        reference_score_breakdown("x", 3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="sequence of str"):
        reference_scores("abc", "abc")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="same length"):
        reference_scores(["x"], ["x", "y"])
    with pytest.raises(TypeError, match=r"predicted\[1\]"):
        reference_scores(["x", 2], ["x", "y"])  # type: ignore[list-item]


def test_breakdown_is_frozen() -> None:
    result = reference_score_breakdown("x", "x", embedder=HashEmbedder())
    assert isinstance(result, ReferenceScoreBreakdown)
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.score = 0.5  # type: ignore[misc]


def test_shipped_model_is_monotone_non_negative_and_small() -> None:
    model = json.loads(reference_model_path().read_text(encoding="utf-8"))
    assert "function" in model, "the shipped model has a part for function references"
    for part in (model, model["function"]):
        assert set(part["features"]) <= set(REFERENCE_FEATURES) - {"function"}
        assert len(part["weights"]) == len(part["features"])
        assert all(w >= 0 for w in part["weights"])
        x, y = np.asarray(part["calibration"]["x"]), np.asarray(part["calibration"]["y"])
        assert np.all(np.diff(x) > 0)
        assert np.all(np.diff(y) > 0)  # strictly: no ties among one task's candidates
        assert y.min() >= 0.0
        assert y.max() <= 1.0
        assert len(x) <= 50
    assert model["fitted_by"] == "benchmarks/fit_reference_model.py"
    assert "HumanEval" in model["fitted_on"]
    assert "CoNaLa" in model["fitted_on"]


def test_function_part_fits_its_own_rows() -> None:
    rng = np.random.default_rng(3)
    x = rng.random((400, len(REFERENCE_FEATURES)))
    gate = REFERENCE_FEATURES.index("function")
    x[:, gate] = np.arange(400) % 2
    chrf, coverage = REFERENCE_FEATURES.index("chrf"), REFERENCE_FEATURES.index("coverage")
    grades = 4 * np.where(x[:, gate] == 1, x[:, coverage], x[:, chrf])
    model = fit_reference_model(
        x, grades, features=["chrf", "coverage"], function_features=["chrf", "coverage"]
    )
    assert model["weights"][0] > 10 * model["weights"][1]
    assert model["function"]["weights"][1] > 10 * model["function"]["weights"][0]
    with pytest.raises(ValueError, match="function_features"):
        fit_reference_model(x, grades, function_features=["function"])
    with pytest.raises(ValueError, match="sample_weight"):
        fit_reference_model(x, grades, sample_weight=[1.0])


def test_fit_recovers_the_informative_feature_and_is_monotone() -> None:
    rng = np.random.default_rng(1)
    x = rng.random((300, len(REFERENCE_FEATURES)))
    grades = np.clip(4 * x[:, 1] + rng.normal(0, 0.2, 300), 0, 4)
    model = fit_reference_model(x, grades)
    weights = dict(zip(model["features"], model["weights"], strict=True))
    assert max(weights, key=weights.__getitem__) == "chrf"
    assert np.all(np.diff(model["calibration"]["y"]) >= 0)
    with pytest.raises(ValueError, match="features"):
        fit_reference_model(x, grades, features=["nope"])
    with pytest.raises(ValueError, match="shape"):
        fit_reference_model(x[:, :3], grades)


def test_grouped_bootstrap_interval_brackets_the_value() -> None:
    rng = np.random.default_rng(2)
    grades = rng.integers(0, 5, 200).astype(float)
    scores = grades + rng.normal(0, 1.5, 200)
    groups = [str(i // 5) for i in range(200)]
    for statistic in ("pearson", "spearman", "kendall"):
        value, low, high = grouped_bootstrap_interval(
            scores, grades, groups, statistic=statistic, n_resamples=300
        )
        assert low < value < high
    with pytest.raises(ValueError, match="statistic"):
        grouped_bootstrap_interval(scores, grades, groups, statistic="r2")


def test_feature_matrix_marks_degenerate_rows() -> None:
    matrix, kinds, reasons = reference_feature_matrix(
        ["x = 1", "", "y = 2"], ["x = 1", "x = 1", "x = 1"], embedder=HashEmbedder()
    )
    assert kinds == [None, "empty", None]
    assert not matrix[1].any()
    assert matrix[0][
        [REFERENCE_FEATURES.index(n) for n in REFERENCE_FEATURES if n != "function"]
    ].all()
    assert matrix[0][REFERENCE_FEATURES.index("function")] == 0.0  # "x = 1" is no function
    assert reasons[1] == ["the prediction is empty: not code"]


# ------------------------------------------------------------------ the field's metrics


def test_chrf_and_bleu_match_sacrebleu() -> None:
    sacrebleu = pytest.importorskip("sacrebleu", reason="sacrebleu is a core dependency")
    hyp, ref = "os.getpid()", REFERENCE
    assert chrf_score(hyp, ref) == pytest.approx(sacrebleu.sentence_chrf(hyp, [ref]).score / 100)
    bleu = sacrebleu.metrics.BLEU(effective_order=True).sentence_score(hyp, [ref]).score
    assert bleu_score(hyp, ref) == pytest.approx(bleu / 100)
    assert chrf_score(ref, ref) == 1.0
    assert bleu_score(ref, ref) == 1.0
    assert chrf_score("", ref) == 0.0


def test_exact_match_ignores_surrounding_whitespace_only() -> None:
    assert exact_match(" x = 1\n", "x = 1") == 1.0
    assert exact_match("x=1", "x = 1") == 0.0
    with pytest.raises(TypeError, match="predicted"):
        exact_match(1, "x")  # type: ignore[arg-type]


@pytest.mark.skipif(not codebleu_available(), reason="codebleu/tree-sitter-python not installed")
def test_codebleu_scores_identical_code_highest() -> None:
    same = codebleu_score("y = x + 1", "y = x + 1")
    other = codebleu_score("print('hello')", "y = x + 1")
    assert same == pytest.approx(1.0)
    assert 0.0 <= other < same
    assert 0.0 <= codebleu_score("def (", "y = x + 1") <= 1.0  # unparseable: no exception


def test_codebleu_without_the_package_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    import lift_metrics.code._field as field

    monkeypatch.setattr(field, "codebleu_available", lambda: False)
    with pytest.raises(ImportError, match=r"lift-metrics\[codebleu\]"):
        field.codebleu_score("x", "x")


@pytest.mark.slow
def test_real_model_on_conala_rows_tracks_the_grades() -> None:
    """Real MiniLM on 200 CoNaLa dev rows (in-sample for the shipped model: a sanity check)."""
    from lift_metrics.validation import shipped_dataset_path

    lines = shipped_dataset_path("conala").read_text(encoding="utf-8").splitlines()[:200]
    rows = [json.loads(line) for line in lines]
    scores = reference_scores([r["prediction"] for r in rows], [r["reference"] for r in rows])
    grades = [r["grade"] for r in rows]
    assert np.corrcoef(scores, grades)[0, 1] > 0.55
    assert reference_score("{code}", rows[0]["reference"]) <= 0.05
