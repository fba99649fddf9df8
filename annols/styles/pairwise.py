"""Pairwise: two candidates side by side, one required answer per aspect, tie allowed.

Label Studio's own Pairwise tag offers left/right only, no tie and no ``required``, and
one judgment per pair of objects; so each aspect is a required single choice whose
answer codes are the protocol's own (stored through ``alias``).
"""

from __future__ import annotations

from dataclasses import dataclass

from lxml import etree

from annols.definition import Choice, Definition, Pane, Question, Table, parse_choice, parse_panes
from annols.markup import el, pane, question_block


@dataclass(frozen=True)
class Aspect:
    name: str
    text: str
    hint: str = ""


@dataclass(frozen=True)
class PairwiseSpec:
    context: tuple[Pane, ...]
    candidates: tuple[Pane, Pane]
    answers: tuple[Choice, ...]
    aspects: tuple[Aspect, ...]

    def question(self, aspect: Aspect) -> Question:
        return Question(name=aspect.name, text=aspect.text, hint=aspect.hint,
                        choices=self.answers, required=True)  # fmt: skip


def parse(t: Table) -> PairwiseSpec:
    candidates = parse_panes(t, "candidates")
    if len(candidates) != 2:
        raise t.fail("candidates", f"pairwise needs exactly 2 candidates, found {len(candidates)}")
    answers = tuple(parse_choice(c) for c in t.tables("answers", required=True))
    codes = [a.code for a in answers]
    if len(set(codes)) != len(codes):
        raise t.fail("answers", "answer codes must be distinct")
    aspects = []
    for a in t.tables("aspects", required=True):
        aspects.append(Aspect(name=a.name("name"), text=a.text("text", required=True), hint=a.text("hint", "")))
        a.check_unknown()
    return PairwiseSpec(
        context=parse_panes(t, "context"),
        candidates=(candidates[0], candidates[1]),
        answers=answers,
        aspects=tuple(aspects),
    )


def data_fields(spec: PairwiseSpec) -> list[str]:
    return [p.name for p in spec.context] + [c.name for c in spec.candidates]


def build_config(d: Definition) -> etree._Element:
    spec: PairwiseSpec = d.spec
    root = el("View")
    for p in spec.context:
        root.append(pane(p))
    side_by_side = el("View", style="display: flex; gap: 1em; align-items: flex-start")
    for c in spec.candidates:
        column = el("View", style="flex: 1 1 0; min-width: 0")
        column.append(pane(c))
        side_by_side.append(column)
    root.append(side_by_side)
    for aspect in spec.aspects:
        root.append(question_block(spec.question(aspect), spec.candidates[0].name, inline=True, radio=True))
    return root
