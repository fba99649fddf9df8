"""Confidence intervals for means on a bounded scale that hold with few items and at a ceiling.

The CLT interval ``mean ± 1.96 sd / sqrt(n)`` (and the percentile bootstrap, which resamples the same
values) fails where real ratings live: with few items on a bounded, skewed scale its sd is smallest
exactly when the sample sits at the ceiling, so its intervals sit above the truth, and when every item
got the same value the interval is a point. The intervals here use what the CLT ignores, that every
per-item value lies in a known range ``[low, high]``:

**The betting interval** (Waudby-Smith & Ramdas 2024, "Estimating means of bounded random variables
by betting", JRSS B 86(1), the hedged capital process of their Theorem 3 with the predictable plug-in
bets of their eq. 26 for a fixed number of items). The values are scaled to [0, 1]. For each candidate
mean m, a gambler who bets that the mean is above m (and one that it is below) starts with one unit and
multiplies their wealth by ``1 ± lambda_i (x_i - m)`` per item; ``lambda_i`` depends only on the items
before i (``min(sqrt(2 log(2 / alpha) / (n var_{i-1})), c / m)``, c = 3/4, ``var`` the running variance
started at 1/4 with one pseudo-item). Under the mean m the hedged wealth (half each way) is a
non-negative martingale with expectation 1, so by Markov's inequality it reaches ``1 / alpha`` with
probability at most alpha: the set of m where it stays below is a ``1 - alpha`` interval for every n,
with no asymptotics. Its width adapts to the values' variance (about the CLT's once n is moderate) and
it never has zero width: all-equal values still leave every m within about ``log(2 / alpha) / n`` of
the range unrejected.

The wealth depends on the items' order; the interval averages the final wealth over :data:`ORDERS`
seeded orders of the items (an average of such wealths has expectation 1 too, so Markov still holds),
which makes it depend on the items and the seed only. The candidates are a grid over the range, refined at
each end (a resolution of 1/10,000 of the range); the interval is rounded outward to the grid (never narrower).

PPI++ (:func:`ppi`): the estimate is ``lambda x mean(judge on judge-only items) + mean(humans - lambda x
judge on items with humans)``, two independent means of bounded values; its bounded interval is the sum
(Minkowski) of a betting interval for each, at ``alpha x`` :data:`PPI_SPLIT` and the rest of alpha
(Bonferroni), as in the original PPI paper's non-asymptotic construction (Angelopoulos et al. 2023,
Science, §"Mean estimation").
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike

ALPHA = 0.05
COARSE = 200  # candidate means on the first grid over the range
FINE = 50  # and between two of its points at each end: a resolution of 1/10,000 of the range
ORDERS = 8  # seeded orders of the items whose wealths are averaged
BET_CAP = 0.75  # c in lambda <= c / m: the bet never risks more than three quarters of the wealth
PPI_SPLIT = 0.8  # the rectifier's share of alpha in the PPI++ interval (the judge-only mean gets the rest)
SEED = 2026


def _wealth(x: np.ndarray, alpha: float, grid: np.ndarray, order: np.ndarray) -> np.ndarray:
    """Hedged final wealth at each candidate mean of ``grid``, for the values ``x`` in [0, 1] taken in ``order``.
    ``x`` is one value per item, or items x candidates (a value per item for each candidate, as the ratio's)."""
    x = x[order]
    n = len(x)
    seen = np.arange(1, n + 1) if x.ndim == 1 else np.arange(1, n + 1)[:, None]  # t: the item's place
    # the running mean and variance after item t: (1/2 + sum x) / (t + 1), (1/4 + sum (x_j - mean_j)^2) / (t + 1)
    mean = (0.5 + np.cumsum(x, axis=0)) / (seen + 1)
    variance = (0.25 + np.cumsum((x - mean) ** 2, axis=0)) / (seen + 1)
    before = np.concatenate([np.full((1, *variance.shape[1:]), 0.25), variance[:-1]])  # known before item t
    bet = np.sqrt(2 * math.log(2 / alpha) / (n * before))
    if x.ndim == 1:
        bet, x = bet[:, None], x[:, None]
    m = grid[None, :]
    with np.errstate(divide="ignore"):
        up = np.minimum(bet, BET_CAP / m)
        down = np.minimum(bet, BET_CAP / (1 - m))
    diff = x - m
    with np.errstate(over="ignore"):  # a wealth past any float is past 1 / alpha: inf rejects that mean, as it should
        return 0.5 * np.exp(np.log1p(up * diff).sum(axis=0)) + 0.5 * np.exp(np.log1p(-down * diff).sum(axis=0))


def _kept(values: np.ndarray, alpha: float, grid: np.ndarray, orders: list[np.ndarray]) -> np.ndarray:
    """Whether each candidate mean stays below the wealth 1 / alpha, averaged over the orders."""
    wealth = sum(_wealth(values, alpha, grid, o) for o in orders) / len(orders)
    return np.asarray(wealth < 1 / alpha)


def _search(kept_at: Callable[[np.ndarray], np.ndarray], centre: float) -> tuple[float, float]:
    """The kept candidates in [0, 1]: a coarse grid of :data:`COARSE` + 1 points, each end refined on :data:`FINE`
    points between its last rejected and first kept coarse point, rounded outward. ``kept_at(grid)``: whether each
    candidate is kept; ``centre``: the estimate (the interval around it if the grid stepped over every kept point)."""
    coarse = np.linspace(0.0, 1.0, COARSE + 1)
    kept = np.flatnonzero(kept_at(coarse))
    if not len(kept):  # the grid stepped over the whole set: keep the points around the estimate
        i = int(np.searchsorted(coarse, centre))
        kept = np.array([max(i - 1, 0), min(i, COARSE)])
    ends = []
    for first, outside in ((kept[0], kept[0] - 1), (kept[-1], kept[-1] + 1)):
        if outside < 0 or outside > COARSE:
            ends.append(float(coarse[first]))
            continue
        fine = np.linspace(coarse[outside], coarse[first], FINE + 1)  # from the rejected side to the kept
        inside = np.flatnonzero(kept_at(fine))
        j = inside[0] if len(inside) else FINE
        ends.append(float(fine[max(j - 1, 0)]))  # one fine step outward
    return min(ends), max(ends)


def _orders(seed: int, n: int) -> list[np.ndarray]:
    rng = np.random.default_rng([seed, n])
    return [rng.permutation(n) for _ in range(ORDERS)]


def betting_unit(x: ArrayLike, alpha: float = ALPHA, seed: int = SEED) -> tuple[float, float]:
    """The betting interval of the mean of values in [0, 1] (see the module's text): the candidates kept on a
    coarse grid of :data:`COARSE` + 1 points, each end refined on :data:`FINE` points between its last rejected
    and first kept coarse point, rounded outward."""
    values = np.clip(np.asarray(x, dtype=float), 0.0, 1.0)
    n = len(values)
    if n == 0:
        return math.nan, math.nan
    orders = _orders(seed, n)
    return _search(lambda grid: _kept(values, alpha, grid, orders), float(values.mean()))


def betting_ratio(num: ArrayLike, den: ArrayLike, low: float, high: float, alpha: float = ALPHA,
                  seed: int = SEED) -> tuple[float, float]:  # fmt: skip
    """The betting interval of the ratio ``E[num] / E[den]`` over items (e.g. wins over judgments, each item's
    judgments together), where each item's ``num / den`` lies in ``[low, high]`` and ``den >= 0``.

    The ratio is r exactly when ``E[num - r den] = 0``. Scaled to [0, 1] (``a = (num - low den) / (high - low)``,
    r' = (r - low) / (high - low)), ``u = (a - r' den) / max(den) + r'`` lies in [0, 1] and has mean r' under r,
    so the betting test of the mean r' on u (the module's, item by item) tests r; the interval is the r kept. With
    every ``den`` equal it is :func:`betting` of ``num / den``; an item with ``den`` 0 says nothing (u = r')."""
    if not high > low:
        raise ValueError(f"a bounded interval needs low < high, got [{low}, {high}]")
    n_, d_ = np.asarray(num, dtype=float), np.asarray(den, dtype=float)
    top = float(d_.max()) if len(d_) else 0.0
    if not top > 0:
        return math.nan, math.nan
    a = np.clip((n_ - low * d_) / (high - low), 0.0, d_)
    orders = _orders(seed, len(a))

    def kept_at(grid: np.ndarray) -> np.ndarray:
        u = np.clip((a[:, None] - grid[None, :] * d_[:, None]) / top + grid[None, :], 0.0, 1.0)
        return _kept(u, alpha, grid, orders)

    r_low, r_high = _search(kept_at, float(a.sum() / d_.sum()))
    return low + r_low * (high - low), low + r_high * (high - low)


def betting(x: ArrayLike, low: float, high: float, alpha: float = ALPHA, seed: int = SEED) -> tuple[float, float]:
    """The betting interval of the mean of values in ``[low, high]`` (values outside are clipped)."""
    if not high > low:
        raise ValueError(f"a bounded interval needs low < high, got [{low}, {high}]")
    values = (np.asarray(x, dtype=float) - low) / (high - low)
    a, b = betting_unit(values, alpha, seed)
    return low + a * (high - low), low + b * (high - low)


def ppi(y: ArrayLike, f: ArrayLike, fu: ArrayLike, lam: float, low: float, high: float,
        alpha: float = ALPHA, seed: int = SEED) -> tuple[float, float]:  # fmt: skip
    """Bounded interval of the PPI++ mean ``lam x mean(fu) + mean(y - lam x f)``, humans' and judge's values in
    ``[low, high]``: the rectifier's betting interval at ``alpha x PPI_SPLIT`` plus ``lam`` x the judge-only mean's
    at the rest (Bonferroni; with ``lam`` 0, the humans' betting interval at the full alpha)."""
    y_, f_, fu_ = (np.asarray(v, dtype=float) for v in (y, f, fu))
    if lam <= 0:
        return betting(y_, low, high, alpha, seed)
    rectifier = y_ - lam * f_
    r_low, r_high = betting(rectifier, low - lam * high, high - lam * low, alpha * PPI_SPLIT, seed)
    j_low, j_high = betting(fu_, low, high, alpha * (1 - PPI_SPLIT), seed + 1)
    return r_low + lam * j_low, r_high + lam * j_high


def clt(x: ArrayLike, alpha: float = ALPHA) -> tuple[float, float]:
    """The plain CLT interval (normal quantile, sample sd with n - 1): what the suite compares widths against."""
    from scipy import stats

    values = np.asarray(x, dtype=float)
    n = len(values)
    if n < 2:
        return math.nan, math.nan
    half = stats.norm.ppf(1 - alpha / 2) * values.std(ddof=1) / math.sqrt(n)
    return float(values.mean() - half), float(values.mean() + half)
