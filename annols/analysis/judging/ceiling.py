"""Seeded studies at the ceiling of a bounded scale: coverage and width of every interval the report prints.

The judge-assisted intervals (:func:`coverage`) first; the ratings, pairwise, ranking and best-worst tables'
intervals on their own ceiling plants after them (:func:`printed`), then the conclusions' rank intervals, the
Bradley-Terry table, the judges' bias and alternative annotator test and the error score's paired tests
(:func:`_found_more`).

A study rates two systems on a 1-5 scale. Each item draws, per system, its chance of the top rating from a
beta distribution with mean ``top`` (system A) or ``top - GAP`` (system B) and concentration 4, so items differ
(some at the ceiling, some not); a rating is 5 with that chance, else 2, 3 or 4 (shares 0.2, 0.3, 0.5). Each
human item gets ``annotators`` ratings; a judge rates every item as one more rater would, leaning to the top
(its chance of 5 is the item's to the power 0.8: biased, correlated with the humans through the item). Humans
rate ``items`` items, the judge those and ``JUDGE_ONLY`` x as many more. The truth is each system's expected
rating, ``p x 5 + (1 - p) x 3.3`` with p its mean chance of 5, and their difference.

Each study goes through the report's own estimates (:func:`annols.analysis.judging.ppi.estimates`) twice: with the
scale's range (the bounded intervals the report prints, :mod:`annols.analysis.inference.intervals`) and without (the
CLT intervals of ppi-python, for the widths beside them). ``scripts/ceiling_coverage.py`` runs the full size
and writes the table of ``docs/statistics.md``; tests/analysis/judging/test_ceiling.py runs a seeded small size.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd  # type: ignore[import-untyped, unused-ignore]

from annols.analysis.inference import intervals
from annols.analysis.judging import ppi

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


# --- every other interval the report prints, on ceiling plants -------------------------------------------------
#
# Each plant goes through the report's own table functions (the intervals printed in ratings_summary,
# ratings_paired_tests, pairwise_win_tie_loss, pairwise_sign_test and ranking_mean_rank_intervals), beside the plain
# CLT interval over the same items (mean ± 1.96 sd / sqrt(n) of the items' values; for a share of judgments the
# ratio's linearised one). An interval the report refuses (its cells empty, the reason in the section and the
# headline: a median whose every resample is one rating) is counted as refused, not as covering.

TIE = 0.1  # pairwise: a judgment's chance of a tie
RANKED = ("A", "B", "C")  # ranking: A the favourite, ranked first on an item with its chance, else 2nd or 3rd
OPTIONS_BOOTSTRAP = 1000  # the report's default resamples (the medians' bootstrap)
PLANT_TOPS = {"ratings": (0.9, 0.7), "pairwise": (0.9, 0.7, 0.5), "ranking": (0.9, 0.7), "best-worst": (0.9, 0.7)}
SHOWN = ("A", "B", "C", "D")  # best-worst: four candidates an item, A the favourite


@dataclass(frozen=True)
class Printed:
    plant: str  # ratings, pairwise, ranking
    top: float  # share at the top (pairwise: the favourite's chance to win a decided judgment; 0.5 a near-tie)
    items: int
    annotators: int
    interval: str  # table and column as the report prints them
    tested: int  # intervals asked for
    printed: int  # of them printed; the rest refused (cells empty, the reason said)
    coverage: float  # of the truth by the printed ones
    clt: float  # by the plain CLT interval of the same studies (nan: none for this estimate); zero width: not covering
    width: float  # mean width of the printed ones
    clt_width: float
    clt_zero: int  # CLT intervals of zero width
    narrowest: float  # the narrowest printed interval's width (never 0)

    @property
    def error(self) -> float:
        """Monte Carlo standard error of a coverage of 95% over the printed intervals (nan: none printed)."""
        return math.sqrt(0.95 * 0.05 / self.printed) if self.printed else math.nan


def _chances(rng: np.random.Generator, top: float, n: int) -> np.ndarray:
    return rng.beta(top * CONCENTRATION, (1 - top) * CONCENTRATION, n)


def ratings_plant(rng: np.random.Generator, items: int, annotators: int, top: float) -> pd.DataFrame:
    """Humans' ratings of A and B (as the ratings tables read them), drawn as :func:`study`'s."""
    rows = []
    for system, mean in (("A", top), ("B", top - GAP)):
        humans = _ratings(rng, _chances(rng, mean, items), annotators)
        rows += [(QUESTION, system, f"i{i:03d}", f"a{a}", humans[i, a])
                 for i in range(items) for a in range(annotators)]  # fmt: skip
    return pd.DataFrame(rows, columns=["aspect", "system", "task_key", "annotator", "rating"])


def pairwise_plant(rng: np.random.Generator, items: int, annotators: int, top: float) -> pd.DataFrame:
    """A against B: a tie with chance :data:`TIE`, else A wins with its item's chance (beta, mean ``top``)."""
    chance = _chances(rng, top, items)
    tie = rng.random((items, annotators)) < TIE
    win = rng.random((items, annotators)) < chance[:, None]
    outcome = np.where(tie, "tie", np.where(win, "win", "loss"))
    rows = [(f"i{i:03d}-a{a}", f"i{i:03d}", f"a{a}", QUESTION, "A", "B", outcome[i, a])
            for i in range(items) for a in range(annotators)]  # fmt: skip
    return pd.DataFrame(rows, columns=["uid", "task_key", "annotator", "aspect", "system", "opponent", "outcome"])


