"""From a protocol's input files to tasks in a Label Studio project, safely and fast.

A push reads its inputs twice, streaming both times. The first pass checks every record
(any input error stops the push before anything is sent) and collects the task keys;
the second builds the tasks again and imports the ones the project does not have yet,
in batches of one request each. Every task carries a stable key in ``meta``, so a re-run
adds nothing twice, also after a crash mid-push or a batch whose answer was lost: the
keys already on the server are listed first and skipped.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from annols import blinding, config, files
from annols.definition import Definition
from annols.errors import AnnolsError, InputError, ServerError
from annols.formats import SourcePrediction, SourceTask, format_for
from annols.labelstudio import LabelStudioClient, Project

DEFAULT_BATCH_SIZE = 5000
ANNOTATOR_DOMAIN = "annotators.annols.local"


@dataclass(frozen=True)
class PushOptions:
    title: str
    overlap: int | None = None
    batch_size: int = DEFAULT_BATCH_SIZE
    seed: int = 0
    with_annotations: bool = False
    predictions: tuple[Path, ...] = ()
    manifest_dir: Path = Path(".annols")


@dataclass
class Scan:
    """What the first pass found: every key once, and the original annotators."""

    keys: list[str] = field(default_factory=list)
    duplicates: int = 0
    annotators: set[str] = field(default_factory=set)
    annotations: int = 0


@dataclass(frozen=True)
class PushReport:
    project: Project
    created: int
    present: int
    total: int
    duplicates: int
    annotations: int
    predictions: int
    manifest: Path
    project_created: bool


def annotator_email(annotator: str) -> str:
    """The Label Studio user standing for an original annotator of an imported study."""
    local = re.sub(r"[^A-Za-z0-9._-]+", "-", annotator).strip("-.") or "annotator"
    return f"{local}@{ANNOTATOR_DOMAIN}"


def scan(definition: Definition, inputs: Sequence[Path]) -> Scan:
    """Read every input once, checking it; raises InputError at the first bad record."""
    fmt = format_for(definition)
    result = Scan()
    seen: set[str] = set()
    for task in fmt.read(inputs, definition):
        _check_task(definition, task)
        if task.key in seen:
            result.duplicates += 1
            continue
        seen.add(task.key)
        result.keys.append(task.key)
        for a in task.annotations:
            result.annotators.add(a.annotator)
            result.annotations += 1
    return result


def _check_task(definition: Definition, task: SourceTask) -> None:
    missing = [f for f in config.data_fields(definition) if f not in task.data]
    if missing:  # a format bug rather than bad input, but say where
        raise InputError(task.location, "", missing[0], "the task lacks this field of the labeling config")
    fields = blinding.candidate_fields(definition)
    if fields and task.systems and len(task.systems) != len(fields):
        raise InputError(
            task.location, "", "systems", f"{len(task.systems)} systems for {len(fields)} candidates"
        )


def load_predictions(definition: Definition, paths: Sequence[Path]) -> dict[str, SourcePrediction]:
    if not paths:
        return {}
    return dict(format_for(definition).read_predictions(paths, definition))


def build_tasks(
    definition: Definition,
    inputs: Sequence[Path],
    *,
    seed: int = 0,
    with_annotations: bool = False,
    predictions: dict[str, SourcePrediction] | None = None,
    user_ids: dict[str, int] | None = None,
) -> Iterator[tuple[str, tuple[str, ...], dict[str, Any], bool]]:
    """(key, systems shown, Label Studio task, repeat) for each input task, in input order.

    ``repeat`` marks a record whose key came earlier in the input: the same task again,
    whose judgments (if any) belong to the first one.
    """
    fmt = format_for(definition)
    seen: set[str] = set()
    for task in fmt.read(inputs, definition):
        repeat = task.key in seen
        seen.add(task.key)
        # Judgments already made refer to the input order: keep it for tasks that carry them.
        keep = task.fixed_order or (with_annotations and bool(task.annotations))
        data, systems = blinding.blind(definition, task.data, task.systems, task.key, seed, keep)
        meta: dict[str, Any] = {blinding.META_KEY: task.key}
        if systems:
            meta[blinding.META_SYSTEMS] = blinding.encode_systems(systems)
        payload: dict[str, Any] = {"data": data, "meta": meta}
        if with_annotations and task.annotations:
            payload["annotations"] = [
                _annotation(a.result, a.lead_time, (user_ids or {}).get(annotator_email(a.annotator)))
                for a in task.annotations
            ]
        prediction = (predictions or {}).get(task.key)
        if prediction is not None and not repeat:
            item: dict[str, Any] = {"result": prediction.result, "model_version": prediction.model_version}
            if prediction.score is not None:
                item["score"] = prediction.score
            payload["predictions"] = [item]
        yield task.key, systems, payload, repeat


def _annotation(result: list[dict[str, Any]], lead_time: float | None, user_id: int | None) -> dict[str, Any]:
    out: dict[str, Any] = {"result": result}
    if user_id is not None:
        out["completed_by"] = user_id
    if lead_time is not None:
        out["lead_time"] = lead_time
    return out


def manifest_path(manifest_dir: Path, title: str) -> Path:
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", title).strip("-") or "project"
    return manifest_dir / f"{slug}.manifest.jsonl"


def write_manifest(
    path: Path, header: dict[str, Any], tasks: dict[str, tuple[int | None, tuple[str, ...]]]
) -> None:
    """The local record of a project's tasks: key, task id, systems shown (no secrets)."""
    with files.atomic_open(path) as f:
        f.write(json.dumps(header, ensure_ascii=False) + "\n")
        for key, (task_id, systems) in tasks.items():
            f.write(json.dumps({"key": key, "task_id": task_id, "systems": list(systems)}, ensure_ascii=False) + "\n")


