"""The example studies in ``examples/`` against a real Label Studio, through the CLI: each
definition's config is accepted, its input is pushed (blinded), annotations planted per
system are posted, and pull brings back results.csv rows and judgments that name the
systems behind what the annotator saw."""

from __future__ import annotations

import csv
import json
from collections import Counter
from collections.abc import Callable
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
from tests.styles.test_ratings import NASTY, SMALL

EXAMPLES = ROOT / "examples"

# What the planted annotator answers, by the system shown (so unblinding can be checked).
SUMMEVAL = {
    "reference": {"coherence": 5, "consistency": 5, "fluency": 5, "relevance": 4},
    "lead-extract": {"coherence": 2, "consistency": 5, "fluency": 4, "relevance": 3},
    "abstractive-x": {"coherence": 4, "consistency": 1, "fluency": 5, "relevance": 2},
    "compressive-y": {"coherence": 1, "consistency": 3, "fluency": 1, "relevance": 2},
}
DA = {"system-a": 81, "system-b": 34}


def summeval_result(task: dict[str, Any], shown: tuple[str, ...]) -> list[dict[str, Any]]:
    return [
        {"id": f"r{i}{aspect[:3]}", "from_name": f"{aspect}_summary_{i + 1}", "to_name": f"summary_{i + 1}",
         "type": "choices", "value": {"choices": [str(score)]}, "origin": "manual"}
        for i, system in enumerate(shown) for aspect, score in SUMMEVAL[system].items()
    ]  # fmt: skip


def da_result(task: dict[str, Any], shown: tuple[str, ...]) -> list[dict[str, Any]]:
    return [{"id": "da", "from_name": "adequacy_translation", "to_name": "translation", "type": "number",
             "value": {"number": DA[shown[0]]}, "origin": "manual"}]  # fmt: skip


def arena_result(task: dict[str, Any], shown: tuple[str, ...]) -> list[dict[str, Any]]:
    better = "A" if shown[0] == "model-x" else "B"  # model-x is always the more helpful one
    return [
        {"id": "h1", "from_name": "helpfulness", "to_name": "response_a", "type": "choices",
         "value": {"choices": [better]}, "origin": "manual"},
        {"id": "h2", "from_name": "harmlessness", "to_name": "response_a", "type": "choices",
         "value": {"choices": ["tie"]}, "origin": "manual"},
    ]  # fmt: skip


PLANTED: dict[str, Callable[[dict[str, Any], tuple[str, ...]], list[dict[str, Any]]]] = {
    "summeval-ratings": summeval_result,
    "wmt-da": da_result,
    "chat-arena": arena_result,
}


