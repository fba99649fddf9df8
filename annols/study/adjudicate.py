"""Adjudication: the items annotators disagree on, in a project of their own, settled by one person.

``annols adjudicate PROTOCOL --project P --into "P adjudication"`` exports project P from
the server into a pull folder of its own (a temporary one: the export, its annotators, the
project and the manifest's blinding rows, as ``annols pull`` writes them), reads it with the
one reader of pull folders (:func:`annols.study.table.read`: each annotator's latest
submitted judgment of each study item, decoded by the definition's style), and keeps the
items on which two annotators disagree by the style's rule
(:func:`annols.analysis.raters.quality_findings.disagreements`, built on the unit scores of
:mod:`annols.analysis.raters.quality`):

- choices, codes, ranks, special cases: any different value;
- ratings: values further apart than ``tolerance``;
- spans: F1 of exact (label, start, end) matches under ``span_f1``.

Text answers (free text) are not compared. Gold items and attention checks are never
adjudicated. What the reader refuses, adjudicate refuses: an export whose task keys name
another protocol.

Each kept item goes into the adjudication project (created with the protocol's own config
and guideline, or reused when it exists with that config) as the same task: its data and
its meta (so blinding and the task key hold), one prediction per annotator whose
``model_version`` is the annotator's name (as the result files name them), and :data:`META_ADJUDICATION` in meta. Items
already in that project are left as they are (a second run adds only new disagreements).

Pulling the adjudication project (``annols pull PROTOCOL --project "P adjudication"``)
writes the protocol's own result files; every annotation of a task marked
:data:`META_ADJUDICATION` is by annotator :data:`ADJUDICATED`, whoever made it.
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from annols import files
from annols.analysis.raters.quality_findings import Disagreements, Rules, disagreements
from annols.definition import Definition, blinding
from annols.errors import ServerError
from annols.formats import original_annotator
from annols.labelstudio.client import LabelStudioClient, Project
from annols.protocols import config
from annols.study import manifest
from annols.study.roles import STUDY
from annols.styles.answers import ExportedAnnotation, ExportedTask

META_ADJUDICATION = "annols_adjudication"  # the same names as annols.study.pull reads
ADJUDICATED = "adjudicated"


@dataclass
class AdjudicationReport:
    project: Project
    created: bool
    items: int = 0  # study items with two or more annotators
    disagreements: int = 0
    added: int = 0
    present: int = 0
    keys: list[str] = field(default_factory=list)


def latest(task: ExportedTask) -> dict[str, ExportedAnnotation]:
    """Annotator -> their latest submitted annotation of the task."""
    out: dict[str, ExportedAnnotation] = {}
    for a in sorted(task.annotations, key=lambda a: (a.created_at, a.id)):
        if not a.cancelled:
            out[a.annotator] = a
    return out


def disagreeing(definition: Definition, project: Project, url: str, raws: list[dict[str, Any]],
                users: dict[int, str], rows: dict[str, dict[str, Any]], rules: Rules | None = None
                ) -> Disagreements:  # fmt: skip
    """The disagreements of the project's export ``raws``, read as a pull folder of it: the export, its
    annotators, the project and the manifest's ``rows`` (their blinding, as pull writes it) in a temporary
    folder (owner-only, removed after) read by :func:`annols.study.table.read`."""
    from annols.study import exports
    from annols.study.pull import ProtocolMismatch
    from annols.study.table import read

    with tempfile.TemporaryDirectory(prefix="annols-adjudicate-") as staging:
        folder = Path(staging)
        users_json = json.dumps({str(k): v for k, v in sorted(users.items())})
        settings = {"title": project.title, "id": project.id, "url": url, "protocol": definition.name,
                    "variant": definition.variant}  # fmt: skip
        files.write_text(folder / exports.EXPORT_FILE, json.dumps(raws, ensure_ascii=False), private=True)
        files.write_text(folder / exports.ANNOTATORS_FILE, users_json, private=True)
        files.write_text(folder / exports.PROJECT_FILE, json.dumps(settings, ensure_ascii=False), private=True)
        if rows:
            exports.write_blinding(folder, rows.values())
        try:
            table = read(definition, [folder], only_judgments=True, with_judges=False)
        except ProtocolMismatch as e:  # found in the task keys of the export staged here: name the project
            raise ProtocolMismatch.of_project(project.title, e.found, e.wanted, e.task) from None
        return disagreements(table, rules or Rules())


def adjudication_task(raw: dict[str, Any], annotations: dict[str, ExportedAnnotation]) -> dict[str, Any]:
    """The adjudication project's task: the study task's data and meta, a prediction per annotator."""
    meta = {**(raw.get("meta") or {}), META_ADJUDICATION: 1}
    return {
        "data": raw.get("data") or {},
        "meta": meta,
        "predictions": [
            {"result": a.result, "model_version": original_annotator(annotator), "score": 1.0}
            for annotator, a in sorted(annotations.items())
        ],
    }


def adjudicate(
    client: LabelStudioClient,
    definition: Definition,
    title: str,
    into: str,
    rules: Rules | None = None,
    manifest_dir: Path | None = None,
) -> AdjudicationReport:
    """Put the disagreements of project ``title`` into project ``into`` (created or reused).

    With ``manifest_dir``, the study's manifest says each task's systems and role (the server
    holds neither), and the tasks added to ``into`` go into its own manifest there, so that
    its pull unblinds them as the study's."""
    from annols.study.exports import exported_task, item_key
    from annols.study.pull import check_project_protocol

    source = client.find_project(title)
    if source is None:
        raise ServerError(f"no project titled {title!r} on {client.url}: check --project (titles are exact)")
    check_project_protocol(source, definition)
    users = {uid: email for email, uid in client.users().items()}
    raws = client.export_tasks(source.id)
    by_id = {int(raw["id"]): raw for raw in raws}
    # Without the manifest no task's role is known: gold items and attention checks would be taken for study items.
    if manifest_dir is None:
        raise manifest.NoManifest(f"no manifest of project {title!r} (no manifest folder given)", blind=False)
    study = manifest.require(manifest.manifest_path(manifest_dir, title), title)
    rows = manifest.rows_by_key(study)
    blind = {int(r["task_id"]): r for r in rows.values() if isinstance(r.get("task_id"), int)} if rows else None
    tasks = [exported_task(raw, users, blind) for raw in raws]
    found = disagreeing(definition, source, client.url, raws, users, rows, rules)  # before anything is created
    wanted = config.label_config(definition)
    target = client.find_project(into)
    created = False
    if target is None:
        target, created = client.create_project(into, wanted, config.instructions(definition))
    elif _normalise(target.label_config) != _normalise(wanted):
        raise ServerError(f"project {into!r} on {client.url} exists with another labeling config: adjudicate "
                          "into another --into")  # fmt: skip
    present = {str(meta.get(blinding.META_KEY)) for _, meta in client.task_meta(target.id)}
    sent = {key: manifest.server_key(row) for key, row in rows.items()}  # the tasks' keys on the server
    keys = set(found.keys)
    report = AdjudicationReport(target, created, items=found.items)
    new: list[dict[str, Any]] = []
    for task in tasks:  # in the export's order: the items the reader found, each built from the server's task
        judged = latest(task)
        if task.role != STUDY or len(judged) < 2 or item_key(task, 0) not in keys:
            continue
        report.disagreements += 1
        report.keys.append(task.key)
        if sent.get(task.key, task.key) in present:
            report.present += 1
            continue
        new.append(adjudication_task(by_id[task.id], judged))
    ids: list[int] = []
    for start in range(0, len(new), 500):
        ids += client.import_tasks(target.id, new[start : start + 500])
    report.added = len(new)
    if manifest_dir is not None and rows:
        _record(manifest_dir, definition, into, target.id, client.url, rows, new, ids, study)
    return report


