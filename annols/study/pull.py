"""From a Label Studio project back to files: the raw export, the protocol's result files,
a tidy table of every answer, and a rule-check report.

The raw JSON export is streamed to a file and then read back one task at a time, so a
100k-task project never sits in memory whole. A pull writes into a folder beside ``DIR``
and moves its files in only once all of them are written and its counts match the
server's: a failed pull leaves ``DIR`` as it was. ``convert`` does the same from a saved
export, without a server.
"""

from __future__ import annotations

import bisect
import codecs
import csv
import hashlib
import json
import mmap
import multiprocessing
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO, Any

from annols import files, protocols
from annols.definition import Definition
from annols.errors import AnnolsError, InputError, ServerError, WriteError
from annols.formats import Format, Join, Violation, format_for, join_csv
from annols.labelstudio import incremental
from annols.labelstudio.client import LabelStudioClient, Project
from annols.protocols import config
from annols.study import findings as checks
from annols.study import hidden_judges, hybrid, roles
from annols.study.exports import (
    ANNOTATORS_FILE,
    BLIND_ONLY,
    BLINDING_FIELDS,
    BLINDING_FILE,
    EXPORT_FILE,
    PROJECT_FILE,
    credited,
    exported_task,
    load_annotators,
    load_blinding,
    read_export,
    task_reading,
    tasks_from,
    write_blinding,
)
from annols.study.judges import Judges
from annols.study.manifest import NoManifest, read_header, read_rows, server_key
from annols.styles import STYLE_MODULES
from annols.styles.answers import ExportedTask

RESULTS_FILE = "results.csv"
VIOLATIONS_FILE = "violations.csv"
# What a pull reads of the project (its counts, checked against the export's, and its overlap).
COUNT_FIELDS = "task_number,total_annotations_number,skipped_annotations_number,maximum_annotations"
VIOLATION_COLUMNS = ["task_key", "annotator", "rule", "found"]
RESULT_COLUMNS = [
    "task_key", "task_id", "annotator", "annotation_id", "question", "region", "text", "answer",
    "system", "systems", "lead_time", "created_at", "role",
]  # fmt: skip
GOLD_DIR = "gold"  # the protocol's result files of gold items and attention checks, apart from the study's


class ProtocolMismatch(AnnolsError):
    """An export or a project holds the tasks of another protocol than the one given."""

    def __init__(self, message: str, found: str, wanted: str, task: int | None = None) -> None:
        super().__init__(message)
        self.found, self.wanted, self.task = found, wanted, task

    @classmethod
    def of_project(cls, title: str, found: str, wanted: str, task: int | None = None) -> ProtocolMismatch:
        """The mismatch said of the project the user named (not of a file a pull stages its export in)."""
        which = f" (task {task})" if task is not None else ""
        return cls(f"project {title!r} holds {found} tasks{which}, not {wanted}: give the protocol it was pushed as",
                   found, wanted, task)  # fmt: skip


@dataclass(frozen=True)
class Counts:
    tasks: int
    annotations: int
    cancelled: int


@dataclass(frozen=True)
class ConvertReport:
    counts: Counts
    files: list[Path]
    violations: int
    input_warnings: tuple[str, ...] = ()  # what push's reader tolerated in the input of these tasks
    kept: int = 0  # tasks whose result rows were an earlier pull's (convert's ``keep``), not converted again


@dataclass(frozen=True)
class PullReport:
    convert: ConvertReport
    export: Path
    server_tasks: int
    server_annotations: int
    server_skipped: int
    changes: incremental.Changes | None = None  # an incremental pull: what it fetched
    full_reason: str = ""  # why a pull into a folder holding an earlier pull exported in full
    findings: tuple[checks.Finding, ...] = ()  # what the server holds that the manifest contradicts


class Findings(AnnolsError):
    """A pull with ``strict`` found the server's tasks or annotations not as the push left them."""

    def __init__(self, found: list[checks.Finding], out_dir: Path) -> None:
        lines = "".join(f"\nfinding: {f.line()}" for f in found)
        super().__init__(f"--strict: {len(found)} finding(s), the server's tasks or annotations are not as the push "
                         f"left them (docs/security.md); {out_dir} is as it was{lines}")  # fmt: skip
        self.findings = found


def tidy_rows(task: ExportedTask, definition: Definition) -> Iterator[dict[str, Any]]:
    """One row per task x annotator x answer."""
    for row in _tidy_lists(task, definition, _system_finder(definition)):
        yield dict(zip(RESULT_COLUMNS, row, strict=True))


SystemOf = Callable[[ExportedTask, str, str], str]


def _tidy_lists(task: ExportedTask, definition: Definition, system_of: SystemOf) -> list[list[Any]]:
    """The rows of :func:`tidy_rows` as lists in RESULT_COLUMNS order (what the CSV writer takes fastest),
    in a stable order: by annotator, annotation, question and region (answers of one cell as given)."""
    rows = list(_task_rows(task, definition, system_of))
    rows.sort(key=lambda r: (r[2], r[3], r[4], r[5]))
    return rows


def _task_rows(task: ExportedTask, definition: Definition, system_of: SystemOf) -> Iterator[list[Any]]:
    systems = " | ".join(task.systems)
    for a in task.annotations:
        if a.cancelled:
            continue
        lead_time = "" if a.lead_time is None else a.lead_time
        for item in a.result:
            for question, region, text, answer in _answers(item):
                system = system_of(task, question, answer) if task.systems else ""
                yield [
                    task.key, task.id, a.annotator, a.id, question, region, text, answer,
                    system, systems, lead_time, a.created_at, task.role,
                ]  # fmt: skip


def _answers(item: dict[str, Any]) -> Iterator[tuple[str, str, str, str]]:
    kind = item.get("type")
    value = item.get("value") or {}
    if kind == "relation":
        labels = item.get("labels") or [""]
        for label in labels:
            yield "relation", f"{item.get('from_id')}->{item.get('to_id')}", "", str(label)
        return
    question = str(item.get("from_name", ""))
    region, text = "", ""
    if "startOffset" in value:
        region = f"{value.get('start')}:{value.get('startOffset')}-{value.get('end')}:{value.get('endOffset')}"
        text = str(value.get("text", ""))
    elif "start" in value:
        region = f"{value.get('start')}-{value.get('end')}"
        text = str(value.get("text", ""))
    if region and item.get("id"):
        region = f"{item['id']}@{region}"
    answers = value.get(kind) if isinstance(kind, str) else None
    if kind == "textarea":
        answers = ["\n".join(str(t) for t in value.get("text") or [])]
    if answers is None:
        answers = [json.dumps(value, ensure_ascii=False)]
    if not isinstance(answers, list):
        answers = [answers]
    for answer in answers:
        yield question, region, text, str(answer)


def _system_finder(definition: Definition) -> SystemOf:
    """The style's rule for the system an answer is about (a rank or rating cell's candidate,
    a preference's winner, the one system that wrote a text); "" where it is about none."""
    style = STYLE_MODULES[definition.style]
    spec = definition.spec

    def system_of(task: ExportedTask, question: str, answer: str) -> str:
        found: str = style.system_of(spec, task, question, answer)
        return found

    return system_of


def write_tidy(tasks: Iterable[ExportedTask], definition: Definition, path: Path) -> None:
    system_of = _system_finder(definition)
    with files.atomic_open(path) as f:
        writer = csv.writer(f)
        writer.writerow(RESULT_COLUMNS)
        for task in tasks:
            writer.writerows(_tidy_lists(task, definition, system_of))


