"""extractive-ranking: the Excel evaluation sheet of seed 004, as tasks and back as a sheet.

Input: an XLSX workbook (its first sheet) or a CSV file, with a header row ``url``,
``reference``, then one column per system, named by the system (as many system columns
as the definition has positions: four). A cell holds the system's extracted sentences
joined by ``</s>`` (spaces around it allowed). Empty rows are skipped.

Task data (``configs/extractive-ranking.xml``)::

    {"url", "reference",
     "output_a" .. "output_d": the sentences of the 1st .. 4th system column, stripped,
                               one per line (the "</s>" separators never shown),
     "row": the row number in the sheet (the header is row 1)}

plus, kept in the coordinator's manifest and never sent to the server (``SourceTask.extra``,
back in the task data at pull): ``"raw"``, the original cells, byte for byte, in the input's
column order (on the server, beside the shuffled outputs, it would undo the shuffle).

The key is ``content_key("extractive-ranking", {url, reference, outputs: {system: cell}})``.
``SourceTask.systems`` names the system of each output in that order; the order is not
fixed, so the push machinery may shuffle which system is shown as A..D. No system name
is in the task data (annotators can see all of it): at pull, ``ExportedTask.systems[i]``
is the system shown at position i (that is how ranks are unblinded) and
``ExportedTask.source_systems`` names the ``raw`` cells, in the input's order.

Label Studio result: one required single choice per dimension and position, from_name
``<dimension>_<position>`` (``coherence_b``), to_name ``output_<position>``, value
``{"choices": ["1".."4"]}``; equal ranks (ties) are allowed, as in the seed.

The seed-004 sheet as it was distributed (vertical, 7 rows per case, letters fixed to
systems for the whole study) is read and written back by :mod:`annols.formats.ranking_sheet`:
a sheet whose first row reads ``Case N`` goes there, with the ``.json`` letter -> system
mapping among the inputs and the annotators' returned copies. A folder among the inputs
stands for its ``.xlsx``, ``.xlsm``, ``.csv`` and ``.json`` files, below it too (the
release's ``distribute/``, ``results/`` and ``systems.json``); its other files are
skipped with a warning.

Existing judgments (an extension of the sheet, e.g. for round trips): columns headed
``<annotator>:<dimension>:<system>`` (``ann1@x.org:informative:bart``) holding ranks
1..4 become one annotation per annotator and row; an empty cell is an unanswered cell.

Results: ``extractive-ranking.csv`` and ``extractive-ranking.xlsx``, one row per task in
task order: url, reference, each system's original cell (header: the system name), then
per annotator, dimension and system the rank as an integer (as the ranking style decodes it:
a cell with two ranks, a rank off 1..N or an item that is no choice is left empty, and
``check`` names it in violations.csv), headed
``<annotator>:<dimension>:<system>`` (the same header the reader accepts; an imported
study's annotator by the name the input gave, not ``...@annotators.annols.local``). The systems
and annotators (the columns) are only known once every task has been seen, and the tasks
can be iterated once, so rows are first spooled to a temporary JSONL file, then both
files are written from it, streaming. Systems are ordered as in the input's columns,
annotators by first appearance. A task without ``raw`` or without its input order (made
from a Label Studio task file) gets its cells rebuilt by joining the shown lines with
``</s>``, its systems in name order.
"""

from __future__ import annotations

import csv
import json
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from datetime import date, datetime, time
from pathlib import Path
from typing import IO, Any

from openpyxl import Workbook, load_workbook  # type: ignore[import-untyped, unused-ignore]
from openpyxl.cell import WriteOnlyCell  # type: ignore[import-untyped, unused-ignore]
from openpyxl.utils import get_column_letter  # type: ignore[import-untyped, unused-ignore]
from openpyxl.utils.exceptions import IllegalCharacterError  # type: ignore[import-untyped, unused-ignore]

