"""The shared agreement helpers: the interval alpha against the krippendorff library and the coincidences,
and the reasons a report gives where agreement cannot be computed."""

from __future__ import annotations

import random

import krippendorff
import numpy as np
import pandas as pd
import pytest

from annols.analysis.raters import agreement
from tests.analysis import independent


def test_interval_alpha_equals_the_library_and_the_coincidences() -> None:
    rng = random.Random(9)
    units: list[list[float]] = []
    for _ in range(60):
        truth = rng.uniform(0, 100)
        units.append([round(truth + rng.gauss(0, 12), 1) for _ in range(rng.choice([1, 2, 3, 3]))])
    unit = np.repeat(np.arange(len(units)), [len(u) for u in units])
    values = np.array([v for u in units for v in u])
    reliability = np.full((3, len(units)), np.nan)  # raters x units, as the library reads it
    for j, u in enumerate(units):
        reliability[: len(u), j] = u
    library = krippendorff.alpha(reliability_data=reliability, level_of_measurement="interval")
    found = agreement.interval_alpha(unit, values)
    assert found == pytest.approx(library, rel=1e-9)
    assert found == pytest.approx(independent.interval_alpha([u for u in units if len(u) >= 2]), rel=1e-9)
    assert np.isnan(agreement.interval_alpha(np.arange(5), np.arange(5.0)))  # nothing pairable


def test_reasons_where_agreement_cannot_be_computed() -> None:
    assert agreement.why_not(np.zeros((0, 3), dtype=np.int64)) == "nothing was answered"
    assert agreement.why_not(np.array([[1, 0], [0, 1]])) == "each item has one annotator"
    assert agreement.why_not(np.array([[3, 0], [2, 0], [0, 1]])) == "only one category was used"
    assert agreement.why_not(np.array([[2, 1], [0, 1]])) == ""
    one = np.array([[1, 0]])
    assert agreement.shared_reason([one, np.zeros((0, 2), dtype=np.int64)]) == "each item has one annotator"
    assert agreement.shared_reason([one, np.array([[2, 0]])]) == ""  # one category is said per group, not shared
    assert agreement.reasons(["x", "y"], [one, np.array([[2, 1]])]) == [
        "x: no agreement statistic, each item has one annotator."]  # fmt: skip


def test_observed_and_chance_agreement_of_nominal_counts_by_hand() -> None:
    # Units x categories: a unit of one rating is not pairable; the others have 2, 2 and 3 ratings.
    counts = np.array([[2, 0], [1, 1], [3, 0], [0, 1]])
    units, observed, alpha, fleiss_units, kappa = agreement.observed_and_chance(counts)
    assert (units, fleiss_units) == (3, 2)  # Fleiss over the units of the most common count (2)
    assert observed == pytest.approx(100 * (2 + 0 + 6) / (2 + 2 + 6))  # agreeing ordered pairs of all pairs
    # Krippendorff (nominal): coincidences o_00 = 2 + 0 + 3 = 5, o_01 = o_10 = 1, o_11 = 0; n = 7.
    assert alpha == pytest.approx(1 - (7 - 1) * 2 / (6 * 1 * 2))
    # Fleiss over [[2, 0], [1, 1]]: P = (1 + 0) / 2, p = (3/4, 1/4), Pe = 10/16.
    assert kappa == pytest.approx((0.5 - 10 / 16) / (1 - 10 / 16))


# --- by the scale: weighted kappa, each annotator against the rest, the systems ------------------------------


