"""A re-pull's ``convert`` keeps the earlier pull's result rows of the tasks that did not change (offline): the
files are byte for byte those of converting every task, and what cannot be kept is converted in full."""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from annols.labelstudio import incremental
from annols.protocols import load_definition
from annols.study import pull
from annols.study.exports import write_blinding
from annols.study.push import build_tasks
from tests.conftest import ROOT
from tests.formats.test_generic_judgments import RATINGS, ratings_row, write_csv
from tests.study.test_pull_parts import (
    DEV,
    SUMMARY_FLAWS_INPUT,
    load,
    raw_export,
    sentence_errors_input,
    write_export,
)


def convert(export: Path, out: Path, keep: pull.Keep | None, workers: int = 1) -> pull.ConvertReport:
    out.mkdir(parents=True, exist_ok=True)
    return pull.convert(export, load("qa-feedback"), out, {1: "a@x", 2: "b@x", 7: "c@x"}, workers=workers, keep=keep)


def files_of(folder: Path) -> dict[str, bytes]:
    found = {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file() and p.name != pull.ROWS_FILE}
    assert {"qa-feedback.jsonl", "qa-feedback.json", "qa-feedback-annotators.csv", "results.csv"} <= set(found)
    return found


CORRECTED = {"id": "c", "from_name": "corrected_prediction", "to_name": "prediction", "type": "textarea",
             "value": {"text": ["A corrected answer, much longer than the one it corrects. " * 20]}, "origin": "manual"}


def changed(tasks: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], set[int]]:
    """The tasks after annotators worked: a new judgment, a skip, an edit, a judgment gone, a task deleted; the
    first task's record made longer (the first entry of qa-feedback.json), a record made shorter, the last task's
    judgment gone."""
    now = copy.deepcopy(tasks)
    first = now[1]["annotations"][0]
    now[1]["annotations"].append({**first, "id": 9001, "completed_by": 7})
    now[4]["annotations"].append({**first, "id": 9002, "completed_by": 7, "was_cancelled": True, "result": []})
    now[6]["annotations"][0]["result"] = now[2]["annotations"][0]["result"]
    now[8]["annotations"] = []
    now[0]["annotations"][0]["result"] = [*(r for r in now[0]["annotations"][0]["result"]
                                            if r.get("from_name") != CORRECTED["from_name"]), CORRECTED]
    now[12]["annotations"][0]["result"] = []
    now[-1]["annotations"] = []
    del now[10]
    return now, {now[i]["id"] for i in (0, 1, 4, 6, 8, 11, len(now) - 1)}


@pytest.mark.parametrize(("workers", "blinded"), [(1, False), (2, False), (1, True)])
def test_a_re_pull_keeps_the_rows_of_unchanged_tasks_byte_for_byte(tmp_path: Path, workers: int,
                                                                   blinded: bool) -> None:  # fmt: skip
    tasks = raw_export("qa-feedback", [DEV])
    assert len(tasks) > 12
    if blinded:  # the pull's blinding.jsonl beside the exports: keys and roles from it
        write_blinding(tmp_path, [{"task_id": t["id"], "key": f"key {t['id']}", "systems": [], "role": "study"}
                                  for t in tasks])  # fmt: skip
    earlier = tmp_path / "earlier"
    first = convert(write_export(tmp_path / "first.json", tasks), earlier, pull.Keep(earlier, frozenset(), []),
                    workers)  # fmt: skip
    assert first.kept == 0 and (earlier / pull.ROWS_FILE).exists()
    index = json.loads((earlier / pull.ROWS_FILE).read_text("utf-8"))
    assert [t[0] for t in index["tasks"]] == [t["id"] for t in tasks]

    now, touched = changed(tasks)
    export = write_export(tmp_path / "now.json", now)
    segments = incremental.index_export(export)
    unchanged = frozenset(t for t, _, _ in segments if t not in touched)
    kept = convert(export, tmp_path / "kept", pull.Keep(earlier, unchanged, segments))
    full = convert(export, tmp_path / "full", pull.Keep(tmp_path / "full", frozenset(), []))
    assert kept.kept == len(now) - len(touched)
    assert files_of(tmp_path / "kept") == files_of(tmp_path / "full")
    assert (tmp_path / "kept" / pull.ROWS_FILE).read_bytes() == (tmp_path / "full" / pull.ROWS_FILE).read_bytes()
    assert (kept.counts, kept.violations, kept.input_warnings) == (full.counts, full.violations, full.input_warnings)
    assert [p.name for p in kept.files] == [p.name for p in full.files]
    if blinded:
        assert b"key 2," in (tmp_path / "kept" / "results.csv").read_bytes()
    # The changes the test means: records longer and shorter, one more, none (the index's bytes per task and file).
    after = {t[0]: t for t in json.loads((tmp_path / "kept" / pull.ROWS_FILE).read_text("utf-8"))["tasks"]}
    before = {t[0]: t for t in index["tasks"]}
    jsonl = 0  # qa-feedback.jsonl's place among the format's files
    assert after[now[0]["id"]][8][jsonl] > before[now[0]["id"]][8][jsonl] > 0
    assert 0 < after[now[11]["id"]][8][jsonl] < before[now[11]["id"]][8][jsonl]
    assert (after[now[1]["id"]][4], after[now[-1]["id"]][4], after[now[-1]["id"]][8]) == (2, 0, [0, 0, 0])
    assert tasks[10]["id"] not in after


