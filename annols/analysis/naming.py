"""How the tables name what a style asks about."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import pandas as pd  # type: ignore[import-untyped, unused-ignore]


def aspect_names(aspects: Any) -> list[str]:
    """The aspects' names in the definition's order: how every table (CSV, report.md, report.html, paper.tex)
    names an aspect; its display text is in the report's legend (:func:`legend`). A name is unique in its
    definition and stays the same when a question is reworded, so tables of one study (human ratings,
    judges, judge-assisted estimates) join on it."""
    return [a.name for a in aspects]


def former_cells(aspects: Any) -> dict[str, str]:
    """How tables and the rounds record named an aspect before every table named it by its name: cell -> name (by
    its text; by its name where two aspects were worded alike: then nothing to map)."""
    texts = {a.name: a.text or a.name for a in aspects}
    if len(set(texts.values())) < len(texts):
        return {}
    return {t: n for n, t in texts.items()}


def in_order(values: pd.Series, names: list[str]) -> pd.Categorical:
    """``values`` as an ordered Categorical of ``names`` (anything else missing), from plain or categorical
    values alike (a categorical judgments table keeps its codes: no object array is made)."""
    if isinstance(values.dtype, pd.CategoricalDtype):
        return values.cat.set_categories(names, ordered=True).array
    return pd.Categorical(values, categories=names, ordered=True)


def legend(spec: Any) -> tuple[tuple[tuple[str, str], ...], dict[str, str]]:
    """The legend of the rendered reports (report.md, report.html, paper.tex): (name, display text) of each
    aspect, ranking dimension and analysed question (not a free-text one: no table names it) whose text is not
    its name, in the definition's order; and the labels of the table cells, which are none: every table names
    them by their name (:func:`aspect_names`)."""
    questions = [q for q in getattr(spec, "questions", ()) if q.kind != "text"]
    named = [*getattr(spec, "aspects", ()), *getattr(spec, "dimensions", ()), *questions]
    return tuple((a.name, a.text) for a in named if a.text and a.text != a.name), {}


_DIGITS = re.compile(r"(\d+)")


def natural_key(name: Any) -> tuple[tuple[int, int, str], ...]:
    """A system's name as a sort key that reads its digits as numbers: M2 before M10 (sorted as text,
    16 systems read M0, M1, M10, M11, ...). Each part is tagged so text and numbers never compare; names
    without digits keep their text order (case included), so their tables do not change."""
    parts = _DIGITS.split(str(name))
    return tuple((1, int(p), p) if k % 2 else (0, 0, p) for k, p in enumerate(parts))


def natural(names: Iterable[Any]) -> list[Any]:
    """The distinct names in natural order (:func:`natural_key`): how every table and plot lists systems."""
    return sorted(set(names), key=natural_key)


def natural_systems(column: pd.Series) -> pd.Series:
    """A ``sort_values`` key: a system column by each name's place in natural order, any other as it is."""
    if column.name not in ("system", "opponent"):
        return column
    place = {name: i for i, name in enumerate(natural(column.dropna()))}
    return column.map(place)
