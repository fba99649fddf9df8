"""An MQM vendor file (the TSV layout of Google's WMT MQM releases) as judged records of a spans definition.

The layout (Freitag et al. 2021, github.com/google/wmt-mqm-human-evaluation): a header line, then one row per
error, tab-separated, with the columns ``system doc doc_id seg_id rater source target category severity``
(further columns, such as ``comment``, are read and left out). The error's words are marked ``<v>...</v>``
inside ``target`` (or inside ``source``, for an omission); a segment a rater found clean has one row of
category and severity ``no-error``.

Each (system, doc, seg_id, rater) becomes one judged record of the generic format
(:mod:`annols.formats.generic`), as ``push --with-annotations`` reads it: the definition's first context pane
gets ``source``, its target pane the target without the markers, ``systems`` the system, ``annotator`` the
rater; ``doc``, ``doc_id`` and ``seg_id`` are carried, and ``item`` (``doc#seg_id``) names the segment, so that
two segments of the same source text are two items (the paper's unit) while every system's output of one
segment is one item; and ``answers.spans`` holds one span per error row, its
own region: label, offsets of the marked words, and its severity under the definition's per-span question
``severity``. An error row whose target marks no words (an omission, its words marked in the source, if any)
is placed on the whole target: its weight counts, as in the paper's scores.

A category is the definition's label of the same name, else the longest label it begins with before a ``/``
(``Accuracy/Mistranslation`` is ``Accuracy`` unless the definition has ``Accuracy/Mistranslation``); a
trailing ``!`` (the release's ``Non-translation!``) is dropped. A severity is a code or text of the severity
question, in any case.

Tolerated, with a warning naming the line: spaces around a cell, any case of ``no-error``, a ``<v>`` in the
target never closed (the error's words run to the end; one row of the TED English-German release). Refused in one line
(file, line, field): a missing column, a row of the wrong width, an unknown category or severity, unbalanced
markers, and rows of one segment whose targets differ once the markers are removed. The rows of a segment need
not be adjacent, so the file is read whole before its records are made.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from annols.definition import Definition
from annols.errors import InputError
from annols.formats import ReadWarning

SUFFIX = ".tsv"
COLUMNS = ("system", "doc", "doc_id", "seg_id", "rater", "source", "target", "category", "severity")
ITEM = "item"  # the carried field naming a record's item (annols.analysis.by_style.asked.unit_of): the segment
SEVERITY = "severity"  # the definition's per-span question the severities answer
NO_ERROR = "no-error"
MARK = re.compile(r"</?v>")


def is_mqm(path: Path) -> bool:
    return path.suffix.lower() == SUFFIX


def records(path: Path, definition: Definition) -> Iterator[tuple[str, dict[str, Any], tuple[ReadWarning, ...]]]:
    """(location, judged record, warnings) for each (system, doc, seg_id, rater) of the file, in the order the
    file first names them; a segment's raters one after another."""
    spec = definition.spec
    labels = [label.value for label in getattr(spec, "labels", ())]
    context = [p.name for p in getattr(spec, "context", ())]
    target = getattr(getattr(spec, "target", None), "name", None)
    if not labels or target is None or not context:
        raise InputError(path, "", "", "an MQM TSV is read for a spans definition with a context pane (the source) "
                         "and a target pane (the translation)")  # fmt: skip
    severity = _severity_question(spec)
    if severity is None:
        raise InputError(path, "", "", f"an MQM TSV needs a per-span question {SEVERITY!r} in the definition")
    codes = {c.code.lower(): c.code for c in severity.all_choices}
    codes.update({c.text.lower(): c.code for c in severity.all_choices})
    segments: dict[tuple[str, ...], dict[str, Any]] = {}
    for number, row, warnings in _rows(path):
        where = f"line {number}"

        def fail(field: str, problem: str, where: str = where) -> InputError:
            return InputError(path, where, field, problem)

        for name in ("system", "seg_id", "rater", "source", "target"):
            if not row[name]:
                raise fail(name, "empty; every row needs it")
        plain, marked = _unmarked(row["target"], lambda problem: fail("target", problem),
                                  lambda what, w=warnings, at=where: w.append(ReadWarning(str(path), at, what)))
        source, in_source = _unmarked(row["source"], lambda problem: fail("source", problem))
        key = (row["system"], row["doc"], row["doc_id"], row["seg_id"])
        seg = segments.setdefault(key, {"line": number, "source": source, "target": plain, "raters": {}})
        if seg["target"] != plain:
            raise fail("target", f"differs from line {seg['line']}'s target of the same segment (markers "
                       "removed); one segment has one translation")  # fmt: skip
        if seg["source"] != source:
            raise fail("source", f"differs from line {seg['line']}'s source of the same segment (markers removed)")
        judged = seg["raters"].setdefault(row["rater"], {"line": number, "spans": [], "warnings": []})
        judged["warnings"] += warnings
        category, level = row["category"], row["severity"]
        if category.lower() == NO_ERROR or level.lower() == NO_ERROR:
            odd = [c for c in (category, level) if c.lower() == NO_ERROR and c not in ("No-error", NO_ERROR)]
            if odd:
                judged["warnings"].append(ReadWarning(str(path), where, f"read {odd[0]!r} as no-error"))
            if marked is not None or in_source is not None:
                raise fail("target" if marked is not None else "source", "marks words with <v>...</v> on a no-error "
                           "row")  # fmt: skip
            continue
        label = _label(category, labels)
        if label is None:
            raise fail("category", f"{category!r} is none of the definition's labels {labels} (nor one of them "
                       "followed by '/')")  # fmt: skip
        code = codes.get(level.lower())
        if code is None:
            raise fail("severity", f"{level!r} is none of the severities {sorted(set(codes.values()))} nor no-error")
        start, end = marked if marked is not None else (0, len(plain))
        if marked is None:
            what = "words of the source only (an omission)" if in_source is not None else "no words"
            judged["warnings"].append(ReadWarning(str(path), where, f"marks {what}: the error is placed on the "
                                                  "whole target"))  # fmt: skip
        judged["spans"].append({"label": label, "start": start, "end": end, "answers": {SEVERITY: code}})
    for (system, doc, doc_id, seg_id), seg in segments.items():
        for rater, judged in seg["raters"].items():
            record = {context[0]: seg["source"], target: seg["target"], "systems": [system], "doc": doc,
                      "doc_id": doc_id, "seg_id": seg_id, ITEM: f"{doc}#{seg_id}", "annotator": rater,
                      "answers": {"spans": judged["spans"]}}  # fmt: skip
            yield f"line {judged['line']}", record, tuple(judged["warnings"])


