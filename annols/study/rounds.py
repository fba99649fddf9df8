"""``annols next-round``: a study in rounds that stops when its comparisons are decided.

Each round reads the latest pull's judgments, decides what it can of the comparisons the
study exists for (every pair of systems the input pool holds, per question) with
anytime-valid confidence sequences over items (:mod:`annols.analysis.planning.sequential`), and
pushes the next batch of study items to the same project: items of the pool not pushed
yet whose systems include an undecided pair, in a seeded random order (items stay a random
sample of the pool for each comparison), those that bear on the most undecided comparisons
first. Push's resume by task key makes a repeated round safe. When every comparison is
decided, the pool holds no item for the undecided ones, or ``budget`` study items are in
the project, it pushes nothing and says why. With the goal ``best`` the comparisons the
study exists for are those that decide which system is best
(:func:`annols.analysis.planning.sequential.relevant`): only items holding one of them are pushed,
and the study is decided when none is undecided. For best-worst and spans an item is every
task sharing a context (a pool's tuples; a source's candidates, a task each), as the report's
tests have it: a round pushes whole items, and ``--batch`` and ``--budget`` count items.

With ``pairs`` adaptive (a pairwise study of three systems or more, fixed at round 1), which pairs get the round's
items is chosen by :func:`annols.analysis.planning.pair_sampler.next_pairs` (the pairs whose Bradley-Terry order is
least certain, with a floor of exploration) from the observations counted so far; each pair's items are still taken in
the seeded order above. Re-opened items of a study of passes keep the seeded order.

An item counts once complete: every one of its tasks holds ``overlap`` judgments (a study of passes: pass p's
p x overlap), its observation then final, each task's first judgments in annotation order
(:func:`annols.analysis.planning.sequential.counted`). Items judged but not complete are waiting, left out; a round
needs a complete item of the round before it.

With ``passes`` above 1 (:mod:`annols.study.passes`), once no new item can be pushed for the undecided
comparisons, rounds re-open items already pushed for more annotators, each pass with its own confidence
sequence; ``budget_judgments`` caps the judgments asked.

Every round is recorded off the server beside the manifest, in ``<project>.rounds.jsonl``
(one JSON line a round: time, the task keys it pushed and how many study items they make
(best-worst and spans: also how many tasks each, ``item_tasks``), the items waiting, the
decisions at that round, and what was fixed at the first round: the mixture width, the
number of comparisons, alpha, the effect, the goal, the error cap if one was given, and the
fixed design ``annols plan`` would have chosen for it).
"""

from __future__ import annotations

import random
import secrets
import statistics
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime
from itertools import combinations
from pathlib import Path
from typing import Any

import pandas as pd  # type: ignore[import-untyped, unused-ignore]

from annols import files, jsontext
from annols.analysis.by_style import asked
from annols.analysis.planning import pair_sampler, sequential
from annols.analysis.planning import plan as plan_lib
from annols.definition import Definition, design
from annols.errors import AnnolsError, OptionError
from annols.formats import format_for
from annols.labelstudio.client import LabelStudioClient
from annols.study import passes as passes_lib
from annols.study import push as push_lib
from annols.study import roles
from annols.study.manifest import Keys, keys_of, manifest_path, require, round_rows, rounds_path, rows_by_key

DECIDED, BEST_FOUND, BUDGET, POOL, PASSES = "decided", "best", "budget", "pool", "passes"
REASONS = {
    DECIDED: "every comparison is decided",
    BEST_FOUND: "the comparisons that decide the best system are decided",
    BUDGET: "the budget is spent",
    POOL: "the pool holds no item not yet pushed for the undecided comparisons",
    PASSES: "the pool holds no item not yet pushed for the undecided comparisons, and every pushed one has had all "
            "its passes",
}
Key = tuple[str, str, str]
UNIFORM, ADAPTIVE = "uniform", "adaptive"
PAIRS = (UNIFORM, ADAPTIVE)


