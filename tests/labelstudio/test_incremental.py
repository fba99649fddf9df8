"""Incremental pulls: the export cut into tasks by byte ranges (offline), and, through the
real server, an incremental pull after new, edited, deleted and skipped annotations and new
and deleted tasks writes byte for byte the files of a full pull."""

from __future__ import annotations

import json
import shutil
import sys
import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from annols.labelstudio import incremental
from annols.labelstudio.client import LabelStudioClient
from annols.study import findings
from annols.study.findings import FINDINGS_FILE
from annols.study.pull import ROWS_FILE
from tests.conftest import QA_DEV, ROOT, LiveServer
from tests.definition.test_definition import MINIMAL
from tests.study.test_push_pull import cli

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
    # An older annols recorded "since" (the server's clock less two minutes), not "mark": still read.
    state = folder / incremental.STATE_FILE
    export.write_bytes(ls_export([task(1), task(2)]))
    legacy = json.loads(state.read_text(encoding="utf-8"))
    legacy["since"] = legacy.pop("mark")
    state.write_text(json.dumps(legacy), encoding="utf-8")
    found, why = incremental.earlier_pull(folder, 1, "http://x")
    assert found is not None and why == "" and found.mark == "2026-11-23T10:00:00.000Z"
    incremental.write_state(folder, 1, "http://x", None, export, 2)  # the project had no tasks: every task is new
    found, _ = incremental.earlier_pull(folder, 1, "http://x")
    assert found is not None and found.mark is None
    incremental.write_state(folder, 1, "http://x", "yesterday", export, 2)
    assert incremental.earlier_pull(folder, 1, "http://x")[1] == "its record of the earlier pull (pull-state.json) "\
        "is damaged"  # fmt: skip
    export.write_bytes(b"[]")
    (folder / incremental.STATE_FILE).write_text("{", encoding="utf-8")
    assert incremental.earlier_pull(folder, 1, "http://x")[1] == "its record of the earlier pull (pull-state.json) "\
        "is damaged"  # fmt: skip


