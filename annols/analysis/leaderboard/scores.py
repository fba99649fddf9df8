"""What keeps a report of many systems readable: one systems x aspects table of each style's main score,
and tables of system pairs (systems² rows) shown by their pairs adjacent in rank.

- :func:`scores_section`: the style's main score (ratings: the mean rating; ranking: the mean rank;
  best-worst: the counting score; pairwise: the Bradley-Terry strength) as a table with a row per
  system (natural order) and a column per aspect, taken from the style's own long table: no
  number of its own.
- :func:`bounded`: a table with ``system`` and ``opponent`` columns and more than :data:`PAIR_ROWS`
  rows shows, per aspect, only the pairs of systems next to each other in that score's order
  (16 systems: 15 of the 120 pairs); its CSV keeps every pair.
"""

from __future__ import annotations

import dataclasses
import itertools
from typing import Any

import pandas as pd  # type: ignore[import-untyped, unused-ignore]

from annols.analysis.naming import natural
from annols.analysis.results import Finding, Table

# style -> (its long table, the score column, what the score is, whether a higher score is better)
MAIN: dict[str, tuple[str, str, str, bool]] = {
    "ratings": ("ratings_summary", "mean", "mean rating", True),
    "ranking": ("ranking_mean_rank_intervals", "mean rank", "mean rank (1 is best)", False),
    "best-worst": ("best_worst_scores", "score %", "best-worst score %", True),
    "pairwise": ("pairwise_bradley_terry", "strength", "Bradley-Terry strength", True),
}
TITLE = "Scores at a glance"
PAIR_ROWS = 30  # a table of pairs longer than this shows the pairs adjacent in rank only


def _long(style: str, sections: list[Finding]) -> pd.DataFrame | None:
    if style not in MAIN:
        return None
    name = MAIN[style][0]
    table = next((t for s in sections for t in s.tables if t.name == name), None)
    return None if table is None or not len(table.frame) else table.frame


def scores_section(style: str, sections: list[Finding]) -> Finding | None:
    """The systems x aspects table of the style's main score, or None when the style has none (or no rows)."""
    frame = _long(style, sections)
    if frame is None:
        return None
    _, score, what, higher = MAIN[style]
    question = frame.columns[0]  # aspect, or a ranking's dimension
    wide = frame.pivot(index="system", columns=question, values=score)
    wide = wide.reindex(index=natural(frame["system"]), columns=list(dict.fromkeys(frame[question])))
    wide = wide.rename_axis(index="system", columns=None).reset_index()
    text = [f"Each system's {what} per {question} ({'higher' if higher else 'lower'} is better); the sections "
            "below give the intervals, the tests and the rest."]  # fmt: skip
    return Finding(TITLE, text, [Table("scores", f"Systems by {question}: {what}", wide)])


def adjacent_pairs(style: str, sections: list[Finding]) -> set[tuple[str, str, str]] | None:
    """(aspect, system, opponent) of each pair of systems next to each other in the main score's order, both
    ways round; None when the style has no main score."""
    frame = _long(style, sections)
    if frame is None:
        return None
    _, score, _, _ = MAIN[style]
    return adjacent(frame.iloc[:, 0], frame["system"], frame[score])


def adjacent(aspects: Any, systems: Any, values: Any) -> set[tuple[str, str, str]]:
    """(aspect, system, opponent), both ways round, of the systems next to each other when each aspect's are
    ordered by their value (which way does not matter: the neighbours are the same)."""
    frame = pd.DataFrame({"aspect": list(aspects), "system": list(systems), "value": list(values)})
    pairs = set()
    for aspect, part in frame.groupby("aspect", sort=False):
        ranked = part.sort_values("value", kind="stable")["system"].astype(str).tolist()
        for a, b in itertools.pairwise(ranked):
            pairs |= {(str(aspect), a, b), (str(aspect), b, a)}
    return pairs


def bounded(style: str, sections: list[Finding]) -> list[Finding]:
    """The sections with each long table of pairs showing only the pairs adjacent in rank (see the module)."""
    pairs = adjacent_pairs(style, sections)
    if pairs is None:
        return sections
    for section in sections:
        section.tables = [_picked(t, pairs) for t in section.tables]
    return sections


def _picked(table: Table, pairs: set[tuple[str, str, str]]) -> Table:
    frame = table.frame
    if len(frame) <= PAIR_ROWS or not {"system", "opponent"} <= set(frame.columns):
        return table
    keys: Any = zip(frame.iloc[:, 0].astype(str), frame["system"].astype(str), frame["opponent"].astype(str),
                    strict=True)  # fmt: skip
    picked = tuple(i for i, key in enumerate(keys) if key in pairs)
    note = (
        f"Shown: the {len(picked)} pairs of systems next to each other in the order of the scores above "
        f'("{TITLE}"); tables/{table.name}.csv has all {len(frame)}.'
    )
    return dataclasses.replace(table, picked=picked, note=" ".join(n for n in (table.note, note) if n))
