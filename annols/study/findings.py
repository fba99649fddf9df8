"""What a pull checks it can trust: the server's tasks and annotations against the coordinator's manifest.

On Label Studio's community edition every account may do what the coordinator may: edit or
delete another annotator's annotation, post one in another's name, rewrite a task's meta,
add or delete tasks. None of that can be prevented there (docs/security.md); a pull makes it
visible. Each finding is one line naming the task (and the annotation):

- ``no-manifest``: pull had no manifest of the project, so nothing below about tasks could be checked;
- ``task-added``: a task the push did not make (its id is in no manifest row);
- ``task-deleted``: a task the push made that the server no longer holds;
- ``key-changed``: a task whose meta key is not the one the manifest says push sent for its id;
- ``meta-changed``: a task whose meta is not what push sent (a digest in the manifest), e.g.
  systems or a role tag written into it; for a project pushed before the manifest kept them,
  ``systems-changed`` / ``role-changed`` when the meta's systems or role tag contradict the manifest;
- ``data-changed``: a task whose data (what annotators are shown) is not what push sent (a digest in
  the manifest): its judgments are left out of the results (``left-out``);
- ``config-changed``: the project's label config is not the one push sent (a digest in the manifest's
  header), e.g. the panes under "Answer 1" and "Answer 2" swapped: every judgment the pull has not seen
  before under the config push sent is left out (``left-out``);
- ``overlap-changed``: the project asks for another number of annotators per task than push set;
- ``completed-by-changed``: an annotation credited to another account than when an earlier pull into the
  same folder saw it;
- ``left-out``: the judgments of a task left out of the results and the report, and why (counted);
- ``unchecked``: the manifest keeps no digest of what push sent (the data, label config or overlap of a
  study pushed before annols kept them): what annotators were shown could not be checked. It is said,
  but fails no ``--strict`` pull (nothing was found changed);
- ``edited-by-other``: an annotation last saved (``updated_by``) by another user than the one it is
  credited to (``completed_by``): an edit of someone else's annotation, or one posted in their name;
- ``annotation-gone``: an annotation an earlier pull into the same folder saw that the server no
  longer holds;
- ``judge-task-deleted``: a hidden judge's answer whose task was deleted (a warning, not a failed pull);
- ``not-the-annotator``: in an isolated study (:mod:`annols.study.isolate`), an annotation on an
  annotator's own instance credited to anyone else; it is kept out of the merged tables.

The study's tables do not depend on any of this: they are unblinded from the manifest, never
from the meta (:mod:`annols.study.exports`).
"""

from __future__ import annotations

import csv
import dataclasses
import hashlib
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from annols import files
from annols.definition import blinding
from annols.errors import InputError
from annols.jsonstream import JSONStreamError, iter_json_array
from annols.study import roles
from annols.study.manifest import config_digest, data_digest, meta_digest, server_key

FINDINGS_FILE = "findings.csv"
COLUMNS = ["task_id", "task_key", "annotation_id", "finding", "detail"]
KINDS = (
    "no-manifest", "task-added", "task-deleted", "key-changed", "meta-changed", "systems-changed", "role-changed",
    "edited-by-other", "annotation-gone", "judge-task-deleted", "not-the-annotator", "data-changed",
    "config-changed", "overlap-changed", "completed-by-changed", "left-out", "unchecked",
)  # fmt: skip
# Kept from an earlier pull into the same folder: the export that showed them is replaced by one that does not.
KEPT = ("annotation-gone", "completed-by-changed", "config-changed")
# Said, but no reason to fail a --strict pull: nothing was found changed (a blind-only pull is asked for).
NOT_STRICT = ("unchecked", "no-manifest")


@dataclass(frozen=True)
class Finding:
    kind: str
    detail: str
    task_id: int | None = None
    task_key: str = ""
    annotation_id: int | None = None

    def line(self) -> str:
        """One line naming the task and annotation: ``task 12 (key) annotation 34: kind: detail``."""
        where = "project"
        if self.task_id is not None:
            where = f"task {self.task_id}" + (f" ({self.task_key})" if self.task_key else "")
        if self.annotation_id is not None:
            where += f" annotation {self.annotation_id}"
        return f"{where}: {self.kind}: {self.detail}"

    def row(self) -> list[Any]:
        blank = ""
        return [blank if self.task_id is None else self.task_id, self.task_key,
                blank if self.annotation_id is None else self.annotation_id, self.kind, self.detail]  # fmt: skip


