"""Definition files: the shipped five load, and every mistake names file and field."""

from __future__ import annotations

from pathlib import Path

import pytest

from annols import protocols
from annols.errors import DefinitionError, UnknownProtocolError
from annols.protocols import load_definition

MINIMAL = """
name = "headline-check"
style = "pairwise"
summary = "Which headline is better?"
guideline = "Pick the better headline."

[[candidates]]
name = "headline_1"
title = "Headline #1"

[[candidates]]
name = "headline_2"
title = "Headline #2"

[[answers]]
code = "1"

[[answers]]
code = "2"

[[aspects]]
name = "fluency"
text = "Fluency"
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "mine.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_shipped_protocols_and_variants() -> None:
    assert protocols.names() == [
        "extractive-ranking", "pairwise-aspects", "qa-feedback", "sentence-errors", "summary-flaws",
    ]  # fmt: skip
    assert protocols.variants("sentence-errors") == ("abstract", "headline")
    rows = {(d.name, d.variant): d.spec.rows for d in protocols.all_definitions() if d.style == "sentences"}
    assert rows == {("sentence-errors", "abstract"): 3, ("sentence-errors", "headline"): 1}


def test_user_definition_file_loads_by_path(tmp_path: Path) -> None:
    d = protocols.load(str(write(tmp_path, MINIMAL)))
    assert (d.name, d.style) == ("headline-check", "pairwise")
    assert [a.code for a in d.spec.answers] == ["1", "2"]


@pytest.mark.parametrize(
    ("change", "field", "problem"),
    [
        (('style = "pairwise"', 'style = "pairs"'), "style", "not one of"),
        (('name = "headline-check"', 'name = "Headline Check"'), "name", "not a valid protocol name"),
        (('name = "fluency"', 'name = "Fluency!"'), "aspects[0].name", "not a valid name"),
        (('[[answers]]\ncode = "2"', "[[answers]]\ncode = 2"), "answers[1].code", "expected a string"),
        (('text = "Fluency"', 'text = "Fluency"\ncolour = "red"'), "aspects[0].colour", "unknown key"),
        (('guideline = "Pick the better headline."', ""), "guideline", "missing"),
        (('[[answers]]\ncode = "2"', '[[answers]]\ncode = "1"'), "answers", "distinct"),
    ],
)
def test_errors_name_file_and_field(tmp_path: Path, change: tuple[str, str], field: str, problem: str) -> None:
    assert change[0] in MINIMAL
    path = write(tmp_path, MINIMAL.replace(change[0], change[1], 1))
    with pytest.raises(DefinitionError) as info:
        load_definition(path)
    assert info.value.source == str(path)
    assert info.value.field == field
    assert problem in info.value.problem
    assert str(info.value).startswith(f"{path}: {field}: ")


def test_invalid_toml_and_missing_file(tmp_path: Path) -> None:
    with pytest.raises(DefinitionError, match="not valid TOML"):
        load_definition(write(tmp_path, "name = "))
    with pytest.raises(DefinitionError, match="file not found"):
        load_definition(tmp_path / "absent.toml")
    with pytest.raises(UnknownProtocolError, match="unknown protocol 'nope'"):
        protocols.load("nope")


def test_variants_must_be_chosen_and_exist() -> None:
    with pytest.raises(DefinitionError, match=r"--variant abstract\|headline"):
        protocols.load("sentence-errors")
    with pytest.raises(DefinitionError, match="no variant 'teaser'"):
        protocols.load("sentence-errors", "teaser")
    with pytest.raises(DefinitionError, match="has no variants"):
        protocols.load("summary-flaws", "abstract")


def test_links_to_must_name_a_label(tmp_path: Path) -> None:
    text = (Path(protocols.HERE) / "qa-feedback.toml").read_text(encoding="utf-8")
    path = write(tmp_path, text.replace('links_to = "Repeated text"', 'links_to = "Earlier text"'))
    with pytest.raises(DefinitionError) as info:
        load_definition(path)
    assert info.value.field == "spans.labels[1].links_to"


def test_seed_answer_codes_are_the_seeds() -> None:
    """Answer codes a reviewer checks against the guidelines."""
    pairwise = protocols.load("pairwise-aspects").spec
    assert [a.code for a in pairwise.answers] == ["1", "2", "0"]
    assert [a.text for a in pairwise.aspects] == ["informative", "factual consistency", "readability"]

    flaws = protocols.load("summary-flaws").spec
    assert [lab.value for lab in flaws.labels] == ["Non-factual", "Irrelevant", "Incoherent"]
    assert flaws.none_answer == "None identified"
    assert [c.code for c in flaws.questions[0].choices] == ["Yes", "No"]

    qa = protocols.load("qa-feedback").spec
    assert [lab.value for lab in qa.labels] == [
        "Irrelevant", "Repetitive", "Incoherent", "Inconsistent Fact", "Unverifiable Fact", "Repeated text",
    ]  # fmt: skip
    passages = qa.context[1]
    assert [lab.value for lab in passages.labels] == [
        "Missing Answer", "Missing Major Auxiliary", "Missing Minor Auxiliary",
    ]  # fmt: skip

    se = protocols.load("sentence-errors", "abstract").spec
    assert [c.code for c in se.special.choices] == ["OK", "Repetitive", "Sentence missing"]
    assert [c.code for c in se.columns[0].choices] == [
        "Omission", "Wrong combination", "Fabrication", "Lack of rewriting",
    ]  # fmt: skip
    assert [(title, [c.code for c in group]) for title, group in se.columns[1].groups] == [
        ("Malformed", ["Ungrammatical", "Semantically implausible", "No meaning can be inferred"]),
        ("Misleading", ["Meaning changed, not entailed", "Meaning changed, contradiction",
                        "Pragmatic meaning changed"]),
    ]  # fmt: skip

    er = protocols.load("extractive-ranking").spec
    assert er.positions == ("A", "B", "C", "D")
    assert [d.name for d in er.dimensions] == ["informative", "coherence", "overall"]


def test_a_field_named_source_is_accepted(tmp_path: Path) -> None:
    text = MINIMAL.replace('name = "headline_1"', 'name = "source"')
    d = protocols.load(str(write(tmp_path, text)))
    assert [c.name for c in d.spec.candidates] == ["source", "headline_2"]
