"""Judges beside the humans, on a planted own study per style (tests/own_study.py): three
annotators through the real server (push, annotations, pull), then two judges read
offline by `annols report --judge`: ``copycat`` copies the human majority, ``dice``
answers at random. Every number of the "Judges and humans" tables must equal what
tests/judges_expected.py computes from the plant; the copycat must come out as good as
an annotator and the dice not; the study's own tables must not change."""

from __future__ import annotations

import csv
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from annols.labelstudio.client import LabelStudioClient
from tests import judges_expected as expect
from tests.conftest import LiveServer
from tests.judges_study import MAJORITY_JUDGE, RANDOM_JUDGE, write_judges
from tests.own_study import ANNOTATORS, ITEMS, STUDIES, OwnStudy
from tests.study.test_push_pull import cli, shown_by_task
from tests.test_own_studies import close


@dataclass(frozen=True)
class Judged:
    study: OwnStudy
    folder: Path
    plain: Path  # the report without judges
    judged: Path  # the report with both judges
    item_of: dict[str, int]  # task key -> item

    def table(self, name: str, report: Path | None = None) -> list[dict[str, str]]:
        path = (report or self.judged) / "tables" / f"{name}.csv"
        with path.open(encoding="utf-8", newline="") as f:
            return list(csv.DictReader(f))


@pytest.fixture(scope="module", params=list(STUDIES))
def judged(request: pytest.FixtureRequest, label_studio: LiveServer, client: LabelStudioClient,
           tmp_path_factory: pytest.TempPathFactory) -> Judged:  # fmt: skip
    study: OwnStudy = STUDIES[request.param]
    tmp = tmp_path_factory.mktemp(f"judged-{study.name}")
    definition = tmp / f"{study.name}.toml"
    definition.write_text(study.definition, encoding="utf-8")
    inputs = tmp / "inputs.jsonl"
    inputs.write_text("".join(json.dumps(study.record(i)) + "\n" for i in range(ITEMS)), encoding="utf-8")
    title = f"judged {study.name}"
    code, _, err = cli(label_studio, "push", str(definition), str(inputs), "--project", title, "--overlap", "3",
                       "--seed", "5", cwd=tmp)  # fmt: skip
    assert code == 0, err
    project = client.find_project(title)
    assert project is not None
    users = client.users()
    ids = {a: users.get(expect.email(a)) or client.create_user(expect.email(a)) for a in ANNOTATORS}
    manifest = shown_by_task(tmp / ".annols", title)  # what blinding depends on is not on the server
    for task in client.export_tasks(project.id):
        assert "record" not in task["data"]  # the record's other fields stay in the manifest (#39)
        item = manifest[task["id"]]["extra"]["record"]["item"]
        shown = tuple(manifest[task["id"]]["systems"])
        for a in ANNOTATORS:
            client.create_annotation(task["id"], study.result(study.truth(item, a), shown), completed_by=ids[a])
    folder = tmp / "pulled"
    code, _, err = cli(label_studio, "pull", str(definition), "--project", title, "-o", str(folder), cwd=tmp)
    assert code == 0, err
    item_of = {}
    for line in (folder / f"{study.name}.jsonl").read_text("utf-8").splitlines():
        record = json.loads(line)
        item_of[record["key"]] = record["data"]["record"]["item"]
    files = write_judges(study, {i: k for k, i in item_of.items()}, tmp)
    plain, with_judges = tmp / "plain", tmp / "with-judges"
    code, _, err = cli(label_studio, "report", str(definition), str(folder), "-o", str(plain), "--bootstrap", "0")
    assert code == 0, err
    code, _, err = cli(label_studio, "report", str(definition), str(folder), "-o", str(with_judges), "--bootstrap",
                       "0", "--judge", str(files[MAJORITY_JUDGE]), "--judge", str(files[RANDOM_JUDGE]))  # fmt: skip
    assert code == 0, err
    return Judged(study, folder, plain, with_judges, item_of)


def check_row(found: dict[str, str], expected: list[Any], columns: list[str]) -> None:
    for column, value in zip(columns, expected, strict=True):
        if isinstance(value, str):
            assert found[column] == value, f"{column}: {found[column]!r} != {value!r}"
        elif isinstance(value, int) and not isinstance(value, bool):
            assert found[column] == str(value), f"{column}: {found[column]!r} != {value}"
        else:
            close(found[column], float(value), column)


def test_agreement_with_each_human_and_the_majority(judged: Judged) -> None:
    expected = expect.agreement(judged.study)
    rows = judged.table("judges_agreement")
    found = {(r["question"], r["rater 1"], r["rater 2"]): r for r in rows}
    assert set(found) == set(expected)
    for key, numbers in expected.items():
        check_row(found[key], numbers, ["units", "agreement %", "Cohen kappa", "Krippendorff alpha"])


