"""Best-worst scaling: a tuple of candidates per task, one required best and one required worst per aspect.

A pool of candidates (items, or the outputs of several systems for one context) is shown
in tuples of ``tuple_size`` (default 4); annols makes the tuples (:mod:`annols.definition.design`,
each candidate in the same number of tuples, pairs co-occurring as evenly as it can).
Written like ratings: optional ``[[context]]`` panes, one ``[candidate]`` pane (its
``name`` is the input field holding a candidate's text, its ``title`` is shown with the
position letter: "Headline A"), ``[[aspects]]`` (``name``, ``text``, ``hint``) and
optional task-level ``[[questions]]``; ``tuple_size`` and ``appearances`` (how many tuples
each candidate is in; default twice the tuple size, the 2N tuples of Kiritchenko &
Mohammad 2017; a pool of exactly ``tuple_size`` candidates is one tuple) tune the design.

Task fields: the context panes' fields and ``{candidate}_1`` .. ``{candidate}_N`` (the
tuple, in the order shown, shuffled per task from ``--seed`` like the other styles; the
candidate behind each position is kept in the coordinator's manifest, not on the server). Controls:
``{aspect}_best`` and ``{aspect}_worst``, each a required single choice of the positions
(answer codes ``A``, ``B``, ...). Label Studio cannot say that best and worst must
differ: ``annols validate`` flags a tuple where they are the same candidate.
"""

from __future__ import annotations

import string
from collections.abc import Iterator
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
    parse_pane,
    parse_panes,
    parse_question,
)
from annols.definition.keys import COMPUTED, REQUIRED, Key, Section
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
from annols.styles.answers import ExportedAnnotation, ExportedTask
from annols.styles.judgments import (
    BestWorst,
    Judgment,
    candidate_system,
    choices_by_name,
    question_answers,
    shown_systems,
)

MAX_TUPLE = 10


@dataclass(frozen=True)
class BestWorstSpec:
    context: tuple[Pane, ...]
    candidate: Pane  # name: the input field of a candidate's text; title: shown with the position letter
    aspects: tuple[Aspect, ...]
    tuple_size: int = 4
    appearances: int = 8
    questions: tuple[Question, ...] = ()

    @property
    def letters(self) -> tuple[str, ...]:
        return tuple(string.ascii_uppercase[: self.tuple_size])

    def field(self, position: int) -> str:
        """The task field shown at a position (0-based): ``{candidate}_{position + 1}``."""
        return f"{self.candidate.name}_{position + 1}"

    def fields(self) -> list[str]:
        return [self.field(i) for i in range(self.tuple_size)]

    def title(self, position: int) -> str:
        return f"{self.candidate.title} {self.letters[position]}"

    def control(self, aspect: Aspect, end: str) -> str:
        """``{aspect}_best`` or ``{aspect}_worst``."""
        return f"{aspect.name}_{end}"

    def question(self, aspect: Aspect, end: str) -> Question:
        word = "Best" if end == "best" else "Worst"
        choices = tuple(Choice(code=letter, text=self.title(i)) for i, letter in enumerate(self.letters))
        return Question(name=self.control(aspect, end), text=f"{word}: {aspect.text}", choices=choices, required=True)


KEYS = (
    Key("candidate", "table", "How each candidate is shown (kind `text`).", REQUIRED, of="pane"),
    Key("tuple_size", "integer", "Candidates per task (2 to 10).", 4),
    Key("appearances", "integer", "Tuples each candidate appears in.", COMPUTED, "2 × tuple_size"),
    Key("aspects", "tables", "What the best and worst are picked on.", REQUIRED, of="aspect"),
)
SECTIONS: tuple[Section, ...] = ()


def parse(t: Table) -> BestWorstSpec:
    context = parse_panes(t, "context")
    candidate_table = t.table("candidate", required=True)
    assert candidate_table is not None
    candidate = parse_pane(candidate_table)
    if candidate.kind != "text":
        raise t.fail("candidate.kind", "a best-worst candidate is shown as text")
    size = t.number("tuple_size", 4)
    if not 2 <= size <= MAX_TUPLE:
        raise t.fail("tuple_size", f"{size} is not between 2 and {MAX_TUPLE}")
    appearances = t.number("appearances", 2 * size)
    if appearances < 1:
        raise t.fail("appearances", f"{appearances} must be at least 1")
    aspects = parse_aspects(t)
    questions = tuple(parse_question(q) for q in t.tables("questions"))
    spec = BestWorstSpec(context=context, candidate=candidate, aspects=aspects, tuple_size=size,
                         appearances=appearances, questions=questions)  # fmt: skip
    _check_names(t, spec)
    return spec


def _check_names(t: Table, spec: BestWorstSpec) -> None:
    """Every field and control name must be unique."""
    t.check_unique_names(_names(spec))


