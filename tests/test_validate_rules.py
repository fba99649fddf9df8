"""`annols validate` flags what the seeds' own code would choke on: QA-Feedback spans off word
boundaries, summary-flaws spans its regex would read back as something else."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from annols import protocols
from tests.test_cli import run

EXAMPLES = Path(protocols.HERE) / "examples"


def export_with(
    tmp_path: Path, protocol: str, result: list[dict[str, Any]], data: dict[str, Any] | None = None
) -> Path:
    task = json.loads((EXAMPLES / f"{protocol}.json").read_text("utf-8"))[0]
    export = [{"id": 1, "data": data or task["data"], "meta": {"annols_key": f"{protocol}:{'0' * 20}"},
               "annotations": [{"id": 9, "completed_by": 3, "result": result, "was_cancelled": False}]}]  # fmt: skip
    path = tmp_path / "export.json"
    path.write_text(json.dumps(export, ensure_ascii=False), encoding="utf-8")
    return path


def labels(name: str, target: str, text: str, start: int, end: int, label: str) -> dict[str, Any]:
    value = {"start": start, "end": end, "text": text[start:end], "labels": [label]}
    return {"id": f"r{start}", "from_name": name, "to_name": target, "type": "labels", "value": value}


@pytest.mark.parametrize(("start", "end"), [(127, 159), (128, 158), (127, 149)])
def test_validate_flags_a_qa_feedback_span_off_word_boundaries(tmp_path: Path, start: int, end: int) -> None:
    data = json.loads((EXAMPLES / "qa-feedback.json").read_text("utf-8"))[0]["data"]
    prediction = data["prediction"]
    assert prediction[127:158] == "Troye Sivan is a famous singer."
    span = labels("errors", "prediction", prediction, start, end, "Irrelevant")
    code, out, _ = run("validate", "qa-feedback", str(export_with(tmp_path, "qa-feedback", [span])))
    assert code == 1 and "span-on-word-boundaries" in out, out
    span = labels("errors", "prediction", prediction, 127, 158, "Irrelevant")
    code, out, _ = run("validate", "qa-feedback", str(export_with(tmp_path, "qa-feedback", [span])))
    assert code == 0, out


@pytest.mark.parametrize(
    ("summary", "marked"),
    [("He went (Label: home) at 9.", "went (Label: home)"), ("It says None identified.", "None identified"),
     ("One line.\nTwo lines.", "line.\nTwo")],
)  # fmt: skip
def test_validate_flags_summary_flaws_spans_that_do_not_parse_back(tmp_path: Path, summary: str, marked: str) -> None:
    start = summary.index(marked)
    answered = {"id": "m", "from_name": "missing_key_information", "to_name": "summary", "type": "choices",
                "value": {"choices": ["No"]}}  # fmt: skip
    result = [labels("flaws", "summary", summary, start, start + len(marked), "Irrelevant"), answered]
    export = export_with(tmp_path, "summary-flaws", result, {"document": "D.", "summary": summary})
    code, out, err = run("validate", "summary-flaws", str(export))
    assert code == 1 and out.split("\t")[2] == "span-parses-back", out
    assert "1 rule violation(s) in 1 annotations" in err