@dataclass(frozen=True)
class RoundOptions:
    title: str
    effect: float  # smallest difference worth finding, on plan's scale of the style
    batch: int = 20  # study items a round pushes at most
    budget: int | None = None  # study items in the project at most, over all rounds
    alpha: float = sequential.ALPHA
    seed: int = 0
    overlap: int | None = None
    manifest_dir: Path = Path(".annols")
    goal: str | None = None  # sequential.GOALS; None: the one fixed at round 1 (before it: all)
    passes: int | None = None  # passes over the items (:mod:`annols.study.passes`); None: round 1's (before it: 1)
    budget_judgments: int | None = None  # human judgments asked of the project at most, over all rounds
    error_cap: float | None = None  # spans with weights: where error scores are clipped; None: fixed at round 1
    pairs: str | None = None  # PAIRS: how a round spreads items over the pairs; None: round 1's (before: uniform)


@dataclass(frozen=True)
class RoundResult:
    round: int
    comparisons: list[sequential.Comparison]
    pushed: list[str]
    items: int  # study items in the project after the round
    judgments: int  # human judgments the pull held
    reason: str  # why nothing was pushed ("" when a batch was)
    record: Path
    push: push_lib.PushReport | None = None
    goal: str = sequential.ALL
    conclusions: dict[str, str] | None = None  # per question, the best system (goal best)
    reopened: dict[str, int] | None = None  # task key -> the overlap it was re-opened to (a study of passes)
    passes: int = 1
    stage: int = 1  # the pass the round worked on
    pushed_items: int = 0  # the study items of ``pushed`` (best-worst and spans: an item is several tasks)
    waiting: int = 0  # items judged but not complete: left out of the comparisons until they are


def read_rounds(path: Path) -> list[dict[str, Any]]:
    """The rounds recorded so far (none if the file is absent); InputError naming the line if one is not ours."""
    if not path.exists():
        return []
    with open(path, encoding="utf-8") as f:
        return round_rows(path, f)


def pool(definition: Definition, inputs: list[Path]) -> dict[str, tuple[str, ...]]:
    """Key -> systems of each study item of the inputs, in input order (a repeated key once); designed
    (groups, best-worst tuples) with the secret the caller set (:func:`annols.definition.design.drawn_with`)."""
    out: dict[str, tuple[str, ...]] = {}
    for task in format_for(definition).read(inputs, definition):
        out.setdefault(task.key, tuple(task.systems or ()))
    return out


def units(definition: Definition, inputs: list[Path]) -> dict[str, str]:
    """Key -> item of each task of the inputs, for the styles whose item holds several tasks (best-worst: its
    tuples; spans: one task per candidate): the content of the context panes, as the report names it. Other
    styles: none (a task is its item)."""
    if definition.style not in sequential.BY_ITEM:
        return {}
    return {t.key: asked.unit_of(definition.spec, t.data, t.key) for t in format_for(definition).read(inputs,
                                                                                                        definition)}


def grouped(items: dict[str, tuple[str, ...]], unit: dict[str, str]) -> tuple[dict[str, tuple[str, ...]],
                                                                               dict[str, list[str]]]:  # fmt: skip
    """Item -> the systems of its tasks, and item -> its task keys, in input order (a task its own item unless
    ``unit`` names one)."""
    systems: dict[str, tuple[str, ...]] = {}
    keys: dict[str, list[str]] = {}
    for key, shown in items.items():
        u = unit.get(key, key)
        systems[u] = tuple(dict.fromkeys((*systems.get(u, ()), *shown)))
        keys.setdefault(u, []).append(key)
    return systems, keys


def pairs_of(systems: tuple[str, ...]) -> list[tuple[str, str]]:
    return [(a, b) for a, b in combinations(sorted(set(systems)), 2)]


def study_comparisons(definition: Definition, items: dict[str, tuple[str, ...]]) -> list[Key]:
    """Every pair of systems the pool holds, per question: what the study exists for."""
    pairs = sorted({p for systems in items.values() for p in pairs_of(systems)})
    if not pairs:
        raise AnnolsError("the inputs name no systems (a 'systems' field per record): there is no comparison of "
                          "systems to run in rounds")  # fmt: skip
    return [(q, a, b) for q in sequential.questions(definition) for a, b in pairs]


