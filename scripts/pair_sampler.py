#!/usr/bin/env python3
"""Adaptive pairs against uniform pairs (next-round --pairs): items to a Bradley-Terry interval width, false decisions.

    .venv/bin/python scripts/pair_sampler.py            run and rewrite the pair-sampler table of
                                                        docs/statistics.md (between its markers)
    .venv/bin/python scripts/pair_sampler.py --print    run and print the table only

The simulation is :func:`annols.analysis.pair_sampler.simulate`: pairwise studies of k systems with planted
Bradley-Terry log-strengths (near-ties included), 3 annotators an item, rounds of 2k items among the pairs still
undecided by their confidence sequences (alpha / pairs), stopped when every centred log-strength's 95% interval is
at most the target wide. The seeded test suite (tests/analysis/test_pair_sampler.py) runs a smaller size.
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

SEED = 2026
STUDIES, NULL_STUDIES, ROUNDS, ALPHA, EFFECT = 300, 300, 300, 0.05, 0.3
DESIGNS = (  # k systems: planted log-strengths, target width of every 95% interval (log scale)
    ((0.0, 0.1, 0.6, 1.2), 0.8),
    ((0.0, 0.0, 0.3, 0.6, 1.0, 1.6), 0.9),
    ((0.0, 0.05, 0.3, 0.5, 0.8, 1.1, 1.5, 2.0), 1.0),
)
START, END = "<!-- pair sampler: start -->", "<!-- pair sampler: end -->"


def _rate(p: float, n: int) -> str:
    return f"{p:.4f} ± {math.sqrt(p * (1 - p) / n):.4f}"


def table() -> str:
    from annols.analysis import pair_sampler

    lines = ["| k | planted log-strengths | target width | studies | items, adaptive (median) | items, uniform "
             "(median) | adaptive / uniform | reached, adaptive / uniform | false decision, adaptive | false "
             "decision, uniform | any decision under the null, adaptive | seconds |",
             "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]  # fmt: skip
    for theta, target in DESIGNS:
        began = time.perf_counter()
        k = len(theta)
        r = pair_sampler.simulate(theta, studies=STUDIES, null_studies=NULL_STUDIES, batch=2 * k, rounds=ROUNDS,
                                  target=target, effect=EFFECT, alpha=ALPHA, seed=SEED)  # fmt: skip
        seconds = time.perf_counter() - began
        lines.append(f"| {k} | {', '.join(f'{t:g}' for t in theta)} | {target} | {STUDIES} | {r.adaptive:.0f} | "
                     f"{r.uniform:.0f} | {r.adaptive / r.uniform:.3f} | {r.adaptive_reached:.3f} / "
                     f"{r.uniform_reached:.3f} | {_rate(r.adaptive_false, STUDIES)} | "
                     f"{_rate(r.uniform_false, STUDIES)} | {_rate(r.null_false, NULL_STUDIES)} | "
                     f"{seconds:.0f} |")  # fmt: skip
    lines += ["", f"Seed {SEED}; 3 annotators an item (no ties), rounds of 2k items (at most {ROUNDS} rounds), "
              f"each pair at alpha {ALPHA} / pairs, --effect {EFFECT}, exploration floor "
              f"{pair_sampler.EXPLORE:g} of a round; items to the width: median over the studies (a study that "
              "never reached it counts the cap); `.venv/bin/python scripts/pair_sampler.py` reproduces it."]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scripts/pair_sampler.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--print", action="store_true", help="print the table, leave docs/statistics.md alone")
    args = parser.parse_args(argv)
    text = table()
    if not args.print:
        _docs.splice(text, START, END)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
