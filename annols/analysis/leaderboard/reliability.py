"""Reliability of the conclusion: would another half of the study rank the systems the same way?

Input is a table of system scores (:data:`SCORE_COLUMNS`: one row per judgment's score of
one system, higher is better), made from the judgments table by the style's function in
:data:`SCORES` (pairwise: 1 for a win, 0.5 for a tie, 0 for a loss, for each of the two
systems; ratings: the rating; ranking: N + 1 - rank). A style added later registers its
own (``SCORES["best-worst"] = ...``). A system's score is the mean of its scores.

- Split-half reliability, per aspect with three or more systems. What is split: the
  annotators when some item has two or more of them and they can be halved (sizes floor(k/2)
  and ceil(k/2)) in at least :data:`MIN_DISTINCT` distinct ways; otherwise the items (with 3
  annotators there are only 3 distinct 1 | 2 splits, too few to say anything). When there
  are at most :data:`SPLITS` distinct splits, every one is used once and the spread is their
  range; otherwise :data:`SPLITS` random splits (split i draws
  ``numpy.random.default_rng([seed, aspect index, i]).permutation`` of the units in sorted
  order) and the spread is their 2.5th-97.5th percentile. Each half's mean score per system
  is correlated with the other's (Pearson, over systems); the median r is Spearman-Brown
  corrected, 2r / (1 + r), only when positive: r <= 0 is reported as it is and called
  unreliable. Every figure is in [-1, 1]. The spread says how much the answer depends on the
  split, not how it would vary over new items. A split where a half has no score of some
  system, or its scores are all equal, is left out. Words (:func:`verdict`) follow the
  bands of Koo & Li (2016), who rate reliability by the low end of its interval, applied to
  the low end of the spread: stable from 0.9, reliable from 0.75, moderately reliable from
  0.5, unreliable below (three systems of equal quality can give a median near 0.9 with
  splits down to 0.3: that is unreliable).
- Order probability, per aspect and pair of systems (name order): the share of bootstrap
  resamples of the items (``default_rng([seed, aspect index]).integers(0, n, (chunk, n))``
  in chunks of :data:`annols.analysis.inference.bootstrap.CHUNK` numbers, items in sorted order) in
  which the pair keeps the order of the full study (a tie counts half), as
  1 - (misses + 1) / (resamples + 1): a finite number of resamples never shows certainty
  (with 1000, at most 0.999). Empty where the full study has them equal.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd  # type: ignore[import-untyped, unused-ignore]

from annols.analysis import cells
from annols.analysis.by_style import best_worst, pairwise, ranking, ratings
from annols.analysis.inference import bootstrap
from annols.analysis.naming import aspect_names, natural_key

SCORE_COLUMNS = ["aspect", "task_key", "annotator", "system", "score"]
SPLITS = 200
LEVEL = 0.95

ScoreFunction = Callable[[pd.DataFrame, Any], pd.DataFrame]


def pairwise_scores(tidy: pd.DataFrame, spec: Any) -> pd.DataFrame:
    aspects = aspect_names(spec.aspects)
    frame = pairwise.judgments(tidy, aspects)
    mine = frame["outcome"].map({"win": 1.0, "tie": 0.5, "loss": 0.0}).to_numpy(dtype=float)
    base = frame[["aspect", "task_key", "annotator"]]
    first = base.assign(system=frame["system"].to_numpy(), score=mine)
    second = base.assign(system=frame["opponent"].to_numpy(), score=1 - mine)
    return _ordered(pd.concat([first, second], ignore_index=True), aspects)


def ratings_scores(tidy: pd.DataFrame, spec: Any) -> pd.DataFrame:
    return scores_of_ratings(*ratings.rows(tidy, spec))


def scores_of_ratings(frame: pd.DataFrame, aspects: list[str]) -> pd.DataFrame:
    """The scores of :func:`annols.analysis.by_style.ratings.rows`: already in :func:`_ordered`'s aspect order and
    sort, so only renamed (no copy of the rating rows; ratings.judgments sorts by the same keys)."""
    # The score stays as the rating's dtype: each reader takes it as float (a float copy is 38 MB at 100,000 tasks).
    return frame.rename(columns={"rating": "score"})[SCORE_COLUMNS].reset_index(drop=True)


def ranking_scores(tidy: pd.DataFrame, spec: Any) -> pd.DataFrame:
    dimensions = [d.name for d in spec.dimensions]
    frame = ranking.judgments(tidy, dimensions, len(spec.positions))
    frame = frame.assign(score=len(spec.positions) + 1 - frame["rank"].astype(float))
    return _ordered(frame.rename(columns={"dimension": "aspect"})[SCORE_COLUMNS], dimensions)


def _ordered(frame: pd.DataFrame, aspects: list[str]) -> pd.DataFrame:
    aspect = frame["aspect"]
    if isinstance(aspect.dtype, pd.CategoricalDtype):  # a string per aspect, not one per row
        aspect = aspect.cat.rename_categories([str(c) for c in aspect.cat.categories])
    else:
        aspect = aspect.astype(str)
    frame = frame.assign(aspect=pd.Categorical(aspect, categories=aspects, ordered=True))
    frame = frame[frame["aspect"].notna()]
    return frame.sort_values(["aspect", "system", "task_key", "annotator"], kind="stable").reset_index(drop=True)


def best_worst_scores(tidy: pd.DataFrame, spec: Any) -> pd.DataFrame:
    """The scores of a best-worst study: each showing's value (1 best, -1 worst, 0 neither) times 100, its item
    (pool) as ``task_key``, so a system's mean is its counting score %. Not in :data:`SCORES`: best-worst
    has its own split-half (:func:`annols.analysis.by_style.best_worst.split_half`); its rank intervals read these."""
    rows, aspects = best_worst.named_judgments(tidy, spec)
    frame = rows.assign(task_key=rows[best_worst.UNIT], score=100 * rows["value"].astype(float))
    return _ordered(frame[SCORE_COLUMNS], aspects)


SCORES: dict[str, ScoreFunction] = {"pairwise": pairwise_scores, "ratings": ratings_scores,
                                    "ranking": ranking_scores}  # fmt: skip


MIN_DISTINCT = 20  # fewer distinct ways to halve the annotators than this: the items are split instead
# Koo & Li (2016), "A guideline of selecting and reporting intraclass correlation coefficients for reliability
# research", J. Chiropractic Medicine 15(2): below 0.5 poor, 0.5-0.75 moderate, 0.75-0.9 good, above 0.9 excellent.
BANDS = ((0.9, "stable"), (0.75, "reliable"), (0.5, "moderately reliable"))
UNRELIABLE = "unreliable"
SPLIT_COLUMNS = ["aspect", "systems", "split", "units", "distinct splits", "splits", "r (median)", "split-half r",
                 "low", "high", "spread", "verdict"]  # fmt: skip


MANY = 10**12  # distinct splits are counted up to this (2,000 items have about 10^600: a table cell cannot)


def distinct_splits(n: int) -> int:
    """How many different ways n units split into halves of floor(n/2) and ceil(n/2) (a split and its mirror
    are one way: with 3 annotators, 3), counted up to :data:`MANY`."""
    if n < 2:
        return 0
    if n > 60:  # C(61, 30) / 2 is already above MANY
        return MANY
    ways = math.comb(n, n // 2)
    return min(ways // 2 if n % 2 == 0 else ways, MANY)


def split_by(part: pd.DataFrame) -> str:
    """ "annotator" when some item has two or more annotators and the annotators can be halved in at least
    :data:`MIN_DISTINCT` distinct ways, else "task_key" (items)."""
    items, _ = pd.factorize(part["task_key"])
    annotators, names = pd.factorize(part["annotator"])
    known = (items >= 0) & (annotators >= 0)
    items, annotators = items[known], annotators[known]
    # One annotator seen per item (the last written wins): an item has two when a row's annotator differs.
    seen = np.full(int(items.max()) + 1 if len(items) else 0, -1, dtype=annotators.dtype)
    seen[items] = annotators
    shared = bool((seen[items] != annotators).any())
    return "annotator" if shared and distinct_splits(len(names)) >= MIN_DISTINCT else "task_key"


def _halves(units: int, seed: int, aspect: int, splits: int) -> tuple[list[np.ndarray], bool]:
    """The first halves (boolean masks) to use, and whether they are every distinct split: all of them when
    there are at most ``splits``, else ``splits`` random ones (split i: ``default_rng([seed, aspect, i])``)."""
    half = units // 2
    if distinct_splits(units) <= splits:
        masks = []
        for chosen in itertools.combinations(range(units), half):
            if units % 2 == 0 and 0 not in chosen:  # even: the mirror of a split with unit 0 in its first half
                continue
            mask = np.zeros(units, dtype=bool)
            mask[list(chosen)] = True
            masks.append(mask)
        return masks, True
    masks = []
    for i in range(splits):
        order = np.random.default_rng([seed, aspect, i]).permutation(units)
        mask = np.zeros(units, dtype=bool)
        mask[order[:half]] = True
        masks.append(mask)
    return masks, False


def split_half(scores: pd.DataFrame, seed: int, splits: int = SPLITS) -> pd.DataFrame:
    """Per aspect: :data:`SPLIT_COLUMNS` (what was split, how many distinct ways, the median r, its
    Spearman-Brown correction where positive, the spread over splits and the verdict)."""
    rows = []
    for a, ((aspect,), part) in enumerate(cells.groups(scores, ["aspect"])):
        unit = split_by(part)
        # Each unit's sum and count of scores per system: a half's scores are sums over its units.
        units, systems, sums, counts = cells.sums_and_counts(part, unit, "system", "score")
        values: list[float] = []
        every = False
        if len(systems) >= 3 and len(units) >= 2:
            masks, every = _halves(len(units), seed, a, splits)
            values = [r for r in (_half_r(sums, counts, m) for m in masks) if r == r]
        rows.append(_split_row(str(aspect), len(systems), unit, len(units), values, every))
    return pd.DataFrame(rows, columns=SPLIT_COLUMNS)


def _half_r(sums: np.ndarray, counts: np.ndarray, first: np.ndarray) -> float:
    """Pearson's r (over systems) of the two halves' mean scores, uncorrected; nan when undefined."""
    n1, n2 = counts[first].sum(axis=0), counts[~first].sum(axis=0)
    if (n1 == 0).any() or (n2 == 0).any():
        return np.nan
    s1, s2 = sums[first].sum(axis=0) / n1, sums[~first].sum(axis=0) / n2
    if np.ptp(s1) == 0 or np.ptp(s2) == 0:
        return np.nan
    return float(np.clip(np.corrcoef(s1, s2)[0, 1], -1.0, 1.0))


def spearman_brown(r: float) -> float:
    """2r / (1 + r) for r > 0; r itself otherwise: the correction assumes the halves measure the same thing,
    which a correlation of zero or below denies (and below zero it would leave [-1, 1])."""
    return 2 * r / (1 + r) if r > 0 else r


def _split_row(aspect: str, systems: int, unit: str, units: int, values: list[float], every: bool) -> list[Any]:
    what = "annotators" if unit == "annotator" else "items"
    ways = distinct_splits(units)
    if not values:
        return [aspect, systems, what, units, ways, 0, np.nan, np.nan, np.nan, np.nan, "", verdict(np.nan)]
    r = float(np.median(values))
    if every:  # every way there is: their range, not percentiles that would pretend to more splits
        low, high, spread = min(values), max(values), f"range of all {len(values)} distinct splits"
    else:
        tail = (1 - LEVEL) / 2 * 100
        low, high = np.percentile(values, [tail, 100 - tail])
        spread = f"2.5th-97.5th percentile of {len(values)} random splits"
    low, high = spearman_brown(float(low)), spearman_brown(float(high))
    # The words follow the low end: a median of 0.92 whose splits reach down to 0.27 is not stable.
    return [aspect, systems, what, units, ways, len(values), r, spearman_brown(r), low, high, spread, verdict(low)]


def order_probabilities(scores: pd.DataFrame, seed: int, reps: int) -> pd.DataFrame:
    """Per aspect and pair of systems: both scores, the higher, and the bootstrap probability the order holds."""
    rows = []
    for a, ((aspect,), part) in enumerate(cells.groups(scores, ["aspect"])):
        _, systems, s, c = cells.sums_and_counts(part, "task_key", "system", "score")
        order = sorted(range(len(systems)), key=lambda k: natural_key(systems[k]))  # pairs in natural order
        systems, s, c = [systems[k] for k in order], s[:, order], c[:, order]
        full = s.sum(axis=0) / c.sum(axis=0)
        resampled = bootstrap.means(s, c, reps, np.random.default_rng([seed, a]))  # reps x systems
        for i, j in itertools.combinations(range(len(systems)), 2):
            sign = np.sign(full[i] - full[j])
            if sign == 0 or not len(resampled):
                p = np.nan
            else:
                d = np.sign(resampled[:, i] - resampled[:, j])
                d = d[~np.isnan(d)]
                # 1 - P is a Monte Carlo p-value: (misses + 1) / (resamples + 1), never 0 (Davison & Hinkley 1997).
                misses = (d == -sign).sum() + 0.5 * (d == 0).sum()
                p = float(1 - (misses + 1) / (len(d) + 1)) if len(d) else np.nan
            higher = systems[i] if full[i] > full[j] else systems[j] if full[j] > full[i] else ""
            rows.append([str(aspect), systems[i], systems[j], full[i], full[j], higher, p])
    columns = ["aspect", "system", "opponent", "system score", "opponent score", "higher", "P(order holds)"]
    return pd.DataFrame(rows, columns=columns)


def verdict(r: float) -> str:
    """Words for a split-half reliability (:data:`BANDS`, Koo & Li 2016): stable from 0.9, reliable from 0.75,
    moderately reliable from 0.5, else unreliable."""
    if r != r:
        return "cannot be judged"
    return next((word for floor, word in BANDS if r >= floor), UNRELIABLE)
