"""Pulling only what changed since the last pull into the same folder.

Label Studio's raw JSON export is ``json.dumps`` of the list of tasks (``[``, the tasks
joined by ``", "``, ``]``), each task serialised on its own and starting with
``{"id": N, "annotations": ``. So a task that did not change has the same bytes in every
export, and an export can be cut into tasks by their byte ranges without parsing it.
annols keeps ``export.json`` in task-id order (a full export is put in that order if the
server sent it otherwise, as PostgreSQL may), so a full pull and an incremental one
write the same bytes.

An incremental pull, into a folder holding an earlier pull of the same project:

1. lists the id and ``updated_at`` of the tasks whose ``updated_at`` is after the earlier
   pull's mark (a Data Manager filter), and exports again those whose ``updated_at`` is not
   the one the earlier export holds, and the new ones: compared per task, to the
   microsecond, so a task the earlier export already holds as it is now is not fetched;
2. finds deleted tasks by counting: the server's task count against the earlier ids
   plus the new ones; if some are missing, id ranges are counted (one request each,
   halving) until each missing id is found;
3. exports the changed tasks by id (``/api/projects/P/export?ids[]=...``, a few hundred
   ids a request) and splices them, in id order, between the earlier export's unchanged
   byte ranges.

The mark is a value of the server's own data, read just before the export: the latest
``updated_at`` among the project's tasks (in an incremental pull, the latest of those listed
in step 1, which is the same; if none is listed, the earlier mark). No clock is read,
neither the client's nor the server's. Label Studio commits a save (an annotation created, edited, skipped or deleted,
with the task's counts) before it takes the task's new ``updated_at`` (``Annotation.save``,
then ``update_task``; 1.23.2). So a save the earlier export did not see was committed after
the export read its task, which is after the mark was read: its ``updated_at`` is after the
mark, whatever the second, and the task is listed. A task saved between the mark and the
export is listed too, and is fetched only if it changed again since. A new task's
``updated_at`` is its creation. Not seen: changes that do not move ``updated_at``: drafts (the
export carries an annotator's unsubmitted draft; submitting it moves it), and a prediction
added through the API in the instant between the two statements that save it (Label Studio
moves ``updated_at`` first there; annols imports predictions with their tasks).

The pull then checks its counts against the server's as a full pull does (an incremental export
that does not match is followed by a full one). What it does with the export follows what changed
(:mod:`annols.study.pull`): the findings of the tasks kept as they were are the earlier pull's
(``pull-state.json`` records what they were found under), and a format whose result files are
records per judgment keeps their rows (``.annols-rows.json``); only the changed tasks are read
and converted, and every file is still byte for byte a full pull's.
"""

from __future__ import annotations

import itertools
import json
import re
import shutil
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from annols import files
from annols.errors import WriteError
from annols.labelstudio.client import LabelStudioClient

STATE_FILE = "pull-state.json"
EXPORT_FILE = "export.json"
URL_IDS = 400  # ids per export request: keeps its URL under 8 KB (nginx's default header buffer)
FULL_SHARE = 0.25  # more changed than this share of the tasks: one full export is faster than by ids
LIST_PAGE = 1000  # tasks a listing page: the Data Manager's cost a task grows with larger pages
MAX_COUNTS = 400  # id-range counts to find deleted tasks before listing every id instead
# json.dumps's default separators (", ", ": ") or the compact ones ("," and ":"), which 1.23 sends.
_STYLES = {
    b'[{"id": ': (re.compile(rb'\{"id": (\d+), "annotations": '), b", "),
    b'[{"id":': (re.compile(rb'\{"id":(\d+),"annotations":'), b","),
}
_CHUNK = 8 << 20

Segment = tuple[int, int, int]  # task id, start, end (bytes [start, end) of the task's JSON)


class ExportShape(ValueError):
    """The export is not the ``json.dumps`` of a list of tasks annols can cut into tasks."""


def separator(path: Path) -> bytes:
    """What separates two tasks in this export (``", "`` or ``","``)."""
    with open(path, "rb") as f:
        head = f.read(8)
    for start, (_, sep) in _STYLES.items():
        if head.startswith(start):
            return sep
    return b","


