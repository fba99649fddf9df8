#!/usr/bin/env python3
"""Adaptive pairs against uniform pairs (next-round --pairs): items to a Bradley-Terry interval width, false decisions.

    .venv/bin/python scripts/pair_sampler.py            run and rewrite the pair-sampler table of
                                                        docs/statistics.md (between its markers)
    .venv/bin/python scripts/pair_sampler.py --print    run and print the table only
    .venv/bin/python scripts/pair_sampler.py --overlap  the table of false decisions with one judgment an item
                                                        (next-round --overlap 1), exact, before and after the
                                                        betting sequence (add --print to print it only)

The simulation is :func:`annols.analysis.planning.pair_sampler.simulate`: pairwise studies of k systems with planted
Bradley-Terry log-strengths (near-ties included), 3 annotators an item, rounds of 2k items among the pairs still
undecided by their confidence sequences (alpha / pairs), stopped when every centred log-strength's 95% interval is
at most the target wide. The seeded test suite (tests/analysis/planning/test_pair_sampler.py) runs a smaller size.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path
from typing import Any

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
OVERLAP_START, OVERLAP_END = "<!-- overlap one: start -->", "<!-- overlap one: end -->"
OVERLAP_K, OVERLAP_ITEMS = (4, 6, 8, 12), (12, 34, 100)  # systems; items a pair gets (each looked at)


def _rate(p: float, n: int) -> str:
    return f"{p:.4f} ± {math.sqrt(p * (1 - p) / n):.4f}"


def table() -> str:
    from annols.analysis.planning import pair_sampler

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


def plug_in(level: float, eta: float, effect: float) -> Any:
    """The boundary before the betting sequence, for the record: anytimemonitor's normal mixture with its
    'ebernstein' proxy (Hoeffding below 10 items, then the items' sample variance, at least 1% of the Hoeffding
    proxy), as annols.analysis.planning.sequential.interval computed it until the fix."""
    from anytimemonitor.avci import AnytimeCI  # type: ignore[import-untyped, unused-ignore]

    from annols.analysis.planning import sequential

    def rule(n: int, sums: Any) -> list[str]:
        out = []
        for total in sums.tolist():
            ci = AnytimeCI(alpha=level, proxy="ebernstein", d_bounds=(-1.0, 1.0), eta=eta, L_pool=None,
                           floor_alpha_frac=0.5, t_min_ebernstein=10, ebernstein_floor_frac=0.01)  # fmt: skip
            wins = (n + total) // 2
            ci.update([1.0] * wins + [-1.0] * (n - wins))
            low, high = ci.interval()
            out.append(sequential.decide(ci.mean, low, high, effect))
        return out

    return rule


def overlap_table() -> str:
    """Equal systems, one judgment an item (+1 or -1): each pair's exact chance of a false decision looked at after
    every item (:func:`annols.analysis.planning.sequential.exact_null`), with the plug-in boundary before and the
    betting sequence now, and the study's over its k(k-1)/2 pairs."""
    from annols.analysis.planning import sequential

    lines = ["| k | pairs | each pair's level | items a pair | a pair's false decisions, plug-in (before) | "
             "any false decision, plug-in (before) | a pair's, betting (now) | any false decision, betting (now) |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|"]  # fmt: skip
    for k in OVERLAP_K:
        m = k * (k - 1) // 2
        level = ALPHA / m
        for items in OVERLAP_ITEMS:
            eta = sequential.eta_for(items)
            before = sequential.exact_null(items, level, eta, EFFECT, plug_in(level, eta, EFFECT))
            after = sequential.exact_null(items, level, eta, EFFECT)
            lines.append(f"| {k} | {m} | {level:.5f} | {items} | {before:.5f} | {1 - (1 - before) ** m:.4f} | "
                         f"{after:.5f} | {1 - (1 - after) ** m:.4f} |")
    lines += ["", f"Exact (the walk of the judgments' sum, no Monte Carlo); alpha {ALPHA} / pairs, --effect {EFFECT} "
              "(a pair decided within it stops), eta 1 / sqrt(items); the study's rate 1 - (1 - p)^pairs, pairs "
              "with their own items; `.venv/bin/python scripts/pair_sampler.py --overlap` reproduces it."]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scripts/pair_sampler.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--print", action="store_true", help="print the table, leave docs/statistics.md alone")
    parser.add_argument("--overlap", action="store_true", help="the table of one judgment an item instead")
    args = parser.parse_args(argv)
    text = overlap_table() if args.overlap else table()
    if not args.print:
        _docs.splice(text, *((OVERLAP_START, OVERLAP_END) if args.overlap else (START, END)))
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
