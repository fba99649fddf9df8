"""Agreement over units (an item, or one output or row of an item) rated by several annotators.

Every style's agreement table is built from the same two numbers per group of units:
Fleiss' kappa over the units with the most common number of ratings (it needs the same
number per unit) and Krippendorff's alpha over every unit with two or more. Where neither
can be computed, :func:`why_not` gives the sentence the report shows instead.

By the scale (``docs/statistics.md``, "Agreement"): :func:`weighted_kappa` (Cohen 1968, weights
from the values), :func:`each_against_the_rest` (each annotator's answers paired with the
others' on the same units) and :func:`system_agreement` (annotators' system scores correlated
pair by pair) serve every style's tables and the judges' section.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd  # type: ignore[import-untyped, unused-ignore]
from scipy import stats as scipy_stats

from annols.analysis import cells
from annols.analysis.inference import stats
from annols.analysis.results import percent

ONE_ANNOTATOR = "each item has one annotator"
ONE_CATEGORY = "only one category was used"
NOTHING = "nothing was answered"
COLUMNS = ["units (alpha)", "Krippendorff alpha", "units (Fleiss)", "ratings per unit", "Fleiss kappa"]


def unit_counts(frame: pd.DataFrame, units: Sequence[str], value: str, categories: Sequence[Any]) -> np.ndarray:
    """Units x categories: how many ratings each unit got in each category (categories in the order given)."""
    if not len(frame):
        return np.zeros((0, len(categories)), dtype=np.int64)
    by_codes = cells.unit_counts(frame, units, value, categories)  # the same, with less memory
    if by_codes is not None:
        return by_codes
    counts = frame.groupby([*units, value], observed=True).size().unstack(value)
    return counts.reindex(columns=list(categories)).fillna(0).to_numpy(dtype=np.int64)


def why_not(counts: np.ndarray) -> str:
    """Why agreement over these units cannot be computed; "" when it can."""
    if not len(counts):
        return NOTHING
    pairable = counts[counts.sum(axis=1) >= 2]
    if not len(pairable):
        return ONE_ANNOTATOR
    if (pairable.sum(axis=0) > 0).sum() < 2:
        return ONE_CATEGORY
    return ""


def shared_reason(counts: Sequence[np.ndarray]) -> str:
    """Why no group's agreement can be computed, when every group lacks the data for it; else ""."""
    return shared_reason_of([why_not(c) for c in counts])


def shared_reason_of(found: Sequence[str]) -> str:
    """:func:`shared_reason` from each group's :func:`why_not`, when the counts are not kept."""
    if found and all(r in (ONE_ANNOTATOR, NOTHING) for r in found):
        return ONE_ANNOTATOR if ONE_ANNOTATOR in found else NOTHING
    return ""


def fleiss_and_alpha(counts: np.ndarray, level: str = "nominal", domain: Any = None,
                     fleiss: bool = True) -> list[Any]:  # fmt: skip
    """[units (alpha), alpha, units (Fleiss), ratings per unit, Fleiss kappa] (:data:`COLUMNS`)."""
    raters = counts.sum(axis=1) if len(counts) else np.zeros(0, dtype=np.int64)
    pairable = raters[raters >= 2]
    alpha = stats.krippendorff_alpha(counts, level, domain)
    if not fleiss or not len(pairable):
        return [len(pairable), alpha, 0, pd.NA, np.nan]
    common = int(np.bincount(pairable).argmax())
    full = raters == common
    full = counts if full.all() else counts[full]  # no copy when every unit has the common number (16 MB)
    return [len(pairable), alpha, len(full), common, stats.fleiss_kappa(full)]


def observed_and_chance(counts: np.ndarray) -> tuple[int, float, float, int, float]:
    """Units x categories rating counts: (units with two or more ratings, the share of agreeing pairs of
    ratings among them in %, Krippendorff's alpha (nominal), units with the most common number of ratings,
    Fleiss' kappa over those)."""
    raters = counts.sum(axis=1) if len(counts) else np.zeros(0)
    pairable = counts[raters >= 2]
    m = pairable.sum(axis=1)
    agree = percent((pairable * (pairable - 1)).sum(), (m * (m - 1)).sum())
    common = int(np.bincount(m.astype(int)).argmax()) if len(m) else 0
    full = pairable[m == common] if common else pairable[:0]
    return len(pairable), float(agree), stats.krippendorff_alpha(counts, "nominal"), len(full), stats.fleiss_kappa(full)


