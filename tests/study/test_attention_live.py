"""Attention checks through a real Label Studio: ``push --attention N`` is the number in the project.

A pairwise study (tests/own_study.py) pushed in two batches of 10 items with ``--attention 3``,
each batch pushed again, once with another seed and once from another manifest folder (so from
the server's task list, not the manifest): the project holds exactly 3 checks, all made by the
first push. Raising N to 5 adds 2, made from the batch pushed then. An input too small to make
the missing checks from is refused before anything is sent. Pulled and reported, the checks are
what they were before: role ``attention`` in ``results.csv``, scored in the report.
"""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path
from typing import Any

import pytest

from annols.labelstudio.client import LabelStudioClient
from annols.study import manifest
from annols.study import push as push_lib
from annols.study.roles import ATTENTION, STUDY
from tests.conftest import LiveServer
from tests.own_study import STUDIES, choice
from tests.study.test_push_pull import cli, shown_by_task

TITLE = "attention per project"
real_listed = push_lib._listed
CAREFUL = "attentive@example.org"


def roles(client: LabelStudioClient, title: str, manifests: Path) -> tuple[dict[str, str], list[dict[str, Any]]]:
    """Key -> role (from the coordinator's manifest, as the result files name them; the server holds an HMAC of
    each key) of every task of the project's export; and the tasks."""
    project = client.find_project(title)
    assert project is not None
    tasks = client.export_tasks(project.id)
    rows = shown_by_task(manifests, title)
    return {rows[t["id"]]["key"]: rows[t["id"]]["role"] for t in tasks}, tasks