# --- through the real server ------------------------------------------------------------------


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file of a pull but its record of when it was made, and its findings: those are about the folder's
    history too (an annotation an earlier pull into it saw and the server no longer has)."""
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.name not in (incremental.STATE_FILE, FINDINGS_FILE)
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
    # From the folder the push ran in: its manifest unblinds.
    code, stdout, err = cli(server, "pull", str(definition), "--project", title, "-o", str(out), *extra, cwd=out.parent)
    assert code == 0, err
    return stdout, err


def test_incremental_pull_writes_the_files_of_a_full_pull(
    label_studio: LiveServer, client: LabelStudioClient, tmp_path: Path
) -> None:
    # Every step follows the one before at once (no pause anywhere): the first pull right after the
    # push and its annotations, the changes right after that pull, the next pull right after them.
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
    meta = dict(client._sdk.tasks.get(id=ids[20]).meta or {})
    client._sdk.tasks.update(id=ids[20], meta={**meta, "note": "written on the server"})  # a finding, kept below

    out = tmp_path / "incremental"
    stdout, err = pull(label_studio, definition, title, out)
    assert "Incremental" not in stdout and "Exported in full" not in err  # a first pull is a full one
    assert (out / incremental.STATE_FILE).exists()
    unchecked = tmp_path / "unchecked"  # the same folder, re-pulled below with every task checked again

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

    shutil.copytree(out, unchecked)
    state = json.loads((unchecked / incremental.STATE_FILE).read_text("utf-8"))
    del state["findings"]  # no record of the earlier findings' context: every task is checked
    (unchecked / incremental.STATE_FILE).write_text(json.dumps(state), encoding="utf-8")
    stdout, err = pull(label_studio, definition, title, out)
    assert "annotation-gone" in (out / FINDINGS_FILE).read_text("utf-8")  # the deleted one, by the earlier pull
    # The findings of the tasks that did not change are the earlier pull's (ids[20]'s meta-changed among them),
    # the same as checking every task again.
    pull(label_studio, definition, title, unchecked)
    assert (ids[20], "meta-changed") in {(f.task_id, f.kind) for f in findings.read(out / FINDINGS_FILE)}
    assert (out / FINDINGS_FILE).read_bytes() == (unchecked / FINDINGS_FILE).read_bytes()
    assert json.loads((out / incremental.STATE_FILE).read_text("utf-8"))["findings"]["carried"] == 35 - 11
    assert json.loads((unchecked / incremental.STATE_FILE).read_text("utf-8"))["findings"]["carried"] == 0
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
    assert any(line.startswith("Exported in full: the folder held an earlier pull, but its export.json is damaged (")
               for line in err.splitlines())  # after the pull's findings (an annotation gone since the earlier pull)
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


def small_project(server: LiveServer, client: LabelStudioClient, tmp_path: Path, title: str) -> tuple[Path, list[int]]:
    """A pushed project of four tasks: its definition and task ids."""
    definition = tmp_path / "headlines.toml"
    definition.write_text(MINIMAL)
    inputs = tmp_path / "headlines.jsonl"
    write_inputs(inputs, 4)
    code, _, err = cli(server, "push", str(definition), str(inputs), "--project", title, cwd=tmp_path)
    assert code == 0, err
    project = client.find_project(title)
    assert project is not None
    return definition, sorted(t for t, _ in client.task_meta(project.id))


def exported(folder: Path) -> dict[int, dict[str, Any]]:
    return {int(t["id"]): t for t in json.loads((folder / "export.json").read_text("utf-8"))}


def test_a_save_in_the_second_of_the_earlier_pull_is_fetched_exactly(
    label_studio: LiveServer, client: LabelStudioClient, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A save just before the earlier pull's mark (the mark is its updated_at) and one just after that
    pull's export, in the same second: the next pull fetches the one the export missed, only it."""
    title = "incremental same second"
    definition, ids = small_project(label_studio, client, tmp_path, title)
    me = client.whoami()["id"]
    read_mark, export_to = LabelStudioClient.latest_update, LabelStudioClient.export_to

    def mark_early_in_a_second(self: LabelStudioClient, project_id: int) -> str | None:
        # Saved again until the save, the mark, falls early in its second, so that the save after the
        # export can fall in the same one (a save takes a good part of a second on a loaded machine).
        for _ in range(30):
            client.create_annotation(ids[0], vote("1"), completed_by=me)
            mark = read_mark(self, project_id)
            if mark is not None and datetime.fromisoformat(mark).microsecond < 200_000:
                break
        return mark

    def export_then_save(self: LabelStudioClient, project_id: int, path: Path) -> int:
        written = export_to(self, project_id, path)
        client.create_annotation(ids[2], vote("1"), completed_by=me)  # after the export: not in it
        return written

    # Each attempt checks the pulls; it is repeated only until the save after the export falls in the
    # mark's second.
    seen = []
    for attempt in range(8):
        out, full = tmp_path / f"pulled{attempt}", tmp_path / f"full{attempt}"
        with monkeypatch.context() as m:
            m.setattr(LabelStudioClient, "latest_update", mark_early_in_a_second)
            m.setattr(LabelStudioClient, "export_to", export_then_save)
            pull(label_studio, definition, title, out)
        mark = json.loads((out / incremental.STATE_FILE).read_text("utf-8"))["mark"]
        pull(label_studio, definition, title, full)
        now = exported(full)
        assert now[ids[0]]["updated_at"] == mark  # the latest save when the mark was read
        assert exported(out)[ids[2]]["updated_at"] < mark < now[ids[2]]["updated_at"]  # the export missed it
        stdout, _ = pull(label_studio, definition, title, out)
        assert "Incremental: 1 changed task(s) exported again (0 new), 0 deleted" in stdout, stdout
        assert snapshot(out) == snapshot(full)
        seen.append((mark, now[ids[2]]["updated_at"]))
        if mark[:19] == seen[-1][1][:19]:
            break
    else:
        pytest.fail(f"in 8 attempts the save after the export never fell in the second of the mark: {seen}")