def ranking_plant(rng: np.random.Generator, items: int, annotators: int, top: float) -> pd.DataFrame:
    """Three systems ranked 1-3: A first with its item's chance (beta, mean ``top``), else second or third (even
    chances); B and C fill the other places at random."""
    chance = _chances(rng, top, items)
    rows = []
    for i in range(items):
        for a in range(annotators):
            first = rng.random() < chance[i]
            a_rank = 1 if first else int(rng.choice([2, 3]))
            others = [r for r in (1, 2, 3) if r != a_rank]
            rng.shuffle(others)
            for system, rank in zip(RANKED, (a_rank, *others), strict=True):
                rows.append((f"i{i:03d}-a{a}", f"i{i:03d}", f"a{a}", QUESTION, system, float(rank)))
    return pd.DataFrame(rows, columns=["uid", "task_key", "annotator", "dimension", "system", "rank"])


def best_worst_plant(rng: np.random.Generator, items: int, annotators: int, top: float) -> pd.DataFrame:
    """Four candidates an item: A chosen best with its item's chance (beta, mean ``top``), else one of the others;
    the worst chosen at random among the three not chosen best. Rows as the best-worst tables read them (value 1
    best, -1 worst, 0 shown)."""
    chance = _chances(rng, top, items)
    rows = []
    for i in range(items):
        for a in range(annotators):
            best = 0 if rng.random() < chance[i] else int(rng.integers(1, 4))
            worst = int(rng.choice([k for k in range(4) if k != best]))
            for k, system in enumerate(SHOWN):
                value = 1 if k == best else -1 if k == worst else 0
                rows.append((f"i{i:03d}-a{a}", f"i{i:03d}", f"a{a}", QUESTION, system, value, f"i{i:03d}"))
    return pd.DataFrame(rows, columns=["uid", "task_key", "annotator", "aspect", "system", "value", "unit"])


def best_worst_truth(top: float) -> dict[str, float]:
    """Each candidate's score in points: 100 x (P(best) - P(worst)); B, C and D alike."""
    other_best = (1 - top) / 3
    return {"A": 100 * (top - (1 - top) / 3), "B": 100 * (other_best - (1 - other_best) / 3)}


def clt_ratio(num: np.ndarray, den: np.ndarray) -> tuple[float, float]:
    """The plain CLT interval of sum(num) / sum(den) over items (linearised: the ratio ± 1.96 sd of the items'
    residuals num - ratio x den, over mean(den), / sqrt(n)); with equal ``den`` the CLT interval of num / den."""
    num, den = np.asarray(num, dtype=float), np.asarray(den, dtype=float)
    if len(num) < 2 or not den.sum() > 0:
        return math.nan, math.nan
    ratio = num.sum() / den.sum()
    half = 1.959963984540054 * np.std(num - ratio * den, ddof=1) / den.mean() / math.sqrt(len(num))
    return float(ratio - half), float(ratio + half)


Found = tuple[str, float, float, float, float, float]


