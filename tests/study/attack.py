"""A motivated annotator's attack on placements, as issue #39 tried it, for the placement tests.

The annotator knows the system names and the texts (a stand-in input: the study's contexts and
systems, whatever the texts), and has annols at hand. What anyone can reproduce without the study's
secret is the design annols makes from the content alone (``annols tasks`` before placements had a
secret) and where gold items and attention checks fall from the seed alone. The annotator matches the
tasks they see, in task id order, to that public design, item by item, and names the system of every
text by the tasks it recurs in; and takes the public gold places for gold items.

A study pushed before (placement 1) falls to it completely; one whose placements are drawn with its
secret should give it no more hits than guessing.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from annols.definition import Definition, blinding, design
from annols.formats import format_for
from annols.protocols import config


def public_design(definition: Definition, inputs: Sequence[Path]) -> list[tuple[dict[str, Any], tuple[str, ...]]]:
    """(context, systems) of each task as annols designs it from the content alone, in input order."""
    context = [f for f in config.data_fields(definition) if f not in blinding.candidate_fields(definition)]
    with design.drawn_with(None):
        return [({f: t.data[f] for f in context}, tuple(t.systems)) for t in format_for(definition).read(inputs,
                                                                                                        definition)]


def name_texts(definition: Definition, seen: Sequence[tuple[int, dict[str, Any]]],
               public: Sequence[tuple[dict[str, Any], tuple[str, ...]]], skip: str | None = None
               ) -> dict[tuple[str, str], str]:  # fmt: skip
    """(context, text) -> the system the annotator names for it, from the tasks ``seen`` ((task id, data)) matched in
    id order, item by item, to the ``public`` design. ``skip``: a system every task shows (a reference), whose text
    recurs in all of an item's tasks and is named so by anyone; left out here."""
    panes = blinding.candidate_fields(definition)
    context = [f for f in config.data_fields(definition) if f not in panes]

    def item(data: dict[str, Any]) -> str:
        return repr([data[f] for f in context])

    designed: dict[str, list[set[str]]] = defaultdict(list)
    for ctx, systems in public:
        designed[item(ctx)].append(set(systems) - {skip})
    tasks: dict[str, list[set[str]]] = defaultdict(list)
    for _, data in sorted(seen, key=lambda s: s[0]):
        tasks[item(data)].append({str(data[p]) for p in panes})
    named: dict[tuple[str, str], str] = {}
    for it, shown in tasks.items():
        groups = designed.get(it, [])
        every = set.intersection(*shown) if shown else set()
        for text in set().union(*shown) - every:  # a text in every task of the item is the reference
            score: dict[str, int] = defaultdict(int)
            for texts, systems in zip(shown, groups, strict=False):
                for system in systems:
                    score[system] += 1 if text in texts else -1
            if score:
                named[(it, text)] = max(sorted(score), key=lambda s: score[s])
    return named


def text_hits(definition: Definition, named: dict[tuple[str, str], str], truth: dict[tuple[str, str], str]) -> int:
    """How many texts the annotator named right (``truth``: (item, text) -> system)."""
    return sum(1 for k, system in named.items() if truth.get(k) == system)


def item_key(definition: Definition, data: dict[str, Any]) -> str:
    context = [f for f in config.data_fields(definition) if f not in blinding.candidate_fields(definition)]
    return repr([data[f] for f in context])


def public_gold_places(seed: int, study: int, extra: int) -> set[int]:
    """Where gold items and attention checks fall among ``study + extra`` tasks from the seed alone (the places of a
    study pushed before placements had a secret), as indexes into the tasks in id order."""
    return set(random.Random(f"{seed}:gold").sample(range(study + extra), extra))