def interval_alpha(units: np.ndarray, values: np.ndarray) -> float:
    """Krippendorff's alpha with the interval metric, from each rating's unit (0..n-1) and value.

    ``krippendorff.alpha`` builds units x values x values arrays, values being the distinct
    numbers given: a slider's hundreds of values over thousands of units need gigabytes.
    With the metric (c - k)^2 the coincidence sums have a closed form (Krippendorff 2011):
    a unit's ordered pairs give sum (v_i - v_j)^2 = 2 (m S2 - S1^2) from its count m, sum
    S1 and sum of squares S2, so D_o = sum_u 2 (m_u S2_u - S1_u^2) / (m_u - 1) / n and
    D_e = 2 (n S2 - S1^2) / (n (n - 1)) over the n pairable values. Tested against
    ``krippendorff.alpha`` and a computation from the coincidences.
    """
    units = np.asarray(units, dtype=np.int64)
    values = np.asarray(values, dtype=float)
    m = np.bincount(units) if len(units) else np.zeros(0, dtype=np.int64)
    keep = (m >= 2)[units]  # not a row-sized copy of the counts
    if not keep.all():  # no copies when every unit is pairable (19 MB at 1.2 million ratings)
        units, values = units[keep], values[keep]
    del keep
    values = values - values.mean() if len(values) else values  # alpha ignores a shift; sums stay small
    n = len(values)
    if n < 2:
        return np.nan
    m = np.bincount(units).astype(float)
    s1, s2 = np.bincount(units, values), np.bincount(units, values**2)
    pairable = m >= 2
    observed = (2 * (m[pairable] * s2[pairable] - s1[pairable] ** 2) / (m[pairable] - 1)).sum() / n
    expected = 2 * (n * (values**2).sum() - values.sum() ** 2) / (n * (n - 1))
    return float(1 - observed / expected) if expected > 0 else np.nan


def reasons(names: Sequence[str], counts: Sequence[np.ndarray]) -> list[str]:
    """One sentence per group whose agreement is undefined, naming the group and why."""
    return reasons_of(names, [why_not(c) for c in counts])


def reasons_of(names: Sequence[str], found: Sequence[str]) -> list[str]:
    """:func:`reasons` from each group's :func:`why_not`, when the counts are not kept."""
    return [f"{name}: no agreement statistic, {reason}." for name, reason in zip(names, found, strict=True) if reason]


def table_frame(rows: list[list[Any]], first: Sequence[str]) -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=[*first, *COLUMNS])
    frame["ratings per unit"] = frame["ratings per unit"].astype("Int64")
    return frame


# --- by the scale: weighted kappa, each annotator against the rest, agreement on the systems --------------------

NUMERIC_LEVELS = ("ordinal", "interval", "ratio")
EACH_COLUMNS = ["annotator", "units", "pairs", "agreement %", "Cohen kappa", "Krippendorff alpha",
                "Spearman (others' mean)"]  # fmt: skip
SYSTEM_COLUMNS = ["annotators", "annotator pairs", "systems", "mean Kendall tau", "mean Spearman"]
MIN_SYSTEMS = 3  # a pair of annotators' system scores correlate over at least this many systems
EACH_NOTE = ("Each annotator against the others: every answer of the annotator paired with each other annotator's "
             "answer on the same unit. Agreement % is the share of equal pairs; Cohen's kappa is over those pairs "
             "(quadratic-weighted by the values' distances for numbers); Krippendorff's alpha at the question's "
             "level over those pairs (each pair a unit); for numbers, Spearman's rho between the annotator's "
             "answer and the others' mean answer on each unit.")
SYSTEM_NOTE = (f"System-level agreement: each annotator's score of each system (over the items they judged), "
               f"Kendall's tau-b and Spearman's rho between every pair of annotators over the systems both "
               f"scored (at least {MIN_SYSTEMS}), averaged over the pairs (scipy).")


