"""Fit the no-test score's model on the CoNaLa dev grades and write reference_model.json.

Run from the repository root (offline, CPU, about a minute):

    HF_HUB_OFFLINE=1 python scripts/fit_reference_model.py

It computes the features of every (prediction, reference) pair of ``datasets/conala/dev.jsonl``
with :func:`lift_metrics.code._reference_features.reference_feature_matrix`, prints the
grouped 5-fold cross-validated Pearson (folds and bootstrap grouped by intent), fits
:func:`lift_metrics.code._reference_fit.fit_reference_model` on all rows and writes
``lift_metrics/code/reference_model.json``. The model is fitted on the mean of each row's
per-grader grades and judged against the aggregated ``grade``. Only the dev half is used;
nothing is tuned on any other data. Needs scikit-learn (a dependency of lift-metrics).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from lift_metrics.code._reference import reference_model_path
from lift_metrics.code._reference_features import reference_feature_matrix
from lift_metrics.code._reference_fit import (
    cross_validated_reference_scores,
    fit_reference_model,
    graders_mean,
    grouped_bootstrap_interval,
)
from lift_metrics.validation._labels import shipped_dataset_path

ALPHA = 1.0
KNOTS = 21


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=shipped_dataset_path("conala"))
    parser.add_argument("--out", type=Path, default=reference_model_path())
    args = parser.parse_args()
    rows = [json.loads(line) for line in args.data.read_text(encoding="utf-8").splitlines()]
    grades = [float(row["grade"]) for row in rows]  # what the score is judged against
    target = [graders_mean(row) for row in rows]  # what it is fitted on (every grader's grade)
    groups = [row["id"].split("-")[1] for row in rows]  # conala-<intent>-<system>
    matrix, _, _ = reference_feature_matrix(
        [row["prediction"] for row in rows], [row["reference"] for row in rows]
    )
    cv = cross_validated_reference_scores(matrix, target, groups, alpha=ALPHA, knots=KNOTS)
    value, low, high = grouped_bootstrap_interval(cv, grades, groups)
    print(f"grouped 5-fold CV Pearson {value:.3f} [{low:.3f}, {high:.3f}] on {len(rows)} rows")
    model = fit_reference_model(matrix, target, alpha=ALPHA, knots=KNOTS)
    model["fitted_on"] = f"{args.data.name} ({len(rows)} rows, CoNaLa dev half)"
    model["fitted_by"] = "scripts/fit_reference_model.py"
    model["target"] = "mean of the per-grader grades / 4"
    model["cv_pearson_with_grade"] = round(value, 4)
    args.out.write_text(json.dumps(model, indent=1) + "\n", encoding="utf-8")
    print(f"model written to {args.out}")


if __name__ == "__main__":
    main()
