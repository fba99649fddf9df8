"""extractive-ranking: mean rank per system and dimension, rank shares, Kendall's W, Krippendorff's alpha.

Each annotation's ranks are read with :func:`annols.formats.extractive_ranking.parse_result`
and unblinded with :func:`~annols.formats.extractive_ranking.shown_systems` (the system
shown at each position). A cell counts when it holds exactly one rank 1..N; ties count
as given (A=3, B=1, C=1, D=2 gives two systems rank 1).

- Mean rank and the share of each rank, per dimension and system, over every rank given.
- Kendall's W per sample and dimension, over the annotators who ranked every output of
  that sample on that dimension (at least two), ties midranked with the tie correction;
  the table gives the mean and median over samples. A sample where every annotator tied
  everything has no W and is counted apart.
- Krippendorff's alpha (ordinal) per dimension, a unit being one output of one sample,
  the values the ranks as given.
"""

from __future__ import annotations

import numpy as np
import pandas as pd  # type: ignore[import-untyped, unused-ignore]

from annols.definition import Definition
from annols.formats import ExportedAnnotation, ExportedTask
from annols.formats.extractive_ranking import parse_result, shown_systems
from annols.report import plots, stats
from annols.report.common import ReportOptions, kept_rows
from annols.report.model import Section, Table, percent
from annols.report.sources import Study
from annols.styles.ranking import RankingSpec

COLUMNS = ["uid", "task_key", "dimension", "position", "system", "rank"]


class RankingCollector:
    def __init__(self, definition: Definition, options: ReportOptions) -> None:
        self.spec: RankingSpec = definition.spec
        self.top = len(self.spec.positions)
        self.rows: list[tuple[int, str, str, int, str, int]] = []

    def add(self, task: ExportedTask, annotation: ExportedAnnotation, uid: int) -> None:
        shown = shown_systems(task, self.spec)
        for (dimension, position), codes in parse_result(annotation.result, self.spec).items():
            if len(codes) == 1 and codes[0].isdigit() and 1 <= int(codes[0]) <= self.top:
                self.rows.append((uid, task.key, dimension, position, shown[position], int(codes[0])))

    def sections(self, study: Study) -> list[Section]:
        frame = kept_rows(self.rows, COLUMNS, study)
        dimensions = [d.name for d in self.spec.dimensions]
        frame["dimension"] = pd.Categorical(frame["dimension"], categories=dimensions, ordered=True)
        ranks = mean_ranks(frame, self.top)
        text = [f"{frame['uid'].nunique()} rankings, {len(frame)} ranks given (1 = best); ties count as given."]
        out = [Section("Ranks", text, [ranks], [_plot(ranks, self.top)] if len(ranks.frame) else [])]
        if (frame.groupby(["dimension", "task_key", "position"], observed=True).size() >= 2).any():
            note = ("Kendall's W per sample over the annotators who ranked all of its outputs on the dimension "
                    "(ties midranked, with the tie correction), summarised over samples; Krippendorff's alpha "
                    "(ordinal) over all ranks, a unit being one output of one sample.")  # fmt: skip
            out.append(Section("Agreement", [note], [agreement(frame, dimensions, self.top)]))
        return out


def mean_ranks(frame: pd.DataFrame, top: int) -> Table:
    grouped = frame.groupby(["dimension", "system"], observed=True)["rank"]
    table = grouped.agg(rankings="size", **{"mean rank": "mean"})
    counts = frame.groupby(["dimension", "system", "rank"], observed=True).size().unstack("rank")
    counts = counts.reindex(columns=range(1, top + 1)).fillna(0)
    for r in range(1, top + 1):
        table[f"rank {r} %"] = percent(counts[r].reindex(table.index), table["rankings"])
    return Table("ranking_mean_rank", "Mean rank and share of each rank", table.reset_index())


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


def _plot(table: Table, top: int) -> plots.Plot:
    panels = []
    for dimension, part in table.frame.groupby("dimension", observed=True, sort=False):
        segments = [list(part[f"rank {r} %"]) for r in range(1, top + 1)]
        panels.append(plots.Panel(str(dimension), list(part["system"]), segments))
    names = [f"rank {r}" for r in range(1, top + 1)]
    return plots.stacked_bars("ranking_ranks", "Rank distribution per dimension and system", panels, names)


COLLECTOR = RankingCollector
