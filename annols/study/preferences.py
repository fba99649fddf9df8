"""Preference data out: a pairwise, ranking or best-worst study's judgments as training data, by an explicit rule.

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

The sources are read by the study's one reader (:func:`annols.study.table.read`, with the tasks' texts): the
judgments that count are the study table's, each annotator's latest annotation of a task (never cancelled; the
same annotation pulled twice once), as the report counts them.

The rule, one verdict per task (item), aspect and pair of systems, from the judgments that count:

- ``majority``: the outcome (a system, or a tie) more than half of the judgments give; none: no row;
- ``unanimous``: the outcome every judgment gives, with at least ``min_votes`` judgments;
- ``adjudicated``: only the adjudicator's verdict (the pull of the adjudication project, read as ``report
  --adjudicated`` reads it: :func:`annols.study.table.read_verdicts`, one submitted verdict a task); tasks
  without one give no row.

Ranking and best-worst studies give the pairs their judgments imply (:func:`implied`), each row marked
``implied_from`` and the card saying so: a ranking of n candidates gives its n(n-1)/2 pairs (equal ranks:
a tie); a best-worst tuple gives its best over each other candidate and each other over its worst (best
over worst once, nothing between the others). The rule is applied to each pair of systems of an item
and aspect over the votes of every annotator, one vote per annotator: for a ranking the item is its task; for
best-worst the tuples of one pool (the same context) are one item, and an annotator who saw a pair in several
of its tuples votes once, with the outcome those tuples imply. Where they imply opposite outcomes (A over B in
one tuple, B over A in another) the annotator's vote on that pair is dropped as self-contradicting, never
made a tie: the annotator never judged the two equal, and a tie would be a judgment nobody gave (a kept tie
is a training row); the card counts those votes. A pair no judgment implies gives no row. An adjudicated
ranking or tuple gives the verdicts it implies (two adjudicated tuples of one item that disagree on a pair:
no verdict).

Ties are dropped (``ties = "drop"``) or kept (``"keep"``): a kept tie is a preference row with
``tie`` true and the candidates in name order, for a trainer that reads ties; the unpaired
file never holds a tie (a tie says neither completion is desirable or undesirable). Gold items and
attention checks, judges (``judge:<name>``) and the annotators excluded are never exported, whatever
the rule; the card names the rule, the exclusions, the systems, the annotators and their agreement
(share of equal votes over every two annotators' votes on one task and aspect).
"""

from __future__ import annotations

import itertools
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
from annols.analysis.by_style.asked import unit_of
from annols.analysis.judging import arena as agreement_lib
from annols.analysis.table import StudyTable
from annols.definition import Definition
from annols.errors import AnnolsError, DefinitionError, OptionError
from annols.formats.answers import is_judge
from annols.study import roles
from annols.study import table as study_table
from annols.study.exports import ADJUDICATED
from annols.styles import decode
from annols.styles.judgments import BestWorst, Preference, Rank, untidy

RULES = ("majority", "unanimous", "adjudicated")
STYLES = ("pairwise", "ranking", "best-worst")  # the styles whose judgments say which of two candidates is better
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
    tasks: int  # items: a task, or a best-worst study's tuples of one context
    no_verdict: int  # pairs of an item and aspect whose judgments gave no verdict under the rule
    left_out: dict[str, int] = field(default_factory=dict)  # why -> judgments never exported
    annotators: list[str] = field(default_factory=list)
    systems: list[str] = field(default_factory=list)
    conversational: bool = False
    contradicting: int = 0  # an annotator's votes on a pair of an item dropped: its tuples implied both outcomes


@dataclass
class _Unit:
    """An item's votes: (aspect, pair of systems in name order) -> (annotator, task) -> (outcome, time), one
    per task an annotator judged (:func:`by_annotator` makes them one vote per annotator); and what each
    system's candidate shows (its text or conversation) and the item's context, from its tasks."""

    key: str  # the task's key (pairwise, ranking); a best-worst item's first task key
    data: dict[str, Any]  # the first task's data (its context)
    texts: dict[str, Any] = field(default_factory=dict)  # system -> its candidate's value
    votes: dict[tuple[str, tuple[str, str]], dict[tuple[str, str], tuple[str, str]]] = field(default_factory=dict)

    @property
    def systems(self) -> list[str]:
        return sorted(self.texts)


