"""A file in the public arena layout (MT-Bench human judgments, Chatbot Arena conversations) as battles.

The layout is that of the MT-Bench human judgments and the Chatbot Arena conversations releases
(lmsys on the Hugging Face hub): one vote per row, with

=================  =====================================================================
column             what it holds
=================  =====================================================================
question_id        the question (a number or a string)
model_a, model_b   the two systems, in the order the voter saw them
winner             ``model_a`` | ``model_b`` | ``tie`` | ``tie (bothbad)``
judge              who voted: a person's id (``expert_3``, ``arena_user_…``) or a model judge
conversation_a/b   each system's conversation: a list of ``{"role", "content"}`` messages
turn               the turn voted on (1 when missing)
=================  =====================================================================

Read as JSON lines, one JSON array, or parquet (as the hub serves it). Other columns
(``language``, ``tstamp``, ``anony`` …) are harmless: kept out, and said so once.

A battle is one item: the question, the turn and the pair of systems (in name order). Its task
holds both conversations with the system first in name order as candidate A, whatever side each
voter saw it on; a vote for ``model_b`` is turned to that side exactly (never guessed). Votes on
one battle must carry the same two conversations, else the rows are refused naming both lines; one
voter's two different verdicts on one battle are refused (never merged), an exact repeat counted once.

Who is a judge: ``judge`` values that name a model are model judges, the rest people. A value
names a model when it is given with ``judges`` (``annols arena --judge``); or when, lower-cased and
without punctuation, it begins with one of the file's system names of three characters or more
(``gpt4_pair`` and ``gpt-4``); or when it begins with a model family's name not followed by a
letter (:data:`MODEL_FAMILIES`: ``llama3_judge``, not ``palmer``). ``humans`` (``--human``)
overrides all three.

Two ways in, the same battles: ``annols arena`` writes a pull folder offline
(:mod:`annols.study.arena`); ``push --with-annotations`` reads the file through the generic format
(:mod:`annols.formats.generic`), which hands a file in this layout (:func:`is_arena`) to
:func:`records`: each person's vote one judged record of its battle's task (the battle's key as the
record's ``id``), and the model judges' votes, by :func:`judge_lines`, hidden judges as ``push --judge``
keeps them (never sent to the server).

The definition must be pairwise with one aspect and four answers: one preferring each candidate
and the codes ``tie`` and ``bothbad`` (``examples/arena.toml``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from annols.definition import Definition
from annols.errors import DefinitionError, InputError
from annols.formats import ReadWarning
from annols.formats.answers import JUDGE_NAME

COLUMNS = ("question_id", "model_a", "model_b", "winner", "judge", "conversation_a", "conversation_b")
WINNERS = ("model_a", "model_b", "tie", "tie (bothbad)")
TIE, BOTHBAD = "tie", "bothbad"
MODEL_FAMILIES = ("gpt", "claude", "gemini", "llama", "mistral", "mixtral", "qwen", "palm", "vicuna", "deepseek",
                  "command", "chatglm", "alpaca", "koala")  # fmt: skip
PARQUET = ".parquet"

MIN_NAME = 3  # a system name shorter than this (squashed) names no judge: "a" would take "author_0"


@dataclass(frozen=True)
class Vote:
    location: str
    question: str
    turn: int
    systems: tuple[str, str]  # as the voter saw them (model_a, model_b)
    winner: str  # one of WINNERS
    judge: str
    conversations: tuple[tuple[dict[str, str], ...], tuple[dict[str, str], ...]]

    @property
    def pair(self) -> tuple[str, str]:
        first, second = sorted(self.systems)
        return first, second

    @property
    def key(self) -> str:
        first, second = self.pair
        return f"arena:{self.question}:turn-{self.turn}:{first}|{second}"

    def in_name_order(self) -> tuple[tuple[dict[str, str], ...], tuple[dict[str, str], ...]]:
        a, b = self.conversations
        return (a, b) if self.systems[0] <= self.systems[1] else (b, a)

    def code(self) -> str:
        """The answer code on the task, whose candidate A is the system first in name order."""
        if self.winner == "tie":
            return TIE
        if self.winner == "tie (bothbad)":
            return BOTHBAD
        won = self.systems[0] if self.winner == "model_a" else self.systems[1]
        return "A" if won == self.pair[0] else "B"


@dataclass
class Battle:
    """One battle (an item): its first vote, both conversations in name order, the people's votes and each
    model judge's."""

    first: Vote
    conversations: tuple[tuple[dict[str, str], ...], tuple[dict[str, str], ...]]
    people: list[Vote] = field(default_factory=list)
    judges: dict[str, Vote] = field(default_factory=dict)

    @property
    def key(self) -> str:
        return self.first.key


@dataclass
class Battles:
    """A file's battles in key order, its systems, and what the reader tolerated."""

    battles: list[Battle]
    systems: list[str]
    warnings: list[ReadWarning]


