"""The pairwise-aspects format: the text files of Shen et al.'s CNN/DM human evaluation (seed 001).

The release (``human_evaluation/`` of shenwzh3/jgr-anonymous) has one folder per annotator
(``A``, ``B``, ``C``), each with one file per sample (``0.txt`` ... ``99.txt``), and
``index_marker.json``, a list of ``{"sample": 0, "summary #1": "bart", "summary #2": "JGR"}``
naming the system behind each summary. The canonical file, as in the guideline's example
and the release (``S`` is a line of 70 ``=``, ``<v>`` is 1, 2 or 0, ``\\n`` is LF)::

    Doc:\\n<document>\\nS\\n\\nSummary #1\\n<summary 1>\\nS\\n\\nSummary #2\\n<summary 2>\\nS\\n\\n
    [***] informative:<v>\\n[***] factual consistency:<v>\\n[***] readability:<v>\\n

that is: the header line ``Doc:``, the document (verbatim, it may span lines), a line of
70 ``=``, one blank line, ``Summary #1``, its text, the ``=`` line, a blank line, the same
for ``Summary #2``, a blank line, and one ``[***] <aspect>:<v>`` line per aspect, no space
after the colon, no BOM, LF line endings, a final newline. An unanswered file (nothing
after the colons) is a template: it gives a task but no annotation.

Reading is lenient where the release is: a UTF-8 BOM (many files of one annotator), CRLF
line endings (a mirror of the release), spaces around the colon and the value
(``informative: 2``), blank lines before ``Doc:`` or between sections. Typos annotators
typed into their files (two of the release's 300 files hold one) are ignored with a
:class:`~annols.formats.ReadWarning` naming the file and line: up to 3 stray characters
around a marker line (``xDoc:``, ``Summary #2q``, a line of 70 ``=`` and a stray character,
``s[***] readability:1``), and stray lines after the last answer (a lone digit), unless
that line is an answer code while an aspect is unanswered. No judgment is ever guessed:
a value that is not exactly a code once trimmed (``2x``), a stray line between answers,
or an aspect answered twice is an error. Everything else is an
:class:`~annols.errors.InputError` naming the file, the line and the section or aspect.

Inputs (``read``):

- a seed-001 folder (or its ``index_marker.json``): every subfolder holding ``<n>.txt``
  files is an annotator (its name is the annotator id); ``<n>.txt`` directly in the folder
  are templates. One task per sample ``n``; its document and summaries must be the same
  in every file of that sample (after BOM and CRLF removal). ``systems`` come from
  ``index_marker.json`` and ``fixed_order`` is True: the study fixed which summary is #1.
  Task data ``{"document", "summary_1", "summary_2", "sample": n}``; one
  :class:`SourceAnnotation` per annotator file with answers.
- JSONL, one record a line: ``document``, ``system_1``, ``summary_1``, ``system_2``,
  ``summary_2`` (strings), optional ``id`` and other fields. Task data
  ``{"document", "summary_1", "summary_2", "record": {...}}`` where ``record`` holds every
  other field of the record; the system names stay out of the data (annotators can see
  task data in Label Studio's data manager), they travel in ``SourceTask.systems``.

Either way the key is ``content_key("pairwise-aspects", {document, summary_1, summary_2})``
in input order, so it does not depend on which annotator folder was read first.

Label Studio results: one ``choices`` item per aspect, ``from_name`` the aspect's name in
the definition (``informative``, ``factual_consistency``, ``readability``), ``to_name``
``summary_1``, ``value {"choices": ["1"|"2"|"0"]}``: the seed's codes, 1 = the summary
shown as #1 wins, 2 = the one shown as #2, 0 = tie.

Results (``write_results``), written in the order the summaries were SHOWN (so answers
need no remapping; seed-layout tasks are never swapped, so this is the study's order):

- ``<annotator>/<n>.txt`` in the canonical layout, answers filled in. ``<annotator>`` is
  the part of the annotator's e-mail before ``@`` (``annotator-a@x.org`` -> ``annotator-a``;
  a name without ``@`` is used whole), characters other than letters, digits, ``.-_+``
  replaced by ``_``; if two e-mails share it, the whole e-mail is used. ``n`` is
  ``data["sample"]`` when present, else the task's running index among tasks without one
  (0, 1, ... in export order). A user with several annotations of one task: the latest
  (``created_at``, then id) counts; cancelled (skipped) annotations are left out.
- ``index_marker.json``: ``{"sample", "summary #1", "summary #2"}`` per task, the systems
  SHOWN as #1 and #2, sorted by sample, formatted like the release: ``json.dumps``
  defaults (one line, ``", "`` and ``": "`` separators, ASCII escapes), no final newline.
- ``judgments.csv``: ``sample, annotator, aspect, system_1, system_2, value, winner``, one
  row per task x annotator x aspect; ``aspect`` in the seed's wording, ``annotator`` the
  folder name, ``value`` the code as the pairwise style decodes it (the ``.txt`` file writes
  the same after the colon), ``winner`` the winning system or ``tie``; both empty when the
  aspect has no judgment: unanswered, or unreadable (two answers, a code not the seed's),
  which ``check`` names in violations.csv. Tasks without
  system names get empty system columns and ``summary #1`` / ``summary #2`` as winner.
"""

