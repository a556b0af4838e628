"""Behaviour, not resemblance, in the real sandbox.

Where the reference runs, code_quality compares what the code computes with what the
reference computes on generated inputs: without tests, the reference pasted after
``return None``, kept as comments, or with one operator changed scores below a correct
hand-written rewrite; with tests, a lookup table of the tests' answers loses about half its
score while ``test_pass_rate`` (given tests only) stays 1.0. The variants are those of
``behaviour_variants`` over the project's own tasks; the means over all 64 are printed by
``benchmarks/bench_behaviour.py``.
"""

from __future__ import annotations

import math
from typing import Any

import behaviour_variants as bv
import pytest
from code_testkit import FakeSandbox
from testkit import HashEmbedder

from lift_metrics.code import code_quality, code_quality_breakdown, test_pass_rate
from lift_metrics.code._behaviour import (
    BEHAVIOUR_INPUTS,
    CANDIDATE_TIMEOUT_MAX_S,
    RAISING_INPUTS,
    REFERENCE_BUDGET_S,
    REFERENCE_TIMEOUT_S,
    Raises,
    ReferenceRun,
    _calls,
    _longest,
    check_behaviour,
    compare,
    reference_run,
    same_value,
)
from lift_metrics.code._inputs import MAX_INPUT_CHARS, conforms, generate_inputs, parameters
from lift_metrics.sandbox import ExecutionOutput

# several kinds of task: arithmetic, strings, lists, raising on bad input, floats, parsing,
# a token list whose operands are numbers' text (t053, reverse Polish notation)
TASK_IDS = ["t001", "t008", "t019", "t023", "t034", "t042", "t051", "t053", "t061"]

FACTORIAL = '''def factorial(n: int) -> int:
    """n!, ValueError for negative n."""
    if n < 0:
        raise ValueError("negative")
    result = 1
    for k in range(2, n + 1):
        result *= k
    return result
'''


@pytest.fixture(scope="module")
def tasks() -> list[bv.Task]:
    return bv.load_tasks(TASK_IDS)


# -- generated inputs --------------------------------------------------------------------------
def test_inputs_follow_the_hints_are_bounded_and_deterministic() -> None:
    reference = (
        "def f(words: list[str], k: int, ratio: float | None = None) -> dict[str, int]:\n"
        "    return {}\n"
    )
    seeds = [{"words": ["a", "b"], "k": 1, "ratio": None}]
    inputs = generate_inputs(reference, "f", seeds, count=30)
    assert 20 <= len(inputs) <= 30
    assert seeds[0] not in inputs  # the given inputs are the tests, never proposed again
    hinted = parameters(reference, "f")
    assert hinted is not None
    for case in inputs:
        assert set(case) == {"words", "k", "ratio"}
        assert all(conforms(case[name], spec) for name, spec in hinted)
        assert len(repr(case)) <= MAX_INPUT_CHARS
        assert abs(case["k"]) <= 1000
    assert len({repr(sorted(case.items())) for case in inputs}) == len(inputs)
    assert inputs == generate_inputs(reference, "f", seeds, count=30)
    assert inputs != generate_inputs(reference, "f", [{"words": ["z"], "k": 9}], count=30)


def test_inputs_come_from_the_prompt_and_from_names_when_nothing_else_tells() -> None:
    prompt = (
        "def gap(a, b):\n"
        '    """Distance.\n'
        "    >>> gap(3, 10)\n"
        "    7\n"
        "    gap(b=1, a=-4) == 5\n"
        '    """\n'
    )
    inputs = generate_inputs(prompt + "    return abs(a - b)\n", "gap", prompt=prompt, count=8)
    assert inputs[:2] == ({"a": 3, "b": 10}, {"a": -4, "b": 1})
    assert all(type(case["a"]) is int for case in inputs)
    # nothing to call by keywords, or nothing said about a parameter: no inputs
    assert generate_inputs("def f(*args):\n    return args\n", "f") == ()
    assert generate_inputs("def f(q):\n    return q\n", "f") == ()
    assert generate_inputs("x = 1\n", None) == ()