def _found(plant: str, frame: pd.DataFrame, top: float, seed: int) -> list[Found]:
    """(interval, truth, printed low, high, CLT low, high) of every interval the report prints for one study."""
    from annols.analysis.by_style import best_worst, pairwise, ranking, ratings
    from annols.analysis.inference import item_tests
    from annols.analysis.options import AnalysisOptions

    options = AnalysisOptions(seed=seed, bootstrap=OPTIONS_BOOTSTRAP)
    if plant in ("ranks", "bradley-terry", "judges", "error score", "alt-test"):
        return _found_more(plant, frame, top, options)
    if plant in ("association", "models", "judge error score"):
        return _found_third(plant, frame, top, options)
    out = []
    if plant == "ratings":
        truths = truth(top)
        summary = ratings.summary(frame, options, bounds=RANGES[QUESTION]).frame.set_index("system")
        means = frame.groupby(["system", "task_key"])["rating"].mean()
        for system in ("A", "B"):
            row = summary.loc[system]
            clt = intervals.clt(means[system].to_numpy())
            out.append(("ratings_summary: mean", truths[system], row["mean CI low"], row["mean CI high"], *clt))
            out.append(("ratings_summary: median", 5.0, row["median CI low"], row["median CI high"], math.nan,
                        math.nan))  # fmt: skip
        tests = ratings.tests_with_effects(frame, options, RANGES[QUESTION]).iloc[0]
        clt = intervals.clt((means["A"] - means["B"]).to_numpy())
        out.append(("ratings_paired_tests: CI (A - B)", truths["A - B"], tests["CI low"], tests["CI high"], *clt))
    elif plant == "pairwise":
        shares = pairwise.win_tie_loss(frame, options).frame.iloc[0]
        counts = frame.groupby(["task_key", "outcome"]).size().unstack(fill_value=0).reindex(
            columns=["win", "tie", "loss"], fill_value=0)  # fmt: skip
        size = counts.sum(axis=1).to_numpy()
        for name, share in (("win", 1 - TIE), ("loss", 1 - TIE)):
            true = 100 * share * (top if name == "win" else 1 - top)
            low, high = clt_ratio(counts[name].to_numpy(), size)
            out.append((f"pairwise_win_tie_loss: {name} %", true, shares[f"{name} CI low %"],
                        shares[f"{name} CI high %"], 100 * low, 100 * high))  # fmt: skip
        sign = item_tests.sign_test(frame, OPTIONS_BOOTSTRAP, seed).iloc[0]
        net = (counts["win"] - counts["loss"]).to_numpy()
        low, high = clt_ratio(net, (counts["win"] + counts["loss"]).to_numpy())
        out.append(("pairwise_sign_test: win - loss %", 100 * (2 * top - 1), sign["CI low %"], sign["CI high %"],
                    100 * low, 100 * high))  # fmt: skip
    elif plant == "best-worst":
        truths = best_worst_truth(top)
        scores = best_worst.scores(frame)
        lows, highs = best_worst.score_intervals(frame, scores, options)
        found = scores.assign(low=lows, high=highs).set_index("system")
        per_item = best_worst.item_scores(frame)  # (aspect, unit, system): points
        means = per_item.droplevel("aspect")
        for system, name in (("A", "favourite"), ("B", "other")):
            clt = intervals.clt(means.xs(system, level="system").to_numpy())
            out.append((f"best_worst_scores: score % {name}", truths[system], found.loc[system, "low"],
                        found.loc[system, "high"], *clt))  # fmt: skip
        tests = best_worst.paired_tests(frame, options)
        row = tests[(tests["system"] == "A") & (tests["opponent"] == "B")].iloc[0]
        diff = (means.xs("A", level="system") - means.xs("B", level="system")).to_numpy()
        out.append(("best_worst_paired_tests: CI (A - B)", truths["A"] - truths["B"], row["CI low"], row["CI high"],
                    *intervals.clt(diff)))  # fmt: skip
    else:
        table = ranking.mean_rank_intervals(frame, options, len(RANKED)).frame.set_index("system")
        first = top + (1 - top) * 2.5
        means = frame.groupby(["system", "task_key"])["rank"].mean()
        for system, true in (("A", first), ("B", (6 - first) / 2)):  # C is B's twin
            clt = intervals.clt(means[system].to_numpy())
            out.append((f"ranking_mean_rank_intervals: mean rank {'favourite' if system == 'A' else 'other'}",
                        true, table.loc[system, "CI low"], table.loc[system, "CI high"], *clt))  # fmt: skip
    return out


