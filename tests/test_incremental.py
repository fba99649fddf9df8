"""Incremental pulls: the export cut into tasks by byte ranges (offline), and, through the
real server, an incremental pull after new, edited, deleted and skipped annotations and new
and deleted tasks writes byte for byte the files of a full pull."""

from __future__ import annotations

import json
import shutil
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from annols import incremental
from annols.labelstudio import LabelStudioClient

from .conftest import LiveServer
from .test_definition import MINIMAL
from .test_push_pull import cli

# --- offline: cutting and splicing ------------------------------------------------------------


def ls_export(tasks: list[dict[str, Any]], compact: bool = True) -> bytes:
    """What Label Studio's export sends for these tasks: 1.23.2 sends the compact form; json.dumps's
    default separators are read too."""
    separators = (",", ":") if compact else (", ", ": ")
    return json.dumps(tasks, ensure_ascii=False, separators=separators).encode("utf-8")


def task(task_id: int, text: str = "x", annotations: int = 0) -> dict[str, Any]:
    return {"id": task_id, "annotations": [{"id": task_id * 10 + a, "result": [{"id": "r", "value": {"text": text}}]}
                                           for a in range(annotations)],
            "data": {"text": text, "nested": [{"id": 3, "annotations": []}]}, "meta": {}}  # fmt: skip


TRICKY = 'a "},{\\"id\\":7,\\"annotations\\":" inside, Praha žije 🎉, \n and }, {"id": 9'


@pytest.mark.parametrize("compact", [True, False])
def test_index_cuts_an_export_into_its_tasks(tmp_path: Path, compact: bool) -> None:
    tasks = [task(4, TRICKY, 2), task(2, "b"), task(9, "ž" * 5000, 1), task(11)]
    path = tmp_path / "export.json"
    path.write_bytes(ls_export(tasks, compact))
    segments = incremental.index_export(path)
    data = path.read_bytes()
    assert [s[0] for s in segments] == [4, 2, 9, 11]
    assert [json.loads(data[s:e]) for _, s, e in segments] == tasks


def test_index_refuses_what_is_not_an_export(tmp_path: Path) -> None:
    path = tmp_path / "export.json"
    for text in (b'{"id": 1}', b'[{"id": 1, "annotations": []}', b"[1, 2]", b""):
        path.write_bytes(text)
        with pytest.raises(incremental.ExportShape):
            incremental.index_export(path)
    path.write_bytes(b"[]")
    assert incremental.index_export(path) == []


def test_sort_export_gives_the_bytes_of_the_sorted_list(tmp_path: Path) -> None:
    tasks = [task(i, f"{TRICKY} {i}", i % 3) for i in (7, 3, 12, 1, 5)]
    path = tmp_path / "export.json"
    path.write_bytes(ls_export(tasks))
    assert incremental.sort_export(path, expected=5)
    assert path.read_bytes() == ls_export(sorted(tasks, key=lambda t: t["id"]))
    assert not incremental.sort_export(path, expected=5)  # already in order: left as is


def test_splicing_changed_tasks_into_an_earlier_export(tmp_path: Path) -> None:
    """Unchanged ranges from the earlier file, changed ones from another, deleted ones left out."""
    earlier = [task(i, f"old {i}", 1) for i in range(1, 8)]
    old = tmp_path / "old.json"
    old.write_bytes(ls_export(earlier))
    changed = [task(3, "edited", 2), task(9, "new")]
    part = tmp_path / "part.json"
    part.write_bytes(ls_export(changed))
    keep = [s for s in incremental.index_export(old) if s[0] not in {3, 5}]  # 3 changed, 5 deleted
    pieces = [(i, old, s, e) for i, s, e in keep] + [(i, part, s, e) for i, s, e in incremental.index_export(part)]
    out = tmp_path / "merged.json"
    ordered = ((p, s, e) for _, p, s, e in sorted(pieces, key=lambda p: p[0]))
    written = incremental.write_spliced(out, ordered, incremental.separator(old))
    expected = sorted([t for t in earlier if t["id"] not in {3, 5}] + changed, key=lambda t: t["id"])
    assert written == len(expected)
    assert out.read_bytes() == ls_export(expected)