Seen = dict[int, dict[int, Any]]  # task id -> annotation id -> its completed_by


def user_id(value: Any) -> int | None:
    """A user id from an export's ``completed_by`` / ``updated_by`` (an id, or an object with one)."""
    if isinstance(value, dict):
        value = value.get("id")
    try:
        return None if value is None else int(value)
    except (TypeError, ValueError):
        return None


def annotations_of(export: Path) -> Seen:
    """Task id -> annotation id -> completed_by, of every task of a raw JSON export (empty if it is unreadable)."""
    seen: Seen = {}
    try:
        with open(export, encoding="utf-8") as f:
            for raw in iter_json_array(f):
                seen[int(raw["id"])] = {int(a["id"]): user_id(a.get("completed_by"))
                                        for a in raw.get("annotations") or () if "id" in a}  # fmt: skip
    except (OSError, JSONStreamError, ValueError, KeyError, TypeError):
        return {}  # no earlier pull to compare with, or not one annols can read: nothing is said about it
    return seen


class Annotations(Mapping[int, dict[int, Any]]):
    """Task id -> annotation id -> completed_by of an export cut into tasks (``segments``: task id, start, end),
    each task read when asked for: a re-pull asks only of the tasks that changed. ``leave``: (task id,
    annotation id) pairs not given (the judgments an earlier pull left out)."""

    def __init__(self, export: Path, segments: Sequence[tuple[int, int, int]],
                 leave: frozenset[tuple[int, int]] = frozenset()) -> None:  # fmt: skip
        self._export, self._leave = export, leave
        self._where = {task_id: (start, end) for task_id, start, end in segments}
        self._read: dict[int, dict[int, Any]] = {}

    def without(self, leave: frozenset[tuple[int, int]]) -> Annotations:
        return Annotations(self._export, [(t, s, e) for t, (s, e) in self._where.items()], leave)

    def __getitem__(self, task_id: int) -> dict[int, Any]:
        if task_id not in self._read:
            start, end = self._where[task_id]
            try:
                with open(self._export, "rb") as f:
                    f.seek(start)
                    raw = json.loads(f.read(end - start))
                done = {int(a["id"]): user_id(a.get("completed_by")) for a in raw.get("annotations") or () if "id" in a}
            except (OSError, ValueError, KeyError, TypeError, AttributeError):
                done = {}  # as annotations_of: what annols cannot read says nothing
            self._read[task_id] = {a: by for a, by in done.items() if (task_id, a) not in self._leave}
        return self._read[task_id]

    def __iter__(self) -> Iterator[int]:
        return iter(self._where)

    def __len__(self) -> int:
        return len(self._where)


def check(
    export: Path,
    rows: Iterable[Mapping[str, Any]] | None,
    users: Mapping[int, str],
    earlier: Mapping[int, Mapping[int, Any]] | None = None,
    trusted: Iterable[int] = (),
    why: str = "no manifest of this project: systems and roles were read from the server's task meta, unchecked; "
    "import it with `annols manifest import`",
) -> list[Finding]:
    """The findings of a raw JSON export against the manifest's ``rows`` (None: pull had no manifest, ``why``).

    ``earlier``: the annotations an earlier pull into the same folder saw; ``trusted``: users whose
    edits of others' annotations are no finding (the coordinator's own account, which pull runs as).
    """
    return scan(export, None if rows is None else [dict(r) for r in rows], users, Context(earlier=earlier or {},
                trusted=frozenset(trusted), why=why))[1]  # fmt: skip


@dataclass(frozen=True)
class Context:
    """What a pull's findings of each task depend on beside the task itself and its manifest row."""

    earlier: Mapping[int, Mapping[int, Any]] = dataclasses.field(default_factory=dict)  # annotations a pull saw
    counted: Mapping[int, Mapping[int, Any]] | None = None  # of those, the ones it counted (None: all)
    trusted: frozenset[int] = frozenset()
    config_changed: bool = False
    annotator: str | None = None  # an isolated study's instance: everyone else's annotation is a finding
    why: str = "no manifest of this project"

    def digest(self, checked: bool) -> str:
        """What, beside a task's bytes, its manifest row and the names of the users it holds, decides its own
        findings: equal digests and an unchanged task give the same findings (:class:`Carry`)."""
        key = [FINDINGS_VERSION, sorted(self.trusted), self.config_changed, self.annotator, checked]
        return hashlib.sha256(json.dumps(key, ensure_ascii=False).encode("utf-8")).hexdigest()


