"""Fitting a metric's component weights to labels, with k-fold cross-validation."""

from __future__ import annotations

import json
import math
import os
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np

from lift_metrics._checks import as_float_array, check_choice, check_int, check_non_negative
from lift_metrics._io import read_text_file

Objective = Literal["pearson", "squared_error"]
_OBJECTIVES = ("pearson", "squared_error")


@dataclass(frozen=True, repr=False)
class CalibrationResult:
    """Weights fitted to labels and how well they do in-sample and cross-validated.

    Attributes
    ----------
    metric : str
    weights : dict of str to float
        Fitted on all the data given; non-negative, summing to 1.
    default_weights : dict of str to float or None
        The metric's default weights, for comparison.
    objective : {"pearson", "squared_error"}
    n, folds : int
    in_sample_pearson : float
        Pearson of the fitted weighted score with the labels on the data it was fitted on.
    cv_pearson : float
        Pearson of the out-of-fold scores (each item scored with weights fitted without its
        fold) with the labels: the honest estimate.
    cv_fold_pearson : tuple of float
        Pearson within each fold (nan for a fold with constant values).
    default_pearson : float or None
        Pearson of the default weights on the same data (nothing fitted).
    fold_weights : tuple of dict
        The weights fitted in each fold (their spread shows how stable the fit is).
    """

    metric: str
    weights: dict[str, float]
    default_weights: dict[str, float] | None
    objective: str
    n: int
    folds: int
    in_sample_pearson: float
    cv_pearson: float
    cv_fold_pearson: tuple[float, ...] = field(default=())
    default_pearson: float | None = None
    fold_weights: tuple[dict[str, float], ...] = field(default=())

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}={v:.3f}" for k, v in self.weights.items())
        return (
            f"CalibrationResult(metric={self.metric!r}, n={self.n}, weights={{{shown}}}, "
            f"in_sample_pearson={self.in_sample_pearson:.3f}, cv_pearson={self.cv_pearson:.3f})"
        )

    def to_dict(self) -> dict[str, Any]:
        """Plain-JSON form."""
        return {
            "metric": self.metric,
            "weights": dict(self.weights),
            "default_weights": None if self.default_weights is None else dict(self.default_weights),
            "objective": self.objective,
            "n": self.n,
            "folds": self.folds,
            "in_sample_pearson": self.in_sample_pearson,
            "cv_pearson": self.cv_pearson,
            "cv_fold_pearson": list(self.cv_fold_pearson),
            "default_pearson": self.default_pearson,
            "fold_weights": [dict(w) for w in self.fold_weights],
        }


def _pearson(x: np.ndarray, y: np.ndarray) -> float:
    if x.size < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return math.nan
    return float(np.corrcoef(x, y)[0, 1])


def _predict(w: np.ndarray, x: np.ndarray, bound: np.ndarray | None) -> np.ndarray:
    pred = x @ w
    return pred if bound is None else np.minimum(pred, bound)


def _loss(
    w: np.ndarray, x: np.ndarray, y: np.ndarray, objective: str, bound: np.ndarray | None = None
) -> float:
    pred = _predict(w, x, bound)
    if objective == "squared_error":
        return float(np.mean((pred - y) ** 2))
    r = _pearson(pred, y)
    return 1.0 if math.isnan(r) else -r


def _fit(
    x: np.ndarray,
    y: np.ndarray,
    objective: str,
    start: np.ndarray | None,
    bound: np.ndarray | None = None,
) -> np.ndarray:
    from scipy import optimize

    k = x.shape[1]
    starts = [np.full(k, 1.0 / k), *np.eye(k)]
    if start is not None:
        starts.insert(0, start)
    best = starts[0]
    best_loss = _loss(best, x, y, objective, bound)
    for w0 in starts:
        result = optimize.minimize(
            _loss,
            w0,
            args=(x, y, objective, bound),
            method="SLSQP",
            bounds=[(0.0, 1.0)] * k,
            constraints=[{"type": "eq", "fun": lambda w: float(np.sum(w) - 1.0)}],
            options={"maxiter": 500, "ftol": 1e-12},
        )
        w = np.clip(result.x, 0.0, None)
        w = w / w.sum() if w.sum() > 0 else np.full(k, 1.0 / k)
        loss = _loss(w, x, y, objective, bound)
        if loss < best_loss - 1e-12:
            best, best_loss = w, loss
    return best