from __future__ import annotations

import csv
import json
import os
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from annols.definition import Definition
from annols.errors import DefinitionError, InputError
from annols.files import atomic_open, write_text
from annols.formats import (
    ReadWarning,
    SourceAnnotation,
    SourcePrediction,
    SourceTask,
    Violation,
    content_key,
    decoded_annotations,
    no_predictions,
)
from annols.styles.answers import ExportedAnnotation, ExportedTask
from annols.styles.judgments import Judgment, Preference, choices_by_name

RULE = "=" * 70
MARKER = "index_marker.json"
TIE = "0"
_SAMPLE_FILE = re.compile(r"^(0|[1-9][0-9]*)\.txt$")
_ANSWER_LINE = re.compile(r"^(?P<stray>[^\[]{0,3})\[\*\*\*\]\s*(?P<aspect>[^:]*?)\s*:\s*(?P<value>.*?)\s*$")
_JSONL_FIELDS = ("document", "system_1", "summary_1", "system_2", "summary_2")
_UNSAFE = re.compile(r"[^\w.+@-]")
_CSV_COLUMNS = ("sample", "annotator", "aspect", "system_1", "system_2", "value", "winner")


@dataclass(frozen=True)
class Layout:
    """The names the definition gives to the seed's parts (fields, aspects, answer codes)."""

    document: str
    summaries: tuple[str, str]
    aspects: tuple[tuple[str, str], ...]  # (result from_name, the seed's wording)
    codes: tuple[str, ...]
    code_of_text: dict[str, str]  # a choice's shown text -> its code, for hand-made results

    @property
    def fields(self) -> tuple[str, str, str]:
        return (self.document, *self.summaries)

    def wording(self, name: str) -> str:
        return dict(self.aspects)[name]


def layout(definition: Definition) -> Layout:
    """Read the field, aspect and code names from the definition, so the config and format agree."""
    spec = definition.spec
    if definition.style != "pairwise" or len(spec.context) != 1:
        raise DefinitionError(
            definition.source, "format", "pairwise-aspects needs a pairwise definition with one context"
        )
    return Layout(
        document=spec.context[0].name,
        summaries=(spec.candidates[0].name, spec.candidates[1].name),
        aspects=tuple((a.name, a.text) for a in spec.aspects),
        codes=tuple(c.code for c in spec.answers),
        code_of_text={c.text: c.code for c in spec.answers},
    )


# ---------------------------------------------------------------------------------------
# Parsing one sample file


STRAY = 3  # at most this many stray characters typed around a marker line are ignored (with a warning)
_RULE_LINE = re.compile(r"^(?P<before>[^=]{0,3})={70}(?P<after>[^=]{0,3})$")


@dataclass
class SampleFile:
    """One parsed ``<n>.txt``: its texts, the line each section starts on, and its answers."""

    path: Path
    texts: dict[str, str] = field(default_factory=dict)  # field name -> text
    lines: dict[str, int] = field(default_factory=dict)  # field name -> first line of its text
    answers: dict[str, str] = field(default_factory=dict)  # aspect name -> code ("" unanswered)
    warnings: list[ReadWarning] = field(default_factory=list)  # typos ignored, one per line

    @property
    def answered(self) -> bool:
        return any(self.answers.values())


