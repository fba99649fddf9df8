"""A hybrid study through the real server: `annols push --judge J --human-share 0.5` sends only the drawn half of a
planted own study (tests/own_study.py) to Label Studio, keeps the draw in the manifest and the judge and the
other half off the server; a re-push draws the same half and another seed is refused; three annotators judge the
half through the API; the pull brings the judge-only items back; the report gives judge-assisted (PPI++) estimates
beside the humans' own, and states the gain."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from annols.labelstudio.client import LabelStudioClient
from annols.study import manifest
from tests import judges_expected as expect
from tests.conftest import LiveServer
from tests.judges_study import answers, majority_truth
from tests.own_study import ANNOTATORS, ITEMS, STUDIES
from tests.study.test_push_pull import cli, shown_by_task

pytestmark = pytest.mark.server

JUDGE = "copycat"


@pytest.mark.parametrize("style", ["ratings", "pairwise", "ranking"])
def test_hybrid_push_pull_report(style: str, label_studio: LiveServer, client: LabelStudioClient,
                                 tmp_path: Path) -> None:  # fmt: skip
    study = STUDIES[style]
    definition = tmp_path / f"{study.name}.toml"
    definition.write_text(study.definition, encoding="utf-8")
    inputs = tmp_path / "inputs.jsonl"
    records = [{**study.record(i), "id": f"rec-{i}"} for i in range(ITEMS)]
    inputs.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    judge = tmp_path / "judge.jsonl"
    lines = [{"id": f"rec-{i}", "judge": JUDGE, "answers": answers(study, i, majority_truth(study, i))}
             for i in range(ITEMS)]  # fmt: skip
    judge.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    title = f"hybrid {study.name}"
    push = ["push", str(definition), str(inputs), "--project", title, "--overlap", "3", "--judge", str(judge),
            "--human-share", "0.5"]  # fmt: skip

    code, out, err = cli(label_studio, *push, "--seed", "5", cwd=tmp_path)
    assert code == 0, err
    assert "humans get 12 of 24 items (share 0.5, seed 5); the other 12 are the judge's only" in out
    project = client.find_project(title)
    assert project is not None
    tasks = client.export_tasks(project.id)
    assert len(tasks) == ITEMS // 2
    header, rows = manifest.read_rows(manifest.manifest_path(tmp_path / ".annols", title))
    assert header["hybrid"] == {"share": 0.5, "seed": 5, "items": ITEMS, "humans": ITEMS // 2}
    human_keys = {r["key"] for r in rows}
    assert len(human_keys) == ITEMS // 2
    store = tmp_path / ".annols" / f"hybrid-{study.name}.judges"
    pool = [json.loads(line) for line in (store / "pool.jsonl").read_text("utf-8").splitlines()]
    assert len(pool) == ITEMS // 2 and not human_keys & {p["key"] for p in pool}
    on_server = json.dumps(tasks)
    assert JUDGE not in on_server  # the judge stays off the server
    assert not any(p["data"]["record"]["id"] in on_server for p in pool)  # so do the judge-only items

    code, out, err = cli(label_studio, *push, "--seed", "5", cwd=tmp_path)  # the same draw: nothing new
    assert code == 0, err
    assert "created 0, already present 12, total 12" in out
    code, out, err = cli(label_studio, *push, "--seed", "6", cwd=tmp_path)
    assert code != 0 and "records a hybrid draw of share 0.5 with seed 5" in err + out
    assert "Traceback" not in err + out

    users = client.users()
    ids = {a: users.get(expect.email(a)) or client.create_user(expect.email(a)) for a in ANNOTATORS}
    shown = shown_by_task(tmp_path / ".annols", title)
    for task in tasks:
        item = task["data"]["record"]["item"]
        for a in ANNOTATORS:
            result = study.result(study.truth(item, a), tuple(shown[task["id"]]["systems"]))
            client.create_annotation(task["id"], result, completed_by=ids[a])

    folder = tmp_path / "pulled"
    code, _, err = cli(label_studio, "pull", str(definition), "--project", title, "-o", str(folder), cwd=tmp_path)
    assert code == 0, err
    assert (folder / "judges" / "pool.jsonl").is_file()
    # convert reads the pull's judges as pull did: the judge's lines on judge-only items are no error
    code, _, err = cli(label_studio, "convert", str(definition), str(folder / "export.json"), "-o",
                       str(tmp_path / "converted"))  # fmt: skip
    assert code == 0, err
    report = tmp_path / "report"
    code, _, err = cli(label_studio, "report", str(definition), str(folder), "-o", str(report), "--bootstrap", "0")
    assert code == 0, err
    text = (report / "report.md").read_text("utf-8")
    assert "Judge-assisted estimates (PPI++)" in text
    assert "12 items have the judge's answers only, 12 the humans'" in text
    with (report / "tables" / "judge_assisted.csv").open(encoding="utf-8", newline="") as f:
        table = list(csv.DictReader(f))
    assert table and {r["judge"] for r in table} == {f"judge:{JUDGE}"}
    for r in table:  # ratings: every item holds every system; pairwise: an item holds one pair
        assert 2 <= int(r["items with humans"]) <= 12 and 2 <= int(r["judge-only items"]) <= 12
    if style == "ratings":
        assert {r["items with humans"] for r in table} == {"12"} and {r["judge-only items"] for r in table} == {"12"}
    assert any(" - " in r["estimate"] for r in table) and any(" - " not in r["estimate"] for r in table)
    for r in table:
        assert float(r["PPI++ low"]) <= float(r["PPI++"]) <= float(r["PPI++ high"])
        assert float(r["width ratio"]) <= 1 + 1e-9  # never wider than the humans' own
    assert "the judge made 12 human items worth" in text or "the judge did not help" in text