def fixed_design(definition: Definition, effect: float, annotators: int, pairs: int, seed: int) -> dict[str, Any]:
    """The design ``annols plan`` chooses for ``effect`` with this many annotators an item (its default grid and
    assumptions); pairwise items hold one pair, so the study needs it once per pair."""
    if definition.style not in plan_lib.DEFAULTS:  # plan simulates pairwise, ratings and ranking only
        return {"items": None, "judgments": None, "annotators": annotators, "plan": False}
    a = plan_lib.override(plan_lib.assumptions(definition), effect=effect)
    best = plan_lib.plan(a, plan_lib.ITEMS, (annotators,), plan_lib.SIMULATIONS, seed).cheapest
    if best is None:
        return {"items": None, "judgments": None, "annotators": annotators}
    times = pairs if definition.style == "pairwise" else 1
    return {"items": best.items * times, "judgments": best.judgments * times, "annotators": annotators,
            "power": best.power}  # fmt: skip


def next_round(client: LabelStudioClient, definition: Definition, inputs: list[Path], tidy: pd.DataFrame | None,
               options: RoundOptions) -> RoundResult:  # fmt: skip
    """Decide what the pull (``tidy``: the report's judgments table of the latest pull; None before the first
    round) shows, and push the next batch unless every comparison is decided or the budget is spent."""
    sequential.bounds_of(definition)  # a definition without a bounded comparison is refused before anything
    if options.batch < 1:
        raise AnnolsError("--batch must be at least 1")
    if not options.effect > 0:
        raise AnnolsError(f"--effect must be above 0, not {options.effect}")
    record = rounds_path(options.manifest_dir, options.title)
    earlier = sequential.named_rounds(definition, read_rounds(record))
    # The study's keys, a new study's made here: the designs push draws with them (groups, best-worst tuples)
    # give the tasks, and the keys, a round chooses from.
    keys = keys_of(manifest_path(options.manifest_dir, options.title))
    secret = None if keys is not None else secrets.token_bytes(32)
    keys = keys or Keys(secret)
    with design.drawn_with(keys.design_secret()):
        unit = units(definition, inputs)
        items, tasks = grouped(pool(definition, inputs), unit)
    wanted = study_comparisons(definition, items)
    if tidy is not None:  # a round after the first reads a pull: whose systems and roles only the manifest says
        require(manifest_path(options.manifest_dir, options.title), options.title)
    rows = rows_by_key(manifest_path(options.manifest_dir, options.title))
    pushed_keys = [k for k, r in rows.items() if r.get("role", roles.STUDY) == roles.STUDY]
    pushed = list(dict.fromkeys(unit.get(k, k) for k in pushed_keys))  # the items: a task is one but in BY_ITEM
    if pushed and tidy is None:
        raise AnnolsError(f"project {options.title!r} already holds {len(pushed)} study item(s): give the latest "
                          "pull of it (--pull)")  # fmt: skip
    first = earlier[0] if earlier else {}
    eta = float(first.get("eta", sequential.eta_for(_items_per_pair(items))))
    tests = int(first.get("tests", len(wanted)))
    alpha = float(first.get("alpha", options.alpha))
    effect = float(first.get("effect", options.effect))
    goal = goal_of(record, first, options.goal)
    passes = passes_lib.passes_of(record, first, options.passes)
    overlap = passes_lib.overlap_of(record, first, options.overlap)
    cap = error_cap_of(definition, record, first, options.error_cap)
    spread = pairs_of_study(definition, items, record, first, options.pairs)
    bound = sequential.bounds_of(definition, cap)
    frame = sequential.frame_of(definition, tidy, cap) if tidy is not None and len(tidy) else None
    study = set(pushed)
    # An item counts once complete (every task of it holds its pass's judgments), its observation then final: the
    # confidence sequence's guarantee is for observations that never change once looked at.
    need = overlap if passes > 1 else int((first.get("fixed") or {}).get("annotators") or options.overlap or 1)
    members = {k: unit[k] for k in pushed_keys if k in unit} or None
    found, state = sequential.counted(definition, tidy if tidy is not None else pd.DataFrame(), set(pushed_keys),
                                      wanted, passes, need, cap, members)  # fmt: skip
    complete = {i for i, p in state.reached.items() if p >= 1}
    last = {unit.get(k, k) for k in earlier[-1].get("pushed", [])} if earlier else set()
    if last and not complete.intersection(last):  # else rounds would pile up, deciding nothing new
        raise AnnolsError(f"none of the {len(last)} item(s) round {len(earlier)} pushed has all its judgments in "
                          f"the pull ({len(state.waiting & last)} of them have some): pull again once annotators have "
                          "completed some of them")  # fmt: skip
    kept = {tuple(c["key"]): c["decision"] for c in (earlier[-1].get("comparisons", []) if earlier else [])}
    if passes == 1:
        decided = sequential.comparisons(found[0], bound, effect, eta, alpha, kept, tests)
    else:
        passes_lib.check_judged(earlier, state, unit, overlap)
        decided = passes_lib.decide(found, bound, effect, eta, alpha, earlier[-1] if earlier else {}, tests)
    open_pairs = {(c.first, c.second) for c in sequential.relevant(decided, goal)}
    done = passes_lib.reopened(earlier)
    left = (None if options.budget_judgments is None else options.budget_judgments
            - passes_lib.asked_judgments(pushed_keys, done, options.overlap or 1, tidy))  # fmt: skip
    new: list[str] = []  # the new items chosen
    reason, chosen, stage, short = "", [], max([1, *(int(r.get("pass", 1)) for r in earlier)]), False
    reopen: dict[str, int] = {}
    if not open_pairs:
        reason = DECIDED if goal == sequential.ALL else BEST_FOUND
    else:
        room = options.batch if options.budget is None else min(options.batch, options.budget - len(pushed))
        picker = _choose if spread == UNIFORM else _adaptive(found[0])
        new, short = passes_lib.afford(picker(items, study, open_pairs, room, options.seed) if room > 0 else [],
                                       lambda u: len(tasks[u]) * (options.overlap or 1), left)  # fmt: skip
        chosen = [k for u in new for k in tasks[u]]
        if not chosen and not short and passes > 1:
            held = [u for u in pushed if u in items]  # pushed items the pool still holds
            reopen, stage, short = passes_lib.choose(
                lambda excluded, salt: _choose({u: items[u] for u in held}, excluded, open_pairs, options.batch,
                                               options.seed, salt),
                held, tasks, done, passes, overlap, left)  # fmt: skip
        spent = short or room <= 0
        reason = "" if chosen or reopen else BUDGET if spent else POOL if passes == 1 else PASSES
    report = None
    if passes > 1:  # the overlaps recorded, set again where the server lost them, and this round's
        passes_lib.apply(client, options.title, rows, {**done, **reopen})
    if chosen:
        push_options = push_lib.PushOptions(title=options.title, overlap=options.overlap, seed=options.seed,
                                            manifest_dir=options.manifest_dir, only=frozenset(chosen),
                                            secret=secret)  # fmt: skip
        report = push_lib.push(client, definition, inputs, push_options)
    annotators = options.overlap or 1
    new_items = {unit.get(k, k) for k in chosen}
    judgments = sequential.judgments_of(frame, set(pushed_keys))
    row: dict[str, Any] = {
        "round": len(earlier) + 1,
        "time": datetime.now(UTC).isoformat(timespec="seconds"),
        "pushed": chosen,
        "pushed_items": len(new_items),
        "items": len(pushed) + len(new_items),
        "judgments": judgments,
        "waiting": len(state.waiting),
        "reason": reason,
        "comparisons": [_recorded(c) for c in decided],
        "eta": eta,
        "tests": tests,
        "alpha": alpha,
        "effect": effect,
        "budget": options.budget,
    }
    if chosen and unit:  # best-worst and spans: the tasks of each item, in ``pushed`` order, for the report
        row["item_tasks"] = [len(tasks[u]) for u in new]
    if goal != sequential.ALL:  # records of goal all stay as they were
        row["goal"] = goal
    if options.budget_judgments is not None:
        row["budget_judgments"] = options.budget_judgments
    if passes > 1:  # records of one pass stay as they were
        row.update(passes=passes, overlap=overlap, reopened=reopen, **{"pass": stage})
        for c, recorded in zip(decided, row["comparisons"], strict=True):
            recorded["pass"] = c.pass_
    if cap is not None:  # so do those of the default cap
        row["error_cap"] = cap
    if spread != UNIFORM:  # so do those of uniform pairs
        row["pairs"] = spread
    row["fixed"] = first.get("fixed") or fixed_design(definition, effect, int(annotators),
                                                      len({(a, b) for _, a, b in wanted}), options.seed)
    before = earlier[-1] if earlier else {}
    repeated = (not chosen and not reopen and before.get("reason") == reason and before.get("items") == row["items"]
                and [c["decision"] for c in before.get("comparisons", [])] == [c.decision for c in decided])
    if not repeated:  # the same answer again is not another round
        _write(record, [*earlier, row])
    return RoundResult(row["round"] if not repeated else len(earlier), decided, chosen, row["items"], judgments,
                       reason, record, report, goal,
                       sequential.conclusions(decided) if goal == sequential.BEST else None, reopen,
                       passes, stage, len(new_items), len(state.waiting))  # fmt: skip