def implied(judgments: Sequence[Any]) -> Iterator[tuple[str, tuple[str, str], str]]:
    """(aspect, pair in name order, outcome: a system or :data:`TIE`) of one judgment's preferences: a pairwise
    verdict itself; a ranking's n(n-1)/2 pairs (equal ranks: a tie); a best-worst tuple's best over each other
    and each other over the worst (best over worst once; the others among themselves: nothing)."""
    for j in judgments:
        if isinstance(j, Preference):
            first, second = sorted(j.systems)
            yield j.aspect, (first, second), TIE if j.winner is None else j.systems[j.winner]
        elif isinstance(j, BestWorst):
            if j.best == j.worst:  # a violation: flagged by validate, never counted
                continue
            best, worst = j.systems[j.best], j.systems[j.worst]
            for other in j.systems:
                if other != best:
                    yield j.aspect, _pair(best, other), best
                if other not in (best, worst):
                    yield j.aspect, _pair(other, worst), other
    ranks: dict[str, dict[str, int]] = {}
    for j in judgments:
        if isinstance(j, Rank):
            ranks.setdefault(j.dimension, {})[j.system] = j.rank
    for dimension, by_system in ranks.items():
        for one, two in itertools.combinations(sorted(by_system), 2):
            a, b = by_system[one], by_system[two]
            yield dimension, (one, two), TIE if a == b else (one if a < b else two)


def by_annotator(votes: dict[tuple[str, str], tuple[str, str]]) -> tuple[dict[str, str], int]:
    """One pair's votes of an item, one per (annotator, task), as one outcome per annotator (a best-worst
    annotator may see a pair in several tuples of one item), and how many annotators' votes were dropped because
    their tasks implied different outcomes (self-contradicting: no vote, never a tie)."""
    outcomes: dict[str, set[str]] = {}
    for (annotator, _), (outcome, _) in votes.items():
        outcomes.setdefault(annotator, set()).add(outcome)
    kept = {annotator: next(iter(o)) for annotator, o in outcomes.items() if len(o) == 1}
    return kept, len(outcomes) - len(kept)


def _pair(one: str, two: str) -> tuple[str, str]:
    first, second = sorted((one, two))
    return first, second


def _judgments(frame: pd.DataFrame) -> Iterator[tuple[int, str, list[Any]]]:
    """(uid, task key, the annotation's pairwise, ranking or best-worst judgments) of the study table's judgments
    rows (:func:`annols.analysis.table.judgment_rows`), one annotation after another in the order read."""
    columns = ["uid", "task_key", "kind", "question", "system", "opponent", "value", "code"]
    rows = zip(*(frame[c].to_numpy(dtype=object) for c in columns), strict=True)
    for (uid, key), group in itertools.groupby(rows, key=lambda r: (int(r[0]), str(r[1]))):
        yield uid, key, untidy(r[2:] for r in group)


def _read(definition: Definition, table: StudyTable, rule: Rule,
          left_out: Counter[str]) -> tuple[dict[str, _Unit], set[str]]:  # fmt: skip
    """The study's items from the study table (:func:`annols.study.table.read`: its reading decides which tasks
    count and which annotation is each annotator's latest judgment of a task), with each counted annotator's outcome
    per aspect and pair, per task (a best-worst annotator's tuples of one item are made one vote by
    :func:`by_annotator`). ``left_out`` counts every submitted annotation never exported, by why."""
    study, texts = table.study, table.texts
    if texts is None:
        raise AnnolsError("the study table was read without the tasks' texts; read it with texts=True")
    units: dict[str, _Unit] = {}
    annotators: set[str] = set()
    counted: set[int] = set()
    submitted = study.annotations[~study.annotations["cancelled"]]
    for uid, key, role, annotator in zip(submitted["uid"], submitted["task_key"], submitted["role"],
                                         submitted["annotator"], strict=True):  # fmt: skip
        if role != roles.STUDY:
            left_out[f"{role} item"] += 1
            continue
        if is_judge(annotator):
            left_out["judge"] += 1
            continue
        if annotator in rule.exclude:
            left_out["excluded annotator"] += 1
            continue
        if annotator == ADJUDICATED:
            continue  # an adjudication pull given as a source: its verdicts are read with --adjudicated
        annotators.add(annotator)
        counted.add(int(uid))
        unit = _unit(definition, units, table, key)
        for system, value in texts.shown.get(key, {}).items():
            unit.texts.setdefault(system, value)
    kept = study.kept
    kept = kept[kept["uid"].isin(counted)]
    judged = dict(zip(kept["uid"].astype(int), zip(kept["annotator"], kept["created_at"], strict=True),
                      strict=True))  # fmt: skip
    frame = table.judgments.table()
    for uid, key, judgments in _judgments(frame[frame["uid"].isin(list(judged))]):
        annotator, created_at = judged[uid]
        unit = units[_unit_key(definition, table, key)]
        for aspect, pair, outcome in implied(judgments):
            unit.votes.setdefault((aspect, pair), {})[(annotator, key)] = (outcome, created_at)
    return units, annotators


