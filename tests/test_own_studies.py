"""An own definition in each of the five styles, through the whole loop on the real server:
`annols push` (blinded), three annotators through the API, `annols pull`, `annols report`.

The pulled judgments must be the planted ones, unblinded; every number of the report's
style tables must equal what the test computes from the plant (tests/own_study.py)."""

from __future__ import annotations

import csv
import json
import math
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path
from typing import Any

import pytest

from annols.labelstudio.client import LabelStudioClient
from tests import own_study
from tests import own_study_expected as expect
from tests.conftest import LiveServer
from tests.own_study import ANNOTATORS, ITEMS, STUDIES, OwnStudy
from tests.report import formulas
from tests.study.test_push_pull import cli, shown_by_task


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
    manifest = shown_by_task(tmp / ".annols", title)  # what blinding depends on is not on the server
    for task in client.export_tasks(project.id):
        assert "record" not in task["data"]  # the record's other fields stay in the manifest
        item = manifest[task["id"]]["extra"]["record"]["item"]
        shown[item] = by_task[str(task["id"])] = tuple(manifest[task["id"]]["systems"])
        for a in ANNOTATORS:
            result = study.result(study.truth(item, a), shown[item])
            client.create_annotation(task["id"], result, completed_by=ids[a], lead_time=10.0)
    if study.style in ("pairwise", "ranking", "ratings"):  # the order shown is shuffled per task
        assert len({s for s in shown.values()}) > 1

    folder = tmp / "pulled"
    code, out, err = cli(label_studio, "pull", str(definition), "--project", title, "-o", str(folder), cwd=tmp)
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


# ----------------------------------------------------------------------------- every number of the report's tables

STYLE_TABLES = {
    "pairwise": ["pairwise_win_tie_loss", "pairwise_majority", "pairwise_annotators", "pairwise_sign_test",
                 "pairwise_agreement", "pairwise_cohen", "pairwise_bradley_terry", "questions_distribution",
                 "questions_agreement"],
    "ranking": ["ranking_mean_rank", "ranking_mean_rank_intervals", "ranking_pairwise_wins", "ranking_agreement"],
    "ratings": ["ratings_summary", "ratings_distribution", "ratings_paired_tests", "ratings_agreement"],
    "spans": ["spans_counts", "spans_agreement", "questions_distribution", "questions_agreement"],
    "sentences": ["sentences_distribution", "sentences_agreement"],
}  # fmt: skip
# checked by the Bradley-Terry likelihood equations (ties as half wins); intervals:
# tests/analysis/leaderboard/test_rankings.py
BT_FITTED = ("strength", "strength CI low", "strength CI high", "log strength", "rank", "rank low", "rank high",
             "group")  # fmt: skip


def close(found: str, expected: float, column: str) -> None:
    """A cell equals the expected value as the report rounds it (2 decimals for %, 1 for seconds, else 4)."""
    if math.isnan(expected):
        assert found == "", f"{column}: expected an empty cell, found {found!r}"
        return
    places = 2 if column.endswith("%") else 1 if column.endswith("(s)") else 4
    assert found != "", f"{column}: empty, expected {expected}"
    assert float(found) == pytest.approx(expected, abs=0.5 * 10**-places + 1e-9), f"{column}: {found} != {expected}"


def cell(found: str, expected: Any, column: str) -> None:
    tolerance = 0.5 * 10 ** -(2 if column.endswith("%") else 4) + 1e-9
    if isinstance(expected, expect.Low | expect.High) and expected.or_empty and found == "":
        return  # a median's interval refused as a point (the section and the headline say so)
    if isinstance(expected, expect.Low):
        assert found != "" and float(found) <= expected.point + tolerance, f"{column}: {found} > {expected.point}"
    elif isinstance(expected, expect.High):
        assert found != "" and float(found) >= expected.point - tolerance, f"{column}: {found} < {expected.point}"
    elif isinstance(expected, str):
        assert found == expected, f"{column}: {found!r} != {expected!r}"
    elif isinstance(expected, int):
        assert found == str(expected), f"{column}: {found!r} != {expected}"
    else:
        close(found, float(expected), column)


def keys_of(rows: list[dict[str, Any]]) -> list[str]:
    """The columns that name a row (its text cells)."""
    return [c for c, v in rows[0].items() if isinstance(v, str)]


def check_table(name: str, found: list[dict[str, str]], expected: list[dict[str, Any]],
                skip: tuple[str, ...] = ()) -> None:  # fmt: skip
    """Same row count, every expected row once, every cell of it (every column but ``skip``) as computed."""
    assert len(found) == len(expected), f"{name}: {len(found)} rows, expected {len(expected)}"
    keys = keys_of(expected)
    by_key = {tuple(r[k] for k in keys): r for r in found}
    assert len(by_key) == len(found), f"{name}: rows not told apart by {keys}"
    for want in expected:
        key = tuple(want[k] for k in keys)
        assert key in by_key, f"{name}: no row {key}"
        row = by_key[key]
        assert set(row) == set(want) | set(skip), f"{name} {key}: columns {sorted(row)} != {sorted(want)}"
        for column, value in want.items():
            cell(row[column], value, f"{name} {key} {column}")


