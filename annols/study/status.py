"""``annols status``: how far a study is, without a full export.

What it asks the server (a few dozen requests; the cost grows with the tasks that hold a skip,
with the last day's activity and, where a task holds more annotations than annotators, with the
annotators and the tasks with as many annotations as that one; not with the tasks or their text;
15 s at 100,000 tasks on the embedded server, docs/benchmarks.md):

- the project (the overlap asked for) and its annotators;
- counts by Data Manager filters (one request each, a page of one task): tasks and annotations,
  tasks short of the overlap and their annotations, each annotator's tasks among those without a
  skip. A filter on the annotator counts tasks, not annotations: when those do not add up to
  the annotations, some task holds more annotations than annotators (one user's two, from an
  import or an API client; or one whose user was deleted). Those tasks are found without
  listing every task (:func:`_fewer_annotators`: the tasks with a deleted user's annotation by
  one filter, the others by their number of annotations, a count per annotator and number)
  and exported: the counts per annotator are corrected on those tasks only;
- the listing of the tasks that hold a skip, and the raw export of those and of the annotated
  tasks changed in the last day (for the annotations per hour), a few hundred ids a request.
  When more than :data:`RECENT_LIMIT` annotated tasks changed in the last day (an imported
  study, a busy day), those are not exported: the hours then count tasks by their last change
  (``per_hour_counts == "tasks"``, a count per hour where the activity changes), and
  ``last_day`` per annotator is not known (-1).

``status --pull`` adds the agreement tables of that pull's report (computed from the pull,
not from the server's current state: :func:`annols.report.agreement_tables`).
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from annols.definition import Definition
from annols.errors import ServerError
from annols.jsonstream import iter_json_array
from annols.labelstudio import incremental
from annols.labelstudio.client import LabelStudioClient

DAY = timedelta(hours=24)
RECENT_LIMIT = 2000


@dataclass
class AnnotatorStatus:
    annotator: str
    annotations: int = 0
    skipped: int = 0
    last_day: int = 0  # annotations and skips saved in the last 24 hours


@dataclass
class Status:
    project: str
    project_id: int
    url: str
    at: str  # the server's clock when the status was taken
    overlap: int
    tasks: int
    annotations: int
    skipped: int
    complete: int  # tasks with at least `overlap` annotations
    short: int  # tasks with fewer
    missing: int  # annotations still needed to reach the overlap everywhere
    per_hour: list[int]  # annotations (skips excluded) saved in each of the last 24 hours, oldest first
    per_hour_counts: str  # "annotations", or "tasks" (by their last change) when too many changed to export
    pace: float  # annotations an hour over the last day
    eta: str | None  # when the overlap is reached at that pace (None: no pace, or nothing missing)
    annotators: list[AnnotatorStatus]
    exported: int  # tasks the status exported to tell annotators and times apart
    listed: int = 0  # tasks listed with their annotators, to find those holding more annotations than annotators
    agreement: list[dict[str, Any]] = field(default_factory=list)  # from --pull: title, columns, rows
    instances: list[str] = field(default_factory=list)  # an isolated study's: each instance's project URL

    def to_json(self) -> str:
        found = asdict(self)
        if not self.instances:  # a shared study's status stays as it was
            del found["instances"]
        return json.dumps(found, indent=2, ensure_ascii=False) + "\n"


def status(client: LabelStudioClient, definition: Definition, title: str) -> Status:
    project = client.find_project(title)
    if project is None:
        raise ServerError(f"no project titled {title!r} on {client.url}: check --project (titles are exact)")
    from annols.study.pull import check_project_protocol

    check_project_protocol(project, definition)
    now = client.server_time()
    info = client.project(project.id)
    overlap = int(info.get("maximum_annotations") or 1)
    emails = {uid: email for email, uid in client.users().items()}
    since = now - DAY
    per_user: dict[int, AnnotatorStatus] = {}

    def user(uid: int) -> AnnotatorStatus:
        if uid not in per_user:
            per_user[uid] = AnnotatorStatus(emails.get(uid, f"user-{uid}"))
        return per_user[uid]

    # Counts by Data Manager filters: one request each, however many tasks.
    tasks, annotations = client.count_tasks(project.id)
    short, short_annotations = client.count_tasks(project.id, [_number("total_annotations", "less", overlap)])
    complete = tasks - short
    missing = overlap * short - short_annotations
    fields = "id,total_annotations,cancelled_annotations,updated_at"
    with_skips = {int(t["id"]): t for t in client.task_fields(
        project.id, fields, filters=[_number("cancelled_annotations", "greater", 0)])}  # fmt: skip
    skipped = sum(int(t.get("cancelled_annotations") or 0) for t in with_skips.values())
    look_closer = set(with_skips)  # tasks exported to read their annotations (who skipped, who annotated)
    # Tasks without a skip: an annotator's tasks among them, counted by a filter on the annotator.
    # They add up to the annotations of those tasks unless a task holds more annotations than
    # annotators: those tasks are found and exported, and counted from their annotations instead.
    annotators = client.project_annotators(project.id)
    by_filter = {uid: client.count_tasks(project.id, [_annotator(uid), _NO_SKIP])[0] for uid in annotators}
    for uid, n in by_filter.items():
        if n:
            user(uid).annotations += n
    without_skips = annotations - sum(int(t.get("total_annotations") or 0) for t in with_skips.values())
    listed = 0
    excess = without_skips - sum(by_filter.values())
    if excess > 0:  # (below 0 only when annotations were deleted between the counts)
        fewer = _fewer_annotators(client, project.id, annotators, excess)
        for task_id, who in fewer.tasks.items():
            for uid in who:  # counted once by the filter above; the export counts each annotation
                user(uid).annotations -= 1
            look_closer.add(task_id)
        listed = fewer.listed
    per_hour = [0] * 24
    counts = "annotations"
    exported = set(look_closer)
    if _annotated_since(client, project.id, since) <= RECENT_LIMIT:
        for filters in _ANNOTATED:  # the annotated tasks changed in the last day, listed
            exported.update(int(t["id"]) for t in client.task_fields(
                project.id, "id", filters=filters, updated_after=_iso(since)))  # fmt: skip
    else:  # too many to export: the hours count tasks by their last change, one count per hour
        changed = _hourly(lambda h: _annotated_since(client, project.id, since + timedelta(hours=h)))
        per_hour = [changed[h] - changed[h + 1] for h in range(24)]
        counts = "tasks"
    for raw in _exported(client, project.id, sorted(exported)):
        closer = int(raw["id"]) in look_closer
        for a in raw.get("annotations") or ():
            who = a.get("completed_by")
            uid = int(who["id"] if isinstance(who, dict) else who or 0)
            if closer:
                record = user(uid)
                if a.get("was_cancelled"):
                    record.skipped += 1
                else:
                    record.annotations += 1
            created = _parse_time(a.get("created_at"))
            if created >= since and counts == "annotations":
                user(uid).last_day += 1
                if not a.get("was_cancelled"):
                    per_hour[min(23, int((created - since) / timedelta(hours=1)))] += 1
    if counts == "tasks":
        for record in per_user.values():
            record.last_day = -1  # not known without exporting the day's tasks
    pace = sum(per_hour) / 24
    eta = (now + timedelta(hours=missing / pace)).strftime("%Y-%m-%d %H:%M UTC") if pace and missing else None
    found = Status(
        project=project.title, project_id=project.id, url=client.url, at=now.strftime("%Y-%m-%d %H:%M:%S UTC"),
        overlap=overlap, tasks=tasks, annotations=annotations, skipped=skipped, complete=complete,
        short=tasks - complete, missing=missing, per_hour=per_hour, per_hour_counts=counts, pace=round(pace, 2),
        eta=eta,
        annotators=sorted(per_user.values(), key=lambda a: a.annotator), exported=len(exported), listed=listed,
    )  # fmt: skip
    return found


def _exported(client: LabelStudioClient, project_id: int, ids: list[int]) -> Any:
    """The raw export of these tasks, a few hundred at a time, task by task."""
    with tempfile.TemporaryDirectory(prefix="annols-status-") as tmp:
        part = Path(tmp) / "part.json"
        for n in range(0, len(ids), incremental.URL_IDS):
            client.export_ids_to(project_id, ids[n : n + incremental.URL_IDS], part)
            with open(part, encoding="utf-8") as f:
                yield from iter_json_array(f)


def _number(field: str, operator: str, value: int) -> dict[str, Any]:
    """A Data Manager filter on a number field of the tasks."""
    return {"filter": f"filter:tasks:{field}", "operator": operator, "type": "Number", "value": value}


_NO_SKIP = _number("cancelled_annotations", "equal", 0)
# A count costs about as much as listing this many tasks with their annotators (at 100,000 tasks
# on SQLite: 0.5 s a count, 6.5 s a page of 5,000): a set of fewer tasks than this per annotator
# is listed at once rather than checked with a count per annotator.
TASKS_PER_COUNT = 400


def _annotator(uid: int) -> dict[str, Any]:
    """A Data Manager filter: the tasks holding an annotation (or a skip) by this user."""
    return {"filter": "filter:tasks:annotators", "operator": "contains", "type": "List", "value": uid}


@dataclass
class _Fewer:
    tasks: dict[int, set[int]] = field(default_factory=dict)  # task id -> its annotators (ids)
    excess: int = 0  # annotations beyond one per annotator, on those tasks
    listed: int = 0  # tasks listed to find them


def _fewer_annotators(client: LabelStudioClient, project_id: int, annotators: list[int], excess: int) -> _Fewer:
    """The tasks without a skip that hold more annotations than annotators (``excess`` more in all).

    A task with one annotation cannot hold two by one user: only a deleted user's annotation
    (it has no user any more) makes it one. Those are one filter (annotators "empty"). The
    others are looked for among the tasks with k = 2, 3, ... annotations, one set per k: the
    set is listed with its annotators when small, else first checked with a count per
    annotator (they add up to its annotations unless a task holds two by one user). The
    search ends when the excess is found or no task holds more annotations.
    """
    found = _Fewer()

    def look(filters: list[dict[str, Any]]) -> None:
        for task in client.task_fields(project_id, "id,total_annotations,annotators", filters=filters, annotators=True):
            found.listed += 1
            task_id, total = int(task["id"]), int(task.get("total_annotations") or 0)
            who = {int(u) for u in task.get("annotators") or () if u is not None}
            if len(who) < total and task_id not in found.tasks:
                found.tasks[task_id] = who
                found.excess += total - len(who)

    nobody = [{"filter": "filter:tasks:annotators", "operator": "empty", "type": "List", "value": True},
              _number("total_annotations", "greater", 0), _NO_SKIP]  # fmt: skip
    if client.count_tasks(project_id, nobody)[0]:
        look(nobody)
    k = 1
    while found.excess < excess and client.count_tasks(
            project_id, [_number("total_annotations", "greater", k), _NO_SKIP])[0]:  # fmt: skip
        k += 1
        with_k = [_number("total_annotations", "equal", k), _NO_SKIP]
        tasks, annotations = client.count_tasks(project_id, with_k)
        if not tasks:
            continue
        many = tasks > TASKS_PER_COUNT * len(annotators)
        if many and sum(client.count_tasks(project_id, [_annotator(uid), *with_k])[0] for uid in annotators) \
                == annotations:  # fmt: skip
            continue  # one annotator, one annotation: nothing to look at
        look(with_k)
    return found


# Annotated tasks, in two sets a Data Manager filter (all "and") can tell: with an annotation, or skipped only.
_ANNOTATED = (
    [_number("total_annotations", "greater", 0)],
    [_number("total_annotations", "equal", 0), _number("cancelled_annotations", "greater", 0)],
)


def _annotated_since(client: LabelStudioClient, project_id: int, after: datetime) -> int:
    """How many annotated tasks changed after this time (two counts)."""
    since = {"filter": "filter:tasks:updated_at", "operator": "greater", "type": "Datetime", "value": _iso(after)}
    return sum(client.count_tasks(project_id, [*filters, since])[0] for filters in _ANNOTATED)


def _hourly(after: Callable[[int], int]) -> list[int]:
    """``after(h)`` for h in 0..23 and 0 for 24, for a count that never grows with h: an hour
    range whose two ends are equal is equal throughout, so a quiet or busy stretch costs no counts."""
    known = {0: after(0), 24: 0}

    def fill(low: int, high: int) -> None:
        if high - low < 2 or known[low] == known[high]:
            for h in range(low + 1, high):
                known[h] = known[low]
            return
        middle = (low + high) // 2
        known[middle] = after(middle)
        fill(low, middle)
        fill(middle, high)

    fill(0, 24)
    return [known[h] for h in range(25)]


def _iso(moment: datetime) -> str:
    """A time as the Data Manager's filters take it: ISO with milliseconds and "Z"."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def _parse_time(value: Any) -> datetime:
    if not value:
        return datetime.min.replace(tzinfo=UTC)
    return datetime.fromisoformat(str(value).replace("Z", "+00:00")).astimezone(UTC)


