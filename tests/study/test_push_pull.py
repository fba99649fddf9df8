"""push and pull against the real Label Studio, through the CLI, with a user's own
pairwise definition read by the generic format: blinding, idempotence, annotators,
the tidy table, an interrupted push, and the one-line errors."""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from annols import protocols
from annols.cli import main
from annols.definition import blinding
from annols.labelstudio.client import LabelStudioClient
from annols.study import manifest
from annols.study.manifest import server_key
from tests.conftest import LiveServer
from tests.definition.test_definition import MINIMAL

SYSTEMS = ("bart", "pegasus")


@pytest.fixture
def study(tmp_path: Path) -> tuple[Path, Path]:
    definition = tmp_path / "headlines.toml"
    tie = '[[answers]]\ncode = "2"\n\n[[answers]]\ncode = "0"'
    definition.write_text(MINIMAL.replace('[[answers]]\ncode = "2"', tie))
    inputs = tmp_path / "headlines.jsonl"
    with open(inputs, "w", encoding="utf-8") as f:
        for i in range(40):
            f.write(json.dumps({
                "headline_1": f"Headline {i} by bart: Praha žije 🎉",
                "headline_2": f"Headline {i} by pegasus",
                "systems": list(SYSTEMS),
                "id": i,
            }, ensure_ascii=False) + "\n")  # fmt: skip
    return definition, inputs


def invoke(env: Mapping[str, str | None], *args: str, cwd: Path | None = None) -> tuple[int, str, str]:
    """annols through CliRunner with ``env`` (None unsets a variable), run in ``cwd`` when given so that the
    command's relative paths resolve there: exit code, stdout, stderr."""
    old = os.getcwd()
    if cwd:
        os.chdir(cwd)
    try:
        result = CliRunner(env=env).invoke(main, list(args))
    finally:
        os.chdir(old)
    return result.exit_code, result.stdout, result.stderr


def cli(server: LiveServer, *args: str, cwd: Path | None = None) -> tuple[int, str, str]:
    return invoke({"LABEL_STUDIO_URL": server.url, "LABEL_STUDIO_API_KEY": server.api_key}, *args, cwd=cwd)


def shown_by_task(manifest_dir: Path, title: str) -> dict[int, dict[str, Any]]:
    """Task id -> the manifest's row (key, systems shown, order, role): what blinding depends on is kept there."""
    return {int(r["task_id"]): r for r in manifest.read_rows(manifest.manifest_path(manifest_dir, title))[1]}


