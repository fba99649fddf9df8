#!/usr/bin/env python3
"""The variance components behind ``annols plan``'s ratings defaults, from a real study: SQuALITY's human evaluation.

SQuALITY (Wang et al., "SQuALITY: Building a Long-Document Summarization Dataset the Hard Way", EMNLP 2022):
100 question-focused summaries (20 stories x 5 questions) by three systems (``bart``, ``bart-dpr``, ``human``),
each rated 0 to 100 on correctness, coverage ("selection") and overall by 3 of 4 expert reviewers.
``tests/data/squality_ratings/ratings.csv`` holds its ratings (cut by ``--cut`` from the release's
``data/human-eval/all-responses.jsonl``).

For every pair of systems and every property, the paired difference (B minus A, per item and reviewer) is fitted by
:func:`annols.analysis.planning.plan.fitted_components` (REML MixedLM, crossed item and annotator variance components),
as ``plan --pilot`` fits a pilot. Printed per fit: items, reviewers, mean difference, item sd, annotator sd and residual
sd in points of the 0-100 scale, and the medians over the fits as shares of the scale's range: the defaults.

    python scripts/plan_defaults.py                     # the table (Markdown)
    python scripts/plan_defaults.py --write             # ... written into docs/statistics.md between its markers
    python scripts/plan_defaults.py --cut all-responses.jsonl tests/data/squality_ratings/ratings.csv
"""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

import pandas as pd  # type: ignore[import-untyped, unused-ignore]

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

import _docs

from annols.analysis.planning import plan

START, END = "<!-- plan defaults: start -->", "<!-- plan defaults: end -->"

FIXTURE = ROOT / "tests" / "data" / "squality_ratings" / "ratings.csv"
PROPERTIES = ("correctness", "selection", "overall")
RANGE = 100.0  # the 0-100 scale


def cut(source: Path, out: Path) -> None:
    rows = []
    for line in source.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        for question, systems in record["questions"].items():
            for system, response in systems.items():
                for review in response.get("reviews", []):
                    rows.append([record["passage-id"], question, system, review["worker_id"],
                                 *(review[f"{p}-rating"] for p in PROPERTIES)])  # fmt: skip
    with out.open("w", encoding="utf-8", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["passage", "question", "system", "reviewer", *PROPERTIES])
        writer.writerows(rows)


def fits(path: Path = FIXTURE) -> pd.DataFrame:
    """One row per (property, pair of systems): the fit of the paired difference, in points of 0-100."""
    frame = pd.read_csv(path, dtype={"passage": str, "question": str, "reviewer": str})
    frame["item"] = frame["passage"] + ":" + frame["question"]
    systems = sorted(frame["system"].unique())
    out = []
    for prop in PROPERTIES:
        wide = frame.pivot_table(index=["item", "reviewer"], columns="system", values=prop, aggfunc="mean")
        for i, a in enumerate(systems):
            for b in systems[i + 1 :]:
                d = (wide[b] - wide[a]).dropna()
                table = pd.DataFrame({"y": d.to_numpy(), "item": d.index.get_level_values(0),
                                      "annotator": d.index.get_level_values(1)})  # fmt: skip
                item_sd, annotator_sd, residual_sd = plan.fitted_components(table)
                out.append({"property": prop, "pair": f"{b} - {a}", "items": table["item"].nunique(),
                            "reviewers": table["annotator"].nunique(), "differences": len(table),
                            "mean": float(d.mean()), "item_sd": item_sd, "annotator_sd": annotator_sd,
                            "residual_sd": residual_sd})  # fmt: skip
    return pd.DataFrame(out)


def shares(table: pd.DataFrame) -> dict[str, float]:
    """The medians over the fits as shares of the scale's range: what plan's defaults are."""
    return {k: round(float(table[k].median()) / RANGE, 3) for k in ("item_sd", "annotator_sd", "residual_sd")}


def markdown(table: pd.DataFrame) -> str:
    lines = ["| property | difference | items | reviewers | mean | item sd | annotator sd | residual sd |",
             "|---|---|---:|---:|---:|---:|---:|---:|"]  # fmt: skip
    for r in table.itertuples(index=False):
        lines.append(f"| {r.property} | {r.pair} | {r.items} | {r.reviewers} | {r.mean:.1f} | {r.item_sd:.1f} | "
                     f"{r.annotator_sd:.1f} | {r.residual_sd:.1f} |")  # fmt: skip
    s = shares(table)
    lines.append(f"| median, share of the range | | | | | {s['item_sd']:.3f} | {s['annotator_sd']:.3f} | "
                 f"{s['residual_sd']:.3f} |")  # fmt: skip
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    if argv[:1] == ["--cut"]:
        cut(Path(argv[1]), Path(argv[2]))
        return 0
    text = markdown(fits())
    if argv[:1] == ["--write"]:
        _docs.splice(text, START, END)
    else:
        print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
