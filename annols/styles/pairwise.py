"""Pairwise: two candidates side by side, one required answer per aspect, tie allowed.

Label Studio's own Pairwise tag offers left/right only, no tie and no ``required``, and
one judgment per pair of objects; so each aspect is a required single choice whose
answer codes are the protocol's own (stored through ``alias``).

Which candidate an answer prefers is ``prefers = "<candidate name>"`` on the answer; an
answer without it is a tie. When no answer says, the convention of the seed holds: the
first answer prefers the first candidate, the second the second, the rest are ties.
"""

from __future__ import annotations

from dataclasses import dataclass

from lxml import etree

from annols.definition import (
    Aspect,
    Choice,
    Definition,
    Pane,
    Question,
    Table,
    parse_aspects,
    parse_choice,
    parse_panes,
    parse_question,
)
from annols.definition.keys import COMPUTED, REQUIRED, Key, Section
from annols.definition.markup import candidate_blocks, el, has_slider, pane, question_block, slider_style
from annols.styles import judgments
from annols.styles.answers import ExportedAnnotation, ExportedTask


@dataclass(frozen=True)
class PairwiseSpec:
    context: tuple[Pane, ...]
    candidates: tuple[Pane, Pane]
    answers: tuple[Choice, ...]
    aspects: tuple[Aspect, ...]
    prefers: tuple[int | None, ...] = ()  # per answer: the candidate index it prefers, None for a tie
    questions: tuple[Question, ...] = ()  # task-level questions after the aspects

    def question(self, aspect: Aspect) -> Question:
        return Question(name=aspect.name, text=aspect.text, hint=aspect.hint,
                        choices=self.answers, required=True)  # fmt: skip


KEYS = (
    Key("candidates", "tables", "The two candidates, side by side (exactly 2).", of="pane", needed=True),
    Key("answers", "tables", "The answers of each aspect (e.g. 1, 2, 0 for a tie).", REQUIRED, of="preference"),
    Key("aspects", "tables", "What the two are compared on.", REQUIRED, of="aspect"),
)
SECTIONS = (
    Section("preference", "`[[answers]]` (pairwise)", "An answer of a pairwise aspect: a choice that may say which "
            "candidate it prefers.", (
        Key("code", "string", "What results store.", REQUIRED),
        Key("text", "string", "What annotators see.", COMPUTED, "the code"),
        Key("hint", "string", "A tooltip.", ""),
        Key("prefers", "field", "The candidate (its field) this answer prefers; none: a tie. Without any, the "
            "first two answers prefer the first and second candidate.", None),
    )),
)


def parse(t: Table) -> PairwiseSpec:
    candidates = parse_panes(t, "candidates")
    if len(candidates) != 2:
        raise t.fail("candidates", f"pairwise needs exactly 2 candidates, found {len(candidates)}")
    names = [c.name for c in candidates]
    answers, prefers = [], []
    for a in t.tables("answers", required=True):
        prefer = a.text("prefers")
        if prefer is not None and prefer not in names:
            raise a.fail("prefers", f"{prefer!r} is not one of the candidates {names}")
        prefers.append(None if prefer is None else names.index(prefer))
        answers.append(parse_choice(a))
    if all(p is None for p in prefers):  # the seed's convention: 1, 2, then ties
        prefers = [i if i < 2 else None for i in range(len(answers))]
    codes = [a.code for a in answers]
    if len(set(codes)) != len(codes):
        raise t.fail("answers", "answer codes must be distinct")
    aspects = parse_aspects(t)
    return PairwiseSpec(
        context=parse_panes(t, "context"),
        candidates=(candidates[0], candidates[1]),
        answers=tuple(answers),
        aspects=aspects,
        prefers=tuple(prefers),
        questions=tuple(parse_question(q) for q in t.tables("questions")),
    )


def data_fields(spec: PairwiseSpec) -> list[str]:
    return [p.name for p in spec.context] + [c.name for c in spec.candidates]


def build_config(d: Definition) -> etree._Element:
    spec: PairwiseSpec = d.spec
    root = el("View")
    if has_slider(spec.questions):
        root.append(slider_style())
    for p in spec.context:
        root.append(pane(p))
    side_by_side = el("View", style="display: flex; gap: 1em; align-items: flex-start")
    for c in spec.candidates:
        column = el("View", style="flex: 1 1 0; min-width: 0")
        column.append(pane(c))
        column.extend(candidate_blocks(spec.questions, c, several=True))
        side_by_side.append(column)
    root.append(side_by_side)
    for aspect in spec.aspects:
        root.append(question_block(spec.question(aspect), spec.candidates[0].name, inline=True, radio=True))
    for q in spec.questions:
        if not q.per_candidate:
            root.append(question_block(q, spec.candidates[0].name, radio=True))
    return root


def shown_systems(spec: PairwiseSpec, task: ExportedTask) -> tuple[str, str]:
    """The systems shown as candidate 1 and 2; the candidates' titles where the task names none."""
    first, second = judgments.shown_systems(task, 2, [c.title.lower() for c in spec.candidates])
    return first, second


def decode(spec: PairwiseSpec, task: ExportedTask, annotation: ExportedAnnotation) -> list[judgments.Judgment]:
    """A preference per aspect answered with exactly one known code, and the task-level answers."""
    shown = shown_systems(spec, task)
    code_of_text = {a.text: a.code for a in spec.answers}  # hand-made results may store the shown text
    meaning = {a.code: p for a, p in zip(spec.answers, spec.prefers, strict=True)}
    given = judgments.choices_by_name(annotation.result)
    out: list[judgments.Judgment] = []
    for aspect in spec.aspects:
        codes = [code_of_text.get(c, c) for c in given.get(aspect.name, [])]
        if len(codes) == 1 and codes[0] in meaning:
            out.append(judgments.Preference(aspect.name, shown, codes[0], meaning[codes[0]]))
    return out + judgments.question_answers(spec.questions, annotation.result,
                                            candidates=list(zip(_panes(spec), shown, strict=True)))


def _panes(spec: PairwiseSpec) -> list[str]:
    return [c.name for c in spec.candidates]


def system_of(spec: PairwiseSpec, task: ExportedTask, from_name: str, answer: str) -> str:
    """The system an answer row of results.csv is about: the preferred one (a tie: none)."""
    if not task.systems:
        return ""
    if from_name not in {a.name for a in spec.aspects}:
        shown = list(zip(_panes(spec), task.systems, strict=False))
        return judgments.candidate_system(spec.questions, from_name, shown) or ""
    code_of_text = {a.text: a.code for a in spec.answers}
    meaning = dict(zip((a.code for a in spec.answers), spec.prefers, strict=True))
    preferred = meaning.get(code_of_text.get(answer, answer))
    return task.systems[preferred] if preferred is not None and preferred < len(task.systems) else ""
