"""Gold items through a real Label Studio: push --gold, annotate, pull, report.

QA-Feedback: 16 study records and 6 gold records (with their ``feedback``) from the
dev set. Checked here:

- every task carries the same meta (its key only: roles are in the manifest), gold tasks
  sit among the study tasks (not at the end), and no gold task holds its feedback;
- pull: ``results.csv`` says each row's role (last column); the protocol's own files hold
  the study's records only, ``gold/`` the gold ones, both in the dataset's format;
- report --gold: the annotator who copies the gold feedback scores 1, the one who answers
  with another record's feedback scores what the span F1 computed here says.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

from annols import protocols
from annols.formats import format_for
from annols.labelstudio.client import LabelStudioClient
from annols.study.roles import GOLD, STUDY
from tests.conftest import QA_DEV, LiveServer
from tests.study.test_push_pull import cli, shown_by_task

DEV_FEEDBACK = QA_DEV
STUDY_RECORDS, GOLD_RECORDS = range(0, 16), range(16, 22)
CAREFUL, CARELESS = "careful@example.org", "careless@example.org"


def _spans(result: list[dict]) -> dict[str, set[tuple]]:  # type: ignore[type-arg]
    out: dict[str, set[tuple]] = {"errors": set(), "passages_labels": set()}  # type: ignore[type-arg]
    for item in result:
        value = item.get("value", {})
        if item.get("from_name") == "errors":
            out["errors"].add((value["labels"][0], str(value["start"]), str(value["end"])))
        elif item.get("from_name") == "passages_labels":
            out["passages_labels"].add((value["paragraphlabels"][0], str(value["start"]), str(value["end"])))
    return out


def _f1(a: set, b: set) -> float:  # type: ignore[type-arg]
    return 1.0 if not a and not b else 2 * len(a & b) / (len(a) + len(b))


def test_gold_items_pushed_unseen_pulled_apart_and_scored(
    label_studio: LiveServer, client: LabelStudioClient, tmp_path: Path
) -> None:
    records = json.loads(DEV_FEEDBACK.read_text("utf-8"))
    study_file, gold_file = tmp_path / "study.json", tmp_path / "gold.json"
    study_file.write_text(json.dumps([records[i] for i in STUDY_RECORDS]), encoding="utf-8")
    gold_file.write_text(json.dumps([records[i] for i in GOLD_RECORDS]), encoding="utf-8")
    title = "gold qa-feedback"
    code, out, err = cli(label_studio, "push", "qa-feedback", str(study_file), "--gold", str(gold_file),
                         "--project", title, "--seed", "4", cwd=tmp_path)  # fmt: skip
    assert code == 0, err
    assert out.splitlines()[-1] == "created 22, already present 0, total 22"

    definition = protocols.load("qa-feedback")
    fmt = format_for(definition)
    results = {t.key: t.annotations[0].result for t in fmt.read([study_file, gold_file], definition)}
    project = client.find_project(title)
    assert project is not None
    tasks = sorted(client.export_tasks(project.id), key=lambda t: t["id"])
    manifest = shown_by_task(tmp_path / ".annols", title)
    roles = [manifest[t["id"]]["role"] for t in tasks]
    assert roles.count(GOLD) == len(GOLD_RECORDS) and roles.count(STUDY) == len(STUDY_RECORDS)
    assert roles[-len(GOLD_RECORDS) :] != [GOLD] * len(GOLD_RECORDS)  # spread, not appended
    assert {tuple(t["meta"]) for t in tasks} == {("annols_key",)}  # the same keys: the role is not on the server
    assert len({tuple(len(str(v)) for v in t["meta"].values()) for t in tasks}) == 1
    for task in tasks:  # the record's other fields stay in the manifest, without the gold feedback
        assert "record" not in task["data"]
        assert json.loads(manifest[task["id"]]["extra"]["record"])["feedback"] is None

    users = client.users()
    ids = {who: users.get(who) or client.create_user(who) for who in (CAREFUL, CARELESS)}
    key_of = {t["id"]: manifest[t["id"]]["key"] for t in tasks}  # the server holds an HMAC of each
    gold_keys = [key_of[t["id"]] for t, r in zip(tasks, roles, strict=True) if r == GOLD]
    study_keys = [key_of[t["id"]] for t, r in zip(tasks, roles, strict=True) if r == STUDY]
    wrong = {key: results[study_keys[n]] for n, key in enumerate(gold_keys)}  # another record's feedback
    for task in tasks:
        key = key_of[task["id"]]
        client.create_annotation(task["id"], results[key], completed_by=ids[CAREFUL], lead_time=5.0)
        client.create_annotation(task["id"], wrong.get(key, results[key]), completed_by=ids[CARELESS],
                                 lead_time=5.0)  # fmt: skip

    pulled = tmp_path / "pulled"
    code, out, err = cli(label_studio, "pull", "qa-feedback", "--project", title, "-o", str(pulled), cwd=tmp_path)
    assert code == 0, err
    with open(pulled / "results.csv", encoding="utf-8", newline="") as f:
        reader = csv.reader(f)
        header = next(reader)
        rows = list(reader)
    assert header[-1] == "role"
    by_key = {r[0]: r[-1] for r in rows}
    assert {k for k, role in by_key.items() if role == GOLD} == set(gold_keys)
    assert {k for k, role in by_key.items() if role == STUDY} == set(study_keys)
    study_lines = (pulled / "qa-feedback.jsonl").read_text("utf-8").splitlines()
    gold_lines = (pulled / "gold" / "qa-feedback.jsonl").read_text("utf-8").splitlines()
    assert len(study_lines) == 2 * len(STUDY_RECORDS) and len(gold_lines) == 2 * len(GOLD_RECORDS)
    questions = {records[i]["question"] for i in GOLD_RECORDS}
    assert not any(json.loads(line)["question"] in questions for line in study_lines)
    assert all(json.loads(line)["question"] in questions for line in gold_lines)
    # The careful annotator's gold lines are the gold records themselves.
    gold_records = [json.loads(line) for line in gold_lines]
    assert all(records[i] in gold_records for i in GOLD_RECORDS)

    report = tmp_path / "report"
    code, out, err = cli(label_studio, "report", "qa-feedback", str(pulled), "--gold", str(gold_file),
                         "--min-gold-accuracy", "0.9", "-o", str(report))  # fmt: skip
    assert code == 0, err
    with open(report / "tables" / "gold_accuracy.csv", encoding="utf-8", newline="") as f:
        accuracy = {row["annotator"]: row for row in csv.DictReader(f)}
    assert float(accuracy[CAREFUL]["accuracy"]) == 1.0 and accuracy[CAREFUL]["gold items"] == "6"
    expected = []
    for key in gold_keys:  # each item: the mean over its span controls of the F1 of exact spans
        known, given = _spans(results[key]), _spans(wrong[key])
        expected.append(sum(_f1(known[c], given[c]) for c in known) / len(known))
    assert abs(float(accuracy[CARELESS]["accuracy"]) - sum(expected) / len(expected)) < 5e-5
    assert float(accuracy[CARELESS]["accuracy"]) < 0.5
    assert (accuracy[CAREFUL]["flagged"], accuracy[CARELESS]["flagged"]) == ("no", "yes")
