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


# The whole grid, as the intervals were computed before the search (a slow reference kept here, not in the library):
# every one of the COARSE + 1 candidates and every FINE point at each end, one items x candidates matrix each.
def reference_wealth(x: np.ndarray, alpha: float, grid: np.ndarray, order: np.ndarray) -> np.ndarray:
    x = x[order]
    n = len(x)
    seen = np.arange(1, n + 1) if x.ndim == 1 else np.arange(1, n + 1)[:, None]
    mean = (0.5 + np.cumsum(x, axis=0)) / (seen + 1)
    variance = (0.25 + np.cumsum((x - mean) ** 2, axis=0)) / (seen + 1)
    before = np.concatenate([np.full((1, *variance.shape[1:]), 0.25), variance[:-1]])
    bet = np.sqrt(2 * math.log(2 / alpha) / (n * before))
    if x.ndim == 1:
        bet, x = bet[:, None], x[:, None]
    m = grid[None, :]
    with np.errstate(divide="ignore"):
        up = np.minimum(bet, intervals.BET_CAP / m)
        down = np.minimum(bet, intervals.BET_CAP / (1 - m))
    diff = x - m
    with np.errstate(over="ignore"):
        return 0.5 * np.exp(np.log1p(up * diff).sum(axis=0)) + 0.5 * np.exp(np.log1p(-down * diff).sum(axis=0))


def reference_search(kept_at, centre: float) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    coarse = np.linspace(0.0, 1.0, intervals.COARSE + 1)
    kept = np.flatnonzero(kept_at(coarse))
    if not len(kept):
        i = int(np.searchsorted(coarse, centre))
        kept = np.array([max(i - 1, 0), min(i, intervals.COARSE)])
    ends = []
    for first, outside in ((kept[0], kept[0] - 1), (kept[-1], kept[-1] + 1)):
        if outside < 0 or outside > intervals.COARSE:
            ends.append(float(coarse[first]))
            continue
        fine = np.linspace(coarse[outside], coarse[first], intervals.FINE + 1)
        inside = np.flatnonzero(kept_at(fine))
        j = inside[0] if len(inside) else intervals.FINE
        ends.append(float(fine[max(j - 1, 0)]))
    return min(ends), max(ends)


def reference_unit(x: np.ndarray, alpha: float = 0.05, seed: int = intervals.SEED) -> tuple[float, float]:
    values = np.clip(np.asarray(x, dtype=float), 0.0, 1.0)
    orders = intervals._orders(seed, len(values))

    def kept_at(grid: np.ndarray) -> np.ndarray:
        return np.asarray(sum(reference_wealth(values, alpha, grid, o) for o in orders) / len(orders) < 1 / alpha)

    return reference_search(kept_at, float(values.mean()))


def reference_ratio(num: np.ndarray, den: np.ndarray, low: float, high: float, seed: int) -> tuple[float, float]:
    top = float(den.max())
    a = np.clip((num - low * den) / (high - low), 0.0, den)
    orders = intervals._orders(seed, len(a))

    def kept_at(grid: np.ndarray) -> np.ndarray:
        u = np.clip((a[:, None] - grid[None, :] * den[:, None]) / top + grid[None, :], 0.0, 1.0)
        return np.asarray(sum(reference_wealth(u, 0.05, grid, o) for o in orders) / len(orders) < 20)

    r_low, r_high = reference_search(kept_at, float(a.sum() / den.sum()))
    return low + r_low * (high - low), low + r_high * (high - low)


def samples() -> list[np.ndarray]:
    """Seeded values on 1-5: ceilings (70 to 90 % at the top), all equal (at the top, bottom and middle), a skewed
    and a spread scale, n = 1, 2, 10, 25, 100, 2000."""
    rng = np.random.default_rng(41)
    out = []
    for n in (1, 2, 10, 25, 100, 2000):
        for top in (0.7, 0.8, 0.9):
            out.append(np.where(rng.random(n) < top, 5.0, rng.integers(1, 5, n).astype(float)))
        out += [np.full(n, 5.0), np.full(n, 1.0), np.full(n, 3.0)]
        out.append(np.clip(np.round(rng.normal(3.5, 1, n)), 1, 5))
        out.append(rng.integers(1, 6, n).astype(float))
        out.append(1 + 4 * rng.beta(6, 1, n))  # continuous values (e.g. means of several ratings)
    return out


def test_the_search_gives_the_whole_grids_interval_to_the_bit() -> None:
    """The search evaluates few candidates (what its certificates cannot rule out); its ends equal those of every
    candidate of both grids evaluated, exactly, at ceilings, all-equal values, and n from 1 to 2000."""
    for i, x in enumerate(samples()):
        unit = (x - 1) / 4
        for alpha, seed in ((0.05, intervals.SEED), (0.01, 7)):
            assert intervals.betting_unit(unit, alpha, seed) == reference_unit(unit, alpha, seed), (i, len(x), alpha)


def test_the_search_evaluates_a_few_candidates_where_the_grid_has_three_hundred() -> None:
    rng = np.random.default_rng(4)
    x = np.clip(np.round(rng.normal(3.5, 1, 20000)), 1, 5)
    evaluated = []
    values = np.clip((x - 1) / 4, 0, 1)
    orders = intervals._orders(intervals.SEED, len(values))
    unit = intervals._Unit(values, 0.05, orders)

    def counted(grid: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        evaluated.append(len(grid))
        return unit(grid)

    found = intervals._search(intervals._Test(counted, 0.05, True, len(values)), float(values.mean()))
    assert found == reference_unit(values)
    assert sum(evaluated) <= 30  # of 201 + 2 x 51


def test_the_ratio_gives_the_whole_grids_interval_to_the_bit() -> None:
    rng = np.random.default_rng(12)
    for n in (1, 10, 25, 100, 2000):
        den = rng.integers(0, 5, n).astype(float)
        den[0] = max(den[0], 1.0)
        num = np.array([rng.integers(-d, d + 1) if d else 0 for d in den.astype(int)], dtype=float)
        assert intervals.betting_ratio(num, den, -1, 1, seed=6) == reference_ratio(num, den, -1, 1, 6), n
        wins = np.where(rng.random(n) < 0.85, den, 0.0)  # a ceiling: most items won outright
        assert intervals.betting_ratio(wins, den, 0, 1, seed=3) == reference_ratio(wins, den, 0, 1, 3), n


def test_no_matrix_of_items_x_candidates_outgrows_a_block(monkeypatch: pytest.MonkeyPatch) -> None:
    """Blocks of CHUNK values at most (here made small): the same interval, each matrix within the block."""
    rng = np.random.default_rng(5)
    x = rng.random(3000)
    widths = []
    halves = intervals._halves

    def watched(x_: np.ndarray, bet: np.ndarray, grid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        widths.append(len(grid) * len(x_))
        return halves(x_, bet, grid)

    monkeypatch.setattr(intervals, "CHUNK", 6000)
    monkeypatch.setattr(intervals, "_halves", watched)
    monkeypatch.setattr(intervals, "_memo", {})
    assert intervals.betting_unit(x, seed=9) == reference_unit(x, seed=9)
    den = rng.integers(1, 4, 3000).astype(float)
    num = np.floor(rng.random(3000) * (den + 1))
    assert intervals.betting_ratio(num, den, 0, 1, seed=2) == reference_ratio(num, den, 0, 1, 2)
    assert widths and max(widths) <= 6000
