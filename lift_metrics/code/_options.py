"""The options of the code scorers: :class:`CodeQualityOptions`, its profiles and constants."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from lift_metrics._checks import (
    check_similarity_floor,
    check_stub_cap,
    check_timeout,
    check_wrong_answer_gate,
    normalize_weights,
)
from lift_metrics._profiles import CalibrationProfile, resolve_profile
from lift_metrics.errors import InputTypeError, InputValueError

DEFAULT_CODE_QUALITY_WEIGHTS: Mapping[str, float] = {
    "syntax": 0.2,
    "tests": 0.4,
    "semantic": 0.3,
    "style": 0.1,
}
"""The ``"seed"`` profile's weights. Add a ``"structural"`` key to a weights mapping to score it."""


def _weights(weights: Mapping[str, Any] | None, name: str = "weights") -> dict[str, float]:
    defaults = dict(DEFAULT_CODE_QUALITY_WEIGHTS)
    if isinstance(weights, Mapping) and "structural" in weights:
        defaults["structural"] = 0.0
    return normalize_weights(name, weights, defaults)


PROFILES: tuple[str, ...] = ("validated", "seed", "shipped")
"""The named profiles; a path to a profile file or a CalibrationProfile works too."""

PASS_FLOOR = 0.25
"""The least an output that passes at least one test scores (validated profile)."""
RESEMBLANCE_SPAN = 0.3
"""How much of one passed test's share the reference resemblance can take away."""
DEGENERATE_SCORE = 0.0
"""What an answer that is not code scores (validated profile)."""


@dataclass(frozen=True)
class CodeQualityOptions:
    """How code_quality scores: one frozen object shared by every code scorer.

    Build it with :func:`code_quality_options` (which validates); the pure functions, the
    DSPy objects (:class:`~lift_metrics.dspy_metrics.CodeQuality`, ``EndToEnd``,
    ``Aggregate``, ``TestPassRate``) and the validation scorer all take one.

    Attributes
    ----------
    profile : str
        ``"validated"`` (the default), ``"seed"``, ``"shipped"``, ``"custom"`` (weights
        given) or the name of a profile file.
    weights : dict of str to float or None
        Normalised weights of the weighted-sum family; ``None`` for the validated profile.
    similarity_floor, wrong_answer_gate, stub_cap
        Options of the weighted-sum family (see :func:`code_quality`).
    timeout_s : float or None
        Per-execution time limit for the tests; ``None`` means the sandbox's own.
    behaviour : bool
        Validated profile only: compare the code with a runnable reference on generated
        inputs (docs/code.md#behaviour-on-generated-inputs). True by default there; always
        False for the weighted-sum family.

    Notes
    -----
    The entry point and the prompt describe the task, not the metric: they are per-call
    arguments (the DSPy objects read them from each example).
    """

    profile: str = "validated"
    weights: Mapping[str, float] | None = None
    similarity_floor: float = 0.0
    wrong_answer_gate: bool = False
    stub_cap: float | None = None
    timeout_s: float | None = None
    behaviour: bool = True

    @property
    def validated(self) -> bool:
        """Whether this is the validated scoring (not a weighted sum)."""
        return self.weights is None

    def metric_options(self) -> dict[str, Any]:
        """Return the weighted-sum options as keyword arguments (none for the validated profile)."""
        if self.weights is None:
            return {}
        options: dict[str, Any] = {}
        if self.similarity_floor:
            options["similarity_floor"] = self.similarity_floor
        if self.wrong_answer_gate:
            options["wrong_answer_gate"] = True
        if self.stub_cap is not None:
            options["stub_cap"] = self.stub_cap
        return options


def _load_calibrated(profile: Any, name: str) -> tuple[str, CalibrationProfile]:
    label = "custom" if isinstance(profile, CalibrationProfile) else str(profile)
    allowed = f"one of {PROFILES}, a profile file or a CalibrationProfile"
    return label, resolve_profile("code_quality", name, profile, allowed=allowed)