def _fold_ids(n: int, folds: int, groups: Sequence[Any] | None, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if groups is None:
        order = rng.permutation(n)
        ids = np.empty(n, dtype=int)
        for fold, chunk in enumerate(np.array_split(order, folds)):
            ids[chunk] = fold
        return ids
    keys = [str(g) for g in groups]
    unique = sorted(set(keys))
    if len(unique) < folds:
        raise ValueError(f"folds ({folds}) must not exceed the number of groups ({len(unique)})")
    shuffled = [unique[i] for i in rng.permutation(len(unique))]
    # greedy: the largest groups first, each into the currently smallest fold
    sizes = {g: keys.count(g) for g in shuffled}
    fold_of: dict[str, int] = {}
    load = [0] * folds
    for g in sorted(shuffled, key=lambda g: -sizes[g]):
        target = int(np.argmin(load))
        fold_of[g] = target
        load[target] += sizes[g]
    return np.array([fold_of[g] for g in keys])


def calibrate_weights(
    components: Mapping[str, Sequence[float] | np.ndarray],
    labels: Sequence[float] | np.ndarray,
    *,
    objective: Objective = "pearson",
    folds: int = 5,
    groups: Sequence[Any] | None = None,
    default_weights: Mapping[str, float] | None = None,
    metric: str = "metric",
    seed: int = 0,
    upper_bounds: Sequence[float] | np.ndarray | None = None,
) -> CalibrationResult:
    """Fit non-negative component weights that sum to 1, with k-fold cross-validation.

    Parameters
    ----------
    components : mapping of str to sequence of float
        Each component's value on every item (e.g. a breakdown's ``components``), all the
        same length. Only the data to fit on: never pass the held-out split.
    labels : sequence of float
        The labels, same length.
    objective : {"pearson", "squared_error"}, default "pearson"
        Maximise Pearson's r of ``sum_k w_k c_k`` with the labels, or minimise the mean
        squared difference between that weighted score and the labels.
    folds : int, default 5
        Number of cross-validation folds (at least 2).
    groups : sequence, optional
        A group per item; items of one group stay in one fold (pairs built on the same
        function), so the cross-validated figure is not flattered by near-duplicates.
    default_weights : mapping, optional
        The metric's defaults; their Pearson is reported next to the fitted one, and they are
        one of the optimiser's starting points.
    metric : str, default "metric"
    seed : int, default 0
        Seed of the fold assignment.
    upper_bounds : sequence of float, optional
        One per item: the most its weighted score may be (``inf`` for no bound), applied
        before the score is compared with the label, in the fit and in every figure. It is
        how a metric's cap enters the fit, e.g. ``code_quality``'s ``stub_cap`` on the items
        that are stubs.

    Returns
    -------
    CalibrationResult

    Raises
    ------
    ValueError
        On empty or unequal inputs, fewer items than ``2 * folds``, an unknown objective,
        default weights with other keys than ``components``, or ``upper_bounds`` of another
        length or with a nan.

    Notes
    -----
    The weights are found with SLSQP under :math:`w_k \\ge 0,\\ \\sum_k w_k = 1`, started
    from the defaults, uniform weights and every single component, keeping the best.
    ``cv_pearson`` is Pearson's r of the pooled out-of-fold predictions: each item is scored
    with weights fitted on the other folds only.

    Examples
    --------
    Labels made from known weights 0.7 / 0.3 are recovered:

    >>> import numpy as np
    >>> rng = np.random.default_rng(1)
    >>> a, b, c = rng.random(60), rng.random(60), rng.random(60)
    >>> fit = calibrate_weights({"a": a, "b": b, "c": c}, 0.7 * a + 0.3 * b,
    ...                         objective="squared_error")
    >>> {k: round(v, 3) for k, v in fit.weights.items()}
    {'a': 0.7, 'b': 0.3, 'c': 0.0}
    >>> round(fit.cv_pearson, 3)
    1.0
    """
    if not isinstance(components, Mapping) or not components:
        raise TypeError("components must be a non-empty mapping of name -> values")
    names = [str(k) for k in components]
    columns = [as_float_array(f"components[{k!r}]", v) for k, v in components.items()]
    y = as_float_array("labels", labels)
    for name, column in zip(names, columns, strict=True):
        if column.size != y.size:
            raise ValueError(
                f"components[{name!r}] has {column.size} values but labels has {y.size}"
            )
    x = np.column_stack(columns)
    kind = check_choice("objective", objective, _OBJECTIVES)
    k = check_int("folds", folds, minimum=2)
    if y.size < 2 * k:
        raise ValueError(f"need at least 2 * folds = {2 * k} items to calibrate, got {y.size}")
    if groups is not None and len(groups) != y.size:
        raise ValueError(f"groups must have one entry per label ({y.size}), got {len(groups)}")
    bound: np.ndarray | None = None
    if upper_bounds is not None:
        bound = np.asarray(upper_bounds, dtype=float)
        if bound.ndim != 1 or bound.size != y.size or np.isnan(bound).any():
            raise ValueError(
                f"upper_bounds must hold one number (inf for none) per label ({y.size}), "
                f"got {bound.size} values"
                + (" with a nan" if bound.size and np.isnan(bound).any() else "")
            )
    start: np.ndarray | None = None
    defaults: dict[str, float] | None = None
    if default_weights is not None:
        if set(default_weights) != set(names):
            raise ValueError(
                f"default_weights must have the keys {sorted(names)}, got {sorted(default_weights)}"
            )
        raw = np.array(
            [check_non_negative(f"default_weights[{n!r}]", default_weights[n]) for n in names]
        )
        start = raw / raw.sum()
        defaults = dict(zip(names, (float(v) for v in start), strict=True))

    weights = _fit(x, y, kind, start, bound)
    fold_ids = _fold_ids(y.size, k, groups, seed)
    oof = np.empty(y.size)
    fold_r: list[float] = []
    fold_weights: list[dict[str, float]] = []
    for fold in range(k):
        test = fold_ids == fold
        train_bound = None if bound is None else bound[~test]
        test_bound = None if bound is None else bound[test]
        w = _fit(x[~test], y[~test], kind, start, train_bound)
        oof[test] = _predict(w, x[test], test_bound)
        fold_r.append(_pearson(oof[test], y[test]))
        fold_weights.append(dict(zip(names, (float(v) for v in w), strict=True)))
    return CalibrationResult(
        metric=metric,
        weights={n: float(round(v, 12)) for n, v in zip(names, weights, strict=True)},
        default_weights=defaults,
        objective=kind,
        n=int(y.size),
        folds=k,
        in_sample_pearson=_pearson(_predict(weights, x, bound), y),
        cv_pearson=_pearson(oof, y),
        cv_fold_pearson=tuple(fold_r),
        default_pearson=None if start is None else _pearson(_predict(start, x, bound), y),
        fold_weights=tuple(fold_weights),
    )


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

    target = Path(path)
    document: dict[str, Any] = {
        "metric": str(metric),
        "weights": {str(k): check_non_negative(f"weights[{k!r}]", v) for k, v in weights.items()},
    }
    if similarity_floor is not None:
        from lift_metrics.similarity import check_similarity_floor

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
    raise ValueError(f"path must end in .json or .toml, got {target.name!r}")


def _code_options(metric: Any, wrong_answer_gate: Any, stub_cap: Any) -> dict[str, Any]:
    """The code_quality-only profile options that are set, validated (empty when none is)."""
    from lift_metrics.code import check_stub_cap, check_wrong_answer_gate

    options: dict[str, Any] = {}
    if check_wrong_answer_gate(wrong_answer_gate):
        options["wrong_answer_gate"] = True
    cap = check_stub_cap(stub_cap)
    if cap is not None:
        options["stub_cap"] = cap
    if options and metric not in (None, "code_quality"):
        raise ValueError(
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
    source = Path(path)
    text = read_text_file(source, "weights file")
    suffix = source.suffix.lower()
    try:
        if suffix == ".json":
            document = json.loads(text)
        elif suffix == ".toml":
            document = tomllib.loads(text)
        else:
            raise ValueError(f"weights file must end in .json or .toml, got {source.name!r}")
    except (json.JSONDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ValueError(f"{source}: not valid {suffix[1:].upper()}: {exc}") from None
    if not isinstance(document, dict):
        raise ValueError(f"{source}: expected a table with 'weights', got {type(document)}")
    table = document.get("weights", document)
    named = document.get("metric")
    if metric is not None and named is not None and named != metric:
        raise ValueError(f"{source} holds weights for {named!r}, not for {metric!r}")
    if not isinstance(table, dict) or not table:
        raise ValueError(f"{source}: 'weights' must be a non-empty table of name -> number")
    return {str(k): check_non_negative(f"{source}: weights[{k!r}]", v) for k, v in table.items()}


def weights_file_metric(path: str | os.PathLike[str]) -> str | None:
    """The ``metric`` named in a weights file (None when it names none)."""
    source = Path(path)
    text = read_text_file(source, "weights file")
    try:
        document = json.loads(text) if source.suffix.lower() == ".json" else tomllib.loads(text)
    except (json.JSONDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ValueError(f"{source}: {exc}") from None
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
        self._code_options()  # validates the code_quality options and their metric

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}={v:.3f}" for k, v in self.weights.items())
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
    from lift_metrics.similarity import check_similarity_floor

    weights = load_weights(path, metric=metric)
    source = Path(path)
    text = source.read_text(encoding="utf-8")
    document = json.loads(text) if source.suffix.lower() == ".json" else tomllib.loads(text)
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

    Internal: the metric objects and code_quality's options resolve profiles here; ``name``
    is the parameter named in errors, ``allowed`` what it accepts.

    Examples
    --------
    >>> resolve_profile("code_quality", "profile", "shipped").stub_cap
    0.1
    """
    if isinstance(profile, CalibrationProfile):
        if profile.metric not in (None, metric):
            raise ValueError(
                f"{name} must be a profile for {metric!r}, got one for {profile.metric!r}"
            )
        return profile
    if isinstance(profile, str) and profile == "shipped":
        path: str | os.PathLike[str] = shipped_profile_path(metric)
    elif isinstance(profile, str | os.PathLike):
        path = profile
    else:
        raise TypeError(f"{name} must be {allowed}, got {type(profile).__name__}")
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
    from lift_metrics._paths import datasets_dir

    if metric not in SHIPPED_PROFILES:
        raise ValueError(
            f"metric must be one of {sorted(SHIPPED_PROFILES)} for a shipped profile, "
            f"got {metric!r}"
        )
    return datasets_dir() / "labels" / SHIPPED_PROFILES[metric]


def unrelated_similarity_floor(
    texts: Sequence[str], *, quantile: float = 0.95, embedder: Any = None
) -> float:
    """A similarity floor from the cosine between texts that describe different things.

    Parameters
    ----------
    texts : sequence of str
        At least 3 distinct texts, each about a different function (e.g. the references of
        the calibration split, one per function). Labels are not used.
    quantile : float, default 0.95
        Which quantile of the pairwise cosines (clipped to [0, 1]) to return.
    embedder : Embedder, optional
        Default the bundled all-MiniLM-L6-v2.

    Returns
    -------
    float
        The quantile, rounded to 2 decimals: the cosine that unrelated texts reach.

    Raises
    ------
    ValueError
        Fewer than 3 distinct texts, or ``quantile`` outside [0, 1].

    Examples
    --------
    >>> class Axes:  # a toy embedder: text i -> unit vector along axis i
    ...     def embed(self, texts):
    ...         return np.eye(len(texts))
    >>> unrelated_similarity_floor(["a", "b", "c"], embedder=Axes())
    0.0
    """
    from lift_metrics._checks import check_unit_interval
    from lift_metrics.similarity import resolve_embedder

    q = check_unit_interval("quantile", quantile)
    distinct = list(dict.fromkeys(str(t) for t in texts))
    if len(distinct) < 3:
        raise ValueError(f"texts must hold at least 3 distinct texts, got {len(distinct)}")
    rows = np.asarray(resolve_embedder(embedder).embed(distinct), dtype=float)
    cosines = np.clip(rows @ rows.T, 0.0, 1.0)[np.triu_indices(len(distinct), 1)]
    return round(float(np.quantile(cosines, q)), 2)
