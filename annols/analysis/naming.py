"""How the tables name what a style asks about."""

from __future__ import annotations

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
