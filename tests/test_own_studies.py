"""An own definition in each of the five styles, through the whole loop on the real server:
`annols push` (blinded), three annotators through the API, `annols pull`, `annols report`.

The pulled judgments must be the planted ones, unblinded; every number of the report's
style tables must equal what the test computes from the plant (tests/own_study.py)."""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from annols import blinding
from annols.labelstudio import LabelStudioClient

from . import own_study
from .conftest import LiveServer
from .own_study import ANNOTATORS, ITEMS, STUDIES, OwnStudy
from .test_push_pull import cli


@dataclass(frozen=True)
class Pulled:
    study: OwnStudy
    folder: Path
    report: Path
    shown: dict[int, tuple[str, ...]]  # item -> systems in the order the task showed them
    shown_by_task: dict[str, tuple[str, ...]]  # the same by task id

    def truth(self, item: int, annotator: str) -> Any:
        return self.study.truth(item, annotator)

    def jsonl(self) -> list[dict[str, Any]]:
        path = self.folder / f"{self.study.name}.jsonl"
        return [json.loads(line) for line in path.read_text("utf-8").splitlines()]

    def results(self) -> list[dict[str, str]]:
        with (self.folder / "results.csv").open(encoding="utf-8", newline="") as f:
            return list(csv.DictReader(f))

    def table(self, name: str) -> list[dict[str, str]]:
        with (self.report / "tables" / f"{name}.csv").open(encoding="utf-8", newline="") as f:
            return list(csv.DictReader(f))


def email(annotator: str) -> str:
    return f"{annotator}@own.study"


def annotator_of(address: str) -> str:
    return address.split("@")[0]


@pytest.fixture(scope="module", params=list(STUDIES))
def pulled(request: pytest.FixtureRequest, label_studio: LiveServer, client: LabelStudioClient,
           tmp_path_factory: pytest.TempPathFactory) -> Pulled:  # fmt: skip
    study: OwnStudy = STUDIES[request.param]
    tmp = tmp_path_factory.mktemp(study.name)
    definition = tmp / f"{study.name}.toml"
    definition.write_text(study.definition, encoding="utf-8")
    inputs = tmp / "inputs.jsonl"
    inputs.write_text("".join(json.dumps(study.record(i)) + "\n" for i in range(ITEMS)), encoding="utf-8")
    title = f"planted {study.name}"
    code, out, err = cli(label_studio, "push", str(definition), str(inputs), "--project", title, "--overlap", "3",
                         "--seed", "3", cwd=tmp)  # fmt: skip
    assert code == 0, err
    assert out.splitlines()[-1] == f"created {ITEMS}, already present 0, total {ITEMS}"

    project = client.find_project(title)
    assert project is not None
    users = client.users()
    ids = {a: users.get(email(a)) or client.create_user(email(a)) for a in ANNOTATORS}
    shown: dict[int, tuple[str, ...]] = {}
    by_task: dict[str, tuple[str, ...]] = {}
    for task in client.export_tasks(project.id):
        item = task["data"]["record"]["item"]
        encoded = task["meta"].get(blinding.META_SYSTEMS)
        shown[item] = by_task[str(task["id"])] = blinding.decode_systems(encoded) if encoded else ()
        for a in ANNOTATORS:
            result = study.result(study.truth(item, a), shown[item])
            client.create_annotation(task["id"], result, completed_by=ids[a], lead_time=10.0)
    if study.style in ("pairwise", "ranking", "ratings"):  # the order shown is shuffled per task
        assert len({s for s in shown.values()}) > 1

    folder = tmp / "pulled"
    code, out, err = cli(label_studio, "pull", str(definition), "--project", title, "-o", str(folder))
    assert code == 0, err
    assert f"Counts match the server: {ITEMS} tasks, {ITEMS * 3} annotations, 0 skipped." in out
    report = tmp / "report"
    code, out, err = cli(label_studio, "report", str(definition), str(folder), "-o", str(report))
    assert code == 0, err
    return Pulled(study, folder, report, shown, by_task)


def item_of(line: dict[str, Any]) -> int:
    item: int = line["data"]["record"]["item"]
    return item


def test_pulled_judgments_are_the_planted_ones_unblinded(pulled: Pulled) -> None:
    lines = pulled.jsonl()
    assert len(lines) == ITEMS * 3
    for line in lines:
        item, annotator = item_of(line), annotator_of(line["annotator"])
        truth = pulled.truth(item, annotator)
        judged = line["judgments"]
        style = pulled.study.style
        if style == "pairwise":
            prefs = {j["aspect"]: ("tie" if j["winner"] is None else j["systems"][j["winner"]])
                     for j in judged if j["kind"] == "preference"}  # fmt: skip
            assert prefs == {"helpful": truth["helpful"], "harmless": truth["harmless"]}
            assert [j["codes"] for j in judged if j["kind"] == "answer"] == [[truth["confidence"]]]
        elif style == "ranking":
            ranks = {(j["dimension"], j["system"]): j["rank"] for j in judged}
            assert ranks == {(d, s): r for d, by in truth.items() for s, r in by.items()}
        elif style == "ratings":
            values = {(j["aspect"], j["system"]): j["value"] for j in judged}
            assert values == {(a, s): float(v) for a, by in truth.items() for s, v in by.items()}
        elif style == "spans":
            spans = sorted((j["label"], j["start"], j["end"], j["system"]) for j in judged if j["kind"] == "span")
            system = own_study.spans_system(item)
            assert spans == sorted((label, s, e, system) for label, s, e in truth["spans"])
            answers = {j["question"]: j["codes"] for j in judged if j["kind"] == "answer"}
            assert answers["adequacy"] == [truth["adequacy"]]
        else:
            rows = [j for j in judged if j["kind"] == "row"]
            assert [r["special"] for r in rows] == [t.get("special", "") for t in truth]
            assert [r["columns"].get("severity", []) for r in rows] == [[t["severity"]] if "severity" in t else []
                                                                         for t in truth]  # fmt: skip
            assert [r["explanation"] for r in rows] == [t.get("why", "") for t in truth]


def test_results_csv_names_the_system_of_every_judgment_about_one(pulled: Pulled) -> None:
    rows = pulled.results()
    assert rows
    for row in rows:
        style, question, answer = pulled.study.style, row["question"], row["answer"]
        shown = pulled.shown_by_task[row["task_id"]]
        assert row["systems"] == " | ".join(shown)
        if style == "pairwise" and question in ("helpful", "harmless"):
            assert row["system"] == ("" if answer == "tie" else shown["AB".index(answer)])
        elif style == "ranking":
            assert row["system"] == shown["abc".index(question[-1])]
        elif style == "ratings":
            assert row["system"] == shown[int(question.rsplit("_", 1)[1]) - 1]
        elif style in ("spans", "sentences"):
            assert row["system"] == shown[0] and shown[0] in own_study.SYSTEMS
