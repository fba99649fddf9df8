"""What a pull writes and how it is read back: the raw export, the annotators beside it, the project.

A pull folder holds ``export.json`` (Label Studio's raw JSON export, as the server gave it),
``annotators.json`` (user id -> email, so a convert or report needs no server) and
``project.json`` (title, id, url, overlap) and, when pull had the coordinator's manifest,
``blinding.jsonl`` (per task id: key, the key the server holds, systems shown, order, role and
what the format keeps off the server; the server holds none of them but its key, see
:mod:`annols.study.manifest`). :func:`read_export` streams the export's tasks with
the blinding undone and each task's role known, from ``blinding.jsonl`` when it is there, else
from the task meta (exports of projects pushed before the manifest kept them); the report,
gold items, adjudication and convert all read pulls through it.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from annols import files
from annols.definition import blinding, fields
from annols.errors import InputError
from annols.jsonstream import JSONStreamError, TextReader, iter_json_array
from annols.study import findings, roles
from annols.styles.answers import ExportedAnnotation, ExportedTask

EXPORT_FILE = "export.json"
ANNOTATORS_FILE = "annotators.json"  # user id -> email, so `convert` needs no server
PROJECT_FILE = "project.json"  # title, id, url, overlap: what a report needs to know
BLIND_ONLY = "blind_only"  # in project.json: pulled without the manifest on purpose (pull --blind-only)
BLINDING_FILE = "blinding.jsonl"  # task id -> the manifest's row (key, systems, order, role...): a secret of the study
# "data": a digest of the data push sent; "left_out": the ids of annotations pull left out of the results
# (annols.study.findings.left_out: on a task whose data, or a project whose label config, changed).
# "shares": push --share-identical's systems of each record that produced the task's texts.
BLINDING_FIELDS = ("task_id", "key", "sent", "systems", "order", "role", "warnings", "meta", "extra", "data",
                   "left_out", "shares")
META_WARNINGS = "annols_warnings"  # what push's reader tolerated in a task's input, in the meta of earlier pushes
ADJUDICATION_META, ADJUDICATED = "annols_adjudication", "adjudicated"  # as annols.study.adjudicate writes them


def read_export(path: Path, users: dict[int, str] | None = None, shares: bool = True) -> Iterator[ExportedTask]:
    """The tasks of a raw JSON export, blinding undone, streamed. ``shares``: a task pushed with
    ``--share-identical`` for several systems comes once per system (:func:`credited`); without, once."""
    try:
        with open(path, encoding="utf-8") as f:
            yield from tasks_from(f, path, users or {}, shares)
    except FileNotFoundError:
        raise InputError(path, "", "", "file not found") from None


def tasks_from(f: TextReader, path: Path, users: dict[int, str], shares: bool = True) -> Iterator[ExportedTask]:
    blind = load_blinding(path)
    try:
        for raw in iter_json_array(f):
            task = exported_task(raw, users, blind)
            if shares and blind is not None:
                yield from credited(task, blind.get(task.id))
            else:
                yield task
    except JSONStreamError as e:
        raise InputError(path, f"task {e.index + 1}", "", f"not a Label Studio JSON export ({e})") from None


_UNKNOWN: dict[str, Any] = {}


def exported_task(raw: dict[str, Any], users: dict[int, str], blind: dict[int, dict[str, Any]] | None = None
                  ) -> ExportedTask:  # fmt: skip
    """One task of an export, unblinded from ``blind`` (task id -> what the manifest says; a task it
    does not know has no systems and is a study item), else from its meta (an export pulled without
    a manifest, or of a project pushed before the manifest kept the blinding)."""
    meta = raw.get("meta") or {}
    data = fields.from_label_studio(raw.get("data") or {})
    systems: tuple[str, ...]
    order: Any
    known = None if blind is None else blind.get(int(raw["id"]), _UNKNOWN)
    warnings = meta.get(META_WARNINGS)
    if known is _UNKNOWN:  # not a task the push made (added on the server): nothing of the meta is believed
        key = str(meta.get(blinding.META_KEY) or f"task-{raw['id']}")
        systems, order, role, warnings = (), [], roles.STUDY, ()
    elif known is not None:
        key = str(known["key"])
        if known.get("extra"):  # what the format kept off the server (extractive-ranking's original cells)
            data = {**data, **known["extra"]}
        systems = tuple(known.get("systems") or ())
        order = known["order"] if "order" in known else meta.get(blinding.META_ORDER)
        role = str(known["role"]) if "role" in known else roles.role_of(meta, key)
        warnings = known.get("warnings", warnings)
    else:
        key = str(meta.get(blinding.META_KEY) or f"task-{raw['id']}")
        encoded = meta.get(blinding.META_SYSTEMS)
        systems = blinding.decode_systems(encoded) if isinstance(encoded, str) else ()
        order = meta.get(blinding.META_ORDER)
        role = roles.role_of(meta, str(meta.get(blinding.META_KEY) or ""))
    annotations = tuple(_annotation(a, users) for a in raw.get("annotations") or ())
    gone = known.get("left_out") if known else None
    if gone:  # what annotators were shown changed under these: not counted (findings.csv says why)
        annotations = tuple(a for a in annotations if a.id not in set(gone))
    if meta.get(ADJUDICATION_META):  # a task of an adjudication project (annols.study.adjudicate): one verdict
        annotations = tuple(dataclasses.replace(a, annotator=ADJUDICATED) for a in annotations)
    return ExportedTask(
        id=int(raw["id"]),
        key=key,
        data=data,
        systems=systems,
        annotations=annotations,
        source_systems=blinding.source_order(systems, order) if isinstance(order, list) else (),
        read_warnings=_read_warnings(warnings),
        role=role,
    )


def credited(task: ExportedTask, row: dict[str, Any] | None) -> Iterator[ExportedTask]:
    """A task and, when push shared it among the records of identical outputs (``push --share-identical``,
    the manifest row's ``shares``), a copy for each other system that produced its text: the same
    annotations, credited to that system (``share`` 1, 2...: the copies, which count no judgment twice)."""
    yield task
    shares = (row or {}).get("shares")
    if not isinstance(shares, list) or len(shares) < 2:
        return
    mine = list(task.systems)
    others = [s for s in shares if isinstance(s, list) and list(s) != mine]
    for n, systems in enumerate(others, start=1):
        shown = tuple(str(s) for s in systems)
        yield dataclasses.replace(task, systems=shown, source_systems=shown if task.source_systems else (), share=n)


@dataclasses.dataclass(slots=True)  # not frozen: made once a task, on the hot path of pull and the reader
class TaskReading:
    """One exported task as the study table reads it (:func:`annols.study.table.read_study`) and pull counts it
    (:func:`annols.study.pull.convert`): the one reading of a task, so that the two cannot count otherwise.

    ``task``: the task under its item key (:func:`item_key`); ``counted``: a task of the export (a copy of
    ``push --share-identical``, credited to another system, is not: its judgments count once); ``item``: a study
    item (gold items and attention checks are none); ``annotations``: the annotators' (a judge's answers set
    beside them are not), submitted and cancelled, in the export's order, each once (the same id, annotator and
    time seen again on the task is dropped)."""

    task: ExportedTask
    counted: bool
    item: bool
    annotations: tuple[ExportedAnnotation, ...]

    @property
    def submitted(self) -> int:
        return sum(not a.cancelled for a in self.annotations)

    @property
    def cancelled(self) -> int:
        return sum(a.cancelled for a in self.annotations)


def task_reading(task: ExportedTask, index: int = 0) -> TaskReading:
    """The reading of one task of source ``index`` (a pull folder or export among those read together).

    What needs every task stays with the reader of the whole study: an annotation seen on an earlier task or
    source (a project pulled twice) and each annotator's latest judgment of an item
    (:func:`annols.analysis.table.kept_mask`)."""
    key = item_key(task, index)
    if key != task.key:
        task = dataclasses.replace(task, key=key)
    annotations = task.annotations
    if len(annotations) > 1 or (annotations and annotations[0].source != "human"):
        seen: set[tuple[int, str, str]] = set()
        kept = []
        for a in annotations:
            if a.source != "human":
                continue
            if a.id:
                ident = (a.id, a.annotator, a.created_at)
                if ident in seen:
                    continue
                seen.add(ident)
            kept.append(a)
        annotations = tuple(kept)
    counted = not task.share
    return TaskReading(task, counted, counted and task.role == roles.STUDY, annotations)


def item_key(task: ExportedTask, index: int) -> str:
    """The task's key; a task pushed without annols (no key in meta) is only itself, in its source."""
    if task.key == f"task-{task.id}":
        return f"source-{index + 1}:{task.key}"
    return task.key