def test_weighted_kappa_equals_statsmodels_on_an_equally_spaced_scale_and_uses_the_values_otherwise() -> None:
    from statsmodels.stats.inter_rater import cohens_kappa

    rng = random.Random(3)
    a = [rng.randint(1, 5) for _ in range(80)]
    b = [min(5, max(1, x + rng.choice([-1, 0, 0, 1, 2]))) for x in a]
    table = np.zeros((5, 5))
    for x, y in zip(a, b, strict=True):
        table[x - 1, y - 1] += 1
    assert agreement.weighted_kappa(a, b) == pytest.approx(cohens_kappa(table, wt="quadratic").kappa, rel=1e-12)
    assert agreement.weighted_kappa(a, b, power=1) == pytest.approx(cohens_kappa(table, wt="linear").kappa,
                                                                     rel=1e-12)  # fmt: skip
    # by hand: two raters, values 1 and 3 only; weights (1 - 3)^2 = 4 off the diagonal
    x, y = [1, 1, 3, 3], [1, 3, 3, 3]
    observed = 4 * (1 / 4)  # one pair (1, 3) of four
    expected = 4 * ((2 / 4) * (3 / 4) + (2 / 4) * (1 / 4))  # P(x=1)P(y=3) + P(x=3)P(y=1)
    assert agreement.weighted_kappa(x, y) == pytest.approx(1 - observed / expected)
    assert np.isnan(agreement.weighted_kappa([2, 2], [2, 2]))


def test_pair_alpha_is_the_library_alpha_of_pairs_at_each_level() -> None:
    rng = random.Random(4)
    x = np.array([rng.randint(1, 5) for _ in range(40)], dtype=float)
    y = np.clip(x + np.array([rng.choice([-1, 0, 1]) for _ in range(40)]), 1, 5)
    for level in ("nominal", "ordinal", "interval"):
        library = krippendorff.alpha(reliability_data=np.vstack([x, y]), level_of_measurement=level)
        assert agreement.pair_alpha(x, y, level) == pytest.approx(library, rel=1e-9), level


def test_each_annotator_against_the_rest_sees_an_offset_annotator_rank_alike() -> None:
    import pandas as pd

    rows = []
    for unit in range(20):
        truth = 1 + unit % 4
        rows += [(unit, "a", truth), (unit, "b", truth), (unit, "c", truth + 1)]  # c: one point higher, same order
    found = {r[0]: r for r in agreement.each_against_the_rest(pd.DataFrame(rows, columns=["unit", "annotator",
                                                                                           "value"]), "ordinal")}
    units, pairs, agree, _, alpha, rho = found["c"][1:]
    assert (units, pairs, agree) == (20, 40, 0.0)
    assert rho == pytest.approx(1.0) and alpha < 0.9
    assert found["a"][1:4] == [20, 40, 50.0]  # equal to b on every unit, never to c
    nominal = agreement.each_against_the_rest(pd.DataFrame([(0, "a", "x"), (0, "b", "x"), (1, "a", "x"), (1, "b", "y")],
                                                           columns=["unit", "annotator", "value"]), "nominal")
    assert nominal[0][:4] == ["a", 2, 2, 50.0] and np.isnan(nominal[0][-1])  # no Spearman for codes


def _each_by_merge(frame: pd.DataFrame, level: str) -> list[list[object]]:
    """each_against_the_rest as it was written before it built its pairs an annotator at a time: every pair
    of answers on a unit from a merge of the answers with themselves (kept here as the reference)."""
    part = frame[["unit", "annotator", "value"]].drop_duplicates(["unit", "annotator"], keep="last")
    who_code, names = pd.factorize(part["annotator"], sort=True)
    unit_code, _ = pd.factorize(part["unit"])
    part = pd.DataFrame({"unit": unit_code, "annotator": who_code, "value": part["value"].to_numpy()})
    pairs = part.merge(part, on="unit", suffixes=("", "_other"))
    pairs = pairs[pairs["annotator"] != pairs["annotator_other"]]
    rows: list[list[object]] = []
    for code, mine in pairs.groupby("annotator", sort=True):
        x, y = mine["value"].to_numpy(), mine["value_other"].to_numpy()
        rho = np.nan
        if level in agreement.NUMERIC_LEVELS:
            per_unit = mine.groupby("unit", sort=False).agg(mine=("value", "first"), rest=("value_other", "mean"))
            rho = agreement.correlation(per_unit["mine"], per_unit["rest"], "spearman")
        rows.append([names[code], int(mine["unit"].nunique()), len(mine),
                     float(agreement.percent((x == y).sum(), len(x))), agreement.cohen_or_weighted(x, y, level),
                     agreement.pair_alpha(x, y, level), rho])  # fmt: skip
    return rows


