"""Calibrated profiles as data: weights files, the options that go with them, the shipped profiles.

A profile is a metric's weights plus the options fitted with them (an embedding similarity
floor; for ``code_quality`` a wrong-answer gate and a stub cap). :func:`save_weights` writes
one, :func:`load_profile` reads one, :func:`resolve_profile` turns what a user passes as
``profile=`` (a :class:`CalibrationProfile`, a path or ``"shipped"``) into one; the shipped
profiles are in ``datasets/labels/`` (:func:`shipped_profile_path`; docs/validation.md).
The ``"validated"`` profile has no file: its cap on an output that fails every test,
:data:`FAIL_CEILING`, is here for the code scorers and the DSPy metric objects.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lift_metrics._checks import (
    check_non_negative,
    check_path,
    check_similarity_floor,
    check_stub_cap,
    check_wrong_answer_gate,
)
from lift_metrics._io import parse_json, parse_toml, read_text_file
from lift_metrics._records import format_scores
from lift_metrics.errors import InputTypeError, InputValueError, JSONTextError, TOMLTextError

FAIL_CEILING = 0.2
"""The most an output that fails every test can score under the ``"validated"`` profile.

``code_quality`` caps such an output there; the DSPy metric objects read it as the code part's
ceiling (``lift_metrics.code.FAIL_CEILING`` names the same value)."""


def save_weights(
    path: str | os.PathLike[str],
    weights: Mapping[str, float],
    *,
    metric: str,
    metadata: Mapping[str, Any] | None = None,
    similarity_floor: float | None = None,
    wrong_answer_gate: bool = False,
    stub_cap: float | None = None,
) -> Path:
    """Write weights to a ``.json`` or ``.toml`` file that :func:`load_weights` reads.

    The file holds ``metric``, ``weights``, optionally ``similarity_floor``,
    ``wrong_answer_gate`` (written when True) and ``stub_cap`` (written when given), all read
    by :func:`load_profile`, and, under ``calibration``, the metadata given (e.g.
    :meth:`CalibrationResult.to_dict`). Written atomically.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "w.toml"
    >>> _ = save_weights(path, {"tests": 0.75, "semantic": 0.25}, metric="code_quality")
    >>> load_weights(path, metric="code_quality")
    {'tests': 0.75, 'semantic': 0.25}
    """
    from lift_metrics._io import atomic_write_json, atomic_write_text, to_jsonable

    target = check_path("path", path)
    document: dict[str, Any] = {
        "metric": str(metric),
        "weights": {str(k): check_non_negative(f"weights[{k!r}]", v) for k, v in weights.items()},
    }
    if similarity_floor is not None:
        document["similarity_floor"] = check_similarity_floor(similarity_floor)
    document.update(_code_options(metric, wrong_answer_gate, stub_cap))
    if metadata:
        document["calibration"] = to_jsonable(dict(metadata))
    suffix = target.suffix.lower()
    if suffix == ".json":
        return atomic_write_json(target, document)
    if suffix == ".toml":
        import tomli_w

        return atomic_write_text(target, tomli_w.dumps(_toml_safe(document)))
    raise InputValueError(f"path must end in .json or .toml, got {target.name!r}")


def _code_options(metric: Any, wrong_answer_gate: Any, stub_cap: Any) -> dict[str, Any]:
    """Return the code_quality-only profile options that are set, validated (empty when none is)."""
    options: dict[str, Any] = {}
    if check_wrong_answer_gate(wrong_answer_gate):
        options["wrong_answer_gate"] = True
    cap = check_stub_cap(stub_cap)
    if cap is not None:
        options["stub_cap"] = cap
    if options and metric not in (None, "code_quality"):
        raise InputValueError(
            f"{' and '.join(options)} applies to code_quality profiles only, not to {metric!r}"
        )
    return options


def _toml_safe(value: Any) -> Any:
    """TOML has no null: drop None entries (and nan stays a float, which TOML allows)."""
    if isinstance(value, Mapping):
        return {k: _toml_safe(v) for k, v in value.items() if v is not None}
    if isinstance(value, list | tuple):
        return [_toml_safe(v) for v in value if v is not None]
    return value


def load_weights(path: str | os.PathLike[str], *, metric: str | None = None) -> dict[str, float]:
    """Read weights saved by :func:`save_weights` (or written by hand) from JSON or TOML.

    Parameters
    ----------
    path : path-like
        ``.json`` or ``.toml`` with a ``weights`` table (and a ``metric`` name); a file that
        is just a table of numbers is accepted too.
    metric : str, optional
        When given, the file's ``metric`` must match it.

    Returns
    -------
    dict of str to float
        Pass it as ``weights=`` to the metric (``CodeQuality(weights=load_weights(p))``).

    Raises
    ------
    FileNotFoundError, ValueError
        Missing file, unknown suffix, malformed content, weights for another metric.
    """
    source = check_path("path", path)
    text = read_text_file(source, "weights file")
    suffix = source.suffix.lower()
    if suffix not in (".json", ".toml"):
        raise InputValueError(f"weights file must end in .json or .toml, got {source.name!r}")
    document = _document(source, text)
    if not isinstance(document, dict):
        raise InputValueError(f"{source}: expected a table with 'weights', got {type(document)}")
    table = document.get("weights", document)
    named = document.get("metric")
    if metric is not None and named is not None and named != metric:
        raise InputValueError(f"{source} holds weights for {named!r}, not for {metric!r}")
    if not isinstance(table, dict) or not table:
        raise InputValueError(f"{source}: 'weights' must be a non-empty table of name -> number")
    return {str(k): check_non_negative(f"{source}: weights[{k!r}]", v) for k, v in table.items()}


def _document(source: Path, text: str) -> Any:
    """Parse a weights file's text: JSON for ``.json``, else TOML; errors name the file."""
    json_file = source.suffix.lower() == ".json"
    try:
        return parse_json(text) if json_file else parse_toml(text)
    except (JSONTextError, TOMLTextError) as exc:
        raise InputValueError(
            f"{source}: not valid {'JSON' if json_file else 'TOML'}: {exc}"
        ) from None


