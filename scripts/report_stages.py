#!/usr/bin/env python3
"""Where ``annols report`` spends its memory: peak RSS per stage of ``build_report`` (a benchmark, not a test).

    .venv/bin/python scripts/report_stages.py PULL_FOLDER [--definition FILE] [--out DIR]
    .venv/bin/python scripts/report_stages.py --generate 100000 [--keep DIR]

Runs the default report (every section but the opt-in ``--models``) of a pull folder in
this process, with the functions of each stage wrapped: each stage's own peak RSS (Linux
VmHWM, reset at every stage boundary by writing 5 to /proc/self/clear_refs, so a stage's
figure is the largest RSS seen while it ran) and the RSS when it ended. ``--generate N``
first writes a ratings pull of N tasks x 3 annotators as scripts/bench-report does
(``examples/summeval-ratings.toml``). Prints one line per stage and the whole run's peak.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "scripts")]

CLEAR_REFS = Path("/proc/self/clear_refs")


def _status(field: str) -> int:
    """A /proc/self/status figure in MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) // 1024
    return 0


class Stages:
    """Open stages and their peaks; every boundary folds the peak since the last one into the open stages."""

    def __init__(self) -> None:
        self.start = time.monotonic()
        self.open: list[list[Any]] = []  # [name, peak]
        self.rows: list[tuple[str, float, int, int]] = []  # name, seconds at end, own peak, RSS at end
        self.peak = 0

    def boundary(self) -> None:
        high = _status("VmHWM")
        self.peak = max(self.peak, high)
        for stage in self.open:
            stage[1] = max(stage[1], high)
        with contextlib.suppress(OSError):  # no reset: the figures are then peaks since the start
            CLEAR_REFS.write_text("5")  # resets VmHWM to the current RSS

    def enter(self, name: str) -> None:
        self.boundary()
        self.open.append([name, _status("VmRSS")])

    def leave(self) -> None:
        self.boundary()
        name, peak = self.open.pop()
        depth = "  " * len(self.open)
        self.rows.append((depth + name, time.monotonic() - self.start, peak, _status("VmRSS")))
        print(f"{self.rows[-1][1]:7.1f}s {depth + name:52} peak {peak:5} MB  end {self.rows[-1][3]:5} MB",
              flush=True)  # fmt: skip

    def wrap(self, owner: Any, attribute: str, name: str | None = None) -> None:
        function: Callable[..., Any] = getattr(owner, attribute)

        def wrapped(*args: Any, **kwargs: Any) -> Any:
            self.enter(name or f"{getattr(owner, '__name__', owner)}.{attribute}")
            try:
                return function(*args, **kwargs)
            finally:
                self.leave()

        setattr(owner, attribute, wrapped)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scripts/report_stages.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("pull", nargs="?", type=Path, help="a pull folder (export.json, project.json)")
    parser.add_argument("--definition", type=Path, default=ROOT / "examples" / "summeval-ratings.toml")
    parser.add_argument("--generate", type=int, help="write a ratings pull of N tasks first")
    parser.add_argument("--keep", type=Path, help="with --generate: write the pull here (default a temporary folder)")
    parser.add_argument("--out", type=Path, help="report folder (default a temporary folder)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="annols-stages-") as work:
        pull = args.pull
        if args.generate:
            import bench_report

            pull = args.keep or Path(work) / "pull"
            bench_report.write_pull(pull, "ratings", args.generate)
        if pull is None:
            parser.error("give a pull folder or --generate N")
        stages = Stages()
        stages.enter("imports")
        import annols.report as report
        from annols import protocols
        from annols.analysis.by_style import questions, ratings
        from annols.analysis.leaderboard import conclusions, reliability
        from annols.analysis.table import Judgments
        from annols.study import table as table_lib

        stages.leave()
        for owner, names in ((table_lib, ("read_study",)),
                             (report, ("without", "overview_sections", "style_sections", "paper.write")),
                             (Judgments, ("frame",)),
                             (ratings, ("sections", "judgments", "distribution", "summary", "paired_tests",
                                        "agreement_section")),
                             (conclusions, ("comparisons", "reliability_section")),
                             (reliability, ("split_half", "order_probabilities")),
                             (questions, ("sections",))):  # fmt: skip
            for name in names:
                if name == "paper.write":
                    stages.wrap(report.paper, "write", "report.paper.write")
                else:
                    stages.wrap(owner, name)
        stages.wrap(report, "_write", "report._write (tables, plots, report files)")
        scores = reliability.SCORES["ratings"]  # called through the SCORES table, not by its module name

        def ratings_scores(*a: Any) -> Any:
            stages.enter("reliability.ratings_scores")
            try:
                return scores(*a)
            finally:
                stages.leave()

        reliability.SCORES["ratings"] = ratings_scores
        definition = protocols.load(str(args.definition))
        stages.enter("read and build_report")
        report.build_report(definition, table_lib.read(definition, [pull]), args.out or Path(work) / "report")
        stages.leave()
        print(f"whole run: peak {stages.peak} MB (VmHWM, imports included)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
