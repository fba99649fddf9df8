#!/usr/bin/env python3
"""annols' per-system MQM scores on a whole WMT MQM release file, beside the paper's rule computed apart.

    .venv/bin/python scripts/mqm_release_scores.py <release>/ted/ende/mqm_ted_ende.tsv [definition.toml]

The release: github.com/google/wmt-mqm-human-evaluation (Apache-2.0). annols' path is the one
``push --with-annotations`` and ``report`` take, without a server: the file read by the generic format
(:mod:`annols.formats.mqm_tsv`) against examples/mqm.toml, each judgment decoded by the spans style, the
judgments table made as the report makes it (its items by :func:`annols.analysis.asked.unit_of`), and the
report's "Scores and spans per system" table (:func:`annols.analysis.asked.side_by_side`). The paper's rule is
computed from the TSV with pandas alone: per segment (system, doc, seg_id) the mean over its raters of the sum of
its errors' weights (Major 5, Minor 1, Minor Fluency/Punctuation 0.1, Non-translation 25), then the mean over
segments. Prints one line per system, best first, both to three decimals, and the largest difference.
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT)]

import pandas as pd

from annols.analysis import asked
from annols.formats import format_for
from annols.protocols import load_definition
from annols.styles import decode
from annols.styles.answers import ExportedAnnotation, ExportedTask
from annols.styles.judgments import TIDY_COLUMNS, tidy

MQM = ROOT / "examples" / "mqm.toml"
# The release's README (commit 7fadea2), "TED talks", "English to German": expert-based MQM as printed (the
# reference is "ref.A" there, "ref" in the TSV).
PUBLISHED = {
    "mqm_ted_ende.tsv": {
        "ref": "0.91", "Facebook-AI": "1.06", "Online-W": "1.12", "VolcTrans-AT": "1.24", "metricsystem3": "1.44",
        "VolcTrans-GLAT": "1.49", "HuaweiTSC": "1.50", "metricsystem1": "1.63", "metricsystem2": "1.69",
        "metricsystem5": "1.72", "UEdin": "1.77", "metricsystem4": "1.78", "eTranslation": "1.96", "Nemo": "2.14",
    },
}


def paper(path: Path) -> pd.Series:
    rows = pd.read_csv(path, sep="\t", quoting=csv.QUOTE_NONE, dtype=str, keep_default_na=False)

    def weight(category: str, severity: str) -> float:
        if severity.lower() == "no-error" or category.lower() == "no-error":
            return 0.0
        if category.startswith("Non-translation"):
            return 25.0
        if severity == "Major":
            return 5.0
        return 0.1 if category == "Fluency/Punctuation" else 1.0

    rows["weight"] = [weight(c, s) for c, s in zip(rows["category"], rows["severity"], strict=True)]
    rated = rows.groupby(["system", "doc", "seg_id", "rater"])["weight"].sum()
    return rated.groupby(["system", "doc", "seg_id"]).mean().groupby("system").mean()


def annols_scores(path: Path, definition: Path = MQM) -> tuple[pd.Series, int, int]:
    d = load_definition(definition)
    rows, judged = [], []
    tasks = warnings = 0
    for task in format_for(d).read([path], d):
        tasks += 1
        warnings += len(task.warnings)
        exported = ExportedTask(id=tasks, key=task.key, data=task.data, systems=task.systems, annotations=())
        unit = asked.unit_of(d.spec, task.data, task.key)
        for a in task.annotations:
            uid = len(judged)
            judged.append((uid, task.key, a.annotator, task.systems[0], unit))
            annotation = ExportedAnnotation(id=uid, annotator=a.annotator, result=a.result)
            rows += [[uid, task.key, a.annotator, *row, unit] for row in tidy(decode(d, exported, annotation))]
    frame = pd.DataFrame(rows, columns=["uid", "task_key", "annotator", *TIDY_COLUMNS, asked.UNIT])
    judged_frame = pd.DataFrame(judged, columns=["uid", "task_key", "annotator", "system", asked.UNIT])
    spans = asked.span_rows(frame, d.spec)
    scores = asked.error_scores(spans, judged_frame, None)
    table = asked.side_by_side(frame, d.spec, scores, spans).set_index("system")
    return table[f"mean {asked.SCORE}"], tasks, warnings


def main(path: Path, definition: Path = MQM) -> None:
    mine, tasks, warnings = annols_scores(path, definition)
    rule = paper(path)
    published = PUBLISHED.get(path.name, {})
    print(f"{path.name}: {tasks} tasks, {warnings} read warnings")
    print(f"{'system':<16} {'annols':>7} {'paper rule':>10} {'published':>9} {'annols, printed so':>18}")
    agree = 0
    for system in rule.sort_values().index:
        printed = published.get(system, "")
        decimals = len(printed.split(".")[1]) if "." in printed else 2
        shown = f"{mine.get(system, float('nan')):.{decimals}f}"
        agree += shown == printed
        print(f"{system:<16} {mine.get(system, float('nan')):7.4f} {rule[system]:10.4f} {printed:>9} {shown:>18}")
    print(f"largest difference from the paper's rule: {(mine.reindex(rule.index) - rule).abs().max():.2e}")
    if published:
        print(f"equal to the published table as printed: {agree} of {len(published)} systems")


if __name__ == "__main__":
    main(Path(sys.argv[1]), *(Path(a) for a in sys.argv[2:3]))
