"""Fault injection: a damaged cache, or a stale install-time copy, of the compiled sandbox
server loop.

The library is compiled when the package is installed (``hatch_build.py``), else cached under
``$XDG_CACHE_HOME/lift-metrics``. The cache tests set the install-time copy aside, point the
cache at their own temporary directory, damage the cached file, and check that the next use
compiles it again (or, when the damage cannot be seen, falls back to the Python loop with a
warning that names the compiled loop, not bwrap) and that a correct solution still scores 1.0.
The install-time tests check that a copy is used without any compiler, and that a stale or
damaged one never is.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest

from lift_metrics.dspy_metrics import CodeQuality
from lift_metrics.sandbox import (
    Sandbox,
    SandboxIsolationWarning,
    _native_build,
    _native_cache,
    _pool,
)

pytestmark = pytest.mark.skipif(
    _native_cache.native_cache_path() is None, reason="no C compiler: nothing is compiled or cached"
)

ADD = "def add(a, b):\n    return a + b\n"
EXAMPLE = {"expected_code": ADD, "tests": [({"a": 1, "b": 2}, 3), ({"a": -1, "b": 1}, 0)]}


class _Parallel:
    """Every text -> the same unit vector (cosine 1), so that no model is loaded."""

    def embed(self, texts: list[str]) -> np.ndarray:
        return np.ones((len(texts), 2)) / np.sqrt(2)


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh cache directory with the compiled loop built into it; the file's path."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(_native_cache, "read_prebuilt", lambda: None)  # no install-time copy
    monkeypatch.setattr(_native_cache, "_native", [])
    monkeypatch.setattr(_pool, "_USE_NATIVE", True)
    library = _native_cache.native_library()
    assert library, "the compiled loop did not build"
    cached = _native_cache.native_cache_path()
    assert cached is not None
    assert cached.is_file()
    _native_cache._native.clear()  # the next use reads the cache, as a new process would
    return cached


def _score_correct_solution() -> tuple[float, bool]:
    """Score ``ADD`` against its tests in a new sandbox; (score, compiled loop in use)."""
    with Sandbox(workers=1) as box:
        metric = CodeQuality(embedder=_Parallel(), sandbox=box)
        score = float(metric(EXAMPLE, {"code": ADD}))
        return score, box.native


def _damages(cached: Path) -> dict[str, bytes]:
    blob = cached.read_bytes()
    other = Path("/bin/ls").read_bytes()[: len(blob)]
    return {
        "truncated": blob[:100],
        "empty": b"",
        "code overwritten": other,
        "one byte flipped": blob[:-40] + bytes([blob[-40] ^ 0xFF]) + blob[-39:],
    }


@pytest.mark.parametrize("damage", ["truncated", "empty", "code overwritten", "one byte flipped"])
def test_a_damaged_cached_library_is_compiled_again(cache: Path, damage: str) -> None:
    good = cache.read_bytes()
    cache.write_bytes(_damages(cache)[damage])
    score, native = _score_correct_solution()
    assert score == 1.0
    assert native, "the compiled loop was not rebuilt"
    assert cache.read_bytes() == good


def test_a_library_that_fails_in_the_workers_falls_back_and_names_it(cache: Path) -> None:
    # damage the cache *with* a matching digest: only the workers' start can tell
    junk = Path("/bin/ls").read_bytes()[:20000]
    cache.write_bytes(hashlib.sha256(junk).digest() + junk)
    with pytest.warns(SandboxIsolationWarning, match="compiled server loop") as caught:
        score, native = _score_correct_solution()
    assert score == 1.0
    assert not native
    assert not any("bwrap could not start" in str(w.message) for w in caught)
    assert not cache.exists(), "the bad cached copy was kept"
    _native_cache._native.clear()  # a new process compiles it again
    assert _native_cache.native_library()
    assert cache.is_file()


def test_the_install_time_library_is_used_without_any_compiler(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    prebuilt = tmp_path / _native_build.PREBUILT_NAME
    assert _native_build.build_prebuilt(prebuilt) is None
    monkeypatch.setattr(
        _native_cache, "read_prebuilt", lambda: _native_build.read_prebuilt(prebuilt)
    )
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("CC", str(tmp_path / "no-such-compiler"))
    monkeypatch.setattr(_native_cache, "_native", [])
    monkeypatch.setattr(_pool, "_USE_NATIVE", True)
    assert _native_cache.native_library() == prebuilt.read_bytes()[64:]
    score, native = _score_correct_solution()
    assert (score, native) == (1.0, True)
    assert not (tmp_path / "cache").exists()  # nothing compiled, nothing cached


def test_a_stale_or_damaged_install_time_library_is_never_used(tmp_path: Path) -> None:
    prebuilt = tmp_path / _native_build.PREBUILT_NAME
    assert _native_build.build_prebuilt(prebuilt) is None
    blob = prebuilt.read_bytes()
    assert _native_build.read_prebuilt(prebuilt) == blob[64:]
    edited = tmp_path / "_native.c"  # a checkout whose source changed after the install
    edited.write_bytes(_native_build.NATIVE_SOURCE_PATH.read_bytes() + b"\n")
    assert _native_build.read_prebuilt(prebuilt, source=edited) is None
    for damaged in (blob[:100], b"", blob[:-40] + bytes([blob[-40] ^ 0xFF]) + blob[-39:]):
        prebuilt.write_bytes(damaged)
        assert _native_build.read_prebuilt(prebuilt) is None
