"""The user's field names in Label Studio's editor, in Chromium: a WMT-like ratings study
whose panes are named ``source``, ``reference`` and ``hypothesis``. The editor sets
``source`` of a task's data to the whole task (blinding meta included), so annols stores
that field under an internal key: the source pane shows the source sentence, nothing the
page loads names the system, and the pull gives the user's names back."""

from __future__ import annotations

import json
from pathlib import Path

from annols.definition import blinding, fields
from tests.browser.conftest import LabelingView, pull, push, responses
from tests.browser.test_annotate import read_csv
from tests.conftest import LiveServer

DEFINITION = """
name = "wmt-fields"
style = "ratings"
summary = "Rate how much of the source's meaning a translation keeps."
guideline = "Read the source and the reference, then rate the translation."

[[context]]
name = "source"
title = "Source"

[[context]]
name = "reference"
title = "Reference"

[[candidates]]
name = "hypothesis"
title = "Translation"

[[answers]]
code = "1"

[[answers]]
code = "2"

[[answers]]
code = "3"

[[aspects]]
name = "adequacy"
text = "Adequacy"
"""
SYSTEM = "secret-mt-system"
RECORD = {
    "id": "seg-1",
    "source": "Der Hund schläft im Garten.",
    "reference": "The dog sleeps in the garden.",
    "hypothesis": "The cat sleeps in the garden.",
    "systems": [SYSTEM],
}


def shown_texts(labeling: LabelingView) -> list[str]:
    return labeling.page.locator(".lsf-htx-richtext").all_inner_texts()


def test_a_pane_named_source_shows_its_text_keeps_blinding_and_pulls_the_users_names(
    label_studio: LiveServer, labeling: LabelingView, tmp_path: Path
) -> None:
    definition = tmp_path / "wmt-fields.toml"
    definition.write_text(DEFINITION, encoding="utf-8")
    source = tmp_path / "wmt-fields.jsonl"
    source.write_text(json.dumps(RECORD, ensure_ascii=False) + "\n", encoding="utf-8")
    title = "browser field names"
    project = push(label_studio, [str(definition), str(source)], title, tmp_path)

    with responses(labeling.page) as loaded:
        task = labeling.open(project)
        labeling.page.wait_for_load_state("networkidle")
    # Each pane shows its own text, in order: the source pane the source sentence, not the task's JSON.
    assert shown_texts(labeling) == [RECORD["source"], RECORD["reference"], RECORD["hypothesis"]]
    assert labeling.shown_systems == (SYSTEM,)  # known to the task, only hidden
    assert "source" not in task["data"] and task["data"][fields.data_key("source")] == RECORD["source"]

    page = labeling.page.content()
    served = labeling.page.context.request.get(f"{label_studio.url}/projects/{project}/data?labeling=1").text()
    assert blinding.META_SYSTEMS not in labeling.page.inner_text("body")  # the meta is not on show
    sources = [("page content", page), ("served HTML", served), *loaded]
    assert any("/api/" in url for url, _ in loaded)
    leaks = sorted(url for url, body in sources if SYSTEM in body)
    assert leaks == [], f"the system name reaches the annotator: {leaks}"

    labeling.choose(labeling.page.locator(".lsf-choices"), "2")
    labeling.screenshot("field-names")
    labeling.submit()

    out = pull(label_studio, [str(definition)], title, tmp_path / "pulled")
    [row] = read_csv(out / "results.csv")
    assert (row["question"], row["answer"], row["system"]) == ("adequacy_hypothesis", "2", SYSTEM)
    [line] = [json.loads(x) for x in (out / "wmt-fields.jsonl").read_text("utf-8").splitlines()]
    assert line["data"] == {k: RECORD[k] for k in ("source", "reference", "hypothesis")} | {"record": {"id": "seg-1"}}
    assert [j["system"] for j in line["judgments"]] == [SYSTEM]
    assert fields.data_key("source") not in (out / "results.csv").read_text("utf-8")


# Names of a Label Studio task's own parts: the editor reads `$id` and the like from the
# task data all the same, so they are stored as given.
KEPT = ("id", "data", "meta", "annotations", "predictions")


