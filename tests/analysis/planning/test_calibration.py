"""Null calibration: every test the report prints rejects at most at its level on studies with no system difference.

The null studies (:mod:`annols.analysis.planning.simulate`) have three annotators per item drawn from a pool, items that
differ, annotators who differ in leniency and taste (centred: the pool prefers no system), and go through the
report's own test functions. A seeded size that runs in seconds here; ``scripts/calibration.py`` runs the full
size and writes its figures into docs/statistics.md. Best-worst's is tests/analysis/by_style/test_best_worst_null.py.
"""

from __future__ import annotations

import numpy as np
import pandas as pd  # type: ignore[import-untyped, unused-ignore]
import pytest
from scipy.stats import binomtest

from annols.analysis.planning import simulate

STUDIES = {"pairwise": 300, "ratings": 150, "ranking": 150}
SEED = 20261128


def judgments_sign_test_p(frame: pd.DataFrame) -> np.ndarray:
    """The report's old pairwise test, kept here only as the counter-example: the binomial test of wins against
    losses over every judgment, as if an item's three annotators were three items."""
    wins, losses = int((frame["outcome"] == "win").sum()), int((frame["outcome"] == "loss").sum())
    return np.array([binomtest(wins, wins + losses).pvalue if wins + losses else np.nan])


@pytest.mark.parametrize("style", sorted(STUDIES))
def test_the_reports_test_keeps_its_level_on_null_studies(style: str) -> None:
    rate = simulate.rejection_rate(style, STUDIES[style], SEED)
    assert rate.tested >= STUDIES[style]  # every study tested (ratings and ranking: three pairs each)
    # The level plus three Monte Carlo standard errors.
    assert rate.rate <= simulate.LEVEL + 3 * rate.error, (rate.rate, rate.error)


def test_the_judgment_level_sign_test_fails_the_same_null_studies() -> None:
    """An item's three annotators share its outputs, so its judgments are not independent: counted as separate
    observations they reject far more often than the level (figures: docs/statistics.md)."""
    old = simulate.rejection_rate("pairwise", STUDIES["pairwise"], SEED, judgments_sign_test_p)
    new = simulate.rejection_rate("pairwise", STUDIES["pairwise"], SEED)
    assert old.tested == new.tested == STUDIES["pairwise"]
    assert old.rate > simulate.LEVEL + 4 * old.error > new.rate, (old.rate, new.rate)


# Annotators as sampled: the same six annotators judge every item, each with a taste drawn from a population that
# prefers no system (simulate.PANEL). Sizes chosen to run in seconds each; the full size is scripts/calibration.py.
PANEL_STUDIES = {"pairwise": 150, "ratings": 80, "ranking": 80, "best-worst": 40}


def within_level(rate: simulate.Rate) -> bool:
    """Not above the level beyond Monte Carlo error: a one-sided exact binomial test of rate > level at 0.001."""
    return bool(binomtest(rate.rejected, rate.tested, simulate.LEVEL, alternative="greater").pvalue >= 0.001)


@pytest.mark.parametrize("style", sorted(PANEL_STUDIES))
def test_annotators_as_sampled_keeps_its_level_under_annotator_by_system_interaction(style: str) -> None:
    """Min F' holds its level for new annotators; the items' test on the same studies answers for these six
    annotators, whose mean taste is not 0, and rejects far more often: expected, and why both are printed."""
    chosen = simulate.STYLES[style]
    rates = simulate.rejection_rates(style, PANEL_STUDIES[style], SEED,
                                     {"items": chosen.p, "sampled": chosen.sampled}, simulate.PANEL)  # fmt: skip
    sampled, items = rates["sampled"], rates["items"]
    assert sampled.tested == items.tested >= PANEL_STUDIES[style]
    assert within_level(sampled), (sampled.rate, sampled.tested)
    assert binomtest(items.rejected, items.tested, simulate.LEVEL, alternative="greater").pvalue < 0.001, items.rate
