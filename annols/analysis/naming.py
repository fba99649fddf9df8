"""How the tables name what a style asks about."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import pandas as pd  # type: ignore[import-untyped, unused-ignore]


def by_aspect_text(tidy: pd.DataFrame, aspects: Any) -> tuple[pd.DataFrame, list[str]]:
    """The judgments with each aspect named by its text (as the seeds' tables do), and the names in
    the definition's order; by its name instead where two aspects are worded alike."""
    names = {a.name: a.text or a.name for a in aspects}
    if len(set(names.values())) < len(names):
        names = {a.name: a.name for a in aspects}
    tidy = tidy.assign(question=tidy["question"].map(lambda q: names.get(q, q)))
    return tidy, list(dict.fromkeys(names.values()))


def in_order(values: pd.Series, names: list[str]) -> pd.Categorical:
    """``values`` as an ordered Categorical of ``names`` (anything else missing), from plain or categorical
    values alike (a categorical judgments table keeps its codes: no object array is made)."""
    if isinstance(values.dtype, pd.CategoricalDtype):
        return values.cat.set_categories(names, ordered=True).array
    return pd.Categorical(values, categories=names, ordered=True)


SHORT = 24  # an aspect text longer than this is shown by the aspect's name in the rendered tables


def legend(spec: Any) -> tuple[tuple[tuple[str, str], ...], dict[str, str]]:
    """How the rendered tables (report.md, report.html, paper.tex) name a definition's aspects: the (label, full
    text) of each aspect shown by a label that is not its text, and a table cell's text -> its label.

    The tables' CSVs name an aspect by its text (:func:`by_aspect_text`); a text longer than :data:`SHORT`
    characters is shown by the aspect's name instead (every aspect by its name if a short text were another's
    name). A ranking's dimensions are named by their name already."""
    aspects = list(getattr(spec, "aspects", ()))
    _, cells = by_aspect_text(pd.DataFrame({"question": []}), aspects)
    shown = [c if len(c) <= SHORT and "\n" not in c else a.name for a, c in zip(aspects, cells, strict=True)]
    if len(set(shown)) < len(shown):
        shown = [a.name for a in aspects]
    labels = {c: s for c, s in zip(cells, shown, strict=True) if c != s}
    entries = [(s, a.text) for a, s in zip(aspects, shown, strict=True)]
    entries += [(d.name, d.text) for d in getattr(spec, "dimensions", ())]
    # A label that is its text but for case ("brevity", "Brevity") needs no legend.
    return tuple((s, t) for s, t in entries if t and s.casefold() != t.casefold()), labels


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