def test_values_are_compared_as_the_tests_compare_them_floats_close() -> None:
    assert same_value([0.1 + 0.2, {"a": (1, "x")}], [0.3, {"a": (1, "x")}])
    assert same_value(math.nan, math.nan)
    assert not same_value(1, 1.0)
    assert not same_value(True, 1)
    assert not same_value([1], (1,))
    assert not same_value(0.3, 0.3001)
    assert same_value({1, 2}, {2, 1})


# -- the reference's side ----------------------------------------------------------------------
def test_raising_inputs_are_dropped_but_the_error_contract_and_outputs_are_kept(
    real_sandbox: Any,
) -> None:
    run = reference_run(
        FACTORIAL, "factorial", [{"n": 5}], None, real_sandbox, _calls(real_sandbox)
    )
    returning = [i for i, out in enumerate(run.outputs) if not isinstance(out, Raises)]
    raising = [i for i, out in enumerate(run.outputs) if isinstance(out, Raises)]
    assert 0 < len(returning) <= BEHAVIOUR_INPUTS
    assert all(run.inputs[i]["n"] >= 0 for i in returning)
    assert [run.outputs[i].result for i in returning] == [
        math.factorial(run.inputs[i]["n"]) for i in returning
    ]
    # negative n raises the ValueError the reference raises by name: its error contract,
    # kept for a few inputs (at most RAISING_INPUTS, a third of those returning)
    assert 0 < len(raising) <= min(RAISING_INPUTS, len(returning) // 3)
    assert all(run.inputs[i]["n"] < 0 for i in raising)
    assert {run.outputs[i] for i in raising} == {Raises("ValueError")}
    again = reference_run(
        FACTORIAL, "factorial", [{"n": 5}], None, real_sandbox, _calls(real_sandbox)
    )
    assert again is run  # not run again in an optimizer loop
    # a candidate that returns a value where the task asks for a ValueError is blamed there
    lenient = "def factorial(n):\n    import math\n    return math.factorial(max(n, 0))\n"
    checked = check_behaviour(lenient, FACTORIAL, "factorial", [{"n": 5}], None, real_sandbox, None)
    assert (checked.agreed, checked.total) == (len(returning), len(run.inputs))
    # one that raises it its own way agrees; an error the reference raises implicitly
    # (an IndexError on a bad index) is not a contract, and its inputs stay dropped
    own = (
        "def factorial(n):\n    import math\n    return math.factorial(n) if n >= 0 else int('x')\n"
    )
    checked = check_behaviour(own, FACTORIAL, "factorial", [{"n": 5}], None, real_sandbox, None)
    assert (checked.agreed, checked.total) == (len(run.inputs), len(run.inputs))
    implicit = "def second(values: list[int]) -> int:\n    return values[1]\n"
    run = reference_run(
        implicit, "second", [{"values": [1, 2]}], None, real_sandbox, _calls(real_sandbox)
    )
    assert run.inputs
    assert not any(isinstance(out, Raises) for out in run.outputs)


def test_a_reference_that_never_returns_the_same_value_is_not_used(real_sandbox: Any) -> None:
    noisy = "import random\ndef roll(n: int) -> float:\n    return random.random() + n\n"
    checked = check_behaviour(noisy, noisy, "roll", [{"n": 3}], None, real_sandbox, None)
    assert checked.total == 0
    assert "not checked" in checked.reason


class _SlowReference:
    """``execute_calls`` stand-in: the reference's batches each stop after two inputs (its
    time limit ran out, as on a slow reference), the candidate returns 0; records limits."""

    def __init__(self) -> None:
        self.limits: dict[str, list[float]] = {"reference": [], "candidate": []}

    def __call__(self, code: str, inputs: list[dict[str, Any]], **options: Any) -> list[Any]:
        who = "reference" if code == "reference" else "candidate"
        self.limits[who].append(options["timeout_s"])
        if who == "candidate":
            return [ExecutionOutput(True, 0, None, "passed", 1.0) for _ in inputs]
        ran = [ExecutionOutput(True, case["n"], None, "passed", 2000.0) for case in inputs[:2]]
        stop = ExecutionOutput(False, None, "timed out", "timeout", 2000.0)
        rest = ExecutionOutput(False, None, "did not run (timed out)", "timeout", 2000.0)
        return (ran + [stop] + [rest] * len(inputs))[: len(inputs)]


def test_a_reference_stopped_by_its_limit_gives_the_candidate_at_most_the_cap() -> None:
    from lift_metrics.code._behaviour import _valid, _within

    calls = _SlowReference()
    run = _valid("reference", "f", [{"n": n} for n in range(12)], calls)
    assert set(calls.limits["reference"]) == {REFERENCE_TIMEOUT_S}
    # a batch returns 2 inputs, times out on the third and stops before the fourth: the first
    # run returns 0, 1 | 4, 5 | 8, 9; the second run over those 6 returns 0, 1 | 8, 9 in 2
    # batches of 2,000 ms each: 4,000 ms for 6 inputs
    assert [case["n"] for case in run.inputs] == [0, 1, 8, 9]
    assert run.elapsed_ms == pytest.approx(4000.0 / 6 * 4)
    kept = _within(run, REFERENCE_BUDGET_S * 1000.0, least=1)
    assert [case["n"] for case in kept.inputs] == [0]  # 667 ms each: one, never none
    assert _within(run, REFERENCE_BUDGET_S * 1000.0, least=0).inputs == ()
    assert _within(run, 1500.0, least=1).elapsed_ms == pytest.approx(4000.0 / 6 * 2)
    checked = compare("candidate", run, "f", calls, None)
    assert calls.limits["candidate"] == [CANDIDATE_TIMEOUT_MAX_S]  # 20 x 2.7 s would be 53 s
    compare("candidate", ReferenceRun(run.inputs, run.outputs, 10.0), "f", calls, None)
    assert calls.limits["candidate"][-1] == 1.0  # a fast reference: the 1 s floor
    compare("candidate", ReferenceRun(run.inputs, run.outputs, 100.0), "f", calls, 1.5)
    assert calls.limits["candidate"][-1] == 1.5  # 20 x 0.1 s, under the caller's timeout_s
    assert checked.total == len(run.inputs)
    assert _valid("reference", "f", [], calls).elapsed_ms == 0.0  # nothing ran: no time


@pytest.mark.slow
def test_a_slow_reference_keeps_the_inputs_it_runs_within_its_budget(real_sandbox: Any) -> None:
    """About 50 ms a call: the same program then has 10 times the reference's time."""
    slow = (
        "def slow(n: int) -> int:\n"
        "    total = 0\n"
        "    for k in range(1_000_000):\n"
        "        total += k % 7\n"
        "    return total + n\n"
    )
    run = reference_run(slow, "slow", [{"n": 1}], None, real_sandbox, _calls(real_sandbox))
    assert 1 <= len(run.inputs) < BEHAVIOUR_INPUTS
    assert run.elapsed_ms <= REFERENCE_BUDGET_S * 1000.0 + 1e-6
    checked = compare(slow, run, "slow", _calls(real_sandbox), None)
    assert (checked.agreed, checked.total) == (len(run.inputs), len(run.inputs))


# -- tricks without tests and a lookup table with them -----------------------------------------
@pytest.mark.slow
def test_without_tests_the_rewrite_beats_dead_code_comments_and_a_bug(
    tasks: list[bv.Task], real_sandbox: Any
) -> None:
    """Resemblance alone ranks all three tricks above a correct rewrite on these tasks."""
    embedder = HashEmbedder()
    lost = []
    for task in tasks:
        made = bv.variants(real_sandbox, task)
        score = {
            name: code_quality(
                code, task.reference, [], entry_point=task.entry_point,
                embedder=embedder, sandbox=real_sandbox,
            )
            for name, code in made.items()
        }  # fmt: skip
        assert score["reference"] == pytest.approx(1.0)
        assert score["rewrite"] >= 0.9, (task.task_id, score)
        for trick in ("dead_code", "comments", "bug"):
            if trick in score and not score["rewrite"] > score[trick]:
                lost.append((task.task_id, trick, score[trick], score["rewrite"]))
        for trick in ("dead_code", "comments"):  # they compute nothing: at most the fail bar
            assert score[trick] <= 0.2, (task.task_id, trick, score)
    assert not lost


@pytest.mark.slow
def test_a_lookup_table_of_the_tests_answers_is_exposed_by_the_generated_inputs(
    tasks: list[bv.Task], real_sandbox: Any
) -> None:
    embedder = HashEmbedder()
    for task in tasks:
        table, rewrite = bv.lookup(task), bv.rewrite(task)
        kwargs = {"entry_point": task.entry_point, "embedder": embedder, "sandbox": real_sandbox}
        assert test_pass_rate(table, task.tests, entry_point=task.entry_point) == 1.0
        result = code_quality_breakdown(table, task.reference, task.tests, **kwargs)
        assert result.tests_passed == result.tests_total == len(task.tests)  # given tests only
        assert result.behaviour_total > 0
        assert result.score <= 0.6, (task.task_id, result)
        correct = code_quality(rewrite, task.reference, task.tests, **kwargs)
        assert correct >= 0.9
        before = code_quality(table, task.reference, task.tests, behaviour=False, **kwargs)
        assert before > 0.9  # what the behaviour check takes away


# -- options and fall-backs --------------------------------------------------------------------
def test_behaviour_can_be_turned_off_and_is_named_in_errors(real_sandbox: Any) -> None:
    # one operator off: it reads like the reference, and computes n! only for n < 2
    bug = FACTORIAL.replace("result *= k", "result += k")
    dead = bv.dead_code(bv.Task("t", FACTORIAL, [], "factorial"))
    kwargs = {"entry_point": "factorial", "embedder": HashEmbedder(), "sandbox": real_sandbox}
    on = code_quality_breakdown(bug, FACTORIAL, [], **kwargs)
    off = code_quality_breakdown(bug, FACTORIAL, [], behaviour=False, **kwargs)
    assert on.behaviour_total > 0
    assert on.behaviour_agreed < on.behaviour_total
    assert on.components["behaviour"] < 1.0
    assert "behaviour" not in off.components
    assert on.score <= 0.6 < off.score
    assert any(reason.startswith("behaviour: agrees") for reason in on.reasons)
    with pytest.raises(TypeError, match="behaviour"):
        code_quality(dead, FACTORIAL, [], behaviour="yes")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="behaviour=True needs the 'validated' profile"):
        code_quality(dead, FACTORIAL, [], profile="seed", behaviour=True)


