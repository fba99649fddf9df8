"""Gold items: reading them, mixing them into a push unseen, and knowing them again at pull.

A gold item is a task whose judgment is known in advance: ``annols push ... --gold GOLD``
reads GOLD with the protocol's own reader, as ``--with-annotations`` does (QA-Feedback
``feedback``, a seed-001 annotator folder, a seed-004 returned sheet, summary-flaws
``critique``, sentence-errors ``annotations``; for the generic format of an own
definition a ``result`` field of Label Studio result items), and takes its one
annotator's judgment as the gold one. The judgment never goes to the server: the report
reads GOLD again (``annols report ... --gold GOLD``).

What the server holds is only the role. Every task of a push with gold items carries
one more meta key, :data:`META_TAG`, of the same length for every task: two bytes (role
and a spare) masked by a digest of the task's key, then ten bytes of that digest, base64.
No value names a role, gold tasks have the same keys in the same order as study tasks,
and they sit at random places among them (from ``--seed``), not at the end. As with
blinding (systems base64 in meta) this hides the role from what the editor shows and
loads, not from someone who reads annols' source and decodes the task JSON by hand.

Pull reads the tag back into :attr:`annols.formats.ExportedTask.role`; a task without one
is a study task.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import hashlib
import random
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from annols import config
from annols.definition import Definition
from annols.errors import InputError
from annols.formats import ExportedAnnotation, ExportedTask, SourceAnnotation, SourceTask, format_for

META_TAG = "annols_tag"
STUDY, GOLD, ATTENTION = "study", "gold", "attention"
ROLES = (STUDY, GOLD, ATTENTION)
_TAG_BYTES = 12


def _mask(key: str) -> bytes:
    return hashlib.sha256(b"annols-tag\0" + key.encode("utf-8")).digest()[:_TAG_BYTES]


def encode_tag(key: str, role: str, info: int = 0) -> str:
    """The meta value of a task's role: 16 characters whatever the role."""
    mask = _mask(key)
    raw = bytes([mask[0] ^ ROLES.index(role), mask[1] ^ (info & 0xFF)]) + mask[2:]
    return base64.urlsafe_b64encode(raw).decode("ascii")


def decode_tag(key: str, tag: Any) -> tuple[str, int]:
    """(role, info) from a tag written by :func:`encode_tag` for ``key``; (study, 0) for anything else."""
    if not isinstance(tag, str):
        return STUDY, 0
    try:
        raw = base64.urlsafe_b64decode(tag.encode("ascii"))
    except (binascii.Error, ValueError, UnicodeEncodeError):
        return STUDY, 0
    mask = _mask(key)
    if len(raw) != _TAG_BYTES or raw[2:] != mask[2:] or (raw[0] ^ mask[0]) >= len(ROLES):
        return STUDY, 0
    return ROLES[raw[0] ^ mask[0]], raw[1] ^ mask[1]


def role_of(meta: dict[str, Any], key: str) -> str:
    return decode_tag(key, meta.get(META_TAG))[0]


# --- reading gold inputs ------------------------------------------------------------------------


def read_gold(definition: Definition, paths: Sequence[Path]) -> Iterator[SourceTask]:
    """Each gold task of the inputs with its one judgment (``annotations``: exactly one)."""
    fmt = format_for(definition)
    tasks = _generic_gold(definition, paths) if fmt.name == "generic" else fmt.read(paths, definition)
    for task in tasks:
        if not task.annotations:
            raise InputError(task.location, "", "", "a gold item needs its judgment; this one holds none "
                             f"(gold is read as --with-annotations reads it: {_what(definition)})")  # fmt: skip
        who = sorted({a.annotator for a in task.annotations})
        if len(who) > 1:
            raise InputError(task.location, "", "", f"a gold item needs one judgment; this one holds {len(who)} "
                             f"annotators' ({', '.join(who)}): give one annotator's")  # fmt: skip
        yield task


def _what(definition: Definition) -> str:
    return {
        "qa-feedback": "a record's 'feedback'",
        "pairwise-aspects": "the seed-001 folder with one annotator folder",
        "extractive-ranking": "the seed-004 sheet with one returned copy",
        "summary-flaws": "a record's 'critique'",
        "sentence-errors": "a record's 'annotations'",
    }.get(definition.format or "", "a record's 'result': a list of Label Studio result items")


