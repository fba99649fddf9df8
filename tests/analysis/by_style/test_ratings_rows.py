"""The rating rows made once for the whole report are the rows each analysis made for itself before.

``ratings.judgments`` chooses and sorts the rows on their keys' codes and copies them once
(memory at 100,000 tasks); the reference here is the plain pandas way it replaced: filter,
convert, filter, ``sort_values``. Checked on judgments tables with missing keys, ratings
that are no numbers, aspects not asked, unsorted categories, and plain (non-categorical)
columns.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from annols.analysis import cells
from annols.analysis.by_style import ratings
from annols.analysis.leaderboard import reliability
from annols.analysis.naming import in_order
from annols.styles.judgments import TIDY_COLUMNS

ASPECTS = ["fluency", "coherence", "relevance"]


def reference(frame: pd.DataFrame, aspects: list[str]) -> pd.DataFrame:
    columns = ["uid", "task_key", "annotator", "question", "system", "value", "code"]
    part = frame.loc[(frame["kind"] == "rating").to_numpy(), columns]
    part = part.rename(columns={"question": "aspect", "value": "rating"})
    part["rating"] = pd.to_numeric(part["rating"], errors="coerce")
    part = part[part["rating"].notna()]
    part["aspect"] = in_order(part["aspect"], aspects)
    part = part[part["aspect"].notna()]
    return part.sort_values(["aspect", "system", "task_key", "annotator"], kind="stable").reset_index(drop=True)


def judgments_table(seed: int, categorical: bool) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    n = 3000
    pick = lambda values, p=None: rng.choice(np.array(values, dtype=object), n, p=p)  # noqa: E731
    frame = pd.DataFrame({
        "uid": rng.integers(0, 500, n),
        "task_key": pick([f"item-{i:03d}" for i in rng.permutation(40)]),
        "kind": pick(["rating", "rating", "rating", "choice"]),
        "question": pick([*ASPECTS, "other"], [0.3, 0.3, 0.3, 0.1]),
        "system": pick(["zeta", "alpha", "mid", None], [0.3, 0.3, 0.3, 0.1]),
        "opponent": None,
        "value": pick(["1", "2", "3", "4", "5", "n/a"], [0.19, 0.19, 0.19, 0.19, 0.19, 0.05]),
        "code": pick(["1", "2", "3", "4", "5"]),
        "annotator": pick(["c@x", "a@x", "b@x", None], [0.3, 0.3, 0.3, 0.1]),
    })  # fmt: skip
    for name in TIDY_COLUMNS:
        if name not in frame:
            frame[name] = None
    if categorical:  # as the report's collector makes it: categories in first-seen order, not sorted
        for name in ("task_key", "kind", "question", "system", "value", "code", "annotator"):
            frame[name] = pd.Categorical(frame[name], categories=list(dict.fromkeys(frame[name].dropna())))
    return frame


@pytest.mark.parametrize("categorical", [True, False])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_rating_rows_are_the_rows_of_a_filter_and_sort(seed: int, categorical: bool) -> None:
    frame = judgments_table(seed, categorical)
    expected = reference(frame, ASPECTS)
    got = ratings.judgments(frame, ASPECTS)
    assert len(got) > 1000 and not got["rating"].isna().any()
    pd.testing.assert_frame_equal(got, expected)
    pd.testing.assert_frame_equal(ratings.judgments(frame, ASPECTS, uid=False), expected.drop(columns="uid"))


def test_the_shared_scores_are_the_ordered_scores() -> None:
    """reliability's scores of the shared rows equal its own ordering of the rating rows: they are already
    in its order, so it leaves them as they are."""
    frame = judgments_table(4, categorical=True)
    rows = ratings.judgments(frame, ASPECTS, uid=False)
    expected = reliability._ordered(rows.rename(columns={"rating": "score"})[reliability.SCORE_COLUMNS]
                                    .astype({"score": float}), ASPECTS)  # fmt: skip
    pd.testing.assert_frame_equal(reliability.scores_of_ratings(rows, ASPECTS), expected)


@pytest.mark.parametrize("order", ["sorted", "shuffled"])
def test_z_scores_are_the_transforms(order: str) -> None:
    """ratings.z_scores, aggregates taken per row (one aspect's rows at a time when sorted by aspect), equals
    pandas' transform on the same groups (a missing annotator and an annotator with one value given stay
    without z)."""
    frame = ratings.judgments(judgments_table(5, categorical=True), ASPECTS)
    if order == "shuffled":
        frame = frame.sample(frac=1, random_state=3)
    frame.loc[frame.index[:40], "rating"] = 3  # one annotator's ratings of an aspect all equal
    frame["annotator"] = frame["annotator"].cat.add_categories(["same@x"])
    frame.loc[frame.index[:40], "annotator"] = "same@x"
    grouped = frame.groupby(["annotator", "aspect"], observed=True)["rating"]
    sd = grouped.transform("std")
    expected = (frame["rating"] - grouped.transform("mean")) / sd.where(sd > 0)
    got = ratings.z_scores(frame)
    assert got.isna().sum() >= 40 and got.notna().sum() > 1000
    pd.testing.assert_series_equal(got, expected, check_exact=True)


@pytest.mark.parametrize("rows", ["sorted", "shuffled", "missing"])
def test_groups_of_sorted_rows_are_the_groupby_groups(rows: str) -> None:
    """cells.groups gives groupby's groups (keys, rows, order): as slices of sorted rows, else by groupby."""
    frame = ratings.judgments(judgments_table(6, categorical=True), ASPECTS)
    frame = frame[frame["system"].notna()] if rows != "missing" else frame
    if rows == "shuffled":
        frame = frame.sample(frac=1, random_state=1)
    expected = list(frame.groupby(["aspect", "system"], observed=True))
    got = list(cells.groups(frame, ["aspect", "system"]))
    assert len(got) == len(expected) > 6
    assert [k for k, _ in got] == [k for k, _ in expected]
    for (_, a), (_, b) in zip(got, expected, strict=True):
        pd.testing.assert_frame_equal(a, b)