def test_push_is_idempotent_blinded_and_pulls_tidy_rows(
    label_studio: LiveServer, client: LabelStudioClient, study: tuple[Path, Path], tmp_path: Path
) -> None:
    definition, inputs = study
    title = "headlines blinded"
    code, out, err = cli(label_studio, "push", str(definition), str(inputs), "--project", title,
                         "--batch-size", "7", "--overlap", "3", "--seed", "5", cwd=tmp_path)  # fmt: skip
    assert code == 0, err
    assert out.splitlines()[-1] == "created 40, already present 0, total 40"

    code, out, err = cli(label_studio, "push", str(definition), str(inputs), "--project", title, cwd=tmp_path)
    assert code == 0, err
    assert out.splitlines()[-1] == "created 0, already present 40, total 40"

    project = client.find_project(title)
    assert project is not None and project.task_count == 40
    assert client.project(project.id)["maximum_annotations"] == 3
    tasks = client.export_tasks(project.id)
    keys = [t["meta"][blinding.META_KEY] for t in tasks]
    assert len(set(keys)) == 40

    # Blinding: both orders occur, the text shown matches the systems the manifest records, and
    # no system name is in the meta: it holds the key only.
    orders = set()
    rows = shown_by_task(tmp_path / ".annols", title)
    for t in tasks:
        shown = tuple(rows[t["id"]]["systems"])
        orders.add(shown)
        assert ("by bart" in t["data"]["headline_1"]) == (shown[0] == "bart")
        assert list(t["meta"]) == [blinding.META_KEY] and server_key(rows[t["id"]]) == t["meta"][blinding.META_KEY]
    assert orders == {SYSTEMS, SYSTEMS[::-1]}

    manifest = tmp_path / ".annols" / "headlines-blinded.manifest.jsonl"
    lines = [json.loads(line) for line in manifest.read_text("utf-8").splitlines()]
    assert lines[0]["project_id"] == project.id and len(lines) == 41
    assert label_studio.api_key not in manifest.read_text("utf-8")

    # Three annotators, each prefers bart in "fluency" whatever its position.
    emails = [f"rater{i}@example.org" for i in range(3)]
    users = client.users()
    ids = {e: users.get(e) or client.create_user(e) for e in emails}
    for task_id in [t["id"] for t in tasks][:5]:
        shown = tuple(rows[task_id]["systems"])
        code_for_bart = "1" if shown[0] == "bart" else "2"
        for e in emails:
            result = [{"id": "f", "from_name": "fluency", "to_name": "headline_1", "type": "choices",
                       "value": {"choices": [code_for_bart]}, "origin": "manual"}]  # fmt: skip
            client.create_annotation(task_id, result, completed_by=ids[e], lead_time=3.0)

    out_dir = tmp_path / "pulled"
    code, out, err = cli(label_studio, "pull", str(definition), "--project", title, "-o", str(out_dir), "--strict",
                         cwd=tmp_path)  # fmt: skip
    assert code == 0, err
    assert "Counts match the server: 40 tasks, 15 annotations, 0 skipped." in out
    with open(out_dir / "results.csv", encoding="utf-8", newline="") as f:
        tidy = list(csv.DictReader(f))
    assert len(tidy) == 15
    assert {r["annotator"] for r in tidy} == set(emails)
    assert {r["system"] for r in tidy} == {"bart"}  # unblinded: every vote is for bart
    assert all(r["question"] == "fluency" and r["lead_time"] == "3.0" for r in tidy)
    assert json.loads((out_dir / "export.json").read_text("utf-8"))[0]["id"] == tasks[0]["id"]

    # convert on the saved export gives the same files (emails aside, which need the server)
    again = tmp_path / "again"
    code, out, err = cli(label_studio, "convert", str(definition), str(out_dir / "export.json"), "-o", str(again))
    assert code == 0, err
    assert (again / "results.csv").read_text("utf-8").count("\n") == 16


def test_push_checks_every_record_before_sending_anything(
    label_studio: LiveServer, client: LabelStudioClient, study: tuple[Path, Path], tmp_path: Path
) -> None:
    definition, inputs = study
    lines = inputs.read_text("utf-8").splitlines()
    lines[30] = json.dumps({"headline_1": "only one"})
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, out, err = cli(label_studio, "push", str(definition), str(bad), "--project", "never created")
    assert code == 1 and out == ""
    assert err == f"Error: {bad}, line 31, field 'headline_2': missing; every task needs it\n"
    assert client.find_project("never created") is None


def test_push_into_a_project_of_another_protocol_is_refused(
    label_studio: LiveServer, study: tuple[Path, Path], tmp_path: Path
) -> None:
    definition, inputs = study
    assert cli(label_studio, "push", str(definition), str(inputs), "--project", "other proto", cwd=tmp_path)[0] == 0
    other = tmp_path / "other.toml"
    other.write_text(definition.read_text("utf-8").replace('name = "fluency"', 'name = "accuracy"'))
    code, _, err = cli(label_studio, "push", str(other), str(inputs), "--project", "other proto", cwd=tmp_path)
    assert code == 1 and "exists with a different labeling config" in err and len(err.splitlines()) == 1


