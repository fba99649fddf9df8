"""Hidden judges: a judge's answers kept out of the annotators' sight, and pulled back beside them.

``annols push ... --judge FILE`` checks each judge file against the config and against the
tasks of the push (every line must name one of its tasks, by key or by the input record's
id) before anything is sent, and keeps the files in the judge store beside the push's
manifest, ``<manifest-dir>/<project>.judges/`` (the files as given and ``project.json``
naming the project). ``annols pull`` with the same ``--manifest-dir`` finds them, adds each
judge to the result files as its own annotator ``judge:<name>`` and copies them to the pull
folder's ``judges/``, where ``annols report`` reads them.

An isolated study (``push --isolate``, :mod:`annols.study.isolate`) keeps one store for the study,
the same folder beside its ``<project>.isolated.json``: the study has a project on every
instance, none of its own, so the store's ``project.json`` names the study (``"id": null``,
``"isolated": true``); ``pull --isolate`` adds the judges to the merged pull folder only.

Why not on the server: open-source Label Studio 1.23 has no roles (every member of the
organization may call every API), so anything stored there can reach an annotator's
browser. Predictions in particular are not hidden by turning ``show_collab_predictions``
off: the labeling stream's task serializer
(``TaskWithAnnotationsAndPredictionsAndDraftsSerializer.get_predictions``) returns every
prediction of the task when the project has no ``model_version``, and the Data Manager's
task list, which the labeling view loads, carries ``predictions_results`` and
``total_predictions``. Task ``meta`` and a second project are as readable. The judge
therefore never leaves the coordinator's machine; tests/browser/test_hidden_judge.py
checks every response an annotator's browser receives.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Sequence
from pathlib import Path

from annols import files
from annols.definition import Definition
from annols.errors import AnnolsError
from annols.formats import format_for
from annols.study.judges import Judges
from annols.styles.answers import ExportedTask

STORE_SUFFIX = ".judges"
PROJECT_FILE = "project.json"
PULL_DIR = "judges"  # a pull folder's judges, read by report
POOL_FILE = "pool.jsonl"  # a hybrid study's judge-only items (annols.study.hybrid), beside its judges


def store_dir(manifest_dir: Path, title: str) -> Path:
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", title).strip("-") or "project"
    return Path(manifest_dir) / f"{slug}{STORE_SUFFIX}"


def check_against_inputs(definition: Definition, judges: Judges, inputs: Sequence[Path]) -> int:
    """Every judge line must answer a task of the inputs and fit it (spans on its text): else InputError.

    Returns the number of tasks some judge answered.
    """
    answered = 0
    for task in format_for(definition).read(inputs, definition):
        exported = ExportedTask(id=0, key=task.key, data={**task.data, **task.extra}, systems=(), annotations=(),
                                source_systems=task.systems)  # fmt: skip
        answered += bool(judges.annotations(exported))
    judges.check_used()
    return answered


def store(definition: Definition, paths: Sequence[Path], directory: Path, project_id: int | None,
          title: str) -> list[Path]:  # fmt: skip
    """Keep the judge files for the project (``project_id`` None: for the isolated study ``title``; a file of
    the same name is replaced); the files kept."""
    directory = Path(directory)
    project = directory / PROJECT_FILE
    if project.is_file():
        _check_project(directory, project_id, title)
    files.private_folder(directory)
    header = {"id": project_id, "title": title, "protocol": definition.name, "variant": definition.variant,
              **({"isolated": True} if project_id is None else {})}  # fmt: skip
    files.write_text(project, json.dumps(header, indent=2, ensure_ascii=False) + "\n", private=True)
    kept = []
    for path in paths:
        target = directory / Path(path).name
        files.write_text(target, Path(path).read_text(encoding="utf-8-sig"), private=True)
        kept.append(target)
    return kept


def stored(directory: Path, project_id: int | None, title: str) -> list[Path]:
    """The judge files kept for this project (``project_id`` None: the isolated study ``title``; [] if none);
    another project's store is refused."""
    directory = Path(directory)
    if not (directory / PROJECT_FILE).is_file():
        return []
    _check_project(directory, project_id, title)
    return sorted(p for p in directory.iterdir() if p.is_file() and p.name not in (PROJECT_FILE, POOL_FILE))


def _check_project(directory: Path, project_id: int | None, title: str) -> None:
    try:
        header = json.loads((directory / PROJECT_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise AnnolsError(f"{directory / PROJECT_FILE}: not readable ({e}); remove the folder to start over") from e
    # An isolated study has no project id of its own: its title names it (two titles may share a folder's slug).
    if header.get("id") != project_id or (project_id is None and header.get("title") != title):
        held, wanted = _whose(header.get("id"), header.get("title")), _whose(project_id, title)
        do = ("the project was made again; remove that folder or push the judges again"
              if None not in (project_id, header.get("id"))
              else "two studies of one folder name: give this one another --project or --manifest-dir")  # fmt: skip
        raise AnnolsError(f"{directory} holds the judges of {held}, not of {wanted}: {do}")


def _whose(project_id: object, title: object) -> str:
    return f"the isolated study {title!r}" if project_id is None else f"project {project_id} ({title!r})"


def copy_to_pull(paths: Sequence[Path], folder: Path) -> list[Path]:
    """Copy the judge files into a pull folder's ``judges/`` (read by report)."""
    target = Path(folder) / PULL_DIR
    target.mkdir(parents=True, exist_ok=True)
    out = []
    for path in paths:
        shutil.copyfile(path, target / Path(path).name)
        out.append(target / Path(path).name)
    return out


def pulled(folder: Path) -> list[Path]:
    """The judge files a pull folder holds ([] if none)."""
    target = Path(folder) / PULL_DIR
    return sorted(p for p in target.iterdir() if p.is_file() and p.name != POOL_FILE) if target.is_dir() else []


def pool(directory: Path) -> Path | None:
    """A judge store's or a pull folder's ``judges/`` pool of judge-only items (a hybrid study), if any."""
    found = Path(directory) / POOL_FILE
    return found if found.is_file() else None