def test_alternative_annotator_test(judged: Judged) -> None:
    rows, summary = expect.alt_test(judged.study)
    found = {(r["judge"], r["question"], r["annotator"]): r for r in judged.table("judges_alt_test")}
    assert set(found) == set(rows)
    for key, numbers in rows.items():
        check_row(found[key], numbers, ["units", "rho judge", "rho annotator", "t", "p", "p (BY)", "H0 rejected"])
    found = {(r["judge"], r["question"]): r for r in judged.table("judges_alt_test_summary")}
    assert set(found) == set(summary)
    columns = ["annotators", "rejected", "winning rate", "rho (advantage)", "as good as an annotator"]
    for key, numbers in summary.items():
        check_row(found[key], numbers, columns)


def test_the_copycat_is_as_good_as_a_human_and_the_dice_is_not(judged: Judged) -> None:
    verdicts = {(r["judge"], r["question"]): r["as good as an annotator"]
                for r in judged.table("judges_alt_test_summary")}  # fmt: skip
    questions = {q for _, q in verdicts}
    assert questions and questions == set(expect.questions(judged.study)) | (
        {expect.SPANS} if judged.study.style == "spans" else set())  # fmt: skip
    for q in questions:
        assert verdicts[(f"judge:{MAJORITY_JUDGE}", q)] == "yes", q
        assert verdicts[(f"judge:{RANDOM_JUDGE}", q)] == "no", q


def test_systems_by_judges_and_humans(judged: Judged) -> None:
    side, orders = expect.systems(judged.study)
    assert side and orders
    judges = [f"judge:{MAJORITY_JUDGE}", f"judge:{RANDOM_JUDGE}"]
    found = {(r["question"], r["system"]): r for r in judged.table("judges_systems")}
    assert set(found) == set(side)
    for key, numbers in side.items():
        check_row(found[key], numbers, ["humans", *judges])
    found = {(r["judge"], r["question"]): r for r in judged.table("judges_system_order")}
    assert set(found) == set(orders)
    for key, cells in orders.items():
        check_row(found[key], cells, ["systems", "order by humans", "order by judge", "same order", "Kendall tau"])
    assert all(found[(judges[0], q)]["same order"] == "yes" for _, q in orders if q != "harmless")


def test_items_where_a_judge_disagrees_with_every_human(judged: Judged) -> None:
    rows = judged.table("judges_disagreements")
    found = {(r["judge"], r["question"], judged.item_of[r["task_key"]], r["about"], r["judge's answer"]) for r in rows}
    expected = expect.disagreements(judged.study)
    assert len(rows) == len(found)
    assert found == expected
    assert any(j == f"judge:{RANDOM_JUDGE}" for j, *_ in expected)


def test_span_f1_against_each_human_and_the_majority(judged: Judged) -> None:
    if judged.study.style != "spans":
        assert not (judged.judged / "tables" / "judges_span_f1.csv").exists()
        return
    expected = expect.span_f1(judged.study)
    found = {(r["group"], r["rater 1"], r["rater 2"]): r for r in judged.table("judges_span_f1")}
    assert set(found) == set(expected)
    for key, numbers in expected.items():
        check_row(found[key], numbers, ["items", "spans 1", "spans 2", "exact F1"])
    assert math.isclose(float(found[(f"judge:{MAJORITY_JUDGE}",) * 2 + (expect.MAJORITY,)]["exact F1"]), 1.0)


def test_the_study_tables_leave_the_judges_out(judged: Judged) -> None:
    plain = sorted(p.name for p in (judged.plain / "tables").iterdir())
    judged_tables = sorted(p.name for p in (judged.judged / "tables").iterdir())
    assert [n for n in judged_tables if not n.startswith("judges_")] == plain
    for name in plain:
        assert (judged.judged / "tables" / name).read_bytes() == (judged.plain / "tables" / name).read_bytes(), name
    assert "Judges and humans" in (judged.judged / "report.md").read_text("utf-8")
    assert "Judges and humans" not in (judged.plain / "report.md").read_text("utf-8")


