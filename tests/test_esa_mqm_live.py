"""ESA and MQM, the shipped examples, against a real Label Studio through the CLI: pushed (blinded), three
annotators' spans, severities and scores posted per system, pulled and reported; every per-system number of the
report (ESA's score and MQM's error score: means, mean z-scores, paired tests over items with Holm, interval
alpha) equals the same computed here by hand from the planted answers with pandas and scipy. Then a definition
mixing every kind of question (spans, a per-candidate slider, a per-item choice, a free-text comment) gets a
section for each, and its judgments table carries them all."""

from __future__ import annotations

import csv
import itertools
import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from annols.labelstudio.client import LabelStudioClient
from tests.analysis import independent
from tests.conftest import ROOT, LiveServer
from tests.live_answers import mqm_weight, number, span_items
from tests.study.test_push_pull import cli, shown_by_task

EXAMPLES = ROOT / "examples"
ANNOTATORS = ("esa1@example.org", "esa2@example.org", "esa3@example.org")
SYSTEMS = ("sys-a", "sys-b", "sys-c")
BASE = {"sys-a": 88, "sys-b": 61, "sys-c": 35}
MQM_SPANS = {  # (label, severity) marked by each system's translation, before the annotator's own variation
    "sys-a": [("Style", "minor")],
    "sys-b": [("Accuracy", "major"), ("Fluency/Punctuation", "minor")],
    "sys-c": [("Accuracy", "major"), ("Fluency", "minor"), ("Terminology", "major")],
}


