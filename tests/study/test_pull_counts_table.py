"""Pull counts a task as the study table reads it (annols.study.exports.task_reading, offline through
``pull.convert``): its counts of tasks, annotations and skips equal the study table's of the same pull folder, on
planted exports with a skip, an annotator's second annotation, an annotation twice on its task, a task shared by
two systems (push --share-identical), a gold item and an attention check; and on a re-pull that keeps the earlier
rows of unchanged tasks (their counts from the rows index)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from annols.definition.blinding import META_KEY, META_SYSTEMS, decode_systems
from annols.labelstudio import incremental
from annols.study import pull, roles
from annols.study.exports import read_export, task_reading, write_blinding
from annols.study.table import read
from tests.report import study
from tests.report.test_style_reports import definition_of, export
from tests.study.test_pull_parts import DEV, load, raw_export, write_export

USERS = {uid: email for email, uid in study.USER_IDS.items()}


def table_counts(definition: Any, folder: Path) -> pull.Counts:
    """The study table's counts of a pull folder: the tasks read (shared copies apart), the submitted and the
    cancelled annotations."""
    got = read(definition, [folder]).study
    cancelled = got.annotations["cancelled"]
    return pull.Counts(sum(got.source_tasks), int((~cancelled).sum()), int(cancelled.sum()))


def planted(tasks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The tasks with a skip, an annotator's second annotation, an annotation twice on its task."""
    tasks = copy.deepcopy(tasks)
    first = tasks[0]["annotations"][0]
    tasks[0]["annotations"].append({**first, "id": 90001, "was_cancelled": True, "result": [],
                                    "created_at": "2024-05-02T10:00:00.000000Z"})  # fmt: skip
    tasks[1]["annotations"].append({**tasks[1]["annotations"][0], "id": 90002,
                                    "created_at": "2024-05-03T10:00:00.000000Z"})  # fmt: skip
    tasks[2]["annotations"].append(copy.deepcopy(tasks[2]["annotations"][-1]))
    return tasks


def pull_folder(folder: Path, tasks: list[dict[str, Any]], blinding: list[dict[str, Any]] | None = None) -> Path:
    study.write_pull(folder, tasks)
    if blinding is not None:
        write_blinding(folder, blinding)
    return folder


def test_pull_counts_as_the_study_table_reads_a_spans_pull(tmp_path: Path) -> None:
    tasks = planted(export("spans")[0])
    definition = definition_of("spans")
    shown = {t["id"]: list(decode_systems(t["meta"][META_SYSTEMS])) for t in tasks}
    rows = [{"task_id": t["id"], "key": t["meta"][META_KEY], "systems": shown[t["id"]], "role": roles.STUDY}
            for t in tasks]  # fmt: skip
    rows[3]["shares"] = [rows[3]["systems"], ["another system"]]  # push --share-identical: one task, two systems
    rows[4]["role"], rows[5]["role"] = roles.GOLD, roles.ATTENTION
    folder = pull_folder(tmp_path / "pull", tasks, rows)
    report = pull.convert(folder / "export.json", definition, tmp_path / "out", USERS, workers=1)

    # planted: every task once (the shared copy is not a task), 3 per task, a second annotation, a skip, the
    # annotation seen twice on task 2 once
    assert report.counts == pull.Counts(len(tasks), 3 * len(tasks) + 1, 1)
    assert report.counts == table_counts(definition, folder)
    readings = [task_reading(t) for t in read_export(folder / "export.json", USERS)]
    assert [r.counted for r in readings].count(False) == 1  # the copy credited to "another system"
    assert [r.item for r in readings].count(True) == len(tasks) - 2  # gold and attention are no study items
    got = read(definition, [folder]).study
    assert len(got.items) == len(tasks) - 2 and got.shared == {rows[3]["key"]: 2}
    assert set(got.annotations.loc[got.annotations["role"] != roles.STUDY, "task_key"]) == {rows[4]["key"],
                                                                                           rows[5]["key"]}  # fmt: skip


