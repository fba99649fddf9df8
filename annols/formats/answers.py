"""Answers by control name: the one way annols reads judgments given outside the editor.

A judge file (:mod:`annols.study.judges`) and an own definition's input with judgments
(:mod:`annols.formats.generic`) both name answers by the labeling config's control: a
code for a choice, a number for a slider, a string for a text question, a nested object
for the cells of a grid, and ``spans`` for labelled spans. :func:`controls` reads what
each control accepts from the config; :func:`answer_items` checks each answer against its
control and makes the Label Studio result items, refusing what does not fit with the
field named.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from lxml import etree

from annols.definition import Definition
from annols.protocols.config import label_config

JUDGE_PREFIX = "judge:"
SOURCE_JUDGE = "judge"
SPAN_FIELDS = {"label", "start", "end", "text", "control", "answers"}
JUDGE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")  # a judge's name: letters, digits, .-_


def annotator_name(judge: str) -> str:
    return JUDGE_PREFIX + judge


def is_judge(annotator: str) -> bool:
    return annotator.startswith(JUDGE_PREFIX)


@dataclass(frozen=True)
class Control:
    """One control of the labeling config a judge may answer."""

    name: str
    kind: str  # choices, number, textarea, labels
    to_name: str
    codes: tuple[str, ...] = ()  # choices: the codes; labels: the label values
    code_of_text: dict[str, str] = field(default_factory=dict)
    multiple: bool = False
    dynamic: bool = False  # choices taken from task data: any code
    low: float = -math.inf
    high: float = math.inf
    required: bool = False  # required, and never hidden by a View's visibleWhen
    per_region: bool = False  # answered per span (perRegion): in a span's own answers
    for_labels: tuple[str, ...] = ()  # per region: the span labels it is asked for (empty: every label)


def controls(definition: Definition) -> dict[str, Control]:
    """The controls of the definition's config, by name: task-level ones, and the per-region ones a span's own
    ``answers`` take (``per_region``; those of a Paragraphs region are left out)."""
    root = etree.fromstring(label_config(definition).encode("utf-8"))
    out: dict[str, Control] = {}
    for node in root.iter():
        tag, name, to_name = node.tag, node.get("name"), node.get("toName", "")
        if not isinstance(tag, str) or name is None:
            continue
        if any(v.tag == "Repeater" for v in node.iterancestors()):
            continue  # asked once per turn of a task field (ratings per_turn): not given by control name
        if node.get("perRegion") == "true":
            if tag in ("Choices", "TextArea"):
                # Asked for the spans of one label where a View (or the control) names it.
                shown = [str(v.get("whenLabelValue")) for v in (node, *node.iterancestors()) if v.get("whenLabelValue")]
                out[name] = replace(_control(node, tag, name, to_name, node.get("required") == "true"),
                                    per_region=True, for_labels=tuple(shown[:1]))  # fmt: skip
            continue
        # The editor skips required for a control inside a hidden View: required only when always shown.
        required = node.get("required") == "true" and not any(v.get("visibleWhen") for v in node.iterancestors())
        if tag in ("Choices", "Number", "TextArea", "Labels", "ParagraphLabels"):
            out[name] = _control(node, tag, name, to_name, required)
    return out


def _control(node: Any, tag: str, name: str, to_name: str, required: bool) -> Control:
    if tag == "Choices":
        choices = [c for c in node if c.tag == "Choice"]
        codes = tuple(c.get("alias") or c.get("value") or "" for c in choices)
        texts = {c.get("value") or "": c.get("alias") or c.get("value") or "" for c in choices}
        return Control(name, "choices", to_name, codes, texts, node.get("choice") == "multiple",
                       dynamic=bool(node.get("value")), required=required)  # fmt: skip
    if tag == "Number":
        return Control(name, "number", to_name, low=float(node.get("min", "-inf")),
                       high=float(node.get("max", "inf")), required=required)  # fmt: skip
    if tag == "TextArea":
        return Control(name, "textarea", to_name, required=required)
    labels = tuple(c.get("value") or "" for c in node if c.tag == "Label")
    return Control(name, "labels" if tag == "Labels" else "paragraphlabels", to_name, labels)


def answer_items(
    answers: dict[str, Any], known: dict[str, Control], fail: Any, *, prefix: str = "answers.", origin: str = "judge"
) -> tuple[list[dict[str, Any]], list[tuple[str, str, dict[str, Any]]]]:
    """Label Studio result items (and spans still to be placed) for answers by control name, each checked
    against its control; ``fail(field, problem)`` makes the error, the field named ``{prefix}{name}``.
    ``origin`` is the items' origin: ``judge``, or ``manual`` for judgments made by people elsewhere."""
    result: list[dict[str, Any]] = []
    spans: list[tuple[str, str, dict[str, Any]]] = []
    for name, value in answers.items():
        if name == "spans":
            spans.extend(_spans(value, known, fail))
            continue
        if isinstance(value, dict):
            for sub, cell in value.items():
                control = _cell_control(name, str(sub), known)
                if control is None:
                    raise fail(f"{prefix}{name}.{sub}", f"no control {name}_{sub} in the config; "
                               f"controls: {_names(known)}")  # fmt: skip
                result.append(_item(control, cell, lambda p, f=f"{prefix}{name}.{sub}": fail(f, p), origin))
            continue
        control = known.get(name)
        if control is not None and control.per_region:
            raise fail(f"{prefix}{name}", "is asked per span: give it in a span's answers "
                       '({"label": ..., "text": ..., "answers": {"' + name + '": ...}})')  # fmt: skip
        if control is None or control.kind in ("labels", "paragraphlabels"):
            raise fail(f"{prefix}{name}", f"no such control in the config; controls: {_names(known)}")
        result.append(_item(control, value, lambda p, f=f"{prefix}{name}": fail(f, p), origin))
    return result, spans


