"""Best-worst scaling through the real Label Studio and the CLI: the example pushed (tuples
balanced, systems hidden, each tuple shuffled), answers posted by three annotators from a
planted order, pulled back unblinded, a best == worst answer flagged by validate and left
out of the report, whose scores equal an independent count of the planted answers."""

from __future__ import annotations

import csv
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from annols import protocols
from annols.labelstudio.client import LabelStudioClient
from annols.protocols import config
from annols.study.exports import read_export
from annols.styles import decode
from annols.styles.judgments import BestWorst
from tests import live_answers
from tests.conftest import ROOT, LiveServer
from tests.study.test_push_pull import cli, shown_by_task

EXAMPLE = ROOT / "examples" / "summary-best-worst.toml"
INPUT = ROOT / "examples" / "summary-best-worst.jsonl"
# Each annotator's order of the systems, best first, per aspect: they disagree a little.
ORDERS = {
    "bws1@example.org": ["abstractive-a", "lead-extract", "keyword-dump", "fragmenter", "hallucinator"],
    "bws2@example.org": ["abstractive-a", "keyword-dump", "lead-extract", "fragmenter", "hallucinator"],
    "bws3@example.org": ["lead-extract", "abstractive-a", "fragmenter", "hallucinator", "keyword-dump"],
}
def test_best_worst_example_round_trip_and_report_scores_equal_an_independent_count(
    label_studio: LiveServer, client: LabelStudioClient, tmp_path: Path
) -> None:
    d = protocols.load(str(EXAMPLE))
    title = "best-worst live"
    code, out, err = cli(label_studio, "push", str(EXAMPLE), str(INPUT), "--project", title, "--seed", "9",
                         cwd=tmp_path)  # fmt: skip
    assert code == 0, err
    assert out.splitlines()[-1] == "created 15, already present 0, total 15"
    project = client.find_project(title)
    assert project is not None and project.label_config.strip() == config.label_config(d).strip()
    tasks = client.export_tasks(project.id)
    text = {(r["document"], r["id"]): r["summary"] for r in map(json.loads, INPUT.read_text("utf-8").splitlines())}
    appearances: Counter[tuple[str, str]] = Counter()
    orders = set()
    users = {email: client.users().get(email) or client.create_user(email) for email in ORDERS}
    planted: list[tuple[str, tuple[str, ...], int, int]] = []  # (aspect, shown, best, worst) that count
    manifest = shown_by_task(tmp_path / ".annols", title)  # what blinding depends on is not on the server
    for n, t in enumerate(sorted(tasks, key=lambda t: t["id"])):
        shown = tuple(manifest[t["id"]]["systems"])
        orders.add(tuple(manifest[t["id"]]["order"]))
        assert not any(s in json.dumps(t["data"]) for s in shown)
        for i, system in enumerate(shown):
            assert t["data"][f"summary_{i + 1}"] == text[(t["data"]["document"], system)]
            appearances[(t["data"]["document"], system)] += 1
        for email, order in ORDERS.items():
            picks = {aspect: live_answers.best_worst_picks(shown, order, aspect)
                     for aspect in ("informativeness", "fluency")}  # fmt: skip
            if n == 0 and email == "bws3@example.org":
                picks["fluency"] = (2, 2)  # best == worst: flagged, not counted
            planted += [(aspect, shown, b, w) for aspect, (b, w) in picks.items() if b != w]
            client.create_annotation(t["id"], live_answers.best_worst(picks), completed_by=users[email], lead_time=3.0)
    assert set(appearances.values()) == {4}  # every summary in four tuples of its article
    assert len(orders) > 1  # shuffled per task

    pulled = tmp_path / "pulled"
    code, out, err = cli(label_studio, "pull", str(EXAMPLE), "--project", title, "-o", str(pulled), cwd=tmp_path)
    assert code == 0, err
    assert "Counts match the server: 15 tasks, 45 annotations, 0 skipped." in out
    exported = list(read_export(pulled / "export.json"))
    decoded = [j for task in exported for a in task.annotations for j in decode(d, task, a)]
    assert Counter(
        (j.aspect, j.systems[j.best], j.systems[j.worst]) for j in decoded if isinstance(j, BestWorst)
    ) == Counter((a, s[b], s[w]) for a, s, b, w in planted) + Counter({("fluency", *[exported_shown(exported)] * 2): 1})

    code, out, err = cli(label_studio, "validate", str(EXAMPLE), str(pulled / "export.json"))
    assert code == 1
    assert "best-differs-from-worst" in out and "fluency:" in out

    report = tmp_path / "report"
    code, out, err = cli(label_studio, "report", str(EXAMPLE), str(pulled), "-o", str(report), "--bootstrap", "200")
    assert code == 0, err
    with open(report / "tables" / "best_worst_scores.csv", encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    for aspect in ("informativeness", "fluency"):
        shown_n: Counter[str] = Counter()
        best: Counter[str] = Counter()
        worst: Counter[str] = Counter()
        for a, s, b, w in planted:
            if a == aspect:
                shown_n.update(s)
                best[s[b]] += 1
                worst[s[w]] += 1
        mine = {r["system"]: r for r in rows if r["aspect"] == aspect}
        assert set(mine) == set(shown_n)
        for system, r in mine.items():
            assert (int(r["shown"]), int(r["best"]), int(r["worst"])) == (shown_n[system], best[system], worst[system])
            assert r["score %"] == f"{100 * (best[system] - worst[system]) / shown_n[system]:.2f}"
            assert float(r["score low %"]) <= float(r["score %"]) <= float(r["score high %"])
        scores = [float(mine[s]["score %"]) for s in mine]
        assert scores == sorted(scores, reverse=True)
    top = next(r["system"] for r in rows if r["aspect"] == "informativeness")
    assert top == "abstractive-a"
    with open(report / "tables" / "best_worst_split_half.csv", encoding="utf-8", newline="") as f:
        reliability = list(csv.DictReader(f))
    assert [r["aspect"] for r in reliability] == ["fluency", "informativeness"] or [
        r["aspect"] for r in reliability
    ] == ["informativeness", "fluency"]
    assert all(float(r["split-half rho"]) > 0 for r in reliability)
    md = (report / "report.md").read_text("utf-8")
    assert "Best-worst scores" in md and "Split-half reliability" in md

    # A judge answering each task as bws1 does (positions as the task shows them), offline:
    # it agrees with bws1 on every unit, with bws2 as often as bws1 does (counted here).
    judge = tmp_path / "judge.jsonl"
    lines, agree, units = [], Counter[str](), Counter[str]()
    for t in tasks:
        shown = tuple(manifest[t["id"]]["systems"])
        answers = {}
        for aspect in ("informativeness", "fluency"):
            mine = live_answers.best_worst_picks(shown, ORDERS["bws1@example.org"], aspect)
            theirs = live_answers.best_worst_picks(shown, ORDERS["bws2@example.org"], aspect)
            for end, i in (("best", 0), ("worst", 1)):
                answers[f"{aspect}_{end}"] = live_answers.LETTERS[mine[i]]
                units[f"{aspect} ({end})"] += 1
                agree[f"{aspect} ({end})"] += shown[mine[i]] == shown[theirs[i]]
        lines.append(json.dumps({"task": manifest[t["id"]]["key"], "judge": "copy", "answers": answers}))
    judge.write_text("\n".join(lines) + "\n", encoding="utf-8")
    judged = tmp_path / "judged"
    code, out, err = cli(label_studio, "report", str(EXAMPLE), str(pulled), "-o", str(judged), "--bootstrap", "50",
                         "--judge", str(judge))  # fmt: skip
    assert code == 0, err
    with open(judged / "tables" / "judges_agreement.csv", encoding="utf-8", newline="") as f:
        found = {(r["question"], r["rater 1"], r["rater 2"]): r for r in csv.DictReader(f)}
    for question, n in units.items():
        bws1 = next(v for k, v in found.items() if k[0] == question and k[1] == "judge:copy" and "bws1" in k[2])
        bws2 = next(v for k, v in found.items() if k[0] == question and k[1] == "judge:copy" and "bws2" in k[2])
        assert (int(bws1["units"]), float(bws1["agreement %"])) == (n, 100.0), bws1
        assert float(bws2["agreement %"]) == pytest.approx(100 * agree[question] / n, abs=0.01), (question, bws2)
    with open(judged / "tables" / "judges_systems.csv", encoding="utf-8", newline="") as f:
        assert any("best-worst score %" in row.values() for row in csv.DictReader(f))


def exported_shown(exported: list[Any]) -> str:
    """The system behind position C of the first task (the best == worst answer's pick)."""
    first = min(exported, key=lambda t: t.id)
    return first.systems[2]
