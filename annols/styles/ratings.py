"""Ratings: each candidate rated on each aspect, on a scale of numeric codes or a slider.

Written like pairwise: ``[[context]]`` panes, one or more ``[[candidates]]`` (shown by
their titles only; with several, their order is shuffled per task and undone on pull),
``[[aspects]]`` (``name``, ``text``, ``hint``) and one required answer per candidate and
aspect. The scale is either

- ``scale = "choices"`` (the default): ``[[answers]]`` are the scale's numeric codes from
  lowest to highest (e.g. 1 to 5), each with optional anchor ``text`` and ``hint``. Each
  cell is a required single choice; the code is stored through ``alias``, as in the
  other styles.
- ``scale = "slider"``: direct assessment on a continuous line, Label Studio's ``Number``
  tag with ``slider="true"`` (``min``/``max``/``step``, ``required``), taken from an
  optional ``[slider]`` table (``min = 0``, ``max = 100``, ``step = 1``, anchor texts
  ``low`` and ``high`` shown at its ends). The ``Rating`` (stars) tag is no fit for 0 to
  100. An untouched slider holds no value (its thumb rests mid-way, faded, no number
  shown), so ``required`` refuses it; once moved (mouse, or Home/End and the arrow keys)
  it shows its value next to it. Seen in Chromium on Label Studio 1.23.2.

Optional task-level ``[[questions]]`` work as in spans.

Many systems, a few per task: an optional ``[groups]`` table (``field``: the input field
of an output's text; ``appearances``: how many tasks each system's output is in per item,
default 1; optional ``reference``: a system whose output fills one of the panes of every
task, shuffled and blinded with the others, WMT's quality control) makes the input one
record per system output and the tasks balanced groups of the item's outputs
(:mod:`annols.formats.groups`, :mod:`annols.definition.design`). The panes and the config stay as
written: each task fills the ``[[candidates]]`` panes with one group.

Turn by turn: with ``per_turn = true`` the one candidate pane is a conversation (``kind =
"conversation"``) and each aspect is rated once per assistant turn, all in one task: the
annotator reads the conversation once, each assistant turn followed by its ratings. The
config repeats a turn's block over the conversation's turns (Label Studio's ``Repeater``
over the task field ``annols_turns_<field>``, which push sends beside the conversation and
pull drops): a turn is the messages after the previous assistant message up to and
including the next one. A cell is then ``{aspect}__turn{k}`` (``k`` from 0) and its
:class:`Rating` names the turn (from 1). Seen in Chromium on Label Studio 1.23.2: each
turn's choices render under it, and ``required`` holds for each turn.

Control names are stable: a cell is ``{aspect}_{candidate}`` (``coherence_summary_1``:
aspect name, then the candidate pane's name), each pane's Text is its field name and a
question's control its name. Every name must be unique in the definition.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

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
from annols.definition.fields import turns_key
from annols.definition.keys import REQUIRED, Key, Section
from annols.definition.markup import (
    SLIDER_CSS,
    candidate_blocks,
    choices_el,
    conversation_style,
    el,
    has_slider,
    header,
    pane,
    question_block,
)
from annols.styles.answers import ExportedAnnotation, ExportedTask
from annols.styles.judgments import Judgment, Rating, candidate_system, number_code, question_answers, shown_systems

SCALES = ("choices", "slider")
SYSTEM_FIELD = "system"  # with [groups]: the input field naming the system behind an output
TURN = "__turn"  # per_turn: a cell is {aspect}__turn{k}, k from 0 (the Repeater's index)
INDEX = "{{idx}}"  # the Repeater's index flag

@dataclass(frozen=True)
class Slider:
    """A continuous scale: Label Studio's Number tag shown as a slider."""

    min: int = 0
    max: int = 100
    step: int = 1
    low: str = ""  # anchor text at the low end
    high: str = ""  # anchor text at the high end


@dataclass(frozen=True)
class Groups:
    """Which of an item's many system outputs each task shows (``[groups]``)."""

    field: str  # the input field of an output's text
    appearances: int = 1  # tasks per item each system's output is in
    reference: str = ""  # a system shown in every task, in one of the panes ("" for none)