def test_a_re_pull_of_a_re_pull_keeps_what_the_first_kept(tmp_path: Path) -> None:
    """The index a re-pull writes (its renumbered lines' bytes counted anew) serves the next re-pull."""
    tasks = raw_export("qa-feedback", [DEV])
    earlier = tmp_path / "earlier"
    convert(write_export(tmp_path / "first.json", tasks), earlier, pull.Keep(earlier, frozenset(), []))
    now, touched = changed(tasks)
    export = write_export(tmp_path / "now.json", now)
    segments = incremental.index_export(export)
    second = tmp_path / "second"
    convert(export, second, pull.Keep(earlier, frozenset(t for t, _, _ in segments if t not in touched), segments))

    later = copy.deepcopy(now)  # an annotation added before every other one: every later line number moves
    later[2]["annotations"].append({**later[2]["annotations"][0], "id": 9101, "completed_by": 7})
    later[-2]["annotations"][0]["result"] = []
    export = write_export(tmp_path / "later.json", later)
    segments = incremental.index_export(export)
    unchanged = frozenset(t for t, _, _ in segments if t not in {later[2]["id"], later[-2]["id"]})
    third = convert(export, tmp_path / "third", pull.Keep(second, unchanged, segments))
    full = convert(export, tmp_path / "full", pull.Keep(tmp_path / "full", frozenset(), []))
    assert third.kept == len(later) - 2
    assert (third.counts, third.violations) == (full.counts, full.violations)
    assert files_of(tmp_path / "third") == files_of(tmp_path / "full")
    assert (tmp_path / "third" / pull.ROWS_FILE).read_bytes() == (tmp_path / "full" / pull.ROWS_FILE).read_bytes()


def test_what_cannot_be_kept_is_converted_in_full(tmp_path: Path) -> None:
    tasks = raw_export("qa-feedback", [DEV])
    earlier = tmp_path / "earlier"
    convert(write_export(tmp_path / "first.json", tasks), earlier, pull.Keep(earlier, frozenset(), []))
    now, touched = changed(tasks)
    export = write_export(tmp_path / "now.json", now)
    segments = incremental.index_export(export)
    unchanged = frozenset(t for t, _, _ in segments if t not in touched)
    full = tmp_path / "full"
    convert(export, full, None)

    damaged = tmp_path / "damaged"
    shutil.copytree(earlier, damaged)
    with open(damaged / "qa-feedback.jsonl", "r+b") as f:  # a result file cut short
        f.truncate(f.seek(0, 2) - 3)
    assert convert(export, tmp_path / "a", pull.Keep(damaged, unchanged, segments)).kept == 0
    assert files_of(tmp_path / "a") == files_of(full)

    other = tmp_path / "other"  # an index of another annols (or definition, or annotators)
    shutil.copytree(earlier, other)
    index = json.loads((other / pull.ROWS_FILE).read_text("utf-8"))
    (other / pull.ROWS_FILE).write_text(json.dumps({**index, "context": "0" * 64}), encoding="utf-8")
    assert convert(export, tmp_path / "b", pull.Keep(other, unchanged, segments)).kept == 0
    assert files_of(tmp_path / "b") == files_of(full)

    # A task said unchanged that the earlier pull did not convert: nothing kept rather than a wrong file.
    assert convert(export, tmp_path / "c", pull.Keep(earlier, unchanged | {10**6}, segments)).kept == 0
    assert files_of(tmp_path / "c") == files_of(full)