def _text_rows(path: Path) -> Iterator[tuple[str, Any]]:
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise InputError(path, "", "", "file not found") from None
    except IsADirectoryError:
        raise InputError(path, "", "", "is a folder; give the input file") from None
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(path, "", "", f"not readable as UTF-8 text ({e})") from None
    if text.lstrip().startswith("["):
        try:
            rows = json.loads(text)
        except json.JSONDecodeError as e:
            raise InputError(path, f"line {e.lineno}", "", f"not valid JSON ({e.msg})") from None
        for n, row in enumerate(rows, start=1):
            yield f"row {n}", row
        return
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            yield f"line {n}", json.loads(line)
        except json.JSONDecodeError as e:
            raise InputError(path, f"line {n}", "", f"not valid JSON ({e.msg})") from None


def _rows(path: Path) -> Iterator[tuple[str, Any]]:
    """(location, row) of a JSON lines, JSON array or parquet file."""
    if path.suffix.lower() == PARQUET:
        try:
            import pyarrow.parquet as pq  # type: ignore[import-untyped, unused-ignore]
        except ImportError:
            raise InputError(path, "", "", "reading parquet needs pyarrow (pip install pyarrow), or give the "
                             "file as JSON lines") from None  # fmt: skip
        try:
            table = pq.read_table(path)
        except (OSError, ValueError) as e:
            raise InputError(path, "", "", f"not readable as parquet ({e})") from None
        for n, row in enumerate(table.to_pylist(), start=1):
            yield f"row {n}", row
        return
    yield from _text_rows(path)


def is_arena(path: Path) -> bool:
    """Whether an input is in the arena layout: a parquet file, or JSON (lines or an array) whose first row
    holds every arena column. Anything else is left to the generic reader (and its own messages)."""
    path = Path(path)
    if path.suffix.lower() == PARQUET:
        return True
    if path.suffix.lower() == ".csv" or not path.is_file():
        return False
    try:
        with open(path, encoding="utf-8-sig") as f:  # the first line: generic inputs are streamed
            first = next((line for line in f if line.strip()), "")
        if first.lstrip().startswith("["):  # a JSON array, which only this reader reads: its first row
            first = next((json.dumps(row) for _, row in _text_rows(path)), "")
        row = json.loads(first) if first.strip() else None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, InputError):
        return False
    return isinstance(row, dict) and all(name in row for name in COLUMNS)


def _conversation(path: Path, where: str, name: str, value: Any) -> tuple[dict[str, str], ...]:
    if not isinstance(value, list) or not value:
        raise InputError(path, where, name, "expected a non-empty list of {role, content} messages")
    out = []
    for i, message in enumerate(value):
        if not isinstance(message, dict) or not isinstance(message.get("role"), str) \
                or not isinstance(message.get("content"), str):  # fmt: skip
            raise InputError(path, where, f"{name}[{i}]", "expected a message with text fields role and content")
        out.append({"role": message["role"], "content": message["content"]})
    return tuple(out)


def read_votes(path: Path) -> tuple[list[Vote], list[ReadWarning]]:
    """Every vote of an arena file, checked; and what was tolerated (said once each)."""
    path = Path(path)
    votes: list[Vote] = []
    extra: set[str] = set()
    for where, row in _rows(path):
        if not isinstance(row, dict):
            raise InputError(path, where, "", "expected an object with the arena columns " + ", ".join(COLUMNS))
        for name in COLUMNS:
            if row.get(name) in (None, ""):
                raise InputError(path, where, name, "missing; every arena row needs " + ", ".join(COLUMNS))
        extra |= set(row) - {*COLUMNS, "turn"}
        winner = row["winner"]
        if winner not in WINNERS:
            raise InputError(path, where, "winner", f"{winner!r} is not one of {', '.join(WINNERS)}")
        systems = (row["model_a"], row["model_b"])
        if not all(isinstance(s, str) for s in systems) or not isinstance(row["judge"], str):
            raise InputError(path, where, "model_a", "model_a, model_b and judge must be text")
        if systems[0] == systems[1]:
            raise InputError(path, where, "model_b", f"the same system {systems[0]!r} on both sides says "
                             "nothing about it; remove the row")  # fmt: skip
        turn = row.get("turn", 1)
        if turn is None:
            turn = 1
        if not isinstance(turn, int) or isinstance(turn, bool) or turn < 1:
            raise InputError(path, where, "turn", f"{turn!r} is not a turn number (1, 2, ...)")
        question = row["question_id"]
        if isinstance(question, bool) or not isinstance(question, int | str):
            raise InputError(path, where, "question_id", "expected a number or a text")
        conversations = (_conversation(path, where, "conversation_a", row["conversation_a"]),
                         _conversation(path, where, "conversation_b", row["conversation_b"]))  # fmt: skip
        votes.append(Vote(where, str(question), turn, systems, winner, row["judge"].strip(), conversations))
    if not votes:
        raise InputError(path, "", "", "no arena rows; expected rows with " + ", ".join(COLUMNS))
    warnings = [ReadWarning(str(path), "", f"columns {', '.join(sorted(extra))} are not part of the arena layout; "
                            "not read")] if extra else []  # fmt: skip
    return votes, warnings


