"""pairwise-aspects: win / tie / loss per aspect and system pair, agreement, Bradley-Terry.

Each judgment (an annotation's answer to one aspect, read with
:func:`annols.formats.pairwise_aspects.choices_by_aspect`) is unblinded with the task's
systems: code ``1`` means the system shown as #1 won, ``2`` the one shown as #2, ``0``
a tie. A pair is written in name order (``system`` before ``opponent``) and every
number is from ``system``'s side: a win is ``system`` winning. An aspect answered with
anything but exactly one known code is not a judgment (the violations section counts it).

- All judgments: every judgment counts once; 95% intervals resample whole samples
  (percentile bootstrap, seed and resamples recorded in the report).
- Majority vote: per sample, the outcome more than half of its judgments give; a sample
  without one is counted as "no majority" and left out of the percentages.
- Agreement over the three categories (system wins / tie / opponent wins): Fleiss' kappa
  over the samples with the most common number of judgments (it needs the same number
  per sample), Krippendorff's alpha (nominal) over all samples with two or more, and
  Cohen's kappa for every pair of annotators over the samples both judged.
- With more than two systems, Bradley-Terry strengths with ties (Davidson 1970) per
  aspect, from all judgments.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd  # type: ignore[import-untyped, unused-ignore]

from annols.definition import Definition
from annols.formats import ExportedAnnotation, ExportedTask
from annols.formats.pairwise_aspects import choices_by_aspect, layout
from annols.report import plots, stats
from annols.report.common import ReportOptions, kept_rows
from annols.report.model import Section, Table, percent
from annols.report.sources import Study

OUTCOMES = ("win", "tie", "loss")
COLUMNS = ["uid", "task_key", "aspect", "system", "opponent", "outcome"]
PAIR = ["aspect", "system", "opponent"]


class PairwiseCollector:
    def __init__(self, definition: Definition, options: ReportOptions) -> None:
        self.lay = layout(definition)
        self.options = options
        self.rows: list[tuple[int, str, str, str, str, str]] = []

    def add(self, task: ExportedTask, annotation: ExportedAnnotation, uid: int) -> None:
        shown = task.systems if len(task.systems) == 2 else ("summary #1", "summary #2")
        if shown[0] == shown[1]:
            return  # a system against itself says nothing about either
        system, opponent = sorted(shown)
        given = choices_by_aspect(annotation.result, self.lay)
        for name, wording in self.lay.aspects:
            codes = given.get(name, [])
            if len(codes) != 1 or codes[0] not in self.lay.codes:
                continue
            position = self.lay.codes.index(codes[0])
            outcome = "tie" if position >= 2 else ("win" if shown[position] == system else "loss")
            self.rows.append((uid, task.key, wording, system, opponent, outcome))

    def sections(self, study: Study) -> list[Section]:
        frame = kept_rows(self.rows, COLUMNS, study)
        if not len(frame):
            return [Section("Win / tie / loss", ["No judgments to count."])]
        aspects = [wording for _, wording in self.lay.aspects]
        frame["aspect"] = pd.Categorical(frame["aspect"], categories=aspects, ordered=True)
        frame = frame.sort_values([*PAIR, "task_key", "annotator"], kind="stable")
        results = win_tie_loss(frame, self.options)
        section = Section(
            "Win / tie / loss",
            [f"{len(frame)} judgments. Each pair is written in name order and read from the first system's side "
             f"(win = system wins). 95% intervals: percentile bootstrap over samples, {self.options.bootstrap} "
             f"resamples, seed {self.options.seed}. Majority: more than half of a sample's judgments agree."],
            [results, majority(frame), per_annotator(frame)],
            [_plot(results)] if len(results.frame) else [],
        )  # fmt: skip
        agreement = Section(
            "Agreement",
            ["Categories: system wins / tie / opponent wins. Fleiss' kappa needs the same number of judgments per "
             "sample, so it uses the samples with the most common number; Krippendorff's alpha (nominal) uses "
             "every sample with at least two; Cohen's kappa compares two annotators over the samples both judged."],
            [fleiss_and_alpha(frame, aspects), cohen(frame, aspects)],
        )  # fmt: skip
        pairable = (frame.groupby(["aspect", "task_key"], observed=True).size() >= 2).any()
        out = [section, agreement] if pairable else [section]
        systems = set(frame["system"]) | set(frame["opponent"])
        if len(systems) > 2:
            out.append(Section(
                "Bradley-Terry with ties",
                ["Davidson (1970): P(i beats j) = p_i / D, P(tie) = nu sqrt(p_i p_j) / D, "
                 "D = p_i + p_j + nu sqrt(p_i p_j); maximum likelihood over all judgments of an aspect. "
                 "Strengths sum to 1 per aspect; nu is the tie parameter."],
                [bradley_terry(frame, aspects)],
            ))  # fmt: skip
        return out


def _counts(frame: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """Wins, ties and losses per group, as integer columns (zero where none)."""
    counts = frame.groupby([*by, "outcome"], observed=True).size().unstack("outcome")
    counts = counts.reindex(columns=list(OUTCOMES)).fillna(0).astype(int)
    return counts.rename(columns={"win": "wins", "tie": "ties", "loss": "losses"})


def _shares(table: pd.DataFrame, total: pd.Series) -> pd.DataFrame:
    for count, share in (("wins", "win %"), ("ties", "tie %"), ("losses", "loss %")):
        table[share] = percent(table[count], total)
    return table


def win_tie_loss(frame: pd.DataFrame, options: ReportOptions) -> Table:
    counts = _counts(frame, PAIR)
    samples = frame.groupby(PAIR, observed=True)["task_key"].nunique()
    table = counts.copy()
    table.insert(0, "samples", samples.reindex(counts.index).astype(int))
    table.insert(1, "judgments", counts.sum(axis=1))
    table = _shares(table, table["judgments"])
    intervals = []
    for i, (group, part) in enumerate(frame.groupby(PAIR, observed=True, sort=True)):
        per_sample = _counts(part, ["task_key"]).to_numpy()  # samples in key order
        rng = np.random.default_rng([options.seed, i])
        intervals.append((group, 100 * stats.bootstrap_shares(per_sample, options.bootstrap, rng)))
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
            both = pd.concat([by_annotator[a], by_annotator[b]], axis=1, join="inner")
            if not len(both):
                continue
            table = np.zeros((3, 3))
            np.add.at(table, (both.iloc[:, 0].map(index).to_numpy(), both.iloc[:, 1].map(index).to_numpy()), 1)
            agree = percent(np.trace(table), table.sum())
            rows.append((aspect, a, b, len(both), float(agree), stats.cohens_kappa(table)))
    columns = ["aspect", "annotator 1", "annotator 2", "samples", "agreement %", "Cohen kappa"]
    return Table("pairwise_cohen", "Cohen's kappa per pair of annotators", pd.DataFrame(rows, columns=columns))


def bradley_terry(frame: pd.DataFrame, aspects: list[str]) -> Table:
    rows = []
    for aspect in aspects:
        part = frame[frame["aspect"] == aspect]
        systems = sorted(set(part["system"]) | set(part["opponent"]))
        if len(systems) < 2:
            continue
        at = {s: i for i, s in enumerate(systems)}
        wins = np.zeros((len(systems), len(systems)))
        ties = np.zeros_like(wins)
        i, j = part["system"].map(at).to_numpy(), part["opponent"].map(at).to_numpy()
        outcome = part["outcome"].to_numpy()
        np.add.at(wins, (i[outcome == "win"], j[outcome == "win"]), 1)
        np.add.at(wins, (j[outcome == "loss"], i[outcome == "loss"]), 1)
        np.add.at(ties, (i[outcome == "tie"], j[outcome == "tie"]), 1)
        both_ways = ties + ties.T
        fit = stats.bradley_terry_ties(wins, both_ways)
        for s, k in at.items():
            rows.append((aspect, s, int(wins[k].sum() + wins[:, k].sum() + both_ways[k].sum()), int(wins[k].sum()),
                         int(both_ways[k].sum()), int(wins[:, k].sum()), float(fit.strength[k]),
                         float(fit.log_strength[k]), fit.tie))  # fmt: skip
    columns = ["aspect", "system", "judgments", "wins", "ties", "losses", "strength", "log strength", "tie nu"]
    table = pd.DataFrame(rows, columns=columns)
    return Table("pairwise_bradley_terry", "Bradley-Terry strengths with ties (Davidson)", table)


def _plot(table: Table) -> plots.Plot:
    frame = table.frame
    panels = []
    for aspect, part in frame.groupby("aspect", observed=True, sort=False):
        rows = [f"{s} vs {o}" for s, o in zip(part["system"], part["opponent"], strict=True)]
        panels.append(plots.Panel(str(aspect), rows, [list(part[c]) for c in ("win %", "tie %", "loss %")]))
    return plots.stacked_bars("pairwise_win_tie_loss", "Win / tie / loss per aspect (all judgments)", panels,
                              ["system wins", "tie", "opponent wins"], plots.WIN_TIE_LOSS)  # fmt: skip


COLLECTOR = PairwiseCollector
