"""Best-worst scaling: counting scores, a choice model and split-half reliability per aspect.

Reads the ``best-worst`` rows of the judgments table (:func:`annols.styles.judgments.tidy`):
one row per candidate of each answered tuple, ``value`` 1 (chosen best), -1 (worst) or 0.
A tuple whose best and worst are the same candidate has no rows (``validate`` flags it).

- Counting scores (Orme 2009; Kiritchenko & Mohammad 2017): per aspect and candidate,
  % best − % worst of the times it was shown, from -100 to 100, with the 95% bounded (betting)
  interval of the mean over items of each item's score (:mod:`annols.analysis.inference.intervals`: it holds
  with few items and at the ends of the scale; see the unit below); :func:`scores` computes them from
  a tidy table, for anything that needs them again (split-half reliability, planning).
- A choice model: each answer read as the comparisons it implies (the best beats every
  other candidate shown, each of those beats the worst) and fitted as a Bradley-Terry
  model by ``choix.opt_pairwise`` (maximum a posteriori with a weak Gaussian prior,
  ``alpha`` :data:`ALPHA`, so a candidate never worst still gets a finite strength),
  strengths centred to mean 0.
- Split-half reliability (Kiritchenko & Mohammad 2017): the answers to each tuple split
  at random into two halves, counting scores from each half, Spearman's rho between
  them over the candidates scored in both; the mean over :data:`TRIALS` splits, and the
  same raised to the whole by the Spearman-Brown formula.
- Paired tests between candidates (:func:`paired_tests`): the item is the unit, never an
  annotator's answer nor a tuple. An item is a pool, the candidates shown with one context
  (an article's summaries): its tuples share its outputs, so an output better or worse than
  its system's usual would count once per tuple (null studies with such outputs rejected
  about a third of comparisons at 0.05 with the tuple as the unit, 5% with the item: see
  tests/analysis/by_style/test_best_worst_null.py).
  Without context panes every candidate is an item of its own and the tuple is the unit. Per
  item, each candidate shown gets its score from the item's answers, 100 x (times best -
  times worst) / times shown; for each pair of candidates, over the items that showed both,
  the Wilcoxon signed-rank test of the differences (zero differences dropped), Holm across
  the pairs of an aspect, with the mean difference, its 95% bounded (betting) interval over
  those items and the matched-pairs rank-biserial correlation (Kerby 2014) as the
  effect size beside each p. The same test gives the report's "What the study could detect"
  (:mod:`annols.analysis.leaderboard.conclusions`).

Best-worst scaling is Louviere, Flynn & Marley (2015); counting scores Orme (2009); its use
for NLP annotation and split-half reliability Kiritchenko & Mohammad (2017).
"""

from __future__ import annotations

from typing import Any

import choix  # type: ignore[import-untyped, unused-ignore]
import numpy as np
import pandas as pd  # type: ignore[import-untyped, unused-ignore]
from scipy.stats import spearmanr

from annols.analysis.cells import UNIT
from annols.analysis.inference import detectable, sampled
from annols.analysis.inference import intervals as bounded
from annols.analysis.naming import aspect_names, in_order
from annols.analysis.options import AnalysisOptions
from annols.analysis.planning.plan import claim, claim_alone
from annols.analysis.raters import agreement
from annols.analysis.results import Estimates, Figure, Finding, Table, cell_text, intervals, percent

ALPHA = 0.01  # the choice model's prior strength (choix's alpha)
TRIALS = 100  # random splits for split-half reliability
SCORE_COLUMNS = ["aspect", "system", "shown", "best", "worst", "best %", "worst %", "score %"]
MEASURE = "score points per item"  # the paired tests' difference: 100 x (best - worst) / times shown in an item
PAIRED_COLUMNS = [
    "aspect",
    "system",
    "opponent",
    "items",
    "mean difference",
    "CI low",
    "CI high",
    "rank-biserial r",
    "items system higher",
    "items opponent higher",
    "p (Wilcoxon)",
    "p (Holm)",
]
EFFECT_STREAM = 2  # the paired differences' bootstrap: default_rng([seed, 2, pair index])