def normalised_text(path: Path) -> str:
    """The file's text without a BOM and with CRLF turned into LF, as every copy must agree on."""
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise InputError(path, "", "", f"cannot be read ({e.strerror})") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = raw[: e.start].count(b"\n") + 1
        raise InputError(path, f"line {line}", "", "not UTF-8 text; save the file as UTF-8") from None
    return text.replace("\r\n", "\n")


class _Lines:
    """A cursor over a file's lines that knows its 1-based line number, for messages."""

    def __init__(self, path: Path, text: str) -> None:
        self.path = path
        self.lines = text.split("\n")
        self.i = 0
        self.warnings: list[ReadWarning] = []

    def warn(self, ignored: str) -> None:
        self.warnings.append(ReadWarning(str(self.path), f"line {self.number}", f"ignored {ignored}"))

    @property
    def number(self) -> int:
        return self.i + 1

    def at_end(self) -> bool:
        return self.i >= len(self.lines)

    def skip_blank(self) -> None:
        while not self.at_end() and not self.lines[self.i].strip():
            self.i += 1

    def fail(self, where: str, problem: str) -> InputError:
        line = min(self.number, len(self.lines))
        return InputError(self.path, f"line {line}", where, problem)


def _expect_header(cur: _Lines, header: str) -> None:
    cur.skip_blank()
    if cur.at_end():
        raise cur.fail(header, f"the {header!r} section is missing; the file ends before it")
    found = cur.lines[cur.i]
    if found.strip() != header:
        stray = _stray(found.strip(), header)
        if stray is None:
            raise cur.fail(header, f"expected the line {header!r}, found {_short(found)}")
        cur.warn(f"stray {stray!r} typed around the line {header!r}")
    cur.i += 1


def _stray(line: str, marker: str) -> str | None:
    """The few characters typed before or after ``marker`` on its line; None if the line is something else."""
    at = line.find(marker)
    if at < 0:
        return None
    before, after = line[:at].strip(), line[at + len(marker) :].strip()
    if not before + after or len(before) + len(after) > STRAY:
        return None
    return before + after


def _section_text(cur: _Lines, header: str) -> tuple[str, int]:
    """The lines up to the next line of 70 '=', verbatim: the texts must survive byte-exact."""
    start = cur.number
    body: list[str] = []
    while not cur.at_end():
        line = cur.lines[cur.i]
        cur.i += 1
        if line.rstrip() == RULE:
            return "\n".join(body), start
        match = _RULE_LINE.match(line.strip())
        if match:
            cur.i -= 1
            cur.warn(f"stray {match['before'] + match['after']!r} typed around the line of 70 '='")
            cur.i += 1
            return "\n".join(body), start
        body.append(line)
    raise InputError(cur.path, f"line {start}", header, "no line of 70 '=' ends this section")


def _read_answers(cur: _Lines, lay: Layout) -> dict[str, str]:
    by_wording = {wording: name for name, wording in lay.aspects}
    answers: dict[str, str] = {}
    while not cur.at_end():
        line = cur.lines[cur.i]
        if line.strip() and len(answers) == len(lay.aspects) and not _ANSWER_LINE.match(line.strip()):
            _junk_after_answers(cur, line, answers, lay)
        elif line.strip():
            name, value = _answer_line(cur, line, by_wording, lay)
            if name in answers:
                raise cur.fail(lay.wording(name), "answered twice; keep one line per aspect")
            answers[name] = value
        cur.i += 1
    for name, wording in lay.aspects:
        if name not in answers:
            raise cur.fail(wording, f"the line '[***] {wording}:' is missing; add it (with 1, 2 or 0)")
    return answers


def _junk_after_answers(cur: _Lines, line: str, answers: dict[str, str], lay: Layout) -> None:
    """A stray line after the last answer: ignored, unless it could be an answer typed on the wrong line."""
    junk = line.strip()
    unanswered = [lay.wording(name) for name, value in answers.items() if not value]
    if junk in lay.codes and unanswered:
        raise cur.fail(unanswered[0], f"{junk!r} stands alone after the answers while {unanswered[0]!r} has none; "
                       "type the answer after its colon")  # fmt: skip
    cur.warn(f"a stray line {_short(junk)} after the last answer")