def index_export(path: Path) -> list[Segment]:
    """The byte range of each task of a raw export, in file order; ExportShape if it is not one."""
    size = path.stat().st_size
    starts: list[tuple[int, int]] = []  # (offset, id)
    with open(path, "rb") as f:
        head = f.read(8)
        if head == b"[]":
            return []
        found = [style for start, style in _STYLES.items() if head.startswith(start)]
        if not found:
            raise ExportShape("it does not start as a list of tasks")
        pattern, sep = found[0]
        before = b"}" + sep
        f.seek(0)
        base = 0
        carry = b""
        while True:
            chunk = f.read(_CHUNK)
            if not chunk:
                break
            data = carry + chunk
            offset = base - len(carry)
            for m in pattern.finditer(data):
                at = offset + m.start()
                if starts and at <= starts[-1][0]:
                    continue  # seen in the carried overlap
                if at == 1 or (m.start() >= len(before) and data[m.start() - len(before) : m.start()] == before):
                    starts.append((at, int(m.group(1))))
            base += len(chunk)
            carry = data[-64:]
        f.seek(size - 2)
        tail = f.read(2)
    if not starts or starts[0][0] != 1 or tail != b"}]":
        raise ExportShape("it does not end as a list of tasks")
    ends = [at - len(sep) for at, _ in starts[1:]] + [size - 1]
    return [(task_id, at, end) for (at, task_id), end in zip(starts, ends, strict=True)]


def write_spliced(out: Path, pieces: Iterable[tuple[Path, int, int]], sep: bytes) -> int:
    """``[`` + the byte ranges joined by ``sep`` + ``]`` into ``out`` (ranges next to each other
    in one file copied as one); returns the tasks written."""
    count = 0
    runs: list[tuple[Path, int, int]] = []
    for source, start, end in pieces:
        count += 1
        if runs and runs[-1][0] == source and runs[-1][2] + len(sep) == start:
            runs[-1] = (source, runs[-1][1], end)
        else:
            runs.append((source, start, end))
    handles: dict[Path, Any] = {}
    try:
        with files.atomic_open(out, "wb") as f:
            f.write(b"[")
            for n, (source, start, end) in enumerate(runs):
                if n:
                    f.write(sep)
                if source not in handles:
                    handles[source] = open(source, "rb")  # noqa: SIM115 - closed below
                try:
                    files.copy_range(f, handles[source], start, end)
                except ValueError:
                    raise ExportShape(f"{source} is shorter than its index") from None
            f.write(b"]")
    finally:
        for h in handles.values():
            h.close()
    return count


def sort_export(path: Path, expected: int | None = None) -> bool:
    """Put a raw export in task-id order (False if it was already, or cannot be cut into ``expected`` tasks)."""
    try:
        segments = index_export(path)
    except ExportShape:
        return False
    ids = [s[0] for s in segments]
    if all(a < b for a, b in itertools.pairwise(ids)):
        return False
    if expected is not None and len(segments) != expected:
        return False  # a split the pattern found inside a task: leave the server's order
    ordered = path.with_name(path.name + ".sorted")
    write_spliced(ordered, ((path, start, end) for _, start, end in sorted(segments)), separator(path))
    files.replace_durably(ordered, path)
    return True


# --- the record of a pull -------------------------------------------------------------------


