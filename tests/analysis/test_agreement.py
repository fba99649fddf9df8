"""The shared agreement helpers: the interval alpha against the krippendorff library and the coincidences,
and the reasons a report gives where agreement cannot be computed."""

from __future__ import annotations

import random

import krippendorff
import numpy as np
import pytest

from annols.analysis import agreement
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
