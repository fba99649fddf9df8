"""Adjudication round trips through a real Label Studio, byte for byte.

pairwise-aspects: a seed-001 study (A, B, C; random answers) pushed with its judgments.
The items to adjudicate are those where two annotators' answers differ on an aspect,
counted here from the planted answers. The adjudicator picks A's version on some items and
B's on the others; the pulled ``adjudicated/`` folder holds exactly those items, each file
the release's canonical layout with the picked annotator's answers (written here
independently of annols).

qa-feedback: dev-set records pushed with their feedback (annotator ``original``); a second
annotator gives the same feedback on some records and another record's on the rest. The
items to adjudicate are those whose spans differ (counted here from the raw results). The
adjudicator picks the original; the pulled ``qa-feedback.json`` is those dev records in
the dataset's own layout, and every line is by ``adjudicated``.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

from annols import protocols
from annols.formats import format_for
from annols.labelstudio.client import LabelStudioClient
from tests.conftest import QA_DEV, LiveServer
from tests.formats.seed001_fixture import ASPECTS, canonical_file, make_seed001_study
from tests.study.test_push_pull import cli, shown_by_task

DEV_FEEDBACK = QA_DEV


def adjudicate(server: LiveServer, client: LabelStudioClient, protocol: str, title: str,
               pick: Any, tmp_path: Path) -> tuple[Path, list[dict[str, Any]], str]:  # fmt: skip
    """Adjudicate, let ``pick(task) -> model_version`` choose a version per task, pull."""
    into = f"{title} adjudication"
    code, out, err = cli(server, "adjudicate", protocol, "--project", title, "--into", into, cwd=tmp_path)
    assert code == 0, err
    project = client.find_project(into)
    assert project is not None
    tasks = sorted(client.export_tasks(project.id), key=lambda t: t["id"])
    me = client.whoami()["id"]
    # What the format keeps off the server (pairwise-aspects' sample number) is in the adjudication's manifest.
    rows = shown_by_task(tmp_path / ".annols", into)
    for task in tasks:
        assert not set(task["data"]) & set(rows[task["id"]].get("extra") or {})
        task["data"] = {**task["data"], **(rows[task["id"]].get("extra") or {})}
        versions = {p["model_version"]: p["result"] for p in client.task_predictions(task["id"])}
        client.create_annotation(task["id"], versions[pick(task)], completed_by=me, lead_time=3.0)
    # A second run adds nothing: the items are there already.
    code, again, err = cli(server, "adjudicate", protocol, "--project", title, "--into", into, cwd=tmp_path)
    assert code == 0, err
    assert again.splitlines()[-1].endswith(f"added 0, already present {len(tasks)}")
    pulled = tmp_path / "adjudicated"
    code, pull_out, err = cli(server, "pull", protocol, "--project", into, "-o", str(pulled), "--strict",
                              cwd=tmp_path)  # the manifest adjudicate wrote beside the study's  # fmt: skip
    assert code == 0, err
    assert "Counts match the server" in pull_out
    return pulled, tasks, out


def test_pairwise_aspects_disagreements_adjudicated(
    label_studio: LiveServer, client: LabelStudioClient, tmp_path: Path
) -> None:
    study = make_seed001_study(tmp_path / "human_evaluation", samples=12, seed=8, gaps=False)
    for n in range(4):  # on these, all three agree (random answers rarely do)
        s = study.samples[n]
        for annotator in "BC":
            study.answers[annotator][n] = dict(study.answers["A"][n])
            text = canonical_file(s.document, s.summary_1, s.summary_2, study.answers["A"][n])
            study.file(annotator, n).write_text(text, encoding="utf-8")
    title = "adjudicate pairwise"
    code, out, err = cli(label_studio, "push", "pairwise-aspects", str(study.root), "--project", title,
                         "--with-annotations", cwd=tmp_path)  # fmt: skip
    assert code == 0, err
    expected = sorted(n for n in range(12)
                      if any(len({study.answers[a][n][x] for a in "ABC"}) > 1 for x in ASPECTS))  # fmt: skip
    assert 0 < len(expected) <= 8

    def pick(task: dict[str, Any]) -> str:
        return "A" if task["data"]["sample"] % 2 == 0 else "B"

    pulled, tasks, out = adjudicate(label_studio, client, "pairwise-aspects", title, pick, tmp_path)
    assert out.splitlines()[0] == f"{len(expected)} of 12 items with two or more annotators disagree"
    assert sorted(t["data"]["sample"] for t in tasks) == expected
    for task in tasks:
        names = sorted(p["model_version"] for p in client.task_predictions(task["id"]))
        assert names == ["A", "B", "C"]
    written = sorted(p.relative_to(pulled).as_posix() for p in (pulled / "adjudicated").glob("*.txt"))
    assert written == sorted(f"adjudicated/{n}.txt" for n in expected)
    for n in expected:
        s = study.samples[n]
        answers = study.answers["A" if n % 2 == 0 else "B"][n]
        want = canonical_file(s.document, s.summary_1, s.summary_2, answers)
        assert (pulled / "adjudicated" / f"{n}.txt").read_bytes() == want.encode("utf-8"), n
    assert not any((pulled / a).exists() for a in "ABC")


def _spans(result: list[dict[str, Any]]) -> set[tuple[Any, ...]]:
    return {(i["from_name"], *(tuple(i["value"].get(k) or ()) for k in ("labels", "paragraphlabels")),
             str(i["value"]["start"]), str(i["value"]["end"]))
            for i in result if i.get("type") in ("labels", "paragraphlabels")}  # fmt: skip


def test_qa_feedback_disagreements_adjudicated(
    label_studio: LiveServer, client: LabelStudioClient, tmp_path: Path
) -> None:
    records = json.loads(DEV_FEEDBACK.read_text("utf-8"))[30:42]
    source = tmp_path / "batch.json"
    source.write_text(json.dumps(records), encoding="utf-8")
    title = "adjudicate qa-feedback"
    code, out, err = cli(label_studio, "push", "qa-feedback", str(source), "--project", title,
                         "--with-annotations", cwd=tmp_path)  # fmt: skip
    assert code == 0, err
    definition = protocols.load("qa-feedback")
    read = list(format_for(definition).read([source], definition))
    results = [t.annotations[0].result for t in read]
    project = client.find_project(title)
    assert project is not None
    second = client.users().get("second@example.org") or client.create_user("second@example.org")
    by_question = {t["data"]["question"]: t for t in client.export_tasks(project.id)}
    given = []
    for n, record in enumerate(records):
        result = results[n] if n < 5 else results[(n + 1) % len(records)]
        given.append(result)
        client.create_annotation(by_question[record["question"]]["id"], result, completed_by=second)
    expected = [n for n in range(len(records)) if _spans(results[n]) != _spans(given[n])]
    assert 3 <= len(expected) <= 7

    pulled, _, out = adjudicate(label_studio, client, "qa-feedback", title, lambda t: "original", tmp_path)
    assert out.splitlines()[0] == f"{len(expected)} of {len(records)} items with two or more annotators disagree"
    want = json.dumps([records[n] for n in expected], indent=2)
    assert (pulled / "qa-feedback.json").read_bytes() == want.encode("utf-8")
    lines = (pulled / "qa-feedback.jsonl").read_text("utf-8").splitlines()
    assert [json.loads(line) for line in lines] == [records[n] for n in expected]
    with open(pulled / "qa-feedback-annotators.csv", encoding="utf-8", newline="") as f:
        assert {row["annotator"] for row in csv.DictReader(f)} == {"adjudicated"}