def read_manifest(path: Path) -> dict[str, tuple[str, ...]]:
    """Key -> systems shown, from a manifest written by push (empty if there is none)."""
    out: dict[str, tuple[str, ...]] = {}
    if not path.exists():
        return out
    with open(path, encoding="utf-8") as f:
        next(f, None)  # header
        for line in f:
            row = json.loads(line)
            out[row["key"]] = tuple(row.get("systems") or ())
    return out


def ensure_project(client: LabelStudioClient, definition: Definition, options: PushOptions) -> tuple[Project, bool]:
    """The project titled ``options.title``: reused if its config matches, created otherwise."""
    wanted = config.label_config(definition)
    existing = client.find_project(options.title)
    if existing is None:
        project = client.create_project(
            options.title, wanted, config.instructions(definition), overlap=options.overlap or 1
        )
        return project, True
    if _normalise(existing.label_config) != _normalise(wanted):
        raise ServerError(
            f"project {options.title!r} on {client.url} exists with a different labeling config than "
            f"{definition.name}{' ' + definition.variant if definition.variant else ''}: "
            "push into another --project, or check the protocol and variant"
        )
    if options.overlap is not None:
        client.update_project(existing.id, maximum_annotations=options.overlap)
    return existing, False


def _normalise(xml: str) -> str:
    return re.sub(r">\s+<", "><", xml.strip())


def ensure_users(client: LabelStudioClient, annotators: set[str]) -> dict[str, int]:
    """A Label Studio user per original annotator (created if missing): email -> id."""
    users = client.users()
    for annotator in sorted(annotators):
        email = annotator_email(annotator)
        if email not in users:
            users[email] = client.create_user(email, first_name=annotator)
    return users