def test_earlier_pull_says_why_it_cannot_be_built_on(tmp_path: Path) -> None:
    folder = tmp_path / "pull"
    folder.mkdir()
    assert incremental.earlier_pull(folder, 1, "http://x") == (None, "")  # nothing there: a first pull
    export = folder / "export.json"
    export.write_bytes(ls_export([task(1), task(2)]))
    assert incremental.earlier_pull(folder, 1, "http://x")[1] == "its export.json has no record of when it was pulled"
    incremental.write_state(folder, 1, "http://x", "2026-11-23T10:00:00.000Z", export, 2)
    found, why = incremental.earlier_pull(folder, 1, "http://x")
    assert found is not None and why == "" and [s[0] for s in found.segments] == [1, 2]
    assert incremental.earlier_pull(folder, 2, "http://x")[1] == (
        "it holds a pull of project 1 on http://x, not of project 2 on http://x"
    )
    export.write_bytes(export.read_bytes()[:-1] + b" ")  # same size, no longer a list
    assert incremental.earlier_pull(folder, 1, "http://x")[1].startswith("its export.json is damaged (")
    export.write_bytes(b"[]")
    assert incremental.earlier_pull(folder, 1, "http://x")[1] == "its export.json is damaged (2 bytes, the pull wrote "\
        f"{len(ls_export([task(1), task(2)]))})"  # fmt: skip
    (folder / incremental.STATE_FILE).write_text("{", encoding="utf-8")
    assert incremental.earlier_pull(folder, 1, "http://x")[1] == "its record of the earlier pull (pull-state.json) "\
        "is damaged"  # fmt: skip


