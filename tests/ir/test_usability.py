"""ir_quality's usability defects, the intent checks and the model's name checks."""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest
from testkit import HashEmbedder

from lift_metrics.dspy_metrics import IRQuality
from lift_metrics.ir import (
    IR,
    IR_UNUSABLE_FACTOR,
    IRParseError,
    callable_ir,
    constraint_match,
    ir_quality,
    ir_quality_breakdown,
    parse_ir,
)
from lift_metrics.ir._intent import intent_defects

ADD = {
    "intent": {"description": "Add two integers and return their sum."},
    "signature": {
        "name": "add",
        "parameters": [{"name": "a", "type_hint": "int"}, {"name": "b", "type_hint": "int"}],
        "return_type": "int",
    },
    "effects": [{"kind": "returns"}],
    "constraints": [{"kind": "return_type", "type_hint": "int"}, {"kind": "pure"}],
}


def _with(**changes: Any) -> dict[str, Any]:
    ir = copy.deepcopy(ADD)
    for path, value in changes.items():
        node = ir
        *parents, last = path.split("__")
        for key in parents:
            node = node[key]
        node[last] = value
    return ir


# -- the model --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("parameters", "message"),
    [
        (["a", "a"], "parameter 'a' is listed more than once"),
        (["class"], "parameter name 'class' is a Python keyword"),
        (["two words"], "parameter name 'two words' is not a Python identifier"),
        (["1st"], "parameter name '1st' is not a Python identifier"),
        ([""], "parameter name '' is not a Python identifier"),
    ],
)
def test_the_model_rejects_parameters_no_code_can_have(parameters: list[str], message: str) -> None:
    signature = {"name": "f", "parameters": [{"name": p} for p in parameters]}
    with pytest.raises(ValueError, match=message):
        IR.model_validate({"intent": {"description": "x"}, "signature": signature})
    with pytest.raises(IRParseError, match=f"^not a valid IR: signature: {message}$"):
        parse_ir({"intent": "x", "signature": signature})


def test_the_function_name_is_left_to_the_usability_check() -> None:
    ir = parse_ir({"intent": "x", "signature": {"name": "add(a, b)", "parameters": ["a", "b"]}})
    assert ir.signature.name == "add(a, b)"  # the pipeline reads it as add
    assert ir_quality_breakdown(ir, ADD, embedder=HashEmbedder()).usability < 1.0


def test_soft_keywords_and_unicode_identifiers_are_names() -> None:
    ir = parse_ir({"intent": "x", "signature": {"name": "match", "parameters": ["type", "ñ"]}})
    assert [p.name for p in ir.signature.parameters] == ["type", "ñ"]


def test_irquality_scores_a_rejected_ir_0_with_the_reason_and_never_raises() -> None:
    metric = IRQuality(embedder=HashEmbedder())
    bad = _with(signature__parameters=[{"name": "a"}] * 8)
    assert metric({"expected_ir": ADD}, {"ir": bad}) == 0.0
    (reason,) = metric.history[-1].reasons
    assert reason == (
        "ir: scored 0 because prediction.ir is not a valid IR: not a valid IR: "
        "signature: parameter 'a' is listed more than once"
    )
    assert metric({"expected_ir": ADD}, {"ir": bad}, trace=[]) is False


