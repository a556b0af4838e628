"""Code as it runs: what never executes earns no resemblance.

Without tests, ``code_quality`` and ``reference_score`` compare the prediction with the
reference. The reference pasted after an early ``return None`` (dead code) scored 0.902 and the
reference kept only as comments 0.785, above correct rewrites (0.507). Here both tricks, on
tasks of ``datasets/tasks/tasks.jsonl``, score below a correct hand-written rewrite, and
``reference_score`` reads them exactly as the stub they are.
"""

from __future__ import annotations

import ast
import json

import pytest
from testkit import HashEmbedder

from lift_metrics.code import code_quality, reference_score, reference_score_breakdown
from lift_metrics.code._executed import executed_view
from lift_metrics.validation._labels import shipped_dataset_path

# correct rewrites, written by hand: different names and shape, same behaviour
REWRITES = {
    "t002": "def reverse_string(text):\n    out = ''\n    for ch in text:\n"
    "        out = ch + out\n    return out\n",
    "t005": "def largest(numbers):\n    if len(numbers) == 0:\n        raise ValueError('empty')\n"
    "    best = numbers[0]\n    for n in numbers[1:]:\n        if n > best:\n"
    "            best = n\n    return best\n",
    "t010": "def sum_list(numbers):\n    return sum(numbers)\n",
    "t020": "def fibonacci(n):\n    if n < 0:\n        raise ValueError('negative')\n"
    "    a, b = 0, 1\n    i = 0\n    while i < n:\n        a, b = b, a + b\n        i += 1\n"
    "    return a\n",
}


def _tasks() -> dict[str, str]:
    path = shipped_dataset_path("conala").parents[1] / "tasks" / "tasks.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return {row["id"]: row["expected_code"] for row in rows if row["id"] in REWRITES}


def _head_and_body(code: str) -> tuple[str, str]:
    """Split a one-function reference into its ``def`` line (and docstring) and its body."""
    function = ast.parse(code).body[0]
    assert isinstance(function, ast.FunctionDef)
    first = function.body[1] if ast.get_docstring(function) else function.body[0]
    lines = code.splitlines(keepends=True)
    return "".join(lines[: first.lineno - 1]), "".join(lines[first.lineno - 1 :])


def _tricks(reference: str) -> dict[str, str]:
    head, body = _head_and_body(reference)
    commented = "".join(f"    # {line.strip()}\n" for line in body.splitlines() if line.strip())
    return {
        "dead code": head + "    return None\n" + body,
        "comments": head + commented + "    pass\n",
        "docstring": head + '    """' + body.replace('"', "'") + '"""\n    return None\n',
    }


@pytest.mark.parametrize("task", sorted(REWRITES))
def test_dead_code_and_comments_score_below_a_correct_rewrite(task: str) -> None:
    reference = _tasks()[task]
    embedder = HashEmbedder()
    honest = code_quality(REWRITES[task], reference, [], embedder=embedder)
    assert honest > 0.0
    for trick, code in _tricks(reference).items():
        gamed = code_quality(code, reference, [], embedder=embedder)
        assert gamed < honest, (task, trick, gamed, honest)


@pytest.mark.parametrize("task", sorted(REWRITES))
def test_reference_score_reads_the_tricks_as_the_stub_they_are(task: str) -> None:
    reference = _tasks()[task]
    head, _ = _head_and_body(reference)
    embedder = HashEmbedder()
    for trick, code in _tricks(reference).items():
        stub = head + ("    pass\n" if trick == "comments" else "    return None\n")
        result = reference_score_breakdown(code, reference, embedder=embedder)
        assert result.score == pytest.approx(reference_score(stub, reference, embedder=embedder))
        assert result.score < 0.95, (task, trick)
        assert any("never run" in reason for reason in result.reasons), result.reasons


def test_comments_only_is_no_code() -> None:
    result = reference_score_breakdown("# x = 1\n# y = 2\n", "x = 1", embedder=HashEmbedder())
    assert result.score == 0.0
    assert result.degenerate == "comments"
    result = reference_score_breakdown("'''x = 1'''", "x = 1", embedder=HashEmbedder())
    assert result.degenerate == "comments"


def test_the_reference_plus_comments_or_dead_code_is_the_reference() -> None:
    reference = "def f(x):\n    return x + 1\n"
    padded = "def f(x):\n    # add one\n    return x + 1\n    print('never')\n"
    result = reference_score_breakdown(padded, reference, embedder=HashEmbedder())
    assert result.score == 1.0
    assert "the prediction is the reference's program" in result.reasons[-1]


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("x = 1  # one\n", "x = 1  \n"),
        ("s = 'a # b'  # c\n", "s = 'a # b'  \n"),
        ('s = """\n# not a comment\n"""\n', 's = """\n# not a comment\n"""\n'),
        ("def f():\n    return 1\n    x = 2\n", "def f():\n    return 1\n    \n"),
        ("for i in x:\n    break\n    y()\n", "for i in x:\n    break\n    \n"),
        ("def f():\n    raise E\n    y()\n", "def f():\n    raise E\n    \n"),
        ("if a:\n    continue\nz()\n", "if a:\n    continue\nz()\n"),  # only one branch leaves
        ("def f(a):\n    if a:\n        return 1\n    else:\n        return 2\n    g()\n", None),
        ("def f():\n    if True:\n        return 1\n    g()\n", None),
        ("if False:\n    g()\nh()\n", "\nh()\n"),
        ("def f():\n    '''doc'''\n    return 1\n", "def f():\n    \n    return 1\n"),
        ("def f():\n    '''doc'''\n", "def f():\n    pass\n"),
        ("def f():\n    return 1\n    @d\n    def g(): pass\n", "def f():\n    return 1\n    \n"),
        ("x = 1     # one     y = 2", "x = 1          y = 2"),  # flattened to one line
        ("if x:   # c\n    y = 1\n", "if x:   \n    y = 1\n"),  # a line break ends it
        ("f(  # (\n", "f(  \n"),  # does not parse: comments still go
        ("x = f'{a[\"k\"]}'  # c\ny = 2\n", "x = f'{a[\"k\"]}'  \ny = 2\n"),
    ],
)
def test_executed_view(code: str, expected: str | None) -> None:
    view = executed_view(code)
    if expected is None:  # the last statement never runs
        assert "g()" not in view.text
        assert view.unreachable == 1
        ast.parse(view.text)
    else:
        assert view.text == expected
    if view.parses:
        ast.parse(view.text)


def test_executed_view_counts_what_it_drops() -> None:
    view = executed_view("def f():\n    '''d'''\n    return 1  # c\n    a()\n    b()\n")
    assert (view.comments, view.docstrings, view.unreachable, view.parses) == (1, 1, 2, True)
    assert view.notes() == ["1 comment(s)", "1 docstring(s)", "2 unreachable statement(s)"]
    assert executed_view("x = (").notes() == []