def judgments(frame: pd.DataFrame) -> pd.DataFrame:
    """The best-worst rows as (uid, task_key, annotator, aspect, system, value, unit): ``unit`` the item
    (:data:`UNIT` of the frame where it has one, else the tuple)."""
    part = frame[frame["kind"] == "best-worst"].rename(columns={"question": "aspect"})
    part = part[["uid", "task_key", "annotator", "aspect", "system", "value",
                 *([UNIT] if UNIT in part.columns else [])]].copy()  # fmt: skip
    if UNIT not in part.columns:
        part[UNIT] = part["task_key"]
    part["value"] = pd.to_numeric(part["value"]).astype(int)
    return part


def scores(frame: pd.DataFrame) -> pd.DataFrame:
    """Counting scores of a tidy table (every kind of row may be in it): :data:`SCORE_COLUMNS`,
    one row per aspect and candidate, sorted by aspect, then score (highest first), then name."""
    rows = judgments(frame) if "kind" in frame.columns else frame
    if rows.empty:
        return pd.DataFrame(columns=SCORE_COLUMNS)
    grouped = rows.groupby(["aspect", "system"], sort=True, observed=True)["value"]
    out = pd.DataFrame(
        {
            "shown": grouped.size(),
            "best": grouped.apply(lambda v: int((v == 1).sum())),
            "worst": grouped.apply(lambda v: int((v == -1).sum())),
        }
    ).reset_index()
    out["best %"] = percent(out["best"], out["shown"])
    out["worst %"] = percent(out["worst"], out["shown"])
    out["score %"] = out["best %"] - out["worst %"]
    order = out.sort_values(["system"]).sort_values(["aspect", "score %"], ascending=[True, False], kind="stable")
    return order[SCORE_COLUMNS].reset_index(drop=True)


def implied_pairs(rows: pd.DataFrame, candidates: list[str]) -> list[tuple[int, int]]:
    """(winner, loser) indexes into ``candidates`` implied by each answer of one aspect."""
    index = {c: i for i, c in enumerate(candidates)}
    pairs: list[tuple[int, int]] = []
    for _, answer in rows.groupby("uid", sort=True):
        values = dict(zip(answer["system"], answer["value"], strict=True))
        best = [s for s, v in values.items() if v == 1]
        worst = [s for s, v in values.items() if v == -1]
        if len(best) != 1 or len(worst) != 1:
            continue
        for s, v in sorted(values.items()):
            if v != 1:
                pairs.append((index[best[0]], index[s]))
            if v == 0:
                pairs.append((index[s], index[worst[0]]))
    return pairs


def strengths(rows: pd.DataFrame) -> pd.Series:
    """Choice-model strengths of one aspect's candidates (centred to mean 0), by candidate name."""
    candidates = sorted(rows["system"].unique())
    pairs = implied_pairs(rows, candidates)
    if len(candidates) < 2 or not pairs:
        return pd.Series(np.nan, index=candidates, dtype=float)
    params = choix.opt_pairwise(len(candidates), pairs, alpha=ALPHA)
    return pd.Series(params - params.mean(), index=candidates, dtype=float)


def split_half(frame: pd.DataFrame, trials: int = TRIALS, seed: int = 0) -> pd.DataFrame:
    """Split-half reliability per aspect: (aspect, candidates, split-half rho, Spearman-Brown)."""
    rows = judgments(frame) if "kind" in frame.columns else frame
    rng = np.random.default_rng(seed)
    out = []
    for aspect, part in rows.groupby("aspect", sort=True, observed=True):
        answers = part[["uid", "task_key"]].drop_duplicates().sort_values(["task_key", "uid"])
        rhos = []
        for _ in range(trials):
            # Each tuple's answers in a random order; alternate halves, so each half gets half of them.
            shuffled = answers.assign(r=rng.random(len(answers))).sort_values(["task_key", "r"])
            half = shuffled.groupby("task_key", sort=False).cumcount() % 2
            first = set(shuffled["uid"][half.to_numpy() == 0])
            a = scores(part[part["uid"].isin(first)]).set_index("system")["score %"]
            b = scores(part[~part["uid"].isin(first)]).set_index("system")["score %"]
            both = a.index.intersection(b.index)
            if len(both) >= 3:
                rho = spearmanr(a[both], b[both]).statistic
                if np.isfinite(rho):
                    rhos.append(float(rho))
        mean = float(np.mean(rhos)) if rhos else np.nan
        # Spearman-Brown only on a positive rho: on rho <= 0 it would leave [-1, 1] and mean nothing.
        corrected = 2 * mean / (1 + mean) if rhos and mean > 0 else np.nan
        out.append([aspect, part["system"].nunique(), len(rhos), mean, corrected])
    return pd.DataFrame(out, columns=["aspect", "candidates", "splits", "split-half rho", "Spearman-Brown"])