PLANTS = {"ratings": ratings_plant, "pairwise": pairwise_plant, "ranking": ranking_plant,
          "best-worst": best_worst_plant}


def printed(plant: str, top: float, items: int, annotators: int, studies: int, seed: int) -> list[Printed]:
    """Coverage of every interval the report prints for ``plant``'s tables, over seeded studies."""
    rng = np.random.default_rng([seed, len(plant), round(100 * top), items, annotators])
    rows = []
    for _ in range(studies):
        rows += _found(plant, PLANTS[plant](rng, items, annotators, top), top, seed)
    frame = pd.DataFrame(rows, columns=["interval", "truth", "low", "high", "clt low", "clt high"])
    out = []
    for name, part in frame.groupby("interval", sort=False):
        shown = part[part["low"].notna()]
        inside = (shown["low"] <= shown["truth"]) & (shown["truth"] <= shown["high"])
        c_inside = (part["clt low"] <= part["truth"]) & (part["truth"] <= part["clt high"])
        c_width = part["clt high"] - part["clt low"]
        has_clt = bool(part["clt low"].notna().any())
        out.append(Printed(plant, top, items, annotators, str(name), len(part), len(shown),
                           float(inside.mean()) if len(shown) else math.nan,
                           float(c_inside.mean()) if has_clt else math.nan,
                           float((shown["high"] - shown["low"]).mean()) if len(shown) else math.nan,
                           float(c_width.mean()) if has_clt else math.nan, int((c_width <= 1e-12).sum()),
                           float((shown["high"] - shown["low"]).min()) if len(shown) else math.nan))  # fmt: skip
    return out


# --- the intervals first checked in #41's second pass: ranks, Bradley-Terry, the judges' bias, the error score ------
#
# ranks: three systems rated as the ratings plant (A's chance of 5 with mean ``top``, B's GAP lower, C's 2 x GAP),
# through the conclusions' rank intervals (:func:`annols.analysis.leaderboard.rankings.table`, the scale's range as the
# report gives it, :func:`annols.analysis.leaderboard.conclusions.score_range`); truth the true rank (1, 2, 3), a
# rank interval covers when the true rank lies in [low, high]. bradley-terry: three systems, every pair judged once
# per item and annotator under a Bradley-Terry model with strengths (t / (1 - t), 1, (1 - t) / t) for t = ``top`` (A
# beats B with chance t, B beats C with chance t), no ties; through the report's table
# (:func:`annols.analysis.by_style.pairwise.bradley_terry`); truth the strengths (sum 1) and ranks. judges: the ratings
# study of :func:`study` (the humans and the judge on the human items), through
# :func:`annols.analysis.judging.judges.correlations`; truth the planted bias, E[judge] - E[humans] = 1.7 x (E[p^0.8] -
# E[p]) averaged over A and B. error score: MQM-like error scores, an item's candidate clean (score 0) with its chance
# (beta, mean ``top`` for A, GAP lower for B), else 1 + Poisson(1) errors each minor (1) or major (5, chance 0.2);
# through the error score's own tables (:func:`annols.analysis.by_style.by_system.error_score_sections`); truth E[A] -
# E[B].

RANKS_OF = ("A", "B", "C")
MAJOR, MINOR, MAJOR_SHARE = 5.0, 1.0, 0.2
ERRORS_MEAN = (1 - MAJOR_SHARE) * MINOR + MAJOR_SHARE * MAJOR  # 1.8: an error's expected weight
PLANT_TOPS.update({"ranks": (0.9, 0.7), "bradley-terry": (0.9, 0.7), "judges": (0.9, 0.7),
                   "error score": (0.9, 0.7), "alt-test": (0.9, 0.7)})  # fmt: skip


def ranks_plant(rng: np.random.Generator, items: int, annotators: int, top: float) -> pd.DataFrame:
    """Ratings of A, B and C as the conclusions' ranks read them (score = rating)."""
    rows = []
    for k, system in enumerate(RANKS_OF):
        humans = _ratings(rng, _chances(rng, top - k * GAP, items), annotators)
        rows += [(QUESTION, f"i{i:03d}", f"a{a}", system, humans[i, a])
                 for i in range(items) for a in range(annotators)]  # fmt: skip
    return pd.DataFrame(rows, columns=["aspect", "task_key", "annotator", "system", "score"])


