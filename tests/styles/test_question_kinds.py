"""Questions of every kind (choice, scale, number, slider, text), asked per item or per candidate, in every
style: how a definition writes them, the config controls they become, and the judgments they decode to."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from lxml import etree

from annols import protocols
from annols.definition import Definition
from annols.errors import DefinitionError
from annols.protocols import config
from annols.study.pull import _system_finder
from annols.styles import decode
from annols.styles.answers import ExportedAnnotation, ExportedTask
from annols.styles.judgments import Answer, Rating, tidy
from tests.conftest import ROOT

# Every kind, per item and per candidate: appended to a definition of each style.
QUESTIONS = """
[[questions]]
name = "overall"
kind = "slider"
per = "candidate"
text = "Overall quality"
required = true
min = 0
max = 100
low = "bad"
high = "good"

[[questions]]
name = "fluent"
kind = "scale"
per = "candidate"
text = "Fluency"
required = true
choices = [{ code = "1", text = "1: poor" }, { code = "2" }, { code = "3", text = "3: good" }]

[[questions]]
name = "errors"
kind = "number"
per = "candidate"
text = "How many errors?"
min = 0
max = 20

[[questions]]
name = "verdict"
per = "candidate"
text = "Usable as is?"
required = true
choices = [{ code = "yes" }, { code = "no" }]

[[questions]]
name = "topic"
text = "Topic of the source"
multiple = true
choices = [{ code = "news" }, { code = "sport" }]

[[questions]]
name = "comment"
kind = "text"
text = "Anything else?"
"""

HEADER = 'summary = "s"\nguideline = "g"\n'


def two_outputs(context: str, *codes: str) -> str:
    """A context and two candidates (out_1, out_2) with these answer codes: what ratings and pairwise
    definitions of these tests share (tests/report/test_asked_report.py too)."""
    answers = "".join(f'[[answers]]\ncode = "{code}"\n' for code in codes)
    candidates = "".join(f'[[candidates]]\nname = "out_{i}"\ntitle = "Output {i}"\n' for i in (1, 2))
    return f'[[context]]\nname = "{context}"\ntitle = "Source"\n{candidates}{answers}'


STYLES = {
    "spans": """name = "q-spans"
style = "spans"
[[context]]
name = "source"
title = "Source"
[target]
name = "hypothesis"
title = "Translation"
[spans]
name = "marks"
labels = [{ value = "minor" }, { value = "major" }]
""",
    "sentences": """name = "q-sentences"
style = "sentences"
rows = 1
[[context]]
name = "source"
title = "Source"
[generated]
name = "hypothesis"
title = "Translation"
[special]
name = "special"
text = "Special?"
choices = [{ code = "skip" }]
[[columns]]
name = "ok"
text = "OK?"
choices = [{ code = "y" }, { code = "n" }]
[explanation]
name = "why"
kind = "text"
text = "Why?"
""",
    "ratings": 'name = "q-ratings"\nstyle = "ratings"\n'
    + two_outputs("source", "1", "2")
    + """[[aspects]]
name = "adequacy"
text = "Adequacy"
""",
    "pairwise": 'name = "q-pairwise"\nstyle = "pairwise"\n'
    + two_outputs("source", "A", "B", "tie")
    + """[[aspects]]
name = "better"
text = "Better?"
""",
    "ranking": """name = "q-ranking"
style = "ranking"
positions = ["A", "B"]
[[context]]
name = "source"
title = "Source"
[[dimensions]]
name = "quality"
text = "Quality"
""",
    "best-worst": """name = "q-best-worst"
