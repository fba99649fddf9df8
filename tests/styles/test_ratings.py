"""The ratings style: its definitions, the configs it builds and the ratings it decodes.

The three example studies in ``examples/`` (two ratings, one pairwise) are checked here
too: they load, their configs match the reviewed files in ``tests/data/configs/`` and
their inputs carry every field the configs show.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from label_studio_sdk.label_interface import LabelInterface
from lxml import etree

from annols import protocols
from annols.definition import Definition, blinding
from annols.errors import DefinitionError
from annols.formats.generic import FORMAT as GENERIC
from annols.protocols import config, load_definition
from annols.styles import decode, ratings
from annols.styles.answers import ExportedAnnotation, ExportedTask
from annols.styles.judgments import Answer, Rating
from tests.conftest import DATA, ROOT

EXAMPLES = ROOT / "examples"
EXAMPLE_NAMES = ["summeval-ratings", "wmt-da", "chat-arena"]
GOLDEN = DATA / "configs"

SMALL = """
name = "two-summaries"
style = "ratings"
summary = "Rate two summaries."
guideline = "Rate each summary."

[[context]]
name = "document"
title = "Document"

[[candidates]]
name = "summary_1"
title = "Summary 1"

[[candidates]]
name = "summary_2"
title = "Summary 2"

[[answers]]
code = "1"
text = "1: poor"

[[answers]]
code = "2"

[[answers]]
code = "3"
text = "3: good"

[[aspects]]
name = "fluency"
text = "Fluency"
hint = "Readable sentences."

[[aspects]]
name = "relevance"
text = "Relevance"
"""

SLIDER = """
name = "da"
style = "ratings"
scale = "slider"
summary = "Score a translation."
guideline = "Move the slider."

[[context]]
name = "src"
title = "Source"

[[candidates]]
name = "translation"
title = "Translation"

[slider]
min = 0
max = 100
low = "nothing kept"
high = "all kept"

