"""Time of one code_quality call on hostile answers just under and far over MAX_CODE_CHARS.

Run: ``.venv/bin/python benchmarks/bench_code_bound.py``

Each shape of answer is made as long as the bound allows (100,000 characters) and then 960,000
characters long, and scored with the validated and the ``"seed"`` profile, with 3 tests and
the bundled embedder (its model loaded first), on the default sandbox. Shapes: a Markdown
fence around 16,500 lines of code, one 100,000-character expression, an unterminated string,
a run of letters and digits with no call (the worst case of the reference features' call
search), a brace with a long run of spaces (the worst case of the placeholder check), prose,
and 4,000 small functions. An answer over the bound is read by no analysis: it scores 0 with
the reason, at once.

Bars: under the bound, every call within 5 s on the reference 2-core machine; over it, within
0.1 s. Exit code 1 when a bar is missed.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

from lift_metrics.code import MAX_CODE_CHARS, code_quality_breakdown

REFERENCE = "def add(a, b):\n    return a + b\n"
TESTS = [({"a": 1, "b": 2}, 3), ({"a": 0, "b": 0}, 0), ({"a": -1, "b": 1}, 0)]
BAR_UNDER_S = 5.0
BAR_OVER_S = 0.1

SHAPES: dict[str, Callable[[int], str]] = {
    "fenced block": lambda n: "Here:\n```python\n" + "x = 1\n" * ((n - 30) // 6) + "```\n",
    "one long line": lambda n: "def add(a, b):\n    return " + "a+" * ((n - 40) // 2) + "b\n",
    "unterminated string": lambda n: "def add(a, b):\n    s = '" + "x" * (n - 30) + "\n",
    "letters and digits": lambda n: "a3" * (n // 2),
    "brace and spaces": lambda n: "{a" + " " * (n - 3) + "x",
    "prose": lambda n: "This is some prose about the answer. " * (n // 37),
    "small functions": lambda n: "".join(f"def f{i}(a):\n    return a\n" for i in range(n // 27)),
}


def main() -> int:
    """Time every shape under and over the bound; return the exit code."""
    from lift_metrics.sandbox import get_default_sandbox
    from lift_metrics.similarity import get_default_embedder

    embedder = get_default_embedder()
    embedder.embed([REFERENCE])  # the model loads here, not in the first timed call
    get_default_sandbox().run_tests(REFERENCE, TESTS)
    ok = True
    print(f"MAX_CODE_CHARS = {MAX_CODE_CHARS:,}")
    print(f"  {'shape':22s} {'profile':10s} {'length':>9s} {'seconds':>8s}  score  reason")
    for limit, bar in ((MAX_CODE_CHARS, BAR_UNDER_S), (960_000, BAR_OVER_S)):
        for name, make in SHAPES.items():
            text = make(limit)
            assert len(text) <= MAX_CODE_CHARS or limit > MAX_CODE_CHARS, name
            for profile in ("validated", "seed"):
                start = time.perf_counter()
                result = code_quality_breakdown(text, REFERENCE, TESTS, profile=profile)
                took = time.perf_counter() - start
                ok &= took <= bar
                reason = result.reasons[-1][:60] if result.reasons else ""
                print(
                    f"  {name:22s} {profile:10s} {len(text):9,d} {took:8.2f}  "
                    f"{result.score:.3f}  {reason}"
                )
    print(
        f"bars: under the bound within {BAR_UNDER_S:g} s, over it within {BAR_OVER_S:g} s: "
        + ("met" if ok else "MISSED")
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
