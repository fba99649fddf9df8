"""The seed-004 evaluation sheet as it was distributed: vertical, 7 rows per case.

The real sheet (``distribute/sampled_results_v2.1.xlsx`` of Derekkk/enhance-coherence,
see ``../shared/seeds/README.md`` row 004) holds, for each case, five columns::

    row 1  Case N        (empty)      informative  coherence  overall   (Case 1 only)
    row 2  <sample id>   <url>
    row 3  ref           <reference summary>
    row 4  A             <sentences joined by </s>>  <rank>  <rank>  <rank>
    ...    B, C, D       the same

Only the first case's row carries the headers: every later ``Case N`` row leaves C-E
empty, in the distributed sheet and in every returned copy. A sheet with the headers on
every ``Case N`` row is read too (what annols wrote before it knew the real layout).

Each annotator returned a copy, ``<sheet>_<annotator>.xlsx``, with the rank cells filled
(the real copies store ranks and sample ids as numbers; typed as text, ``'2'``, reads the
same and comes back as text); an empty cell is an unanswered cell, and an annotator may
have done only some cases. The letters are fixed systems for the whole study, so the
sheet alone does not say which system is which: a small mapping file among the inputs
does, a JSON object letter -> system (``{"A": "ex44", "B": "ex46", "C": "ex47", "D": "ex48"}``).

Reading groups every vertical sheet given (the distributed one and the copies) by case:
one task per case, its texts the same in every copy, one annotation per copy that ranks
it. The annotator is named from the file name: the part after ``<sheet>_`` when the
distributed sheet ``<sheet>.xlsx`` is among the inputs, else the part after the last
``_`` (``sampled_results_v2.1_ann@study.org.xlsx`` -> ``ann@study.org``).

Tolerated, with a warning: empty rows between cases and after the last, notes in
columns right of the table (F onwards), stray spaces around ``Case N``, the letters and
the ranks. Refused, in one line naming file, row and column: a block that is not 7 rows
in this layout, a first case without the headers, headers that are not the definition's
dimensions (a later ``Case N`` row holds them or nothing), letters that are not
its positions, a rank that is not a whole number 1..4, and copies whose texts differ.

Writing gives each annotator's sheet back in the same layout, cell for cell
(:func:`write_sheets`): unanswered cells empty (and cells whose rank the style's decode cannot read),
and what reading saw kept in the task data
as ``layout`` (:func:`layout`), so that pull and convert need nothing but the export:
``{"headers": whether this case's row carried the headers (in the first sheet given, the
distributed one when it is among the inputs), "ranks": {annotator: how that copy stored
this case's filled rank cells: "number", "text", or the list of cells stored as numbers
when it mixed both}}``. Tasks pushed without ``layout`` are written back as annols wrote
them before: headers on every case, ranks as text. An annotator who ranked in Label
Studio (no copy) gets the cells typed as every copy of the case typed them, else text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from openpyxl import Workbook  # type: ignore[import-untyped, unused-ignore]
from openpyxl.utils import get_column_letter  # type: ignore[import-untyped, unused-ignore]

from annols.errors import InputError
from annols.files import atomic_open, save_workbook
from annols.formats import ReadWarning, SourceAnnotation, SourceTask, content_key, original_annotator
from annols.styles.ranking import RankingSpec

NAME = "extractive-ranking"
CASE = re.compile(r"^Case\s+(\d+)$")
ROWS = 7
REF = "ref"
JOIN = "; "  # between two ranks of one cell (a rule violation the sheet must still show)


def is_vertical(rows: Iterable[tuple[int, list[Any]]], cell: Any) -> bool:
    """Whether the first non-empty row of a sheet reads ``Case N``."""
    for _, row in rows:
        if any(cell(v).strip() for v in row):
            return bool(CASE.match(cell(row[0]).strip()))
    return False


def read_mapping(path: Path, spec: RankingSpec) -> dict[str, str]:
    """The letter -> system file: a JSON object naming a system for every position."""
    try:
        mapping = json.loads(path.read_text(encoding="utf-8-sig"))
    except OSError as e:
        raise InputError(path, "", "", f"cannot be read ({e.strerror})") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise InputError(path, "", "", f"not a JSON letter -> system mapping ({e})") from None
    letters = ", ".join(spec.positions)
    if not isinstance(mapping, dict):
        raise InputError(
            path, "", "", f'expected a JSON object letter -> system, e.g. {{"A": "ex44", ...}} for {letters}'
        )
    for letter in spec.positions:
        value = mapping.get(letter)
        if not isinstance(value, str) or not value.strip():
            raise InputError(path, "", letter, f"missing or empty; name the system behind every letter ({letters})")
    extra = sorted(set(mapping) - set(spec.positions))
    if extra:
        raise InputError(path, "", extra[0], f"not a letter of the sheet ({letters})")
    systems = [mapping[p].strip() for p in spec.positions]
    if len(set(systems)) != len(systems):
        raise InputError(path, "", "", "two letters name the same system; each letter is one system")
    return {p: mapping[p].strip() for p in spec.positions}


@dataclass
class Case:
    """One case of one sheet."""

    number: int
    row: int  # the row of "Case N"
    sample: Any  # the sample id cell, as read (text in the real sheet)
    url: str
    reference: str
    outputs: dict[str, str]  # letter -> the output cell, verbatim
    ranks: dict[tuple[str, str], str]  # (dimension, letter) -> rank code, filled cells only
    headers: bool = True  # the "Case N" row carries the headers (else C-E are empty)
    numbers: frozenset[tuple[str, str]] = frozenset()  # the filled rank cells stored as numbers


@dataclass
class Sheet:
    path: Path
    cases: list[Case] = field(default_factory=list)
    warnings: list[ReadWarning] = field(default_factory=list)

    @property
    def ranked(self) -> bool:
        return any(c.ranks for c in self.cases)


def parse_sheet(path: Path, rows: Iterable[tuple[int, list[Any]]], cell: Any, spec: RankingSpec) -> Sheet:
    """Every case of a vertical sheet, checked."""
    sheet = Sheet(path)
    dimensions = [d.name for d in spec.dimensions]
    width = 2 + len(dimensions)
    block: list[tuple[int, list[str], list[Any]]] = []
    first_cells: dict[int, int | float] = {}

    def note(n: int, texts: list[str]) -> None:
        beyond = [i for i in range(width, len(texts)) if texts[i]]
        if beyond:
            col = get_column_letter(beyond[0] + 1)
            sheet.warnings.append(ReadWarning(str(path), f"row {n}", f"ignored a note beside the table (column {col})"))

    blank_run: list[int] = []
    for n, row in rows:
        texts = [cell(v) for v in row]
        stripped = [t.strip() for t in texts]
        if not any(stripped[:width]):
            if any(stripped):
                note(n, stripped)
            elif block or sheet.cases:
                blank_run.append(n)
            if block:
                raise InputError(
                    path,
                    f"row {n}",
                    "",
                    f"case {block[0][1][0].strip()!r} ends after "
                    f"{len(block)} of its {ROWS} rows; every case has {ROWS} rows",
                )
            continue
        note(n, stripped)
        if blank_run and not block:
            sheet.warnings.append(
                ReadWarning(str(path), f"row {blank_run[0]}", f"ignored {len(blank_run)} empty row(s)")
            )
            blank_run = []
        block.append((n, texts, row))
        if len(block) == 2 and row and isinstance(row[0], int | float) and not isinstance(row[0], bool):
            first_cells[n] = row[0]  # a sample id stored as a number comes back as a number
        if len(block) == ROWS:
            case = _case(path, block, spec, dimensions, first=not sheet.cases)
            number = first_cells.get(case.row + 1)
            if number is not None and float(number).is_integer():
                case.sample = int(number)
            sheet.cases.append(case)
            block = []
    if block:
        raise InputError(path, f"row {block[-1][0]}", "", f"the last case has {len(block)} of its {ROWS} rows")
    if blank_run:
        sheet.warnings.append(
            ReadWarning(str(path), f"row {blank_run[0]}", f"ignored {len(blank_run)} empty row(s) at the end")
        )
    if not sheet.cases:
        raise InputError(path, "row 1", "", "no case in this sheet; a case starts with a row 'Case N'")
    numbers = [c.number for c in sheet.cases]
    twice = next((c for c in sheet.cases if numbers.count(c.number) > 1), None)
    if twice is not None:
        raise InputError(path, f"row {twice.row}", "A", f"Case {twice.number} appears twice; keep one")
    return sheet


def _case(
    path: Path, block: list[tuple[int, list[str], list[Any]]], spec: RankingSpec, dimensions: list[str], first: bool
) -> Case:
    def at(k: int, i: int) -> str:
        texts = block[k][1]
        return texts[i] if i < len(texts) else ""

    def fail(k: int, i: int, problem: str) -> InputError:
        return InputError(path, f"row {block[k][0]}", f"column {get_column_letter(i + 1)}", problem)

    match = CASE.match(at(0, 0).strip())
    if not match:
        raise fail(0, 0, f"expected 'Case N' (a case has {ROWS} rows), found {at(0, 0).strip()[:40]!r}")
    found = [at(0, 2 + j).strip() for j in range(len(dimensions))]
    headers = found == dimensions
    if not headers and (first or any(found)):
        # the first case's headers name the rank columns; a later case repeats them or leaves them empty
        expected = "" if first else " (or nothing, as on every case after the first)"
        shown = ", ".join(f or "(empty)" for f in found) if any(found) else "none"
        raise fail(0, 2, f"expected the headers {', '.join(dimensions)}{expected}, found {shown}")
    if at(2, 0).strip() != REF:
        raise fail(2, 0, f"expected {REF!r} (the reference summary's row), found {at(2, 0).strip()[:40]!r}")
    outputs: dict[str, str] = {}
    ranks: dict[tuple[str, str], str] = {}
    numbers: set[tuple[str, str]] = set()
    top = len(spec.positions)
    for k in range(3, ROWS):
        letter = at(k, 0).strip()
        if letter not in spec.positions or letter in outputs:
            raise fail(k, 0, f"expected one of the letters {', '.join(spec.positions)} once per case, found {letter!r}")
        if not at(k, 1).strip():
            raise fail(k, 1, f"empty output; output {letter} needs its sentences")
        outputs[letter] = at(k, 1)
        for j, dimension in enumerate(dimensions):
            value = at(k, 2 + j).strip()
            if not value:
                continue
            if not value.isdigit() or not 1 <= int(value) <= top:
                raise fail(k, 2 + j, f"{value!r} is not a rank; expected a whole number 1..{top}")
            ranks[(dimension, letter)] = str(int(value))
            raw = block[k][2][2 + j]
            if isinstance(raw, int | float) and not isinstance(raw, bool):
                numbers.add((dimension, letter))
    if len(outputs) != top:
        raise fail(3, 0, f"expected the letters {', '.join(spec.positions)}")
    sample = block[1][1][0] if block[1][1] else None
    return Case(int(match[1]), block[0][0], sample, at(1, 1), at(2, 1), outputs, ranks, headers, frozenset(numbers))


def annotator_names(paths: Sequence[Path]) -> dict[Path, str]:
    """The annotator of each sheet, from its file name (see the module docstring)."""
    stems = {p: p.stem for p in paths}
    names = {}
    for path, stem in stems.items():
        base = max((s for s in stems.values() if stem.startswith(s + "_")), key=len, default=None)
        if base is not None:
            names[path] = stem[len(base) + 1 :]
        else:
            names[path] = stem.rsplit("_", 1)[-1]
    return names


def sheet_stem(paths: Sequence[Path], names: dict[Path, str]) -> str:
    """The distributed sheet's name, to name the copies written back after it."""
    for path in paths:
        if any(p.stem.startswith(path.stem + "_") for p in paths if p != path):
            return path.stem
    first = paths[0]
    stem = first.stem
    return stem[: -len(names[first]) - 1] if stem.endswith("_" + names[first]) else stem


