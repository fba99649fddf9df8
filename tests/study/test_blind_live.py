"""Blind and tamper-evident on a real Label Studio, as an ordinary annotator with their own credentials.

A pairwise study pushed with gold items and attention checks (through the CLI, as a
coordinator does). Two annotators, made through the invite link as ``annols users add``
makes them, log in through the login form and use their own API tokens:

- no answer of the endpoints a curious annotator reads (task detail, the label stream's
  next task, the Data Manager's task list, the export) holds a system name, not even after
  base64 or JSON decoding; study, gold and attention tasks carry meta of the same keys and
  value lengths;
- a clean pull passes ``--strict``; then one annotator edits the other's annotation, posts
  one in the other's name, writes reversed systems into a task's meta, re-tags a gold item,
  deletes an annotation, deletes a task and adds one. ``annols pull`` names each by task
  (and annotation), in findings.csv too, and the report lists them; ``--strict`` fails with
  one line per finding and leaves the folder as it was; results.csv keeps the manifest's
  systems and roles.
"""

from __future__ import annotations

import csv
import json
import re
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from annols.definition import blinding
from annols.labelstudio import users
from annols.labelstudio.client import LabelStudioClient
from annols.study import manifest, roles
from tests import live_answers
from tests.conftest import LiveServer
from tests.definition.test_definition import MINIMAL
from tests.labelstudio.test_incremental import vote
from tests.study.test_push_pull import cli

SYSTEMS = ("sysalpha", "sysbeta")
TITLE = "blind and tamper-evident"


def _assert_blind(response: httpx.Response) -> Any:
    assert response.status_code == 200, response.text[:300]
    body = response.json()
    leaks = live_answers.leaks(response.text, SYSTEMS) + [leak for s in live_answers.strings(body)
                                                          for leak in live_answers.leaks(s, SYSTEMS)]  # fmt: skip
    assert leaks == [], (str(response.url), leaks)
    return body


@pytest.fixture(scope="module")
def pushed(label_studio: LiveServer, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The study's folder: pushed from it (its .annols holds the manifest), pulled from it."""
    folder = tmp_path_factory.mktemp("blind")
    tie = '[[answers]]\ncode = "2"\n\n[[answers]]\ncode = "0"'
    (folder / "headlines.toml").write_text(MINIMAL.replace('[[answers]]\ncode = "2"', tie), encoding="utf-8")
    records = [{"headline_1": f"First headline {i}", "headline_2": f"Second headline {i}", "systems": list(SYSTEMS),
                "id": i} for i in range(8)]  # fmt: skip
    (folder / "study.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    gold = [{"headline_1": f"Gold one {i}", "headline_2": f"Gold two {i}", "systems": list(SYSTEMS), "id": 50 + i,
             "result": vote("1")} for i in range(2)]  # fmt: skip
    (folder / "gold.jsonl").write_text("".join(json.dumps(r) + "\n" for r in gold), encoding="utf-8")
    push = ["push", "headlines.toml", "study.jsonl", "--gold", "gold.jsonl", "--attention", "2", "--project", TITLE]
    code, out, err = cli(label_studio, *push, "--seed", "3", "--overlap", "2", cwd=folder)
    assert code == 0, err
    assert out.splitlines()[-1] == "created 12, already present 0, total 12 (2 attention checks in the project)"
    return folder


def _annotator(label_studio: LiveServer, client: LabelStudioClient, email: str) -> tuple[int, httpx.Client]:
    password = secrets.token_urlsafe(12)
    added = list(users.add_accounts(client, [email], [password]))
    assert added[0].can_log_in
    with users.logged_in(label_studio.url, email, password) as session:
        token = session.get("api/current-user/token").json()["token"]
    api = httpx.Client(base_url=label_studio.url, headers={"Authorization": f"Token {token}"}, timeout=120)
    me = api.get("/api/current-user/whoami").json()
    assert me["email"] == email
    return int(me["id"]), api


@pytest.fixture(scope="module")
def annotators(label_studio: LiveServer, client: LabelStudioClient) -> Iterator[list[tuple[int, httpx.Client]]]:
    made = [_annotator(label_studio, client, f"blind-{n}@example.org") for n in (1, 2)]
    yield made
    for _, api in made:
        api.close()


def _manifest_rows(folder: Path) -> dict[int, dict[str, Any]]:
    rows = manifest.read_rows(manifest.manifest_path(folder / ".annols", TITLE))[1]
    return {int(r["task_id"]): r for r in rows}


def test_nothing_an_annotator_reads_names_a_system(
    pushed: Path, client: LabelStudioClient, annotators: list[tuple[int, httpx.Client]]
) -> None:
    project = client.find_project(TITLE)
    assert project is not None
    rows = _manifest_rows(pushed)
    assert sorted(r["role"] for r in rows.values()).count(roles.STUDY) == 8
    assert {r["role"] for r in rows.values()} == {roles.STUDY, roles.GOLD, roles.ATTENTION}
    _, api = annotators[0]
    for task_id in rows:
        _assert_blind(api.get(f"/api/tasks/{task_id}/"))
    _assert_blind(api.get(f"/api/projects/{project.id}/next/"))
    listed = _assert_blind(api.get("/api/tasks/", params={"project": project.id, "fields": "all", "page_size": 100}))
    assert len(listed["tasks"]) == 12
    everything = {"exportType": "JSON", "download_all_tasks": "true"}
    exported = _assert_blind(api.get(f"/api/projects/{project.id}/export", params=everything))
    assert len(exported) == 12
    metas = {rows[t["id"]]["role"]: set() for t in exported}
    for t in exported:
        metas[rows[t["id"]]["role"]].add(tuple((k, len(json.dumps(v))) for k, v in sorted(t["meta"].items())))
    assert len({shape for shapes in metas.values() for shape in shapes}) == 1, metas  # one shape, every role


