"""Whether the study's conclusions hold: what it could detect, and how reliable its ranking of systems is.

Two sections for every style that compares systems (pairwise, ratings, ranking, and any
style registered in :data:`annols.analysis.leaderboard.reliability.SCORES`; best-worst has the first,
its reliability being its own split-half, :mod:`annols.analysis.by_style.best_worst`):

- "What the study could detect" (:mod:`annols.analysis.inference.detectable`): per system pair and
  aspect the test's corrected p, the smallest difference it had 80% power for, and the
  conclusion in words; a comparison that is not significant is "inconclusive at this size
  (could detect >= X)". Table ``detectable``; ranking adds ``ranking_paired_tests``.
- "Reliability of the conclusion" (:mod:`annols.analysis.leaderboard.reliability`): split-half
  reliability of the system scores per aspect (``reliability``), the bootstrap probability
  that each pair's order holds (``reliability_order``) and its plot; its summary is one
  headline per question (:func:`headline`) reconciling the order, the corrected test and
  what the study could detect: significant, inconclusive or unreliable.
- "Ranks and groups" (:mod:`annols.analysis.leaderboard.rankings`; ratings, ranking, best-worst): each
  system's rank with its bootstrap interval and its letters (``rankings``). Pairwise ranks
  by Bradley-Terry in its own section.

Each section's ``summary`` lines go to the top of the report.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd  # type: ignore[import-untyped, unused-ignore]

from annols import memory
from annols.analysis.by_style import best_worst, pairwise, ranking, ratings
from annols.analysis.inference import detectable, sampled
from annols.analysis.leaderboard import rankings, reliability
from annols.analysis.leaderboard.scores import PAIR_ROWS, adjacent
from annols.analysis.naming import aspect_names
from annols.analysis.options import AnalysisOptions
from annols.analysis.planning.plan import claim, claim_alone
from annols.analysis.results import Finding, Table, bars

DETECTABLE_NOTE = (
    "Per system pair and aspect: the test the report uses, its p after the report's correction, and the smallest "
    "difference that test would have detected with 80% power at the corrected level (alpha 0.05 divided by the "
    "tests corrected for: Holm's first step, so conservative), on the units this study has. A comparison that is "
    "not significant shows only that the study was too small for a difference of its size, not that there is "
    "none. Pairwise: the exact power of the sign test over the items that were not even (towards the better "
    "system), with independent judgments at the observed tie rate, the difference in percentage points of "
    "(wins - losses) / (wins + losses) of the judgments. Ratings and ranking: the paired t-test's power on "
    "the standard deviation of the per-sample differences, samples discounted by the Wilcoxon test's relative "
    "efficiency 3/pi (an approximation), the difference in the scale's units. CI low, CI high: the difference's 95% "
    "interval over items, as in the style's own test table (pairwise: percentile bootstrap resampling items; "
    "ratings, ranking, best-worst: the betting interval for a mean bounded by the scale)."
)  # fmt: skip
RELIABILITY_NOTE = (
    "Split-half reliability: the annotators are split into two halves when some item has two or more of them and "
    "they can be halved at least {min_distinct} distinct ways; otherwise the items are (with 3 annotators there "
    "are only 3 distinct 1 | 2 splits). With at most {splits} distinct splits each is used once, and the spread "
    "is their range; otherwise {splits} random splits and their 2.5th-97.5th percentiles. Each half's mean score "
    "per system is correlated with the other's (Pearson, over the systems); the median r is Spearman-Brown "
    "corrected (2r / (1 + r)) only when positive: r <= 0 is shown as it is and the ranking called unreliable. The "
    "spread shows how much the answer depends on the split, not how it would vary over new items. It needs three "
    "or more systems. Scores: {scores}. Words (Koo & Li 2016) follow the low end of the spread: stable from 0.9, "
    "reliable from 0.75, moderately reliable from 0.5, unreliable below. Order probability: the share of {reps} "
    "bootstrap resamples of the items (seed {seed}) in which a pair keeps the study's order, a tie counting half, "
    "as 1 - (misses + 1) / (resamples + 1): a finite bootstrap never shows certainty. It is not a test: whether "
    "a pair differs is the corrected test's to say, and the headline gives both."
)  # fmt: skip
RANKS_NOTE = (
    "Per question, each system's rank by its mean score ({scores}; 1 is best) and the 95% interval of its rank over "
    "{reps} bootstrap resamples of the items (seed {seed}; percentiles rounded outwards to whole ranks). Group: "
    "systems sharing a letter cannot be told apart by the paired tests above, Holm-corrected across every pair of "
    "the question (compact letter display, Piepho 2004)."
)  # fmt: skip
RANKS_NOTE_BOUNDED = (
    "Per question, each system's rank by its mean score ({scores}; 1 is best) and the 95% set of its ranks: each "
    "pair of systems gets a betting interval of its paired difference over items, bounded by the score's range "
    "({low:g} to {high:g}; Waudby-Smith & Ramdas 2024), at 95% for every pair together (Bonferroni; seed {seed}); a "
    "system ranks below every system surely better than it and above every one surely worse. Group: "
    "systems sharing a letter cannot be told apart by the paired tests above, Holm-corrected across every pair of "
    "the question (compact letter display, Piepho 2004)."
)  # fmt: skip
SCORE_TEXT = {"pairwise": "1 for a win, 0.5 for a tie, 0 for a loss", "ratings": "the rating",
              "ranking": "N + 1 - rank (higher is better)",
              "best-worst": "100 for chosen best, -100 for worst, 0 otherwise: the best-worst score %"}  # fmt: skip


RANKING_EFFECT_STREAM = 6  # the ranking tests' mean differences: default_rng([seed, 6, pair index])


@dataclass
class Compared:
    frame: pd.DataFrame  # detectable.COLUMNS
    extra: list[Table]
    crossed: pd.DataFrame  # the second result (sampled.COLUMNS after "aspect")
    text: list[str] = field(default_factory=list)


def comparisons(style: str, tidy: pd.DataFrame, spec: Any, rated: tuple[pd.DataFrame, list[str]] | None = None,
                options: AnalysisOptions | None = None) -> Compared:  # fmt: skip
    """The ``detectable`` frame of a style, any test table it needed of its own (ranking: its paired tests and
    their second result, with its paragraph) and the second result, annotators as sampled
    (:mod:`annols.analysis.inference.sampled`); ``rated``: the rating rows
    (:func:`annols.analysis.by_style.ratings.rows`) when already made; ``options``: the bootstrap of each difference's
    interval (the same resamples as the style's own test table), none when not given."""
    options = options or AnalysisOptions(bootstrap=0)
    if style == "pairwise":
        aspects = aspect_names(spec.aspects)
        frame = pairwise.judgments(tidy, aspects)
        signs = pairwise.sign_test(frame, options).frame
        return Compared(detectable.pairwise_table(signs), [], sampled.pairwise(frame, signs))
    if style == "ratings":
        frame, _ = rated or ratings.rows(tidy, spec)
        tests = ratings.tests_with_effects(frame, options, ratings.scale_range(spec))
        crossed = sampled.paired(frame, "aspect", tests, "rating")
        return Compared(detectable.paired_table(tests, "aspect", "mean rating"), [], crossed)
    if style == "ranking":
        frame = ranking.judgments(tidy, [d.name for d in spec.dimensions], len(spec.positions))
        means = frame.groupby(["dimension", "task_key", "system"], observed=True)["rank"].mean()
        tests = detectable.with_effects(detectable.paired_tests(means, "dimension"), means, "dimension",
                                        options.bootstrap, options.seed, RANKING_EFFECT_STREAM,
                                        (1.0, float(len(spec.positions))))  # fmt: skip
        table = Table("ranking_paired_tests", "Paired tests between systems over samples: mean rank per sample "
                      "(Wilcoxon signed-rank, Holm across the pairs of a dimension)", tests)  # fmt: skip
        crossed = sampled.paired(frame, "dimension", tests, "rank")
        second, said = sampled.table("ranking", crossed, sampled.most_annotators(frame, "dimension"),
                                     "mean rank difference", tests)  # fmt: skip
        return Compared(detectable.paired_table(tests, "dimension", "mean rank", lower_better=True),
                        [table, *second], crossed.rename(columns={"dimension": "aspect"}), said)  # fmt: skip
    if style == "best-worst":
        rows, aspects = best_worst.named_judgments(tidy, spec)
        per_item = best_worst.item_scores(rows)
        tests = detectable.with_effects(detectable.paired_tests(per_item, "aspect"), per_item, "aspect",
                                        options.bootstrap, options.seed, best_worst.EFFECT_STREAM,
                                        best_worst.SCORE_RANGE)  # fmt: skip
        tests = best_worst.in_aspect_order(tests, aspects)
        crossed = best_worst.sampled_frame(rows, tests)
        return Compared(detectable.paired_table(tests, "aspect", best_worst.MEASURE), [], crossed)
    return Compared(pd.DataFrame(columns=detectable.COLUMNS), [], pd.DataFrame(columns=["aspect", *sampled.COLUMNS]))


def sections(style: str, tidy: pd.DataFrame, spec: Any, options: AnalysisOptions,
             rated: tuple[pd.DataFrame, list[str]] | None = None) -> list[Finding]:  # fmt: skip
    """``rated``: the rating rows of a ratings study (:func:`annols.analysis.by_style.ratings.rows`) when already
    made."""
    out = []
    compared = comparisons(style, tidy, spec, rated, options)
    frame, extra, crossed = compared.frame, compared.extra, compared.crossed
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
        text = [DETECTABLE_NOTE, *(ranking_note if extra else []), *(best_worst_note if style == "best-worst" else []),
                *compared.text]
        table = Table("detectable", "Conclusions per system pair and aspect, with the smallest detectable "
                      "difference (80% power)", frame)  # fmt: skip
        out.append(Finding("What the study could detect", text, [table, *extra], summary=summary))
    memory.release()  # the paired tests' transients, before the reliability's
    score = reliability.SCORES.get(style)
    scores = None
    if style == "ratings" and rated is not None:
        scores = reliability.scores_of_ratings(*rated)
    elif score is not None:
        scores = score(tidy, spec)
    elif style == "best-worst":
        scores = reliability.best_worst_scores(tidy, spec)
    if scores is not None and style in reliability.SCORES:
        out.append(reliability_section(style, scores, options, frame, crossed))
    if scores is not None and style != "pairwise" and len(scores):  # pairwise ranks by Bradley-Terry, in its section
        out.append(ranks_section(style, scores, frame, options, score_range(style, spec)))
    return out


def score_range(style: str, spec: Any) -> tuple[float, float] | None:
    """The range of a system's score in the ranks section: a rating's scale, 1 to the positions of a ranking
    (N + 1 - rank), -100 to 100 for best-worst; None where it is not known."""
    if style == "ratings":
        return ratings.scale_range(spec)
    if style == "ranking" and len(getattr(spec, "positions", ())) >= 2:
        return 1.0, float(len(spec.positions))
    if style == "best-worst":
        return -100.0, 100.0
    return None


def ranks_section(style: str, scores: pd.DataFrame, tests: pd.DataFrame, options: AnalysisOptions,
                  bounds: tuple[float, float] | None = None) -> Finding:  # fmt: skip
    text = [(RANKS_NOTE_BOUNDED if bounds is not None else RANKS_NOTE).format(
        scores=SCORE_TEXT.get(style, "the style's score"), reps=options.bootstrap, seed=options.seed,
        low=bounds[0] if bounds else 0, high=bounds[1] if bounds else 0)]  # fmt: skip
    table = rankings.table(scores, tests, options.seed, options.bootstrap, bounds)
    text.append("Each cell: the system's rank, [the 95% interval of its rank] and its letters.")
    return Finding("Ranks and groups", text, [
        Table("rankings", "Ranks with 95% intervals and letter groups, per system and question",
              rankings.wide(table)),
    ])  # fmt: skip


def reliability_section(style: str, scores: pd.DataFrame, options: AnalysisOptions,
                        tests: pd.DataFrame | None = None, crossed: pd.DataFrame | None = None) -> Finding:  # fmt: skip
    """``tests``: the ``detectable`` frame of the style, ``crossed`` its second result (annotators as sampled),
    for the headline per question."""
    title = "Reliability of the conclusion"
    if not len(scores) or scores["system"].nunique() < 2:
        return Finding(title, ["No reliability: it needs scores of two or more systems."])
    halves = reliability.split_half(scores, options.seed)
    order = reliability.order_probabilities(scores, options.seed, options.bootstrap)
    text = [RELIABILITY_NOTE.format(splits=reliability.SPLITS, scores=SCORE_TEXT.get(style, "the style's score"),
                                    reps=options.bootstrap, seed=options.seed,
                                    min_distinct=reliability.MIN_DISTINCT)]  # fmt: skip
    summary = []
    for row in halves.to_dict("records"):
        mine = order[order["aspect"] == row["aspect"]]
        pairs = tests[tests["aspect"].astype(str) == row["aspect"]] if tests is not None else None
        second = crossed[crossed["aspect"].astype(str) == row["aspect"]] if crossed is not None else None
        summary.append(headline(row, mine, pairs, second))
        if row["split-half r"] != row["split-half r"]:
            why = "it needs three or more systems" if row["systems"] < 3 else "no split had every system in both halves"
            text.append(f"{row['aspect']}: no split-half reliability, {why}.")
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
        named = "Probability that each pair's order holds" + (" (systems next in rank)" if len(shown) < len(
            order[order["P(order holds)"].notna()]) else "")
        plot = [bars("reliability_order", named, labels,
                     list(np.asarray(shown["P(order holds)"], dtype=float)), "P(order holds)")]  # fmt: skip
    return Finding(title, text, tables, plot, summary=summary)


def headline(halves: dict[str, Any], order: pd.DataFrame, tests: pd.DataFrame | None,
             crossed: pd.DataFrame | None = None) -> str:  # fmt: skip
    """One line per question that reconciles the order's stability, the corrected test and what the study could
    detect, for the two systems with the highest scores, in the words of ``annols plan``'s two claims
    (:func:`annols.analysis.planning.plan.claim`): whether the difference holds for new items, these annotators (the
    items' test) and, where five or more annotators judged the pair, for new items and new annotators (the crossed
    test, ``crossed``; fewer: "not tested"), then the split-half reliability with its words. It opens with the case:
    significant, significant for these annotators (the items' test only), inconclusive or unreliable (split-half
    reliability below 0.5)."""
    aspect = halves["aspect"]
    parts, case = [], ""
    ranked = _scores_of(order).sort_values(ascending=False, kind="stable")
    if len(ranked) >= 2:
        a, b = str(ranked.index[0]), str(ranked.index[1])
        pair = order[((order["system"] == a) & (order["opponent"] == b)) | ((order["system"] == b) &
                                                                           (order["opponent"] == a))]  # fmt: skip
        p_order = float(pair["P(order holds)"].iloc[0]) if len(pair) else np.nan
        if p_order == p_order:
            said = f"{a} ranks above {b} in {100 * p_order:.1f}% of item resamples"
        else:
            said = f"{a} and {b} have the same score"
        test = _pair_row(tests, a, b)
        if test is None:
            parts.append(said)
        else:
            p, m = float(test["p (corrected)"]), int(test["tests corrected for"])
            holm = f"after Holm across {m} test{'s' if m != 1 else ''}"
            if p == p and p < detectable.ALPHA:
                case = "significant"
                parts.append(f"{said}, and {holm} the difference is significant (p = {p:.2g}): it holds for "
                             f"{claim('items')}")  # fmt: skip
            else:
                case = detectable.INCONCLUSIVE.split()[0]
                parts.append(f"{said}, but {holm} the difference is not significant: {test['conclusion']}; for "
                             f"{claim('items')} it is not shown")  # fmt: skip
            second = _pair_row(crossed, a, b)
            if second is not None and second["p (Holm)"] == second["p (Holm)"]:
                clause, items_only = _second(second, case == "significant")
                parts[-1] += clause
                case = "significant for these annotators" if items_only else case
            else:
                k = second.get("annotators") if second is not None else None
                had = f"{int(k)} annotator(s); " if k is not None and k == k else ""
                parts[-1] += (f"; for {claim_alone('crossed')}: not tested ({had}it needs {sampled.MIN_ANNOTATORS} or "
                              "more annotators judging the pair)")  # fmt: skip
    r = halves["split-half r"]
    if r == r:
        word = halves["verdict"]
        if word == reliability.UNRELIABLE:
            case = reliability.UNRELIABLE
        what = (f"split-half r = {halves['r (median)']:.2f}, not corrected as it is not positive"
                if halves["r (median)"] <= 0 else f"split-half reliability {r:.2f}")
        parts.append(f"the ranking of the {halves['systems']} systems is {word} ({what}; spread "
                     f"{halves['low']:.2f} to {halves['high']:.2f}: {halves['spread']} of the {halves['split']})")
    body = "; ".join(parts) if parts else "no comparison"
    return f"{aspect}: {case + ': ' if case else ''}{body}."


def _second(row: dict[str, Any], items_significant: bool) -> tuple[str, bool]:
    """The headline's clause for the second result, and whether only the items' test is significant."""
    p, k = float(row["p (Holm)"]), int(row["annotators"])
    sampled_significant = p < detectable.ALPHA
    said = f"for {claim('crossed', k)} p = {p:.2g}"
    if items_significant and sampled_significant:
        return f"; {said}: it holds as well", False
    if items_significant:
        return f"; {said}: not shown, so significant for new items judged by these annotators, not for new " \
               "annotators", True
    if sampled_significant:
        return f"; {said}, but the two tests disagree: inconclusive", False
    return f"; {said}: not shown either", False


def _scores_of(order: pd.DataFrame) -> pd.Series:
    both = pd.concat([order[["system", "system score"]].set_axis(["system", "score"], axis=1),
                      order[["opponent", "opponent score"]].set_axis(["system", "score"], axis=1)])  # fmt: skip
    return both.drop_duplicates("system").set_index("system")["score"].astype(float)


def _pair_row(tests: pd.DataFrame | None, a: str, b: str) -> dict[str, Any] | None:
    if tests is None:
        return None
    mine = tests[((tests["system"] == a) & (tests["opponent"] == b)) | ((tests["system"] == b) &
                                                                         (tests["opponent"] == a))]  # fmt: skip
    return mine.iloc[0].to_dict() if len(mine) else None
