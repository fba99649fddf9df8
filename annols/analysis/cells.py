"""Sums and counts per cell of categorical keys, by their codes: what pandas' groupby gives, with less memory.

At 100,000 ratings tasks a groupby or ``pivot_table`` over the 4.8 million rating rows
makes several row-sized int64 arrays and a hash table (150 to 250 MB above the rows).
Here the keys' codes make one integer per row (mixed radix, a digit per key), and
``np.bincount`` sums into a dense array of every cell: one row-sized key and two
cell-sized results.

The results are pandas' own, to the bit: counts always; sums and means only when every
summation order gives the same float (:func:`exact`: multiples of 1/1024 whose sums stay far
below 2**53, as scale codes, ranks, win / tie / loss scores and integer sliders are).
Otherwise, or when the keys are not categorical, or when the cells would far outnumber the
rows, each function falls back to the pandas code it replaces.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import pandas as pd  # type: ignore[import-untyped, unused-ignore]

_STEP = 1024.0  # values on this grid sum exactly, in any order, while the total stays below 2**53 steps
CHUNK = 1 << 20  # rows keyed at a time
# The judgments' column naming each row's item where an item holds several tasks (a pool's context: best-worst's
# tuples, a conversation's turns), set by the report's collector; here, the lowest module every analysis imports.
UNIT = "unit"


def exact(values: np.ndarray) -> bool:
    """Whether any order of summing ``values`` (no nan) gives the same float sum: every value is a multiple of
    1/1024 and the total of their magnitudes, in those steps, stays below 2**53."""
    total = _grid_total(np.asarray(values, dtype=float))
    return total is not None and total < 2.0**53


def _grid_total(values: np.ndarray) -> float | None:
    """The sum of the values' magnitudes in steps of 1/1024 when every value is finite and on that grid, else
    None."""
    scaled = np.abs(values) * _STEP
    if not np.isfinite(scaled).all() or not (scaled == np.floor(scaled)).all():
        return None
    return float(scaled.sum())


def _categoricals(frame: pd.DataFrame, names: Sequence[str]) -> list[pd.Categorical] | None:
    columns = [frame[k].array for k in names]
    return columns if all(isinstance(c, pd.Categorical) for c in columns) else None


def _radix(codes: Sequence[np.ndarray], sizes: Sequence[int]) -> np.ndarray:
    """One int64 per row, a digit per key (its code, 0..size-1), -1 where a key is missing (code -1)."""
    key = np.zeros(len(codes[0]) if len(codes) else 0, dtype=np.int64)
    missing = np.zeros(len(key), dtype=bool)
    for c, size in zip(codes, sizes, strict=True):
        key *= size
        key += c
        missing |= c < 0
    key[missing] = -1
    return key


def _sizes(columns: Sequence[pd.Categorical]) -> list[int]:
    return [max(1, len(c.categories)) for c in columns]


def _tally(codes: Sequence[np.ndarray], sizes: Sequence[int], values: np.ndarray | None
           ) -> tuple[np.ndarray, np.ndarray | None] | None:  # fmt: skip
    """Per cell: the count of rows and (with ``values``) their sum; rows with a missing key left out. Taken
    :data:`CHUNK` rows at a time, so the row-sized transients stay small; None when the sums would not be
    exact (:func:`exact`)."""
    cells = int(np.prod(sizes))
    counts: np.ndarray = np.zeros(cells, dtype=np.int32 if len(codes[0]) < 2**31 else np.int64)  # half of int64
    sums = np.zeros(cells) if values is not None else None
    total = 0.0
    for start in range(0, len(codes[0]) if len(codes) else 0, CHUNK):
        key = _radix([c[start : start + CHUNK] for c in codes], sizes)
        kept = key >= 0
        key = key[kept]
        np.add(counts, np.bincount(key, minlength=cells), out=counts, casting="same_kind")
        if values is not None and sums is not None:
            chunk = np.asarray(values[start : start + CHUNK], dtype=float)[kept]
            grid = _grid_total(chunk)
            if grid is None or total + grid >= 2.0**53:
                return None
            total += grid
            sums += np.bincount(key, weights=chunk, minlength=cells)
    return counts, sums


def _dense(sizes: Sequence[int], rows: int) -> bool:
    """Whether a dense array of every cell is small beside the rows (else groupby's hash of the cells seen)."""
    return int(np.prod(sizes, dtype=np.float64)) <= max(4 * rows, 1 << 16)


def grouped(frame: pd.DataFrame, names: list[str], column: str, how: str) -> pd.Series:
    """``frame.groupby(names, observed=True)[column].mean()`` (``how`` "mean") or ``.size()`` ("size") for two
    or more keys: the same numbers (to the bit), rows, row keys and order. One difference: each level of the
    index holds the categories the rows use (pandas keeps every category of the key there)."""
    columns = _categoricals(frame, names)
    if columns is None:
        grouped_by = frame.groupby(names, observed=True)
        return grouped_by[column].mean() if how == "mean" else grouped_by.size()
    sizes = _sizes(columns)
    codes = [c.codes for c in columns]
    tallied = None
    if _dense(sizes, len(frame)):
        tallied = _tally(codes, sizes, frame[column].to_numpy() if how == "mean" else None)
    result: np.ndarray
    if tallied is not None:
        counts, sums = tallied
        digits = np.flatnonzero(counts)
        result = counts[digits].astype(np.int64) if sums is None else sums[digits] / counts[digits]
    else:  # pandas on the one key: its groups are the same, in the same (mixed radix) order
        by_key = frame[column].groupby(_radix(codes, sizes))
        series = by_key.mean() if how == "mean" else by_key.size()
        del by_key
        series = series[series.index >= 0]
        digits, result = series.index.to_numpy(), series.to_numpy()
    index = pd.MultiIndex.from_arrays(_levels(digits, columns, sizes), names=names)
    return pd.Series(result, index=index, name=column if how == "mean" else None)


def _levels(digits: np.ndarray, columns: Sequence[pd.Categorical], sizes: Sequence[int]) -> list[pd.Categorical]:
    """Each key's value in the cells ``digits`` (mixed radix, see :func:`_radix`), as a Categorical of the
    categories used there: ``from_codes(...).remove_unused_categories()``, without pandas' unique of the codes."""
    if int(np.prod(sizes, dtype=np.float64)) < 2**31:
        digits = digits.astype(np.int32)  # half the bytes for each digit taken below
    levels = []
    for c, size in zip(reversed(columns), reversed(sizes), strict=True):
        code = digits % size
        digits = digits // size
        used = np.zeros(size, dtype=bool)
        used[code] = True
        new = np.cumsum(used) - 1  # old code -> its place among the used categories
        small = np.int8 if used.sum() < 127 else np.int16 if used.sum() < 32767 else np.int32
        categories = c.categories[used[: len(c.categories)]]
        levels.append(pd.Categorical.from_codes(new.astype(small)[code], categories=categories, ordered=c.ordered))
    return levels[::-1]


def sums_and_counts(part: pd.DataFrame, index: str, columns: str, value: str
                    ) -> tuple[list[Any], list[Any], np.ndarray, np.ndarray]:  # fmt: skip
    """Per value of ``index`` and of ``columns`` (each in sorted order, as Python sorts them): the sum of
    ``value`` and the count of its rows. What ``part.pivot_table(index, columns, value, aggfunc="sum" /
    "count", fill_value=0)`` reindexed to the sorted values gives, as two float arrays."""
    row_values, row_codes = _sorted_codes(part[index])
    column_values, column_codes = _sorted_codes(part[columns])
    scores = part[value].to_numpy(dtype=float)
    counted = ~np.isnan(scores)
    shape = (len(row_values), len(column_values))
    if not exact(scores[counted]) or not _dense(shape, len(part)):
        sums = part.pivot_table(index=index, columns=columns, values=value, aggfunc="sum", fill_value=0)
        counts = part.pivot_table(index=index, columns=columns, values=value, aggfunc="count", fill_value=0)
        sums = sums.reindex(index=row_values, columns=column_values, fill_value=0.0).to_numpy(dtype=float)
        counts = counts.reindex(index=row_values, columns=column_values, fill_value=0).to_numpy(dtype=float)
        return row_values, column_values, sums, counts
    key = row_codes * shape[1] + column_codes
    counted &= (row_codes >= 0) & (column_codes >= 0)  # pivot_table leaves out a row with a missing key
    if not counted.all():
        key, scores = key[counted], scores[counted]
    cells = shape[0] * shape[1]
    sums = np.bincount(key, weights=scores, minlength=cells).reshape(shape)
    counts = np.bincount(key, minlength=cells).reshape(shape).astype(float)
    return row_values, column_values, sums, counts


def _sorted_codes(values: pd.Series) -> tuple[list[Any], np.ndarray]:
    """The distinct values in Python's sorted order and each row's place among them (-1: missing)."""
    codes, uniques = pd.factorize(values, sort=False)
    distinct = list(uniques)
    order = sorted(range(len(distinct)), key=distinct.__getitem__)
    place = np.full(len(distinct) + 1, -1, dtype=np.int64)  # the last entry: a missing value's code, -1
    place[order] = np.arange(len(distinct))
    return [distinct[i] for i in order], place[codes]


def unit_counts(frame: pd.DataFrame, units: Sequence[str], value: str, categories: Sequence[Any]) -> np.ndarray | None:
    """Units x categories: ``frame.groupby([*units, value], observed=True).size().unstack(value)`` reindexed to
    ``categories`` (zeros for the rest), from the codes; None when a key is not categorical or the cells
    would far outnumber the rows (the caller then groups with pandas)."""
    columns = _categoricals(frame, [*units, value])
    if columns is None:
        return None
    sizes = _sizes(columns[:-1])
    if not categories or not _dense([*sizes, len(categories)], len(frame)):
        return None
    answer = columns[-1].codes
    at = {c: i for i, c in enumerate(categories)}
    to_category = np.array([at.get(c, -1) for c in columns[-1].categories] + [-1], dtype=np.int32)
    unit_codes = [c.codes for c in columns[:-1]]
    # A unit is there when a row has every key, the answer included (groupby drops a row with one missing);
    # its counts are of the answers among the categories (an answer not among them counts for nothing).
    answered = np.where(answer < 0, -1, 0).astype(np.int8)  # one digit of radix 1: -1 marks the row missing
    seen = _tally([*unit_codes, answered], [*sizes, 1], None)
    listed = _tally([*unit_codes, to_category[answer]], [*sizes, len(categories)], None)
    assert seen is not None and listed is not None  # counts only: never refused
    present = np.flatnonzero(seen[0])
    counts = listed[0].reshape(-1, len(categories))
    return counts[present].astype(np.int64)  # as pandas gives them


def groups(frame: pd.DataFrame, keys: list[str]) -> Iterator[tuple[tuple[Any, ...], pd.DataFrame]]:
    """``frame.groupby(keys, observed=True)``'s groups, in its order. On rows sorted by these categorical keys
    (as :func:`annols.analysis.by_style.ratings.judgments` gives them) each group is a run of rows, given as a slice,
    not a copy: grouping 4.8 million rows makes several row-sized index arrays (about 150 MB at 100,000
    tasks)."""
    columns = [frame[k].array for k in keys]
    if not len(frame) or not all(isinstance(c, pd.Categorical) for c in columns) or not _sorted(columns):
        yield from frame.groupby(keys, observed=True)
        return
    change = np.zeros(len(frame), dtype=bool)
    change[0] = True
    for c in columns:
        change[1:] |= c.codes[1:] != c.codes[:-1]
    starts = np.flatnonzero(change).tolist()
    for start, end in zip(starts, [*starts[1:], len(frame)], strict=True):
        yield tuple(_scalar(c.categories[c.codes[start]]) for c in columns), frame.iloc[start:end]


def _scalar(value: Any) -> Any:
    """A numpy scalar as the Python one, as groupby gives its keys."""
    return value.item() if isinstance(value, np.generic) else value


def _sorted(columns: list[pd.Categorical]) -> bool:
    """Whether the rows are in the order of these categorical keys' codes (first key first), none missing."""
    if any((c.codes < 0).any() for c in columns):  # a missing key: groupby leaves its rows out
        return False
    undecided = np.ones(len(columns[0]) - 1, dtype=bool)
    for c in columns:
        step = c.codes[1:].astype(np.int32) - c.codes[:-1]
        if (undecided & (step < 0)).any():
            return False
        undecided &= step == 0
    return True


def wide(series: pd.Series, group: str, column: str) -> Iterator[tuple[Any, pd.DataFrame]]:
    """For each value of the index level ``group`` (in level order), the series' values with the third level
    as rows and ``column`` as columns, nan where a pair has none: what ``series.groupby(level=group,
    observed=True)`` then ``part.droplevel(group).unstack(column)`` give (rows and columns in level order,
    only those present). From the index codes: pandas' unstack of 400,000 means per aspect at 100,000
    tasks makes several arrays of that length per level."""
    index = series.index
    names = list(index.names)
    g, c = names.index(group), names.index(column)
    (r,) = (i for i in range(len(names)) if i not in (g, c))
    values = series.to_numpy(dtype=float)
    group_codes = index.codes[g]
    for code in np.unique(group_codes[group_codes >= 0]):
        at = np.flatnonzero(group_codes == code)
        row_codes, column_codes = index.codes[r][at], index.codes[c][at]
        known = (row_codes >= 0) & (column_codes >= 0)
        at, row_codes, column_codes = at[known], row_codes[known], column_codes[known]
        rows, columns = np.unique(row_codes), np.unique(column_codes)
        table = np.full((len(rows), len(columns)), np.nan)
        table[np.searchsorted(rows, row_codes), np.searchsorted(columns, column_codes)] = values[at]
        frame = pd.DataFrame(table, index=index.levels[r].take(rows), columns=index.levels[c].take(columns))
        frame.index.name, frame.columns.name = names[r], names[c]
        yield index.levels[g][code], frame


# --- the items rule: how a per-system estimate is formed ------------------------------------------------------


def item_means(units: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Each item's mean over its judgments: ``units`` numbers the items 0..n-1 (``pd.factorize``), one per value;
    nan values are left out (an item with none has nan)."""
    units, values = np.asarray(units), np.asarray(values, dtype=float)
    kept = ~np.isnan(values)
    n = int(units.max()) + 1 if len(units) else 0
    sums = np.bincount(units[kept], values[kept], minlength=n)
    counts = np.bincount(units[kept], minlength=n)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)


def items_mean(units: np.ndarray, values: np.ndarray) -> float:
    """A system's score by the items rule: the mean over items of each item's mean over its judgments (MQM's
    per segment over raters, then over segments). It equals the mean over judgments when every item has as many;
    an item judged by more annotators weighs no more than one judged once. nan when no item has a value."""
    means = item_means(units, values)
    means = means[~np.isnan(means)]
    return float(means.mean()) if len(means) else float("nan")
