#!/usr/bin/env python3
"""The null calibration at full size: every test the report prints, on seeded null studies; figures into docs.

    .venv/bin/python scripts/calibration.py            run and rewrite the calibration table of
                                                       docs/statistics.md (between its markers)
    .venv/bin/python scripts/calibration.py --print    run and print the table only

The studies and tests are :mod:`annols.analysis.simulate`'s, the same the seeded test suite
(tests/analysis/test_calibration.py) runs at a smaller size; the old judgment-level sign test
is that suite's counter-example, run here on the same pairwise studies.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT)]

STUDIES = {"pairwise": 2000, "ratings": 1000, "ranking": 1000, "best-worst": 300}
SEED = 2026
DOC = ROOT / "docs" / "statistics.md"
START, END = "<!-- calibration: start -->", "<!-- calibration: end -->"
TESTS = {"pairwise": "sign test over items", "ratings": "Wilcoxon over items of per-item mean differences",
         "ranking": "Wilcoxon over items of per-item mean-rank differences",
         "best-worst": "Wilcoxon over items (pools) of per-item score differences"}  # fmt: skip


def table() -> str:
    from annols.analysis import simulate
    from tests.analysis.test_calibration import judgments_sign_test_p

    lines = ["| style | test | null studies | tests | rejected at 0.05 | Monte Carlo se | seconds |",
             "|---|---|---:|---:|---:|---:|---:|"]  # fmt: skip
    for style, studies in STUDIES.items():
        tests = {TESTS[style]: simulate.STYLES[style].p}
        if style == "pairwise":
            tests["old: sign test over judgments (counter-example)"] = judgments_sign_test_p
        began = time.perf_counter()
        rates = simulate.rejection_rates(style, studies, SEED, tests)
        seconds = time.perf_counter() - began
        for name, rate in rates.items():
            se = math.sqrt(rate.rate * (1 - rate.rate) / rate.tested)
            lines.append(f"| {style} | {name} | {studies} | {rate.tested} | {rate.rate:.3f} | {se:.3f} | "
                         f"{seconds:.0f} |")  # fmt: skip
    lines.append("")
    lines.append(f"Seed {SEED}; `.venv/bin/python scripts/calibration.py` reproduces it. A test keeps its level when "
                 "its rate is at most 0.05 plus about two standard errors.")  # fmt: skip
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scripts/calibration.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--print", action="store_true", help="print the table, leave docs/statistics.md alone")
    args = parser.parse_args(argv)
    text = table()
    if args.print:
        print(text)
        return 0
    from annols.files import write_text

    doc = DOC.read_text()
    before, rest = doc.split(START, 1)
    _, after = rest.split(END, 1)
    write_text(DOC, f"{before}{START}\n{text}\n{END}{after}")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