# --- through the real server ------------------------------------------------------------------


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file of a pull but its record of when it was made (the one thing two pulls differ in)."""
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.name != incremental.STATE_FILE
    }


def write_inputs(path: Path, count: int) -> None:
    with open(path, "w", encoding="utf-8") as f:
        for i in range(count):
            record = {"headline_1": f"Headline {i} by bart: Praha žije 🎉", "headline_2": f"Headline {i} by pegasus",
                      "systems": ["bart", "pegasus"], "id": i}  # fmt: skip
            f.write(json.dumps(record, ensure_ascii=False) + "\n")


def vote(choice: str) -> list[dict[str, Any]]:
    return [{"id": "f", "from_name": "fluency", "to_name": "headline_1", "type": "choices",
             "value": {"choices": [choice]}, "origin": "manual"}]  # fmt: skip


def pull(server: LiveServer, definition: Path, title: str, out: Path, *extra: str) -> tuple[str, str]:
    code, stdout, err = cli(server, "pull", str(definition), "--project", title, "-o", str(out), *extra)
    assert code == 0, err
    return stdout, err


def test_incremental_pull_writes_the_files_of_a_full_pull(
    label_studio: LiveServer, client: LabelStudioClient, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # No margin: the test's changes all come within seconds of the earlier pull, and the point is to
    # see only them fetched again (the server's clock is read to the second, so the test waits 1.1 s
    # between a change and the pull that must not see it as a change, and back).
    monkeypatch.setattr(incremental, "MARGIN", timedelta(0))
    definition = tmp_path / "headlines.toml"
    tie = '[[answers]]\ncode = "2"\n\n[[answers]]\ncode = "0"'
    definition.write_text(MINIMAL.replace('[[answers]]\ncode = "2"', tie))
    inputs = tmp_path / "headlines.jsonl"
    write_inputs(inputs, 30)
    title = "incremental headlines"
    code, _, err = cli(label_studio, "push", str(definition), str(inputs), "--project", title, cwd=tmp_path)
    assert code == 0, err
    project = client.find_project(title)
    assert project is not None
    ids = sorted(t for t, _ in client.task_meta(project.id))
    users = client.users()
    raters = [users.get(e) or client.create_user(e) for e in ("inc0@example.org", "inc1@example.org")]
    made: dict[int, list[int]] = {}
    for task_id in ids[:10]:
        made[task_id] = [client.create_annotation(task_id, vote("1"), completed_by=r, lead_time=2.0) for r in raters]
    time.sleep(1.1)

    out = tmp_path / "incremental"
    stdout, err = pull(label_studio, definition, title, out)
    assert "Incremental" not in stdout and "Exported in full" not in err  # a first pull is a full one
    assert (out / incremental.STATE_FILE).exists()
    time.sleep(1.1)

    # The mix: a new annotation, an edited one, a deleted one, a skip, two deleted tasks
    # (one annotated), and new tasks from a second push of a longer input.
    sdk = client._sdk
    client.create_annotation(ids[12], vote("2"), completed_by=raters[0], lead_time=1.0)  # new
    sdk.annotations.update(id=made[ids[1]][0], result=vote("0"))  # edited
    sdk.annotations.delete(id=made[ids[2]][1])  # deleted
    sdk.annotations.create(id=ids[13], result=[], was_cancelled=True, completed_by=raters[1])  # skipped
    client.delete_tasks(project.id, [ids[3], ids[25]])  # an annotated task and a bare one
    write_inputs(inputs, 35)
    code, _, err = cli(label_studio, "push", str(definition), str(inputs), "--project", title, cwd=tmp_path)
    assert code == 0, err
    time.sleep(1.1)

    stdout, err = pull(label_studio, definition, title, out)
    # The push made the two deleted tasks again (under new ids) beside the five new ones: 30 - 2 + 7.
    # 20 annotations + 1 new - 1 deleted - the 2 of the deleted task.
    assert "Counts match the server: 35 tasks, 18 annotations, 1 skipped." in stdout
    # ids[1], ids[2], ids[12], ids[13] and the seven new tasks: nothing else exported again
    assert "Incremental: 11 changed task(s) exported again (7 new), 2 deleted, the rest kept" in stdout, (stdout, err)

    full = tmp_path / "full"
    pull(label_studio, definition, title, full)
    assert snapshot(out) == snapshot(full)
    exported = json.loads((full / "export.json").read_text("utf-8"))
    assert [t["id"] for t in exported] == sorted(t for t, _ in client.task_meta(project.id))

    # Pulled again with nothing changed: nothing exported, the same files.
    time.sleep(1.1)
    stdout, _ = pull(label_studio, definition, title, out)
    assert "Incremental: 0 changed task(s) exported again (0 new), 0 deleted" in stdout
    assert snapshot(out) == snapshot(full)

    # --full exports all, into the same folder: the same files.
    forced = tmp_path / "forced"
    shutil.copytree(out, forced)
    stdout, _ = pull(label_studio, definition, title, forced, "--full")
    assert "Incremental" not in stdout and snapshot(forced) == snapshot(full)

    # A damaged earlier export: a full export, said so, the same files.
    damaged = tmp_path / "damaged"
    shutil.copytree(out, damaged)
    with open(damaged / "export.json", "r+b") as f:
        f.truncate(f.seek(0, 2) - 10)
    stdout, err = pull(label_studio, definition, title, damaged)
    assert "Incremental" not in stdout
    assert err.startswith("Exported in full: the folder held an earlier pull, but its export.json is damaged (")
    assert snapshot(damaged) == snapshot(full)


def test_a_pull_of_another_project_into_the_folder_is_a_full_one(
    label_studio: LiveServer, client: LabelStudioClient, tmp_path: Path
) -> None:
    definition = tmp_path / "headlines.toml"
    definition.write_text(MINIMAL)
    inputs = tmp_path / "headlines.jsonl"
    write_inputs(inputs, 3)
    for title in ("incremental one", "incremental two"):
        code, _, err = cli(label_studio, "push", str(definition), str(inputs), "--project", title, cwd=tmp_path)
        assert code == 0, err
    out = tmp_path / "pulled"
    pull(label_studio, definition, "incremental one", out)
    _, err = pull(label_studio, definition, "incremental two", out)
    one, two = client.find_project("incremental one"), client.find_project("incremental two")
    assert one is not None and two is not None
    assert err == (f"Exported in full: the folder held an earlier pull, but it holds a pull of project {one.id} on "
                   f"{label_studio.url}, not of project {two.id} on {label_studio.url}.\n")  # fmt: skip
    other = tmp_path / "other"
    pull(label_studio, definition, "incremental two", other)
    assert snapshot(out) == snapshot(other)
