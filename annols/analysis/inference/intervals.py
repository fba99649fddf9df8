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
The ends are those of every candidate of both grids tested, but only the candidates no certificate rules out are
computed (:class:`_Test`: the wealth of the gambler betting up never grows with m, so where it alone passes
1 / alpha every smaller m is rejected too), at most :data:`CHUNK` values at a time.

PPI++ (:func:`ppi`): the estimate is ``lambda x mean(judge on judge-only items) + mean(humans - lambda x
judge on items with humans)``, two independent means of bounded values; its bounded interval is the sum
(Minkowski) of a betting interval for each, at ``alpha x`` :data:`PPI_SPLIT` and the rest of alpha
(Bonferroni), as in the original PPI paper's non-asymptotic construction (Angelopoulos et al. 2023,
Science, §"Mean estimation").
"""

from __future__ import annotations

import hashlib
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
CHUNK = 2**20  # floats in one items x candidates block (8 MB): the largest matrix the search holds
MARGIN = 1e-6  # a certificate's relative margin over 1 / alpha, far above the rounding of a sum of logs
MEMO = 256  # betting_unit's results kept by their values' digest (a report asks for some intervals twice)


def _bets(x: np.ndarray, alpha: float) -> np.ndarray:
    """The predictable plug-in bets before the caps, for the values ``x`` in [0, 1] in the order taken: one per item,
    or items x candidates (a value per item for each candidate, as the ratio's)."""
    n = len(x)
    seen = np.arange(1, n + 1) if x.ndim == 1 else np.arange(1, n + 1)[:, None]  # t: the item's place
    # the running mean and variance after item t: (1/2 + sum x) / (t + 1), (1/4 + sum (x_j - mean_j)^2) / (t + 1)
    mean = (0.5 + np.cumsum(x, axis=0)) / (seen + 1)
    variance = (0.25 + np.cumsum((x - mean) ** 2, axis=0)) / (seen + 1)
    before = np.concatenate([np.full((1, *variance.shape[1:]), 0.25), variance[:-1]])  # known before item t
    return np.asarray(np.sqrt(2 * math.log(2 / alpha) / (n * before)))


def _sums(a: np.ndarray) -> np.ndarray:
    """Each row's sum, adding its items one after the other (as numpy's sum over the items axis of an items x
    candidates matrix does; a sum along a row would be pairwise, to other last bits)."""
    return np.asarray(np.cumsum(a, axis=1)[:, -1])


def _halves(x: np.ndarray, bet: np.ndarray, grid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Half the final wealth of the gambler betting that the mean is above each candidate of ``grid`` and half the
    other's, for the ordered values ``x`` and their bets (each one per item, or items x candidates). The matrices
    are candidates x items, so that each elementwise step runs along the items."""
    if x.ndim == 1:
        bet, x = bet[None, :], x[None, :]
    else:
        bet, x = bet.T, x.T
    m = grid[:, None]
    with np.errstate(divide="ignore"):
        up = np.minimum(bet, BET_CAP / m)
        down = np.minimum(bet, BET_CAP / (1 - m))
    diff = x - m
    with np.errstate(over="ignore"):  # a wealth past any float is past 1 / alpha: inf rejects that mean, as it should
        return 0.5 * np.exp(_sums(np.log1p(up * diff))), 0.5 * np.exp(_sums(np.log1p(-down * diff)))


def _blocks(grid: np.ndarray, n: int) -> list[np.ndarray]:
    """The candidates in blocks of at most :data:`CHUNK` / n (and at least 2)."""
    size = max(2, CHUNK // max(n, 1))
    return [grid[i : i + size] for i in range(0, len(grid), size)]


def _wealth(x: np.ndarray, alpha: float, grid: np.ndarray, order: np.ndarray) -> np.ndarray:
    """Hedged final wealth at each candidate mean of ``grid``, for the values ``x`` in [0, 1] taken in ``order``.
    ``x`` is one value per item, or items x candidates (a value per item for each candidate, as the ratio's)."""
    x = x[order]
    bet = _bets(x, alpha)
    up, down = _halves(x, bet, grid)
    return up + down


class _Unit:
    """The averaged wealth over the orders of values in [0, 1], a block of candidates at a time: each order's values
    and bets (which do not depend on the candidate) are computed once."""

    def __init__(self, values: np.ndarray, alpha: float, orders: list[np.ndarray]) -> None:
        self.n = len(values)
        self.taken = [(values[o], _bets(values[o], alpha)) for o in orders]

    def __call__(self, grid: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        parts = [self._block(block) for block in _blocks(grid, self.n)]
        return tuple(np.concatenate(p) for p in zip(*parts, strict=True))  # type: ignore[return-value]

    def _block(self, grid: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        wealth: np.ndarray | int = 0
        ups: np.ndarray | int = 0
        downs: np.ndarray | int = 0
        for x, bet in self.taken:
            up, down = _halves(x, bet, grid)
            wealth, ups, downs = wealth + (up + down), ups + up, downs + down  # as sum() over the orders adds
        k = len(self.taken)
        return np.asarray(wealth) / k, np.asarray(ups) / k, np.asarray(downs) / k


class _Test:
    """The betting test at candidate means, remembered by candidate: whether the averaged wealth stays below
    1 / alpha (kept), and, where ``certified``, whether the gambler betting up alone (down alone) already reaches
    1 / alpha x (1 + :data:`MARGIN`) there, which rejects every smaller (larger) candidate too.

    Why: for values in [0, 1] and bets that depend on the candidate m only through the caps, each factor
    ``1 + min(b_i, c / m) (x_i - m)`` is positive (at least 1 - c) and never grows with m (for m below b_i / c
    it is ``1 + b_i (x_i - m)``, above it ``1 - c + c x_i / m``), so the gambler betting up has a wealth that never
    grows with m, the one betting down one that never shrinks, in each order and so in their average; the hedged
    wealth is at least either half (in floats too: the halves are added as the wealth adds them).

    Is the kept set an interval, so that the search could stop at its first rejected candidate each side? Without
    the caps each factor is positive and affine in m, all of one gambler's falling (the other's rising), and a
    product of positive convex functions all falling (or all rising) is convex, so the hedged wealth is convex in m
    and the set below 1 / alpha an interval (the argument of Waudby-Smith & Ramdas for their hedged process). With
    the caps, above m = c / b_i the factor is ``1 - c + c x_i / m``, whose slope at that kink, ``-x_i b_i^2 / c``,
    is steeper than the ``-b_i`` before it when x_i > c / b_i: the factor, and the wealth, need not be convex, and
    the set need not be an interval. So nothing is skipped on that argument, only by a certificate (each side's
    monotone half), which holds with the caps. The margin covers the rounding of the sums of logs (relative about
    1e-11 at a million items)."""

    def __init__(self, evaluate: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray, np.ndarray]], alpha: float,
                 certified: bool, n: int) -> None:  # fmt: skip
        self.evaluate, self.certified, self.n = evaluate, certified, n
        self.limit, self.sure = 1 / alpha, (1 / alpha) * (1 + MARGIN)
        # m: kept, every m' <= m rejected, every m' >= m rejected, log(wealth x alpha) (above 0: rejected)
        self.known: dict[float, tuple[bool, bool, bool, float]] = {}

    def at(self, grid: np.ndarray) -> list[tuple[bool, bool, bool, float]]:
        ms = grid.tolist()
        new = [m for m in dict.fromkeys(ms) if m not in self.known]
        if new:
            wealth, up, down = self.evaluate(np.array(new))
            for m, w, u, d in zip(new, wealth.tolist(), up.tolist(), down.tolist(), strict=True):
                score = math.log(w / self.limit) if 0 < w < math.inf else (math.inf if w > 0 else -math.inf)
                self.known[m] = (w < self.limit, self.certified and u >= self.sure, self.certified and d >= self.sure,
                                 score)  # fmt: skip
        return [self.known[m] for m in ms]

    def first_kept(self, points: np.ndarray, rising: bool, hint: int) -> int | None:
        """The first kept index of ``points``, ordered from the outside in (rising: towards larger m), or None when
        none is kept. Only what a certificate rejects is skipped: from ``hint`` (an index near the kept ones) the
        search steps outward by doubling steps to a certified point, narrows the gap between the last certified and
        the first uncertified point (by the crossing of the log wealth, interpolated, else halving), then evaluates
        every point inward from the last certified one until one is kept (or one certifies the rest rejected)."""
        out, inward = (1, 2) if rising else (2, 1)
        size = len(points)
        lo = -1  # every index <= lo is rejected: lo is certified
        if self.certified:
            free = min(max(hint, 0), size - 1)  # not certified (or not yet looked at)
            flags = {free: self.at(points[[free]])[0]}
            if free > 0 and points[0] in self.known:  # the outer end, already evaluated: free to ask
                flags[0] = self.known[points[0]]
            if flags[free][out]:
                lo = free
            elif 0 in flags and flags[0][out]:
                lo = 0
            step = 1
            while lo < 0 < free:  # gallop outward to a certified point
                j = max(free - step, 0)
                flags[j] = self.at(points[[j]])[0]
                if flags[j][out]:
                    lo = j
                else:
                    free, step = j, step * 2
            while free - lo > 1:  # narrow: lo certified, free not
                low_score, free_score = flags[lo][3], flags[free][3]
                j = (lo + free) // 2
                if flags[free][0] and math.isfinite(low_score) and low_score > 0 and math.isfinite(free_score):
                    j = lo + int((free - lo) * low_score / (low_score - free_score))  # the interpolated crossing
                j = min(max(j, lo + 1), free - 1)
                pair = [j, j + 1] if j + 1 < free else [j]
                for k, flag in zip(pair, self.at(points[pair]), strict=True):
                    flags[k] = flag
                for k in pair:
                    if flags[k][out]:
                        lo = k
                    else:
                        free = k
                        break
        block = 2 if self.certified else max(2, min(COARSE + 1, CHUNK // max(self.n, 1)))
        j = lo + 1
        while j < size:
            idx = list(range(j, min(j + block, size)))
            for k, flag in zip(idx, self.at(points[idx]), strict=True):
                if flag[0]:
                    return k
                if flag[inward]:
                    return None
            j = idx[-1] + 1
        return None


def _search(test: _Test, centre: float) -> tuple[float, float]:
    """The kept candidates in [0, 1], as if a coarse grid of :data:`COARSE` + 1 points were tested at every point and
    each end refined on :data:`FINE` points between its last rejected and first kept coarse point, rounded outward:
    ``test`` evaluates only what its certificates cannot rule out (the same ends as the whole grid). ``centre``: the
    estimate (the interval around it if the grid stepped over every kept point)."""
    coarse = np.linspace(0.0, 1.0, COARSE + 1)
    i = int(np.searchsorted(coarse, centre))
    first = test.first_kept(coarse, True, min(i, COARSE))
    if first is None:  # the grid stepped over the whole set: keep the points around the estimate
        kept = [max(i - 1, 0), min(i, COARSE)]
    else:
        top = test.first_kept(coarse[::-1], False, COARSE - max(first, min(i, COARSE)))
        kept = [first, COARSE - (top if top is not None else COARSE - first)]
    ends = []
    for first_, outside in ((kept[0], kept[0] - 1), (kept[-1], kept[-1] + 1)):
        if outside < 0 or outside > COARSE:
            ends.append(float(coarse[first_]))
            continue
        fine = np.linspace(coarse[outside], coarse[first_], FINE + 1)  # from the rejected side to the kept
        inside = test.first_kept(fine, outside < first_, FINE)
        j = inside if inside is not None else FINE
        ends.append(float(fine[max(j - 1, 0)]))  # one fine step outward
    return min(ends), max(ends)


def _orders(seed: int, n: int) -> list[np.ndarray]:
    rng = np.random.default_rng([seed, n])
    return [rng.permutation(n) for _ in range(ORDERS)]


_memo: dict[tuple[bytes, int, float, int], tuple[float, float]] = {}


def betting_unit(x: ArrayLike, alpha: float = ALPHA, seed: int = SEED) -> tuple[float, float]:
    """The betting interval of the mean of values in [0, 1] (see the module's text): the candidates kept on a
    coarse grid of :data:`COARSE` + 1 points, each end refined on :data:`FINE` points between its last rejected
    and first kept coarse point, rounded outward. The last :data:`MEMO` results are kept by the values' BLAKE2b
    digest (with n, alpha and the seed): a report asks for some intervals more than once."""
    values = np.clip(np.asarray(x, dtype=float), 0.0, 1.0)
    n = len(values)
    if n == 0:
        return math.nan, math.nan
    key = (hashlib.blake2b(np.ascontiguousarray(values).tobytes()).digest(), n, float(alpha), int(seed))
    if key not in _memo:
        orders = _orders(seed, n)
        if len(_memo) >= MEMO:
            del _memo[next(iter(_memo))]
        _memo[key] = _search(_Test(_Unit(values, alpha, orders), alpha, True, n), float(values.mean()))
    return _memo[key]


def betting_ratio(num: ArrayLike, den: ArrayLike, low: float, high: float, alpha: float = ALPHA,
                  seed: int = SEED) -> tuple[float, float]:  # fmt: skip
    """The betting interval of the ratio ``E[num] / E[den]`` over items (e.g. wins over judgments, each item's
    judgments together), where each item's ``num / den`` lies in ``[low, high]`` and ``den >= 0``.

    The ratio is r exactly when ``E[num - r den] = 0``. Scaled to [0, 1] (``a = (num - low den) / (high - low)``,
    r' = (r - low) / (high - low)), ``u = (a - r' den) / max(den) + r'`` lies in [0, 1] and has mean r' under r,
    so the betting test of the mean r' on u (the module's, item by item) tests r; the interval is the r kept. With
    every ``den`` equal it is :func:`betting` of ``num / den``; an item with ``den`` 0 says nothing (u = r').
    Here the values and so the bets move with the candidate, so no candidate is certified from another: every
    coarse point up to the first kept from each side and every fine point up to the first kept is evaluated,
    :data:`CHUNK` values at a time."""
    if not high > low:
        raise ValueError(f"a bounded interval needs low < high, got [{low}, {high}]")
    n_, d_ = np.asarray(num, dtype=float), np.asarray(den, dtype=float)
    top = float(d_.max()) if len(d_) else 0.0
    if not top > 0:
        return math.nan, math.nan
    a = np.clip((n_ - low * d_) / (high - low), 0.0, d_)
    orders = _orders(seed, len(a))
    n = len(a)

    def evaluate(grid: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        wealth = []
        for block in _blocks(grid, n):
            u = np.clip((a[:, None] - block[None, :] * d_[:, None]) / top + block[None, :], 0.0, 1.0)
            wealth.append(sum(_wealth(u, alpha, block, o) for o in orders) / len(orders))
        none = np.zeros(len(grid))
        return np.concatenate(wealth), none, none

    r_low, r_high = _search(_Test(evaluate, alpha, False, n), float(a.sum() / d_.sum()))
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
