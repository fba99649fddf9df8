"""Conversations as a field kind, in Label Studio's editor in Chromium: examples/arena.toml (two whole
conversations side by side, ``kind = "conversation"``) pushed by `annols push` (the server accepts its
config), shown as a dialogue of plain text (HTML and Markdown in a message stay text: no element is
made of them), judged with a click, and the pulled judgment naming the system that was shown there.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.browser.conftest import LabelingView, pull, push
from tests.conftest import ROOT, LiveServer

EXAMPLE = ROOT / "examples" / "arena.toml"
INPUT = ROOT / "examples" / "arena.jsonl"


def test_two_conversations_side_by_side_are_judged_and_pulled_under_the_shown_systems(
    label_studio: LiveServer, labeling: LabelingView, tmp_path: Path
) -> None:
    record = next(json.loads(x) for x in INPUT.read_text("utf-8").splitlines() if '"arena-2"' in x)
    source = tmp_path / "arena.jsonl"
    source.write_text(json.dumps(record, ensure_ascii=False) + "\n", encoding="utf-8")
    title = "browser arena conversations"
    project = push(label_studio, [str(EXAMPLE), str(source), "--seed", "5"], title, tmp_path)

    dialogs: list[str] = []
    labeling.page.on("dialog", lambda d: dialogs.append(d.message))
    task = labeling.open(project)
    page = labeling.page
    shown = labeling.shown_systems
    assert sorted(shown) == sorted(record["systems"])
    panes = page.locator(".lsf-paragraphs")
    assert panes.count() == 2
    for position, pane in enumerate([panes.nth(0), panes.nth(1)]):
        conversation = record[f"conversation_{'ab'[record['systems'].index(shown[position])]}"]
        assert task["data"][f"conversation_{'ab'[position]}"] == conversation
        text = pane.inner_text()
        for message in conversation:  # every message shows, in order, as the text it is
            assert message["content"].splitlines()[0] in text
        order = [text.index(m["content"].splitlines()[0]) for m in conversation]
        assert order == sorted(order)
        box = pane.evaluate("e => [e.scrollWidth, e.clientWidth]")
        assert box[0] <= box[1] + 1, f"a message runs out of its pane: {box}"
    # The HTML a model wrote is text on the page, never markup: no image, no list was made of it.
    assert "<img src=x" in page.locator(".lsf-paragraphs").nth(shown.index("model-y")).inner_text()
    assert page.locator(".lsf-paragraphs img, .lsf-paragraphs ul, .lsf-paragraphs table").count() == 0
    page.wait_for_timeout(500)
    assert dialogs == []  # the message's onerror="alert(...)" never ran

    labeling.choose(labeling.choices_after("Which assistant did better?"), "A is better")
    labeling.screenshot("arena-conversations")
    labeling.submit()

    out = pull(label_studio, [str(EXAMPLE)], title, tmp_path / "pulled")
    [line] = [json.loads(x) for x in (out / "arena.jsonl").read_text("utf-8").splitlines()]
    [judgment] = line["judgments"]
    assert judgment["code"] == "A" and judgment["systems"][judgment["winner"]] == shown[0]
    first = record[f"conversation_{'ab'[record['systems'].index(shown[0])]}"]
    assert line["data"]["conversation_a"] == first and line["systems"] == list(shown)  # as shown, systems named
