"""The generated reference pages are up to date (scripts/reference --check), and the JSON Schema of definitions
agrees with the parser: every shipped protocol and example validates, and definitions the parser refuses for a
wrong key or type fail the schema too."""

from __future__ import annotations

import copy
import importlib.util
import json
import subprocess
import sys
import tomllib
from pathlib import Path
from types import ModuleType
from typing import Any

import jsonschema
import pytest

from annols.definition import keys
from annols.errors import DefinitionError
from annols.protocols import parse_definition, shipped
from annols.styles import CATALOGUE
from tests.conftest import ROOT

SCHEMA_FILE = ROOT / "docs" / "reference" / "definition.schema.json"
DEFINITIONS = sorted([*shipped().values(), *(ROOT / "examples").glob("*.toml")])


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("annols_script_reference", ROOT / "scripts" / "reference.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_generated_reference_is_up_to_date() -> None:
    found = _script().stale()
    assert not found, f"{[str(p.relative_to(ROOT)) for p in found]} out of date: run scripts/reference"


def test_the_check_command_says_what_is_stale(tmp_path: Path) -> None:
    script = _script()
    script.REFERENCE = tmp_path  # an empty folder: every page is missing
    script.ROOT = tmp_path.parent
    assert sorted(p.name for p in script.stale()) == ["cli.md", "definition.md", "definition.schema.json"]
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "reference.py"), "--check"], cwd=ROOT,
                          capture_output=True, text=True, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft202012Validator:
    schema = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


@pytest.mark.parametrize("path", DEFINITIONS, ids=lambda p: p.name)
def test_every_shipped_definition_and_example_validates(validator: jsonschema.Validator, path: Path) -> None:
    raw = tomllib.loads(path.read_text(encoding="utf-8"))
    assert [e.message for e in validator.iter_errors(raw)] == []


def _set(raw: dict[str, Any], where: str, value: Any) -> dict[str, Any]:
    """A copy of ``raw`` with the key at ``where`` (``a.b[0].c``) set to ``value`` (or removed: ``...``)."""
    out = copy.deepcopy(raw)
    parts = where.replace("[", ".[").split(".")
    node: Any = out
    for part in parts[:-1]:
        node = node[int(part[1:-1])] if part.startswith("[") else node[part]
    if value is ...:
        del node[parts[-1]]
    else:
        node[parts[-1]] = value
    return out


WRONG = [  # (example, where, value, what the parser says)
    ("summeval-ratings", "aspects[0].colour", "red", "unknown key"),
    ("summeval-ratings", "aspects[0].name", 3, "expected a string, got"),
    ("summeval-ratings", "scale", "stars", "is not one of"),
    ("summeval-ratings", "positions", ["a", "b"], "unknown key for a ratings definition"),
    ("summeval-ratings", "candidates[0].kind", "image", "is not one of"),
    ("esa", "spans.labels[0].value", ..., "missing; expected a string"),
    ("esa", "questions[0].required", "yes", "expected true or false"),
    ("esa", "spans.name", "Errors", "is not a valid name"),
    ("summary-best-worst", "tuple_size", 2.5, "expected a whole number"),
    ("summary-best-worst", "tuple_size", True, "expected a whole number"),
    ("chat-arena", "answers[0].prefers", 1, "expected a string"),
    ("wmt-da", "slider.middle", "some", "unknown key"),
    ("mqm", "guideline", ..., "missing; expected a string"),
    ("mqm", "spans.weights[0].weight", "5", "expected a number"),
]


@pytest.mark.parametrize(("example", "where", "value", "message"), WRONG, ids=lambda v: str(v)[:30])
def test_a_definition_the_parser_refuses_fails_the_schema_too(
    validator: jsonschema.Validator, example: str, where: str, value: Any, message: str
) -> None:
    path = ROOT / "examples" / f"{example}.toml"
    raw = _set(tomllib.loads(path.read_text(encoding="utf-8")), where, value)
    with pytest.raises(DefinitionError) as refused:
        parse_definition(raw, str(path))
    assert message in str(refused.value), str(refused.value)
    assert list(validator.iter_errors(raw)), f"the schema accepts what the parser refuses: {refused.value}"


def test_the_parser_reads_only_declared_keys_with_their_declared_defaults() -> None:
    """The catalogue is the parser's: reading an undeclared key, or with another default, is refused at once."""
    from annols.definition import Table

    table = Table({"name": "x"}, "t.toml", catalogue=CATALOGUE, section="aspect")
    with pytest.raises(LookupError, match="does not declare"):
        table.text("colour")
    with pytest.raises(LookupError, match="default"):
        table.text("hint", "another default")
    with pytest.raises(LookupError, match="declared string"):
        table.flag("hint")
    assert table.text("hint", "") == ""


def test_every_declared_key_is_read_by_the_parser() -> None:
    """The other way round: each key of the catalogue is read while parsing the shipped protocols, the examples
    and a definition with every optional key of a question, a pane and a label given (none declared in vain)."""
    from annols.definition import Table

    read: set[tuple[str, str]] = set()
    original = Table._get

    def spy(self: Table, key: str, default: Any, *kinds: str) -> Any:
        read.add((self.section, key))
        return original(self, key, default, *kinds)

    Table._get = spy  # type: ignore[method-assign]
    try:
        for path in DEFINITIONS:
            raw = tomllib.loads(path.read_text(encoding="utf-8"))
            for variant in raw.get("variants", {None: None}):
                parse_definition(raw, str(path), variant)
        parse_definition(tomllib.loads(EVERY_OPTION), "every.toml")
    finally:
        Table._get = original  # type: ignore[method-assign]
    declared = {(s.name, k.name) for s in CATALOGUE.sections.values() for k in s.keys}
    assert declared - read == set()
    assert tuple(CATALOGUE.sections["definition"].keys[1].values) == keys.STYLES


EVERY_OPTION = """
name = "every"
style = "spans"
summary = "s"
guideline = "g"
seed = "a seed"
origin = "a study"

[[context]]
name = "passages"
title = "Passages"
kind = "paragraphs"
note = "context only"
labels = [{ value = "Missing", hint = "h", color = "red", helper = true }]

[target]
name = "answer"
title = "Answer"
granularity = "word"

[spans]
name = "errors"
none_answer = "None"
labels = [{ value = "Wrong", question = { name = "why", text = "Why?", kind = "text", placeholder = "say" } },
          { value = "Repeated", links_to = "Wrong" }]
questions = [{ name = "severity", text = "Severity", choices = [{ code = "minor" }, { code = "major" }] }]
weights = [{ weight = 5, label = "Wrong", answer = "major" }]

[[questions]]
name = "score"
text = "Score"
kind = "slider"
per = "candidate"
min = 0
max = 100
step = 1
low = "bad"
high = "good"

[[questions]]
name = "topic"
text = "Topic"
multiple = true
required = true
hint = "h"
groups = [{ title = "G", choices = [{ code = "a", text = "A", hint = "h" }] }]

[[questions]]
name = "pick"
text = "Pick"
options_from = "options"
"""
