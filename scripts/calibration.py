#!/usr/bin/env python3
"""The null calibration at full size: every test the report prints, on seeded null studies; figures into docs.

    .venv/bin/python scripts/calibration.py            run and rewrite the calibration tables of
                                                       docs/statistics.md (between their markers)
    .venv/bin/python scripts/calibration.py --print    run and print the tables only
    .venv/bin/python scripts/calibration.py --part panel   one table: pooled (the items' tests),
                                                       panel (annotators as sampled), planted (plan)

The studies and tests are :mod:`annols.analysis.planning.simulate`'s, the same the seeded test suites
(tests/analysis/planning/test_calibration.py, tests/analysis/planning/test_plan_report.py) run at a smaller size;
the old judgment-level sign test is the first suite's counter-example, run here on the same
pairwise studies.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "scripts")]

import _docs

STUDIES = {"pairwise": 2000, "ratings": 1000, "ranking": 1000, "best-worst": 300}
SEED = 2026
MARKERS = {"pooled": "calibration", "panel": "calibration-panel", "planted": "plan-check"}
PANEL_STUDIES = {"pairwise": 2000, "ratings": 1000, "ranking": 1000, "best-worst": 300}
PLANTED_STUDIES, PLANNED = 1000, 5000
TESTS = {"pairwise": "sign test over items", "ratings": "Wilcoxon over items of per-item mean differences",
         "ranking": "Wilcoxon over items of per-item mean-rank differences",
         "best-worst": "Wilcoxon over items (pools) of per-item score differences"}  # fmt: skip


def table(part: str = "pooled") -> str:
    return {"pooled": pooled, "panel": panel, "planted": planted}[part]()


def pooled() -> str:
    """The items' tests on pooled null studies (three annotators per item from a pool of twelve)."""
    from annols.analysis.planning import simulate
    from tests.analysis.planning.test_calibration import judgments_sign_test_p

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


def panel() -> str:
    """Annotators as sampled: the same six annotators judge every item, each their own taste (simulate.PANEL)."""
    from annols.analysis.planning import simulate

    lines = ["| style | test | null studies | tests | rejected at 0.05 | Monte Carlo se | seconds |",
             "|---|---|---:|---:|---:|---:|---:|"]  # fmt: skip
    for style, studies in PANEL_STUDIES.items():
        chosen = simulate.STYLES[style]
        tests = {"annotators as sampled: min F'": chosen.sampled,
                 f"items (these annotators only): {TESTS[style]}": chosen.p}  # fmt: skip
        began = time.perf_counter()
        rates = simulate.rejection_rates(style, studies, SEED, tests, simulate.PANEL)
        seconds = time.perf_counter() - began
        for name, rate in rates.items():
            se = math.sqrt(rate.rate * (1 - rate.rate) / rate.tested)
            lines.append(f"| {style} | {name} | {studies} | {rate.tested} | {rate.rate:.3f} | {se:.3f} | "
                         f"{seconds:.0f} |")  # fmt: skip
    lines.append("")
    lines.append(f"Seed {SEED}; `.venv/bin/python scripts/calibration.py --part panel` reproduces it.")
    return "\n".join(lines)


def planted() -> str:
    """Planted effects under item and annotator variance: the report's result against plan's predicted power."""
    from annols.analysis.planning import plan, simulate
    from tests.analysis.planning.test_plan_report import DESIGNS

    lines = ["| style | items x annotators | effect | item sd | annotator sd | report's test | plan's power | "
             "report's power | Monte Carlo se (difference) |",
             "|---|---|---:|---:|---:|---|---:|---:|---:|"]  # fmt: skip
    for a, items, annotators in DESIGNS:
        predicted = plan.simulate(a, items, annotators, PLANNED, seed=SEED)
        empirical = simulate.planted_power(a, items, annotators, PLANTED_STUDIES, seed=SEED + 1)
        se = math.sqrt(predicted * (1 - predicted) * (1 / PLANTED_STUDIES + 1 / PLANNED))
        test = "min F' (annotators as sampled)" if a.annotator_sd > 0 else "items' test"
        lines.append(f"| {a.style} | {items} x {annotators} | {a.effect} | {a.item_sd} | {a.annotator_sd} | {test} | "
                     f"{predicted:.3f} | {empirical.rate:.3f} | {se:.3f} |")  # fmt: skip
    lines.append("")
    lines.append(f"Seed {SEED}: {PLANNED} simulations of `annols plan`, {PLANTED_STUDIES} planted studies through the "
                 "report's functions per design; `.venv/bin/python scripts/calibration.py --part planted` reproduces "
                 "it.")  # fmt: skip
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scripts/calibration.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--print", action="store_true", help="print the tables, leave docs/statistics.md alone")
    parser.add_argument("--part", choices=[*MARKERS, "all"], default="all", help="which table (default: all)")
    args = parser.parse_args(argv)
    for part in MARKERS if args.part == "all" else [args.part]:
        text = table(part)
        print(text)
        if args.print:
            continue
        _docs.splice(text, f"<!-- {MARKERS[part]}: start -->", f"<!-- {MARKERS[part]}: end -->")
    return 0


if __name__ == "__main__":
    sys.exit(main())