def validate(export: Path, definition: Definition) -> Iterator[Violation]:
    """The protocol's rule violations in a saved export."""
    tasks = read_export(export, load_annotators(export), shares=False)  # each judgment once
    return check_export(same_protocol(tasks, definition, export), definition)


# --- which protocol an export or a project holds ------------------------------------------------

_CONTENT_KEY = re.compile(r"^(?P<protocol>[^:]+):[0-9a-f]{20}$")  # formats.content_key: "<protocol>:<digest>"


def expected_protocol(definition: Definition) -> str:
    """The protocol name the keys of this definition's tasks start with (its format's, else its own)."""
    return definition.format or definition.name


def protocol_of(task: ExportedTask) -> str | None:
    """The protocol a task was pushed as, from its key; None for a task annols did not push."""
    match = _CONTENT_KEY.match(task.key)
    return match["protocol"] if match else None


def same_protocol(tasks: Iterable[ExportedTask], definition: Definition, source: Path) -> Iterator[ExportedTask]:
    """The tasks, refused (ProtocolMismatch) as soon as one was pushed as another protocol."""
    wanted = expected_protocol(definition)
    for n, task in enumerate(tasks, start=1):
        found = protocol_of(task)
        if found is not None and found != wanted:
            raise ProtocolMismatch(
                f"{source} holds {found} tasks (task {n}), not {wanted}: give the protocol they were pushed as",
                found, wanted, n,
            )  # fmt: skip
        yield task


def check_export_protocol(export: Path, definition: Definition) -> None:
    """Refuse an export of another protocol, from the first task annols pushed (reads no further)."""
    for task in same_protocol(read_export(export, shares=False), definition, export):
        if protocol_of(task) is not None:
            return


def check_project_protocol(project: Project, definition: Definition) -> None:
    """Refuse a project whose labeling config is that of another shipped protocol (or variant)."""
    mine = _normalise(config.label_config(definition))
    theirs = _normalise(project.label_config or "")
    if not theirs or theirs == mine:
        return
    for other in protocols.all_definitions():
        if _normalise(config.label_config(other)) == theirs:
            found = other.name + (f" {other.variant}" if other.variant else "")
            wanted = definition.name + (f" {definition.variant}" if definition.variant else "")
            if found != wanted:
                raise ProtocolMismatch.of_project(project.title, found, wanted)
    # A config annols does not know (edited by hand, an older annols): the task keys decide at convert.


def _normalise(xml: str) -> str:
    return re.sub(r">\s+<", "><", xml.strip())


def check_export(
    tasks: Iterable[ExportedTask], definition: Definition, fmt: Format | None = None
) -> Iterator[Violation]:
    fmt = fmt or format_for(definition)
    for task in tasks:
        for a in task.annotations:
            if not a.cancelled:
                yield from fmt.check(task, a, definition)


def write_violations(violations: Iterable[Violation], path: Path) -> int:
    count = 0
    with files.atomic_open(path) as f:
        writer = csv.writer(f)
        writer.writerow(VIOLATION_COLUMNS)
        for v in violations:
            writer.writerow([v.task_key, v.annotator, v.rule, v.found])
            count += 1
    return count


def convert(
    export: Path,
    definition: Definition,
    out_dir: Path,
    users: dict[int, str] | None = None,
    *,
    workers: int | None = None,
    judges: Judges | None = None,
    keep: Keep | None = None,
) -> ConvertReport:
    """Result files, results.csv and violations.csv from a saved raw JSON export.

    ``keep`` (a pull): the earlier pull's result rows of the tasks that did not change are kept where the format's
    files are records per judgment (:data:`ROWS_FILE`); only the others are converted. The files are byte for
    byte those of converting every task.

    Annotators are named by email from ``users``, else from ``annotators.json`` beside
    the export (written by pull), else by user id.

    One pass over the export: each task is parsed once and, on its way to the format's
    result writer, counted and written to results.csv and violations.csv. Every file is
    still written atomically (none is replaced if any part fails).

    A large export of a format whose result files can be joined is converted in parts
    side by side, one process per CPU up to ``workers`` (default: the CPUs, at most 4),
    and the parts' files joined: parsing the export is most of the time. Should a part
    not be a run of whole tasks (the split is found by pattern), it is converted in one.

    ``judges`` (:mod:`annols.study.hidden_judges`) are added to the tasks they answered as annotators
    ``judge:<name>``; they are not counted among the annotations (the server's counts). The caller checks
    ``judges.check_used()``: the answers of a task kept from the earlier pull are marked used too. With judges, the
    export is converted in one (not in parts).
    """
    if users is None:
        users = load_annotators(export)
    fmt = format_for(definition)
    joins: dict[str, Join] | None = getattr(fmt, "joins", None)
    if workers is None:
        large = export.is_file() and export.stat().st_size >= PARALLEL_BYTES
        workers = min(_cpus(), MAX_WORKERS) if large else 1
    log: list[TaskRows] | None = [] if keep is not None and hasattr(fmt, "splice") else None
    if keep is not None and log is not None and keep.unchanged:
        kept = _convert_keeping(export, definition, out_dir, users, fmt, keep, judges)
        if kept is not None:
            return kept
    report = None
    if joins and workers > 1 and not judges and "fork" in multiprocessing.get_all_start_methods():
        report = _convert_in_parts(export, definition, out_dir, users, fmt, joins, workers, log)
    if report is None:
        if log is not None:
            log.clear()
        report = _convert_tasks(same_protocol(read_export(export, users), definition, export), definition, out_dir,
                                fmt, log, judges)  # fmt: skip
    if log is not None and all(t.kept for t in log) and (bases := _spans(fmt, out_dir, report, log)) is not None:
        _write_rows_index(out_dir, report, log, _rows_context(definition, fmt, out_dir, judges), bases)
    return report


# --- keeping the result rows of unchanged tasks -------------------------------------------------

ROWS_FILE = ".annols-rows.json"  # in a pull folder: what each task wrote to each result file (for the next re-pull)
# Raise it when a format's records or results.csv's rows of a task are written otherwise. 2: records kept as byte
# ranges, and the span and sentence formats write from the judgments decode reads (a malformed region is read one
# way everywhere). 3: a task's rows include its shared copies' (push --share-identical), and a gold item's or
# attention check's records are in the files under gold/ (``apart``), and the numbers of the hidden judges'
# answers set beside it (``judged``).
ROWS_VERSION = 3


@dataclass
class TaskRows:
    """What converting one task wrote: its bytes of results.csv and violations.csv, its rows of violations.csv, its
    records of the format's files (one a judgment) and their bytes in each of them (``sizes``, in the files' order
    but for the two CSV files), its counts and input warnings; ``apart``: a gold item or attention check, whose
    records are in the format's files under gold/ (a study item's in the others); ``kept``: whether a re-pull may
    keep them. A task shared by several systems (``push --share-identical``) is one entry with its copies: they are
    converted from its bytes and its blinding line alone, so they are kept with it or converted with it.
    ``judged``: the numbers of the hidden judges' answers set beside it (:meth:`Judges.numbers`)."""

    id: int
    results: int = 0
    violations: int = 0
    violation_rows: int = 0
    records: int = 0
    annotations: int = 0
    cancelled: int = 0
    warnings: tuple[str, ...] = ()
    kept: bool = True
    sizes: list[int] = field(default_factory=list)
    apart: bool = False
    judged: list[int] = field(default_factory=list)

    def row(self) -> list[Any]:
        return [self.id, self.results, self.violations, self.violation_rows, self.records, self.annotations,
                self.cancelled, list(self.warnings), self.sizes, self.apart, self.judged]  # fmt: skip

    def records_in(self, gold: bool) -> int:
        """Its records in a file of the format's under gold/ (``gold``), or in one of the others."""
        return self.records if self.apart == gold else 0


