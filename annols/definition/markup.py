"""Building Label Studio config XML and guideline HTML with lxml.

Nothing here formats markup with strings: every user-supplied text goes through lxml,
which escapes ``<``, ``&`` and quotes. Output is deterministic (attribute order is the
order the builders set them, no timestamps, no ids from memory addresses).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any

from lxml import etree
from lxml import html as lxml_html

from annols.definition import Choice, Label, Pane, Question
from annols.definition.fields import variable

# Label colours, assigned in order so the same definition always gets the same config.
PALETTE = (
    "#e6194b", "#3cb44b", "#4363d8", "#f58231", "#911eb4",
    "#42d4f4", "#f032e6", "#9a6324", "#808000", "#469990",
)  # fmt: skip


def el(tag: str, *children: etree._Element | None, **attrs: Any) -> etree._Element:
    """An element with attributes in the given order; ``None`` attributes and children are left out."""
    node = etree.Element(tag)
    for key, value in attrs.items():
        if value is None or value is False:
            continue
        node.set(key, _attr(value))
    for child in children:
        if child is not None:
            node.append(child)
    return node


def _attr(value: Any) -> str:
    if value is True:
        return "true"
    return str(value)


def shown(text: str) -> str:
    """Display text for attributes Label Studio reads as a task field when they start with ``$``."""
    return "\u200b" + text if text.startswith("$") else text


def to_xml(root: etree._Element) -> str:
    etree.indent(root, space="  ")
    return etree.tostring(root, encoding="unicode", pretty_print=True)


def header(text: str, size: int = 4, style: str | None = None) -> etree._Element:
    return el("Header", value=shown(text), size=size, style=style)


def pane(p: Pane, *, labelable: bool = False) -> etree._Element:
    """A titled block showing one task field (Text or Paragraphs), with paragraph labels if any."""
    style = "margin-bottom: 1em"
    if p.note:
        # Context the annotator must not judge gets a muted, dashed frame.
        style += "; border: 1px dashed #999; padding: 0.5em; background: #f6f6f6"
    # An optional pane (a context some records leave empty) is hidden by CSS while its Text is empty:
    # Label Studio needs the field in every task (push sends ""), and its View shows on no data condition.
    block = el("View", style=style, className=OPTIONAL if p.optional else None)
    if p.optional:
        block.append(optional_style())
    block.append(header(p.title))
    if p.note:
        block.append(header(p.note, size=6, style="color: #a33"))
    if p.kind == "paragraphs":
        if p.labels:
            block.append(labels_el("ParagraphLabels", f"{p.name}_labels", p.name, p.labels))
        block.append(paragraphs_style())
        block.append(el("Paragraphs", name=p.name, value=variable(p.name), nameKey="ref", textKey="text"))
    elif p.kind == "conversation":  # OpenAI / Hugging Face chat messages, shown as a dialogue (plain text)
        block.append(conversation_style())
        block.append(el("Paragraphs", name=p.name, value=variable(p.name), layout="dialogue", nameKey="role",
                        textKey="content"))
    else:
        block.append(el("Text", name=p.name, value=variable(p.name), selectionEnabled=None if labelable else "false"))
    return block


# Paragraphs is built for transcripts: each item shows a "00:00:00 - 00:00:00" time and
# the pane a "Show all authors" filter, both meaningless for passage sentences. The
# editor's CSS-module class names carry a hash, hence the prefix match.
PARAGRAPHS_CSS = '.lsf-paragraphs [class*="time--"], .lsf-paragraphs [class*="wrapper_header--"] { display: none; }'


OPTIONAL = "annols-optional"  # the class of an optional pane's View
# The editor shows a Text as one line element per line of the task field: a single empty one when the
# record left it empty (a blank line inside a text is an empty line among others, still shown). Seen in
# Chromium on Label Studio 1.23 (tests/browser/test_optional_panes.py). No '>': the editor puts the
# config's escaped text into the page as it is ("&gt;"), which no browser reads as CSS.
OPTIONAL_CSS = f".{OPTIONAL}:has(.lsf-htx-richtext .lsf-richtext__line:only-child:empty) {{ display: none; }}"


def optional_style() -> etree._Element:
    node = el("Style")
    node.text = OPTIONAL_CSS
    return node


# A conversation's messages: long ones wrap and keep their line breaks; the dialogue layout's
# audio-player parts (times, author filter) are hidden as for passages.
CONVERSATION_CSS = (PARAGRAPHS_CSS + ' .lsf-paragraphs [class*="phrase--"] { white-space: pre-wrap; '
                    "overflow-wrap: anywhere; max-width: 100%; }")


def conversation_style() -> etree._Element:
    node = el("Style")
    node.text = CONVERSATION_CSS
    return node


def paragraphs_style() -> etree._Element:
    node = el("Style")
    node.text = PARAGRAPHS_CSS
    return node


def labels_el(tag: str, name: str, to_name: str, labels: tuple[Label, ...]) -> etree._Element:
    node = el(tag, name=name, toName=to_name)
    for i, label in enumerate(labels):
        node.append(
            el("Label", value=label.value, hint=label.hint or None,
               background=label.color or PALETTE[i % len(PALETTE)])
        )  # fmt: skip
    return node


def choices_el(
    q: Question,
    to_name: str,
    *,
    name: str | None = None,
    inline: bool = False,
    per_region: bool = False,
    radio: bool = False,
    **visibility: str,
) -> etree._Element:
    """A Choices control for a question; answer codes are stored via ``alias`` when they differ."""
    # single-radio cannot be cleared; plain single can, which optional answers need.
    mode = "multiple" if q.multiple else "single-radio" if (radio and q.required) else "single"
    node = el(
        "Choices",
        name=name or q.name,
        toName=to_name,
        choice=mode,
        showInline=inline or None,
        required=q.required or None,
        requiredMessage=f"Please answer: {q.text}" if q.required else None,
        perRegion=per_region or None,
        value=variable(q.options_from) if q.options_from else None,
        **visibility,
    )
    for c in q.choices:
        node.append(choice_el(c))
    for title, group in q.groups:
        node.append(header(title, size=6))
        for c in group:
            node.append(choice_el(c))
    return node


def choice_el(c: Choice) -> etree._Element:
    return el("Choice", value=c.text, alias=c.code if c.code != c.text else None, hint=c.hint or None)


def textarea_el(q: Question, to_name: str, *, name: str | None = None, **attrs: Any) -> etree._Element:
    return el(
        "TextArea",
        name=name or q.name,
        toName=to_name,
        rows=attrs.pop("rows", 3),
        editable=True,
        maxSubmissions=1,
        required=q.required or None,
        requiredMessage=f"Please answer: {q.text}" if q.required else None,
        placeholder=q.placeholder or None,
        **attrs,
    )


def question_block(q: Question, to_name: str, *, name: str | None = None, **choice_opts: Any) -> etree._Element:
    """A question with its text above the answers."""
    block = el("View", style="margin-top: 0.5em")
    block.append(header(q.text, size=5))
    if q.hint:
        block.append(header(q.hint, size=6, style="font-weight: normal; color: #555"))
    if q.kind == "text":
        block.append(textarea_el(q, to_name, name=name))
    elif q.kind in ("number", "slider"):
        block.append(number_el(q, to_name, name=name))
    elif q.kind == "scale":
        block.append(choices_el(q, to_name, name=name, **{**choice_opts, "inline": True, "radio": True}))
    else:
        block.append(choices_el(q, to_name, name=name, **choice_opts))
    return block


# The editor's range input is narrow by default; a line for direct assessment should be long.
# Until moved it holds no value (its ``value`` attribute is empty) but its thumb rests
# mid-way: faded, it does not look like a score of 50.
SLIDER_CSS = (
    ".lsf-number { flex: 1 1 auto; } .lsf-number input[type=range] { flex: 1 1 auto; min-width: 16em; } "
    '.lsf-number input[type=range][value=""] { opacity: 0.35; }'
)


def slider_style() -> etree._Element:
    node = el("Style")
    node.text = SLIDER_CSS
    return node


def has_slider(questions: Iterable[Question]) -> bool:
    return any(q.kind == "slider" for q in questions)


def _number(value: float | None) -> str | None:
    return None if value is None else f"{value:g}"


def number_el(q: Question, to_name: str, *, name: str | None = None) -> etree._Element:
    """A number in a range (Label Studio's Number), or a slider with its anchors at either end; required
    answers are refused empty by the editor (an untouched slider holds no value)."""
    number = el("Number", name=name or q.name, toName=to_name, slider=q.kind == "slider", min=_number(q.min),
                max=_number(q.max), step=_number(q.step), required=q.required or None,
                requiredMessage=f"Please answer: {q.text}" if q.required else None)  # fmt: skip
    if q.kind != "slider":
        return number
    line = el("View", style="display: flex; align-items: center; gap: 1em")
    line.append(header(q.low or _number(q.min) or "", size=6, style="font-weight: normal; white-space: nowrap"))
    line.append(number)
    line.append(header(q.high or _number(q.max) or "", size=6, style="font-weight: normal; white-space: nowrap"))
    return line


def for_candidate(q: Question, candidate: Pane, several: bool) -> Question:
    """A per-candidate question as asked of one candidate pane: its own control, named in its text when the
    task shows several candidates."""
    if not several:
        return q
    return replace(q, name=q.control(candidate.name), text=f"{q.text}, {candidate.title}")


def candidate_blocks(questions: Sequence[Question], candidate: Pane, several: bool) -> list[etree._Element]:
    """The per-candidate questions of one candidate pane, each a block asked of its text."""
    return [question_block(for_candidate(q, candidate, several), candidate.name, radio=True)
            for q in questions if q.per_candidate]  # fmt: skip


# --- guideline text -> instructions HTML -------------------------------------------------

_NUMBERED = re.compile(r"^\d+[.)]\s+")


def guideline_html(text: str, title: str) -> str:
    """Render a guideline written in a small plain-text markup as HTML.

    Blocks are separated by blank lines. ``# `` and ``## `` start headings, lines starting
    with ``- `` make a bulleted list, ``1. `` a numbered one, ``> `` a quoted example
    (line breaks kept). Anything else is a paragraph. All text is escaped.
    """
    root = lxml_html.Element("div")
    root.append(_h("h2", title))
    for block in _blocks(text):
        for kind, lines in _runs(block):
            if kind == "h3":
                root.append(_h("h3", lines[0][2:]))
            elif kind == "h4":
                root.append(_h("h4", lines[0][3:]))
            elif kind == "quote":
                quote = lxml_html.Element(
                    "blockquote",
                    style="border-left: 3px solid #ccc; margin: 0.5em 0; padding-left: 0.8em; color: #333",
                )
                _lines_into(quote, [line[2:] for line in lines])
                root.append(quote)
            elif kind == "ul":
                root.append(_list("ul", [line[2:] for line in lines]))
            elif kind == "ol":
                root.append(_list("ol", [_NUMBERED.sub("", line) for line in lines]))
            else:
                para = lxml_html.Element("p")
                para.text = " ".join(lines)
                root.append(para)
    # No pretty printing: the instructions modal shows white space as typed (pre-wrap).
    return lxml_html.tostring(root, encoding="unicode")


def _kind(line: str) -> str:
    if line.startswith("## "):
        return "h4"
    if line.startswith("# "):
        return "h3"
    if line.startswith("> ") or line == ">":
        return "quote"
    if line.startswith("- "):
        return "ul"
    if _NUMBERED.match(line):
        return "ol"
    return "p"


def _runs(block: list[str]) -> list[tuple[str, list[str]]]:
    """Consecutive lines of the same kind; each heading is a run of its own."""
    runs: list[tuple[str, list[str]]] = []
    for line in block:
        kind = _kind(line)
        if runs and runs[-1][0] == kind and kind not in ("h3", "h4"):
            runs[-1][1].append(line)
        else:
            runs.append((kind, [line]))
    return runs


def _blocks(text: str) -> list[list[str]]:
    blocks: list[list[str]] = [[]]
    for line in text.strip().splitlines():
        line = line.rstrip()
        if line:
            blocks[-1].append(line)
        elif blocks[-1]:
            blocks.append([])
    return [b for b in blocks if b]


def _h(tag: str, text: str) -> Any:
    node = lxml_html.Element(tag)
    node.text = text
    return node


def _list(tag: str, items: list[str]) -> Any:
    node = lxml_html.Element(tag)
    for item in items:
        li = lxml_html.Element("li")
        li.text = item
        node.append(li)
    return node


def _lines_into(node: Any, lines: list[str]) -> None:
    node.text = lines[0] if lines else ""
    for line in lines[1:]:
        br = lxml_html.Element("br")
        br.tail = line
        node.append(br)