[[aspects]]
name = "adequacy"
text = "Adequacy"
"""


def write(tmp_path: Path, text: str, name: str = "mine.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def example(name: str) -> Definition:
    return protocols.load(str(EXAMPLES / f"{name}.toml"))


# --- definitions ------------------------------------------------------------------------------


def test_examples_load_and_their_inputs_fit() -> None:
    styles = {}
    for name in EXAMPLE_NAMES:
        d = example(name)
        styles[name] = d.style
        tasks = list(GENERIC.read([EXAMPLES / f"{name}.jsonl"], d))
        assert len(tasks) == 6
        fields = blinding.candidate_fields(d)
        assert all(len(t.systems) == len(fields) for t in tasks), name
    assert styles == {"summeval-ratings": "ratings", "wmt-da": "ratings", "chat-arena": "pairwise"}

    summeval = example("summeval-ratings").spec
    assert [a.name for a in summeval.aspects] == ["coherence", "consistency", "fluency", "relevance"]
    assert [a.code for a in summeval.answers] == ["1", "2", "3", "4", "5"]
    assert [c.name for c in summeval.candidates] == [f"summary_{i}" for i in range(1, 5)]
    da = example("wmt-da").spec
    assert (da.scale, da.slider.min, da.slider.max, da.slider.step) == ("slider", 0, 100, 1)
    arena = example("chat-arena").spec
    assert [(a.code, a.text) for a in arena.answers] == [("A", "A is better"), ("B", "B is better"), ("tie", "Tie")]
    assert [a.name for a in arena.aspects] == ["helpfulness", "harmlessness"]


def test_small_definition_parses(tmp_path: Path) -> None:
    spec = load_definition(write(tmp_path, SMALL)).spec
    assert spec.scale == "choices" and spec.slider is None
    assert [(a.code, a.text) for a in spec.answers] == [("1", "1: poor"), ("2", "2"), ("3", "3: good")]
    cells = ["fluency_summary_1", "relevance_summary_1", "fluency_summary_2", "relevance_summary_2"]
    assert list(spec.cells()) == cells
    assert ratings.data_fields(spec) == ["document", "summary_1", "summary_2"]


@pytest.mark.parametrize(
    ("text", "change", "field", "problem"),
    [
        (SMALL, ('code = "2"', 'code = "two"'), "answers[1].code", "'two' is not a number"),
        (SMALL, ('code = "2"', 'code = "nan"'), "answers[1].code", "is not a number"),
        (SMALL, ('code = "2"', 'code = "0"'), "answers[1].code", "must be higher than the answer before it"),
        (SMALL, ('code = "2"', "code = 2"), "answers[1].code", "expected a string"),
        (SMALL, ('style = "ratings"', 'style = "ratings"\nscale = "stars"'), "scale", "'stars' is not one of"),
        (SMALL, ('style = "ratings"', 'style = "ratings"\nscale = "slider"'), "answers", "takes no answers"),
        (SMALL, ('name = "relevance"', 'name = "fluency"'), "aspects[1].name", "appears twice"),
        (SMALL, ('text = "Relevance"', 'text = "Relevance"\nweight = 2'), "aspects[1].weight", "unknown key"),
        (SMALL, ('name = "relevance"', 'name = "Relevance"'), "aspects[1].name", "not a valid name"),
        (SMALL, ('name = "summary_2"', 'name = "document"'), "candidates[1].name", "same name as the context pane"),
        (SMALL, ("[[aspects]]", '[[questions]]\nname = "fluency_summary_2"\ntext = "Q"\nkind = "text"\n\n[[aspects]]'),
         "questions[0].name", "same name as the rating of aspect 'fluency' for candidate 'summary_2'"),
        (SMALL, ('[[answers]]\ncode = "2"\n\n[[answers]]\ncode = "3"\ntext = "3: good"\n', ""), "answers",
         "at least 2 answers"),
        (SMALL, (SMALL[SMALL.index("[[candidates]]"):SMALL.index("[[answers]]")], ""), "candidates",
         "at least one [[candidates]]"),
        (SMALL, (SMALL[SMALL.index("[[aspects]]"):], ""), "aspects", "missing; expected a list of tables"),
        (SLIDER, ("max = 100", "max = 0"), "slider.max", "must be above min"),
        (SLIDER, ("min = 0", "min = 0\nstep = 0"), "slider.step", "must be above 0"),
        (SLIDER, ("min = 0", "min = 0.5"), "slider.min", "expected a whole number"),
        (SLIDER, ('low = "nothing kept"', 'low = "nothing kept"\nmiddle = "some"'), "slider.middle", "unknown key"),
        (SLIDER, ('scale = "slider"\n', ""), "slider", 'only a scale = "slider" takes a [slider] table'),
    ],
)  # fmt: skip
def test_errors_name_file_and_field(
    tmp_path: Path, text: str, change: tuple[str, str], field: str, problem: str
) -> None:
    assert change[0] in text
    path = write(tmp_path, text.replace(change[0], change[1], 1))
    with pytest.raises(DefinitionError) as info:
        load_definition(path)
    assert info.value.source == str(path)
    assert info.value.field == field
    assert problem in info.value.problem
    assert str(info.value).startswith(f"{path}: {field}: ")


def test_slider_defaults(tmp_path: Path) -> None:
    text = SLIDER.replace('[slider]\nmin = 0\nmax = 100\nlow = "nothing kept"\nhigh = "all kept"\n', "")
    spec = load_definition(write(tmp_path, text)).spec
    assert spec.slider == ratings.Slider(min=0, max=100, step=1, low="", high="")


# --- configs ----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_example_configs_match_the_reviewed_files(name: str) -> None:
    d = example(name)
    xml = config.label_config(d)
    golden = (GOLDEN / f"{name}.xml").read_text("utf-8")
    assert xml == golden, f"regenerate with `annols config examples/{name}.toml -o tests/data/configs/{name}.xml`"
    assert xml == config.label_config(example(name))  # deterministic
    LabelInterface(xml).validate()
    names = [e.get("name") for e in etree.fromstring(xml).iter() if e.get("name")]
    assert len(names) == len(set(names))
    used = {e.get("value")[1:] for e in etree.fromstring(xml).iter("Text")}
    assert used == set(config.data_fields(d))


def test_every_cell_is_a_required_single_choice_of_the_codes() -> None:
    d = example("summeval-ratings")
    root = etree.fromstring(config.label_config(d))
    cells = root.findall(".//Choices")
    expected = [f"{a}_summary_{i}" for i in range(1, 5) for a in ("coherence", "consistency", "fluency", "relevance")]
    assert [c.get("name") for c in cells] == expected
    for cell in cells:
        assert cell.get("toName") == "summary_" + cell.get("name", "").rsplit("_", 1)[1]
        assert (cell.get("required"), cell.get("choice")) == ("true", "single-radio")
        stored = [c.get("alias") or c.get("value") for c in cell.findall("Choice")]
        assert stored == ["1", "2", "3", "4", "5"]
        aspect, _, candidate = cell.get("name", "").partition("_")
        assert cell.get("requiredMessage") == f"Please answer: {aspect.capitalize()}, Summary {candidate[-1]}"
    shown = [c.get("value") for c in cells[0].findall("Choice")]
    assert shown == ["1: very poor", "2", "3", "4", "5: very good"]


def test_slider_cell_is_a_required_number_slider() -> None:
    root = etree.fromstring(config.label_config(example("wmt-da")))
    (number,) = root.findall(".//Number")
    assert dict(number.attrib) == {
        "name": "adequacy_translation", "toName": "translation", "slider": "true", "min": "0", "max": "100",
        "step": "1", "required": "true",
        "requiredMessage": "Please answer: How accurately does the translation convey the meaning of the source?",
    }  # fmt: skip
    line = [h.get("value") for h in number.getparent().iter("Header")]
    assert line == ["0: no meaning kept", "100: perfect meaning and grammar"]
    assert root.find("Style") is not None and root.findall(".//Choices") == []


NASTY = "Bad <b>\"label\"</b> & 'more' </View>"


def test_user_strings_are_escaped(tmp_path: Path) -> None:
    quoted = json.dumps(NASTY)
    text = (
        SMALL.replace('title = "Summary 1"', f"title = {quoted}")
        .replace('text = "Fluency"', f"text = {quoted}")
        .replace('hint = "Readable sentences."', f"hint = {quoted}")
        .replace('text = "1: poor"', f"text = {quoted}")
    )
    root = etree.fromstring(config.label_config(load_definition(write(tmp_path, text))))
    headers = [h.get("value") for h in root.iter("Header")]
    assert headers.count(NASTY) == 2 + 2 + 1  # hint and aspect under both candidates, one title
    assert NASTY in [c.get("value") for c in root.iter("Choice")]
    assert "Please answer: " + NASTY + ", " + NASTY in [c.get("requiredMessage") for c in root.iter("Choices")]

    slider = SLIDER.replace('low = "nothing kept"', f"low = {quoted}").replace('high = "all kept"', f"high = {quoted}")
    root = etree.fromstring(config.label_config(load_definition(write(tmp_path, slider, "s.toml"))))
    assert [h.get("value") for h in root.iter("Header")].count(NASTY) == 2


# --- decoding ---------------------------------------------------------------------------------


def item(name: str, to: str, kind: str, value: dict[str, Any]) -> dict[str, Any]:
    return {"id": name[:5], "from_name": name, "to_name": to, "type": kind, "value": value, "origin": "manual"}


def choices(name: str, *codes: str) -> dict[str, Any]:
    return item(name, "summary_1", "choices", {"choices": list(codes)})


def task_of(result: list[dict[str, Any]], systems: tuple[str, ...] = ()) -> tuple[ExportedTask, ExportedAnnotation]:
    annotation = ExportedAnnotation(id=1, annotator="a@example.org", result=result)
    return ExportedTask(id=1, key="k", data={}, systems=systems, annotations=(annotation,)), annotation


def test_decode_unblinds_and_skips_missing_and_invalid_cells(tmp_path: Path) -> None:
    text = SMALL + '\n[[questions]]\nname = "note"\ntext = "Anything odd?"\nkind = "text"\n'
    d = load_definition(write(tmp_path, text))
    task, annotation = task_of(
        [
            choices("fluency_summary_1", "3"),
            choices("relevance_summary_1", "1: poor"),  # a hand-made result holding the shown text
            choices("fluency_summary_2", "2", "3"),  # two answers to one cell: no rating
            choices("relevance_summary_2", "7"),  # off the scale: no rating
            choices("made_up_cell", "2"),
            item("note", "summary_1", "textarea", {"text": ["fine"]}),
        ],
        systems=("pegasus", "bart"),  # shown as summary 1 and summary 2 in this task
    )
    assert decode(d, task, annotation) == [
        Rating("fluency", "summary_1", "pegasus", 3.0, "3"),
        Rating("relevance", "summary_1", "pegasus", 1.0, "1"),
        Answer("note", text="fine"),
    ]
    # Without systems (or with a count that does not fit) the candidate pane names the rating.
    for systems in ((), ("only-one",)):
        task, annotation = task_of([choices("fluency_summary_2", "2")], systems=systems)
        assert decode(d, task, annotation) == [Rating("fluency", "summary_2", "summary_2", 2.0, "2")]
    # A cell answered twice in two result items is void too.
    task, annotation = task_of([choices("fluency_summary_1", "2"), choices("fluency_summary_1", "2")])
    assert decode(d, task, annotation) == []


def test_decode_slider_values(tmp_path: Path) -> None:
    d = load_definition(write(tmp_path, SLIDER))
    for number, expected in [(73, (73.0, "73")), (0, (0.0, "0")), (100, (100.0, "100")), (12.5, (12.5, "12.5"))]:
        task, annotation = task_of([item("adequacy_translation", "translation", "number", {"number": number})],
                                   systems=("system-a",))  # fmt: skip
        assert decode(d, task, annotation) == [Rating("adequacy", "translation", "system-a", *expected)]
    for bad in (101, -1, "73", True, None, math.inf):
        task, annotation = task_of([item("adequacy_translation", "translation", "number", {"number": bad})])
        assert decode(d, task, annotation) == [], bad
    task, annotation = task_of([item("adequacy_translation", "translation", "choices", {"choices": ["73"]})])
    assert decode(d, task, annotation) == []


def test_system_of_a_results_row(tmp_path: Path) -> None:
    spec = load_definition(write(tmp_path, SMALL)).spec
    task, _ = task_of([], systems=("pegasus", "bart"))
    assert ratings.system_of(spec, task, "relevance_summary_2", "3") == "bart"
    assert ratings.system_of(spec, task, "fluency_summary_1", "1") == "pegasus"
    assert ratings.system_of(spec, task, "note", "x") == ""
    assert ratings.system_of(spec, task_of([])[0], "fluency_summary_1", "1") == ""


def test_blinding_shuffles_candidates_and_their_systems_together() -> None:
    d = example("summeval-ratings")
    assert blinding.candidate_fields(d) == ["summary_1", "summary_2", "summary_3", "summary_4"]
    (first, *_) = GENERIC.read([EXAMPLES / "summeval-ratings.jsonl"], d)
    orders = set()
    for key in ("a", "b", "c", "d", "e", "f"):
        shown, systems, order = blinding.blind(d, first.data, first.systems, key, seed=7, keep_order=False)
        orders.add(tuple(order))
        for i, system in enumerate(systems):
            source = first.systems.index(system)
            assert shown[f"summary_{i + 1}"] == first.data[f"summary_{source + 1}"]
        assert blinding.source_order(systems, order) == first.systems
    assert len(orders) > 1
    # One candidate: nothing to shuffle, the system still travels with the task.
    da = example("wmt-da")
    (one, *_) = GENERIC.read([EXAMPLES / "wmt-da.jsonl"], da)
    assert blinding.blind(da, one.data, one.systems, "k", seed=7, keep_order=False) == (one.data, ("system-a",), [0])
