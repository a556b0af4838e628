"""Unbiased pass@k and its reliability counterpart pass^k, vectorised over problems."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from lift_metrics.errors import InputTypeError, InputValueError

_IntArray = npt.NDArray[np.int64]
_FloatArray = npt.NDArray[np.float64]

# bound on the number of log-factors materialised at once (memory ~ 8 bytes each, x4)
_FACTOR_CHUNK = 4_000_000


def _as_int_array(name: str, value: Any) -> _IntArray:
    if isinstance(value, bool | np.bool_):
        raise InputTypeError(f"{name} must be an integer or an array of integers, got {value!r}")
    try:
        array = np.asarray(value)
    except OverflowError:
        raise InputValueError(f"{name} holds an integer too large for 64 bits") from None
    if array.size == 0:
        raise InputValueError(f"{name} must not be empty")
    if array.dtype == bool or array.dtype.kind not in "iu":
        if array.dtype.kind == "O" and all(
            isinstance(v, int) and not isinstance(v, bool) for v in array.ravel()
        ):
            try:
                array = array.astype(np.int64)
            except OverflowError:
                raise InputValueError(f"{name} holds an integer too large for 64 bits") from None
        else:
            shown = repr(value) if array.ndim == 0 else f"an array of dtype {array.dtype}"
            raise InputTypeError(
                f"{name} must be an integer or an array of integers, got {shown:.80}"
            )
    if array.dtype.kind == "u" and int(array.max()) > np.iinfo(np.int64).max:
        raise InputValueError(f"{name} holds an integer too large for 64 bits")
    return array.astype(np.int64, copy=False)


def _first_bad(mask: npt.NDArray[np.bool_]) -> str:
    if mask.ndim == 0:
        return ""
    index = np.unravel_index(int(np.argmax(mask)), mask.shape)
    return f" at index {index[0] if len(index) == 1 else index}"


def _validated(n: Any, c: Any, k: Any) -> tuple[_IntArray, _IntArray, _IntArray, bool]:
    n_arr, c_arr, k_arr = (_as_int_array(name, v) for name, v in (("n", n), ("c", c), ("k", k)))
    scalar = n_arr.ndim == 0 and c_arr.ndim == 0 and k_arr.ndim == 0
    try:
        n_b, c_b, k_b = np.broadcast_arrays(n_arr, c_arr, k_arr)
    except ValueError as exc:
        raise InputValueError(
            f"n, c and k must broadcast together, got shapes {n_arr.shape}, {c_arr.shape}, "
            f"{k_arr.shape}"
        ) from exc
    checks = (
        (n_b < 1, "n must be >= 1", n_b),
        (c_b < 0, "c must be >= 0", c_b),
        (c_b > n_b, "c must be <= n", c_b),
        (k_b < 1, "k must be >= 1", k_b),
        (k_b > n_b, "k must be <= n (pass@k needs at least k samples)", k_b),
    )
    for bad, message, arr in checks:
        if bad.any():
            where = _first_bad(bad)
            idx = np.unravel_index(int(np.argmax(bad)), bad.shape) if bad.ndim else ()
            raise InputValueError(
                f"{message}, got n={int(n_b[idx])}, c={int(c_b[idx])}, k={int(k_b[idx])}{where}"
                if arr is not None
                else message
            )
    return n_b, c_b, k_b, scalar


def _unique_rows(a: _IntArray, n: _IntArray, k: _IntArray) -> tuple[_IntArray, _IntArray]:
    """Return the unique (a, n, k) rows as an (m, 3) array and every input row's inverse index."""
    span_a = int(a.max()) + 1
    span_n = int(n.max()) + 1
    span_k = int(k.max()) + 1
    if span_a * span_n * span_k < 2**62:  # pack into one int64 key: much faster than axis=0
        key = (n * span_a + a) * span_k + k
        uniq_key, inverse = np.unique(key, return_inverse=True)
        rows = np.empty((uniq_key.size, 3), dtype=np.int64)
        rows[:, 2] = uniq_key % span_k
        rest = uniq_key // span_k
        rows[:, 0] = rest % span_a
        rows[:, 1] = rest // span_a
        return rows, inverse.reshape(-1)
    rows, inverse = np.unique(np.stack([a, n, k], axis=1), axis=0, return_inverse=True)
    return rows, inverse.reshape(-1)


def _log_comb_ratio(a: _IntArray, n: _IntArray, k: _IntArray) -> _FloatArray:
    """``log(C(a, k) / C(n, k))`` for 1-D arrays with ``k <= a <= n``.

    Two equal products, the one with fewer factors is used (``d = n - a``):
    ``prod_{i=a+1}^{n} (1 - k/i)`` (d factors) or ``prod_{j=0}^{k-1} (1 - d/(n-j))`` (k factors).
    Every factor is in (0, 1], so summing ``log1p`` terms loses no precision to cancellation.
    """
    out = np.zeros(a.size, dtype=np.float64)
    if a.size == 0:
        return out
    rows, inverse = _unique_rows(a, n, k)
    ua, un, uk = rows[:, 0], rows[:, 1], rows[:, 2]
    ud = un - ua
    lengths = np.minimum(ud, uk)
    sums = np.zeros(rows.shape[0], dtype=np.float64)
    todo = np.flatnonzero(lengths > 0)
    start = 0
    while start < todo.size:  # chunks bound the memory of the flattened factor list
        cum = np.cumsum(lengths[todo[start:]])
        stop = start + max(1, int(np.searchsorted(cum, _FACTOR_CHUNK, side="right")))
        sel = todo[start:stop]
        seg_len = lengths[sel]
        offsets = np.concatenate(([0], np.cumsum(seg_len)[:-1]))
        position = np.arange(int(seg_len.sum())) - np.repeat(offsets, seg_len)
        sa, sn, sk, sd = (np.repeat(v[sel], seg_len) for v in (ua, un, uk, ud))
        by_d = np.repeat(ud[sel] <= uk[sel], seg_len)
        # factor (1 - k/i) with i = a + 1 + position, or (1 - d/(n - position))
        numerator = np.where(by_d, sk, sd).astype(np.float64)
        denominator = np.where(by_d, sa + 1 + position, sn - position).astype(np.float64)
        terms = np.log1p(-numerator / denominator)
        sums[sel] = np.add.reduceat(terms, offsets)
        start = stop
    out[:] = sums[inverse]
    return out