def weighted_kappa(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray, power: int = 2) -> float:
    """Cohen's weighted kappa of two raters' numbers on the same units: 1 - sum(w O) / sum(w E), O the
    observed and E the chance (product of margins) shares of each pair of values, with disagreement
    weights w = |v_i - v_j|^power from the values themselves (2: quadratic, 1: linear; Cohen 1968).
    With equally spaced values this is statsmodels' ``cohens_kappa(wt="quadratic")`` (tested); unlike
    weights from category positions, a value nobody used does not shrink the distance across it.
    Quadratic weights have a closed form (mean squared difference over its value under independence),
    so a slider's hundreds of values need no values x values table."""
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if not len(x) or len(np.unique(np.concatenate([pd.unique(x), pd.unique(y)]))) < 2:  # not 2 x len copies
        return np.nan
    if power == 2:  # sum(w E) = E(X - Y)^2 for independent X, Y with the margins: no values x values table
        chance = float(x.var() + y.var() + (x.mean() - y.mean()) ** 2)
        squares = x - y
        np.multiply(squares, squares, out=squares)  # (x - y) ** 2 in place: the same floats
        return float(1 - np.mean(squares) / chance) if chance > 0 else np.nan
    values = np.unique(np.concatenate([x, y]))
    i, j = np.searchsorted(values, x), np.searchsorted(values, y)
    observed = np.zeros((len(values), len(values)))
    np.add.at(observed, (i, j), 1.0)
    observed /= len(x)
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0))
    weights = np.abs(values[:, None] - values[None, :]) ** power
    chance = float((weights * expected).sum())
    return float(1 - (weights * observed).sum() / chance) if chance > 0 else np.nan


def pair_alpha(x: np.ndarray, y: np.ndarray, level: str) -> float:
    """Krippendorff's alpha of pairs of answers, each pair one unit of two values (over the values given: a
    value of the scale nobody gave changes no metric)."""
    if level == "interval":
        pairs = np.arange(len(x))
        return interval_alpha(np.concatenate([pairs, pairs]), np.concatenate([x, y]).astype(float))
    cells = _pair_cells(x, y) if len(x) > stats.DIRECT_UNITS and level in ("nominal", "ordinal") else None
    if cells is not None:  # the pooled alpha from the (value, value) cells: no row per pair (32 MB at 800,000)
        return stats.pooled_pair_alpha(cells, level)
    codes, values = pd.factorize(np.concatenate([x, y]), sort=True)  # sorted: numbers in their order
    counts = np.zeros((len(x), len(values)), dtype=np.int64)
    rows = np.arange(len(x))
    np.add.at(counts, (rows, codes[: len(x)]), 1)
    np.add.at(counts, (rows, codes[len(x) :]), 1)
    domain = [float(v) for v in values] if level in NUMERIC_LEVELS else None
    return stats.krippendorff_alpha(counts, level, domain)


def _pair_cells(x: np.ndarray, y: np.ndarray) -> np.ndarray | None:
    """The values x values table of how many pairs have each (x, y) value, the values sorted as ``pd.factorize(...,
    sort=True)`` sorts them; None unless the values are numbers without nan (then :func:`pair_alpha` counts rows)."""
    if x.dtype.kind not in "iuf" or y.dtype.kind not in "iuf":
        return None
    values = np.unique(np.concatenate([pd.unique(x), pd.unique(y)]))  # the distinct values, not 1.6 million
    if values.dtype.kind == "f" and np.isnan(values).any():
        return None
    key = np.searchsorted(values, x)
    key *= len(values)
    key += np.searchsorted(values, y)
    return np.bincount(key, minlength=len(values) ** 2).reshape(len(values), len(values))


