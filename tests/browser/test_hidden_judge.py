"""A hidden judge (`annols push ... --judge FILE`): the summary-flaws critic outputs of the
seed never reach the annotator's browser, and come back in the pull as annotator
``judge:critic-llm``.

The contrast, on the same server: the same critic pushed as `--predictions` (pre-annotations)
is loaded by the annotator's browser although the project's ``show_collab_predictions`` is
off, which is why a hidden judge is not stored as predictions (annols.study.hidden_judges).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from annols import protocols
from annols.labelstudio.client import LabelStudioClient
from annols.study import demo
from tests.browser.conftest import LabelingView, responses
from tests.conftest import LiveServer
from tests.study.test_push_pull import cli

JUDGE = "critic-llm"  # the seed examples' critic (its records' model field)


def critic() -> tuple[list[Path], Path]:
    inputs, predictions = demo.example_inputs(protocols.load("summary-flaws", None))
    return inputs, predictions[0]


def critiques(path: Path) -> list[str]:
    """The span lines of the critic's blocks (the seed's few-shot examples: the guideline quotes them)."""
    out = []
    for line in path.read_text("utf-8").splitlines():
        block = json.loads(line)["critique"]
        out += [x for x in block.splitlines() if "(Label:" in x]
    return out


def judged(body: str) -> list[str]:
    """Where a JSON body carries judgments: a non-empty result, predictions or prediction columns."""
    try:
        value = json.loads(body)
    except ValueError:
        return []
    found = []

    def walk(v: Any, path: str) -> None:
        if isinstance(v, dict):
            for k, x in v.items():
                if k in ("result", "predictions", "predictions_results", "annotations", "drafts") and x:
                    found.append(f"{path}.{k}")
                if k == "total_predictions" and x:
                    found.append(f"{path}.{k}")
                walk(x, f"{path}.{k}")
        elif isinstance(v, list):
            for i, x in enumerate(v):
                walk(x, f"{path}[{i}]")

    walk(value, "")
    return found


def loaded_by(
    labeling: LabelingView, live: LiveServer, project: int, client: LabelStudioClient
) -> list[tuple[str, str]]:
    """Everything the annotator's browser loads for the project: the labeling view's own
    requests (pages, API calls) and every task by the API the editor uses, as that annotator."""
    with responses(labeling.page) as loaded:
        labeling.open(project)
        labeling.page.wait_for_load_state("networkidle")
    request = labeling.page.context.request
    for task in client.export_tasks(project):
        for url in (f"/api/tasks/{task['id']}", f"/api/tasks/{task['id']}?project={project}"):
            loaded.append((url, request.get(live.url + url).text()))
    url = f"/api/tasks?project={project}&fields=all"
    loaded.append((url, request.get(live.url + url).text()))
    loaded.append(("page content", labeling.page.content()))
    return loaded


def test_a_hidden_judge_never_reaches_the_annotator_and_comes_back_in_the_pull(
    label_studio: LiveServer, client: LabelStudioClient, labeling: LabelingView, tmp_path: Path
) -> None:
    inputs, judge = critic()
    words = critiques(judge)
    assert words  # the critic marked spans: its words are there to leak
    title = "hidden critic"
    code, out, err = cli(label_studio, "push", "summary-flaws", *map(str, inputs), "--project", title,
                         "--judge", str(judge), cwd=tmp_path)  # fmt: skip
    assert code == 0, err
    assert f"judges {JUDGE} kept in" in out
    project = client.find_project(title)
    assert project is not None

    loaded = loaded_by(labeling, label_studio, project.id, client)
    assert any("/api/" in url and "summary" in body for url, body in loaded)  # the tasks were loaded
    # The critic's span lines are the seed's few-shot examples, so the guideline quotes them;
    # the judge's answers would come as its name or as judgments on the tasks: neither does.
    leaks = sorted({url for url, body in loaded for w in (JUDGE, "judge:") if w in body})
    assert leaks == [], f"the hidden judge reaches the annotator: {leaks}"
    carried = sorted({(url, where) for url, body in loaded for where in judged(body)})
    assert carried == [], f"judgments reach the annotator: {carried}"
    for task in client.export_tasks(project.id):
        assert task["predictions"] == [] and task["annotations"] == []

    folder = tmp_path / "pulled"
    code, out, err = cli(label_studio, "pull", "summary-flaws", "--project", title, "-o", str(folder), cwd=tmp_path)
    assert code == 0, err
    assert "Counts match the server: 3 tasks, 0 annotations, 0 skipped." in out  # the judge is no annotation
    lines = [json.loads(x) for x in (folder / "summary-flaws.jsonl").read_text("utf-8").splitlines()]
    assert len(lines) == 3 and {x["annotator"] for x in lines} == {f"judge:{JUDGE}"}
    blocks = (folder / "summary-flaws.txt").read_text("utf-8")
    for w in words:  # the critic's spans and labels, as the seed's text block
        assert w.split(": ", 1)[1] in blocks
    assert (folder / "judges" / judge.name).read_bytes() == judge.read_bytes()


def test_predictions_would_reach_the_annotator_even_with_collab_predictions_off(
    label_studio: LiveServer, client: LabelStudioClient, labeling: LabelingView, tmp_path: Path
) -> None:
    inputs, judge = critic()
    title = "critic as predictions"
    code, _, err = cli(label_studio, "push", "summary-flaws", *map(str, inputs), "--project", title,
                       "--predictions", str(judge), cwd=tmp_path)  # fmt: skip
    assert code == 0, err
    project = client.find_project(title)
    assert project is not None
    client.update_project(project.id, show_collab_predictions=False)
    assert client.project(project.id)["show_collab_predictions"] is False
    loaded = loaded_by(labeling, label_studio, project.id, client)
    # the labeling stream and the task API hand the critic's prediction (model_version critic-llm) to the annotator
    assert any(JUDGE in body for url, body in loaded if "/api/" in url)
    assert any(judged(body) for url, body in loaded if "/api/" in url)
