"""The reference pipeline: natural-language prompt -> IR -> Python code, as a DSPy module.

This module imports dspy at import time (``LiftPipeline`` subclasses ``dspy.Module``);
``lift_metrics.optimizers`` loads it on first use only.
"""

from __future__ import annotations

import time
from typing import Any

from dspy.dsp.utils.settings import settings
from dspy.predict import Predict
from dspy.primitives import Module, Prediction
from pydantic import BaseModel

from lift_metrics._checks import check_int, check_positive
from lift_metrics._usage import UsageRecorder
from lift_metrics.code import extract_code
from lift_metrics.dspy_metrics import record_measurement
from lift_metrics.errors import InputTypeError, InputValueError
from lift_metrics.ir import IR, callable_ir, parse_ir
from lift_metrics.optimizers._adapters import CompactJSONAdapter, FencedCodeAdapter
from lift_metrics.optimizers._eval_results import usage_fields
from lift_metrics.optimizers._functions import assemble_function, function_header
from lift_metrics.optimizers._select import MAX_CODE_SAMPLES, choose_code
from lift_metrics.optimizers._signatures import PromptToIR, WriteBody

__all__ = ["CODE_STOP", "LiftPipeline"]

_MAX_ERROR_CHARS = 500

#: The most tokens the code step may ask for: a function body takes hundreds; more is a
#: corrupted setting (no LM answers that many in one call).
MAX_CODE_MAX_TOKENS = 32_768

#: Stop sequences of the code step: the end of the fenced answer, or a line at column 0 that
#: starts a usage example (never part of a function). Four, the most OpenAI's API accepts.
CODE_STOP: tuple[str, ...] = ("\n```", "\nprint(", "\nif __name__", "\n# Example")


def _check_predictor_state(name: str, state: Any, signature: Any) -> None:
    """Check one predictor's saved state against its signature (see ``check_state``)."""
    if not isinstance(state, dict):
        raise InputTypeError(f"{name} must be an object, got {type(state).__name__}")
    allowed = {"signature", "demos", "traces", "train", "lm", "fields"}
    unknown = sorted(str(key) for key in state if key not in allowed)
    if unknown:
        raise InputValueError(f"{name}: unknown key {unknown[0]!r} (allowed: {sorted(allowed)})")
    for key in ("signature", "demos", "lm"):
        if key not in state:
            raise InputValueError(f"{name} has no {key!r}")
    if state["lm"] is not None:
        raise InputValueError(
            f"{name}.lm must be null (the LM is the run's: --lm or [lm]), got {_shown(state['lm'])}"
        )
    for key, kind in (("traces", list), ("train", list), ("fields", dict)):
        if not isinstance(state.get(key, kind()), kind):
            what = "a list" if kind is list else "an object"
            raise InputTypeError(f"{name}.{key} must be {what}, got {_shown(state[key])}")
    saved = state["signature"]
    if not isinstance(saved, dict):
        raise InputTypeError(f"{name}.signature must be an object, got {_shown(saved)}")
    instructions = saved.get("instructions")
    if not isinstance(instructions, str) or not instructions.strip():
        raise InputValueError(
            f"{name}.signature.instructions must be a non-empty string, got {_shown(instructions)}"
        )
    fields = saved.get("fields")
    count = len(signature.fields)
    if not isinstance(fields, list) or len(fields) != count:
        raise InputValueError(
            f"{name}.signature.fields must be a list of {count} objects (one per field), got "
            f"{_shown(fields)}"
        )
    for index, field in enumerate(fields):
        if not isinstance(field, dict) or not all(
            isinstance(field.get(key), str) for key in ("prefix", "description")
        ):
            raise InputValueError(
                f"{name}.signature.fields[{index}] must be an object with the strings 'prefix' "
                f"and 'description', got {_shown(field)}"
            )
    demos = state["demos"]
    if not isinstance(demos, list):
        raise InputTypeError(f"{name}.demos must be a list, got {_shown(demos)}")
    for index, demo in enumerate(demos):
        _check_demo(f"{name}.demos[{index}]", demo, signature)


