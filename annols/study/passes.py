"""Passes of a study in rounds (``annols next-round --passes P``): more annotators on items already pushed.

Pass 1 is the study in rounds as it always was: each round pushes items of the pool not pushed yet, ``overlap``
annotators each. When the pool holds no more item for the undecided comparisons (or ``--budget`` items are in the
project), the next round starts pass 2: it re-opens items already pushed that hold an undecided pair, in a seeded
order (never chosen by their values), ``--batch`` a round, so that ``overlap`` more annotators judge each; pass p
gives an item p x overlap annotators. Then pass 3, up to P.

Re-opening an item must not rewrite what was already looked at: each pass has its own confidence sequence
(:func:`annols.analysis.planning.sequential.pass_series`, :func:`annols.analysis.planning.sequential.by_pass`), over the
items complete for it (every task of the item with p x overlap judgments), an item's observation its mean over its first
p x overlap judgments in annotation order, at level alpha / (m x P). Folding the new judgments into pass 1's
observations (the naive design) would change observations the sequence has already been looked at; docs/statistics.md
shows what that costs.

On the server, an item is re-opened by raising the ``overlap`` of each of its tasks
(:meth:`annols.labelstudio.client.LabelStudioClient.reopen_task`): Label Studio then offers it again to annotators
who have not judged it, never to those who have. Label Studio resets every task's overlap when the project's
``maximum_annotations`` changes; annols never changes it during a study (push refuses another --overlap), and each
round of a study of passes lists the tasks' overlaps and sets again any re-opened task's that is not the one
recorded. The rounds record keeps each round's re-opened tasks and the overlap each was raised to (``reopened``), so
that a round run again re-opens nothing twice.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd  # type: ignore[import-untyped, unused-ignore]

from annols.analysis.planning import sequential
from annols.errors import AnnolsError, OptionError
from annols.labelstudio.client import LabelStudioClient

Key = tuple[str, str, str]


def passes_of(record: Path, first: Mapping[str, Any], asked: int | None) -> int:
    """The study's passes: fixed at round 1 (a record without them: 1); another number asked later is refused, since
    the level of every pass, alpha / (m x passes), was fixed with it."""
    if asked is not None and asked < 1:
        raise OptionError("--passes", f"at least 1, not {asked}")
    if not first:
        return asked or 1
    fixed = int(first.get("passes", 1))
    if asked is not None and asked != fixed:
        raise OptionError(f"--passes {asked}", f"the study's passes are {fixed}, fixed at round 1 ({record}); other "
                          "passes need a new project")  # fmt: skip
    return fixed


def overlap_of(record: Path, first: Mapping[str, Any], asked: int | None) -> int:
    """The annotators an item gets a pass: fixed at round 1 in a study of passes (its passes count judgments in
    steps of it); another one asked later is refused."""
    fixed = first.get("overlap")
    if fixed is None:
        return asked or 1
    if asked is not None and asked != int(fixed):
        raise OptionError(f"--overlap {asked}", f"the study's overlap is {fixed}, fixed at round 1 ({record}): its "
                          "passes count judgments in steps of it")  # fmt: skip
    return int(fixed)


def reopened(rounds: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """Task key -> the overlap the rounds re-opened it to (the highest)."""
    out: dict[str, int] = {}
    for r in rounds:
        for key, overlap in (r.get("reopened") or {}).items():
            out[key] = max(out.get(key, 0), int(overlap))
    return out


def decide(found: list[dict[Key, pd.Series]], bound: float | dict[str, float], effect: float, eta: float, alpha: float,
           last: Mapping[str, Any], tests: int) -> list[sequential.Comparison]:  # fmt: skip
    """Each comparison over the passes (``found``: :func:`annols.analysis.planning.sequential.counted`'s series), the
    decisions of the last round (``last``) kept with their pass."""
    kept = {tuple(c["key"]): (c["decision"], int(c.get("pass", 1))) for c in last.get("comparisons", [])}
    return sequential.by_pass(found, bound, effect, eta, alpha, kept, tests)


def check_judged(rounds: Sequence[Mapping[str, Any]], state: sequential.Completeness, unit: Mapping[str, str],
                 overlap: int) -> None:  # fmt: skip
    """Refuse a round after one that re-opened items none of which is complete for its pass in the pull (``state``;
    ``unit``: task key -> item, where an item is several tasks): rounds would pile up, deciding nothing new, and the
    same pull read again would re-open more."""
    last = rounds[-1] if rounds else {}
    tasks = set(last.get("reopened") or {})
    if not tasks:
        return
    stage = int(last.get("pass", 2))
    items = {unit.get(k, k) for k in tasks}
    if not any(state.reached.get(i, 0) >= stage for i in items):
        raise AnnolsError(f"none of the {len(items)} item(s) round {len(rounds)} re-opened for pass {stage} is "
                          f"complete for it in the pull (every task with {stage * overlap} judgments): pull again "
                          "once annotators have completed some of them")  # fmt: skip


def asked_judgments(keys: list[str], targets: Mapping[str, int], overlap: int, tidy: pd.DataFrame | None) -> int:
    """The human judgments the project's study tasks ``keys`` take: each task its overlap (``targets``' for a
    re-opened one), or the judgments it has if more."""
    made: Mapping[str, int] = {}
    if tidy is not None and len(tidy):
        judged = tidy[["task_key", "annotator"]].astype(str).drop_duplicates()
        made = judged.groupby("task_key").size().to_dict()
    return sum(max(targets.get(k, overlap), int(made.get(k, 0))) for k in keys)


def afford(units: list[str], cost: Callable[[str], int], left: int | None) -> tuple[list[str], bool]:
    """The first of ``units`` whose judgments (``cost`` each) fit in ``left`` (None: no limit), and whether the
    limit left out any."""
    if left is None:
        return units, False
    out: list[str] = []
    for u in units:
        if cost(u) > left:
            return out, True
        out.append(u)
        left -= cost(u)
    return out, False


def choose(choose_units: Callable[[set[str], str], list[str]], study: list[str], tasks: Mapping[str, list[str]],
           done: Mapping[str, int], passes: int, overlap: int, cost_left: int | None) -> tuple[dict[str, int], int,
                                                                                                bool]:  # fmt: skip
    """The tasks the round re-opens (task key -> its new overlap), their pass, and whether the judgments budget left
    out any: the first pass from 2 with study items (all their tasks) not yet re-opened to it that hold an undecided
    pair, chosen by ``choose_units(excluded, salt)`` (the seeded order of new items, per pass)."""
    for stage in range(2, passes + 1):
        target = stage * overlap
        excluded = {u for u in study if all(done.get(k, overlap) >= target for k in tasks[u])}
        units = choose_units(excluded, f"pass {stage}")
        units, short = afford(units, lambda u: overlap * len(tasks[u]), cost_left)
        if units or short:
            return {k: target for u in units for k in tasks[u]}, stage, short
    return {}, passes, False


def apply(client: LabelStudioClient, title: str, rows: Mapping[str, Mapping[str, Any]],
          targets: Mapping[str, int]) -> int:  # fmt: skip
    """Set the overlap of each task of ``targets`` (task key -> overlap) on the server where it is not that: the
    tasks re-opened now, and those re-opened earlier whose overlap something reset. Returns how many were set."""
    if not targets:
        return 0
    project = client.find_project(title)
    if project is None:
        raise AnnolsError(f"project {title!r} is not on {client.url}: its items cannot be re-opened")
    by_id = {int(rows[k]["task_id"]): n for k, n in targets.items() if rows.get(k, {}).get("task_id") is not None}
    now = {int(t["id"]): int(t.get("overlap") or 0) for t in client.task_fields(project.id, "id,overlap")}
    wrong = [i for i, n in by_id.items() if now.get(i) != n]
    for task_id in wrong:
        client.reopen_task(task_id, by_id[task_id])
    return len(wrong)