def tasks(
    sheets: Sequence[Sheet], mapping: dict[str, str], spec: RankingSpec, stem: str, names: dict[Path, str]
) -> Iterator[SourceTask]:
    """One task per case over every sheet, each ranked copy one annotation."""
    order: list[int] = []
    by_number: dict[int, list[tuple[Sheet, Case]]] = {}
    for sheet in sorted(sheets, key=lambda s: s.ranked):  # the distributed sheet's order first
        for case in sheet.cases:
            if case.number not in by_number:
                order.append(case.number)
            by_number.setdefault(case.number, []).append((sheet, case))
    warned: set[Path] = set()
    for number in order:
        copies = by_number[number]
        first_sheet, first = copies[0]
        differ: list[ReadWarning] = []
        for sheet, case in copies[1:]:
            letters = list(case.outputs)
            for what, offset, a, b in (
                ("url", 1, first.url, case.url),
                ("reference", 2, first.reference, case.reference),
                *((f"output {p}", 3 + letters.index(p), first.outputs[p], case.outputs[p]) for p in spec.positions),
            ):
                if a != b:
                    raise InputError(
                        sheet.path,
                        f"row {case.row + offset}",
                        what,
                        f"Case {number} differs from {first_sheet.path}; every copy must show the same texts",
                    )
            if case.headers != first.headers:  # layout, not a judgment: written back as the first sheet has it
                state = "carries" if case.headers else "leaves out"
                differ.append(ReadWarning(str(sheet.path), f"row {case.row}", (
                    f"Case {number} {state} the headers unlike {first_sheet.path}; "
                    f"the sheets written back follow {first_sheet.path.name}")))  # fmt: skip
        annotations = []
        typed: dict[str, Any] = {}
        for sheet, case in copies:
            if case.ranks:
                result = [_item(f"{d}_{p.lower()}", p, code) for (d, p), code in case.ranks.items()]
                annotations.append(SourceAnnotation(annotator=names[sheet.path], result=result))
                typed[names[sheet.path]] = _typed(case)
        warnings: list[ReadWarning] = []
        for sheet, _ in copies:
            if sheet.path not in warned:  # a sheet's warnings travel with its first case
                warned.add(sheet.path)
                warnings += sheet.warnings
        warnings += differ
        raw = {mapping[p]: first.outputs[p] for p in spec.positions}
        data: dict[str, Any] = {"url": first.url, "reference": first.reference}
        for p in spec.positions:
            data[spec.field(p)] = _display(first.outputs[p])
        data["row"] = first.row
        data["case"] = number
        data["sample"] = first.sample
        data["sheet"] = stem
        data["layout"] = {"headers": first.headers, "ranks": typed}
        yield SourceTask(
            key=content_key(NAME, {"url": first.url, "reference": first.reference, "outputs": raw}),
            data=data,
            location=f"{first_sheet.path}: row {first.row}",
            systems=tuple(raw),
            fixed_order=True,  # a letter is one system for the whole study
            annotations=tuple(annotations),
            warnings=tuple(warnings),
            extra={"raw": list(raw.values())},  # as extractive-ranking's: the original cells stay off the server
        )


