"""Hybrid studies: a judge answers every item, humans a random share of them.

``annols push ... --judge J.jsonl --human-share 0.2 --seed N`` reads the input's items, draws the
human subset from the seed (:func:`draw`: the same items on every re-run of the push), and sends only
those to Label Studio. The draw is recorded off the server, in the manifest's header (``hybrid``: the
share, the seed, the items and how many went to humans; its rows are the human items). The judge
stays off the server as every hidden judge does (:mod:`annols.study.hidden_judges`), and so do the
items only the judge answered: the store beside the manifest keeps them (``pool.jsonl``, one line
per item: key, data and systems in the input's order), pull copies them to the pull folder, and the
report sets the judge's answers on them beside the humans' (judge-assisted estimates,
:mod:`annols.analysis.judging.ppi`). ``report --judge-pool INPUT`` reads such items from the input itself.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from annols import files, jsontext
from annols.definition import Definition
from annols.errors import AnnolsError, InputError, OptionError
from annols.formats import format_for
from annols.study import hidden_judges
from annols.study.hidden_judges import POOL_FILE
from annols.study.judges import Judges
from annols.study.manifest import read_rows
from annols.styles.answers import ExportedTask


@dataclass(frozen=True)
class Draw:
    humans: frozenset[str]  # the keys that go to the server
    items: int  # the input's distinct items
    header: dict[str, Any]  # what the manifest records


@dataclass(frozen=True)
class Judged:
    """A push's hidden judges, checked against its inputs; with ``--human-share``, the items humans get."""

    paths: tuple[Path, ...]
    judges: Judges
    draw: Draw | None = None


def judged(definition: Definition, paths: Sequence[Path], inputs: Sequence[Path], share: float | None,
           seed: int) -> Judged | None:  # fmt: skip
    """The checks of ``push --judge`` (``--human-share``), shared and isolated alike, before anything is sent:
    every judge line fits the config and answers a task of the inputs; with a share, the judge answers every item
    and the human subset is drawn (:func:`draw`). None without judges."""
    if share is not None and not paths:
        raise OptionError("--human-share", "needs --judge: the judge answers every item, humans a share of them")
    if not paths:
        return None
    judges = Judges.read(definition, list(paths))
    hidden_judges.check_against_inputs(definition, judges, inputs)
    if share is None:
        return Judged(tuple(paths), judges)
    check_covered(definition, judges, inputs)
    return Judged(tuple(paths), judges, draw(definition, inputs, share, seed))


def keep(definition: Definition, found: Judged, inputs: Sequence[Path], directory: Path, project_id: int | None,
         title: str) -> None:  # fmt: skip
    """Keep the judges (and a hybrid study's judge-only items) in the judge store ``directory``, off the server
    (``project_id`` None: of the isolated study ``title``)."""
    hidden_judges.store(definition, list(found.paths), directory, project_id, title)
    if found.draw is not None:
        store_pool(definition, inputs, found.draw.humans, directory)


def draw(definition: Definition, inputs: Sequence[Path], share: float, seed: int) -> Draw:
    """The human subset: round(share x items) of the input's distinct items (at least 2), drawn from ``seed``.

    An item is a task, but for the styles whose item holds several tasks (best-worst: an article's tuples;
    spans: a source's candidates), where it is every task sharing a context, drawn together: the judge-assisted
    estimates take the item as their unit, and a difference of two systems needs both on the humans' items.
    The items are taken in key order, so the draw does not depend on the order of the input's records."""
    if not 0 < share <= 1:
        raise OptionError("--human-share", f"must be above 0 and at most 1, not {share:g}")
    by_item = items_of(definition, inputs)
    items = sorted(by_item)
    k = min(len(items), max(2, round(share * len(items))))
    chosen = random.Random(f"{seed}:humans").sample(items, k)
    humans = frozenset(key for item in chosen for key in by_item[item])
    return Draw(humans, len(items), {"share": share, "seed": seed, "items": len(items), "humans": k})


def items_of(definition: Definition, inputs: Sequence[Path]) -> dict[str, list[str]]:
    """Item -> its task keys (each once, in input order): a task is its own item but for the styles whose item
    holds several tasks (best-worst: an article's tuples; spans: a source's candidates), where an item is every
    task sharing a context, as the report's item unit has it."""
    from annols.analysis.by_style import asked
    from annols.analysis.planning import sequential

    grouped = definition.style in sequential.BY_ITEM
    by_item: dict[str, dict[str, None]] = {}
    for task in format_for(definition).read(inputs, definition):
        item = asked.unit_of(definition.spec, task.data, task.key) if grouped else task.key
        by_item.setdefault(item, {})[task.key] = None
    return {item: list(keys) for item, keys in by_item.items()}