@dataclass(frozen=True)
class RatingsSpec:
    context: tuple[Pane, ...]
    candidates: tuple[Pane, ...]
    scale: str  # "choices" | "slider"
    answers: tuple[Choice, ...]  # numeric codes, lowest first ("choices" scale)
    slider: Slider | None  # the "slider" scale
    aspects: tuple[Aspect, ...]
    questions: tuple[Question, ...] = ()
    groups: Groups | None = None  # one record per system output, made into groups of the panes' number
    per_turn: bool = False  # each aspect rated per assistant turn of the one candidate, a conversation

    def turn_of(self, from_name: str) -> tuple[Aspect, int] | None:
        """per_turn: (aspect, turn from 1) of a cell's control name, None for any other name."""
        if not self.per_turn:
            return None
        aspect, sep, index = from_name.rpartition(TURN)
        if not sep or not index.isdigit() or (len(index) > 1 and index[0] == "0"):
            return None
        found = next((a for a in self.aspects if a.name == aspect), None)
        return None if found is None else (found, int(index) + 1)

    def cell(self, aspect: Aspect, candidate: Pane) -> str:
        """The control name of one rating: ``{aspect}_{candidate}``."""
        return f"{aspect.name}_{candidate.name}"

    def cells(self) -> dict[str, tuple[Aspect, int]]:
        """Control name -> (aspect, candidate position), in the order shown."""
        return {self.cell(a, c): (a, i) for i, c in enumerate(self.candidates) for a in self.aspects}

    def cell_question(self, aspect: Aspect, candidate: Pane) -> Question:
        text = f"{aspect.text}, {candidate.title}" if len(self.candidates) > 1 else aspect.text
        return Question(name=self.cell(aspect, candidate), text=text, hint=aspect.hint,
                        choices=self.answers, required=True)  # fmt: skip


KEYS = (
    Key("candidates", "tables", "The outputs rated, one pane each (at least one).", of="pane", needed=True),
    Key("scale", "string", "`choices` (the `[[answers]]`) or `slider`.", "choices", values=SCALES),
    Key("answers", "tables", "The rating scale's answers, numeric codes lowest first.", of="choice",
        required_when="scale = `choices`"),
    Key("slider", "table", "The slider (scale = `slider`).", of="slider"),
    Key("aspects", "tables", "What each candidate is rated on.", REQUIRED, of="aspect"),
    Key("groups", "table", "Many systems, a few per task: tasks built from one record per output.", of="groups"),
    Key("per_turn", "bool", "Rate each aspect once per assistant turn of the one candidate, a conversation "
        "(`kind = \"conversation\"`), in one task.", False),
)
SECTIONS = (
    Section("slider", "`[slider]` (ratings)", "A slider's range and anchors.", (
        Key("min", "integer", "The lowest value.", 0),
        Key("max", "integer", "The highest value.", 100),
        Key("step", "integer", "The step.", 1),
        Key("low", "string", "The low anchor.", ""),
        Key("high", "string", "The high anchor.", ""),
    )),
    Section("groups", "`[groups]` (ratings)", "Tasks built from one input record per output.", (
        Key("field", "name", "The field holding an output's text.", REQUIRED),
        Key("appearances", "integer", "Tasks each output appears in.", 1),
        Key("reference", "string", "A system shown in every task (e.g. the human reference).", ""),
    )),
)


def parse(t: Table) -> RatingsSpec:
    context = parse_panes(t, "context")
    candidates = tuple(parse_panes(t, "candidates"))
    if not candidates:
        raise t.fail("candidates", "missing; ratings needs at least one [[candidates]] pane")
    scale = t.text("scale", "choices")
    if scale not in SCALES:
        raise t.fail("scale", f"{scale!r} is not one of {', '.join(repr(s) for s in SCALES)}")

    answers: tuple[Choice, ...] = ()
    slider: Slider | None = None
    if scale == "choices":
        if t.has("slider"):
            raise t.fail("slider", 'only a scale = "slider" takes a [slider] table')
        answers = _parse_answers(t)
    else:
        if t.has("answers"):
            raise t.fail("answers", 'a scale = "slider" takes no answers (give [slider] low and high anchors)')
        slider = _parse_slider(t.table("slider"))

    aspects = parse_aspects(t)
    questions = tuple(parse_question(q) for q in t.tables("questions"))
    groups = _parse_groups(t.table("groups"), context, candidates)
    per_turn = t.flag("per_turn", False)
    if per_turn:
        if len(candidates) != 1 or candidates[0].kind != "conversation":
            raise t.fail("per_turn", 'rates the turns of one conversation: give one [[candidates]] pane of kind = '
                         '"conversation"')  # fmt: skip
        if questions:
            raise t.fail("questions", "a per_turn definition asks its aspects per turn and takes no [[questions]]")
        if groups is not None:
            raise t.fail("groups", "a per_turn definition rates one conversation per task: leave out [groups]")
    spec = RatingsSpec(
        context=context,
        candidates=candidates,
        scale=scale,
        answers=answers,
        slider=slider,
        aspects=aspects,
        questions=questions,
        groups=groups,
        per_turn=per_turn,
    )
    _check_names(t, spec)
    return spec