def test_nothing_runs_without_a_reference_function_or_a_value_returning_sandbox(
    real_sandbox: Any,
) -> None:
    kwargs = {"embedder": HashEmbedder()}
    snippet = code_quality_breakdown("x = sorted(a)", "x = sorted(a)", [], **kwargs)
    assert snippet.behaviour_total == 0
    assert "behaviour" not in snippet.components
    # a sandbox that runs tests only (a test double, a remote runner): tests, no behaviour
    fake = code_quality_breakdown(
        FACTORIAL, FACTORIAL, [({"n": 3}, 6)], sandbox=FakeSandbox(), **kwargs
    )
    assert fake.behaviour_total == 0
    assert fake.reasons == ()


def test_the_reasons_never_show_the_references_answers(real_sandbox: Any) -> None:
    reference = 'def tag(n: int) -> str:\n    return "SECRET-" + str(n)\n'
    wrong = 'def tag(n: int) -> str:\n    return "tag-" + str(n)\n'
    result = code_quality_breakdown(
        wrong, reference, [], embedder=HashEmbedder(), sandbox=real_sandbox
    )
    assert result.behaviour_agreed == 0
    assert result.behaviour_total > 0
    assert not any("SECRET" in reason for reason in result.reasons)
    assert any("returned 'tag-" in reason for reason in result.reasons)