@pytest.mark.parametrize("kind", ["codes", "numbers", "words", "tuples", "numbered"])
def test_each_against_the_rest_gives_the_rows_of_a_merge_of_every_pair_to_the_bit(kind: str) -> None:
    rng = np.random.default_rng(["codes", "numbers", "words", "tuples", "numbered"].index(kind))
    for _ in range(40):
        n = int(rng.integers(0, 150))
        units = rng.integers(0, int(rng.integers(1, 30)), n)  # duplicates of a unit and annotator included
        value = {"codes": rng.integers(1, 6, n), "numbers": rng.normal(size=n).round(2),
                 "words": rng.choice(["x", "y", "z"], n).astype(object), "tuples": rng.integers(0, 3, n),
                 "numbered": rng.integers(1, 6, n)}[kind]
        unit = [(f"t{u}", u % 3) for u in units] if kind == "tuples" else units
        if kind == "numbered":  # units numbered by their first row, as ratings gives them
            unit = pd.factorize(units)[0]
        frame = pd.DataFrame({"unit": unit, "annotator": rng.choice(["b", "a", "d", "c"][: rng.integers(1, 5)], n),
                              "value": value})  # fmt: skip
        for level in ["nominal"] if kind == "words" else ["nominal", "ordinal", "interval"]:
            found, expected = agreement.each_against_the_rest(frame, level), _each_by_merge(frame, level)
            assert len(found) == len(expected)
            for row, want in zip(found, expected, strict=True):
                assert row[:4] == want[:4]
                np.testing.assert_array_equal(np.array(row[4:], dtype=float), np.array(want[4:], dtype=float))


def test_system_agreement_averages_each_pair_of_annotators_over_the_systems_both_scored() -> None:
    import pandas as pd
    from scipy.stats import kendalltau, spearmanr

    scores = pd.DataFrame({"s1": [1.0, 1.0, 3.0], "s2": [2.0, 2.5, 2.0], "s3": [3.0, 3.0, 1.0], "s4": [4.0, np.nan,
                           np.nan]}, index=["a", "b", "c"])  # fmt: skip
    annotators, pairs, systems, tau, rho = agreement.system_agreement(scores)
    # a-b over s1..s3, a-c over s1..s3, b-c over s1..s3 (s4: only a)
    expected_tau = np.mean([kendalltau([1, 2, 3], [1, 2.5, 3]).statistic, kendalltau([1, 2, 3], [3, 2, 1]).statistic,
                            kendalltau([1, 2.5, 3], [3, 2, 1]).statistic])  # fmt: skip
    expected_rho = np.mean([spearmanr([1, 2, 3], [1, 2.5, 3]).statistic, spearmanr([1, 2, 3], [3, 2, 1]).statistic,
                            spearmanr([1, 2.5, 3], [3, 2, 1]).statistic])  # fmt: skip
    assert (annotators, pairs, systems) == (3, 3, 4)
    assert tau == pytest.approx(expected_tau) and rho == pytest.approx(expected_rho)


def test_weighted_kappa_equals_the_formula_the_judge_tests_expect() -> None:
    from tests.report import formulas

    rng = random.Random(8)
    pairs = [(float(rng.randint(1, 3)), float(rng.randint(1, 3))) for _ in range(25)]
    found = agreement.weighted_kappa([a for a, _ in pairs], [b for _, b in pairs])
    assert found == pytest.approx(formulas.weighted_kappa(pairs), rel=1e-12)


