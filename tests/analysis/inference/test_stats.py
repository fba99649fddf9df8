"""Each statistic of annols.analysis.inference.stats against worked textbook examples and the tests' own formulas."""

from __future__ import annotations

import math

import numpy as np
import pytest
from statsmodels.stats.inter_rater import aggregate_raters

from annols.analysis.inference import stats
from tests.report import formulas

# Wikipedia, "Fleiss' kappa", worked example: 10 subjects, 14 raters, 5 categories; kappa = 0.210.
FLEISS_WIKIPEDIA = [
    [0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7],
]  # fmt: skip

# Wikipedia, "Cohen's kappa": 50 proposals, yes/yes 20, yes/no 5, no/yes 10, no/no 15; kappa = 0.4.
COHEN_WIKIPEDIA = [("yes", "yes")] * 20 + [("yes", "no")] * 5 + [("no", "yes")] * 10 + [("no", "no")] * 15

# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", example C: 4 observers, 12 units,
# missing data. nominal alpha = 0.743, ordinal alpha = 0.815.
N = None
KRIPPENDORFF_2011 = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, N, N, N],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, N, 3],
    [N, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, N],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, N],
]
# Wikipedia, "Krippendorff's alpha": 3 coders, 15 units; nominal alpha = 0.691.
KRIPPENDORFF_WIKIPEDIA = [
    [N, N, N, N, N, 3, 4, 1, 2, 1, 1, 3, 3, N, 3],
    [1, N, 2, 1, 3, 3, 4, 3, N, N, N, N, N, N, N],
    [N, N, 2, 1, 3, 4, 4, N, 2, 1, 1, 3, 3, N, 4],
]

# Kendall's W by hand: 3 raters, 4 objects, the third rater ties the first two objects.
# Midranks: (1, 2, 3, 4), (1, 3, 2, 4), (1.5, 1.5, 3, 4); rank sums 3.5, 6.5, 8, 12; mean 7.5;
# S = 16 + 1 + 0.25 + 20.25 = 37.5; T = 2^3 - 2 = 6; W = 12 * 37.5 / (9 * 60 - 3 * 6) = 450 / 522 = 25 / 29.
KENDALL_HAND = [[1, 2, 3, 4], [1, 3, 2, 4], [1, 1, 3, 4]]  # ties as given: 1, 1 -> midranks 1.5, 1.5


def units_of(data: list[list[int | None]]) -> list[list[int]]:
    return [[row[u] for row in data if row[u] is not None] for u in range(len(data[0]))]  # type: ignore[misc]


def value_counts(units: list[list[int]], domain: list[int]) -> np.ndarray:
    return np.array([[u.count(v) for v in domain] for u in units])


def test_fleiss_kappa_textbook() -> None:
    assert formulas.fleiss_kappa(FLEISS_WIKIPEDIA) == pytest.approx(0.210, abs=5e-4)
    assert stats.fleiss_kappa(np.array(FLEISS_WIKIPEDIA)) == pytest.approx(formulas.fleiss_kappa(FLEISS_WIKIPEDIA))


def test_fleiss_kappa_from_ratings_and_undefined_cases() -> None:
    ratings = np.array([[0, 0, 1], [1, 1, 1], [2, 2, 0], [0, 1, 2], [2, 2, 2]])  # subjects x raters
    table, _ = aggregate_raters(ratings, n_cat=3)
    expected = formulas.fleiss_kappa(table.tolist())
    assert stats.fleiss_kappa(table) == pytest.approx(expected)
    assert math.isnan(stats.fleiss_kappa(np.array([[2, 0], [1, 2]])))  # unequal raters per subject
    assert math.isnan(stats.fleiss_kappa(np.zeros((0, 3))))


def test_cohens_kappa_textbook() -> None:
    assert formulas.cohens_kappa(COHEN_WIKIPEDIA) == pytest.approx(0.4)
    assert stats.cohens_kappa(np.array([[20, 5], [10, 15]])) == pytest.approx(0.4)
    assert math.isnan(stats.cohens_kappa(np.array([[4, 0], [0, 0]])))  # one category only: undefined


