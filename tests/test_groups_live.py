"""Ratings of many systems, a few per task, through the real Label Studio and the CLI: six
systems and a human reference per source sentence, three panes per task (the reference and
two of the six). Pushed (groups balanced, reference in every task, systems hidden, positions
shuffled), pushed again (nothing added), answered by two annotators from the text each pane
shows, pulled: every rating names the system whose input text was shown, and the report's
means equal an independent count."""

from __future__ import annotations

import csv
import itertools
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from annols import protocols
from annols.labelstudio.client import LabelStudioClient
from annols.protocols import config
from annols.study import manifest as manifest_lib
from annols.study.exports import read_export
from annols.styles import decode
from annols.styles.judgments import Rating
from tests.conftest import ROOT, LiveServer
from tests.study.test_push_pull import cli, shown_by_task

EXAMPLE = ROOT / "examples" / "da-groups.toml"
INPUT = ROOT / "examples" / "da-groups.jsonl"
RECORDS = [json.loads(line) for line in INPUT.read_text("utf-8").splitlines()]
SYSTEM_OF = {(r["source_text"], r["translation"]): r["system"] for r in RECORDS}  # from the input alone
SYSTEMS = sorted({r["system"] for r in RECORDS} - {"human"})
SCORE = {"human": 95, **{s: 20 + 10 * i for i, s in enumerate(SYSTEMS)}}
ANNOTATORS = {"groups1@example.org": 0, "groups2@example.org": 1}  # the second scores each output one higher
PANES = 3


def three_panes(tmp_path: Path) -> Path:
    """The example with three panes: the reference and two of the six systems per task."""
    text = EXAMPLE.read_text("utf-8").replace('[[candidates]]\nname = "translation_4"\ntitle = "Translation D"\n', "")
    assert text.count("[[candidates]]") == PANES
    path = tmp_path / "da-groups-3.toml"
    path.write_text(text.replace('name = "da-groups"', 'name = "da-groups-3"'), encoding="utf-8")
    return path


def result(data: dict[str, Any], extra: int) -> list[dict[str, Any]]:
    return [{"id": f"r{i}", "from_name": f"adequacy_translation_{i}", "to_name": f"translation_{i}", "type": "number",
             "value": {"number": SCORE[SYSTEM_OF[(data["source_text"], data[f"translation_{i}"])]] + extra},
             "origin": "manual"} for i in range(1, PANES + 1)]  # fmt: skip


def test_six_systems_three_panes_with_a_reference_round_trip(
    label_studio: LiveServer, client: LabelStudioClient, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The study's secret fixed: with a new one, the reference would miss one of three panes in 18 tasks 1 time in
    # 480 ((2/3)^18 for each pane).
    monkeypatch.setattr(manifest_lib.secrets, "token_bytes", lambda n: b"s" * n)
    definition = three_panes(tmp_path)
    d = protocols.load(str(definition))
    title = "groups live"
    for expected in ("created 18, already present 0, total 18", "created 0, already present 18, total 18"):
        code, out, err = cli(label_studio, "push", str(definition), str(INPUT), "--project", title, "--seed", "4",
                             cwd=tmp_path)  # fmt: skip
        assert code == 0, err
        assert out.splitlines()[-1] == expected  # three sentences: six systems x 2 appearances / 2 places each
    project = client.find_project(title)
    assert project is not None and project.label_config.strip() == config.label_config(d).strip()

    tasks = client.export_tasks(project.id)
    assert len(tasks) == 18
    shown_in: Counter[tuple[str, str]] = Counter()
    met: Counter[tuple[str, str]] = Counter()
    reference_at = set()
    users = {email: client.users().get(email) or client.create_user(email) for email in ANNOTATORS}
    manifest = shown_by_task(tmp_path / ".annols", title)  # what blinding depends on is not on the server
    for t in tasks:
        shown = tuple(manifest[t["id"]]["systems"])
        assert not any(s in json.dumps(t["data"]) for s in shown)  # hidden from annotators
        # The meta's systems are the ones whose input text each pane shows.
        assert shown == tuple(SYSTEM_OF[(t["data"]["source_text"], t["data"][f"translation_{i}"])]
                              for i in range(1, PANES + 1))  # fmt: skip
        assert shown.count("human") == 1
        reference_at.add(shown.index("human"))
        shown_in.update((t["data"]["source_text"], s) for s in shown)
        met.update(itertools.combinations(sorted(s for s in shown if s != "human"), 2))
        for email, extra in ANNOTATORS.items():
            client.create_annotation(t["id"], result(t["data"], extra), completed_by=users[email], lead_time=5.0)
    assert reference_at == {0, 1, 2}  # the reference is shuffled with the others
    sources = {r["source_text"] for r in RECORDS}
    assert shown_in == {(src, s): 6 if s == "human" else 2 for src in sources for s in ["human", *SYSTEMS]}
    assert sorted(met.values()) == [1] * 12 + [2] * 3  # 18 meetings over 15 pairs: the most even spread

    pulled = tmp_path / "pulled"
    code, out, err = cli(label_studio, "pull", str(definition), "--project", title, "-o", str(pulled), cwd=tmp_path)
    assert code == 0, err
    assert "Counts match the server: 18 tasks, 36 annotations, 0 skipped." in out
    exported = {task.key: task for task in read_export(pulled / "export.json")}
    ratings = [(task, j) for task in exported.values() for a in task.annotations for j in decode(d, task, a)]
    assert len(ratings) == 18 * 2 * PANES
    for task, j in ratings:
        assert isinstance(j, Rating)
        assert j.system == SYSTEM_OF[(task.data["source_text"], task.data[j.candidate])]
        assert j.value - SCORE[j.system] in (0, 1)
    assert Counter(j.system for _, j in ratings) == {"human": 36, **dict.fromkeys(SYSTEMS, 12)}
    with open(pulled / "results.csv", encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == len(ratings)
    for row in rows:
        data = exported[row["task_key"]].data
        pane = row["question"].removeprefix("adequacy_")
        assert row["system"] == SYSTEM_OF[(data["source_text"], data[pane])]
        assert int(row["answer"]) - SCORE[row["system"]] == ANNOTATORS[row["annotator"]]

    report = tmp_path / "report"
    code, out, err = cli(label_studio, "report", str(definition), str(pulled), "-o", str(report), "--bootstrap", "0")
    assert code == 0, err
    with open(report / "tables" / "ratings_summary.csv", encoding="utf-8", newline="") as f:
        summary = {r["system"]: r for r in csv.DictReader(f)}
    assert set(summary) == {"human", *SYSTEMS}
    for system, r in summary.items():
        assert int(r["ratings"]) == (36 if system == "human" else 12)
        assert float(r["mean"]) == SCORE[system] + 0.5
