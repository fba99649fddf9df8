#!/usr/bin/env python3
"""Every output of ``annols report`` on fixed studies, to check that a change keeps them byte for byte.

    .venv/bin/python scripts/report_outputs.py write DIR     reports and result files (``convert``) of
                                                             the five shipped protocols (tests/report/
                                                             study.py), the planted examples
                                                             (tests/report/examples.py), the five own
                                                             studies (tests/own_study.py), and reports
                                                             of 2,000-task bench exports
    .venv/bin/python scripts/report_outputs.py compare A B   every file of A and B: PNGs byte for byte,
                                                             text files with the folder's own path
                                                             replaced (report.md names its sources)
    .venv/bin/python scripts/report_outputs.py compare --added-ok A B
                                                             the same, where B may add files and
                                                             add to reports: added files are listed
                                                             apart, and a report.md, report.html or
                                                             paper.tex/.bib that differs passes when
                                                             B only inserts into A (every line of A
                                                             still there, in order)

Run ``write`` before a change (e.g. in a checkout of the commit before) and after it, then
``compare``: it prints each file that differs and exits 1 if any does. The path a folder
was written at is found in its sources tables, so a folder moved after ``write`` compares
too.
"""

from __future__ import annotations

import argparse
import csv
import difflib
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "scripts")]

PULLS = "pulls"


SHIPPED = (
    ("pairwise-aspects", None, "pairwise"),
    ("extractive-ranking", None, "ranking"),
    ("qa-feedback", None, "qa_feedback"),
    ("summary-flaws", None, "summary_flaws"),
    ("sentence-errors", "abstract", "sentence_errors"),
    ("sentence-errors", "headline", "sentence_errors"),
)


def write(out: Path) -> None:
    import bench_report

    from annols import protocols
    from annols.report import ReportOptions
    from annols.study.pull import convert
    from tests.report import examples, study
    from tests.report.build import build_report
    from tests.report.test_style_reports import SECTIONS, definition_of, export

    def both(name: str, definition: object, pull: Path, options: object) -> None:
        build_report(definition, [pull], out / name, options)  # type: ignore[arg-type]
        convert(pull / "export.json", definition, out / name / "results", workers=1)  # type: ignore[arg-type]

    for protocol, variant, generate in SHIPPED:
        name = f"{protocol}-{variant}" if variant else protocol
        pull = study.write_pull(out / PULLS / name, getattr(study, generate)().tasks)
        both(name, protocols.load(protocol, variant), pull, ReportOptions(seed=11, bootstrap=100))
    for example in examples.PLANTED:
        pull = examples.pull(example, out / PULLS / f"example-{example}")
        both(f"example-{example}", examples.definition(example), pull, ReportOptions(bootstrap=100))
    for style in SECTIONS:
        tasks, _ = export(style)
        pull = study.write_pull(out / PULLS / style, tasks)
        both(style, definition_of(style), pull, ReportOptions(bootstrap=100))
    for style in ("ratings", "pairwise"):
        folder = out / PULLS / f"bench-{style}"
        definition = bench_report.write_pull(folder, style, 2000)
        build_report(protocols.load(str(definition)), [folder], out / f"bench-{style}", ReportOptions())


def files(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()
                  and p.relative_to(folder).parts[0] not in (PULLS, "input"))  # fmt: skip


INSERTABLE = ("report.md", "report.html", "paper.tex", "paper.bib")  # may grow by added sections
_TAG = re.compile(rb"(?=<)")  # report.html: one element a piece, so a section added inside a line shows
_WORD = re.compile(rb"\S+|\s+")  # the paper: words, as a summary sentence may grow by a clause

def written_at(folder: Path) -> list[bytes]:
    """The paths ``folder`` was written at: its own, and the one its sources tables name (before a move)."""
    found = {str(folder)}
    for table in folder.glob("*/tables/sources.csv"):
        with table.open(encoding="utf-8", newline="") as f:
            for row in csv.reader(f):
                if row and f"/{PULLS}/" in row[0]:
                    found.add(row[0].split(f"/{PULLS}/")[0])
    # Markdown and LaTeX write an underscore in the path as "\_": that form is the folder's path too.
    spelled = found | {p.replace("_", "\\_") for p in found}
    return sorted((p.encode() for p in spelled), key=len, reverse=True)  # the longest first: one may hold another


def _pieces(name: str, text: bytes) -> list[bytes]:
    if name.endswith(".html"):
        return _TAG.split(text)
    return _WORD.findall(text) if name.endswith((".tex", ".bib")) else text.splitlines(keepends=True)


def only_inserts(name: str, left: bytes, right: bytes) -> bool:
    """Whether ``right`` is ``left`` with pieces (lines of Markdown, elements of HTML, words of the paper)
    inserted and nothing changed."""
    matcher = difflib.SequenceMatcher(None, _pieces(name, left), _pieces(name, right), autojunk=False)
    return all(tag in ("equal", "insert") for tag, *_ in matcher.get_opcodes())


def compare(a: Path, b: Path, added_ok: bool = False) -> int:
    names_a, names_b = set(files(a)), set(files(b))
    missing, added = sorted(names_a - names_b), sorted(names_b - names_a)
    paths = {a: written_at(a), b: written_at(b)}
    same, differ, inserted = [], [], []
    for name in sorted(names_a & names_b):
        left, right = (a / name).read_bytes(), (b / name).read_bytes()
        if not name.endswith(".png"):
            for folder, text in ((a, "left"), (b, "right")):
                for path in paths[folder]:
                    if text == "left":
                        left = left.replace(path, b"")
                    else:
                        right = right.replace(path, b"")
        if left == right:
            same.append(name)
        elif added_ok and Path(name).name in INSERTABLE and only_inserts(name, left, right):
            inserted.append(name)
        else:
            differ.append(name)
    for name in missing:
        print(f"missing: {name}")
    for name in differ:
        print(f"differs: {name}")
    if added_ok:
        for name in inserted:
            print(f"inserted into: {name}")
        for name in added:
            print(f"added: {name}")
    else:
        differ += added
        for name in added:
            print(f"differs: {name} (only in {b})")
    print(f"{len(names_a)} files compared: {len(same)} the same, {len(differ)} differ, {len(missing)} missing"
          + (f", {len(inserted)} only inserted into, {len(added)} added" if added_ok else ""))  # fmt: skip
    return 1 if differ or missing else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scripts/report_outputs.py", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("write").add_argument("out", type=Path)
    both = sub.add_parser("compare")
    both.add_argument("--added-ok", action="store_true",
                      help="B may add files and insert into report.md/.html and paper files")  # fmt: skip
    both.add_argument("a", type=Path)
    both.add_argument("b", type=Path)
    args = parser.parse_args(argv)
    if args.command == "write":
        write(args.out.resolve())
        return 0
    return compare(args.a.resolve(), args.b.resolve(), args.added_ok)


if __name__ == "__main__":
    sys.exit(main())