def test_hidden_judges_pushed_onto_the_project_come_back_in_the_pull_and_its_report(
    judged: Judged, label_studio: LiveServer, client: LabelStudioClient
) -> None:
    """The same judges as hidden judges (push --judge onto the existing project): the pull
    writes them to the result files as judge:<name>, unblinded, and its report (no --judge)
    has the same "Judges and humans" tables as the offline one."""
    study = judged.study
    tmp = judged.folder.parent
    definition, inputs = tmp / f"{study.name}.toml", tmp / "inputs.jsonl"
    files = [tmp / f"{MAJORITY_JUDGE}.jsonl", tmp / f"{RANDOM_JUDGE}.jsonl"]
    title = f"judged {study.name}"
    code, out, err = cli(label_studio, "push", str(definition), str(inputs), "--project", title, "--seed", "5",
                         *(a for f in files for a in ("--judge", str(f))), cwd=tmp)  # fmt: skip
    assert code == 0, err
    assert f"created 0, already present {ITEMS}, total {ITEMS}" in out
    assert f"judges {MAJORITY_JUDGE}, {RANDOM_JUDGE} kept in" in out
    project = client.find_project(title)
    assert project is not None
    assert all(not t["predictions"] and len(t["annotations"]) == 3 for t in client.export_tasks(project.id))

    folder = tmp / "pulled-with-judges"
    code, out, err = cli(label_studio, "pull", str(definition), "--project", title, "-o", str(folder), cwd=tmp)
    assert code == 0, err
    assert f"Counts match the server: {ITEMS} tasks, {ITEMS * 3} annotations, 0 skipped." in out
    lines = [json.loads(x) for x in (folder / f"{study.name}.jsonl").read_text("utf-8").splitlines()]
    by_judge: dict[str, list[dict[str, Any]]] = {}
    for line in lines:
        by_judge.setdefault(line["annotator"], []).append(line)
    assert sorted(by_judge) == [*(expect.email(a) for a in ANNOTATORS), f"judge:{MAJORITY_JUDGE}",
                                f"judge:{RANDOM_JUDGE}"]  # fmt: skip
    plants = expect.raters(study)
    for who, found in by_judge.items():
        assert len(found) == ITEMS
        for line in found:  # the judge's judgments decode to its plant, whatever order the task showed
            item = line["data"]["record"]["item"]
            assert pulled_terms(study.style, line["judgments"]) == plant_terms(study.style, plants[who][item]), who
    rows = {r["annotator"] for r in csv.DictReader((folder / "results.csv").open(encoding="utf-8"))}
    assert f"judge:{RANDOM_JUDGE}" in rows
    assert sorted(p.name for p in (folder / "judges").iterdir()) == sorted(f.name for f in files)
    again = tmp / "converted-again"  # convert of the pull's export: the same files, judges too
    code, _, err = cli(label_studio, "convert", str(definition), str(folder / "export.json"), "-o", str(again))
    assert code == 0, err
    for name in (f"{study.name}.jsonl", "results.csv"):
        assert (again / name).read_bytes() == (folder / name).read_bytes(), name

    report = tmp / "report-of-the-pull"
    code, _, err = cli(label_studio, "report", str(definition), str(folder), "-o", str(report), "--bootstrap", "0")
    assert code == 0, err
    names = sorted(p.name for p in (judged.judged / "tables").iterdir() if p.name.startswith("judges_"))
    assert names
    for name in names:
        assert (report / "tables" / name).read_bytes() == (judged.judged / "tables" / name).read_bytes(), name


def pulled_terms(style: str, judgments: list[dict[str, Any]]) -> Any:
    """A pulled line's judgments in the plant's terms (systems, not positions)."""
    if style == "pairwise":
        out: dict[str, Any] = {j["aspect"]: ("tie" if j["winner"] is None else j["systems"][j["winner"]])
                               for j in judgments if j["kind"] == "preference"}  # fmt: skip
        return {**out, "confidence": [j["codes"] for j in judgments if j["kind"] == "answer"]}
    if style == "ranking":
        return {(j["dimension"], j["system"]): float(j["rank"]) for j in judgments}
    if style == "ratings":
        return {(j["aspect"], j["system"]): float(j["value"]) for j in judgments}
    if style == "spans":
        spans = sorted((j["label"], j["start"], j["end"]) for j in judgments if j["kind"] == "span")
        return spans, {j["question"]: j["codes"] for j in judgments if j["kind"] == "answer" and j["question"] ==
                       "adequacy"}  # fmt: skip
    rows = [j for j in judgments if j["kind"] == "row"]
    return [(r["special"], r["columns"].get("severity", []), r["explanation"]) for r in rows]


def plant_terms(style: str, truth: Any) -> Any:
    if style == "pairwise":
        return {"helpful": truth["helpful"], "harmless": truth["harmless"], "confidence": [[truth["confidence"]]]}
    if style in ("ranking", "ratings"):
        return {(q, s): float(v) for q, by in truth.items() for s, v in by.items()}
    if style == "spans":
        return sorted(tuple(x) for x in truth["spans"]), {"adequacy": [truth["adequacy"]]}
    return [(t.get("special", ""), [t["severity"]] if "severity" in t else [], t.get("why", "")) for t in truth]
