"""What an analysis returns: plain data, never rendered here.

A :class:`Finding` is a titled group of results: paragraphs, :class:`Table` s (a frame of
values with what the report needs to know to show it), :class:`Figure` s (what to draw,
not a drawing) and summary lines. :mod:`annols.report` arranges findings, writes each
table as CSV, report.md, report.html and paper.tex, and draws each figure to a PNG.

:func:`cell_text` is how a number is written, in a table's cells (by the report) and in
the sentences an analysis writes about them (a summary line), so both round alike.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd  # type: ignore[import-untyped, unused-ignore]

SHOWN_ROWS = 50  # long lists (items short of their overlap, a distribution) show this many; the CSV has all


@dataclass(frozen=True)
class Table:
    """One table: written to ``tables/<name>.csv`` whole; the report shows ``shown`` rows at most."""

    name: str
    title: str
    frame: pd.DataFrame
    note: str = ""
    shown: int | None = None  # None: every row
    whole: tuple[str, ...] = ()  # columns of whole-number statistics: shown without zero decimals
    picked: tuple[int, ...] | None = None  # the rows the report shows, by position (a table of pairs); None: all


# Ten colours: a slider's tenths are ten segments.
PALETTE = ("#4c78a8", "#f58518", "#54a24b", "#e45756", "#72b7b2", "#eeca3b", "#b279a2", "#ff9da6", "#9d755d",
           "#79706e")  # fmt: skip
WIN_TIE_LOSS = ("#54a24b", "#bab0ac", "#e45756")


@dataclass(frozen=True)
class Panel:
    """One block of horizontal bars: a row label per bar, each bar split into segments (percentages)."""

    title: str
    rows: Sequence[str]
    segments: Sequence[Sequence[float]]  # one sequence per segment name, a value per row


@dataclass(frozen=True)
class Estimates:
    """One block of point estimates with intervals: a row label, a value, a low and a high end per row."""

    title: str
    rows: Sequence[str]
    values: Sequence[float]
    lows: Sequence[float]
    highs: Sequence[float]


STACKED_BARS: Literal["stacked bars"] = "stacked bars"
BARS: Literal["bars"] = "bars"
INTERVALS: Literal["intervals"] = "intervals"


@dataclass(frozen=True)
class Figure:
    """What to draw as ``plots/<name>.png`` (:mod:`annols.report.plots` draws it):

    - stacked bars: shares (0-100) per row, one :class:`Panel` per group, ``legend`` naming the segments;
    - bars: one :class:`Panel` of one segment, a bar per row (first on top);
    - intervals: each row's value with its interval, one :class:`Estimates` per group.
    """

    kind: Literal["stacked bars", "bars", "intervals"]
    name: str
    title: str
    panels: tuple[Panel, ...] | tuple[Estimates, ...]
    legend: tuple[str, ...] = ()  # the segments' names
    colors: tuple[str, ...] = PALETTE
    xlabel: str = ""


def stacked_bars(name: str, title: str, panels: Sequence[Panel], segment_names: Sequence[str],
                 colors: Sequence[str] = PALETTE, xlabel: str = "%") -> Figure:  # fmt: skip
    """Stacked horizontal bars of shares (0-100), one panel per group, a shared legend."""
    return Figure(STACKED_BARS, name, title, tuple(panels), tuple(segment_names), tuple(colors), xlabel)


def bars(name: str, title: str, labels: Sequence[str], values: Sequence[float], xlabel: str) -> Figure:
    """Horizontal bars, one per label, in the order given (first on top)."""
    panel = Panel("", tuple(labels), (tuple(float(v) for v in values),))
    return Figure(BARS, name, title, (panel,), xlabel=xlabel)


def intervals(name: str, title: str, panels: Sequence[Estimates], xlabel: str) -> Figure:
    """Each row's value as a point with its interval as a whisker, one panel per group (first row on top)."""
    return Figure(INTERVALS, name, title, tuple(panels), xlabel=xlabel)


@dataclass
class Finding:
    """A titled group of results: a section of the report."""

    title: str
    text: list[str] = field(default_factory=list)  # paragraphs, plain text
    tables: list[Table] = field(default_factory=list)
    figures: list[Figure] = field(default_factory=list)
    summary: list[str] = field(default_factory=list)  # lines for the top of the report


def percent(part: Any, whole: Any) -> Any:
    """100 * part / whole, elementwise; nan where whole is 0."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(np.asarray(whole) > 0, 100 * np.asarray(part, dtype=float) / np.asarray(whole), np.nan)


def decimals(column: Any) -> int:
    """Percentages (header ending in %) 2 decimals, seconds (ending in "(s)") 1, anything else 4."""
    name = str(column)
    return 2 if name.endswith("%") else 1 if name.endswith("(s)") else 4


def cell_text(value: Any, column: Any = "") -> str:
    """A value as written everywhere: integers plainly, floats rounded by their column, missing values empty."""
    if value is None or value is pd.NA:
        return ""
    if isinstance(value, bool | np.bool_):
        return "yes" if value else "no"
    if isinstance(value, int | np.integer):
        return str(int(value))
    if isinstance(value, float | np.floating):
        if not math.isfinite(float(value)):
            return ""
        if str(column).startswith("p (") and 0 < float(value) < 1e-4:
            return f"{float(value):.2e}"  # a small p keeps its size, not "0.0000"
        text = f"{float(value):.{decimals(column)}f}"
        return "0" + text[2:] if text.startswith("-0") and float(text) == 0 else text
    return str(value)