def check_covered(definition: Definition, judges: Judges, inputs: Sequence[Path]) -> None:
    """Every item must have the judge's answer: PPI needs the judge on every item, the humans' too."""
    fmt = format_for(definition)
    for task in fmt.read(inputs, definition):
        if not judges.annotations(pool_task(task.key, task.data, task.systems)):
            raise InputError(task.location, "", "", f"no judge answers item {task.key!r}: with --human-share the "
                             "judge answers every item (humans get a share of them)")  # fmt: skip


def check_same_draw(manifest: Path, header: dict[str, Any] | None) -> None:
    """A re-push with another share or seed (``header``; None: no ``--human-share``) would change which items humans
    judge, and one without a share would send them every item: refused."""
    if not manifest.exists():
        return
    recorded, rows = read_rows(manifest)
    check_recorded(manifest, recorded.get("hybrid"), header, bool(rows))


def check_recorded(where: Path, recorded: dict[str, Any] | None, header: dict[str, Any] | None,
                   pushed: bool) -> None:  # fmt: skip
    """This push's draw (``header``, None: no ``--human-share``) against the one ``where`` records (``recorded``;
    ``pushed``: the study was pushed before): another share or seed would change which items humans judge, and
    none would send them the judge's only items: refused, as is a share for a study pushed without one."""
    if recorded is not None and recorded != header:
        asks = ("has no --human-share" if header is None else
                f"asks for share {header['share']} with seed {header['seed']} over {header['items']}")  # fmt: skip
        raise OptionError("--human-share", f"{where} records a hybrid draw of share {recorded.get('share')} "
                          f"with seed {recorded.get('seed')} over {recorded.get('items')} items; this push {asks}: "
                          "push with the recorded ones, or to a new project")  # fmt: skip
    if recorded is None and header is not None and pushed:
        raise OptionError("--human-share", f"{where}: the project was pushed without --human-share; push "
                          "the hybrid study to a new project")  # fmt: skip


def pool_task(key: str, data: dict[str, Any], systems: Sequence[str]) -> ExportedTask:
    """An item as the report sets a judge on it: shown in the input's order (no blinding to undo)."""
    return ExportedTask(id=0, key=key, data=data, systems=tuple(systems), annotations=(),
                        source_systems=tuple(systems))  # fmt: skip


def store_pool(definition: Definition, inputs: Sequence[Path], humans: frozenset[str], directory: Path) -> Path:
    """Keep the judge-only items (key, data, systems) in the judge store, for the report."""
    seen: set[str] = set()
    lines = []
    for task in format_for(definition).read(inputs, definition):
        if task.key in humans or task.key in seen:
            continue
        seen.add(task.key)
        lines.append(jsontext.dumps({"key": task.key, "data": task.data, "systems": list(task.systems)},
                                    ensure_ascii=False))  # fmt: skip
    target = Path(directory) / POOL_FILE
    files.private_folder(Path(directory))
    files.write_text(target, "".join(line + "\n" for line in lines), private=True)
    return target


def read_pool(path: Path) -> list[ExportedTask]:
    """The items of a pool file."""
    out = []
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as e:
        raise AnnolsError(f"{path}: not readable ({e})") from e
    for n, line in enumerate(text.splitlines(), start=1):
        try:
            row = json.loads(line)
            out.append(pool_task(str(row["key"]), dict(row["data"]), [str(s) for s in row["systems"]]))
        except (ValueError, KeyError, TypeError) as e:
            raise InputError(path, f"line {n}", "", f"not an item of a hybrid study's pool ({e})") from None
    return out


def input_pool(definition: Definition, inputs: Sequence[Path]) -> list[ExportedTask]:
    """The items of the protocol's input files (``report --judge-pool``)."""
    seen: dict[str, ExportedTask] = {}
    for task in format_for(definition).read(inputs, definition):
        seen.setdefault(task.key, pool_task(task.key, task.data, task.systems))
    return list(seen.values())


def mark_pool(judges: Judges, items: Sequence[ExportedTask]) -> None:
    """The judge's lines on judge-only items met their item (they never reach the server)."""
    for task in items:
        judges.annotations(task)