def _counted(found: Status) -> str:
    if found.per_hour_counts == "tasks":
        return f"annotated tasks changed (over {RECENT_LIMIT}: counted by task, not exported)"
    return "annotations"


def render(found: Status) -> str:
    """The status as text lines."""
    where = ", ".join(found.instances) if found.instances else f"{found.url}/projects/{found.project_id}"
    lines = [
        f"Project {found.project!r} ({where}), at {found.at}",
        f"{found.tasks} tasks, {found.annotations} annotations, {found.skipped} skipped; overlap {found.overlap}",
        f"{found.complete} tasks complete, {found.short} short of the overlap ({found.missing} annotations missing)",
        f"Last 24 hours: {sum(found.per_hour)} {_counted(found)} ({found.pace:g} an hour); per hour, oldest first: "
        + " ".join(str(n) for n in found.per_hour),
        "Overlap reached at this pace: "
        + (found.eta or ("now" if not found.missing else "never (no annotations in the last 24 hours)")),
        "annotator\tannotations\tskipped\tlast 24 h",
    ]
    lines += [f"{a.annotator}\t{a.annotations}\t{a.skipped}\t{a.last_day}" for a in found.annotators]
    for table in found.agreement:
        lines.append(f"From the pull: {table['title']}")
        lines.append("\t".join(table["columns"]))
        lines += ["\t".join(row) for row in table["rows"]]
    return "\n".join(lines)


__all__ = ["AnnotatorStatus", "Status", "render", "status"]