def weights_file_metric(path: str | os.PathLike[str]) -> str | None:
    """Return the ``metric`` named in a weights file (None when it names none)."""
    source = check_path("path", path)
    text = read_text_file(source, "weights file")
    document = _document(source, text)
    named = document.get("metric") if isinstance(document, dict) else None
    return None if named is None else str(named)


SHIPPED_PROFILES: Mapping[str, str] = {
    "ir_quality": "calibrated_ir_quality.json",
    "code_quality": "calibrated_code_quality.json",
}
"""Metric name -> calibrated profile in ``datasets/labels/`` (fitted on the calibration split)."""


@dataclass(frozen=True, repr=False)
class CalibrationProfile:
    """Weights plus the options to use with them: an opt-in variant of a metric.

    Attributes
    ----------
    metric : str or None
        The metric the profile is for (``ir_quality``, ``code_quality``), when the file says.
    weights : dict of str to float
        Pass as ``weights=`` to the metric.
    similarity_floor : float
        Pass as ``similarity_floor=`` (``ir_quality``/``intent_match``,
        ``code_quality``/``semantic_similarity``); 0.0 when the file has none.
    wrong_answer_gate : bool
        ``code_quality`` only: pass as ``wrong_answer_gate=``; False when the file has none.
    stub_cap : float or None
        ``code_quality`` only: pass as ``stub_cap=``; None when the file has none.
    """

    metric: str | None
    weights: dict[str, float]
    similarity_floor: float = 0.0
    wrong_answer_gate: bool = False
    stub_cap: float | None = None

    def __post_init__(self) -> None:
        """Validate the code_quality options and their metric."""
        self._code_options()  # validates the code_quality options and their metric

    def __repr__(self) -> str:
        """Return the metric, the weights (3 decimals) and the options that are set."""
        shown = format_scores(self.weights)
        extra = "".join(f", {k}={v!r}" for k, v in self._code_options().items())
        return (
            f"CalibrationProfile(metric={self.metric!r}, weights={{{shown}}}, "
            f"similarity_floor={self.similarity_floor:g}{extra})"
        )

    def _code_options(self) -> dict[str, Any]:
        return _code_options(self.metric, self.wrong_answer_gate, self.stub_cap)

    def metric_options(self) -> dict[str, Any]:
        """Keyword arguments for the metric: ``ir_quality(p, e, **profile.metric_options())``.

        ``weights`` and ``similarity_floor``, plus ``wrong_answer_gate`` and ``stub_cap``
        where the profile sets them (``code_quality`` only), so the options suit the metric
        the profile is for.

        Examples
        --------
        >>> profile = CalibrationProfile("code_quality", {"tests": 1.0}, stub_cap=0.1)
        >>> profile.metric_options()
        {'weights': {'tests': 1.0}, 'similarity_floor': 0.0, 'stub_cap': 0.1}
        """
        return {
            "weights": dict(self.weights),
            "similarity_floor": self.similarity_floor,
            **self._code_options(),
        }

    def to_dict(self) -> dict[str, Any]:
        """Plain-JSON form (the code_quality options only where they are set)."""
        return {
            "metric": self.metric,
            "weights": dict(self.weights),
            "similarity_floor": self.similarity_floor,
            **self._code_options(),
        }


