"""Gold items: reading them, mixing them into a push unseen, and knowing them again at pull.

A gold item is a task whose judgment is known in advance: ``annols push ... --gold GOLD``
reads GOLD with the protocol's own reader, as ``--with-annotations`` does (QA-Feedback
``feedback``, a seed-001 annotator folder, a seed-004 returned sheet, summary-flaws
``critique``, sentence-errors ``annotations``; for the generic format of an own
definition a ``result`` field of Label Studio result items), and takes its one
annotator's judgment as the gold one. The judgment never goes to the server: the report
reads GOLD again (``annols report ... --gold GOLD``).

The role of each task is kept in the coordinator's manifest, never on the server (:mod:`annols.study.roles`).
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Collection, Iterator, Sequence
from pathlib import Path

from annols.definition import Definition, design
from annols.errors import InputError
from annols.formats import SourceAnnotation, SourceTask, format_for
from annols.protocols import config
from annols.study.manifest import Keys
from annols.study.roles import ATTENTION, GOLD, STUDY
from annols.styles.answers import ExportedAnnotation, ExportedTask

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


def read_study(definition: Definition, inputs: Sequence[Path], keys: Keys | None = None) -> Iterator[SourceTask]:
    """The study tasks of the inputs as the study's push reads them: designs (groups, best-worst tuples)
    drawn with the study's secret (``keys``; None, or a study pushed before: from the content alone)."""
    secret = keys.design_secret() if keys is not None else None
    return design.iterate_with(secret, lambda: format_for(definition).read(inputs, definition))


def with_roles(
    definition: Definition, inputs: Sequence[Path], gold: Sequence[Path], seed: int = 0, attention: int = 0,
    only: Collection[str] | None = None, keys: Keys | None = None,
) -> Iterator[tuple[SourceTask, str | None]]:
    """The push's source tasks, each with its role (None: no gold or attention checks in this push, no tag).

    Gold tasks (their judgment removed: it never goes to the server) and attention checks
    (:mod:`annols.study.attention`, made from ``attention`` study tasks chosen at random, or all
    of them if the input holds fewer) are placed at random places among the study tasks. Both
    draws (and the designs of the formats that make them) use the study's secret (``keys``), so
    that no one without the manifest can reproduce them; a study pushed before placements had a
    secret (and a push without ``keys``) draws them from ``seed`` alone, as it did.
    """
    secret = keys.design_secret() if keys is not None else None

    def read() -> Iterator[SourceTask]:  # ``only``: a hybrid study's human subset (annols.study.hybrid)
        return (t for t in read_study(definition, inputs, keys) if only is None or t.key in only)

    def draw(what: str) -> random.Random:
        return (keys.rng(f"{seed}:{what}") if keys is not None else None) or random.Random(f"{seed}:{what}")

    if not gold and not attention:
        for task in read():
            yield task, None
        return
    extra: list[tuple[SourceTask, str]] = []
    seen: set[str] = set()
    for task in design.iterate_with(secret, lambda: read_gold(definition, gold)) if gold else ():
        if task.key not in seen:
            seen.add(task.key)
            extra.append((dataclasses.replace(task, annotations=()), GOLD))
    study = sum(1 for _ in read())
    if attention:
        from annols.study import attention as checks

        checks.check_possible(definition)
        # As many as the input allows: whether the project needs them all is the push's to say.
        chosen = set(draw("attention").sample(range(study), min(attention, study)))
        for n, task in enumerate(read()):
            if n in chosen:
                extra.append((checks.make_check(definition, dataclasses.replace(task, annotations=())), ATTENTION))
    for task in read():
        if task.key in seen:
            raise InputError(task.location, "", "", "this item is also a gold item; leave it out of the study "
                             "input or of the gold input")  # fmt: skip
    places = set(draw("gold").sample(range(study + len(extra)), len(extra)))
    pending = iter(extra)
    position = 0
    for task in read():
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
    """Key -> the gold task and its judgment, ready for :func:`annols.styles.decode`.

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
        exported = ExportedTask(id=0, key=task.key, data={**task.data, **task.extra}, systems=task.systems,
                                annotations=(), source_systems=task.systems)  # fmt: skip
        a = task.annotations[0]
        out[task.key] = GoldItem(task.key, exported, ExportedAnnotation(id=0, annotator="gold", result=a.result))
    return out


def _exported_gold(export: Path) -> dict[str, GoldItem]:
    from annols.study.exports import load_annotators, read_export  # pull reads roles from this module

    out: dict[str, GoldItem] = {}
    for n, task in enumerate(read_export(export, load_annotators(export), shares=False), start=1):
        submitted = [a for a in task.annotations if not a.cancelled]
        if len(submitted) != 1:
            raise InputError(export, f"task {n}", "annotations", f"a gold task needs one submitted annotation, this "
                             f"one has {len(submitted)}")  # fmt: skip
        out.setdefault(task.key, GoldItem(task.key, task, submitted[0]))
    return out
