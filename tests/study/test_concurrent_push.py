"""Two coordinators at once, as real processes against the real server: pushes of the same
input to the same new title, into an existing project, and a push while a pull runs, end
with one project holding each task once. The keys on the server are made with the study's
secret, which only the manifest holds: a push without the project's manifest is refused,
and two pushes with it find each other's tasks."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from annols.cli import main
from annols.definition import blinding
from annols.labelstudio.client import LabelStudioClient, Project
from tests.conftest import LiveServer
from tests.definition.test_definition import MINIMAL
from tests.labelstudio.test_incremental import write_inputs

TASKS = 500


def start(server: LiveServer, folder: Path, *args: str) -> subprocess.Popen[str]:
    folder.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "LABEL_STUDIO_URL": server.url, "LABEL_STUDIO_API_KEY": server.api_key}
    return subprocess.Popen([sys.executable, "-m", "annols.cli", *args], cwd=folder, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip


def finish(processes: list[subprocess.Popen[str]], codes: list[int] | None = None) -> list[tuple[str, str]]:
    outcomes = [p.communicate(timeout=900) for p in processes]
    assert [p.returncode for p in processes] == (codes or [0] * len(processes)), outcomes
    return outcomes


def refused(outcome: tuple[str, str]) -> bool:
    """A push refused in one line (after any notices), nothing sent, for want of the project's manifest."""
    _, err = outcome
    errors = [line for line in err.splitlines() if line.startswith("Error: ")]
    return len(errors) == 1 and "annols manifest import" in errors[0] and "Traceback" not in err


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


def test_two_pushes_of_one_input_to_a_new_title(label_studio: LiveServer, client: LabelStudioClient,
                                                tmp_path: Path) -> None:  # fmt: skip
    """From two folders, each without a manifest: the push that made the project fills it, the
    other (which finds a project it did not make, whose keys it cannot know) is refused."""
    definition, inputs = study(tmp_path)
    title = "concurrent new title"
    pushes = [start(label_studio, tmp_path / f"coordinator{i}", "push", str(definition), str(inputs),
                    "--project", title) for i in range(2)]  # fmt: skip
    outcomes = [p.communicate(timeout=900) for p in pushes]
    codes = [p.returncode for p in pushes]
    assert sorted(codes) == [0, 1], outcomes
    winner, loser = (0, 1) if codes[0] == 0 else (1, 0)
    assert refused(outcomes[loser]), outcomes[loser]
    project_id = every_task_once(client, title, TASKS)
    assert f"/projects/{project_id}/data" in outcomes[winner][0]
    # Every later command finds the one project: a re-push from either folder, the second with the
    # first's manifest, sends nothing.
    shutil.copytree(tmp_path / f"coordinator{winner}" / ".annols", tmp_path / f"coordinator{loser}" / ".annols",
                    dirs_exist_ok=True)  # fmt: skip
    for i in range(2):
        (out, _err), = finish([start(label_studio, tmp_path / f"coordinator{i}", "push", str(definition), str(inputs),
                                     "--project", title)])  # fmt: skip
        assert out.splitlines()[-1] == f"created 0, already present {TASKS}, total {TASKS}"


def test_a_push_whose_new_project_another_push_filled_first(
    label_studio: LiveServer, client: LabelStudioClient, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The interleaving a fresh CI run once hit: push A creates the title; before A looks its
    new project up, push B finds it. B cannot know A's keys (A's secret is in no manifest B
    has): it is refused, nothing sent, and A fills its project once. (Before keys had a
    secret, B imported every task and A had to not take its project for empty.)"""
    definition, inputs = study(tmp_path)
    title = "filled before its creator looked"
    create = LabelStudioClient.create_project

    def create_then_another_push(self: LabelStudioClient, *args: Any, **kwargs: Any) -> tuple[Project, bool]:
        made, created = create(self, *args, **kwargs)
        (outcome,) = finish([start(label_studio, tmp_path / "b", "push", str(definition), str(inputs), "--project",
                                   title)], [1])  # fmt: skip
        assert refused(outcome), outcome
        counted = self.find_project(title)  # the creator's own lookup, as it would run now
        assert created and counted is not None and counted.id == made.id and not counted.task_count
        return counted, created

    monkeypatch.setattr(LabelStudioClient, "create_project", create_then_another_push)
    env = {"LABEL_STUDIO_URL": label_studio.url, "LABEL_STUDIO_API_KEY": label_studio.api_key}
    monkeypatch.chdir(tmp_path)
    result = CliRunner(env=env).invoke(main, ["push", str(definition), str(inputs), "--project", title])
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[-1] == f"created {TASKS}, already present 0, total {TASKS}"
    every_task_once(client, title, TASKS)


def test_two_pushes_into_an_existing_project_and_a_pull_meanwhile(
    label_studio: LiveServer, client: LabelStudioClient, tmp_path: Path
) -> None:
    definition, inputs = study(tmp_path)
    first = tmp_path / "first.jsonl"
    write_inputs(first, 20)  # the first 20 records of the same input: their keys are the same
    title = "concurrent existing project"
    finish([start(label_studio, tmp_path / "first", "push", str(definition), str(first), "--project", title)])
    every_task_once(client, title, 20)
    for coordinator in ("a", "b"):  # the first push's manifest, handed over: its secret makes the keys
        shutil.copytree(tmp_path / "first" / ".annols", tmp_path / coordinator / ".annols")
    running = [
        start(label_studio, tmp_path / "a", "push", str(definition), str(inputs), "--project", title),
        start(label_studio, tmp_path / "b", "push", str(definition), str(inputs), "--project", title),
        # c holds no manifest: a blind-only pull (#39), which reads the project as the others fill it
        start(label_studio, tmp_path / "c", "pull", str(definition), "--project", title, "-o", "pulled",
              "--blind-only"),
    ]
    finish(running)
    every_task_once(client, title, TASKS)
    # A pull after them all holds every task once.
    finish([start(label_studio, tmp_path / "c", "pull", str(definition), "--project", title, "-o", "after",
                  "--blind-only")])  # fmt: skip
    exported = json.loads((tmp_path / "c" / "after" / "export.json").read_text("utf-8"))
    assert len({t["meta"][blinding.META_KEY] for t in exported}) == len(exported) == TASKS