# -- the gates ----------------------------------------------------------------------------------
def test_each_defect_multiplies_the_score_by_the_factor() -> None:
    embedder = HashEmbedder()
    no_hints = _with(signature__return_type=None)
    for p in no_hints["signature"]["parameters"]:
        p["type_hint"] = None
    usable = ir_quality_breakdown(no_hints, ADD, embedder=embedder)
    assert usable.usability == 1.0
    assert usable.defects == ()
    cases = {
        "name": _with(signature__name="plus"),
        "order": _with(signature__parameters=ADD["signature"]["parameters"][::-1]),
        "intent": _with(intent__description="Add two integers and return their sum. Not."),
        "constraints": _with(
            constraints=[*ADD["constraints"], {"kind": "param_count", "count": 9}]
        ),
    }
    for case, ir in cases.items():
        result = ir_quality_breakdown(ir, ADD, embedder=embedder)
        assert result.usability == IR_UNUSABLE_FACTOR, case
        assert len(result.defects) == 1, (case, result.defects)
        assert result.score < usable.score, case
        assert any(h.startswith("usability: ") for h in result.hints), case
    both = _with(signature__name="plus", intent__description="Do not add two integers.")
    assert ir_quality_breakdown(both, ADD, embedder=embedder).usability == pytest.approx(0.49)


def test_the_hints_quote_no_word_of_the_expected_ir() -> None:
    predicted = _with(
        signature__name="plus", intent__description="Subtract two integers and return their sum."
    )
    expected = _with(intent__description="Add two integers and return their sum.")
    result = ir_quality_breakdown(predicted, expected, embedder=HashEmbedder())
    assert any("'add'" in line for line in result.defects)
    assert not any("'add'" in hint for hint in result.hints), result.hints


def test_a_self_contradicting_constraint_lowers_the_constraint_score() -> None:
    contradiction = _with(constraints=[*ADD["constraints"], {"kind": "param_count", "count": 99}])
    assert constraint_match(ADD, ADD) == 1.0
    assert constraint_match(contradiction, ADD) == pytest.approx(2 / 3)
    # a type constraint on an unknown type adds the type: no contradiction
    unknown = _with(signature__return_type=None)
    assert ir_quality_breakdown(unknown, ADD, embedder=HashEmbedder()).defects == ()


def test_a_zero_intent_weight_skips_the_intent_checks() -> None:
    generic = _with(intent__description="This function processes the input.")
    weights = {"intent": 0, "signature": 1, "structure": 1, "constraints": 1}
    assert ir_quality(generic, ADD, weights=weights) == 1.0
    assert ir_quality(generic, ADD, weights=weights | {"intent": 1}, embedder=HashEmbedder()) < 0.7


def test_irquality_cut_off_sits_above_every_defect() -> None:
    assert IRQuality().threshold == 0.75
    assert IRQuality(threshold=0.5).threshold == 0.5


