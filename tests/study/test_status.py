"""``annols status`` against the real server: every count checked against the server's own
(its project counts, and the full export counted here independently)."""

from __future__ import annotations

import dataclasses
import json
from collections import Counter
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from annols.labelstudio.client import LabelStudioClient, Project
from annols.study import status as status_lib
from tests.conftest import LiveServer
from tests.definition.test_definition import MINIMAL
from tests.faultproxy import FaultProxy
from tests.labelstudio.test_incremental import vote, write_inputs
from tests.study.test_push_pull import cli


def pushed(
    server: LiveServer, client: LabelStudioClient, tmp_path: Path, title: str, count: int, raters: tuple[str, ...]
) -> tuple[Path, Project, list[int], list[int]]:
    """``count`` headline tasks pushed with overlap 2: (definition, project, task ids, the raters' user ids)."""
    definition = tmp_path / "headlines.toml"
    definition.write_text(MINIMAL)
    inputs = tmp_path / "headlines.jsonl"
    write_inputs(inputs, count)
    code, _, err = cli(server, "push", str(definition), str(inputs), "--project", title, "--overlap", "2",
                       cwd=tmp_path)  # fmt: skip
    assert code == 0, err
    project = client.find_project(title)
    assert project is not None
    users = client.users()
    emails = [f"{name}@example.org" for name in raters]
    return definition, project, sorted(t for t, _ in client.task_meta(project.id)), \
        [users.get(e) or client.create_user(e) for e in emails]  # fmt: skip


