"""Ranking: mean rank per system and dimension, rank shares, intervals, win rates, Kendall's W, alpha.

Reads the ``rank`` rows of the judgments table (:func:`annols.styles.judgments.tidy`): the
dimension, the system, the rank given (1 = best) and the position it was shown at. A
rank outside 1..N is not a judgment. Ties count as given (A=3, B=1, C=1, D=2 gives two
systems rank 1).

- Mean rank and the share of each rank, per dimension and system, by the items rule
  (:func:`annols.analysis.cells.items_mean`: each sample's mean over its rankings, then the mean
  over samples); 95% intervals of the mean rank: betting intervals over the samples' mean ranks
  (:mod:`annols.analysis.inference.intervals`), or the percentile bootstrap over samples where the ranks' range is
  unknown.
- Pairwise win rates from ranks: within each ranking, a system ranked better (a lower
  rank) than another wins, the same rank is a tie; pairs in name order.
- Kendall's W per sample and dimension, over the annotators who ranked every output of
  that sample on that dimension (at least two), ties midranked with the tie correction;
  the table gives the mean and median over samples. A sample where every annotator tied
  everything has no W and is counted apart.
- Krippendorff's alpha (ordinal) per dimension, a unit being one output of one sample,
  the values the ranks as given.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pandas as pd  # type: ignore[import-untyped, unused-ignore]

from annols.analysis import cells
from annols.analysis.inference import bootstrap, intervals, stats
from annols.analysis.naming import in_order, natural
from annols.analysis.options import AnalysisOptions
from annols.analysis.raters import agreement as shared
from annols.analysis.raters.agreement import NOTHING, ONE_ANNOTATOR
from annols.analysis.results import Figure, Finding, Panel, Table, percent, stacked_bars

AGREEMENT_NOTE = ("Kendall's W per sample over the annotators who ranked all of its outputs on the dimension "
                  "(ties midranked, with the tie correction), summarised over samples; Krippendorff's alpha "
                  "(ordinal) over all ranks, a unit being one output of one sample.")  # fmt: skip


def judgments(frame: pd.DataFrame, dimensions: list[str], top: int) -> pd.DataFrame:
    """The rank rows as (uid, task_key, annotator, dimension, position, system, rank)."""
    part = frame[frame["kind"] == "rank"].rename(columns={"question": "dimension", "code": "position"})
    part = part[["uid", "task_key", "annotator", "dimension", "position", "system", "value"]]
    rank = pd.to_numeric(part["value"], errors="coerce")
    part = part.assign(rank=rank).drop(columns="value")
    part = part[part["rank"].between(1, top) & (part["rank"] % 1 == 0)].astype({"rank": "int64"})
    part["dimension"] = in_order(part["dimension"], dimensions)
    return part[part["dimension"].notna()]


def sections(tidy: pd.DataFrame, spec: Any, options: AnalysisOptions) -> list[Finding]:
    top = len(spec.positions)
    dimensions = [d.name for d in spec.dimensions]
    frame = judgments(tidy, dimensions, top)
    ranks = mean_ranks(frame, top)
    text = [f"{frame['uid'].nunique()} rankings, {len(frame)} ranks given (1 = best); ties count as given.",
            "95% intervals of the mean rank: betting intervals for a mean bounded by the ranks (1 to "
            f"{len(spec.positions)}; Waudby-Smith & Ramdas 2024) over the samples' mean ranks, which hold with few "
            f"samples and when a system is always first (seed {options.seed}). Win rates from ranks: within one "
            "ranking, the system ranked better wins; the "
            "same rank is a tie."]  # fmt: skip
    tables = [ranks, mean_rank_intervals(frame, options, len(spec.positions)), pairwise_wins(frame)]
    out = [Finding("Ranks", text, tables, [_plot(ranks, top)] if len(ranks.frame) else [])]
    if (frame.groupby(["dimension", "task_key", "position"], observed=True).size() >= 2).any():
        out.append(Finding("Agreement", [AGREEMENT_NOTE], [agreement(frame, dimensions, top),
                                                          *each_annotator(frame, dimensions)]))  # fmt: skip
    else:
        out.append(Finding("Agreement", [f"No agreement statistics: {ONE_ANNOTATOR if len(frame) else NOTHING}."]))
    return out


def mean_rank_intervals(frame: pd.DataFrame, options: AnalysisOptions, positions: int | None = None) -> Table:
    """Each system's mean rank per dimension with its 95% interval: with ``positions`` (ranks 1 to it), the betting
    interval of the samples' mean ranks (:func:`annols.analysis.inference.intervals.betting`: it holds with few samples
    and when a system is always first, never a point), else the percentile bootstrap over samples."""
    rows = []
    for i, ((dimension, system), part) in enumerate(frame.groupby(["dimension", "system"], observed=True)):
        # The items rule (cells.items_mean): each sample's mean rank, then the mean over samples; the interval
        # is of that same estimate.
        sample, _ = pd.factorize(part["task_key"], sort=True)  # key order
        means = cells.item_means(sample, part["rank"].to_numpy(dtype=float))
        per_sample = np.column_stack([means, np.ones(len(means))])
        if positions is not None and positions >= 2 and options.bootstrap > 0:  # 0: no intervals
            low, high = intervals.betting(means, 1.0, float(positions), seed=options.seed)
        else:
            low, high = bootstrap.ratio(per_sample, options.bootstrap, np.random.default_rng([options.seed, i]))
        rows.append((dimension, system, len(per_sample), len(part),
                     cells.items_mean(sample, part["rank"].to_numpy(dtype=float)), low, high))  # fmt: skip
    columns = ["dimension", "system", "samples", "rankings", "mean rank", "CI low", "CI high"]
    title = "Mean rank with 95% bounded intervals (betting)" if positions else "Mean rank with 95% bootstrap intervals"
    return Table("ranking_mean_rank_intervals", title, pd.DataFrame(rows, columns=columns))


def pairwise_wins(frame: pd.DataFrame) -> Table:
    """Every pair of systems ranked in the same ranking: wins, ties and losses of the first (name order)."""
    # One column per system, one line per ranking: pairs compare columns, with no row per pair of outputs.
    wide = frame.groupby(["dimension", "uid", "system"], observed=True)["rank"].first().unstack("system")
    rows = []
    for dimension, part in wide.groupby(level="dimension", observed=True):
        for system, opponent in itertools.combinations(natural(part.columns), 2):
            mine, theirs = part[system].to_numpy(dtype=float), part[opponent].to_numpy(dtype=float)
            both = ~(np.isnan(mine) | np.isnan(theirs))
            if both.any():
                better = np.sign(theirs[both] - mine[both])  # a lower rank is better
                rows.append((dimension, system, opponent, int(both.sum()), int((better > 0).sum()),
                             int((better == 0).sum()), int((better < 0).sum())))  # fmt: skip
    table = pd.DataFrame(rows, columns=["dimension", "system", "opponent", "rankings", "wins", "ties", "losses"])
    for count, share in (("wins", "win %"), ("ties", "tie %"), ("losses", "loss %")):
        table[share] = percent(table[count], table["rankings"])
    return Table("ranking_pairwise_wins", "Pairwise win rates from ranks", table)


def mean_ranks(frame: pd.DataFrame, top: int) -> Table:
    """Per dimension and system: its rankings, the mean rank and the share of each rank, by the items rule
    (:func:`annols.analysis.cells.items_mean`: each sample's mean over its rankings, then over samples)."""
    rows = []
    for (dimension, system), part in frame.groupby(["dimension", "system"], observed=True):
        sample, _ = pd.factorize(part["task_key"], sort=True)
        ranks = part["rank"].to_numpy(dtype=float)
        shares = [100 * cells.items_mean(sample, (ranks == r).astype(float)) for r in range(1, top + 1)]
        rows.append((dimension, system, len(part), cells.items_mean(sample, ranks), *shares))
    columns = ["dimension", "system", "rankings", "mean rank", *(f"rank {r} %" for r in range(1, top + 1))]
    return Table("ranking_mean_rank", "Mean rank and share of each rank", pd.DataFrame(rows, columns=columns))


def kendall_per_sample(part: pd.DataFrame, top: int) -> np.ndarray:
    """W of every sample with at least two complete rankings (nan where all are tied)."""
    size = part.groupby("uid")["position"].transform("size")
    complete = part[size == top].sort_values(["task_key", "uid", "position"], kind="stable")
    raters = complete.groupby("task_key")["uid"].nunique()
    out = []
    for m in sorted(set(raters[raters >= 2])):
        keys = raters.index[raters == m]
        block = complete[complete["task_key"].isin(keys)]["rank"].to_numpy().reshape(len(keys), m, top)
        out.append(stats.kendall_w(block))
    return np.concatenate(out) if out else np.zeros(0)


def agreement(frame: pd.DataFrame, dimensions: list[str], top: int) -> Table:
    rows = []
    for dimension in dimensions:
        part = frame[frame["dimension"] == dimension]
        w = kendall_per_sample(part, top)
        defined = w[~np.isnan(w)]
        units = part.groupby(["task_key", "position", "rank"]).size().unstack("rank")
        units = units.reindex(columns=range(1, top + 1)).fillna(0).to_numpy()
        alpha = stats.krippendorff_alpha(units, "ordinal", list(range(1, top + 1)))
        rows.append((dimension, len(defined), len(w) - len(defined),
                     float(defined.mean()) if len(defined) else np.nan,
                     float(np.median(defined)) if len(defined) else np.nan,
                     int((units.sum(axis=1) >= 2).sum()), alpha))  # fmt: skip
    columns = ["dimension", "samples (W)", "samples all tied", "mean Kendall W", "median Kendall W",
               "units (alpha)", "Krippendorff alpha"]  # fmt: skip
    return Table("ranking_agreement", "Agreement per dimension", pd.DataFrame(rows, columns=columns))


def each_annotator(frame: pd.DataFrame, dimensions: list[str]) -> list[Table]:
    """Each annotator against the others per dimension (a unit: one output of one sample; ranks ordinal), and
    whether the annotators order the systems alike (each annotator's mean rank per system)."""
    rows, on_systems = [], []
    for dimension in dimensions:
        part = frame[frame["dimension"] == dimension]
        answers = pd.DataFrame({"unit": part["task_key"].astype(str) + "|" + part["position"].astype(str),
                                "annotator": part["annotator"].astype(str),
                                "value": part["rank"].to_numpy(dtype=float)})  # fmt: skip
        rows += [[dimension, *r] for r in shared.each_against_the_rest(answers, "ordinal")]
        means = part.groupby(["annotator", "system"], observed=True)["rank"].mean().unstack("system")
        on_systems.append([dimension, *shared.system_agreement(means)])
    return [Table("ranking_agreement_annotators", "Each annotator against the others, per dimension",
                  pd.DataFrame(rows, columns=["dimension", *shared.EACH_COLUMNS]), shared.EACH_NOTE),
            Table("ranking_system_agreement", "Do the annotators order the systems alike?",
                  pd.DataFrame(on_systems, columns=["dimension", *shared.SYSTEM_COLUMNS]), shared.SYSTEM_NOTE)]


def _plot(table: Table, top: int) -> Figure:
    panels = []
    for dimension, part in table.frame.groupby("dimension", observed=True, sort=False):
        segments = [list(part[f"rank {r} %"]) for r in range(1, top + 1)]
        panels.append(Panel(str(dimension), list(part["system"]), segments))
    names = [f"rank {r}" for r in range(1, top + 1)]
    return stacked_bars("ranking_ranks", "Rank distribution per dimension and system", panels, names)
