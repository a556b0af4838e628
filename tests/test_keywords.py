"""A metric and its breakdown twin take one keyword list: the signature shows it, calls obey it."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, TypedDict

import pytest

from lift_metrics._keywords import keyword_arguments, takes_keywords
from lift_metrics.code import _quality, code_quality, code_quality_breakdown
from lift_metrics.composite import DEFAULT_TARGET_MS, _end_to_end, end_to_end, end_to_end_breakdown

KEYWORD_ONLY = inspect.Parameter.KEYWORD_ONLY
EMPTY = inspect.Parameter.empty

#: the keywords of code_quality, in the order of its documentation, all default None
CODE_QUALITY_KEYWORDS = [
    "profile",
    "weights",
    "embedder",
    "sandbox",
    "entry_point",
    "prompt",
    "timeout_s",
    "similarity_floor",
    "wrong_answer_gate",
    "stub_cap",
    "behaviour",
]
#: the keywords of end_to_end with their defaults (EMPTY: required)
END_TO_END_KEYWORDS = {
    "predicted_ir": EMPTY,
    "expected_ir": EMPTY,
    "predicted_code": EMPTY,
    "expected_code": EMPTY,
    "tests": EMPTY,
    "latency_ms": EMPTY,
    "target_ms": DEFAULT_TARGET_MS,
    "weights": None,
    "ir_weights": None,
    "code_weights": None,
    "code_profile": None,
    "embedder": None,
    "sandbox": None,
    "entry_point": None,
    "prompt": None,
    "timeout_s": None,
}
TWINS = [(code_quality, code_quality_breakdown), (end_to_end, end_to_end_breakdown)]
FUNCTIONS = [function for pair in TWINS for function in pair]


def _keywords(function: Callable[..., Any]) -> dict[str, Any]:
    parameters = inspect.signature(function).parameters.values()
    assert all(p.kind is not p.VAR_KEYWORD for p in parameters), function.__name__
    return {p.name: p.default for p in parameters if p.kind is KEYWORD_ONLY}


@pytest.mark.parametrize("function", [code_quality, code_quality_breakdown])
def test_the_code_quality_twins_list_every_keyword(function: Callable[..., Any]) -> None:
    assert _keywords(function) == dict.fromkeys(CODE_QUALITY_KEYWORDS)
    assert list(_keywords(function)) == CODE_QUALITY_KEYWORDS
    positional = list(inspect.signature(function).parameters)[:3]
    assert positional == ["predicted", "expected", "tests"]
    assert inspect.signature(function).parameters["weights"].annotation == (
        "Mapping[str, float] | None"
    )


@pytest.mark.parametrize("function", [end_to_end, end_to_end_breakdown])
def test_the_end_to_end_twins_list_every_keyword(function: Callable[..., Any]) -> None:
    assert list(_keywords(function).items()) == list(END_TO_END_KEYWORDS.items())
    assert len(inspect.signature(function).parameters) == len(END_TO_END_KEYWORDS)


@pytest.mark.parametrize(("plain", "breakdown"), TWINS, ids=["code_quality", "end_to_end"])
def test_the_twins_differ_only_in_what_they_return(
    plain: Callable[..., Any], breakdown: Callable[..., Any]
) -> None:
    assert inspect.signature(plain).replace(return_annotation="") == inspect.signature(
        breakdown
    ).replace(return_annotation="")
    assert inspect.signature(plain).return_annotation == "float"


@pytest.mark.parametrize("function", FUNCTIONS, ids=lambda f: f.__name__)
def test_an_unknown_keyword_is_refused_naming_the_function(function: Callable[..., Any]) -> None:
    arguments: dict[str, Any] = {"wieghts": {"ir": 1}}
    code = function in (code_quality, code_quality_breakdown)
    args: tuple[Any, ...] = ("x = 1", "x = 1", []) if code else ()
    message = f"{function.__name__}() got an unexpected keyword argument 'wieghts'"
    with pytest.raises(TypeError) as info:
        function(*args, **arguments)
    assert str(info.value) == message


@pytest.mark.parametrize("function", [end_to_end, end_to_end_breakdown])
def test_a_missing_keyword_is_named_as_python_names_it(function: Callable[..., Any]) -> None:
    given: dict[str, Any] = {"predicted_ir": {}, "expected_ir": {}, "predicted_code": ""}
    with pytest.raises(TypeError) as info:
        function(**given)
    assert str(info.value) == (
        f"{function.__name__}() missing 3 required keyword-only arguments: "
        "'expected_code', 'tests', and 'latency_ms'"
    )


@pytest.mark.parametrize("function", FUNCTIONS, ids=lambda f: f.__name__)
def test_the_functions_stay_in_their_module_for_doctest(function: Callable[..., Any]) -> None:
    """pytest's doctest finder reads a function whose globals are its module's."""
    module = _quality if function in (code_quality, code_quality_breakdown) else _end_to_end
    assert function.__globals__ is vars(module)
    assert getattr(module, function.__name__) is function
    assert ">>>" in (function.__doc__ or "")


class _Inputs(TypedDict):
    a: int
    b: int


class _Options(_Inputs, total=False):
    c: str | None
    d: float


@takes_keywords(_Options, {"d": 2.5})
def _takes(first: int, **options: Any) -> int:
    return first


def _written(first: int, *, a: int, b: int, c: str | None = None, d: float = 2.5) -> int:
    return first


def test_the_signature_is_that_of_the_written_out_function() -> None:
    assert inspect.signature(_takes) == inspect.signature(_written)


@pytest.mark.parametrize(
    "given", [{"a": 1, "b": 2, "e": 3}, {"a": 1, "e": 3}, {"a": 1}, {}, {"b": 2}], ids=str
)
def test_a_bad_call_raises_the_error_python_raises(given: dict[str, Any]) -> None:
    with pytest.raises(TypeError) as python:
        _written(0, **given)
    with pytest.raises(TypeError) as checked:
        keyword_arguments(_takes, given)
    assert str(checked.value) == str(python.value).replace("_written", "_takes")


def test_keyword_arguments_fills_in_the_defaults_and_keeps_what_was_given() -> None:
    assert keyword_arguments(_takes, {"a": 1, "b": 2}) == {"a": 1, "b": 2, "c": None, "d": 2.5}
    assert keyword_arguments(_takes, {"a": 1, "b": 2, "d": 0.0})["d"] == 0.0
