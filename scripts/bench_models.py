#!/usr/bin/env python3
"""The report's annotator models at scale: wall time and peak memory (a benchmark, not a test).

N items x 3 annotators answer one five-way categorical question (two careful annotators
at 80% and 70%, one at random; the truth drawn with a fixed seed). The judgments table
goes through :func:`annols.analysis.raters.models.sections` as ``annols report`` calls it
(Dawid-Skene and MACE from crowd-kit, bootstrap intervals), in a child process so its
peak RSS is its own.

    scripts/bench-models                      100,000 items
    scripts/bench-models --items 10000
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd  # type: ignore[import-untyped, unused-ignore]

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from annols.analysis.options import AnalysisOptions
from annols.analysis.raters import models
from annols.styles.judgments import TIDY_COLUMNS

LABELS = np.array(["1", "2", "3", "4", "5"], dtype=object)
ACCURACY = (0.8, 0.7, None)


def table(items: int, seed: int = 0) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, 5, items)
    parts = []
    for a, acc in enumerate(ACCURACY):
        given = rng.integers(0, 5, items)
        if acc is not None:
            right = rng.random(items) < acc
            wrong = (truth + rng.integers(1, 5, items)) % 5
            given = np.where(right, truth, wrong)
        frame = pd.DataFrame({column: "" for column in TIDY_COLUMNS}, index=range(items))
        frame["kind"] = "choice"
        frame["question"] = "verdict"
        frame["value"] = LABELS[given]
        frame["uid"] = np.arange(items) * len(ACCURACY) + a
        frame["task_key"] = [f"item{i}" for i in range(items)]
        frame["annotator"] = f"ann{a}"
        parts.append(frame)
    return pd.concat(parts, ignore_index=True), truth


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--bootstrap", type=int, default=1000)
    args = parser.parse_args()
    tidy, truth = table(args.items)
    start = time.perf_counter()
    (section,) = models.sections(tidy, AnalysisOptions(bootstrap=args.bootstrap))
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    items = section.tables[1].frame
    truth_of_unit = LABELS[truth[[int(u.split(models.UNIT_SEP)[0][4:]) for u in items["unit"]]]]
    right = {m: float((items[m].to_numpy() == truth_of_unit).mean()) for m in models.METHODS}
    competence = section.tables[0].frame[["annotator", "Dawid-Skene", "MACE"]].round(3).to_dict("records")
    print(json.dumps({"items": args.items, "annotators": len(ACCURACY), "answers": len(tidy),
                      "seconds": round(seconds, 1), "peak_rss_mb": round(peak), "agree_with_truth": right,
                      "competence": competence}, indent=1))  # fmt: skip


if __name__ == "__main__":
    main()
