"""The one reader of a study's pulls for analysis: pull folders (or export files) into one study table.

:func:`read` reads the sources once into :class:`annols.analysis.table.StudyTable`: it
resolves them, refuses a pull of another protocol, a pull made without the manifest and
a blind-only pull beside unblinded ones, reads the pulls' hidden judges and a hybrid
study's pool, the gold input, the adjudication pulls, the record of rounds and each
pull's findings.csv, and streams each export once, keeping while it streams the rows of
every submitted annotation the analyses read: the style's judgments table, the protocol's
rule violations, the judgments on gold items and attention checks (scored), the judges'
answers on the same tasks, the judgments on adjudicated items. ``report``, ``status
--pull``, ``next-round``, ``plan --pilot``, ``adjudicate`` (the project's export staged
as a pull folder) and ``export`` (preference data, with the tasks' texts: ``texts=True``;
the adjudicator's verdicts: :func:`read_verdicts`) read through it; ``pull`` counts each task
by the same reading of a task (:func:`annols.study.exports.task_reading`).

Reading one or several pulls into one study: annotations, items, and who counts where.

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

import json
from array import array
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd  # type: ignore[import-untyped, unused-ignore]

from annols import memory
from annols.analysis.by_style import asked
from annols.analysis.options import ReportOptions
from annols.analysis.planning import sequential
from annols.analysis.raters import quality as scoring
from annols.analysis.raters.quality_findings import span_controls
from annols.analysis.raters.span_agreement import TOKEN
from annols.analysis.table import (
    ANNOTATION_COLUMNS,
    COPY_BASE,
    CREDITED_STYLES,
    KEPT,
    AdjudicationRows,
    Answer,
    GoldRows,
    JudgeRows,
    Judgments,
    Source,
    Study,
    StudyTable,
    TaskTexts,
    judgment_rows,
    kept_mask,
    target_text,
)
from annols.definition import Definition, blinding
from annols.errors import InputError
from annols.formats import format_for
from annols.study import attention, exports, hidden_judges, hybrid, rounds
from annols.study import findings as checks
from annols.study.exports import EXPORT_FILE, PROJECT_FILE, load_annotators, read_export, task_reading
from annols.study.gold import gold_items
from annols.study.judges import Judges, record_id
from annols.study.manifest import NoManifest
from annols.study.pull import check_export_protocol
from annols.study.roles import ATTENTION, STUDY
from annols.styles import decode
from annols.styles.answers import ExportedAnnotation, ExportedTask
from annols.styles.judgments import BestWorst, Judgment, Preference, Rank, tidy

# What the reader keeps of each submitted annotation: (task, annotation, uid).
AddAnnotation = Callable[[ExportedTask, ExportedAnnotation, int], None]


def read(definition: Definition, sources: Sequence[Path], options: ReportOptions | None = None,
         judges: Sequence[Path] = (), judge_pool: Sequence[Path] = (), *, only_judgments: bool = False,
         with_judges: bool = True, texts: bool = False) -> StudyTable:  # fmt: skip
    """The study table of ``sources`` (pull folders or export.json files), read once.

    ``judges``: judge files (:mod:`annols.study.judges`) to set beside the humans, with a pull
    folder's own ``judges/`` (hidden judges, :mod:`annols.study.hidden_judges`). ``judge_pool``:
    input files of items the judges answered beyond the humans' (as a pull folder's
    ``judges/pool.jsonl`` of a hybrid study). ``only_judgments``: keep the style's judgments
    table only (and the judges', ``with_judges``), as ``next-round`` and ``plan --pilot`` read a pull.
    """
    options = options or ReportOptions()
    resolved = [resolve(Path(s)) for s in sources]
    for source in resolved:
        check_protocol(source, definition.name, definition.variant)
        check_export_protocol(source.export, definition)  # a bare export: its task keys name the protocol
    blind = _blind_only(resolved)
    judge_files = [*(p for s in resolved for p in hidden_judges.pulled(s.export.parent)), *judges] \
        if with_judges else []  # fmt: skip
    pool = [*(t for s in resolved if (f := hidden_judges.pool(s.export.parent / hidden_judges.PULL_DIR))
              for t in hybrid.read_pool(f)), *(hybrid.input_pool(definition, judge_pool) if judge_pool else [])] \
        if judge_files else []  # fmt: skip
    judge_set = Judges.read(definition, judge_files, hybrid=bool(pool)) if judge_files else None
    judgments = Judgments(definition)
    fmt = format_for(definition)
    violations: list[tuple[int, str]] = []
    gold = _Gold(definition, options.gold if not only_judgments else (), options.rating_tolerance)
    adjudication = _Adjudication(definition, options.adjudicated if not only_judgments else ())
    beside = _Judges(definition, judge_set) if judge_set is not None else None
    kept_texts = TaskTexts() if texts else None

    def add(task: ExportedTask, annotation: ExportedAnnotation, uid: int) -> None:
        if task.share:  # push --share-identical: a judgment credited to another system too, checked once
            add_judgment(judgments, task, annotation, uid)
            return
        if kept_texts is not None:
            add_texts(definition, kept_texts, task, annotation)
        if not only_judgments:
            violations.extend((uid, v.rule) for v in fmt.check(task, annotation, definition))
        add_judgment(judgments, task, annotation, uid)
        if not only_judgments:
            gold.add(task, annotation, uid)
        if beside is not None:
            beside.add(task, annotation, uid)
        if not only_judgments:
            adjudication.add(task, annotation, uid)

    study = read_study(resolved, add, options.overlap)
    judge_rows = beside.done(pool) if beside is not None else None
    table = StudyTable(definition, study, judgments, blind, violations, gold.rows, adjudication.rows, judge_rows)
    table.texts = kept_texts
    if only_judgments:
        return table
    table.findings = _findings([s.export.parent for s in resolved])
    if options.rounds is not None and not blind:
        table.rounds = _rounds(options.rounds, study)
    return table


def read_judgments(definition: Definition, sources: Sequence[Path], rounds: bool = False) -> tuple[pd.DataFrame, str]:
    """The judgments table of pulls (a pilot's, for ``annols plan --pilot``) as the report reads it, and the
    pulls named for errors; ``rounds``: as a study in rounds reads it (:meth:`Judgments.rounds_frame`)."""
    return _judgments_of(read(definition, sources, only_judgments=True, with_judges=False), rounds)


def _judgments_of(table: StudyTable, rounds: bool = False) -> tuple[pd.DataFrame, str]:
    """:func:`read_judgments` of a table read."""
    study = table.study
    if table.blind:
        raise InputError(study.sources[0].given, "", "", "a blind-only pull names no systems: pull again with the "
                         "study's manifest")  # fmt: skip
    frame = table.judgments.rounds_frame(study) if rounds else table.judgments.frame(study)
    return frame, ", ".join(str(s.given) for s in study.sources)


def read_judged(definition: Definition, sources: Sequence[Path]) -> tuple[pd.DataFrame, list[str]]:
    """The judgments table of pulls with their hidden judges (``plan --pilot`` of a hybrid pilot), as the
    judge-assisted estimates read it, and the judges' annotator names ([] and the humans' rows when the pulls hold
    no judge)."""
    from annols.analysis.judging.judge_findings import assisted_frame

    table = read(definition, sources, only_judgments=True)
    if table.judges is None:  # the humans' rows of the table read (the pulls are not read again)
        return _judgments_of(table)[0], []
    return assisted_frame(table), table.judges.names  # r on the estimates' items and scores (MQM's error score)


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


def _blind_only(sources: Sequence[Source]) -> bool:
    """Whether the sources are blind-only pulls (``pull --blind-only``); a pull made without the study's manifest
    otherwise (by an annols that only warned) is refused, as is a blind-only pull beside unblinded ones."""
    blind = [exports.is_blind_only(s.export.parent) for s in sources]
    for source in sources:
        if exports.pulled_without_manifest(source.export.parent):
            raise NoManifest(f"{source.given} was pulled without the study's manifest (its findings.csv: "
                             "no-manifest); pull it again with the manifest")  # fmt: skip
    if any(blind) and not all(blind):
        raise InputError(next(s.given for s, b in zip(sources, blind, strict=True) if b), "", "",
                         "a blind-only pull (no systems) cannot be reported with unblinded ones; report it "
                         "alone")  # fmt: skip
    return any(blind)


def _findings(folders: Sequence[Path]) -> list[list[Any]]:
    """Every finding of the pulls in ``folders`` (their findings.csv), one row each."""
    rows = []
    for folder in folders:
        for f in checks.read(folder / checks.FINDINGS_FILE):
            rows.append([str(folder), f.task_id if f.task_id is not None else "", f.task_key,
                         f.annotation_id if f.annotation_id is not None else "", f.kind, f.detail])  # fmt: skip
    return rows


def _rounds(record: Path, study: Study) -> list[dict[str, Any]]:
    """The record of next-round's rounds, refused when it names none of the study's items."""
    found = rounds.read_rounds(record)
    if not found:
        raise InputError(record, "", "", "no round recorded (the PROJECT.rounds.jsonl annols next-round writes)")
    pushed = {k for r in found for k in r.get("pushed", [])}
    if len(study.items) and not pushed.intersection(study.items["task_key"].astype(str)):
        raise InputError(record, "", "pushed", "none of its rounds' items is in the sources: the record of "
                         "another project?")  # fmt: skip
    return found


def add_judgment(judgments: Judgments, task: ExportedTask, annotation: ExportedAnnotation, uid: int) -> None:
    """Keep the annotation's rows of the style's judgments table (:func:`annols.analysis.table.judgment_rows`)."""
    self = judgments
    if task.share:  # a shared task's judgment (uid), credited to another system: a copy of its own uid
        if self.definition.style not in CREDITED_STYLES:
            return
        self.copy_of.append(uid)
        uid = COPY_BASE + len(self.copy_of) - 1
    rows = list(judgment_rows(self.definition, task, annotation))
    if rows:  # column by column: one call a column, not one a value
        self.uids.extend([uid] * len(rows))
        self.columns["task_key"].repeat(task.key, len(rows))
        for name, values in zip(KEPT, zip(*rows, strict=True), strict=True):
            self.columns[name].extend(values)
    if self.units is not None and task.key not in self.units:
        self.units[task.key] = asked.unit_of(self.definition.spec, task.data, task.key)
    if self.tokens is not None:
        if len(task.systems) == 1:
            self.judged_system[uid] = task.systems[0]
        if task.key not in self.tokens:
            text = target_text(self.definition, task.data)
            found = [(m.start(), m.end()) for m in TOKEN.finditer(text)]
            self.tokens[task.key] = (np.array([s for s, _ in found], dtype=np.int64),
                                     np.array([e for _, e in found], dtype=np.int64))  # fmt: skip


def shown(definition: Definition, task: ExportedTask, judgments: Sequence[Judgment]) -> list[tuple[str, Any]]:
    """(system, the value of its candidate as the task shows it), by the systems the judgments name (the style's
    own reading of the task: its blinding, else the candidates' titles or positions); pairwise, ranking and
    best-worst judgments only."""
    fields = blinding.candidate_fields(definition)
    out: list[tuple[str, Any]] = []
    for j in judgments:
        if isinstance(j, Preference | BestWorst):
            out.extend((system, task.data.get(name)) for system, name in zip(j.systems, fields, strict=False))
        elif isinstance(j, Rank):
            out.append((j.system, task.data.get(definition.spec.field(j.position))))
    return out


def add_texts(definition: Definition, texts: TaskTexts, task: ExportedTask, annotation: ExportedAnnotation) -> None:
    """Keep what a study task showed: each system's candidate the annotation names (the first value seen stays)
    and the task's context panes."""
    if task.role != STUDY:
        return
    found = shown(definition, task, decode(definition, task, annotation))
    if found:
        by_system = texts.shown.setdefault(task.key, {})
        for system, value in found:
            by_system.setdefault(system, value)
    if task.key not in texts.context:
        texts.context[task.key] = {p.name: task.data.get(p.name) for p in definition.spec.context}


def read_verdicts(definition: Definition, adjudicated: Sequence[Path]) -> dict[str, Answer]:
    """Item key -> the adjudicator's verdict, from adjudication pulls (``annols adjudicate``'s project, pulled: each
    task one submitted annotation, else refused by name) or a gold-format input: ``report --adjudicated`` and
    ``export --rule adjudicated`` read them alike."""
    return {k: _answer(v) for k, v in gold_items(definition, adjudicated).items()} if adjudicated else {}


def _answer(item: Any) -> Answer:
    return Answer(item.key, item.task, item.annotation)


class _Gold:
    """Keeps the judgments on gold items (scored against the gold input) and attention checks."""

    def __init__(self, definition: Definition, gold: Sequence[Path], tolerance: float) -> None:
        self.definition = definition
        self.rows = GoldRows({k: _answer(v) for k, v in gold_items(definition, gold).items()} if gold else {})
        self.known: dict[str, Any] = {}
        self.tolerance = tolerance
        self.controls = span_controls(definition)

    def add(self, task: ExportedTask, annotation: ExportedAnnotation, uid: int) -> None:
        if task.role == STUDY:
            return
        self.rows.roles.add(task.role)
        if task.role == ATTENTION:  # the right answer follows from the task itself
            judged = decode(self.definition, task, annotation)
            self.rows.given.append((uid, task.key, attention.score(self.definition, task, judged, self.tolerance)))
            return
        item = self.rows.gold.get(task.key)
        if item is None:
            return
        if task.key not in self.known:
            self.known[task.key] = decode(self.definition, item.task, item.annotation)
        given = decode(self.definition, task, annotation)
        self.rows.given.append((uid, task.key, scoring.score_item(self.known[task.key], given, self.tolerance,
                                                                  self.controls)))  # fmt: skip


class _Adjudication:
    """Keeps the judgments on the adjudicated items (report --adjudicated: the verdicts' pulls)."""

    def __init__(self, definition: Definition, adjudicated: Sequence[Path]) -> None:
        self.definition = definition
        self.rows = AdjudicationRows(read_verdicts(definition, adjudicated))

    def add(self, task: ExportedTask, annotation: ExportedAnnotation, uid: int) -> None:
        if task.role == STUDY and task.key in self.rows.verdicts:
            self.rows.given.append((uid, task.key, decode(self.definition, task, annotation)))


class _Judges:
    """Keeps the judges' answers on each task the humans judged, decoded as the humans' are."""

    def __init__(self, definition: Definition, judges: Judges) -> None:
        self.definition = definition
        self.judges = judges
        self.done_keys: set[str] = set()
        spec = definition.spec
        self.rows = JudgeRows(Judgments(definition), [f"judge:{n}" for n in judges.names],
                              f"{spec.labels_name}_none" if definition.style == "spans" else None)  # fmt: skip

    def add(self, task: ExportedTask, annotation: ExportedAnnotation, uid: int) -> None:
        add_judgment(self.rows.humans, task, annotation, uid)
        if task.key in self.done_keys:
            return
        self._judged(task)

    def _judged(self, task: ExportedTask) -> None:
        """The judges' answers on a task, decoded as the humans' are."""
        rows = self.rows
        self.done_keys.add(task.key)
        rows.record_ids[task.key] = record_id(task)
        if len(task.systems) == 1:
            rows.task_systems[task.key] = task.systems[0]
        if self.definition.style in sequential.BY_ITEM:
            rows.units[task.key] = asked.unit_of(self.definition.spec, task.data, task.key)
        for found in self.judges.annotations(task):
            uid = -1 - len(rows.judged)
            rows.judged.append((task.key, found.annotator, uid))
            for row in tidy(decode(self.definition, task, found)):
                if row[0] == "choice" and row[1] == rows.none_question:
                    continue  # spans: "none found" is in the span F1 (no spans on both sides)
                rows.rows.append([task.key, found.annotator, uid, *row])

    def done(self, pool: Sequence[ExportedTask]) -> JudgeRows:
        """The rows, the pool's items (a hybrid study's judge-only items) judged too; every judge answer used."""
        for task in pool:
            if task.key not in self.done_keys:
                self._judged(task)
        self.rows.pool = bool(pool)
        self.judges.check_used()
        return self.rows


def read_study(sources: Sequence[Source], add: AddAnnotation, overlap_option: int | None) -> Study:
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
        for exported in read_export(source.export, load_annotators(source.export)):
            reading = task_reading(exported, index)  # as pull counts it: key, item, the annotators' annotations
            task, key = reading.task, reading.task.key
            if not reading.counted:  # push --share-identical: the judgments just read, credited to another system
                sharing[key] = max(sharing.get(key, 0), task.share + 1)
                for a in reading.annotations:
                    if not a.cancelled and a.id in first:
                        add(task, a, first[a.id])
                continue
            source_tasks[index] += 1
            if reading.item:  # gold items and attention checks are no items of the study
                at = item_at.setdefault(key, len(item_ids))
                if at == len(item_ids):
                    item_ids.append(task.id)
                    item_sources.append(0)
                item_sources[at] |= 1 << index
            for a in reading.annotations:  # seen on an earlier task or source (a project pulled twice): once
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
    annotations["kept"] = kept_mask(annotations) & (annotations["role"] == "study")
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
    return Study(list(sources), annotations, items, overlaps, source_tasks, sharing)


def _seconds(value: Any) -> float:
    """A lead time as a number, as ``pd.to_numeric(errors="coerce")`` reads it: nan when it is none."""
    if type(value) in (int, float):
        return float(value)
    if value is None:
        return float("nan")
    return float(pd.to_numeric(pd.Series([value], dtype=object), errors="coerce").astype("float64").iloc[0])


def _overlap(source: Source, option: int | None, seen_max: int) -> tuple[int, str]:
    if source.overlap is not None:
        return source.overlap, PROJECT_FILE
    if option is not None:
        return option, "--overlap"
    return seen_max, "most annotators seen on an item"
