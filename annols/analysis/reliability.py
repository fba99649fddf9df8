"""Reliability of the conclusion: would another half of the study rank the systems the same way?

Input is a table of system scores (:data:`SCORE_COLUMNS`: one row per judgment's score of
one system, higher is better), made from the judgments table by the style's function in
:data:`SCORES` (pairwise: 1 for a win, 0.5 for a tie, 0 for a loss, for each of the two
systems; ratings: the rating; ranking: N + 1 - rank). A style added later registers its
own (``SCORES["best-worst"] = ...``). A system's score is the mean of its scores.

- Split-half reliability, per aspect with three or more systems: the annotators are split
  at random into two halves (sizes floor(k/2) and ceil(k/2)), or the items when no item has
  two annotators; each half's system scores are correlated (Pearson, over systems) and
  Spearman-Brown corrected, 2r / (1 + r). The table gives the median over
  :data:`SPLITS` random splits and the 2.5th and 97.5th percentiles as the interval. A
  split where a half has no score of some system, or its scores are all equal, is left out.
  Split i draws ``numpy.random.default_rng([seed, aspect index, i]).permutation`` of the
  units in sorted order.
- Order probability, per aspect and pair of systems (name order): the share of bootstrap
  resamples of the items (``default_rng([seed, aspect index]).integers(0, n, (chunk, n))``
  in chunks of :data:`annols.analysis.bootstrap.CHUNK` numbers, items in sorted order) in
  which the pair keeps the order of the full study (a tie counts half); empty where the
  full study has them equal.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd  # type: ignore[import-untyped, unused-ignore]

from annols.analysis import bootstrap, cells, pairwise, ranking, ratings
from annols.analysis.naming import by_aspect_text, natural_key

SCORE_COLUMNS = ["aspect", "task_key", "annotator", "system", "score"]
SPLITS = 200
LEVEL = 0.95

ScoreFunction = Callable[[pd.DataFrame, Any], pd.DataFrame]


def pairwise_scores(tidy: pd.DataFrame, spec: Any) -> pd.DataFrame:
    tidy, aspects = by_aspect_text(tidy, spec.aspects)
    frame = pairwise.judgments(tidy, aspects)
    mine = frame["outcome"].map({"win": 1.0, "tie": 0.5, "loss": 0.0}).to_numpy(dtype=float)
    base = frame[["aspect", "task_key", "annotator"]]
    first = base.assign(system=frame["system"].to_numpy(), score=mine)
    second = base.assign(system=frame["opponent"].to_numpy(), score=1 - mine)
    return _ordered(pd.concat([first, second], ignore_index=True), aspects)


def ratings_scores(tidy: pd.DataFrame, spec: Any) -> pd.DataFrame:
    return scores_of_ratings(*ratings.rows(tidy, spec))


def scores_of_ratings(frame: pd.DataFrame, aspects: list[str]) -> pd.DataFrame:
    """The scores of :func:`annols.analysis.ratings.rows`: already in :func:`_ordered`'s aspect order and
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


SCORES: dict[str, ScoreFunction] = {"pairwise": pairwise_scores, "ratings": ratings_scores,
                                    "ranking": ranking_scores}  # fmt: skip


def split_by(part: pd.DataFrame) -> str:
    """ "annotator" when some item has two or more annotators, else "task_key" (items)."""
    items, _ = pd.factorize(part["task_key"])
    annotators, _ = pd.factorize(part["annotator"])
    known = (items >= 0) & (annotators >= 0)
    items, annotators = items[known], annotators[known]
    # One annotator seen per item (the last written wins): an item has two when a row's annotator differs.
    seen = np.full(int(items.max()) + 1 if len(items) else 0, -1, dtype=annotators.dtype)
    seen[items] = annotators
    return "annotator" if (seen[items] != annotators).any() else "task_key"