def named_judgments(tidy: pd.DataFrame, spec: Any) -> tuple[pd.DataFrame, list[str]]:
    """:func:`judgments` with each aspect named as the tables name it, and those names in the definition's order."""
    return judgments(tidy[tidy["kind"] == "best-worst"]), aspect_names(spec.aspects)


def in_aspect_order(frame: pd.DataFrame, aspects: list[str]) -> pd.DataFrame:
    """The rows with their aspects in the definition's order (a stable sort: the order within one kept)."""
    codes = in_order(frame["aspect"].astype(str), aspects).codes
    return frame.iloc[np.argsort(codes, kind="stable")].reset_index(drop=True)


SCORE_RANGE = (-100.0, 100.0)  # an item's score: 100 x (best - worst) / shown


def item_scores(rows: pd.DataFrame) -> pd.Series:
    """Each (aspect, item, system)'s score in its item, in points: 100 x (times chosen best - times chosen
    worst) / times shown there (from -100 to 100)."""
    return 100 * rows.groupby(["aspect", UNIT, "system"], observed=True, sort=True)["value"].mean()


def score_intervals(rows: pd.DataFrame, table: pd.DataFrame, options: AnalysisOptions) -> tuple[list[float], ...]:
    """The 95% intervals (low, high, in points) of the scores of ``table``'s (aspect, system) rows: the bounded
    (betting) interval of the mean over items of each item's score (it holds with few items, never a point);
    --bootstrap 0 leaves them out."""
    low, high = [], []
    for aspect, system in zip(table["aspect"], table["system"], strict=True):
        mine = rows[(rows["aspect"] == aspect) & (rows["system"] == system)]
        per_item = mine.groupby(UNIT, sort=True, observed=True)["value"].agg(["sum", "size"]).to_numpy()
        lo, hi = (bounded.betting(per_item[:, 0] / per_item[:, 1], -1.0, 1.0, seed=options.seed)
                  if options.bootstrap > 0 else (np.nan, np.nan))  # fmt: skip
        low.append(100 * lo)
        high.append(100 * hi)
    return low, high


rank_biserial = detectable.rank_biserial  # its home is beside the other paired tests' effects


def paired_tests(rows: pd.DataFrame, options: AnalysisOptions) -> pd.DataFrame:
    """:data:`PAIRED_COLUMNS`: every pair of candidates per aspect compared over the items that showed both."""
    per_item = item_scores(rows)
    tests = detectable.with_effects(detectable.paired_tests(per_item, "aspect"), per_item, "aspect",
                                    options.bootstrap, options.seed, EFFECT_STREAM, SCORE_RANGE)  # fmt: skip
    tests = tests.rename(columns={"samples": "items", "samples system higher": "items system higher",
                                  "samples opponent higher": "items opponent higher"})  # fmt: skip
    return tests[PAIRED_COLUMNS]


def sampled_frame(rows: pd.DataFrame, tests: pd.DataFrame | None) -> pd.DataFrame:
    """The second result (:mod:`annols.analysis.inference.sampled`) beside the paired tests ``tests`` (None: alone): a
    cell is one annotator's score of a candidate in an item, 100 x (best - worst) / times that annotator was shown it
    there."""
    found = sampled.paired(rows.assign(score=100 * rows["value"]), "aspect", tests, "score", UNIT)
    order = rows["aspect"] if tests is None else tests["aspect"]
    return in_aspect_order(found, list(dict.fromkeys(order.astype(str))))


