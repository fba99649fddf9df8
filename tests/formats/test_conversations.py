"""Conversations as a field kind: ``kind = "conversation"`` on a pane, shown by Label Studio CE's
Paragraphs in the dialogue layout (role and content of each message), and checked on input: a
conversation is a non-empty list of {role, content} messages, anything else is refused in one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from lxml import etree

from annols import protocols
from annols.errors import DefinitionError, InputError
from annols.formats import format_for
from annols.protocols.config import label_config
from tests.conftest import ROOT

EXAMPLE = ROOT / "examples" / "arena.toml"


def test_a_conversation_pane_is_a_dialogue_of_roles_and_contents() -> None:
    root = etree.fromstring(label_config(protocols.load(str(EXAMPLE))).encode())
    panes = root.findall(".//Paragraphs")
    assert [(p.get("name"), p.get("value"), p.get("layout"), p.get("nameKey"), p.get("textKey")) for p in panes] == [
        ("conversation_a", "$conversation_a", "dialogue", "role", "content"),
        ("conversation_b", "$conversation_b", "dialogue", "role", "content"),
    ]


def test_an_unknown_pane_kind_names_the_kinds(tmp_path: Path) -> None:
    wrong = tmp_path / "wrong.toml"
    wrong.write_text(EXAMPLE.read_text("utf-8").replace('kind = "conversation"', 'kind = "chat"', 1), "utf-8")
    with pytest.raises(DefinitionError, match="'chat' is not one of 'text', 'paragraphs', 'conversation'"):
        protocols.load(str(wrong))


@pytest.mark.parametrize(("value", "field"), [
    ("Hello there", "conversation_a"),
    ([], "conversation_a"),
    ([{"role": "user", "content": "Hi"}, {"role": "assistant"}], "conversation_a[1]"),
    ([{"role": "", "content": "Hi"}], "conversation_a[0]"),
    ([{"role": "user", "content": ["Hi"]}], "conversation_a[0]"),
])  # fmt: skip
def test_a_field_that_is_no_conversation_is_refused(tmp_path: Path, value: object, field: str) -> None:
    record = json.loads((ROOT / "examples" / "arena.jsonl").read_text("utf-8").splitlines()[0])
    record["conversation_a"] = value
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps(record) + "\n", encoding="utf-8")
    definition = protocols.load(str(EXAMPLE))
    with pytest.raises(InputError) as e:
        list(format_for(definition).read([source], definition))
    assert f"line 1, field {field!r}" in str(e.value) and "\n" not in str(e.value)


def test_the_example_conversations_are_read_as_they_are() -> None:
    definition = protocols.load(str(EXAMPLE))
    source = ROOT / "examples" / "arena.jsonl"
    tasks = list(format_for(definition).read([source], definition))
    records = [json.loads(x) for x in source.read_text("utf-8").splitlines()]
    assert [t.data["conversation_a"] for t in tasks] == [r["conversation_a"] for r in records]