def test_status_counts_match_the_server(
    label_studio: LiveServer, client: LabelStudioClient, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    title = "status headlines"
    definition, project, ids, raters = pushed(label_studio, client, tmp_path, title, 12, ("st0", "st1"))
    for task_id in ids[:6]:
        client.create_annotation(task_id, vote("1"), completed_by=raters[0])
    for task_id in ids[:4]:
        client.create_annotation(task_id, vote("2"), completed_by=raters[1])
    for task_id in ids[4:6]:  # skips
        client._sdk.annotations.create(id=task_id, result=[], was_cancelled=True, completed_by=raters[1])
    client._sdk.annotations.create(id=ids[9], result=[], was_cancelled=True, completed_by=raters[0])

    code, out, err = cli(label_studio, "status", str(definition), "--project", title, "--json", cwd=tmp_path)
    assert code == 0, err
    found = json.loads(out)

    # Independently: the server's project counts and its full export, counted here.
    info = client.project(project.id)
    exported = client.export_tasks(project.id)
    done = [sum(not a["was_cancelled"] for a in t["annotations"]) for t in exported]
    per: dict[str, Counter[str]] = {}
    emails = {uid: email for email, uid in client.users().items()}
    for t in exported:
        for a in t["annotations"]:
            kind = "skipped" if a["was_cancelled"] else "annotations"
            per.setdefault(emails[a["completed_by"]], Counter())[kind] += 1
    assert (found["tasks"], found["annotations"], found["skipped"]) == (
        info["task_number"], info["total_annotations_number"], info["skipped_annotations_number"]
    ) == (12, 10, 3)  # fmt: skip
    assert found["overlap"] == 2
    assert found["complete"] == sum(d >= 2 for d in done) == 4
    assert found["short"] == 8 and found["missing"] == sum(max(0, 2 - d) for d in done) == 14
    got: dict[str, Any] = {a["annotator"]: a for a in found["annotators"]}
    assert {e: (a["annotations"], a["skipped"]) for e, a in got.items()} == {
        e: (c["annotations"], c["skipped"]) for e, c in per.items()
    } == {"st0@example.org": (6, 1), "st1@example.org": (4, 2)}  # fmt: skip
    # Every annotation was saved just now: all in the last hour, and the pace says when the rest comes.
    assert sum(found["per_hour"]) == found["per_hour"][-1] == 10 and found["pace"] == round(10 / 24, 2)
    assert found["per_hour_counts"] == "annotations"
    assert got["st0@example.org"]["last_day"] == 7 and found["eta"] is not None

    # Text output, and the agreement tables of a pull.
    pulled = tmp_path / "pulled"
    code, _, err = cli(label_studio, "pull", str(definition), "--project", title, "-o", str(pulled), cwd=tmp_path)
    assert code == 0, err
    code, out, err = cli(label_studio, "status", str(definition), "--project", title, "--pull", str(pulled),
                         cwd=tmp_path)  # fmt: skip
    assert code == 0, err
    assert "12 tasks, 10 annotations, 3 skipped; overlap 2" in out
    assert "4 tasks complete, 8 short of the overlap (14 annotations missing)" in out
    assert "st1@example.org\t4\t2\t6" in out
    assert "From the pull: " in out

    # More annotated tasks changed in the last day than status exports: the hours count tasks.
    monkeypatch.setattr(status_lib, "RECENT_LIMIT", 3)
    code, out, err = cli(label_studio, "status", str(definition), "--project", title, "--json", cwd=tmp_path)
    assert code == 0, err
    by_task = json.loads(out)
    assert by_task["per_hour_counts"] == "tasks" and sum(by_task["per_hour"]) == by_task["per_hour"][-1] == 7
    assert {a["annotator"]: (a["annotations"], a["skipped"], a["last_day"]) for a in by_task["annotators"]} == {
        "st0@example.org": (6, 1, -1), "st1@example.org": (4, 2, -1)
    }  # fmt: skip
    assert {k: v for k, v in by_task.items() if k not in ("per_hour", "per_hour_counts", "pace", "eta", "annotators",
            "exported", "at")} == {k: v for k, v in found.items() if k not in ("per_hour", "per_hour_counts", "pace",
            "eta", "annotators", "exported", "at")}  # fmt: skip


def test_status_of_an_unknown_project_is_one_line(label_studio: LiveServer, tmp_path: Path) -> None:
    definition = tmp_path / "headlines.toml"
    definition.write_text(MINIMAL)
    code, out, err = cli(label_studio, "status", str(definition), "--project", "no such status project")
    assert code == 1 and out == ""
    assert err == f"Error: no project titled 'no such status project' on {label_studio.url}: check --project " \
        "(titles are exact)\n"  # fmt: skip


def test_status_counts_an_annotator_twice_on_a_task_without_listing_every_task(
    label_studio: LiveServer, client: LabelStudioClient, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # One annotator's two annotations of a task count twice, and a deleted user's annotation
    # once (as user-0), though a filter on the annotator counts tasks. Checked against the
    # export, counted here; the requests (through a proxy that logs them) show that status
    # listed only the tasks that can hold more annotations than annotators, never every task.
    title = "status twice"
    definition, project, ids, raters = pushed(label_studio, client, tmp_path, title, 8, ("tw0", "tw1", "tw2"))
    for task_id in (ids[0], ids[0], ids[1], ids[2], ids[3]):
        client.create_annotation(task_id, vote("1"), completed_by=raters[0])  # the same annotator twice on ids[0]
    for task_id in ids[:2]:
        client.create_annotation(task_id, vote("2"), completed_by=raters[1])
    client._sdk.annotations.create(id=ids[5], result=[], was_cancelled=True, completed_by=raters[1])
    client.create_annotation(ids[4], vote("2"), completed_by=raters[2])
    client._sdk.users.delete(id=raters[2])  # its annotation stays, without a user

    per: dict[str, Counter[str]] = {}
    emails = {uid: email for email, uid in client.users().items()}
    exported = client.export_tasks(project.id)
    for t in exported:
        for a in t["annotations"]:
            kind = "skipped" if a["was_cancelled"] else "annotations"
            per.setdefault(emails.get(a["completed_by"] or 0, "user-0"), Counter())[kind] += 1
    expected = {e: (c["annotations"], c["skipped"]) for e, c in per.items()}
    assert expected == {"tw0@example.org": (5, 0), "tw1@example.org": (2, 1), "user-0": (1, 0)}
    done = [sum(not a["was_cancelled"] for a in t["annotations"]) for t in exported]

    # Tasks with 2 annotations (one) are listed at once when few, else checked by a count per
    # annotator (TASKS_PER_COUNT 0) and, adding up, not listed: the deleted user's task and
    # the one with 3 annotations are listed either way.
    for per_count, listed in ((status_lib.TASKS_PER_COUNT, 3), (0, 2)):
        monkeypatch.setattr(status_lib, "TASKS_PER_COUNT", per_count)
        with FaultProxy(label_studio.url) as proxy:
            code, out, err = cli(dataclasses.replace(label_studio, url=proxy.url), "status", str(definition),
                                 "--project", title, "--json", cwd=tmp_path)  # fmt: skip
        assert code == 0, err
        found = json.loads(out)
        assert {a["annotator"]: (a["annotations"], a["skipped"]) for a in found["annotators"]} == expected
        assert (found["tasks"], found["annotations"], found["skipped"]) == (8, 8, 1)
        assert (found["complete"], found["missing"]) == (
            sum(d >= 2 for d in done), sum(max(0, 2 - d) for d in done)) == (2, 9)  # fmt: skip
        assert sum(found["per_hour"]) == 8 and found["per_hour_counts"] == "annotations"
        assert found["listed"] == listed
        listings = [parse_qs(urlsplit(line.split(" ", 1)[1]).query) for line in proxy.seen
                    if line.startswith("GET /api/tasks")]  # fmt: skip
        with_annotators = [q for q in listings if q.get("review") == ["true"]]
        assert len(with_annotators) == listed  # one listing per set, one task each here
        for query in listings:  # a page of one (a count), or a listing narrowed by a filter
            assert query["page_size"] == ["1"] or "filters" in json.loads(query["query"][0]), query


def test_hourly_counts_equal_one_count_per_hour_with_fewer_calls() -> None:
    changes = [0.5, 3.2, 3.9, 17.0, 23.5, 23.6, 23.99]  # hours after the start of the day
    for times in (changes, [23.5] * 40, [], [0.1] * 3):
        asked: list[int] = []

        def after(h: int, times: list[float] = times, asked: list[int] = asked) -> int:
            asked.append(h)
            return sum(t > h for t in times)

        assert status_lib._hourly(after) == [sum(t > h for t in times) for h in range(24)] + [0]
        assert len(asked) == len(set(asked)) <= 24
    asked.clear()

    def last_hour(h: int) -> int:  # busy only in the last hour
        asked.append(h)
        return 40 * (h < 23)

    assert status_lib._hourly(last_hour)[22:] == [40, 0, 0] and len(asked) < 8