def annotators_sampled(rows: pd.DataFrame, tests: pd.DataFrame) -> tuple[pd.DataFrame, list[Table], list[str]]:
    """:func:`sampled_frame`, its table and its paragraph."""
    found = sampled_frame(rows, tests)
    return found, *sampled.table("best_worst", found, sampled.most_annotators(rows, "aspect"), MEASURE, tests)


def _beaten(tests: pd.DataFrame, aspect: Any, top: Any, difference: str) -> tuple[int, int]:
    """How many candidates ``top`` is significantly above after correction, and of how many tested."""
    mine = tests[(tests["aspect"] == aspect) & ((tests["system"] == top) | (tests["opponent"] == top))]
    mine = mine[mine["p (Holm)"].notna()]
    sign = np.where(mine["system"] == top, 1, -1)
    return int(((mine["p (Holm)"] < detectable.ALPHA) & (sign * mine[difference] > 0)).sum()), len(mine)


def headline(table: pd.DataFrame, tests: pd.DataFrame, reliability: pd.DataFrame,
             second: pd.DataFrame | None = None) -> str:  # fmt: skip
    """One paragraph: per aspect the candidate scored highest, with its interval, and whom it beat after
    correction (and, with five or more annotators, whom it beat with annotators as sampled too,
    :mod:`annols.analysis.inference.sampled`); then the split-half reliability."""
    parts = []
    for aspect, part in table.groupby("aspect", sort=False):
        top = part.iloc[0]
        beaten, _ = _beaten(tests, aspect, top["system"], "mean difference")
        interval = (f" [{cell_text(top['score low %'], '%')}, {cell_text(top['score high %'], '%')}]"
                    if top["score low %"] == top["score low %"] else "")  # fmt: skip
        others = len(part) - 1
        above = f"all {others} others" if beaten == others and others > 1 else f"{beaten} of the {others} others"
        also = f"; for {claim_alone('crossed')}: not tested (it needs {sampled.MIN_ANNOTATORS} or more annotators " \
               "judging a pair)"
        if second is not None and len(second):
            kept, tested = _beaten(second, aspect, top["system"], "difference")
            also = f"; for {claim('crossed')}: above {kept} of them" if tested else also
        parts.append(f"on {aspect}, {top['system']} scored highest ({cell_text(top['score %'], '%')}{interval}), "
                     f"for {claim('items')} significantly above {above}{also}")  # fmt: skip
    rho = [f"{a} {cell_text(r, 'r')}" if r == r else f"{a} unreliable (rho = {cell_text(raw, 'r')}, not corrected)"
           for a, r, raw in zip(reliability["aspect"], reliability["Spearman-Brown"], reliability["split-half rho"],
                                strict=True) if raw == raw]  # fmt: skip
    return ("Best-worst scores (% chosen best - % chosen worst, 95% interval over items; paired Wilcoxon tests over "
            f"items, Holm-corrected): {'; '.join(parts)}."
            + (f" Split-half reliability (Spearman-Brown): {', '.join(rho)}." if rho else ""))  # fmt: skip


def _plot(table: pd.DataFrame) -> Figure:
    panels = [Estimates(str(aspect), list(part["system"]), list(part["score %"]), list(part["score low %"]),
                        list(part["score high %"])) for aspect, part in table.groupby("aspect", sort=False)]
    return intervals("best_worst_scores", "Best-worst scores with 95% intervals", panels,
                     "score (% best - % worst)")  # fmt: skip


