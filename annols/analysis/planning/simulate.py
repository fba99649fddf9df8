"""Null studies for calibration: judgments tables with no difference between systems, and the report's tests on them.

Each study is written as the judgments table the report's analyses read, then tested by the
same functions the report uses, so a rejection rate measured here is the report's. Every
item is judged by three annotators drawn for that item from a pool; the pool's annotators
differ in leniency (the level of their scores) and in taste (which system they prefer), their
tastes centred (a taste and its opposite), so no system is better for the pool as a whole,
and items differ (an item's outputs are better or worse than its system's usual ones, the
same for every annotator of the item). The items' test must hold its level; a test that
counts an item's three annotators as three observations does not (see ``docs/statistics.md``).

- pairwise: two systems; a judgment is a tie with probability ``TIE_RATE``, else a win with
  probability expit(item + annotator's taste) (logit scale). Test: the sign test over items
  (:func:`annols.analysis.inference.item_tests.sign_test`).
- ratings: three systems, a 1-5 scale: round(3 + item's level + output's quality +
  annotator's leniency + taste + noise), clipped. Test: Wilcoxon over items of per-item mean
  differences (:func:`annols.analysis.inference.detectable.paired_tests` on
  :func:`annols.analysis.by_style.ratings.sample_means`, as the report's ratings section).
- ranking: three systems ranked by output quality + taste + noise. Test: the same Wilcoxon on
  per-item mean ranks (as the report's ``ranking_paired_tests``).
- best-worst: pools of five systems' outputs, the pool's tuples of four, three annotators per
  tuple choosing best and worst. Test: :func:`annols.analysis.by_style.best_worst.paired_tests`.

The second result, annotators as sampled (:mod:`annols.analysis.inference.sampled`), has its own null
(:data:`PANEL`): the same six annotators judge every item, each with a taste drawn from a
population that prefers no system, not centred, so these six do prefer one (an annotator x
system interaction, no system effect). Min F' must hold its level there; the items' tests,
which answer for these six annotators, reject more often, as they should. Best-worst's
annotators have tastes only in the panel studies (the pooled ones keep their random stream).

:func:`planted` draws studies from ``annols plan``'s own model (an effect, item and annotator
variance) as judgments tables, for the report's tests to be checked against plan's power.
"""

from __future__ import annotations

import gc
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd  # type: ignore[import-untyped, unused-ignore]
from scipy.special import expit

from annols.analysis.by_style import best_worst, ratings
from annols.analysis.inference import detectable, item_tests, sampled
from annols.analysis.planning import plan
from annols.definition import design

ANNOTATORS_PER_ITEM = 3
POOL = 12
TIE_RATE = 0.2
LEVEL = 0.05


@dataclass(frozen=True)
class Spread:
    """Standard deviations of the null studies' variance components."""

    item: float = 1.0  # an item's outputs around their system's
    leniency: float = 0.7  # an annotator's level (ratings)
    taste: float = 0.7  # an annotator's preference between systems
    noise: float = 1.0  # a judgment's own


