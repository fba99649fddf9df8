"""Percentile bootstrap intervals over units (samples), keeping each unit's values together.

A report's intervals resample whole samples, not single judgments: the judgments of one
sample are not independent. ``numpy.random.default_rng`` is seeded by the caller, so the
same study and options give the same intervals. Resamples are drawn in chunks of about
half a million numbers, so memory stays bounded whatever the study's size.
"""

from __future__ import annotations

import numpy as np
from scipy import sparse

LEVEL = 0.95
CHUNK = 500_000


def _tails(values: np.ndarray, level: float) -> tuple[float, float]:
    tail = (1 - level) / 2 * 100
    low, high = np.nanpercentile(values, [tail, 100 - tail])
    return float(low), float(high)


def _times(rng: np.random.Generator, n: int, size: int) -> np.ndarray:
    """``size`` resamples of ``n`` units, as how many times each unit was drawn (size x n, float)."""
    picked = rng.integers(0, n, size=(size, n))
    flat = (np.arange(size)[:, None] * n + picked).ravel()
    return np.bincount(flat, minlength=size * n).reshape(size, n).astype(float)


def ratio(sums_and_sizes: np.ndarray, reps: int, rng: np.random.Generator,
          level: float = LEVEL) -> tuple[float, float]:  # fmt: skip
    """Interval of sum(values) / count(values), i.e. the mean, resampling rows of (sum, count) per unit."""
    units = np.asarray(sums_and_sizes, dtype=float)
    n = len(units)
    if reps <= 0 or n == 0:
        return np.nan, np.nan
    chunk = max(1, CHUNK // n)
    out = []
    for done in range(0, reps, chunk):
        picked = _times(rng, n, min(chunk, reps - done)) @ units
        out.append(picked[:, 0] / picked[:, 1])
    return _tails(np.concatenate(out), level)


def median(units: np.ndarray, values: np.ndarray, reps: int, rng: np.random.Generator,
           level: float = LEVEL) -> tuple[float, float]:  # fmt: skip
    """Interval of the median of all values, resampling units; ``units`` (0..n-1) gives each value's unit.

    A resample is how many times each unit was drawn; with each unit's count of every
    distinct value (a sparse matrix), one product gives the resample's count of every
    value, and its median is the middle of those counts in value order (the mean of the
    middle two for an even total): no sorting per resample.
    """
    n = int(units.max()) + 1 if len(units) else 0
    if reps <= 0 or n == 0:
        return np.nan, np.nan
    distinct, which = np.unique(values, return_inverse=True)
    per_unit = sparse.csr_matrix((np.ones(len(values)), (units, which)), shape=(n, len(distinct)))
    chunk = max(1, CHUNK // n)
    out = []
    for done in range(0, reps, chunk):
        counts = np.asarray((per_unit.T @ _times(rng, n, min(chunk, reps - done)).T).T)  # resample x value
        running = np.cumsum(counts, axis=1)
        total = running[:, -1:]
        low = (running <= (total - 1) // 2).sum(axis=1)  # where the middle value(s) fall
        high = (running <= total // 2).sum(axis=1)
        out.append((distinct[low] + distinct[high]) / 2)
    return _tails(np.concatenate(out), level)


def means(sums: np.ndarray, counts: np.ndarray, reps: int, rng: np.random.Generator) -> np.ndarray:
    """reps x columns: each resample's mean per column, from units x columns ``sums`` and ``counts`` of the
    values (a column without values in a resample is nan); drawn in chunks (bounded memory)."""
    n = len(sums)
    if reps <= 0 or n == 0:
        return np.zeros((0, sums.shape[1]))
    out = []
    chunk = max(1, CHUNK // n)
    for done in range(0, reps, chunk):
        times = _times(rng, n, min(chunk, reps - done))
        with np.errstate(divide="ignore", invalid="ignore"):
            out.append((times @ sums) / (times @ counts))
    return np.concatenate(out)
