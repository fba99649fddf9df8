"""Ranking: N candidates x D dimensions, a rank 1..N per cell, ties allowed.

Label Studio's Ranker cannot express ties, has no ``required``, and saves an untouched
board as if it were a ranking; a grid of required single-choice rank cells can.
Candidates are shown by position (Output A, B, ...); which system sits where is the
blinding, kept outside what the annotator sees.
"""

from __future__ import annotations

from dataclasses import dataclass

from lxml import etree

from annols.definition import Choice, Definition, Pane, Question, Table, parse_panes, parse_question
from annols.definition.keys import REQUIRED, Key, Section
from annols.definition.markup import (
    candidate_blocks,
    choices_el,
    el,
    has_slider,
    header,
    pane,
    question_block,
    slider_style,
)
from annols.styles import judgments
from annols.styles.answers import ExportedAnnotation, ExportedTask


@dataclass(frozen=True)
class Dimension:
    name: str
    text: str
    hint: str = ""


@dataclass(frozen=True)
class RankingSpec:
    context: tuple[Pane, ...]
    positions: tuple[str, ...]  # "A", "B", ...
    candidate_title: str  # "{position}" is replaced
    dimensions: tuple[Dimension, ...]
    questions: tuple[Question, ...] = ()  # task-level questions after the ranks

    def field(self, position: str) -> str:
        return f"output_{position.lower()}"

    def cell(self, dimension: Dimension, position: str) -> str:
        return f"{dimension.name}_{position.lower()}"

    @property
    def ranks(self) -> tuple[Choice, ...]:
        return tuple(Choice(code=str(r), text=str(r)) for r in range(1, len(self.positions) + 1))


KEYS = (
    Key("positions", "strings", "The candidates' positions (letters or digits), each a task field "
        "`output_<position>`.", REQUIRED),
    Key("dimensions", "tables", "What the candidates are ranked on.", REQUIRED, of="dimension"),
    Key("candidate_title", "string", "Each candidate's title; `{position}` is replaced.", "Output {position}"),
)
SECTIONS = (
    Section("dimension", "`[[dimensions]]` (ranking)", "A dimension candidates are ranked on.", (
        Key("name", "name", "Its name.", REQUIRED),
        Key("text", "string", "As shown.", REQUIRED),
        Key("hint", "string", "A tooltip.", ""),
    )),
)


def parse(t: Table) -> RankingSpec:
    positions = t.strings("positions", required=True)
    for i, p in enumerate(positions):
        if not p.isalnum() or not p.isascii():
            raise t.fail(f"positions[{i}]", f"{p!r} must be letters or digits")
    if len({p.lower() for p in positions}) != len(positions):
        raise t.fail("positions", "positions must be distinct")
    if len(positions) < 2:
        raise t.fail("positions", "ranking needs at least 2 candidates")
    dims = []
    for dt in t.tables("dimensions", required=True):
        dims.append(Dimension(name=dt.name("name"), text=dt.text("text", required=True), hint=dt.text("hint", "")))
        dt.check_unknown()
    return RankingSpec(
        context=parse_panes(t, "context"),
        positions=positions,
        candidate_title=t.text("candidate_title", "Output {position}"),
        dimensions=tuple(dims),
        questions=tuple(parse_question(q) for q in t.tables("questions")),
    )


def data_fields(spec: RankingSpec) -> list[str]:
    return [p.name for p in spec.context] + [spec.field(p) for p in spec.positions]


def build_config(d: Definition) -> etree._Element:
    spec: RankingSpec = d.spec
    root = el("View")
    if has_slider(spec.questions):
        root.append(slider_style())
    for p in spec.context:
        root.append(pane(p))
    for position in spec.positions:
        title = spec.candidate_title.replace("{position}", position)
        root.append(pane(Pane(name=spec.field(position), title=title)))
    for dim in spec.dimensions:
        block = el("View", style="border-top: 2px solid #ccc; margin-top: 1em; padding-top: 0.5em")
        block.append(header(dim.text))
        if dim.hint:
            block.append(header(dim.hint, size=6, style="font-weight: normal; color: #555"))
        for position in spec.positions:
            title = spec.candidate_title.replace("{position}", position)
            cell = Question(name=spec.cell(dim, position), text=f"{dim.text}, {title}",
                            choices=spec.ranks, required=True)  # fmt: skip
            line = el("View", style="display: flex; align-items: center; gap: 1em")
            line.append(header(title, size=6))
            line.append(choices_el(cell, spec.field(position), inline=True, radio=True))
            block.append(line)
        root.append(block)
    for position in spec.positions:
        title = spec.candidate_title.replace("{position}", position)
        root.extend(candidate_blocks(spec.questions, Pane(name=spec.field(position), title=title), several=True))
    for q in spec.questions:
        if not q.per_candidate:
            root.append(question_block(q, spec.field(spec.positions[0]), radio=True))
    return root


def shown_systems(spec: RankingSpec, task: ExportedTask) -> tuple[str, ...]:
    """The system at each position: the blinding if recorded, else the input order, else the letters."""
    if len(task.systems) == len(spec.positions):
        return task.systems
    if len(task.source_systems) == len(spec.positions):
        return task.source_systems
    return spec.positions


def decode(spec: RankingSpec, task: ExportedTask, annotation: ExportedAnnotation) -> list[judgments.Judgment]:
    """A rank per cell holding exactly one rank 1..N (ties as given), and the task-level answers."""
    shown = shown_systems(spec, task)
    given = judgments.choices_by_name(annotation.result)
    top = len(spec.positions)
    out: list[judgments.Judgment] = []
    for dimension in spec.dimensions:
        for i, position in enumerate(spec.positions):
            codes = given.get(spec.cell(dimension, position), [])
            if len(codes) == 1 and codes[0].isdigit() and 1 <= int(codes[0]) <= top:
                out.append(judgments.Rank(dimension.name, position, shown[i], int(codes[0])))
    panes = [spec.field(p) for p in spec.positions]
    return out + judgments.question_answers(spec.questions, annotation.result,
                                            candidates=list(zip(panes, shown, strict=True)))


def system_of(spec: RankingSpec, task: ExportedTask, from_name: str, answer: str) -> str:
    """The system a rank cell is about."""
    if not task.systems:
        return ""
    panes = [spec.field(p) for p in spec.positions]
    about = judgments.candidate_system(spec.questions, from_name, list(zip(panes, task.systems, strict=False)))
    if about is not None:
        return about
    for dimension in spec.dimensions:
        for i, position in enumerate(spec.positions):
            if from_name == spec.cell(dimension, position) and i < len(task.systems):
                return task.systems[i]
    return ""