def _typed(case: Case) -> str | list[str]:
    """How a copy stored a case's filled rank cells (see the module docstring)."""
    if case.numbers == set(case.ranks):
        return "number"
    if not case.numbers:
        return "text"
    return sorted(f"{d}_{p.lower()}" for d, p in case.numbers)


def _display(cell: str) -> str:
    return "\n".join(s.strip() for s in cell.split("</s>") if s.strip())


def _item(cell: str, position: str, code: str) -> dict[str, Any]:
    return {
        "id": cell,
        "from_name": cell,
        "to_name": f"output_{position.lower()}",
        "type": "choices",
        "value": {"choices": [code]},
        "origin": "manual",
    }


# ---------------------------------------------------------------- writing the sheets back


@dataclass
class WrittenCase:
    number: int
    sample: Any
    url: str
    reference: str
    outputs: list[str]  # in letter order
    ranks: dict[str, dict[tuple[str, int], list[str]]]  # annotator -> (dimension, letter index) -> codes
    layout: dict[str, Any] | None = None  # the task data's "layout"; None: pushed before annols kept it


def layout(data: dict[str, Any]) -> dict[str, Any] | None:
    """A task's ``layout`` as reading recorded it, or None when it is missing or not in that shape."""
    value = data.get("layout")
    if isinstance(value, dict) and isinstance(value.get("headers"), bool) and isinstance(value.get("ranks"), dict):
        return value
    return None