def _iso(when: datetime) -> str:
    # With milliseconds and "Z": "+00:00" made Label Studio 1.23 answer 500.
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{when.microsecond // 1000:03d}Z"


def _moment(value: Any) -> datetime | None:
    """An ``updated_at`` as the server writes it ("2026-11-26T00:41:03.914193Z"), to the microsecond."""
    try:
        when = datetime.fromisoformat(str(value))
    except ValueError:
        return None
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


def write_state(folder: Path, project_id: int, url: str, mark: str | None, export: Path, tasks: int) -> None:
    # "mark": the latest updated_at of the project's tasks before the export (null: it had none).
    state = {"project_id": project_id, "url": url, "mark": mark, "tasks": tasks,
             "export_bytes": export.stat().st_size}  # fmt: skip
    files.write_text(folder / STATE_FILE, json.dumps(state, indent=2) + "\n")


def add_to_state(folder: Path, key: str, value: Any) -> None:
    """Record ``value`` under ``key`` in the pull-state a pull wrote into ``folder`` (what else it kept of its
    work for the next pull, e.g. the digest of its findings' context)."""
    path = folder / STATE_FILE
    state = json.loads(path.read_text(encoding="utf-8"))
    state[key] = value
    files.write_text(path, json.dumps(state, indent=2) + "\n")


@dataclass(frozen=True)
class Earlier:
    """An earlier pull of the project in the folder: its export cut into tasks, and its mark (None:
    the project had no tasks, so every task is listed); ``state``: its whole record (``pull-state.json``)."""

    export: Path
    segments: list[Segment]
    mark: str | None
    state: dict[str, Any] = field(default_factory=dict)


def earlier_pull(folder: Path, project_id: int, url: str) -> tuple[Earlier | None, str]:
    """The earlier pull in ``folder`` to build on, or (None, why a full export is needed; "" if
    the folder holds no pull at all)."""
    state_path = folder / STATE_FILE
    export = folder / EXPORT_FILE
    if not state_path.exists():
        return None, ("its export.json has no record of when it was pulled" if export.exists() else "")
    try:
        state = json.loads(state_path.read_text(encoding="utf-8"))
        recorded = (int(state["project_id"]), str(state["url"]), int(state["tasks"]), int(state["export_bytes"]))
        # Before "mark", a pull recorded "since": the server's clock less two minutes, as safe a cut.
        mark = state["mark"] if "mark" in state else state["since"]
        if mark is not None and _moment(mark) is None:
            raise ValueError(mark)
    except (OSError, ValueError, KeyError, TypeError):
        return None, f"its record of the earlier pull ({STATE_FILE}) is damaged"
    pid, purl, tasks, size = recorded
    if pid != project_id or purl.rstrip("/") != url.rstrip("/"):
        return None, f"it holds a pull of project {pid} on {purl}, not of project {project_id} on {url}"
    try:
        found = export.stat().st_size
    except OSError:
        return None, "its export.json is missing"
    if found != size:
        return None, f"its export.json is damaged ({found} bytes, the pull wrote {size})"
    try:
        segments = index_export(export)
    except (ExportShape, OSError) as e:
        return None, f"its export.json is damaged ({e})"
    ids = [s[0] for s in segments]
    if len(segments) != tasks or any(a >= b for a, b in itertools.pairwise(ids)):
        return None, f"its export.json is damaged (not the {tasks} tasks in id order the pull wrote)"
    return Earlier(export=export, segments=segments, mark=mark, state=state), ""


# --- fetching ---------------------------------------------------------------------------------


@dataclass
class Changes:
    changed: int = 0  # tasks exported again (edited, annotated, skipped, new)
    new: int = 0
    deleted: int = 0
    requests: int = 0  # export requests
    tasks: int = 0  # in the merged export
    mark: str | None = None  # the latest updated_at listed (the earlier mark if none was)
    fetched: frozenset[int] = frozenset()  # the ids of the tasks exported again
    segments: list[Segment] = field(default_factory=list)  # the merged export's tasks, as index_export gives them


@dataclass
class Fetcher:
    """Writes a pull's export.json: the changes spliced into an earlier export, or a full export.

    Called once per attempt of the pull; a third attempt (the counts did not match twice) is a
    full export.
    """

    client: LabelStudioClient
    project_id: int
    earlier: Earlier | None
    mark: str | None = None
    tasks: int = 0
    changes: Changes | None = None
    attempts: int = 0
    full_reason: str = ""

    def __call__(self, export: Path, expected_tasks: int) -> None:
        self.attempts += 1
        if self.earlier is not None and self.attempts <= 2:
            changes = fetch_changes(self.client, self.project_id, self.earlier, export)
            if changes is not None:
                self.changes = changes
                self.tasks = changes.tasks
                self.mark = changes.mark
                return
            self.full_reason = ("more than a quarter of its tasks were updated since (a full export is then the "
                                "faster way)")  # fmt: skip
        if self.earlier is not None and self.attempts == 3:
            self.client.notice("The incremental export did not match the server's counts twice: exporting in full")
        self.changes = None
        self.mark = self.client.latest_update(self.project_id)  # before the export: see the module's doc
        self.client.export_to(self.project_id, export)
        sort_export(export, expected_tasks)
        try:
            self.tasks = len(index_export(export))
        except ExportShape:
            self.tasks = -1  # recorded so: the next pull into this folder is a full one


def fetch_changes(client: LabelStudioClient, project_id: int, earlier: Earlier, export: Path) -> Changes | None:
    """Write into ``export`` the earlier export with the tasks changed since fetched again; None
    (nothing written) when so many changed that a full export is the faster way."""
    known = [s[0] for s in earlier.segments]
    known_set = set(known)
    most = max(URL_IDS, int(FULL_SHARE * len(known)))
    listed = changed_since(client, project_id, earlier, most)
    if listed is None:
        return None
    changed, mark = listed
    new = [i for i in changed if i not in known_set]
    total = int(client.project(project_id, "task_number").get("task_number") or 0)
    deleted = set(find_deleted(client, project_id, sorted(known_set | set(new)), total))
    wanted = [i for i in changed if i not in deleted]
    parts = export.parent / ".annols-changed"
    parts.mkdir(exist_ok=True)
    fetched: dict[int, tuple[Path, int, int]] = {}
    changes = Changes(new=len(new), mark=mark)
    try:
        for n in range(0, len(wanted), URL_IDS):
            part = parts / f"{n // URL_IDS}.json"
            client.export_ids_to(project_id, wanted[n : n + URL_IDS], part)
            changes.requests += 1
            try:
                segments = index_export(part)
            except ExportShape as e:
                raise ExportShape(f"the export of changed tasks of project {project_id} is not a list ({e})") from None
            for task_id, start, end in segments:
                fetched[task_id] = (part, start, end)
        # Asked for, not exported: deleted since they were listed.
        deleted |= {i for i in wanted if i not in fetched}
        pieces: list[tuple[int, Path, int, int]] = [
            (task_id, earlier.export, start, end)
            for task_id, start, end in earlier.segments
            if task_id not in deleted and task_id not in fetched
        ]
        pieces += [(task_id, *where) for task_id, where in fetched.items()]
        pieces.sort(key=lambda p: p[0])
        sep = separator(earlier.export)
        changes.tasks = write_spliced(export, ((p, s, e) for _, p, s, e in pieces), sep)
        at = 1  # after "["
        for task_id, _, start, end in pieces:
            changes.segments.append((task_id, at, at + end - start))
            at += end - start + len(sep)
    except OSError as e:
        raise WriteError(export, e) from e
    finally:
        shutil.rmtree(parts, ignore_errors=True)
    changes.changed = len(fetched)
    changes.fetched = frozenset(fetched)
    changes.deleted = len(deleted & known_set)
    return changes


def changed_since(
    client: LabelStudioClient, project_id: int, earlier: Earlier, most: int
) -> tuple[list[int], str | None] | None:
    """The ids, sorted, of the tasks new or changed since the earlier export (listed if updated after its
    mark, kept if their ``updated_at`` is not the one that export holds), and the new mark: the latest
    ``updated_at`` listed, or the earlier mark. None past ``most`` listed."""
    # The Data Manager's filter takes milliseconds: the cut is at or before the mark, and the
    # comparison per task below is what decides.
    cut = None if earlier.mark is None else _moment(earlier.mark)
    after = None if cut is None else _iso(cut)
    where = {task_id: (start, end) for task_id, start, end in earlier.segments}
    listed: list[tuple[int, datetime | None]] = []
    mark, latest = earlier.mark, cut
    for task in client.task_fields(project_id, "id,updated_at", LIST_PAGE, updated_after=after):
        if len(listed) == most:
            return None
        updated = _moment(task.get("updated_at"))
        listed.append((int(task["id"]), updated))
        if updated is not None and (latest is None or updated > latest):
            mark, latest = str(task["updated_at"]), updated
    changed = []
    with open(earlier.export, "rb") as f:
        for task_id, updated in listed:
            if task_id in where:
                start, end = where[task_id]
                f.seek(start)
                held = _moment(json.loads(f.read(end - start)).get("updated_at"))
                if updated is not None and held == updated:
                    continue
            changed.append(task_id)
    return sorted(changed), mark


def find_deleted(client: LabelStudioClient, project_id: int, ids: Sequence[int], total: int) -> list[int]:
    """Which of ``ids`` (sorted; every task the project held or gained) are gone, given the
    server's task count ``total``: none if the counts agree, else by counting id ranges."""
    missing = len(ids) - total
    if missing == 0:
        return []
    if 0 < missing <= MAX_COUNTS // 16:
        gone: list[int] = []
        budget = [MAX_COUNTS]
        if _bisect(client, project_id, ids, 0, len(ids) - 1, missing, gone, budget):
            return gone
    present = {int(t["id"]) for t in client.task_fields(project_id, "id")}
    return [i for i in ids if i not in present]


def _bisect(
    client: LabelStudioClient, project_id: int, ids: Sequence[int], i: int, j: int, missing: int,
    gone: list[int], budget: list[int],
) -> bool:  # fmt: skip
    """Find the ``missing`` gone ids among ids[i..j]; False when the counts do not add up (tasks
    arrived meanwhile) or the request budget ran out."""
    if missing == 0:
        return True
    if missing == j - i + 1:
        gone.extend(ids[i : j + 1])
        return True
    if i == j or budget[0] <= 0:
        return False
    mid = (i + j) // 2
    budget[0] -= 1
    count, _ = client.id_range(project_id, ids[i], ids[mid])
    left = (mid - i + 1) - count
    if left < 0 or left > missing:
        return False
    return _bisect(client, project_id, ids, i, mid, left, gone, budget) and _bisect(
        client, project_id, ids, mid + 1, j, missing - left, gone, budget
    )