def bt_strengths(top: float) -> np.ndarray:
    odds = top / (1 - top)
    s = np.array([odds, 1.0, 1 / odds])
    return s / s.sum()


def bt_plant(rng: np.random.Generator, items: int, annotators: int, top: float) -> pd.DataFrame:
    """Every pair of A, B, C judged once per item and annotator, the winner drawn from the Bradley-Terry model."""
    s = bt_strengths(top)
    rows = []
    for i in range(items):
        for a in range(annotators):
            for x, y in ((0, 1), (0, 2), (1, 2)):
                win = rng.random() < s[x] / (s[x] + s[y])
                rows.append((QUESTION, RANKS_OF[x], RANKS_OF[y], f"i{i:03d}", f"a{a}", "win" if win else "loss"))
    return pd.DataFrame(rows, columns=["aspect", "system", "opponent", "task_key", "annotator", "outcome"])


def judges_plant(rng: np.random.Generator, items: int, annotators: int, top: float) -> pd.DataFrame:
    """The humans and the judge of :func:`study` on the human items (judge-only items dropped)."""
    frame = study(rng, items, annotators, top)
    human_items = set(frame.loc[frame["annotator"] != JUDGE, "task_key"])
    return frame[frame["task_key"].isin(human_items)].reset_index(drop=True)


def judges_truth(top: float) -> float:
    """E[judge - humans' mean] per unit: the judge's chance of 5 is p^0.8 where the humans' is p."""
    from scipy.special import betaln

    out = []
    for mean in (top, top - GAP):
        a, b = mean * CONCENTRATION, (1 - mean) * CONCENTRATION
        lean = math.exp(betaln(a + JUDGE_LEAN, b) - betaln(a, b))  # E[p^0.8]
        out.append((lean - mean) * (5 - BELOW))
    return float(np.mean(out))


def error_score_plant(rng: np.random.Generator, items: int, annotators: int, top: float) -> pd.DataFrame:
    """Error scores of A and B per item and annotator as the error score's tables read them (rating rows)."""
    rows = []
    for system, mean in (("A", top), ("B", top - GAP)):
        clean = _chances(rng, mean, items)
        for i in range(items):
            for a in range(annotators):
                score = 0.0
                if rng.random() >= clean[i]:
                    errors = 1 + rng.poisson(1.0)
                    score = float(np.where(rng.random(errors) < MAJOR_SHARE, MAJOR, MINOR).sum())
                rows.append((f"i{i:03d}", f"a{a}", system, score))
    frame = pd.DataFrame(rows, columns=["unit", "annotator", "system", "error score"])
    return frame.assign(**{"error score per 100 words": frame["error score"]})


def error_score_truth(top: float) -> float:
    """E[A] - E[B]: a candidate has errors with chance 1 - mean, then 2 errors on average of 1.8 each."""
    return (1 - top) * 2 * ERRORS_MEAN - (1 - top + GAP) * 2 * ERRORS_MEAN


