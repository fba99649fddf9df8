"""`annols report --judge J --judge-pool INPUT` offline: a judge that answered items the humans did not adds
"Judge-assisted estimates (PPI++)" to the report of the generated pairwise-aspects study (tests/report/study.py),
with the humans' own win rates and net preferences computed item by item from the plant."""

from __future__ import annotations

import csv
import json
import random
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from annols import protocols
from annols.cli import main
from annols.study import hybrid
from tests.report import study

POOL = 60
ASPECT = "informative"
WORDING = dict(study.ASPECTS)[ASPECT]
PAIR = {"JGR": 1, "bart": -1}  # the difference JGR - bart: +1 a win of JGR, -1 of bart


def judged_pull(tmp_path: Path) -> tuple[study.Generated, Path, Path, Path]:
    """The generated pull, a pool of items beyond it, and a judge on both: (plant, pull, pool, judge)."""
    generated = study.pairwise()
    folder = study.write_pull(tmp_path / "pull", generated.tasks)
    rng = random.Random(11)
    pool = tmp_path / "pool.jsonl"
    records = []
    for n in range(POOL):
        pair = list(study.PAIRWISE_SYSTEMS[:2]) if n % 2 else list(study.PAIRWISE_SYSTEMS[1:])
        records.append({"document": f"Pool document {n}.", "system_1": pair[0], "summary_1": f"P1 {n}",
                        "system_2": pair[1], "summary_2": f"P2 {n}"})  # fmt: skip
    pool.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    lines = []
    for task in hybrid.input_pool(protocols.load("pairwise-aspects", None), [pool]):
        lines.append({"task": task.key, "judge": "dice", "answers": {a: rng.choice("012") for a, _ in study.ASPECTS}})
    for sample, key in generated.keys.items():  # the humans' items: annotator A's answers, as shown
        meant = generated.truth[(sample, study.ANNOTATORS[0])]
        codes = {w: "0" if p == "tie" else study.CODES[meant["shown"].index(p)] for w, p in meant["answers"].items()}
        lines.append({"task": key, "judge": "dice", "answers": {a: codes[w] for a, w in study.ASPECTS if w in codes}})
    judge = tmp_path / "dice.jsonl"
    judge.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return generated, folder, pool, judge


def test_a_judge_beyond_the_humans_gives_ppi_estimates(tmp_path: Path) -> None:
    generated, folder, pool, judge = judged_pull(tmp_path)
    out = tmp_path / "report"
    result = CliRunner().invoke(main, ["report", "pairwise-aspects", str(folder), "-o", str(out), "--bootstrap", "0",
                                       "--judge", str(judge), "--judge-pool", str(pool)])  # fmt: skip
    assert result.exit_code == 0, result.output
    text = (out / "report.md").read_text("utf-8")
    assert f"{POOL} items have the judge's answers only, {study.SAMPLES} the humans'" in text
    with (out / "tables" / "judge_assisted.csv").open(encoding="utf-8", newline="") as f:
        rows = {(r["question"], r["estimate"]): r for r in csv.DictReader(f)}
    row = rows[(WORDING, "JGR - bart")]
    assert row["measure"] == "win rate %"
    # The humans' net preference of JGR over bart, item by item, from the plant.
    nets = []
    for sample in range(study.SAMPLES):
        picks = [generated.truth[(sample, a)] for a in study.annotators_of(sample)]
        if set(picks[0]["shown"]) != set(PAIR):
            continue
        votes = [PAIR.get(p["answers"][WORDING], 0) for p in picks if WORDING in p["answers"]]
        nets.append(100 * float(np.mean(votes)))
    assert int(row["items with humans"]) == len(nets)
    assert int(row["judge-only items"]) == POOL // 2
    assert float(row["humans"]) == pytest.approx(float(np.mean(nets)), abs=1e-4)  # the CSV keeps 4 decimals
    assert float(row["width ratio"]) <= 1 + 1e-9
    assert float(rows[(WORDING, "JGR")]["humans"]) > 0
    assert any(line.startswith("judge:dice on ") for line in text.splitlines())


def test_plan_reads_the_judges_correlation_off_a_pilot(tmp_path: Path) -> None:
    """A pilot pulled with a hidden judge (its judges/): plan takes r from it, the differences' median."""
    _, folder, pool, judge = judged_pull(tmp_path)
    (folder / "judges").mkdir()
    hybrid.store_pool(protocols.load("pairwise-aspects", None), [pool], frozenset(), folder / "judges")
    (folder / "judges" / judge.name).write_text(judge.read_text("utf-8"), encoding="utf-8")
    result = CliRunner().invoke(main, ["plan", "pairwise-aspects", "--pilot", str(folder), "--simulations", "20",
                                       "--items", "25,50", "--annotators", "1"])  # fmt: skip
    assert result.exit_code == 0, result.output
    line = next(x for x in result.output.splitlines() if x.startswith("The pilot's judge judge:dice: r = "))
    r = float(line.split("r = ")[1].split(" ")[0])
    assert 0.3 < r <= 1  # the judge copies annotator A on the humans' items
    used = next(x for x in result.output.splitlines() if x.startswith("With a judge of correlation "))
    assert float(used.split()[5]) == pytest.approx(r, abs=0.005)  # the pilot's r is the plan's