def goal_of(record: Path, first: dict[str, Any], asked: str | None) -> str:
    """The study's goal: fixed at round 1 (a record without one: all); a different one asked later is refused,
    since the comparisons pushed so far were chosen for the first."""
    if asked is not None and asked not in sequential.GOALS:
        raise OptionError("--goal", f"one of {', '.join(sequential.GOALS)}, not {asked!r}")
    if not first:
        return asked or sequential.ALL
    fixed = str(first.get("goal", sequential.ALL))
    if asked is not None and asked != fixed:
        raise OptionError(f"--goal {asked}", f"the study's goal is {fixed!r}, fixed at round 1 ({record}); a "
                          "new goal needs a new project")  # fmt: skip
    return fixed


def error_cap_of(definition: Definition, record: Path, first: dict[str, Any], asked: float | None) -> float | None:
    """The study's error cap (spans with weights, :func:`annols.analysis.planning.sequential.error_cap`): fixed at round
    1, None for the default (the largest weight); a different one asked later is refused, as the decisions kept so
    far were made on the first."""
    if asked is not None:
        sequential.check_error_cap(definition, asked)
    if not first:
        return asked
    fixed = first.get("error_cap")
    if asked is not None and asked != sequential.error_cap(definition.spec, fixed):
        raise OptionError(f"--error-cap {asked:g}", f"the study's error cap is "
                          f"{sequential.error_cap(definition.spec, fixed):g}, fixed at round 1 ({record}); a new cap "
                          "needs a new project")  # fmt: skip
    return None if fixed is None else float(fixed)