def sections(tidy: pd.DataFrame, spec: Any, options: AnalysisOptions) -> list[Finding]:
    rows, aspects = named_judgments(tidy, spec)
    if rows.empty:
        return [Finding("Best-worst scores", ["No best-worst answers."])]
    table = in_aspect_order(scores(rows), aspects)
    fitted = {aspect: strengths(part) for aspect, part in rows.groupby("aspect", sort=True)}
    table["score low %"], table["score high %"] = score_intervals(rows, table, options)
    table["model strength"] = [fitted[a].get(s, np.nan) for a, s in zip(table["aspect"], table["system"], strict=True)]
    reliability = split_half(rows, seed=options.seed)
    tests = in_aspect_order(paired_tests(rows, options), aspects)
    second, crossed, crossed_text = annotators_sampled(rows, tests)
    text = [
        "Best-worst scaling (Louviere, Flynn & Marley 2015; for NLP annotation Kiritchenko & Mohammad 2017), scored "
        "by counting (Orme 2009): each candidate's score is the share of the times it was shown that it was chosen "
        "best, minus the share it was chosen worst (from -100 to 100); the interval resamples whole items. The "
        "model strength is a Bradley-Terry fit (choix) of the comparisons each answer implies: the best beats every "
        "other candidate shown, and each of those beats the worst.",
        "Paired tests: the item is the unit, not the answer nor the tuple. An item is a pool, the candidates shown "
        "with one context: its tuples share its outputs, so they are one observation (without context, each "
        "tuple is one). Per item each candidate's score from that item's answers, 100 x (best - worst) / times "
        "shown; for each pair, over the items that showed both, the Wilcoxon signed-rank test of the differences "
        "(zero differences dropped), p (Holm) corrected across the pairs of an aspect; beside each p the mean "
        "difference with its 95% bounded interval over those items (betting, Waudby-Smith & Ramdas 2024: it holds "
        "with few items and at the ends of the scale) and the "
        "rank-biserial correlation (-1 to 1). Those figures generalise to new items judged by these annotators.",
        *crossed_text,
    ]
    return [
        Finding("Best-worst scores", text, [
            Table("best_worst_scores", "Best-worst scores per aspect", table),
            Table("best_worst_paired_tests", "Paired tests between candidates over items (Wilcoxon signed-rank, "
                  "Holm), with the mean difference's interval and the rank-biserial effect size", tests),
            *crossed,
        ], [_plot(table)], summary=[headline(table, tests, reliability, second)]),
        Finding("Best-worst reliability", [
            f"Split-half reliability: each tuple's answers split at random into two halves ({TRIALS} times), "
            "Spearman's rho between the two halves' scores, and the same raised to the whole "
            "(Spearman-Brown) when rho is positive; a rho of zero or below is left uncorrected and called "
            "unreliable. A tuple answered once goes to one half.",
        ], [Table("best_worst_split_half", "Split-half reliability per aspect", reliability)]),
        agreement_finding(rows, aspects),
    ]  # fmt: skip


def agreement_finding(rows: pd.DataFrame, aspects: list[str]) -> Finding:
    """Each annotator against the others (a unit: a tuple; the answer: the candidate picked as best, as worst;
    nominal), and whether the annotators order the systems alike (each annotator's own counting scores)."""
    each, on_systems = [], []
    for aspect in aspects:
        part = rows[rows["aspect"] == aspect]
        for code, pick in ((1, "best"), (-1, "worst")):
            chosen = part[part["value"] == code]
            answers = pd.DataFrame({"unit": chosen["task_key"].astype(str),
                                    "annotator": chosen["annotator"].astype(str),
                                    "value": chosen["system"].astype(str)})  # fmt: skip
            each += [[aspect, pick, *r] for r in agreement.each_against_the_rest(answers, "nominal")]
        by_annotator = part.groupby("annotator", sort=True, observed=True)
        mine = {str(a): scores(g).set_index("system")["score %"] for a, g in by_annotator}
        on_systems.append([aspect, *agreement.system_agreement(pd.DataFrame(mine).T)])
    text = ["Agreement: a unit is a tuple, the answer the candidate picked as best (or as worst)."]
    return Finding("Best-worst agreement", text, [
        Table("best_worst_agreement_annotators", "Each annotator against the others, per aspect and pick",
              pd.DataFrame(each, columns=["aspect", "pick", *agreement.EACH_COLUMNS]), agreement.EACH_NOTE),
        Table("best_worst_system_agreement", "Do the annotators order the candidates alike?",
              pd.DataFrame(on_systems, columns=["aspect", *agreement.SYSTEM_COLUMNS]),
              agreement.SYSTEM_NOTE.replace("system", "candidate")),
    ])  # fmt: skip