def load_profile(path: str | os.PathLike[str], *, metric: str | None = None) -> CalibrationProfile:
    """Read a weights file with its optional ``similarity_floor`` (see :func:`save_weights`).

    Parameters
    ----------
    path : path-like
        ``.json`` or ``.toml``; the shipped profiles are :func:`shipped_profile_path`.
    metric : str, optional
        When given, the file's ``metric`` must match it.

    Returns
    -------
    CalibrationProfile

    Raises
    ------
    FileNotFoundError, ValueError
        As :func:`load_weights`; also a ``similarity_floor`` outside [0, 1), a ``stub_cap``
        outside [0, 1], or ``wrong_answer_gate``/``stub_cap`` in a profile for another
        metric than ``code_quality``.
    TypeError
        A ``wrong_answer_gate`` that is not true or false.

    Examples
    --------
    >>> profile = load_profile(shipped_profile_path("ir_quality"), metric="ir_quality")
    >>> sorted(profile.weights), 0 < profile.similarity_floor < 1
    (['constraints', 'intent', 'signature', 'structure'], True)
    """
    source = check_path("path", path)
    weights = load_weights(source, metric=metric)
    document = _document(source, read_text_file(source, "weights file"))
    table = document if isinstance(document, dict) else {}
    named = table.get("metric")
    which = metric if named is None else str(named)
    try:
        options = _code_options(which, table.get("wrong_answer_gate", False), table.get("stub_cap"))
    except (TypeError, ValueError) as exc:
        raise type(exc)(f"{source}: {exc}") from None
    return CalibrationProfile(
        metric=which,
        weights=weights,
        similarity_floor=check_similarity_floor(table.get("similarity_floor", 0.0)),
        wrong_answer_gate=options.get("wrong_answer_gate", False),
        stub_cap=options.get("stub_cap"),
    )


def resolve_profile(
    metric: str,
    name: str,
    profile: Any,
    *,
    allowed: str = "a CalibrationProfile, a path to a profile file or 'shipped'",
) -> CalibrationProfile:
    """``profile`` (a CalibrationProfile, a path or "shipped") as a profile for ``metric``.

    The one place where a ``profile=`` argument is read: the metric functions
    (``code_quality(..., profile=...)``) and the DSPy metric objects resolve theirs here.

    Parameters
    ----------
    metric : str
        The metric the profile must be for (``"ir_quality"``, ``"code_quality"``).
    name : str
        The parameter named in errors (``"profile"``).
    profile : CalibrationProfile, path-like or "shipped"
        A profile object (its ``metric`` must be ``metric`` or None), a profile file
        (:func:`save_weights`), or ``"shipped"`` for :func:`shipped_profile_path`.
    allowed : str, optional
        What ``name`` accepts, in words, for the error messages.

    Returns
    -------
    CalibrationProfile

    Raises
    ------
    TypeError
        ``profile`` of another type, or a malformed option in the file.
    FileNotFoundError, ValueError
        As :func:`load_profile`, with ``name`` in front; a profile for another metric.

    Examples
    --------
    >>> resolve_profile("code_quality", "profile", "shipped").stub_cap
    0.1
    """
    for label, value in (("metric", metric), ("name", name)):
        if not isinstance(value, str):
            raise InputTypeError(f"{label} must be a str, got {type(value).__name__}")
    if isinstance(profile, CalibrationProfile):
        if profile.metric not in (None, metric):
            raise InputValueError(
                f"{name} must be a profile for {metric!r}, got one for {profile.metric!r}"
            )
        return profile
    if isinstance(profile, str) and profile == "shipped":
        path: str | os.PathLike[str] = shipped_profile_path(metric)
    elif isinstance(profile, str | os.PathLike):
        path = profile
    else:
        raise InputTypeError(f"{name} must be {allowed}, got {type(profile).__name__}")
    try:
        return load_profile(path, metric=metric)
    except FileNotFoundError as exc:
        raise FileNotFoundError(f"{name}: {exc} (pass {allowed})") from None
    except (TypeError, ValueError) as exc:
        raise type(exc)(f"{name}: {exc}") from None


def shipped_profile_path(metric: str) -> Path:
    """Path of the calibrated profile shipped for ``ir_quality`` or ``code_quality``.

    Examples
    --------
    >>> shipped_profile_path("code_quality").name
    'calibrated_code_quality.json'
    """
    return shipped_labels_file(SHIPPED_PROFILES, metric, "for a shipped profile")


def shipped_labels_file(files: Mapping[str, str], metric: str, purpose: str) -> Path:
    """Path in ``datasets/labels/`` of ``files[metric]``; an unknown metric names ``purpose``.

    Examples
    --------
    >>> shipped_labels_file(SHIPPED_PROFILES, "ir_quality", "for a shipped profile").name
    'calibrated_ir_quality.json'
    >>> shipped_labels_file(SHIPPED_PROFILES, "bleu", "for a shipped profile")
    Traceback (most recent call last):
    ...
    lift_metrics.errors.InputValueError: metric must be one of ['code_quality', 'ir_quality'] \
for a shipped profile, got 'bleu'
    """
    from lift_metrics._paths import datasets_dir

    if metric not in files:
        raise InputValueError(f"metric must be one of {sorted(files)} {purpose}, got {metric!r}")
    return datasets_dir() / "labels" / files[metric]
