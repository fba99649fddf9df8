#!/usr/bin/env python3
"""Studies in rounds at full size: false positives when looking after every round, and judgments to a decision.

    .venv/bin/python scripts/sequential.py            run and rewrite the sequential table of
                                                      docs/statistics.md (between its markers)
    .venv/bin/python scripts/sequential.py --print    run and print the table only
    .venv/bin/python scripts/sequential.py --passes   the same for the table of passes (next-round --passes:
                                                      :func:`annols.analysis.planning.sequential.simulate_passes`)
    .venv/bin/python scripts/sequential.py --waiting  the same for the table of looks taken while annotators are
                                                      mid-way
                                                      (:func:`annols.analysis.planning.sequential.simulate_waiting`)

The simulation is :func:`annols.analysis.planning.sequential.simulate` (plan's pairwise model: 3
annotators an item, ties 20%, item sd 0.5 on the logit scale), the one the seeded test suite
(tests/analysis/planning/test_sequential.py) runs at a smaller size. Beside each effect: plan's fixed
design for the smallest effect worth finding (0.3) with the same annotators, and for the
planted effect itself.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "scripts")]

import _docs

SEED = 2026
NULL_STUDIES, PLANTED_STUDIES = 10000, 2000
ROUNDS, BATCH, ANNOTATORS, MARGIN = 20, 20, 3, 0.3
EFFECTS = (0.0, 0.15, 0.3, 0.5, 0.8)
START, END = "<!-- sequential: start -->", "<!-- sequential: end -->"
PASSES_START, PASSES_END = "<!-- passes: start -->", "<!-- passes: end -->"
POOL, PASSES, PASS_BATCH = 40, (1, 2, 3, 5), 10
WAITING_START, WAITING_END = "<!-- waiting: start -->", "<!-- waiting: end -->"


def table() -> str:
    import math

    from annols.analysis.planning import plan, sequential

    def fixed(effect: float) -> str:
        a = plan.Assumptions("pairwise", effect, tie_rate=0.2, item_sd=0.5)
        best = plan.plan(a, plan.ITEMS, (ANNOTATORS,), plan.SIMULATIONS, SEED).cheapest
        return str(best.judgments) if best else "none of the grid"

    lines = ["| planted effect | studies | any rejection, sequence | any rejection, report's test re-run | "
             "decided towards the better | judgments to a decision (mean) | plan's fixed design for 0.3 | "
             "plan's fixed design for the planted effect | seconds |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]  # fmt: skip
    at_margin = fixed(MARGIN)
    for effect in EFFECTS:
        began = time.perf_counter()
        sims = NULL_STUDIES if effect == 0 else PLANTED_STUDIES
        r = sequential.simulate(effect, sims=sims, rounds=ROUNDS, batch=BATCH, annotators=ANNOTATORS,
                                margin=MARGIN, seed=SEED)  # fmt: skip
        seconds = time.perf_counter() - began
        se = math.sqrt(r.sequential_rejects * (1 - r.sequential_rejects) / sims)
        own = fixed(effect) if effect else "-"
        lines.append(f"| {effect} | {sims} | {r.sequential_rejects:.3f} ± {se:.3f} | {r.naive_rejects:.3f} | "
                     f"{r.correct:.3f} | {r.judgments:.0f} | {at_margin} | {own} | {seconds:.0f} |")  # fmt: skip
    lines.append("")
    lines.append(f"Seed {SEED}; {ROUNDS} rounds of {BATCH} items, {ANNOTATORS} annotators an item (at most "
                 f"{ROUNDS * BATCH * ANNOTATORS} judgments), alpha 0.05, margin ±{MARGIN}; "
                 "`.venv/bin/python scripts/sequential.py` reproduces it.")  # fmt: skip
    lines += ["", four_systems()]
    return "\n".join(lines)


def four_systems(studies: int = 400, best: float = 0.8, rounds: int = 60) -> str:
    """Four systems, one better than each other by ``best``, the other three alike
    (:func:`annols.analysis.planning.sequential.simulate_pairs`), with goal all and goal best, against plan's fixed
    design for MARGIN once per pair."""
    from annols.analysis.planning import plan, sequential

    systems = [("a", "b"), ("a", "c"), ("a", "d"), ("b", "c"), ("b", "d"), ("c", "d")]  # a is the best

    def run(goal: str) -> sequential.SimulatedPairs:
        return sequential.simulate_pairs([best] * 3 + [0.0] * 3, studies=studies, rounds=rounds, batch=BATCH,
                                         annotators=ANNOTATORS, margin=MARGIN, seed=SEED, goal=goal,
                                         systems=systems)  # fmt: skip

    r, b = run(sequential.ALL), run(sequential.BEST)
    fixed = plan.plan(plan.Assumptions("pairwise", MARGIN, tie_rate=0.2, item_sd=0.5), plan.ITEMS, (ANNOTATORS,),
                      plan.SIMULATIONS, SEED).cheapest  # fmt: skip
    fixed_judgments = fixed.judgments * 6 if fixed else 0
    saved = f"{100 * (fixed_judgments - b.judgments) / fixed_judgments:.0f}%" if fixed_judgments else "-"
    return (f"Four systems, one better than each other by {best}, the others alike ({studies} studies, --effect "
            f"{MARGIN}, {BATCH} items a round spread over the undecided pairs, each pair at 0.05 / 6): every "
            f"decision equal to the truth in {r.right:.3f} of them, a wrong one in {r.wrong:.3f}; judgments used: "
            f"median {r.judgments:.0f} (at most {rounds * BATCH * ANNOTATORS}); the three pairs with the best "
            f"system were all decided after {r.first_found:.0f} judgments (median). plan's fixed design for "
            f"{MARGIN}, once per pair: {fixed_judgments} judgments.\n\n"
            f"The same studies with `--goal best` (items only for the undecided pairs between systems not yet "
            f"decided worse than another, the same level 0.05 / 6): conclusion \"best: a\" in {b.concluded:.3f} "
            f"of them, a wrong decision in {b.wrong:.3f}; judgments used: median {b.judgments:.0f}, against "
            f"{fixed_judgments} for plan's fixed design: {saved} fewer.")


def _false_rate(r: Any, effect: float, sims: int) -> str:
    """A simulation's rate of false decisions with its Monte Carlo se: every decision under the null, else those
    against the planted better system."""
    import math

    wrong = r.rejects if effect == 0 else r.rejects - r.correct
    return f"{wrong:.4f} ± {math.sqrt(wrong * (1 - wrong) / sims):.4f}"


def passes_table() -> str:
    """Studies of one comparison whose pool holds POOL items, one annotator a pass, run with 1 to 5 passes: under the
    null, the rate of any false decision over every round with each pass its own sequence at alpha / passes, and
    with the naive design (re-opened judgments folded into one sequence at alpha); on planted effects, how often
    the comparison is decided and with how many judgments."""
    from annols.analysis.planning import sequential

    lines = ["| planted effect | passes | studies | any false decision, passes (each its sequence) | "
             "any false decision, naive (folded into one sequence) | decided towards the better | judgments "
             "(mean) |", "|---:|---:|---:|---:|---:|---:|---:|"]  # fmt: skip
    for effect in (0.0, 0.3, 0.5):
        for passes in PASSES:
            sims = NULL_STUDIES if effect == 0 else PLANTED_STUDIES
            r = sequential.simulate_passes(effect, sims=sims, items=POOL, passes=passes, batch=PASS_BATCH,
                                           seed=SEED)  # fmt: skip
            naive = f"{r.naive_rejects:.4f}" if effect == 0 else "-"
            toward = f"{r.correct:.3f}" if effect else "-"
            lines.append(f"| {effect} | {passes} | {sims} | {_false_rate(r, effect, sims)} | {naive} | {toward} | "
                         f"{r.judgments:.0f} |")  # fmt: skip
    lines += ["", f"Seed {SEED}; a pool of {POOL} items, {PASS_BATCH} items a round, one annotator an item a pass, "
              "ties 20%, item sd 0.5, alpha 0.05, stopped at the first decision (no tie decided: the worst case "
              "for false decisions); `.venv/bin/python scripts/sequential.py --passes` reproduces it."]  # fmt: skip
    return "\n".join(lines)


def waiting_table() -> str:
    """Studies of one comparison, ANNOTATORS an item, looked at after every round while the latest round's items are
    part-judged: the rate of any false decision with an item counted once complete, and with the rule before it (an
    item from its first judgment, revised later), and how many looks a planted effect takes under each."""
    from annols.analysis.planning import sequential

    lines = ["| planted effect | items a round | looks | studies | any false decision, complete items | "
             "any false decision, from the first judgment (before) | decided towards the better | look of the "
             "decision (mean), complete items | the same, from the first judgment | latest round's items not "
             "complete at a look |", "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]  # fmt: skip
    for effect, batch, rounds in ((0.0, BATCH, ROUNDS), (0.0, 5, 4 * ROUNDS), (0.3, BATCH, ROUNDS),
                                  (0.5, BATCH, ROUNDS)):  # fmt: skip
        sims = NULL_STUDIES if effect == 0 else PLANTED_STUDIES
        r = sequential.simulate_waiting(effect, sims=sims, rounds=rounds, batch=batch, annotators=ANNOTATORS,
                                        seed=SEED)  # fmt: skip
        partial = f"{r.partial_rejects:.4f}" if effect == 0 else "-"
        toward = f"{r.correct:.3f}" if effect else "-"
        looks = f"{r.looks:.2f} | {r.partial_looks:.2f}" if effect else "- | -"
        lines.append(f"| {effect} | {batch} | {rounds} | {sims} | {_false_rate(r, effect, sims)} | {partial} | "
                     f"{toward} | {looks} | {r.waiting:.2f} |")  # fmt: skip
    lines += ["", f"Seed {SEED}; {ANNOTATORS} annotators an item, each item of the latest round holding 0 to "
              f"{ANNOTATORS} of its judgments at a look (uniformly, drawn anew at each look), earlier rounds' items "
              "complete; ties 20%, item sd 0.5, alpha 0.05, stopped at the first decision (no tie decided); "
              "`.venv/bin/python scripts/sequential.py --waiting` reproduces it."]  # fmt: skip
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scripts/sequential.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--print", action="store_true", help="print the table, leave docs/statistics.md alone")
    parser.add_argument("--passes", action="store_true", help="the table of passes (next-round --passes) instead")
    parser.add_argument("--waiting", action="store_true", help="the table of looks taken mid-way instead")
    args = parser.parse_args(argv)
    text = passes_table() if args.passes else waiting_table() if args.waiting else table()
    markers = (PASSES_START, PASSES_END) if args.passes else (WAITING_START, WAITING_END) if args.waiting else (
        START, END)  # fmt: skip
    if not args.print:
        _docs.splice(text, *markers)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
