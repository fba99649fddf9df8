"""Pull checks what annotators were shown, on a real Label Studio (issue #39, item 3), and the files that hold the
study's secret are their owner's alone (item 4), and no manifest means no systems (item 5).

Every account on the community edition can do what these do through the API the UI calls: swap a task's
data, swap the panes in the label config, credit an annotation to another account, lower the overlap.
Pull names each (data-changed, config-changed, completed-by-changed, overlap-changed), ``--strict`` fails on
each, and the judgments saved on what push did not send are left out of the results, named and counted.
"""

from __future__ import annotations

import csv
import json
import stat
from pathlib import Path

import httpx
import pytest

from annols.labelstudio.client import LabelStudioClient
from annols.study import manifest
from tests.conftest import LiveServer
from tests.definition.test_definition import MINIMAL
from tests.labelstudio.test_incremental import vote
from tests.study.test_push_pull import cli

SYSTEMS = ("sysalpha", "sysbeta")


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _study(folder: Path, title: str, label_studio: LiveServer, *extra: str) -> Path:
    (folder / "headlines.toml").write_text(MINIMAL, encoding="utf-8")
    records = [{"headline_1": f"First headline {i}", "headline_2": f"Second headline {i}", "systems": list(SYSTEMS),
                "id": i} for i in range(6)]  # fmt: skip
    (folder / "study.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    code, _, err = cli(label_studio, "push", "headlines.toml", "study.jsonl", "--project", title, "--overlap", "2",
                         *extra, cwd=folder)  # fmt: skip
    assert code == 0, err
    return manifest.manifest_path(folder / ".annols", title)


