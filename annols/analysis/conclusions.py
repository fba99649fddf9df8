"""Whether the study's conclusions hold: what it could detect, and how reliable its ranking of systems is.

Two sections for every style that compares systems (pairwise, ratings, ranking, and any
style registered in :data:`annols.analysis.reliability.SCORES`; best-worst has the first,
its reliability being its own split-half, :mod:`annols.analysis.best_worst`):

- "What the study could detect" (:mod:`annols.analysis.detectable`): per system pair and
  aspect the test's corrected p, the smallest difference it had 80% power for, and the
  conclusion in words; a comparison that is not significant is "inconclusive at this size
  (could detect >= X)". Table ``detectable``; ranking adds ``ranking_paired_tests``.
- "Reliability of the conclusion" (:mod:`annols.analysis.reliability`): split-half
  reliability of the system scores per aspect (``reliability``), the bootstrap probability
  that each pair's order holds (``reliability_order``) and its plot.

Each section's ``summary`` lines go to the top of the report.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd  # type: ignore[import-untyped, unused-ignore]

from annols import memory
from annols.analysis import best_worst, detectable, pairwise, ranking, ratings, reliability
from annols.analysis.naming import by_aspect_text
from annols.analysis.scores import PAIR_ROWS, adjacent
from annols.report import plots
from annols.report.common import ReportOptions
from annols.report.model import Section, Table

DETECTABLE_NOTE = (
    "Per system pair and aspect: the test the report uses, its p after the report's correction, and the smallest "
    "difference that test would have detected with 80% power at the corrected level (alpha 0.05 divided by the "
    "tests corrected for: Holm's first step, so conservative), on the units this study has. A comparison that is "
    "not significant shows only that the study was too small for a difference of its size, not that there is "
    "none. Pairwise: the exact power of the sign test over the items that were not even (towards the better "
    "system), with independent judgments at the observed tie rate, the difference in percentage points of "
    "(wins - losses) / (wins + losses) of the judgments. Ratings and ranking: the paired t-test's power on "
    "the standard deviation of the per-sample differences, samples discounted by the Wilcoxon test's relative "
    "efficiency 3/pi (an approximation), the difference in the scale's units."
)  # fmt: skip
RELIABILITY_NOTE = (
    "Split-half reliability: the annotators (or, where no item has two, the items) are split into two halves at "
    "random {splits} times; each half's mean score per system is correlated with the other's (Pearson, over the "
    "systems) and Spearman-Brown corrected (2r / (1 + r)); the median over splits is shown with the 2.5th and "
    "97.5th percentiles. It needs three or more systems. Scores: {scores}. Order probability: the share of "
    "{reps} bootstrap resamples of the items (seed {seed}) in which a pair keeps the study's order, a tie "
    "counting half. Stable means r >= 0.9, fairly stable r >= 0.7."
)  # fmt: skip
SCORE_TEXT = {"pairwise": "1 for a win, 0.5 for a tie, 0 for a loss", "ratings": "the rating",
              "ranking": "N + 1 - rank (higher is better)"}  # fmt: skip


def comparisons(style: str, tidy: pd.DataFrame, spec: Any,
                rated: tuple[pd.DataFrame, list[str]] | None = None) -> tuple[pd.DataFrame, list[Table]]:  # fmt: skip
    """The ``detectable`` frame of a style and any test table it needed of its own (ranking); ``rated``: the
    rating rows (:func:`annols.analysis.ratings.rows`) when already made."""
    if style == "pairwise":
        tidy, aspects = by_aspect_text(tidy, spec.aspects)
        frame = pairwise.judgments(tidy, aspects)
        return detectable.pairwise_table(pairwise.sign_test(frame).frame), []
    if style == "ratings":
        frame, _ = rated or ratings.rows(tidy, spec)
        means = ratings.sample_means(frame)
        return detectable.paired_table(detectable.paired_tests(means, "aspect"), "aspect", "mean rating"), []
    if style == "ranking":
        frame = ranking.judgments(tidy, [d.name for d in spec.dimensions], len(spec.positions))
        means = frame.groupby(["dimension", "task_key", "system"], observed=True)["rank"].mean()
        tests = detectable.paired_tests(means, "dimension")
        table = Table("ranking_paired_tests", "Paired tests between systems over samples: mean rank per sample "
                      "(Wilcoxon signed-rank, Holm across the pairs of a dimension)", tests)  # fmt: skip
        return detectable.paired_table(tests, "dimension", "mean rank", lower_better=True), [table]
    if style == "best-worst":
        rows, aspects = best_worst.named_judgments(tidy, spec)
        tests = best_worst.in_aspect_order(detectable.paired_tests(best_worst.item_scores(rows), "aspect"), aspects)
        return detectable.paired_table(tests, "aspect", best_worst.MEASURE), []
    return pd.DataFrame(columns=detectable.COLUMNS), []


def sections(style: str, tidy: pd.DataFrame, spec: Any, options: ReportOptions,
             rated: tuple[pd.DataFrame, list[str]] | None = None) -> list[Section]:  # fmt: skip
    """``rated``: the rating rows of a ratings study (:func:`annols.analysis.ratings.rows`) when already made."""
    out = []
    frame, extra = comparisons(style, tidy, spec, rated)
    if len(frame):
        significant = int((frame["p (corrected)"] < detectable.ALPHA).sum())
        summary = [f"{significant} of {len(frame)} system comparisons are significant after correction; "
                   f"{len(frame) - significant} are inconclusive at this size (see \"What the study could "
                   "detect\")."]  # fmt: skip
        ranking_note = ["Ranking: per sample, each system's mean rank over its annotators; the Wilcoxon signed-rank "
                        "test of the differences (zero differences dropped) over the samples where both were "
                        "ranked; a negative difference means the first system ranked better."]  # fmt: skip
        best_worst_note = [
            'Best-worst: the same test over items (pools; see "Best-worst scores") of each '
            "candidate's per-item score, 100 x (best - worst) / times shown, the difference in score "
            "points."
        ]
        text = [DETECTABLE_NOTE, *(ranking_note if extra else []), *(best_worst_note if style == "best-worst" else [])]
        table = Table("detectable", "Conclusions per system pair and aspect, with the smallest detectable "
                      "difference (80% power)", frame)  # fmt: skip
        out.append(Section("What the study could detect", text, [table, *extra], summary=summary))
    memory.release()  # the paired tests' transients, before the reliability's
    score = reliability.SCORES.get(style)
    if style == "ratings" and rated is not None:
        out.append(reliability_section(style, reliability.scores_of_ratings(*rated), options))
    elif score is not None:
        out.append(reliability_section(style, score(tidy, spec), options))
    return out


def reliability_section(style: str, scores: pd.DataFrame, options: ReportOptions) -> Section:
    title = "Reliability of the conclusion"
    if not len(scores) or scores["system"].nunique() < 2:
        return Section(title, ["No reliability: it needs scores of two or more systems."])
    halves = reliability.split_half(scores, options.seed)
    order = reliability.order_probabilities(scores, options.seed, options.bootstrap)
    text = [RELIABILITY_NOTE.format(splits=reliability.SPLITS, scores=SCORE_TEXT.get(style, "the style's score"),
                                    reps=options.bootstrap, seed=options.seed)]  # fmt: skip
    summary = []
    for row in halves.itertuples(index=False):
        r, low, high = row[5], row[6], row[7]
        if r == r:
            summary.append(f"{row[0]}: the ranking of the {row[1]} systems is {reliability.verdict(r)}: "
                           f"split-half r = {r:.2f} [{low:.2f}, {high:.2f}].")  # fmt: skip
        else:
            why = "it needs three or more systems" if row[1] < 3 else "no split had every system in both halves"
            text.append(f"{row[0]}: no split-half reliability, {why}.")
    tables = [
        Table("reliability", "Split-half reliability of the system scores", halves),
        Table("reliability_order", "Probability that each pair's order holds (bootstrap over items)", order),
    ]
    plot = []
    shown = order[order["P(order holds)"].notna()]
    if len(shown) > PAIR_ROWS:  # a bar per pair of many systems would not fit a page: neighbours only
        both = pd.concat(
            [
                order[["aspect", "system", "system score"]].set_axis(["aspect", "system", "score"], axis=1),
                order[["aspect", "opponent", "opponent score"]].set_axis(["aspect", "system", "score"], axis=1),
            ]
        ).drop_duplicates()
        pairs = adjacent(both["aspect"], both["system"], both["score"])
        shown = shown[
            [
                (a, s, o) in pairs
                for a, s, o in zip(
                    shown["aspect"].astype(str), shown["system"].astype(str), shown["opponent"].astype(str), strict=True
                )
            ]
        ]
    if len(shown):
        labels = [f"{a}: {h} over {o if h == s else s}" for a, s, o, h in
                  zip(shown["aspect"], shown["system"], shown["opponent"], shown["higher"], strict=True)]  # fmt: skip
        named = "Probability that each pair's order holds" + (
            " (systems next in rank)" if len(shown) < len(order[order["P(order holds)"].notna()]) else ""
        )
        plot = [plots.bars("reliability_order", named, labels,
                           list(np.asarray(shown["P(order holds)"], dtype=float)), "P(order holds)")]  # fmt: skip
    return Section(title, text, tables, plot, summary=summary)
