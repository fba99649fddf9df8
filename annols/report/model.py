"""How the report writes a result: a table's header and cells, and the legend of aspect labels.

The analyses return plain data (:mod:`annols.analysis.results`: findings of tables and
figures); the report only arranges and renders them. Every table is written three times
(CSV, report.md, report.html) from the same cell texts (:func:`rows`, by
:func:`~annols.analysis.results.cell_text`), so the three always agree: floats are rounded
once, to two decimals in percentage columns (their header ends in ``%``), one in seconds and
four elsewhere; a p-value under 0.0001 (header ``p (...)``) in scientific notation, so its
size still shows.

What report.md, report.html and paper.tex show is that text with two changes for reading
(:func:`shown_rows`), the CSV keeping its values: a whole-number statistic (a table's
``whole`` columns: the median of an integer scale) without its zero decimals, and an aspect
named by its short label (:class:`Legend`), its full text once in the legend.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from annols.analysis.results import Table, cell_text


def header(table: Table) -> list[str]:
    return [str(c) for c in table.frame.columns]


def rows(table: Table) -> list[list[str]]:
    return [[cell_text(v, c) for c, v in zip(table.frame.columns, row, strict=True)]
            for row in table.frame.itertuples(index=False, name=None)]  # fmt: skip


def shown_rows(table: Table, labels: Mapping[str, str] | None = None) -> list[list[str]]:
    """:func:`rows` as the rendered reports show them: the ``whole`` columns by :func:`whole_text`, and
    the cells of the ``aspect`` column by their short label where ``labels`` (:attr:`Legend.labels`) has one."""
    labels = labels or {}
    columns = header(table)
    whole = [c in table.whole for c in columns]
    named = [c == ASPECT for c in columns]
    return [[labels.get(text, text) if name else whole_text(text) if w else text
             for text, w, name in zip(row, whole, named, strict=True)] for row in rows(table)]  # fmt: skip


def displayed(table: Table, shown: list[list[str]]) -> list[list[str]]:
    """Of :func:`shown_rows`, those the rendered reports print: the picked ones, at most ``table.shown``."""
    if table.picked is not None:
        shown = [shown[i] for i in table.picked]
    return shown if table.shown is None else shown[: table.shown]


ASPECT = "aspect"  # the column that names an aspect in every style's tables


@dataclass(frozen=True)
class Legend:
    """The aspects the rendered tables name by a short label (a long question would make every row wide)."""

    entries: tuple[tuple[str, str], ...] = ()  # (label, the full text asked), in the definition's order
    labels: Mapping[str, str] = field(default_factory=dict)  # a table's cell text -> its label

    def label(self, text: Any) -> str:
        return self.labels.get(str(text), str(text))


NO_LEGEND = Legend()  # every aspect by the text the tables have


def whole_text(text: str) -> str:
    """A cell of a whole-number statistic as shown: ``5.0000`` as ``5``, ``4.5000`` as ``4.5`` (a median of two
    middle values)."""
    if "." not in text or "e" in text:
        return text
    return text.rstrip("0").rstrip(".")