def check_bradley_terry(pulled: Pulled) -> None:
    rows = pulled.table("pairwise_bradley_terry")
    for aspect in expect.ASPECTS:
        mine = [r for r in rows if r["aspect"] == aspect]
        strength = {r["system"]: float(r["strength"]) for r in mine}
        assert set(strength) == set(own_study.SYSTEMS) and sum(strength.values()) == pytest.approx(1, abs=2e-4)
        logs = {r["system"]: float(r["log strength"]) for r in mine}
        assert sum(logs.values()) == pytest.approx(0, abs=2e-4)  # centred logs of the strengths
        for x, y in combinations(sorted(strength), 2):
            assert logs[x] - logs[y] == pytest.approx(math.log(strength[x] / strength[y]), abs=0.02)
        wins, ties = expect.bt_wins_ties(aspect)
        scores = formulas.bradley_terry_scores(strength, wins, ties)
        assert max(abs(v) for v in scores.values()) < 0.05, (aspect, scores)


def check_planted_effects(pulled: Pulled) -> None:
    """What was planted shows: strong wins, and c's disagreement takes agreement below 1."""
    style = pulled.study.style
    if style == "pairwise":
        helpful = "helpful"
        row = next(r for r in pulled.table("pairwise_sign_test")
                   if (r["aspect"], r["system"], r["opponent"]) == (helpful, "strong", "weak"))  # fmt: skip
        # The item is the unit: strong wins 6 of its 8 items against weak and loses none (p 0.031), which Holm
        # across the two aspects takes to 0.0625; counted per judgment (18 against 0) it was significant after both.
        assert int(row["items won"]) > int(row["items lost"]) == 0 and float(row["p (sign test)"]) < 0.05
        cohen = {(r["aspect"], r["annotator 1"], r["annotator 2"]): float(r["Cohen kappa"])
                 for r in pulled.table("pairwise_cohen")}  # fmt: skip
        assert cohen[(helpful, "a@own.study", "b@own.study")] == 1
        assert cohen[(helpful, "a@own.study", "c@own.study")] < 1
        assert float(next(r for r in pulled.table("pairwise_agreement") if r["aspect"] == helpful)["Fleiss kappa"]) < 1
    elif style == "ranking":
        means = {r["system"]: float(r["mean rank"]) for r in pulled.table("ranking_mean_rank")
                 if r["dimension"] == "quality"}  # fmt: skip
        assert min(means, key=means.__getitem__) == "strong"
        quality = next(r for r in pulled.table("ranking_agreement") if r["dimension"] == "quality")
        assert float(quality["Krippendorff alpha"]) < 1 and float(quality["mean Kendall W"]) < 1
    elif style == "ratings":
        coherence = [r for r in pulled.table("ratings_summary") if r["aspect"] == "coherence"]
        assert max(coherence, key=lambda r: float(r["mean"]))["system"] == "strong"
        assert max(coherence, key=lambda r: float(r["mean z"]))["system"] == "strong"
        alpha = next(r for r in pulled.table("ratings_agreement") if r["aspect"] == "coherence")
        assert float(alpha["Krippendorff alpha"]) < 1
    elif style == "spans":
        wrong = next(r for r in pulled.table("spans_agreement") if r["label"] == "Wrong")
        assert float(wrong["exact F1"]) < 1 and float(wrong["token alpha"]) < 1 and float(wrong["overlap F1"]) == 1
        assert float(pulled.table("questions_agreement")[0]["Krippendorff alpha"]) < 1
    else:
        severity = next(r for r in pulled.table("sentences_agreement") if r["column"] == "severity")
        assert float(severity["Krippendorff alpha"]) < 1 and float(severity["observed agreement %"]) < 100


def test_every_number_of_the_style_tables_equals_the_plant(pulled: Pulled) -> None:
    style = pulled.study.style
    expected = expect.expected_tables(style)
    assert sorted(expected) == sorted(STYLE_TABLES[style])
    for name in STYLE_TABLES[style]:
        skip = BT_FITTED if name == "pairwise_bradley_terry" else ()
        check_table(name, pulled.table(name), expected[name], skip)
    if style == "pairwise":
        check_bradley_terry(pulled)
    check_planted_effects(pulled)


def test_annotators_and_coverage(pulled: Pulled) -> None:
    check_table("annotators", pulled.table("annotators"), expect.annotators())
    check_table("coverage", pulled.table("coverage"), expect.coverage())
