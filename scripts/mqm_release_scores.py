#!/usr/bin/env python3
"""annols' per-system MQM scores on a whole WMT MQM release file, beside the paper's rule computed apart.

    .venv/bin/python scripts/mqm_release_scores.py <release>/ted/ende/mqm_ted_ende.tsv [definition.toml]

The release: github.com/google/wmt-mqm-human-evaluation (Apache-2.0). annols' path is the one
``push --with-annotations`` and ``report`` take, without a server: the file read by the generic format
(:mod:`annols.formats.mqm_tsv`) against examples/mqm.toml, each judgment decoded by the spans style, the
judgments table made as the report makes it (its items by :func:`annols.analysis.by_style.asked.unit_of`), and the
report's "Scores and spans per system" table (:func:`annols.analysis.by_style.asked.side_by_side`). The paper's rule is
computed from the TSV with pandas alone: per segment (system, doc, seg_id) the mean over its raters of the sum of
its errors' weights (Major 5, Minor 1, Minor Fluency/Punctuation 0.1, Non-translation 25), then the mean over
segments. Where the release's own per-segment score file lies beside the TSV (``<name>.avg_seg_scores.tsv``: the
system, a tab, the negated score and the seg_id separated by a space, "None" for a segment nobody rated), its mean
over the rated segments per system, sign turned, is shown too. Prints one line per system, best first, to four
decimals, the published figure and annols' figure printed to the published precision, and the largest differences.
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT)]

import pandas as pd

from annols.analysis.by_style import asked
from annols.analysis.protocol_tables import imported
from annols.formats import format_for
from annols.protocols import load_definition

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
    scored = imported.error_scores(d, format_for(d).read([path], d))
    return scored.table[f"mean {asked.SCORE}"], scored.tasks, scored.warnings


def release_file(path: Path) -> pd.Series | None:
    """The release's own per-segment scores beside ``path``, per system: the mean over rated segments, sign turned
    (its reference "ref-A" named "ref" as in the TSV); None without the file."""
    scores = path.with_name(path.name.removesuffix(".tsv") + ".avg_seg_scores.tsv")
    if not scores.is_file():
        return None
    rows = [line.split("\t") for line in scores.read_text(encoding="utf-8").splitlines()[1:]]
    cells = pd.DataFrame([(system, *rest.split(" ")) for system, rest in rows], columns=["system", "score", "seg_id"])
    cells = cells[cells["score"] != "None"]
    means = -cells["score"].astype(float).groupby(cells["system"]).mean()
    return means.rename(index={"ref-A": "ref"})


def main(path: Path, definition: Path = MQM) -> None:
    mine, tasks, warnings = annols_scores(path, definition)
    rule = paper(path)
    own = release_file(path)
    published = PUBLISHED.get(path.name, {})
    print(f"{path.name}: {tasks} tasks, {warnings} read warnings")
    extra = f" {'release file':>12}" if own is not None else ""
    print(f"{'system':<16} {'annols':>7} {'paper rule':>10}{extra} {'published':>9} {'annols, printed so':>18}")
    agree = 0
    for system in rule.sort_values().index:
        printed = published.get(system, "")
        decimals = len(printed.split(".")[1]) if "." in printed else 2
        shown = f"{mine.get(system, float('nan')):.{decimals}f}"
        agree += shown == printed
        theirs = f" {own.get(system, float('nan')):12.4f}" if own is not None else ""
        print(f"{system:<16} {mine.get(system, float('nan')):7.4f} {rule[system]:10.4f}{theirs} {printed:>9} "
              f"{shown:>18}")  # fmt: skip
    print(f"largest difference from the paper's rule: {(mine.reindex(rule.index) - rule).abs().max():.2e}")
    if own is not None:
        print(f"largest difference from the release's score file: {(mine.reindex(own.index) - own).abs().max():.2e}"
              f" ({len(own)} systems)")  # fmt: skip
    if published:
        print(f"equal to the published table as printed: {agree} of {len(published)} systems")


if __name__ == "__main__":
    main(Path(sys.argv[1]), *(Path(a) for a in sys.argv[2:3]))
