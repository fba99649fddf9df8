"""`report --judge` on each shipped protocol: a judge
answering what annotator A answered is set beside the humans; the protocol's own tables do
not change, and where the protocol does not blind, the judge agrees with A on everything."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest

from annols.definition.blinding import META_KEY
from annols.formats.answers import controls
from annols.protocols import load
from annols.report import ReportOptions
from tests.report import study
from tests.report.build import build_report

PROTOCOLS = [
    ("pairwise-aspects", study.pairwise, None),
    ("extractive-ranking", study.ranking, None),
    ("qa-feedback", study.qa_feedback, None),
    ("summary-flaws", study.summary_flaws, None),
    ("sentence-errors", study.sentence_errors, "abstract"),
]
BLINDED = {"pairwise-aspects", "extractive-ranking"}


def judge_line(key: str, result: list[dict[str, Any]], known: dict[str, Any], spans: bool) -> dict[str, Any]:
    """A's result as a judge line: choices by code, spans by offsets (none found: []), text; per-region
    answers and paragraph regions left out."""
    answers: dict[str, Any] = {"spans": []} if spans else {}
    for item in result:
        name, value = item["from_name"], item["value"]
        control = known.get(name)
        if control is None or control.per_region:
            continue
        if item["type"] == "choices":
            answers[name] = value["choices"] if len(value["choices"]) > 1 else value["choices"][0]
        elif item["type"] == "labels":
            span = {"label": value["labels"][0], "start": value["start"], "end": value["end"], "control": name}
            answers.setdefault("spans", []).append(span)
        elif item["type"] == "textarea":
            answers[name] = value["text"][0]
        elif item["type"] == "number":
            answers[name] = value["number"]
    return {"task": key, "judge": "like-a", "answers": answers}


@pytest.mark.parametrize(("protocol", "generate", "variant"), PROTOCOLS)
def test_a_judge_beside_each_protocols_study(protocol: str, generate: Any, variant: str | None,
                                             tmp_path: Path) -> None:  # fmt: skip
    d = load(protocol, variant)
    tasks = generate().tasks
    source = study.write_pull(tmp_path / "pull", tasks)
    known = controls(d)
    lines = []
    for task in tasks:
        mine = [a for a in task["annotations"] if a["completed_by"] == 1 and not a["was_cancelled"]]
        if mine:  # the later of two submissions counts
            latest = max(mine, key=lambda a: a["created_at"])
            lines.append(judge_line(task["meta"][META_KEY], latest["result"], known, d.style == "spans"))
    judge = tmp_path / "like-a.jsonl"
    judge.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    build_report(d, [source], tmp_path / "plain", ReportOptions(bootstrap=0))
    build_report(d, [source], tmp_path / "judged", ReportOptions(bootstrap=0), judges=[judge])
    plain = sorted(p.name for p in (tmp_path / "plain" / "tables").iterdir())
    judged = sorted(p.name for p in (tmp_path / "judged" / "tables").iterdir())
    assert [n for n in judged if not n.startswith("judges_")] == plain
    assert "judges_agreement.csv" in judged and "judges_alt_test_summary.csv" in judged
    for name in plain:
        assert (tmp_path / "judged" / "tables" / name).read_bytes() == (
            tmp_path / "plain" / "tables" / name
        ).read_bytes(), name
    with (tmp_path / "judged" / "tables" / "judges_agreement.csv").open(encoding="utf-8") as f:
        rows = [r for r in csv.DictReader(f) if r["rater 1"] == "judge:like-a"]
    with_a = [r for r in rows if r["rater 2"] == study.ANNOTATORS[0]]
    assert with_a or d.style == "spans"  # qa-feedback asks no task-level question: its spans are below
    if protocol not in BLINDED:
        assert all(float(r["agreement %"]) == 100.0 for r in with_a), with_a
    if protocol == "summary-flaws":  # qa-feedback's missing-information regions (paragraphs) are no judge answer
        with (tmp_path / "judged" / "tables" / "judges_span_f1.csv").open(encoding="utf-8") as f:
            f1 = {r["rater 2"]: r["exact F1"] for r in csv.DictReader(f) if r["rater 1"] == "judge:like-a"}
        assert float(f1[study.ANNOTATORS[0]]) == 1.0
