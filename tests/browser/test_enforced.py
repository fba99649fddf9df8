"""What the editor itself enforces, checked by trying: a submit with a required answer
missing is refused (the annotator sees the config's message and nothing reaches the
server); hidden questions stop being required."""

from __future__ import annotations

import json
from pathlib import Path

from annols import protocols
from annols.labelstudio.client import LabelStudioClient
from tests.browser.conftest import LabelingView, pull, push
from tests.browser.test_annotate import INPUTS, read_csv
from tests.conftest import LiveServer


def annotations_of(client: LabelStudioClient, project: int) -> int:
    return sum(len(t["annotations"]) for t in client.export_tasks(project))


def test_summary_flaws_refuses_a_missing_answer(
    label_studio: LiveServer, client: LabelStudioClient, labeling: LabelingView, tmp_path: Path
) -> None:
    record = json.loads((INPUTS / "summary-flaws.jsonl").read_text("utf-8").splitlines()[0])
    source = tmp_path / "one.jsonl"
    source.write_text(json.dumps(record) + "\n", encoding="utf-8")
    project = push(label_studio, ["summary-flaws", str(source)], "required summary-flaws", tmp_path)

    task = labeling.open(project)
    summary = task["data"]["summary"]
    labeling.label("Irrelevant")
    labeling.select_text(summary, summary.index("I don't"), len(summary))
    labeling.unselect()
    assert labeling.refused() == "Please answer: Is the summary missing key information?"
    assert annotations_of(client, project) == 0
    labeling.choose(labeling.choices_after("Is the summary missing key information?"), "No")
    labeling.submit()
    assert annotations_of(client, project) == 1


def test_pairwise_refuses_an_unanswered_aspect(
    label_studio: LiveServer, client: LabelStudioClient, labeling: LabelingView, tmp_path: Path
) -> None:
    project = push(label_studio, ["pairwise-aspects", str(INPUTS / "pairwise-aspects")], "required pairwise", tmp_path)

    labeling.open(project)
    labeling.choose(labeling.choices_after("informative"), "0: tie")
    labeling.choose(labeling.choices_after("readability"), "2: Summary #2 is better")
    assert labeling.refused() == "Please answer: factual consistency"
    labeling.choose(labeling.choices_after("factual consistency"), "0: tie")
    labeling.submit()
    assert annotations_of(client, project) == 1


def test_sentence_errors_special_case_hides_and_frees_the_other_columns(
    label_studio: LiveServer, labeling: LabelingView, tmp_path: Path
) -> None:
    title = "required sentence-errors"
    source = INPUTS / "sentence-errors-headline.csv"
    project = push(label_studio, ["sentence-errors", "--variant", "headline", str(source)], title, tmp_path)

    labeling.open(project)
    row = labeling.block("Sentence 1")
    special, mapping, meaning = (row.locator(".lsf-choices").nth(i) for i in range(3))
    explanation = row.locator("textarea")
    # Without a special case, Mapping, Meaning and the explanation are each required.
    assert labeling.refused() == "Please answer: Mapping, Sentence 1"
    labeling.choose(mapping, "Omission")
    assert labeling.refused() == "Please answer: Meaning, Sentence 1"
    labeling.choose(meaning, "Ungrammatical")
    assert labeling.refused() == "Please answer: Mistake explanation, Sentence 1"
    # A special case hides them all, and then they are not required.
    labeling.choose(special, "Repetitive")
    for control in (mapping, meaning, explanation):
        assert control.is_hidden()
    labeling.submit()

    out = pull(label_studio, ["sentence-errors", "--variant", "headline"], title, tmp_path / "pulled")
    [row_out] = read_csv(out / "sentence-errors.csv")
    assert (row_out["special_case"], row_out["mapping"], row_out["meaning"], row_out["explanation"]) == (
        "Repetitive", "", "", "",
    )  # fmt: skip
    # The hidden answers given before the special case are still in the result: reported.
    rules = {v["rule"] for v in read_csv(out / "violations.csv")}
    assert rules == {"special-case-excludes-the-rest"}, rules


def test_extractive_ranking_requires_every_cell(
    label_studio: LiveServer, client: LabelStudioClient, labeling: LabelingView, tmp_path: Path
) -> None:
    project = push(label_studio, ["extractive-ranking", str(INPUTS / "extractive-ranking.csv")], "required ranking",
                   tmp_path)  # fmt: skip

    labeling.open(project)
    spec = protocols.load("extractive-ranking").spec
    cells = [(dim.text, position) for dim in spec.dimensions for position in spec.positions]
    assert len(cells) == 12
    # Filled in order, each submit is refused naming the first empty cell, up to the last.
    for dimension, position in cells:
        assert labeling.refused() == f"Please answer: {dimension}, Output {position}"
        cell = labeling.block(dimension).locator(
            f"xpath=.//h4[normalize-space()='Output {position}']/following-sibling::div[1]"
        )
        labeling.choose(cell, "4")  # the same rank everywhere: ties are allowed
    labeling.submit()
    assert annotations_of(client, project) == 1


def test_qa_feedback_requires_evidence_for_an_inconsistent_fact(
    label_studio: LiveServer, client: LabelStudioClient, labeling: LabelingView, tmp_path: Path
) -> None:
    project = push(label_studio, ["qa-feedback", str(INPUTS / "qa-feedback.json")], "required qa-feedback", tmp_path)

    task = labeling.open(project)
    prediction = task["data"]["prediction"]
    start = prediction.index("2019")
    labeling.label("Inconsistent Fact")
    labeling.select_text(prediction, start, start + 4)
    labeling.unselect()
    labeling.label("Unverifiable Fact")  # a span without a per-span question: never blocks
    labeling.select_text(prediction, prediction.index("famous"), prediction.index("famous") + 6)
    labeling.unselect()
    message = labeling.refused()
    assert message == "Please answer: Evidence for this Inconsistent Fact: the passage sentence(s) it contradicts"
    # The editor selected the span that lacks evidence, so its evidence list is showing.
    evidence = labeling.page.locator(".lsf-choices", has_text="P1:S1")
    assert evidence.is_visible()
    labeling.choose(evidence, "P1:S1")
    labeling.submit()
    assert annotations_of(client, project) == 1