def _in_gold(name: str) -> bool:
    """Whether a result file (named relative to its pull folder) is one of gold items' and attention checks'."""
    parts = Path(name).parts
    return len(parts) > 1 and parts[0] == GOLD_DIR


@dataclass(frozen=True)
class Keep:
    """A re-pull's earlier pull folder, and the tasks (ids) whose export bytes and blinding line are as it read
    them; ``segments``: the new export's tasks as byte ranges (task id, start, end), in file order."""

    folder: Path
    unchanged: frozenset[int]
    segments: list[tuple[int, int, int]]


def _rows_context(definition: Definition, fmt: Format, out_dir: Path, judges: Judges | None = None) -> str:
    """What, beside a task's bytes, its blinding line and the names of the users it holds (:func:`_untouched`), its
    result rows depend on: the definition, the format, a blind-only pull, the hidden judges' answers (every one: an
    answer's number is its annotation's id, so a line added anywhere may change any task's rows)."""
    # The definition as read, not where from: the same protocol read from another checkout converts alike.
    key = [ROWS_VERSION, repr(replace(definition, source="")), fmt.name, (out_dir / PROJECT_FILE).exists()
           and json.loads((out_dir / PROJECT_FILE).read_text("utf-8")).get(BLIND_ONLY, False),
           judges.digest() if judges else ""]  # fmt: skip
    return hashlib.sha256(json.dumps(key, ensure_ascii=False, default=str).encode("utf-8")).hexdigest()


def _write_rows_index(out_dir: Path, report: ConvertReport, log: list[TaskRows], context: str,
                      bases: list[int]) -> None:  # fmt: skip
    """``bases``: where the first record of each of the format's files starts (its header before it)."""
    index = {"version": ROWS_VERSION, "context": context,
             "files": {str(p.relative_to(out_dir)): p.stat().st_size for p in report.files},
             "bases": bases, "tasks": [t.row() for t in log]}  # fmt: skip
    files.write_text(out_dir / ROWS_FILE, json.dumps(index, separators=(",", ":")) + "\n")


def _own_files(names: Iterable[str]) -> list[str]:
    """The format's own result files of a convert's files (named relative to its folder), in their order."""
    return [n for n in names if n not in (RESULTS_FILE, VIOLATIONS_FILE)]


def _spans(fmt: Format, out_dir: Path, report: ConvertReport, log: list[TaskRows],
           only: list[int] | None = None) -> list[int] | None:  # fmt: skip
    """Each task's bytes in each of the format's files (``sizes`` of ``log``'s entries, read from the files the
    convert into ``out_dir`` wrote, its records in task order) and where each file's records start; None if a
    file is not one record after another as many as the tasks wrote (no index then: a re-pull converts all).
    ``only``: those of these files (their places among the format's files) and no other, the sizes there."""
    bases = []
    if only is None:
        for t in log:
            t.sizes = []
    try:
        for i, name in enumerate(_own_files(str(p.relative_to(out_dir)) for p in report.files)):
            if only is not None and i not in only:
                continue
            gold = _in_gold(name)
            with open(out_dir / name, "rb") as f:
                spans = fmt.record_spans(Path(name).name, f)  # type: ignore[attr-defined]
                base = at = None
                for t in log:
                    size = 0
                    for _ in range(t.records_in(gold)):
                        start, end = next(spans)
                        if at is not None and start != at:
                            return None
                        base = start if base is None else base
                        size += end - start
                        at = end
                    if only is None:
                        t.sizes.append(size)
                    else:
                        t.sizes[i] = size
                if next(spans, None) is not None:
                    return None
                bases.append(0 if base is None else base)
    except (OSError, ValueError, StopIteration):
        return None
    return bases


def _read_rows_index(folder: Path, context: str) -> tuple[list[str], list[int], list[TaskRows]] | None:
    """The earlier pull's rows index (the result files' names, where the records of the format's own files start,
    the tasks' rows), if it is of this context and its files are the sizes it wrote; else None."""
    try:
        index = json.loads((folder / ROWS_FILE).read_text("utf-8"))
        if index.get("version") != ROWS_VERSION or index.get("context") != context:
            return None
        sizes = index["files"]
        if any((folder / name).stat().st_size != size for name, size in sizes.items()):
            return None
        bases = [int(b) for b in index["bases"]]
        tasks = [TaskRows(int(t[0]), int(t[1]), int(t[2]), int(t[3]), int(t[4]), int(t[5]), int(t[6]),
                          tuple(str(w) for w in t[7]), sizes=[int(n) for n in t[8]], apart=bool(t[9]),
                          judged=[int(n) for n in t[10]])
                 for t in index["tasks"]]  # fmt: skip
        own = len(_own_files(sizes))
        if len(bases) != own or any(len(t.sizes) != own for t in tasks):
            return None
        return list(sizes), bases, tasks
    except (OSError, ValueError, KeyError, TypeError, IndexError):
        return None