def _answer_line(cur: _Lines, line: str, by_wording: dict[str, str], lay: Layout) -> tuple[str, str]:
    match = _ANSWER_LINE.match(line.strip())
    if not match:
        raise cur.fail("", f"expected a line '[***] <aspect>:<1, 2 or 0>', found {_short(line)}")
    if match["stray"].strip():
        cur.warn(f"stray {match['stray'].strip()!r} typed before '[***]'")
    wording, value = match["aspect"], match["value"]
    if wording not in by_wording:
        raise cur.fail(wording, f"unknown aspect; expected one of {', '.join(w for _, w in lay.aspects)}")
    if value and value not in lay.codes:
        raise cur.fail(wording, f"{value!r} is not an answer; type one of {', '.join(lay.codes)} (0 = tie)")
    return by_wording[wording], value


def parse_sample_file(path: Path, lay: Layout) -> SampleFile:
    """Parse one annotator's (or a template) file of the release."""
    cur = _Lines(path, normalised_text(path))
    parsed = SampleFile(path)
    for header, name in (("Doc:", lay.document), ("Summary #1", lay.summaries[0]), ("Summary #2", lay.summaries[1])):
        _expect_header(cur, header)
        parsed.texts[name], parsed.lines[name] = _section_text(cur, header)
    parsed.answers = _read_answers(cur, lay)
    parsed.warnings = cur.warnings
    return parsed


def _short(line: str) -> str:
    return repr(line if len(line) <= 40 else line[:40] + "...")


# ---------------------------------------------------------------------------------------
# Reading a seed-001 folder


def _read_marker(path: Path) -> dict[int, tuple[str, str]]:
    """index_marker.json: sample -> (system of #1, system of #2). It is small: a list per sample."""
    try:
        entries = json.loads(normalised_text(path))
    except json.JSONDecodeError as e:
        raise InputError(path, f"line {e.lineno}", "", f"not valid JSON ({e.msg})") from None
    if not isinstance(entries, list):
        raise InputError(path, "", "", 'expected a JSON list of {"sample", "summary #1", "summary #2"}')
    marker: dict[int, tuple[str, str]] = {}
    for number, entry in enumerate(entries, start=1):
        sample, systems = _marker_entry(path, number, entry)
        if sample in marker:
            raise InputError(path, f"record {number}", "sample", f"sample {sample} is listed twice; keep one entry")
        marker[sample] = systems
    return marker


def _marker_entry(path: Path, number: int, entry: Any) -> tuple[int, tuple[str, str]]:
    where = f"record {number}"
    if not isinstance(entry, dict):
        raise InputError(path, where, "", 'expected an object {"sample", "summary #1", "summary #2"}')
    sample = entry.get("sample")
    if not isinstance(sample, int) or isinstance(sample, bool) or sample < 0:
        raise InputError(path, where, "sample", "missing or not a sample number (0, 1, ...)")
    systems = []
    for key in ("summary #1", "summary #2"):
        value = entry.get(key)
        if not isinstance(value, str) or not value:
            raise InputError(path, where, key, "missing; name the system that wrote this summary")
        systems.append(value)
    return sample, (systems[0], systems[1])


def _sample_files(folder: Path) -> dict[int, Path]:
    """``<n>.txt`` files directly in a folder, by sample number (names only: nothing is read)."""
    found: dict[int, Path] = {}
    with os.scandir(folder) as entries:
        for entry in entries:
            match = _SAMPLE_FILE.match(entry.name)
            if match and entry.is_file():
                found[int(match[1])] = Path(entry.path)
    return found


def _annotator_folders(root: Path) -> dict[str, dict[int, Path]]:
    folders: dict[str, dict[int, Path]] = {}
    with os.scandir(root) as entries:
        for entry in sorted(entries, key=lambda e: e.name):
            if entry.is_dir() and not entry.name.startswith("."):
                files = _sample_files(Path(entry.path))
                if files:
                    folders[entry.name] = files
    return folders


def _same_texts(first: SampleFile, other: SampleFile, sample: int) -> None:
    for name, text in first.texts.items():
        if other.texts[name] != text:
            raise InputError(
                other.path,
                f"line {other.lines[name]}",
                name,
                f"differs from {first.path}; every file of sample {sample} must show the same document and summaries",
            )


def _rel(path: Path, root: Path) -> str:
    return str(path.relative_to(root)) if path.is_relative_to(root) else str(path)


