"""Exploration: whether the embedding vectors themselves, not only their cosine, lift the score.

The no-test score (``reference_score``) reduces MiniLM's embeddings of the prediction ``u`` and
the reference ``v`` to one cosine. Sentence-pair regressors (the STS heads of
sentence-transformers) read the vectors instead: ``u * v`` and ``|u - v|``. This script learns
such a similarity on ``datasets/conala/dev.jsonl`` and adds it to the shipped features, with no
leak across folds: in each outer fold of the grouped 5-fold CV (by intent, as
``explore_reference_intent.py``), a ridge regression on the vector features (fitted on the
graders' mean) gives the training rows inner out-of-fold predictions and the held-out rows a
prediction from all training rows; that column, min-max scaled on the training rows and 0 for
degenerate predictions, joins the shipped 11 features in the shipped procedure (non-negative
ridge + 21-knot monotone map). Printed per vector feature and ridge ``alpha``: the Pearson with
``grade`` of the out-of-fold scores, and of the learned similarity alone.

Findings at the time of writing (development figures, chosen on this file): shipped 0.6647;
the best of the settings tried, ``u * v`` at alpha 0.03, 0.6721; ``|u - v|`` alone reaches
0.640 (the plain cosine 0.617) but adds at most 0.002 to the shipped features. Far from 0.70.

Run: HF_HUB_OFFLINE=1 python benchmarks/explore_reference_vectors.py   (about a minute)
"""

from __future__ import annotations

import numpy as np
from explore_reference_intent import FOLDS, _fit_predict, _grouped_cv, load_conala

from lift_metrics.code._reference_features import reference_feature_matrix
from lift_metrics.similarity import get_default_embedder

SETTINGS = {"u * v": (0.01, 0.03, 0.1, 0.3), "|u - v|": (1.0, 3.0, 10.0, 30.0)}


def _learned(
    x: np.ndarray, target: np.ndarray, groups: np.ndarray, train: np.ndarray, alpha: float
) -> np.ndarray:
    """Ridge predictions from ``x``: inner out-of-fold on ``train``, fitted on it elsewhere."""
    from sklearn.linear_model import Ridge
    from sklearn.model_selection import GroupKFold

    column = Ridge(alpha=alpha).fit(x[train], target[train]).predict(x)
    inner = GroupKFold(n_splits=FOLDS).split(x[train], target[train], groups[train])
    for fit_rows, predict_rows in inner:
        model = Ridge(alpha=alpha).fit(x[train[fit_rows]], target[train[fit_rows]])
        column[train[predict_rows]] = model.predict(x[train[predict_rows]])
    return column


def main() -> None:
    """Print the out-of-fold Pearson of the shipped features plus a learned vector similarity."""
    from sklearn.model_selection import GroupKFold

    _, predicted, expected, _, grades, target, groups = load_conala()
    base, kinds, _ = reference_feature_matrix(predicted, expected)
    degenerate = np.array([kind is not None for kind in kinds])
    texts = list(dict.fromkeys([*predicted, *expected]))
    rows = np.asarray(get_default_embedder().embed(texts), dtype=np.float64)
    rows /= np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-12)
    index = {text: k for k, text in enumerate(texts)}
    u = rows[[index[text] for text in predicted]]
    v = rows[[index[text] for text in expected]]
    vectors = {"u * v": u * v, "|u - v|": np.abs(u - v)}
    folds = list(GroupKFold(n_splits=FOLDS).split(base, target, groups))
    shipped = _grouped_cv(base, target, groups)
    print(f"shipped features: {np.corrcoef(shipped, grades)[0, 1]:.4f}")
    for name, alphas in SETTINGS.items():
        for alpha in alphas:
            combined, alone = np.zeros(len(target)), np.zeros(len(target))
            for train, test in folds:
                column = np.where(
                    degenerate, 0.0, _learned(vectors[name], target, groups, train, alpha)
                )
                low, high = column[train].min(), column[train].max()
                scaled = np.clip((column - low) / max(high - low, 1e-12), 0.0, 1.0)
                combined[test] = _fit_predict(np.column_stack([base, scaled]), target, train, test)
                alone[test] = column[test]
            print(
                f"{name:<8} alpha {alpha:<5g} shipped + learned "
                f"{np.corrcoef(combined, grades)[0, 1]:.4f}   learned alone "
                f"{np.corrcoef(alone, grades)[0, 1]:.4f}"
            )


if __name__ == "__main__":
    main()