# -- the choice of inputs ----------------------------------------------------------------------
ANAGRAM = '''def is_anagram(first: str, second: str) -> bool:
    """Whether the two texts are anagrams, ignoring spaces and case."""
    return sorted(first.replace(" ", "").lower()) == sorted(second.replace(" ", "").lower())
'''


def test_the_inputs_chosen_hold_each_kind_of_outcome_and_tell_the_mutants_apart(
    real_sandbox: Any,
) -> None:
    """Random strings are almost never anagrams: the choice keeps those that are."""
    from lift_metrics._mutants import mutants
    from lift_metrics.code._behaviour import _agrees

    calls = _calls(real_sandbox)
    assert calls is not None
    run = reference_run(ANAGRAM, "is_anagram", [], None, real_sandbox, calls)
    assert len(run.inputs) == BEHAVIOUR_INPUTS
    results = [out.result for out in run.outputs]
    assert sum(out is True for out in results) >= 3  # anagrams
    assert sum(out is False for out in results) >= 3
    pairs = zip(run.inputs, results, strict=True)
    assert any(i["first"] != i["second"] for i, out in pairs if out)
    told_apart = 0
    for program in mutants(ANAGRAM, "is_anagram", more=True):
        outs = calls(program, list(run.inputs), entry_point="is_anagram", timeout_s=5.0)
        told_apart += any(not _agrees(o, w) for o, w in zip(outs, run.outputs, strict=True))
    assert told_apart >= 1
    # comparing the texts without sorting them reads like the task and is wrong on anagrams
    equality = ANAGRAM.replace("sorted(", "(")
    result = code_quality_breakdown(
        equality, ANAGRAM, [], embedder=HashEmbedder(), sandbox=real_sandbox
    )
    assert result.behaviour_agreed < result.behaviour_total
    assert result.score < code_quality(ANAGRAM, ANAGRAM, [], embedder=HashEmbedder())


