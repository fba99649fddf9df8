#!/usr/bin/env python3
"""Judge-assisted estimates at full size: PPI++ coverage and width against humans only; figures into docs.

    .venv/bin/python scripts/ppi_calibration.py            run and rewrite the PPI table of
                                                           docs/statistics.md (between its markers)
    .venv/bin/python scripts/ppi_calibration.py --print    run and print the table only

The studies are :mod:`annols.analysis.judging.ppi_simulate`'s, the same the seeded test suite
(tests/analysis/judging/test_ppi_calibration.py) runs at a smaller size: 400 items, humans (three
per item) on a quarter, a judge on every item biased by half a point toward system A.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "scripts")]

import _docs

STUDIES = 1000
SEED = 2026
CORRELATIONS = (0.0, 0.5, 0.9, -0.5)
BIAS = (0.5, 0.0)
START, END = "<!-- ppi calibration: start -->", "<!-- ppi calibration: end -->"


def table(studies: int = STUDIES) -> str:
    from annols.analysis.judging import ppi, ppi_simulate

    lines = ["| judge's r | estimate | studies | PPI++ coverage | humans' coverage | Monte Carlo se | width ratio "
             "(median) | human items worth (median, per item) | seconds |",
             "|---:|---|---:|---:|---:|---:|---:|---:|---:|"]  # fmt: skip
    for r in CORRELATIONS:
        began = time.perf_counter()
        found = ppi_simulate.coverage(r, studies, SEED, bias=BIAS)
        seconds = time.perf_counter() - began
        for c in found:
            lines.append(f"| {r:g} | {c.estimate} | {c.studies} | {c.ppi:.3f} | {c.humans:.3f} | {c.error:.3f} | "
                         f"{c.width_ratio:.3f} | {c.gain:.3f} | {seconds:.0f} |")  # fmt: skip
    lines.append("")
    lines.append("| judge's r | n human items | judge-only items | predicted variance ratio | simulated |")
    lines.append("|---:|---:|---:|---:|---:|")
    for r in (0.4, 0.8):
        for n, unlabeled in ((20, 80), (100, 400)):
            simulated = ppi_simulate.variance_ratio(r, n, unlabeled, 4000, SEED)
            lines.append(f"| {r:g} | {n} | {unlabeled} | {ppi.variance_factor(r, n, unlabeled):.3f} | "
                         f"{simulated:.3f} |")  # fmt: skip
    lines.append("")
    lines.append(f"Seed {SEED}; `.venv/bin/python scripts/ppi_calibration.py` reproduces it.")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scripts/ppi_calibration.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--print", action="store_true", help="print the table, leave docs/statistics.md alone")
    parser.add_argument("--studies", type=int, default=STUDIES, help="studies per correlation")
    args = parser.parse_args(argv)
    text = table(args.studies)
    if args.print:
        print(text)
        return 0
    _docs.splice(text, START, END)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
