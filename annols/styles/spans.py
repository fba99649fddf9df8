"""Spans: label spans in a target text.

Optional context panes (plain text, or paragraphs that take labels of their own), a
per-span question for some labels (asked when such a span is selected), spans that must
be linked to another span (a relation), an explicit "none found" answer and task-level
questions.

The target may be a conversation (``kind = "conversation"``: a list of ``{role, content}``
messages): it shows as a dialogue (Label Studio's ``Paragraphs``, one item per message) with
``ParagraphLabels``, and a span is marked inside a message. A region there holds the
message's index and character offsets into its content (Label Studio 1.23's
``start``/``end`` item indexes and ``startOffset``/``endOffset``); its :class:`Span` names
the message (``message``, from 0) with ``start``/``end`` in that message's content. A
region dragged across messages becomes one span per message it covers. Error scores and
span agreement read the conversation as one text, its messages joined by a blank line.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from lxml import etree

from annols.definition import (
    Choice,
    Definition,
    Label,
    Pane,
    Question,
    Table,
    parse_labels,
    parse_pane,
    parse_panes,
    parse_question,
)
from annols.definition.fields import variable
from annols.definition.keys import REQUIRED, Key, Section
from annols.definition.markup import (
    choices_el,
    conversation_style,
    el,
    has_slider,
    header,
    labels_el,
    pane,
    question_block,
    slider_style,
    textarea_el,
)
from annols.styles import judgments
from annols.styles.answers import ExportedAnnotation, ExportedTask


@dataclass(frozen=True)
class Weight:
    """What a span weighs in the error score (MQM): spans with this label and/or this per-span answer code."""

    weight: float
    label: str | None = None
    answer: str | None = None


@dataclass(frozen=True)
class SpansSpec:
    context: tuple[Pane, ...]
    target: Pane
    labels_name: str
    labels: tuple[Label, ...]
    none_answer: str | None
    questions: tuple[Question, ...]
    weights: tuple[Weight, ...] = ()  # [[spans.weights]]: a span's weight is the most specific that matches
    span_questions: tuple[Question, ...] = ()  # [[spans.questions]]: asked of every span of the target

    def weight_of(self, label: str, answers: Iterable[str]) -> float:
        """A span's weight: the entry naming its label and one of its answer codes, else its label only,
        else one of its answers only; 0 when none matches (a span the definition does not score)."""
        codes = set(answers)
        for entry in sorted(self.weights, key=lambda w: -((w.label is not None) * 2 + (w.answer is not None))):
            if (entry.label is None or entry.label == label) and (entry.answer is None or entry.answer in codes):
                return entry.weight
        return 0.0


KEYS = (
    Key("target", "table", "The text annotators mark spans in (kind `text`).", REQUIRED, of="pane"),
    Key("spans", "table", "The span labels and what is asked of each span.", REQUIRED, of="spans"),
)
SECTIONS = (
    Section("spans", "`[spans]`", "The span labels (spans style).", (
        Key("name", "name", "The labels control's name.", REQUIRED),
        Key("labels", "tables", "The labels.", REQUIRED, of="label"),
        Key("none_answer", "string", "An explicit answer when nothing is marked (e.g. `No errors`)."),
        Key("questions", "tables", "Asked of every span whatever its label (e.g. MQM's severity).", of="question"),
        Key("weights", "tables", "Error weights: a span weighs the most specific entry that matches it.",
            of="weight"),
    )),
    Section("weight", "`[[spans.weights]]`", "A weight of a label, an answer code of a per-span question, or both.", (
        Key("weight", "number", "The weight (required).", None),
        Key("label", "string", "A label's value."),
        Key("answer", "string", "An answer code of a per-span question."),
    )),
)


def parse(t: Table) -> SpansSpec:
    target_table = t.table("target", required=True)
    assert target_table is not None
    target = parse_pane(target_table)
    if target.kind not in ("text", "conversation"):
        raise t.fail("target.kind", "the span target must be of kind 'text' or 'conversation'")
    spans = t.table("spans", required=True)
    assert spans is not None
    spec = SpansSpec(
        context=parse_panes(t, "context"),
        target=target,
        labels_name=spans.name("name"),
        labels=parse_labels(spans, "labels", required=True),
        none_answer=spans.text("none_answer"),
        questions=tuple(parse_question(q) for q in t.tables("questions")),
        weights=_parse_weights(spans),
        span_questions=tuple(parse_question(q) for q in spans.tables("questions")),
    )
    spans.check_unknown()
    return spec


def _parse_weights(spans: Table) -> tuple[Weight, ...]:
    labels = parse_labels(spans, "labels", required=True)
    values = [lab.value for lab in labels]
    asked = [lab.question for lab in labels if lab.question]
    asked += [parse_question(q) for q in spans.tables("questions")]
    codes = {c.code for q in asked for c in q.all_choices}
    out = []
    for w in spans.tables("weights"):
        weight = w.real("weight", None)
        if weight is None:
            raise w.fail("weight", "missing; expected a number")
        entry = Weight(weight=weight, label=w.text("label"), answer=w.text("answer"))
        w.check_unknown()
        if entry.label is None and entry.answer is None:
            raise w.fail("label", "a weight names a label, an answer code of a per-span question, or both")
        if entry.label is not None and entry.label not in values:
            raise w.fail("label", f"{entry.label!r} is not one of the labels {values}")
        if entry.answer is not None and entry.answer not in codes:
            raise w.fail("answer", f"{entry.answer!r} is not an answer code of a per-span question {sorted(codes)}")
        out.append(entry)
    return tuple(out)


def data_fields(spec: SpansSpec) -> list[str]:
    fields = [p.name for p in spec.context] + [spec.target.name]
    fields += [lab.question.options_from for lab in spec.labels if lab.question and lab.question.options_from]
    for p in spec.context:
        fields += [lab.question.options_from for lab in p.labels if lab.question and lab.question.options_from]
    return fields


def build_config(d: Definition) -> etree._Element:
    spec: SpansSpec = d.spec
    root = el("View")
    if has_slider(spec.questions):  # a per-item or per-candidate slider (ESA's score)
        root.append(slider_style())
    for p in spec.context:
        root.append(pane(p))

    target = el("View", style="margin-bottom: 1em")
    target.append(header(spec.target.title))
    if spec.target.note:
        target.append(header(spec.target.note, size=6, style="color: #a33"))
    if spec.target.kind == "conversation":  # spans inside one message of a dialogue
        target.append(labels_el("ParagraphLabels", spec.labels_name, spec.target.name, spec.labels))
        target.append(conversation_style())
        target.append(el("Paragraphs", name=spec.target.name, value=variable(spec.target.name), layout="dialogue",
                         nameKey="role", textKey="content", granularity=spec.target.granularity or None))  # fmt: skip
    else:
        target.append(labels_el("Labels", spec.labels_name, spec.target.name, spec.labels))
        target.append(el("Text", name=spec.target.name, value=variable(spec.target.name),
                         granularity=spec.target.granularity or None))  # fmt: skip
    root.append(target)

    for label in spec.labels:
        if label.links_to:
            # Only shown while such a span is selected: how to draw the link.
            hint = el("View", visibleWhen="region-selected", whenTagName=spec.labels_name,
                      whenLabelValue=label.value)  # fmt: skip
            hint.append(header(
                f"Link this {label.value} span to the {label.links_to} it refers to: mark that text "
                f"as {label.links_to}, then, with this span selected, click the link icon (Create "
                f"Relation, Alt+R) in the region details on the right and click the {label.links_to} "
                f"span (in the text or in the Regions list).", size=6))  # fmt: skip
            root.append(hint)
        if label.question:
            root.append(_region_question(label, label.question, spec.labels_name, spec.target.name))
    for p in spec.context:
        for label in p.labels:
            if label.question:
                root.append(_region_question(label, label.question, f"{p.name}_labels", p.name))
    for q in spec.span_questions:
        root.append(_region_question(None, q, spec.labels_name, spec.target.name))

    none_q = none_question(spec)
    if none_q is not None:
        root.append(question_block(none_q, spec.target.name))
    for q in spec.questions:
        root.append(question_block(q, spec.target.name, radio=True))
    return root


def _region_question(label: Label | None, q: Question, labels_name: str, to_name: str) -> etree._Element:
    """A per-span question, visible (and required) only for spans with this label (any label: None).

    The visibility attributes sit on the control itself as well as on its View: the
    editor's per-region ``required`` check reads them from the control only.
    """
    when: dict[str, Any] = {"visibleWhen": "region-selected", "whenTagName": labels_name}
    if label is not None:
        when["whenLabelValue"] = label.value
    block = el("View", style="margin-top: 0.5em", **when)
    block.append(header(q.text, size=5))
    if q.hint:
        block.append(header(q.hint, size=6, style="font-weight: normal; color: #555"))
    if q.kind == "text":
        block.append(textarea_el(q, to_name, perRegion=True, **when))
    else:
        block.append(choices_el(q, to_name, per_region=True, **when))
    return block


def span_controls(spec: SpansSpec) -> dict[str, tuple[Label, ...]]:
    """Every labels control of the config -> its labels: the target's, then each paragraphs pane's."""
    controls = {spec.labels_name: spec.labels}
    controls.update({f"{p.name}_labels": p.labels for p in spec.context if p.labels})
    return controls


def none_question(spec: SpansSpec) -> Question | None:
    """The explicit "nothing found" answer, as the task-level question the config asks."""
    if not spec.none_answer:
        return None
    return Question(name=f"{spec.labels_name}_none", text="If you found no span to mark:",
                    choices=(Choice(code=spec.none_answer, text=spec.none_answer),))  # fmt: skip


def decode(spec: SpansSpec, task: ExportedTask, annotation: ExportedAnnotation) -> list[judgments.Judgment]:
    """A span per labelled region (one per label if a region has several), with its per-span answers
    and the regions it is linked to; then the "none found" answer and the task-level questions.

    Offsets are half-open: characters of the target text, or paragraph indexes of a
    paragraphs pane (``end`` one past the last paragraph). The system is the task's, when
    it names exactly one (the system that wrote the target text).
    """
    controls = span_controls(spec)
    system = task.systems[0] if len(task.systems) == 1 else ""
    answers: dict[str, dict[str, tuple[str, ...]]] = {}
    links: dict[str, list[str]] = {}
    for item in annotation.result:
        kind, region = item.get("type"), str(item.get("id", ""))
        if kind == "relation":
            source, to = _relation_ends(item)
            links.setdefault(source, []).append(to)
        elif kind in ("choices", "textarea") and region and item.get("from_name") not in controls:
            value = item.get("value") or {}
            written = "\n".join(str(t) for t in _listed(value.get("text")))
            given = _listed(value.get("choices")) if kind == "choices" else [written]
            if given:
                answers.setdefault(region, {})[str(item.get("from_name"))] = tuple(str(g) for g in given)
    out: list[judgments.Judgment] = []
    for item in annotation.result:
        control = str(item.get("from_name", ""))
        value = item.get("value") or {}
        labels = value.get("labels") or value.get("paragraphlabels") or []
        if control not in controls or not labels:
            continue
        region = str(item.get("id", ""))
        if "startOffset" in value and control == spec.labels_name and spec.target.kind == "conversation":
            for message, start, end, text in _in_messages(task.data.get(spec.target.name), value):
                out.extend(judgments.Span(control, str(label), start, end, text, region, system,
                                          answers.get(region, {}), tuple(links.get(region, ())), message=message)
                           for label in labels)  # fmt: skip
            continue
        first, last = _offset(value.get("start")), _offset(value.get("end"))
        if first is None or last is None:
            continue  # offsets that are no whole numbers: no span (unread names it)
        # a paragraphs pane: paragraph indexes (as strings), the end inclusive
        start, end = (first, last + 1) if "startOffset" in value else (first, last)
        for label in labels:
            out.append(judgments.Span(control, str(label), start, end, str(value.get("text", "")), region, system,
                                      answers.get(region, {}), tuple(links.get(region, ()))))  # fmt: skip
    none = none_question(spec)
    questions = (none, *spec.questions) if none else spec.questions
    return out + judgments.question_answers(questions, annotation.result, system)


def _listed(value: Any) -> list[Any]:
    """An answer's choices or texts as a list: a lone string (which the editor does not write) is one."""
    return [value] if isinstance(value, str) else list(value or [])


