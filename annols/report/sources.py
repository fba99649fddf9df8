"""Reading one or several pulls into one study: annotations, items, and who counts where.

A source is a pull output folder (``export.json`` with ``annotators.json`` and
``project.json`` beside it) or an ``export.json`` file. Several sources are one study:
tasks with the same key are one item, whichever source they come from. Each export is
streamed task by task (:func:`annols.study.exports.read_export`); only compact rows are kept.

Who counts:

- a cancelled (skipped) annotation counts for nothing but the annotator's skip count;
- the same annotation seen twice (same id, annotator and time: a project pulled twice)
  counts once;
- an annotator with several annotations of one item: the latest (``created_at``, then
  id) is their judgment; the others count in "annotations per annotator" only.

Overlap asked for: a source's ``project.json`` ``overlap`` when present, else the
``--overlap`` option, else the largest number of annotators seen on an item. An item in
several sources takes the largest of their overlaps.
"""

from __future__ import annotations

import dataclasses
import json
from array import array
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd  # type: ignore[import-untyped, unused-ignore]

from annols import memory
from annols.errors import InputError
from annols.study.exports import EXPORT_FILE, PROJECT_FILE, load_annotators, read_export
from annols.styles.answers import ExportedAnnotation, ExportedTask

ANNOTATION_COLUMNS = ["uid", "source", "task_key", "task_id", "annotator", "annotation_id", "created_at",
                      "lead_time", "cancelled", "role"]  # fmt: skip


@dataclass(frozen=True)
class Source:
    given: Path  # as the user named it
    export: Path
    project: dict[str, Any]

    @property
    def overlap(self) -> int | None:
        value = self.project.get("overlap")
        return value if isinstance(value, int) and not isinstance(value, bool) and value >= 1 else None

    @property
    def title(self) -> str:
        return str(self.project.get("title") or "")


def resolve(path: Path) -> Source:
    """A source from a pull folder or an export file, with its project.json if there is one."""
    path = Path(path)
    if path.is_dir():
        export = path / EXPORT_FILE
        if not export.is_file():
            raise InputError(path, "", "", f"no {EXPORT_FILE} in this folder; give a pull output folder "
                             "(annols pull -o) or a Label Studio JSON export file")  # fmt: skip
    elif path.is_file():
        export = path
    else:
        raise InputError(path, "", "", "not found; give a pull output folder or an export.json file")
    return Source(given=path, export=export, project=_project(export.parent / PROJECT_FILE))


def check_protocol(source: Source, protocol: str, variant: str | None) -> None:
    """A pull of another protocol (or variant) would give meaningless tables: refuse it by name."""
    path = source.export.parent / PROJECT_FILE
    pulled, pulled_variant = source.project.get("protocol"), source.project.get("variant")
    if pulled is not None and pulled != protocol:
        raise InputError(path, "", "protocol", f"this folder is a pull of {pulled!r}, not {protocol!r}; "
                         "report each protocol on its own")  # fmt: skip
    if pulled is not None and pulled_variant != variant:
        raise InputError(path, "", "variant", f"this folder is a pull of variant {pulled_variant!r}, not "
                         f"{variant!r}; give --variant {pulled_variant}")  # fmt: skip


