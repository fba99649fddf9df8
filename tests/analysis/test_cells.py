"""annols.analysis.cells gives what the pandas expressions it replaces give, to the bit.

Each reference is the plain pandas expression written here (groupby, pivot_table, unstack),
on planted frames from a seeded generator: categorical keys with unsorted and unused
categories, missing keys, integer / half / quarter ratings (the dense ``np.bincount`` path),
tenths, missing and infinite values (pandas' own path), plain keys and keys with too many
cells for a dense array (pandas' own path), and empty frames.
"""

from __future__ import annotations

import functools
import math
import operator
from typing import Any

import numpy as np
import pandas as pd
import pytest

from annols.analysis import cells

SEEDS = [1, 2, 3]
ROWS = 3000


def _keys(rng: np.random.Generator, values: list[Any], n: int, missing: float) -> np.ndarray:
    column = rng.choice(np.array(values, dtype=object), n)
    column[rng.random(n) < missing] = None
    return column


def _categorical(column: np.ndarray, rng: np.random.Generator, unused: list[Any]) -> pd.Categorical:
    """Categories in a shuffled order (not sorted, not first-seen), with ``unused`` ones among them."""
    seen = list(dict.fromkeys(v for v in column if pd.notna(v)))
    categories = [*seen, *unused]
    order = rng.permutation(len(categories))
    return pd.Categorical(column, categories=[categories[i] for i in order])


def _values(rng: np.random.Generator, n: int, kind: str) -> np.ndarray:
    ratings = rng.integers(1, 6, n)
    if kind == "int":
        return ratings
    if kind == "half":
        return ratings / 2
    if kind == "quarter":
        return ratings / 4 - 0.75  # negative ones too
    if kind == "tenth":
        return rng.integers(1, 40, n) * 0.1
    if kind == "nan":
        values = ratings.astype(float)
        values[rng.random(n) < 0.1] = np.nan
        return values
    if kind == "inf":
        values = ratings.astype(float)
        values[rng.integers(0, n, 3)] = np.inf
        return values
    raise AssertionError(kind)


def planted(seed: int, *, values: str = "int", categorical: bool = True, missing: float = 0.05,
            unused: bool = True, wide: bool = False, n: int = ROWS) -> pd.DataFrame:  # fmt: skip
    """Keys a (strings), b (strings), c (integers); a value column v; an answer column "answer"."""
    rng = np.random.default_rng(seed)
    a_values = [f"a{i:03d}" for i in range(400 if wide else 15)]
    frame = pd.DataFrame({
        "a": _keys(rng, a_values, n, missing),
        "b": _keys(rng, [f"b{i}" for i in (rng.permutation(300) if wide else [5, 0, 3, 1, 2, 4])], n, missing),
        "c": _keys(rng, [3, 1, 4, 2], n, missing),
        "v": _values(rng, n, values),
        "answer": _keys(rng, ["1", "2", "3", "4", "5", "n/a"], n, 0.05),
    })  # fmt: skip
    if categorical:
        extra: dict[str, list[Any]] = (
            {"a": ["a-unused", "a999"], "b": ["b-unused"], "c": [99], "answer": ["never"]} if unused else {}
        )
        for name in ("a", "b", "c", "answer"):
            frame[name] = _categorical(frame[name].to_numpy(dtype=object), rng, extra.get(name, []))
    return frame


def assert_same_series(got: pd.Series, expected: pd.Series) -> None:
    """Values (to the bit), order, dtype, name, index values and each index level itself."""
    pd.testing.assert_series_equal(got, expected, check_exact=True)
    assert got.index.names == expected.index.names
    if isinstance(expected.index, pd.MultiIndex):
        assert isinstance(got.index, pd.MultiIndex)
        for a, b in zip(got.index.levels, expected.index.levels, strict=True):
            pd.testing.assert_index_equal(a, b, exact=True)
        for a, b in zip(got.index.codes, expected.index.codes, strict=True):
            np.testing.assert_array_equal(a, b)
    if expected.dtype == np.float64:
        np.testing.assert_array_equal(got.to_numpy().view(np.int64), expected.to_numpy().view(np.int64))