def _parse_groups(g: Table | None, context: Sequence[Pane], candidates: Sequence[Pane]) -> Groups | None:
    if g is None:
        return None
    groups = Groups(field=g.name("field"), appearances=g.number("appearances", 1), reference=g.text("reference", ""))
    g.check_unknown()
    if groups.field in [p.name for p in context] or groups.field == SYSTEM_FIELD:
        what = "a context pane's" if groups.field != SYSTEM_FIELD else "the system's"
        raise g.fail("field", f"{groups.field!r} is {what} field; name the field holding an output's text")
    if groups.appearances < 1:
        raise g.fail("appearances", f"{groups.appearances} must be at least 1")
    if g.has("reference") and not groups.reference.strip():
        raise g.fail("reference", "must not be empty; leave it out for no reference")
    if groups.reference and len(candidates) < 2:
        raise g.fail("reference", "the reference fills one of the [[candidates]] panes of every task: give two or "
                     "more panes")  # fmt: skip
    return groups


def _parse_answers(t: Table) -> tuple[Choice, ...]:
    tables = t.tables("answers", required=True)
    answers = tuple(parse_choice(c) for c in tables)
    previous: float | None = None
    for i, answer in enumerate(answers):
        value = _number(answer.code)
        if value is None:
            raise t.fail(f"answers[{i}].code", f"{answer.code!r} is not a number; a rating scale's codes are numbers")
        if previous is not None and value <= previous:
            raise t.fail(f"answers[{i}].code", f"{answer.code!r} must be higher than the answer before it "
                         "(list a scale's codes from lowest to highest)")  # fmt: skip
        previous = value
    if len(answers) < 2:
        raise t.fail("answers", "a rating scale needs at least 2 answers")
    return answers


def _parse_slider(s: Table | None) -> Slider:
    if s is None:
        return Slider()
    slider = Slider(
        min=s.number("min", 0),
        max=s.number("max", 100),
        step=s.number("step", 1),
        low=s.text("low", ""),
        high=s.text("high", ""),
    )
    s.check_unknown()
    if slider.max <= slider.min:
        raise s.fail("max", f"{slider.max} must be above min ({slider.min})")
    if slider.step <= 0:
        raise s.fail("step", f"{slider.step} must be above 0")
    return slider


def _check_names(t: Table, spec: RatingsSpec) -> None:
    """Every pane, cell and question name becomes a control name: they must be unique."""
    names = [a.name for a in spec.aspects]
    for i, a in enumerate(spec.aspects):
        if a.name in names[:i]:
            raise t.fail(f"aspects[{i}].name", f"aspect {a.name!r} appears twice")
    t.check_unique_names(_names(spec))


def _names(spec: RatingsSpec) -> Iterator[tuple[str, str, str]]:
    """(name, what it names, the key that gave it) of every field and control."""
    for i, p in enumerate(spec.context):
        yield p.name, "the context pane", f"context[{i}].name"
    for i, c in enumerate(spec.candidates):
        yield c.name, "the candidate", f"candidates[{i}].name"
    for i, a in enumerate(spec.aspects):
        for c in spec.candidates:
            yield spec.cell(a, c), f"the rating of aspect {a.name!r} for candidate {c.name!r}", f"aspects[{i}].name"
        if spec.per_turn:
            yield a.name + TURN, f"the turn ratings of aspect {a.name!r}", f"aspects[{i}].name"
    several = len(spec.candidates) > 1
    for i, q in enumerate(spec.questions):
        panes: list[str | None] = [c.name for c in spec.candidates] if q.per_candidate and several else [None]
        for pane_name in panes:
            yield q.control(pane_name), "the question", f"questions[{i}].name"