def _names(known: dict[str, Control]) -> str:
    names = [n for n, c in known.items() if c.kind not in ("labels", "paragraphlabels") and not c.per_region]
    shown = ", ".join(names[:12]) + (", ..." if len(names) > 12 else "")
    return shown + (", spans" if any(c.kind == "labels" for c in known.values()) else "")


def _cell_control(name: str, sub: str, known: dict[str, Control]) -> Control | None:
    for candidate in (f"{name}_{sub}", f"{name}_{sub.lower()}"):
        if candidate in known and known[candidate].kind not in ("labels", "paragraphlabels") and not \
                known[candidate].per_region:
            return known[candidate]
    return None


def _item(control: Control, value: Any, fail: Any, origin: str = "judge") -> dict[str, Any]:
    # A judge's items are told apart by their id; the editor's (and imported studies') carry the control's name.
    ident = f"judge-{control.name}" if origin == "judge" else control.name
    base = {"id": ident, "from_name": control.name, "to_name": control.to_name, "origin": origin}
    if control.kind == "choices":
        given = value if isinstance(value, list) else [value]
        codes: list[str] = []
        for v in given:
            if isinstance(v, bool) or not isinstance(v, str | int | float):
                raise fail(f"{v!r} is not a code")
            code = str(int(v)) if isinstance(v, float) and v.is_integer() else str(v)
            code = control.code_of_text.get(code, code) if code not in control.codes else code
            if not control.dynamic and code not in control.codes:
                raise fail(f"{code!r} is not one of the codes {list(control.codes)}")
            codes.append(code)
        if not codes or (len(codes) > 1 and not control.multiple):
            raise fail(f"give exactly one code of {list(control.codes)}")
        return {**base, "type": "choices", "value": {"choices": codes}}
    if control.kind == "number":
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            raise fail(f"{value!r} is not a number")
        if not control.low <= value <= control.high:
            raise fail(f"{value} is off the scale {control.low:g} to {control.high:g}")
        return {**base, "type": "number", "value": {"number": value}}
    if not isinstance(value, str):
        raise fail("a text answer must be a string")
    return {**base, "type": "textarea", "value": {"text": [value]}}


def refusal(control: Control, value: Any) -> str:
    """Why ``value`` is no answer ``control`` accepts (a code it does not offer, two codes for one choice, a number
    off its scale), in words; "" when it is one."""

    def fail(problem: str) -> ValueError:
        return ValueError(problem)

    try:
        _item(control, value, fail)
    except ValueError as e:
        return str(e)
    return ""