def _found_more(plant: str, frame: pd.DataFrame, top: float, options: Any) -> list[Found]:
    from annols.analysis.by_style import asked, by_system, pairwise
    from annols.analysis.judging import judges
    from annols.analysis.leaderboard import rankings

    out: list[Found] = []
    nan = math.nan
    if plant == "ranks":
        no_tests = pd.DataFrame(columns=["aspect", "system", "opponent", "p (corrected)"])
        table = rankings.table(frame, no_tests, options.seed, options.bootstrap, RANGES[QUESTION]).set_index("system")
        for system, name in zip(RANKS_OF, ("first", "second", "third"), strict=True):
            out.append((f"rankings: rank {name}", RANKS_OF.index(system) + 1.0, table.loc[system, "rank low"],
                        table.loc[system, "rank high"], nan, nan))  # fmt: skip
    elif plant == "bradley-terry":
        no_tests = pd.DataFrame(columns=["aspect", "system", "opponent", "p (corrected)"])
        table = pairwise.bradley_terry(frame, [QUESTION], no_tests, options).frame.set_index("system")
        truths = bt_strengths(top)
        for k, (system, name) in enumerate(zip(RANKS_OF, ("first", "second", "third"), strict=True)):
            row = table.loc[system]
            out.append((f"pairwise_bradley_terry: strength {name}", float(truths[k]), row["strength CI low"],
                        row["strength CI high"], nan, nan))  # fmt: skip
            out.append((f"pairwise_bradley_terry: rank {name}", k + 1.0, row["rank low"], row["rank high"], nan, nan))
    elif plant == "judges":
        table = judges.correlations(judges.units(frame), [JUDGE], options, RANGES).frame.iloc[0]
        humans = frame[frame["annotator"] != JUDGE].groupby(["task_key", "system"])["value"].mean()
        judge = frame[frame["annotator"] == JUDGE].set_index(["task_key", "system"])["value"]
        per_item = (judge - humans).groupby(level="task_key").mean().to_numpy()
        out.append(("judges_correlation: bias", judges_truth(top), table["bias CI low"], table["bias CI high"],
                    *intervals.clt(per_item)))  # fmt: skip
    elif plant == "alt-test":
        table = judges.alt_tests(judges.units(frame), [JUDGE], judges.EPSILON)[0].frame
        annotators = frame.loc[frame["annotator"] != JUDGE, "annotator"].nunique()
        for a in range(annotators):  # at 1 annotator the test is refused ("needs three or more"): no row
            row = table[table["annotator"] == f"a{a}"]
            low, high = (row["CI low"].iloc[0], row["CI high"].iloc[0]) if len(row) else (nan, nan)
            clt = (nan, nan)
            if len(row):
                f, h = judges.alt_test_scores(judges.units(frame), JUDGE, True)[f"a{a}"]
                clt = intervals.clt((f >= h).astype(float) - (h >= f).astype(float))
            out.append(("judges_alt_test: advantage", alt_test_truth(top), low, high, *clt))
    else:
        found = by_system.error_score_sections(asked.score_frame(frame), options)
        tests = next(t.frame for f in found for t in f.tables if t.name == "error_score_paired_tests")
        row = tests[tests["aspect"].astype(str) == asked.SCORE].iloc[0]
        sign = 1.0 if row["system"] == "A" else -1.0  # the table's difference is system - opponent
        means = frame.groupby(["system", "unit"])["error score"].mean()
        diff = (means["A"] - means["B"]).to_numpy()
        low, high = sorted((sign * row["CI low"], sign * row["CI high"]))
        out.append(("error_score_paired_tests: CI (A - B)", error_score_truth(top), low, high,
                    *intervals.clt(diff)))  # fmt: skip
    return out


ALT_TRUTH_ITEMS = 2_000  # the alternative annotator test's truth: the advantage on one study this large


@functools.cache
def alt_test_truth(top: float) -> float:
    """The judge's advantage over an annotator, E[W_f - W_h] on a unit, for the judges plant with three annotators:
    no closed form (W compares root mean squared differences with the other two), so its mean over every annotator
    of one seeded study of :data:`ALT_TRUTH_ITEMS` items (Monte Carlo se about 0.005, a tenth of the narrowest
    interval's half-width)."""
    from annols.analysis.judging import judges

    frame = judges_plant(np.random.default_rng([2026, round(100 * top)]), ALT_TRUTH_ITEMS, 3, top)
    scores = judges.alt_test_scores(judges.units(frame), JUDGE, True)
    gains = [((f >= h).astype(float) - (h >= f).astype(float)) for f, h in scores.values()]
    return float(np.mean(np.concatenate(gains)))


PLANTS.update({"ranks": ranks_plant, "bradley-terry": bt_plant, "judges": judges_plant,
               "error score": error_score_plant, "alt-test": judges_plant})  # fmt: skip


# --- the intervals first planted in #41's third pass: Cramér's V, the annotator models, the judge-assisted error score
#
# association: a choice question asked per candidate (answers "yes", "partly", "no", listed in that order), two
# systems; a judgment is "yes" with its item's chance (beta, mean ``top`` for A and ``top - GAP`` for B,
# concentration 4), else "partly" or "no" (even chances); an item's answer for a system is its judgments' most common
# code (ties to the code listed first, as the report takes it). Through the report's own test of association
# (:func:`annols.analysis.by_style.asked.association`) twice a study: A against B (the truth Cramér's V of the
# population's system x item-answer table, :func:`association_truth`), and A against a twin of A drawn alike (no
# association: the truth 0). models: a choice question on units (item, system): the true label "yes" with chance
# ``top`` (A) or ``top - GAP`` (B), else "partly" or "no"; annotator k labels a unit right with chance
# :data:`ACCURACIES` [k], else one of the two wrong labels at random; through
# :func:`annols.analysis.raters.models.fit_question` (Dawid-Skene and MACE, the competence interval: no longer
# printed, it held the truth 0.67-0.87 at 50-100 items); truth each annotator's planted accuracy (with one annotator
# nothing is fitted: the section says why, counted as not printed).
# judge error score: the error score plant's humans (the error score of :func:`error_score_plant`) and a judge on
# those items and :data:`JUDGE_ONLY` x as many more (clean with chance p^0.8 where the humans' is p: lenient, tied to
# the humans through the item), through the report's judge-assisted estimates (:func:`annols.analysis.judging.ppi
# .estimates`, the error score's range as the report knows it); truth each system's expected error score
# ``(1 - mean) x 2 x 1.8`` and the difference.