def _record(manifest_dir: Path, definition: Definition, into: str, project_id: int, url: str,
            rows: dict[str, dict[str, Any]], new: list[dict[str, Any]], ids: list[int], study: Path | None
            ) -> None:  # fmt: skip
    """The adjudication project's manifest: its earlier rows, and each task added with the study row of its key."""
    path = manifest.manifest_path(manifest_dir, into)
    header, tasks, _ = manifest.read_manifest_tasks(path)
    earlier = manifest.rows_by_key(path)
    header = {"protocol": definition.name, "variant": definition.variant, "project": into, "project_id": project_id,
              "url": url, "seed": header.get("seed"),
              "config": manifest.config_digest(config.label_config(definition))}  # fmt: skip
    # Its tasks carry the study's keys on the server: its manifest keeps the study's secret.
    keys = (manifest.keys_of(study) if study is not None else None) or manifest.Keys(None)
    by_sent = {manifest.server_key(row): key for key, row in rows.items()}
    shown: dict[str, manifest.Shown] = {}
    for task, task_id in zip(new, ids, strict=False):
        key = str(task["meta"].get(blinding.META_KEY))
        key = by_sent.get(key, key)
        row = rows.get(key)
        if row is None:
            continue
        tasks[key] = (task_id, tuple(row.get("systems") or ()))
        if "order" in row and "role" in row:
            systems, warnings = tuple(row.get("systems") or ()), tuple(row.get("warnings") or ())
            digest = manifest.meta_digest(task["meta"])
            extra = row.get("extra")
            shown[key] = manifest.Shown(systems, list(row["order"]), str(row["role"]), digest, warnings, extra,
                                        manifest.data_digest(task["data"]))  # fmt: skip
    manifest.write_manifest(path, header, tasks, shown=shown, earlier=earlier, keys=keys)


def _normalise(xml: str | None) -> str:
    import re

    return re.sub(r">\s+<", "><", (xml or "").strip())
