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

Run ``write`` before a change (e.g. in a checkout of the commit before) and after it, then
``compare``: it prints each file that differs and exits 1 if any does.
"""

from __future__ import annotations

import argparse
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
    from annols.report import ReportOptions, build_report
    from annols.study.pull import convert
    from tests.report import examples, study
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


def compare(a: Path, b: Path) -> int:
    differ = sorted(set(files(a)) ^ set(files(b)))
    for name in sorted(set(files(a)) & set(files(b))):
        left, right = (a / name).read_bytes(), (b / name).read_bytes()
        if not name.endswith(".png"):
            left = left.replace(str(a).encode(), b"")
            right = right.replace(str(b).encode(), b"")
        if left != right:
            differ.append(name)
    for name in differ:
        print(f"differs: {name}")
    print(f"{len(files(a))} files compared, {len(differ)} differ")
    return 1 if differ else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scripts/report_outputs.py", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("write").add_argument("out", type=Path)
    both = sub.add_parser("compare")
    both.add_argument("a", type=Path)
    both.add_argument("b", type=Path)
    args = parser.parse_args(argv)
    if args.command == "write":
        write(args.out.resolve())
        return 0
    return compare(args.a.resolve(), args.b.resolve())


if __name__ == "__main__":
    sys.exit(main())