ANSWERS = ("yes", "partly", "no")
ACCURACIES = (0.9, 0.8, 0.7)
PLANT_TOPS.update({"association": (0.9, 0.7), "models": (0.9, 0.7), "judge error score": (0.9, 0.7)})


def _choices(rng: np.random.Generator, chance: np.ndarray, raters: int) -> np.ndarray:
    """items x raters answers: "yes" with each item's chance, else "partly" or "no"."""
    top = rng.random((len(chance), raters)) < chance[:, None]
    return np.where(top, ANSWERS[0], rng.choice(np.array(ANSWERS[1:]), size=(len(chance), raters)))


def association_plant(rng: np.random.Generator, items: int, annotators: int, top: float) -> pd.DataFrame:
    """Judgments rows of systems A, B and A's twin "A2" (drawn as A) on one choice question."""
    rows = []
    for system, mean in (("A", top), ("B", top - GAP), ("A2", top)):
        answers = _choices(rng, _chances(rng, mean, items), annotators)
        rows += [("choice", QUESTION, f"i{i:03d}", system, f"a{a}", answers[i, a])
                 for i in range(items) for a in range(annotators)]  # fmt: skip
    return pd.DataFrame(rows, columns=["kind", "question", "unit", "system", "annotator", "value"])


def item_answer_shares(mean: float, annotators: int) -> np.ndarray:
    """P(an item's answer is yes, partly, no) when its judgments are "yes" with chance p ~ beta(4 mean, 4 (1 - mean)),
    else "partly" or "no" at even chances, and its answer is their most common code, ties to the first listed:
    exact, summing over every arrangement of the judgments with the beta's moments."""
    import itertools

    from scipy.special import betaln

    a, b = mean * CONCENTRATION, (1 - mean) * CONCENTRATION
    shares = np.zeros(len(ANSWERS))
    for drawn in itertools.product(range(len(ANSWERS)), repeat=annotators):
        counts = np.bincount(drawn, minlength=len(ANSWERS))
        k = int(counts[0])  # "yes": p each; the others (1 - p) / 2 each
        moment = math.exp(betaln(a + k, b + annotators - k) - betaln(a, b))
        shares[int(np.argmax(counts))] += moment * 0.5 ** (annotators - k)  # argmax: ties to the first listed
    return shares


def association_truth(top: float, annotators: int) -> float:
    """Cramér's V of the population's systems x item-answers table (A and B, as many items each)."""
    from annols.analysis.by_style import asked

    table = np.stack([item_answer_shares(top, annotators), item_answer_shares(top - GAP, annotators)]) / 2
    return math.sqrt(asked.chi_square_statistic(table))  # n = 1, min(rows, columns) - 1 = 1


def models_plant(rng: np.random.Generator, items: int, annotators: int, top: float) -> pd.DataFrame:
    """The annotator models' rows (unit, annotator, label, system) of one choice question; the true labels in
    ``truth`` (unit: label)."""
    rows = []
    for system, mean in (("A", top), ("B", top - GAP)):
        true = np.where(rng.random(items) < mean, ANSWERS[0], rng.choice(np.array(ANSWERS[1:]), size=items))
        for a in range(annotators):
            right = rng.random(items) < ACCURACIES[a]
            wrong = np.array([rng.choice([c for c in ANSWERS if c != t]) for t in true])
            label = np.where(right, true, wrong)
            rows += [(f"i{i:03d} | {QUESTION} | {system}", f"a{a}", label[i], system) for i in range(items)]
    return pd.DataFrame(rows, columns=["unit", "annotator", "label", "system"])


