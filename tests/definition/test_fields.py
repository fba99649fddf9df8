"""The user's field names and the keys Label Studio stores them under, both ways."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from label_studio_sdk.label_interface import LabelInterface
from lxml import etree

from annols import protocols
from annols.definition import fields
from annols.errors import DefinitionError
from annols.formats.generic import FORMAT
from annols.protocols import config
from annols.study.exports import exported_task
from annols.study.push import build_tasks

WMT_SPANS = """
name = "wmt-errors"
style = "spans"
summary = "Mark errors in a translation."
guideline = "Mark each error."

[[context]]
name = "source"
title = "Source"

[[context]]
name = "reference"
title = "Reference"

[target]
name = "hypothesis"
title = "Translation"

[spans]
name = "errors"

[[spans.labels]]
value = "Mistranslation"

[spans.labels.question]
name = "severity"
text = "How bad?"
options_from = "source_options"

[[questions]]
name = "adequacy"
text = "Adequacy"
required = true
choices = [{ code = "1" }, { code = "2" }]
"""

# Names the editor reads as given, whatever their meaning elsewhere in Label Studio.
KEPT = ("id", "data", "meta", "annotations", "predictions", "_private", "summary_1", "Reference", "record", "_20_")
# Names the editor reads otherwise, names no `$variable` can read, and the prefix itself.
MOVED = ("source", "Source text", "src-lang", "a.b", "x[0]", "Quelle ü", "日本語", "$x", "", "annols_f_x")


@pytest.mark.parametrize("name", KEPT)
def test_a_plain_name_is_its_own_key(name: str) -> None:
    assert fields.data_key(name) == name and fields.user_name(name) == name
    assert fields.variable(name) == f"${name}"


@pytest.mark.parametrize("name", MOVED)
def test_a_name_the_editor_reads_otherwise_gets_an_internal_key_and_comes_back(name: str) -> None:
    key = fields.data_key(name)
    assert key.startswith(fields.PREFIX) and fields.stored(key) is False
    # A plain `$variable` of the editor: letters, digits and _ only.
    assert key.replace("_", "").isascii() and key.replace("_", "").isalnum()
    assert fields.user_name(key) == name


def test_internal_keys_are_readable_and_distinct() -> None:
    assert fields.data_key("source") == "annols_f_source"
    assert fields.data_key("Source text") == "annols_f__53_ource_20_text"
    keys = [fields.data_key(n) for n in (*KEPT, *MOVED)]
    assert len(set(keys)) == len(keys)


def test_a_key_with_the_prefix_that_is_not_ours_is_left_alone() -> None:
    for key in ("annols_f_Bad", "annols_f__zz_", "annols_f__20"):
        assert fields.user_name(key) == key


def test_task_data_both_ways() -> None:
    data = {"source": "Der Hund.", "reference": "The dog.", "Source text": "x", "record": {"source": "wmt23"}}
    stored = fields.to_label_studio(data)
    assert list(stored) == ["annols_f_source", "reference", "annols_f__53_ource_20_text", "record"]
    assert stored["record"] == {"source": "wmt23"}  # nested data is no `$variable`: as given
    assert fields.from_label_studio(stored) == data
    plain = {"document": "d", "summary_1": "s"}
    assert fields.to_label_studio(plain) is plain and fields.from_label_studio(plain) is plain


def test_a_pane_named_source_reads_its_internal_key_and_keeps_its_name(tmp_path: Path) -> None:
    path = tmp_path / "wmt-errors.toml"
    path.write_text(WMT_SPANS, encoding="utf-8")
    d = protocols.load(str(path))
    xml = config.label_config(d)
    LabelInterface(xml).validate()
    root = etree.fromstring(xml.encode("utf-8"))
    values = {n.get("name"): n.get("value") for n in root.iter("Text")}
    assert values == {"source": "$annols_f_source", "reference": "$reference", "hypothesis": "$hypothesis"}
    assert root.find(".//Choices[@name='severity']").get("value") == "$source_options"
    assert config.data_fields(d) == ["source", "reference", "hypothesis", "source_options"]


def blind(task_id: int, key: str, kept: dict[str, Any]) -> dict[int, dict[str, Any]]:
    """What a pull folder's blinding.jsonl says of one task: push keeps the systems shown off the server."""
    shown = kept[key]
    return {task_id: {"key": key, "systems": list(shown.systems), "order": shown.order, "role": shown.role}}