def push(
    client: LabelStudioClient,
    definition: Definition,
    inputs: Sequence[Path],
    options: PushOptions,
    on_progress: Callable[[int, int], None] | None = None,
) -> PushReport:
    """Push the inputs into the project; safe to re-run. ``on_progress(done, total)`` after each batch."""
    if options.batch_size < 1:
        raise AnnolsError("--batch-size must be at least 1")
    found = scan(definition, inputs)
    predictions = load_predictions(definition, options.predictions)
    known = set(found.keys)
    unknown = [k for k in predictions if k not in known]
    if unknown:
        raise InputError(
            options.predictions[0], "", "", f"{len(unknown)} prediction(s) match no input task (first key {unknown[0]})"
        )

    project, created_project = ensure_project(client, definition, options)
    user_ids = ensure_users(client, found.annotators) if options.with_annotations else {}

    present: dict[str, tuple[int | None, tuple[str, ...]]] = {}
    for task_id, meta in client.task_meta(project.id):
        key = meta.get(blinding.META_KEY)
        if isinstance(key, str):
            systems = meta.get(blinding.META_SYSTEMS)
            present[key] = (task_id, blinding.decode_systems(systems) if isinstance(systems, str) else ())
    already = sum(1 for k in found.keys if k in present)
    todo = len(found.keys) - already
    done = 0
    if on_progress:
        on_progress(0, todo)

    manifest = manifest_path(options.manifest_dir, options.title)
    header = {
        "protocol": definition.name,
        "variant": definition.variant,
        "project": options.title,
        "project_id": project.id,
        "url": client.url,
        "seed": options.seed,
    }
    batch: list[tuple[str, tuple[str, ...], dict[str, Any]]] = []
    annotations = predictions_sent = 0

    def flush() -> None:
        nonlocal done, annotations, predictions_sent
        payload = json.dumps([t for _, _, t in batch], ensure_ascii=False).encode("utf-8")
        ids = client.import_json(project.id, payload, len(batch))
        for i, (key, systems, task) in enumerate(batch):
            present[key] = (ids[i] if i < len(ids) else None, systems)
            annotations += len(task.get("annotations", ()))
            predictions_sent += len(task.get("predictions", ()))
        done += len(batch)
        batch.clear()
        if on_progress:
            on_progress(done, todo)

    # Judgments on a task that appears again later in the input: added once the task exists.
    repeated: list[tuple[str, dict[str, Any]]] = []
    new_keys: set[str] = set()
    try:
        for key, systems, task, repeat in build_tasks(
            definition,
            inputs,
            seed=options.seed,
            with_annotations=options.with_annotations,
            predictions=predictions,
            user_ids=user_ids,
        ):
            if repeat:
                if key in new_keys:
                    repeated.extend((key, a) for a in task.get("annotations", ()))
                continue
            if key in present:
                continue
            new_keys.add(key)
            batch.append((key, systems, task))
            if len(batch) >= options.batch_size:
                flush()
        if batch:
            flush()
        for key, a in repeated:
            target = present[key][0]
            if target is not None:
                client.create_annotation(
                    target, a["result"], completed_by=a.get("completed_by"), lead_time=a.get("lead_time")
                )
                annotations += 1
    finally:
        # Whatever happened, record what is known to be in the project.
        write_manifest(manifest, header, present)
    return PushReport(
        project=project,
        created=done,
        present=already,
        total=len(found.keys),
        duplicates=found.duplicates,
        annotations=annotations,
        predictions=predictions_sent,
        manifest=manifest,
        project_created=created_project,
    )


def write_task_file(
    definition: Definition,
    inputs: Sequence[Path],
    output: Path,
    *,
    seed: int = 0,
    with_annotations: bool = False,
    predictions: Sequence[Path] = (),
    manifest_dir: Path | None = None,
) -> tuple[int, int]:
    """``annols tasks``: the same tasks as a push, as a Label Studio import file. Returns (tasks, duplicates)."""
    found = scan(definition, inputs)
    preds = load_predictions(definition, predictions)
    systems_of: dict[str, tuple[int | None, tuple[str, ...]]] = {}
    with files.atomic_open(output) as f:
        f.write("[")
        written = 0
        for key, systems, task, repeat in build_tasks(
            definition, inputs, seed=seed, with_annotations=with_annotations, predictions=preds
        ):
            if repeat:
                continue
            f.write(("," if written else "") + "\n" + json.dumps(task, ensure_ascii=False))
            written += 1
            systems_of[key] = (None, systems)
        f.write("\n]\n")
    if manifest_dir is not None:
        header = {"protocol": definition.name, "variant": definition.variant, "tasks_file": str(output), "seed": seed}
        write_manifest(manifest_path(manifest_dir, output.stem), header, systems_of)
    return len(found.keys), found.duplicates
