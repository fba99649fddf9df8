"""``annols status``: how far a study is, without a full export.

What it asks the server (the cost grows with the tasks and with the last day's activity,
not with the tasks' text):

- the project (task, annotation and skip counts, the overlap asked for);
- one Data Manager listing of every task's id, annotation and skip counts, annotators
  and ``updated_at`` (5,000 tasks a page);
- the raw export of just the tasks whose annotators cannot be told from the listing (a
  skip among its annotations, or one annotator twice) and of the annotated tasks changed
  in the last day (for the annotations per hour), a few hundred ids a request. When more
  than :data:`RECENT_LIMIT` annotated tasks changed in the last day (an imported study,
  a busy day), those are not exported: the hours then count tasks by their last change
  (``per_hour_counts == "tasks"``), and ``last_day`` per annotator is not known (-1).

With a pull folder, the agreement tables of its report (computed from that pull, not from
the server's current state) are added.
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from annols import incremental
from annols.definition import Definition
from annols.errors import ServerError
from annols.jsonstream import iter_json_array
from annols.labelstudio import LabelStudioClient

DAY = timedelta(hours=24)
AGREEMENT_WORDS = ("agreement", "alpha", "kappa", "kendall")
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
    agreement: list[dict[str, Any]] = field(default_factory=list)  # from --pull: title, columns, rows

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2, ensure_ascii=False) + "\n"


def status(client: LabelStudioClient, definition: Definition, title: str, pull_dir: Path | None = None) -> Status:
    project = client.find_project(title)
    if project is None:
        raise ServerError(f"no project titled {title!r} on {client.url}: check --project (titles are exact)")
    from annols.pull import check_project_protocol

    check_project_protocol(project, definition)
    now = client.server_time()
    info = client.project(project.id)
    overlap = int(info.get("maximum_annotations") or 1)
    emails = {uid: email for email, uid in client.users().items()}
    since = now - DAY
    tasks = 0
    complete = 0
    missing = 0
    annotations = 0
    skipped = 0
    per_user: dict[int, AnnotatorStatus] = {}
    look_closer: list[int] = []  # tasks exported to read their annotations
    recent_tasks: list[tuple[int, datetime, list[int], bool]] = []  # annotated, changed in the last day

    def user(uid: int) -> AnnotatorStatus:
        if uid not in per_user:
            per_user[uid] = AnnotatorStatus(emails.get(uid, f"user-{uid}"))
        return per_user[uid]

    fields = "id,total_annotations,cancelled_annotations,annotators,updated_at"
    for task in client.task_fields(project.id, fields):
        tasks += 1
        done = int(task.get("total_annotations") or 0)
        cancelled = int(task.get("cancelled_annotations") or 0)
        annotations += done
        skipped += cancelled
        complete += done >= overlap
        missing += max(0, overlap - done)
        who = [int(u) for u in task.get("annotators") or []]
        ambiguous = bool(cancelled) or len(set(who)) != done + cancelled
        updated = _parse_time(task.get("updated_at"))
        if updated >= since and done + cancelled:
            recent_tasks.append((int(task["id"]), updated, who, ambiguous))
        elif ambiguous:
            look_closer.append(int(task["id"]))
        else:
            for uid in set(who):
                user(uid).annotations += 1
    per_hour = [0] * 24
    counts = "annotations"
    if len(recent_tasks) <= RECENT_LIMIT:
        look_closer += [task_id for task_id, _, _, _ in recent_tasks]
    else:  # too many to export: the hours count tasks by their last change
        counts = "tasks"
        for task_id, updated, who, ambiguous in recent_tasks:
            per_hour[min(23, int((updated - since) / timedelta(hours=1)))] += 1
            if ambiguous:
                look_closer.append(task_id)
            else:
                for uid in set(who):
                    user(uid).annotations += 1
    for raw in _exported(client, project.id, look_closer):
        for a in raw.get("annotations") or ():
            who = a.get("completed_by")
            uid = int(who["id"] if isinstance(who, dict) else who or 0)
            record = user(uid)
            if a.get("was_cancelled"):
                record.skipped += 1
            else:
                record.annotations += 1
            created = _parse_time(a.get("created_at"))
            if created >= since and counts == "annotations":
                record.last_day += 1
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
        annotators=sorted(per_user.values(), key=lambda a: a.annotator), exported=len(look_closer),
    )  # fmt: skip
    if pull_dir is not None:
        found.agreement = agreement_tables(definition, Path(pull_dir))
    return found


def _exported(client: LabelStudioClient, project_id: int, ids: list[int]) -> Any:
    """The raw export of these tasks, a few hundred at a time, task by task."""
    with tempfile.TemporaryDirectory(prefix="annols-status-") as tmp:
        part = Path(tmp) / "part.json"
        for n in range(0, len(ids), incremental.URL_IDS):
            client.export_ids_to(project_id, ids[n : n + incremental.URL_IDS], part)
            with open(part, encoding="utf-8") as f:
                yield from iter_json_array(f)


def _parse_time(value: Any) -> datetime:
    if not value:
        return datetime.min.replace(tzinfo=UTC)
    return datetime.fromisoformat(str(value).replace("Z", "+00:00")).astimezone(UTC)


def agreement_tables(definition: Definition, pull_dir: Path) -> list[dict[str, Any]]:
    """The agreement tables of the report of the pull in ``pull_dir`` (title, columns, rows)."""
    from annols.report import build_report

    with tempfile.TemporaryDirectory(prefix="annols-status-report-") as tmp:
        result = build_report(definition, [pull_dir], Path(tmp))
    out = []
    for section in result.sections:
        for table in section.tables:
            if any(word in f"{section.title} {table.title}".lower() for word in AGREEMENT_WORDS):
                out.append({"title": table.title, "columns": table.header, "rows": table.rows()})
    return out


def _counted(found: Status) -> str:
    if found.per_hour_counts == "tasks":
        return f"annotated tasks changed (over {RECENT_LIMIT}: counted by task, not exported)"
    return "annotations"


def render(found: Status) -> str:
    """The status as text lines."""
    lines = [
        f"Project {found.project!r} ({found.url}/projects/{found.project_id}), at {found.at}",
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


__all__ = ["AnnotatorStatus", "Status", "agreement_tables", "render", "status"]