def _convert_keeping(export: Path, definition: Definition, out_dir: Path, users: dict[int, str], fmt: Format,
                     keep: Keep, judges: Judges | None = None) -> ConvertReport | None:  # fmt: skip
    """``convert`` of only the tasks not in ``keep.unchanged``, the others' rows copied from the earlier pull's files
    as byte ranges (runs of tasks); None where that cannot be done as converting every task would (the caller
    then converts every task, writing every file anew)."""
    context = _rows_context(definition, fmt, out_dir, judges)
    found = _read_rows_index(keep.folder, context)
    if found is None:
        return None
    names, bases, earlier_log = found
    earlier = {t.id: t for t in earlier_log}
    if any(t not in earlier for t in keep.unchanged):
        return None
    blind = _changed_blinding(export, keep)
    own = _own_files(names)
    with tempfile.TemporaryDirectory(prefix=".annols-changed-", dir=out_dir) as tmp:
        changed_dir = Path(tmp)
        log: list[TaskRows] = []

        def changed() -> Iterator[ExportedTask]:
            with open(export, "rb") as f:
                for n, (task_id, start, end) in enumerate(keep.segments):
                    if task_id in keep.unchanged:
                        continue
                    f.seek(start)
                    try:
                        raw = json.loads(f.read(end - start))
                    except ValueError as e:
                        raise InputError(export, f"task {n + 1}", "", f"not a Label Studio JSON export ({e})") from None
                    task = exported_task(raw, users, blind)
                    if blind is not None:  # as read_export reads it: a shared task's copies after it
                        yield from credited(task, blind.get(task.id))
                    else:
                        yield task

        done = _convert_tasks(same_protocol(changed(), definition, export), definition, changed_dir, fmt, log, judges)
        gold = [n for n in own if _in_gold(n)]
        if gold and not any(t.apart for t in log) and not (changed_dir / GOLD_DIR).exists():
            # No changed task is a gold item or attention check: their files, empty, to splice the kept ones into.
            apart = fmt.write_results([], definition, changed_dir / GOLD_DIR)
            mine = done.files[: len(done.files) - 2]
            done = replace(done, files=[*mine, *apart, *done.files[len(mine) :]])
        if not all(t.kept for t in log) or sorted(str(p.relative_to(changed_dir)) for p in done.files) != sorted(names):
            return None
        new_bases = _spans(fmt, changed_dir, done, log)
        if new_bases is None:
            return None
        new = {t.id: t for t in log}
        order = [earlier[t] if t in keep.unchanged else new[t] for t, _, _ in keep.segments]
        if len(new) + sum(1 for t, _, _ in keep.segments if t in keep.unchanged) != len(order):
            return None
        if gold and not any(t.apart for t in order):
            return None  # the gold items and attention checks gone: a full pull writes no gold/
        written = []
        try:
            every: list[tuple[str, int | str]] = [*((n, i) for i, n in enumerate(own)), (RESULTS_FILE, "results"),
                                                  (VIOLATIONS_FILE, "violations")]  # fmt: skip
            for name, size in every:
                if isinstance(size, int):
                    at_old, at_new = _starts(earlier_log, size, bases[size]), _starts(log, size, new_bases[size])
                else:
                    with open(changed_dir / name, "rb") as f:
                        header = len(f.readline())
                    if (keep.folder / name).stat().st_size != header + sum(getattr(t, size) for t in earlier_log):
                        raise _NotKept
                    at_old, at_new = _starts(earlier_log, size, header), _starts(log, size, header)
                (out_dir / name).parent.mkdir(parents=True, exist_ok=True)
                with open(keep.folder / name, "rb") as old_f, open(changed_dir / name, "rb") as new_f, \
                        files.atomic_open(out_dir / name, "wb") as out:  # fmt: skip
                    runs = _runs(order, keep.unchanged, size, (old_f, at_old), (new_f, at_new))
                    if isinstance(size, int):
                        fmt.splice(Path(name).name, runs, out)  # type: ignore[attr-defined]
                    else:
                        out.write(new_f.read(header))
                        for source, start, end in runs:
                            files.copy_range(out, source, start, end)
                if isinstance(size, int):
                    written.append(out_dir / name)
        except (ValueError, OSError, _NotKept):
            return None  # the caller converts every task (and writes every file anew)
    if judges:  # the kept tasks' answers met them (in the earlier pull, under the same answers)
        judges.mark_used(n for t in order if t.id in keep.unchanged for n in t.judged)
    report = ConvertReport(
        counts=Counts(len(order), sum(t.annotations for t in order), sum(t.cancelled for t in order)),
        files=[*written, out_dir / RESULTS_FILE, out_dir / VIOLATIONS_FILE],
        violations=sum(t.violation_rows for t in order),
        input_warnings=tuple(w for t in order for w in t.warnings),
        kept=len(order) - len(log),
    )
    renumbered = [i for i, name in enumerate(own) if Path(name).name in getattr(fmt, "renumbered", ())]
    # Their records' bytes as the assembled files hold them (a line number longer or shorter).
    if renumbered and _spans(fmt, out_dir, report, order, renumbered) is None:
        return None  # the caller converts every task, writing every file anew
    # Where each file's records start: as the file of a full pull says (0 for a file without records).
    firsts = [next((t for t in order if t.sizes[i]), None) for i in range(len(own))]
    _write_rows_index(out_dir, report, order, context, [
        0 if t is None else (bases if t.id in keep.unchanged else new_bases)[i] for i, t in enumerate(firsts)
    ])  # fmt: skip
    return report


def _changed_blinding(export: Path, keep: Keep) -> dict[int, dict[str, Any]] | None:
    """load_blinding's rows of the tasks not in ``keep.unchanged`` only (what converting them reads of it)."""
    if not (export.parent / BLINDING_FILE).exists():
        return load_blinding(export)
    wanted = {t for t, _, _ in keep.segments} - keep.unchanged
    out = {}
    for task_id, line in _blinding_lines(export.parent).items():
        if task_id in wanted:
            try:
                out[task_id] = json.loads(line)
            except ValueError:
                raise InputError(export.parent / BLINDING_FILE, "", "task_id", "not a row of a pull's blinding "
                                 "file") from None  # fmt: skip
    return out


class _NotKept(Exception):
    """A result file of the earlier pull or of the changed tasks holds other records than its index says."""


Source = tuple[IO[bytes], dict[int, int]]  # a result file, open, and where each task's bytes start in it


def _runs(order: list[TaskRows], unchanged: frozenset[int], size: int | str, old: Source, new: Source
          ) -> Iterator[tuple[IO[bytes], int, int]]:  # fmt: skip
    """The byte ranges of the tasks in ``order`` (an unchanged one's in the earlier file ``old``, a changed one's in
    the file of the changed tasks ``new``), those next to each other in one file as one range. ``size``: the
    index of the file in a task's ``sizes``, or the field of its bytes (results, violations)."""
    run: list[Any] = []
    for t in order:
        f, at = old if t.id in unchanged else new
        length = t.sizes[size] if isinstance(size, int) else getattr(t, size)
        if not length:
            continue
        start = at[t.id]
        if run and run[0] is f and run[2] == start:
            run[2] = start + length
            continue
        if run:
            yield run[0], run[1], run[2]
        run = [f, start, start + length]
    if run:
        yield run[0], run[1], run[2]


def _starts(log: list[TaskRows], size: int | str, base: int) -> dict[int, int]:
    """Task id -> where its bytes (``size``: as in :func:`_runs`) start, the tasks' one after another from ``base``."""
    out = {}
    for t in log:
        out[t.id] = base
        base += t.sizes[size] if isinstance(size, int) else getattr(t, size)
    return out


MAX_WORKERS = 4
PARALLEL_BYTES = 16 << 20  # below this, starting processes costs more than it saves