def _pair_alpha_by_rows(x: np.ndarray, y: np.ndarray, level: str) -> float:
    """pair_alpha as it was written before it counted the (value, value) cells: a row of value counts per pair,
    then ``stats.krippendorff_alpha`` (kept here as the reference)."""
    from annols.analysis.inference import stats

    codes, values = pd.factorize(np.concatenate([x, y]), sort=True)
    counts = np.zeros((len(x), len(values)), dtype=np.int64)
    rows = np.arange(len(x))
    np.add.at(counts, (rows, codes[: len(x)]), 1)
    np.add.at(counts, (rows, codes[len(x) :]), 1)
    domain = [float(v) for v in values] if level in agreement.NUMERIC_LEVELS else None
    return stats.krippendorff_alpha(counts, level, domain)


@pytest.mark.parametrize("case", ["codes", "floats", "never equal", "many values", "one value"])
def test_pair_alpha_from_the_cells_is_the_alpha_of_a_row_per_pair_to_the_bit(case: str) -> None:
    """Beyond ``DIRECT_UNITS`` pairs, pair_alpha pools the pairs from their (value, value) cells; the reference
    is the row per pair it replaced: the same alpha to the bit (equal pairs or none, integers or floats, more
    values than the rows fit in one integer, a single value)."""
    from annols.analysis.inference import stats

    rng = np.random.default_rng(["codes", "floats", "never equal", "many values", "one value"].index(case))
    n = stats.DIRECT_UNITS + 1 + int(rng.integers(0, 5000))
    x = rng.integers(1, 6, n)
    y = np.clip(x + rng.integers(-1, 2, n), 1, 5)
    if case == "floats":
        x, y = x * 0.5, y * 0.5
    elif case == "never equal":
        y = np.where(x == y, 6 - x + (x == 3), y)
        assert (x != y).all()
    elif case == "many values":
        x = rng.integers(0, 45, n)
        y = np.clip(x + rng.integers(-3, 4, n), 0, 44)
    elif case == "one value":
        x, y = np.full(n, 2), np.full(n, 2)
    assert agreement._pair_cells(x, y) is not None  # the cells' path is the one under test
    for level in ("nominal", "ordinal"):
        found, expected = agreement.pair_alpha(x, y, level), _pair_alpha_by_rows(x, y, level)
        np.testing.assert_array_equal(np.array(found), np.array(expected))
        if case != "one value":
            assert np.isfinite(found)
    assert agreement._pair_cells(np.array(["a", "b"], dtype=object), np.array(["b", "a"], dtype=object)) is None
    assert agreement._pair_cells(np.array([1.0, np.nan]), np.array([1.0, 2.0])) is None


def test_weighted_kappa_in_place_is_the_formula_it_replaced_to_the_bit() -> None:
    """weighted_kappa squares the differences in place and finds the distinct values from each side's; the
    reference is the expression it replaced."""
    rng = np.random.default_rng(3)
    for trial in range(30):
        n = int(rng.integers(1, 3000))
        x = rng.integers(1, 8, n).astype(float) if trial % 2 else rng.normal(size=n).round(3)
        y = np.where(rng.random(n) < 0.5, x, rng.permutation(x))
        if trial % 5 == 0:
            y = x.copy()
        if trial % 7 == 0:
            x, y = np.full(n, 3.0), np.full(n, 3.0)
        expected = np.nan
        if len(np.unique(np.concatenate([x, y]))) >= 2:
            chance = float(x.var() + y.var() + (x.mean() - y.mean()) ** 2)
            expected = float(1 - np.mean((x - y) ** 2) / chance) if chance > 0 else np.nan
        np.testing.assert_array_equal(np.array(agreement.weighted_kappa(x, y)), np.array(expected))
        np.testing.assert_array_equal(np.array(agreement.cohen_or_weighted(x, y, "ordinal")), np.array(expected))


