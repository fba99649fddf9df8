"""Pairwise: win / tie / loss per aspect and system pair, a sign test, agreement, Bradley-Terry.

Reads the ``preference`` rows of the judgments table (:func:`annols.styles.judgments.tidy`): a
pair is written in name order (``system`` before ``opponent``) and every number is from
``system``'s side: a win is ``system`` winning. A system judged against itself says
nothing about either and is left out.

- All judgments: every judgment counts once; the 95% intervals of the win and loss shares are
  betting intervals of a ratio with the sample as the unit (:func:`annols.analysis.inference.intervals.betting_ratio`: a
  sample's judgments together; they hold with few samples and at a ceiling, and never have zero width).
- Majority vote: per sample, the outcome more than half of its judgments give; a sample
  without one is counted as "no majority" and left out of the percentages.
- Sign test over items (:func:`annols.analysis.inference.item_tests.sign_test`): an item's judgments make
  one observation, its net preference (wins - losses); exact two-sided binomial test of the
  items won against the items lost, items even set aside; Holm's correction across the
  aspects of each system pair, or, with more than two systems, across every pair of systems of an aspect
  (one family per question). The win / tie / loss tables above it describe; this tests.
- Agreement over the three categories (system wins / tie / opponent wins): Fleiss' kappa
  over the samples with the most common number of judgments (it needs the same number
  per sample), Krippendorff's alpha (nominal) over all samples with two or more, and
  Cohen's kappa for every pair of annotators over the samples both judged.
- With more than two systems, Bradley-Terry strengths per aspect from all judgments (choix,
  ties as half wins), with bootstrap intervals over items, rank intervals and letter groups
  (:mod:`annols.analysis.leaderboard.rankings`).
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pandas as pd  # type: ignore[import-untyped, unused-ignore]

from annols.analysis.inference import detectable, item_tests, sampled, stats
from annols.analysis.inference import intervals as bounded
from annols.analysis.leaderboard import rankings
from annols.analysis.naming import aspect_names, in_order
from annols.analysis.options import AnalysisOptions
from annols.analysis.raters.agreement import (
    EACH_COLUMNS,
    EACH_NOTE,
    NOTHING,
    each_against_the_rest,
    shared_reason,
    why_not,
)
from annols.analysis.results import WIN_TIE_LOSS, Figure, Finding, Panel, Table, percent, stacked_bars

OUTCOMES = ("win", "tie", "loss")
PAIR = ["aspect", "system", "opponent"]


def judgments(frame: pd.DataFrame, aspects: list[str]) -> pd.DataFrame:
    """The preference rows as (uid, task_key, annotator, aspect, system, opponent, outcome), in report order."""
    part = frame[(frame["kind"] == "preference") & (frame["system"] != frame["opponent"])]
    part = part.rename(columns={"question": "aspect", "value": "outcome"})
    part = part[["uid", "task_key", "annotator", "aspect", "system", "opponent", "outcome"]].copy()
    part["aspect"] = in_order(part["aspect"], aspects)
    part = part[part["aspect"].notna()]
    return part.sort_values([*PAIR, "task_key", "annotator"], kind="stable")


def sections(tidy: pd.DataFrame, spec: Any, options: AnalysisOptions) -> list[Finding]:
    """The pairwise sections of a judgments table; aspects are named by their name, in the definition's order."""
    aspects = aspect_names(spec.aspects)
    frame = judgments(tidy, aspects)
    if not len(frame):
        return [Finding("Win / tie / loss", ["No judgments to count."]),
                Finding("Agreement", [f"No agreement statistics: {NOTHING}."])]  # fmt: skip
    results = win_tie_loss(frame, options)
    signs = sign_test(frame)
    crossed, crossed_text = sampled.table("pairwise", sampled.pairwise(frame, signs.frame),
                                          int(frame["annotator"].nunique()), "win - loss % of decided",
                                          signs.frame)  # fmt: skip
    section = Finding(
        "Win / tie / loss",
        [f"{len(frame)} judgments. Each pair is written in name order and read from the first system's side "
         "(win = system wins). 95% intervals of the win and loss shares: bounded (betting) intervals of the "
         "share with the sample as the unit, which hold with few samples and at a ceiling. Majority: more than "
         "half of a sample's judgments agree.",
         "Sign test: the item is the unit. An item's net preference is its wins minus losses over its judgments; "
         "the exact two-sided sign test compares the items won (net above 0) with the items lost (below 0), items "
         "even set aside, and p is empty where every item was even. p (Holm) corrects "
         + ("across every pair of systems of an aspect (more than two systems: one family per question). "
            if detectable.pairwise_family(frame) == ["aspect"] else "for the aspects of each system pair. ")
         + "Effect: wins - losses as a share of the decided judgments, its 95% bounded (betting) interval with "
         "the item as the unit. The result holds for new items judged by these annotators.", *crossed_text],
        [results, majority(frame), per_annotator(frame), sign_test(frame, options), *crossed],
        [_plot(results)] if len(results.frame) else [],
    )  # fmt: skip
    counts = [_category_counts(frame[frame["aspect"] == a]) for a in aspects]
    agreement = Finding(
        "Agreement",
        ["Categories: system wins / tie / opponent wins. Fleiss' kappa needs the same number of judgments per "
         "sample, so it uses the samples with the most common number; Krippendorff's alpha (nominal) uses "
         "every sample with at least two; Cohen's kappa compares two annotators over the samples both judged."],
    )  # fmt: skip
    shared = shared_reason(counts)
    if shared:
        agreement.text = [f"No agreement statistics: {shared}."]
    else:
        reasons = [(a, why_not(c)) for a, c in zip(aspects, counts, strict=True)]
        agreement.text += [f"{a}: kappa and alpha are undefined, {r}." for a, r in reasons if r]
        agreement.tables = [fleiss_and_alpha(frame, aspects), cohen(frame, aspects), each_annotator(frame, aspects)]
    out = [section, agreement]
    systems = set(frame["system"]) | set(frame["opponent"])
    if len(systems) > 2:
        tests = detectable.pairwise_table(signs.frame)
        strengths = bradley_terry(frame, aspects, tests, options)
        refused = rankings.no_strength_interval(strengths.frame)
        out.append(Finding(
            "Bradley-Terry with ties",
            ["Bradley-Terry strengths by maximum likelihood over all judgments of an aspect (choix), a tie "
             "counting as half a win for each system; strengths sum to 1 per aspect. Strength intervals (95%, "
             "simultaneous): each compared pair's betting interval of its share of half-wins (items as the unit, "
             "Bonferroni over the pairs) bounds the pair's difference of log strengths; a strength's interval is "
             "the least and most it can be within all those bounds (finite where a system never lost). Rank "
             f"intervals (95%): percentile bootstrap over items, {options.bootstrap} resamples, seed "
             f"{options.seed}, of each resample's rank (1 is best). Group: systems sharing a letter cannot be told "
             "apart by the sign test, Holm-corrected across every pair of the aspect (compact letter display, "
             "Piepho 2004).", *refused],
            [strengths], [], refused,
        ))  # fmt: skip
    return out