def _project(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise InputError(path, "", "", f"not readable as JSON ({e}); pull again or remove it") from None
    if not isinstance(value, dict):
        raise InputError(path, "", "", "expected a JSON object (title, id, overlap, ...); pull again or remove it")
    overlap = value.get("overlap")
    if overlap is not None and (not isinstance(overlap, int) or isinstance(overlap, bool) or overlap < 1):
        raise InputError(path, "", "overlap", f"{overlap!r} is not a number of annotators; fix or remove it")
    return value


# What the report's collectors do with each submitted annotation: (task, annotation, uid).
AddAnnotation = Callable[[ExportedTask, ExportedAnnotation, int], None]


@dataclass
class Study:
    """Every annotation of every source, one row each, and the items they belong to."""

    sources: list[Source]
    annotations: pd.DataFrame  # ANNOTATION_COLUMNS + "kept"
    items: pd.DataFrame  # task_key, task_id, overlap, annotators (kept annotations)
    overlaps: list[tuple[int, str]] = field(default_factory=list)  # per source: (overlap, where it came from)
    source_tasks: list[int] = field(default_factory=list)  # tasks read from each source
    # push --share-identical: task key -> how many systems' identical outputs its task stands for (2 or more)
    shared: dict[str, int] = field(default_factory=dict)

    @property
    def kept(self) -> pd.DataFrame:
        """The judgments that count: one per item and annotator, never cancelled."""
        return self.annotations[self.annotations["kept"]]

    def annotator_of(self) -> pd.Series:
        """uid -> annotator, for joining a protocol's rows."""
        return self.annotations.set_index("uid")["annotator"]


def read_study(sources: list[Source], add: AddAnnotation, overlap_option: int | None) -> Study:
    """Stream every source once, calling ``add`` for each submitted annotation seen the first time.

    The annotations are kept column by column (arrays of numbers, lists of shared strings),
    not as a tuple per annotation: at 100,000 tasks the tuples and their numbers were
    hundreds of megabytes, pinned among the freed objects of the parsed JSON."""
    ints = {name: array("q") for name in ("source", "task_id", "annotation_id")}
    lead_times = array("d")
    cancelled = array("b")
    strings: dict[str, list[Any]] = {name: [] for name in ("task_key", "annotator", "created_at", "role")}
    first: dict[int, int] = {}  # annotation id -> the row it was first seen in
    again: set[tuple[int, str, str]] = set()  # (id, annotator, time) of an id seen before under another
    item_at: dict[str, int] = {}  # key -> its place in item_ids and item_sources
    item_ids = array("q")  # first task id of each item
    item_sources: list[int] = []  # the sources of each item as bits (1 << index): no set per item
    shared: dict[str, str] = {}  # one string object per distinct annotator and role, not one per annotation
    source_tasks = [0] * len(sources)
    sharing: dict[str, int] = {}  # push --share-identical: key -> systems its task stands for
    for index, source in enumerate(sources):
        for task in read_export(source.export, load_annotators(source.export)):
            key = _item_key(task, index)
            if key != task.key:
                task = dataclasses.replace(task, key=key)
            if task.share:  # push --share-identical: the judgments just read, credited to another system too
                sharing[key] = max(sharing.get(key, 0), task.share + 1)
                for a in task.annotations:
                    if not a.cancelled and a.id in first:
                        add(task, a, first[a.id])
                continue
            source_tasks[index] += 1
            if task.role == "study":  # gold items and attention checks are no items of the study
                at = item_at.setdefault(key, len(item_ids))
                if at == len(item_ids):
                    item_ids.append(task.id)
                    item_sources.append(0)
                item_sources[at] |= 1 << index
            for a in task.annotations:
                uid = len(cancelled)
                if a.id:
                    row = first.setdefault(a.id, uid)
                    if row != uid:
                        ident = (a.id, a.annotator, a.created_at)
                        if ident in again or (strings["annotator"][row], strings["created_at"][row]) == ident[1:]:
                            continue
                        again.add(ident)
                for name, value in (("source", index), ("task_id", task.id), ("annotation_id", a.id)):
                    ints[name].append(value)
                strings["task_key"].append(key)
                strings["annotator"].append(shared.setdefault(a.annotator, a.annotator))
                strings["created_at"].append(a.created_at)
                strings["role"].append(shared.setdefault(task.role, task.role))
                lead_times.append(_seconds(a.lead_time))
                cancelled.append(a.cancelled)
                if not a.cancelled:
                    add(task, a, uid)
    columns: dict[str, Any] = {"uid": np.arange(len(cancelled), dtype=np.int64)}
    columns.update({name: np.frombuffer(values, dtype=np.int64) if values else np.zeros(0, dtype=np.int64)
                    for name, values in ints.items()})  # fmt: skip
    columns.update(strings)
    columns["lead_time"] = np.frombuffer(lead_times, dtype=np.float64) if lead_times else np.zeros(0)
    columns["cancelled"] = np.frombuffer(cancelled, dtype=np.int8).astype(bool) if cancelled else np.zeros(0, bool)
    annotations = pd.DataFrame({name: columns[name] for name in ANNOTATION_COLUMNS}).astype(
        {"uid": "int64", "source": "int64", "task_id": "int64", "annotation_id": "int64", "cancelled": "bool"}
    )
    del columns, strings
    annotations["lead_time"] = annotations["lead_time"].astype("float64")
    annotations["kept"] = _kept(annotations) & (annotations["role"] == "study")
    per_item = annotations[annotations["kept"]].groupby("task_key")["annotator"].nunique()
    seen_max = int(per_item.max()) if len(per_item) else 0
    overlaps = [_overlap(s, overlap_option, seen_max) for s in sources]
    items = pd.DataFrame(
        [
            (key, item_ids[at], max(overlaps[i][0] for i in range(len(sources)) if item_sources[at] >> i & 1))
            for key, at in item_at.items()
        ],
        columns=["task_key", "task_id", "overlap"],
    )
    items["annotators"] = items["task_key"].map(per_item).fillna(0).astype(int)
    items = items.sort_values("task_key", kind="stable").reset_index(drop=True)
    del item_at, item_ids, item_sources, first, again
    memory.release()  # the parsed export's freed memory (hundreds of MB at 100,000 tasks) back to the system
    return Study(sources, annotations, items, overlaps, source_tasks, sharing)


def _seconds(value: Any) -> float:
    """A lead time as a number, as ``pd.to_numeric(errors="coerce")`` reads it: nan when it is none."""
    if type(value) in (int, float):
        return float(value)
    if value is None:
        return float("nan")
    return float(pd.to_numeric(pd.Series([value], dtype=object), errors="coerce").astype("float64").iloc[0])


def _item_key(task: ExportedTask, index: int) -> str:
    """The task's key; a task pushed without annols (no key in meta) is only itself, in its source."""
    if task.key == f"task-{task.id}":
        return f"source-{index + 1}:{task.key}"
    return task.key


def _kept(annotations: pd.DataFrame) -> pd.Series:
    submitted = annotations[~annotations["cancelled"]]
    latest = submitted.sort_values(["created_at", "annotation_id", "uid"], kind="stable").drop_duplicates(
        ["task_key", "annotator"], keep="last"
    )
    return annotations["uid"].isin(latest["uid"])


def _overlap(source: Source, option: int | None, seen_max: int) -> tuple[int, str]:
    if source.overlap is not None:
        return source.overlap, PROJECT_FILE
    if option is not None:
        return option, "--overlap"
    return seen_max, "most annotators seen on an item"