def _finish(result: _FloatArray, shape: tuple[int, ...], scalar: bool) -> float | _FloatArray:
    result += 0.0  # -expm1(0) is -0.0: print a probability of zero as 0.0, not -0.0
    if scalar:
        return float(result[0])
    return result.reshape(shape)


def pass_at_k(n: Any, c: Any, k: Any) -> Any:
    r"""Unbiased pass@k: the chance that at least one of k samples (of n, c correct) passes.

    Parameters
    ----------
    n : int or array_like of int
        Samples generated per problem, ``n >= 1``.
    c : int or array_like of int
        Correct samples per problem, ``0 <= c <= n``.
    k : int or array_like of int
        Samples drawn, ``1 <= k <= n``. ``n``, ``c`` and ``k`` broadcast together.

    Returns
    -------
    float or numpy.ndarray
        A float when all three are scalars, otherwise a float64 array of the broadcast shape.

    Raises
    ------
    TypeError
        For non-integer input (floats and bools are refused, not truncated).
    ValueError
        For ``n < 1``, ``c`` outside ``[0, n]``, ``k < 1`` or ``k > n`` (pass@k is undefined
        with fewer than k samples; it is not replaced by ``c/n`` there).

    Notes
    -----
    Chen et al. (2021), :math:`1 - \binom{n-c}{k} / \binom{n}{k}`, computed in the
    numerically stable product form

    .. math::

        1 - \prod_{i=n-c+1}^{n} \left(1 - \frac{k}{i}\right)

    and 1.0 when :math:`n - c < k`. The equal product
    :math:`\prod_{j=0}^{k-1} (1 - c/(n-j))` is used instead when it has fewer factors
    (``k < c``); factors are summed as ``log1p`` terms and the result is ``-expm1(sum)``,
    accurate to a few ulps even for tiny pass@k. Arrays are evaluated once per distinct
    ``(n, c, k)``, fully vectorised (a million problems take a fraction of a second).

    Examples
    --------
    >>> pass_at_k(n=10, c=3, k=1)
    0.3
    >>> round(pass_at_k(n=10, c=3, k=5), 6)
    0.916667
    >>> pass_at_k(n=[10, 10, 5], c=[0, 3, 5], k=1)
    array([0. , 0.3, 1. ])
    """
    n_b, c_b, k_b, scalar = _validated(n, c, k)
    shape = n_b.shape
    n_f, c_f, k_f = (x.reshape(-1) for x in (n_b, c_b, k_b))
    result = np.ones(n_f.size, dtype=np.float64)
    mask = (n_f - c_f) >= k_f  # otherwise every draw of k contains a correct sample
    log_fail = _log_comb_ratio(n_f[mask] - c_f[mask], n_f[mask], k_f[mask])
    result[mask] = -np.expm1(log_fail)
    return _finish(result, shape, scalar)


def pass_hat_k(n: Any, c: Any, k: Any) -> Any:
    r"""pass^k: the chance that all k samples drawn (of n, c correct) pass — reliability.

    Parameters
    ----------
    n, c, k : int or array_like of int
        As in :func:`pass_at_k`: samples per problem, correct samples, samples drawn.

    Returns
    -------
    float or numpy.ndarray
        A float when all three are scalars, otherwise a float64 array.

    Raises
    ------
    TypeError
        For non-integer input.
    ValueError
        For ``n < 1``, ``c`` outside ``[0, n]``, ``k < 1`` or ``k > n``.

    Notes
    -----
    :math:`\binom{c}{k} / \binom{n}{k} = \prod_{j=0}^{k-1} (c - j)/(n - j)`, 0 when
    :math:`c < k`; computed with the same stable log-product as :func:`pass_at_k`. pass^1
    equals pass@1 (``c/n``); for k > 1, pass^k <= pass@1 <= pass@k.

    Examples
    --------
    >>> round(pass_hat_k(n=10, c=3, k=2), 6)
    0.066667
    >>> pass_hat_k(n=10, c=3, k=4)
    0.0
    """
    n_b, c_b, k_b, scalar = _validated(n, c, k)
    shape = n_b.shape
    n_f, c_f, k_f = (x.reshape(-1) for x in (n_b, c_b, k_b))
    result = np.zeros(n_f.size, dtype=np.float64)
    mask = c_f >= k_f
    result[mask] = np.exp(_log_comb_ratio(c_f[mask], n_f[mask], k_f[mask]))
    return _finish(result, shape, scalar)