def _generic_gold(definition: Definition, paths: Sequence[Path]) -> Iterator[SourceTask]:
    """Generic records with a ``result`` field (Label Studio result items, candidates in the record's order)."""
    from annols.formats.generic import GenericFormat, iter_records

    fields = config.data_fields(definition)
    for path in paths:
        for location, record in iter_records(path):
            task = GenericFormat.source_task(definition, fields, path, location, record, read=("systems", "result"))
            result = record.get("result")
            if not isinstance(result, list) or not all(isinstance(item, dict) for item in result):
                raise InputError(path, location, "result", "expected the gold judgment as a list of Label Studio "
                                 "result items")  # fmt: skip
            yield dataclasses.replace(task, annotations=(SourceAnnotation(annotator="gold", result=result),))


# --- a push's tasks with their roles -----------------------------------------------------------


def with_roles(
    definition: Definition, inputs: Sequence[Path], gold: Sequence[Path], seed: int = 0, attention: int = 0
) -> Iterator[tuple[SourceTask, str | None]]:
    """The push's source tasks, each with its role (None: no gold or attention checks in this push, no tag).

    Gold tasks (their judgment removed: it never goes to the server) and attention checks
    (:mod:`annols.attention`, made from ``attention`` study tasks chosen from ``seed``, or all
    of them if the input holds fewer) are placed at random places among the study tasks, from
    ``seed``.
    """
    fmt = format_for(definition)
    if not gold and not attention:
        for task in fmt.read(inputs, definition):
            yield task, None
        return
    extra: list[tuple[SourceTask, str]] = []
    seen: set[str] = set()
    for task in read_gold(definition, gold) if gold else ():
        if task.key not in seen:
            seen.add(task.key)
            extra.append((dataclasses.replace(task, annotations=()), GOLD))
    study = sum(1 for _ in fmt.read(inputs, definition))
    if attention:
        from annols import attention as checks

        checks.check_possible(definition)
        # As many as the input allows: whether the project needs them all is the push's to say.
        chosen = set(random.Random(f"{seed}:attention").sample(range(study), min(attention, study)))
        for n, task in enumerate(fmt.read(inputs, definition)):
            if n in chosen:
                extra.append((checks.make_check(definition, dataclasses.replace(task, annotations=())), ATTENTION))
    for task in fmt.read(inputs, definition):
        if task.key in seen:
            raise InputError(task.location, "", "", "this item is also a gold item; leave it out of the study "
                             "input or of the gold input")  # fmt: skip
    places = set(random.Random(f"{seed}:gold").sample(range(study + len(extra)), len(extra)))
    pending = iter(extra)
    position = 0
    for task in fmt.read(inputs, definition):
        while position in places:
            yield next(pending)
            position += 1
        yield task, STUDY
        position += 1
    yield from pending


# --- the gold judgments, as the report compares them --------------------------------------------


@dataclasses.dataclass(frozen=True)
class GoldItem:
    key: str
    task: ExportedTask  # systems in the input's order: what the gold result refers to
    annotation: ExportedAnnotation


EXPORT_FILE = "export.json"


def gold_items(definition: Definition, paths: Sequence[Path]) -> dict[str, GoldItem]:
    """Key -> the gold task and its judgment, ready for :func:`annols.judgments.decode`.

    Each path is the gold input pushed with ``--gold``, or a pull of annotated gold tasks
    (a folder with ``export.json``, or an ``export.json``: e.g. an expert's judgments made
    in Label Studio), each task holding one submitted annotation.
    """
    out: dict[str, GoldItem] = {}
    native = []
    for path in map(Path, paths):
        export = path / EXPORT_FILE if path.is_dir() else path
        if export.name == EXPORT_FILE and export.is_file():
            out.update({k: v for k, v in _exported_gold(export).items() if k not in out})
        else:
            native.append(path)
    for task in read_gold(definition, native) if native else ():
        if task.key in out:
            continue
        exported = ExportedTask(id=0, key=task.key, data=task.data, systems=task.systems, annotations=(),
                                source_systems=task.systems)  # fmt: skip
        a = task.annotations[0]
        out[task.key] = GoldItem(task.key, exported, ExportedAnnotation(id=0, annotator="gold", result=a.result))
    return out


def _exported_gold(export: Path) -> dict[str, GoldItem]:
    from annols.pull import load_annotators, read_export  # pull reads roles from this module

    out: dict[str, GoldItem] = {}
    for n, task in enumerate(read_export(export, load_annotators(export)), start=1):
        submitted = [a for a in task.annotations if not a.cancelled]
        if len(submitted) != 1:
            raise InputError(export, f"task {n}", "annotations", f"a gold task needs one submitted annotation, this "
                             f"one has {len(submitted)}")  # fmt: skip
        out.setdefault(task.key, GoldItem(task.key, task, submitted[0]))
    return out
