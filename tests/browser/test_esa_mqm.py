"""ESA and MQM, the shipped examples, in Label Studio's editor in Chromium: error spans with their severity (a
label in ESA, a required per-span answer in MQM) and ESA's required 0-100 slider, refused while missing and
pulled exactly as entered, under the system that was shown."""

from __future__ import annotations

from pathlib import Path

from annols import protocols
from annols.labelstudio.client import LabelStudioClient
from annols.study.exports import read_export
from annols.styles import decode
from annols.styles.judgments import Rating, Span
from tests.browser.conftest import LabelingView, pull, push
from tests.browser.test_annotate import read_csv
from tests.browser.test_enforced import annotations_of
from tests.browser.test_ratings import one_record
from tests.conftest import ROOT, LiveServer

EXAMPLES = ROOT / "examples"


def test_esa_spans_and_a_required_slider(
    label_studio: LiveServer, client: LabelStudioClient, labeling: LabelingView, tmp_path: Path
) -> None:
    definition = EXAMPLES / "esa.toml"
    source, record = one_record("esa", 1, tmp_path)  # sys-b: "The train to Hamburg falls out today ..."
    title = "browser esa"
    project = push(label_studio, [str(definition), str(source)], title, tmp_path)
    task = labeling.open(project)
    hypothesis = task["data"]["hypothesis"]
    assert hypothesis == record["hypothesis"]
    marks = {"major": "falls out", "minor": "today"}
    for label, words in marks.items():
        labeling.label(label)
        start = hypothesis.index(words)
        labeling.select_text(hypothesis, start, start + len(words))
        labeling.unselect()
    # Spans but no score: the editor refuses and sends nothing.
    assert labeling.refused() == "Please answer: Score the translation as a whole"
    assert annotations_of(client, project) == 0
    slider = labeling.page.locator("input[type=range][name=score]")
    slider.focus()
    labeling.page.keyboard.press("Home")
    for _ in range(42):
        labeling.page.keyboard.press("ArrowRight")
    labeling.screenshot("esa")
    saved = labeling.submit()
    assert {"from_name": "score", "value": {"number": 42}}.items() <= {
        k: v for item in saved["result"] if item["from_name"] == "score" for k, v in item.items()
    }.items()

    out = pull(label_studio, [str(definition)], title, tmp_path / "pulled")
    rows = read_csv(out / "results.csv")
    assert sorted((r["question"], r["answer"], r["system"]) for r in rows) == [
        ("errors", "major", "sys-b"), ("errors", "minor", "sys-b"), ("score", "42", "sys-b")]  # fmt: skip
    (exported,) = read_export(out / "export.json")
    judged = decode(protocols.load(str(definition)), exported, exported.annotations[0])
    spans = sorted((j.label, j.text, j.system) for j in judged if isinstance(j, Span))
    assert spans == [("major", "falls out", "sys-b"), ("minor", "today", "sys-b")]
    assert [j for j in judged if isinstance(j, Rating)] == [Rating("score", "", "sys-b", 42.0, "42")]


def test_mqm_span_needs_its_severity(
    label_studio: LiveServer, client: LabelStudioClient, labeling: LabelingView, tmp_path: Path
) -> None:
    definition = EXAMPLES / "mqm.toml"
    source, record = one_record("mqm", 2, tmp_path)  # sys-c: "The train to Hamburg is today, because a strike."
    title = "browser mqm"
    project = push(label_studio, [str(definition), str(source)], title, tmp_path)
    task = labeling.open(project)
    hypothesis = task["data"]["hypothesis"]
    assert hypothesis == record["hypothesis"] and task["data"]["reference"] == record["reference"]
    start = hypothesis.index("is today")
    labeling.label("Accuracy")
    labeling.select_text(hypothesis, start, start + len("is today"))
    labeling.unselect()
    # A span without its severity: refused, naming the question; the span is selected, its severity showing.
    assert labeling.refused() == "Please answer: Severity of this error"
    assert annotations_of(client, project) == 0
    severity = labeling.choices_after("Severity of this error")
    if not severity.is_visible():
        labeling.select_region("Accuracy")
    labeling.choose(severity, "Major")
    labeling.unselect()
    punctuation = hypothesis.index("today,") + len("today")
    labeling.label("Fluency/Punctuation")
    labeling.select_text(hypothesis, punctuation, punctuation + 1)
    labeling.unselect()
    labeling.select_region("Fluency/Punctuation")
    labeling.choose(labeling.choices_after("Severity of this error"), "Minor")
    labeling.screenshot("mqm")
    labeling.submit()

    out = pull(label_studio, [str(definition)], title, tmp_path / "pulled")
    (exported,) = read_export(out / "export.json")
    d = protocols.load(str(definition))
    judged = [j for j in decode(d, exported, exported.annotations[0]) if isinstance(j, Span)]
    assert sorted((j.label, j.text, j.answers["severity"], j.system) for j in judged) == [
        ("Accuracy", "is today", ("major",), "sys-c"), ("Fluency/Punctuation", ",", ("minor",), "sys-c")]  # fmt: skip
    assert sum(d.spec.weight_of(j.label, j.answers["severity"]) for j in judged) == 5.1