def judge_error_score_plant(rng: np.random.Generator, items: int, annotators: int, top: float) -> pd.DataFrame:
    """Error scores of A and B by the humans (on ``items`` items) and the judge (on those and :data:`JUDGE_ONLY` x
    as many more), as the judge-assisted estimates read them (rows of kind error score)."""
    total = items * (1 + JUDGE_ONLY)

    def score(clean: float) -> float:
        if rng.random() < clean:
            return 0.0
        return float(np.where(rng.random(1 + rng.poisson(1.0)) < MAJOR_SHARE, MAJOR, MINOR).sum())

    rows = []
    for system, mean in (("A", top), ("B", top - GAP)):
        chance = _chances(rng, mean, total)
        rows += [(f"i{i:03d}", JUDGE, system, score(chance[i] ** JUDGE_LEAN)) for i in range(total)]
        rows += [(f"i{i:03d}", f"a{a}", system, score(chance[i])) for i in range(items) for a in range(annotators)]
    frame = pd.DataFrame(rows, columns=["task_key", "annotator", "system", "value"])
    return frame.assign(kind=ppi.ERROR_SCORE, question="error score", opponent="")


def judge_error_score_truth(top: float) -> dict[str, float]:
    a, b = (1 - top) * 2 * ERRORS_MEAN, (1 - top + GAP) * 2 * ERRORS_MEAN
    return {"A": a, "B": b, "A - B": a - b}


def _found_third(plant: str, frame: pd.DataFrame, top: float, options: Any) -> list[Found]:
    from types import SimpleNamespace

    from annols.analysis.by_style import asked
    from annols.analysis.raters import models

    out: list[Found] = []
    nan = math.nan
    if plant == "association":
        annotators = frame["annotator"].nunique()
        q = SimpleNamespace(name=QUESTION, all_choices=[SimpleNamespace(code=c) for c in ANSWERS])
        for name, pair, true in (("A - B", ("A", "B"), association_truth(top, annotators)),
                                 ("none", ("A", "A2"), 0.0)):  # fmt: skip
            row = asked.association(frame[frame["system"].isin(pair)], q, options.bootstrap,  # type: ignore[arg-type]
                                    options.seed).iloc[0]  # fmt: skip
            out.append((f"q_association: Cramér's V ({name})", true, row["CI low"], row["CI high"], nan, nan))
    elif plant == "models":
        truths = {f"a{k}": acc for k, acc in enumerate(ACCURACIES)}
        if not models.fittable(frame):  # one annotator: "No categorical answer with two annotators ..."
            for method in ("Dawid-Skene", "MACE"):
                out += [(f"models_competence: {method} low/high", truths[a], nan, nan, nan, nan)
                        for a in frame["annotator"].unique()]  # fmt: skip
            return out
        fit = models.fit_question(frame, QUESTION, reps=options.bootstrap, seed=options.seed)
        labels = fit.units.set_index("unit")
        for method in ("Dawid-Skene", "MACE"):
            for row in fit.annotators.itertuples(index=False):
                mine = frame[frame["annotator"] == row.annotator]
                agreed = (mine["label"].to_numpy() == labels.loc[mine["unit"], method].to_numpy()).astype(float)
                found = fit.annotators.set_index("annotator").loc[row.annotator]
                out.append((f"models_competence: {method} low/high", truths[str(row.annotator)],
                            found[f"{method} low"], found[f"{method} high"], *intervals.clt(agreed)))  # fmt: skip
    else:
        truths = judge_error_score_truth(top)
        table = ppi.estimates(frame, [JUDGE], _is_judge)
        values = ppi.per_item(ppi.item_values(frame[frame["annotator"] != JUDGE]))
        by_item = values.pivot(index="task_key", columns="system", values="value")
        for row in table.to_dict("records"):
            target = str(row["estimate"])
            kind = "A - B" if target == "A - B" else "systems"
            y = (by_item["A"] - by_item["B"]) if kind == "A - B" else by_item[target]
            clt = intervals.clt(y.to_numpy())
            for name in ("humans", "PPI++"):
                out.append((f"judge_assisted: {name} ({kind})", truths[target], row[f"{name} low"],
                            row[f"{name} high"], *clt))  # fmt: skip
    return out


PLANTS.update({"association": association_plant, "models": models_plant,
               "judge error score": judge_error_score_plant})  # fmt: skip