def _offset(value: Any) -> int | None:
    """An offset or paragraph index as exported (a number, or its digits as a string); None when it is no
    whole number (missing, true/false, a fraction, words, null): a region without offsets is no span, none guessed."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value)
    return None


def _relation_ends(item: dict[str, Any]) -> tuple[str, str]:
    """(from region, to region) of a relation: a relation drawn pointing left (``direction: "left"``) goes
    from its ``to_id`` to its ``from_id``."""
    ends = (str(item.get("from_id")), str(item.get("to_id")))
    return (ends[1], ends[0]) if item.get("direction") == "left" else ends


def unread(spec: SpansSpec, task: ExportedTask, annotation: ExportedAnnotation) -> list[tuple[str, str]]:
    """(rule, what was there) for each part of an annotation's result :func:`decode` reads no judgment from:

    - ``unreadable-span``: a region of a labels control without a label, or with offsets that are no whole
      numbers;
    - ``unreadable-answer``: a per-span answer on a region that is no labelled span;
    - ``unreadable-link``: a relation from or to a region that is no labelled span.

    The formats name these in violations.csv and leave them out of their result files, as every table does."""
    controls = span_controls(spec)
    asked = {q.name for q in spec.span_questions}  # the per-span questions
    asked |= {label.question.name for labels in controls.values() for label in labels if label.question}
    spans: set[str] = set()
    out: list[tuple[str, str]] = []
    for item in annotation.result:
        control = str(item.get("from_name", ""))
        if control not in controls or item.get("type") == "relation":
            continue
        value = item.get("value") or {}
        region = str(item.get("id", ""))
        if not (value.get("labels") or value.get("paragraphlabels")):
            out.append(("unreadable-span", f"{control} region {region!r} {_shown(value.get('text', ''))} has no label"))
        elif _offset(value.get("start")) is None or _offset(value.get("end")) is None:
            out.append(("unreadable-span", f"{control} region {region!r} {_shown(value.get('text', ''))} has offsets "
                        f"{value.get('start')!r}-{value.get('end')!r}, not whole numbers"))  # fmt: skip
        else:
            spans.add(region)
    for item in annotation.result:
        kind, region = item.get("type"), str(item.get("id", ""))
        if kind == "relation":
            source, to = _relation_ends(item)
            lost = [r for r in (source, to) if r not in spans]
            if lost:
                out.append(("unreadable-link", f"relation {source!r} -> {to!r}: no labelled span {lost[0]!r}"))
        elif kind in ("choices", "textarea") and item.get("from_name") in asked and region not in spans:
            out.append(("unreadable-answer", f"{item.get('from_name')} answer on region {region!r}, which is no "
                        "labelled span"))  # fmt: skip
    return out


def _shown(text: Any) -> str:
    text = str(text)
    return repr(text if len(text) <= 40 else text[:37] + "...")


def _in_messages(messages: Any, value: dict[str, Any]) -> list[tuple[int, int, int, str]]:
    """(message, start, end, text) of a region of a conversation: offsets into each message's content; a region
    across messages covers the first from its start offset, the last up to its end offset, whole ones between."""
    first, last = int(value.get("start", 0)), int(value.get("end", 0))
    contents = [str(m.get("content", "")) if isinstance(m, dict) else "" for m in messages] \
        if isinstance(messages, list) else []  # fmt: skip
    if first == last or not contents:
        start, end = int(value.get("startOffset", 0)), int(value.get("endOffset", 0))
        text = contents[first][start:end] if first < len(contents) else str(value.get("text", ""))
        return [(first, start, end, text)]
    out = []
    for message in range(first, min(last, len(contents) - 1) + 1):
        start = int(value.get("startOffset", 0)) if message == first else 0
        end = int(value.get("endOffset", 0)) if message == last else len(contents[message])
        if start < end:
            out.append((message, start, end, contents[message][start:end]))
    return out


def system_of(spec: SpansSpec, task: ExportedTask, from_name: str, answer: str) -> str:
    """Every answer about a text is about the system that wrote it, when the task names one."""
    return task.systems[0] if len(task.systems) == 1 else ""