# The findings of a task that are a function of its bytes, its manifest row and the Context's digest alone.
TASK_KINDS = ("task-added", "key-changed", "data-changed", "meta-changed", "systems-changed", "role-changed",
              "edited-by-other", "not-the-annotator")  # fmt: skip
FINDINGS_VERSION = 1  # raise it when a finding of TASK_KINDS is found or worded otherwise


@dataclass(frozen=True)
class Carry:
    """An earlier pull's findings of the tasks that did not change since (their bytes in the export, their
    manifest row, no judgment left out, the :class:`Context` the same): taken for theirs, not parsed again.

    ``segments``: the export's tasks as byte ranges (task id, start, end; in file order)."""

    segments: Sequence[tuple[int, int, int]]
    unchanged: frozenset[int]
    findings: Mapping[int, Sequence[Finding]]


def scan(
    export: Path,
    rows: list[dict[str, Any]] | None,
    users: Mapping[int, str],
    context: Context,
    counts: list[int] | None = None,
    carry: Carry | None = None,
) -> tuple[list[Finding], list[Finding]]:
    """One pass over a raw export: marks the ``rows`` whose judgments are left out (:func:`left_out`) and finds
    what the server holds against the manifest (:func:`check`, and :func:`not_the_annotator` with
    ``context.annotator``). Returns (the ``left-out`` findings, the others). With ``carry``, the unchanged tasks'
    findings are the earlier pull's, and only the others are read."""
    found: list[Finding] = []
    left: list[Finding] = []
    if rows is None:
        found.append(Finding("no-manifest", context.why))
    by_id = {int(r["task_id"]): r for r in rows or () if isinstance(r.get("task_id"), int)}
    seen: set[int] = set()
    for task_id, raw in _tasks(export, carry):
        seen.add(task_id)
        if raw is None:  # unchanged since the earlier pull (Carry)
            assert carry is not None
            found.extend(carry.findings.get(task_id, ()))
            continue
        row = by_id.get(task_id)
        if row is not None:
            left.extend(_left_out(raw, task_id, row, context, counts))
        found.extend(_task_findings(raw, task_id, row, rows is not None, users, set(context.trusted)))
        found.extend(_gone(task_id, _key_of(raw, row), raw, context.earlier.get(task_id, {})))
        if context.annotator is not None:
            found.extend(_not_the_annotator(raw, users, context.annotator))
    for task_id, row in sorted(by_id.items()):
        if task_id not in seen:
            before = len(context.earlier.get(task_id, {}))
            also = f", with the {before} annotation(s) an earlier pull saw" if before else ""
            found.append(Finding("task-deleted", f"a task the push made is no longer on the server{also}",
                                 task_id, str(row["key"])))  # fmt: skip
    return left, found


def _tasks(export: Path, carry: Carry | None) -> Iterator[tuple[int, dict[str, Any] | None]]:
    """(task id, the task parsed; None for a task ``carry`` holds unchanged), in the export's order."""
    try:
        if carry is None:
            with open(export, encoding="utf-8") as f:
                for raw in iter_json_array(f):
                    yield int(raw["id"]), raw
            return
        with open(export, "rb") as b:
            for n, (task_id, start, end) in enumerate(carry.segments):
                if task_id in carry.unchanged:
                    yield task_id, None
                    continue
                b.seek(start)
                try:
                    raw = json.loads(b.read(end - start))
                except ValueError as e:
                    raise JSONStreamError(str(e), n) from None
                yield int(raw["id"]), raw
    except JSONStreamError as e:
        raise InputError(export, f"task {e.index + 1}", "", f"not a Label Studio JSON export ({e})") from None


