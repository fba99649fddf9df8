"""Sentences: fixed rows of sentences, a group of questions per row.

Each row has a "special case" question; choosing one hides the row's remaining columns
and its explanation, and only hidden questions stop being required. Otherwise every
column and the explanation are required. The editor enforces both; the server does not.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from lxml import etree

from annols.definition import Definition, Pane, Question, Table, parse_pane, parse_panes, parse_question
from annols.definition.fields import variable
from annols.definition.keys import REQUIRED, Key, Section
from annols.definition.markup import choices_el, el, has_slider, header, pane, question_block, slider_style, textarea_el
from annols.styles import judgments
from annols.styles.answers import ExportedAnnotation, ExportedTask


@dataclass(frozen=True)
class SentencesSpec:
    context: tuple[Pane, ...]
    generated: Pane
    rows: int
    row_title: str  # "{n}" is replaced by the row number
    special: Question
    columns: tuple[Question, ...]
    explanation: Question
    questions: tuple[Question, ...] = ()  # task-level questions after the rows

    def row_names(self, n: int) -> dict[str, str]:
        """Control names of row ``n`` (1-based): the sentence field and each question."""
        names = {"sentence": f"sentence_{n}", self.special.name: f"{self.special.name}_{n}"}
        for q in (*self.columns, self.explanation):
            names[q.name] = f"{q.name}_{n}"
        return names


KEYS = (
    Key("generated", "table", "The generated text, one row per sentence.", REQUIRED, of="pane"),
    Key("rows", "integer", "Sentence rows (1 to 50).", REQUIRED),
    Key("row_title", "string", "Each row's title; `{n}` is replaced.", "Sentence {n}"),
    Key("special", "table", "A special case of a row, which hides its columns.", REQUIRED, of="question"),
    Key("columns", "tables", "The questions of each row.", REQUIRED, of="question"),
    Key("explanation", "table", "A row's explanation (kind `text`).", REQUIRED, of="question"),
)
SECTIONS: tuple[Section, ...] = ()


def parse(t: Table) -> SentencesSpec:
    generated = t.table("generated", required=True)
    assert generated is not None
    rows = t.number("rows", required=True)
    if not 1 <= rows <= 50:
        raise t.fail("rows", f"must be between 1 and 50, got {rows}")
    special = t.table("special", required=True)
    explanation = t.table("explanation", required=True)
    assert special is not None and explanation is not None
    spec = SentencesSpec(
        context=parse_panes(t, "context"),
        generated=parse_pane(generated),
        rows=rows,
        row_title=t.text("row_title", "Sentence {n}"),
        special=parse_question(special),
        columns=tuple(parse_question(q) for q in t.tables("columns", required=True)),
        explanation=parse_question(explanation),
        questions=tuple(parse_question(q) for q in t.tables("questions")),
    )
    if spec.explanation.kind != "text":
        raise t.fail("explanation.kind", "the explanation must be a text question")
    for i, q in enumerate(spec.columns):
        if q.kind != "choice" or q.multiple:
            raise t.fail(f"columns[{i}]", "a column must be a single choice question")
    names = [spec.special.name, *(q.name for q in spec.columns), spec.explanation.name,
             *(q.name for q in spec.questions)]  # fmt: skip
    for name in names:
        if names.count(name) > 1:
            raise t.fail("columns", f"question name {name!r} is used twice")
    return spec


def data_fields(spec: SentencesSpec) -> list[str]:
    rows = [f"sentence_{n}" for n in range(1, spec.rows + 1)]
    return [p.name for p in spec.context] + [spec.generated.name, *rows]


def build_config(d: Definition) -> etree._Element:
    spec: SentencesSpec = d.spec
    root = el("View")
    if has_slider(spec.questions):
        root.append(slider_style())
    for p in spec.context:
        root.append(pane(p))
    root.append(pane(spec.generated))
    for n in range(1, spec.rows + 1):
        names = spec.row_names(n)
        row_title = spec.row_title.replace("{n}", str(n))
        row = el("View", style="border-top: 2px solid #ccc; margin-top: 1em; padding-top: 0.5em")
        row.append(header(row_title))
        row.append(el("Text", name=names["sentence"], value=variable(names["sentence"]), selectionEnabled="false"))
        special = spec.special
        row.append(header(special.text, size=5))
        row.append(choices_el(special, names["sentence"], name=names[special.name], inline=True))
        # Hidden once a special case is chosen; hidden controls are not required.
        rest = el("View", visibleWhen="choice-unselected", whenTagName=names[special.name])
        # The editor's refusal shows only the message, not where: it names the row.
        for q in spec.columns:
            rest.append(header(q.text, size=5))
            rest.append(choices_el(_in_row(q, row_title), names["sentence"], name=names[q.name]))
        rest.append(header(spec.explanation.text, size=5))
        explanation = _in_row(spec.explanation, row_title)
        rest.append(textarea_el(explanation, names["sentence"], name=names[spec.explanation.name]))
        row.append(rest)
        root.append(row)
    for q in spec.questions:
        root.append(question_block(q, spec.generated.name, radio=True))
    return root


def decode(spec: SentencesSpec, task: ExportedTask, annotation: ExportedAnnotation) -> list[judgments.Judgment]:
    """A row per sentence row, as the annotator saw it (a special case hides and empties the rest),
    and the task-level answers."""
    given = judgments.choices_by_name(annotation.result)
    written = judgments.texts_by_name(annotation.result)
    system = task.systems[0] if len(task.systems) == 1 else ""
    out: list[judgments.Judgment] = []
    for n in range(1, spec.rows + 1):
        names = spec.row_names(n)
        special = given.get(names[spec.special.name], [])
        columns = {} if special else {q.name: tuple(given.get(names[q.name], [])) for q in spec.columns}
        explanation = "" if special else written.get(names[spec.explanation.name], "")
        out.append(judgments.Row(n, "; ".join(special), columns, explanation, system))
    return out + judgments.question_answers(spec.questions, annotation.result, system)


def system_of(spec: SentencesSpec, task: ExportedTask, from_name: str, answer: str) -> str:
    """Every answer about the generated text is about the system that wrote it, when the task names one."""
    return task.systems[0] if len(task.systems) == 1 else ""


def _in_row(q: Question, row_title: str) -> Question:
    """The question as the required-answer message shows it: "Mapping, Sentence 2"."""
    return replace(q, text=f"{q.text}, {row_title}")