def _number(code: str) -> float | None:
    try:
        value = float(code)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def data_fields(spec: RatingsSpec) -> list[str]:
    fields = [p.name for p in spec.context] + [c.name for c in spec.candidates]
    fields += [q.options_from for q in spec.questions if q.options_from]
    return fields


def build_config(d: Definition) -> etree._Element:
    spec: RatingsSpec = d.spec
    root = el("View")
    if spec.slider is not None or has_slider(spec.questions):
        style = el("Style")
        style.text = SLIDER_CSS
        root.append(style)
    for p in spec.context:
        root.append(pane(p))
    if spec.per_turn:
        root.append(_turns(spec))
        return root
    for c in spec.candidates:
        block = el("View", style="border-top: 2px solid #ccc; margin-top: 1em; padding-top: 0.5em")
        block.append(pane(c))
        for aspect in spec.aspects:
            block.append(_cell(spec, aspect, c))
        block.extend(candidate_blocks(spec.questions, c, len(spec.candidates) > 1))
        root.append(block)
    for q in spec.questions:
        if not q.per_candidate:
            root.append(question_block(q, spec.candidates[0].name, radio=True))
    return root


def _turns(spec: RatingsSpec) -> etree._Element:
    """per_turn: the conversation turn by turn, each turn (a dialogue of its messages) followed by its ratings."""
    c = spec.candidates[0]
    block = el("View", style="border-top: 2px solid #ccc; margin-top: 1em; padding-top: 0.5em")
    block.append(header(c.title))
    if c.note:
        block.append(header(c.note, size=6, style="color: #a33"))
    block.append(conversation_style())
    turn = el("View", style="border-bottom: 1px solid #ddd; margin-bottom: 0.75em; padding-bottom: 0.5em")
    name = c.name + TURN + INDEX
    turn.append(el("Paragraphs", name=name, value=f"${turns_key(c.name)}[{INDEX}]", layout="dialogue",
                   nameKey="role", textKey="content"))  # fmt: skip
    for aspect in spec.aspects:
        cell = replace(c, name=name)
        row = _cell(spec, aspect, cell)
        for node in row.iter("Choices", "Number"):
            node.set("name", aspect.name + TURN + INDEX)
        turn.append(row)
    block.append(el("Repeater", turn, on=f"${turns_key(c.name)}", indexFlag=INDEX))
    return block


def _cell(spec: RatingsSpec, aspect: Aspect, candidate: Pane) -> etree._Element:
    """A 1..N scale: one line, the aspect (and its hint) left of the answers. A slider: the aspect above it."""
    q = spec.cell_question(aspect, candidate)
    label = el("View", style="flex: 0 0 14em" if spec.slider is None else None)
    label.append(header(aspect.text, size=5))
    if aspect.hint:
        label.append(header(aspect.hint, size=6, style="font-weight: normal; color: #555"))
    if spec.slider is None:
        block = el("View", style="display: flex; align-items: center; gap: 1em; margin-top: 0.5em")
        block.append(label)
        block.append(choices_el(q, candidate.name, inline=True, radio=True))
        return block
    block = el("View", style="margin-top: 0.5em")
    block.append(label)
    s = spec.slider
    line = el("View", style="display: flex; align-items: center; gap: 1em")
    line.append(header(s.low or str(s.min), size=6, style="font-weight: normal; white-space: nowrap"))
    line.append(el("Number", name=q.name, toName=candidate.name, slider=True, min=s.min, max=s.max, step=s.step,
                   required=True, requiredMessage=f"Please answer: {q.text}"))  # fmt: skip
    line.append(header(s.high or str(s.max), size=6, style="font-weight: normal; white-space: nowrap"))
    block.append(line)
    return block


# --- decoding --------------------------------------------------------------------------------