def read_csv(path: Path) -> list[dict[str, str]]:
    with open(path, encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


@pytest.mark.parametrize("name", list(PLANTED))
def test_example_pushes_pulls_and_unblinds(
    label_studio: LiveServer, client: LabelStudioClient, tmp_path: Path, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The study's secret fixed: a new one would keep the order of all six two-candidate tasks 1 time in 32.
    monkeypatch.setattr(manifest_lib.secrets, "token_bytes", lambda n: b"s" * n)
    definition, inputs = EXAMPLES / f"{name}.toml", EXAMPLES / f"{name}.jsonl"
    d = protocols.load(str(definition))
    title = f"example {name}"
    code, out, err = cli(label_studio, "push", str(definition), str(inputs), "--project", title, "--seed", "3",
                         cwd=tmp_path)  # fmt: skip
    assert code == 0, err
    assert out.splitlines()[-1] == "created 6, already present 0, total 6"

    project = client.find_project(title)
    assert project is not None
    assert project.label_config.strip() == config.label_config(d).strip()
    tasks = client.export_tasks(project.id)
    records = {json.dumps(json.loads(line)["id"]): json.loads(line) for line in inputs.read_text("utf-8").splitlines()}
    me = client.whoami()
    shown_orders = set()
    manifest = shown_by_task(tmp_path / ".annols", title)  # what blinding depends on is not on the server
    for t in tasks:
        shown = tuple(manifest[t["id"]]["systems"])
        shown_orders.add(shown)
        # What each candidate pane shows is the text of the system recorded for it.
        assert "record" not in t["data"]  # the record's other fields stay in the manifest
        record = records[json.dumps(manifest[t["id"]]["extra"]["record"]["id"])]
        fields = blinding.candidate_fields(d)
        for position, system in enumerate(shown):
            assert t["data"][fields[position]] == record[fields[record["systems"].index(system)]]
        assert not any(system in json.dumps(t["data"]) for system in shown)
        client.create_annotation(t["id"], PLANTED[name](t, shown), completed_by=me["id"], lead_time=4.0)
    if name != "wmt-da":
        assert len(shown_orders) > 1  # blinded: the order changes from task to task

    out_dir = tmp_path / "pulled"
    code, out, err = cli(label_studio, "pull", str(definition), "--project", title, "-o", str(out_dir), cwd=tmp_path)
    assert code == 0, err
    assert "Counts match the server: 6 tasks, 6 annotations, 0 skipped." in out
    rows = read_csv(out_dir / "results.csv")
    # The report reads the pull; every system is in it by name.
    code, out, err = cli(label_studio, "report", str(definition), str(out_dir), "-o", str(tmp_path / "report"),
                         "--bootstrap", "0")  # fmt: skip
    assert code == 0, err
    assert out.startswith("6 items, 6 judgments from 1 source(s)"), out
    report = (tmp_path / "report" / "report.md").read_text("utf-8")
    assert all(system in report for record in records.values() for system in record["systems"])
    exported = list(read_export(out_dir / "export.json"))
    judgments = [j for task in exported for a in task.annotations for j in decode(d, task, a)]

    if name == "summeval-ratings":
        assert len(rows) == 6 * 16
        for row in rows:
            aspect = row["question"].split("_summary_")[0]
            assert row["answer"] == str(SUMMEVAL[row["system"]][aspect]), row
        rated = [j for j in judgments if isinstance(j, Rating)]
        assert len(rated) == len(judgments) == 6 * 16
        for j in rated:
            assert (j.value, j.code) == (SUMMEVAL[j.system][j.aspect], str(SUMMEVAL[j.system][j.aspect]))
        assert Counter(j.system for j in rated) == {system: 6 * 4 for system in SUMMEVAL}
    elif name == "wmt-da":
        assert sorted((r["system"], r["answer"]) for r in rows) == sorted(
            (s, str(DA[s])) for s in ["system-a", "system-b"] * 3
        )
        assert sorted((j.system, j.value) for j in judgments if isinstance(j, Rating)) == sorted(
            (s, float(DA[s])) for s in ["system-a", "system-b"] * 3
        )
        assert len(judgments) == 6
    else:
        helpful = [r for r in rows if r["question"] == "helpfulness"]
        harmless = [r for r in rows if r["question"] == "harmlessness"]
        assert len(helpful) == len(harmless) == 6
        assert {r["system"] for r in helpful} == {"model-x"} and {r["system"] for r in harmless} == {""}
        outcomes = Counter((j.aspect, j.outcome()) for j in judgments if isinstance(j, Preference))
        assert outcomes == {
            ("helpfulness", ("model-x", "model-y", "win")): 6,
            ("harmlessness", ("model-x", "model-y", "tie")): 6,
        }


def test_ratings_config_with_questions_and_hostile_text_is_accepted(client: LabelStudioClient, tmp_path: Path) -> None:
    """Beyond the examples: hints, a task-level question and text full of markup, on the real server."""
    quoted = json.dumps(NASTY)
    text = (
        SMALL.replace('title = "Summary 1"', f"title = {quoted}").replace(
            'hint = "Readable sentences."', f"hint = {quoted}"
        )
        + f'\n[[questions]]\nname = "note"\ntext = {quoted}\nkind = "text"\n'
    )
    path = tmp_path / "hostile.toml"
    path.write_text(text, encoding="utf-8")
    d = protocols.load(str(path))
    project, _ = client.create_project("ratings hostile", config.label_config(d), config.instructions(d))
    data = {"document": "D", "summary_1": "S1 " + NASTY, "summary_2": "S2"}
    (task_id,) = client.import_tasks(project.id, [{"data": data}])
    result = [
        {"id": "a", "from_name": "fluency_summary_2", "to_name": "summary_2", "type": "choices",
         "value": {"choices": ["3"]}, "origin": "manual"},
        {"id": "b", "from_name": "note", "to_name": "summary_1", "type": "textarea",
         "value": {"text": [NASTY]}, "origin": "manual"},
    ]  # fmt: skip
    client.create_annotation(task_id, result, completed_by=client.whoami()["id"])
    (exported,) = client.export_tasks(project.id)
    assert exported["data"] == data and exported["annotations"][0]["result"] == result
    stored = client.find_project("ratings hostile")
    assert stored is not None and stored.label_config.strip() == config.label_config(d).strip()
