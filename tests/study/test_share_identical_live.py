"""push --share-identical through the real server (issue #38 item 1): identical outputs of different systems
are one task, judged once; pull's result files and the report's tables by system credit its judgments to every
system that produced the text, while pull's counts and the agreement between annotators count each judgment once."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import krippendorff
import pytest

from annols.labelstudio.client import LabelStudioClient
from tests.conftest import ROOT, LiveServer
from tests.live_answers import number
from tests.study.test_push_pull import cli, shown_by_task

S1, S2 = "Der Zug fällt heute aus.", "Bitte schließen Sie das Fenster."
RECORDS = [
    {"id": "seg-1", "source_text": S1, "translation": "The train is cancelled today.", "systems": ["sys-a"]},
    {"id": "seg-1", "source_text": S1, "translation": "The train is cancelled today.", "systems": ["sys-b"]},
    {"id": "seg-1", "source_text": S1, "translation": "The train falls out today.", "systems": ["sys-c"]},
    {"id": "seg-2", "source_text": S2, "translation": "Please close the window.", "systems": ["sys-a"]},
    {"id": "seg-2", "source_text": S2, "translation": "Close window please.", "systems": ["sys-b"]},
    {"id": "seg-2", "source_text": S2, "translation": "Please close the window.", "systems": ["sys-c"]},
]
# Each rater's score of each text (not of a system: a shared text is judged once).
SCORES = {
    "r1@example.org": {"The train is cancelled today.": 90, "The train falls out today.": 30,
                       "Please close the window.": 80, "Close window please.": 50},
    "r2@example.org": {"The train is cancelled today.": 84, "The train falls out today.": 20,
                       "Please close the window.": 86, "Close window please.": 40},
}  # fmt: skip


def _read_csv(path: Path) -> list[dict[str, str]]:
    with open(path, encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def test_shared_task_is_credited_to_every_producing_system(
    label_studio: LiveServer, client: LabelStudioClient, tmp_path: Path
) -> None:
    definition = str(ROOT / "examples" / "wmt-da.toml")
    inputs = tmp_path / "da.jsonl"
    inputs.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in RECORDS), encoding="utf-8")
    title = "shared identical outputs"
    code, out, err = cli(label_studio, "push", definition, str(inputs), "--project", title, "--share-identical",
                         "--overlap", "2", cwd=tmp_path)  # fmt: skip
    assert code == 0, err
    assert "created 4, already present 0, total 4" in out
    assert out.splitlines()[-1].startswith("4 outputs share 2 tasks")
    # A re-push must keep the setting: without it, refused in one line; with it, nothing is sent twice.
    code, out, err = cli(label_studio, "push", definition, str(inputs), "--project", title, cwd=tmp_path)
    assert code != 0 and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert "was pushed with --share-identical" in err
    code, out, err = cli(label_studio, "push", definition, str(inputs), "--project", title, "--share-identical",
                         cwd=tmp_path)  # fmt: skip
    assert code == 0, err
    assert "created 0, already present 4, total 4" in out

    project = client.find_project(title)
    assert project is not None and project.task_count == 4
    tasks = client.export_tasks(project.id)
    rows = shown_by_task(tmp_path / ".annols", title)
    shares = sorted(sorted(s[0] for s in r.get("shares", [])) for r in rows.values())
    assert shares == [[], [], ["sys-a", "sys-b"], ["sys-a", "sys-c"]]
    for t in tasks:  # the server shows the text once and holds no system
        assert "sys-" not in json.dumps(t["data"]) + json.dumps(t["meta"])
    for rater, scores in SCORES.items():
        user = client.users().get(rater) or client.create_user(rater)
        for t in tasks:
            value = scores[t["data"]["translation"]]
            client.create_annotation(t["id"], [number("adequacy_translation", value, "translation")],
                                     completed_by=user, lead_time=2.0)  # fmt: skip

    pulled = tmp_path / "pulled"
    code, out, err = cli(label_studio, "pull", definition, "--project", title, "-o", str(pulled), "--strict",
                         cwd=tmp_path)  # fmt: skip
    assert code == 0, err
    assert "8 annotations" in out  # the server's: each judgment once
    # results.csv: each judgment of a shared task once per system that produced the text, with the same answer.
    expected = sorted((r["systems"][0], who, str(scores[r["translation"]]))
                      for r in RECORDS for who, scores in SCORES.items())  # fmt: skip
    results = _read_csv(pulled / "results.csv")
    assert sorted((r["system"], r["annotator"], r["answer"]) for r in results) == expected
    lines = [json.loads(line) for line in (pulled / "wmt-da.jsonl").read_text(encoding="utf-8").splitlines()]
    assert sorted((tuple(r["systems"]), r["annotator"]) for r in lines) == sorted(
        ((r["systems"][0],), who) for r in RECORDS for who in SCORES)
    assert len({r["annotation_id"] for r in lines}) == 8

    report = tmp_path / "report"
    code, out, err = cli(label_studio, "report", definition, str(pulled), "-o", str(report), cwd=tmp_path)
    assert code == 0, err
    text = (report / "report.md").read_text(encoding="utf-8")
    assert "4 outputs share 2 tasks" in text
    summary = {r["system"]: r for r in _read_csv(report / "tables" / "ratings_summary.csv")}
    for system in ("sys-a", "sys-b", "sys-c"):  # every system credited with both of its segments, by both raters
        mine = [scores[r["translation"]] for r in RECORDS if r["systems"] == [system] for scores in SCORES.values()]
        assert float(summary[system]["mean"]) == sum(mine) / len(mine)
    # Agreement counts each judgment once: the 4 tasks judged (not 6 system credits), alpha as krippendorff
    # computes it on the texts the raters scored.
    (agreement,) = _read_csv(report / "tables" / "ratings_agreement.csv")
    assert int(agreement["units (alpha)"]) == 4
    texts = sorted(SCORES["r1@example.org"])
    alpha = krippendorff.alpha([[SCORES[who][t] for t in texts] for who in SCORES], level_of_measurement="interval")
    assert float(agreement["Krippendorff alpha"]) == pytest.approx(alpha, abs=1e-4)