def pairs_of_study(definition: Definition, items: dict[str, tuple[str, ...]], record: Path, first: dict[str, Any],
                   asked: str | None) -> str:  # fmt: skip
    """How rounds spread their items over the pairs: fixed at round 1 (a record without it: uniform); another one
    asked later is refused, as the pairs sampled so far were chosen by the first. ``adaptive``
    (:mod:`annols.analysis.planning.pair_sampler`) takes a pairwise study of at least three systems."""
    if asked is not None and asked not in PAIRS:
        raise OptionError("--pairs", f"one of {', '.join(PAIRS)}, not {asked!r}")
    if first:
        fixed = str(first.get("pairs", UNIFORM))
        if asked is not None and asked != fixed:
            raise OptionError(f"--pairs {asked}", f"the study's pairs are {fixed!r}, fixed at round 1 ({record}); "
                              "another sampler needs a new project")  # fmt: skip
        return fixed
    if asked == ADAPTIVE:
        systems = {s for shown in items.values() for s in shown}
        if definition.style != "pairwise" or len(systems) < 3:
            raise OptionError("--pairs adaptive", f"a pairwise study of at least 3 systems; {definition.name} (style "
                              f"{definition.style}) has {len(systems)} system(s) in the pool")  # fmt: skip
    return asked or UNIFORM


