"""Attention checks made by annols: a study item shown with two identical candidates.

``annols push ... --attention N`` copies study items (chosen from ``--seed``) and puts
the first candidate's text in the second candidate's place too, for the pairwise,
ranking and ratings styles (ratings with two or more candidates). The copy gets a key of
its own, the role ``attention`` in the same opaque meta tag as gold items
(:mod:`annols.study.gold`), and a random place in the queue. N is the number of checks in the
project: a push adds only those the project lacks (:mod:`annols.study.push`), so a study pushed
in batches, or pushed again, holds N.

A check carries only the fields the labeling config shows: no record id, row number or
original cells of the study item it was made from. It is still recognisable by design: the
same text twice (docs/security.md).

The right answer follows from the copy itself, so no gold input is needed:

- pairwise: a tie on every aspect;
- ranking: the same rank for the two identical candidates on every dimension;
- ratings: the same rating (within the report's ``--rating-tolerance``) for both.

What they catch: clicking through without reading (random or fixed answers, always the
left candidate). What they do not: an annotator who reads the texts but judges them
badly, or one who notices the repeated text and answers these items alone with care;
two identical candidates are easier to spot than a gold item, so keep them few.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from annols.definition import Definition
from annols.errors import AnnolsError
from annols.formats import SourceTask, content_key
from annols.protocols import config
from annols.styles.answers import ExportedTask
from annols.styles.judgments import Judgment, Preference, Rank, Rating

STYLES = ("pairwise", "ranking", "ratings")
ASPECT = "attention check"


def candidate_fields(definition: Definition) -> list[str]:
    """The task data fields of the candidates, in the order shown before blinding."""
    spec: Any = definition.spec
    if definition.style == "ranking":
        return [spec.field(p) for p in spec.positions]
    if definition.style in ("pairwise", "ratings"):
        return [c.name for c in spec.candidates]
    return []


def check_possible(definition: Definition) -> None:
    if definition.style not in STYLES or len(candidate_fields(definition)) < 2:
        raise AnnolsError(f"--attention: {definition.name} ({definition.style}) has no two candidates to show "
                          "alike; attention checks are made for pairwise, ranking and ratings with two or more "
                          "candidates")  # fmt: skip


def key_for(study_key: str) -> str:
    """The key of the attention check made from the study item of ``study_key``."""
    return content_key(study_key.rsplit(":", 1)[0], {"attention": study_key})


def make_check(definition: Definition, task: SourceTask) -> SourceTask:
    """The attention check made from a study task: its second candidate replaced by its first, and
    none of the fields the labeling config does not show (a record id, a row number, the original
    cells): nothing on the server names the study item it was made from."""
    first, second = candidate_fields(definition)[:2]
    shown = set(config.data_fields(definition))
    data = {k: v for k, v in task.data.items() if k in shown}
    data[second] = task.data[first]
    systems = task.systems
    if len(systems) >= 2:
        systems = (systems[0], systems[0], *systems[2:])
    return dataclasses.replace(
        task, key=key_for(task.key), data=data, systems=systems, annotations=(), extra={},
        location=f"{task.location} (attention check)",
    )  # fmt: skip


def score(definition: Definition, task: ExportedTask, judgments: Sequence[Judgment],
          tolerance: float = 0.0) -> dict[str, float]:  # fmt: skip
    """{ASPECT: share of the aspects (or dimensions) on which the identical candidates were judged alike}."""
    fields = candidate_fields(definition)
    texts = [task.data.get(f) for f in fields]
    same = {i for i, t in enumerate(texts) if texts.count(t) > 1}
    spec: Any = definition.spec
    units: list[float] = []
    if definition.style == "pairwise":
        units = [1.0 if j.winner is None else 0.0 for j in judgments if isinstance(j, Preference)]
    elif definition.style == "ranking":
        ranks: dict[str, set[int]] = defaultdict(set)
        for j in judgments:
            if isinstance(j, Rank) and list(spec.positions).index(j.position) in same:
                ranks[j.dimension].add(j.rank)
        units = [1.0 if len(r) == 1 else 0.0 for r in ranks.values()]
        units += [0.0] * (len(spec.dimensions) - len(ranks))  # a dimension left unranked
    elif definition.style == "ratings":
        names = [c.name for c in spec.candidates]
        values: dict[str, list[float]] = defaultdict(list)
        for j in judgments:
            if isinstance(j, Rating) and j.candidate in names and names.index(j.candidate) in same:
                values[j.aspect].append(j.value)
        units = [1.0 if len(v) >= 2 and max(v) - min(v) <= tolerance + 1e-9 else 0.0 for v in values.values()]
    return {ASPECT: sum(units) / len(units) if units else 0.0}
