"""What the annotator's browser must never do or show.

- Markup in task text and in a definition's strings (guideline, titles, hints, choices,
  options from task data) is shown as literal text and never runs: every payload would
  call a hook the page defines before loading, and the hook stays untouched.
- Blinding: no system name reaches the labeling view, its served HTML, or any response
  the editor loads.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from playwright.sync_api import Dialog

from tests.browser.conftest import LabelingView, pull, push, responses
from tests.browser.test_annotate import INPUTS
from tests.conftest import LiveServer

HOOK = "__annolsHook"
PAYLOADS = (
    f"<img src=x onerror=\"window.{HOOK}.push('img')\">",
    f"<script>window.{HOOK}.push('script')</script>",
    f"<a href=\"javascript:window.{HOOK}.push('link')\">open me</a>",
    f"<svg onload=\"window.{HOOK}.push('svg')\"></svg>",
    f"<iframe srcdoc=\"<script>parent.{HOOK}.push('iframe')</script>\"></iframe>",
)
PAYLOAD = " ".join(PAYLOADS)
LINK = PAYLOADS[2]
# Elements any of the payloads would create if they were parsed as HTML.
INJECTED = 'img[src="x"], a[href^="javascript:"], iframe[srcdoc], svg[onload], [onerror]'


def arm(labeling: LabelingView) -> list[str]:
    """Define the hook before any page script runs; record any dialog too."""
    dialogs: list[str] = []
    labeling.page.context.add_init_script(f"window.{HOOK} = [];")

    def dismiss(dialog: Dialog) -> None:
        dialogs.append(dialog.message)
        dialog.dismiss()

    labeling.page.on("dialog", dismiss)
    return dialogs


def hook_calls(labeling: LabelingView) -> list[str]:
    calls: list[str] = labeling.page.evaluate(f"window.{HOOK}")
    return calls


def assert_inert(labeling: LabelingView, dialogs: list[str]) -> None:
    labeling.page.wait_for_timeout(500)  # let a failed image load fire its handler, if any
    assert labeling.page.locator(INJECTED).count() == 0
    assert hook_calls(labeling) == [] and dialogs == []


def test_task_text_is_shown_as_text_and_never_runs(
    label_studio: LiveServer, labeling: LabelingView, tmp_path: Path
) -> None:
    dialogs = arm(labeling)
    summary = f"Fine 👍🏽 so far. {PAYLOAD} The end."
    source = tmp_path / "markup.jsonl"
    record = {"id": "markup-1", "document": f"Document {PAYLOAD}", "summary": summary}
    source.write_text(json.dumps(record, ensure_ascii=False) + "\n", encoding="utf-8")
    title = "safety task text"
    project = push(label_studio, ["summary-flaws", str(source)], title, tmp_path)

    labeling.open(project)
    texts = labeling.page.locator(".lsf-htx-richtext")
    assert texts.filter(has_text=PAYLOAD).count() == 2  # document and summary, character for character
    assert_inert(labeling, dialogs)

    # Mark the link's markup as a span (after an emoji: offsets are code points) and click it.
    start = summary.index(LINK)
    labeling.label("Irrelevant")
    labeling.select_text(summary, start, start + len(LINK))
    labeling.unselect()
    labeling.page.get_by_text("open me").first.click()
    labeling.choose(labeling.choices_after("Is the summary missing key information?"), "No")
    labeling.submit()
    assert_inert(labeling, dialogs)
    # The control: the same markup parsed as HTML does call the hook.
    labeling.page.evaluate("(html) => { document.body.insertAdjacentHTML('beforeend', html); }", PAYLOADS[0])
    labeling.page.wait_for_function(f"window.{HOOK}.length > 0")
    assert hook_calls(labeling) == ["img"]

    out = pull(label_studio, ["summary-flaws"], title, tmp_path / "pulled")
    line = json.loads((out / "summary-flaws.jsonl").read_text("utf-8"))
    assert line["spans"] == [{"start": start, "end": start + len(LINK), "text": LINK, "label": "Irrelevant"}]
    assert f"Span 1: {LINK} (Label: Irrelevant)\n" in (out / "summary-flaws.txt").read_text("utf-8")


def toml_str(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def test_definition_strings_and_options_are_shown_as_text(
    label_studio: LiveServer, labeling: LabelingView, tmp_path: Path
) -> None:
    dialogs = arm(labeling)
    img, script, link = PAYLOADS[0], PAYLOADS[1], PAYLOADS[2]
    definition = tmp_path / "markup.toml"
    definition.write_text(f"""
