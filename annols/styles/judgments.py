"""Judgments: what an annotation says, typed, with the systems it is about already unblinded.

Each style decodes a Label Studio annotation into judgments (``decode`` in
``annols/styles/<style>.py``, reached through :func:`decode`). Everything after reads
judgments, never raw Label Studio results: results.csv's ``system`` column, an own
protocol's ``<name>.jsonl``, and the report's tables (:mod:`annols.analysis`).

One record type per kind of judgment:

=============  ==========================================================================
kind           what it says
=============  ==========================================================================
preference     pairwise: on an aspect, which of two systems won, or a tie
rank           ranking: a system's rank (1 = best) on a dimension; ties allowed
rating         ratings: a system's value on an aspect's scale
span           spans: a labelled stretch of a text, its per-span answers and its links
row            sentences: one sentence row: its special case, column codes, explanation
answer         a task-level question: the chosen codes, or the text written
best-worst     best-worst: on an aspect, the tuple of candidates shown, which was best, which worst
=============  ==========================================================================

:func:`tidy` flattens judgments into one row each with the columns of
:data:`TIDY_COLUMNS`; a preference is written from the side of the system first in name
order (``value`` win / tie / loss for ``system`` against ``opponent``). A span's
per-span answers and a sentence row's columns become rows of their own (kinds
``span-answer`` and ``cell``), so a table of one kind needs no parsing.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from annols.styles.answers import ExportedTask

TIE = "tie"
WIN = "win"
LOSS = "loss"


@dataclass(frozen=True)
class Preference:
    """Pairwise: ``systems`` in the order shown; ``winner`` indexes them, None for a tie."""

    aspect: str
    systems: tuple[str, str]
    code: str
    winner: int | None
    kind: str = "preference"

    @property
    def winner_system(self) -> str:
        return "" if self.winner is None else self.systems[self.winner]

    def outcome(self) -> tuple[str, str, str]:
        """(system, opponent, win/tie/loss) from the side of the system first in name order."""
        first, second = sorted(self.systems)
        if self.winner is None:
            return first, second, TIE
        return first, second, WIN if self.systems[self.winner] == first else LOSS


@dataclass(frozen=True)
class Rank:
    dimension: str
    position: str  # where it was shown ("A")
    system: str
    rank: int  # 1 = best
    kind: str = "rank"


@dataclass(frozen=True)
class Rating:
    aspect: str
    candidate: str  # the candidate pane it was shown in
    system: str
    value: float
    code: str  # the answer as stored ("4", or the slider's number)
    kind: str = "rating"
    turn: int | None = None  # ratings per_turn: the assistant turn of the conversation rated (from 1)


@dataclass(frozen=True)
class Span:
    control: str  # the labels control (the spans' name, or "<pane>_labels")
    label: str
    start: int | str  # character offsets in the target text; paragraph index for a paragraphs pane
    end: int | str
    text: str
    region: str  # Label Studio's region id: what answers and links refer to
    system: str = ""  # the system that wrote the target text, when the task names one
    answers: dict[str, tuple[str, ...]] = field(default_factory=dict)  # per-span question -> codes or text
    links: tuple[str, ...] = ()  # region ids this span is linked to (relations from it)
    kind: str = "span"
    message: int | None = None  # a conversation target: the message (index from 0); start/end are in its content


@dataclass(frozen=True)
class Row:
    """Sentences: one sentence row. A special case hides (and empties) the columns and the explanation."""

    row: int  # 1-based
    special: str  # the special case chosen, "" for none
    columns: dict[str, tuple[str, ...]]  # column question -> codes (empty: unanswered; two: a violation)
    explanation: str
    system: str = ""
    kind: str = "row"


@dataclass(frozen=True)
class Answer:
    """A task-level question: the codes chosen (choice) or the text written (text)."""

    question: str
    codes: tuple[str, ...] = ()
    text: str = ""
    system: str = ""
    kind: str = "answer"


@dataclass(frozen=True)
class BestWorst:
    """Best-worst: the candidates (systems or items) of a tuple in the order shown; ``best`` and
    ``worst`` index them (the same index is a violation: kept, flagged, not counted)."""

    aspect: str
    systems: tuple[str, ...]
    best: int
    worst: int
    kind: str = "best-worst"


Judgment = Preference | Rank | Rating | Span | Row | Answer | BestWorst

TIDY_COLUMNS = ["kind", "question", "system", "opponent", "value", "code", "row", "start", "end", "text", "region"]


def tidy(judgments: Iterable[Judgment]) -> Iterator[list[Any]]:
    """Each judgment as rows in :data:`TIDY_COLUMNS` order.

    =============  ==============  ===================  ===========================================
    kind           question        system / opponent    value (code, row, start, end, text, region)
    =============  ==============  ===================  ===========================================
    preference     aspect          pair in name order   win / tie / loss for system (code: answer)
    rank           dimension       system               the rank (code: the position shown)
    rating         aspect          system               the number (code: as stored; row: the turn, per turn)
    span           labels control  system               the label (start, end, text, region; row: a message)
    span-answer    question        system               a code or the text (region: the span's)
    link           labels control  system               the linked region id (region: the span's)
    row            special name    system               the special case or "" (row)
    cell           column          system               a code (row); nothing for unanswered
    cell-text      explanation     system               the text (row)
    choice         question        system               one row per code chosen
    text           question        system               the text
    best-worst     aspect          one tuple member     1 best, -1 worst, 0 neither (code: best/worst/"")
    =============  ==============  ===================  ===========================================
    """
    empty = ""
    for j in judgments:
        if isinstance(j, Preference):
            system, opponent, outcome = j.outcome()
            yield ["preference", j.aspect, system, opponent, outcome, j.code, empty, empty, empty, empty, empty]
        elif isinstance(j, Rank):
            yield ["rank", j.dimension, j.system, empty, j.rank, j.position, empty, empty, empty, empty, empty]
        elif isinstance(j, Rating):
            turn = empty if j.turn is None else j.turn  # a per-turn rating's turn goes in the row column
            yield ["rating", j.aspect, j.system, empty, j.value, j.code, turn, empty, empty, empty, empty]
        elif isinstance(j, Span):
            message = empty if j.message is None else j.message  # a conversation's message goes in the row column
            yield ["span", j.control, j.system, empty, j.label, empty, message, j.start, j.end, j.text, j.region]
            for question, values in j.answers.items():
                for v in values:
                    yield ["span-answer", question, j.system, empty, v, empty, message, j.start, j.end, empty,
                           j.region]  # fmt: skip
            for to in j.links:
                yield ["link", j.control, j.system, empty, to, empty, message, j.start, j.end, empty, j.region]
        elif isinstance(j, Row):
            yield ["row", "special", j.system, empty, j.special, empty, j.row, empty, empty, empty, empty]
            for column, codes in j.columns.items():
                for code in codes:
                    yield ["cell", column, j.system, empty, code, empty, j.row, empty, empty, empty, empty]
            if j.explanation:
                yield ["cell-text", "explanation", j.system, empty, j.explanation, empty, j.row,
                       empty, empty, empty, empty]  # fmt: skip
        elif isinstance(j, BestWorst):
            if j.best == j.worst:
                continue  # best and worst the same candidate: says nothing (validate flags it)
            for i, system in enumerate(j.systems):
                value, code = (1, "best") if i == j.best else (-1, "worst") if i == j.worst else (0, empty)
                yield ["best-worst", j.aspect, system, empty, value, code, empty, empty, empty, empty, empty]
        elif j.codes or not j.text:
            for code in j.codes:
                yield ["choice", j.question, j.system, empty, code, empty, empty, empty, empty, empty, empty]
        else:
            yield ["text", j.question, j.system, empty, j.text, empty, empty, empty, empty, empty, empty]


# --- helpers the styles share -------------------------------------------------------------------



def untidy(rows: Iterable[Sequence[Any]]) -> list[Judgment]:
    """The pairwise, ranking and best-worst judgments of one annotation's :func:`tidy` rows (their first six
    columns: kind, question, system, opponent, value, code), in the order tidied; other kinds are skipped. The
    inverse of :func:`tidy` for those kinds: tidying them again gives the rows again (a preference comes back with
    its pair in the rows' order, name order, its winner from the first's side; a best-worst tuple from its members'
    rows in the order shown: 1 best, -1 worst)."""
    found: list[Judgment | str] = []
    tuples: dict[str, list[tuple[str, Any]]] = {}
    for kind, question, system, opponent, value, code, *_ in rows:
        if kind == "preference":
            winner = None if value == TIE else 0 if value == WIN else 1
            found.append(Preference(str(question), (str(system), str(opponent)), str(code), winner))
        elif kind == "rank":
            found.append(Rank(str(question), str(code), str(system), int(value)))
        elif kind == "best-worst":
            if str(question) not in tuples:
                tuples[str(question)] = []
                found.append(str(question))  # the tuple's place among the judgments
            tuples[str(question)].append((str(system), value))
    out: list[Judgment] = []
    for j in found:
        if isinstance(j, str):
            values = [v for _, v in tuples[j]]
            out.append(BestWorst(j, tuple(s for s, _ in tuples[j]), values.index(1), values.index(-1)))
        else:
            out.append(j)
    return out

def choices_by_name(result: Sequence[dict[str, Any]]) -> dict[str, list[str]]:
    """from_name -> the choices given, for task-level (not per-region) results."""
    out: dict[str, list[str]] = {}
    for item in result:
        if item.get("type") == "choices" and not _per_region(item):
            chosen = (item.get("value") or {}).get("choices") or []
            out.setdefault(str(item.get("from_name")), []).extend(str(c) for c in _listed(chosen))
    return out


def _listed(value: Any) -> list[Any]:
    return [value] if isinstance(value, str) else list(value)


def texts_by_name(result: Sequence[dict[str, Any]]) -> dict[str, str]:
    """from_name -> the text written, for task-level (not per-region) text areas; the texts of two items of one
    control (which the editor does not make) one after the other, a line break between them."""
    out: dict[str, str] = {}
    for item in result:
        if item.get("type") == "textarea" and not _per_region(item):
            text = "\n".join(str(t) for t in _listed((item.get("value") or {}).get("text") or []))
            name = str(item.get("from_name"))
            out[name] = out[name] + "\n" + text if name in out else text
    return out


def _per_region(item: dict[str, Any]) -> bool:
    value = item.get("value") or {}
    return "start" in value or "startOffset" in value


def numbers_by_name(result: Sequence[dict[str, Any]]) -> dict[str, list[Any]]:
    """from_name -> the numbers given (Number, slider), for task-level (not per-region) results."""
    out: dict[str, list[Any]] = {}
    for item in result:
        if item.get("type") == "number" and not _per_region(item):
            out.setdefault(str(item.get("from_name")), []).append((item.get("value") or {}).get("number"))
    return out


def number_code(value: float) -> str:
    """A number as an answer stores it: ``73`` for a whole number, ``73.5`` otherwise."""
    return str(int(value)) if value.is_integer() else repr(value)


def question_answers(questions: Iterable[Any], result: Sequence[dict[str, Any]], system: str = "",
                     candidates: Sequence[tuple[str, str]] = ()) -> list[Judgment]:  # fmt: skip
    """Answers to the definition's task-level questions (``Question`` objects); unanswered ones are left out.

    ``system``: what a question asked once per task is about (the one system of a spans or sentences task).
    ``candidates``: (pane name, system) of each candidate a task shows: a per-candidate question is
    answered once for each (control ``{question}_{pane}`` when there are several). A numeric answer
    (scale, number, slider) is a :class:`Rating` of its system; any other an :class:`Answer`."""
    questions = tuple(questions)
    if not questions:  # nothing asked: the result is not read (the reader calls this for every annotation)
        return []
    chosen, written, numbers = choices_by_name(result), texts_by_name(result), numbers_by_name(result)
    out: list[Judgment] = []
    for q in questions:
        places = [("", q.name, system)]
        if q.per_candidate and candidates:
            several = len(candidates) > 1
            places = [(pane, q.control(pane) if several else q.name, about) for pane, about in candidates]
        for pane, control, about in places:
            if q.numeric:
                given = chosen.get(control, []) if q.kind == "scale" else numbers.get(control, [])
                value = q.value(given[0]) if len(given) == 1 else None
                if value is not None:  # unanswered, answered twice, or off the range: no rating
                    code = str(q.value_code(given[0])) if q.kind == "scale" else number_code(value)
                    out.append(Rating(aspect=q.name, candidate=pane, system=about, value=value, code=code))
            elif q.kind == "text":
                if written.get(control):
                    out.append(Answer(q.name, text=written[control], system=about))
            elif chosen.get(control):
                out.append(Answer(q.name, codes=tuple(chosen[control]), system=about))
    return out


def candidate_system(questions: Iterable[Any], from_name: str, candidates: Sequence[tuple[str, str]]) -> str | None:
    """The system a per-candidate question's control is about, None when it is no such control."""
    several = len(candidates) > 1
    for q in questions:
        if q.per_candidate:
            for pane, about in candidates:
                if from_name == (q.control(pane) if several else q.name):
                    return about
    return None


def shown_systems(task: ExportedTask, count: int, fallback: Sequence[str]) -> tuple[str, ...]:
    """The system shown at each of ``count`` positions; ``fallback`` names them where the task has none."""
    if len(task.systems) == count:
        return tuple(task.systems)
    return tuple(fallback)
