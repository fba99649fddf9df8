"""What a pull writes and how it is read back: the raw export, the annotators beside it, the project.

A pull folder holds ``export.json`` (Label Studio's raw JSON export, as the server gave it),
``annotators.json`` (user id -> email, so a convert or report needs no server) and
``project.json`` (title, id, url, overlap). :func:`read_export` streams the export's tasks
with the blinding undone and each task's role known; the report, gold items, adjudication
and convert all read pulls through it.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from annols.definition import blinding, fields
from annols.errors import InputError
from annols.jsonstream import JSONStreamError, TextReader, iter_json_array
from annols.study import roles
from annols.styles.answers import ExportedAnnotation, ExportedTask

EXPORT_FILE = "export.json"
ANNOTATORS_FILE = "annotators.json"  # user id -> email, so `convert` needs no server
PROJECT_FILE = "project.json"  # title, id, url, overlap: what a report needs to know
META_WARNINGS = "annols_warnings"  # what push's reader tolerated in a task's input, in its meta
ADJUDICATION_META, ADJUDICATED = "annols_adjudication", "adjudicated"  # as annols.study.adjudicate writes them


def read_export(path: Path, users: dict[int, str] | None = None) -> Iterator[ExportedTask]:
    """The tasks of a raw JSON export, blinding undone, streamed."""
    try:
        with open(path, encoding="utf-8") as f:
            yield from tasks_from(f, path, users or {})
    except FileNotFoundError:
        raise InputError(path, "", "", "file not found") from None


def tasks_from(f: TextReader, path: Path, users: dict[int, str]) -> Iterator[ExportedTask]:
    try:
        for raw in iter_json_array(f):
            yield exported_task(raw, users)
    except JSONStreamError as e:
        raise InputError(path, f"task {e.index + 1}", "", f"not a Label Studio JSON export ({e})") from None


def exported_task(raw: dict[str, Any], users: dict[int, str]) -> ExportedTask:
    meta = raw.get("meta") or {}
    encoded = meta.get(blinding.META_SYSTEMS)
    systems = blinding.decode_systems(encoded) if isinstance(encoded, str) else ()
    order = meta.get(blinding.META_ORDER)
    annotations = tuple(_annotation(a, users) for a in raw.get("annotations") or ())
    if meta.get(ADJUDICATION_META):  # a task of an adjudication project (annols.study.adjudicate): one verdict
        annotations = tuple(dataclasses.replace(a, annotator=ADJUDICATED) for a in annotations)
    return ExportedTask(
        id=int(raw["id"]),
        key=str(meta.get(blinding.META_KEY) or f"task-{raw['id']}"),
        data=fields.from_label_studio(raw.get("data") or {}),
        systems=systems,
        annotations=annotations,
        source_systems=blinding.source_order(systems, order) if isinstance(order, list) else (),
        read_warnings=_read_warnings(meta.get(META_WARNINGS)),
        role=roles.role_of(meta, str(meta.get(blinding.META_KEY) or "")),
    )


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
