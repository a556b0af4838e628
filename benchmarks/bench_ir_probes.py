"""Hand-written intent probes beyond the IR gaming suite: opposite tasks and negating phrasings.

Each probe replaces the intent of a project task's expected IR and is scored with
``ir_quality`` against that IR; it *wins* where it scores at or above the task's IR without
type hints (the lowest usable mutation of the suite, ``lift_metrics.ir.ir_mutations``).

- 36 opposite tasks written by hand for single tasks ("Return the square root of an integer");
- 16 phrasings applied to all 64 tasks ("Fails to ...", "..., except that it always returns 0.");
- another task's intent (the task seven places on) for each of the 64 tasks.

These are development figures: the intent checks' word lists were extended after these probes
were written (docs/ir.md#the-ir-gaming-suite). The real bundled embedder.

Run: ``PYTHONPATH=. .venv/bin/python benchmarks/bench_ir_probes.py``
"""

from __future__ import annotations

import copy
import os
from collections.abc import Callable
from typing import Any

for _name, _value in (("HF_HUB_OFFLINE", "1"), ("TRANSFORMERS_OFFLINE", "1")):
    os.environ.setdefault(_name, _value)

OPPOSITES = {
    "t001": "Subtract two integers and return their difference.",
    "t002": "Return the given string unchanged.",
    "t003": "Tell whether an integer is odd.",
    "t004": "Return the square root of an integer.",
    "t006": "Count the consonants, ignoring case, in a string.",
    "t007": "Return the last element of a list, or None for an empty list.",
    "t008": "Convert a Fahrenheit temperature to Celsius.",
    "t009": "Count the characters in a sentence.",
    "t010": "Multiply all integers in a list; an empty list gives 1.",
    "t012": "Return the sum of two integers.",
    "t013": "Build the farewell 'Goodbye, <name>!' for a name.",
    "t014": "Return a new list with each integer of the input halved.",
    "t016": "Tell whether a number is strictly negative.",
    "t017": "Compute the median of a non-empty list of numbers.",
    "t019": "Compute the sum of the integers from 1 to n.",
    "t022": "Tell whether an integer is composite.",
    "t023": "Keep only the integers that appear more than once in a list.",
    "t024": "Count the distinct words in a text.",
    "t025": "Lower-case the first letter of each space-separated word.",
    "t026": "Nest each integer of a list into its own one-element list.",
    "t029": "Format an integer as a binary digit string.",
    "t034": "Decrypt text with a Caesar cipher by shifting letters back.",
    "t035": "Tell whether two strings are identical, respecting letter case and spaces.",
    "t036": "Compute the running products of a list of integers.",
    "t040": "Rotate a list to the left by k positions.",
    "t044": "Count the zero bits in the binary form of a non-negative integer.",
    "t045": "Sort words by their length, longest first.",
    "t047": "Convert a URL slug back into a title.",
    "t048": "Parse a Roman numeral string into an integer.",
    "t049": "Convert an integer into a Roman numeral.",
    "t051": "Decode a run-length encoded string of character-count pairs.",
    "t052": "Run-length encode a string as character-count pairs.",
    "t054": "Find the longest suffix shared by all strings in a list.",
    "t056": "Find the position of a value in an unsorted list by linear search, or -1 when "
    "it is missing.",
    "t057": "Flatten a rectangular integer matrix into one list.",
    "t063": "Compute the Hamming distance between two strings.",
}


def _low(text: str) -> str:
    return text[:1].lower() + text[1:]


def _bare(text: str) -> str:
    return _low(text).rstrip(".")


PHRASINGS: dict[str, Callable[[str], str]] = {
    "never": lambda d: "Never " + _low(d),
    "fails to": lambda d: "Fails to " + _bare(d),
    "rather than": lambda d: f"Rather than doing this: {_bare(d)}, return nothing useful.",
    "instead of": lambda d: "Instead of the following, return the input unchanged: " + _low(d),
    "anything but": lambda d: "Return anything but what this says: " + _low(d),
    "not really": lambda d: d.rstrip(".") + " (not really).",
    "is not": lambda d: "What it does is not this: " + _low(d),
    "undo": lambda d: "Undo this: " + _low(d),
    "don't": lambda d: "Don't " + _low(d),
    "without": lambda d: f"Without being asked to {_bare(d)}, it returns zero.",
    "no longer": lambda d: "No longer does it " + _low(d),
    "unlike": lambda d: f"Unlike a function that would {_bare(d)}, this one returns None.",
    "except": lambda d: d.rstrip(".") + ", except that it always returns 0.",
    "actually": lambda d: d.rstrip(".") + ". Actually, it returns the input reversed.",
    "neither": lambda d: f"Neither {_bare(d)} nor anything else.",
    "refuses": lambda d: "Refuses to " + _low(d),
}


def _with_intent(ir: dict[str, Any], text: str) -> dict[str, Any]:
    out = copy.deepcopy(ir)
    out["intent"]["description"] = text
    return out


def main() -> int:
    """Score every probe; print the wins per probe family; return 0."""
    from lift_metrics.ir import ir_mutations, ir_quality
    from lift_metrics.optimizers import task_records
    from lift_metrics.similarity import get_default_embedder

    embedder = get_default_embedder()
    records = task_records()
    floors: dict[str, float] = {}
    for record in records:
        (no_hints,) = ir_mutations(record["expected_ir"], kinds=("no_type_hints",))
        floors[record["id"]] = ir_quality(no_hints.ir, record["expected_ir"], embedder=embedder)

    def wins(task: dict[str, Any], text: str) -> tuple[bool, float]:
        expected = task["expected_ir"]
        score = ir_quality(_with_intent(expected, text), expected, embedder=embedder)
        return score >= floors[task["id"]], score

    by_id = {record["id"]: record for record in records}
    won = []
    for task_id, text in OPPOSITES.items():
        hit, score = wins(by_id[task_id], text)
        if hit:
            won.append(f"  {task_id} {score:.3f} >= {floors[task_id]:.3f}: {text}")
    print(f"opposite tasks: {len(won)} of {len(OPPOSITES)} win")
    print("\n".join(won))
    print(f"phrasings on {len(records)} tasks (wins per phrasing):")
    for name, make in PHRASINGS.items():
        count = sum(wins(r, make(r["expected_ir"]["intent"]["description"]))[0] for r in records)
        print(f"  {name:<14} {count}")
    other = sum(
        wins(r, records[(i + 7) % len(records)]["expected_ir"]["intent"]["description"])[0]
        for i, r in enumerate(records)
    )
    print(f"another task's intent: {other} of {len(records)} win")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