def _left_out(raw: Mapping[str, Any], task_id: int, row: dict[str, Any], context: Context,
              counts: list[int] | None) -> Iterator[Finding]:  # fmt: skip
    ids = [user_id(a.get("id")) for a in raw.get("annotations") or ()]
    if "data" in row and data_digest(raw.get("data") or {}) != row["data"]:
        out, why = ids, "its data changed"
    elif context.config_changed:
        done = (context.earlier if context.counted is None else context.counted).get(task_id, {})
        out, why = [i for i in ids if i not in done], "saved since the label config changed"
    else:
        out, why = [], ""
    if out:
        row["left_out"] = sorted(i for i in out if i is not None)
        if counts is not None:
            gone = set(out)
            for a in raw.get("annotations") or ():
                if user_id(a.get("id")) in gone:
                    counts[1 if a.get("was_cancelled") else 0] += 1
        yield Finding("left-out", f"{len(out)} judgment(s) left out of the results: {why}", task_id, str(row["key"]))


def not_the_annotator(export: Path, users: Mapping[int, str], annotator: str) -> Iterator[Finding]:
    """Annotations of an export credited to anyone but ``annotator``: on an isolated study's instance
    (:mod:`annols.study.isolate`) nobody else should annotate, not even the coordinator's admin."""
    for _, raw in _tasks(export, None):
        assert raw is not None
        yield from _not_the_annotator(raw, users, annotator)


def _not_the_annotator(raw: Mapping[str, Any], users: Mapping[int, str], annotator: str) -> Iterator[Finding]:
    for a in raw.get("annotations") or ():
        who = user_id(a.get("completed_by"))
        email = _name(who, users)
        if email.lower() != annotator.lower():
            yield Finding("not-the-annotator", f"credited to {email}, but this instance is {annotator}'s "
                          "alone", int(raw["id"]), _key_of(raw, None), user_id(a.get("id")))  # fmt: skip


def _key_of(raw: Mapping[str, Any], row: Mapping[str, Any] | None) -> str:
    if row is not None:
        return str(row["key"])
    return str((raw.get("meta") or {}).get(blinding.META_KEY) or "")


def _task_findings(
    raw: Mapping[str, Any],
    task_id: int,
    row: Mapping[str, Any] | None,
    checked: bool,
    users: Mapping[int, str],
    trusted: set[int],
) -> Iterator[Finding]:
    meta = raw.get("meta") or {}
    key = _key_of(raw, row)
    if checked and row is None:
        yield Finding("task-added", "a task the push did not make (added on the server since)", task_id, key)
    elif row is not None:
        if meta.get(blinding.META_KEY) != server_key(row):
            yield Finding("key-changed", f"its meta says key {meta.get(blinding.META_KEY)!r}", task_id, key)
        if "data" in row and data_digest(raw.get("data") or {}) != row["data"]:
            yield Finding("data-changed", "its data (what annotators are shown) is not what push sent", task_id, key)
        if "meta" in row:
            if meta_digest(meta) != row["meta"]:
                extra = sorted(k for k in meta if k != blinding.META_KEY)
                what = f" (it holds {', '.join(extra)})" if extra else ""
                yield Finding("meta-changed", f"its meta is not what push sent{what}", task_id, key)
        else:  # pushed before the manifest kept a digest: the meta's systems and role tag against the manifest
            encoded = meta.get(blinding.META_SYSTEMS)
            if isinstance(encoded, str) and _decoded(encoded) != tuple(row.get("systems") or ()):
                yield Finding("systems-changed", "its meta's systems are not the manifest's", task_id, key)
            if "role" in row and roles.META_TAG in meta and roles.role_of(meta, str(row["key"])) != row["role"]:
                yield Finding("role-changed", f"its meta's role tag is not the manifest's ({row['role']})", task_id,
                              key)  # fmt: skip
    for a in raw.get("annotations") or ():
        by, changed = user_id(a.get("completed_by")), user_id(a.get("updated_by"))
        if changed is not None and changed != by and changed not in trusted:
            yield Finding("edited-by-other", f"credited to {_name(by, users)}, last saved by {_name(changed, users)}",
                          task_id, key, user_id(a.get("id")))  # fmt: skip


def _decoded(encoded: str) -> tuple[str, ...] | None:
    try:
        return blinding.decode_systems(encoded)
    except ValueError:
        return None