def _read_warnings(value: Any) -> tuple[str, ...]:
    return tuple(str(w) for w in value) if isinstance(value, list) else ()


def _annotation(raw: dict[str, Any], users: dict[int, str]) -> ExportedAnnotation:
    who = raw.get("completed_by")
    if isinstance(who, dict):
        email = str(who.get("email") or who.get("id"))
    else:
        email = users.get(int(who), f"user-{who}") if who is not None else "unknown"
    return ExportedAnnotation(
        id=int(raw.get("id") or 0),
        annotator=email,
        result=list(raw.get("result") or []),
        lead_time=raw.get("lead_time"),
        created_at=str(raw.get("created_at") or ""),
        cancelled=bool(raw.get("was_cancelled")),
    )


def load_annotators(export: Path) -> dict[int, str]:
    """The user id -> email map pull saved beside an export (empty if there is none)."""
    path = export.parent / ANNOTATORS_FILE
    if not path.exists():
        return {}
    try:
        return {int(k): str(v) for k, v in json.loads(path.read_text(encoding="utf-8")).items()}
    except (ValueError, AttributeError):
        raise InputError(path, "", "", "not a JSON object of user id -> email") from None


def load_blinding(export: Path) -> dict[int, dict[str, Any]] | None:
    """Task id -> key, systems, order, role: what pull wrote beside an export from the manifest (None if none)."""
    path = export.parent / BLINDING_FILE
    if not path.exists():
        # A blind-only pull: every task unknown, so nothing of the server's meta is taken for systems or roles.
        return {} if is_blind_only(export.parent) else None
    out: dict[int, dict[str, Any]] = {}
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, start=1):
            try:
                row = json.loads(line)
                out[int(row["task_id"])] = row
            except (ValueError, KeyError, TypeError):
                raise InputError(path, f"line {n}", "task_id", "not a row of a pull's blinding file") from None
    return out