from annols import jsontext
from annols.definition import Definition
from annols.errors import InputError
from annols.files import atomic_open, save_workbook
from annols.formats import (
    ReadWarning,
    SourceAnnotation,
    SourcePrediction,
    SourceTask,
    Violation,
    content_key,
    decoded_annotations,
    no_predictions,
    original_annotator,
    ranking_sheet,
)
from annols.styles.answers import ExportedAnnotation, ExportedTask
from annols.styles.judgments import Rank, choices_by_name
from annols.styles.ranking import RankingSpec

NAME = "extractive-ranking"
SEPARATOR = "</s>"
CONTEXT = ("url", "reference")
JOIN = ranking_sheet.JOIN


# ---------------------------------------------------------------- sentences


def sentences(cell: str) -> list[str]:
    """The sentences of an output cell: split on "</s>", each stripped, empty ones dropped."""
    return [s.strip() for s in cell.split(SEPARATOR) if s.strip()]


def display(cell: str) -> str:
    """An output as shown to the annotator: one sentence per line."""
    return "\n".join(sentences(cell))


# ---------------------------------------------------------------- reading the sheet


def _cell(value: Any) -> str:
    """A cell as text; strings untouched, so outputs come back byte for byte."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    return str(value)


def _xlsx_rows(path: Path) -> Iterator[tuple[int, list[Any]]]:
    """Rows of the first sheet, read-only (streamed); numbered as in the spreadsheet."""
    try:
        workbook = load_workbook(path, read_only=True, data_only=True)
    except FileNotFoundError as e:
        raise InputError(path, "", "", "file not found; check the path") from e
    except Exception as e:  # openpyxl raises many kinds of errors for a damaged or foreign file
        raise InputError(path, "", "", f"not a readable XLSX workbook ({type(e).__name__}); "
                         "save it from Excel as .xlsx or export the sheet as CSV") from e  # fmt: skip
    try:
        sheet = workbook.worksheets[0]
        sheet.reset_dimensions()  # some writers record wrong dimensions; read every cell there is
        for n, row in enumerate(sheet.iter_rows(values_only=True), 1):
            yield n, list(row)
    finally:
        workbook.close()


def _utf8_lines(f: IO[bytes], path: Path) -> Iterator[str]:
    """Decode line by line, so a bad byte is reported on its own line (a BOM is dropped)."""
    for n, raw in enumerate(f, 1):
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise InputError(path, f"line {n}", "", "not UTF-8 text; save the file as UTF-8") from e
        yield line.removeprefix("\ufeff") if n == 1 else line


def _csv_rows(path: Path) -> Iterator[tuple[int, list[Any]]]:
    """CSV records, numbered like spreadsheet rows (a quoted cell may span lines)."""
    try:
        f = path.open("rb")
    except OSError as e:
        raise InputError(path, "", "", f"cannot read the file ({e.strerror or e}); check the path") from e
    with f:
        n = 0
        try:
            for n, row in enumerate(csv.reader(_utf8_lines(f, path)), 1):
                yield n, list(row)
        except csv.Error as e:
            raise InputError(path, f"row {n + 1}", "", f"not valid CSV ({e})") from e


def _rows(path: Path) -> Iterator[tuple[int, list[Any]]]:
    suffix = path.suffix.lower()
    if suffix in (".xlsx", ".xlsm"):
        return _xlsx_rows(path)
    if suffix == ".csv":
        return _csv_rows(path)
    raise InputError(path, "", "", f"unsupported file type {suffix or '(none)'!r}; give an .xlsx or .csv file")


@dataclass(frozen=True)
class _Layout:
    """Which column holds what, from the header row."""

    url: int
    reference: int
    systems: tuple[tuple[str, int], ...]  # (system, column index), in header order
    ranks: tuple[tuple[str, str, str, int], ...]  # (annotator, dimension, system, column index)
    width: int  # columns with a header; cells beyond must be empty


def _layout(path: Path, n: int, row: list[Any], spec: RankingSpec) -> _Layout:
    header = [_cell(v).strip() for v in row]
    while header and not header[-1]:
        header.pop()
    where = f"row {n}"
    for i, name in enumerate(header):
        if not name:
            raise InputError(path, where, f"column {get_column_letter(i + 1)}", "empty header cell; name every column")
        if header.count(name) > 1:
            raise InputError(path, where, name, "appears twice in the header")
    lowered = [h.lower() for h in header]
    for name in CONTEXT:
        if name not in lowered:
            raise InputError(path, where, name, "missing from the header; the sheet needs url, reference, "
                             "then one column per system")  # fmt: skip
    dimensions = {d.name for d in spec.dimensions}
    systems, rank_columns = [], []
    for i, name in enumerate(header):
        parts = name.rsplit(":", 2)
        if lowered[i] in CONTEXT:
            continue
        if len(parts) == 3 and parts[1] in dimensions:
            rank_columns.append((parts[0], parts[1], parts[2], i))
        else:
            systems.append((name, i))
    if len(systems) != len(spec.positions):
        names = ", ".join(s for s, _ in systems) or "none"
        raise InputError(path, where, "systems", f"found {len(systems)} system columns ({names}); the definition "
                         f"ranks {len(spec.positions)} outputs, so give exactly {len(spec.positions)}")  # fmt: skip
    known = {s for s, _ in systems}
    for annotator, _, system, i in rank_columns:
        if system not in known or not annotator.strip():
            raise InputError(path, where, header[i], "a rank column is headed <annotator>:<dimension>:<system> "
                             f"with a system of this sheet ({', '.join(known)})")  # fmt: skip
    return _Layout(lowered.index("url"), lowered.index("reference"), tuple(systems), tuple(rank_columns), len(header))


def _rank(value: Any, path: Path, where: str, column: str, spec: RankingSpec) -> str | None:
    """A rank cell as its answer code ("1".."N"), None when empty."""
    text = _cell(value).strip()
    if not text:
        return None
    top = len(spec.positions)
    if not text.isdigit() or not 1 <= int(text) <= top:
        raise InputError(path, where, column, f"{text!r} is not a rank; expected a whole number 1..{top}")
    return str(int(text))


def _annotations(
    cells: list[Any], layout: _Layout, spec: RankingSpec, path: Path, where: str, header: dict[int, str]
) -> tuple[SourceAnnotation, ...]:
    """Rank columns of one row as one annotation per annotator, positions in input order."""
    position = {system: spec.positions[i] for i, (system, _) in enumerate(layout.systems)}
    results: dict[str, list[dict[str, Any]]] = {}
    for annotator, dimension, system, i in layout.ranks:
        code = _rank(cells[i], path, where, header[i], spec)
        items = results.setdefault(annotator, [])
        if code is not None:
            items.append(_item(f"{dimension}_{position[system].lower()}", position[system], code))
    return tuple(SourceAnnotation(annotator=a, result=r) for a, r in results.items() if r)


def _item(cell: str, position: str, code: str) -> dict[str, Any]:
    return {"id": cell, "from_name": cell, "to_name": f"output_{position.lower()}", "type": "choices",
            "value": {"choices": [code]}, "origin": "manual"}  # fmt: skip


def _task(path: Path, n: int, row: list[Any], layout: _Layout, spec: RankingSpec, header: dict[int, str],
          noted: set[int]) -> SourceTask:  # fmt: skip
    where = f"row {n}"
    cells = row + [None] * (layout.width - len(row))
    extra = next((i for i in range(layout.width, len(cells)) if _cell(cells[i]).strip()), None)
    warnings: list[ReadWarning] = []
    if extra == layout.width:  # right beside the table: a column without its header, not a note
        raise InputError(path, where, f"column {get_column_letter(extra + 1)}", "has a value but no header; "
                         "name the column, or leave an empty column between the table and any notes")  # fmt: skip
    if extra is not None and extra not in noted:
        noted.add(extra)
        warnings.append(ReadWarning(str(path), where, f"ignored a note beside the table in column "
                                    f"{get_column_letter(extra + 1)}"))  # fmt: skip
    raw = {system: _cell(cells[i]) for system, i in layout.systems}  # in column order
    for system, cell in raw.items():
        if not sentences(cell):
            raise InputError(path, where, system, "empty output; every system column needs its sentences")
    url, reference = _cell(cells[layout.url]), _cell(cells[layout.reference])
    data: dict[str, Any] = {"url": url, "reference": reference}
    for position, cell in zip(spec.positions, raw.values(), strict=True):
        data[spec.field(position)] = display(cell)
    data["row"] = n
    return SourceTask(
        key=content_key(NAME, {"url": url, "reference": reference, "outputs": raw}),
        data=data,
        location=f"{path}: {where}",
        systems=tuple(raw),
        fixed_order=False,
        annotations=_annotations(cells, layout, spec, path, where, header),
        warnings=tuple(warnings),
        extra={"raw": list(raw.values())},  # in column order: off the server, where it would undo the shuffle
    )


def _read(path: Path, spec: RankingSpec) -> Iterator[SourceTask]:
    layout: _Layout | None = None
    header: dict[int, str] = {}
    noted: set[int] = set()
    for n, row in _rows(path):
        if not any(_cell(v).strip() for v in row):
            continue
        if layout is None:
            layout = _layout(path, n, row, spec)
            header = {i: _cell(v).strip() for i, v in enumerate(row)}
            continue
        yield _task(path, n, row, layout, spec, header, noted)
    if layout is None:
        raise InputError(path, "row 1", "url", "the sheet is empty; it needs a header row url, reference, systems")


# ---------------------------------------------------------------- results


def parse_result(result: Sequence[dict[str, Any]], spec: RankingSpec) -> dict[tuple[str, int], list[str]]:
    """Rank codes per (dimension, position index), from result items in any order and with any ids, read as
    the ranking style's decode reads them (task-level ``choices``: :func:`annols.styles.judgments.choices_by_name`)."""
    given = choices_by_name(result)
    return {(d.name, i): given[spec.cell(d, p)] for d in spec.dimensions for i, p in enumerate(spec.positions)
            if spec.cell(d, p) in given}  # fmt: skip


