"""Model prices by name: litellm's bundled cost map, user overrides, and cost estimates.

Prices come from the cost map that ships inside litellm (installed with dspy), read offline
(``LITELLM_LOCAL_MODEL_COST_MAP=True`` is set before litellm is first imported, unless the
user set it). A TOML file can add or override prices::

    [models."my-finetune"]
    input_price_per_m = 0.40     # USD per million input tokens
    output_price_per_m = 1.60

    [models."gpt-4o"]            # overrides litellm's price
    input_price_per_m = 2.0
    output_price_per_m = 8.0

Unknown models are never priced at 0: :func:`cost_usd_for_model` returns a result with
``known=False`` and ``cost_usd`` NaN, so that a sum of costs shows the gap.

Importable from here but outside ``__all__`` (what the functions above build on):
``litellm_cost_map``, ``normalize_model_name`` and ``offline_litellm``.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import os
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Literal

from lift_metrics._checks import check_int, check_non_negative
from lift_metrics._records import record_dict
from lift_metrics.errors import InputTypeError, InputValueError

__all__ = [
    "CostEstimate",
    "ModelPrice",
    "cost_usd_for_model",
    "load_price_overrides",
    "lookup_price",
]

# date and "latest" suffixes that name a snapshot of the same model: -2024-08-06, -20241022,
# @20241022, -latest, :latest
_SNAPSHOT_SUFFIX = re.compile(r"(?:[-@]\d{4}-\d{2}-\d{2}|[-@]20\d{6}|[-:]latest)$")


@dataclasses.dataclass(frozen=True)
class ModelPrice:
    """Prices of one model in USD per million tokens.

    Attributes
    ----------
    model : str
        The key the price was found under (litellm's key, or the normalised override name).
    input_price_per_m, output_price_per_m : float
    source : {"litellm", "override"}
    """

    model: str
    input_price_per_m: float
    output_price_per_m: float
    source: Literal["litellm", "override"]


@dataclasses.dataclass(frozen=True, repr=False)
class CostEstimate:
    """Result of :func:`cost_usd_for_model`.

    Attributes
    ----------
    model : str
        The model name as given.
    input_tokens, output_tokens : int
    cost_usd : float
        Cost in USD; NaN when the model is unknown.
    known : bool
        False when no price was found (the cost is then NaN, never 0).
    price : ModelPrice or None
        The price used, with the key it was found under and its source.
    """

    model: str
    input_tokens: int
    output_tokens: int
    cost_usd: float
    known: bool
    price: ModelPrice | None

    def __repr__(self) -> str:
        """Return the model, the cost and where its price comes from."""
        if not self.known or self.price is None:
            return f"CostEstimate(model={self.model!r}, unknown model: cost_usd=nan)"
        return (
            f"CostEstimate(model={self.model!r}, cost_usd={self.cost_usd:.6g}, "
            f"price={self.price.model!r} from {self.price.source})"
        )

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-ready dict (NaN cost becomes ``None``)."""
        return record_dict(
            self,
            "model input_tokens output_tokens cost_usd known priced_as price_source",
            cost_usd=self.cost_usd if self.known else None,
            priced_as=self.price.model if self.price else None,
            price_source=self.price.source if self.price else None,
        )


def _check_model(model: Any) -> str:
    if not isinstance(model, str) or not model.strip():
        raise InputTypeError(f"model must be a non-empty str, got {model!r}")
    return model.strip()


def normalize_model_name(model: str) -> str:
    """Canonical model name: lower case, no provider prefix, no snapshot suffix.

    Parameters
    ----------
    model : str
        A model name as DSPy/litellm users write it (``"openai/gpt-4o"``,
        ``"anthropic/claude-3-5-sonnet-20241022"``, ``"GPT-4o"``).

    Returns
    -------
    str

    Notes
    -----
    Everything up to the last ``/`` is a routing prefix (``openai/``, ``openrouter/openai/``,
    ``azure/``); date suffixes (``-2024-08-06``, ``-20241022``, ``@20241022``) and
    ``-latest``/``:latest`` name a snapshot of the same model and are dropped. Other variant
    suffixes (``-mini``, ``-turbo``, ``:8b``) name different models and are kept.
    Price look-up does not rely on this name alone: it tries the exact name first so that a
    dated snapshot with its own price keeps it (see :func:`lookup_price`).

    Examples
    --------
    >>> normalize_model_name("openai/gpt-4o") == normalize_model_name("gpt-4o")
    True
    >>> normalize_model_name("anthropic/Claude-3-5-Sonnet-20241022")
    'claude-3-5-sonnet'
    """
    name = _check_model(model).lower().rsplit("/", 1)[-1]
    return _SNAPSHOT_SUFFIX.sub("", name)


def _candidates(model: str) -> Iterator[str]:
    """Names to try in litellm's map, most specific first."""
    seen: set[str] = set()
    name = model.strip()
    variants = [name, name.lower()]
    lowered = name.lower()
    while "/" in lowered:
        lowered = lowered.split("/", 1)[1]
        variants.append(lowered)
    variants += [_SNAPSHOT_SUFFIX.sub("", v) for v in list(variants)]
    for variant in variants:
        if variant and variant not in seen:
            seen.add(variant)
            yield variant


@functools.cache
def offline_litellm() -> Any:
    """Import litellm (lazily, once) with its bundled price table: no network fetch.

    Sets ``LITELLM_LOCAL_MODEL_COST_MAP=True`` (unless already set) before the import.
    Importing litellm takes about 2 s.
    """
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    return litellm


@functools.cache
def litellm_cost_map() -> Mapping[str, Mapping[str, Any]]:
    """Return litellm's bundled model cost map (imported lazily, offline, once).

    Returns
    -------
    mapping
        ``litellm.model_cost``: model key -> dict with ``input_cost_per_token`` and
        ``output_cost_per_token`` among others.

    Notes
    -----
    litellm is imported offline, by :func:`offline_litellm`.
    """
    return dict(offline_litellm().model_cost)


def _litellm_price(key: str) -> ModelPrice | None:
    entry = litellm_cost_map().get(key)
    if not isinstance(entry, Mapping):
        return None
    p_in, p_out = entry.get("input_cost_per_token"), entry.get("output_cost_per_token")
    if not isinstance(p_in, int | float) or not isinstance(p_out, int | float):
        return None
    return ModelPrice(key, round(p_in * 1e6, 9), round(p_out * 1e6, 9), "litellm")


def load_price_overrides(path: str | os.PathLike[str]) -> dict[str, ModelPrice]:
    """Read user prices from a TOML file (``[models."NAME"]`` tables, USD per million tokens).

    Parameters
    ----------
    path : str or path
        The TOML file; see the module docstring for the format.

    Returns
    -------
    dict
        Normalised model name -> :class:`ModelPrice` with ``source="override"``; pass it as
        ``overrides=`` to :func:`lookup_price` / :func:`cost_usd_for_model`.

    Raises
    ------
    FileNotFoundError
    ValueError
        For a file without a ``[models]`` table, or an entry without both prices (the message
        names the entry).
    """
    from lift_metrics._io import parse_toml, read_text_file
    from lift_metrics.errors import TOMLTextError

    file = Path(path)
    try:
        data = parse_toml(read_text_file(file, "price file"))
    except TOMLTextError as exc:
        raise InputValueError(f"{file}: not valid TOML: {exc}") from None
    models = data.get("models")
    if not isinstance(models, Mapping) or not models:
        raise InputValueError(f'{file}: expected [models."NAME"] tables with prices, found none')
    result: dict[str, ModelPrice] = {}
    for name, entry in models.items():
        if not isinstance(entry, Mapping) or {"input_price_per_m", "output_price_per_m"} - set(
            entry
        ):
            raise InputValueError(
                f"{file}: models.{name!r} must set input_price_per_m and output_price_per_m, "
                f"got {entry!r}"
            )
        key = normalize_model_name(name)
        result[key] = ModelPrice(
            key,
            check_non_negative(f"models.{name!r}.input_price_per_m", entry["input_price_per_m"]),
            check_non_negative(f"models.{name!r}.output_price_per_m", entry["output_price_per_m"]),
            "override",
        )
    return result


def _check_overrides(overrides: Any) -> Mapping[str, ModelPrice]:
    if overrides is None:
        return {}
    if isinstance(overrides, str | os.PathLike):
        return load_price_overrides(overrides)
    if not isinstance(overrides, Mapping) or not all(
        isinstance(v, ModelPrice) for v in overrides.values()
    ):
        raise InputTypeError(
            "overrides must be a TOML path or a mapping of name -> ModelPrice "
            f"(from load_price_overrides), got {type(overrides).__name__}"
        )
    return {normalize_model_name(k): v for k, v in overrides.items()}


def lookup_price(
    model: str,
    *,
    overrides: Mapping[str, ModelPrice] | str | os.PathLike[str] | None = None,
) -> ModelPrice | None:
    """Find the price of a model: user overrides first, then litellm's cost map.

    Parameters
    ----------
    model : str
        Model name in any common spelling (``"openai/gpt-4o"``, ``"gpt-4o-2024-08-06"``).
    overrides : mapping or path, optional
        From :func:`load_price_overrides`, or the TOML path itself.

    Returns
    -------
    ModelPrice or None
        None when the model is unknown.

    Notes
    -----
    Overrides match on :func:`normalize_model_name`. In litellm's map the exact name is tried
    first, then the lower-cased name, then the name without each routing prefix, and only
    then without a date suffix; so a snapshot litellm prices separately keeps its own price
    and an unknown snapshot is priced as its base model (``price.model`` shows which).

    Examples
    --------
    >>> lookup_price("openai/gpt-4o") == lookup_price("gpt-4o")
    True
    >>> lookup_price("no-such-model-xyz") is None
    True
    """
    name = _check_model(model)
    table = _check_overrides(overrides)
    override = table.get(normalize_model_name(name))
    if override is not None:
        return override
    for candidate in _candidates(name):
        price = _litellm_price(candidate)
        if price is not None:
            return price
    return None


def cost_usd_for_model(
    model: str,
    input_tokens: int,
    output_tokens: int,
    *,
    overrides: Mapping[str, ModelPrice] | str | os.PathLike[str] | None = None,
) -> CostEstimate:
    """Cost in USD of one call to a named model, flagged when the model is unknown.

    Parameters
    ----------
    model : str
        Model name (see :func:`lookup_price` for the accepted spellings).
    input_tokens, output_tokens : int
        Token counts, ``>= 0``.
    overrides : mapping or path, optional
        User prices (see :func:`load_price_overrides`).

    Returns
    -------
    CostEstimate
        ``cost_usd`` from :func:`lift_metrics.stats.cost_usd`; for an unknown model
        ``known=False`` and ``cost_usd`` NaN (never a silent 0).

    Examples
    --------
    >>> est = cost_usd_for_model("openai/gpt-4o", 1_000_000, 100_000)
    >>> est.known, est.cost_usd, est.price.input_price_per_m
    (True, 3.5, 2.5)
    >>> cost_usd_for_model("my-private-model", 10, 10).known
    False
    """
    from lift_metrics.stats import cost_usd

    name = _check_model(model)
    n_in = check_int("input_tokens", input_tokens, minimum=0)
    n_out = check_int("output_tokens", output_tokens, minimum=0)
    price = lookup_price(name, overrides=overrides)
    if price is None:
        return CostEstimate(name, n_in, n_out, math.nan, False, None)
    cost = cost_usd(
        n_in,
        n_out,
        input_price_per_m=price.input_price_per_m,
        output_price_per_m=price.output_price_per_m,
    )
    return CostEstimate(name, n_in, n_out, cost, True, price)