# exact ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("values", [
    np.arange(-50, 50, dtype=float),
    np.arange(-50, 50) / 2,
    np.arange(-50, 50) / 4,
    np.arange(1, 2000) / 1024,
    np.array([2.0**41, -(2.0**41), 1 / 1024]),  # magnitudes 2**52 + 1 steps: below 2**53
    np.array([], dtype=float),
])  # fmt: skip
def test_exact_values_sum_the_same_in_any_order(values: np.ndarray) -> None:
    assert cells.exact(values)
    rng = np.random.default_rng(0)
    total = math.fsum(values)  # the exact sum, rounded once
    for _ in range(5):
        assert functools.reduce(operator.add, rng.permutation(values).tolist(), 0.0) == total


def test_exact_on_integer_arrays() -> None:
    assert cells.exact(np.array([1, 2, 3, 4, 5], dtype=np.int64))
    assert not cells.exact(np.array([2**53, 1], dtype=np.int64))


@pytest.mark.parametrize("values", [
    np.arange(1, 40) * 0.1,
    np.array([0.1, 0.2, 0.3]),
    np.array([1.0, np.inf]),
    np.array([1.0, -np.inf]),
    np.array([1.0, np.nan]),
    np.array([1e300, 1.0]),
    np.array([2.0**60]),
    np.array([2.0**43, 1.0]),  # 2**53 steps of 1/1024 and more
    np.array([1 / 2048]),
])  # fmt: skip
def test_inexact_values(values: np.ndarray) -> None:
    assert not cells.exact(values)


def test_inexact_values_do_sum_differently_in_some_order() -> None:
    """The reason for the check: 0.1-steps summed in two orders give two floats."""
    values = np.array([0.1, 0.2, 0.3])
    assert (values[0] + values[1]) + values[2] != values[0] + (values[1] + values[2])
    assert not cells.exact(values)


# grouped ----------------------------------------------------------------------------------------


def reference_grouped(frame: pd.DataFrame, names: list[str], column: str, how: str) -> pd.Series:
    grouped_by = frame.groupby(names, observed=True)
    return grouped_by[column].mean() if how == "mean" else grouped_by.size()


GROUPED_CASES: dict[str, dict[str, Any]] = {  # name: planted(...) arguments
    "int": {"values": "int"},
    "half": {"values": "half"},
    "quarter": {"values": "quarter"},
    "tenth": {"values": "tenth"},
    "nan values": {"values": "nan"},
    "inf values": {"values": "inf"},
    "no missing keys": {"missing": 0.0},
    "all categories used": {"unused": False},
    "plain keys": {"categorical": False},
    "too many cells": {"wide": True},
}


@pytest.mark.parametrize("how", ["mean", "size"])
@pytest.mark.parametrize("case", list(GROUPED_CASES))
@pytest.mark.parametrize("seed", SEEDS)
def test_grouped_numbers_and_rows_are_the_groupby(seed: int, case: str, how: str) -> None:
    """The numbers (to the bit), their dtype and name, and each row's keys, in order; the index levels
    themselves are left to the next test."""
    frame = planted(seed, **GROUPED_CASES[case])
    names = ["a", "c", "b"]
    expected = reference_grouped(frame, names, "v", how)
    got = cells.grouped(frame, names, "v", how)
    assert len(expected) > 100
    assert got.name == expected.name and got.dtype == expected.dtype and got.index.names == expected.index.names
    assert list(got.index) == list(expected.index)
    for level in range(len(names)):
        pd.testing.assert_index_equal(got.index.get_level_values(level).astype(object),
                                      expected.index.get_level_values(level).astype(object), exact=True)  # fmt: skip
    np.testing.assert_array_equal(got.to_numpy(), expected.to_numpy())
    if how == "mean":
        np.testing.assert_array_equal(got.to_numpy().view(np.int64), expected.to_numpy().view(np.int64))


@pytest.mark.parametrize("how", ["mean", "size"])
@pytest.mark.parametrize("case", [c for c in GROUPED_CASES if c != "plain keys"])
@pytest.mark.parametrize("seed", SEEDS)
def test_grouped_levels_hold_the_categories_the_rows_use(seed: int, case: str, how: str) -> None:
    """Where pandas keeps every category of a key in its level (unused ones too), cells.grouped keeps those
    the result's rows use, in the key's category order, ordered as the key is."""
    frame = planted(seed, **GROUPED_CASES[case])
    names = ["a", "c", "b"]
    expected = reference_grouped(frame, names, "v", how)
    got = cells.grouped(frame, names, "v", how)
    assert len(expected) > 100
    for i, name in enumerate(names):
        level = got.index.levels[i]
        assert isinstance(level, pd.CategoricalIndex)
        used = set(expected.index.get_level_values(i))
        assert list(level.categories) == [c for c in frame[name].cat.categories if c in used]
        assert level.ordered == frame[name].cat.ordered
        assert len(used) < len(frame[name].cat.categories) or case == "all categories used"


