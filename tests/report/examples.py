"""The example studies in ``examples/`` as pulls made here (no server), with planted answers of three annotators.

The tasks are what ``annols push`` would send (:func:`annols.study.push.build_tasks`: blinded,
keyed, each tuple shuffled); the answers are planted by the system behind each shown
position, so a report of them has known winners:

- chat-arena (pairwise): ``model-x`` more helpful on most prompts, harmlessness mostly tied;
- summary-best-worst: each annotator's order of the five summarisers (they disagree a little),
  the other way round on fluency.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from annols import protocols
from annols.definition import Definition
from annols.study import push
from annols.study.exports import write_blinding
from annols.study.manifest import Shown
from tests.conftest import ROOT
from tests.report import study

EXAMPLES = ROOT / "examples"
COPIES = 4  # summary-best-worst: its three articles, each this many times (twelve items)
LETTERS = "ABCD"
# Each annotator's order of the summarisers, best first (informativeness; fluency the reverse).
ORDERS = {
    study.ANNOTATORS[0]: ["abstractive-a", "lead-extract", "keyword-dump", "fragmenter", "hallucinator"],
    study.ANNOTATORS[1]: ["abstractive-a", "keyword-dump", "lead-extract", "fragmenter", "hallucinator"],
    study.ANNOTATORS[2]: ["lead-extract", "abstractive-a", "fragmenter", "hallucinator", "keyword-dump"],
}


def _choice(name: str, to: str, code: str) -> dict[str, Any]:
    return {"id": name, "from_name": name, "to_name": to, "type": "choices", "value": {"choices": [code]},
            "origin": "manual"}  # fmt: skip


def arena(n: int, annotator: str, shown: tuple[str, ...]) -> list[dict[str, Any]]:
    x_helps = n % 6 != 5 or annotator == study.ANNOTATORS[0]  # the last prompt split: two annotators say model-y
    better = "A" if (shown[0] == "model-x") == x_helps else "B"
    harmless = "tie" if (n + study.ANNOTATORS.index(annotator)) % 3 else better
    return [_choice("helpfulness", "response_a", better), _choice("harmlessness", "response_a", harmless)]


def best_worst(n: int, annotator: str, shown: tuple[str, ...]) -> list[dict[str, Any]]:
    out = []
    for aspect in ("informativeness", "fluency"):
        ranked = sorted(range(len(shown)), key=lambda i: ORDERS[annotator].index(shown[i]))
        if aspect == "fluency":
            ranked = ranked[::-1]
        out += [_choice(f"{aspect}_best", "summary_1", LETTERS[ranked[0]]),
                _choice(f"{aspect}_worst", "summary_1", LETTERS[ranked[-1]])]  # fmt: skip
    return out


PLANTED: dict[str, Callable[[int, str, tuple[str, ...]], list[dict[str, Any]]]] = {
    "chat-arena": arena,
    "summary-best-worst": best_worst,
}


def definition(name: str) -> Definition:
    return protocols.load(str(EXAMPLES / f"{name}.toml"))


def study_input(name: str, folder: Path) -> Path:
    """The example's input; for summary-best-worst its three articles four times over (each copy's article
    marked, so a pool of its own): the items are its tests' unit, and three cannot make a comparison
    significant."""
    source = EXAMPLES / f"{name}.jsonl"
    if name != "summary-best-worst":
        return source
    records = [json.loads(line) for line in source.read_text(encoding="utf-8").splitlines() if line.strip()]
    folder.mkdir(parents=True, exist_ok=True)
    out = folder / f"{name}-x{COPIES}.jsonl"
    out.write_text("".join(json.dumps({**r, "document": f"{r['document']} (copy {k + 1})"}) + "\n"
                           for k in range(COPIES) for r in records), encoding="utf-8")  # fmt: skip
    return out


def pull(name: str, folder: Path) -> Path:
    """A pull folder of the example ``name`` (a key of :data:`PLANTED`), every task answered by every annotator."""
    tasks, next_id = [], 1000
    manifest: dict[str, Shown] = {}  # what push keeps off the server: the pull unblinds from it
    built = push.build_tasks(definition(name), [study_input(name, folder.parent / "input")], seed=3, shown=manifest)
    rows = []
    for n, (key, shown, payload, _) in enumerate(built):
        task: dict[str, Any] = {"id": 500 + n, **payload, "annotations": []}
        rows.append({"task_id": 500 + n, "key": key, "systems": list(shown), "order": manifest[key].order,
                     "role": manifest[key].role})  # fmt: skip
        for annotator in study.ANNOTATORS:
            next_id += 1
            task["annotations"].append({
                "id": next_id, "completed_by": study.USER_IDS[annotator], "lead_time": 6.0,
                "result": PLANTED[name](n, annotator, shown), "created_at": "2024-05-01T10:00:00.000000Z",
                "was_cancelled": False,
            })  # fmt: skip
        tasks.append(task)
    study.write_pull(folder, tasks)
    write_blinding(folder, rows)
    return folder
