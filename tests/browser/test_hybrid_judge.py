"""A hybrid study (`annols push ... --judge J --human-share 0.3 --seed N`) in the annotator's browser: the
judge's answers and the items only the judge was drawn for never reach the server or the annotator, who is
served the drawn human subset alone; the pull brings the judge back as annotator ``judge:<name>``.

The judge answers every item with a free-text note no one else writes, and every item's texts carry a word
of their own, so a leak of either shows in any response body, in the page, or in the server's API.
"""

from __future__ import annotations

import json
from pathlib import Path

from annols.labelstudio.client import LabelStudioClient
from annols.study import manifest
from annols.study.hidden_judges import POOL_FILE, store_dir
from tests.browser.conftest import LabelingView, responses
from tests.browser.test_hidden_judge import judged, loaded_by
from tests.conftest import LiveServer
from tests.own_study import PAIRWISE_PARTS
from tests.study.test_push_pull import cli

JUDGE = "oracle-llm"
ITEMS = 10
HUMANS = 3  # round(0.3 x 10)
DEFINITION = f"""name = "hybrid-pairwise"
style = "pairwise"
summary = "A hybrid study."
guideline = "Pick the better response."

{PAIRWISE_PARTS}
[[aspects]]
name = "better"
text = "Which response is better?"

[[questions]]
name = "note"
text = "Any note?"
kind = "text"
"""


def item_word(i: int) -> str:
    """A word only item ``i``'s texts hold (every field of the record carries it)."""
    return f"quokka{i:02d}x"


def note(i: int) -> str:
    """The judge's answer to the note on item ``i``: no one else writes it."""
    return f"zebrafinch verdict {i:02d}"


def write_study(folder: Path) -> tuple[Path, Path, Path]:
    definition = folder / "hybrid-pairwise.toml"
    definition.write_text(DEFINITION, encoding="utf-8")
    inputs, judge = folder / "inputs.jsonl", folder / "judge.jsonl"
    records = [{"id": f"rec-{i}", "prompt": f"Prompt {item_word(i)}", "response_a": f"First {item_word(i)}",
                "response_b": f"Second {item_word(i)}", "systems": ["alpha", "beta"]}
               for i in range(ITEMS)]  # fmt: skip
    inputs.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    lines = [{"id": f"rec-{i}", "judge": JUDGE, "answers": {"better": "A", "note": note(i)}} for i in range(ITEMS)]
    judge.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return definition, inputs, judge