def test_push_stores_internal_keys_and_pull_gives_the_users_names_back(tmp_path: Path) -> None:
    path = tmp_path / "wmt-errors.toml"
    path.write_text(WMT_SPANS, encoding="utf-8")
    d = protocols.load(str(path))
    record = {"id": "seg-1", "source": "Der Hund schläft.", "reference": "The dog sleeps.",
              "hypothesis": "The cat sleeps.", "source_options": [{"value": "minor"}],
              "systems": ["sys-x"]}  # fmt: skip
    inputs = tmp_path / "wmt.jsonl"
    inputs.write_text(json.dumps(record, ensure_ascii=False) + "\n", encoding="utf-8")
    kept: dict[str, Any] = {}
    ((key, _, task, _),) = list(build_tasks(d, [inputs], shown=kept))
    assert "source" not in task["data"] and task["data"]["annols_f_source"] == record["source"]
    assert task["data"]["hypothesis"] == record["hypothesis"]
    # "source_options" is read by its own $variable: a name that only starts like "source" is kept.
    assert task["data"]["source_options"] == record["source_options"]

    span = {"start": 4, "end": 7, "text": "cat", "labels": ["Mistranslation"]}
    result = [
        {"id": "r1", "from_name": "errors", "to_name": "hypothesis", "type": "labels", "value": span},
        {"id": "q", "from_name": "adequacy", "to_name": "hypothesis", "type": "choices", "value": {"choices": ["1"]}},
    ]  # fmt: skip
    raw = {"id": 7, **task, "annotations": [{"id": 1, "completed_by": 3, "result": result}]}
    exported = exported_task(json.loads(json.dumps(raw)), {3: "ann@example.org"}, blind(7, key, kept))
    assert exported.key == key
    assert exported.data == {"source": record["source"], "reference": record["reference"],
                             "hypothesis": record["hypothesis"], "source_options": record["source_options"],
                             "record": {"id": "seg-1"}}  # fmt: skip
    (out,) = FORMAT.write_results([exported], d, tmp_path)
    line = json.loads(out.read_text("utf-8"))
    assert line["data"] == exported.data and line["systems"] == ["sys-x"]
    assert {j["kind"] for j in line["judgments"]} >= {"span"}


RATINGS = """
name = "wide-ratings"
style = "ratings"
summary = "Rate a translation."
guideline = "Rate it."

[[context]]
name = "Source Text"
title = "Source"

[[candidates]]
name = "MT output"
title = "Translation"

[[answers]]
code = "1"

[[answers]]
code = "2"

[[aspects]]
name = "adequacy"
text = "Adequacy"
"""


def test_a_name_with_a_space_is_the_objects_name_and_its_data_an_internal_key(tmp_path: Path) -> None:
    path = tmp_path / "wide-ratings.toml"
    path.write_text(RATINGS, encoding="utf-8")
    d = protocols.load(str(path))
    xml = config.label_config(d)
    LabelInterface(xml).validate()
    root = etree.fromstring(xml.encode("utf-8"))
    assert {n.get("name"): n.get("value") for n in root.iter("Text")} == {
        "Source Text": "$annols_f__53_ource_20__54_ext", "MT output": "$annols_f__4d__54__20_output"
    }  # fmt: skip
    assert root.find(".//Choices").get("toName") == "MT output"
    record = {"Source Text": "Der Hund.", "MT output": "The cat.", "systems": ["sys-x"]}
    inputs = tmp_path / "wide.jsonl"
    inputs.write_text(json.dumps(record) + "\n", encoding="utf-8")
    kept: dict[str, Any] = {}
    ((key, _, task, _),) = list(build_tasks(d, [inputs], shown=kept))
    result = [{"id": "c", "from_name": "adequacy_MT output", "to_name": "MT output", "type": "choices",
               "value": {"choices": ["2"]}}]  # fmt: skip
    raw = {"id": 1, **task, "annotations": [{"id": 1, "completed_by": 3, "result": result}]}
    exported = exported_task(json.loads(json.dumps(raw)), {}, blind(1, key, kept))
    assert exported.data == {"Source Text": "Der Hund.", "MT output": "The cat."}
    (out,) = FORMAT.write_results([exported], d, tmp_path)
    [judgment] = json.loads(out.read_text("utf-8"))["judgments"]
    assert (judgment["kind"], judgment["system"], judgment["value"]) == ("rating", "sys-x", 2.0)


@pytest.mark.parametrize("name", ["a,b", " padded", "tab\there"])
def test_a_field_name_the_config_cannot_hold_is_refused(tmp_path: Path, name: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(RATINGS.replace('name = "MT output"', f"name = {json.dumps(name)}"), encoding="utf-8")
    with pytest.raises(DefinitionError, match=r"candidates\[0\]\.name: .* is not a usable field name"):
        protocols.load(str(path))


@pytest.mark.parametrize(("name", "why"), [("record", "other fields are carried under it"), ("systems", "it is read")])
def test_a_field_named_as_the_generic_formats_own_column_is_refused(tmp_path: Path, name: str, why: str) -> None:
    path = tmp_path / "own.toml"
    path.write_text(RATINGS.replace('name = "Source Text"', f'name = "{name}"'), encoding="utf-8")
    d = protocols.load(str(path))
    inputs = tmp_path / "own.jsonl"
    inputs.write_text(json.dumps({name: "x", "MT output": "y", "note": "carried"}) + "\n", encoding="utf-8")
    with pytest.raises(DefinitionError, match=rf"own\.toml: {name}: the generic format's input uses '{name}' itself "
                                              rf"\({why}\); name the field otherwise"):  # fmt: skip
        list(build_tasks(d, [inputs]))