def read_seed_folder(root: Path, lay: Layout, prefix: str) -> Iterator[SourceTask]:
    """One task per sample of a seed-001 folder, sample by sample: one file per annotator is open at a time."""
    marker_path = root / MARKER
    if not marker_path.is_file():
        raise InputError(root, "", "", f"no {MARKER} in this folder; a seed-001 folder names its systems there")
    marker = _read_marker(marker_path)
    templates = _sample_files(root)
    folders = _annotator_folders(root)
    samples = sorted(set(templates).union(*(files.keys() for files in folders.values())))
    if not samples:
        raise InputError(root, "", "", "no <n>.txt files, neither in annotator folders nor in the folder itself")
    for sample in samples:
        copies: list[tuple[str | None, Path]] = [(None, templates[sample])] if sample in templates else []
        copies += [(name, files[sample]) for name, files in folders.items() if sample in files]
        if sample not in marker:
            where = ", ".join(_rel(p, root) for _, p in copies)
            raise InputError(marker_path, "", "sample", f"no entry for sample {sample} (files: {where}); add one")
        yield _seed_task(root, sample, copies, marker[sample], lay, prefix)


def _seed_task(
    root: Path, sample: int, copies: list[tuple[str | None, Path]], systems: tuple[str, str], lay: Layout, prefix: str
) -> SourceTask:
    first: SampleFile | None = None
    annotations = []
    warnings: list[ReadWarning] = []
    for annotator, path in copies:
        parsed = parse_sample_file(path, lay)
        warnings += parsed.warnings
        if first is None:
            first = parsed
        else:
            _same_texts(first, parsed, sample)
        if annotator is not None and parsed.answered:
            annotations.append(SourceAnnotation(annotator=annotator, result=result_items(parsed.answers, lay)))
    assert first is not None  # every sample comes from at least one file
    content = {name: first.texts[name] for name in lay.fields}
    return SourceTask(
        key=content_key(prefix, content),
        data={**content, "sample": sample},
        location=f"{root}: sample {sample}",
        systems=systems,
        fixed_order=True,
        annotations=tuple(annotations),
        warnings=tuple(warnings),
    )


def result_items(answers: dict[str, str], lay: Layout) -> list[dict[str, Any]]:
    """Label Studio result items for the answered aspects, in the definition's order."""
    return [
        {
            "id": name,
            "from_name": name,
            "to_name": lay.summaries[0],
            "type": "choices",
            "value": {"choices": [answers[name]]},
            "origin": "manual",
        }
        for name, _ in lay.aspects
        if answers.get(name)
    ]


# ---------------------------------------------------------------------------------------
# Reading JSONL


def read_jsonl(path: Path, lay: Layout, prefix: str) -> Iterator[SourceTask]:
    """One task per record, line by line (bytes, so a bad line is reported with its number)."""
    try:
        f = path.open("rb")
    except OSError as e:
        raise InputError(path, "", "", f"cannot be read ({e.strerror})") from None
    with f:
        for number, raw in enumerate(f, start=1):
            where = f"line {number}"
            try:
                line = raw.decode("utf-8-sig" if number == 1 else "utf-8")
            except UnicodeDecodeError:
                raise InputError(path, where, "", "not UTF-8 text; save the file as UTF-8") from None
            if line.strip():
                yield _jsonl_task(path, where, line, lay, prefix)


def _jsonl_task(path: Path, where: str, line: str, lay: Layout, prefix: str) -> SourceTask:
    try:
        record = json.loads(line)
    except json.JSONDecodeError as e:
        raise InputError(path, where, "", f"not valid JSON ({e.msg})") from None
    if not isinstance(record, dict):
        raise InputError(path, where, "", "expected a JSON object")
    for name in _JSONL_FIELDS:
        if name not in record:
            raise InputError(path, where, name, f"missing; every record needs {', '.join(_JSONL_FIELDS)}")
        if not isinstance(record[name], str):
            raise InputError(path, where, name, "expected a string")
        if name.startswith("system") and not record[name].strip():
            raise InputError(path, where, name, "empty; name the system that wrote the summary")
    content = {lay.document: record["document"], lay.summaries[0]: record["summary_1"],
               lay.summaries[1]: record["summary_2"]}  # fmt: skip
    rest = {k: v for k, v in record.items() if k not in _JSONL_FIELDS}
    return SourceTask(
        key=content_key(prefix, content),
        data={**content, "record": rest},
        location=f"{path}: {where}",
        systems=(record["system_1"], record["system_2"]),
        fixed_order=False,
    )