def test_first_seen_is_pd_factorize() -> None:
    """``agreement._first_seen`` returns integers already numbered by their first row as they are; the
    reference is ``pd.factorize``, for those and for integers, floats, words and tuples that are not."""
    rng = np.random.default_rng(5)
    for trial in range(60):
        n = int(rng.integers(0, 400))
        raw = rng.integers(-2 if trial % 4 == 0 else 0, int(rng.integers(1, 50)), n)
        cases = [raw, pd.factorize(raw)[0], pd.factorize(raw)[0].astype(np.int32), raw.astype(float),
                 raw.astype(str).astype(object)]
        if n:
            cases.append(np.concatenate([[0], pd.factorize(raw)[0] + 1, [int(raw.max()) + 5]]))  # a gap: not numbered
        for units in [*cases, [(f"t{u}", u % 2) for u in raw] + [("x", 0)]]:
            series = pd.Series(units)
            np.testing.assert_array_equal(agreement._first_seen(series),
                                          pd.factorize(series, use_na_sentinel=False)[0])  # fmt: skip


def test_spearman_of_unit_means_is_the_groupby_it_replaced_to_the_bit() -> None:
    """Each unit's pairs are a run of rows; the runs' first x and mean y give the groupby's floats. The reference
    is ``groupby("unit", sort=False).agg(first, mean)``: runs of 1 to 8 pairs, floats of every magnitude,
    integers, and nan (the groupby's own path then)."""
    rng = np.random.default_rng(12)
    for trial in range(120):
        g = int(rng.integers(1, 400))
        lengths = rng.integers(1, 9, g)
        unit = np.repeat(rng.permutation(g) * 3, lengths).astype(np.int32)
        x = np.repeat(rng.normal(size=g).round(int(rng.integers(0, 3))), lengths)
        y = rng.normal(size=len(unit)) * 10.0 ** rng.integers(-8, 9, len(unit))
        if trial % 3 == 0:
            x, y = np.repeat(rng.integers(1, 6, g), lengths), rng.integers(1, 6, len(unit))
        if trial % 10 == 1:
            y = y.astype(float)
            y[int(rng.integers(0, len(y)))] = np.nan
        per_unit = pd.DataFrame({"unit": unit, "value": x, "value_other": y}).groupby("unit", sort=False).agg(
            mine=("value", "first"), rest=("value_other", "mean"))  # fmt: skip
        expected = agreement.correlation(per_unit["mine"], per_unit["rest"], "spearman")
        found = agreement._spearman_of_unit_means(unit, x, y, g)
        np.testing.assert_array_equal(np.array(found), np.array(expected))


def test_sorted_codes_of_a_categorical_are_pd_factorize_of_its_names() -> None:
    """``agreement._sorted_codes`` of a categorical column numbers its values as ``pd.factorize(sort=True)`` numbers
    the same names as objects: categories in another order than the names', unused ones, missing values; and
    ``each_against_the_rest`` gives the same rows for the annotators as a categorical and as names."""
    rng = np.random.default_rng(9)
    pool = ["zoe@x", "al@x", "Bo@x", "émile@x", "al@y", "10@x", "9@x"]
    for trial in range(80):
        n = int(rng.integers(0, 300))
        names = rng.choice(pool[: int(rng.integers(1, len(pool) + 1))], n).astype(object)
        if trial % 3 == 0 and n:
            names[rng.integers(0, n, max(1, n // 10))] = None
        order = list(rng.permutation(pool)) + (["unused@z"] if trial % 2 else [])
        column = pd.Series(pd.Categorical(names, categories=order))
        codes, found = agreement._sorted_codes(column)
        expected_codes, expected = pd.factorize(pd.Series(names, dtype=object), sort=True)
        np.testing.assert_array_equal(codes, expected_codes)
        assert list(found) == list(expected)
        if n and trial % 3:
            answers = pd.DataFrame({"unit": rng.integers(0, max(1, n // 3), n), "annotator": column,
                                    "value": rng.integers(1, 6, n).astype(float)})  # fmt: skip
            plain = answers.assign(annotator=np.asarray(names, dtype=object))
            for level in ("nominal", "ordinal"):
                assert repr(agreement.each_against_the_rest(answers, level)) == repr(
                    agreement.each_against_the_rest(plain, level))
