"""Identical outputs of different systems through the real server (issue #38, item 1): a study pushed by the
old keys (the texts alone, identical outputs merged into the first system's task) resumes without a duplicate,
adds the outputs it lost as their own tasks, and pull credits each task's judgment to its own system."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from annols.definition import blinding
from annols.formats import generic
from annols.labelstudio.client import LabelStudioClient
from annols.study import manifest, push
from tests.conftest import ROOT, LiveServer
from tests.live_answers import number
from tests.study.test_push_pull import cli, shown_by_task

SOURCE = "Der Zug nach Hamburg fällt heute wegen eines Streiks aus."
SAME = "The train to Hamburg is cancelled today because of a strike."
RECORDS = [
    {"id": "seg-1", "source_text": SOURCE, "translation": SAME, "systems": ["sys-a"]},
    {"id": "seg-1", "source_text": SOURCE, "translation": SAME, "systems": ["sys-b"]},  # the same output
    {"id": "seg-1", "source_text": SOURCE, "translation": "The train falls out.", "systems": ["sys-c"]},
    {"id": "seg-1", "source_text": SOURCE, "translation": SAME, "systems": ["sys-b"]},  # an exact duplicate
]
SCORES = {"sys-a": 91, "sys-b": 77, "sys-c": 20}


def test_identical_outputs_resume_an_old_study_and_count_for_their_own_systems(
    label_studio: LiveServer, client: LabelStudioClient, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    definition = str(ROOT / "examples" / "wmt-da.toml")
    inputs = tmp_path / "da.jsonl"
    inputs.write_text("".join(json.dumps(r) + "\n" for r in RECORDS), encoding="utf-8")
    title = "identical outputs"

    # The push before: every record keyed by its texts alone, sys-b's output merged into sys-a's task.
    with monkeypatch.context() as old:
        old.setattr(generic.Identities, "key", lambda self, name, key, *rest: key)
        old.setattr(push, "IDENTITY", 1)  # its first pass, cached beside the manifest, is of the old keys
        code, out, err = cli(label_studio, "push", definition, str(inputs), "--project", title, cwd=tmp_path)
    assert code == 0, err
    assert out.splitlines()[-1] == "created 2, already present 0, total 2 (2 repeated input record(s) merged into " \
                                   "their first task)"  # fmt: skip
    before = {r["key"]: r for r in manifest.read_rows(manifest.manifest_path(tmp_path / ".annols", title))[1]}

    # Now: the two tasks are found again, sys-b's output gets its own; only the exact duplicate merges.
    code, out, err = cli(label_studio, "push", definition, str(inputs), "--project", title, cwd=tmp_path)
    assert code == 0, err
    assert out.splitlines()[-1] == ("created 1, already present 2, total 3 (1 repeated input record(s) merged into "
                                    "their first task)")  # fmt: skip
    code, out, err = cli(label_studio, "push", definition, str(inputs), "--project", title, cwd=tmp_path)
    assert code == 0, err
    assert out.splitlines()[-1].startswith("created 0, already present 3, total 3")

    # The input in another order would give sys-a's task (the first record of its texts) to sys-b: refused.
    reordered = tmp_path / "reordered.jsonl"
    reordered.write_text("".join(json.dumps(r) + "\n" for r in [RECORDS[1], RECORDS[0], RECORDS[2]]), encoding="utf-8")
    code, out, err = cli(label_studio, "push", definition, str(reordered), "--project", title, cwd=tmp_path)
    assert code != 0 and "Traceback" not in err
    assert "field 'systems': pushed for ['sys-a'], but the input now gives it ['sys-b']: push the input in the " \
           "order (and with the systems) the study was pushed with" in err  # fmt: skip
    assert len(err.strip().splitlines()) == 1

    project = client.find_project(title)
    assert project is not None and project.task_count == 3
    tasks = client.export_tasks(project.id)
    assert len({t["meta"][blinding.META_KEY] for t in tasks}) == 3
    rows = shown_by_task(tmp_path / ".annols", title)
    after = {r["key"]: r for r in rows.values()}
    assert {k: (r["task_id"], r["systems"]) for k, r in before.items()} == {
        k: (after[k]["task_id"], after[k]["systems"]) for k in before}  # the old tasks, credited as before
    assert sorted(tuple(r["systems"]) for r in rows.values()) == [("sys-a",), ("sys-b",), ("sys-c",)]

    user = client.users().get("rater@example.org") or client.create_user("rater@example.org")
    for t in tasks:
        (system,) = rows[t["id"]]["systems"]
        client.create_annotation(t["id"], [number("adequacy_translation", SCORES[system], "translation")],
                                 completed_by=user, lead_time=2.0)  # fmt: skip
    out_dir = tmp_path / "pulled"
    code, out, err = cli(label_studio, "pull", definition, "--project", title, "-o", str(out_dir), "--strict",
                         cwd=tmp_path)  # fmt: skip
    assert code == 0, err
    with open(out_dir / "results.csv", encoding="utf-8", newline="") as f:
        results = list(csv.DictReader(f))
    assert sorted((r["system"], r["answer"]) for r in results) == [(s, str(v)) for s, v in sorted(SCORES.items())]
    assert len({r["task_key"] for r in results}) == 3