def _check_demo(where: str, demo: Any, signature: Any) -> None:
    """Check a demonstration: an object with an input and an output field of ``signature``."""
    if not isinstance(demo, dict):
        raise InputTypeError(f"{where} must be an object, got {_shown(demo)}")
    inputs, outputs = signature.input_fields, signature.output_fields
    if not any(key in demo for key in inputs) or not any(key in demo for key in outputs):
        raise InputValueError(
            f"{where} must hold an input field ({', '.join(inputs)}) and an output field "
            f"({', '.join(outputs)}), got the keys {sorted(map(str, demo))[:8]}"
        )
    for key, field in {**inputs, **outputs}.items():
        value = demo.get(key)
        text_only = field.annotation is str
        if value is not None and not (
            isinstance(value, str) or (not text_only and isinstance(value, dict))
        ):
            kind = "a string" if text_only else "a string or an object"
            raise InputTypeError(f"{where}.{key} must be {kind}, got {_shown(value)}")


def _shown(value: Any) -> str:
    text = repr(value)
    return f"{type(value).__name__} {text if len(text) <= 60 else text[:57] + '...'}"


def _error_line(exc: BaseException) -> str:
    line = f"{type(exc).__name__}: {exc}".replace("\n", " ")
    return line if len(line) <= _MAX_ERROR_CHARS else line[: _MAX_ERROR_CHARS - 1] + "…"