def _cpus() -> int:
    """The CPUs this process may run on (fewer than the machine's in a container or under taskset)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def _convert_tasks(tasks: Iterable[ExportedTask], definition: Definition, out_dir: Path, fmt: Format,
                   log: list[TaskRows] | None = None, judges: Judges | None = None) -> ConvertReport:  # fmt: skip
    """``log``: gets what each task wrote (:class:`TaskRows`); ``judges``: set beside the tasks they answered."""
    totals = [0, 0, 0]  # tasks, annotations, cancelled
    violations = 0
    warnings: list[str] = []
    checks_apart: list[ExportedTask] = []  # gold items and attention checks: their result files go apart
    with (
        files.atomic_open(out_dir / RESULTS_FILE, "wb") as tidy_raw,
        files.atomic_open(out_dir / VIOLATIONS_FILE, "wb") as violations_raw,
    ):
        tidy_file, violations_file = _Counted(tidy_raw), _Counted(violations_raw)
        tidy = csv.writer(tidy_file)
        tidy.writerow(RESULT_COLUMNS)
        system_of = _system_finder(definition)
        checks = csv.writer(violations_file)
        checks.writerow(VIOLATION_COLUMNS)

        count = getattr(fmt, "record_count", None)

        def records(task: ExportedTask) -> int:
            """The records the format writes of ``task`` in each of its files (one per judgment, unless it says)."""
            return count(task, definition) if count is not None else sum(not a.cancelled for a in task.annotations)

        def tapped() -> Iterator[ExportedTask]:
            nonlocal violations
            for task in tasks:
                if judges:
                    task = judges.with_judges(task)
                reading = task_reading(task)  # counted as the study table reads it (annols.study.table)
                if not reading.counted:  # a shared task's copy for another system: its judgments are counted once
                    before = tidy_file.written
                    tidy.writerows(_tidy_lists(task, definition, system_of))
                    if log is not None:  # its rows are its task's, right before it (read_export's order)
                        owner = log[-1] if log and log[-1].id == task.id else None
                        if owner is None or owner.apart:  # (push shares study items only)
                            log.append(TaskRows(task.id, kept=False))
                        else:
                            owner.results += tidy_file.written - before
                            owner.records += records(task)
                    yield task
                    continue
                entry = None
                if log is not None:
                    entry = TaskRows(task.id, tidy_file.written, violations_file.written, violations,
                                     apart=not reading.item, judged=judges.numbers(task) if judges else [])
                    log.append(entry)
                tidy.writerows(_tidy_lists(task, definition, system_of))
                totals[0] += 1
                totals[1] += reading.submitted
                totals[2] += reading.cancelled
                warnings.extend(task.read_warnings)
                if entry is not None:
                    entry.annotations, entry.cancelled = reading.submitted, reading.cancelled
                    entry.records = records(task)  # the format's: judges' too
                for v in check_export((task,), definition, fmt):
                    checks.writerow([v.task_key, v.annotator, v.rule, v.found])
                    violations += 1
                if entry is not None:
                    entry.warnings = task.read_warnings
                    _close(entry, tidy_file, violations_file, violations)
                if task.role != roles.STUDY:
                    checks_apart.append(task)
                    continue
                yield task

        stream = tapped()
        written = fmt.write_results(stream, definition, out_dir)
        for _ in stream:  # a writer that stopped early still gets every task counted and tabled
            pass
        if checks_apart:  # the protocol's own files hold the study's items only; gold/ the others
            written += fmt.write_results(checks_apart, definition, out_dir / GOLD_DIR)
    return ConvertReport(
        counts=Counts(*totals),
        files=[*written, out_dir / RESULTS_FILE, out_dir / VIOLATIONS_FILE],
        violations=violations,
        input_warnings=tuple(warnings),
    )


class _Counted:
    """A binary file written as text (UTF-8, no newline translation), counting the bytes written."""

    def __init__(self, raw: IO[bytes]) -> None:
        self._raw, self.written = raw, 0

    def write(self, text: str) -> int:
        data = text.encode("utf-8")
        self.written += len(data)
        return self._raw.write(data)


def _close(entry: TaskRows | None, tidy_file: _Counted, violations_file: _Counted, violations: int) -> None:
    """The task's rows written: ``entry``'s offsets (at its start) become its lengths."""
    if entry is not None:
        entry.results = tidy_file.written - entry.results
        entry.violations = violations_file.written - entry.violations
        entry.violation_rows = violations - entry.violation_rows


# --- converting in parts ---------------------------------------------------------------------

# Where one task of a raw export ends and the next begins: tasks start with their id and
# annotations (nothing else in an export does), and a quote inside a JSON string is
# escaped, so this is never inside a string. Each part is then parsed as an array of its
# own, which fails unless the split is between two whole tasks.
_TASK_START = re.compile(rb'\}\s*,\s*\{\s*"id"\s*:\s*\d+\s*,\s*"annotations"\s*:')
_SEARCH_BYTES = 4 << 20  # a split is looked for this far past each equal share


def _parts(export: Path, count: int) -> list[tuple[int, int]]:
    """Byte ranges ``[start, end)`` of the export, each a run of whole tasks but for the brackets."""
    size = export.stat().st_size
    starts = [0]
    with open(export, "rb") as f:
        for k in range(1, count):
            offset = max(size * k // count, starts[-1] + 1)
            f.seek(offset)
            found = _TASK_START.search(f.read(_SEARCH_BYTES))
            if found is not None:
                starts.append(offset + found.start() + found.group().index(b"{"))
    # A part ends at the "}" of its last task; the next starts at the "{" of its first.
    ends = [_last_brace(export, start) for start in starts[1:]] + [size]
    return list(zip(starts, ends, strict=True))


def _last_brace(export: Path, start: int) -> int:
    """One past the "}" before ``start`` (there are only a comma and white space between)."""
    with open(export, "rb") as f:
        f.seek(max(0, start - 64))
        before = f.read(start - max(0, start - 64))
    return start - len(before) + before.rstrip().rstrip(b",").rstrip().rfind(b"}") + 1


class _PartText:
    """The text of bytes ``[start, end)`` of a file between ``prefix`` and ``suffix``, read in chunks."""

    def __init__(self, raw: IO[bytes], start: int, end: int, prefix: str, suffix: str) -> None:
        raw.seek(start)
        self._raw, self._left = raw, end - start
        self._pending = prefix
        self._suffix = suffix
        self._decoder = codecs.getincrementaldecoder("utf-8")()

    def read(self, size: int = -1) -> str:
        while not self._pending and (self._left or self._suffix):
            if self._left:
                data = self._raw.read(self._left if size < 0 else min(size, self._left))
                self._left = self._left - len(data) if data else 0
                self._pending = self._decoder.decode(data, final=not self._left)
            else:
                self._pending, self._suffix = self._suffix, ""
        out, self._pending = self._pending, ""
        return out


# Set in the parent just before the workers are forked; they inherit it.
_JOB: tuple[Path, list[tuple[int, int]], dict[int, str], Definition, Format, Path, bool] | None = None


def _convert_in_parts(
    export: Path,
    definition: Definition,
    out_dir: Path,
    users: dict[int, str],
    fmt: Format,
    joins: dict[str, Join],
    workers: int,
    log: list[TaskRows] | None = None,
) -> ConvertReport | None:
    """``convert`` in parts side by side, or None if the export does not split into runs of whole tasks.
    ``log``: gets what each task wrote (:class:`TaskRows`)."""
    global _JOB
    parts = _parts(export, workers)
    if len(parts) < 2:
        return None
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".annols-parts-", dir=out_dir) as tmp:
        _JOB = (export, parts, users, definition, fmt, Path(tmp), log is not None)
        try:
            with multiprocessing.get_context("fork").Pool(len(parts)) as pool:
                outcomes = pool.map(_convert_part, range(len(parts)))
        finally:
            _JOB = None
        if any(o is None for o in outcomes):
            return None
        done = [o for o in outcomes if o is not None]
        names = done[0][2]
        if any(o[2] != names for o in done) or set(names) != {*joins, RESULTS_FILE, VIOLATIONS_FILE}:
            return None  # a writer that wrote other files than it said it joins: convert in one
        every = {**joins, RESULTS_FILE: join_csv, VIOLATIONS_FILE: join_csv}
        folders = [Path(tmp) / str(i) for i in range(len(parts))]
        for name in names:  # joined into the first part's files (no copy of those); nothing replaced yet
            every[name](folders[0] / name, [folder / name for folder in folders[1:]])
        for name in names:
            files.replace_durably(folders[0] / name, out_dir / name)
    if log is not None:
        log.extend(t for o in done for t in o[4])
    totals = [sum(getattr(o[0], f) for o in done) for f in ("tasks", "annotations", "cancelled")]
    return ConvertReport(
        counts=Counts(*totals),
        files=[out_dir / name for name in names],
        violations=sum(o[1] for o in done),
        input_warnings=tuple(w for o in done for w in o[3]),
    )


def _convert_part(index: int) -> tuple[Counts, int, list[str], tuple[str, ...], list[TaskRows]] | None:
    """In a worker: convert part ``index`` into its own folder; None if it is not a run of whole tasks."""
    assert _JOB is not None
    export, parts, users, definition, fmt, tmp, logged = _JOB
    log: list[TaskRows] | None = [] if logged else None
    start, end = parts[index]
    folder = tmp / str(index)
    try:
        with open(export, "rb") as raw:
            text = _PartText(raw, start, end, "[" if index else "", "]" if index < len(parts) - 1 else "")
            report = _convert_tasks(same_protocol(tasks_from(text, export, users), definition, export), definition,
                                    folder, fmt, log)  # fmt: skip
    except Exception:  # converting in one says what is wrong, with the right task numbers
        return None
    names = [str(p.relative_to(folder)) for p in report.files]
    return report.counts, report.violations, names, report.input_warnings, log or []


def pull(
    client: LabelStudioClient,
    definition: Definition,
    title: str,
    out_dir: Path,
    judges_dir: Path | None = None,
    *,
    full: bool = False,
    manifest: Path | None = None,
    strict: bool = False,
    annotator: str | None = None,
    workers: int | None = None,
    blind_only: bool = False,
) -> PullReport:
    """Export the project, convert it, and check the counts against the server's.

    Without the study's manifest (or a pull folder's copy of it) pull refuses (:class:`NoManifest`): it would
    take what the server says for systems and roles. ``blind_only`` pulls without it all the same: no task is
    unblinded (no systems, every task a study item, nothing checked against the manifest), and the pull
    folder says so (``project.json``: ``blind_only``), so that the report compares no systems.

    Into a folder that holds an earlier pull of the same project, only the tasks changed
    since are exported and merged into its export.json (see :mod:`annols.labelstudio.incremental`),
    unless ``full``; an earlier export that is damaged or of another project is replaced by
    a full one, and the report says why (``full_reason``). The findings of the tasks that did not
    change are then the earlier pull's (:func:`annols.study.findings.scan`, when what they were found
    under is the same), and their result rows too where the format's files are records per judgment
    (:func:`convert`'s ``keep``): only the changed tasks are checked and converted, and every file is
    byte for byte a full pull's.

    Everything is written into a folder beside ``out_dir`` and moved into it only when all
    of it succeeded: the export ended as a whole JSON array, its counts match the server's,
    every file is written. A pull that fails leaves ``out_dir`` as it was (an earlier pull
    in it intact). An export cut short, or one that annotations arriving meanwhile put out
    of step with the server's counts, is taken again, a bounded number of times.

    ``judges_dir``: a judge store (:func:`annols.study.hidden_judges.store_dir`); the project's hidden
    judges are written to the result files as annotators ``judge:<name>`` and copied to ``judges/``.

    ``manifest``: the coordinator's manifest of the project (:mod:`annols.study.manifest`). Systems,
    order and roles come from it (written to the pull folder as ``blinding.jsonl``), and the server
    is checked against it (:mod:`annols.study.findings`): the findings are in ``findings.csv`` and
    the report; with ``strict`` any finding fails the pull (Findings), leaving ``out_dir`` as it was.

    ``annotator``: the project is that annotator's alone (an isolated study's instance,
    :mod:`annols.study.isolate`): an annotation credited to anyone else is a finding.

    ``workers``: the processes a large export is converted with (:func:`convert`); 1 where other threads
    of this process pull at the same time (its parts are forked, which threads do not survive).
    """
    project = client.find_project(title)
    if project is None:
        raise ServerError(f"no project titled {title!r} on {client.url}: check --project (titles are exact)")
    check_project_protocol(project, definition)
    kept = stored_judges(definition, judges_dir, project.id, title) if judges_dir is not None else None
    judges = kept.judges if kept is not None else None
    out_dir = Path(out_dir)
    rows, unknown = _manifest_rows(manifest, project, out_dir, client.url)
    if blind_only:
        rows, unknown = None, ("a blind-only pull (--blind-only): no task was unblinded (no systems, every task "
                               "counted as a study item) and nothing was checked against the manifest")  # fmt: skip
    elif rows is None:
        raise NoManifest(unknown.split(": systems and roles")[0] if unknown else f"no manifest of project {title!r}")
    header = _pushed_settings(manifest, project, rows)
    earlier, full_reason = (None, "") if full else incremental.earlier_pull(out_dir, project.id, client.url)
    seen_before, gone_before = _earlier_annotations(out_dir, project, client.url, earlier)
    shown = checks.settings(header, project.label_config, None, rows)
    config_changed = any(f.kind == "config-changed" for f in [*shown, *gone_before])
    fetcher = incremental.Fetcher(client, project.id, earlier)
    try:
        out_dir.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.annols-pull-", dir=out_dir.parent))
    except OSError as e:
        raise WriteError(out_dir, e) from e
    try:
        context = checks.Context(
            earlier=seen_before, counted=_counted_before(seen_before, out_dir, project, client.url),
            trusted=frozenset([int(client.whoami()["id"])]), config_changed=config_changed, annotator=annotator,
            why=unknown,
        )  # fmt: skip
        scanned = Scanned(context)
        report = _pull_into(client, definition, project, staging, out_dir, judges, fetcher, rows, workers, blind_only,
                            scanned)  # fmt: skip
        found = scanned.found
        overlap = json.loads((staging / PROJECT_FILE).read_text(encoding="utf-8")).get("overlap")
        found += checks.settings(header, project.label_config, overlap, rows) + scanned.left
        found += [f for f in gone_before if f not in found]
        if kept is not None:
            report.convert.files.extend(add_stored_judges(kept, found, staging))
        found.sort(key=lambda f: (-1 if f.task_id is None else f.task_id, f.annotation_id or 0, f.kind))
        if strict and any(f.kind not in checks.NOT_STRICT for f in found):
            raise Findings([f for f in found if f.kind not in checks.NOT_STRICT], out_dir)
        checks.write(found, staging / checks.FINDINGS_FILE)
        report.convert.files.append(staging / checks.FINDINGS_FILE)
        if (staging / incremental.STATE_FILE).exists():  # the next pull takes the unchanged tasks' findings
            digest = hashlib.sha256((staging / checks.FINDINGS_FILE).read_bytes()).hexdigest()
            record = {"context": scanned.digest, "sha256": digest, "carried": scanned.carried}
            incremental.add_to_state(staging, "findings", record)
            incremental.add_to_state(staging, "rows_kept", report.convert.kept)
        if rows is not None:
            report.convert.files.append(staging / BLINDING_FILE)
        _move_in(staging, out_dir)
    except ProtocolMismatch as e:  # found in the task keys of the export staged beside out_dir: name the project
        raise ProtocolMismatch.of_project(title, e.found, e.wanted, e.task) from None
    except WriteError as e:
        target = out_dir / e.path.relative_to(staging) if e.path.is_relative_to(staging) else e.path
        raise AnnolsError(
            f"cannot write {target}: {e.cause.strerror or e.cause}; {out_dir} is as it was: free some space "
            "and pull again"
        ) from e
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    moved = [out_dir / p.relative_to(staging) for p in report.convert.files]
    return PullReport(
        convert=ConvertReport(counts=report.convert.counts, files=moved, violations=report.convert.violations),
        export=out_dir / EXPORT_FILE,
        server_tasks=report.server_tasks,
        server_annotations=report.server_annotations,
        server_skipped=report.server_skipped,
        changes=fetcher.changes,
        full_reason=full_reason or fetcher.full_reason,
        findings=tuple(found),
    )


@dataclass(frozen=True)
class StoredJudges:
    """A judge store's judges, read for a pull (:mod:`annols.study.hidden_judges`)."""

    judges: Judges
    files: list[Path]  # the judge files kept
    pool: Path | None  # a hybrid study's judge-only items


