"""Inputs with one record per candidate, pooled by context: best-worst's candidates, ratings groups' outputs.

Each record holds the pool's context fields, a candidate's text and the candidate's name
(best-worst's ``id``, a ratings group's ``system``); records with the same context are one
pool (without context fields the whole input is one). The formats built on this make
the pool's tasks themselves (:mod:`annols.definition.design`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from annols.errors import InputError
from annols.formats.generic import iter_records


@dataclass(frozen=True)
class Member:
    """One candidate of a pool, as read."""

    name: str  # the candidate's id, or the system that wrote it
    record: dict[str, Any]
    path: Path
    location: str


def read_pools(
    paths: Sequence[Path], context: Sequence[str], text_field: str, name_field: str, *, needs: str, twice: str
) -> Iterator[list[Member]]:
    """Each pool's members, in input order, pools in the order first seen.

    A record without a context field, the text or a name is refused (``needs`` says why a
    name is needed), and so is a name already in its pool (``twice`` follows the name).
    """
    pools: dict[tuple[str, ...], list[Member]] = {}
    for path in paths:
        for location, record in iter_records(path):
            for name in [*context, text_field, name_field]:
                if name not in record or record[name] in (None, ""):
                    need = needs if name == name_field else "every record needs it"
                    raise InputError(path, location, name, f"missing; {need}")
            pool = pools.setdefault(tuple(str(record[name]) for name in context), [])
            ident = str(record[name_field])
            if any(ident == m.name for m in pool):
                raise InputError(path, location, name_field, f"{ident!r} {twice}")
            pool.append(Member(ident, record, path, location))
    yield from pools.values()