name = "markup-check"
style = "spans"
summary = "Markup in a definition is text"
guideline = {toml_str(f"# Heading {img}{chr(10)}{chr(10)}{script} and {link}{chr(10)}{chr(10)}- item {img}")}

[[context]]
name = "passages"
title = {toml_str(f"Passages {img}")}
kind = "paragraphs"

[[context.labels]]
value = "Missing"
hint = {toml_str(img)}

[target]
name = "text"
title = {toml_str(f"Text {script}")}

[spans]
name = "marks"

[[spans.labels]]
value = "Wrong"
hint = {toml_str(img)}

[spans.labels.question]
name = "evidence"
text = {toml_str(f"Evidence {img}")}
options_from = "options"
multiple = true

[[questions]]
name = "verdict"
text = {toml_str(f"Verdict {link}")}
required = true
choices = [{{ code = "1", text = {toml_str(f"{img} yes")} }}, {{ code = "2", text = "no" }}]
""", encoding="utf-8")  # fmt: skip
    text = f"Some text {PAYLOAD} end"
    record = {
        "text": text,
        "passages": [{"ref": f"P1 {img}", "text": f"Passage {PAYLOAD}"}],
        "options": [{"value": f"opt {img}"}, {"value": "opt 2"}],
    }
    source = tmp_path / "markup.jsonl"
    source.write_text(json.dumps(record, ensure_ascii=False) + "\n", encoding="utf-8")
    title = "safety definition"
    project = push(label_studio, [str(definition), str(source)], title, tmp_path)

    labeling.open(project)
    assert f"Heading {img}" in labeling.instructions and f"{script} and {link}" in labeling.instructions
    page = labeling.page
    for shown in (f"Passages {img}", f"Text {script}", f"Verdict {link}", f"{img} yes", f"P1 {img}", text):
        assert page.get_by_text(shown).count() >= 1, shown
    assert page.locator("[data-testid^='phrase:']", has_text=f"Passage {PAYLOAD}").count() == 1
    assert_inert(labeling, dialogs)

    # Options from task data, shown once a span is selected, hints on hover.
    labeling.label("Wrong")
    labeling.select_text(text, 0, 4)
    labeling.select_region("Wrong")
    options = page.locator(".lsf-choices", has_text="opt 2")
    labeling.choose(options, f"opt {img}")
    options.get_by_text(f"opt {img}").hover()
    page.locator(".lsf-label", has_text="Wrong").hover()
    labeling.unselect()
    labeling.choose(labeling.choices_after(f"Verdict {link}"), f"{img} yes")
    labeling.page.locator("button", has_text="Instructions").click()
    labeling.page.get_by_label("Close modal").click()
    labeling.submit()
    assert_inert(labeling, dialogs)

    out = pull(label_studio, [str(definition)], title, tmp_path / "pulled")
    with open(out / "results.csv", encoding="utf-8", newline="") as f:
        answers = {(r["question"], r["answer"]) for r in csv.DictReader(f)}
    assert ("evidence", f"opt {img}") in answers and ("verdict", "1") in answers


BLINDED = {
    "pairwise-aspects": INPUTS / "pairwise-aspects",
    "extractive-ranking": INPUTS / "extractive-ranking.csv",
}


def system_names(protocol: str) -> set[str]:
    if protocol == "pairwise-aspects":
        marker = json.loads((INPUTS / "pairwise-aspects" / "index_marker.json").read_text("utf-8"))
        return {m[k] for m in marker for k in ("summary #1", "summary #2")}
    with open(INPUTS / "extractive-ranking.csv", encoding="utf-8", newline="") as f:
        return set(next(csv.reader(f))[2:])


@pytest.mark.parametrize("protocol", list(BLINDED))
def test_no_system_name_reaches_the_annotator(
    label_studio: LiveServer, labeling: LabelingView, protocol: str, tmp_path: Path
) -> None:
    names = system_names(protocol)
    assert len(names) >= 2
    project = push(label_studio, [protocol, str(BLINDED[protocol])], f"blinding {protocol}", tmp_path)
    with responses(labeling.page) as loaded:
        labeling.open(project)
        labeling.page.wait_for_load_state("networkidle")
    assert names <= set(labeling.shown_systems)  # the systems are known, only hidden

    served = labeling.page.context.request.get(f"{label_studio.url}/projects/{project}/data?labeling=1").text()
    sources = [("page content", labeling.page.content()), ("served HTML", served), *loaded]
    assert any("/api/" in url for url, _ in loaded)
    leaks = sorted({(url, name) for url, body in sources for name in names if name in body})
    assert leaks == [], f"system names reach the annotator: {leaks}"