def read_csv(path: Path) -> list[dict[str, str]]:
    with open(path, encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def table(report: Path, name: str) -> pd.DataFrame:
    return pd.read_csv(report / "tables" / f"{name}.csv", keep_default_na=False)


def esa_answer(a: int, system: str, item: int) -> tuple[float, list[tuple[str, str | None]]]:
    """The score and spans annotator ``a`` gives: each annotator has a level of their own (what z-scores remove)."""
    s = SYSTEMS.index(system)
    score = BASE[system] + [-9, 0, 6][a] + (item * (s + 2) * 3 + a * s) % 13
    marks: list[tuple[str, str | None]] = [("minor", None)] * ((item + s + a) % 3) + [("major", None)] * (
        s * (item % 2 + 1)
    )
    return float(min(score, 100)), marks


def mqm_answer(a: int, system: str, item: int) -> list[tuple[str, str | None]]:
    marks: list[tuple[str, str | None]] = list(MQM_SPANS[system])
    if (a + item) % 2:
        marks.append(("Fluency/Punctuation", "minor"))
    if system == "sys-c" and item == 1 and a == 2:
        marks = [("Non-translation", "major")]
    if system == "sys-a" and (a + item) % 3 == 0:
        marks = []  # a perfect translation: no span, score 0
    return marks


def push_and_annotate(live: LiveServer, client: LabelStudioClient, tmp_path: Path, name: str,
                      answer: Any) -> tuple[Path, pd.DataFrame]:  # fmt: skip
    """Push the example, post every annotator's answer on every task, pull; the planted answers as a frame."""
    definition, inputs = EXAMPLES / f"{name}.toml", EXAMPLES / f"{name}.jsonl"
    title = f"example {name} live"
    code, out, err = cli(live, "push", str(definition), str(inputs), "--project", title, cwd=tmp_path)
    assert code == 0, err
    project = client.find_project(title)
    assert project is not None
    users = client.users()
    ids = [users.get(e) or client.create_user(e) for e in ANNOTATORS]
    sources = list(dict.fromkeys(json.loads(line)["source"] for line in inputs.read_text("utf-8").splitlines()))
    planted = []
    shown = shown_by_task(tmp_path / ".annols", title)
    for task in client.export_tasks(project.id):
        (system,) = shown[task["id"]]["systems"]  # the manifest's: the server has none
        data = task["data"]
        source = data.get("source", data.get("annols_f_source"))
        assert "sys-" not in json.dumps(task)  # blinded: the system is only in the manifest
        item = sources.index(source)
        for a, user in enumerate(ids):
            result, row = answer(a, system, item, data["hypothesis"])
            client.create_annotation(task["id"], result, completed_by=user, lead_time=5.0)
            planted.append({"annotator": ANNOTATORS[a], "system": system, "item": item, **row})
    pulled = tmp_path / "pulled"
    code, out, err = cli(live, "pull", str(definition), "--project", title, "-o", str(pulled), cwd=tmp_path)
    assert code == 0, err
    assert "Counts match the server: 12 tasks, 36 annotations, 0 skipped." in out
    report = tmp_path / "report"
    code, out, err = cli(live, "report", str(definition), str(pulled), "-o", str(report), "--bootstrap", "0")
    assert code == 0, err
    return report, pd.DataFrame(planted)


def check_like_a_rating(report: Path, prefix: str, aspect: str, planted: pd.DataFrame, value: str) -> None:
    """The report's summary, paired tests and agreement of one score equal pandas and scipy on the planted values."""
    summary = table(report, f"{prefix}_summary")
    summary = summary[summary["aspect"] == aspect].set_index("system")
    z = planted.groupby("annotator")[value].transform(lambda v: (v - v.mean()) / v.std(ddof=1))
    by_hand = planted.assign(z=z).groupby("system").agg(mean=(value, "mean"), z=("z", "mean"), n=(value, "size"))
    assert sorted(summary.index) == sorted(SYSTEMS)
    for system, row in by_hand.iterrows():
        assert summary.loc[system, "ratings"] == row["n"] == 12
        assert summary.loc[system, "samples"] == 4  # the items: each source segment, over its annotators
        assert summary.loc[system, "mean"] == pytest.approx(row["mean"], abs=1e-4)
        assert summary.loc[system, "mean z"] == pytest.approx(row["z"], abs=1e-4)

    tests = table(report, f"{prefix}_paired_tests")
    tests = tests[tests["aspect"] == aspect]
    means = planted.groupby(["system", "item"])[value].mean().unstack("item")
    expected = []
    for first, second in itertools.combinations(sorted(SYSTEMS), 2):
        diff = (means.loc[first] - means.loc[second]).to_numpy()
        p = stats.wilcoxon(diff).pvalue if (diff != 0).any() else np.nan
        expected.append((first, second, len(diff), float(diff.mean()), float(p)))
    holm = independent.holm([p for *_, p in expected])
    got = tests.set_index(["system", "opponent"])
    for (first, second, n, mean, p), corrected in zip(expected, holm, strict=True):
        row = got.loc[(first, second)]
        assert (row["samples"], row["mean difference"]) == (n, pytest.approx(mean, abs=1e-4))
        assert row["p (Wilcoxon)"] == pytest.approx(p, abs=1e-4)
        assert row["p (Holm)"] == pytest.approx(corrected, abs=1e-4)

    agreement = table(report, f"{prefix}_agreement").set_index("aspect")
    units = [list(part[value]) for _, part in planted.groupby(["item", "system"])]
    assert agreement.loc[aspect, "level"] == "interval"
    assert agreement.loc[aspect, "Krippendorff alpha"] == pytest.approx(independent.interval_alpha(units), abs=1e-4)


def test_esa_example_scores_and_spans_per_system(
    label_studio: LiveServer, client: LabelStudioClient, tmp_path: Path
) -> None:
    def answer(a: int, system: str, item: int, hypothesis: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        score, marks = esa_answer(a, system, item)
        result = span_items(hypothesis, marks)
        result.append(number("score", score))
        minor = sum(label == "minor" for label, _ in marks)
        return result, {"score": score, "minor": minor, "major": len(marks) - minor}

    report, planted = push_and_annotate(label_studio, client, tmp_path, "esa", answer)
    check_like_a_rating(report, "q_score", "score", planted, "score")
    # ESA's score and its span counts side by side, per system.
    side = table(report, "scores_and_spans").set_index("system")
    by_hand = planted.groupby("system")[["score", "minor", "major"]].mean()
    for system, row in by_hand.iterrows():
        assert side.loc[system, "candidates"] == 12
        assert side.loc[system, "mean score"] == pytest.approx(row["score"], abs=1e-4)
        assert side.loc[system, "minor per candidate"] == pytest.approx(row["minor"], abs=1e-4)
        assert side.loc[system, "major per candidate"] == pytest.approx(row["major"], abs=1e-4)
    md = (report / "report.md").read_text("utf-8")
    assert "## Question score (slider, per candidate): ratings" in md and "## Scores and spans per system" in md


def test_mqm_example_weighted_error_score_per_system(
    label_studio: LiveServer, client: LabelStudioClient, tmp_path: Path
) -> None:
    def answer(a: int, system: str, item: int, hypothesis: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        marks = mqm_answer(a, system, item)
        score = sum(mqm_weight(label, str(severity)) for label, severity in marks)
        words = len(hypothesis.split())
        return span_items(hypothesis, marks), {"score": score, "per100": 100 * score / words, "spans": len(marks)}

    report, planted = push_and_annotate(label_studio, client, tmp_path, "mqm", answer)
    assert planted["score"].isin([25.0, 0.1, 1.1]).any()  # the special weights were planted
    check_like_a_rating(report, "error_score", "error score", planted, "score")
    check_like_a_rating(report, "error_score", "error score per 100 words", planted, "per100")
    side = table(report, "scores_and_spans").set_index("system")
    for system, row in planted.groupby("system")[["score", "spans"]].mean().iterrows():
        assert side.loc[system, "mean error score"] == pytest.approx(row["score"], abs=1e-4)
        assert side.loc[system, "spans per candidate"] == pytest.approx(row["spans"], abs=1e-4)


MIXED = """
name = "mixed-kinds"
style = "spans"
summary = "Spans, a per-candidate slider, a per-item choice and a comment."
guideline = "Mark the errors, score the translation, say what the source is about, comment."

[[context]]
name = "source"
title = "Source"

[target]
name = "hypothesis"
title = "Translation"

[spans]
name = "errors"
labels = [{ value = "minor" }, { value = "major" }]

[[questions]]
name = "quality"
kind = "slider"
per = "candidate"
text = "Quality"
required = true

[[questions]]
name = "domain"
text = "What is the source about?"
choices = [{ code = "travel" }, { code = "work" }, { code = "other" }]

[[questions]]
name = "comment"
kind = "text"
text = "Comment"
"""


def test_a_definition_mixing_kinds_reports_every_question(
    label_studio: LiveServer, client: LabelStudioClient, tmp_path: Path
) -> None:
    definition = tmp_path / "mixed.toml"
    definition.write_text(MIXED, encoding="utf-8")
    records = [json.loads(line) for line in (EXAMPLES / "esa.jsonl").read_text("utf-8").splitlines()][:6]
    inputs = tmp_path / "mixed.jsonl"
    inputs.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    title = "mixed kinds live"
    code, out, err = cli(label_studio, "push", str(definition), str(inputs), "--project", title, cwd=tmp_path)
    assert code == 0, err
    project = client.find_project(title)
    assert project is not None
    users = client.users()
    ids = [users.get(e) or client.create_user(e) for e in ANNOTATORS[:2]]
    shown = shown_by_task(tmp_path / ".annols", title)
    for task in client.export_tasks(project.id):
        (system,) = shown[task["id"]]["systems"]  # the manifest's: the server has none
        for a, user in enumerate(ids):
            result = span_items(task["data"]["hypothesis"], [("minor", None)] * (a + 1))
            result += [
                number("quality", BASE[system] + 5 * a),
                {"id": "d", "from_name": "domain", "to_name": "hypothesis", "type": "choices",
                 "value": {"choices": ["travel" if a else "work"]}, "origin": "manual"},
                {"id": "c", "from_name": "comment", "to_name": "hypothesis", "type": "textarea",
                 "value": {"text": [f"note {a} on {task['id']}"]}, "origin": "manual"},
            ]  # fmt: skip
            client.create_annotation(task["id"], result, completed_by=user, lead_time=5.0)
    pulled, report = tmp_path / "pulled", tmp_path / "report"
    code, out, err = cli(label_studio, "pull", str(definition), "--project", title, "-o", str(pulled), cwd=tmp_path)
    assert code == 0, err
    assert "Counts match the server: 6 tasks, 12 annotations, 0 skipped." in out
    code, _, err = cli(label_studio, "report", str(definition), str(pulled), "-o", str(report), "--bootstrap", "0")
    assert code == 0, err

    md = (report / "report.md").read_text("utf-8")
    for heading in ("## Spans", "## Question quality (slider, per candidate): ratings",
                    "## Question quality (slider, per candidate): agreement", "## Questions",
                    "## Question comment (text, per item)", "## Scores and spans per system"):  # fmt: skip
        assert heading in md, heading
    assert table(report, "questions_distribution").set_index("answer")["judgments"].to_dict() == {
        "travel": 6, "work": 6, "other": 0}  # fmt: skip
    assert table(report, "q_comment_answered")["judgments answering"].sum() == 12
    # The judgments table (results.csv, <name>.jsonl) carries every question, the slider under its system.
    rows = read_csv(pulled / "results.csv")
    by_question: dict[str, list[dict[str, str]]] = {}
    for row in rows:
        by_question.setdefault(row["question"], []).append(row)
    assert {q: len(r) for q, r in by_question.items()} == {"errors": 18, "quality": 12, "domain": 12, "comment": 12}
    assert {(r["system"], r["answer"]) for r in by_question["quality"]} == {
        (s, str(BASE[s] + 5 * a)) for s in ("sys-a", "sys-b", "sys-c") for a in range(2)}  # fmt: skip
    kinds: dict[str, set[str]] = {}
    for line in (pulled / "mixed-kinds.jsonl").read_text("utf-8").splitlines():
        for j in json.loads(line)["judgments"]:
            kinds.setdefault(j["kind"], set()).add(j.get("aspect") or j.get("question") or j.get("control"))
    assert kinds == {"span": {"errors"}, "rating": {"quality"}, "answer": {"domain", "comment"}}
