"""reference_score and the field's baselines in validation: scorers, --baselines, --labels."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lift_metrics.code import codebleu_available
from lift_metrics.validation import (
    BUILTIN_METRICS,
    FIELD_METRICS,
    SHIPPED_DATASETS,
    FieldMetricScorer,
    ReferenceScorer,
    builtin_scorer,
    load_labels,
    shipped_dataset_path,
    validate_metric,
)

PAIR_METRIC = """
def oracle(item):
    return item["guess"]
"""

ROWS = [
    ("os.kill(os.getpid(), 9)", "os.kill(os.getpid(), 9)", 4),
    ("os.kill(os.getpid(), 15)", "os.kill(os.getpid(), 9)", 3),
    ("os.getpid()", "os.kill(os.getpid(), 9)", 1),
    ("print(1)", "os.kill(os.getpid(), 9)", 0),
    ("sorted(a, key=len)", "sorted(a, key=len)", 4),
    ("sorted(a)", "sorted(a, key=len)", 2),
    ("a.sort(key=len)", "sorted(a, key=len)", 3),
    ("{code}", "sorted(a, key=len)", 0),
]


def test_reference_score_is_a_builtin_metric() -> None:
    assert "reference_score" in BUILTIN_METRICS
    scorer = builtin_scorer("reference_score")
    assert isinstance(scorer, ReferenceScorer)
    with pytest.raises(ValueError, match="reference_score takes no weights"):
        builtin_scorer("reference_score", weights={"x": 1})


def test_scorers_read_both_key_styles() -> None:
    code = "x = sorted(a, key=len)"
    ours = {"predicted_code": code, "expected_code": code}
    conala = {"prediction": code, "reference": code}
    assert ReferenceScorer()(ours) == ReferenceScorer()(conala) == 1.0
    for name in FIELD_METRICS:
        if name == "codebleu" and not codebleu_available():
            continue
        value = FieldMetricScorer(name)(conala)
        assert value == FieldMetricScorer(name)(ours)
        assert value > 0.95
    with pytest.raises(ValueError, match="metric must be one of"):
        FieldMetricScorer("rouge")
    with pytest.raises(ValueError, match="no field 'expected_code'"):
        FieldMetricScorer("chrf")({"predicted_code": "x"})


def test_field_scorer_goes_through_validate_metric() -> None:
    items = [({"prediction": p, "reference": r}, g) for p, r, g in ROWS]
    result = validate_metric(FieldMetricScorer("chrf"), items, target=0.5)
    assert result.n == len(ROWS)
    assert result.pearson > 0.5


@pytest.mark.slow
def test_baselines_are_extra_rows_and_never_gate(
    cli_main, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, write_jsonl, capsys
) -> None:
    (tmp_path / "pair_metric_mod.py").write_text(PAIR_METRIC, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    rows = [
        {"id": f"r{i}", "predicted_code": p, "expected_code": r, "human_score": g, "guess": g}
        for i, (p, r, g) in enumerate(ROWS)
    ]
    data = write_jsonl(tmp_path / "pairs.jsonl", rows)
    out = tmp_path / "report"
    args = ["validate", "pair_metric_mod:oracle", "--data", str(data), "--out", str(out)]
    # a target only the oracle reaches: the baselines miss it but do not fail the gate
    code = cli_main([*args, "--baselines", "--target", "0.999"])
    printed = capsys.readouterr().out
    assert code == 0
    for name in FIELD_METRICS:
        if name == "codebleu" and not codebleu_available():
            continue
        assert f"{name} (field baseline)" in printed
    report = json.loads((out / "validation.json").read_text())
    names = [r["metric"] for r in report["results"]]
    assert names[0] == "pair_metric_mod:oracle"
    assert "chrf (field baseline)" in names
    assert all(not r["passed"] for r in report["results"][1:])


@pytest.mark.parametrize(
    "extra",
    [
        ["--labels", "conala", "--data", "x.jsonl"],
        ["reference_score", "--labels", "conala", "--calibrate"],
    ],
)
def test_bad_label_options_exit_2(cli_main, tmp_path: Path, extra: list[str], capsys) -> None:
    assert cli_main(["validate", *extra, "--out", str(tmp_path / "r")]) == 2
    assert capsys.readouterr().err.startswith("lift-metrics validate: error:")


def test_unknown_labels_name_is_refused(cli_main, tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as exc:
        cli_main(["validate", "--labels", "nope", "--out", str(tmp_path / "r")])
    assert exc.value.code == 2


def test_shipped_conala_dataset_loads_with_its_mapping() -> None:
    dataset = SHIPPED_DATASETS["conala"]
    path = shipped_dataset_path("conala")
    items = load_labels(path, score_field=dataset.score_field, fields=dict(dataset.fields))
    assert len(items) == 1200
    assert set(items[0].item) == {"predicted_code", "expected_code", "intent", "system"}
    assert {item.label for item in items} <= {0.0, 1.0, 2.0, 3.0, 4.0}
    readme = (path.parent / "README.md").read_text(encoding="utf-8")
    assert "Apache-2.0" in readme
    assert "CC BY-SA 4.0" in readme
    assert "Evtikhiev" in readme


@pytest.mark.slow
def test_validate_labels_conala_end_to_end(cli_main, tmp_path: Path, capsys) -> None:
    """The README's command, real model: reference_score beats chrF on the CoNaLa dev half."""
    out = tmp_path / "conala"
    code = cli_main(["validate", "--labels", "conala", "--target", "0.6", "--out", str(out)])
    printed = capsys.readouterr().out
    assert code == 0, printed
    results = {r["metric"]: r for r in json.loads((out / "validation.json").read_text())["results"]}
    assert results["reference_score"]["n"] == 1200
    assert results["reference_score"]["pearson"] > results["chrf (field baseline)"]["pearson"]
