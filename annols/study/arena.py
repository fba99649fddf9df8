"""Arena battles in: a file in the public arena layout, as a pull folder the report reads like any pairwise study.

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

An item is one battle: the question, the turn and the pair of systems (in name order). Its task
holds both conversations with the system first in name order as candidate A, whatever side each
voter saw it on; a vote for ``model_b`` is turned to that side exactly (never guessed). Votes on
one item must carry the same two conversations, else the rows are refused naming both lines.

Who is a judge: ``judge`` values that name a model are model judges, the rest people. A value
names a model when it is given with ``judges`` (``--judge``); or when, lower-cased and without
punctuation, it begins with one of the file's system names of three characters or more
(``gpt4_pair`` and ``gpt-4``); or when it begins with a model family's name not followed by a
letter (:data:`MODEL_FAMILIES`: ``llama3_judge``, not ``palmer``). ``humans`` (``--human``)
overrides all three. The people's votes are the pull's annotations (annotator = the judge value);
each model judge's votes are a judge file in ``judges/`` (:mod:`annols.study.judges`), so the
report sets them beside the people in "Judges and humans" and the study's own tables count the
people only.

The definition must be pairwise with one aspect and four answers: one preferring each candidate
and the codes ``tie`` and ``bothbad`` (``examples/arena.toml``).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from annols import files
from annols.definition import Definition
from annols.errors import AnnolsError, DefinitionError, InputError
from annols.formats.answers import answer_items, controls
from annols.study.exports import ANNOTATORS_FILE, BLINDING_FILE, EXPORT_FILE, PROJECT_FILE
from annols.study.hidden_judges import PULL_DIR
from annols.study.judges import NAME

COLUMNS = ("question_id", "model_a", "model_b", "winner", "judge", "conversation_a", "conversation_b")
WINNERS = ("model_a", "model_b", "tie", "tie (bothbad)")
TIE, BOTHBAD = "tie", "bothbad"
MODEL_FAMILIES = ("gpt", "claude", "gemini", "llama", "mistral", "mixtral", "qwen", "palm", "vicuna", "deepseek",
                  "command", "chatglm", "alpaca", "koala")  # fmt: skip


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
class Imported:
    out_dir: Path
    items: int
    people: list[str]
    judges: list[str]
    votes: int
    judge_votes: int
    systems: list[str]
    warnings: list[str] = field(default_factory=list)


def _rows(path: Path) -> Iterator[tuple[str, Any]]:
    """(location, row) of a JSON lines, JSON array or parquet file."""
    suffix = path.suffix.lower()
    if suffix == ".parquet":
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
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(path, "", "", "file not found") from None
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


def read_votes(path: Path) -> tuple[list[Vote], list[str]]:
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
    warnings = [f"{path}: columns {', '.join(sorted(extra))} are not part of the arena layout; not read"] if extra \
        else []  # fmt: skip
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


def _check_definition(definition: Definition) -> str:
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


def import_arena(definition: Definition, path: Path, out_dir: Path, judges: Sequence[str] = (),
                 humans: Sequence[str] = ()) -> Imported:  # fmt: skip
    """Write ``out_dir`` as a pull folder holding the arena file's votes (people as annotations, model
    judges as judge files in ``judges/``). ``out_dir`` must not exist or be empty; it appears only whole."""
    out_dir = Path(out_dir)
    if out_dir.exists() and (not out_dir.is_dir() or any(out_dir.iterdir())):
        raise AnnolsError(f"{out_dir}: exists and is not an empty folder; give a new folder for the import")
    aspect = _check_definition(definition)
    votes, warnings = read_votes(path)
    systems = sorted({s for v in votes for s in v.systems})
    known = controls(definition)
    candidates = [c.name for c in definition.spec.candidates]
    items: dict[str, dict[str, Any]] = {}
    seen: dict[tuple[str, str], Vote] = {}
    for vote in votes:
        item = items.get(vote.key)
        conversations = vote.in_name_order()
        if item is None:
            item = items[vote.key] = {"vote": vote, "conversations": conversations, "people": [], "judges": {}}
        elif item["conversations"] != conversations:
            raise InputError(path, vote.location, "conversation_a", f"the battle {vote.key} has other conversations "
                             f"at {item['vote'].location}; give each battle its own question_id")  # fmt: skip
        earlier = seen.get((vote.key, vote.judge))
        if earlier is not None:
            if earlier.code() == vote.code():
                warnings.append(f"{path}: {vote.location} repeats {earlier.location} (same judge, battle and "
                                "verdict); counted once")  # fmt: skip
                continue
            raise InputError(path, vote.location, "winner", f"{vote.judge!r} voted otherwise on the same battle "
                             f"at {earlier.location}; keep one of the two rows")  # fmt: skip
        seen[(vote.key, vote.judge)] = vote
        if is_model(vote.judge, systems, judges, humans):
            if not NAME.match(vote.judge):
                raise InputError(path, vote.location, "judge", f"{vote.judge!r} names a model judge but is not a "
                                 "judge name (letters, digits, .-_); rename it or give --human")  # fmt: skip
            item["judges"][vote.judge] = vote
        else:
            item["people"].append(vote)
    tasks: list[dict[str, Any]] = []
    blind: list[dict[str, Any]] = []
    judge_lines: dict[str, list[dict[str, Any]]] = {}
    people: set[str] = set()
    annotation_id = 0

    def fail(field_name: str, problem: str) -> InputError:
        return InputError(path, "", field_name, problem)

    for task_id, (key, item) in enumerate(sorted(items.items()), start=1):
        first = item["vote"]
        data: dict[str, Any] = dict(zip(candidates, (list(c) for c in item["conversations"]), strict=True))
        data["record"] = {"id": key, "question_id": first.question, "turn": first.turn}
        annotations = []
        for vote in item["people"]:
            annotation_id += 1
            people.add(vote.judge)
            result, _ = answer_items({aspect: vote.code()}, known, fail, origin="manual")
            annotations.append({"id": annotation_id, "completed_by": {"email": vote.judge}, "result": result,
                                "created_at": "", "lead_time": None, "was_cancelled": False})  # fmt: skip
        tasks.append({"id": task_id, "data": data, "meta": {"annols_key": key}, "annotations": annotations})
        blind.append({"task_id": task_id, "key": key, "systems": list(first.pair), "order": [0, 1], "role": "study"})
        for name, vote in item["judges"].items():
            judge_lines.setdefault(name, []).append({"task": key, "judge": name, "answers": {aspect: vote.code()}})
    _write(out_dir, definition, tasks, blind, judge_lines, path)
    return Imported(out_dir, len(tasks), sorted(people), sorted(judge_lines),
                    sum(len(i["people"]) for i in items.values()),
                    sum(len(i["judges"]) for i in items.values()), systems, warnings)  # fmt: skip


def _write(out_dir: Path, definition: Definition, tasks: list[dict[str, Any]], blind: list[dict[str, Any]],
           judge_lines: dict[str, list[dict[str, Any]]], path: Path) -> None:  # fmt: skip
    """The pull folder, built beside ``out_dir`` and moved into place whole."""
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.", dir=out_dir.parent))
    try:
        files.write_text(staging / EXPORT_FILE, json.dumps(tasks, ensure_ascii=False, indent=1))
        files.write_text(staging / ANNOTATORS_FILE, "{}")
        project = {"title": f"arena import of {path.name}", "protocol": definition.name,
                   "variant": definition.variant, "imported_from": str(path)}  # fmt: skip
        files.write_text(staging / PROJECT_FILE, json.dumps(project, ensure_ascii=False, indent=1))
        files.write_text(staging / BLINDING_FILE, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in blind))
        for name, lines in sorted(judge_lines.items()):
            files.write_text(staging / PULL_DIR / f"{name}.jsonl",
                             "".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines))  # fmt: skip
        if out_dir.exists():
            out_dir.rmdir()  # empty, checked above
        os.replace(staging, out_dir)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