@pytest.mark.parametrize("categorical", [True, False])
def test_rating_rows_when_every_row_counts(categorical: bool) -> None:
    """Every row a rating of an aspect asked (the usual study): the rows taken and converted in one order."""
    frame = judgments_table(7, categorical)
    valid = (frame["kind"] == "rating") & (frame["value"] != "n/a") & frame["question"].isin(ASPECTS)
    frame = frame[valid.to_numpy()].reset_index(drop=True)
    got = ratings.judgments(frame, ASPECTS)
    assert len(got) == len(frame) > 1000
    pd.testing.assert_frame_equal(got, reference(frame, ASPECTS))


@pytest.mark.parametrize("categorical", [True, False])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_sample_means_are_the_groupby_means(seed: int, categorical: bool) -> None:
    """ratings.sample_means (one integer key from the codes) equals pandas' three-key groupby: values, index,
    levels (observed categories only), with missing systems left out."""
    frame = ratings.judgments(judgments_table(seed, categorical), ASPECTS)
    expected = frame.groupby(["aspect", "task_key", "system"], observed=True)["rating"].mean()
    got = ratings.sample_means(frame)
    assert len(got) > 300
    pd.testing.assert_series_equal(got, expected, check_exact=True)
    for a, b in zip(got.index.levels, expected.index.levels, strict=True):
        pd.testing.assert_index_equal(a, b, exact=True)


@pytest.mark.parametrize("categorical", [True, False])
def test_counts_by_codes_are_the_groupby_sizes(categorical: bool) -> None:
    frame = ratings.judgments(judgments_table(8, categorical), ASPECTS)
    expected = frame.groupby(["aspect", "system", "code"], observed=True).size()
    got = cells.grouped(frame, ["aspect", "system", "code"], "code", "size")
    assert len(got) > 30
    pd.testing.assert_series_equal(got, expected, check_exact=True)
    for a, b in zip(got.index.levels, expected.index.levels, strict=True):
        pd.testing.assert_index_equal(a, b, exact=True)


@pytest.mark.parametrize("values", [["1", "2", "5"], ["-300", "0", "300"], ["1.5", "2", "n/a"]])
def test_compact_ratings_are_the_same_numbers_in_a_smaller_type(values: list[str]) -> None:
    """judgments(compact=True), as the report reads them: whole numbers in the smallest integer type that
    holds them, every other column and every number the same as without."""
    frame = judgments_table(9, categorical=True)
    rng = np.random.default_rng(9)
    frame["value"] = pd.Categorical(rng.choice(np.array(values, dtype=object), len(frame)), categories=values)
    wide, compact = ratings.judgments(frame, ASPECTS), ratings.judgments(frame, ASPECTS, compact=True)
    whole = "n/a" not in values
    assert wide["rating"].dtype == (np.int64 if whole else np.float64)
    assert compact["rating"].dtype == ({"1": np.int8, "-300": np.int16}[values[0]] if whole else np.float64)
    assert len(compact) > 1000
    np.testing.assert_array_equal(compact["rating"].to_numpy(dtype=float), wide["rating"].to_numpy(dtype=float))
    pd.testing.assert_frame_equal(compact.drop(columns="rating"), wide.drop(columns="rating"))


def test_agreement_units_are_numbered_as_a_factorized_multiindex_numbers_them() -> None:
    """``ratings._unit_codes`` combines each column's codes into one integer; the reference is what it
    replaced, ``pd.factorize(pd.MultiIndex.from_frame(...))`` (units numbered as they first appear), with
    categorical and plain columns, turns with and without missing ones, and no rows."""
    rng = np.random.default_rng(4)
    for trial in range(60):
        n = int(rng.integers(0, 200))
        turn = rng.choice([1.0, 2.0, np.nan], n) if trial % 2 else rng.integers(1, 4, n)
        frame = pd.DataFrame({"task_key": pd.Categorical(rng.choice(["t2", "t1", "t3"], n), ["t3", "t1", "t2", "t4"]),
                              "system": rng.choice(["x", "", "y"], n).astype(object), "turn": turn})  # fmt: skip
        for units in (["task_key", "system"], ["task_key", "system", "turn"]):
            expected = pd.factorize(pd.MultiIndex.from_frame(frame[units]))[0]
            np.testing.assert_array_equal(ratings._unit_codes(frame, units), expected)


def test_first_seen_codes_are_pd_factorize_codes() -> None:
    """``ratings._first_seen_codes`` numbers integers by their first row from a sort; the reference is the hash
    table it replaced, ``pd.factorize``: few and many distinct keys, negative and large ones, no rows."""
    rng = np.random.default_rng(11)
    for trial in range(80):
        n = int(rng.integers(0, 5000)) if trial else 0
        high = int(rng.choice([2, 50, 10**6, 2**60]))
        key = rng.integers(-high if trial % 3 == 0 else 0, high, n, dtype=np.int64)
        if trial % 4 == 1:  # each key one run of rows (sorted, or runs in any order), as sorted units give them
            key = np.sort(key) if trial % 8 == 1 else np.repeat(rng.permutation(n), rng.integers(1, 4, n))
        found, expected = ratings._first_seen_codes(key), pd.factorize(key)[0]
        assert found.dtype == expected.dtype
        np.testing.assert_array_equal(found, expected)
