"""Judge-assisted estimates by seeded simulation (annols.analysis.judging.ppi_simulate), CI-sized: PPI++ intervals cover
the truth at least at their level within Monte Carlo error for judges of correlation 0, 0.5 and 0.9, each biased
toward one system; their width against the humans' alone; and the variance plan predicts from the correlation
against the variance simulated. ``scripts/ppi_calibration.py`` runs the full size (figures: docs/statistics.md)."""

from __future__ import annotations

import pytest

from annols.analysis.judging import ppi, ppi_simulate

SEED = 20261126
STUDIES = 300
BIAS = (0.5, 0.0)  # the judge adds half a point to system A: a judge that favours one system


@pytest.mark.parametrize("r", [0.0, 0.5, 0.9])
def test_ppi_intervals_cover_the_truth_for_a_biased_judge(r: float) -> None:
    found = {c.estimate: c for c in ppi_simulate.coverage(r, STUDIES, SEED, bias=BIAS)}
    assert set(found) == {"A", "B", "A - B"}
    for c in found.values():
        assert c.studies == STUDIES
        assert c.ppi >= 0.95 - 3 * c.error, c  # nominal within three Monte Carlo errors
        assert c.width_ratio <= 1.0, c  # never wider than the humans' alone (median)
    if r == 0.0:  # a judge that knows nothing: the humans' interval
        assert all(c.width_ratio > 0.97 for c in found.values()), found
    if r == 0.9:  # the scores gain most: the item's level is shared by judge and humans
        assert found["A"].width_ratio < 0.85 and found["B"].width_ratio < 0.85, found
        assert found["A"].gain > 1.3, found


def test_a_planted_study_judge_08_humans_on_a_fifth() -> None:
    """The issue's planted study: a judge of correlation 0.8, humans on 20% of the items. The difference's PPI++
    interval covers the truth and is narrower than the humans' on the same items."""
    rng = ppi_simulate.np.random.default_rng(SEED)
    frame = ppi_simulate.study(rng, 200, 0.2, 0.8, BIAS)
    table = ppi.estimates(frame, [ppi_simulate.JUDGE], lambda name: name == ppi_simulate.JUDGE)
    row = table.set_index("estimate").loc["A - B"]
    assert row["items with humans"] == 40 and row["judge-only items"] == 160
    assert row["PPI++ low"] <= ppi_simulate.EFFECT <= row["PPI++ high"]
    assert row["PPI++ high"] - row["PPI++ low"] < row["humans high"] - row["humans low"]


@pytest.mark.parametrize("r", [0.4, 0.8])
def test_plans_variance_factor_agrees_with_simulation(r: float) -> None:
    """plan --judge-correlation predicts 1 - r^2 N / (n + N) of the human-only variance; the simulated variance of
    the PPI++ estimate (lambda tuned on each sample) is within 0.06 of it."""
    n, unlabeled = 100, 400
    simulated = ppi_simulate.variance_ratio(r, n, unlabeled, 1500, SEED)
    assert simulated == pytest.approx(ppi.variance_factor(r, n, unlabeled), abs=0.06)