def _unit_key(definition: Definition, table: StudyTable, key: str) -> str:
    """The item a task's pairs belong to: the task (pairwise, ranking: a task is an item); for best-worst, the
    tuples of one pool (the same context) are one item, so a pair seen in several tuples is one row."""
    if definition.style != "best-worst" or table.judgments.units is None:
        return key
    return table.judgments.units.get(key, key)


def _unit(definition: Definition, units: dict[str, _Unit], table: StudyTable, key: str) -> _Unit:
    name = _unit_key(definition, table, key)
    unit = units.get(name)
    if unit is None:
        context = table.texts.context.get(key, {}) if table.texts is not None else {}
        unit = units[name] = _Unit(key, dict(context))
    return unit


def _verdicts(definition: Definition,
              adjudicated: Sequence[Path]) -> dict[tuple[str, tuple[str, str], str], str | None]:  # fmt: skip
    """(item, aspect, pair) -> the adjudicator's outcome (None where two adjudicated tuples of an item disagree
    on a pair: no verdict, never a guess), from the adjudication pulls as the reader reads them
    (:func:`annols.study.table.read_verdicts`)."""
    out: dict[tuple[str, tuple[str, str], str], str | None] = {}
    for key, answer in study_table.read_verdicts(definition, adjudicated).items():
        task = answer.task
        item = key if definition.style != "best-worst" else unit_of(definition.spec, task.data, key)
        for aspect, pair, outcome in implied(decode(definition, task, answer.annotation)):
            held = out.setdefault((item, pair, aspect), outcome)
            if held != outcome:
                out[(item, pair, aspect)] = None
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


def _value(value: Any) -> str:
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return "\n".join(value)  # a candidate of sentences (extractive outputs)
    return "" if value is None else str(value)


def _texts(definition: Definition, data: dict[str, Any], conversational: bool, chosen: Any, rejected: Any,
           ) -> tuple[Any, Any, Any]:  # fmt: skip
    """(prompt, chosen, rejected): the item's context (``data``'s context panes) and the two candidates."""
    context = [data.get(p.name) for p in definition.spec.context]
    if not conversational:
        prompt = "\n\n".join(str(v) for v in context if v not in (None, ""))
        return prompt, _value(chosen), _value(rejected)
    prompt_messages = [m for v in context for m in _as_messages(v, "user")]
    one, two = _as_messages(chosen, "assistant"), _as_messages(rejected, "assistant")
    shared = 0
    while shared < min(len(one), len(two)) - 1 and one[shared] == two[shared]:
        shared += 1
    return prompt_messages + one[:shared], one[shared:], two[shared:]


def _candidate_panes(definition: Definition) -> list[Any]:
    spec = definition.spec
    if definition.style == "pairwise":
        return list(spec.candidates)
    if definition.style == "best-worst":
        return [spec.candidate]
    return []


def _aspects(definition: Definition) -> list[str]:
    spec = definition.spec
    return [d.name for d in spec.dimensions] if definition.style == "ranking" else [a.name for a in spec.aspects]