def _findings(folder: Path) -> list[dict[str, str]]:
    with open(folder / "findings.csv", encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def test_tampering_with_what_annotators_are_shown_is_named_and_fails_strict(
    label_studio: LiveServer, client: LabelStudioClient, tmp_path: Path
) -> None:
    title = "tampered shown"
    path = _study(tmp_path, title, label_studio)
    header, rows = manifest.read_rows(path)
    assert header["placement"] == manifest.PLACEMENT and header["overlap"] == 2 and len(header["config"]) == 24
    assert all(len(r["data"]) == 16 for r in rows)
    # Owner-only: the manifest folder and every file in it that holds the secret or the systems.
    assert _mode(tmp_path / ".annols") == 0o700 and _mode(path) == 0o600
    project = client.find_project(title)
    assert project is not None
    tasks = sorted(client.export_tasks(project.id), key=lambda t: t["id"])
    admin = int(client.whoami()["id"])
    other = client.create_user("someone-else@example.org")
    first = client.create_annotation(tasks[0]["id"], vote("1"), completed_by=admin)

    pulled = tmp_path / "pulled"
    code, _, err = cli(label_studio, "pull", "headlines.toml", "--project", title, "-o", str(pulled), "--strict",
                         cwd=tmp_path)  # fmt: skip
    assert code == 0, err  # the label config and data as the server returns them are what push sent
    assert _findings(pulled) == []
    assert _mode(pulled / "blinding.jsonl") == 0o600

    api = httpx.Client(base_url=label_studio.url, headers={"Authorization": f"Token {label_studio.api_key}"},
                       timeout=60)  # fmt: skip
    # The texts of task 1 swapped, then judged.
    data = tasks[1]["data"]
    swapped = {**data, "headline_1": data["headline_2"], "headline_2": data["headline_1"]}
    assert api.patch(f"/api/tasks/{tasks[1]['id']}/", json={"data": swapped}).status_code == 200
    client.create_annotation(tasks[1]["id"], vote("1"), completed_by=admin)
    # The annotation an earlier pull saw, credited to another account.
    assert api.patch(f"/api/annotations/{first}/", json={"completed_by": other}).status_code == 200
    # The overlap lowered.
    assert api.patch(f"/api/projects/{project.id}/", json={"maximum_annotations": 1}).status_code == 200
    # The panes under "Headline #1" and "Headline #2" swapped in the label config (accepted: no name changes).
    xml = api.get(f"/api/projects/{project.id}/").json()["label_config"]
    turned = xml.replace("$headline_1", "$tmp").replace("$headline_2", "$headline_1").replace("$tmp", "$headline_2")
    assert turned != xml
    assert api.patch(f"/api/projects/{project.id}/", json={"label_config": turned}).status_code == 200, "refused"
    client.create_annotation(tasks[2]["id"], vote("1"), completed_by=admin)

    code, _, err = cli(label_studio, "pull", "headlines.toml", "--project", title, "-o", str(pulled), "--strict",
                         cwd=tmp_path)  # fmt: skip
    assert code != 0
    for kind in ("data-changed", "config-changed", "completed-by-changed", "overlap-changed", "left-out"):
        assert f": {kind}: " in err, (kind, err)
    assert _findings(pulled) == []  # the folder as it was

    code, _, err = cli(label_studio, "pull", "headlines.toml", "--project", title, "-o", str(pulled), cwd=tmp_path)
    assert code == 0, err
    found = {(r["finding"], r["task_id"]) for r in _findings(pulled)}
    assert {("data-changed", str(tasks[1]["id"])), ("config-changed", ""), ("overlap-changed", ""),
            ("completed-by-changed", str(tasks[0]["id"])), ("left-out", str(tasks[1]["id"])),
            ("left-out", str(tasks[2]["id"]))} <= found  # fmt: skip
    left = {r["task_id"]: r["detail"] for r in _findings(pulled) if r["finding"] == "left-out"}
    assert left == {str(tasks[1]["id"]): "1 judgment(s) left out of the results: its data changed",
                    str(tasks[2]["id"]): "1 judgment(s) left out of the results: saved since the label config "
                                         "changed"}  # fmt: skip
    with open(pulled / "results.csv", encoding="utf-8", newline="") as f:
        counted = {r["task_id"] for r in csv.DictReader(f)}
    assert counted == {str(tasks[0]["id"])}  # seen before the config changed; the others left out
    # The next pull into the folder keeps saying the config changed and keeps leaving out what it left out.
    code, _, err = cli(label_studio, "pull", "headlines.toml", "--project", title, "-o", str(pulled), cwd=tmp_path)
    assert code == 0, err
    assert {r["finding"] for r in _findings(pulled)} >= {"config-changed", "completed-by-changed", "left-out"}
    with open(pulled / "results.csv", encoding="utf-8", newline="") as f:
        assert {r["task_id"] for r in csv.DictReader(f)} == {str(tasks[0]["id"])}


def test_an_old_manifest_cannot_be_checked_and_says_so(label_studio: LiveServer, client: LabelStudioClient,
                                                       tmp_path: Path) -> None:  # fmt: skip
    title = "unchecked old"
    path = _study(tmp_path, title, label_studio)
    header, rows = manifest.read_rows(path)
    for key in ("config", "overlap", "placement"):
        header.pop(key)
    path.write_text("".join(json.dumps(r) + "\n" for r in [header, *({k: v for k, v in r.items() if k != "data"}
                                                                     for r in rows)]), encoding="utf-8")  # fmt: skip
    pulled = tmp_path / "pulled"
    code, _, err = cli(label_studio, "pull", "headlines.toml", "--project", title, "-o", str(pulled), "--strict",
                         cwd=tmp_path)  # fmt: skip
    assert code == 0, err  # nothing was found changed: --strict passes, and the pull says what it could not check
    (only,) = _findings(pulled)
    assert only["finding"] == "unchecked"
    assert "the label config, the overlap, the data of 6 task(s)" in only["detail"]


def test_no_manifest_no_systems(label_studio: LiveServer, client: LabelStudioClient, tmp_path: Path,
                                monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    title = "no manifest here"
    _study(tmp_path, title, label_studio)
    project = client.find_project(title)
    assert project is not None
    admin = int(client.whoami()["id"])
    for t in client.export_tasks(project.id):
        client.create_annotation(t["id"], vote("1"), completed_by=admin)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "headlines.toml").write_text(MINIMAL, encoding="utf-8")
    want = "annols manifest import"
    for args in (["pull", "headlines.toml", "--project", title, "-o", "out"],
                 ["status", "headlines.toml", "--project", title],
                 ["adjudicate", "headlines.toml", "--project", title, "--into", "adjudicated here"],
                 ["next-round", "headlines.toml", "study.jsonl", "--project", title, "--effect", "0.5", "--overlap",
                  "1", "--pull", str(elsewhere)]):  # fmt: skip
        if args[0] == "next-round":
            (elsewhere / "study.jsonl").write_text((tmp_path / "study.jsonl").read_text("utf-8"), encoding="utf-8")
        code, _, err = cli(label_studio, *args, cwd=elsewhere)
        assert code != 0, args
        lines = err.strip().splitlines()
        assert len(lines) == 1 and want in lines[0] and "no manifest" in lines[0], (args, err)
    assert not (elsewhere / "out").exists()

    code, _, err = cli(label_studio, "pull", "headlines.toml", "--project", title, "-o", "blind", "--blind-only",
                         cwd=elsewhere)  # fmt: skip
    assert code == 0, err
    with open(elsewhere / "blind" / "results.csv", encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 6 and all(not r["system"] for r in rows)
    assert not any(s in (elsewhere / "blind" / "results.csv").read_text("utf-8") for s in SYSTEMS)
    code, _, err = cli(label_studio, "report", "headlines.toml", "blind", "-o", "report", cwd=elsewhere)
    assert code == 0, err
    report = (elsewhere / "report" / "report.md").read_text("utf-8")
    assert "Blind-only pull" in report and "compares no systems" in report
    assert not any((elsewhere / "report" / "tables").glob("pairwise*")), sorted(
        p.name for p in (elsewhere / "report" / "tables").iterdir())  # fmt: skip
    # A pull made without the manifest by an annols that only warned: the report refuses it.
    legacy = elsewhere / "legacy"
    legacy.mkdir()
    for name in ("export.json", "annotators.json"):
        (legacy / name).write_bytes((elsewhere / "blind" / name).read_bytes())
    (legacy / "findings.csv").write_text("task_id,task_key,annotation_id,finding,detail\n,,,no-manifest,none\n",
                                         encoding="utf-8")  # fmt: skip
    code, _, err = cli(label_studio, "report", "headlines.toml", "legacy", "-o", "report2", cwd=elsewhere)
    assert code != 0 and len(err.strip().splitlines()) == 1 and want in err, err
