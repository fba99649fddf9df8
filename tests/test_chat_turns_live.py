"""Conversations judged whole, against a real Label Studio, through the CLI: examples/chat-per-turn.toml (every
assistant turn rated in one task) and examples/chat-spans.toml (errors marked inside one message). The configs
are accepted, the inputs pushed (the turns sent beside the conversation), answers of two annotators posted per
system shown, and pull and report give judgments naming system, turn or message, per-turn tables and agreement
over (item, system, turn) units, error scores and span agreement over the conversations."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import krippendorff
import numpy as np
import pytest

from annols import protocols
from annols.definition import fields
from annols.labelstudio.client import LabelStudioClient
from annols.protocols import config
from tests.conftest import ROOT, LiveServer
from tests.study.test_push_pull import cli, shown_by_task

EXAMPLES = ROOT / "examples"
SECOND = "second.rater@example.org"
# (system, turn, annotator) -> (helpfulness, correctness); model-x better, the second rater one lower on turn 2
BASE = {"model-x": (5, 4), "model-y": (2, 1)}


def score(system: str, turn: int, second: bool, item: str) -> tuple[int, int]:
    h, c = BASE[system]
    shift = int(second and turn == 2) + int(item == "conv-2" and system == "model-y" and not second)
    return max(1, h - shift), max(1, c - shift)


def tables(report: Path, name: str) -> list[dict[str, str]]:
    with (report / "tables" / f"{name}.csv").open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def push(live: LiveServer, client: LabelStudioClient, name: str, tmp_path: Path
         ) -> tuple[list[dict[str, Any]], dict[int, dict[str, Any]]]:  # fmt: skip
    definition, inputs = EXAMPLES / f"{name}.toml", EXAMPLES / f"{name}.jsonl"
    title = f"chat whole {name}"
    code, out, err = cli(live, "push", str(definition), str(inputs), "--project", title, cwd=tmp_path)
    assert code == 0, err
    assert out.splitlines()[-1] == "created 6, already present 0, total 6"
    project = client.find_project(title)
    assert project is not None
    assert project.label_config.strip() == config.label_config(protocols.load(str(definition))).strip()
    return client.export_tasks(project.id), shown_by_task(tmp_path / ".annols", title)


def test_turns_rated_in_one_task_pull_and_report(
    label_studio: LiveServer, client: LabelStudioClient, tmp_path: Path
) -> None:
    tasks, manifest = push(label_studio, client, "chat-per-turn", tmp_path)
    raters = [client.whoami()["id"], client.users().get(SECOND) or client.create_user(SECOND)]
    given: dict[tuple[str, str, int, str, int], int] = {}
    for t in tasks:
        system = manifest[t["id"]]["systems"][0]
        item = manifest[t["id"]]["extra"]["record"]["id"]
        turns = t["data"][fields.turns_key("conversation")]
        assert turns == fields.assistant_turns(t["data"]["conversation"])  # sent beside the conversation
        for n, rater in enumerate(raters):
            result = []
            for k in range(len(turns)):
                for aspect, value in zip(("helpfulness", "correctness"), score(system, k + 1, n == 1, item),
                                         strict=True):  # fmt: skip
                    given[(item, system, k + 1, aspect, n)] = value
                    result.append({"id": f"{aspect}{k}", "from_name": f"{aspect}__turn{k}",
                                   "to_name": f"conversation__turn{k}", "type": "choices",
                                   "value": {"choices": [str(value)]}, "origin": "manual"})  # fmt: skip
            client.create_annotation(t["id"], result, completed_by=rater, lead_time=3.0)

    out = tmp_path / "pulled"
    code, text, err = cli(label_studio, "pull", str(EXAMPLES / "chat-per-turn.toml"), "--project",
                          "chat whole chat-per-turn", "-o", str(out), cwd=tmp_path)  # fmt: skip
    assert code == 0, err
    assert "Counts match the server: 6 tasks, 12 annotations, 0 skipped." in text
    lines = [json.loads(x) for x in (out / "chat-per-turn.jsonl").read_text("utf-8").splitlines()]
    pulled = {}
    for line in lines:
        assert fields.turns_key("conversation") not in line["data"]
        n = 0 if line["annotator"] == client.whoami()["email"] else 1
        for j in line["judgments"]:
            pulled[(line["data"]["record"]["id"], j["system"], j["turn"], j["aspect"], n)] = int(j["value"])
    assert pulled == given  # every rating named by item, system, turn and aspect

    report = tmp_path / "report"
    code, _, err = cli(label_studio, "report", str(EXAMPLES / "chat-per-turn.toml"), str(out), "-o", str(report),
                       "--bootstrap", "0")  # fmt: skip
    assert code == 0, err
    summary = {(r["aspect"], r["system"]): r for r in tables(report, "ratings_summary")}
    for (aspect, system), row in summary.items():  # the item is the sample: 3 conversations per system
        assert row["samples"] == "3"
        aspect_name = aspect.lower()
        per_item = [np.mean([v for (i, s, _, a, _), v in given.items() if (i, s, a) == (item, system, aspect_name)])
                    for item in ("conv-1", "conv-2", "conv-3")]  # fmt: skip
        assert float(row["mean"]) == pytest.approx(np.mean(per_item), abs=1e-4)
    turns = {(r["aspect"], r["system"], r["turn"]): r for r in tables(report, "ratings_turns")}
    assert turns[("helpfulness", "model-x", "3")]["samples"] == "1"  # only conv-3 has a third turn
    agreement = {(r["aspect"], r["turn"]): r for r in tables(report, "ratings_agreement_turns")}
    for aspect in ("helpfulness", "correctness"):
        for turn in ("1", "2", "all"):
            units = sorted({(i, s, t) for (i, s, t, a, _) in given if a == aspect and turn in ("all", str(t))})
            matrix = np.array([[given[(i, s, t, aspect, n)] for (i, s, t) in units] for n in (0, 1)], dtype=float)
            expected = krippendorff.alpha(reliability_data=matrix, level_of_measurement="ordinal",
                                          value_domain=[1, 2, 3, 4, 5])  # fmt: skip
            row = agreement[(aspect, turn)]
            assert int(row["units (alpha)"]) == len(units)
            assert float(row["Krippendorff alpha"]) == pytest.approx(expected, abs=1e-4)


def test_spans_in_messages_pull_and_report(
    label_studio: LiveServer, client: LabelStudioClient, tmp_path: Path
) -> None:
    tasks, manifest = push(label_studio, client, "chat-spans", tmp_path)
    raters = [client.whoami()["id"], client.users().get(SECOND) or client.create_user(SECOND)]
    marked = {}
    for t in tasks:
        system = manifest[t["id"]]["systems"][0]
        item = manifest[t["id"]]["extra"]["record"]["id"]
        conversation = t["data"]["conversation"]
        last = max(i for i, m in enumerate(conversation) if m["role"] == "assistant")
        content = conversation[last]["content"]
        for n, rater in enumerate(raters):
            if system == "model-x":
                result = [{"id": "none", "from_name": "errors_none", "to_name": "conversation", "type": "choices",
                           "value": {"choices": ["No errors"]}, "origin": "manual"}]  # fmt: skip
            else:  # both mark the last assistant message's last word; the second rater from one character later
                start, end = content.rindex(" ") + 1 + n, len(content)
                marked[(item, n)] = (last, start, end, content[start:end])
                value = {"start": str(last), "end": str(last), "startOffset": start, "endOffset": end}
                result = [{"id": "r1", "from_name": "errors", "to_name": "conversation", "type": "paragraphlabels",
                           "value": {**value, "paragraphlabels": ["Factual"]}, "origin": "manual"},
                          {"id": "r1", "from_name": "severity", "to_name": "conversation", "type": "choices",
                           "value": {**value, "choices": ["major" if n == 0 else "minor"]},
                           "origin": "manual"}]  # fmt: skip
            client.create_annotation(t["id"], result, completed_by=rater, lead_time=3.0)

    out = tmp_path / "pulled"
    code, text, err = cli(label_studio, "pull", str(EXAMPLES / "chat-spans.toml"), "--project",
                          "chat whole chat-spans", "-o", str(out), cwd=tmp_path)  # fmt: skip
    assert code == 0, err
    assert "Counts match the server: 6 tasks, 12 annotations, 0 skipped." in text
    found = {}
    for line in (json.loads(x) for x in (out / "chat-spans.jsonl").read_text("utf-8").splitlines()):
        n = 0 if line["annotator"] == client.whoami()["email"] else 1
        for j in line["judgments"]:
            if j["kind"] == "span":
                assert j["system"] == "model-y"
                found[(line["data"]["record"]["id"], n)] = (j["message"], j["start"], j["end"], j["text"])
    assert found == marked

    report = tmp_path / "report"
    code, _, err = cli(label_studio, "report", str(EXAMPLES / "chat-spans.toml"), str(out), "-o", str(report),
                       "--bootstrap", "0")  # fmt: skip
    assert code == 0, err
    side = {r["system"]: r for r in tables(report, "scores_and_spans")}
    assert float(side["model-y"]["mean error score"]) == pytest.approx(3.0)  # (5 + 1) / 2 per conversation
    assert float(side["model-x"]["mean error score"]) == 0.0
    [test] = [r for r in tables(report, "error_score_paired_tests") if r["aspect"] == "error score"]
    assert test["samples"] == "3"  # the item (what the user said) pairs the two systems' conversations
    [every] = [r for r in tables(report, "spans_agreement") if r["label"] == "all labels"]
    # The two raters' spans overlap but differ by a character: no exact match, every span overlap-matched.
    assert (every["exact matches"], float(every["overlap F1"])) == ("0", 1.0)