def shown_systems(task: ExportedTask, spec: RankingSpec) -> tuple[str, ...]:
    """The system at each position: the blinding if recorded, else the input order, else the letters."""
    if len(task.systems) == len(spec.positions):
        return task.systems
    if len(task.source_systems) == len(spec.positions):
        return task.source_systems
    return spec.positions


def _raw_cells(task: ExportedTask, shown: tuple[str, ...], spec: RankingSpec) -> dict[str, str]:
    """Each system's original cell; rebuilt from the shown lines when the task has none.

    Rebuilt cells come in system-name order, not shown order, so the sheet does not
    depend on the blinding.
    """
    raw = task.data.get("raw")
    cells: dict[str, str] = {}
    if isinstance(raw, list) and len(raw) == len(task.source_systems):
        cells = {s: str(c) for s, c in zip(task.source_systems, raw, strict=True)}
    for system, position in sorted(zip(shown, spec.positions, strict=True)):
        if system not in cells:
            cells[system] = SEPARATOR.join(str(task.data.get(spec.field(position), "")).split("\n"))
    return cells


def _ranks(task: ExportedTask, definition: Definition) -> dict[str, list[Rank]]:
    """Each annotator's ranks (an imported study's annotator by the name the input gave), from their first
    submitted annotation, as the ranking style decodes them: a cell it cannot read (two ranks, a rank off
    1..N) has none, so it is left empty; ``check`` names it in violations.csv."""
    out: dict[str, list[Rank]] = {}
    for annotation, judged in decoded_annotations(task, definition):
        out.setdefault(original_annotator(annotation.annotator), [j for j in judged if isinstance(j, Rank)])
    return out