def stored_judges(definition: Definition, judges_dir: Path, project_id: int | None, title: str) -> StoredJudges | None:
    """The judges kept in ``judges_dir`` for the project (``project_id`` None: the isolated study ``title``), None
    if there are none; another project's store is refused."""
    judge_files = hidden_judges.stored(judges_dir, project_id, title)
    if not judge_files:
        return None
    found_pool = hidden_judges.pool(judges_dir)
    return StoredJudges(Judges.read(definition, judge_files, hybrid=found_pool is not None), judge_files, found_pool)


def add_stored_judges(kept: StoredJudges, found: list[checks.Finding], staging: Path) -> list[Path]:
    """Once the export was converted with ``kept.judges``: every judge line must have met its task (a hybrid
    study's judge-only items too, which go with the judges, off the server), but for a task deleted on the
    server (a ``task-deleted`` of ``found``), a ``judge-task-deleted`` finding added to ``found``; the judge files
    copied to the pull folder ``staging``, for report. The files copied."""
    judge_files = kept.files
    if kept.pool is not None:
        hybrid.mark_pool(kept.judges, hybrid.read_pool(kept.pool))
        judge_files = [*judge_files, kept.pool]
    deleted = {f.task_key for f in found if f.kind == "task-deleted"}
    for answer in kept.judges.check_used(gone=deleted):
        found.append(checks.Finding("judge-task-deleted", f"hidden judge answer at {answer} not added: its task "
                                    "was deleted"))  # fmt: skip
    return hidden_judges.copy_to_pull(judge_files, staging)