@dataclass(frozen=True)
class Raters:
    """Who judges: ``size`` annotators, ``per_item`` of them drawn for each item (all of them when equal). Centred
    tastes come in opposite pairs, so the annotators as a whole prefer no system: the items' test's null. Drawn
    tastes are a sample of annotators from a population that prefers no system, whose own mean taste is not 0:
    the null of the second result, annotators as sampled (an annotator x system interaction, no system effect)."""

    size: int = POOL
    per_item: int = ANNOTATORS_PER_ITEM
    centred: bool = True

    def tastes(self, rng: np.random.Generator, systems: int, sd: float) -> np.ndarray:
        """Each annotator's taste per system."""
        if not self.centred:
            return rng.normal(0, sd, (self.size, systems))
        half = rng.normal(0, sd, (self.size // 2, systems))
        return np.concatenate([half, -half])

    def of_item(self, rng: np.random.Generator) -> np.ndarray:
        """The annotators of one item."""
        if self.per_item >= self.size:
            return np.arange(self.size)
        return rng.choice(self.size, self.per_item, replace=False)


POOLED = Raters()  # three annotators per item from a pool of twelve, tastes centred
PANEL = Raters(size=6, per_item=6, centred=False)  # the same six annotators judge every item, each their own taste


def pool(rng: np.random.Generator, systems: int, sd: float) -> np.ndarray:
    """POOL annotators' tastes per system, in opposite pairs: the pool as a whole prefers no system."""
    return POOLED.tastes(rng, systems, sd)


def judges(rng: np.random.Generator) -> np.ndarray:
    """The annotators of one item, drawn from the pool."""
    return POOLED.of_item(rng)


LOGIT = Spread(item=2.0, taste=1.0)  # pairwise, on the logit scale: items often clearly favour one system


def pairwise(rng: np.random.Generator, items: int, spread: Spread = LOGIT, raters: Raters = POOLED) -> pd.DataFrame:
    """(uid, task_key, annotator, aspect, system, opponent, outcome):
    :func:`annols.analysis.by_style.pairwise.judgments`."""
    taste = raters.tastes(rng, 1, spread.taste)[:, 0]
    rows: list[tuple[Any, ...]] = []
    for item in range(items):
        u = rng.normal(0, spread.item)
        for a in raters.of_item(rng):
            draw = rng.random()
            win = draw >= TIE_RATE and (draw - TIE_RATE) / (1 - TIE_RATE) < expit(u + taste[a])
            outcome = "tie" if draw < TIE_RATE else "win" if win else "loss"
            rows.append((len(rows), f"i{item}", f"a{a}", "quality", "A", "B", outcome))
    return pd.DataFrame(rows, columns=["uid", "task_key", "annotator", "aspect", "system", "opponent", "outcome"])


def _scored(rng: np.random.Generator, items: int, systems: int, spread: Spread, raters: Raters) -> pd.DataFrame:
    """(task_key, annotator, system, score): item level, outputs' quality, leniency, taste, noise."""
    taste = raters.tastes(rng, systems, spread.taste)
    leniency = rng.normal(0, spread.leniency, raters.size)
    rows = []
    for item in range(items):
        level, quality = rng.normal(0, spread.item), rng.normal(0, spread.item, systems)
        for a in raters.of_item(rng):
            score = level + quality + leniency[a] + taste[a] + rng.normal(0, spread.noise, systems)
            rows += [(f"i{item}", f"a{a}", f"S{s}", score[s]) for s in range(systems)]
    return pd.DataFrame(rows, columns=["task_key", "annotator", "system", "score"])


def ratings_study(rng: np.random.Generator, items: int, spread: Spread = Spread(),
                  raters: Raters = POOLED) -> pd.DataFrame:  # fmt: skip
    """(aspect, task_key, annotator, system, rating) on a 1-5 scale."""
    frame = _scored(rng, items, 3, spread, raters)
    frame["rating"] = np.clip(np.round(3 + frame.pop("score")), 1, 5)
    return frame.assign(aspect="quality")


def ranking_study(rng: np.random.Generator, items: int, spread: Spread = Spread(),
                  raters: Raters = POOLED) -> pd.DataFrame:  # fmt: skip
    """(dimension, task_key, annotator, system, rank), 1 best."""
    frame = _scored(rng, items, 3, spread, raters)
    frame["rank"] = frame.groupby(["task_key", "annotator"], sort=False)["score"].rank(ascending=False)
    return frame.drop(columns="score").assign(dimension="quality")


def best_worst_study(rng: np.random.Generator, pools: int, spread: Spread = Spread(),
                     tuples: list[tuple[int, ...]] | None = None, raters: Raters = POOLED) -> pd.DataFrame:  # fmt: skip
    """Best-worst rows (uid, task_key, annotator, aspect, system, value, unit): pools of five systems' outputs, each
    pool's tuples of four (``tuples``, default :func:`annols.definition.design.tuples` of 5 in 8 tuples)."""
    tuples = tuples or design.tuples(5, 4, 8, seed=0)
    # Pooled studies have no tastes: their published figures were drawn without, and keep their random stream.
    taste = np.zeros((raters.size, 5)) if raters.centred else raters.tastes(rng, 5, spread.taste)
    rows = []
    uid = 0
    for number in range(pools):
        quality = rng.normal(0, spread.item, 5)  # this pool's outputs; every system's mean is 0
        for t, members in enumerate(tuples):
            for annotator in raters.of_item(rng):
                chosen = list(members)
                utility = quality[chosen] + taste[annotator, chosen] + rng.normal(0, spread.noise, len(members))
                best, worst = int(np.argmax(utility)), int(np.argmin(utility))
                uid += 1
                for position, member in enumerate(members):
                    value = 1 if position == best else -1 if position == worst else 0
                    rows.append((uid, f"p{number}t{t}", f"a{annotator}", "quality", f"S{member}", value, f"p{number}"))
    return pd.DataFrame(rows, columns=["uid", "task_key", "annotator", "aspect", "system", "value", best_worst.UNIT])


def pairwise_p(frame: pd.DataFrame) -> np.ndarray:
    return item_tests.sign_test(frame)["p (sign test)"].to_numpy(dtype=float)


def ratings_p(frame: pd.DataFrame) -> np.ndarray:
    return detectable.paired_tests(ratings.sample_means(frame), "aspect")["p (Wilcoxon)"].to_numpy(dtype=float)


def ranking_p(frame: pd.DataFrame) -> np.ndarray:
    means = frame.groupby(["dimension", "task_key", "system"], observed=True)["rank"].mean()
    return detectable.paired_tests(means, "dimension")["p (Wilcoxon)"].to_numpy(dtype=float)


@dataclass(frozen=True)
class _NoIntervals:
    """The report options best-worst's tests read, without bootstrap intervals (not needed for p)."""

    bootstrap: int = 0
    seed: int = 0


def best_worst_p(frame: pd.DataFrame) -> np.ndarray:
    options: Any = _NoIntervals()
    return best_worst.paired_tests(frame, options)["p (Wilcoxon)"].to_numpy(dtype=float)


def pairwise_sampled_p(frame: pd.DataFrame) -> np.ndarray:
    return sampled.pairwise(frame, None)["p (min F')"].to_numpy(dtype=float)


def ratings_sampled_p(frame: pd.DataFrame) -> np.ndarray:
    return sampled.paired(frame, "aspect", None, "rating")["p (min F')"].to_numpy(dtype=float)


def ranking_sampled_p(frame: pd.DataFrame) -> np.ndarray:
    return sampled.paired(frame, "dimension", None, "rank")["p (min F')"].to_numpy(dtype=float)


def best_worst_sampled_p(frame: pd.DataFrame) -> np.ndarray:
    return best_worst.sampled_frame(frame, None)["p (min F')"].to_numpy(dtype=float)


@dataclass(frozen=True)
class Style:
    study: Callable[..., pd.DataFrame]  # (rng, units, raters=...)
    p: Callable[[pd.DataFrame], np.ndarray]
    units: int  # items (best-worst: pools) per study
    sampled: Callable[[pd.DataFrame], np.ndarray]  # the second result, annotators as sampled


STYLES = {"pairwise": Style(pairwise, pairwise_p, 40, pairwise_sampled_p),
          "ratings": Style(ratings_study, ratings_p, 30, ratings_sampled_p),
          "ranking": Style(ranking_study, ranking_p, 30, ranking_sampled_p),
          "best-worst": Style(best_worst_study, best_worst_p, 16, best_worst_sampled_p)}  # fmt: skip


@dataclass(frozen=True)
class Rate:
    rejected: int
    tested: int

    @property
    def rate(self) -> float:
        return self.rejected / self.tested if self.tested else float("nan")

    @property
    def error(self) -> float:
        """Monte Carlo standard error at the level (the rate's if the test holds it)."""
        return float(np.sqrt(LEVEL * (1 - LEVEL) / self.tested)) if self.tested else float("nan")


def rejection_rates(style: str, studies: int, seed: int, tests: dict[str, Callable[[pd.DataFrame], np.ndarray]],
                    raters: Raters = POOLED) -> dict[str, Rate]:  # fmt: skip
    """How often each test's p is below :data:`LEVEL` over the same ``studies`` null studies of the style, judged
    by ``raters``."""
    chosen = STYLES[style]
    rng = np.random.default_rng(seed)
    counts = {name: [0, 0] for name in tests}
    # statsmodels' Holm correction calls gc.collect() each time; with the objects already alive frozen out of
    # the collector's reach it costs microseconds instead of a third of a second. The numbers are the same.
    gc.freeze()
    try:
        for _ in range(studies):
            frame = chosen.study(rng, chosen.units, raters=raters)
            for name, test in tests.items():
                values = test(frame)
                values = values[~np.isnan(values)]
                counts[name][0] += int((values < LEVEL).sum())
                counts[name][1] += len(values)
    finally:
        gc.unfreeze()
    return {name: Rate(*c) for name, c in counts.items()}


def rejection_rate(style: str, studies: int, seed: int,
                   p: Callable[[pd.DataFrame], np.ndarray] | None = None) -> Rate:  # fmt: skip
    """How often ``p`` (default: the report's test of the style) is below :data:`LEVEL` over null studies."""
    return rejection_rates(style, studies, seed, {"test": p or STYLES[style].p})["test"]


# ----------------------------------------------------------------------------- planted effects, plan's model


def planted(a: plan.Assumptions, items: int, annotators: int, rng: np.random.Generator) -> pd.DataFrame:
    """One study of ``annols plan``'s model (pairwise or ratings: the effect, item and annotator variance; the same
    ``annotators`` judge every item) as the judgments table the report reads: pairwise, preference rows of A
    against B (the effect favours A); ratings, rating rows of A (0) and B (A's plus the drawn difference, the
    effect favouring B)."""
    draws = plan.DRAWS[a.style](a, items, annotators, 1, rng)
    y = plan.OUTCOMES[a.style](a, draws, a.effect, items, annotators)[0]
    item, annotator = np.meshgrid([f"i{i}" for i in range(items)], [f"a{j}" for j in range(annotators)],
                                  indexing="ij")  # fmt: skip
    item, annotator, y = item.ravel(), annotator.ravel(), y.ravel()
    if a.style == "pairwise":
        outcome = np.where(y > 0, "win", np.where(y < 0, "loss", "tie"))
        return pd.DataFrame({"uid": np.arange(len(y)), "task_key": item, "annotator": annotator, "aspect": "quality",
                             "system": "A", "opponent": "B", "outcome": outcome})  # fmt: skip
    both = {"task_key": np.concatenate([item, item]), "annotator": np.concatenate([annotator, annotator]),
            "system": np.repeat(["A", "B"], len(y)), "rating": np.concatenate([np.zeros(len(y)), y])}  # fmt: skip
    return pd.DataFrame(both).assign(aspect="quality")


def planted_test(a: plan.Assumptions, frame: pd.DataFrame) -> bool:
    """Whether the report's result plan's power is about rejects towards the better system at alpha / tests: the
    second result (annotators as sampled) where annotators vary, else the items' test."""
    level = a.alpha / a.tests
    if a.style == "pairwise":
        if a.annotator_sd > 0:
            row = sampled.pairwise(frame, None).iloc[0]
            return bool(row["p (min F')"] <= level and row["difference"] > 0)
        signs = item_tests.sign_test(frame).iloc[0]
        return bool(signs["p (sign test)"] <= level and signs["items won"] > signs["items lost"])
    if a.annotator_sd > 0:
        row = sampled.paired(frame, "aspect", None, "rating").iloc[0]
        return bool(row["p (min F')"] <= level and row["difference"] < 0)  # A - B: B better
    test = detectable.paired_tests(ratings.sample_means(frame), "aspect").iloc[0]
    return bool(test["p (Wilcoxon)"] <= level and test["mean difference"] < 0)


def planted_power(a: plan.Assumptions, items: int, annotators: int, studies: int, seed: int) -> Rate:
    """How often the report's result rejects towards the better system over ``studies`` planted studies."""
    rng = np.random.default_rng(seed)
    gc.freeze()  # statsmodels' Holm collects garbage each call (see rejection_rates)
    try:
        hits = sum(planted_test(a, planted(a, items, annotators, rng)) for _ in range(studies))
    finally:
        gc.unfreeze()
    return Rate(hits, studies)
