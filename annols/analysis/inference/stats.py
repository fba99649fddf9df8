"""The statistics of a report, as thin wrappers over maintained libraries where they exist.

=========================  ===========================================================
statistic                  computed by
=========================  ===========================================================
Fleiss' kappa              ``statsmodels.stats.inter_rater.fleiss_kappa``
Cohen's kappa              ``statsmodels.stats.inter_rater.cohens_kappa`` (contingency table)
Krippendorff's alpha       ``krippendorff.alpha`` (value counts); see :func:`krippendorff_alpha`
                           for large inputs
Kendall's W                tie-corrected formula below; midranks by ``scipy.stats.rankdata``
Bradley-Terry (ties half)  ``choix.ilsr_pairwise_dense``, in :mod:`annols.analysis.leaderboard.rankings`
bootstrap intervals        percentile bootstrap over units, ``numpy.random.default_rng(seed)``
=========================  ===========================================================

Each wrapper returns ``nan`` where the statistic is undefined (no pairable unit, a single
category, all rankings tied) instead of raising: a report shows an empty cell there.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

import krippendorff
import numpy as np
from scipy.stats import rankdata
from statsmodels.stats import inter_rater

NAN = float("nan")
# Above this many units, krippendorff.alpha's (units x values x values) intermediate
# arrays would need gigabytes; identical units are then pooled (see krippendorff_alpha).
DIRECT_UNITS = 200_000


def _quiet(fn: Callable[[], Any]) -> Any:
    """Run a library call with 0/0 warnings silenced: an undefined statistic becomes nan."""
    with np.errstate(divide="ignore", invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return fn()


def fleiss_kappa(counts: np.ndarray) -> float:
    """Fleiss' kappa of a subjects x categories table of rating counts (same raters per subject)."""
    counts = np.asarray(counts)  # statsmodels makes its own float copy (1.0 * table): the same floats from ints
    if counts.dtype.kind not in "iuf":
        counts = counts.astype(float)
    if counts.ndim != 2 or counts.shape[0] == 0 or counts.shape[1] < 2:
        return NAN
    raters = counts.sum(axis=1)
    if raters.min() < 2 or raters.max() != raters.min():
        return NAN
    value = float(_quiet(lambda: inter_rater.fleiss_kappa(counts, method="fleiss")))
    return value if math.isfinite(value) else NAN


def cohens_kappa(table: np.ndarray) -> float:
    """Cohen's kappa of a square contingency table (rater 1's category x rater 2's)."""
    table = np.asarray(table, dtype=float)
    if table.sum() == 0:
        return NAN
    value = float(_quiet(lambda: inter_rater.cohens_kappa(table).kappa))
    return value if math.isfinite(value) else NAN


def krippendorff_alpha(value_counts: np.ndarray, level: str = "nominal", value_domain: Any = None) -> float:
    """Krippendorff's alpha from a units x values table of how many raters gave each value.

    Units with fewer than two ratings are not pairable and do not count. Up to
    ``DIRECT_UNITS`` units this is ``krippendorff.alpha`` itself. Beyond, that call would
    build a units x values x values array (gigabytes for token-level span agreement), so
    the units are pooled by their value counts and the coincidence matrix is summed per
    distinct row, weighted by how often it occurs: the same sum, the same alpha
    (Krippendorff 2011, "Computing Krippendorff's Alpha-Reliability", section C;
    nominal and ordinal metrics only). Tests check both paths give the library's value.
    """
    counts = np.asarray(value_counts, dtype=np.int64)
    if counts.ndim != 2 or counts.shape[1] < 2:
        return NAN
    pairable = counts.sum(axis=1) >= 2
    if not pairable.all():  # no copy when every unit is pairable (a pair alpha's 800,000 pairs: 32 MB)
        counts = counts[pairable]
    if counts.shape[0] == 0:
        return NAN
    if counts.shape[0] <= DIRECT_UNITS:
        kwargs: dict[str, Any] = {"value_counts": counts, "level_of_measurement": level}
        if value_domain is not None:
            kwargs["value_domain"] = value_domain
        value = float(_quiet(lambda: krippendorff.alpha(**kwargs)))
    else:
        value = _pooled_alpha(counts, level)
    return value if math.isfinite(value) else NAN


def _pooled_alpha(counts: np.ndarray, level: str) -> float:
    """Alpha from distinct unit rows weighted by their frequency (see :func:`krippendorff_alpha`)."""
    rows, weights = _distinct_rows(counts, int(counts.max()) + 1)
    return _alpha_of_rows(rows, weights, level)