def test_interrupted_push_resumes_without_duplicates(
    label_studio: LiveServer, client: LabelStudioClient, study: tuple[Path, Path], tmp_path: Path
) -> None:
    definition, _ = study
    big = tmp_path / "big.jsonl"
    with open(big, "w", encoding="utf-8") as f:
        for i in range(3000):
            f.write(json.dumps({"headline_1": f"A {i}", "headline_2": f"B {i}", "systems": list(SYSTEMS)}) + "\n")
    title = "interrupted push"
    env = {**os.environ, "LABEL_STUDIO_URL": label_studio.url, "LABEL_STUDIO_API_KEY": label_studio.api_key}
    command = [sys.executable, "-m", "annols.cli", "push", str(definition), str(big), "--project", title,
               "--batch-size", "50"]  # fmt: skip
    process = subprocess.Popen(command, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    project = None
    while time.monotonic() < deadline:
        project = client.find_project(title)
        if project is not None and (project.task_count or 0) >= 100:
            break
        time.sleep(0.05)
    process.send_signal(signal.SIGKILL)  # no chance to clean up: the hardest case
    process.wait()
    assert project is not None
    partial = client.find_project(title)
    assert partial is not None and 0 < (partial.task_count or 0) < 3000, "kill came too late to test a resume"

    code, out, err = cli(label_studio, "push", str(definition), str(big), "--project", title, cwd=tmp_path)
    assert code == 0, err
    created = int(out.splitlines()[-1].split(",")[0].removeprefix("created "))
    present = int(out.splitlines()[-1].split(",")[1].removeprefix(" already present "))
    assert created + present == 3000 and present >= partial.task_count  # type: ignore[operator]
    keys = [m[blinding.META_KEY] for _, m in client.task_meta(partial.id)]
    assert len(keys) == 3000 and len(set(keys)) == 3000


def test_unreachable_server_and_wrong_key_are_one_line(
    label_studio: LiveServer, study: tuple[Path, Path], tmp_path: Path
) -> None:
    definition, inputs = study
    code, _, err = cli(
        LiveServer(label_studio.url, "wrong-token-123", label_studio.data_dir),
        "push", str(definition), str(inputs), "--project", "nope project", cwd=tmp_path,
    )  # fmt: skip
    assert code == 1 and len(err.splitlines()) == 1 and "refused the API key (401" in err
    assert "wrong-token-123" not in err
    from annols.labelstudio.server import free_port

    dead = LiveServer(f"http://127.0.0.1:{free_port()}", "some-token-456", label_studio.data_dir)
    code, _, err = cli(dead, "pull", str(definition), "--project", "nope project", "-o", "x", cwd=tmp_path)
    assert code == 1 and len(err.splitlines()) == 1
    assert f"cannot reach Label Studio at {dead.url}" in err and "some-token-456" not in err


def test_server_status_start_and_stop_of_the_session_server(label_studio: LiveServer) -> None:
    runner = CliRunner()
    result = runner.invoke(main, ["server", "status", "--data-dir", str(label_studio.data_dir)])
    assert result.exit_code == 0 and f"Running at {label_studio.url}" in result.stdout
    result = runner.invoke(main, ["server", "start", "--data-dir", str(label_studio.data_dir)])
    assert result.exit_code == 0 and f"Already running at {label_studio.url}" in result.stdout
    assert label_studio.api_key not in result.stdout + result.stderr


def test_tasks_writes_the_same_tasks_offline(study: tuple[Path, Path], tmp_path: Path) -> None:
    definition, inputs = study
    out = tmp_path / "tasks.json"
    result = CliRunner().invoke(main, ["tasks", str(definition), str(inputs), "-o", str(out), "--seed", "5",
                                       "--manifest-dir", str(tmp_path / "m")])  # fmt: skip
    assert result.exit_code == 0, result.stderr
    tasks = json.loads(out.read_text("utf-8"))
    assert len(tasks) == 40
    d = protocols.load(str(definition))
    assert all(set(t["data"]) >= {"headline_1", "headline_2"} for t in tasks)
    assert all(list(t["meta"]) == [blinding.META_KEY] for t in tasks)
    rows = manifest.read_rows(manifest.manifest_path(tmp_path / "m", "tasks"))[1]
    assert [manifest.server_key(r) for r in rows] == [t["meta"][blinding.META_KEY] for t in tasks]
    assert {tuple(r["systems"]) for r in rows} == {SYSTEMS, SYSTEMS[::-1]}
    assert d.name == "headline-check"


def test_pull_of_an_unknown_project_is_one_line(
    label_studio: LiveServer, study: tuple[Path, Path], tmp_path: Path
) -> None:
    definition, _ = study
    code, out, err = cli(label_studio, "pull", str(definition), "--project", "no such project", "-o", "x", cwd=tmp_path)
    assert code == 1 and out == ""
    assert err == (
        f"Error: no project titled 'no such project' on {label_studio.url}: check --project (titles are exact)\n"
    )
