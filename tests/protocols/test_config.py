"""Generated configs: valid for Label Studio's own checker, escaped, deterministic, in sync."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from label_studio_sdk.label_interface import LabelInterface
from lxml import etree
from lxml import html as lxml_html

from annols import protocols
from annols.definition import Definition
from annols.protocols import config, load_definition
from tests.conftest import ROOT
from tests.definition.test_definition import MINIMAL

DEFINITIONS = protocols.all_definitions()
IDS = [config.config_filename(d) for d in DEFINITIONS]
EXAMPLES = Path(protocols.HERE) / "examples"


@pytest.mark.parametrize("d", DEFINITIONS, ids=IDS)
def test_config_passes_label_studio_validation(d: Definition) -> None:
    xml = config.label_config(d)
    LabelInterface(xml).validate()  # raises on schema errors, duplicate names, bad toName
    root = etree.fromstring(xml)
    names = [e.get("name") for e in root.iter() if e.get("name")]
    assert len(names) == len(set(names))


@pytest.mark.parametrize("d", DEFINITIONS, ids=IDS)
def test_config_fields_match_example_task(d: Definition) -> None:
    xml = config.label_config(d)
    used = set(re.findall(r'value="\$([a-z0-9_]+)"', xml))
    assert used == set(config.data_fields(d))
    tasks = json.loads((EXAMPLES / config.config_filename(d).replace(".xml", ".json")).read_text("utf-8"))
    assert tasks and all(used <= set(t["data"]) for t in tasks)


def test_configs_folder_is_in_sync() -> None:
    stale = [r for r in config.sync_configs(ROOT / "configs", check=True) if r.status != "unchanged"]
    assert stale == [], "run `annols configs` and commit configs/"


def test_output_is_deterministic() -> None:
    for d in DEFINITIONS:
        again = protocols.load(d.name, d.variant)
        assert config.label_config(d) == config.label_config(again)
        assert config.instructions(d) == config.instructions(again)


NASTY = "Bad <b>\"label\"</b> & 'more' </View>"


def test_user_strings_are_escaped(tmp_path: Path) -> None:
    text = (
        MINIMAL.replace('title = "Headline #1"', f"title = {json.dumps(NASTY)}")
        .replace('text = "Fluency"', f"text = {json.dumps(NASTY)}\nhint = {json.dumps(NASTY)}")
        .replace('[[answers]]\ncode = "1"', f'[[answers]]\ncode = "1"\ntext = {json.dumps(NASTY)}')
        .replace('guideline = "Pick the better headline."', f"guideline = {json.dumps(NASTY + chr(10) + '- ' + NASTY)}")
    )
    path = tmp_path / "nasty.toml"
    path.write_text(text, encoding="utf-8")
    d = load_definition(path)
    xml = config.label_config(d)
    LabelInterface(xml).validate()
    root = etree.fromstring(xml)
    headers = [h.get("value") for h in root.iter("Header")]
    assert headers.count(NASTY) >= 2  # candidate title and aspect text, intact
    assert NASTY in [c.get("value") for c in root.iter("Choice")]

    html = config.instructions(d)
    assert "<b>" not in html and "</View>" not in html
    doc = lxml_html.fromstring(html)
    assert doc.xpath("//p")[0].text_content() == NASTY
    assert doc.xpath("//li")[0].text_content() == NASTY


def test_dollar_titles_are_not_read_as_task_fields(tmp_path: Path) -> None:
    path = tmp_path / "dollar.toml"
    path.write_text(MINIMAL.replace('title = "Headline #1"', 'title = "$headline_2"'), encoding="utf-8")
    root = etree.fromstring(config.label_config(load_definition(path)))
    values = [h.get("value") for h in root.iter("Header")]
    assert "$headline_2" not in values
    assert "\u200b$headline_2" in values


def test_instructions_carry_the_seed_examples() -> None:
    html = config.instructions(protocols.load("summary-flaws"))
    doc = lxml_html.fromstring(html)
    text = doc.text_content()
    assert "Span 1: why did you decide to switch? (Label: Irrelevant)" in text
    assert "None identified" in text
    assert "\n" not in html  # the instructions modal shows white space literally


def test_sentence_rows_hide_and_unrequire_the_rest() -> None:
    root = etree.fromstring(config.label_config(protocols.load("sentence-errors", "abstract")))
    for n in (1, 2, 3):
        special = root.find(f".//Choices[@name='special_{n}']")
        assert special is not None and special.get("required") is None and special.get("choice") == "single"
        view = root.find(f".//View[@whenTagName='special_{n}']")
        assert view is not None and view.get("visibleWhen") == "choice-unselected"
        inside = {e.get("name"): e for e in view.iter() if e.get("name")}
        assert set(inside) == {f"mapping_{n}", f"meaning_{n}", f"explanation_{n}"}
        assert all(e.get("required") == "true" for e in inside.values())


def test_ranking_grid_is_complete_and_required() -> None:
    root = etree.fromstring(config.label_config(protocols.load("extractive-ranking")))
    cells = root.findall(".//Choices")
    assert len(cells) == 12
    for cell in cells:
        assert cell.get("required") == "true" and cell.get("choice") == "single-radio"
        assert [c.get("value") for c in cell.findall("Choice")] == ["1", "2", "3", "4"]


def test_per_region_evidence_is_required_only_for_inconsistent_fact() -> None:
    root = etree.fromstring(config.label_config(protocols.load("qa-feedback")))
    evidence = root.find(".//Choices[@name='evidence']")
    assert evidence is not None
    assert evidence.get("perRegion") == "true" and evidence.get("required") == "true"
    assert (evidence.get("visibleWhen"), evidence.get("whenTagName"), evidence.get("whenLabelValue")) == (
        "region-selected", "errors", "Inconsistent Fact",
    )  # fmt: skip
    assert evidence.get("value") == "$evidence_options"
