"""What a report is made of: sections holding text, tables and plots, and how a cell is written.

Every table is written three times (CSV, report.md, report.html) from the same cell
texts (:func:`cell_text`), so the three always agree: floats are rounded once, to two
decimals in percentage columns (their header ends in ``%``), one in seconds and four elsewhere;
a p-value under 0.0001 (header ``p (...)``) in scientific notation, so its size still shows.

What report.md, report.html and paper.tex show is that text with two changes for reading
(:meth:`Table.shown_rows`), the CSV keeping its values: a whole-number statistic (a table's
``whole`` columns: the median of an integer scale) without its zero decimals, and an aspect
named by its short label (:class:`Legend`), its full text once in the legend.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd  # type: ignore[import-untyped, unused-ignore]


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

    def displayed(self, rows: list[list[str]]) -> list[list[str]]:
        """Of :meth:`shown_rows`, those the rendered reports print: the picked ones, at most ``shown``."""
        if self.picked is not None:
            rows = [rows[i] for i in self.picked]
        return rows if self.shown is None else rows[: self.shown]

    def rows(self) -> list[list[str]]:
        return [[cell_text(v, c) for c, v in zip(self.frame.columns, row, strict=True)]
                for row in self.frame.itertuples(index=False, name=None)]  # fmt: skip

    def shown_rows(self, labels: Mapping[str, str] | None = None) -> list[list[str]]:
        """:meth:`rows` as the rendered reports show them: the ``whole`` columns by :func:`whole_text`, and
        the cells of the ``aspect`` column by their short label where ``labels`` (:attr:`Legend.labels`) has one."""
        labels = labels or {}
        whole = [c in self.whole for c in self.header]
        named = [c == ASPECT for c in self.header]
        return [[labels.get(text, text) if name else whole_text(text) if w else text
                 for text, w, name in zip(row, whole, named, strict=True)] for row in self.rows()]  # fmt: skip

    @property
    def header(self) -> list[str]:
        return [str(c) for c in self.frame.columns]


@dataclass(frozen=True)
class Plot:
    """A PNG figure, written to ``plots/<name>.png`` and embedded in report.html.

    Drawn when first read (``png``), not when made: the report draws its figures after the
    analyses have let their tables go, so matplotlib is not loaded beside them."""

    name: str
    title: str
    draw: Callable[[], bytes]

    @functools.cached_property
    def png(self) -> bytes:
        return self.draw()


@dataclass
class Section:
    title: str
    text: list[str] = field(default_factory=list)  # paragraphs, plain text
    tables: list[Table] = field(default_factory=list)
    plots: list[Plot] = field(default_factory=list)
    summary: list[str] = field(default_factory=list)  # lines for the top of the report


ASPECT = "aspect"  # the column that names an aspect in every style's tables


@dataclass(frozen=True)
class Legend:
    """The aspects the rendered tables name by a short label (a long question would make every row wide)."""

    entries: tuple[tuple[str, str], ...] = ()  # (label, the full text asked), in the definition's order
    labels: Mapping[str, str] = field(default_factory=dict)  # a table's cell text -> its label

    def label(self, text: Any) -> str:
        return self.labels.get(str(text), str(text))


NO_LEGEND = Legend()  # every aspect by the text the tables have


def decimals(column: Any) -> int:
    """Percentages (header ending in %) 2 decimals, seconds (ending in "(s)") 1, anything else 4."""
    name = str(column)
    return 2 if name.endswith("%") else 1 if name.endswith("(s)") else 4


def cell_text(value: Any, column: Any = "") -> str:
    """A cell as written everywhere: integers plainly, floats rounded, missing values empty."""
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


def whole_text(text: str) -> str:
    """A cell of a whole-number statistic as shown: ``5.0000`` as ``5``, ``4.5000`` as ``4.5`` (a median of two
    middle values)."""
    if "." not in text or "e" in text:
        return text
    return text.rstrip("0").rstrip(".")


def percent(part: Any, whole: Any) -> Any:
    """100 * part / whole, elementwise; nan where whole is 0."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(np.asarray(whole) > 0, 100 * np.asarray(part, dtype=float) / np.asarray(whole), np.nan)