def test_the_generic_format_keeps_its_lines_too(tmp_path: Path) -> None:
    """A user's own definition (the generic JSONL out): a re-pull copies the unchanged tasks' lines, byte for byte
    a full pull's."""
    definition = load_definition(RATINGS)
    rows = [ratings_row(doc, a, value=doc) for doc in range(14) for a in ("A", "B")]
    tasks = []
    for key, _systems, task, repeat in build_tasks(definition, [write_csv(tmp_path / "in.csv", rows)],
                                                   with_annotations=True):  # fmt: skip
        if repeat:
            continue
        task_id = len(tasks) + 1
        tasks.append({"id": task_id,  # in the order of Label Studio's export (its id and annotations first)
                      "annotations": [{"id": task_id * 10 + i, "completed_by": 1 + i, "result": a["result"],
                                       "was_cancelled": False, "lead_time": 1.5, "task": task_id,
                                       "created_at": "2026-11-21T10:00:00Z"}
                                      for i, a in enumerate(task["annotations"])],
                      "drafts": [], "predictions": [], "data": task["data"],
                      "meta": {**task["meta"], "annols_key": key}, "created_at": "2026-11-21T09:00:00Z"})  # fmt: skip
    assert len(tasks) == 14 and all(len(t["annotations"]) == 2 for t in tasks)
    users = {1: "a@x", 2: "b@x", 7: "c@x"}

    def run(export: Path, out: Path, keep: pull.Keep) -> pull.ConvertReport:
        out.mkdir(parents=True, exist_ok=True)
        return pull.convert(export, definition, out, users, keep=keep)

    earlier = tmp_path / "earlier"
    run(write_export(tmp_path / "first.json", tasks), earlier, pull.Keep(earlier, frozenset(), []))
    assert (earlier / pull.ROWS_FILE).exists()
    now = copy.deepcopy(tasks)
    now[0]["annotations"].append({**now[0]["annotations"][0], "id": 9001, "completed_by": 7})  # one more line
    now[5]["annotations"][1]["result"] = now[5]["annotations"][1]["result"][:2]  # a shorter line
    now[9]["annotations"] = []
    del now[11]
    touched = {now[i]["id"] for i in (0, 5, 9)}
    export = write_export(tmp_path / "now.json", now)
    segments = incremental.index_export(export)
    kept = run(export, tmp_path / "kept", pull.Keep(earlier, frozenset(t for t, _, _ in segments
                                                                       if t not in touched), segments))  # fmt: skip
    full = run(export, tmp_path / "full", pull.Keep(tmp_path / "full", frozenset(), []))
    assert kept.kept == len(now) - 3
    assert (kept.counts, kept.violations) == (full.counts, full.violations)
    name = f"{definition.name}.jsonl"
    for n in (name, "results.csv", "violations.csv", pull.ROWS_FILE):
        assert (tmp_path / "kept" / n).read_bytes() == (tmp_path / "full" / n).read_bytes(), n
    assert (tmp_path / "kept" / name).read_bytes().count(b"\n") == 2 * len(now) - 2 + 1


def test_the_rows_index_holds_for_the_same_definition_read_from_another_place(tmp_path: Path) -> None:
    """A re-pull run from another checkout (the definition file elsewhere) keeps the earlier pull's rows; a
    definition that reads otherwise does not."""
    text = (ROOT / "examples" / "summeval-ratings.toml").read_text("utf-8")
    paths = []
    for place in ("one", "two"):
        (tmp_path / place).mkdir()
        paths.append(tmp_path / place / "summeval-ratings.toml")
        paths[-1].write_text(text, "utf-8")
    first, second = (load_definition(p) for p in paths)
    assert first.source != second.source
    out = tmp_path / "pull"
    out.mkdir()
    fmt = pull.format_for(first)
    assert pull._rows_context(first, fmt, out) == pull._rows_context(second, fmt, out)
    (tmp_path / "three.toml").write_text(text.replace('name = "', 'name = "other-', 1), "utf-8")
    assert pull._rows_context(load_definition(tmp_path / "three.toml"), fmt, out) != pull._rows_context(first, fmt, out)