def test_a_save_between_the_mark_and_the_export_is_not_fetched_again(
    label_studio: LiveServer, client: LabelStudioClient, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A task saved after the mark was read but before the export: the export holds it, the next pull
    lists it (updated after the mark) and, its updated_at the one the export holds, keeps it."""
    title = "incremental after the mark"
    definition, ids = small_project(label_studio, client, tmp_path, title)
    me = client.whoami()["id"]
    read_mark = LabelStudioClient.latest_update

    def mark_then_save(self: LabelStudioClient, project_id: int) -> str | None:
        mark = read_mark(self, project_id)
        client.create_annotation(ids[1], vote("2"), completed_by=me)
        return mark

    out, full = tmp_path / "pulled", tmp_path / "full"
    with monkeypatch.context() as m:
        m.setattr(LabelStudioClient, "latest_update", mark_then_save)
        pull(label_studio, definition, title, out)
    mark = json.loads((out / incremental.STATE_FILE).read_text("utf-8"))["mark"]
    held = exported(out)[ids[1]]
    assert len(held["annotations"]) == 1 and held["updated_at"] > mark
    stdout, _ = pull(label_studio, definition, title, out)
    assert "Incremental: 0 changed task(s) exported again (0 new), 0 deleted" in stdout, stdout
    pull(label_studio, definition, title, full)
    assert snapshot(out) == snapshot(full)


def test_the_clients_clock_plays_no_part(
    label_studio: LiveServer, client: LabelStudioClient, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The client's clock a day ahead at the first pull and a day behind at the next: the same pulls."""
    title = "incremental skewed clock"
    definition, ids = small_project(label_studio, client, tmp_path, title)
    me = client.whoami()["id"]
    real = time.time
    read_by: list[str] = []

    def clock(offset: float) -> Any:
        def now() -> float:
            caller = sys._getframe(1).f_globals.get("__name__", "")
            if caller.startswith("annols"):
                read_by.append(caller)
            return real() + offset

        return now

    out, full = tmp_path / "pulled", tmp_path / "full"
    with monkeypatch.context() as m:
        m.setattr(time, "time", clock(86400))
        m.setattr(time, "time_ns", lambda: int(clock(86400)() * 1e9))
        pull(label_studio, definition, title, out)
    client.create_annotation(ids[1], vote("2"), completed_by=me)
    with monkeypatch.context() as m:
        m.setattr(time, "time", clock(-86400))
        m.setattr(time, "time_ns", lambda: int(clock(-86400)() * 1e9))
        stdout, _ = pull(label_studio, definition, title, out)
    assert "Incremental: 1 changed task(s) exported again (0 new), 0 deleted" in stdout, stdout
    pull(label_studio, definition, title, full)
    assert snapshot(out) == snapshot(full)
    assert read_by == []


def test_a_pull_state_of_an_older_annols_is_built_on(
    label_studio: LiveServer, client: LabelStudioClient, tmp_path: Path
) -> None:
    """An older annols recorded "since", the server's clock less two minutes: right after a push every
    task is updated after it, yet only the changed one is exported again, and the new record has a mark."""
    title = "incremental older record"
    definition, ids = small_project(label_studio, client, tmp_path, title)
    out, full = tmp_path / "pulled", tmp_path / "full"
    pull(label_studio, definition, title, out)
    state = out / incremental.STATE_FILE
    record = json.loads(state.read_text("utf-8"))
    del record["mark"]
    record["since"] = incremental._iso(client.server_time().replace(microsecond=0) - timedelta(seconds=120))
    state.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    client.create_annotation(ids[3], vote("1"), completed_by=client.whoami()["id"])
    stdout, _ = pull(label_studio, definition, title, out)
    assert "Incremental: 1 changed task(s) exported again (0 new), 0 deleted" in stdout, stdout
    pull(label_studio, definition, title, full)
    assert snapshot(out) == snapshot(full)
    assert json.loads(state.read_text("utf-8"))["mark"] == max(t["updated_at"] for t in exported(full).values())


# --- a re-pull converts only what changed ------------------------------------------------------

SF_EXAMPLES = ROOT / "annols" / "protocols" / "examples" / "input" / "summary-flaws-critic.jsonl"
NEW_ANSWER = {
    "qa-feedback": [{"id": "c", "from_name": "corrected_prediction", "to_name": "prediction", "type": "textarea",
                     "value": {"text": ["A corrected answer."]}, "origin": "manual"}],
    "summary-flaws": [{"id": "m", "from_name": "missing_key_information", "to_name": "summary", "type": "choices",
                       "value": {"choices": ["Yes"]}, "origin": "manual"}],
}  # fmt: skip


def annotated_inputs(protocol: str, folder: Path, count: int) -> Path:
    """``count`` records of the protocol with their judgments, each text made its own."""
    if protocol == "qa-feedback":
        records = json.loads(QA_DEV.read_text("utf-8"))[:count]
        path = folder / "qa.json"
        path.write_text(json.dumps(records), encoding="utf-8")
        return path
    base = [json.loads(line) for line in SF_EXAMPLES.read_text("utf-8").splitlines() if line.strip()]
    path = folder / "flaws.jsonl"
    with open(path, "w", encoding="utf-8") as f:
        for i in range(count):
            record = {**base[i % len(base)], "id": f"r{i}", "annotator": "ABC"[i % 3]}
            record["post"] = f"{record['post']} (post {i})"
            f.write(json.dumps(record, ensure_ascii=False) + "\n")
    return path


@pytest.mark.parametrize("protocol", ["qa-feedback", "summary-flaws"])
def test_a_re_pull_converts_what_changed_into_the_files_of_a_full_pull(
    protocol: str, label_studio: LiveServer, client: LabelStudioClient, tmp_path: Path
) -> None:
    title = f"re-pull {protocol}"
    inputs = annotated_inputs(protocol, tmp_path, 40)
    code, _, err = cli(label_studio, "push", protocol, str(inputs), "--project", title, "--with-annotations",
                       cwd=tmp_path)  # fmt: skip
    assert code == 0, err
    project = client.find_project(title)
    assert project is not None
    ids = sorted(t for t, _ in client.task_meta(project.id))
    assert len(ids) == 40
    out = tmp_path / "pulled"
    pull(label_studio, Path(protocol), title, out)
    # A format whose result files are records per judgment keeps rows (both of these).
    assert (out / ROWS_FILE).exists()

    # Annotators at work: new annotations, one edited, one deleted, an annotated task deleted.
    users = client.users()
    other = users.get("repull@example.org") or client.create_user("repull@example.org")
    for task_id in (ids[1], ids[2]):
        client.create_annotation(task_id, NEW_ANSWER[protocol], completed_by=other, lead_time=3.0)
    sdk = client._sdk
    annotations = {t: [a.id for a in sdk.annotations.list(id=t)] for t in (ids[17], ids[18])}
    sdk.annotations.update(id=annotations[ids[17]][0], result=NEW_ANSWER[protocol])
    sdk.annotations.delete(id=annotations[ids[18]][0])
    client.delete_tasks(project.id, [ids[9]])

    stdout, _ = pull(label_studio, Path(protocol), title, out)
    assert "Incremental: 4 changed task(s) exported again (0 new), 1 deleted, the rest kept" in stdout, stdout
    full = tmp_path / "full"
    pull(label_studio, Path(protocol), title, full)
    assert snapshot(out) == snapshot(full)  # the rows index too, where there is one
    # 40 tasks, 1 deleted, 4 changed: the others' rows kept.
    kept = json.loads((out / incremental.STATE_FILE).read_text("utf-8"))["rows_kept"]
    assert kept == 35
    assert any(p.name.startswith(protocol) for p in out.iterdir())

    # A rows index of another annols, then a result file cut short: converted in full, never a wrong file.
    index = out / ROWS_FILE
    found = json.loads(index.read_text("utf-8"))
    index.write_text(json.dumps({**found, "context": "0" * 64}), encoding="utf-8")
    client.create_annotation(ids[30], NEW_ANSWER[protocol], completed_by=other, lead_time=3.0)
    pull(label_studio, Path(protocol), title, out)
    assert json.loads((out / incremental.STATE_FILE).read_text("utf-8"))["rows_kept"] == 0
    shutil.rmtree(full)
    pull(label_studio, Path(protocol), title, full)
    assert snapshot(out) == snapshot(full)
    client.create_annotation(ids[31], NEW_ANSWER[protocol], completed_by=other, lead_time=3.0)
    with open(out / f"{protocol}.jsonl", "r+b") as f:
        f.truncate(f.seek(0, 2) - 5)
    pull(label_studio, Path(protocol), title, out)
    assert json.loads((out / incremental.STATE_FILE).read_text("utf-8"))["rows_kept"] == 0
    shutil.rmtree(full)
    pull(label_studio, Path(protocol), title, full)
    assert snapshot(out) == snapshot(full)