def test_with_tests_a_near_copy_that_differs_on_one_input_ranks_below_a_correct_rewrite(
    real_sandbox: Any,
) -> None:
    """Resemblance orders only code that agrees everywhere."""
    reference = '''def clamp_sum(values: list[int]) -> int:
    """Sum of the values, each clamped to [0, 10]."""
    return sum(min(max(v, 0), 10) for v in values)
'''
    tests = [({"values": [1, 2]}, 3), ({"values": [-1, 5]}, 5), ({"values": []}, 0)]
    near_copy = reference.replace("10)", "11)")  # wrong only on a value of 11 or more
    rewrite = """def clamp_sum(values: list[int]) -> int:
    total = 0
    for value in values:
        if value > 10:
            value = 10
        elif value < 0:
            value = 0
        total += value
    return total
"""
    kwargs = {"embedder": HashEmbedder(), "sandbox": real_sandbox}
    copied = code_quality_breakdown(near_copy, reference, tests, **kwargs)
    correct = code_quality_breakdown(rewrite, reference, tests, **kwargs)
    assert copied.tests_passed == correct.tests_passed == len(tests)
    assert correct.behaviour_agreed == correct.behaviour_total > 0
    assert copied.behaviour_agreed < copied.behaviour_total
    assert copied.score < correct.score


def test_a_reference_that_raises_everywhere_is_named_by_its_exception_only(
    real_sandbox: Any,
) -> None:
    reference = 'def f(text: str) -> int:\n    raise KeyError(f"SECRET {text!r}")\n'
    result = code_quality_breakdown(
        "def f(text: str) -> int:\n    return len(text.strip())\n",
        reference,
        [],
        embedder=HashEmbedder(),
        sandbox=real_sandbox,
    )
    assert result.behaviour_total == 0
    assert any("(first: KeyError)" in reason for reason in result.reasons), result.reasons
    assert not any("SECRET" in reason for reason in result.reasons)