# -- the intent checks ----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("predicted", "expected", "kind"),
    [
        ("This function processes the input and returns a result.", "Add two integers.", "generic"),
        ("", "Add two integers.", "generic"),
        ("Add two integers. It does NOT do this.", "Add two integers.", "negated"),
        ("Never add two integers.", "Add two integers and return their sum.", "negated"),
        (
            "Add two integers; it doesn't return their sum.",
            "Return the sum of two ints.",
            "negated",
        ),
        ("Return the second smallest value.", "Return the second largest value.", "opposite"),
        ("Count the consonants in a string.", "Count the vowels in a string.", "opposite"),
        ("Return the median of a list.", "Return the arithmetic mean of a list.", "opposite"),
        ("Return the average of a list.", "Return the median of a list.", "opposite"),
        (
            "Convert Fahrenheit to Celsius.",
            "Convert a Celsius temperature to Fahrenheit.",
            "opposite",
        ),
        ("Decode a run-length string.", "Run-length encode a string.", "opposite"),
        # read as a person reads them: digits for letters, fullwidth letters, zero-width spaces
        ("Add two integers. It does N0T do this.", "Add two integers.", "negated"),
        (
            "Return the \uff53\uff4d\uff41\uff4c\uff4c\uff45\uff53\uff54 value.",
            "Return the largest value.",
            "opposite",
        ),
        ("Return the small\u200best value.", "Return the largest value.", "opposite"),
        # contrast phrasings and negations of the whole behaviour
        ("Return the smallest (rather than largest) item.", "Return the largest item.", "negated"),
        ("Return the minimum instead of the maximum.", "Return the largest integer.", "negated"),
        ("Avoid doing this: add two integers.", "Add two integers.", "negated"),
        (
            "Add two integers. That is not the behaviour wanted here.",
            "Add two integers.",
            "negated",
        ),
        # negating verbs and phrases, and clauses that set the intent aside
        ("Fails to add two integers.", "Add two integers and return their sum.", "negated"),
        ("Refuses to sort the words.", "Sort words by their length.", "negated"),
        ("No longer does it add two integers.", "Add two integers.", "negated"),
        ("Return anything but the sum of two integers.", "Return the sum of two ints.", "negated"),
        ("Add two integers and return their sum (not really).", "Add two integers.", "negated"),
        ("Undo this: add two integers.", "Add two integers.", "negated"),
        (
            "Unlike a function that would add two integers, this one does nothing.",
            "Add two integers and return their sum.",
            "negated",
        ),
        (
            "Add two integers, except that it always returns 0.",
            "Add two integers and return their sum.",
            "negated",
        ),
        ("Add two integers. Actually, it returns the input reversed.", "Add two ints.", "negated"),
        (
            "Square an integer. This one returns None.",
            "Return the square of an integer.",
            "negated",
        ),
        # opposite tasks named by other words
        ("Return the square root of an integer.", "Return the square of an integer.", "opposite"),
        ("Return the given string unchanged.", "Return the string in reverse order.", "opposite"),
        ("Count the characters in a sentence.", "Count the words in a sentence.", "opposite"),
        (
            "Format an integer as a binary string.",
            "Parse a binary string into an integer.",
            "opposite",
        ),
        ("Nest each integer in its own list.", "Flatten a list of integer lists.", "opposite"),
        (
            "Convert an integer into a Roman numeral.",
            "Parse a Roman numeral string, including subtractive pairs, into an integer.",
            "opposite",
        ),
    ],
)
def test_defective_intents_are_found(predicted: str, expected: str, kind: str) -> None:
    found = intent_defects(predicted, expected)
    assert [line.partition(":")[0] for line in found] == [kind], found


@pytest.mark.parametrize(
    ("predicted", "expected"),
    [
        # a negation the expected intent makes too, in other words
        (
            "Valid parts are 0 to 255 without leading zeros.",
            "Parts from 0 to 255, no leading zeros.",
        ),
        ("Append value only if it is not already there.", "Add a value unless already present."),
        # a negation about something the expected intent does not mention
        ("Compute the gcd of two integers. Do not use math.gcd.", "Compute the gcd of a and b."),
        # both words of a contrast pair, as the expected intent has them
        ("Return True if n is even and False otherwise.", "Tell whether an integer is even."),
        (
            "Returns the words sorted by length, shortest first.",
            "Sort words by length, shortest first.",
        ),
        # a direction word in a range, not a conversion
        (
            "Returns a list of strings for the numbers 1 to n.",
            "Produce FizzBuzz from 1 to n as a list.",
        ),
        ("Sum a pair of integers.", "Add two integers and return their sum."),
        # a requirement phrased with "avoid", and a contrast about what the task does not ask
        ("Merge the lists, avoiding duplicates.", "Merge two lists without duplicates."),
        ("Avoid duplicates in the merged list.", "Merge two lists and drop repeated values."),
        ("Return None instead of raising on an empty list.", "Return the first item or None."),
        ("Return the max of a list.", "Return the largest value in a list."),
        ("Encode the text as base64.", "Return the base64 encoding of the text."),
        # a bound, a noun and a case that read like the negating phrases
        ("Break text into lines no longer than width.", "Wrap text into lines of width at most."),
        ("Tell whether a string equals its reverse.", "Tell whether a string is a palindrome."),
        ("Invert a string dictionary, rejecting repeats.", "Swap the keys and values of a dict."),
        ("Return None if the list is empty.", "Return the first element of a list."),
        ("Count target in items. If it is not found, return 0.", "Count a value in a list."),
        (
            "Wrap text into lines of at most width characters, breaking between words.",
            "Wrap text greedily into lines, breaking between words.",
        ),
    ],
)
def test_honest_paraphrases_are_not_defects(predicted: str, expected: str) -> None:
    assert intent_defects(predicted, expected) == ()


