"""The protocols' own tables, read from the judgments table, count what their result files hold.

qa-feedback on the real QA-Feedback dev set (500 records: missing information in linked
runs of sentences, Inconsistent Fact evidence, Repetitive spans linked to the text they
repeat) and summary-flaws on the shipped critic example: the report and ``convert`` of
the same export, the report's numbers counted here from the result file's records.
"""

from __future__ import annotations

import csv
import json
import statistics
from collections import Counter
from pathlib import Path
from typing import Any

from annols import protocols
from annols.formats.qa_feedback import ERROR_LABELS, MISSING_LABELS
from annols.report import ReportOptions
from annols.study.pull import convert
from tests.report import study
from tests.report.build import build_report
from tests.report.test_study_numbers import close, pct
from tests.study.test_pull_parts import DEV, SUMMARY_FLAWS_INPUT, raw_export


def table(out: Path, name: str) -> dict[str, dict[str, str]]:
    """The table's rows by their first column."""
    with (out / "tables" / f"{name}.csv").open(encoding="utf-8", newline="") as f:
        return {row[next(iter(row))]: row for row in csv.DictReader(f)}


def report_and_results(protocol: str, inputs: list[Path], tmp: Path) -> tuple[Path, Path]:
    definition = protocols.load(protocol)
    pull = study.write_pull(tmp / "pull", raw_export(protocol, inputs))
    build_report(definition, [pull], tmp / "report", ReportOptions(bootstrap=0))
    convert(pull / "export.json", definition, tmp / "results", workers=1)
    return tmp / "report", tmp / "results"


def jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_qa_feedback_tables_count_the_result_records(tmp_path: Path) -> None:
    out, results = report_and_results("qa-feedback", [DEV], tmp_path)
    feedback = [r["feedback"] for r in jsonl(results / "qa-feedback.jsonl")]
    n = len(feedback)
    assert n == 500
    runs = sum(1 for f in feedback for m in f["missing-info"]
               for a, b in zip(m["sentence_id"], m["sentence_id"][1:], strict=False) if b != a + 1)  # fmt: skip
    assert runs, "the data has no missing-information entry in several runs: the grouping goes untested"

    errors = table(out, "qa_error_types")
    for kind in [*ERROR_LABELS, "any error"]:
        mine = [[e for e in f["errors"] if kind in ("any error", e["error type"])] for f in feedback]
        assert int(errors[kind]["spans"]) == sum(map(len, mine)), kind
        assert int(errors[kind]["responses"]) == sum(1 for m in mine if m), kind
    missing = table(out, "qa_missing_info")
    sizes = table(out, "qa_evidence_sizes")
    for kind in MISSING_LABELS:
        entries = [len(m["sentence_id"]) for f in feedback for m in f["missing-info"] if m["error type"] == kind]
        assert (int(missing[kind]["entries"]), int(missing[kind]["sentences"])) == (len(entries), sum(entries))
        has = sum(1 for f in feedback if any(m["error type"] == kind for m in f["missing-info"]))
        assert int(missing[kind]["responses"]) == has
        assert int(sizes[kind]["entries"]) == len(entries) and int(sizes[kind]["max sentences"]) == max(entries)
        close(sizes[kind]["mean sentences"], statistics.mean(entries))
    cited = [len(json.loads(e["explanation"])["sentence_id"]) if e["explanation"] else 0
             for f in feedback for e in f["errors"] if e["error type"] == "Wrong-Grounding"]  # fmt: skip
    evidence = sizes["Wrong-Grounding evidence"]
    assert (int(evidence["entries"]), int(evidence["without evidence"])) == (len(cited), cited.count(0))
    close(evidence["mean sentences"], statistics.mean(cited))
    assert int(evidence["max sentences"]) == max(cited)
    responses = table(out, "qa_responses")
    assert int(responses["with a corrected prediction"]["responses"]) == sum(bool(f["corrected-prediction"])
                                                                               for f in feedback)  # fmt: skip
    assert int(responses["with missing information"]["responses"]) == sum(bool(f["missing-info"]) for f in feedback)


def test_summary_flaws_tables_count_the_result_records(tmp_path: Path) -> None:
    out, results = report_and_results("summary-flaws", [SUMMARY_FLAWS_INPUT], tmp_path)
    lines = jsonl(results / "summary-flaws.jsonl")
    n = len(lines)
    labels = Counter(s["label"] for line in lines for s in line["spans"])
    assert n and len(labels) >= 2
    rows = table(out, "flaws_labels")
    for label in ("Non-factual", "Irrelevant", "Incoherent"):
        assert int(rows[label]["spans"]) == labels[label], label
        has = sum(1 for line in lines if any(s["label"] == label for s in line["spans"]))
        assert int(rows[label]["summaries"]) == has
        close(rows[label]["summaries %"], pct(has, n), "summaries %")
    overview = table(out, "flaws_overview")
    assert int(overview["summaries judged"]["count"]) == n
    assert int(overview["with no flaw span"]["count"]) == sum(1 for line in lines if not line["spans"])
    assert int(overview["'None identified' ticked"]["count"]) == sum(line["none_identified"] for line in lines)
    answers = [line["missing_key_information"] for line in lines if line["missing_key_information"]]
    assert int(overview["missing key information answered"]["count"]) == len(answers)
    assert int(overview["missing key information: Yes"]["count"]) == answers.count("Yes")