def cohen_or_weighted(x: np.ndarray, y: np.ndarray, level: str) -> float:
    """Cohen's kappa of two raters' answers: quadratic-weighted for numbers (ordinal or interval), plain for codes."""
    if level in NUMERIC_LEVELS:
        return weighted_kappa(np.asarray(x, dtype=float), np.asarray(y, dtype=float))  # no copy of floats
    values = sorted(set(x) | set(y), key=str)
    index = {v: k for k, v in enumerate(values)}
    table = np.zeros((len(values), len(values)))
    np.add.at(table, ([index[v] for v in x], [index[v] for v in y]), 1)
    return stats.cohens_kappa(table)


def each_against_the_rest(frame: pd.DataFrame, level: str) -> list[list[Any]]:
    """:data:`EACH_COLUMNS` rows, one per annotator, from (unit, annotator, value) rows (one answer per unit
    and annotator): every answer of the annotator paired with each other annotator's answer on the same unit.
    Agreement % is the share of equal pairs; Cohen's kappa (quadratic-weighted for numbers) and
    Krippendorff's alpha at ``level`` are over those pairs; for numbers, Spearman's rho between the
    annotator's answer and the mean of the others' on each unit."""
    unit = _first_seen(frame["unit"])
    who, names = _sorted_codes(frame["annotator"])  # pairs of small integers, not of names
    value = frame["value"].to_numpy()
    # one answer per unit and annotator (the last), as drop_duplicates(["unit", "annotator"], keep="last"); a
    # count of each pair first: a hash table of every row's key took 40 MB at 100,000 tasks
    key = unit * (len(names) + 1) + who + 1
    if len(key) and np.bincount(key).max() > 1:
        last = ~pd.Series(key).duplicated(keep="last").to_numpy()
        unit, who, value = unit[last], who[last], value[last]
        del last
    del key
    unit, who = unit.astype(np.int32), who.astype(np.int32)  # row numbers: int32 halves these arrays
    # Each answer's unit's answers, as part.merge(part, on="unit") orders them (the left rows in their order,
    # each with its unit's rows in theirs), built an annotator at a time: no table of every pair (at 100,000
    # tasks the merge of a ratings aspect held about 200 MB of pairs and names).
    by_unit = np.argsort(unit, kind="stable").astype(np.int32)
    size = np.bincount(unit).astype(np.int32) if len(unit) else np.zeros(0, dtype=np.int32)
    start = np.cumsum(size, dtype=np.int32) - size
    numeric = level in NUMERIC_LEVELS
    rows = []
    for code in np.unique(who):
        left = np.flatnonzero(who == code).astype(np.int32)
        many = size[unit[left]]
        place = np.arange(int(many.sum()), dtype=np.int32)  # each pair's place among its unit's answers
        place -= np.repeat(np.cumsum(many, dtype=np.int32) - many, many)
        place += np.repeat(start[unit[left]], many)
        right = by_unit[place]
        del place
        left = np.repeat(left, many)
        other = who[right] != code
        left, right = left[other], right[other]
        if not len(left):
            continue
        x, y = value[left], value[right]
        rho = np.nan
        mine = unit[left]
        del left, right, other
        units = len(np.unique(mine))
        if numeric:
            rho = _spearman_of_unit_means(mine, x, y, units)
        rows.append([names[code], units, len(x), float(percent((x == y).sum(), len(x))),
                     cohen_or_weighted(x, y, level), pair_alpha(x, y, level), rho])  # fmt: skip
        del mine, x, y  # not held into the next annotator's pairs
    return rows


def _spearman_of_unit_means(unit: np.ndarray, x: np.ndarray, y: np.ndarray, units: int) -> float:
    """Spearman's rho between x's first value and y's mean on each of the ``units`` units, in their first row's
    order: ``groupby("unit", sort=False).agg(first, mean)``. A unit's pairs are one run of rows (each answer's
    pairs follow it): then the runs' first x and summed y over their length, without the groupby's 50 MB at
    800,000 pairs (the same floats: pandas sums a group's values in row order; tested against the groupby)."""
    change = np.empty(len(unit), dtype=bool)
    change[:1] = True
    np.not_equal(unit[1:], unit[:-1], out=change[1:])
    starts = np.flatnonzero(change)
    del change
    plain = x.dtype.kind in "iuf" and y.dtype.kind in "iuf" and not np.isnan(x).any() and not np.isnan(y).any()
    if len(starts) == units and plain:  # numbers without nan: none skipped
        rest = np.add.reduceat(y.astype(float, copy=False), starts) if len(starts) else np.zeros(0)
        rest /= np.diff(np.append(starts, len(unit)))
        return correlation(x[starts], rest, "spearman")
    per_unit = pd.DataFrame({"unit": unit, "value": x, "value_other": y}).groupby("unit", sort=False).agg(
        mine=("value", "first"), rest=("value_other", "mean"))  # fmt: skip
    return correlation(per_unit["mine"], per_unit["rest"], "spearman")


