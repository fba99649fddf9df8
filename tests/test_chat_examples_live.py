"""The chat examples against a real Label Studio, through the CLI: examples/arena.toml (two multi-turn
conversations side by side) and examples/chat-turns.toml (ratings of each assistant turn after the
conversation so far). Each config is accepted by the server, the inputs are pushed (conversations
as lists of messages, blinded), answers planted per system shown are posted, and pull and report
bring back judgments naming the systems behind what was shown."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from annols import protocols
from annols.definition import blinding
from annols.labelstudio.client import LabelStudioClient
from annols.protocols import config
from annols.study import manifest as manifest_lib
from annols.study.exports import read_export
from annols.styles import decode
from annols.styles.judgments import Preference, Rating
from tests.conftest import ROOT, LiveServer
from tests.study.test_push_pull import cli, shown_by_task

EXAMPLES = ROOT / "examples"
BEST = ["model-x", "model-z", "model-y"]  # the planted annotator's order: x beats z beats y
TURN_SCORES = {"model-x": {"helpfulness": 5, "correctness": 4}, "model-y": {"helpfulness": 2, "correctness": 1}}


def arena_answer(shown: tuple[str, ...]) -> list[dict[str, Any]]:
    code = "A" if BEST.index(shown[0]) < BEST.index(shown[1]) else "B"
    return [{"id": "o1", "from_name": "overall", "to_name": "conversation_a", "type": "choices",
             "value": {"choices": [code]}, "origin": "manual"}]  # fmt: skip


def turn_answer(shown: tuple[str, ...]) -> list[dict[str, Any]]:
    return [{"id": f"r{aspect[:3]}", "from_name": f"{aspect}_reply", "to_name": "reply", "type": "choices",
             "value": {"choices": [str(score)]}, "origin": "manual"}
            for aspect, score in TURN_SCORES[shown[0]].items()]  # fmt: skip


@pytest.mark.parametrize("name", ["arena", "chat-turns"])
def test_chat_example_pushes_pulls_and_names_the_systems(
    label_studio: LiveServer, client: LabelStudioClient, tmp_path: Path, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The study's secret fixed: with a new one, the arena's two-candidate tasks would all keep one order now and
    # then, and the "blinded" check below would fail by chance.
    monkeypatch.setattr(manifest_lib.secrets, "token_bytes", lambda n: b"s" * n)
    definition, inputs = EXAMPLES / f"{name}.toml", EXAMPLES / f"{name}.jsonl"
    d = protocols.load(str(definition))
    title = f"chat example {name}"
    code, out, err = cli(label_studio, "push", str(definition), str(inputs), "--project", title, "--seed", "3",
                         cwd=tmp_path)  # fmt: skip
    assert code == 0, err
    assert out.splitlines()[-1] == "created 6, already present 0, total 6"
    project = client.find_project(title)
    assert project is not None and project.label_config.strip() == config.label_config(d).strip()

    records = {r["id"]: r for r in (json.loads(x) for x in inputs.read_text("utf-8").splitlines())}
    manifest = shown_by_task(tmp_path / ".annols", title)
    me = client.whoami()
    orders = set()
    for t in client.export_tasks(project.id):
        shown = tuple(manifest[t["id"]]["systems"])
        orders.add(shown)
        assert "record" not in t["data"]  # the record's other fields stay in the manifest
        record = records[manifest[t["id"]]["extra"]["record"]["id"]]
        fields = blinding.candidate_fields(d)
        for position, system in enumerate(shown):  # each pane holds the shown system's own text, as given
            assert t["data"][fields[position]] == record[fields[record["systems"].index(system)]]
        if name == "chat-turns":
            assert t["data"]["history"] == record["history"]  # the conversation so far, message by message
        assert not any(system in json.dumps(t["data"]) for system in shown)
        answer = arena_answer(shown) if name == "arena" else turn_answer(shown)
        client.create_annotation(t["id"], answer, completed_by=me["id"], lead_time=3.0)
    if name == "arena":
        assert len(orders) > 1  # blinded

    out_dir = tmp_path / "pulled"
    code, out, err = cli(label_studio, "pull", str(definition), "--project", title, "-o", str(out_dir), cwd=tmp_path)
    assert code == 0, err
    assert "Counts match the server: 6 tasks, 6 annotations, 0 skipped." in out
    judgments = [j for task in read_export(out_dir / "export.json") for a in task.annotations
                 for j in decode(d, task, a)]  # fmt: skip
    if name == "arena":
        wins = Counter((j.outcome()) for j in judgments if isinstance(j, Preference))
        expected: Counter[tuple[str, str, str]] = Counter()
        for r in records.values():
            first, second = sorted(r["systems"])
            expected[(first, second, "win" if BEST.index(first) < BEST.index(second) else "loss")] += 1
        assert wins == expected
    else:
        rated = sorted((j.system, j.aspect, j.value) for j in judgments if isinstance(j, Rating))
        assert rated == sorted((r["systems"][0], aspect, float(score)) for r in records.values()
                               for aspect, score in TURN_SCORES[r["systems"][0]].items())  # fmt: skip
    code, out, err = cli(label_studio, "report", str(definition), str(out_dir), "-o", str(tmp_path / "report"),
                         "--bootstrap", "0")  # fmt: skip
    assert code == 0, err
    report = (tmp_path / "report" / "report.md").read_text("utf-8")
    assert all(s in report for r in records.values() for s in r["systems"])