def _gone(task_id: int, key: str, raw: Mapping[str, Any], before: Mapping[int, Any]) -> Iterator[Finding]:
    now = {user_id(a.get("id")): user_id(a.get("completed_by")) for a in raw.get("annotations") or ()}
    for annotation_id, by in sorted(before.items()):
        if annotation_id not in now:
            yield Finding("annotation-gone", f"an annotation by user {by} an earlier pull saw is no longer on the "
                          "server", task_id, key, annotation_id)  # fmt: skip
        elif now[annotation_id] != by:
            yield Finding("completed-by-changed", f"credited to user {now[annotation_id]}, but to user {by} when an "
                          "earlier pull saw it", task_id, key, annotation_id)  # fmt: skip


def settings(header: Mapping[str, Any] | None, label_config: str | None, overlap: Any,
             rows: Iterable[Mapping[str, Any]] | None) -> list[Finding]:  # fmt: skip
    """The project's label config and overlap against what push sent (the manifest's ``header``), and
    ``unchecked`` when the manifest keeps no digest to check them (or some tasks' data) with."""
    if header is None or rows is None:
        return []
    found = []
    if "config" in header and label_config is not None and config_digest(label_config) != header["config"]:
        found.append(Finding("config-changed", "the project's label config is not the one push sent: what "
                             "annotators see under each pane may have changed; restore it with the protocol's "
                             "config"))  # fmt: skip
    if "overlap" in header and overlap is not None and overlap != header["overlap"]:
        found.append(Finding("overlap-changed", f"the project asks for {overlap} annotator(s) per task, push set "
                             f"{header['overlap']}"))  # fmt: skip
    missing = sum(1 for r in rows if "data" not in r)
    lacking = [what for what, there in (("the label config", "config" in header),
                                        ("the overlap", "overlap" in header)) if not there]  # fmt: skip
    if missing:
        lacking.append(f"the data of {missing} task(s)")
    if lacking:
        found.append(Finding("unchecked", f"the manifest keeps no digest of {', '.join(lacking)} push sent (pushed "
                             "before annols kept them): what annotators were shown there was not checked"))  # fmt: skip
    return found


def left_out(rows: Iterable[dict[str, Any]], export: Path, config_changed: bool, earlier: Seen,
             counts: list[int] | None = None) -> list[Finding]:  # fmt: skip
    """Mark the ``rows`` (``left_out``) whose judgments the results must not count, and say so, per task with its
    count: a task whose data changed (all of its judgments: when they were made is not known), and, when the
    label config changed, every judgment no earlier pull into the folder saw. ``counts`` gets [annotations, skipped]
    left out (the server counts them: a pull checks its counts with them)."""
    by_id = {int(r["task_id"]): r for r in rows if isinstance(r.get("task_id"), int)}
    context = Context(earlier=earlier, config_changed=config_changed)
    found: list[Finding] = []
    for task_id, raw in _tasks(export, None):
        assert raw is not None
        row = by_id.get(task_id)
        if row is not None:
            found.extend(_left_out(raw, task_id, row, context, counts))
    return found


def _name(user: int | None, users: Mapping[int, str]) -> str:
    return "nobody" if user is None else users.get(user, f"user {user}")


def write(findings: Iterable[Finding], path: Path) -> None:
    with files.atomic_open(path) as f:
        writer = csv.writer(f)
        writer.writerow(COLUMNS)
        rows = sorted((x.row() for x in findings), key=lambda r: (str(r[0]).zfill(12), str(r[2]).zfill(12), str(r[3])))
        writer.writerows(rows)


def read(path: Path) -> list[Finding]:
    """The findings a pull wrote (empty if it wrote none, or is from before pulls wrote them)."""
    if not path.exists():
        return []
    out = []
    with open(path, encoding="utf-8", newline="") as f:
        for n, row in enumerate(csv.DictReader(f), start=2):
            try:
                task_id, annotation_id = (int(row[c]) if row[c] else None for c in ("task_id", "annotation_id"))
                out.append(Finding(row["finding"], row["detail"], task_id, row["task_key"], annotation_id))
            except (KeyError, ValueError, TypeError):
                raise InputError(path, f"line {n}", "", "not a row of a pull's findings") from None
    return out