def _sorted_codes(column: pd.Series) -> tuple[np.ndarray, pd.Index]:
    """``pd.factorize(column, sort=True)`` of the values as they read (names, not a categorical's own order): a
    categorical column from its codes, with no string per row (at 100,000 tasks an aspect's 1.2 million
    annotator names as objects and back held 190 MB, the report's peak)."""
    if not isinstance(column.dtype, pd.CategoricalDtype):
        return pd.factorize(column, sort=True)
    codes = column.cat.codes.to_numpy()
    used = np.unique(codes[codes >= 0])
    seen = column.cat.categories[used]
    _, names = pd.factorize(np.asarray(seen, dtype=object), sort=True)  # the same values, so the same order
    place = np.full(len(column.cat.categories) + 1, -1, dtype=np.int64)  # the last slot: -1, a missing value
    place[used] = pd.Index(names).get_indexer(seen)
    return place[codes], pd.Index(names)


def _first_seen(units: pd.Series) -> np.ndarray:
    """``pd.factorize(units, use_na_sentinel=False)[0]``; integers already numbered by their first row (0, then
    at most one more than any before: the unit codes ratings gives) are those codes, with no hash table."""
    found = units.to_numpy()
    if found.dtype.kind in "iu" and len(found) and found[0] == 0:
        bound = np.maximum.accumulate(found)
        bound[1:] = bound[:-1] + 1
        bound[0] = 0
        if (found <= bound).all() and (found >= 0).all():
            return found.astype(np.intp, copy=False)
        del bound
    return pd.factorize(units, use_na_sentinel=False)[0]


def correlation(a: Any, b: Any, method: str) -> float:
    """Pearson's r, Spearman's rho or Kendall's tau-b (scipy) of two equal-length series; nan with fewer than
    two values or a constant one."""
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if len(x) < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return np.nan
    found = {"pearson": scipy_stats.pearsonr, "spearman": scipy_stats.spearmanr, "kendall": scipy_stats.kendalltau}
    return float(found[method](x, y).statistic)


def system_agreement(scores: pd.DataFrame) -> list[Any]:
    """:data:`SYSTEM_COLUMNS` of an annotators x systems table of each annotator's system scores (nan where
    an annotator scored no output of a system): Kendall's tau-b and Spearman's rho between every pair of
    annotators over the systems both scored (at least :data:`MIN_SYSTEMS`), averaged over the pairs."""
    systems = scores.shape[1]
    taus, rhos = [], []
    values = scores.to_numpy(dtype=float)
    for i, j in itertools.combinations(range(len(values)), 2):
        both = ~(np.isnan(values[i]) | np.isnan(values[j]))
        if both.sum() >= MIN_SYSTEMS:
            taus.append(correlation(values[i][both], values[j][both], "kendall"))
            rhos.append(correlation(values[i][both], values[j][both], "spearman"))
    return [len(values), len(taus), systems, _mean(taus), _mean(rhos)]


def _mean(values: list[float]) -> float:
    found = np.array(values, dtype=float)
    return float(np.nanmean(found)) if len(found) and not np.isnan(found).all() else np.nan


# push --share-identical: the rows of the judgments table that credit a shared task's judgment to another system
# that produced the same text (annols.analysis.table), present only when there are such rows.
COPY = "copy"


def once(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` without the rows that copy a judgment to another system (``COPY``): agreement between
    annotators counts each judgment once."""
    if COPY not in frame.columns:
        return frame
    return frame[~frame[COPY].to_numpy(dtype=bool)].reset_index(drop=True)
