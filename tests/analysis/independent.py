"""The tests' own computations of the analysis statistics, written from their definitions.

Plain Python (and numpy only to draw the same bootstrap resamples the report records by
seed): no scipy or statsmodels, which the analysis uses. tests/report/formulas.py has
kappa, alpha (nominal, ordinal) and Kendall's W; these add what the styles need besides.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Hashable, Sequence

import numpy as np

from tests.report.formulas import _coincidences


def sign_test_p(wins: int, losses: int) -> float:
    """Exact two-sided binomial test of wins against losses at p = 1/2 (symmetric: twice the smaller tail)."""
    n = wins + losses
    tail = sum(math.comb(n, k) for k in range(min(wins, losses) + 1)) / 2**n
    return min(1.0, 2 * tail)


def holm(p: Sequence[float]) -> list[float]:
    """Holm (1979): the i-th smallest p times (m - i), made monotone, capped at 1."""
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    out = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        out[i] = running
    return out


def midranks(values: Sequence[float]) -> list[float]:
    ordered = sorted(values)
    return [sum(i + 1 for i, v in enumerate(ordered) if v == x) / ordered.count(x) for x in values]


def wilcoxon_p(differences: Sequence[float]) -> float:
    """Signed-rank test by every sign flip of the non-zero differences' midranks (exact; ties allowed)."""
    nonzero = [d for d in differences if d != 0]
    ranks = midranks([abs(d) for d in nonzero])
    observed = sum(r for r, d in zip(ranks, nonzero, strict=True) if d > 0)
    totals = [sum(r for r, s in zip(ranks, signs, strict=True) if s)
              for signs in itertools.product((False, True), repeat=len(ranks))]  # fmt: skip
    low = sum(t <= observed + 1e-9 for t in totals) / len(totals)
    high = sum(t >= observed - 1e-9 for t in totals) / len(totals)
    return min(1.0, 2 * min(low, high))


def interval_alpha(units: Sequence[Sequence[float]]) -> float:
    """Krippendorff's alpha with the interval metric (c - k)^2, from the coincidences of pairable values."""
    o = _coincidences([list(map(float, u)) for u in units])
    values: list[Hashable] = sorted({c for c, _ in o}, key=float)
    n_c = {c: sum(o.get((c, k), 0.0) for k in values) for c in values}
    n = sum(n_c.values())

    def delta(c: Hashable, k: Hashable) -> float:
        return (float(c) - float(k)) ** 2  # type: ignore[arg-type]

    observed = sum(o.get((c, k), 0.0) * delta(c, k) for c in values for k in values)
    expected = sum(n_c[c] * n_c[k] * delta(c, k) for c in values for k in values) / (n - 1)
    return 1 - observed / expected


def bootstrap(units: Sequence[Sequence[float]], statistic: Callable[[list[float]], float], reps: int,
              seed: Sequence[int]) -> tuple[float, float]:  # fmt: skip
    """95% percentile interval of ``statistic`` over all values of resampled units.

    The resamples are the report's: ``default_rng(seed).integers(0, units, (reps, units))``
    (the seed and resample count are the report's recorded options); the statistic and
    the percentiles are computed here.
    """
    picks = np.random.default_rng(list(seed)).integers(0, len(units), size=(reps, len(units)))
    values = sorted(statistic([v for j in row for v in units[j]]) for row in picks)
    return percentile(values, 2.5), percentile(values, 97.5)


def percentile(ordered: Sequence[float], q: float) -> float:
    """Linear interpolation between closest ranks (numpy's default), on sorted values."""
    at = (len(ordered) - 1) * q / 100
    low = math.floor(at)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (at - low)