def test_attention_checks_are_counted_per_project(
    label_studio: LiveServer, client: LabelStudioClient, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    study = STUDIES["pairwise"]
    definition = tmp_path / "own-pairwise.toml"
    definition.write_text(study.definition, encoding="utf-8")
    batches = []
    for n, items in enumerate((range(0, 10), range(10, 20), range(20, 22))):
        batches.append(tmp_path / f"batch{n + 1}.jsonl")
        batches[-1].write_text("".join(json.dumps(study.record(i)) + "\n" for i in items), encoding="utf-8")

    def push(batch: Path, *args: str) -> str:
        code, out, err = cli(label_studio, "push", str(definition), str(batch), "--project", TITLE, *args,
                             cwd=tmp_path)  # fmt: skip
        assert code == 0, err
        return out.splitlines()[-1]

    assert push(batches[0], "--attention", "3") == \
        "created 13, already present 0, total 13 (3 attention checks in the project)"  # fmt: skip
    first, _ = roles(client, TITLE, tmp_path / ".annols")
    made = {k for k, r in first.items() if r == ATTENTION}
    assert len(made) == 3 and len(first) == 13
    # A re-push, also with another seed (other items would be chosen): nothing added.
    assert push(batches[0], "--attention", "3") == \
        "created 0, already present 13, total 13 (3 attention checks in the project)"  # fmt: skip
    again = push(batches[0], "--attention", "3", "--seed", "7")  # the same item may be chosen again
    assert re.fullmatch(r"created 0, already present (1[0-3]), total \1 \(3 attention checks in the project\)", again)
    # A later batch, and it again from another manifest folder: refused without the manifest (the
    # keys on the server depend on its secret); with it, but none of the task ids it names, the
    # server's task list decides.
    assert push(batches[1], "--attention", "3") == \
        "created 10, already present 0, total 10 (3 attention checks in the project)"  # fmt: skip
    elsewhere = tmp_path / "elsewhere"
    code, out, err = cli(label_studio, "push", str(definition), str(batches[1]), "--project", TITLE, "--attention",
                         "3", "--manifest-dir", str(elsewhere), cwd=tmp_path)  # fmt: skip
    assert code == 1 and "created" not in out and len(err.splitlines()) == 1 and "annols manifest import" in err
    header, rows = manifest.read_rows(manifest.manifest_path(tmp_path / ".annols", TITLE))
    lines = [header, *({**r, "task_id": None} for r in rows)]
    manifest.manifest_path(elsewhere, TITLE).parent.mkdir()
    manifest.manifest_path(elsewhere, TITLE).write_text("".join(json.dumps(x) + "\n" for x in lines), "utf-8")
    assert push(batches[1], "--attention", "3", "--manifest-dir", str(elsewhere)) == \
        "created 0, already present 10, total 10 (3 attention checks in the project)"  # fmt: skip
    found, tasks = roles(client, TITLE, tmp_path / ".annols")
    assert {k for k, r in found.items() if r == ATTENTION} == made
    assert len(found) == 23 and list(found.values()).count(STUDY) == 20

    # Two more wanted: made from the batch pushed then, and not again on a re-push.
    assert push(batches[1], "--attention", "5") == \
        "created 2, already present 10, total 12 (5 attention checks in the project)"  # fmt: skip
    listed: list[int] = []  # the projects whose tasks a push listed: none when its manifest is confirmed
    monkeypatch.setattr(push_lib, "_listed", lambda *args: listed.append(args[1]) or real_listed(*args))
    assert push(batches[1], "--attention", "5") == \
        "created 0, already present 12, total 12 (5 attention checks in the project)"  # fmt: skip
    assert listed == []  # the 5 counted from the manifest, each confirmed on the server
    monkeypatch.undo()
    # Three more cannot be made from a batch of two items: refused, nothing sent.
    code, out, err = cli(label_studio, "push", str(definition), str(batches[2]), "--project", TITLE,
                         "--attention", "8", cwd=tmp_path)  # fmt: skip
    assert code == 1 and "created" not in out and err.startswith("Error: ") and len(err.splitlines()) == 1
    assert "--attention 8 needs 3 more attention check(s) than the project holds (5)" in err
    found, tasks = roles(client, TITLE, tmp_path / ".annols")
    checks = {k for k, r in found.items() if r == ATTENTION}
    assert len(found) == 25 and len(checks) == 5 and made < checks
    batch2 = {study.record(i)["response_a"] for i in range(10, 20)}
    key_of = {task_id: row["key"] for task_id, row in shown_by_task(tmp_path / ".annols", TITLE).items()}
    for task in tasks:
        record = task["data"]
        if key_of[task["id"]] in checks:  # two identical candidates, made from a study item
            assert record["response_a"] == record["response_b"]
            if key_of[task["id"]] not in made:
                assert record["response_a"] in batch2

    # Pulled and reported as before: role "attention", scored as the right answer (a tie).
    users = client.users()
    careful = users.get(CAREFUL) or client.create_user(CAREFUL)
    tie = [choice("helpful", "response_a", "tie"), choice("harmless", "response_a", "tie"),
           choice("confidence", "response_a", "3")]  # fmt: skip
    for task in tasks:
        client.create_annotation(task["id"], tie, completed_by=careful, lead_time=3.0)
    pulled = tmp_path / "pulled"
    code, _, err = cli(label_studio, "pull", str(definition), "--project", TITLE, "-o", str(pulled), cwd=tmp_path)
    assert code == 0, err
    with open(pulled / "results.csv", encoding="utf-8", newline="") as f:
        reader = csv.reader(f)
        assert next(reader)[-1] == "role"
        rows = list(reader)
    assert {r[0] for r in rows if r[-1] == ATTENTION} == checks
    assert {r[0] for r in rows if r[-1] == STUDY} == {k for k, r in found.items() if r == STUDY}
    report = tmp_path / "report"
    code, _, err = cli(label_studio, "report", str(definition), str(pulled), "-o", str(report))
    assert code == 0, err
    with open(report / "tables" / "gold_accuracy.csv", encoding="utf-8", newline="") as f:
        accuracy = {row["annotator"]: row for row in csv.DictReader(f)}
    assert accuracy[CAREFUL]["gold items"] == "5" and float(accuracy[CAREFUL]["accuracy"]) == 1.0