def _post(api: httpx.Client, task_id: int, choice: str, **extra: Any) -> int:
    response = api.post(f"/api/tasks/{task_id}/annotations/", json={"result": vote(choice), **extra})
    assert response.status_code == 201, response.text[:300]
    return int(response.json()["id"])


def _findings(folder: Path) -> list[dict[str, str]]:
    with open(folder / "findings.csv", encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def test_pull_names_every_tampering_and_keeps_the_manifests_truth(
    label_studio: LiveServer, pushed: Path, client: LabelStudioClient, annotators: list[tuple[int, httpx.Client]]
) -> None:
    project = client.find_project(TITLE)
    assert project is not None
    rows = _manifest_rows(pushed)
    study = [t for t, r in sorted(rows.items()) if r["role"] == roles.STUDY]
    (gold, *_) = [t for t, r in sorted(rows.items()) if r["role"] == roles.GOLD]
    (one_id, one), (_, two) = annotators
    edited = _post(one, study[0], "1")
    gone = _post(one, study[3], "1")
    _post(one, study[2], "1")
    _post(two, study[4], "2")

    pulled = pushed / "pulled"
    code, out, err = cli(label_studio, "pull", "headlines.toml", "--project", TITLE, "-o", str(pulled), "--strict",
                         cwd=pushed)  # fmt: skip
    assert code == 0, err
    assert _findings(pulled) == [] and "warning" not in err

    # One annotator, with their own token, does what the server lets any account do.
    assert two.patch(f"/api/annotations/{edited}/", json={"result": vote("2")}).status_code == 200
    forged = _post(two, study[1], "2", completed_by=one_id)
    reversed_meta = {"annols_key": manifest.server_key(rows[study[2]]),
                     "annols_systems": blinding.encode_systems(tuple(rows[study[2]]["systems"])[::-1])}  # fmt: skip
    assert two.patch(f"/api/tasks/{study[2]}/", json={"meta": reversed_meta}).status_code == 200
    retagged = {"annols_key": manifest.server_key(rows[gold]),
                roles.META_TAG: roles.encode_tag(manifest.server_key(rows[gold]), roles.STUDY)}
    assert two.patch(f"/api/tasks/{gold}/", json={"meta": retagged}).status_code == 200
    assert two.delete(f"/api/annotations/{gone}/").status_code == 204
    assert two.delete(f"/api/tasks/{study[5]}/").status_code == 204
    task = {"data": {"headline_1": "x", "headline_2": "y"}, "meta": {"annols_key": "added"}}
    imported = two.post(f"/api/projects/{project.id}/import", params={"return_task_ids": "true"}, json=[task])
    assert imported.status_code == 201, imported.text[:300]
    (added,) = imported.json()["task_ids"]

    # Into a new folder (no earlier pull there to miss an annotation): six findings, one line each.
    strict = pushed / "strict"
    code, out, err = cli(label_studio, "pull", "headlines.toml", "--project", TITLE, "-o", str(strict), "--strict",
                         cwd=pushed)  # fmt: skip
    assert code == 1 and not strict.exists()
    assert "Traceback" not in err
    lines = err.splitlines()
    assert lines[0].startswith("Error: --strict: 6 finding(s)"), err
    assert len(lines) == 7 and all(line.startswith("finding: task ") for line in lines[1:]), err
    assert [int(line.split()[2]) for line in lines[1:]] == sorted([study[0], study[1], study[2], gold, study[5], added])

    code, out, err = cli(label_studio, "pull", "headlines.toml", "--project", TITLE, "-o", str(pulled), cwd=pushed)
    assert code == 0, err
    assert "Counts match the server: 12 tasks" in out  # findings are warnings, not a failed pull
    found = {(int(f["task_id"]), f["annotation_id"], f["finding"]) for f in _findings(pulled)}
    assert found == {
        (study[0], str(edited), "edited-by-other"),
        (study[1], str(forged), "edited-by-other"),
        (study[2], "", "meta-changed"),
        (gold, "", "meta-changed"),
        (study[3], str(gone), "annotation-gone"),
        (study[5], "", "task-deleted"),
        (added, "", "task-added"),
    }
    warned = [line for line in err.splitlines() if line.startswith("warning: task ")]
    assert len(warned) == 7 and all(re.match(r"warning: task \d+ ", line) for line in warned)
    assert any(f"task {study[1]} " in w and f"annotation {forged}: edited-by-other" in w for w in warned)

    with open(pulled / "results.csv", encoding="utf-8", newline="") as f:
        results = list(csv.DictReader(f))
    assert any(int(r["task_id"]) == study[2] for r in results)
    for r in results:
        if int(r["task_id"]) in rows:
            assert r["role"] == rows[int(r["task_id"])]["role"]
            assert r["systems"] == " | ".join(rows[int(r["task_id"])]["systems"])
    # The meta's reversed systems and the gold item's study tag are not believed: convert reads the pull folder.
    again = pushed / "again"
    code, _, err = cli(label_studio, "convert", "headlines.toml", str(pulled / "export.json"), "-o", str(again),
                       cwd=pushed)  # fmt: skip
    assert code == 0, err
    assert (again / "results.csv").read_bytes() == (pulled / "results.csv").read_bytes()

    report = pushed / "report"
    code, _, err = cli(label_studio, "report", "headlines.toml", str(pulled), "-o", str(report), cwd=pushed)
    assert code == 0, err
    text = (report / "report.md").read_text("utf-8")
    assert "Pull findings" in text and "edited-by-other" in text and "task-deleted" in text