def decode(spec: RatingsSpec, task: ExportedTask, annotation: ExportedAnnotation) -> list[Judgment]:
    """One :class:`Rating` per cell answered with exactly one valid value, then the task-level answers.

    The system of a rating is the one shown at that candidate's position (unblinded), or
    the candidate pane's name when the task names no systems for its candidates.
    """
    systems = shown_systems(task, len(spec.candidates), [c.name for c in spec.candidates])
    values = _cell_values(spec, annotation.result)
    out: list[Judgment] = []
    if spec.per_turn:
        rated: list[Rating] = []
        for name, given in values.items():
            found = spec.turn_of(name)
            value, code = given[0] if len(given) == 1 else (None, "")
            if found is None or value is None:
                continue
            aspect, turn = found
            rated.append(Rating(aspect=aspect.name, candidate=spec.candidates[0].name, system=systems[0],
                                value=value, code=code, turn=turn))  # fmt: skip
        order = [a.name for a in spec.aspects]
        rated.sort(key=lambda r: (r.turn or 0, order.index(r.aspect)))
        out.extend(rated)
        return out
    for cell, aspect_name, candidate_name, i in _reading(spec)[3]:
        cell_given = values.get(cell)
        if cell_given is None or len(cell_given) != 1:
            continue  # unanswered or answered twice: no rating
        number, code = cell_given[0]
        if number is None:
            continue  # off the scale: no rating
        out.append(Rating(aspect=aspect_name, candidate=candidate_name, system=systems[i], value=number, code=code))
    out.extend(question_answers(spec.questions, annotation.result,
                                candidates=[(c.name, systems[i]) for i, c in enumerate(spec.candidates)]))
    return out


def _cell_values(spec: RatingsSpec, result: Sequence[dict[str, Any]]) -> dict[str, list[tuple[float | None, str]]]:
    """Cell name -> every (value, code) given to it; the value is None for an answer off the scale."""
    cells, codes, code_of_text, _grid = _reading(spec)
    out: dict[str, list[tuple[float | None, str]]] = {}
    slider, per_turn = spec.slider, spec.per_turn
    for item in result:
        name = str(item.get("from_name", ""))
        if name not in cells and (not per_turn or spec.turn_of(name) is None):
            continue
        value = item.get("value") or {}
        given = out.setdefault(name, [])
        if slider is None:
            chosen = value.get("choices") if item.get("type") == "choices" else None
            for code in chosen if isinstance(chosen, list) else [chosen]:
                code = code_of_text.get(code, code) if isinstance(code, str) else code
                given.append((codes.get(code) if isinstance(code, str) else None, str(code)))
        else:
            number = value.get("number") if item.get("type") == "number" else None
            on_scale = _on_slider(number, slider)
            given.append((on_scale, _code(on_scale)) if on_scale is not None else (None, str(number)))
    return out


_READINGS: dict[int, tuple[RatingsSpec, Any]] = {}


def _reading(spec: RatingsSpec) -> tuple[dict[str, tuple[Aspect, int]], dict[str, float | None], dict[str, str],
                                         list[tuple[str, str, str, int]]]:  # fmt: skip
    """What decode reads a spec's results by, made once per spec (decode runs once per annotation): the cells
    (:meth:`RatingsSpec.cells`), code -> number, shown text -> code (hand-made results may store the shown text),
    and (cell, aspect, candidate, position) of each rating in the order decode gives them."""
    kept = _READINGS.get(id(spec))
    if kept is None or kept[0] is not spec:
        if len(_READINGS) > 16:
            _READINGS.clear()
        grid = [(spec.cell(a, c), a.name, c.name, i) for i, c in enumerate(spec.candidates) for a in spec.aspects]
        kept = _READINGS[id(spec)] = (spec, (spec.cells(), {a.code: _number(a.code) for a in spec.answers},
                                             {a.text: a.code for a in spec.answers}, grid))  # fmt: skip
    return kept[1]


def _on_slider(number: Any, slider: Slider) -> float | None:
    """The slider's number as a float, or None when it is not a number within the slider's range."""
    if isinstance(number, bool) or not isinstance(number, int | float) or not math.isfinite(number):
        return None
    return float(number) if slider.min <= number <= slider.max else None


_code = number_code  # the slider's number as stored


def system_of(spec: RatingsSpec, task: ExportedTask, from_name: str, answer: str) -> str:
    """The system a results.csv answer row is about: the candidate shown in a rating cell, "" otherwise."""
    cell = spec.cells().get(from_name)
    if len(task.systems) != len(spec.candidates):
        return ""
    if spec.turn_of(from_name) is not None:
        return task.systems[0]
    if cell is None:
        return candidate_system(spec.questions, from_name, list(zip(_panes(spec), task.systems, strict=True))) or ""
    return task.systems[cell[1]]


def _panes(spec: RatingsSpec) -> list[str]:
    return [c.name for c in spec.candidates]
