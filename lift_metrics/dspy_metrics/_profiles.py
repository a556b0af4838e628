"""Calibrated profiles: a profile given to a metric object as its weights and options."""

from __future__ import annotations

import os
import types
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeAlias

from lift_metrics._checks import normalize_weights
from lift_metrics._profiles import CalibrationProfile, resolve_profile
from lift_metrics.errors import InputValueError

if TYPE_CHECKING:
    ProfileLike: TypeAlias = "CalibrationProfile | str | os.PathLike[str]"


#: options of a calibrated profile that each metric takes besides ``weights``
_PROFILE_OPTIONS = {
    "ir_quality": ("similarity_floor",),
    "code_quality": ("similarity_floor", "wrong_answer_gate", "stub_cap"),
}


def _weights_and_options(
    metric: str,
    *,
    weights: Mapping[str, float] | None,
    profile: ProfileLike | None,
    weights_name: str,
    profile_name: str,
    defaults: Mapping[str, float],
) -> tuple[dict[str, float], types.MappingProxyType[str, Any], CalibrationProfile | None]:
    """Normalised weights, the extra options for the pure metric and the resolved profile.

    Without a profile: ``weights`` (or the defaults) and no options.
    With one: its weights and its other options (``similarity_floor``, and for code
    ``wrong_answer_gate`` and ``stub_cap`` where set); ``weights`` must then be None.
    """
    if profile is None:
        # errors name the attribute (ir_weights / code_weights)
        attribute = "ir_weights" if metric == "ir_quality" else "code_weights"
        return normalize_weights(attribute, weights, defaults), types.MappingProxyType({}), None
    if weights is not None:
        raise InputValueError(
            f"give {weights_name} or {profile_name}, not both: the profile's weights replace "
            f"{weights_name}; got {weights_name}={weights!r} and {profile_name}={profile!r}"
        )
    resolved = resolve_profile(metric, profile_name, profile)
    options = resolved.metric_options()
    fitted = options.pop("weights")
    unknown = sorted(set(options) - set(_PROFILE_OPTIONS[metric]))
    if unknown:
        raise InputValueError(
            f"{profile_name} must be a profile for {metric!r}, got one that sets {unknown}, "
            f"which {metric} does not take"
        )
    normalized = normalize_weights(f"{profile_name} weights", fitted, defaults)
    return normalized, types.MappingProxyType(options), resolved