def _spool_row(task: ExportedTask, definition: Definition) -> dict[str, Any]:
    """One task's row, unblinded: raw cells and ranks per annotator, dimension and system."""
    spec: RankingSpec = definition.spec
    shown = shown_systems(task, spec)
    ranks: dict[str, dict[str, dict[str, list[str]]]] = {}
    for name, judged in _ranks(task, definition).items():
        table = ranks[name] = {}
        for j in judged:
            table.setdefault(j.dimension, {})[j.system] = [str(j.rank)]
    return {"url": task.data.get("url", ""), "reference": task.data.get("reference", ""),
            "raw": _raw_cells(task, shown, spec), "ranks": ranks}  # fmt: skip


def _written_case(task: ExportedTask, definition: Definition) -> ranking_sheet.WrittenCase:
    """A task read from a vertical sheet, its ranks by annotator and letter (the input's order)."""
    spec: RankingSpec = definition.spec
    shown = shown_systems(task, spec)
    source = task.source_systems if len(task.source_systems) == len(spec.positions) else shown
    raw = task.data.get("raw")
    outputs = [str(c) for c in raw] if isinstance(raw, list) and len(raw) == len(spec.positions) else [
        SEPARATOR.join(str(task.data.get(spec.field(p), "")).split("\n")) for p in spec.positions]  # fmt: skip
    ranks: dict[str, dict[tuple[str, int], list[str]]] = {}
    for name, judged in _ranks(task, definition).items():
        table = ranks[name] = {}
        for j in judged:
            i = spec.positions.index(j.position)
            letter = source.index(shown[i]) if shown[i] in source else i
            table[(j.dimension, letter)] = [str(j.rank)]
    return ranking_sheet.WrittenCase(
        number=int(task.data["case"]), sample=task.data.get("sample"), url=str(task.data.get("url", "")),
        reference=str(task.data.get("reference", "")), outputs=outputs, ranks=ranks,
        layout=ranking_sheet.layout(task.data),
    )  # fmt: skip