def test_a_lambda_bound_to_the_entry_point_is_a_function() -> None:
    from lift_metrics.code._extract import defines

    assert defines("add = lambda a, b: a + b\n", "add")
    assert defines("add: object = lambda a, b: a + b\n", "add")
    assert not defines("add = 3\n", "add")
    assert not defines("plus = lambda a, b: a + b\n", "add")


def test_a_parser_gets_the_values_its_prompt_quotes() -> None:
    """Random text is almost never a duration: the prompt's "1h30m" seeds the inputs."""
    reference = """import re


def parse_duration(text: str) -> int:
    match = re.fullmatch(r"(?:(\\d+)h)?(?:(\\d+)m)?(?:(\\d+)s)?", text)
    if not text or match is None:
        raise ValueError("invalid")
    hours, minutes, seconds = (int(part) if part else 0 for part in match.groups())
    return hours * 3600 + minutes * 60 + seconds
"""
    prompt = 'Convert a duration string such as "1h30m" or "45s" into seconds.'
    inputs = generate_inputs(reference, "parse_duration", [], prompt=prompt, count=40)
    assert inputs[:2] == ({"text": "1h30m"}, {"text": "45s"})
    assert generate_inputs(reference, "parse_duration", [], count=40)[:1] != inputs[:1]


MEDIAN = (
    "import statistics\n\n\ndef median(numbers):\n    if not numbers:\n"
    "        raise ValueError('empty')\n    return float(statistics.median(numbers))\n"
)
MEDIAN_WRONG_ON_LONG_ODD_LISTS = (
    "def median(numbers):\n    s = sorted(numbers)\n    n = len(s)\n    if not s:\n"
    "        raise ValueError('empty')\n    if n % 2:\n"
    "        return float(s[n // 2] if n < 9 else s[n // 2 - 1])\n"
    "    return (s[n // 2 - 1] + s[n // 2]) / 2\n"
)


def test_without_tests_a_median_wrong_only_on_long_odd_lists_loses(real_sandbox: Any) -> None:
    """Lists of 9 and 11 elements are drawn too, not only lists of up to 7."""
    [task] = bv.load_tasks(["t042"])
    lengths = {len(i["numbers"]) for i in generate_inputs(task.reference, "median", [])}
    assert {9, 11} <= lengths <= set(range(13))
    score = {
        name: code_quality_breakdown(
            code, task.reference, [], entry_point="median", embedder=HashEmbedder(),
            sandbox=real_sandbox,
        )
        for name, code in (("right", MEDIAN), ("wrong", MEDIAN_WRONG_ON_LONG_ODD_LISTS))
    }  # fmt: skip
    assert score["right"].behaviour_agreed == score["right"].behaviour_total > 0
    assert score["wrong"].behaviour_agreed < score["wrong"].behaviour_total
    assert score["right"].score > score["wrong"].score


def test_with_tests_the_longest_inputs_of_both_parities_are_kept(real_sandbox: Any) -> None:
    """The median wrong only on odd lists of nine or more loses with the task's tests too.

    The tests' short lists pass it; of the generated inputs, the longest odd and the longest
    even list are among those compared where the mutants leave places (they do here).
    """
    [task] = bv.load_tasks(["t042"])
    score = {
        name: code_quality_breakdown(
            code, task.reference, task.tests, entry_point="median", embedder=HashEmbedder(),
            sandbox=real_sandbox,
        )
        for name, code in (("right", MEDIAN), ("wrong", MEDIAN_WRONG_ON_LONG_ODD_LISTS))
    }  # fmt: skip
    assert score["wrong"].tests_passed == score["wrong"].tests_total > 0
    assert score["right"].behaviour_agreed == score["right"].behaviour_total > 0
    assert score["wrong"].behaviour_agreed < score["wrong"].behaviour_total
    assert score["right"].score > score["wrong"].score


