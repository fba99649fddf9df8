"""A ratings study at the scale of a real one, made offline: 16 systems x 100 documents x 4 aspects x 3 annotators.

The shipped ``examples/summeval-ratings.toml`` shows four summaries a task, so each document's 16
outputs are shuffled into four tasks of four (the key names the document and the group, as
push would key them). System ``M<k>`` is rated around ``5 - k / 4`` (noise drawn with a fixed
seed), so the higher the number the worse: a report that lists them as text (M0, M1, M10, ...)
is out of both natural and score order.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from annols import protocols
from annols.definition import Definition, blinding
from tests.conftest import ROOT
from tests.report import study

SYSTEMS = tuple(f"M{k}" for k in range(16))
DOCUMENTS = 100
SHOWN = 4  # summaries per task in the example definition


def definition() -> Definition:
    return protocols.load(str(ROOT / "examples" / "summeval-ratings.toml"))


def centre(system: str) -> float:
    return 5 - SYSTEMS.index(system) / 4


def pull(folder: Path, seed: int = 5) -> tuple[Path, dict[tuple[str, str], list[int]]]:
    """A pull folder of the study, every task rated by the three annotators of :mod:`tests.report.study`, and
    the ratings planted per (system, aspect text): the truth a test counts from."""
    spec = definition().spec
    fields = blinding.candidate_fields(definition())
    rng = random.Random(seed)
    tasks: list[dict[str, Any]] = []
    planted: dict[tuple[str, str], list[int]] = {}
    for doc in range(DOCUMENTS):
        order = rng.sample(SYSTEMS, len(SYSTEMS))
        for group in range(len(SYSTEMS) // SHOWN):
            shown = order[group * SHOWN : (group + 1) * SHOWN]
            data = {p.name: f"{p.name} of document {doc}" for p in spec.context}
            data.update({f: f"Summary by {s} of document {doc}" for f, s in zip(fields, shown, strict=True)})
            meta = {blinding.META_KEY: f"summeval:{doc:03d}-{group}",
                    blinding.META_SYSTEMS: blinding.encode_systems(tuple(shown))}  # fmt: skip
            annotations = []
            for annotator in study.ANNOTATORS:
                result = []
                for candidate, system in zip(spec.candidates, shown, strict=True):
                    for aspect in spec.aspects:
                        value = min(5, max(1, round(rng.gauss(centre(system), 0.8))))
                        planted.setdefault((system, aspect.text or aspect.name), []).append(value)
                        result.append({"id": spec.cell(aspect, candidate), "from_name": spec.cell(aspect, candidate),
                                       "to_name": candidate.name, "type": "choices",
                                       "value": {"choices": [str(value)]}, "origin": "manual"})  # fmt: skip
                annotations.append({"id": len(tasks) * 3 + len(annotations) + 1,
                                    "completed_by": study.USER_IDS[annotator], "result": result, "lead_time": 30.0,
                                    "created_at": "2026-11-23T10:00:00.000000Z", "was_cancelled": False})  # fmt: skip
            tasks.append({"id": len(tasks) + 1, "data": data, "meta": meta, "annotations": annotations,
                          "predictions": []})  # fmt: skip
    return study.write_pull(folder, tasks, overlap=3), planted