@pytest.mark.parametrize("seed", SEEDS)
def test_grouped_cases_take_the_paths_they_name(seed: int) -> None:
    """The planted cases cover both ways: exact values (bincount) and inexact ones (pandas), a dense array
    small beside the rows and one far too large."""
    assert cells.exact(planted(seed, values="int")["v"].to_numpy(dtype=float))
    assert cells.exact(planted(seed, values="quarter")["v"].to_numpy(dtype=float))
    assert not cells.exact(planted(seed, values="tenth")["v"].to_numpy(dtype=float))
    wide = planted(seed, wide=True)
    assert np.prod([len(wide[k].cat.categories) for k in ("a", "b", "c")]) > 16 * ROWS
    narrow = planted(seed)
    assert np.prod([len(narrow[k].cat.categories) for k in ("a", "b", "c")]) < ROWS


@pytest.mark.parametrize("how", ["mean", "size"])
@pytest.mark.parametrize("seed", SEEDS)
def test_grouped_with_ordered_categories_and_two_keys(seed: int, how: str) -> None:
    frame = planted(seed, unused=False)
    frame["b"] = frame["b"].cat.as_ordered()
    expected = reference_grouped(frame, ["b", "c"], "v", how)
    assert len(expected) > 10
    assert_same_series(cells.grouped(frame, ["b", "c"], "v", how), expected)


@pytest.mark.parametrize("how", ["mean", "size"])
@pytest.mark.parametrize("categorical", [True, False])
def test_grouped_on_an_empty_frame(categorical: bool, how: str) -> None:
    """No rows: an empty series of groupby's dtype and name, its index named by the keys."""
    frame = planted(1, unused=False, categorical=categorical).iloc[:0]
    expected = reference_grouped(frame, ["a", "c", "b"], "v", how)
    got = cells.grouped(frame, ["a", "c", "b"], "v", how)
    assert len(got) == len(expected) == 0
    assert got.dtype == expected.dtype and got.name == expected.name and got.index.names == expected.index.names


# sums_and_counts --------------------------------------------------------------------------------


def reference_pivot(part: pd.DataFrame, index: str, columns: str, value: str
                    ) -> tuple[list[Any], list[Any], np.ndarray, np.ndarray]:  # fmt: skip
    rows = sorted(part[index].dropna().unique())
    cols = sorted(part[columns].dropna().unique())
    tables = [part.pivot_table(index=index, columns=columns, values=value, aggfunc=how, fill_value=0)
              .reindex(index=rows, columns=cols, fill_value=0).to_numpy(dtype=float)
              for how in ("sum", "count")]  # fmt: skip
    return rows, cols, tables[0], tables[1]


@pytest.mark.parametrize("values", ["int", "half", "tenth", "nan", "inf"])
@pytest.mark.parametrize("categorical", [True, False])
@pytest.mark.parametrize("seed", SEEDS)
def test_sums_and_counts_are_the_pivot_tables(seed: int, categorical: bool, values: str) -> None:
    part = planted(seed, values=values, categorical=categorical)
    if values == "int":
        part["v"] = part["v"].astype(np.int64)
    expected = reference_pivot(part, "a", "b", "v")
    got = cells.sums_and_counts(part, "a", "b", "v")
    assert len(expected[0]) == 15 and len(expected[1]) == 6 and expected[3].sum() > 0.8 * ROWS
    assert got[0] == expected[0] and got[1] == expected[1]
    assert [type(v) for v in got[0] + got[1]] == [type(v) for v in expected[0] + expected[1]]
    for a, b in zip(got[2:], expected[2:], strict=True):
        assert a.dtype == b.dtype == np.float64 and a.shape == b.shape
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(a.view(np.int64), b.view(np.int64))  # to the bit