def test_pull_counts_as_the_study_table_reads_a_ratings_pull_without_blinding(tmp_path: Path) -> None:
    tasks = planted(export("ratings")[0])
    definition = definition_of("ratings")
    folder = pull_folder(tmp_path / "pull", tasks)
    report = pull.convert(folder / "export.json", definition, tmp_path / "out", USERS, workers=1)
    assert report.counts == pull.Counts(len(tasks), 3 * len(tasks) + 1, 1)
    assert report.counts == table_counts(definition, folder)


def test_pull_in_parts_counts_as_the_study_table_reads(tmp_path: Path) -> None:
    tasks = planted(raw_export("qa-feedback", [DEV]))
    definition = load("qa-feedback")
    users = {1: "a@x", 2: "b@x", 7: "c@x"}
    folder = tmp_path / "pull"
    folder.mkdir()
    write_export(folder / "export.json", tasks)
    (folder / "annotators.json").write_text(json.dumps({str(k): v for k, v in users.items()}), "utf-8")
    whole = pull.convert(folder / "export.json", definition, tmp_path / "one", users, workers=1)
    parts = pull.convert(folder / "export.json", definition, tmp_path / "parts", users, workers=2)
    submitted = sum(1 for t in tasks for a in t["annotations"] if not a.get("was_cancelled"))
    assert whole.counts == pull.Counts(len(tasks), submitted - 1, 1)  # the annotation twice on its task: once
    assert parts.counts == whole.counts == table_counts(definition, folder)


def test_a_re_pull_keeping_unchanged_rows_counts_as_the_study_table_reads(tmp_path: Path) -> None:
    """The kept tasks' counts come from the earlier pull's rows index: they were counted by the same reading."""
    tasks = planted(raw_export("qa-feedback", [DEV]))
    definition = load("qa-feedback")
    users = {1: "a@x", 2: "b@x", 7: "c@x"}
    earlier = tmp_path / "earlier"
    earlier.mkdir()
    pull.convert(write_export(tmp_path / "first.json", tasks), definition, earlier, users, workers=1,
                 keep=pull.Keep(earlier, frozenset(), []))  # fmt: skip
    now = copy.deepcopy(tasks)
    now[5]["annotations"].append({**now[5]["annotations"][0], "id": 90003, "was_cancelled": True, "result": []})
    now[6]["annotations"].append(copy.deepcopy(now[6]["annotations"][0]))  # the same annotation twice: once
    folder = tmp_path / "pull"
    folder.mkdir()
    export_file = write_export(folder / "export.json", now)
    (folder / "annotators.json").write_text(json.dumps({str(k): v for k, v in users.items()}), "utf-8")
    segments = incremental.index_export(export_file)
    unchanged = frozenset(t for t, _, _ in segments if t not in {now[5]["id"], now[6]["id"]})
    out = tmp_path / "out"
    out.mkdir()
    kept = pull.convert(export_file, definition, out, users, workers=1, keep=pull.Keep(earlier, unchanged, segments))
    assert kept.kept == len(now) - 2  # tasks 0-2 (the skip, the second annotation, the doubled one) kept
    submitted = sum(1 for t in now for a in t["annotations"] if not a.get("was_cancelled"))
    assert kept.counts == pull.Counts(len(now), submitted - 2, 2)
    assert kept.counts == table_counts(definition, folder)


def test_an_annotation_on_two_tasks_of_one_export_is_the_one_rule_pull_does_not_share(tmp_path: Path) -> None:
    """Pull counts task by task (a re-pull does not read unchanged tasks again); the table counts an annotation
    seen on an earlier task once (several pulls of one project). A Label Studio export holds an annotation on one
    task: the server counts it once, so pull's check against the server refuses such an export."""
    tasks = export("ratings")[0]
    tasks[1]["annotations"].append(copy.deepcopy(tasks[0]["annotations"][0]))
    definition = definition_of("ratings")
    folder = pull_folder(tmp_path / "pull", tasks)
    report = pull.convert(folder / "export.json", definition, tmp_path / "out", USERS, workers=1)
    assert report.counts == pull.Counts(len(tasks), 3 * len(tasks) + 1, 0)
    assert table_counts(definition, folder) == pull.Counts(len(tasks), 3 * len(tasks), 0)