def _header(systems: Sequence[str], annotators: Sequence[str], spec: RankingSpec) -> list[str]:
    ranks = [f"{a}:{d.name}:{s}" for a in annotators for d in spec.dimensions for s in systems]
    return [*CONTEXT, *systems, *ranks]


def _cells(row: dict[str, Any], systems: Sequence[str], annotators: Sequence[str], spec: RankingSpec) -> list[Any]:
    out: list[Any] = [row["url"], row["reference"], *(row["raw"].get(s) for s in systems)]
    for a in annotators:
        table = row["ranks"].get(a, {})
        out += [ranking_sheet.rank_cell(table.get(d.name, {}).get(s)) for d in spec.dimensions for s in systems]
    return out


def _xlsx_value(sheet: Any, value: Any) -> Any:
    """A value for the sheet; text starting with "=" stays text, never becomes a formula."""
    if isinstance(value, str) and value.startswith("="):
        cell = WriteOnlyCell(sheet, value)
        cell.data_type = "s"
        return cell
    return value


def _write(spool: Iterable[str], header: list[str], csv_path: Path, xlsx_path: Path, spec: RankingSpec,
           systems: Sequence[str], annotators: Sequence[str]) -> None:  # fmt: skip
    """Both result files from the spooled rows, streaming (write-only workbook)."""
    with atomic_open(csv_path) as cf, atomic_open(xlsx_path, "wb") as xf:
        writer = csv.writer(cf)
        workbook = Workbook(write_only=True)
        sheet = workbook.create_sheet(NAME[:31])
        writer.writerow(header)
        sheet.append([_xlsx_value(sheet, c) for c in header])
        for line in spool:
            row = json.loads(line)
            cells = _cells(row, systems, annotators, spec)
            writer.writerow(cells)
            try:
                sheet.append([_xlsx_value(sheet, c) for c in cells])
            except IllegalCharacterError as e:
                raise InputError(xlsx_path, f"task with url {row['url']!r}", "", "a cell holds a control "
                                 "character XLSX cannot store; remove it from the input") from e  # fmt: skip
        save_workbook(workbook, xf)


