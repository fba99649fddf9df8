"""Seeded hybrid studies for the judge-assisted estimates: coverage and width of PPI++ against humans only.

A study has two systems (A better by ``EFFECT`` points) rated on ``items`` items. An output's true quality is
its system's mean + the item's level (sd ``ITEM_SD``, shared by both systems) + its own (sd ``OUTPUT_SD``);
each of three annotators per item rates it with noise (sd 1). The judge answers every item:
``mean + bias + r x (quality - mean) + sqrt(1 - r^2) x sd x noise``, so its correlation with the outputs'
true quality within a system is ``r`` (a negative ``r``: an adversarial judge), and ``bias`` (per system)
shifts it toward one system. Humans rate a random ``share`` of the items. Each study goes through the
report's own estimates (:func:`annols.analysis.judging.ppi.estimates`) as a judgments table, and each interval is
checked against the truth: the systems' means and their difference.

``scripts/ppi_calibration.py`` runs the full size and prints the table of ``docs/statistics.md``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd  # type: ignore[import-untyped, unused-ignore]

from annols.analysis.judging import ppi

MEANS = {"A": 3.3, "B": 3.0}
EFFECT = MEANS["A"] - MEANS["B"]
ITEM_SD = 0.7
OUTPUT_SD = 0.5
ANNOTATOR_SD = 1.0
ANNOTATORS = 3
JUDGE = "judge:sim"
TRUTH = {"A": MEANS["A"], "B": MEANS["B"], "A - B": EFFECT}


def study(rng: np.random.Generator, items: int, share: float, r: float, bias: tuple[float, float] = (0.0, 0.0)
          ) -> pd.DataFrame:  # fmt: skip
    """The judgments table of one hybrid study (ratings of question ``quality``)."""
    systems = list(MEANS)
    mean = np.array([MEANS[s] for s in systems])
    quality = mean + rng.normal(0, ITEM_SD, (items, 1)) + rng.normal(0, OUTPUT_SD, (items, 2))
    sd = math.hypot(ITEM_SD, OUTPUT_SD)
    judge = mean + np.array(bias) + r * (quality - mean) + math.sqrt(1 - r * r) * sd * rng.normal(0, 1, (items, 2))
    humans = rng.permutation(items)[: max(2, round(share * items))]
    ratings = quality[humans][:, None, :] + rng.normal(0, ANNOTATOR_SD, (len(humans), ANNOTATORS, 2))
    keys = np.array([f"i{i}" for i in range(items)])
    rows = [(keys[i], JUDGE, systems[s], judge[i, s]) for i in range(items) for s in range(2)]
    rows += [(keys[i], f"a{a}", systems[s], ratings[n, a, s]) for n, i in enumerate(humans)
             for a in range(ANNOTATORS) for s in range(2)]  # fmt: skip
    frame = pd.DataFrame(rows, columns=["task_key", "annotator", "system", "value"])
    return frame.assign(kind="rating", question="quality", opponent="")


@dataclass(frozen=True)
class Coverage:
    estimate: str
    studies: int
    ppi: float  # share of the PPI++ intervals holding the truth
    humans: float  # of the human-only ones (on the same items)
    width_ratio: float  # median PPI++ width over human-only width
    gain: float  # median effective human items over the items with humans

    @property
    def error(self) -> float:
        """Monte Carlo standard error of a coverage at 95%."""
        return math.sqrt(0.95 * 0.05 / self.studies)


def coverage(r: float, studies: int, seed: int, items: int = 400, share: float = 0.25,
             bias: tuple[float, float] = (0.0, 0.0)) -> list[Coverage]:  # fmt: skip
    """Coverage of each estimate (A, B, A - B) over ``studies`` seeded studies."""
    entropy = [seed, round(1000 * abs(r)), round(1000 * abs(bias[0])), round(1000 * abs(bias[1]))]
    negative = [int(r < 0), int(bias[0] < 0), int(bias[1] < 0)]
    rng = np.random.default_rng(entropy + negative if any(negative) else entropy)  # seed entries must be >= 0
    found = []
    for _ in range(studies):
        table = ppi.estimates(study(rng, items, share, r, bias), [JUDGE], _is_judge)
        found.append(table.assign(truth=table["estimate"].map(TRUTH)))
    rows = pd.concat(found, ignore_index=True)
    out = []
    for name, part in rows.groupby("estimate", sort=True):
        inside = (part["PPI++ low"] <= part["truth"]) & (part["truth"] <= part["PPI++ high"])
        human = (part["humans low"] <= part["truth"]) & (part["truth"] <= part["humans high"])
        out.append(Coverage(str(name), len(part), float(inside.mean()), float(human.mean()),
                            float(part["width ratio"].median()),
                            float((part["worth human items"] / part["items with humans"]).median())))  # fmt: skip
    return out


def _is_judge(name: str) -> bool:
    return name == JUDGE


def variance_ratio(r: float, n: int, unlabeled: int, studies: int, seed: int) -> float:
    """The PPI++ estimate's variance over the human mean's, across seeded samples of (humans, judge) with
    correlation ``r``: what :func:`annols.analysis.judging.ppi.variance_factor` predicts."""
    rng = np.random.default_rng([seed, round(1000 * r), n, unlabeled])
    ppi_points, human_points = [], []
    for _ in range(studies):
        y = rng.normal(0, 1, n + unlabeled)
        f = 0.5 + r * y + math.sqrt(1 - r * r) * rng.normal(0, 1, n + unlabeled)  # biased by 0.5, correlation r
        e = ppi.estimate(y[:n], f[:n], f[n:])
        ppi_points.append(e.point)
        human_points.append(e.human)
    return float(np.var(ppi_points) / np.var(human_points))
