"""The bounded intervals (annols.analysis.inference.intervals) against an independent computation of the betting wealth,
their guarantee on seeded ceiling data, and no zero width where every item got the same value."""

from __future__ import annotations

import math

import numpy as np
import pytest

from annols.analysis.inference import intervals


def wealth_by_loop(x: list[float], m: float, alpha: float, cap: float) -> float:
    """Waudby-Smith & Ramdas (2024), Theorem 3 with eq. 26's bets, item by item as the paper writes it."""
    n = len(x)
    mean, var = 0.5, 0.25  # mu_0 and sigma_0^2: one pseudo-item
    up, down = 1.0, 1.0
    total, squares = 0.0, 0.0
    for t, xt in enumerate(x, start=1):
        bet = math.sqrt(2 * math.log(2 / alpha) / (n * var))
        lam_up = min(bet, cap / m) if m > 0 else bet
        lam_down = min(bet, cap / (1 - m)) if m < 1 else bet
        up *= 1 + lam_up * (xt - m)
        down *= 1 - lam_down * (xt - m)
        total += xt
        mean = (0.5 + total) / (t + 1)
        squares += (xt - mean) ** 2
        var = (0.25 + squares) / (t + 1)
    return 0.5 * up + 0.5 * down


def test_the_wealth_is_the_papers_process() -> None:
    rng = np.random.default_rng(3)
    x = rng.beta(5, 1, 17)
    grid = np.array([0.1, 0.5, 0.77, 0.9, 0.99])
    order = np.arange(len(x))
    mine = intervals._wealth(x, 0.05, grid, order)
    theirs = [wealth_by_loop(list(x), m, 0.05, intervals.BET_CAP) for m in grid]
    assert mine == pytest.approx(theirs, rel=1e-10)


def test_the_interval_is_where_the_averaged_wealth_stays_below_one_over_alpha() -> None:
    rng = np.random.default_rng(5)
    x = rng.beta(4, 1, 30)
    low, high = intervals.betting_unit(x, seed=11)
    orders = np.random.default_rng([11, len(x)])
    perms = [orders.permutation(len(x)) for _ in range(intervals.ORDERS)]

    def kept(m: float) -> bool:
        return float(np.mean([wealth_by_loop(list(x[p]), m, 0.05, intervals.BET_CAP) for p in perms])) < 20

    assert low <= x.mean() <= high
    assert kept(low + 2e-4) and kept(high - 2e-4)  # inside, near each end
    assert low == 0 or not kept(low - 2e-4)  # outside, near each end (or the range's own end)
    assert high == 1 or not kept(high + 2e-4)


def test_all_equal_values_never_give_a_zero_width_interval() -> None:
    for n in (5, 10, 25, 100):
        low, high = intervals.betting(np.full(n, 5.0), 1, 5)
        assert high == 5.0 and low < 5.0 - 0.01
    low, high = intervals.betting(np.full(10, 3.0), 1, 5)
    assert low < 3 < high


def test_the_guarantee_holds_at_a_ceiling_with_ten_items() -> None:
    """90% of the values at the top of 1-5: the CLT interval covers far less than 95%, the betting one at least."""
    rng = np.random.default_rng(2026)
    truth = 0.9 * 5 + 0.1 * 3
    covered = clt = 0
    studies = 300
    for _ in range(studies):
        x = np.where(rng.random(10) < 0.9, 5.0, 3.0)
        low, high = intervals.betting(x, 1, 5)
        covered += low <= truth <= high
        c_low, c_high = intervals.clt(x)
        clt += c_low <= truth <= c_high if math.isfinite(c_low) else 0
    assert covered / studies >= 0.95
    assert clt / studies < 0.8  # the CLT's failure the bounded interval fixes


def test_the_ppi_interval_is_the_sum_of_two_betting_intervals() -> None:
    rng = np.random.default_rng(8)
    y = rng.integers(1, 6, 20).astype(float)
    f = np.clip(y + rng.integers(-1, 2, 20), 1, 5)
    fu = rng.integers(1, 6, 60).astype(float)
    low, high = intervals.ppi(y, f, fu, 0.5, 1, 5)
    r = intervals.betting(y - 0.5 * f, 1 - 2.5, 5 - 0.5, 0.05 * intervals.PPI_SPLIT)
    j = intervals.betting(fu, 1, 5, 0.05 * (1 - intervals.PPI_SPLIT), intervals.SEED + 1)
    assert (low, high) == pytest.approx((r[0] + 0.5 * j[0], r[1] + 0.5 * j[1]))
    assert intervals.ppi(y, f, fu, 0.0, 1, 5) == intervals.betting(y, 1, 5)


def test_a_ratio_with_equal_sizes_is_the_betting_interval_of_the_items_shares() -> None:
    rng = np.random.default_rng(8)
    wins = rng.integers(0, 4, 20).astype(float)
    assert intervals.betting_ratio(wins, np.full(20, 3.0), 0, 1, seed=4) == intervals.betting(wins / 3, 0, 1, seed=4)


def test_a_ratio_keeps_the_r_whose_shifted_values_the_papers_process_does_not_reject() -> None:
    """Items of unequal sizes (1 to 4 judgments, some of them none decided): the interval of sum(num) / sum(den) is
    where the paper's wealth of u = (num - r den) / max(den) + r (scaled to [0, 1], here [-1, 1]) stays below 20."""
    rng = np.random.default_rng(9)
    den = rng.integers(0, 5, 25).astype(float)
    num = np.array([rng.integers(-d, d + 1) if d else 0 for d in den.astype(int)], dtype=float)  # wins - losses
    low, high = intervals.betting_ratio(num, den, -1, 1, seed=6)
    orders = np.random.default_rng([6, 25])
    perms = [orders.permutation(25) for _ in range(intervals.ORDERS)]

    def kept(r: float) -> bool:
        m = (r + 1) / 2
        u = ((num + den) / 2 - m * den) / den.max() + m
        return float(np.mean([wealth_by_loop(list(u[p]), m, 0.05, intervals.BET_CAP) for p in perms])) < 20

    assert low <= num.sum() / den.sum() <= high and high - low > 0.1
    assert kept(low + 4e-4) and kept(high - 4e-4)
    assert low == -1 or not kept(low - 4e-4)
    assert high == 1 or not kept(high + 4e-4)
    assert all(math.isnan(v) for v in intervals.betting_ratio([0.0, 0.0], [0.0, 0.0], 0, 1))  # nothing decided
