"""Blinding: which system is shown where, shuffled per task from a recorded seed.

For the pairwise, ranking and ratings styles the annotator sees candidates by position only
("Summary #1", "Output A"). Each task's order is a permutation drawn from
``random.Random(f"{seed}:{key}")``, where ``key`` is an HMAC of the task's key under the
study's secret (:meth:`annols.study.manifest.Keys.shuffle`; the task's key itself for a
study pushed before keys had a secret), so the same seed, manifest and input give the same
order on every run and machine, and a guess of the systems cannot be checked against the
order shown. The systems shown, in position order, and the order are kept in
the coordinator's manifest only (:mod:`annols.study.manifest`), never on the server; pull
unblinds from it.

Projects pushed before that carried them in ``meta`` (:data:`META_SYSTEMS`, base64 JSON,
and :data:`META_ORDER`): :func:`decode_systems` still reads those exports.
"""

from __future__ import annotations

import base64
import functools
import json
import random
from typing import Any

from annols.definition import Definition

META_KEY = "annols_key"
META_SYSTEMS = "annols_systems"
META_ORDER = "annols_order"  # position i shows input candidate order[i]: no names, only indexes


def candidate_fields(d: Definition) -> list[str]:
    """The task fields holding the candidates, in position order (empty if not blinded)."""
    if d.style == "pairwise":
        return [c.name for c in d.spec.candidates]
    if d.style == "ranking":
        return [d.spec.field(p) for p in d.spec.positions]
    if d.style == "ratings":  # one candidate: nothing to shuffle, but its system is named all the same
        return [c.name for c in d.spec.candidates]
    if d.style == "best-worst":  # the tuple annols made, shuffled again per task
        return list(d.spec.fields())
    return []


def order_for(seed: int, key: str, n: int) -> list[int]:
    """The permutation for one task: position i shows input candidate ``order[i]``."""
    order = list(range(n))
    random.Random(f"{seed}:{key}").shuffle(order)
    return order


def blind(
    d: Definition, data: dict[str, Any], systems: tuple[str, ...], key: str, seed: int, keep_order: bool
) -> tuple[dict[str, Any], tuple[str, ...], list[int]]:
    """The task data with candidates placed as shown, the systems shown at each position, and
    the order (position i shows input candidate ``order[i]``; empty when nothing is blinded)."""
    fields = candidate_fields(d)
    if not fields or not systems:
        return data, systems, []
    if len(systems) != len(fields):
        raise ValueError(f"{len(systems)} systems for {len(fields)} candidate positions")
    order = list(range(len(fields))) if keep_order else order_for(seed, key, len(fields))
    shown = dict(data)
    for position, source in enumerate(order):
        shown[fields[position]] = data[fields[source]]
    return shown, tuple(systems[i] for i in order), order


def source_order(shown: tuple[str, ...], order: list[int]) -> tuple[str, ...]:
    """The systems in the input's order, from the systems shown and the order they were placed in."""
    if sorted(order) != list(range(len(shown))):
        return ()
    source = [""] * len(shown)
    for position, index in enumerate(order):
        source[index] = shown[position]
    return tuple(source)


@functools.lru_cache(maxsize=1024)  # a study has few systems (and orders of them): each is encoded once
def encode_systems(systems: tuple[str, ...]) -> str:
    raw = json.dumps(list(systems), ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return base64.urlsafe_b64encode(raw).decode("ascii")


def decode_systems(value: str) -> tuple[str, ...]:
    return tuple(json.loads(base64.urlsafe_b64decode(value.encode("ascii")).decode("utf-8")))
