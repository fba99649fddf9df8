"""The ratings style in Label Studio's editor, in Chromium: the example studies pushed by
`annols push`, rated with clicks (1..5 scale) and the keyboard on a slider (0..100), a
submit with one rating missing refused with nothing sent, and the pulled values exactly
what was entered, each under the system that was shown."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from playwright.sync_api import Locator

from annols import protocols
from annols.labelstudio.client import LabelStudioClient
from annols.study.exports import read_export
from annols.styles import decode
from annols.styles.judgments import Rating
from tests.browser.conftest import Annotator, LabelingView, pull, push
from tests.browser.test_annotate import read_csv
from tests.browser.test_enforced import annotations_of
from tests.conftest import ROOT, LiveServer

EXAMPLES = ROOT / "examples"
ASPECTS = {"coherence": "Coherence", "consistency": "Consistency", "fluency": "Fluency", "relevance": "Relevance"}
# The score given to each system on each aspect: a different one per system, so that a
# rating pulled under the wrong system shows.
SCORES = {
    "reference": {"coherence": 5, "consistency": 4, "fluency": 5, "relevance": 4},
    "lead-extract": {"coherence": 2, "consistency": 5, "fluency": 4, "relevance": 3},
    "abstractive-x": {"coherence": 4, "consistency": 1, "fluency": 3, "relevance": 2},
    "compressive-y": {"coherence": 1, "consistency": 3, "fluency": 1, "relevance": 1},
}
SHOWN = {1: "1: very poor", 5: "5: very good"}  # the other codes show as themselves


def one_record(name: str, line: int, tmp_path: Path) -> tuple[Path, dict[str, Any]]:
    record = json.loads((EXAMPLES / f"{name}.jsonl").read_text("utf-8").splitlines()[line])
    path = tmp_path / f"{name}.jsonl"
    path.write_text(json.dumps(record, ensure_ascii=False) + "\n", encoding="utf-8")
    return path, record


def cell(labeling: LabelingView, candidate_title: str, aspect_text: str) -> Locator:
    """The answers of one aspect under one candidate (its block holds the candidate's title)."""
    block = labeling.page.locator(f"xpath=//h3[normalize-space()='{candidate_title}']/../..")
    return block.locator(f"xpath=.//h4[normalize-space()='{aspect_text}']/../..").locator(".lsf-choices")


def test_summeval_ratings_refuses_a_missing_rating_then_pulls_exact_values(
    label_studio: LiveServer, client: LabelStudioClient, labeling: LabelingView, annotator: Annotator, tmp_path: Path
) -> None:
    definition = EXAMPLES / "summeval-ratings.toml"
    source, record = one_record("summeval-ratings", 0, tmp_path)
    title = "browser summeval-ratings"
    project = push(label_studio, [str(definition), str(source), "--seed", "11"], title, tmp_path)

    task = labeling.open(project)
    shown = labeling.shown_systems
    assert sorted(shown) == sorted(SCORES) and list(shown) != record["systems"]  # blinded, not the input order
    for i, system in enumerate(shown):
        assert task["data"][f"summary_{i + 1}"] == record[f"summary_{record['systems'].index(system) + 1}"]

    cells = [(i, aspect) for i in range(4) for aspect in ASPECTS]
    for i, aspect in cells[:-1]:
        score = SCORES[shown[i]][aspect]
        labeling.choose(cell(labeling, f"Summary {i + 1}", ASPECTS[aspect]), SHOWN.get(score, str(score)))
    # Fifteen of sixteen: the editor refuses, naming the empty cell, and sends nothing.
    assert labeling.refused() == "Please answer: Relevance, Summary 4"
    assert annotations_of(client, project) == 0
    last = SCORES[shown[3]]["relevance"]
    labeling.choose(cell(labeling, "Summary 4", "Relevance"), SHOWN.get(last, str(last)))
    labeling.screenshot("summeval-ratings")
    labeling.submit()
    assert annotations_of(client, project) == 1

    out = pull(label_studio, [str(definition)], title, tmp_path / "pulled")
    rows = read_csv(out / "results.csv")
    assert sorted((r["question"], r["answer"], r["system"]) for r in rows) == sorted(
        (f"{aspect}_summary_{i + 1}", str(SCORES[shown[i]][aspect]), shown[i]) for i, aspect in cells
    )
    assert {r["annotator"] for r in rows} == {annotator.email}
    d = protocols.load(str(definition))
    (exported,) = read_export(out / "export.json")
    (annotation,) = exported.annotations
    ratings = decode(d, exported, annotation)
    assert sorted((j.system, j.aspect, j.value) for j in ratings if isinstance(j, Rating)) == sorted(
        (system, aspect, float(score)) for system, scores in SCORES.items() for aspect, score in scores.items()
    )
    assert len(ratings) == 16


def test_wmt_da_slider_is_required_and_pulls_the_number_set(
    label_studio: LiveServer, client: LabelStudioClient, labeling: LabelingView, tmp_path: Path
) -> None:
    definition = EXAMPLES / "wmt-da.toml"
    source, record = one_record("wmt-da", 1, tmp_path)
    title = "browser wmt-da"
    project = push(label_studio, [str(definition), str(source)], title, tmp_path)

    task = labeling.open(project)
    assert task["data"]["translation"] == record["translation"]
    slider = labeling.page.locator("input[type=range][name=adequacy_translation]")
    shown_value = labeling.page.locator(".lsf-number output")
    # Untouched, the slider holds no score (its thumb rests mid-way, faded, no number shown).
    opacity = "e => getComputedStyle(e).opacity"
    assert slider.get_attribute("value") == "" and shown_value.inner_text() == ""
    assert slider.evaluate(opacity) == "0.35"
    assert labeling.refused() == "Please answer: How accurately does the translation convey the meaning of the source?"
    assert annotations_of(client, project) == 0

    slider.focus()
    labeling.page.keyboard.press("Home")
    for _ in range(37):
        labeling.page.keyboard.press("ArrowRight")
    assert shown_value.inner_text() == "37" and slider.evaluate(opacity) == "1"
    labeling.screenshot("wmt-da")
    saved = labeling.submit()
    assert saved["result"][0]["value"] == {"number": 37}

    out = pull(label_studio, [str(definition)], title, tmp_path / "pulled")
    [row] = read_csv(out / "results.csv")
    assert (row["question"], row["answer"], row["system"]) == ("adequacy_translation", "37", "system-b")
    (exported,) = read_export(out / "export.json")
    d = protocols.load(str(definition))
    assert decode(d, exported, exported.annotations[0]) == [Rating("adequacy", "translation", "system-b", 37.0, "37")]
