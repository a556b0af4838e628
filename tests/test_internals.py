"""The shared argument checks and crash-safe writers."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import numpy as np
import pytest

from lift_metrics import _io
from lift_metrics._checks import (
    as_float_array,
    check_int,
    check_non_negative,
    check_real,
    check_unit_interval,
    normalize_weights,
)


def test_check_real_rejects_bool_nan_and_inf() -> None:
    assert check_real("x", 3) == 3.0
    with pytest.raises(TypeError, match="x must be a real number, got bool"):
        check_real("x", True)
    with pytest.raises(ValueError, match="x must not be NaN"):
        check_real("x", float("nan"))
    with pytest.raises(ValueError, match="x must be finite"):
        check_real("x", math.inf)
    assert check_real("x", math.inf, allow_inf=True) == math.inf


def test_range_checks_name_the_parameter_and_value() -> None:
    with pytest.raises(ValueError, match=r"cost_usd must be >= 0, got -1"):
        check_non_negative("cost_usd", -1)
    with pytest.raises(ValueError, match=r"score must be in \[0, 1\], got 1.5"):
        check_unit_interval("score", 1.5)
    with pytest.raises(ValueError, match="k must be >= 1, got 0"):
        check_int("k", 0, minimum=1)


def test_as_float_array() -> None:
    np.testing.assert_array_equal(as_float_array("v", [1, 2.5]), [1.0, 2.5])
    with pytest.raises(ValueError, match="values must not be empty"):
        as_float_array("values", [])
    with pytest.raises(ValueError, match=r"NaN \(at index 1\)"):
        as_float_array("values", [1.0, float("nan")])
    with pytest.raises(TypeError, match="only real numbers"):
        as_float_array("values", ["a"])
    with pytest.raises(TypeError, match="sequence of numbers"):
        as_float_array("values", "123")


def test_normalize_weights() -> None:
    defaults = {"a": 0.5, "b": 0.5}
    assert normalize_weights("weights", None, defaults) == {"a": 0.5, "b": 0.5}
    assert normalize_weights("weights", {"a": 3, "b": 1}, defaults) == {"a": 0.75, "b": 0.25}
    with pytest.raises(ValueError, match="must sum to a positive number"):
        normalize_weights("weights", {"a": 0, "b": 0}, defaults)
    with pytest.raises(ValueError, match=r"exactly the keys \['a', 'b'\], got \['a', 'c'\]"):
        normalize_weights("weights", {"a": 1, "c": 1}, defaults)
    with pytest.raises(ValueError, match=r"weights\['b'\] must be >= 0"):
        normalize_weights("weights", {"a": 1, "b": -1}, defaults)


def test_to_jsonable_flags_infinity() -> None:
    out = _io.to_jsonable({"cost_of_pass": math.inf, "rate": 0.5, "xs": (1, np.float64(2.0))})
    assert out == {
        "cost_of_pass": None,
        "cost_of_pass_is_infinite": True,
        "rate": 0.5,
        "xs": [1, 2.0],
    }
    text = _io.dumps_json({"v": -math.inf})
    assert json.loads(text) == {"v": None, "v_is_infinite": True}


def test_format_number() -> None:
    assert _io.format_number(math.inf) == "∞"
    assert _io.format_number(0.123456) == "0.1235"


def test_atomic_write_replaces_whole_file(tmp_path: Path) -> None:
    target = tmp_path / "sub" / "out.json"
    _io.atomic_write_json(target, {"a": 1})
    assert json.loads(target.read_text()) == {"a": 1}
    assert [p.name for p in target.parent.iterdir()] == ["out.json"]


def test_interrupted_atomic_write_keeps_old_content(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "report.md"
    target.write_text("old")

    def interrupted(*args: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        _io.atomic_write_text(target, "new")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["report.md"]


@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002])
def test_atomic_writes_get_the_permissions_of_a_plain_new_file(tmp_path: Path, umask: int) -> None:
    """Reports and plots alike follow the user's umask (not mkstemp's 0600)."""
    previous = os.umask(umask)
    try:
        plain = tmp_path / "plain.txt"
        plain.write_text("x")
        written = _io.atomic_write_text(tmp_path / "atomic.txt", "x")
    finally:
        os.umask(previous)
    assert written.stat().st_mode & 0o777 == plain.stat().st_mode & 0o777 == 0o666 & ~umask


def test_syntax_trees_are_converted_under_one_lock_only() -> None:
    """CPython 3.11 < 3.11.8 raises ``SystemError: AST constructor recursion depth mismatch``
    when two threads convert syntax trees at once (gh-106905; seen in the gaming suite under
    DSPy-style threads). Every parse or tree compile in the package goes through
    :mod:`lift_metrics._pyast`; this finds any call that does not (doctest lines aside).
    The sandbox's child-side worker runs in its own single-threaded process and is exempt.
    """
    import re

    package = Path(__file__).resolve().parents[1] / "lift_metrics"
    raw = re.compile(r"(?<![\w.])ast\.parse\(|(?<![\w.])compile\(\s*tree\b")
    offenders = [
        f"{path.relative_to(package)}:{number}"
        for path in package.rglob("*.py")
        if path.name not in ("_pyast.py", "_worker.py")
        for number, line in enumerate(path.read_text().splitlines(), start=1)
        if raw.search(line) and not line.lstrip().startswith((">>>", "..."))
    ]
    assert offenders == []
