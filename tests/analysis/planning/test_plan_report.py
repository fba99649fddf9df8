"""``annols plan`` against the report under item and annotator variance: planted effects reach plan's power, and a
pilot's report and its plan agree on what the design can detect."""

from __future__ import annotations

import math
from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pandas as pd  # type: ignore[import-untyped, unused-ignore]
import pytest

from annols.analysis.by_style import ratings
from annols.analysis.options import AnalysisOptions
from annols.analysis.planning import plan, simulate
from annols.definition import Aspect

# (assumptions, items, annotators): the items' test where annotators do not vary, min F' where they do.
DESIGNS = [
    (plan.Assumptions("pairwise", 0.3, tie_rate=0.2, item_sd=1.0), 40, 3),
    (plan.Assumptions("pairwise", 0.45, tie_rate=0.2, item_sd=1.0, annotator_sd=0.4), 40, 6),
    (plan.Assumptions("ratings", 0.3, item_sd=0.7, residual_sd=1.0), 40, 3),
    (plan.Assumptions("ratings", 0.5, item_sd=0.7, annotator_sd=0.3, residual_sd=1.0), 30, 6),
]
STUDIES = 150  # planted studies per design, through the report's own functions
PLANNED = 2000  # plan's own simulations
SEED = 20261126


@pytest.mark.parametrize(("a", "items", "annotators"), DESIGNS,
                         ids=[f"{a.style}-{n}x{k}-annotator-sd-{a.annotator_sd}" for a, n, k in DESIGNS])  # fmt: skip
def test_planted_effects_reach_the_power_plan_predicts(a: plan.Assumptions, items: int, annotators: int) -> None:
    predicted = plan.simulate(a, items, annotators, PLANNED, seed=SEED)
    empirical = simulate.planted_power(a, items, annotators, STUDIES, seed=SEED + 1)
    # Two independent Monte Carlo estimates of one power: their difference within 3.5 combined standard errors.
    error = math.sqrt(predicted * (1 - predicted) * (1 / STUDIES + 1 / PLANNED))
    assert 0.2 < predicted < 0.95  # a power the comparison can tell apart from 0 and 1
    assert abs(empirical.rate - predicted) <= 3.5 * error, (empirical.rate, predicted, error)


def pilot(items: int, annotators: int, seed: int) -> pd.DataFrame:
    """A ratings pilot of systems A and B with item and annotator variance (B better by 0.4 on average, each
    annotator's preference for B their own)."""
    rng = np.random.default_rng(seed)
    level = rng.normal(0, 0.8, items)
    item = rng.normal(0, 0.5, items)
    taste = rng.normal(0, 0.3, annotators)
    rows = []
    for i in range(items):
        for j in range(annotators):
            a = 3 + level[i] + rng.normal(0, 0.7)
            b = a + 0.4 + item[i] + taste[j] + rng.normal(0, 1.0)
            rows += [("quality", f"i{i}", f"a{j}", "A", a), ("quality", f"i{i}", f"a{j}", "B", b)]
    return pd.DataFrame(rows, columns=["aspect", "task_key", "annotator", "system", "rating"])


def test_the_pilots_report_and_its_plan_agree_on_what_the_design_can_detect() -> None:
    """The report's second result (annotators as sampled) says the pilot's design could detect >= X; plan, from the
    same pilot (its variance components by MixedLM), gives that design power about 0.8 at X."""
    items, annotators = 30, 6
    frame = pilot(items, annotators, seed=5)
    spec = SimpleNamespace(aspects=[Aspect("quality", "quality")], scale="slider",
                           slider=SimpleNamespace(min=-10, max=20), answers=())  # fmt: skip
    found = ratings.sections(frame, spec, AnalysisOptions(bootstrap=0, seed=0), (frame, ["quality"]))
    second = {t.name: t.frame for s in found for t in s.tables}["ratings_annotators_sampled"].iloc[0]
    x = float(second["detectable difference"])
    assert second["annotators"] == annotators and math.isfinite(x) and x > 0
    base = plan.Assumptions("ratings", 0.3, tests=1)
    a = plan._paired_pilot(frame.rename(columns={"rating": "value"}), "aspect", base, "pilot")
    assert a.annotator_sd > 0  # the pilot shows annotator variance: plan's power is min F''s
    power = plan.simulate(replace(a, effect=x), items, annotators, 4000, seed=6)
    assert power == pytest.approx(0.8, abs=0.05), (power, x, a)
