"""Small things a user trips on: results.csv in a stable order, the report's lines where they apply."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from annols.study import manifest
from tests.test_cli import run
from tests.test_protocol_mismatch import summary_flaws_export


def test_results_csv_rows_are_in_a_stable_order(tmp_path: Path) -> None:
    export = summary_flaws_export(tmp_path)
    tasks = json.loads(export.read_text("utf-8"))
    first = tasks[0]["annotations"][0]
    first["completed_by"] = 2
    second = {**first, "id": 1, "completed_by": 1, "result": list(reversed(first["result"]))}
    tasks[0]["annotations"] = [first, second]  # the later annotator first, its items in another order
    export.write_text(json.dumps(tasks, ensure_ascii=False), encoding="utf-8")
    (tmp_path / "annotators.json").write_text('{"1": "ann@x.org", "2": "ben@x.org"}', encoding="utf-8")
    code, _, err = run("convert", "summary-flaws", str(export), "-o", str(tmp_path / "out"))
    assert code == 0, err
    with open(tmp_path / "out" / "results.csv", encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    keys = [(r["task_key"], r["annotator"], int(r["annotation_id"]), r["question"], r["region"]) for r in rows]
    by_task: dict[str, list[tuple[str, int, str, str]]] = {}
    for key in keys:
        by_task.setdefault(key[0], []).append(key[1:])
    assert all(v == sorted(v) for v in by_task.values())
    assert [k[1] for k in keys[:2]] == ["ann@x.org", "ann@x.org"] and len(by_task) == len(tasks)


def test_report_leaves_out_what_does_not_apply(tmp_path: Path) -> None:
    export = summary_flaws_export(tmp_path)
    items = len(json.loads(export.read_text("utf-8")))
    code, _, err = run("report", "summary-flaws", str(export), "-o", str(tmp_path / "report"), "--overlap", "3")
    assert code == 0, err
    md = (tmp_path / "report" / "report.md").read_text("utf-8")
    assert "Bootstrap:" not in md  # summary-flaws tables have no bootstrap intervals
    assert f"All {items} items have fewer annotators than the overlap asked for (3); tables/under\\_annotated" in md
    assert "Items with fewer annotators than asked" not in md  # one line, not a table of every item
    with open(tmp_path / "report" / "tables" / "under_annotated.csv", encoding="utf-8") as f:
        assert len(list(csv.DictReader(f))) == items


def test_tasks_prints_the_warnings_on_the_input_too(tmp_path: Path) -> None:
    from .formats.seed001_fixture import TYPOS, add_typos, make_seed001_study

    study = make_seed001_study(tmp_path / "human_evaluation", samples=8, seed=2)
    add_typos(study)
    code, out, err = run("tasks", "pairwise-aspects", str(study.root), "-o", str(tmp_path / "tasks.json"),
                         "--manifest-dir", str(tmp_path / "m"))  # fmt: skip
    assert code == 0, err
    assert err.count("warning: ") == len(TYPOS)
    assert out.splitlines()[-1].startswith(f"{len(TYPOS)} input warning(s), listed above")
    tasks = json.loads((tmp_path / "tasks.json").read_text("utf-8"))
    assert {tuple(t["meta"]) for t in tasks} == {("annols_key",)}  # they name input files and lines: not on the server
    rows = manifest.read_rows(tmp_path / "m" / "tasks.manifest.jsonl")[1]
    assert sum(len(r.get("warnings", [])) for r in rows) == len(TYPOS)