def _distinct_rows(counts: np.ndarray, base: int,
                   weights: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """The distinct rows of ``counts`` in :func:`_pooled_alpha`'s order (by the rows as integers in ``base``,
    else lexicographic), each with how often it occurs (``weights``: each given row's frequency; else 1)."""
    if base ** counts.shape[1] < 2**62:  # rows as one integer each: a fast 1-D unique
        codes = counts @ (base ** np.arange(counts.shape[1], dtype=np.int64))
        if weights is None:
            _, first, found = np.unique(codes, return_index=True, return_counts=True)
            return counts[first], found
        _, first, inverse = np.unique(codes, return_index=True, return_inverse=True)
    elif weights is None:
        rows, found = np.unique(counts, axis=0, return_counts=True)
        return rows, found
    else:
        _, first, inverse = np.unique(counts, axis=0, return_index=True, return_inverse=True)
    summed = np.zeros(len(first), dtype=np.int64)
    np.add.at(summed, np.ravel(inverse), np.asarray(weights, dtype=np.int64))
    return counts[first], summed


def pooled_pair_alpha(cells: np.ndarray, level: str) -> float:
    """:func:`krippendorff_alpha` of pairs of answers (each pair a unit of two values), from the values x values
    table of how many pairs have each (first, second) value: the same value, bit for bit, without a row per
    pair, when the pairs are more than ``DIRECT_UNITS`` (the pooled path); below, ``krippendorff.alpha`` of the
    pairs' rows. Nominal and ordinal."""
    cells = np.asarray(cells, dtype=np.int64)
    values = cells.shape[0]
    if values < 2:
        return NAN
    if int(cells.sum()) <= DIRECT_UNITS:
        raise ValueError("pooled_pair_alpha is for more than DIRECT_UNITS pairs")
    first, second = np.nonzero(cells)  # the pairs' rows: one in the first value's column, one in the second's
    rows = np.zeros((len(first), values), dtype=np.int64)
    np.add.at(rows, (np.arange(len(first)), first), 1)
    np.add.at(rows, (np.arange(len(first)), second), 1)
    base = 3 if (first == second).any() else 2  # the rows' largest count, plus one
    found, weights = _distinct_rows(rows, base, cells[first, second])
    value = _alpha_of_rows(found, weights, level)
    return value if math.isfinite(value) else NAN


def _alpha_of_rows(rows: np.ndarray, weights: np.ndarray, level: str) -> float:
    """Alpha from distinct unit rows and how often each occurs (:func:`_pooled_alpha`)."""
    m = rows.sum(axis=1).astype(float)
    outer = rows[:, :, None] * rows[:, None, :] - rows[:, :, None] * np.eye(rows.shape[1])[None]
    o = (outer * (weights / (m - 1))[:, None, None]).sum(axis=0)
    n_v = o.sum(axis=0)
    n = n_v.sum()
    e = (np.outer(n_v, n_v) - np.diag(n_v)) / (n - 1)
    if level == "nominal":
        d = 1.0 - np.eye(len(n_v))
    elif level == "ordinal":
        cum = np.cumsum(n_v)
        idx = np.arange(len(n_v))
        lo, hi = np.minimum.outer(idx, idx), np.maximum.outer(idx, idx)
        between = cum[hi] - np.where(lo > 0, cum[lo - 1], 0.0)
        d = (between - (n_v[:, None] + n_v[None, :]) / 2) ** 2
    else:
        raise ValueError(f"pooled alpha supports nominal and ordinal, not {level}")
    return float(_quiet(lambda: 1 - (o * d).sum() / (e * d).sum()))


def kendall_w(ranks: np.ndarray) -> np.ndarray:
    """Kendall's W with the tie correction, for rankings of shape (..., m raters, n objects).

    Ranks may be given with ties in any form (``3, 1, 1, 2``); each rater's ranks are
    turned into midranks (``4, 1.5, 1.5, 3``) with ``scipy.stats.rankdata``. Then
    (Kendall & Babington Smith 1939; Siegel & Castellan 1988, eq. 9.16)::

        W = 12 S / (m^2 (n^3 - n) - m T),   S = sum_i (R_i - m (n + 1) / 2)^2,
        T = sum over raters and tie groups of (t^3 - t)

    where R_i is object i's rank sum and t the size of a tie group. scipy, statsmodels
    and krippendorff have no W; this is the textbook formula, tested against a hand
    computation. Returns nan where every rater tied everything (0 / 0).
    """
    ranks = np.asarray(ranks, dtype=float)
    m, n = ranks.shape[-2], ranks.shape[-1]
    mid = rankdata(ranks, method="average", axis=-1)
    rank_sums = mid.sum(axis=-2)
    s = ((rank_sums - m * (n + 1) / 2) ** 2).sum(axis=-1)
    # Each member of a tie group of size t counts t^2 - 1, so a group adds t^3 - t.
    group_size = (mid[..., :, None] == mid[..., None, :]).sum(axis=-1)
    t = (group_size**2 - 1).sum(axis=(-2, -1))
    denominator = m**2 * (n**3 - n) - m * t
    with np.errstate(divide="ignore", invalid="ignore"):
        w = np.where(denominator > 0, 12 * s / np.where(denominator > 0, denominator, 1), np.nan)
    return np.asarray(w)


def bootstrap_shares(counts: np.ndarray, reps: int, rng: np.random.Generator, level: float = 0.95) -> np.ndarray:
    """Percentile bootstrap intervals of each column's share of the total, resampling rows (units).

    ``counts`` is units x categories (e.g. one row per sample: wins, ties, losses over its
    judgments). Resampling whole samples keeps the judgments of one sample together.
    Returns a categories x 2 array of (low, high) shares in [0, 1]; nan when ``reps`` is 0
    or there are no units.
    """
    counts = np.asarray(counts, dtype=float)
    n, c = counts.shape
    if reps <= 0 or n == 0:
        return np.full((c, 2), np.nan)
    chunk = max(1, 2_000_000 // n)
    shares = []
    for done in range(0, reps, chunk):
        size = min(chunk, reps - done)
        picked = counts[rng.integers(0, n, size=(size, n))].sum(axis=1)  # size x c
        totals = picked.sum(axis=1, keepdims=True)
        with np.errstate(divide="ignore", invalid="ignore"):
            shares.append(picked / totals)
    all_shares = np.concatenate(shares)
    tail = (1 - level) / 2 * 100
    return np.nanpercentile(all_shares, [tail, 100 - tail], axis=0).T
