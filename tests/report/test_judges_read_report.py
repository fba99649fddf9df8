"""Issue 28's test for judges, through the whole report: on a planted ratings study where a judge ranks
every output exactly as the humans do but one point lower, the report shows a correlation of 1 and a bias
of -1 beside the low agreement figures, the alternative annotator test per question and pooled, and
disagreements named by the input record's id (none within a tolerance of one point)."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest

from annols.definition.blinding import META_KEY, META_SYSTEMS, encode_systems
from annols.report import ReportOptions
from tests import own_study
from tests.judges_study import answers
from tests.report import study
from tests.report.build import build_report
from tests.report.test_style_reports import EMAILS, definition_of

PLANT = own_study.STUDIES["ratings"]
SYSTEMS = ("strong", "mid", "weak")


def truth(item: int) -> dict[str, dict[str, int]]:
    """What every human rates (2..5): the systems differ and so do each system's outputs."""
    return {aspect: {s: 2 + min(3, (3 - k) - (item % (2 + a) == 0) + (k == 0)) for k, s in enumerate(SYSTEMS)}
            for a, aspect in enumerate(("coherence", "fluency"))}  # fmt: skip


def write_study(folder: Path) -> Path:
    tasks, next_id = [], 1000
    for item in range(own_study.ITEMS):
        record = PLANT.record(item)
        systems = list(record.pop("systems"))  # shown in the record's order: the judge answers by position
        task = {"id": 500 + item, "data": {**record, "record": {"item": item, "id": f"rec-{item}"}},
                "meta": {META_KEY: f"ratings:{item:03d}", META_SYSTEMS: encode_systems(tuple(systems))},
                "annotations": []}  # fmt: skip
        for annotator in own_study.ANNOTATORS:
            next_id += 1
            task["annotations"].append({
                "id": next_id, "completed_by": study.USER_IDS[EMAILS[annotator]], "lead_time": 5.0,
                "result": PLANT.result(truth(item), tuple(systems)),
                "created_at": "2024-05-01T10:00:00.000000Z", "was_cancelled": False,
            })  # fmt: skip
        tasks.append(task)
    return study.write_pull(folder / "pull", tasks)


def lower_judge(folder: Path) -> Path:
    path = folder / "low.jsonl"
    lines = []
    for item in range(own_study.ITEMS):
        lower = {a: {s: v - 1 for s, v in by.items()} for a, by in truth(item).items()}
        lines.append(json.dumps({"id": f"rec-{item}", "judge": "low", "answers": answers(PLANT, item, lower)}))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def rows(out: Path, name: str) -> list[dict[str, Any]]:
    with (out / "tables" / f"{name}.csv").open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


@pytest.mark.parametrize("tolerance", [0.0, 1.0])
def test_a_judge_one_point_lower_reads_correlation_one_and_bias_minus_one(tmp_path: Path, tolerance: float) -> None:
    source = write_study(tmp_path)
    out = tmp_path / "report"
    build_report(definition_of("ratings"), [source], out, ReportOptions(bootstrap=100, rating_tolerance=tolerance),
                 judges=[lower_judge(tmp_path)])  # fmt: skip
    found = {r["question"]: r for r in rows(out, "judges_correlation")}
    assert set(found) == {"coherence", "fluency"}
    for r in found.values():
        assert r["judge"] == "judge:low" and int(r["units"]) == own_study.ITEMS * 3
        for column in ("Pearson r", "Spearman rho", "Kendall tau"):
            assert float(r[column]) == pytest.approx(1.0), column
        assert float(r["mean bias"]) == pytest.approx(-1.0)
        # the scale's range is known: the bounded (betting) interval, never the point [-1, -1] a bootstrap of
        # all-equal differences gave
        assert float(r["bias CI low"]) < -1.0 < float(r["bias CI high"])
    markdown = (out / "report.md").read_text("utf-8")
    assert "Judges against the humans' mean: correlations and bias" in markdown
    majority = [r for r in rows(out, "judges_agreement") if r["rater 2"] == "human majority"]
    assert all(float(r["agreement %"]) == 0.0 for r in majority)  # never the same rating: agreement alone says "no"
    assert {r["question"] for r in rows(out, "judges_alt_test_summary")} == {"coherence", "fluency"}
    (pooled,) = rows(out, "judges_alt_test_pooled")
    assert pooled["questions"] == "2" and pooled["pooled"] == "coherence, fluency"
    disagreements = rows(out, "judges_disagreements")
    if tolerance:
        assert disagreements == []
    else:
        assert len(disagreements) == own_study.ITEMS * 3 * 2
        assert {r["record id"] for r in disagreements} == {f"rec-{i}" for i in range(own_study.ITEMS)}
