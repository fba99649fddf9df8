"""Preference data out: a pairwise study's judgments as training data, by a rule that is explicit and recorded.

Written into one folder that ``datasets.load_dataset`` reads (JSON lines, and a dataset card,
``README.md``, whose ``configs`` name the files):

- ``preference.jsonl``: TRL's preference type, ``prompt``, ``chosen``, ``rejected``. Conversational
  (lists of ``{"role", "content"}`` messages) when a context or candidate field is a conversation
  (``kind = "conversation"``), else standard (text). Two conversations side by side share their
  first messages: those are the prompt (after the context's), the rest of each conversation its
  completion; a text candidate under a conversation is one assistant message.
- ``unpaired.jsonl``: TRL's unpaired preference type (KTO), ``prompt``, ``completion``, ``label``:
  each preference row as two rows, the chosen completion ``true``, the rejected ``false``.

Every row also names where it came from: ``key`` (the task), ``aspect``, ``chosen_system`` and
``rejected_system`` (``system`` in unpaired), ``votes`` (the judgments behind the verdict). TRL's
trainers read their own columns; the others stay beside them.

The rule, one verdict per task and aspect, from the judgments that count (each annotator's
latest, never cancelled; as the report counts them):

- ``majority``: the outcome (a system, or a tie) more than half of the judgments give; none: no row;
- ``unanimous``: the outcome every judgment gives, with at least ``min_votes`` judgments;
- ``adjudicated``: only the adjudicator's verdict (the pull of the adjudication project); tasks
  without one give no row.

Ties are dropped (``ties = "drop"``) or kept (``"keep"``): a kept tie is a preference row with
``tie`` true and the candidates in the task's order, for a trainer that reads ties; the unpaired
file never holds a tie (a tie says neither completion is desirable or undesirable). Gold items and
attention checks, judges (``judge:<name>``) and the annotators excluded are never exported, whatever
the rule; the card names the rule, the exclusions, the systems, the annotators and their agreement
(share of equal votes over every two annotators' votes on one task and aspect).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd  # type: ignore[import-untyped, unused-ignore]

from annols import files
from annols.analysis import arena as agreement_lib
from annols.definition import Definition
from annols.errors import AnnolsError, DefinitionError, OptionError
from annols.formats.answers import is_judge
from annols.study import roles
from annols.study.exports import ADJUDICATED, EXPORT_FILE, load_annotators, read_export
from annols.styles import decode
from annols.styles.answers import ExportedTask
from annols.styles.judgments import Preference

RULES = ("majority", "unanimous", "adjudicated")
TIES = ("drop", "keep")
PREFERENCE_FILE, UNPAIRED_FILE, CARD_FILE = "preference.jsonl", "unpaired.jsonl", "README.md"
TIE = ""  # the outcome of a tie (a winner is a system name)


@dataclass(frozen=True)
class Rule:
    verdict: str = "majority"
    ties: str = "drop"
    min_votes: int = 1
    exclude: tuple[str, ...] = ()

    def check(self) -> None:
        if self.verdict not in RULES:
            raise OptionError("--rule", f"{self.verdict!r} is not one of {', '.join(RULES)}")
        if self.ties not in TIES:
            raise OptionError("--ties", f"{self.ties!r} is not one of {', '.join(TIES)}")
        if self.min_votes < 1:
            raise OptionError("--min-votes", "give 1 or more")

    def describe(self) -> str:
        verdict = {"majority": "the outcome more than half of a task's judgments give (none: no row)",
                   "unanimous": f"the outcome every judgment of a task gives, with at least {self.min_votes}",
                   "adjudicated": "the adjudicator's verdict only (tasks without one: no row)",
                   }[self.verdict]  # fmt: skip
        ties = "ties dropped" if self.ties == "drop" else "ties kept (preference rows with tie = true; never unpaired)"
        return f"{self.verdict}: {verdict}; {ties}"


@dataclass
class Exported:
    out_dir: Path
    rows: int
    unpaired: int
    ties: int
    tasks: int
    no_verdict: int  # task-aspects whose judgments gave no verdict under the rule
    left_out: dict[str, int] = field(default_factory=dict)  # why -> judgments never exported
    annotators: list[str] = field(default_factory=list)
    systems: list[str] = field(default_factory=list)
    conversational: bool = False


@dataclass
class _Task:
    task: ExportedTask
    votes: dict[str, dict[str, tuple[str, str]]] = field(default_factory=dict)  # aspect -> annotator -> (outcome, time)


def _latest(tasks: dict[str, _Task], task: ExportedTask, annotator: str, created: str,
            found: list[Preference]) -> None:  # fmt: skip
    held = tasks.setdefault(task.key, _Task(task))
    for p in found:
        outcome = TIE if p.winner is None else p.systems[p.winner]
        earlier = held.votes.setdefault(p.aspect, {}).get(annotator)
        if earlier is None or earlier[1] <= created:
            held.votes[p.aspect][annotator] = (outcome, created)


def _read(definition: Definition, sources: Sequence[Path], rule: Rule,
          left_out: Counter[str]) -> tuple[dict[str, _Task], set[str]]:  # fmt: skip
    """The study's tasks with each counted annotator's latest outcome per aspect."""
    tasks: dict[str, _Task] = {}
    annotators: set[str] = set()
    for source in sources:
        export = source / EXPORT_FILE if source.is_dir() else source
        for task in read_export(export, load_annotators(export)):
            for a in task.annotations:
                if a.cancelled:
                    continue
                if task.role != roles.STUDY:
                    left_out[f"{task.role} item"] += 1
                    continue
                if is_judge(a.annotator):
                    left_out["judge"] += 1
                    continue
                if a.annotator in rule.exclude:
                    left_out["excluded annotator"] += 1
                    continue
                if a.annotator == ADJUDICATED:
                    continue  # an adjudication pull given as a source: its verdicts are read with --adjudicated
                annotators.add(a.annotator)
                found = [j for j in decode(definition, task, a) if isinstance(j, Preference)]
                _latest(tasks, task, a.annotator, a.created_at, found)
    return tasks, annotators


def _verdicts(definition: Definition, adjudicated: Sequence[Path]) -> dict[tuple[str, str], str]:
    out: dict[tuple[str, str], str] = {}
    for source in adjudicated:
        export = source / EXPORT_FILE if source.is_dir() else source
        for task in read_export(export, load_annotators(export)):
            for a in task.annotations:
                if a.cancelled or a.annotator != ADJUDICATED:
                    continue
                for p in decode(definition, task, a):
                    if isinstance(p, Preference):
                        out[(task.key, p.aspect)] = TIE if p.winner is None else p.systems[p.winner]
    return out


def verdict(outcomes: Sequence[str], rule: Rule) -> str | None:
    """The outcome the rule gives (a system, or :data:`TIE`), None for no verdict (never adjudicated here)."""
    if not outcomes:
        return None
    top, n = Counter(outcomes).most_common(1)[0]
    if rule.verdict == "majority":
        return top if n * 2 > len(outcomes) else None
    if rule.verdict == "unanimous":
        return top if n == len(outcomes) and n >= rule.min_votes else None
    raise AnnolsError(f"no verdict by {rule.verdict!r} from votes")


def _messages(value: Any) -> list[dict[str, str]] | None:
    if isinstance(value, list) and all(isinstance(m, dict) and {"role", "content"} <= set(m) for m in value):
        return [{"role": str(m["role"]), "content": str(m["content"])} for m in value]
    return None


def _as_messages(value: Any, role: str) -> list[dict[str, str]]:
    found = _messages(value)
    return found if found is not None else [{"role": role, "content": str(value)}]


def _texts(definition: Definition, task: ExportedTask, conversational: bool, winner: int,
           ) -> tuple[Any, Any, Any]:  # fmt: skip
    """(prompt, chosen, rejected) of a task whose candidate at position ``winner`` was preferred."""
    spec = definition.spec
    context = [task.data.get(p.name) for p in spec.context]
    shown = [task.data.get(c.name) for c in spec.candidates]
    chosen, rejected = shown[winner], shown[1 - winner]
    if not conversational:
        prompt = "\n\n".join(str(v) for v in context if v not in (None, ""))
        return prompt, str(chosen), str(rejected)
    prompt_messages = [m for v in context for m in _as_messages(v, "user")]
    one, two = _as_messages(chosen, "assistant"), _as_messages(rejected, "assistant")
    shared = 0
    while shared < min(len(one), len(two)) - 1 and one[shared] == two[shared]:
        shared += 1
    return prompt_messages + one[:shared], one[shared:], two[shared:]


def export_preferences(definition: Definition, sources: Sequence[Path], out_dir: Path, rule: Rule,
                       adjudicated: Sequence[Path] = ()) -> Exported:  # fmt: skip
    """Write the preference folder (see the module's docstring). ``out_dir`` must not exist or be empty;
    it appears only whole."""
    rule.check()
    if definition.style != "pairwise":
        raise DefinitionError(definition.source, "style", f"preference data is written from pairwise studies; "
                              f"this is {definition.style}")  # fmt: skip
    if rule.verdict == "adjudicated" and not adjudicated:
        raise OptionError("--adjudicated", "the adjudicated rule needs the adjudication project's pull")
    out_dir = Path(out_dir)
    if out_dir.exists() and (not out_dir.is_dir() or any(out_dir.iterdir())):
        raise AnnolsError(f"{out_dir}: exists and is not an empty folder; give a new folder for the export")
    left_out: Counter[str] = Counter()
    tasks, annotators = _read(definition, [Path(s) for s in sources], rule, left_out)
    verdicts = _verdicts(definition, adjudicated) if rule.verdict == "adjudicated" else {}
    conversational = any(p.kind == "conversation" for p in (*definition.spec.context, *definition.spec.candidates))
    if not conversational:  # data that holds messages makes it conversational too
        conversational = any(_messages(t.task.data.get(c.name)) is not None
                             for t in tasks.values() for c in definition.spec.candidates)  # fmt: skip
    paired, unpaired = [], []
    no_verdict = ties = 0
    aspects = [a.name for a in definition.spec.aspects]
    votes_rows = []
    for key in sorted(tasks):
        held = tasks[key]
        systems = list(held.task.systems)
        for aspect in aspects:
            votes = held.votes.get(aspect, {})
            votes_rows += [(key, aspect, who, outcome) for who, (outcome, _) in votes.items()]
            outcomes = [o for o, _ in votes.values()]
            found = verdicts.get((key, aspect)) if rule.verdict == "adjudicated" else verdict(outcomes, rule)
            if found is None:
                no_verdict += bool(votes) or (key, aspect) in verdicts
                continue
            if found == TIE:
                if rule.ties == "drop":
                    continue
                ties += 1
                winner = 0
            else:
                if found not in systems:
                    raise AnnolsError(f"{key}: the verdict names {found!r}, not a system of the task ({systems}); "
                                      "pull the study again")  # fmt: skip
                winner = systems.index(found)
            prompt, chosen, rejected = _texts(definition, held.task, conversational, winner)
            row = {"prompt": prompt, "chosen": chosen, "rejected": rejected, "key": key, "aspect": aspect,
                   "chosen_system": systems[winner] if systems else "",
                   "rejected_system": systems[1 - winner] if systems else "",
                   "votes": len(outcomes) if rule.verdict != "adjudicated" else 1}  # fmt: skip
            if rule.ties == "keep":
                row["tie"] = found == TIE
            paired.append(row)
            if found != TIE:
                for completion, label, system in ((chosen, True, row["chosen_system"]),
                                                  (rejected, False, row["rejected_system"])):  # fmt: skip
                    unpaired.append({"prompt": prompt, "completion": completion, "label": label, "key": key,
                                     "aspect": aspect, "system": system})  # fmt: skip
    systems_all = sorted({s for t in tasks.values() for s in t.task.systems})
    frame = pd.DataFrame(votes_rows, columns=["task_key", "question", "annotator", "outcome"])
    frame = frame.assign(kind="preference", value=frame["outcome"].map(lambda o: "tie" if o == TIE else o))
    pairs = agreement_lib.vote_pairs(frame, None)
    agree = sum(a == b for a, b in pairs)
    done = Exported(out_dir, len(paired), len(unpaired), ties, len(tasks), no_verdict, dict(left_out),
                    sorted(annotators), systems_all, conversational)  # fmt: skip
    card = _card(definition, rule, done, agree, len(pairs), adjudicated)
    _write(out_dir, {PREFERENCE_FILE: _jsonl(paired), UNPAIRED_FILE: _jsonl(unpaired), CARD_FILE: card})
    return done


def _jsonl(rows: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)


def _card(definition: Definition, rule: Rule, done: Exported, agree: int, pairs: int,
          adjudicated: Sequence[Path]) -> str:  # fmt: skip
    agreement = f"{100 * agree / pairs:.1f}% of {pairs} pairs of votes equal" if pairs else "no two votes on a task"
    left = ", ".join(f"{n} judgment(s) of {why}s" for why, n in sorted(done.left_out.items())) or "none"
    form = "conversational (lists of role/content messages)" if done.conversational else "standard (text)"
    return "\n".join([
        "---",
        "configs:",
        "- config_name: preference",
        "  default: true",
        "  data_files:",
        "  - split: train",
        f"    path: {PREFERENCE_FILE}",
        "- config_name: unpaired",
        "  data_files:",
        "  - split: train",
        f"    path: {UNPAIRED_FILE}",
        "---",
        "",
        f"# Preference data from the annols study {definition.name!r}",
        "",
        f"- Definition: {definition.name} ({definition.style}), {Path(definition.source).name}",
        f"- Systems ({len(done.systems)}): {', '.join(done.systems)}",
        f"- Annotators: {len(done.annotators)}; agreement: {agreement}",
        f"- Rule: {rule.describe()}",
        f"- Adjudication pulls: {', '.join(str(p) for p in adjudicated) or 'none'}",
        f"- Never exported: gold items, attention checks, judges, excluded annotators "
        f"({', '.join(rule.exclude) or 'none named'}); left out here: {left}",
        f"- Tasks: {done.tasks}; rows: {done.rows} preference ({done.ties} ties), {done.unpaired} unpaired; "
        f"{done.no_verdict} task-aspect(s) without a verdict under the rule",
        f"- Format: TRL {form}; `preference` has prompt, chosen, rejected; `unpaired` (KTO) has prompt, "
        "completion, label. Beside them: key, aspect, the systems, votes.",
        "",
    ])  # fmt: skip


def _write(out_dir: Path, contents: dict[str, str]) -> None:
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.", dir=out_dir.parent))
    try:
        for name, text in contents.items():
            files.write_text(staging / name, text)
        if out_dir.exists():
            out_dir.rmdir()
        os.replace(staging, out_dir)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def rows(path: Path) -> Iterator[dict[str, Any]]:
    """The rows of an exported JSON lines file (for a check, or a test)."""
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                yield json.loads(line)