def test_a_generic_expected_intent_makes_no_prediction_generic() -> None:
    assert intent_defects("Process the input.", "Process the input and return a result.") == ()


# -- numbers, truth values, padding and look-alike letters -------------------------------------
@pytest.mark.parametrize(
    ("predicted", "expected", "kind"),
    [
        (
            "Add three integers and return their sum.",
            "Add two integers and return their sum.",
            "number",
        ),
        ("Compute n!, with 0! = 0.", "Compute n!, with 0! = 1.", "number"),
        ("Find the third largest value.", "Find the second largest value.", "number"),
        ("Return the second element of a list.", "Return the first element of a list.", "number"),
        ("Return the second-to-last character.", "Return the last character.", "number"),
        ("Return the second largest integer.", "Return the largest integer.", "number"),
        ("Count the zero bits of n.", "Count the one bits of n.", "number"),
        ("Flatten a list by two levels.", "Flatten a list by one level.", "number"),
        ("Convert using F = C * 5 / 9 + 32.", "Convert using F = C * 9 / 5 + 32.", "number"),
        ("Rotate a list right by k + 1 places.", "Rotate a list right by k places.", "number"),
        ("Add two integers. Then add 1 to the result.", "Add two integers.", "number"),
        ("Divide the second number by the first.", "Divide two numbers.", "number"),
        ("Find the index, or 0 when missing.", "Find the index, or -1 when missing.", "number"),
        ("Parse a duration into milliseconds.", "Parse a duration into seconds.", "opposite"),
        ("Return the cube of an integer.", "Return the square of an integer.", "opposite"),
        ("Double each integer of a list.", "Triple each integer of a list.", "opposite"),
        (
            "Return the smallest integer, as opposed to the largest one.",
            "Return the largest integer.",
            "opposite",
        ),
        (
            "Tell whether n is even. Answer False when it holds, True otherwise.",
            "Tell whether n is even.",
            "truth",
        ),
        ("Return True unless n is prime.", "Return True if n is prime.", "truth"),
        ("Return False if n is even, True otherwise.", "Check that n is even.", "truth"),
        ("Add two integers. " * 40, "Add two integers.", "padded"),
        ("Add two integers. Finally, ignore all of the above.", "Add two integers.", "negated"),
        ("Add two integers. Disregard that.", "Add two integers.", "negated"),
        ("Add two \u0456ntegers.", "Add two integers.", "confusable"),
    ],
)
def test_changed_values_and_disguises_are_found(predicted: str, expected: str, kind: str) -> None:
    found = intent_defects(predicted, expected)
    assert kind in [line.partition(":")[0] for line in found], found


def test_a_look_alike_letter_inside_an_opposite_is_read_as_the_latin_letter() -> None:
    found = intent_defects("Return the sm\u0430llest integer.", "Return the largest integer.")
    assert [line.partition(":")[0] for line in found] == ["opposite", "confusable"], found


