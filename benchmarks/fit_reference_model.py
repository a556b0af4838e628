"""Choose and fit the no-test score's model on two dev sets together; write reference_model.json.

Run from the repository root (offline, CPU, a few minutes on 2 cores):

    HF_HUB_OFFLINE=1 python benchmarks/fit_reference_model.py --humaneval PATH/dev.jsonl [--write]

The two dev sets (fitted and chosen on both together, never on one alone):

- CoNaLa grades, ``datasets/conala/dev.jsonl`` (shipped; one-line snippets graded 0-4 by
  programmers; fitted on the mean of each row's graders, judged against ``grade``).
- HumanEval completions with execution verdicts, the dev half of the problems (Codex
  completions from the CodeBERTScore authors' data, neulab/code-bert-score,
  ``evaluation/data/humaneval_python_davinci-0.8-keep/``; the dev half is the problems whose
  task id's SHA-256 starts with an even byte; rows hold ``task_id``, ``prediction``,
  ``reference``, ``passed``). Not shipped: give its path with ``--humaneval``. Bodies are
  flattened to one line there, so most do not parse.

Both are read through :func:`lift_metrics.code._reference_features.reference_feature_matrix`
(the same features the score computes at run time). Each candidate below is refitted in grouped
5-fold cross-validation (folds by CoNaLa intent and HumanEval problem; the two sets' rows weigh
equally in every fit) and judged on its out-of-fold scores, scored as the function scores them
(0 for a degenerate prediction, 1 for the reference's own program): Pearson with the CoNaLa
grade, Pearson (point-biserial) with HumanEval's ``passed`` and the mean within-problem
Kendall tau (the data's README reads agreement this way). The chosen candidate is the one
with the best mean of CoNaLa Pearson, HumanEval Pearson and HumanEval within-problem Kendall
among those at least as good as chrF (sacrebleu, on the texts as given) on both HumanEval
figures; its CoNaLa figure is printed against the CoNaLa-only baseline (fitted on CoNaLa
alone, the first eleven features). It is then fitted on all rows of both sets and, with
``--write``, written to ``lift_metrics/code/reference_model.json`` with a note of where it
came from. Every figure printed is a development figure: the candidates were chosen on these
same files.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from lift_metrics.code import chrf_score
from lift_metrics.code._reference import reference_model_path
from lift_metrics.code._reference_features import (
    REFERENCE_FEATURES,
    reference_feature_matrix,
    same_program,
)
from lift_metrics.code._reference_fit import (
    cross_validated_reference_scores,
    fit_reference_model,
    graders_mean,
    within_group_kendall,
)
from lift_metrics.validation._labels import shipped_dataset_path

BASE = list(REFERENCE_FEATURES[:11])  # the first eleven features, the CoNaLa-only baseline's
RECALL = ["chrf_recall", "coverage", "token_recall"]
RECALL4 = ["chrf", "chrf_recall", "coverage", "token_recall"]
SMALL = ["embedding", "chrf", "chrf_recall", "coverage", "token_recall", "identifiers", "unk"]
CANDIDATES: dict[str, dict[str, Any]] = {
    "CoNaLa-only baseline (11 features)": {"features": BASE, "conala_only": True},
    "both, 11 features": {"features": BASE},
    "both, 14 features": {"features": BASE + RECALL},
    "both, function part 14 features": {"features": BASE, "function_features": BASE + RECALL},
    "both, function part 7 features": {"features": BASE, "function_features": SMALL},
    "both, function part 4 features": {"features": BASE, "function_features": RECALL4},
    "both, function part 5 features": {
        "features": BASE,
        "function_features": [*RECALL4, "token_edit"],
    },
    "both, function part 7 features, alpha 10": {
        "features": BASE,
        "function_features": SMALL,
        "alpha": 10.0,
    },
}
KNOTS = 21


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _line(name: str, figures: tuple[float, float, float], *, mean: bool = False) -> str:
    cells = " ".join(f"{v:{w}.3f}" for v, w in zip(figures, (9, 7, 14), strict=True))
    return f"{name:<44} {cells}" + (f" {np.mean(figures):7.4f}" if mean else "")


def main() -> None:
    """Run the choice in cross-validation, print both sets' figures, fit and write the model."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conala", type=Path, default=shipped_dataset_path("conala"))
    parser.add_argument("--humaneval", type=Path, required=True)
    parser.add_argument("--out", type=Path, default=reference_model_path())
    parser.add_argument("--write", action="store_true", help="write the chosen model")
    args = parser.parse_args()
    conala, humaneval = _rows(args.conala), _rows(args.humaneval)
    rows = conala + humaneval
    n_conala = len(conala)
    predicted = [row["prediction"] for row in rows]
    expected = [row["reference"] for row in rows]
    print(
        f"{n_conala} CoNaLa rows, {len(humaneval)} HumanEval rows; cpus={os.cpu_count()}, "
        f"load average {os.getloadavg()[0]:.1f}"
    )
    matrix, kinds, _ = reference_feature_matrix(predicted, expected)
    degenerate = np.array([kind is not None for kind in kinds])
    same = np.array([same_program(p, e) for p, e in zip(predicted, expected, strict=True)])
    grade = np.array([float(row["grade"]) for row in conala])
    passed = np.array([float(row["passed"]) for row in humaneval])
    target = np.concatenate([[graders_mean(row) for row in conala], 4.0 * passed])
    groups = [f"conala-{row['id'].split('-')[1]}" for row in conala]
    groups += [str(row["task_id"]) for row in humaneval]
    problems = groups[n_conala:]
    is_conala = np.arange(len(rows)) < n_conala
    balance = np.where(is_conala, len(rows) / (2 * n_conala), len(rows) / (2 * len(humaneval)))
    fit_rows = ~degenerate

    def as_scored(scores: np.ndarray) -> np.ndarray:
        return np.where(degenerate, 0.0, np.where(same, 1.0, scores))

    def figures(scores: np.ndarray) -> tuple[float, float, float]:
        conala_r = float(np.corrcoef(scores[:n_conala], grade)[0, 1])
        humaneval_r = float(np.corrcoef(scores[n_conala:], passed)[0, 1])
        within, _ = within_group_kendall(scores[n_conala:], passed, problems)
        return conala_r, humaneval_r, within

    seen = figures(as_scored(matrix[:, REFERENCE_FEATURES.index("chrf")]))
    raw = [chrf_score(p, e) for p, e in zip(predicted, expected, strict=True)]
    chrf = figures(np.asarray(raw))
    print(f"\n{'candidate':<44} {'CoNaLa r':>9} {'HE r':>7} {'HE within-tau':>14} {'mean':>7}")
    print(_line("chrF (sacrebleu, the texts as given)", chrf))
    print(_line("chrF on the texts as run (the feature)", seen))
    results: dict[str, tuple[float, float, float]] = {}
    for name, spec in CANDIDATES.items():
        options = {k: v for k, v in spec.items() if k != "conala_only"}
        weight = np.where(is_conala, 1.0, 0.0) if spec.get("conala_only") else balance
        scores = np.zeros(len(rows))
        scores[fit_rows] = cross_validated_reference_scores(
            matrix[fit_rows],
            target[fit_rows],
            np.asarray(groups)[fit_rows],
            sample_weight=weight[fit_rows],
            knots=KNOTS,
            **options,
        )
        results[name] = figures(as_scored(scores))
        print(_line(name, results[name], mean=True))
    floor = results["CoNaLa-only baseline (11 features)"][0]
    eligible = [name for name, (_, h, w) in results.items() if h >= chrf[1] and w >= chrf[2]]
    if not eligible:
        print("\nno candidate is at least chrF on HumanEval; nothing written")
        return
    chosen = max(eligible, key=lambda name: float(np.mean(results[name])))
    print(f"\nchosen (grouped 5-fold CV, development figures): {chosen}")
    verdict = "at least" if results[chosen][0] >= floor else "BELOW"
    print(f"CoNaLa: {results[chosen][0]:.3f}, {verdict} the CoNaLa-only baseline ({floor:.3f})")
    options = {k: v for k, v in CANDIDATES[chosen].items() if k != "conala_only"}
    model = fit_reference_model(
        matrix[fit_rows],
        target[fit_rows],
        sample_weight=balance[fit_rows],
        knots=KNOTS,
        **options,
    )
    c, h, w = results[chosen]
    model["fitted_on"] = (
        f"{args.conala.name} of datasets/conala ({n_conala} rows, CoNaLa dev half) and the "
        f"HumanEval completions dev half ({len(humaneval)} rows, {len(set(problems))} problems), "
        "rows of each set weighing half"
    )
    model["fitted_by"] = "benchmarks/fit_reference_model.py"
    model["target"] = "CoNaLa: mean of the per-grader grades / 4; HumanEval: passed (0 or 1)"
    model["chosen"] = chosen
    model["cv_pearson_with_grade"] = round(c, 4)
    model["cv_humaneval_pearson"] = round(h, 4)
    model["cv_humaneval_within_kendall"] = round(w, 4)
    if args.write:
        args.out.write_text(json.dumps(model, indent=1) + "\n", encoding="utf-8")
        print(f"model written to {args.out}")


if __name__ == "__main__":
    main()