def _pull_into(
    client: LabelStudioClient,
    definition: Definition,
    project: Project,
    staging: Path,
    out_dir: Path,
    judges: Judges | None = None,
    fetcher: incremental.Fetcher | None = None,
    rows: list[dict[str, Any]] | None = None,
    workers: int | None = None,
    blind_only: bool = False,
    scanned: Scanned | None = None,
) -> PullReport:
    """Every file of a pull, in ``staging``; a ServerError unless the export is whole and its counts the server's.

    ``scanned``: the findings' context, and what gets the findings (:func:`annols.study.findings.scan`, in the same
    pass): the judgments annotators made on what push did not send are marked in ``blinding.jsonl`` and not
    counted (:func:`annols.study.findings.left_out`).

    ``rows``: the manifest's, written beside the export for convert (task ids filled in from the
    export's keys for a manifest of ``annols tasks``, whose tasks were imported by hand)."""
    users = {uid: email for email, uid in client.users().items()}
    export = staging / EXPORT_FILE
    if blind_only:  # said before convert reads the export: a blind-only pull's results name no system
        files.write_text(staging / PROJECT_FILE, json.dumps({BLIND_ONLY: True}) + "\n")
    attempt = 0
    while True:
        before = _server_counts(client.project(project.id, COUNT_FIELDS))
        try:
            if fetcher is None:
                client.export_to(project.id, export)
            else:
                fetcher(export, before[0])
            left = [0, 0]  # annotations and skips left out of the results, which the server counts
            if rows is not None:  # read by convert: the study's tables use the manifest, never the meta
                _fill_task_ids(rows, export)
                for row in rows:
                    row.pop("left_out", None)
            if scanned is not None:
                scanned.digest = scanned.context.digest(rows is not None)
                carry = _carry(fetcher, export, out_dir, rows, scanned.digest, users)
                scanned.left, scanned.found = checks.scan(export, rows, users, scanned.context, left, carry)
                scanned.carried = 0 if carry is None else len(carry.unchanged)
            if rows is not None:
                write_blinding(staging, rows)
            keep = _kept(fetcher, export, out_dir, rows, users) if scanned is not None else None
            report = convert(export, definition, staging, users, judges=judges, workers=workers, keep=keep)
        except (InputError, incremental.ExportShape):  # it ended as an array should, yet is not a whole one
            problem = f"the export of project {project.id} from {client.url} was cut short"
        else:
            info = client.project(project.id, COUNT_FIELDS)
            after = _server_counts(info)
            c = report.counts
            exported = (c.tasks, c.annotations + left[0], c.cancelled + left[1])
            # Annotators may save during the export: it must hold every task, and the server's
            # counts of a moment between the two readings (equal to them when nobody saves).
            if exported[0] == before[0] == after[0] and all(
                min(b, a) <= x <= max(b, a) for x, b, a in zip(exported[1:], before[1:], after[1:], strict=True)
            ):
                server = exported
                break
            problem = (
                f"counts differ from the server's: exported {c.tasks} tasks / {c.annotations} annotations / "
                f"{c.cancelled} skipped, {client.url} reports {after[0]} / {after[1]} / {after[2]}"
            )
        attempt += 1
        if attempt > client.retries:
            raise ServerError(f"{problem}; {out_dir} is as it was: pull again (annotations may be arriving)")
        client.pause(problem, attempt, then="exporting again")
    files.write_text(staging / ANNOTATORS_FILE, json.dumps({str(k): v for k, v in sorted(users.items())}, indent=2))
    settings = {
        "title": project.title,
        "id": project.id,
        "url": client.url,
        "protocol": definition.name,
        "variant": definition.variant,
        "overlap": info.get("maximum_annotations"),
        **({BLIND_ONLY: True} if blind_only else {}),
    }
    files.write_text(staging / PROJECT_FILE, json.dumps(settings, indent=2, ensure_ascii=False) + "\n")
    if fetcher is not None:
        incremental.write_state(staging, project.id, client.url, fetcher.mark, export, fetcher.tasks)
    return PullReport(
        convert=report,
        export=export,
        server_tasks=server[0],
        server_annotations=server[1],
        server_skipped=server[2],
    )


@dataclass
class Scanned:
    """A pull's findings of its export (:func:`annols.study.findings.scan`): its context, and what it found."""

    context: checks.Context
    left: list[checks.Finding] = field(default_factory=list)
    found: list[checks.Finding] = field(default_factory=list)
    digest: str = ""  # the context's (Context.digest), recorded for the next pull
    carried: int = 0  # tasks whose findings were the earlier pull's


def _carry(fetcher: incremental.Fetcher | None, export: Path, out_dir: Path, rows: list[dict[str, Any]] | None,
           digest: str, users: dict[int, str]) -> checks.Carry | None:  # fmt: skip
    """The earlier pull's findings of the tasks an incremental fetch kept as they were, when they are provably
    what checking them again would find: the earlier findings.csv is the one that pull recorded (its SHA-256) and
    of the same context (``digest``), and each task kept has the manifest row it had then, with nothing left out
    (its line of blinding.jsonl the same). None: check every task."""
    changes = None if fetcher is None else fetcher.changes
    if changes is None or fetcher is None or fetcher.earlier is None:
        return None
    record = fetcher.earlier.state.get("findings")
    if not isinstance(record, dict) or record.get("context") != digest:
        return None
    try:
        data = (out_dir / checks.FINDINGS_FILE).read_bytes()
        if hashlib.sha256(data).hexdigest() != record.get("sha256"):
            return None
        earlier = checks.read(out_dir / checks.FINDINGS_FILE)
        lines = _blinding_lines(out_dir) if rows is not None else {}
    except (OSError, InputError):
        return None
    unchanged = _untouched(changes, export, out_dir, users)
    if rows is not None:
        now = {
            r["task_id"]: json.dumps(
                {k: r[k] for k in BLINDING_FIELDS if k in r and k != "left_out"}, ensure_ascii=False
            ).encode("utf-8")
            for r in rows
            if isinstance(r.get("task_id"), int) and r["task_id"] in unchanged
        }
        unchanged = {t for t in unchanged if lines.get(t) == now.get(t)}
    kept: dict[int, list[checks.Finding]] = {}
    for f in earlier:
        if f.task_id in unchanged and f.kind in checks.TASK_KINDS:
            kept.setdefault(f.task_id, []).append(f)
    return checks.Carry(changes.segments, frozenset(unchanged), kept)


def _kept(fetcher: incremental.Fetcher | None, export: Path, out_dir: Path, rows: list[dict[str, Any]] | None,
          users: dict[int, str]) -> Keep:  # fmt: skip
    """What a pull's convert may keep of the earlier pull in ``out_dir``: the tasks an incremental fetch kept as
    they were whose blinding line (``rows``, their left-out judgments marked) is the one the earlier pull wrote."""
    changes = None if fetcher is None else fetcher.changes
    if changes is None:
        return Keep(out_dir, frozenset(), [])
    unchanged = _untouched(changes, export, out_dir, users)
    if rows is not None:  # the blinding.jsonl just written beside the export, line for line the earlier one
        try:
            lines, now = _blinding_lines(out_dir), _blinding_lines(export.parent)
        except OSError:
            return Keep(out_dir, frozenset(), [])
        unchanged = {t for t in unchanged if lines.get(t) == now.get(t)}
    return Keep(out_dir, frozenset(unchanged), changes.segments)


