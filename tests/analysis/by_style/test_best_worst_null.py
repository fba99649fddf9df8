"""The best-worst paired tests' false-positive rate on simulated null studies (no system better than another).

Each study: pools of five systems' outputs (an article's summaries), the pool's tuples of four made by
:func:`annols.definition.design.tuples`, three annotators per tuple drawn from a pool of twelve, each choosing best and
worst by the outputs' quality plus their own noise. An output's quality varies around its system's (zero for
every system): the tuples of one pool share it, so they are not independent observations of the systems.
With the item (the pool) as the unit the test keeps its level; with the tuple as the unit (what the report
did before) it rejects far more often, which the second test shows the simulation can see.
"""

from __future__ import annotations

import numpy as np

from annols.analysis.by_style import best_worst
from annols.analysis.options import AnalysisOptions
from annols.analysis.planning import simulate
from annols.definition import design

SYSTEMS = 5
STUDIES = 120
POOLS = 16
LEVEL = 0.05


def rejection_rate(unit_is_tuple: bool, seed: int) -> float:
    rng = np.random.default_rng(seed)
    options = AnalysisOptions(bootstrap=0)
    tuples = design.tuples(SYSTEMS, 4, 8, seed=seed)  # each pool's design (which systems meet where)
    rejected = tested = 0
    for _ in range(STUDIES):
        # annols.analysis.planning.simulate
        rows = simulate.best_worst_study(rng, POOLS, simulate.Spread(item=1.0), tuples)
        if unit_is_tuple:
            rows[best_worst.UNIT] = rows["task_key"]
        p = best_worst.paired_tests(rows, options)["p (Wilcoxon)"].dropna()
        rejected += int((p < LEVEL).sum())
        tested += len(p)
    assert tested == STUDIES * 10  # every pair of five systems in every study
    return rejected / tested


def test_the_items_test_keeps_its_level_on_null_studies() -> None:
    rate = rejection_rate(unit_is_tuple=False, seed=20261126)
    # 1,200 comparisons: the level plus three Monte Carlo standard errors (0.0063 each). Seen: 0.051.
    assert rate <= LEVEL + 3 * np.sqrt(LEVEL * (1 - LEVEL) / (STUDIES * 10))


def test_the_same_simulation_rejects_the_tuple_as_unit() -> None:
    # Seen: 0.31 at the 5% level. The tuples of one pool share its outputs' quality.
    assert rejection_rate(unit_is_tuple=True, seed=20261127) > 3 * LEVEL