def sign_test(frame: pd.DataFrame, options: AnalysisOptions | None = None) -> Table:
    options = options or AnalysisOptions(bootstrap=0)
    table = item_tests.sign_test(frame, options.bootstrap, options.seed)
    across = "the pairs of an aspect" if detectable.pairwise_family(table) == ["aspect"] else "aspects"
    return Table("pairwise_sign_test", "Sign test over items: items won against items lost (items even set aside), "
                 f"Holm across {across}", table)  # fmt: skip


def _counts(frame: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """Wins, ties and losses per group, as integer columns (zero where none)."""
    counts = frame.groupby([*by, "outcome"], observed=True).size().unstack("outcome")
    counts = counts.reindex(columns=list(OUTCOMES)).fillna(0).astype(int)
    return counts.rename(columns={"win": "wins", "tie": "ties", "loss": "losses"})


def _shares(table: pd.DataFrame, total: pd.Series) -> pd.DataFrame:
    for count, share in (("wins", "win %"), ("ties", "tie %"), ("losses", "loss %")):
        table[share] = percent(table[count], total)
    return table


def win_tie_loss(frame: pd.DataFrame, options: AnalysisOptions) -> Table:
    counts = _counts(frame, PAIR)
    samples = frame.groupby(PAIR, observed=True)["task_key"].nunique()
    table = counts.copy()
    table.insert(0, "samples", samples.reindex(counts.index).astype(int))
    table.insert(1, "judgments", counts.sum(axis=1))
    table = _shares(table, table["judgments"])
    intervals = []
    for group, part in frame.groupby(PAIR, observed=True, sort=True):
        per_sample = _counts(part, ["task_key"]).to_numpy(dtype=float)  # samples in key order
        sizes = per_sample.sum(axis=1)
        # A share of all judgments with the item as the unit: the betting interval of the ratio (it holds with few
        # items and at a ceiling, never a point); --bootstrap 0 leaves the intervals out.
        shares = [bounded.betting_ratio(per_sample[:, k], sizes, 0.0, 1.0, seed=options.seed)
                  if options.bootstrap > 0 and k != 1 else (np.nan, np.nan) for k in range(3)]  # no tie interval
        intervals.append((group, 100 * np.array(shares)))
    for name, k in (("win", 0), ("loss", 2)):
        low = {g: ci[k, 0] for g, ci in intervals}
        high = {g: ci[k, 1] for g, ci in intervals}
        table[f"{name} CI low %"] = [low.get(g, np.nan) for g in table.index]
        table[f"{name} CI high %"] = [high.get(g, np.nan) for g in table.index]
    return Table("pairwise_win_tie_loss", "Win / tie / loss over all judgments", table.reset_index())


def majority(frame: pd.DataFrame) -> Table:
    per_sample = _counts(frame, [*PAIR, "task_key"])
    n = per_sample.sum(axis=1)
    top = per_sample.max(axis=1)
    has = top * 2 > n
    winner = per_sample.idxmax(axis=1).where(has, "no majority")
    votes = winner.groupby(level=PAIR, observed=True).value_counts().unstack()
    votes = votes.reindex(columns=["wins", "ties", "losses", "no majority"]).fillna(0).astype(int)
    votes.insert(0, "samples", votes.sum(axis=1))
    decided = votes[["wins", "ties", "losses"]].sum(axis=1)
    votes = _shares(votes, decided)
    return Table("pairwise_majority", "Win / tie / loss by majority vote per sample", votes.reset_index())


def per_annotator(frame: pd.DataFrame) -> Table:
    counts = _counts(frame, ["annotator", *PAIR])
    counts.insert(0, "judgments", counts.sum(axis=1))
    table = _shares(counts, counts["judgments"])
    return Table("pairwise_annotators", "Win / tie / loss per annotator", table.reset_index())


def _category_counts(part: pd.DataFrame) -> np.ndarray:
    """Samples x (win, tie, loss) judgment counts."""
    return _counts(part, ["task_key"]).to_numpy()


def fleiss_and_alpha(frame: pd.DataFrame, aspects: list[str]) -> Table:
    rows = []
    for aspect in aspects:
        counts = _category_counts(frame[frame["aspect"] == aspect])
        raters = counts.sum(axis=1) if len(counts) else np.zeros(0, dtype=int)
        pairable = raters[raters >= 2]
        common = int(np.bincount(pairable).argmax()) if len(pairable) else 0
        full = counts[raters == common] if common else counts[:0]
        rows.append((aspect, len(full), common or np.nan, stats.fleiss_kappa(full), int((raters >= 2).sum()),
                     stats.krippendorff_alpha(counts, "nominal")))  # fmt: skip
    columns = ["aspect", "samples (Fleiss)", "judgments per sample", "Fleiss kappa", "samples (alpha)",
               "Krippendorff alpha"]  # fmt: skip
    table = pd.DataFrame(rows, columns=columns)
    table["judgments per sample"] = table["judgments per sample"].astype("Int64")
    return Table("pairwise_agreement", "Agreement per aspect", table)


def cohen(frame: pd.DataFrame, aspects: list[str]) -> Table:
    index = {o: i for i, o in enumerate(OUTCOMES)}
    rows = []
    annotators = sorted(frame["annotator"].unique())
    for aspect in aspects:
        part = frame[frame["aspect"] == aspect]
        by_annotator = {a: g.set_index("task_key")["outcome"] for a, g in part.groupby("annotator")}
        for a, b in itertools.combinations(annotators, 2):
            if a not in by_annotator or b not in by_annotator:
                continue
            both = pd.concat([by_annotator[a], by_annotator[b]], axis=1, join="inner").astype(object)
            if not len(both):
                continue
            table = np.zeros((3, 3))
            np.add.at(table, (both.iloc[:, 0].map(index).to_numpy(), both.iloc[:, 1].map(index).to_numpy()), 1)
            agree = percent(np.trace(table), table.sum())
            rows.append((aspect, a, b, len(both), float(agree), stats.cohens_kappa(table)))
    columns = ["aspect", "annotator 1", "annotator 2", "samples", "agreement %", "Cohen kappa"]
    return Table("pairwise_cohen", "Cohen's kappa per pair of annotators", pd.DataFrame(rows, columns=columns))


def each_annotator(frame: pd.DataFrame, aspects: list[str]) -> Table:
    """Each annotator against the others per aspect, a unit being a sample's pair of systems (nominal)."""
    rows = []
    for aspect in aspects:
        part = frame[frame["aspect"] == aspect]
        answers = pd.DataFrame({"unit": part["task_key"].astype(str) + "|" + part["system"].astype(str) + "|"
                                + part["opponent"].astype(str), "annotator": part["annotator"].astype(str),
                                "value": part["outcome"].astype(str)})  # fmt: skip
        rows += [[aspect, *r] for r in each_against_the_rest(answers, "nominal")]
    return Table("pairwise_agreement_annotators", "Each annotator against the others, per aspect",
                 pd.DataFrame(rows, columns=["aspect", *EACH_COLUMNS]), EACH_NOTE)  # fmt: skip


def bradley_terry(frame: pd.DataFrame, aspects: list[str], tests: pd.DataFrame, options: AnalysisOptions) -> Table:
    """Strengths and ranks with intervals, and letter groups
    (:func:`annols.analysis.leaderboard.rankings.bradley_terry`)."""
    table = rankings.bradley_terry(frame, aspects, tests, options.seed, options.bootstrap)
    return Table("pairwise_bradley_terry", "Bradley-Terry strengths (ties as half wins), ranks and groups", table)


def _plot(table: Table) -> Figure:
    frame = table.frame
    panels = []
    for aspect, part in frame.groupby("aspect", observed=True, sort=False):
        rows = [f"{s} vs {o}" for s, o in zip(part["system"], part["opponent"], strict=True)]
        panels.append(Panel(str(aspect), rows, [list(part[c]) for c in ("win %", "tie %", "loss %")]))
    return stacked_bars("pairwise_win_tie_loss", "Win / tie / loss per aspect (all judgments)", panels,
                              ["system wins", "tie", "opponent wins"], WIN_TIE_LOSS)  # fmt: skip