@pytest.mark.parametrize("seed", SEEDS)
def test_sums_and_counts_leave_out_missing_values_and_keys(seed: int) -> None:
    """The counts are the rows with a value and both keys (an independent count, not the pivot)."""
    part = planted(seed, values="nan", categorical=False)
    rows, cols, sums, counts = cells.sums_and_counts(part, "a", "c", "v")
    assert rows == sorted(part["a"].dropna().unique()) and cols == [1, 2, 3, 4]
    for i, row in enumerate(rows):
        for j, col in enumerate(cols):
            cell = part[(part["a"] == row) & (part["c"] == col) & part["v"].notna()]
            assert counts[i, j] == len(cell) and sums[i, j] == math.fsum(cell["v"])
    assert counts.sum() == (part["a"].notna() & part["c"].notna() & part["v"].notna()).sum() > 0


@pytest.mark.parametrize("seed", SEEDS)
def test_sums_and_counts_with_too_many_cells_are_the_pivot_tables(seed: int) -> None:
    part = planted(seed, values="int", wide=True)
    expected = reference_pivot(part, "a", "b", "v")
    got = cells.sums_and_counts(part, "a", "b", "v")
    assert len(expected[0]) * len(expected[1]) > 16 * ROWS and expected[3].sum() > 0.8 * ROWS
    assert got[0] == expected[0] and got[1] == expected[1]
    np.testing.assert_array_equal(got[2], expected[2])
    np.testing.assert_array_equal(got[3], expected[3])


def test_sums_and_counts_with_a_column_seen_only_with_missing_values() -> None:
    part = pd.DataFrame({"a": ["u", "u", "t"], "b": ["p", "q", "p"], "v": [1.0, np.nan, 2.0]})
    expected = reference_pivot(part, "a", "b", "v")
    got = cells.sums_and_counts(part, "a", "b", "v")
    assert got[0] == expected[0] == ["t", "u"] and got[1] == expected[1] == ["p", "q"]
    np.testing.assert_array_equal(got[2], expected[2])
    np.testing.assert_array_equal(got[3], expected[3])


# unit_counts ------------------------------------------------------------------------------------

CATEGORIES = ["5", "1", "3", "2", "4", "6"]  # not the answer's order; "6" never answered; "n/a" not here


def reference_unit_counts(frame: pd.DataFrame, units: list[str], value: str, categories: list[Any]) -> np.ndarray:
    return (frame.groupby([*units, value], observed=True).size().unstack(value)
            .reindex(columns=list(categories)).fillna(0).to_numpy(dtype=np.int64))  # fmt: skip


@pytest.mark.parametrize("missing", [0.0, 0.05])
@pytest.mark.parametrize("seed", SEEDS)
def test_unit_counts_are_the_unstacked_sizes(seed: int, missing: float) -> None:
    frame = planted(seed, missing=missing)
    only_outside = (frame["a"] == "a000") & (frame["c"] == 3)
    frame.loc[only_outside, "answer"] = "n/a"  # a unit whose answers are all outside the categories
    expected = reference_unit_counts(frame, ["a", "c"], "answer", CATEGORIES)
    got = cells.unit_counts(frame, ["a", "c"], "answer", CATEGORIES)
    assert got is not None
    assert expected.shape[0] > 50 and expected.sum() > 0.6 * ROWS
    assert (expected.sum(axis=1) == 0).any() and (expected[:, -1] == 0).all()
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("seed", SEEDS)
def test_unit_counts_of_three_unit_keys(seed: int) -> None:
    frame = planted(seed)
    expected = reference_unit_counts(frame, ["b", "a", "c"], "answer", ["1", "2", "3", "4", "5"])
    got = cells.unit_counts(frame, ["b", "a", "c"], "answer", ["1", "2", "3", "4", "5"])
    assert got is not None and expected.shape[0] > 200
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("seed", SEEDS)
def test_unit_counts_with_too_many_cells_are_left_to_pandas(seed: int) -> None:
    """Units a x b of 400 x 300 categories (most unused), 7 answers: far more cells than rows, so None (the
    caller groups with pandas); the same frame's narrow units are counted."""
    frame = planted(seed, wide=True)
    assert cells.unit_counts(frame, ["a", "b"], "answer", CATEGORIES) is None
    expected = reference_unit_counts(frame, ["c"], "answer", CATEGORIES)
    got = cells.unit_counts(frame, ["c"], "answer", CATEGORIES)
    assert got is not None and expected.shape == (4, 6)
    np.testing.assert_array_equal(got, expected)