def test_a_hybrid_study_serves_only_the_human_draw_and_never_the_judge(
    label_studio: LiveServer, client: LabelStudioClient, labeling: LabelingView, tmp_path: Path
) -> None:
    definition, inputs, judge = write_study(tmp_path)
    title = "hybrid browser"
    code, out, err = cli(label_studio, "push", str(definition), str(inputs), "--project", title, "--judge",
                         str(judge), "--human-share", "0.3", "--seed", "7", cwd=tmp_path)  # fmt: skip
    assert code == 0, err
    assert f"humans get {HUMANS} of {ITEMS} items" in out
    project = client.find_project(title)
    assert project is not None

    # Which items humans were drawn for: the judge-only pool beside the manifest holds the others.
    pool = [json.loads(x) for x in (store_dir(tmp_path / ".annols", title) / POOL_FILE).read_text("utf-8").splitlines()]
    judge_only = {int(p["data"]["prompt"].removeprefix("Prompt quokka").removesuffix("x")) for p in pool}
    humans = set(range(ITEMS)) - judge_only
    assert len(humans) == HUMANS and len(judge_only) == ITEMS - HUMANS
    header, rows = manifest.read_rows(manifest.manifest_path(tmp_path / ".annols", title))
    assert header["hybrid"]["humans"] == HUMANS and len(rows) == HUMANS
    # What must not leak, and the proof that the search can find it: the judge file holds every note and
    # the pool every judge-only item's word, so a search that finds none in the browser is no empty search.
    secrets = [note(i) for i in range(ITEMS)] + [JUDGE, "judge:"] + [item_word(i) for i in sorted(judge_only)]
    assert all(note(i) in judge.read_text("utf-8") for i in range(ITEMS))
    pooled = json.dumps(pool)
    assert all(item_word(i) in pooled for i in judge_only)

    # The annotator's browser: the labeling stream and every task by the editor's API (as the hidden-judge
    # test loads them), then the stream again, answering each task it serves, and the Data Manager's task
    # list; every response body and the page are kept.
    loaded = loaded_by(labeling, label_studio, project.id, client)
    served: list[int] = []
    with responses(labeling.page) as annotating:
        task = labeling.open(project.id)
        for n in range(HUMANS):
            prompt = task["data"]["prompt"]
            labeling.page.get_by_text(prompt, exact=True).wait_for()  # the editor shows this task now
            served.append(int(prompt.removeprefix("Prompt quokka").removesuffix("x")))
            labeling.choose(labeling.choices_after("Which response is better?"), "B is better")
            with labeling.page.expect_response(lambda r: "id=next_task" in r.url) as following:
                labeling.submit()  # the stream goes on to the next task by itself
            loaded.append((f"labeling page {n}", labeling.page.content()))
            task = following.value.json()
        assert task.get("status_code") == 404 and "no tasks" in task["detail"]  # the stream has no more
        labeling.page.goto(f"{label_studio.url}/projects/{project.id}/data?tab=0")
        labeling.page.wait_for_load_state("networkidle")
        loaded.append(("data manager page", labeling.page.content()))
    listed = [body for url, body in annotating if "/api/tasks?" in url]  # the Data Manager's task list
    assert any(item_word(i) in body for body in listed for i in humans), [url for url, _ in annotating]
    loaded += annotating
    assert sorted(served) == sorted(humans)  # the drawn subset, each task once
    words = [(url, item_word(i)) for url, body in loaded for i in humans if item_word(i) in body]
    assert {w for _, w in words} == {item_word(i) for i in humans}  # the human tasks were loaded: the search works

    leaks = sorted({(url, s) for url, body in loaded for s in secrets if s in body})
    assert leaks == [], f"the judge or its items reach the annotator: {leaks}"
    # Judgments in a body are the annotator's own answers now: none may be another's (judge's) prediction.
    carried = sorted({(url, where) for url, body in loaded for where in judged(body) if "predictions" in where})
    assert carried == [], f"predictions reach the annotator: {carried}"

    # The server, through the annotator's own session: its tasks, predictions and export hold neither.
    request = labeling.page.context.request
    api = [f"/api/tasks?project={project.id}&fields=all", f"/api/predictions?project={project.id}",
           f"/api/projects/{project.id}/export?exportType=JSON&download_all_tasks=true"]  # fmt: skip
    for url in api:
        response = request.get(label_studio.url + url)
        assert response.ok, (url, response.status)
        body = response.text()
        assert [s for s in secrets if s in body] == [], url
    exported = client.export_tasks(project.id)
    assert len(exported) == HUMANS and all(t["predictions"] == [] for t in exported)
    assert sum(len(t["annotations"]) for t in exported) == HUMANS

    folder = tmp_path / "pulled"
    code, out, err = cli(label_studio, "pull", str(definition), "--project", title, "-o", str(folder), cwd=tmp_path)
    assert code == 0, err
    assert f"Counts match the server: {HUMANS} tasks, {HUMANS} annotations, 0 skipped." in out
    lines = [json.loads(x) for x in (folder / "hybrid-pairwise.jsonl").read_text("utf-8").splitlines()]
    by_judge = [x for x in lines if x["annotator"] == f"judge:{JUDGE}"]
    assert len(by_judge) == HUMANS  # the judge's answers on the human items; the pool carries the others
    assert all(note(i) in json.dumps(by_judge) for i in humans)  # its notes among them, as it wrote them
    assert (folder / "judges" / judge.name).read_bytes() == judge.read_bytes()
    assert (folder / "judges" / POOL_FILE).is_file()