# ---------------------------------------------------------------------------------------
# Writing results


def canonical_text(texts: dict[str, str], answers: dict[str, str], lay: Layout) -> str:
    """One sample file in the release's layout (see the module docstring)."""
    parts = [
        f"Doc:\n{texts[lay.document]}\n{RULE}\n\n",
        f"Summary #1\n{texts[lay.summaries[0]]}\n{RULE}\n\n",
        f"Summary #2\n{texts[lay.summaries[1]]}\n{RULE}\n\n",
    ]
    parts += [f"[***] {wording}:{answers.get(name, '')}\n" for name, wording in lay.aspects]
    return "".join(parts)


def choices_by_aspect(result: Sequence[dict[str, Any]], lay: Layout) -> dict[str, list[str]]:
    """Every choice given per from_name, as codes (a choice's shown text maps back to its code), read as the
    pairwise style's decode reads them (:func:`annols.styles.judgments.choices_by_name`)."""
    return {name: [lay.code_of_text.get(c, c) for c in codes] for name, codes in choices_by_name(result).items()}


def _answer_values(judged: Iterable[Judgment], lay: Layout) -> dict[str, str]:
    """Aspect -> the value to write: the code of the annotation's preference on it, as the style decodes it;
    "" where it has none (unanswered, or unreadable: two answers, an unknown code; ``check`` names it)."""
    codes = {j.aspect: j.code for j in judged if isinstance(j, Preference)}
    return {name: codes.get(name, "") for name, _ in lay.aspects}


def folder_name(annotator: str) -> str:
    """The results folder of an annotator: the e-mail's part before '@', made safe as a file name."""
    local = annotator.split("@", 1)[0] if "@" in annotator else annotator
    return _safe(local)


def _safe(name: str) -> str:
    name = _UNSAFE.sub("_", name)
    return f"_{name}" if not name or name.startswith(".") else name


def _latest(decoded: Iterable[tuple[ExportedAnnotation, list[Judgment]]]) -> dict[str, list[Judgment]]:
    """Each annotator's judgments of their latest submitted annotation."""
    latest: dict[str, tuple[ExportedAnnotation, list[Judgment]]] = {}
    for a, judged in decoded:
        kept = latest.get(a.annotator)
        if kept is None or (a.created_at, a.id) > (kept[0].created_at, kept[0].id):
            latest[a.annotator] = (a, judged)
    return {annotator: judged for annotator, (_, judged) in latest.items()}


class _ResultWriter:
    """Writes one task at a time; only the small index marker waits for the end, to be sorted."""

    def __init__(self, out_dir: Path, definition: Definition, csv_file: Any) -> None:
        self.out_dir = out_dir
        self.definition = definition
        self.lay = layout(definition)
        self.rows = csv.writer(csv_file, lineterminator="\n")
        self.rows.writerow(_CSV_COLUMNS)
        self.marker: list[dict[str, Any]] = []
        self.samples: dict[int, int] = {}  # sample -> task id, to refuse writing a sample twice
        self.folders: dict[str, str] = {}  # folder -> annotator e-mail
        self.running = 0
        self.paths: list[Path] = []

    def folder(self, annotator: str) -> str:
        name = folder_name(annotator)
        if self.folders.setdefault(name, annotator) != annotator:
            name = _safe(annotator)
            self.folders.setdefault(name, annotator)
        return name

    def sample(self, task: ExportedTask) -> int:
        value = task.data.get("sample")
        if isinstance(value, int) and not isinstance(value, bool):
            sample = value
        else:
            sample, self.running = self.running, self.running + 1
        if sample in self.samples:
            raise InputError(
                f"task {task.id}", "", "sample",
                f"sample {sample} is also task {self.samples[sample]}; pull seed-folder and JSONL tasks "
                "into separate projects or folders",
            )  # fmt: skip
        self.samples[sample] = task.id
        return sample

    def texts(self, task: ExportedTask) -> dict[str, str]:
        texts: dict[str, str] = {}
        for name in self.lay.fields:
            value = task.data.get(name)
            if not isinstance(value, str):
                raise InputError(f"task {task.id}", "", name, "missing from the exported task data")
            texts[name] = value
        return texts

    def write(self, task: ExportedTask) -> None:
        sample, texts = self.sample(task), self.texts(task)
        systems = (task.systems[0], task.systems[1]) if len(task.systems) == 2 else ("", "")
        self.marker.append({"sample": sample, "summary #1": systems[0], "summary #2": systems[1]})
        for annotator, judged in _latest(decoded_annotations(task, self.definition)).items():
            folder = self.folder(annotator)
            answers = _answer_values(judged, self.lay)
            path = self.out_dir / folder / f"{sample}.txt"
            write_text(path, canonical_text(texts, answers, self.lay))
            self.paths.append(path)
            for name, wording in self.lay.aspects:
                value = answers[name]
                self.rows.writerow([sample, folder, wording, *systems, value, _winner(value, systems)])

    def write_marker(self) -> Path:
        path = self.out_dir / MARKER
        write_text(path, json.dumps(sorted(self.marker, key=lambda e: e["sample"])))
        return path


