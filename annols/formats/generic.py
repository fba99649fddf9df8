"""The generic format: JSONL or CSV whose columns are the definition's task fields.

Used for a user's own definition (and any protocol without a native format). Each
record must have every field the config shows; other fields are carried in
``data["record"]`` and come back in results. For pairwise and ranking definitions,
``systems`` may name the system behind each candidate (a JSON list in JSONL, or
``|``-separated in CSV), for blinding and unblinded results.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from annols import config, files, jsontext
from annols.definition import Definition
from annols.errors import DefinitionError, InputError
from annols.formats import (
    ExportedAnnotation,
    ExportedTask,
    SourcePrediction,
    SourceTask,
    Violation,
    content_key,
)

CARRIED = "record"  # the task data key holding an input record's fields that are not task fields


def iter_records(path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    """(location, record) for each record of a JSONL or CSV file, streamed."""
    if path.suffix.lower() == ".csv":
        with _open(path) as f:
            for row_number, row in enumerate(csv.DictReader(f), start=2):
                yield f"line {row_number}", dict(row)
        return
    with _open(path) as f:
        for line_number, line in enumerate(f, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as e:
                raise InputError(path, f"line {line_number}", "", f"not valid JSON ({e.msg})") from None
            if not isinstance(record, dict):
                raise InputError(path, f"line {line_number}", "", "expected a JSON object")
            yield f"line {line_number}", record


def _open(path: Path) -> Any:
    try:
        return open(path, encoding="utf-8-sig", newline="")
    except FileNotFoundError:
        raise InputError(path, "", "", "file not found") from None
    except IsADirectoryError:
        raise InputError(path, "", "", "is a folder; give the input file") from None


class GenericFormat:
    name = "generic"
    describe = "JSONL or CSV with one column per task field of the definition (plus optional 'systems')"

    def read(self, paths: Sequence[Path], definition: Definition) -> Iterator[SourceTask]:
        fields = config.data_fields(definition)
        for path in paths:
            for location, record in iter_records(path):
                yield self.source_task(definition, fields, path, location, record)

    @classmethod
    def source_task(
        cls,
        definition: Definition,
        fields: Sequence[str],
        path: Path,
        location: str,
        record: dict[str, Any],
        read: tuple[str, ...] = ("systems",),
    ) -> SourceTask:
        """The task of one record: every field of the definition is required; keys that are neither
        fields nor ``read`` (taken by the caller) are carried through under ``record``."""
        own = next((name for name in fields if name == CARRIED or name in read), None)
        if own is not None:  # the field's value and what this format reads under that name would mix
            raise DefinitionError(definition.source, own, f"the generic format's input uses {own!r} itself "
                                  f"({'other fields are carried under it' if own == CARRIED else 'it is read'}); "
                                  "name the field otherwise")  # fmt: skip
        data: dict[str, Any] = {}
        for name in fields:
            if name not in record or record[name] in (None, ""):
                raise InputError(path, location, name, "missing; every task needs it")
            data[name] = record[name]
        systems = cls._systems(path, location, record)
        rest = {k: v for k, v in record.items() if k not in fields and k not in read}
        if rest:
            data[CARRIED] = rest
        return SourceTask(
            key=content_key(definition.name, {k: data[k] for k in fields}),
            data=data,
            location=f"{path}: {location}",
            systems=systems,
        )

    @staticmethod
    def _systems(path: Path, location: str, record: dict[str, Any]) -> tuple[str, ...]:
        raw = record.get("systems")
        if raw in (None, ""):
            return ()
        if isinstance(raw, str):
            raw = [s.strip() for s in raw.split("|")]
        if not isinstance(raw, list) or not all(isinstance(s, str) and s for s in raw):
            raise InputError(path, location, "systems", "expected a list of system names")
        return tuple(raw)

    def read_predictions(self, paths: Sequence[Path], definition: Definition) -> Iterator[tuple[str, SourcePrediction]]:
        fields = config.data_fields(definition)
        for path in paths:
            for location, record in iter_records(path):
                result = record.get("result")
                if not isinstance(result, list):
                    raise InputError(path, location, "result", "expected a list of Label Studio result items")
                missing = [f for f in fields if f not in record]
                if missing:
                    raise InputError(path, location, missing[0], "missing; needed to find the task")
                key = content_key(definition.name, {k: record[k] for k in fields})
                score = record.get("score")
                yield (
                    key,
                    SourcePrediction(
                        result=result,
                        model_version=str(record.get("model_version", "")),
                        score=float(score) if isinstance(score, int | float) else None,
                    ),
                )

    def write_results(self, tasks: Iterable[ExportedTask], definition: Definition, out_dir: Path) -> list[Path]:
        """``<name>.jsonl``: one line per submitted annotation with its judgments, systems unblinded
        (:mod:`annols.judgments`), beside the task's data and the raw result (nothing is lost)."""
        from annols.judgments import decode  # the styles import this package: import on use

        path = out_dir / f"{definition.name}.jsonl"
        with files.atomic_open(path) as f:
            for task in tasks:
                for a in task.annotations:
                    if a.cancelled:
                        continue
                    judged = [{"kind": j.kind, **{k: v for k, v in asdict(j).items() if k != "kind"}}
                              for j in decode(definition, task, a)]  # fmt: skip
                    line = {"key": task.key, "task_id": task.id, "annotator": a.annotator, "annotation_id": a.id,
                            "systems": list(task.systems), "judgments": judged, "data": task.data,
                            "result": a.result}  # fmt: skip
                    f.write(jsontext.dumps(line, ensure_ascii=False) + "\n")
        return [path]

    def check(self, task: ExportedTask, annotation: ExportedAnnotation, definition: Definition) -> list[Violation]:
        return []


FORMAT = GenericFormat()