def write_blinding(folder: Path, rows: Iterable[dict[str, Any]]) -> Path:
    """``blinding.jsonl`` in a pull folder: the manifest's rows of the tasks it knows an id of, by id."""
    path = folder / BLINDING_FILE
    kept = sorted((r for r in rows if isinstance(r.get("task_id"), int)), key=lambda r: r["task_id"])
    with files.atomic_open(path, private=True) as f:  # the systems behind every task: owner-only
        for row in kept:
            entry = {k: row[k] for k in BLINDING_FIELDS if k in row}
            f.write(json.dumps(entry, ensure_ascii=False) + "\n")
    return path


def is_blind_only(folder: Path) -> bool:
    """Whether the pull in ``folder`` was made without the study's manifest on purpose (``pull --blind-only``):
    its results name no system, and a report of it compares none."""
    try:
        return bool(json.loads((Path(folder) / PROJECT_FILE).read_text(encoding="utf-8")).get(BLIND_ONLY))
    except (OSError, ValueError, AttributeError):
        return False


def pulled_without_manifest(folder: Path) -> bool:
    """Whether the pull in ``folder`` was made without the study's manifest and not as a blind-only pull (a pull
    by an annols that only warned, ``no-manifest`` in its findings): its systems, if any, are the server's word."""
    if is_blind_only(folder) or (Path(folder) / BLINDING_FILE).exists():
        return False
    try:
        return any(f.kind == "no-manifest" for f in findings.read(Path(folder) / findings.FINDINGS_FILE))
    except InputError:
        return False