def _winner(value: str, systems: tuple[str, str]) -> str:
    if value == TIE:
        return "tie"
    if value in ("1", "2"):
        position = int(value) - 1
        return systems[position] or f"summary #{value}"
    return ""


# ---------------------------------------------------------------------------------------
# Checking


def check_annotation(task: ExportedTask, annotation: ExportedAnnotation, lay: Layout) -> list[Violation]:
    """Each aspect answered exactly once with a seed code; no answers to questions the protocol has not."""
    if annotation.cancelled:
        return []
    found: list[Violation] = []
    given = choices_by_aspect(annotation.result, lay)
    for name, wording in lay.aspects:
        codes = given.get(name, [])
        problem = ""
        if not codes:
            problem = "no answer"
        elif len(codes) > 1:
            problem = f"{len(codes)} answers ({', '.join(codes)})"
        elif codes[0] not in lay.codes:
            problem = f"{codes[0]!r} is not one of {', '.join(lay.codes)}"
        if problem:
            found.append(Violation(task.key, annotation.annotator, "aspect-answered", f"{wording}: {problem}"))
    known = {name for name, _ in lay.aspects}
    for item in annotation.result:
        from_name = item.get("from_name")
        if from_name not in known:
            kind = item.get("type", "result")
            what = f"an answer to {from_name!r}" if from_name else f"a {kind} item without from_name"
            found.append(Violation(task.key, annotation.annotator, "unknown-question", what))
    return found


# ---------------------------------------------------------------------------------------
# The format object


class PairwiseAspectsFormat:
    name = "pairwise-aspects"
    describe = (
        "a seed-001 folder (index_marker.json + annotator folders of <n>.txt) or JSONL with "
        "document, system_1, summary_1, system_2, summary_2"
    )

    def read(self, paths: Sequence[Path], definition: Definition) -> Iterator[SourceTask]:
        lay = layout(definition)
        for path in paths:
            path = Path(path)
            if path.is_dir():
                yield from read_seed_folder(path, lay, self.name)
            elif path.name == MARKER:
                yield from read_seed_folder(path.parent, lay, self.name)
            elif path.suffix.lower() == ".jsonl":
                yield from read_jsonl(path, lay, self.name)
            elif not path.exists():
                raise InputError(path, "", "", "not found")
            else:
                raise InputError(path, "", "", "expected a seed-001 folder (with index_marker.json) or a .jsonl file")

    def read_predictions(self, paths: Sequence[Path], definition: Definition) -> Iterator[tuple[str, SourcePrediction]]:
        raise no_predictions(self.name, paths)

    # No record_spans/splice (a re-pull converts every task): the seed's files are one per annotator and sample, a
    # sample without a number of its own is numbered by the tasks before it, an annotator's folder name by the other
    # annotators seen, and the marker is sorted at the end; none is one record after another per task.
    def write_results(self, tasks: Iterable[ExportedTask], definition: Definition, out_dir: Path) -> list[Path]:
        out_dir = Path(out_dir)
        csv_path = out_dir / "judgments.csv"
        with atomic_open(csv_path) as f:
            writer = _ResultWriter(out_dir, definition, f)
            for task in tasks:
                writer.write(task)
        return [*writer.paths, csv_path, writer.write_marker()]

    def check(self, task: ExportedTask, annotation: ExportedAnnotation, definition: Definition) -> list[Violation]:
        return check_annotation(task, annotation, layout(definition))


FORMAT = PairwiseAspectsFormat()
