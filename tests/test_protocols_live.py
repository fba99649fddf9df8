"""Every shipped protocol through the whole loop on the real server: its example input
pushed by `annols push`, pushed again (nothing added), annotated by three users through
the API, pulled by `annols pull` into the tidy table and the protocol's result files."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest

from annols import protocols
from annols.definition import Definition
from annols.labelstudio.client import LabelStudioClient
from annols.protocols import config
from annols.study import demo
from tests.conftest import DATA, LiveServer
from tests.study.test_push_pull import cli, shown_by_task

DEFINITIONS = protocols.all_definitions()
IDS = [config.config_filename(d).removesuffix(".xml") for d in DEFINITIONS]
EXPECTED_FILES = {
    "summary-flaws": ["summary-flaws.txt", "summary-flaws.jsonl"],
    "pairwise-aspects": ["judgments.csv", "index_marker.json"],
    "sentence-errors": ["sentence-errors.csv", "sentence-errors.jsonl"],
    "qa-feedback": ["qa-feedback.jsonl", "qa-feedback.json"],
    "extractive-ranking": ["extractive-ranking.csv", "extractive-ranking.xlsx"],
}


def _matches(task: dict[str, Any], example: dict[str, Any], result: list[dict[str, Any]]) -> bool:
    """The task the example annotation was written for: same text wherever it marks offsets."""
    for item in result:
        if "start" in (item.get("value") or {}) and task["data"].get(item["to_name"]) != example.get(item["to_name"]):
            return False
    return True


@pytest.mark.parametrize("d", DEFINITIONS, ids=IDS)
def test_example_input_push_annotate_pull(
    label_studio: LiveServer, client: LabelStudioClient, d: Definition, tmp_path: Path
) -> None:
    stem = config.config_filename(d).removesuffix(".xml")
    inputs, predictions = demo.example_inputs(d)
    assert inputs, f"no example input for {stem}"
    title = f"live {stem}"
    protocol_args = [d.name, *(["--variant", d.variant] if d.variant else [])]
    push_args = ["push", *protocol_args, *map(str, inputs), "--project", title, "--overlap", "3"]
    push_args += [a for p in predictions for a in ("--predictions", str(p))]

    code, out, err = cli(label_studio, *push_args, cwd=tmp_path)
    assert code == 0, err
    created = int(out.splitlines()[-1].split(",")[0].removeprefix("created "))
    assert created >= 1
    code, out, err = cli(label_studio, *push_args, cwd=tmp_path)
    assert code == 0, err
    assert out.splitlines()[-1].startswith(f"created 0, already present {created}, total {created}")

    project = client.find_project(title)
    assert project is not None and project.task_count == created
    tasks = client.export_tasks(project.id)
    if predictions:
        assert all(t["predictions"] for t in tasks)

    example = json.loads((demo.EXAMPLES / f"{stem}.json").read_text("utf-8"))[0]["data"]
    result = json.loads((DATA / "example_annotations" / f"{stem}.json").read_text("utf-8"))
    task = next(t for t in tasks if _matches(t, example, result))
    emails = [f"{stem}-rater{i}@example.org" for i in range(3)]
    users = client.users()
    for email in emails:
        user_id = users.get(email) or client.create_user(email)
        client.create_annotation(task["id"], result, completed_by=user_id, lead_time=7.5)

    out_dir = tmp_path / "pulled"
    code, out, err = cli(label_studio, "pull", *protocol_args, "--project", title, "-o", str(out_dir), cwd=tmp_path)
    assert code == 0, err
    assert f"Counts match the server: {created} tasks, 3 annotations, 0 skipped." in out
    for name in EXPECTED_FILES[d.name]:
        assert (out_dir / name).stat().st_size > 0, name

    with open(out_dir / "results.csv", encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    per_annotator = sum(
        len(item["value"].get(item["type"]) or [1]) if item["type"] != "relation" else 1 for item in result
    )
    assert len(rows) == 3 * per_annotator
    assert {r["annotator"] for r in rows} == set(emails)
    assert {r["task_id"] for r in rows} == {str(task["id"])}
    assert {r["question"] for r in rows} == {item.get("from_name", "relation") for item in result}
    if d.style in ("pairwise", "ranking"):
        shown = tuple(shown_by_task(tmp_path / ".annols", title)[task["id"]]["systems"])
        assert all(r["systems"] == " | ".join(shown) for r in rows)
    if d.style == "ranking":
        for r in rows:  # each rank cell is about the system shown at that position
            position = "abcd".index(r["question"].rsplit("_", 1)[1])
            assert r["system"] == shown[position]

    with open(out_dir / "violations.csv", encoding="utf-8", newline="") as f:
        violations = list(csv.DictReader(f))
    assert violations == [], violations
