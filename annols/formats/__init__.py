"""Native input and result formats, one module per shipped protocol, behind one registry.

A definition names its format (``format = "qa-feedback"``); a user's own definition
without one gets :mod:`annols.formats.generic` (JSONL/CSV in, tidy tables out).

A format module exposes one object, ``FORMAT``, with:

- ``describe``: one line on the inputs it accepts, for ``--help``;
- ``read(paths, definition) -> Iterator[SourceTask]``: stream the input files, one task at
  a time (never the whole file in memory), raising :class:`~annols.errors.InputError`
  naming file, line or record, and field; judgments already in the input come as
  ``SourceTask.annotations`` (imported only with ``push --with-annotations``); harmless
  typos the reader skipped come as ``SourceTask.warnings`` (push prints them and keeps
  them in the task's meta, so pull can say so too);
- ``read_predictions(paths, definition) -> Iterator[tuple[str, SourcePrediction]]``:
  pre-annotations keyed by task key (formats without them raise InputError);
- ``write_results(tasks, definition, out_dir) -> list[Path]``: the protocol's own result
  files from exported tasks, streamed, each file written atomically;
- ``check(task, annotation, definition) -> list[Violation]``: the protocol's rules the
  server never checks;
- optionally ``annotations_needed``: what an input must hold for ``push --with-annotations``,
  in words (the end of the one line refusing the flag on an input without judgments);
- optionally ``moves_judgments = True``: the judgments it reads are by the input's order of
  candidates, and push may shuffle the candidates of judged tasks, moving the answers with
  them (:func:`annols.study.judges.reframe`); otherwise judged tasks keep the input's order;
- optionally ``joins``: result file name -> :data:`Join`, for every file ``write_results``
  writes, when the files of consecutive runs of tasks, written apart, can be joined into
  the files of all of them. ``convert`` then converts a large export in parts side by side;
- optionally ``record_spans(name, f)`` and ``splice(name, runs, out)`` (and ``renumbered``): every
  file ``write_results`` writes is one record per judgment in task order; ``record_spans`` says
  where each record lies, ``splice`` writes the file of byte ranges of such files (runs of whole
  records), byte for byte what ``write_results`` writes of them, renumbering the records of the
  files named in ``renumbered``. A re-pull then copies the records of the unchanged tasks from the
  earlier pull's files (:func:`annols.study.pull.convert`'s ``keep``). ``record_count(task, definition)``,
  if a format has it, says how many records a task gets in each file (else one per submitted annotation);

Formats are pure: no network, no printing.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from importlib import import_module
from pathlib import Path
from typing import IO, Any, Protocol

from annols import files
from annols.definition import Definition
from annols.errors import InputError
from annols.styles import decode
from annols.styles.answers import ExportedAnnotation, ExportedTask
from annols.styles.judgments import Judgment


@dataclass(frozen=True)
class SourceAnnotation:
    """A judgment already present in the input (e.g. a released dataset's annotations)."""

    annotator: str  # the original annotator's id in the source ("A", "B", "original")
    result: list[dict[str, Any]]  # Label Studio result items, candidates in the task's order
    lead_time: float | None = None


@dataclass(frozen=True)
class ReadWarning:
    """Something harmless in an input a reader ignored (a typo around a marker, junk after the answers)
    or a user should know about (a summary with line breaks).

    Readers never guess a judgment: anything that could change one is an InputError instead.
    """

    source: str  # the file
    location: str  # "line 3", "row 7"
    what: str  # what was ignored or noticed, in words ("ignored a stray line '1' after the last answer")

    def __str__(self) -> str:
        where = f"{self.source}, {self.location}" if self.location else self.source
        return f"{where}: {self.what}"


@dataclass(frozen=True)
class SourceTask:
    """One task read from an input, before blinding."""

    key: str  # stable across runs: a natural id from the source, else a content hash
    data: dict[str, Any]  # Label Studio task data: the config's fields plus carried fields
    location: str  # where it came from, for messages ("dev.json: record 12")
    systems: tuple[str, ...] = ()  # pairwise/ranking: system behind each candidate, in data order
    fixed_order: bool = False  # the source fixes which system is shown where: do not shuffle
    annotations: tuple[SourceAnnotation, ...] = ()
    # Task data the format wants back at pull but annotators must not see: kept in the manifest, off the server.
    extra: dict[str, Any] = field(default_factory=dict)
    warnings: tuple[ReadWarning, ...] = ()  # what the reader tolerated in this task's input
    # The key of the shown texts alone (the generic format's): records of the same texts share one task under it
    # with ``push --share-identical``; "" for formats whose keys are their own ids.
    texts_key: str = ""


@dataclass(frozen=True)
class SourcePrediction:
    """A pre-annotation for annotators to correct (e.g. an LLM critic's output)."""

    result: list[dict[str, Any]]
    model_version: str = ""
    score: float | None = None


@dataclass(frozen=True)
class Violation:
    """A protocol rule an annotation breaks."""

    task_key: str
    annotator: str
    rule: str  # short rule name, e.g. "one-answer-per-column"
    found: str  # what was found, in words


class Format(Protocol):
    name: str
    describe: str

    def read(self, paths: Sequence[Path], definition: Definition) -> Iterator[SourceTask]: ...

    def read_predictions(
        self, paths: Sequence[Path], definition: Definition
    ) -> Iterator[tuple[str, SourcePrediction]]: ...

    def write_results(self, tasks: Iterable[ExportedTask], definition: Definition, out_dir: Path) -> list[Path]: ...

    def check(self, task: ExportedTask, annotation: ExportedAnnotation, definition: Definition) -> list[Violation]: ...


def no_predictions(name: str, paths: Sequence[Path]) -> InputError:
    """The error of a format that takes no pre-annotations."""
    return InputError(
        paths[0] if paths else "", "", "",
        f"{name} takes no --predictions; push judgments the input already holds with --with-annotations",
    )  # fmt: skip


# --- what real spreadsheets hold: shared by the CSV readers ------------------------------------


def csv_header(cells: Sequence[str]) -> list[str]:
    """A header row as a spreadsheet saves it, tidied: names stripped (spaces, NBSP), trailing empty cells dropped."""
    header = [c.strip() for c in cells]
    while header and not header[-1]:
        header.pop()
    return header


def fit_row(
    path: Path | str, where: str, width: int, row: list[str], warnings: list[ReadWarning], noted: set[int]
) -> list[str]:
    """A data row without the cells a spreadsheet keeps beyond a table ``width`` wide.

    Empty cells beyond the header are dropped. Values beyond it are a note beside the table
    when an empty column separates them from it: ignored with a warning (once per column,
    ``noted``), never read. A value right after the last column is more likely a cell split
    by an unquoted comma: an InputError. Shorter rows are left to the caller.
    """
    if len(row) <= width or not any(c.strip() for c in row[width:]):
        return row[:width] if len(row) > width else row
    if row[width].strip():
        raise InputError(path, where, "", f"has {len(row)} cells, the header has {width}; quote cells that "
                         "contain commas, or leave an empty column between the table and any notes")  # fmt: skip
    for i in range(width, len(row)):
        if row[i].strip() and i not in noted:
            noted.add(i)
            warnings.append(ReadWarning(str(path), where, f"ignored a note beside the table in column {i + 1} "
                                        f"({_short(row[i])})"))  # fmt: skip
    return row[:width]


def _short(text: str) -> str:
    text = text.strip()
    return repr(text if len(text) <= 30 else text[:30] + "...")


# --- joining result files written in parts (in task order) --------------------------------------

# Appends the files of the later parts to the file of the first part, in place, streaming.
Join = Callable[[Path, Sequence[Path]], None]
_COPY = 1 << 20


def append_bytes(out: IO[bytes], part: Path, start: int = 0, end: int | None = None) -> None:
    """Bytes ``[start, end)`` of ``part`` (to its end if None) onto ``out``."""
    with open(part, "rb") as f:
        f.seek(start)
        left = (os.fstat(f.fileno()).st_size if end is None else end) - start
        while left > 0 and (chunk := f.read(min(_COPY, left))):
            out.write(chunk)
            left -= len(chunk)


def line_spans(f: IO[bytes], at: int = 0) -> Iterator[tuple[int, int]]:
    """Where each line of ``f`` (read from byte ``at`` on) lies, ``[start, end)``; ValueError if the last one does
    not end with a newline (a file cut short). A format's ``record_spans`` of a file of one record a line."""
    for line in f:
        if not line.endswith(b"\n"):
            raise ValueError(f"{getattr(f, 'name', 'a file')} does not end with a newline")
        yield at, at + len(line)
        at += len(line)


def csv_record_spans(f: IO[bytes], at: int = 0) -> Iterator[tuple[int, int]]:
    """Where each row of the CSV file ``f`` (read from byte ``at`` on) lies, a quoted field's line breaks inside
    its row (a row ends at a line break after an even number of quotes: a quote in a quoted field is doubled);
    ValueError if the last one does not end a row with a newline (a file cut short)."""
    start, quotes = at, 0
    for line in f:
        quotes += line.count(b'"')
        at += len(line)
        if not line.endswith(b"\n"):
            raise ValueError(f"{getattr(f, 'name', 'a file')} does not end with a newline")
        if quotes % 2 == 0:
            yield start, at
            start, quotes = at, 0
    if start != at:
        raise ValueError(f"{getattr(f, 'name', 'a file')} ends inside a quoted field")


def splice_concatenated(runs: Iterable[tuple[IO[bytes], int, int]], out: IO[bytes]) -> None:
    """A format's ``splice`` of a file of records one after another (JSONL): the ranges one after another."""
    for source, start, end in runs:
        files.copy_range(out, source, start, end)


def join_concatenated(first: Path, rest: Sequence[Path]) -> None:
    """Files that are one record after another (JSONL): the parts one after another."""
    with open(first, "ab") as out:
        for part in rest:
            append_bytes(out, part)


def join_csv(first: Path, rest: Sequence[Path]) -> None:
    """CSV files with the same header line: the header once, then every part's rows."""
    with open(first, "ab") as out:
        for part in rest:
            with open(part, "rb") as f:
                header = len(f.readline())
            append_bytes(out, part, header)


def join_separated(separator: bytes) -> Join:
    """Files of entries with ``separator`` between entries (none at the end): the non-empty parts so joined."""

    def join(first: Path, rest: Sequence[Path]) -> None:
        with open(first, "ab") as out:
            empty = out.tell() == 0
            for part in rest:
                if part.stat().st_size:
                    if not empty:
                        out.write(separator)
                    append_bytes(out, part)
                    empty = False

    return join


# How records become tasks, in a push's cached first pass (a change reads the inputs again): 2, a task is
# a record and its systems (annols.formats.generic.Identities); 1, before, the texts alone.
IDENTITY = 2

_json_string = json.encoder.encode_basestring  # what json.dumps(ensure_ascii=False) writes for a str


def content_key(prefix: str, value: Any) -> str:
    """A stable key from content: the same record always gets the same key."""
    if type(value) is dict and all(type(k) is str and type(v) is str for k, v in value.items()):
        # The common case, a few text fields, written as json.dumps below would write it, faster.
        canonical = "{" + ",".join(_json_string(k) + ":" + _json_string(v) for k, v in sorted(value.items())) + "}"
    else:
        canonical = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return f"{prefix}:{hashlib.sha256(canonical.encode('utf-8')).hexdigest()[:20]}"


# The domain of the Label Studio users push makes for a study's original annotators
# (``A@annotators.annols.local``); result writers may name them by their original name.
ANNOTATOR_DOMAIN = "annotators.annols.local"


def original_annotator(annotator: str) -> str:
    """An imported study's annotator by the name the input gave (``A@annotators.annols.local`` -> ``A``)."""
    return annotator.removesuffix("@" + ANNOTATOR_DOMAIN)


_MODULES = {
    "summary-flaws": "summary_flaws",
    "pairwise-aspects": "pairwise_aspects",
    "sentence-errors": "sentence_errors",
    "qa-feedback": "qa_feedback",
    "extractive-ranking": "extractive_ranking",
}


def format_for(definition: Definition) -> Format:
    """The format of a definition: its named native format, else the generic one."""
    module = _MODULES.get(definition.format or "") or _own_format(definition)
    fmt: Format = import_module(f"annols.formats.{module}").FORMAT
    return fmt


def _own_format(definition: Definition) -> str:
    """The module reading a definition without a native format: styles whose tasks annols makes have their own."""
    if definition.style == "best-worst":
        return "best_worst"
    if definition.style == "ratings" and getattr(definition.spec, "groups", None) is not None:
        return "groups"
    return "generic"


def decoded_annotations(task: ExportedTask, definition: Definition) -> list[tuple[ExportedAnnotation, list[Judgment]]]:
    """Each submitted (not cancelled) annotation of a task with its judgments, as the definition's style decodes
    them (:func:`annols.styles.decode`): what a format writes its result files from. What decode reads no judgment
    from is left out; the format's ``check`` names it (violations.csv).

    Remembered for the last task: a conversion checks each annotation of a task, then writes the task."""
    if _DECODED and _DECODED[0][0] is task and _DECODED[0][1] is definition:
        return _DECODED[0][2]
    decoded = [(a, decode(definition, task, a)) for a in task.annotations if not a.cancelled]
    _DECODED[:] = [(task, definition, decoded)]
    return decoded


_DECODED: list[tuple[ExportedTask, Definition, list[tuple[ExportedAnnotation, list[Judgment]]]]] = []