style = "best-worst"
tuple_size = 2
[[context]]
name = "source"
title = "Source"
[candidate]
name = "out"
title = "Output"
[[aspects]]
name = "quality"
text = "Quality"
""",
}
# The candidate panes of each style (None: the one text a spans or sentences task shows).
PANES: dict[str, list[str] | None] = {
    "spans": None, "sentences": None, "ratings": ["out_1", "out_2"], "pairwise": ["out_1", "out_2"],
    "ranking": ["output_a", "output_b"], "best-worst": ["out_1", "out_2"],
}  # fmt: skip


def load(tmp_path: Path, text: str, name: str = "d.toml") -> Definition:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return protocols.load(str(path))


def style_definition(tmp_path: Path, style: str) -> Definition:
    return load(tmp_path, HEADER + STYLES[style] + QUESTIONS, f"{style}.toml")


def controls(d: Definition) -> dict[str, etree._Element]:
    root = etree.fromstring(config.label_config(d).encode())
    return {node.get("name"): node for node in root.iter() if node.get("toName")}


def result(name: str, kind: str, value: Any) -> dict[str, Any]:
    key = {"choices": "choices", "number": "number", "textarea": "text"}[kind]
    return {"id": f"r-{name}", "from_name": name, "to_name": "x", "type": kind, "value": {key: value}}


@pytest.mark.parametrize("style", list(STYLES))
def test_every_kind_per_item_and_candidate_in_every_style(tmp_path: Path, style: str) -> None:
    d = style_definition(tmp_path, style)
    found = controls(d)
    panes = PANES[style]
    names = {pane: ({q: f"{q}_{pane}" for q in ("overall", "fluent", "errors", "verdict")}) for pane in panes or [""]}
    if panes is None:
        names = {"": {q: q for q in ("overall", "fluent", "errors", "verdict")}}
    for pane, cells in names.items():
        slider, scale, number, verdict = (found[cells[q]] for q in ("overall", "fluent", "errors", "verdict"))
        assert (slider.tag, slider.get("slider"), slider.get("min"), slider.get("max"), slider.get("required")) == (
            "Number", "true", "0", "100", "true")  # fmt: skip
        assert (scale.tag, scale.get("choice"), scale.get("required")) == ("Choices", "single-radio", "true")
        assert [c.get("alias") or c.get("value") for c in scale] == ["1", "2", "3"]
        assert (number.tag, number.get("slider"), number.get("min"), number.get("max")) == ("Number", None, "0", "20")
        assert verdict.tag == "Choices" and verdict.get("required") == "true"
        if panes is not None:  # asked of that candidate's text, naming it in the refusal
            assert slider.get("toName") == pane and ", Output" in slider.get("requiredMessage")
    assert found["topic"].get("choice") == "multiple" and found["comment"].tag == "TextArea"
    assert "overall" not in found or panes is None  # per candidate: one control per pane, none shared
    assert config.label_config(d).count("<Style>.lsf-number") == 1

    # Decoding: numeric answers are ratings of the candidate's system, the rest answers.
    systems = ("sys-x",) if panes is None else ("sys-x", "sys-y")
    given = []
    for i, cells in enumerate(names.values()):
        given += [
            result(cells["overall"], "number", 40 + i),
            result(cells["fluent"], "choices", ["3: good"]),
            result(cells["errors"], "number", 2.5),
            result(cells["verdict"], "choices", ["no" if i else "yes"]),
        ]
    given += [result("topic", "choices", ["news", "sport"]), result("comment", "textarea", ["fine"])]
    task = ExportedTask(1, "k", {}, systems, (ExportedAnnotation(1, "a@x", given),))
    judged = [j for j in decode(d, task, task.annotations[0]) if isinstance(j, Rating | Answer)]
    item_system = systems[0] if panes is None else ""
    expected: list[Any] = []
    for i, pane in enumerate(panes or [""]):
        expected += [
            Rating("overall", pane, systems[i], 40.0 + i, str(40 + i)),
            Rating("fluent", pane, systems[i], 3.0, "3"),
            Rating("errors", pane, systems[i], 2.5, "2.5"),
            Answer("verdict", ("no" if i else "yes",), system=systems[i]),
        ]
    expected += [
        Answer("topic", ("news", "sport"), system=item_system),
        Answer("comment", text="fine", system=item_system),
    ]
    assert sorted(map(repr, judged)) == sorted(map(repr, expected))
    # Every answer is a row of the judgments table, and results.csv names the system of each per-candidate one.
    kinds = {(row[0], row[1]) for row in tidy(judged)}
    assert {("rating", "overall"), ("rating", "fluent"), ("rating", "errors"), ("choice", "verdict"),
            ("choice", "topic"), ("text", "comment")} <= kinds  # fmt: skip
    system_of = _system_finder(d)
    for i, cells in enumerate(names.values()):
        assert system_of(task, cells["overall"], "40") == systems[i]


def test_off_range_and_twice_answered_numbers_are_no_rating(tmp_path: Path) -> None:
    d = style_definition(tmp_path, "spans")
    given = [result("overall", "number", 101), result("errors", "number", 1), result("errors", "number", 2),
             result("fluent", "choices", ["7"])]  # fmt: skip
    task = ExportedTask(1, "k", {}, ("s",), (ExportedAnnotation(1, "a@x", given),))
    assert [j for j in decode(d, task, task.annotations[0]) if isinstance(j, Rating)] == []


@pytest.mark.parametrize(
    ("extra", "where", "problem"),
    [
        ('kind = "stars"\nchoices = [{ code = "a" }]', "questions[0].kind", "is not one of"),
        ('per = "system"\nchoices = [{ code = "a" }]', "questions[0].per", "is not one of 'item', 'candidate'"),
        ('kind = "slider"\nmin = 10\nmax = 5', "questions[0].max", "must be above min"),
        ('kind = "slider"\nstep = 0', "questions[0].step", "must be above 0"),
        ('kind = "number"\nmax = 5', "questions[0].min", "missing; a number question needs its range"),
        ('kind = "slider"\nmin = true', "questions[0].min", "expected a number"),
        ('kind = "slider"\nchoices = [{ code = "a" }]', "questions[0].choices", "a slider question takes no choices"),
        (
            'kind = "scale"\nchoices = [{ code = "low" }, { code = "high" }]',
            "questions[0].choices[0].code",
            "is not a number",
        ),
        (
            'kind = "scale"\nchoices = [{ code = "2" }, { code = "1" }]',
            "questions[0].choices[1].code",
            "must be higher than the code before it",
        ),
        (
            'kind = "scale"\nmultiple = true\nchoices = [{ code = "1" }, { code = "2" }]',
            "questions[0].choices",
            "a scale is one answer",
        ),
        ('kind = "choice"\nmin = 1\nchoices = [{ code = "a" }]', "questions[0].min", "unknown key"),
    ],
)
def test_question_mistakes_name_the_field(tmp_path: Path, extra: str, where: str, problem: str) -> None:
    text = HEADER + STYLES["spans"] + f'[[questions]]\nname = "q"\ntext = "Q"\n{extra}\n'
    with pytest.raises(DefinitionError) as e:
        load(tmp_path, text)
    assert where in str(e.value) and problem in str(e.value), str(e.value)


def test_span_weights_most_specific_first(tmp_path: Path) -> None:
    d = protocols.load(str(ROOT / "examples" / "mqm.toml"))
    weight = d.spec.weight_of
    assert (weight("Accuracy", ["major"]), weight("Accuracy", ["minor"]), weight("Fluency/Punctuation", ["minor"]),
            weight("Fluency/Punctuation", ["major"]), weight("Non-translation", ["minor"]),
            weight("Non-translation", ["major"]), weight("Style", [])) == (5, 1, 0.1, 5, 25, 25, 0)  # fmt: skip
    severity = controls(d)["severity"]
    assert (severity.get("perRegion"), severity.get("required"), severity.get("whenLabelValue")) == (
        "true",
        "true",
        None,
    )


@pytest.mark.parametrize(
    ("weights", "where", "problem"),
    [
        ('label = "Nope"\nweight = 1', "spans.weights[0].label", "is not one of the labels"),
        ('answer = "huge"\nweight = 1', "spans.weights[0].answer", "is not an answer code"),
        ("weight = 1", "spans.weights[0].label", "names a label, an answer code"),
        ('label = "minor"', "spans.weights[0].weight", "missing"),
    ],
)
def test_weight_mistakes_name_the_field(tmp_path: Path, weights: str, where: str, problem: str) -> None:
    with pytest.raises(DefinitionError) as e:
        load(tmp_path, HEADER + STYLES["spans"] + f"[[spans.weights]]\n{weights}\n")
    assert where in str(e.value) and problem in str(e.value), str(e.value)


def test_esa_and_mqm_examples_read_source_reference_hypothesis() -> None:
    esa, mqm = (protocols.load(str(ROOT / "examples" / f"{n}.toml")) for n in ("esa", "mqm"))
    assert [p.name for p in esa.spec.context] + [esa.spec.target.name] == ["source", "hypothesis"]
    assert [p.name for p in mqm.spec.context] + [mqm.spec.target.name] == ["source", "reference", "hypothesis"]
    (score,) = esa.spec.questions
    assert (score.kind, score.per, score.min, score.max, score.required) == ("slider", "candidate", 0, 100, True)