def test_unit_counts_refuse_plain_keys() -> None:
    frame = planted(1)
    assert cells.unit_counts(frame.astype({"a": object}), ["a", "c"], "answer", CATEGORIES) is None
    assert cells.unit_counts(frame.astype({"answer": object}), ["a", "c"], "answer", CATEGORIES) is None


# groups -----------------------------------------------------------------------------------------


def assert_same_groups(got: list[tuple[Any, pd.DataFrame]], expected: list[tuple[Any, pd.DataFrame]]) -> None:
    assert len(got) == len(expected)
    for (got_key, got_part), (key, part) in zip(got, expected, strict=True):
        assert got_key == key
        pd.testing.assert_frame_equal(got_part, part)


def sorted_rows(frame: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Rows with every key, in the order of the keys' codes (as ratings.judgments sorts them)."""
    return frame.dropna(subset=keys).sort_values(keys, kind="stable")


@pytest.mark.parametrize("keys", [["a"], ["b", "a"], ["c", "b", "a"]])
@pytest.mark.parametrize("seed", SEEDS)
def test_groups_of_sorted_rows_are_the_groupby(seed: int, keys: list[str]) -> None:
    frame = sorted_rows(planted(seed, values="tenth"), keys)
    expected = list(frame.groupby(keys, observed=True))
    assert len(expected) >= 15 and len(frame) > 2000
    got = list(cells.groups(frame, keys))
    assert_same_groups(got, expected)
    assert all(len(part) for _, part in got)


@pytest.mark.parametrize("case", ["unsorted", "missing keys", "plain keys", "sorted on other keys"])
@pytest.mark.parametrize("seed", SEEDS)
def test_groups_of_other_rows_are_the_groupby(seed: int, case: str) -> None:
    frame = planted(seed, categorical=case != "plain keys")
    keys = ["b", "a"]
    if case == "sorted on other keys":
        frame = sorted_rows(frame, ["a", "b"])
    elif case == "plain keys":
        frame = sorted_rows(frame, keys)
    elif case == "missing keys":
        frame = frame.sort_values(keys, kind="stable")  # missing keys last
        assert frame["a"].isna().any()
    expected = list(frame.groupby(keys, observed=True))
    assert len(expected) > 50
    assert_same_groups(list(cells.groups(frame, keys)), expected)


def test_groups_of_an_empty_frame() -> None:
    frame = planted(1).iloc[:0]
    assert list(cells.groups(frame, ["a"])) == [] == list(frame.groupby(["a"], observed=True))


def test_groups_of_one_row() -> None:
    frame = sorted_rows(planted(1), ["a", "b"]).iloc[:1]
    assert_same_groups(list(cells.groups(frame, ["a", "b"])), list(frame.groupby(["a", "b"], observed=True)))


def test_groups_keys_are_the_groupby_keys_types() -> None:
    """groupby gives a key of an integer category as a Python int, and so does cells.groups (not numpy.int64:
    equal, but not JSON-serializable and with another repr)."""
    frame = pd.DataFrame({"c": pd.Categorical([1, 2], categories=[1, 2]), "v": [1.0, 2.0]})
    got = [key for key, _ in cells.groups(frame, ["c"])]
    expected = [key for key, _ in frame.groupby(["c"], observed=True)]
    assert got == expected
    assert [type(k) for key in got for k in key] == [type(k) for key in expected for k in key]


# wide -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", ["int", "tenth", "no missing keys", "plain keys"])
@pytest.mark.parametrize("seed", SEEDS)
def test_wide_tables_are_the_unstacked_groups(seed: int, case: str) -> None:
    """cells.wide gives, per value of the group level, what groupby(level=...) then droplevel and unstack give:
    the same frames (values, nan where a pair has none, rows and columns in order, their index types)."""
    frame = planted(seed, n=400, **GROUPED_CASES[case])  # few rows: pairs without a value
    means = frame.groupby(["b", "a", "c"], observed=True)["v"].mean()
    expected = [(k, part.droplevel("b").unstack("c")) for k, part in means.groupby(level="b", observed=True)]
    got = list(cells.wide(means, "b", "c"))
    assert len(expected) >= 5 and sum(w.isna().to_numpy().sum() for _, w in expected) > 0
    assert [k for k, _ in got] == [k for k, _ in expected]
    for (_, a), (_, b) in zip(got, expected, strict=True):
        pd.testing.assert_frame_equal(a, b, check_exact=True)
