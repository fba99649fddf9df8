"""Two coordinators at once, as real processes against the real server: pushes of the same
input to the same new title, into an existing project, and a push while a pull runs, end
with one project holding each task once."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

from annols import blinding
from annols.labelstudio import LabelStudioClient

from .conftest import LiveServer
from .test_definition import MINIMAL
from .test_incremental import write_inputs

TASKS = 500


def start(server: LiveServer, folder: Path, *args: str) -> subprocess.Popen[str]:
    folder.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "LABEL_STUDIO_URL": server.url, "LABEL_STUDIO_API_KEY": server.api_key}
    return subprocess.Popen([sys.executable, "-m", "annols.cli", *args], cwd=folder, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip


def finish(processes: list[subprocess.Popen[str]]) -> list[tuple[str, str]]:
    outcomes = [p.communicate(timeout=900) for p in processes]
    assert [p.returncode for p in processes] == [0] * len(processes), outcomes
    return outcomes


def study(tmp_path: Path, count: int = TASKS) -> tuple[Path, Path]:
    definition = tmp_path / "headlines.toml"
    definition.write_text(MINIMAL)
    inputs = tmp_path / "headlines.jsonl"
    write_inputs(inputs, count)
    return definition, inputs


def every_task_once(client: LabelStudioClient, title: str, count: int) -> int:
    """The one project of that title holds ``count`` tasks, each key once; its id."""
    titled = client._titled(title)
    assert len(titled) == 1, [(p["id"], p["task_number"]) for p in titled]
    keys = Counter(meta.get(blinding.META_KEY) for _, meta in client.task_meta(int(titled[0]["id"])))
    assert len(keys) == count and set(keys.values()) == {1}, keys.most_common(3)
    return int(titled[0]["id"])


def test_two_pushes_into_an_existing_project_and_a_pull_meanwhile(
    label_studio: LiveServer, client: LabelStudioClient, tmp_path: Path
) -> None:
    definition, inputs = study(tmp_path)
    first = tmp_path / "first.jsonl"
    write_inputs(first, 20)  # the first 20 records of the same input: their keys are the same
    title = "concurrent existing project"
    finish([start(label_studio, tmp_path / "first", "push", str(definition), str(first), "--project", title)])
    every_task_once(client, title, 20)
    running = [
        start(label_studio, tmp_path / "a", "push", str(definition), str(inputs), "--project", title),
        start(label_studio, tmp_path / "b", "push", str(definition), str(inputs), "--project", title),
        start(label_studio, tmp_path / "c", "pull", str(definition), "--project", title, "-o", "pulled"),
    ]
    finish(running)
    every_task_once(client, title, TASKS)
    # A pull after them all holds every task once.
    finish([start(label_studio, tmp_path / "c", "pull", str(definition), "--project", title, "-o", "after")])
    exported = json.loads((tmp_path / "c" / "after" / "export.json").read_text("utf-8"))
    assert len({t["meta"][blinding.META_KEY] for t in exported}) == len(exported) == TASKS
