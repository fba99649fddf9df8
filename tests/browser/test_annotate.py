"""Each protocol end to end in a real browser: pushed by `annols push`, annotated by an
annotator with real gestures in Label Studio's editor, submitted, pulled by `annols pull`,
and the protocol's result file compared with exactly what that annotator did.

Each test also saves a screenshot of the labeling view with the work done, just before
submitting (``docs/screenshots/`` with ``ANNOLS_UPDATE_SCREENSHOTS=1``).
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

from annols import protocols
from annols.study import demo
from tests.browser.conftest import PUSHED_FROM, Annotator, LabelingView, pull, push
from tests.conftest import LiveServer
from tests.study.test_push_pull import shown_by_task

INPUTS = demo.INPUTS


def read_csv(path: Path) -> list[dict[str, str]]:
    with open(path, encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def test_summary_flaws(label_studio: LiveServer, labeling: LabelingView, annotator: Annotator, tmp_path: Path) -> None:
    # The guideline's Example 3, as a one-task input in the protocol's own format.
    record = json.loads((INPUTS / "summary-flaws.jsonl").read_text("utf-8").splitlines()[2])
    source = tmp_path / "flaws.jsonl"
    source.write_text(json.dumps(record, ensure_ascii=False) + "\n", encoding="utf-8")
    title = "browser summary-flaws"
    project = push(label_studio, ["summary-flaws", str(source)], title, tmp_path)

    task = labeling.open(project)
    summary = task["data"]["summary"]
    assert summary == record["summary"]
    incoherent = "only watch movies people with no skill in do"
    non_factual = "I view her like I like people with no skill in do."
    labeling.label("Incoherent")
    labeling.select_text(summary, summary.index(incoherent), summary.index(incoherent) + len(incoherent))
    labeling.label("Non-factual")
    labeling.select_text(summary, summary.index(non_factual), len(summary))
    labeling.unselect()
    labeling.choose(labeling.choices_after("Is the summary missing key information?"), "Yes")
    labeling.screenshot("summary-flaws")
    labeling.submit()

    out = pull(label_studio, ["summary-flaws"], title, tmp_path / "pulled")
    document = task["data"]["document"]
    assert (out / "summary-flaws.txt").read_text("utf-8") == (
        f"##### Task {labeling.task_key} | Annotator {annotator.email} #####\n"
        f"Source Document:\n{document}\n\n"
        f"Summary to be Labeled:\n{summary}\n\n"
        "Problematic Spans Identified in the Summary:\n"
        f"Span 1: {incoherent} (Label: Incoherent)\n"
        f"Span 2: {non_factual} (Label: Non-factual)\n"
        "\n"
        "Is the summary missing key information?\n"
        "Yes\n"
    )
    line = json.loads((out / "summary-flaws.jsonl").read_text("utf-8"))
    start = summary.index(incoherent)
    assert line["spans"] == [
        {"start": start, "end": start + len(incoherent), "text": incoherent, "label": "Incoherent"},
        {"start": summary.index(non_factual), "end": len(summary), "text": non_factual, "label": "Non-factual"},
    ]
    assert read_csv(out / "violations.csv") == []


def test_pairwise_aspects(
    label_studio: LiveServer, labeling: LabelingView, annotator: Annotator, tmp_path: Path
) -> None:
    folder = INPUTS / "pairwise-aspects"
    title = "browser pairwise-aspects"
    project = push(label_studio, ["pairwise-aspects", str(folder)], title, tmp_path)

    task = labeling.open(project)
    assert "sample" not in task["data"]  # not shown: the sample's number stays in the manifest
    cwd, _ = PUSHED_FROM[project]
    sample = shown_by_task(cwd / ".annols", title)[task["id"]]["extra"]["sample"]
    answers = {"informative": "1", "factual consistency": "0", "readability": "2"}
    shown = {"1": "1: Summary #1 is better", "2": "2: Summary #2 is better", "0": "0: tie"}
    for aspect, code in answers.items():
        labeling.choose(labeling.choices_after(aspect), shown[code])
    labeling.screenshot("pairwise-aspects")
    labeling.submit()

    out = pull(label_studio, ["pairwise-aspects"], title, tmp_path / "pulled")
    # The seed's own file, answers typed behind the colons.
    template = (folder / f"{sample}.txt").read_text("utf-8")
    expected = template
    for aspect, code in answers.items():
        expected = expected.replace(f"[***] {aspect}:\n", f"[***] {aspect}:{code}\n")
    assert expected != template
    assert (out / "annotator" / f"{sample}.txt").read_text("utf-8") == expected

    marker = json.loads((folder / "index_marker.json").read_text("utf-8"))
    systems = next(m for m in marker if m["sample"] == sample)
    assert labeling.shown_systems == (systems["summary #1"], systems["summary #2"])  # the study fixed the order
    winner = {"1": systems["summary #1"], "2": systems["summary #2"], "0": "tie"}
    assert read_csv(out / "judgments.csv") == [
        {"sample": str(sample), "annotator": "annotator", "aspect": aspect, "system_1": systems["summary #1"],
         "system_2": systems["summary #2"], "value": code, "winner": winner[code]}
        for aspect, code in answers.items()
    ]  # fmt: skip
    assert read_csv(out / "violations.csv") == []


def test_sentence_errors_abstract(
    label_studio: LiveServer, labeling: LabelingView, annotator: Annotator, tmp_path: Path
) -> None:
    title = "browser sentence-errors abstract"
    source = INPUTS / "sentence-errors-abstract.csv"
    project = push(label_studio, ["sentence-errors", "--variant", "abstract", str(source)], title, tmp_path)

    task = labeling.open(project)
    data = task["data"]
    assert data["sentence_3"] == ""  # the summary has two sentences for three rows
    explanation = "Vynechání „v Premiere League“ mění význam „boje o přežití“."
    row1, row2, row3 = (labeling.block(f"Sentence {n}") for n in (1, 2, 3))
    # Row 1: an error, described by Mapping + Meaning + explanation.
    labeling.choose(row1.locator(".lsf-choices").nth(1), "Omission")
    labeling.choose(row1.locator(".lsf-choices").nth(2), "Pragmatic meaning changed")
    row1.locator("textarea").fill(explanation)
    # Row 2: a special case, which hides the rest of the row.
    labeling.choose(row2.locator(".lsf-choices").nth(0), "OK")
    assert not row2.locator("textarea").is_visible()
    labeling.choose(row3.locator(".lsf-choices").nth(0), "Sentence missing")
    labeling.screenshot("sentence-errors-abstract")
    labeling.submit()

    out = pull(label_studio, ["sentence-errors", "--variant", "abstract"], title, tmp_path / "pulled")
    common = {"task": labeling.task_key, "annotator": annotator.email, "variant": "abstract", "record_id": "abstract-1"}
    empty = {"special_case": "", "mapping": "", "meaning_group": "", "meaning": "", "explanation": ""}
    assert read_csv(out / "sentence-errors.csv") == [
        {**common, **empty, "sentence": "1", "text": data["sentence_1"], "mapping": "Omission",
         "meaning_group": "Misleading", "meaning": "Pragmatic meaning changed", "explanation": explanation},
        {**common, **empty, "sentence": "2", "text": data["sentence_2"], "special_case": "OK"},
        {**common, **empty, "sentence": "3", "text": "", "special_case": "Sentence missing"},
    ]  # fmt: skip
    assert read_csv(out / "violations.csv") == []


def test_sentence_errors_headline(
    label_studio: LiveServer, labeling: LabelingView, annotator: Annotator, tmp_path: Path
) -> None:
    title = "browser sentence-errors headline"
    source = INPUTS / "sentence-errors-headline.csv"
    project = push(label_studio, ["sentence-errors", "--variant", "headline", str(source)], title, tmp_path)

    task = labeling.open(project)
    row = labeling.block("Sentence 1")
    labeling.choose(row.locator(".lsf-choices").nth(1), "Wrong combination")
    labeling.choose(row.locator(".lsf-choices").nth(2), "Meaning changed, not entailed")
    explanation = "„Pearsonův Leicester“ joins two sentences of the article into a claim it does not make"
    row.locator("textarea").fill(explanation)
    labeling.screenshot("sentence-errors-headline")
    labeling.submit()

    out = pull(label_studio, ["sentence-errors", "--variant", "headline"], title, tmp_path / "pulled")
    assert read_csv(out / "sentence-errors.csv") == [
        {"task": labeling.task_key, "annotator": annotator.email, "variant": "headline", "sentence": "1",
         "text": task["data"]["sentence_1"], "special_case": "", "mapping": "Wrong combination",
         "meaning_group": "Misleading", "meaning": "Meaning changed, not entailed",
         "explanation": explanation, "record_id": "headline-1"},
    ]  # fmt: skip


def test_qa_feedback(label_studio: LiveServer, labeling: LabelingView, annotator: Annotator, tmp_path: Path) -> None:
    title = "browser qa-feedback"
    project = push(label_studio, ["qa-feedback", str(INPUTS / "qa-feedback.json")], title, tmp_path)

    task = labeling.open(project)
    prediction = task["data"]["prediction"]

    def span(label: str, text: str) -> tuple[int, int]:
        start = prediction.index(text)
        labeling.label(label)
        labeling.select_text(prediction, start, start + len(text))
        labeling.unselect()
        return start, start + len(text)

    # Inconsistent Fact, with its evidence ticked while the span is selected.
    wrong = span("Inconsistent Fact", "31 August 2019.")  # whole words: the dataset's scripts assert it
    labeling.select_region("Inconsistent Fact")
    labeling.choose(labeling.page.locator(".lsf-choices", has_text="P1:S1"), "P1:S1")
    labeling.unselect()
    # Repetitive, linked to the earlier text it repeats.
    span("Repeated text", "released on 31 August 2019.")
    repetitive = span("Repetitive", "The album was released in 2018.")
    labeling.relate("Repetitive", "Repeated text")
    irrelevant = span("Irrelevant", "Troye Sivan is a famous singer.")
    # Missing information on passage sentences: P2 S1 marked whole with its button; P1 S1
    # and P1 S3 (not adjacent) dragged over and linked.
    items = task["data"]["passages"]
    labeling.label("Missing Major Auxiliary")
    labeling.page.get_by_test_id("phrase:5").get_by_label("Label whole utterance").click()
    labeling.unselect()
    assert (items[5]["passage"], items[5]["sentence"]) == (2, 1)
    labeling.label("Missing Answer")
    labeling.select_text(items[1]["text"], 0, len(items[1]["text"]))
    labeling.unselect()
    labeling.label("Missing Answer")
    labeling.select_text(items[3]["text"], 0, len(items[3]["text"]))
    labeling.unselect()
    labeling.relate(items[1]["text"][:60], items[3]["text"][:60])
    corrected = "Bloom is the second studio album by Australian singer Troye Sivan, released on 31 August 2018."
    labeling.page.locator("textarea[name=corrected_prediction]").fill(corrected)
    labeling.select_region("Repetitive")  # shows how to link it in the screenshot
    labeling.screenshot("qa-feedback")
    labeling.submit()

    out = pull(label_studio, ["qa-feedback"], title, tmp_path / "pulled")
    records = [json.loads(line) for line in (out / "qa-feedback.jsonl").read_text("utf-8").splitlines()]
    assert len(records) == 1
    assert records[0]["feedback"] == {
        "errors": [
            {"error type": "Wrong-Grounding", "explanation": '{"passage_id":1,"sentence_id":[1]}',
             "start": wrong[0], "end": wrong[1]},
            {"error type": "Redundant", "explanation": "released on 31 August 2019.",
             "start": repetitive[0], "end": repetitive[1]},
            {"error type": "Irrelevant", "explanation": "", "start": irrelevant[0], "end": irrelevant[1]},
        ],
        "missing-info": [
            {"error type": "Missing-Major-Auxiliary", "passage_id": 2, "sentence_id": [1]},
            {"error type": "Missing-Answer", "passage_id": 1, "sentence_id": [1, 3]},
        ],
        "corrected-prediction": corrected,
    }  # fmt: skip
    original = json.loads((INPUTS / "qa-feedback.json").read_text("utf-8"))[0]
    assert {k: v for k, v in records[0].items() if k != "feedback"} == original
    assert read_csv(out / "violations.csv") == []


def test_extractive_ranking(
    label_studio: LiveServer, labeling: LabelingView, annotator: Annotator, tmp_path: Path
) -> None:
    title = "browser extractive-ranking"
    source = INPUTS / "extractive-ranking.csv"
    project = push(label_studio, ["extractive-ranking", str(source)], title, tmp_path)

    labeling.open(project)
    shown = labeling.shown_systems  # system at Output A, B, C, D
    spec = protocols.load("extractive-ranking").spec
    ranks = {  # by shown position; ties in every dimension
        "Informative ranking": {"A": "1", "B": "1", "C": "2", "D": "3"},
        "Coherence ranking": {"A": "2", "B": "1", "C": "2", "D": "4"},
        "Overall ranking": {"A": "1", "B": "2", "C": "2", "D": "2"},
    }
    for dimension, cells in ranks.items():
        block = labeling.block(dimension)
        for position, rank in cells.items():
            choices = block.locator(f"xpath=.//h4[normalize-space()='Output {position}']/following-sibling::div[1]")
            labeling.choose(choices, rank)
    labeling.screenshot("extractive-ranking")
    labeling.submit()

    out = pull(label_studio, ["extractive-ranking"], title, tmp_path / "pulled")
    with open(source, encoding="utf-8", newline="") as f:
        original = next(csv.DictReader(f))
    rows = read_csv(out / "extractive-ranking.csv")
    assert len(rows) == 1
    expected: dict[str, Any] = dict(original)
    for dim in spec.dimensions:
        for i, position in enumerate(spec.positions):
            expected[f"{annotator.email}:{dim.name}:{shown[i]}"] = ranks[dim.text][position]
    assert rows[0] == expected
    assert read_csv(out / "violations.csv") == []