class LiftPipeline(Module):  # type: ignore[misc]  # dspy is untyped: mypy sees its classes as Any
    """Prompt -> IR (constrained to the IR JSON schema) -> Python function.

    Two predictors, both optimizable (instructions and demonstrations):

    - ``to_ir`` (:class:`PromptToIR`): its output field is typed as the IR, so
      ``dspy.JSONAdapter`` sends the IR's JSON schema as ``response_format`` and LMs that
      support structured output (the local LM among them) always answer a parsable IR;
    - ``to_code`` (:class:`WriteBody`): the pipeline writes the function's ``def`` line from
      the IR's signature (:func:`function_header`) and the LM writes the body, through
      :class:`FencedCodeAdapter`, stopping at the end of its code fence or at a usage
      example (:data:`CODE_STOP`).
      The answer goes through :func:`lift_metrics.code.extract_code` and
      :func:`assemble_function`, which indents it under the header (or keeps a whole
      function the LM wrote itself).

    Parameters
    ----------
    ir_adapter, code_adapter : dspy.Adapter or None, default None
        The adapter of each step; ``None`` means :class:`CompactJSONAdapter` (a
        ``dspy.JSONAdapter`` writing one-line JSON) for ``to_ir`` and
        :class:`FencedCodeAdapter` for ``to_code``. An adapter set with
        ``dspy.configure(adapter=...)`` is not used: each step needs its own.
    code_max_tokens : int or None, default 192
        Most tokens of the code step's answer, at most :data:`MAX_CODE_MAX_TOKENS` (32,768;
        ``None``: the LM's own limit).
    code_samples : int, default 1
        Answers the code step draws per request: the first with the LM's own settings, the
        others sampled at ``sample_temperature`` (each with its own ``rollout_id`` and
        ``seed``, so caches do not merge them). With more than one,
        :func:`~lift_metrics.optimizers.choose_code` keeps one without looking at any test:
        answers that are code and agree with the most other answers on probe inputs made
        from the header's type hints (run in the sandbox).
    sample_temperature : float, default 0.8
        Temperature of the extra samples, in (0, 2].

    Notes
    -----
    ``forward(prompt)`` returns a ``dspy.Prediction`` with

    - ``ir``: the parsed :class:`~lift_metrics.IR`, or ``None`` when the LM's answer did not
      parse (after a lenient second try with :func:`lift_metrics.ir.parse_ir`);
    - ``ir_json``: the IR as JSON text (the raw answer when parsing failed);
    - ``header``: the ``def`` line built from the IR (``""`` without an IR). When the IR
      answer was refused only for its parameters (a name repeated, a keyword), the header is
      written from it with those dropped (:func:`lift_metrics.ir.callable_ir`): ``ir`` stays
      ``None``, so the IR metrics score the refused answer, and the code step still runs;
    - ``body``: the code step's raw answer;
    - ``code``: the assembled function (``""`` when the step failed or the answer was
      empty or a template placeholder);
    - ``ir_error`` / ``code_error``: ``None``, or the one-line error of that step;
    - ``code_choice``: with ``code_samples > 1``, how the answer was chosen (one line), else
      ``None``;
    - ``latency_ms``: wall time of the whole forward pass;
    - ``lm_calls``, ``prompt_tokens``, ``completion_tokens``, ``total_tokens``, ``cost_usd``:
      billed usage of this call (cache hits count zero), read from DSPy's usage tracker.

    The latency and cost are also recorded for the prediction object
    (:func:`lift_metrics.dspy_metrics.record_measurement`): the metrics read them there, not
    from the fields.

    A bad LM answer never raises: the error is kept in the prediction and the metrics score
    it. (A :class:`~lift_metrics.errors.BudgetExceeded` or ``KeyboardInterrupt``
    does propagate.) Save and load with DSPy's own format: ``program.save("p.json")`` and
    ``LiftPipeline().load("p.json")``.

    Examples
    --------
    >>> import dspy
    >>> from dspy.utils import DummyLM
    >>> ir = {"intent": {"description": "Add two integers."},
    ...       "signature": {"name": "add", "return_type": "int",
    ...                     "parameters": [{"name": "a", "type_hint": "int"},
    ...                                    {"name": "b", "type_hint": "int"}]}}
    >>> lm = DummyLM([{"ir": ir}, {"body": "    return a + b"}], adapter=dspy.JSONAdapter())
    >>> program = LiftPipeline(code_adapter=dspy.JSONAdapter())  # DummyLM answers in JSON
    >>> with dspy.context(lm=lm):
    ...     out = program(prompt="Add two integers.")
    >>> print(out.code, end="")
    def add(a: int, b: int):
        return a + b
    >>> out.header, out.ir_error, out.code_error
    ('def add(a: int, b: int):', None, None)
    """

    def __init__(
        self,
        *,
        ir_adapter: Any = None,
        code_adapter: Any = None,
        code_max_tokens: int | None = 192,
        code_samples: int = 1,
        sample_temperature: float = 0.8,
    ) -> None:
        super().__init__()
        self.ir_adapter = ir_adapter if ir_adapter is not None else CompactJSONAdapter()
        self.code_adapter = code_adapter if code_adapter is not None else FencedCodeAdapter()
        self._set_code_settings(
            code_max_tokens=code_max_tokens,
            code_samples=code_samples,
            sample_temperature=sample_temperature,
        )
        self.to_ir = Predict(PromptToIR)
        self.to_code = Predict(WriteBody)

    @staticmethod
    def _check_code_settings(
        *,
        code_max_tokens: int | None = 192,
        code_samples: int = 1,
        sample_temperature: float = 0.8,
    ) -> tuple[int | None, int, float]:
        """Return the code step's settings (the constructor's), checked."""
        max_tokens = (
            None
            if code_max_tokens is None
            else check_int(
                "code_max_tokens", code_max_tokens, minimum=1, maximum=MAX_CODE_MAX_TOKENS
            )
        )
        samples = check_int("code_samples", code_samples, minimum=1, maximum=MAX_CODE_SAMPLES)
        temperature = check_positive("sample_temperature", sample_temperature)
        if temperature > 2.0:
            raise InputValueError(f"sample_temperature must be in (0, 2], got {temperature!r}")
        return max_tokens, samples, temperature

    def _set_code_settings(
        self,
        *,
        code_max_tokens: int | None = 192,
        code_samples: int = 1,
        sample_temperature: float = 0.8,
    ) -> None:
        """Check the code step's settings (the constructor's), then set all three."""
        self.code_max_tokens, self.code_samples, self.sample_temperature = (
            self._check_code_settings(
                code_max_tokens=code_max_tokens,
                code_samples=code_samples,
                sample_temperature=sample_temperature,
            )
        )

    def dump_state(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        """DSPy's state of both predictors, plus the code step's settings under ``"pipeline"``."""
        state: dict[str, Any] = super().dump_state(*args, **kwargs)
        state["pipeline"] = {
            "code_max_tokens": self.code_max_tokens,
            "code_samples": self.code_samples,
            "sample_temperature": self.sample_temperature,
        }
        return state

    def load_state(self, state: dict[str, Any], *args: Any, **kwargs: Any) -> LiftPipeline:
        """Load :meth:`dump_state`'s output, checked whole first (:meth:`check_state`).

        A state without ``"pipeline"`` keeps the code step's settings.
        """
        self.check_state(state)
        settings_ = state.get("pipeline")
        if settings_ is not None:
            self._set_code_settings(**settings_)
        super().load_state({k: v for k, v in state.items() if k != "pipeline"}, *args, **kwargs)
        return self

    def check_state(self, state: Any) -> None:
        """Check a saved state whole before any of it is loaded.

        A state that loads without complaint but cannot work (demonstrations that are not
        examples, an instruction that is not text, a predictor LM of its own, a code step
        setting out of range) would make every example score 0; it is refused instead.

        Raises
        ------
        InputValueError, InputTypeError
            One line naming the key (``to_code.demos[2]``), what is allowed and what is there.

        Notes
        -----
        The state is an object with the keys ``to_ir`` and ``to_code`` (the predictors), and
        optionally ``pipeline`` (the code step's settings, checked as the constructor checks
        them) and ``metadata`` (an object: DSPy's versions). Each predictor holds
        ``signature`` (``instructions``, a non-empty string, and ``fields``, one
        ``{"prefix", "description"}`` object of strings per field of the signature),
        ``demos`` (objects holding at least one input and one output field of the
        predictor, text fields as strings), ``traces`` and ``train`` (lists), optionally
        ``fields`` (an object, which DSPy checks against the signature), and ``lm``,
        which must be null: the LM is the run's (``--lm``, ``[lm]``), never one saved in the
        program.
        """
        if not isinstance(state, dict):
            raise InputTypeError(f"the state must be an object, got {type(state).__name__}")
        predictors = dict(self.named_predictors())
        allowed = {*predictors, "pipeline", "metadata"}
        unknown = sorted(str(key) for key in state if key not in allowed)
        if unknown:
            raise InputValueError(
                f"unknown key {unknown[0]!r} in the state (allowed: {sorted(allowed)})"
            )
        for name, predictor in predictors.items():
            if name not in state:
                raise InputValueError(
                    f"the state has no {name!r} (the predictors: {sorted(predictors)})"
                )
            _check_predictor_state(name, state[name], predictor.signature)
        settings_ = state.get("pipeline")
        if settings_ is not None:
            if not isinstance(settings_, dict):
                raise InputTypeError(
                    f"the state's 'pipeline' must be an object, got {type(settings_).__name__}"
                )
            unknown = sorted(
                set(settings_) - {"code_max_tokens", "code_samples", "sample_temperature"}
            )
            if unknown:
                raise InputValueError(f"pipeline: unknown key {unknown[0]!r}")
            try:
                LiftPipeline._check_code_settings(**settings_)
            except (InputValueError, InputTypeError) as exc:
                raise type(exc)(f"pipeline.{exc}") from None
        metadata = state.get("metadata")
        if metadata is not None and not isinstance(metadata, dict):
            raise InputTypeError(f"metadata must be an object, got {type(metadata).__name__}")

    def forward(self, prompt: str) -> Prediction:
        """Run both steps on ``prompt``; see the class notes for the prediction's fields."""
        started = time.perf_counter()
        recorder = UsageRecorder(parent=settings.usage_tracker)
        with settings.context(usage_tracker=recorder):
            ir, ir_json, ir_error = self._predict_ir(prompt)
            usable = ir if ir is not None or not ir_json else callable_ir(ir_json)
            header, body, code, code_error, choice = self._predict_code(prompt, usable)
        usage = recorder.totals()
        latency_ms = (time.perf_counter() - started) * 1000.0
        prediction = Prediction(
            ir=ir,
            ir_json=ir_json,
            ir_error=ir_error,
            header=header,
            body=body,
            code=code,
            code_error=code_error,
            code_choice=choice,
            latency_ms=latency_ms,
            **usage_fields(usage),
        )
        record_measurement(
            prediction, latency_ms=latency_ms, cost_usd=usage.cost_usd, lm_calls=usage.lm_calls
        )
        return prediction

    def _predict_ir(self, prompt: str) -> tuple[IR | None, str, str | None]:
        try:
            with settings.context(adapter=self.ir_adapter):
                value = self.to_ir(prompt=prompt).ir
            if isinstance(value, BaseModel):  # PromptIR -> a plain IR (equality is per class)
                value = value.model_dump()
            ir = parse_ir(value)
        except Exception as exc:  # a bad answer is scored, not raised
            raw = getattr(exc, "lm_response", None)
            if isinstance(raw, str) and raw.strip():
                try:  # a lenient second reading of the same answer
                    return parse_ir(raw), raw, None
                except Exception:
                    return None, raw, _error_line(exc)
            return None, "", _error_line(exc)
        return ir, ir.model_dump_json(), None

    def _predict_code(
        self, prompt: str, ir: IR | None
    ) -> tuple[str, str, str, str | None, str | None]:
        """(header, raw answer, assembled code, error, how the answer was chosen)."""
        if ir is None:
            missing = "no code: the IR step gave no signature to write the header from"
            return "", "", "", missing, None
        try:
            header = function_header(ir)
        except ValueError as exc:
            return "", "", "", f"no code: {exc}", None
        config: dict[str, Any] = {"stop": list(CODE_STOP)}
        if self.code_max_tokens is not None:
            config["max_tokens"] = self.code_max_tokens
        if self.code_samples == 1:
            body, code, error, _ = self._answer(prompt, header, config, trace=True)
            return header, body, code, error, None
        configs = [config] + [
            {**config, "temperature": self.sample_temperature, "rollout_id": i, "seed": i}
            for i in range(1, self.code_samples)
        ]
        answers = [self._answer(prompt, header, c, trace=False) for c in configs]
        name = header[4 : header.index("(")]
        choice = choose_code(header, [code for _, code, _, _ in answers], entry_point=name)
        body, code, error, prediction = answers[choice.index]
        if prediction is not None and settings.trace is not None:  # what a bootstrap sees
            inputs = {"prompt": prompt, "header": header, "config": configs[choice.index]}
            settings.trace.append((self.to_code, inputs, prediction))
        return header, body, code, error, choice.reason

    def _answer(
        self, prompt: str, header: str, config: dict[str, Any], *, trace: bool
    ) -> tuple[str, str, str | None, Prediction | None]:
        """One code-step call: (raw answer, assembled code, error, the prediction if any)."""
        try:
            # Unless ``trace``, keep the call out of DSPy's trace (bootstraps see the chosen one).
            context = {} if trace else {"trace": None}
            with settings.context(adapter=self.code_adapter, **context):
                prediction = self.to_code(prompt=prompt, header=header, config=config)
            body = str(prediction.body or "")
        except Exception as exc:
            raw = getattr(exc, "lm_response", None)
            body = raw if isinstance(raw, str) else ""
            code = assemble_function(header, extract_code(body)) if body.strip() else ""
            return body, code, _error_line(exc), None
        code = assemble_function(header, extract_code(body))
        error = None if code else "no code: the answer was empty or a template placeholder"
        return body, code, error, prediction