def _spans(value: Any, known: dict[str, Control], fail: Any) -> Iterator[tuple[str, str, dict[str, Any]]]:
    labels = [c for c in known.values() if c.kind == "labels"]
    if not labels:
        raise fail("answers.spans", "this config has no span labels")
    if not isinstance(value, list):
        raise fail("answers.spans", "must be a list of {label, start, end} or {label, text}")
    for i, span in enumerate(value):
        where = f"answers.spans[{i}]"
        if not isinstance(span, dict):
            raise fail(where, "must be an object {label, start, end} or {label, text}")
        unknown = sorted(set(span) - SPAN_FIELDS)
        if unknown:
            raise fail(f"{where}.{unknown[0]}", f"unknown field; a span has {sorted(SPAN_FIELDS)}")
        name = span.get("control", labels[0].name)
        control = known.get(name) if isinstance(name, str) else None
        if control is None or control.kind != "labels":
            raise fail(f"{where}.control", f"{name!r} is not a labels control: {[c.name for c in labels]}")
        if span.get("label") not in control.codes:
            raise fail(f"{where}.label", f"{span.get('label')!r} is not one of the labels {list(control.codes)}")
        offsets = "start" in span or "end" in span
        if offsets:
            for key in ("start", "end"):
                v = span.get(key)
                if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                    raise fail(f"{where}.{key}", "must be a character offset (a whole number, 0 or more)")
            if span["end"] <= span["start"]:
                raise fail(f"{where}.end", "must be after start")
        elif not isinstance(span.get("text"), str) or not span.get("text"):
            raise fail(where, "give start and end, or the quoted text")
        items = list(_span_answers(span, known, where, fail))
        yield control.name, control.to_name, {**span, "_where": where, "_answers": items}


def _span_answers(span: dict[str, Any], known: dict[str, Control], where: str, fail: Any) -> Iterator[dict[str, Any]]:
    """A span's own answers (the config's per-region questions, MQM's severity) as result items, still to be
    placed on the span."""
    answers = span.get("answers", {})
    if not isinstance(answers, dict):
        raise fail(f"{where}.answers", "must be an object of per-span question -> answer")
    for name, value in answers.items():
        control = known.get(name)
        if control is None or not control.per_region:
            asked = [n for n, c in known.items() if c.per_region]
            raise fail(f"{where}.answers.{name}", f"no per-span question {name!r} in the config; per-span "
                       f"questions: {', '.join(asked) or 'none'}")  # fmt: skip
        if control.for_labels and span.get("label") not in control.for_labels:
            raise fail(f"{where}.answers.{name}", f"is asked for spans labelled {', '.join(control.for_labels)} "
                       f"only, not {span.get('label')!r}")  # fmt: skip
        yield _item(control, value, lambda p, f=f"{where}.answers.{name}": fail(f, p))


def place_span(fail: Any, control: str, to_name: str, span: dict[str, Any], text: Any, region: str,
               known: dict[str, Control] | None = None) -> list[dict[str, Any]]:  # fmt: skip
    """A span (as :func:`answer_items` left it) as a Label Studio labels result on ``text``, the target text, and
    its own answers as results of the same region id, as the editor stores a per-region answer: each span its own
    region, so two spans on the same words are two errors. Refused (``fail(field, problem)``) when it does not fit
    the text, or, given ``known``, when a per-span question the editor requires of it is unanswered."""
    where = span["_where"]
    if not isinstance(text, str):
        raise fail(where, f"the task has no text {to_name!r} to place the span on")
    if "start" in span:
        start, end = span["start"], span["end"]
        if end > len(text):
            raise fail(f"{where}.end", f"{end} is past the end of the text ({len(text)} characters)")
        if isinstance(span.get("text"), str) and text[start:end] != span["text"]:
            raise fail(f"{where}.text", f"{span['text']!r} is not the text at {start}-{end} ({text[start:end]!r})")
    else:
        start = text.find(span["text"])
        if start < 0:
            raise fail(f"{where}.text", f"{span['text']!r} is not in the text")
        end = start + len(span["text"])
    if known is not None:
        given: dict[str, Any] = span["answers"] if isinstance(span.get("answers"), dict) else {}
        for name, c in known.items():
            if c.per_region and c.required and name not in given and c.to_name == to_name and \
                    (not c.for_labels or span["label"] in c.for_labels):
                raise fail(f"{where}.answers.{name}", "missing; the editor requires it of every such span")
    placed = {"start": start, "end": end, "text": text[start:end]}
    origin = "judge" if region.startswith("judge-") else "manual"
    answers = [{**item, "id": region, "origin": origin, "value": {**placed, **item["value"]}}
               for item in span.get("_answers", ())]  # fmt: skip
    return [{"id": region, "from_name": control, "to_name": to_name, "type": "labels", "origin": origin,
             "value": {**placed, "labels": [span["label"]]}}, *answers]  # fmt: skip
