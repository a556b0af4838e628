"""DummyLM answers for the reference pipeline: JSON for the IR step, raw text for the code step.

The IR step speaks ``JSONAdapter`` (its prompt ends with "order of fields: `ir`"); the code
step speaks :class:`~lift_metrics.optimizers._adapters.FencedCodeAdapter`, whose reply is
the code itself (its prompt ends with a ``Header:`` section).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import dspy
from dspy.utils import DummyLM

from lift_metrics.optimizers._config import RunConfig

IR_KEY = "order of fields: `ir`"
CODE_KEY = "\n\nHeader:\ndef "


class AnswerFormat(dspy.JSONAdapter):
    """Formats DummyLM's answers: a ``body`` answer as raw text, anything else as JSON."""

    def format_field_with_value(self, fields_with_values: Any, role: str = "user") -> str:
        names = [field.name for field in fields_with_values]
        if role != "user" and names == ["body"]:
            return str(next(iter(fields_with_values.values())))
        return str(super().format_field_with_value(fields_with_values, role=role))


def pipeline_lm(ir: Any, body: Any, extra: dict[str, Any] | None = None) -> DummyLM:
    """A DummyLM answering the IR step with ``ir`` and the code step with ``body`` (a body,
    a whole function, or a fenced answer), plus ``extra`` answers tried first."""
    answers = {**(extra or {}), IR_KEY: {"ir": ir}, CODE_KEY: {"body": body}}
    return DummyLM(answers, adapter=AnswerFormat())


#: answers to the instruction-proposal prompts of MIPROv2, COPRO and GEPA (most specific first)
OPTIMIZER_ANSWERS: dict[str, Any] = {
    "proposed_instruction": {
        "proposed_instruction": "Answer precisely.",
        "proposed_prefix_for_output_field": "Answer:",
    },
    "`observations`": {"observations": "Small Python functions."},
    "`summary`": {"summary": "Small Python functions."},
    "`program_description`": {"program_description": "Prompt to IR to code."},
    "`module_description`": {"module_description": "One step."},
    "new_instruction": {"new_instruction": "Answer more precisely."},
}


def dummy_lm(task: dict[str, Any]) -> DummyLM:
    """Answers every prompt the optimizers and the pipeline send, for one task record."""
    return pipeline_lm(task["expected_ir"], task["expected_code"], OPTIMIZER_ANSWERS)


#: small optimizer settings: a run takes seconds with the DummyLM
INIT: dict[str, dict[str, Any]] = {
    "mipro": {
        "auto": "none",
        "num_candidates": 2,
        "max_bootstrapped_demos": 1,
        "max_labeled_demos": 1,
    },
    "copro": {"breadth": 2, "depth": 1, "track_stats": True},
    "gepa": {"max_metric_calls": 12, "use_merge": False, "track_stats": True},
}
COMPILE: dict[str, dict[str, Any]] = {
    "mipro": {"num_trials": 2, "minibatch": False},
    "copro": {},
    "gepa": {},
}


def make_config(tmp_path: Path, name: str, **extra: Any) -> RunConfig:
    """A run of optimizer ``name`` on 3/3/3 tasks into ``tmp_path / "out"``; ``extra`` keys
    replace sections of the config."""
    data: dict[str, Any] = {
        "name": f"test-{name}",
        "seed": 3,
        "output_dir": str(tmp_path / "out"),
        "optimizer": {"name": name, "init": INIT[name], "compile": COMPILE[name]},
        "lm": {"model": "local"},
        "metric": {"name": "end_to_end"},
        "dataset": {"train_limit": 3, "val_limit": 3, "test_limit": 3},
        "evaluation": {"n_resamples": 200},
    }
    data.update(extra)
    return RunConfig.from_mapping(data)