# ---------------------------------------------------------------- checks


def check_result(result: Sequence[dict[str, Any]], spec: RankingSpec) -> list[tuple[str, str]]:
    """The rules of the sheet the server does not check, as (rule, what was found).

    A cell's items decode cannot read as a rank (not a task-level ``choices`` item) are "unreadable-answer":
    the result files leave the cell empty, as they do a cell with two ranks or a rank off 1..N."""
    cells = parse_result(result, spec)
    names = {spec.cell(d, p) for d in spec.dimensions for p in spec.positions}
    unread: dict[str, str] = {}
    for item in result:
        name = str(item.get("from_name", "")) if isinstance(item, dict) else ""
        if name in names and not choices_by_name([item]):
            unread.setdefault(name, f"{name}: a {item.get('type') or 'typeless'} item, not a choice of rank "
                              f"({jsontext.dumps(item.get('value'), ensure_ascii=False)[:60]})")  # fmt: skip
    top = len(spec.positions)
    found: list[tuple[str, str]] = [("unreadable-answer", what) for what in unread.values()]
    missing = []
    for d in spec.dimensions:
        for i, p in enumerate(spec.positions):
            codes = cells.get((d.name, i), [])
            name = spec.cell(d, p)
            if not codes and name not in unread:
                missing.append(name)
            if len(codes) > 1:
                found.append(("one-rank-per-cell", f"{name} has {len(codes)} ranks: {JOIN.join(codes)}"))
            found += [("rank-in-range", f"{name}: {c!r} is not a rank 1..{top}")
                      for c in codes if not (c.isdigit() and 1 <= int(c) <= top)]  # fmt: skip
    if missing:
        found.insert(0, ("ranking-complete", f"no rank for {', '.join(missing)}"))
    return found


# ---------------------------------------------------------------- the format

INPUT_SUFFIXES = (".xlsx", ".xlsm", ".csv", ".json")


def _expand_folders(paths: Sequence[Path]) -> tuple[list[Path], list[ReadWarning]]:
    """A folder stands for the sheets and the mapping below it (as released: ``distribute/``,
    ``results/``, ``systems.json``); its other files (a guideline, a picture) are skipped with a warning."""
    out: list[Path] = []
    warnings = []
    for path in map(Path, paths):
        if not path.is_dir():
            out.append(path)
            continue
        found: list[Path] = []
        other: list[Path] = []
        for member in sorted(path.rglob("*")):
            parts = member.relative_to(path).parts
            if not member.is_file() or any(p.startswith(".") for p in parts) or member.name.startswith("~$"):
                continue  # hidden files and the lock files Excel leaves beside an open workbook
            (found if member.suffix.lower() in INPUT_SUFFIXES else other).append(member)
        if not found:
            raise InputError(path, "", "", "no .xlsx, .csv or .json file in this folder")
        if other:
            names = ", ".join(str(m.relative_to(path)) for m in other[:3]) + (", ..." if len(other) > 3 else "")
            what = f"ignored {len(other)} file(s) not .xlsx, .csv or .json: {names}"
            warnings.append(ReadWarning(str(path), "", what))
        out += found
    return out, warnings