def _squash(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


def is_model(judge: str, systems: Sequence[str], judges: Sequence[str] = (), humans: Sequence[str] = ()) -> bool:
    """Whether a ``judge`` value names a model (see the module's docstring)."""
    if judge in humans:
        return False
    if judge in judges:
        return True
    squashed = _squash(judge)
    if any(squashed.startswith(s) for s in (_squash(x) for x in systems) if len(s) >= MIN_NAME):
        return True
    return any(re.match(rf"{family}(?![a-z])", judge.lower()) for family in MODEL_FAMILIES)


def check_definition(definition: Definition) -> str:
    """The aspect's control, once the answers are checked: A, B, tie and bothbad."""
    spec = definition.spec
    if definition.style != "pairwise" or len(spec.aspects) != 1:
        raise DefinitionError(definition.source, "style", "an arena file goes into a pairwise definition with one "
                              "aspect (examples/arena.toml)")  # fmt: skip
    codes = {a.code: p for a, p in zip(spec.answers, spec.prefers, strict=True)}
    wanted = {"A": 0, "B": 1, TIE: None, BOTHBAD: None}
    if any(codes.get(c, "missing") != p for c, p in wanted.items()):
        raise DefinitionError(definition.source, "answers", "an arena file needs the answer codes A (prefers "
                              "the first candidate), B (the second), tie and bothbad, as examples/arena.toml has")
    return str(spec.aspects[0].name)


def read_battles(path: Path, judges: Sequence[str] = (), humans: Sequence[str] = ()) -> Battles:
    """The file's battles, people and model judges told apart (``judges``, ``humans``: the overrides)."""
    path = Path(path)
    votes, warnings = read_votes(path)
    systems = sorted({s for v in votes for s in v.systems})
    items: dict[str, Battle] = {}
    seen: dict[tuple[str, str], Vote] = {}
    for vote in votes:
        battle = items.get(vote.key)
        conversations = vote.in_name_order()
        if battle is None:
            battle = items[vote.key] = Battle(vote, conversations)
        elif battle.conversations != conversations:
            raise InputError(path, vote.location, "conversation_a", f"the battle {vote.key} has other conversations "
                             f"at {battle.first.location}; give each battle its own question_id")  # fmt: skip
        earlier = seen.get((vote.key, vote.judge))
        if earlier is not None:
            if earlier.code() == vote.code():
                warnings.append(ReadWarning(str(path), "", f"{vote.location} repeats {earlier.location} (same judge, "
                                            "battle and verdict); counted once"))  # fmt: skip
                continue
            raise InputError(path, vote.location, "winner", f"{vote.judge!r} voted otherwise on the same battle "
                             f"at {earlier.location}; keep one of the two rows")  # fmt: skip
        seen[(vote.key, vote.judge)] = vote
        if is_model(vote.judge, systems, judges, humans):
            if not JUDGE_NAME.match(vote.judge):
                raise InputError(path, vote.location, "judge", f"{vote.judge!r} names a model judge but is not a "
                                 "judge name (letters, digits, .-_); rename it or give --human")  # fmt: skip
            battle.judges[vote.judge] = vote
        else:
            battle.people.append(vote)
    return Battles([items[k] for k in sorted(items)], systems, warnings)


def records(path: Path, definition: Definition) -> Iterator[tuple[str, dict[str, Any], tuple[ReadWarning, ...]]]:
    """(location, record, warnings): each person's vote as a judged record of the generic format
    (:mod:`annols.formats.generic`), a battle's votes one after another (one task, several annotations); a
    battle only model judges voted on as a record without a judgment (its task, for the judges). A record's
    candidates are the battle's conversations in name order, its ``systems`` that order, its ``id`` the
    battle's key (what :func:`judge_lines` name), ``question_id`` and ``turn`` carried. The file's warnings go
    with its first record."""
    aspect = check_definition(definition)
    found = read_battles(path)
    candidates = [c.name for c in definition.spec.candidates]
    said = tuple(found.warnings)
    for battle in found.battles:
        first = battle.first
        record: dict[str, Any] = dict(zip(candidates, (list(c) for c in battle.conversations), strict=True))
        record.update(systems=list(first.pair), id=battle.key, question_id=first.question, turn=first.turn)
        if not battle.people:
            yield first.location, record, said
            said = ()
        for vote in battle.people:
            yield vote.location, {**record, "annotator": vote.judge, "answers": {aspect: vote.code()}}, said
            said = ()


def judge_lines(path: Path, definition: Definition) -> dict[str, list[dict[str, Any]]]:
    """Each model judge's votes as the lines of its judge file (:mod:`annols.study.judges`), naming each
    battle by the ``id`` :func:`records` gives it; {} for a file without model judges."""
    aspect = check_definition(definition)
    out: dict[str, list[dict[str, Any]]] = {}
    for battle in read_battles(path).battles:
        for name, vote in battle.judges.items():
            out.setdefault(name, []).append({"id": battle.key, "judge": name, "answers": {aspect: vote.code()}})
    return out