def export_preferences(definition: Definition, sources: Sequence[Path], out_dir: Path, rule: Rule,
                       adjudicated: Sequence[Path] = ()) -> Exported:  # fmt: skip
    """Write the preference folder (see the module's docstring). ``out_dir`` must not exist or be empty;
    it appears only whole."""
    rule.check()
    if definition.style not in STYLES:
        raise DefinitionError(definition.source, "style", "preference data is written from pairwise, ranking "
                              f"and best-worst studies; this is {definition.style}")  # fmt: skip
    if rule.verdict == "adjudicated" and not adjudicated:
        raise OptionError("--adjudicated", "the adjudicated rule needs the adjudication project's pull")
    out_dir = Path(out_dir)
    if out_dir.exists() and (not out_dir.is_dir() or any(out_dir.iterdir())):
        raise AnnolsError(f"{out_dir}: exists and is not an empty folder; give a new folder for the export")
    left_out: Counter[str] = Counter()
    table = study_table.read(definition, [Path(s) for s in sources], only_judgments=True, with_judges=False,
                             texts=True)  # fmt: skip
    units, annotators = _read(definition, table, rule, left_out)
    verdicts = _verdicts(definition, adjudicated) if rule.verdict == "adjudicated" else {}
    conversational = any(p.kind == "conversation" for p in (*definition.spec.context, *_candidate_panes(definition)))
    if not conversational:  # data that holds messages makes it conversational too
        conversational = any(_messages(v) is not None for u in units.values() for v in u.texts.values())
    paired, unpaired = [], []
    no_verdict = ties = contradicting = 0
    aspects = _aspects(definition)
    votes_rows = []
    for name in sorted(units, key=lambda n: units[n].key):
        unit = units[name]
        for aspect in aspects:
            pairs = sorted({p for a, p in unit.votes if a == aspect} | {p for k, p, a in verdicts if k == name
                                                                          and a == aspect})  # fmt: skip
            for pair in pairs:
                raw = unit.votes.get((aspect, pair), {})
                votes, dropped = by_annotator(raw)
                contradicting += dropped
                votes_rows += [(f"{name}|{pair[0]}|{pair[1]}", aspect, who, outcome)
                               for who, outcome in votes.items()]  # fmt: skip
                outcomes = list(votes.values())
                found = verdicts.get((name, pair, aspect)) if rule.verdict == "adjudicated" else \
                    verdict(outcomes, rule)  # fmt: skip
                if found is None:
                    no_verdict += bool(raw) or (name, pair, aspect) in verdicts
                    continue
                if found == TIE:
                    if rule.ties == "drop":
                        continue
                    ties += 1
                    chosen_system, rejected_system = pair
                else:
                    if found not in pair:
                        raise AnnolsError(f"{unit.key}: the verdict names {found!r}, not a system of the task "
                                          f"({list(pair)}); pull the study again")  # fmt: skip
                    chosen_system, rejected_system = (found, pair[1] if found == pair[0] else pair[0])
                prompt, chosen, rejected = _texts(definition, unit.data, conversational,
                                                  unit.texts[chosen_system], unit.texts[rejected_system])  # fmt: skip
                row = {"prompt": prompt, "chosen": chosen, "rejected": rejected, "key": unit.key, "aspect": aspect,
                       "chosen_system": chosen_system, "rejected_system": rejected_system,
                       "votes": len(outcomes) if rule.verdict != "adjudicated" else 1}  # fmt: skip
                if definition.style != "pairwise":
                    row["implied_from"] = definition.style
                if rule.ties == "keep":
                    row["tie"] = found == TIE
                paired.append(row)
                if found != TIE:
                    for completion, label, system in ((chosen, True, chosen_system),
                                                      (rejected, False, rejected_system)):  # fmt: skip
                        unpaired.append({"prompt": prompt, "completion": completion, "label": label, "key": unit.key,
                                         "aspect": aspect, "system": system})  # fmt: skip
    systems_all = sorted({s for u in units.values() for s in u.texts})
    frame = pd.DataFrame(votes_rows, columns=["task_key", "question", "annotator", "outcome"])
    frame = frame.assign(kind="preference", value=frame["outcome"].map(lambda o: "tie" if o == TIE else o))
    pairs = agreement_lib.vote_pairs(frame, None)
    agree = sum(a == b for a, b in pairs)
    done = Exported(out_dir, len(paired), len(unpaired), ties, len(units), no_verdict, dict(left_out),
                    sorted(annotators), systems_all, conversational, contradicting)  # fmt: skip
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
        f"- Pairs: {_implied(definition, done.contradicting)}",
        f"- {'Tasks' if definition.style != 'best-worst' else 'Items'}: {done.tasks}; rows: {done.rows} preference "
        f"({done.ties} ties), {done.unpaired} unpaired; {done.no_verdict} pair(s) of a task and aspect without a "
        "verdict under the rule",
        f"- Format: TRL {form}; `preference` has prompt, chosen, rejected; `unpaired` (KTO) has prompt, "
        "completion, label. Beside them: key, aspect, the systems, votes.",
        "",
    ])  # fmt: skip


def _implied(definition: Definition, contradicting: int = 0) -> str:
    """The card's line on where the pairs come from."""
    if definition.style == "ranking":
        return ("implied by rankings: each ranking of n candidates gives its n(n-1)/2 pairs, the better-ranked "
                "chosen; equal ranks give a tie (column implied_from = ranking)")  # fmt: skip
    if definition.style == "best-worst":
        return ("implied by best-worst choices: each tuple gives its best over every other candidate and every "
                "other over its worst (best over worst once; nothing between the others); a pair's votes are its "
                "annotators', one each: an annotator who saw the pair in several tuples of the item votes once, and "
                "where those tuples imply opposite outcomes the vote is dropped as self-contradicting, never made a "
                f"tie ({contradicting} vote(s) dropped here) (column implied_from = best-worst)")  # fmt: skip
    return "judged directly (pairwise)"


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