def test_names_of_a_tasks_parts_are_stored_as_given_and_shown(
    label_studio: LiveServer, labeling: LabelingView, tmp_path: Path
) -> None:
    context = "".join(f'[[context]]\nname = "{name}"\ntitle = "Pane {name}"\n\n' for name in KEPT)
    definition = tmp_path / "task-parts.toml"
    definition.write_text(f"""
name = "task-parts"
style = "spans"
summary = "Fields named like a task's parts."
guideline = "Mark errors."

{context}[target]
name = "text"
title = "Text"

[spans]
name = "errors"

[[spans.labels]]
value = "Error"
""", encoding="utf-8")  # fmt: skip
    record = {name: f"The {name} field." for name in (*KEPT, "text")}
    source = tmp_path / "task-parts.jsonl"
    source.write_text(json.dumps(record) + "\n", encoding="utf-8")
    project = push(label_studio, [str(definition), str(source)], "browser task parts", tmp_path)

    task = labeling.open(project)
    assert task["data"] == record
    assert shown_texts(labeling) == list(record.values())


# Names no `$variable` of the editor can read (a space, a dash, a dot is a path into nested
# data, a letter outside ASCII): stored under internal keys, shown, and pulled back as given.
WIDE = ("Source Text", "src-lang", "doc.title", "Quelle ü")


def test_names_no_variable_can_read_are_shown_and_pulled_as_given(
    label_studio: LiveServer, labeling: LabelingView, tmp_path: Path
) -> None:
    context = "".join(f'[[context]]\nname = "{name}"\ntitle = "Pane {name}"\n\n' for name in WIDE)
    definition = tmp_path / "wide-names.toml"
    definition.write_text(f"""
name = "wide-names"
style = "spans"
summary = "Fields named as a spreadsheet names them."
guideline = "Mark errors."

{context}[target]
name = "MT output"
title = "Translation"

[spans]
name = "errors"

[[spans.labels]]
value = "Mistranslation"

[spans.labels.question]
name = "kind"
text = "Which kind?"
options_from = "error kinds"

[[questions]]
name = "adequacy"
text = "Adequacy"
required = true
choices = [{{ code = "1" }}, {{ code = "2" }}]
""", encoding="utf-8")  # fmt: skip
    hypothesis = "The cat sleeps in the garden."
    record = {name: f"The {name} field." for name in WIDE} | {
        "MT output": hypothesis, "error kinds": [{"value": "word"}, {"value": "grammar"}], "systems": [SYSTEM]
    }  # fmt: skip
    source = tmp_path / "wide-names.jsonl"
    source.write_text(json.dumps(record, ensure_ascii=False) + "\n", encoding="utf-8")
    title = "browser wide names"
    project = push(label_studio, [str(definition), str(source)], title, tmp_path)

    task = labeling.open(project)
    assert shown_texts(labeling) == [*(record[name] for name in WIDE), hypothesis]
    assert sorted(task["data"]) == sorted(fields.data_key(k) for k in record if k != "systems")
    labeling.label("Mistranslation")
    labeling.select_text(hypothesis, 4, 7)
    labeling.select_region("Mistranslation")
    labeling.choose(labeling.page.locator(".lsf-choices", has_text="grammar"), "word")
    labeling.unselect()
    labeling.choose(labeling.choices_after("Adequacy"), "2")
    labeling.submit()

    out = pull(label_studio, [str(definition)], title, tmp_path / "pulled")
    [line] = [json.loads(x) for x in (out / "wide-names.jsonl").read_text("utf-8").splitlines()]
    assert line["data"] == {k: v for k, v in record.items() if k != "systems"}
    [span] = [j for j in line["judgments"] if j["kind"] == "span"]
    assert (span["start"], span["end"], span["label"], span["system"]) == (4, 7, "Mistranslation", SYSTEM)
    answers = {(r["question"], r["answer"], r["system"]) for r in read_csv(out / "results.csv")}
    assert {("kind", "word", SYSTEM), ("adequacy", "2", SYSTEM)} <= answers
