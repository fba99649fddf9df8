"""docs/howto/esa-mqm.md as a reader runs it: each command block, line by line as written, in a folder holding
the repository's examples/, against the live test server; between the push and the pull one annotator marks
every translation (ESA: spans and the score; MQM: spans with their severity) through the API, as
tests/test_esa_mqm_live.py plants them; the pull counts what was posted and the report has the sections the
page describes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT, LiveServer
from tests.docs_pages import blocks
from tests.live_answers import number, span_items
from tests.test_esa_mqm_live import esa_answer, mqm_answer

PAGE = ROOT / "docs" / "howto" / "esa-mqm.md"
MARKER = "run by tests/test_docs_examples_live.py"


def answer(name: str, system: str, item: int, hypothesis: str) -> list[dict[str, Any]]:
    if name == "esa":
        score, marks = esa_answer(0, system, item)
        return [*span_items(hypothesis, marks), number("score", score)]
    return span_items(hypothesis, mqm_answer(0, system, item))


def run(line: str, cwd: Path, env: dict[str, str]) -> str:
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", line], cwd=cwd, env=env, capture_output=True, text=True,
                          check=False, timeout=600)  # fmt: skip
    assert done.returncode == 0, f"{PAGE.name}: {line}\n{done.stderr}"
    return done.stdout


@pytest.mark.parametrize("name", ["esa", "mqm"])
def test_the_esa_and_mqm_page_runs_as_written(label_studio: LiveServer, tmp_path: Path, name: str) -> None:
    (block,) = [b for b in blocks(PAGE) if b.marker == MARKER and f"examples/{name}.toml" in b.body]
    push, *rest = block.body.splitlines()
    assert push.startswith("annols push ") and [line.split()[1] for line in rest] == ["pull", "report"]
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    env = {**os.environ, "LABEL_STUDIO_URL": label_studio.url, "LABEL_STUDIO_API_KEY": label_studio.api_key,
           "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])}  # fmt: skip
    assert run(push, tmp_path, env).splitlines()[-1] == "created 12, already present 0, total 12"

    title = name.upper()
    client = label_studio.client()
    project = client.find_project(title)
    assert project is not None
    manifest = tmp_path / ".annols" / f"{title}.manifest.jsonl"
    shown = {r["task_id"]: r["systems"] for r in map(json.loads, manifest.read_text("utf-8").splitlines()[1:])}
    inputs = (tmp_path / "examples" / f"{name}.jsonl").read_text("utf-8").splitlines()
    sources = list(dict.fromkeys(json.loads(line)["source"] for line in inputs))
    me = client.whoami()["id"]
    for task in client.export_tasks(project.id):
        data = task["data"]
        item = sources.index(data.get("source", data.get("annols_f_source")))
        (system,) = shown[task["id"]]
        client.create_annotation(task["id"], answer(name, system, item, data["hypothesis"]), completed_by=me)

    assert "Counts match the server: 12 tasks, 12 annotations, 0 skipped." in run(rest[0], tmp_path, env)
    run(rest[1], tmp_path, env)
    report = (tmp_path / "report" / name / "report.md").read_text("utf-8")
    assert "## Scores and spans per system" in report
    if name == "esa":
        assert "## Question score (slider, per candidate): ratings" in report