def _numbers(case: WrittenCase, annotator: str) -> Any:
    """Which of an annotator's rank cells go back as numbers: "number", "text" or a list of cells."""
    if case.layout is None:
        return "text"  # as annols wrote every sheet before it recorded the layout
    typed = case.layout["ranks"]
    if annotator in typed:
        return typed[annotator]
    kinds = set(map(str, typed.values()))
    return kinds.pop() if kinds in ({"number"}, {"text"}) else "text"


def rank_cell(codes: list[str] | None, number: bool = True) -> int | str | None:
    """A rank cell: the rank as an integer (``number``) or as text; empty for no rank (the writers give only the
    ranks the ranking style decodes: a cell with two ranks or one off 1..N is empty, named in violations.csv)."""
    if not codes:
        return None
    if number and len(codes) == 1 and codes[0].isdigit():
        return int(codes[0])
    return JOIN.join(codes)


def annotator_label(annotator: str) -> str:
    """An annotator as a file name part: an imported annotator's original name, else the e-mail."""
    return re.sub(r"[^\w.@+-]", "_", original_annotator(annotator)) or "_"


def write_sheets(
    cases: Sequence[WrittenCase], stems: dict[str, None], annotators: Sequence[str], spec: RankingSpec, out_dir: Path
) -> list[Path]:
    """Each annotator's copy, ``<sheet>_<annotator>.xlsx``, in the distributed layout."""
    stem = next(iter(stems), NAME)
    dimensions = [d.name for d in spec.dimensions]
    paths = []
    for annotator in annotators:
        path = out_dir / f"{stem}_{annotator_label(annotator)}.xlsx"
        workbook = Workbook(write_only=True)
        sheet = workbook.create_sheet("Sheet1")
        for case in sorted(cases, key=lambda c: c.number):
            ranks = case.ranks.get(annotator, {})
            typed = _numbers(case, annotator)
            headers = case.layout is None or case.layout["headers"]
            sheet.append([f"Case {case.number}", None, *(dimensions if headers else [])])
            sheet.append([case.sample, case.url])
            sheet.append([REF, case.reference])
            for i, letter in enumerate(spec.positions):
                cells = [rank_cell(ranks.get((d, i)), typed == "number" or (
                    isinstance(typed, list) and f"{d}_{letter.lower()}" in typed)) for d in dimensions]  # fmt: skip
                sheet.append([letter, case.outputs[i], *cells])
        with atomic_open(path, "wb") as f:
            save_workbook(workbook, f)
        paths.append(path)
    return paths
