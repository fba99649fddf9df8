"""The second result, annotators as sampled: min F' against an independent computation, its interval and words,
and the report's tables and headline with five or more annotators and with fewer."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pandas as pd  # type: ignore[import-untyped, unused-ignore]
import pytest
from scipy.stats import f, ttest_1samp

from annols.analysis.by_style import ratings
from annols.analysis.inference import detectable, item_tests, sampled
from annols.analysis.leaderboard import conclusions
from annols.analysis.options import AnalysisOptions
from annols.analysis.planning import plan
from annols.definition import Aspect


def balanced(n: int, k: int, effect: float, item_sd: float, taste_sd: float, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return effect + rng.normal(0, item_sd, (n, 1)) + rng.normal(0, taste_sd, (1, k)) + rng.normal(0, 1, (n, k))


def cells(y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    n, k = y.shape
    item, annotator = np.meshgrid(np.arange(n), np.arange(k), indexing="ij")
    return item.ravel(), annotator.ravel(), y.ravel()


def test_min_f_prime_equals_clarks_from_the_two_one_sample_t_tests() -> None:
    """Independent: F1 from the items' one-sample t-test (annotators fixed), F2 from the annotators'; min F' =
    F1 F2 / (F1 + F2) on min(n, k) - 1 degrees of freedom (Clark 1973)."""
    y = balanced(30, 6, 0.4, 0.7, 0.5, seed=1)
    f1 = ttest_1samp(y.mean(axis=1), 0).statistic ** 2
    f2 = ttest_1samp(y.mean(axis=0), 0).statistic ** 2
    expected = f.sf(f1 * f2 / (f1 + f2), 1, 5)
    c = sampled.crossed(*cells(y))
    assert c.p == pytest.approx(expected, rel=1e-9)
    assert c.mean == pytest.approx(y.mean())
    assert float(item_tests.min_f_prime(y)[0]) == pytest.approx(expected, rel=1e-9)  # plan's, balanced arrays
    # The components are the two-way mean squares' (one observation per cell).
    n, k = y.shape
    resid = y - y.mean(axis=1, keepdims=True) - y.mean(axis=0, keepdims=True) + y.mean()
    ms_e = (resid**2).sum() / ((n - 1) * (k - 1))
    assert c.residual_var == pytest.approx(ms_e)
    assert c.item_var == pytest.approx(max(0.0, (k * y.mean(axis=1).var(ddof=1) - ms_e) / k))


def test_the_interval_is_the_one_the_test_inverts() -> None:
    for seed in range(20):
        y = balanced(20, 5, 0.35, 0.5, 0.4, seed=seed)
        frame = ratings_rows(y)
        row = sampled.paired(frame, "aspect", None, "rating").iloc[0]
        excludes_zero = row["CI low"] > 0 or row["CI high"] < 0
        assert excludes_zero == (row["p (min F')"] < 0.05)
        assert row["difference"] == pytest.approx(-y.mean())  # A - B; B is A plus the drawn difference


def ratings_rows(y: np.ndarray, aspect: str = "quality") -> pd.DataFrame:
    """Rating rows of systems A (3) and B (3 + y) by annotator a<j> on item i<i>."""
    n, k = y.shape
    rows = []
    for i in range(n):
        for j in range(k):
            rows += [(aspect, f"i{i}", f"a{j}", "A", 3.0), (aspect, f"i{i}", f"a{j}", "B", 3.0 + y[i, j])]
    return pd.DataFrame(rows, columns=["aspect", "task_key", "annotator", "system", "rating"])


@pytest.mark.parametrize(("p_items", "p_sampled", "words"), [
    (0.01, 0.01, "significant for new items and for new annotators"),
    (0.01, 0.2, "significant for new items judged by these annotators, not for new annotators"),
    (0.2, 0.2, "not significant for new items judged by these annotators, nor for new annotators"),
    (0.2, 0.01, "the two tests disagree, inconclusive"),
    (0.01, math.nan, "not given: 3 annotator(s), 5 or more needed"),
])  # fmt: skip
def test_the_reading_says_what_each_result_generalises_to(p_items: float, p_sampled: float, words: str) -> None:
    assert words in sampled.reading(p_items, p_sampled, 3)


def shim() -> SimpleNamespace:
    return SimpleNamespace(aspects=[Aspect("quality", "quality")], scale="slider",
                           slider=SimpleNamespace(min=-10, max=10), answers=())  # fmt: skip


def tastes_study(annotators: int) -> pd.DataFrame:
    """Three systems; B is better for these annotators by their own shared taste (0.6 each, a little noise),
    items add little: the items' test is sure of it, the annotators' spread (one in each annotators' set disagrees)
    leaves new annotators in doubt."""
    rng = np.random.default_rng(7)
    taste = np.full(annotators, 0.6)
    taste[0] = -0.6
    rows = []
    for i in range(40):
        for j in range(annotators):
            for s, shift in (("A", 0.0), ("B", taste[j]), ("C", -1.5)):
                rows.append(("quality", f"i{i}", f"a{j}", s, 3 + shift + rng.normal(0, 0.3)))
    return pd.DataFrame(rows, columns=["aspect", "task_key", "annotator", "system", "rating"])


def test_five_annotators_get_the_second_result_and_the_headline_reconciles_both() -> None:
    frame = tastes_study(5)
    options = AnalysisOptions(bootstrap=50, seed=0)
    found = ratings.sections(frame, shim(), options, (frame, ["quality"]))
    tables = {t.name: t.frame for s in found for t in s.tables}
    second = tables["ratings_annotators_sampled"]
    ab = second[(second["system"] == "A") & (second["opponent"] == "B")].iloc[0]
    assert ab["annotators"] == 5 and ab["items"] == 40 and ab["df"] == 4
    assert ab["p (items, Holm)"] < 0.05 <= ab["p (Holm)"]
    assert ab["reading"] == "significant for new items judged by these annotators, not for new annotators"
    assert ab["detectable difference"] > abs(ab["difference"])
    # The items' p beside it is the report's paired test's.
    tests = tables["ratings_paired_tests"]
    assert ab["p (items, Holm)"] == tests[(tests["system"] == "A") & (tests["opponent"] == "B")]["p (Holm)"].iloc[0]
    text = " ".join(t for s in found for t in s.text)
    assert "Annotators as sampled (Clark's min F'" in text
    # The headline (one line): the case is the items' only, and it says so.
    compared = conclusions.Compared(*_compared(frame))
    lines = _headlines(frame, compared, options)
    assert len(lines) == 1 and "\n" not in lines[0]
    assert lines[0].startswith("quality: significant for these annotators: B ranks above A")
    assert "not for new annotators" in lines[0]
    # In plan's words (issue 41): the items' claim holds, the crossed claim is not shown.
    assert "it holds for new items, these annotators (the items' test)" in lines[0]
    assert "; for new items and new annotators (the crossed test, min F', 5 annotators) p = " in lines[0]
    assert ": not shown, so significant for new items judged by these annotators" in lines[0]


def _compared(frame: pd.DataFrame) -> tuple[pd.DataFrame, list, pd.DataFrame]:
    tests = detectable.paired_tests(ratings.sample_means(frame), "aspect")
    return (detectable.paired_table(tests, "aspect", "mean rating"), [],
            sampled.paired(frame, "aspect", tests, "rating"))  # fmt: skip


def _headlines(frame: pd.DataFrame, compared: conclusions.Compared, options: AnalysisOptions) -> list[str]:
    from annols.analysis.leaderboard import reliability

    scores = reliability.scores_of_ratings(frame, ["quality"])
    section = conclusions.reliability_section("ratings", scores, options, compared.frame, compared.crossed)
    return section.summary


def test_fewer_than_five_annotators_get_no_second_result_and_are_told_why() -> None:
    frame = tastes_study(4)
    found = ratings.sections(frame, shim(), AnalysisOptions(bootstrap=0, seed=0), (frame, ["quality"]))
    names = {t.name for s in found for t in s.tables}
    assert "ratings_annotators_sampled" not in names and "ratings_paired_tests" in names
    text = " ".join(t for s in found for t in s.text)
    assert "Annotators as sampled: not given, as at most 4 distinct annotator(s)" in text
    lines = _headlines(frame, conclusions.Compared(*_compared(frame)), AnalysisOptions(bootstrap=50, seed=0))
    # No second result: the crossed claim (plan's words) is said to be untested, with why, and no p of its own.
    assert ("for new items and new annotators: not tested (it needs 5 or more annotators "
            "judging the pair)") in lines[0]
    assert "annotators) p = " not in lines[0]


def test_sampled_power_equals_a_simulation_of_min_f_prime() -> None:
    """The closed form of the detectable difference against plan's simulated crossed test on the same model."""
    a = plan.Assumptions("ratings", 0.45, item_sd=0.7, annotator_sd=0.3, residual_sd=1.0)
    sims = 3000
    simulated = plan.simulate(a, 30, 6, sims, seed=3)
    exact = detectable.sampled_power(0.45, 30, 6, 0.49, 0.09, 1.0, 0.05)
    assert simulated == pytest.approx(exact, abs=4 * math.sqrt(exact * (1 - exact) / sims))
    x = detectable.sampled_detectable(30, 6, 0.49, 0.09, 1.0, 0.05)
    assert detectable.sampled_power(x, 30, 6, 0.49, 0.09, 1.0, 0.05) == pytest.approx(0.8, abs=1e-6)


def test_pairwise_second_result_is_in_the_items_measure_beside_the_items_p() -> None:
    from annols.analysis.planning import simulate

    frame = simulate.pairwise(np.random.default_rng(4), 40, raters=simulate.PANEL)
    items = item_tests.sign_test(frame)
    second = sampled.pairwise(frame, items).iloc[0]
    assert second["annotators"] == 6 and second["items"] == 40
    # One judgment a cell: the cells' mean outcome over the decided share is the items' wins - losses %.
    assert second["difference"] == pytest.approx(items["win - loss %"].iloc[0])
    assert second["p (items, Holm)"] == items["p (Holm)"].iloc[0]
    y = frame["outcome"].map(item_tests.SCORE).to_numpy(dtype=float).reshape(40, 6)
    assert second["p (min F')"] == pytest.approx(float(item_tests.min_f_prime(y)[0]), rel=1e-9)


def test_best_worst_headline_counts_the_wins_that_hold_for_new_annotators() -> None:
    from annols.analysis.by_style import best_worst
    from annols.analysis.planning import simulate

    rows = simulate.best_worst_study(np.random.default_rng(5), 16, raters=simulate.PANEL)
    # S0 chosen best wherever shown, by every annotator: better than the others for new annotators too.
    shown = rows["uid"].isin(rows.loc[rows["system"] == "S0", "uid"])
    rows.loc[shown & (rows["value"] == 1), "value"] = 0
    rows.loc[shown & (rows["system"] == "S0"), "value"] = 1
    tests = best_worst.paired_tests(rows, AnalysisOptions(bootstrap=0, seed=0))
    second, tables, paragraph = best_worst.annotators_sampled(rows, tests)
    assert [t.name for t in tables] == ["best_worst_annotators_sampled"] and "Clark's min F'" in paragraph[0]
    assert set(second["annotators"]) == {6}
    table = best_worst.scores(rows).assign(**{"score low %": np.nan, "score high %": np.nan})
    top = table.iloc[0]["system"]
    line = best_worst.headline(table, tests, best_worst.split_half(rows, seed=0), second)
    sign = np.where(second["system"] == top, 1, -1)
    mine = (second["system"] == top) | (second["opponent"] == top)
    kept = int((mine & (second["p (Holm)"] < 0.05) & (sign * second["difference"] > 0)).sum())
    assert top == "S0" and kept >= 1
    assert f"on quality, {top} scored highest" in line
    assert "for new items, these annotators (the items' test) significantly above" in line
    assert f"; for new items and new annotators (the crossed test, min F'): above {kept} of them" in line


def test_nothing_is_said_where_no_systems_were_compared() -> None:
    """A question asked once per item (one system) has no comparison: no table and no 'not given' either."""
    frame = ratings_rows(np.zeros((10, 6)))
    frame = frame[frame["system"] == "A"]
    tests = detectable.paired_tests(ratings.sample_means(frame), "aspect")
    found = sampled.paired(frame, "aspect", tests, "rating")
    assert sampled.table("q_x", found, 6, "mean difference", tests) == ([], [])