class ExtractiveRankingFormat:
    name = NAME
    describe = (
        "XLSX (first sheet) or CSV: url, reference, one column per system with sentences joined by </s>; "
        "or the seed-004 sheet as distributed (7 rows per case) with systems.json (letter -> system) "
        "and the annotators' copies <sheet>_<annotator>.xlsx, or a folder holding them"
    )

    def read(self, paths: Sequence[Path], definition: Definition) -> Iterator[SourceTask]:
        paths, skipped = _expand_folders(paths)
        for i, task in enumerate(self._read(paths, definition)):
            yield replace(task, warnings=(*skipped, *task.warnings)) if i == 0 and skipped else task

    def _read(self, paths: Sequence[Path], definition: Definition) -> Iterator[SourceTask]:
        spec: RankingSpec = definition.spec
        mappings = [Path(p) for p in paths if Path(p).suffix.lower() == ".json"]
        sheets = [Path(p) for p in paths if Path(p).suffix.lower() != ".json"]
        vertical = [p for p in sheets if p.suffix.lower() in (".xlsx", ".xlsm", ".csv") and p.is_file()
                    and ranking_sheet.is_vertical(_rows(p), _cell)]  # fmt: skip
        for path in sheets:
            if path not in vertical:
                yield from _read(path, spec)
        if len(mappings) > 1:
            raise InputError(mappings[1], "", "", f"a second letter -> system mapping (first: {mappings[0]}); give one")
        if not vertical:
            if mappings:
                raise InputError(mappings[0], "", "", "a letter -> system mapping, but no sheet in the seed-004 "
                                 "layout (rows 'Case N') among the inputs")  # fmt: skip
            return
        if not mappings:
            raise InputError(vertical[0], "", "", "a sheet in the seed-004 layout names outputs by letter only; "
                             "add a mapping file to the inputs, e.g. systems.json "
                             '{"A": "ex44", "B": "ex46", ...}')  # fmt: skip
        mapping = ranking_sheet.read_mapping(mappings[0], spec)
        parsed = [ranking_sheet.parse_sheet(p, _rows(p), _cell, spec) for p in vertical]
        names = ranking_sheet.annotator_names(vertical)
        stem = ranking_sheet.sheet_stem(vertical, names)
        yield from ranking_sheet.tasks(parsed, mapping, spec, stem, names)

    def read_predictions(self, paths: Sequence[Path], definition: Definition) -> Iterator[tuple[str, SourcePrediction]]:
        """The protocol has no machine pre-annotations: say so instead of reading anything."""
        raise no_predictions(NAME, paths)

    # No record_spans/splice (a re-pull converts every task): the table's columns are the systems and annotators of
    # every task (known once all are seen), the .xlsx is a workbook, and the vertical sheets are a case per task
    # across annotators; none is one record after another per task.
    def write_results(self, tasks: Iterable[ExportedTask], definition: Definition, out_dir: Path) -> list[Path]:
        spec: RankingSpec = definition.spec
        csv_path, xlsx_path = Path(out_dir) / f"{NAME}.csv", Path(out_dir) / f"{NAME}.xlsx"
        systems: dict[str, None] = {}  # ordered sets: the columns, known once every task is seen
        annotators: dict[str, None] = {}
        cases: list[ranking_sheet.WrittenCase] = []  # tasks from a seed-004 vertical sheet (small: one study)
        stems: dict[str, None] = {}
        sheet_annotators: dict[str, None] = {}
        with tempfile.TemporaryFile("w+", encoding="utf-8") as spool:
            for task in tasks:
                row = _spool_row(task, definition)
                if "case" in task.data:
                    case = _written_case(task, definition)
                    cases.append(case)
                    stems.setdefault(str(task.data.get("sheet") or NAME))
                    sheet_annotators.update(dict.fromkeys(case.ranks))
                systems.update(dict.fromkeys(row["raw"]))
                annotators.update(dict.fromkeys(row["ranks"]))
                spool.write(jsontext.dumps(row, ensure_ascii=False) + "\n")
            spool.seek(0)
            header = _header(list(systems), list(annotators), spec)
            _write(spool, header, csv_path, xlsx_path, spec, list(systems), list(annotators))
        sheets = ranking_sheet.write_sheets(cases, stems, list(sheet_annotators), spec, Path(out_dir)) if cases else []
        return [csv_path, xlsx_path, *sheets]

    def check(self, task: ExportedTask, annotation: ExportedAnnotation, definition: Definition) -> list[Violation]:
        return [Violation(task.key, annotation.annotator, rule, found)
                for rule, found in check_result(annotation.result, definition.spec)]  # fmt: skip


FORMAT = ExtractiveRankingFormat()