def _severity_question(spec: Any) -> Any:
    for q in getattr(spec, "span_questions", ()):
        if q.name == SEVERITY and getattr(q, "all_choices", None):
            return q
    return None


def _rows(path: Path) -> Iterator[tuple[int, dict[str, str], list[ReadWarning]]]:
    if not path.is_file():
        raise InputError(path, "", "", "file not found" if not path.exists() else "is a folder; give the input file")
    with open(path, encoding="utf-8-sig", newline="") as f:
        reader = csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE)
        header = next(reader, None)
        if header is None:
            raise InputError(path, "line 1", "", "empty; an MQM TSV starts with its header line")
        names = [h.strip() for h in header]
        missing = [c for c in COLUMNS if c not in names]
        if missing:
            raise InputError(path, "line 1", missing[0], f"missing column; an MQM TSV has the columns {list(COLUMNS)}")
        for number, cells in enumerate(reader, start=2):
            if not any(c.strip() for c in cells):
                continue
            if len(cells) != len(names):
                raise InputError(path, f"line {number}", "", f"{len(cells)} cells for {len(names)} columns (a tab "
                                 "inside a cell?)")  # fmt: skip
            row = {n: c for n, c in zip(names, cells, strict=True)}
            warnings = []
            padded = [n for n in COLUMNS if row[n] != row[n].strip()]
            if padded:
                warnings.append(ReadWarning(str(path), f"line {number}", f"ignored spaces around {padded[0]!r}"
                                            + (f" and {len(padded) - 1} more cells" if len(padded) > 1 else "")))
            yield number, {n: row[n].strip() for n in COLUMNS}, warnings


def _unmarked(text: str, fail: Any, warn: Any = None) -> tuple[str, tuple[int, int] | None]:
    """The text without its markers, and the marked words' offsets in it (None when none are marked);
    ``fail(problem)`` makes the error. A ``<v>`` never closed marks to the end of the text, and ``warn(what)``
    says so (the release has one such row)."""
    tags = MARK.findall(text)
    if not tags:
        return text, None
    if tags == ["<v>"] and warn is not None:
        warn("an unclosed <v>: the error's words run to the end of the target")
        text += "</v>"
        tags = MARK.findall(text)
    if tags != ["<v>", "</v>"]:
        raise fail("needs one <v> and one </v> after it around the error's words (a row per error)")
    start = text.index("<v>")
    end = text.index("</v>") - len("<v>")
    if end <= start:
        raise fail("marks no words between <v> and </v>")
    return MARK.sub("", text), (start, end)


def _label(category: str, labels: list[str]) -> str | None:
    wanted = category.rstrip("!").strip().lower()
    by = {label.lower(): label for label in labels}
    if wanted in by:
        return by[wanted]
    found = [label for label in labels if wanted.startswith(label.lower() + "/")]
    return max(found, key=len) if found else None
