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


def exact(values: np.ndarray) -> bool:
    """Whether any order of summing ``values`` (no nan) gives the same float sum: every value is a multiple of
    1/1024 and the total of their magnitudes, in those steps, stays below 2**53."""
    if not len(values):
        return True
    scaled = np.abs(values) * _STEP
    if not np.isfinite(scaled).all():
        return False
    return bool((scaled == np.floor(scaled)).all() and scaled.sum() < 2.0**53)


def _categoricals(frame: pd.DataFrame, names: Sequence[str]) -> list[pd.Categorical] | None:
    columns = [frame[k].array for k in names]
    return columns if all(isinstance(c, pd.Categorical) for c in columns) else None


def _radix(columns: Sequence[pd.Categorical]) -> tuple[np.ndarray, list[int]]:
    """One int64 per row, a digit per key (its code, 0..len(categories)-1), -1 where a key is missing; and
    the radix of each digit."""
    sizes = [max(1, len(c.categories)) for c in columns]
    key = np.zeros(len(columns[0]) if columns else 0, dtype=np.int64)
    missing = np.zeros(len(key), dtype=bool)
    for c, size in zip(columns, sizes, strict=True):
        key *= size
        key += c.codes
        missing |= c.codes < 0
    key[missing] = -1
    return key, sizes


def _dense(sizes: Sequence[int], rows: int) -> bool:
    """Whether a dense array of every cell is small beside the rows (else groupby's hash of the cells seen)."""
    return int(np.prod(sizes, dtype=np.float64)) <= max(4 * rows, 1 << 16)


def grouped(frame: pd.DataFrame, names: list[str], column: str, how: str) -> pd.Series:
    """``frame.groupby(names, observed=True)[column].mean()`` (``how`` "mean") or ``.size()`` ("size"): the
    same index (categorical levels without unused categories), order and numbers."""
    columns = _categoricals(frame, names)
    if columns is None:
        grouped_by = frame.groupby(names, observed=True)
        return grouped_by[column].mean() if how == "mean" else grouped_by.size()
    key, sizes = _radix(columns)
    values = frame[column].to_numpy(dtype=float) if how == "mean" else None
    if _dense(sizes, len(key)) and (values is None or (not np.isnan(values).any() and exact(values))):
        kept = key >= 0
        if not kept.all():
            key = key[kept]
            values = values[kept] if values is not None else None
        cells = int(np.prod(sizes))
        counts = np.bincount(key, minlength=cells)
        present = np.flatnonzero(counts)
        result: np.ndarray
        if values is None:
            result = counts[present]
        else:
            result = np.bincount(key, weights=values, minlength=cells)[present] / counts[present]
        digits = present
    else:  # pandas on the one key: its groups are the same, in the same (mixed radix) order
        by_key = frame[column].groupby(key)
        series = by_key.mean() if how == "mean" else by_key.size()
        del by_key
        series = series[series.index >= 0]
        digits, result = series.index.to_numpy(), series.to_numpy()
    levels = []
    for c, size in zip(reversed(columns), reversed(sizes), strict=True):
        levels.append(pd.Categorical.from_codes(digits % size, categories=c.categories, ordered=c.ordered)
                      .remove_unused_categories())  # fmt: skip
        digits = digits // size
    index = pd.MultiIndex.from_arrays(levels[::-1], names=names)
    return pd.Series(result, index=index, name=column if how == "mean" else None)


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
        sums = part.pivot_table(index=index, columns=columns, values=value, aggfunc="sum", fill_value=0.0)
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
    key, sizes = _radix(columns[:-1])
    if not _dense([*sizes, len(categories)], len(key)):
        return None
    answer = columns[-1]
    at = {c: i for i, c in enumerate(categories)}
    to_category = np.array([at.get(c, -1) for c in answer.categories] + [-1], dtype=np.int64)
    category = to_category[answer.codes]  # a missing answer (code -1) takes the last entry, -1
    seen = (key >= 0) & (answer.codes >= 0)  # groupby drops a row with a missing key
    cells = int(np.prod(sizes))
    present = np.flatnonzero(np.bincount(key[seen], minlength=cells))
    counted = seen & (category >= 0)
    counts = np.bincount(key[counted] * len(categories) + category[counted],
                         minlength=cells * len(categories)).reshape(cells, len(categories))  # fmt: skip
    return counts[present]


def groups(frame: pd.DataFrame, keys: list[str]) -> Iterator[tuple[tuple[Any, ...], pd.DataFrame]]:
    """``frame.groupby(keys, observed=True)``'s groups, in its order. On rows sorted by these categorical keys
    (as :func:`annols.analysis.ratings.judgments` gives them) each group is a run of rows, given as a slice,
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
        yield tuple(c.categories[c.codes[start]] for c in columns), frame.iloc[start:end]


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
