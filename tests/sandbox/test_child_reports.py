"""What the sandbox child reports on failure (traceback, assertion explanations), and the
parent's cheap path: a candidate with a named entry point is compiled without a syntax tree."""

from __future__ import annotations

import traceback

import pytest

from lift_metrics.sandbox import Sandbox, _pool
from lift_metrics.sandbox._worker import format_exc


def _raised(source: str) -> BaseException:
    namespace: dict[str, object] = {}
    try:
        exec(compile(source, "<candidate>", "exec"), namespace)
    except BaseException as exc:
        return exc
    raise AssertionError("the code did not raise")


@pytest.mark.parametrize(
    "source",
    [
        "def f(x):\n    return 1 / x\nf(0)\n",
        "def f():\n    try:\n        {}['k']\n    except KeyError:\n"
        "        raise ValueError('v')\nf()\n",
        "try:\n    int('x')\nexcept ValueError as e:\n    raise TypeError() from e\n",
        "def r(n):\n    return r(n + 1)\nr(0)\n",
        "def r(n):\n    return r(n + 1) if n < 4 else 1 / 0\nr(0)\n",
        "import json\njson.loads('{')\n",
        "e = Exception('a')\ne.add_note('a note')\nraise e\n",
    ],
)
def test_the_child_traceback_is_the_standard_one_without_source_lines(source: str) -> None:
    exc = _raised(source)
    lines = []  # the frame lines; not the source lines and carets shown for files on disk
    for part in traceback.format_exception(exc):
        if part.startswith("  File "):
            lines.append(part.splitlines()[0] + "\n")
        elif not part.startswith("    "):
            lines.append(part)
    assert format_exc(exc) == "".join(lines)


def test_a_failed_assertion_deep_in_the_script_is_explained() -> None:
    script = (
        "def check(candidate):\n"
        "    for n in range(3):\n"
        "        if n > 1:\n"
        "            assert candidate(\n"
        "                n\n"
        "            ) == n * 2, 'at ' + str(n)\n"
    )
    with Sandbox(workers=1) as box:
        result = box.run_tests("def f(x):\n    return x + 3\n", script, entry_point="f")
        raising = box.run_tests("def f(x):\n    raise KeyError(x)\n", script, entry_point="f")
    assert result.outcomes[0].error == (
        "AssertionError: at 2 at line 4: assert candidate( n ) == n * 2, 'at ' + str(n); "
        "left: 5, right: 4"
    )
    assert raising.stderr.endswith(
        '  File "<tests>", line 4, in check\n  File "<candidate>", line 2, in f\nKeyError: 2\n'
    )


def test_a_named_entry_point_needs_no_syntax_tree(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_tree(source: str, filename: str) -> None:
        raise AssertionError(f"{filename} was parsed into a syntax tree")

    with Sandbox(workers=1) as box:
        box.run_tests("def g():\n    return 1\n", [({}, 1)])  # warm, outside the patch
        monkeypatch.setattr(_pool, "_parse", no_tree)
        good = box.run_tests("def g():\n    return 1\n", [({}, 1)], entry_point="g")
        bad = box.run_tests("def g(:\n", [({}, 1)], entry_point="g")
    assert good.status == "passed"
    assert bad.status == "error"
    assert "the code does not parse: SyntaxError" in bad.reason
