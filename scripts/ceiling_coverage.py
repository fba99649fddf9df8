#!/usr/bin/env python3
"""Coverage at the ceiling at full size: the judge-assisted intervals (humans only, PPI++) on seeded studies whose
ratings sit mostly at the top of a 1-5 scale, bounded (the report's) beside CLT, and every other interval the report
prints (ratings, pairwise, ranking, best-worst, conclusions' ranks, Bradley-Terry, judges' bias and alternative
annotator test, error score tables) on ceiling plants; figures into docs.

    .venv/bin/python scripts/ceiling_coverage.py            run and rewrite the ceiling table of
                                                            docs/statistics.md (between its markers)
    .venv/bin/python scripts/ceiling_coverage.py --print    run and print the table only
    .venv/bin/python scripts/ceiling_coverage.py --studies 40   fewer studies per cell
    .venv/bin/python scripts/ceiling_coverage.py --table printed   only the table of the other printed intervals
    .venv/bin/python scripts/ceiling_coverage.py --table printed --plant judges --studies 20
                                                            only that plant's rows of the printed table (the
                                                            others' rows kept as they are; repeatable)

The studies are :mod:`annols.analysis.judging.ceiling`'s, the same the seeded test
(tests/analysis/judging/test_ceiling.py) runs at a smaller size.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "scripts")]

import _docs

STUDIES = 40
SEED = 2026
TOPS = (0.9, 0.7)  # the harder ceiling first
ITEMS = (10, 25, 50, 100)
ANNOTATORS = (1, 3)
START, END = "<!-- ceiling coverage: start -->", "<!-- ceiling coverage: end -->"
PRINTED_START, PRINTED_END = "<!-- printed intervals coverage: start -->", "<!-- printed intervals coverage: end -->"
TABLES = ("judge-assisted", "printed")


def table(studies: int = STUDIES) -> str:
    from annols.analysis.judging import ceiling

    lines = ["| top share | human items | annotators | estimate | interval | tested | bounded coverage | "
             "CLT coverage | Monte Carlo se | bounded width | CLT width | CLT zero-width | seconds |",
             "|---:|---:|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]  # fmt: skip
    for top in TOPS:
        for items in ITEMS:
            for annotators in ANNOTATORS:
                began = time.perf_counter()
                found = ceiling.coverage(top, items, annotators, studies, SEED)
                seconds = time.perf_counter() - began
                for c in found:
                    lines.append(f"| {top:g} | {items} | {annotators} | {c.estimate} | {c.interval} | {c.tested} | "
                                 f"{c.bounded:.3f} | {c.clt:.3f} | {c.error:.3f} | {c.bounded_width:.2f} | "
                                 f"{c.clt_width:.2f} | {c.zero_width} | {seconds:.0f} |")  # fmt: skip
                    print(lines[-1], file=sys.stderr, flush=True)  # progress: each row as it comes
    lines.append("")
    lines.append(f"Seed {SEED}, {studies} studies per row of items and annotators (systems: two estimates a "
                 "study); `.venv/bin/python scripts/ceiling_coverage.py` reproduces it. Widths on the 1-5 scale "
                 "(a difference's range is -4 to 4). A CLT interval of zero width is counted as not covering.")
    return "\n".join(lines)


def printed_rows(plant: str, studies: int = STUDIES) -> list[str]:
    """The table's rows of one plant (every top share, size and number of annotators)."""
    from annols.analysis.judging import ceiling

    lines = []
    for top in ceiling.PLANT_TOPS[plant]:
        for items in ITEMS:
            for annotators in ANNOTATORS:
                began = time.perf_counter()
                found = ceiling.printed(plant, top, items, annotators, studies, SEED)
                seconds = time.perf_counter() - began
                for c in found:
                    lines.append(f"| {plant} | {top:g} | {items} | {annotators} | {c.interval} | {c.tested} | "
                                 f"{c.printed} | {_f(c.coverage, 3)} | {_f(c.clt, 3)} | {_f(c.error, 3)} | "
                                 f"{_f(c.width, 2)} | {_f(c.clt_width, 2)} | {c.clt_zero} | {seconds:.0f} |")
                    print(lines[-1], file=sys.stderr, flush=True)  # progress: each row as it comes
    return lines


