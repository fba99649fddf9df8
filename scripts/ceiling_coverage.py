#!/usr/bin/env python3
"""Coverage at the ceiling at full size: the judge-assisted intervals (humans only, PPI++) on seeded studies whose
ratings sit mostly at the top of a 1-5 scale, bounded (the report's) beside CLT; figures into docs.

    .venv/bin/python scripts/ceiling_coverage.py            run and rewrite the ceiling table of
                                                            docs/statistics.md (between its markers)
    .venv/bin/python scripts/ceiling_coverage.py --print    run and print the table only
    .venv/bin/python scripts/ceiling_coverage.py --studies 40   fewer studies per cell

The studies are :mod:`annols.analysis.ceiling`'s, the same the seeded test (tests/analysis/test_ceiling.py) runs
at a smaller size.
"""

from __future__ import annotations

import argparse
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


def table(studies: int = STUDIES) -> str:
    from annols.analysis import ceiling

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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scripts/ceiling_coverage.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--print", action="store_true", help="print the table, leave docs/statistics.md alone")
    parser.add_argument("--studies", type=int, default=STUDIES, help="studies per cell")
    args = parser.parse_args(argv)
    text = table(args.studies)
    print(text)
    if not args.print:
        _docs.splice(text, START, END)
    return 0


if __name__ == "__main__":
    sys.exit(main())
