"""Seeded studies at the ceiling of a bounded scale: coverage and width of the judge-assisted intervals.

A study rates two systems on a 1-5 scale. Each item draws, per system, its chance of the top rating from a
beta distribution with mean ``top`` (system A) or ``top - GAP`` (system B) and concentration 4, so items differ
(some at the ceiling, some not); a rating is 5 with that chance, else 2, 3 or 4 (shares 0.2, 0.3, 0.5). Each
human item gets ``annotators`` ratings; a judge rates every item as one more rater would, leaning to the top
(its chance of 5 is the item's to the power 0.8: biased, correlated with the humans through the item). Humans
rate ``items`` items, the judge those and ``JUDGE_ONLY`` x as many more. The truth is each system's expected
rating, ``p x 5 + (1 - p) x 3.3`` with p its mean chance of 5, and their difference.

Each study goes through the report's own estimates (:func:`annols.analysis.ppi.estimates`) twice: with the
scale's range (the bounded intervals the report prints, :mod:`annols.analysis.intervals`) and without (the
CLT intervals of ppi-python, for the widths beside them). ``scripts/ceiling_coverage.py`` runs the full size
and writes the table of ``docs/statistics.md``; tests/analysis/test_ceiling.py runs a seeded small size.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd  # type: ignore[import-untyped, unused-ignore]

from annols.analysis import ppi

OTHER = np.array([2.0, 3.0, 4.0])
OTHER_SHARES = np.array([0.2, 0.3, 0.5])
BELOW = float(OTHER @ OTHER_SHARES)  # 3.3: the mean of a rating that is not 5
CONCENTRATION = 4.0
GAP = 0.1  # system B's chance of 5 is this much lower
JUDGE_ONLY = 3  # judge-only items per human item (humans on a quarter)
JUDGE_LEAN = 0.8
JUDGE = "judge:sim"
QUESTION = "quality"
RANGES = {QUESTION: (1.0, 5.0)}


def truth(top: float) -> dict[str, float]:
    a, b = top * 5 + (1 - top) * BELOW, (top - GAP) * 5 + (1 - top + GAP) * BELOW
    return {"A": a, "B": b, "A - B": a - b}


def _ratings(rng: np.random.Generator, chance: np.ndarray, raters: int) -> np.ndarray:
    """items x raters ratings, 5 with each item's chance, else 2, 3 or 4."""
    top = rng.random((len(chance), raters)) < chance[:, None]
    return np.where(top, 5.0, rng.choice(OTHER, size=(len(chance), raters), p=OTHER_SHARES))


def study(rng: np.random.Generator, items: int, annotators: int, top: float) -> pd.DataFrame:
    """The judgments table of one study (ratings of question :data:`QUESTION`)."""
    total = items * (1 + JUDGE_ONLY)
    rows = []
    for system, mean in (("A", top), ("B", top - GAP)):
        chance = rng.beta(mean * CONCENTRATION, (1 - mean) * CONCENTRATION, total)
        judge = _ratings(rng, chance**JUDGE_LEAN, 1)[:, 0]
        humans = _ratings(rng, chance[:items], annotators)
        rows += [(f"i{i}", JUDGE, system, judge[i]) for i in range(total)]
        rows += [(f"i{i}", f"a{a}", system, humans[i, a]) for i in range(items) for a in range(annotators)]
    frame = pd.DataFrame(rows, columns=["task_key", "annotator", "system", "value"])
    return frame.assign(kind="rating", question=QUESTION, opponent="")


@dataclass(frozen=True)
class Coverage:
    top: float
    items: int
    annotators: int
    estimate: str  # "systems" (A and B) or "difference"
    interval: str  # "humans" or "PPI++"
    tested: int
    bounded: float  # coverage of the bounded interval (the report's)
    clt: float  # of the CLT interval on the same studies
    bounded_width: float  # mean width
    clt_width: float
    zero_width: int  # CLT intervals of zero width among them (all-equal humans)

    @property
    def error(self) -> float:
        """Monte Carlo standard error of a coverage of 95%."""
        return math.sqrt(0.95 * 0.05 / self.tested)


def coverage(top: float, items: int, annotators: int, studies: int, seed: int) -> list[Coverage]:
    """Coverage of the humans-only and PPI++ intervals of each system and the difference, over seeded studies."""
    rng = np.random.default_rng([seed, round(100 * top), items, annotators])
    found = []
    for _ in range(studies):
        frame = study(rng, items, annotators, top)
        bounded = ppi.estimates(frame, [JUDGE], _is_judge, ranges=RANGES)
        clt = ppi.estimates(frame, [JUDGE], _is_judge)
        found.append(bounded.merge(clt, on="estimate", suffixes=("", " clt")))
    rows = pd.concat(found, ignore_index=True)
    rows["truth"] = rows["estimate"].map(truth(top))
    rows["kind"] = np.where(rows["estimate"].str.contains(" - ", regex=False), "difference", "systems")
    out = []
    for kind, part in rows.groupby("kind", sort=False):
        for name, low, high in (("humans", "humans low", "humans high"), ("PPI++", "PPI++ low", "PPI++ high")):
            inside = (part[low] <= part["truth"]) & (part["truth"] <= part[high])
            c_low, c_high = part[f"{low} clt"], part[f"{high} clt"]
            c_inside = (c_low <= part["truth"]) & (part["truth"] <= c_high)  # nan (no interval): not covered
            out.append(Coverage(top, items, annotators, str(kind), name, len(part), float(inside.mean()),
                                float(c_inside.mean()), float((part[high] - part[low]).mean()),
                                float((c_high - c_low).mean()), int(c_low.isna().sum())))  # fmt: skip
    return out


def _is_judge(name: str) -> bool:
    return name == JUDGE