def printed_table(studies: int = STUDIES) -> str:
    """Every other interval the report prints (ratings, pairwise, ranking, best-worst tables) on the ceiling
    plants."""
    from annols.analysis.judging import ceiling

    lines = ["| plant | top share | items | annotators | interval (table: column) | tested | printed | coverage | "
             "CLT coverage | Monte Carlo se | width | CLT width | CLT zero-width | seconds |",
             "|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]  # fmt: skip
    for plant in ceiling.PLANT_TOPS:
        lines += printed_rows(plant, studies)
    return "\n".join([*lines, "", printed_note(studies)])


def printed_replace(plants: list[str], studies: int) -> str:
    """The printed table as docs/statistics.md holds it, with the rows of ``plants`` run again (each plant's rows in
    :data:`annols.analysis.judging.ceiling.PLANT_TOPS`'s order) and the studies of each plant said in the note."""
    from annols.analysis.judging import ceiling

    held = _docs.DOC.read_text(encoding="utf-8").split(PRINTED_START, 1)[1].split(PRINTED_END, 1)[0].strip()
    lines = held.split("\n")
    header, rows = lines[:2], [line for line in lines[2:] if line.startswith("| ")]
    notes = [line for line in lines[2:] if line and not line.startswith("| ")]
    by_plant: dict[str, list[str]] = {}
    for line in rows:
        by_plant.setdefault(line.split(" | ")[0][2:], []).append(line)
    for plant in plants:
        by_plant[plant] = printed_rows(plant, studies)
    out = [*header]
    for plant in ceiling.PLANT_TOPS:
        out += by_plant.get(plant, [])
    said = [n for n in notes if n.startswith("Studies per plant:")]
    counts = dict(part.rsplit(" ", 1) for part in said[0][len("Studies per plant: "):].rstrip(".").split(", ")) \
        if said else {}  # fmt: skip
    counts.update({p: str(studies) for p in plants})
    note = "Studies per plant: " + ", ".join(f"{p} {counts.get(p, str(STUDIES))}" for p in ceiling.PLANT_TOPS if p in
                                             by_plant) + "."  # fmt: skip
    return "\n".join([*out, "", printed_note(STUDIES), "", note])


def printed_note(studies: int) -> str:
    return (f"Seed {SEED}, {studies} studies per row of plant, top share, items and annotators unless said below; "
            "`.venv/bin/python scripts/ceiling_coverage.py --table printed` reproduces it. Coverage and width are "
            "over the printed intervals; an interval not printed (its cells empty, the reason in the section and the "
            "headline) counts in tested, not in printed. Widths in the column's units (ratings 1-5, shares, scores "
            "and win - loss in %, ranks 1-3). Monte Carlo se of a 95% coverage over the printed. A CLT interval of "
            "zero width counts as not covering; the medians have no CLT interval (-).")


def _f(x: float, digits: int) -> str:
    return "-" if x != x else f"{x:.{digits}f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scripts/ceiling_coverage.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--print", action="store_true", help="print the table, leave docs/statistics.md alone")
    parser.add_argument("--studies", type=int, default=STUDIES, help="studies per cell")
    parser.add_argument("--table", choices=TABLES, action="append",
                        help="only this table (repeatable; default: both)")  # fmt: skip
    parser.add_argument("--plant", action="append",
                        help="printed table: run only this plant's rows, keep the others' (repeatable)")
    args = parser.parse_args(argv)
    for module in ("by_style.best_worst", "by_style.by_system", "judging.ceiling", "inference.item_tests",
                   "judging.judges", "by_style.pairwise", "by_style.ranking", "leaderboard.rankings",
                   "by_style.ratings"):  # loaded, then frozen  # fmt: skip
        importlib.import_module(f"annols.analysis.{module}")

    gc.freeze()  # the report's Holm correction (statsmodels) calls gc.collect: leave the loaded modules out of it
    for name in args.table or TABLES:
        if name == "judge-assisted":
            text = table(args.studies)
        elif args.plant:
            text = printed_replace(args.plant, args.studies)
        else:
            text = printed_table(args.studies)
        print(text)
        if not args.print:
            _docs.splice(text, *((START, END) if name == "judge-assisted" else (PRINTED_START, PRINTED_END)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