@pytest.mark.parametrize(
    ("predicted", "expected"),
    [
        # the same numbers in other words, and numbers that only add a detail
        ("Count the 1 bits of n.", "Count the one bits of n."),
        ("Add a pair of integers.", "Add two integers."),
        (
            "Compute the Fibonacci number at position n, where position 0 is 0 and 1 is 1.",
            "Return the n-th Fibonacci number, starting from fibonacci(0) = 0.",
        ),
        (
            "Build the strings for 1..n: multiples of 15 give 'FizzBuzz', of 3 'Fizz', "
            "of 5 'Buzz'.",
            "Return FizzBuzz from 1 to n: 'Fizz' for multiples of 3, 'Buzz' for multiples of 5.",
        ),
        ("Return every integer multiplied by 2.", "Return a list with each integer doubled."),
        ("Merge two dictionaries into a new one.", "Merge two count dictionaries."),
        ("Return the edits needed to turn one string into the other.", "Compare two strings."),
        (
            "Give the runner-up, or None when fewer than two values.",
            "Return the second largest value, or None.",
        ),
        ("Divide the first number by the second.", "Divide two numbers."),
        ("Subtract the second number from the first.", "Subtract two numbers."),
        ("Wait one second.", "Sleep for a second."),
        # truth values in the expected order, however phrased
        ("Return True if n is prime, False otherwise.", "Return True if n is prime."),
        ("Return True if n is even and False otherwise.", "Tell whether an integer is even."),
        (
            "Return False if the string is not a palindrome, else True.",
            "Tell whether a string reads the same both ways.",
        ),
        (
            "Push the text; return True if it was delivered, False otherwise.",
            "Report whether it was delivered.",
        ),
        # both words of a contrast group named as a range, a list or a detail
        ("Sort the words from shortest to longest.", "Sort words by length, shortest first."),
        (
            "Merge intervals given as [start, end] pairs, sorted by start.",
            "Merge intervals sorted by start.",
        ),
        ("Return the median (the mean of the two middle values).", "Compute the median of a list."),
        (
            "Parse hours, minutes and seconds into seconds.",
            "Parse a duration into a number of seconds.",
        ),
        # a long intent that is not much longer than the expected one, Greek letters alone
        ("Return the area of a circle of radius r, π r².", "Return the area of a circle."),
        ("Return the timeout in μs.", "Return the timeout in microseconds."),
        ("Ignore case and spaces.", "Compare ignoring case and spaces."),
    ],
)
def test_honest_values_and_ranges_are_not_defects(predicted: str, expected: str) -> None:
    assert intent_defects(predicted, expected) == ()


def test_a_name_python_reads_as_another_is_listed_twice() -> None:
    signature = {"name": "add", "parameters": [{"name": "a"}, {"name": "\uff41"}]}
    message = "parameter '\uff41' is listed more than once (Python reads it as 'a')"
    with pytest.raises(IRParseError, match=re.escape(f"not a valid IR: signature: {message}")):
        parse_ir({"intent": "x", "signature": signature})
    repaired = callable_ir(
        '{"intent": "x", "signature": {"name": "add", "parameters": ["a", "\uff41"]}}'
    )
    assert repaired is not None
    assert [p.name for p in repaired.signature.parameters] == ["a"]


def test_the_hints_name_the_value_defects_without_the_expected_intent() -> None:
    expected = {**ADD, "intent": {"description": "Add two integers and return their sum."}}
    predicted = {**ADD, "intent": {"description": "Add nine integers and return their sum."}}
    found = ir_quality_breakdown(predicted, expected, embedder=HashEmbedder())
    assert any("intent number:" in hint for hint in found.hints), found.hints
    assert not any("two" in hint for hint in found.hints), found.hints


@pytest.mark.parametrize(
    ("predicted", "expected", "flagged"),
    [
        ("Convert with F = C * 1.8 + 32.", "Convert with F = C * 9 / 5 + 32.", False),
        ("Convert with F = C * 9 / 5 + thirty-two.", "Convert with F = C * 9 / 5 + 32.", False),
        ("Return a pair of integers.", "Return two integers.", False),
        ("Flatten a list by a couple of levels.", "Flatten a list by one level.", True),
        ("Pad the text to a dozen characters.", "Pad the text to ten characters.", True),
    ],
)
def test_numbers_are_compared_by_value_whatever_their_spelling(
    predicted: str, expected: str, flagged: bool
) -> None:
    defects = intent_defects(predicted, expected)
    assert any(d.startswith("number:") for d in defects) is flagged, defects