def code_quality_options(
    profile: str | os.PathLike[str] | CalibrationProfile | CodeQualityOptions | None = None,
    *,
    weights: Mapping[str, float] | None = None,
    similarity_floor: float | None = None,
    wrong_answer_gate: bool | None = None,
    stub_cap: float | None = None,
    timeout_s: float | None = None,
    behaviour: bool | None = None,
    name: str = "profile",
    weights_name: str = "weights",
) -> CodeQualityOptions:
    """Validate code_quality's options into one :class:`CodeQualityOptions`.

    Parameters
    ----------
    profile : str, path, CalibrationProfile, CodeQualityOptions or None, default None
        ``"validated"``, ``"seed"``, ``"shipped"`` (``datasets/labels/
        calibrated_code_quality.json``), the path of a profile file, a
        :class:`~lift_metrics.validation.CalibrationProfile` or ready options. None means
        ``"validated"``, unless a weighted-sum option is given (then ``"custom"``: the plain
        weighted sum with those options).
    weights, similarity_floor, wrong_answer_gate, stub_cap
        Weighted-sum options (see :func:`code_quality`). They cannot be combined with
        ``"validated"`` nor with a calibrated profile (its file sets them); with ``"seed"``
        they override the profile's. A floor of 0 and a gate of False are neutral: not given.
    timeout_s : float or None, default None
        Per-execution time limit; ``None`` keeps the profile's (the sandbox's own).
    behaviour : bool or None, default None
        Validated profile only: whether to compare the code with a runnable reference on
        generated inputs (docs/code.md#behaviour-on-generated-inputs). None keeps the
        profile's (True for ``"validated"``); False turns it off. True with a weighted-sum
        profile is an error (the weighted sum has no behaviour component).
    name, weights_name : str, default "profile", "weights"
        The parameter names used in error messages.

    Returns
    -------
    CodeQualityOptions

    Raises
    ------
    TypeError, ValueError, FileNotFoundError
        An unknown profile name or a missing file, weighted options given with
        ``"validated"`` or a calibrated profile, or an invalid option value.

    Examples
    --------
    >>> code_quality_options().profile
    'validated'
    >>> seed = code_quality_options("seed")
    >>> seed.profile, seed.weights["tests"]
    ('seed', 0.4)
    >>> code_quality_options(stub_cap=0.1).profile
    'custom'
    >>> code_quality_options("shipped").stub_cap
    0.1
    >>> code_quality_options().behaviour, code_quality_options(behaviour=False).behaviour
    (True, False)
    """
    timeout = check_timeout(timeout_s)
    if behaviour is not None and not isinstance(behaviour, bool):
        raise InputTypeError(f"behaviour must be True, False or None, got {behaviour!r}")
    # 0.0 and False are the neutral values of the floor and the gate: not given
    weighted = {
        key: value
        for key, value in (
            ("weights", weights),
            ("similarity_floor", similarity_floor),
            ("wrong_answer_gate", wrong_answer_gate),
            ("stub_cap", stub_cap),
        )
        if value is not None
        and not (key == "wrong_answer_gate" and value is False)
        and not (key == "similarity_floor" and type(value) in (int, float) and value == 0)
    }
    if isinstance(profile, CodeQualityOptions):
        if weighted:
            raise InputValueError(
                f"give {name} as CodeQualityOptions or the options {sorted(weighted)}, not both"
            )
        changes: dict[str, Any] = {}
        if timeout is not None:
            changes["timeout_s"] = timeout
        if behaviour is not None:
            _check_behaviour(profile.validated, behaviour, name)
            changes["behaviour"] = behaviour
        return CodeQualityOptions(**{**profile.__dict__, **changes}) if changes else profile
    if profile is None:
        profile = "custom" if weighted else "validated"
    if profile == "validated":
        if weighted:
            raise InputValueError(
                f"{name}='validated' is not a weighted sum; it takes none of {sorted(weighted)} "
                "(use profile='seed' with them, or leave them out)"
            )
        return CodeQualityOptions(timeout_s=timeout, behaviour=behaviour is not False)
    if profile in ("seed", "custom"):
        return CodeQualityOptions(
            profile=str(profile),
            weights=_weights(weights, weights_name),
            similarity_floor=check_similarity_floor(similarity_floor or 0.0),
            wrong_answer_gate=check_wrong_answer_gate(
                False if wrong_answer_gate is None else wrong_answer_gate
            ),
            stub_cap=check_stub_cap(stub_cap),
            timeout_s=timeout,
            behaviour=_check_behaviour(False, behaviour, name),
        )
    if not isinstance(profile, str | os.PathLike | CalibrationProfile):
        raise InputTypeError(
            f"{name} must be one of {PROFILES}, a profile file, a CalibrationProfile or "
            f"CodeQualityOptions, got {type(profile).__name__}"
        )
    if isinstance(profile, str) and profile not in PROFILES and not os.path.exists(profile):
        raise InputValueError(
            f"{name} must be one of {PROFILES} or the path of a profile file, got {profile!r}"
        )
    if weighted:
        raise InputValueError(
            f"give {name} or the weighted-sum options {sorted(weighted)}, not both: the "
            f"profile sets them; got {name}={profile!r}"
        )
    label, calibrated = _load_calibrated(profile, name)
    options = calibrated.metric_options()
    return CodeQualityOptions(
        profile=label,
        weights=_weights(options["weights"], f"{name} weights"),
        similarity_floor=check_similarity_floor(options.get("similarity_floor", 0.0)),
        wrong_answer_gate=check_wrong_answer_gate(options.get("wrong_answer_gate", False)),
        stub_cap=check_stub_cap(options.get("stub_cap")),
        timeout_s=timeout,
        behaviour=_check_behaviour(False, behaviour, name),
    )


def _check_behaviour(validated: bool, behaviour: bool | None, name: str) -> bool:
    """Return the behaviour option for a profile; True is refused by a weighted sum."""
    if behaviour and not validated:
        raise InputValueError(
            "behaviour=True needs the 'validated' profile: a weighted sum has no behaviour "
            f"component (give {name}='validated', or leave behaviour out)"
        )
    return bool(behaviour) if validated else False