def _untouched(changes: incremental.Changes, export: Path, out_dir: Path, users: dict[int, str]) -> set[int]:
    """The tasks of a merged ``export`` as the earlier pull in ``out_dir`` read them: not fetched again, and naming no
    user whose email is not the one that pull knew (``annotators.json``: a user added, renamed or deleted since)."""
    unchanged = {task_id for task_id, _, _ in changes.segments} - changes.fetched
    try:
        earlier = {int(k): str(v) for k, v in json.loads((out_dir / ANNOTATORS_FILE).read_text("utf-8")).items()}
    except (OSError, ValueError, AttributeError):
        return set()
    renamed = sorted(i for i in {*earlier, *users} if earlier.get(i) != users.get(i))
    if not renamed or not unchanged:
        return unchanged
    # A user named by id (1.23) or in an object with its id: conservative (a digit run of the id anywhere in it).
    names = re.compile(rb'"(?:completed_by|updated_by)": ?(?:\{[^{}]*)?\b(?:' + b"|".join(b"%d" % i for i in renamed)
                       + rb")\b")  # fmt: skip
    starts = [start for _, start, _ in changes.segments]
    with open(export, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
        for m in names.finditer(data):
            unchanged.discard(changes.segments[bisect.bisect_right(starts, m.start()) - 1][0])
    return unchanged


_BLINDING_START = b'{"task_id": '


def _blinding_lines(out_dir: Path) -> dict[int, bytes]:
    """Task id -> its line of the blinding.jsonl in ``out_dir`` (without the newline); OSError if there is none."""
    out = {}
    for line in (out_dir / BLINDING_FILE).read_bytes().split(b"\n"):
        if line.startswith(_BLINDING_START):  # as write_blinding writes every line
            end = line.find(b",", len(_BLINDING_START))
            if end < 0:
                end = line.find(b"}", len(_BLINDING_START))
            digits = line[len(_BLINDING_START) : end]
            if digits.isdigit():
                out[int(digits)] = line
    return out


def _fill_task_ids(rows: list[dict[str, Any]], export: Path) -> None:
    """Task ids for the manifest rows that have none (a manifest of ``annols tasks``), by the export's keys."""
    missing = {server_key(r): r for r in rows if not isinstance(r.get("task_id"), int)}
    if not missing:
        return
    for task in read_export(export, shares=False):
        row = missing.pop(task.key, None)
        if row is not None:
            row["task_id"] = task.id


def _manifest_rows(
    manifest: Path | None, project: Project, out_dir: Path, url: str
) -> tuple[list[dict[str, Any]] | None, str]:
    """The manifest's rows (None if there is none, or it is of another project) and, then, why not.

    Without the manifest, the rows an earlier pull of the project into ``out_dir`` wrote from it
    (``blinding.jsonl``) stand in: a pull into that folder unblinds and checks as that one did."""
    if manifest is None or not manifest.exists():
        earlier = _earlier_blinding(out_dir, project, url)
        if earlier is not None:
            return earlier, ""
    if manifest is None:
        return None, (f"no manifest of project {project.title!r} was found or given: systems and roles were read "
                      "from the server's task meta, unchecked")  # fmt: skip
    if not manifest.exists():
        return None, (f"no manifest {manifest}: systems and roles were read from the server's task meta, unchecked; "
                      "import it with `annols manifest import`")  # fmt: skip
    header, rows = read_rows(manifest)
    if header.get("project_id") not in (None, project.id):
        return None, (f"{manifest} is of project {header.get('project_id')}, not {project.id}: systems and roles "
                      "were read from the server's task meta, unchecked")  # fmt: skip
    return rows, ""


def _pushed_settings(manifest: Path | None, project: Project, rows: list[dict[str, Any]] | None
                     ) -> dict[str, Any] | None:  # fmt: skip
    """The manifest's header, when its rows are the ones pull checks with (of this project): what push sent of
    the project's settings (``config``, ``overlap``); None without one."""
    if rows is None or manifest is None or not manifest.exists():
        return None
    header = read_header(manifest)
    return header if header is not None and header.get("project_id") in (None, project.id) else None


def _counted_before(seen: Mapping[int, Mapping[int, Any]], out_dir: Path, project: Project, url: str
                    ) -> Mapping[int, Mapping[int, Any]]:  # fmt: skip
    """The annotations an earlier pull into ``out_dir`` saw and counted (not those it left out)."""
    earlier = _earlier_blinding(out_dir, project, url) or []
    left = {(r["task_id"], i) for r in earlier for i in r.get("left_out") or () if isinstance(r.get("task_id"), int)}
    if isinstance(seen, checks.Annotations):
        return seen.without(frozenset(left))
    return {t: {a: by for a, by in done.items() if (t, a) not in left} for t, done in seen.items()}


def _same_project(out_dir: Path, project: Project, url: str) -> bool:
    """Whether ``out_dir`` holds an earlier pull of this project on this server."""
    try:
        earlier = json.loads((out_dir / PROJECT_FILE).read_text(encoding="utf-8"))
        return bool(earlier.get("id") == project.id and str(earlier.get("url", "")).rstrip("/") == url.rstrip("/"))
    except (OSError, ValueError, AttributeError):
        return False


def _earlier_blinding(out_dir: Path, project: Project, url: str) -> list[dict[str, Any]] | None:
    if not _same_project(out_dir, project, url):
        return None
    try:
        known = load_blinding(out_dir / EXPORT_FILE)
    except InputError:
        return None
    return None if known is None else list(known.values())


def _earlier_annotations(out_dir: Path, project: Project, url: str, earlier: incremental.Earlier | None = None
                         ) -> tuple[Mapping[int, Mapping[int, Any]], list[checks.Finding]]:  # fmt: skip
    """The annotations of the earlier pull in ``out_dir`` (if it is of this project; each task read when asked for
    if ``earlier`` cut its export into tasks), and its findings of annotations gone (kept: the export that saw
    them is replaced)."""
    if not _same_project(out_dir, project, url):
        return {}, []
    try:
        gone = [f for f in checks.read(out_dir / checks.FINDINGS_FILE) if f.kind in checks.KEPT]
    except InputError:
        gone = []
    if earlier is not None:
        return checks.Annotations(earlier.export, earlier.segments), gone
    return checks.annotations_of(out_dir / EXPORT_FILE), gone


def _server_counts(info: dict[str, Any]) -> tuple[int, int, int]:
    """Tasks, annotations and skipped annotations, as the server counts them."""
    tasks, annotations, skipped = (
        int(info.get(k) or 0) for k in ("task_number", "total_annotations_number", "skipped_annotations_number")
    )
    return tasks, annotations, skipped


def _move_in(staging: Path, out_dir: Path) -> None:
    """Move every file of ``staging`` to the same place under ``out_dir`` (the export last)."""
    found = sorted((p for p in staging.rglob("*") if p.is_file()), key=lambda p: p.name == EXPORT_FILE)
    for source in found:
        target = out_dir / source.relative_to(staging)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise WriteError(target.parent, e) from e
        # blinding.jsonl names the systems behind every task: owner-only, as it was written.
        files.replace_durably(source, target, private=source.name == BLINDING_FILE)
