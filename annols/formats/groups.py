"""The input of a ratings definition with ``[groups]``: many systems' outputs per item, a few per task.

JSONL or CSV, one record per system output: the definition's context fields (and any
``options_from`` field of its questions), the output's text in the field ``[groups]``
names, and ``system`` naming the system that wrote it. Records with the same context are
one item (:mod:`annols.formats.pools`, as best-worst pools its candidates). Each task
fills the definition's ``[[candidates]]`` panes with a group of the item's outputs:

- with a ``reference`` system, its output is in every task, and the other panes show the
  other systems; without one, every pane does;
- :func:`annols.definition.design.tuples` makes the groups, from a seed of the item's content: each
  system in ``appearances`` groups of the item, pairs of systems together as evenly as it
  can over the whole input (the items in the order of their keys, each evening out the
  pairs' totals of the items before it). An item whose outputs do not fill its groups
  evenly (outputs x appearances not a multiple of the panes to fill) is refused, so every
  system is shown equally often in every item, and overall; an item with as many outputs
  as panes to fill is one task.

The same input, in any order, gives the same tasks and keys; an input with items added or
removed may give other groups to items designed after them (push such a batch from a file
of its own, or into a new project).

A task's systems (reference first, then the group) are shuffled at push from ``--seed``
and hidden like every ratings task's, so pull names each rating's system as usual. Other
fields of a record are not carried: a group is annols' own, no record is its source.
Results are the generic format's.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from annols.definition import Definition, design
from annols.errors import InputError
from annols.formats import SourcePrediction, SourceTask, Violation, content_key
from annols.formats.generic import FORMAT as GENERIC
from annols.formats.generic import unread_answers
from annols.formats.pools import Member, read_pools
from annols.protocols import config
from annols.styles.answers import ExportedAnnotation, ExportedTask
from annols.styles.ratings import SYSTEM_FIELD, Groups


class GroupsFormat:
    name = "groups"
    describe = "JSONL or CSV, one record per system output: its item's context fields, its text and its 'system'"

    def read(self, paths: Sequence[Path], definition: Definition) -> Iterator[SourceTask]:
        spec = definition.spec
        groups: Groups = spec.groups
        panes = [c.name for c in spec.candidates]
        item_fields = [f for f in config.data_fields(definition) if f not in panes]
        items = []  # (key, context, reference, the other outputs), in input order
        for item in read_pools(paths, item_fields, groups.field, SYSTEM_FIELD,
                               needs="every output needs the system that wrote it",
                               twice="already has an output for this item (records of the same context)"):  # fmt: skip
            reference, others = _split(item, groups)
            _check_fills(item, others, len(panes) - (reference is not None), groups)
            context = {name: item[0].record[name] for name in item_fields}
            key = content_key(definition.name, {"context": context, "outputs": sorted(m.name for m in item)})
            items.append((key, context, reference, others))
        # Items are designed in the order of their keys, each evening out the pairs' totals over the
        # items before it: the same input in any order gives the same groups.
        met: Counter[tuple[str, str]] = Counter()
        made: dict[str, list[tuple[int, ...]]] = {}
        for key, _, reference, others in sorted(items, key=lambda item: item[0]):
            names = [m.name for m in others]
            before = np.array([[met[_pair(a, b)] for b in names] for a in names], dtype=np.int64)
            slots = len(panes) - (reference is not None)
            made[key] = design.tuples(len(others), slots, groups.appearances, seed=key, met=before)
            met.update(_pair(names[a], names[b]) for t in made[key] for a, b in itertools.combinations(t, 2))
        for key, context, reference, others in items:
            for number, members in enumerate(made[key]):
                shown = ([reference] if reference is not None else []) + [others[i] for i in members]
                data: dict[str, Any] = dict(context)
                data.update((pane, m.record[groups.field]) for pane, m in zip(panes, shown, strict=True))
                systems = tuple(m.name for m in shown)
                first = others[members[0]]
                yield SourceTask(
                    key=content_key(definition.name, {"item": key, "group": number, "systems": list(systems)}),
                    data=data,
                    location=f"{first.path}: {first.location} (group {number + 1} of its item)",
                    systems=systems,
                )

    def read_predictions(self, paths: Sequence[Path], definition: Definition) -> Iterator[tuple[str, SourcePrediction]]:
        raise InputError(paths[0] if paths else "", "", "", "ratings groups take no pre-annotations")

    def write_results(self, tasks: Iterable[ExportedTask], definition: Definition, out_dir: Path) -> list[Path]:
        return GENERIC.write_results(tasks, definition, out_dir)

    def check(self, task: ExportedTask, annotation: ExportedAnnotation, definition: Definition) -> list[Violation]:
        return unread_answers(task, annotation, definition)


def _pair(a: str, b: str) -> tuple[str, str]:
    return (a, b) if a <= b else (b, a)


def _split(item: list[Member], groups: Groups) -> tuple[Member | None, list[Member]]:
    """The item's reference output (None without a reference) and its other outputs, by system name (so
    the input's order of an item's records does not change its groups)."""
    outputs = sorted(item, key=lambda m: m.name)
    if not groups.reference:
        return None, outputs
    reference = next((m for m in outputs if m.name == groups.reference), None)
    if reference is None:
        raise InputError(item[0].path, item[0].location, SYSTEM_FIELD,
                         f"this item has no output of the reference system {groups.reference!r}")  # fmt: skip
    return reference, [m for m in outputs if m is not reference]


def _check_fills(item: list[Member], others: list[Member], slots: int, groups: Groups) -> None:
    """Enough outputs for a task, and as many places in the item's groups as the outputs fill evenly."""
    besides = " besides the reference" if groups.reference else ""
    if len(others) < slots:
        raise InputError(item[0].path, item[0].location, SYSTEM_FIELD,
                         f"this item has {len(others)} system output(s){besides}, fewer than the {slots} a task "
                         "shows")  # fmt: skip
    places = len(others) * groups.appearances
    if len(others) > slots and places % slots:
        step = slots // math.gcd(len(others), slots)
        raise InputError(item[0].path, item[0].location, SYSTEM_FIELD,
                         f"this item's {len(others)} system outputs{besides} x appearances {groups.appearances} = "
                         f"{places} places do not fill tasks of {slots} evenly, so its systems would not be shown "
                         f"equally often; make appearances a multiple of {step}")  # fmt: skip


FORMAT = GroupsFormat()