def _names(spec: BestWorstSpec) -> Iterator[tuple[str, str, str]]:
    """(name, what it names, the key that gave it) of every field and control."""
    for i, p in enumerate(spec.context):
        yield p.name, "the context pane", f"context[{i}].name"
    yield spec.candidate.name, "the candidate", "candidate.name"
    for position in range(spec.tuple_size):
        yield spec.field(position), "the candidate field", "candidate.name"
    for i, a in enumerate(spec.aspects):
        for end in ("best", "worst"):
            yield spec.control(a, end), f"the {end} answer of aspect {a.name!r}", f"aspects[{i}].name"
    for i, q in enumerate(spec.questions):
        panes: list[str | None] = [spec.field(p) for p in range(spec.tuple_size)] if q.per_candidate else [None]
        for pane_name in panes:
            yield q.control(pane_name), "the question", f"questions[{i}].name"


def data_fields(spec: BestWorstSpec) -> list[str]:
    fields = [p.name for p in spec.context] + spec.fields()
    fields += [q.options_from for q in spec.questions if q.options_from]
    return fields


def build_config(d: Definition) -> etree._Element:
    spec: BestWorstSpec = d.spec
    root = el("View")
    if has_slider(spec.questions):
        root.append(slider_style())
    for p in spec.context:
        root.append(pane(p))
    tuple_view = el("View", style="display: grid; grid-template-columns: repeat(2, minmax(0, 1fr)); gap: 0.5em 1em")
    for position in range(spec.tuple_size):
        shown = Pane(name=spec.field(position), title=spec.title(position))
        box = el("View", style="border: 1px solid #ccc; border-radius: 4px; padding: 0.5em")
        box.append(pane(shown))
        box.extend(candidate_blocks(spec.questions, shown, several=True))
        tuple_view.append(box)
    root.append(tuple_view)
    to_name = spec.field(0)
    for aspect in spec.aspects:
        block = el("View", style="border-top: 2px solid #ccc; margin-top: 1em; padding-top: 0.5em")
        block.append(header(aspect.text, size=4))
        if aspect.hint:
            block.append(header(aspect.hint, size=6, style="font-weight: normal; color: #555"))
        for end in ("best", "worst"):
            q = spec.question(aspect, end)
            line = el("View", style="display: flex; align-items: center; gap: 1em; margin-top: 0.5em")
            line.append(header("Best" if end == "best" else "Worst", size=5, style="flex: 0 0 5em"))
            line.append(choices_el(q, to_name, inline=True, radio=True))
            block.append(line)
        root.append(block)
    for q in spec.questions:
        if not q.per_candidate:
            root.append(question_block(q, to_name, radio=True))
    return root


# --- decoding --------------------------------------------------------------------------------


def decode(spec: BestWorstSpec, task: ExportedTask, annotation: ExportedAnnotation) -> list[Judgment]:
    """One :class:`BestWorst` per aspect answered with exactly one best and one worst position of the tuple.

    Best and worst the same position is kept as said (``validate`` flags it; the analysis
    leaves it out). The candidates are the ones shown at each position (unblinded), or
    the position letters when the task names none.
    """
    systems = shown_systems(task, spec.tuple_size, spec.letters)
    chosen = choices_by_name(annotation.result)
    code_of_text = {spec.title(i): letter for i, letter in enumerate(spec.letters)}
    out: list[Judgment] = []
    for aspect in spec.aspects:
        ends = []
        for end in ("best", "worst"):
            given = [code_of_text.get(c, c) for c in chosen.get(spec.control(aspect, end), [])]
            ends.append(spec.letters.index(given[0]) if len(given) == 1 and given[0] in spec.letters else None)
        best, worst = ends
        if best is None or worst is None:
            continue
        out.append(BestWorst(aspect=aspect.name, systems=tuple(systems), best=best, worst=worst))
    panes = [spec.field(i) for i in range(spec.tuple_size)]
    out.extend(question_answers(spec.questions, annotation.result, candidates=list(zip(panes, systems, strict=True))))
    return out


def system_of(spec: BestWorstSpec, task: ExportedTask, from_name: str, answer: str) -> str:
    """The candidate a results.csv best or worst answer names (its position, unblinded), "" otherwise."""
    if len(task.systems) == spec.tuple_size:
        panes = [spec.field(i) for i in range(spec.tuple_size)]
        about = candidate_system(spec.questions, from_name, list(zip(panes, task.systems, strict=True)))
        if about is not None:
            return about
    if not (from_name.endswith("_best") or from_name.endswith("_worst")) or len(task.systems) != spec.tuple_size:
        return ""
    letter = {spec.title(i): x for i, x in enumerate(spec.letters)}.get(answer, answer)
    return task.systems[spec.letters.index(letter)] if letter in spec.letters else ""