@pytest.mark.parametrize("level, expected", [("nominal", 0.743), ("ordinal", 0.815)])
def test_krippendorff_alpha_textbook(level: str, expected: float) -> None:
    units = units_of(KRIPPENDORFF_2011)
    domain = [1, 2, 3, 4, 5]
    own = formulas.krippendorff_alpha(units, level, domain)
    assert own == pytest.approx(expected, abs=5e-4)
    assert stats.krippendorff_alpha(value_counts(units, domain), level, domain) == pytest.approx(own)


def test_krippendorff_alpha_wikipedia_and_pooled_path(monkeypatch: pytest.MonkeyPatch) -> None:
    units = units_of(KRIPPENDORFF_WIKIPEDIA)
    assert formulas.krippendorff_alpha(units) == pytest.approx(0.691358, abs=1e-6)
    counts = value_counts(units, [1, 2, 3, 4])
    direct = stats.krippendorff_alpha(counts)
    assert direct == pytest.approx(0.691358, abs=1e-6)
    monkeypatch.setattr(stats, "DIRECT_UNITS", 0)  # force the pooled path for large inputs
    assert stats.krippendorff_alpha(counts) == pytest.approx(direct, abs=1e-12)
    ordinal = value_counts(units_of(KRIPPENDORFF_2011), [1, 2, 3, 4, 5])
    assert stats.krippendorff_alpha(ordinal, "ordinal") == pytest.approx(0.8153875, abs=1e-6)


def test_krippendorff_alpha_pooled_matches_library_on_random_data(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(7)
    counts = np.zeros((400, 4), dtype=int)
    for row in counts:
        for value in rng.integers(0, 4, size=rng.integers(1, 5)):
            row[value] += 1
    direct = {level: stats.krippendorff_alpha(counts, level) for level in ("nominal", "ordinal")}
    monkeypatch.setattr(stats, "DIRECT_UNITS", 0)
    for level, value in direct.items():
        assert stats.krippendorff_alpha(counts, level) == pytest.approx(value, abs=1e-12)


def test_kendall_w_hand_computation() -> None:
    assert formulas.midranks([3, 1, 1, 2]) == [4, 1.5, 1.5, 3]
    assert formulas.kendall_w(KENDALL_HAND) == pytest.approx(25 / 29)
    assert float(stats.kendall_w(np.array(KENDALL_HAND))) == pytest.approx(25 / 29)
    # Perfect agreement is 1; everything tied is undefined; a batch of rankings at once.
    batch = np.array([[[1, 2, 3, 4]] * 3, [[1, 1, 1, 1]] * 3, KENDALL_HAND])
    w = stats.kendall_w(batch)
    assert w[0] == pytest.approx(1.0) and math.isnan(w[1]) and w[2] == pytest.approx(25 / 29)


def test_kendall_w_random_rankings_with_ties() -> None:
    rng = np.random.default_rng(3)
    for _ in range(50):
        ranks = rng.integers(1, 5, size=(3, 4))
        own = formulas.kendall_w(ranks.tolist())
        got = float(stats.kendall_w(ranks))
        assert (math.isnan(own) and math.isnan(got)) or got == pytest.approx(own)


def test_bootstrap_shares_reproducible_and_bracketing() -> None:
    counts = np.array([[3, 0, 0], [2, 1, 0], [0, 1, 2], [1, 1, 1], [3, 0, 0], [0, 0, 3]] * 5)
    a = stats.bootstrap_shares(counts, 500, np.random.default_rng(1))
    b = stats.bootstrap_shares(counts, 500, np.random.default_rng(1))
    assert np.array_equal(a, b)
    share = counts.sum(axis=0) / counts.sum()
    assert np.all(a[:, 0] <= share) and np.all(share <= a[:, 1])
    # Cluster standard error of a ratio estimator: the interval is about +-1.96 of it.
    n = len(counts)
    totals = counts.sum(axis=1)
    for k in range(3):
        resid = counts[:, k] - share[k] * totals
        se = math.sqrt(n / (n - 1) * (resid**2).sum()) / totals.sum()
        assert a[k, 1] - a[k, 0] == pytest.approx(2 * 1.96 * se, rel=0.25)
    assert np.isnan(stats.bootstrap_shares(counts, 0, np.random.default_rng(1))).all()