def tree_of(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` (gold/ too) but the rows index, by its path in it."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and p.name != pull.ROWS_FILE}  # fmt: skip


# Which task of the planted study each case changes (its place in the export).
ROLES_CHANGED = {"a study item": 1, "a gold item": 3, "an attention check": 7, "a shared task": 5}


def readings_counted(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The ids of the tasks convert reads from now on (each call of ``pull.task_reading``), in order."""
    read: list[int] = []
    real = pull.task_reading

    def counted(task: Any, index: int = 0) -> Any:
        read.append(task.id)
        return real(task, index)

    monkeypatch.setattr(pull, "task_reading", counted)
    return read


def roles_blinding(tasks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Blinding rows of a study with a gold item, an attention check and two tasks shared by the records of
    identical outputs (push --share-identical: by two systems, and by three)."""
    rows: list[dict[str, Any]] = [{"task_id": t["id"], "key": f"key {t['id']}", "systems": ["sys-a"],
                                   "role": "study"} for t in tasks]  # fmt: skip
    rows[3]["role"], rows[7]["role"] = "gold", "attention"
    rows[5]["shares"] = [["sys-a"], ["sys-b"]]
    rows[9]["shares"] = [["sys-a"], ["sys-c"], ["sys-b"]]
    return rows


@pytest.mark.parametrize("case", list(ROLES_CHANGED))
def test_a_re_pull_keeps_gold_items_attention_checks_and_shared_tasks(
    tmp_path: Path, case: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Gold items and attention checks (their records in gold/) and a task shared by several systems (its copies
    with it) are kept as study items are: only the changed task is converted (with its copies), and every file,
    gold/'s too, is byte for byte a full pull's."""
    tasks = raw_export("qa-feedback", [DEV])
    write_blinding(tmp_path, roles_blinding(tasks))  # beside the exports: roles and shares from it
    earlier = tmp_path / "earlier"
    first = convert(write_export(tmp_path / "first.json", tasks), earlier, pull.Keep(earlier, frozenset(), []))
    assert first.kept == 0 and (earlier / pull.ROWS_FILE).exists()
    assert (earlier / pull.GOLD_DIR / "qa-feedback-annotators.csv").exists()

    now = copy.deepcopy(tasks)  # one more judgment of the task, every later line of the annotators' tables renumbered
    at = ROLES_CHANGED[case]
    now[at]["annotations"].append({**now[at]["annotations"][0], "id": 9001, "completed_by": 7})
    export = write_export(tmp_path / "now.json", now)
    segments = incremental.index_export(export)
    read = readings_counted(monkeypatch)
    kept = convert(export, tmp_path / "kept", pull.Keep(earlier, frozenset(t["id"] for t in now) - {now[at]["id"]},
                                                       segments))  # fmt: skip
    assert read == [now[at]["id"]] * (2 if case == "a shared task" else 1)  # the task (and its copy) alone
    assert kept.kept == len(now) - 1
    read.clear()
    full = convert(export, tmp_path / "full", pull.Keep(tmp_path / "full", frozenset(), []))
    assert len(read) == len(now) + 1 + 2  # a full pull reads every task and the shared ones' copies
    assert tree_of(tmp_path / "kept") == tree_of(tmp_path / "full")
    assert (tmp_path / "kept" / pull.ROWS_FILE).read_bytes() == (tmp_path / "full" / pull.ROWS_FILE).read_bytes()
    assert (kept.counts, kept.violations, kept.input_warnings) == (full.counts, full.violations, full.input_warnings)
    names = [[str(p.relative_to(tmp_path / which)) for p in r.files] for which, r in (("kept", kept), ("full", full))]
    assert names[0] == names[1]
    gold = (tmp_path / "full" / pull.GOLD_DIR / "qa-feedback-annotators.csv").read_text("utf-8")
    assert "key 4," in gold and "key 8," in gold and "key 4," not in (tmp_path / "full" / "qa-feedback-annotators.csv"
                                                                       ).read_text("utf-8")  # fmt: skip
    assert ",sys-c," in (tmp_path / "full" / "results.csv").read_text("utf-8")  # a shared task's copy's rows


def test_a_re_pull_keeps_the_rows_of_unchanged_tasks_with_hidden_judges(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Hidden judges set beside the tasks (pull's judge store): a re-pull converts only the changed task, its judge
    answers set beside it again and the kept tasks' marked used; the files are a full pull's. Another judge file
    (an answer changed) converts every task."""
    from annols.study.judges import Judges
    from tests.report import study
    from tests.report.test_judges_read_report import lower_judge, write_study
    from tests.report.test_style_reports import definition_of

    definition = definition_of("ratings")
    tasks = [{"id": t["id"], "annotations": t["annotations"], **t}  # in the order of Label Studio's export
             for t in json.loads((write_study(tmp_path) / "export.json").read_text("utf-8"))]  # fmt: skip
    judge_file = lower_judge(tmp_path)
    users = {uid: email for email, uid in study.USER_IDS.items()}

    def run(export: Path, out: Path, keep: pull.Keep) -> pull.ConvertReport:
        out.mkdir(parents=True, exist_ok=True)
        judges = Judges.read(definition, [judge_file])
        report = pull.convert(export, definition, out, users, judges=judges, keep=keep)
        assert judges.check_used() == []  # every answer met its task: the kept ones' too
        return report

    earlier = tmp_path / "earlier"
    run(write_export(tmp_path / "first.json", tasks), earlier, pull.Keep(earlier, frozenset(), []))
    assert (earlier / pull.ROWS_FILE).exists()
    assert b'"annotator": "judge:low"' in (earlier / f"{definition.name}.jsonl").read_bytes()
    now = copy.deepcopy(tasks)
    now[2]["annotations"].append({**now[2]["annotations"][0], "id": 99001})  # an annotator's second judgment
    export = write_export(tmp_path / "now.json", now)
    segments = incremental.index_export(export)
    unchanged = frozenset(t["id"] for t in now) - {now[2]["id"]}
    read = readings_counted(monkeypatch)
    kept = run(export, tmp_path / "kept", pull.Keep(earlier, unchanged, segments))
    assert read == [now[2]["id"]] and kept.kept == len(now) - 1
    full = run(export, tmp_path / "full", pull.Keep(tmp_path / "full", frozenset(), []))
    assert tree_of(tmp_path / "kept") == tree_of(tmp_path / "full")
    assert (tmp_path / "kept" / pull.ROWS_FILE).read_bytes() == (tmp_path / "full" / pull.ROWS_FILE).read_bytes()
    assert (kept.counts, kept.violations) == (full.counts, full.violations)

    lines = judge_file.read_text("utf-8").splitlines()  # one answer of the judge changed: nothing is kept
    judge_file.write_text("\n".join([lines[1], lines[0], *lines[2:]]) + "\n", "utf-8")  # (each answer's number)
    other = run(export, tmp_path / "other", pull.Keep(earlier, unchanged, segments))
    full = run(export, tmp_path / "full2", pull.Keep(tmp_path / "full2", frozenset(), []))
    assert other.kept == 0 and tree_of(tmp_path / "other") == tree_of(tmp_path / "full2")
    assert tree_of(tmp_path / "full2") != tree_of(tmp_path / "full")


def test_gold_items_all_deleted_leave_no_gold_folder(tmp_path: Path) -> None:
    """The gold item and the attention check deleted on the server, nothing else changed: a full pull writes no
    gold/, so the re-pull cannot splice the kept tasks into the earlier gold/ files: it converts every task."""
    tasks = raw_export("qa-feedback", [DEV])
    write_blinding(tmp_path, roles_blinding(tasks))
    earlier = tmp_path / "earlier"
    convert(write_export(tmp_path / "first.json", tasks), earlier, pull.Keep(earlier, frozenset(), []))
    now = [t for n, t in enumerate(tasks) if n not in (3, 7)]
    export = write_export(tmp_path / "now.json", now)
    segments = incremental.index_export(export)
    kept = convert(export, tmp_path / "kept", pull.Keep(earlier, frozenset(t["id"] for t in now), segments))
    convert(export, tmp_path / "full", pull.Keep(tmp_path / "full", frozenset(), []))
    assert kept.kept == 0 and not (tmp_path / "kept" / pull.GOLD_DIR).exists()
    assert tree_of(tmp_path / "kept") == tree_of(tmp_path / "full")


USERS = {1: "a@x", 2: "b@x", 7: "c@x"}


def pulled(definition: Any, export: Path, out: Path, keep: pull.Keep) -> pull.ConvertReport:
    out.mkdir(parents=True, exist_ok=True)
    return pull.convert(export, definition, out, USERS, workers=1, keep=keep)


def re_pulled(tmp_path: Path, definition: Any, before: Path, now: list[dict[str, Any]], touched: set[int],
              name: str) -> Path:  # fmt: skip
    """A re-pull of ``now`` into ``name`` keeping the pull in ``before`` but for the tasks ``touched``: only those
    converted, every file and the rows index byte for byte a full pull's."""
    export = write_export(tmp_path / f"{name}.json", now)
    segments = incremental.index_export(export)
    kept = pulled(definition, export, tmp_path / name,
                  pull.Keep(before, frozenset(t["id"] for t in now) - touched, segments))  # fmt: skip
    full = pulled(definition, export, tmp_path / f"{name}-full", pull.Keep(tmp_path / f"{name}-full", frozenset(), []))
    assert kept.kept == len(now) - len(touched)
    assert (kept.counts, kept.violations) == (full.counts, full.violations)
    assert tree_of(tmp_path / name) == tree_of(tmp_path / f"{name}-full")
    assert (tmp_path / name / pull.ROWS_FILE).read_bytes() == (tmp_path / f"{name}-full" / pull.ROWS_FILE
                                                               ).read_bytes()  # fmt: skip
    return tmp_path / name


def test_summary_flaws_keeps_its_entries_too(tmp_path: Path) -> None:
    """summary-flaws' text blocks (a blank line between entries) and JSONL: a re-pull copies the unchanged tasks'
    entries, byte for byte a full pull's, the first entry changed, and then gone (the next one first, no blank line
    before it)."""
    definition = load("summary-flaws")
    tasks = raw_export("summary-flaws", [SUMMARY_FLAWS_INPUT], copies=3)
    assert len(tasks) >= 6 and all(t["annotations"] for t in tasks)
    earlier = tmp_path / "earlier"
    pulled(definition, write_export(tmp_path / "first.json", tasks), earlier, pull.Keep(earlier, frozenset(), []))
    assert (earlier / pull.ROWS_FILE).exists()
    now = copy.deepcopy(tasks)  # the first entry longer (one more judgment), a later task's judgment gone
    now[0]["annotations"].append({**now[0]["annotations"][0], "id": 9001, "completed_by": 7})
    now[3]["annotations"] = []
    second = re_pulled(tmp_path, definition, earlier, now, {now[0]["id"], now[3]["id"]}, "second")
    later = copy.deepcopy(now)  # the first task deleted: the kept second task's entry is the first
    del later[0]
    later[-1]["annotations"].append({**later[-1]["annotations"][0], "id": 9002, "completed_by": 7})
    third = re_pulled(tmp_path, definition, second, later, {later[-1]["id"]}, "third")
    assert (third / "summary-flaws.txt").read_bytes().startswith(b"##### Task ")


def test_sentence_errors_keeps_its_rows_too(tmp_path: Path) -> None:
    """sentence-errors' CSV and JSONL, a row per sentence row of a judgment (a task's rows: the format's
    record_count), an explanation with a quote and a line break inside its CSV row: a re-pull copies the unchanged
    tasks' rows, byte for byte a full pull's."""
    definition = load("sentence-errors")
    tasks = raw_export("sentence-errors", [sentence_errors_input(tmp_path / "in.jsonl")], copies=3)
    assert len(tasks) >= 12
    earlier = tmp_path / "earlier"
    pulled(definition, write_export(tmp_path / "first.json", tasks), earlier, pull.Keep(earlier, frozenset(), []))
    assert (earlier / pull.ROWS_FILE).exists()
    assert b'"x, ""y""\nz"' in (earlier / "sentence-errors.csv").read_bytes()  # a row over two lines
    now = copy.deepcopy(tasks)
    now[0]["annotations"].append({**now[0]["annotations"][0], "id": 9001, "completed_by": 7})  # more rows
    now[4]["annotations"][1]["result"] = now[4]["annotations"][1]["result"][:1]  # fewer
    now[7]["annotations"] = []
    del now[10]
    re_pulled(tmp_path, definition, earlier, now, {now[i]["id"] for i in (0, 4, 7)}, "second")