def _adaptive(found: dict[Key, pd.Series]) -> Any:
    """A chooser of items like :func:`_choose`, whose pairs :func:`annols.analysis.planning.pair_sampler.next_pairs`
    picks from the comparisons' counted observations so far (``found``: per question, an item's net share is a battle
    the first system won (1 + net) / 2 of); each pair's items are taken in :func:`_choose`'s seeded order."""
    battles: dict[str, list[pair_sampler.Battle]] = {}
    for (question, a, b), x in found.items():
        battles.setdefault(question, []).extend((a, b, (1 + float(v)) / 2) for v in x.to_numpy(float))

    def choose(items: dict[str, tuple[str, ...]], pushed: set[str], open_pairs: set[tuple[str, str]], room: int,
               seed: int) -> list[str]:  # fmt: skip
        order = _choose(items, pushed, open_pairs, len(items), seed)  # every unpushed item of an open pair
        by_pair: dict[tuple[str, str], list[str]] = {}
        for key in order:
            for pair in pairs_of(items[key]):
                if pair in open_pairs:
                    by_pair.setdefault(pair, []).append(key)
        systems = sorted({s for shown in items.values() for s in shown})
        picked = pair_sampler.next_pairs(systems, battles, sorted(by_pair), room, seed,
                                         room={p: len(keys) for p, keys in by_pair.items()})  # fmt: skip
        taken = dict.fromkeys(by_pair, 0)
        out: list[str] = []
        for pair in picked:  # a pair's next item in the seeded order
            out.append(by_pair[pair][taken[pair]])
            taken[pair] += 1
        return out

    return choose


def _items_per_pair(items: dict[str, tuple[str, ...]]) -> int:
    """The median number of pool items holding a pair: the most items a comparison can get (pairwise items hold one
    pair, so each pair's stream is a share of the pool), where its confidence sequence is set to be tightest."""
    counts = Counter(p for systems in items.values() for p in pairs_of(systems))
    return int(statistics.median(counts.values())) if counts else 1


def _choose(items: dict[str, tuple[str, ...]], pushed: set[str], open_pairs: set[tuple[str, str]], room: int,
            seed: int, salt: str = "rounds") -> list[str]:  # fmt: skip
    """Up to ``room`` items not yet pushed that hold an undecided pair: seeded random order, those holding the most
    undecided pairs first. ``salt``: another order (a pass's re-opening)."""
    order = [k for k in items if k not in pushed]
    random.Random(f"{seed}:{salt}").shuffle(order)
    useful = [(-sum(p in open_pairs for p in pairs_of(items[k])), i, k) for i, k in enumerate(order)]
    return [k for n, _, k in sorted(useful) if n < 0][: max(0, room)]


def _recorded(c: sequential.Comparison) -> dict[str, Any]:
    return {"key": [c.question, c.first, c.second], "items": c.items, "mean": _number(c.mean), "low": _number(c.low),
            "high": _number(c.high), "decision": c.decision}  # fmt: skip


def _number(x: float) -> float | None:
    return None if x != x or abs(x) == float("inf") else round(x, 6)  # JSON has no nan or infinity


def _write(path: Path, rows: list[dict[str, Any]]) -> None:
    with files.atomic_open(path, private=True) as f:
        for row in rows:
            f.write(jsontext.dumps(row, ensure_ascii=False) + "\n")