def test_the_longest_inputs_of_each_parity_are_picked() -> None:
    inputs = [{"a": [1, 2]}, {"a": [1, 2, 3]}, {"a": [1] * 9}, {"a": [1] * 12}, {"x": 5}]
    assert _longest(inputs) == [3, 2]
    assert _longest([{"x": 5}, {"y": 1.5}]) == []
    assert _longest([{"a": "ab"}, {"a": "abcd"}]) == [1]  # no odd length to pick


def test_code_that_reads_numbers_from_text_gets_numbers_text(real_sandbox: Any) -> None:
    """A reverse Polish evaluator without tests: random tokens are never an expression."""
    [task] = bv.load_tasks(["t053"])
    plain = task.reference.replace("stack.append(int(token))", "stack.append(token)")

    def numbers(reference: str) -> float:
        """The share of drawn tokens that are a number's text."""
        tokens = [t for i in generate_inputs(reference, task.entry_point, []) for t in i["tokens"]]
        return sum(t.lstrip("-").isdigit() for t in tokens) / len(tokens)

    assert numbers(task.reference) > 2 * numbers(plain)
    run = reference_run(
        task.reference, task.entry_point, [], None, real_sandbox, _calls(real_sandbox)
    )
    returning = [out for out in run.outputs if not isinstance(out, Raises)]
    assert len(returning) >= 10, run.reason


@pytest.mark.slow
def test_an_argument_the_task_says_comes_sorted_is_generated_sorted(real_sandbox: Any) -> None:
    """Outside "a sorted list of distinct integers" a binary search's result is unspecified:
    a correct linear scan must not lose to a near copy of the reference there."""
    [task] = bv.load_tasks(["t056"])
    prompt = "the index of target in a sorted list of distinct integers, or -1"
    inputs = generate_inputs(task.reference, task.entry_point, [], prompt=prompt)
    assert len(inputs) >= 20
    assert all(i["items"] == sorted(set(i["items"])) for i in inputs)
    unsaid = task.reference.replace("sorted items", "items")  # the docstring says it too
    assert any(i["items"] != sorted(i["items"]) for i in generate_inputs(unsaid, "binary_search"))
    linear = (
        "def binary_search(items, target):\n"
        "    return items.index(target) if target in items else -1\n"
    )
    near = task.reference.replace("while low <= high", "while low < high")
    assert near != task.reference
    score = {
        name: code_quality(
            code, task.reference, [], entry_point=task.entry_point, prompt=prompt,
            embedder=HashEmbedder(), sandbox=real_sandbox,
        )
        for name, code in (("linear", linear), ("near", near))
    }  # fmt: skip
    assert score["linear"] >= 0.95 > score["near"], score


def test_what_the_code_leaves_in_its_arguments_is_compared_too(real_sandbox: Any) -> None:
    """A new list is asked for: sorting the caller's list in place disagrees."""
    reference = (
        "def sort_by_length(words: list[str]) -> list[str]:\n    return sorted(words, key=len)\n"
    )
    in_place = (
        "def sort_by_length(words: list[str]) -> list[str]:\n"
        "    words.sort(key=len)\n"
        "    return words\n"
    )
    kwargs = {"embedder": HashEmbedder(), "sandbox": real_sandbox}
    result = code_quality_breakdown(in_place, reference, [], **kwargs)
    assert result.behaviour_agreed < result.behaviour_total
    assert any("left its arguments in another state" in r for r in result.reasons), result.reasons
    assert result.score < code_quality(reference, reference, [], **kwargs)
    # and the other way: a task that asks for the change in place
    append = "def add_item(items: list[int], item: int) -> None:\n    items.append(item)\n"
    copy = "def add_item(items: list[int], item: int) -> None:\n    items = items + [item]\n"
    assert code_quality_breakdown(copy, append, [], **kwargs).behaviour_agreed == 0