def split_half(scores: pd.DataFrame, seed: int, splits: int = SPLITS) -> pd.DataFrame:
    """Per aspect: systems, what was split, units, splits used, median corrected r and its interval."""
    rows = []
    for a, ((aspect,), part) in enumerate(cells.groups(scores, ["aspect"])):
        unit = split_by(part)
        # Each unit's sum and count of scores per system: a half's scores are sums over its units.
        units, systems, sums, counts = cells.sums_and_counts(part, unit, "system", "score")
        values = []
        if len(systems) >= 3 and len(units) >= 2:
            for i in range(splits):
                order = np.random.default_rng([seed, a, i]).permutation(len(units))
                first = np.zeros(len(units), dtype=bool)
                first[order[: len(units) // 2]] = True
                r = _half_r(sums, counts, first)
                if r == r:
                    values.append(r)
        rows.append(_split_row(str(aspect), len(systems), unit, len(units), values))
    columns = ["aspect", "systems", "split", "units", "splits", "split-half r", "CI low", "CI high"]
    return pd.DataFrame(rows, columns=columns)


def _half_r(sums: np.ndarray, counts: np.ndarray, first: np.ndarray) -> float:
    n1, n2 = counts[first].sum(axis=0), counts[~first].sum(axis=0)
    if (n1 == 0).any() or (n2 == 0).any():
        return np.nan
    s1, s2 = sums[first].sum(axis=0) / n1, sums[~first].sum(axis=0) / n2
    if np.ptp(s1) == 0 or np.ptp(s2) == 0:
        return np.nan
    r = float(np.corrcoef(s1, s2)[0, 1])
    return 2 * r / (1 + r) if r > -1 else np.nan


def _split_row(aspect: str, systems: int, unit: str, units: int, values: list[float]) -> list[Any]:
    what = "annotators" if unit == "annotator" else "items"
    if not values:
        return [aspect, systems, what, units, 0, np.nan, np.nan, np.nan]
    tail = (1 - LEVEL) / 2 * 100
    low, high = np.percentile(values, [tail, 100 - tail])
    return [aspect, systems, what, units, len(values), float(np.median(values)), float(low), float(high)]


def order_probabilities(scores: pd.DataFrame, seed: int, reps: int) -> pd.DataFrame:
    """Per aspect and pair of systems: both scores, the higher, and the bootstrap probability the order holds."""
    rows = []
    for a, ((aspect,), part) in enumerate(cells.groups(scores, ["aspect"])):
        _, systems, s, c = cells.sums_and_counts(part, "task_key", "system", "score")
        order = sorted(range(len(systems)), key=lambda k: natural_key(systems[k]))  # pairs in natural order
        systems, s, c = [systems[k] for k in order], s[:, order], c[:, order]
        full = s.sum(axis=0) / c.sum(axis=0)
        resampled = _resampled(s, c, reps, np.random.default_rng([seed, a]))  # reps x systems
        for i, j in itertools.combinations(range(len(systems)), 2):
            sign = np.sign(full[i] - full[j])
            if sign == 0 or not len(resampled):
                p = np.nan
            else:
                d = np.sign(resampled[:, i] - resampled[:, j])
                d = d[~np.isnan(d)]
                p = float(((d == sign).sum() + 0.5 * (d == 0).sum()) / len(d)) if len(d) else np.nan
            higher = systems[i] if full[i] > full[j] else systems[j] if full[j] > full[i] else ""
            rows.append([str(aspect), systems[i], systems[j], full[i], full[j], higher, p])
    columns = ["aspect", "system", "opponent", "system score", "opponent score", "higher", "P(order holds)"]
    return pd.DataFrame(rows, columns=columns)


def _resampled(sums: np.ndarray, counts: np.ndarray, reps: int, rng: np.random.Generator) -> np.ndarray:
    """reps x systems: each bootstrap resample's mean scores, drawn in chunks (bounded memory)."""
    n = len(sums)
    if reps <= 0 or n == 0:
        return np.zeros((0, sums.shape[1]))
    out = []
    chunk = max(1, bootstrap.CHUNK // n)
    for done in range(0, reps, chunk):
        times = bootstrap._times(rng, n, min(chunk, reps - done))
        with np.errstate(divide="ignore", invalid="ignore"):
            out.append((times @ sums) / (times @ counts))
    return np.concatenate(out)


def verdict(r: float) -> str:
    """Words for a split-half r: stable from 0.9, fairly stable from 0.7, else not stable."""
    if r != r:
        return "cannot be judged"
    return "stable" if r >= 0.9 else "fairly stable" if r >= 0.7 else "not stable"
