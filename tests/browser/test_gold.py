"""Gold items cannot be told from study items in anything the annotator's browser loads.

A blinded pairwise-aspects study (systems in meta, base64) with gold items pushed by
``--gold``: the annotator opens a gold task and a study task in the labeling view, and
every page, fetch and XHR response each load brings is compared. Task data differ (other
documents, other summaries); what may not differ is everything else: the same requests,
the same JSON shape (keys, their order, value types), the same meta keys in the same order
with values of the same length, and no word that names a role anywhere.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

from annols.labelstudio.client import LabelStudioClient
from annols.study.roles import GOLD, STUDY
from tests.browser.conftest import LabelingView, push, responses
from tests.conftest import LiveServer
from tests.formats.seed001_fixture import ANNOTATORS, make_seed001_study
from tests.study.test_push_pull import shown_by_task

ROLE_WORDS = re.compile(r"\b(gold|attention|annols_role|study item)\b", re.IGNORECASE)
# The app's inline settings quote the server's build, which Label Studio takes from the git
# checkout it runs in (a commit message here may well say "gold"): not the task's.
SCRIPTS = re.compile(r"<script\b.*?</script>", re.DOTALL | re.IGNORECASE)


def role_word(text: str) -> str | None:
    found = ROLE_WORDS.search(SCRIPTS.sub("", text))
    return None if found is None else found.group(0)


def shape(value: Any) -> Any:
    """The JSON's structure: keys in order and value types, not the values."""
    if isinstance(value, dict):
        return [(k, shape(v)) for k, v in value.items()]
    if isinstance(value, list):
        return ["list", sorted({json.dumps(shape(v)) for v in value})]
    return type(value).__name__


def load_task(labeling: LabelingView, project: int, task_id: int) -> list[tuple[str, str]]:
    """Every document/fetch/XHR response of opening ``task_id`` in the labeling view, in order."""
    page = labeling.page
    with responses(page) as loaded:
        with page.expect_response(lambda r: re.search(rf"/api/tasks/{task_id}(/|\?|$)", r.url) is not None):
            page.goto(f"{labeling.live.url}/projects/{project}/data?tab=0&task={task_id}")
        page.wait_for_load_state("networkidle")
        page.get_by_text("Informative").first.wait_for()  # the editor shows the task
    return loaded


def normalised_url(url: str, task_id: int, base: str) -> str:
    return re.sub(rf"(tasks/|task=|tasks%2F){task_id}\b", r"\1TASK", url.replace(base, ""))


def test_gold_items_look_like_study_items(
    label_studio: LiveServer, client: LabelStudioClient, labeling: LabelingView, tmp_path: Path
) -> None:
    make_seed001_study(tmp_path / "study", samples=6, seed=1, gaps=False)
    gold = make_seed001_study(tmp_path / "gold", samples=4, seed=2, gaps=False).root
    for annotator in ANNOTATORS[1:]:  # a gold folder holds one annotator's judgments
        shutil.rmtree(gold / annotator)
    title = "mixed queue"
    project = push(label_studio, ["pairwise-aspects", str(tmp_path / "study"), "--gold", str(gold), "--seed", "3"],
                   title, tmp_path)  # fmt: skip

    tasks = sorted(client.export_tasks(project), key=lambda t: t["id"])
    manifest = shown_by_task(tmp_path / ".annols", title)  # roles are not on the server
    roles = [manifest[t["id"]]["role"] for t in tasks]
    assert roles.count(GOLD) == 4 and roles.count(STUDY) == 6
    assert roles[-4:] != [GOLD] * 4  # spread through the queue
    gold_task = next(t for t, r in zip(tasks, roles, strict=True) if r == GOLD)
    study_task, warm_up = [t for t, r in zip(tasks, roles, strict=True) if r == STUDY][:2]

    seen = {}
    load_task(labeling, project, warm_up["id"])  # what the app loads once per session comes first
    for task in (gold_task, study_task):
        loaded = load_task(labeling, project, task["id"])
        seen[task["id"]] = loaded
        task_api = [json.loads(body) for url, body in loaded if re.search(rf"/api/tasks/{task['id']}\b", url)]
        assert task_api, [url for url, _ in loaded]
        for body in task_api:
            assert body["meta"] == task["meta"]  # what the browser gets is what the server holds
        text = labeling.page.content()
        assert role_word(text) is None
        for url, body in loaded:
            if url.endswith("/api/version"):  # the server's build (from the git checkout), as above
                continue
            assert role_word(body) is None, f"{url} says {role_word(body)!r}"

    base = label_studio.url
    gold_loaded, study_loaded = seen[gold_task["id"]], seen[study_task["id"]]
    gold_urls = sorted({normalised_url(u, gold_task["id"], base) for u, _ in gold_loaded})
    study_urls = sorted({normalised_url(u, study_task["id"], base) for u, _ in study_loaded})
    assert gold_urls == study_urls

    def task_shapes(loaded: list[tuple[str, str]], task_id: int) -> list[Any]:
        return [shape(json.loads(body)) for url, body in loaded if re.search(rf"/api/tasks/{task_id}\b", url)]

    assert task_shapes(gold_loaded, gold_task["id"]) == task_shapes(study_loaded, study_task["id"])
    # meta: the same keys in the same order, each value of the same length
    assert list(gold_task["meta"]) == list(study_task["meta"])
    assert [len(str(v)) for v in gold_task["meta"].values()] == [len(str(v)) for v in study_task["meta"].values()]
    # every other API response (project, config, user, columns, ...): the same shape for both
    gold_api = {normalised_url(u, gold_task["id"], base): b for u, b in gold_loaded if "/api/" in u}
    compared = 0
    for url, body in study_loaded:
        key = normalised_url(url, study_task["id"], base)
        if "/api/" in url and key in gold_api and not key.endswith("/api/version"):
            assert shape(_json_or(body)) == shape(_json_or(gold_api[key])), url
            compared += 1
    assert compared >= 3


def _json_or(body: str) -> Any:
    try:
        return json.loads(body)
    except ValueError:
        return body
