"""Arena battles in: a file in the public arena layout, as a pull folder the report reads like any pairwise study.

The layout, what a battle is and who is a judge are :mod:`annols.formats.arena`'s (it reads the
file; ``push --with-annotations`` reads the same file through it). Here the battles become a pull
folder offline: one task per battle, with the system first in name order as candidate A; the
people's votes are the pull's annotations (annotator = the judge value); each model judge's votes
are a judge file in ``judges/`` (:mod:`annols.study.judges`), so the report sets them beside the
people in "Judges and humans" and the study's own tables count the people only.

The definition must be pairwise with one aspect and four answers: one preferring each candidate
and the codes ``tie`` and ``bothbad`` (``examples/arena.toml``).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from annols import files
from annols.definition import Definition
from annols.errors import AnnolsError, InputError
from annols.formats.answers import answer_items, controls
from annols.formats.arena import check_definition, is_arena, is_model, judge_lines, read_battles
from annols.study.exports import ANNOTATORS_FILE, BLINDING_FILE, EXPORT_FILE, PROJECT_FILE
from annols.study.hidden_judges import PULL_DIR

__all__ = ["Imported", "hidden_judges", "import_arena", "is_model"]
JUDGE_FILE_PREFIX = "arena-"  # a push's judge files made of an arena input's model judges: arena-<judge>.jsonl


def hidden_judges(definition: Definition, inputs: Sequence[Path], folder: Path) -> list[Path]:
    """The model judges of the arena-layout files among ``inputs`` (``push --with-annotations``), written as
    judge files ``arena-<judge>.jsonl`` in ``folder``, for push to keep off the server as ``--judge`` keeps
    a judge; [] when no input is in the arena layout or none has a model judge. A judge voting in two
    files gets one file."""
    lines: dict[str, list[dict[str, Any]]] = {}
    for path in inputs:
        if is_arena(Path(path)):
            for name, found in judge_lines(Path(path), definition).items():
                lines.setdefault(name, []).extend(found)
    out = []
    for name, found in sorted(lines.items()):
        target = Path(folder) / f"{JUDGE_FILE_PREFIX}{name}.jsonl"
        files.write_text(target, "".join(json.dumps(x, ensure_ascii=False) + "\n" for x in found))
        out.append(target)
    return out

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


def import_arena(definition: Definition, path: Path, out_dir: Path, judges: Sequence[str] = (),
                 humans: Sequence[str] = ()) -> Imported:  # fmt: skip
    """Write ``out_dir`` as a pull folder holding the arena file's votes (people as annotations, model
    judges as judge files in ``judges/``). ``out_dir`` must not exist or be empty; it appears only whole."""
    out_dir = Path(out_dir)
    if out_dir.exists() and (not out_dir.is_dir() or any(out_dir.iterdir())):
        raise AnnolsError(f"{out_dir}: exists and is not an empty folder; give a new folder for the import")
    aspect = check_definition(definition)
    found = read_battles(path, judges, humans)
    known = controls(definition)
    candidates = [c.name for c in definition.spec.candidates]
    tasks: list[dict[str, Any]] = []
    blind: list[dict[str, Any]] = []
    judge_lines: dict[str, list[dict[str, Any]]] = {}
    people: set[str] = set()
    annotation_id = 0

    def fail(field_name: str, problem: str) -> InputError:
        return InputError(path, "", field_name, problem)

    for task_id, battle in enumerate(found.battles, start=1):
        first, key = battle.first, battle.key
        data: dict[str, Any] = dict(zip(candidates, (list(c) for c in battle.conversations), strict=True))
        data["record"] = {"id": key, "question_id": first.question, "turn": first.turn}
        annotations = []
        for vote in battle.people:
            annotation_id += 1
            people.add(vote.judge)
            result, _ = answer_items({aspect: vote.code()}, known, fail, origin="manual")
            annotations.append({"id": annotation_id, "completed_by": {"email": vote.judge}, "result": result,
                                "created_at": "", "lead_time": None, "was_cancelled": False})  # fmt: skip
        tasks.append({"id": task_id, "data": data, "meta": {"annols_key": key}, "annotations": annotations})
        blind.append({"task_id": task_id, "key": key, "systems": list(first.pair), "order": [0, 1], "role": "study"})
        for name, vote in battle.judges.items():
            judge_lines.setdefault(name, []).append({"task": key, "judge": name, "answers": {aspect: vote.code()}})
    _write(out_dir, definition, tasks, blind, judge_lines, path)
    return Imported(out_dir, len(tasks), sorted(people), sorted(judge_lines),
                    sum(len(b.people) for b in found.battles), sum(len(b.judges) for b in found.battles),
                    found.systems, [str(w) for w in found.warnings])  # fmt: skip


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
