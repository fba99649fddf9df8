"""The tutorial (docs/tutorial.md) as a reader follows it: in an empty folder, against the live test server,
every block marked ``run`` runs as written, the files it shows are saved under their names, the annotating
in the browser is done through the API (the ratings the page says), and the report holds the lines the page
shows."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from annols.labelstudio.client import LabelStudioClient
from tests.conftest import ROOT, LiveServer
from tests.docs_pages import blocks

PAGE = ROOT / "docs" / "tutorial.md"
TITLE = "Headlines"


def annotate(client: LabelStudioClient, folder: Path) -> int:
    """What the page asks of the reader in the browser: the informative (tuned) headline of each article 5, 4 for
    the last two; the vague (base) one 2 for the first article, 3 for the second, and so on. Returns the count."""
    articles = [json.loads(line) for line in (folder / "headlines.jsonl").read_text("utf-8").splitlines()]
    index = {a["article"]: i for i, a in enumerate(articles)}
    manifest = folder / ".annols" / f"{TITLE}.manifest.jsonl"
    shown = {r["task_id"]: r["systems"] for r in map(json.loads, manifest.read_text("utf-8").splitlines()[1:])}
    project = client.find_project(TITLE)
    assert project is not None
    me = client.whoami()["id"]
    tasks = client.export_tasks(project.id)
    for task in tasks:
        i = index[task["data"]["article"]]
        rating = {"tuned": "5" if i < len(articles) - 2 else "4", "base": "2" if i % 2 == 0 else "3"}
        result: list[dict[str, Any]] = [
            {"id": f"q{k}", "from_name": f"quality_headline_{k + 1}", "to_name": f"headline_{k + 1}",
             "type": "choices", "value": {"choices": [rating[system]]}}
            for k, system in enumerate(shown[task["id"]])
        ]  # fmt: skip
        client.create_annotation(task["id"], result, completed_by=me)
    return len(tasks)


def test_the_tutorial_runs_as_written_and_ends_with_the_report_it_shows(
    label_studio: LiveServer, tmp_path: Path
) -> None:
    page = blocks(PAGE)
    env = {k: v for k, v in os.environ.items() if k not in ("LABEL_STUDIO_URL", "LABEL_STUDIO_API_KEY")}
    # The page's server is the test's: `annols server start` finds it running in its data folder.
    env.update(ANNOLS_DATA_DIR=str(label_studio.data_dir),
               PATH=os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")]))  # fmt: skip
    ran: list[str] = []
    shown = 0
    for block in page:
        if block.title is not None:
            (tmp_path / block.title).write_text(block.body, encoding="utf-8")
        elif block.marker == "run":
            done = subprocess.run(["bash", "-euo", "pipefail", "-c", block.body], cwd=tmp_path, env=env,
                                  capture_output=True, text=True, check=False, timeout=600)  # fmt: skip
            assert done.returncode == 0, f"docs/tutorial.md line {block.line}:\n{block.body}\n{done.stderr}"
            ran.append(block.body)
            if "annols push" in block.body:
                assert done.stdout.splitlines()[-1] == "created 8, already present 0, total 8"
                assert annotate(label_studio.client(), tmp_path) == 8  # step 5, in the browser
            if "annols pull" in block.body:
                assert "Counts match the server: 8 tasks, 8 annotations, 0 skipped." in done.stdout
        elif block.marker is not None and block.marker.startswith("in "):
            report = (tmp_path / block.marker.removeprefix("in ")).read_text(encoding="utf-8")
            for line in filter(None, block.body.splitlines()):
                assert line in report.splitlines(), f"docs/tutorial.md line {block.line}: {line!r} not in the report"
                shown += 1
        else:
            assert not block.is_command, f"docs/tutorial.md line {block.line}: a command block without a marker"
    assert [b.split()[1] for b in ran] == ["server", "push", "pull", "report"]
    assert shown == 6  # the conclusion (2 lines) and the scores table (4)
    assert {"headlines.toml", "headlines.jsonl"} <= {p.name for p in tmp_path.iterdir()}
