"""Planted studies of the styles whose item holds several tasks, run in rounds: best-worst (an item's tuples) and
spans (one task per candidate: ESA's score, MQM's error score). Built from typed judgments; each builder returns the
judgments table as a study in rounds reads it (``annols.analysis.table.Judgments.rounds_frame``: each row's item in
``unit``; spans also a ``judged`` row per annotation) and the typed truth the tests count from."""

from __future__ import annotations

import random
import tomllib
from pathlib import Path
from typing import Any

import pandas as pd  # type: ignore[import-untyped, unused-ignore]

from annols.analysis.planning import sequential
from annols.definition import Definition, design
from annols.protocols import parse_definition
from annols.styles.judgments import TIDY_COLUMNS, BestWorst, Judgment, Rating, Span, tidy

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
ANNOTATORS = ("a", "b", "c")
BW_SYSTEMS = ("A", "B", "C", "D")
LAYOUT = design.tuples(len(BW_SYSTEMS), 3, 3, seed="planted")


def example(name: str) -> Definition:
    path = EXAMPLES / f"{name}.toml"
    return parse_definition(tomllib.loads(path.read_text(encoding="utf-8")), str(path))


def unit(item: int) -> str:
    return f"context-{item:03d}"


# A task: (item, its key, the typed judgments per annotator)
Task = tuple[int, str, dict[str, list[Judgment]]]


def frame(tasks: list[Task], system_of: dict[str, str] | None = None) -> pd.DataFrame:
    """The rows of every annotation, the item of each, and (``system_of``: spans, key -> the candidate's system) a
    ``judged`` row per annotation."""
    rows, judged, uid = [], [], 0
    for item, key, by_annotator in tasks:
        for annotator, judgments in by_annotator.items():
            rows += [[uid, key, annotator, *row, unit(item)] for row in tidy(judgments)]
            if system_of is not None:
                judged.append([uid, key, annotator, sequential.JUDGED, system_of[key], unit(item)])
            uid += 1
    out = pd.DataFrame(rows, columns=["uid", "task_key", "annotator", *TIDY_COLUMNS, "unit"])
    if system_of is None:
        return out
    extra = pd.DataFrame(judged, columns=["uid", "task_key", "annotator", "kind", "system", "unit"])
    return pd.concat([out.astype(object), extra.astype(object)], ignore_index=True)


def best_worst(items: int, seed: int = 11) -> list[Task]:
    """Each item: the four systems in the design's tuples of three, each tuple answered by three annotators on both
    aspects; A is best and D worst of a tuple holding them, with a fifth of the answers at random; B and C alike."""
    rng = random.Random(seed)
    quality = {"A": 3.0, "B": 1.0, "C": 1.0, "D": 0.0}
    tasks: list[Task] = []
    for item in range(items):
        for number, members in enumerate(LAYOUT):
            shown = tuple(BW_SYSTEMS[i] for i in members)
            answers: dict[str, list[Judgment]] = {}
            for annotator in ANNOTATORS:
                answers[annotator] = []
                for aspect in ("informativeness", "fluency"):
                    seen = [quality[s] + rng.gauss(0, 0.4) for s in shown]
                    best, worst = max(range(3), key=seen.__getitem__), min(range(3), key=seen.__getitem__)
                    if rng.random() < 0.2:
                        best, worst = rng.sample(range(3), 2)
                    answers[annotator].append(BestWorst(aspect, shown, best, worst))
            tasks.append((item, f"bw-{item}-{number}", answers))
    return tasks


ESA_SYSTEMS = {"sys-a": 85.0, "sys-b": 50.0, "sys-c": 52.0}
TEXT = "The train to Hamburg is cancelled today because of a strike"


def esa(items: int, seed: int = 12) -> tuple[list[Task], dict[str, str]]:
    """One task per item and system: each annotator scores the candidate (0-100, its system's level plus noise)
    and marks a minor error on the worse systems' texts."""
    rng = random.Random(seed)
    tasks: list[Task] = []
    system_of = {}
    for item in range(items):
        for system, level in ESA_SYSTEMS.items():
            key = f"esa-{item}-{system}"
            system_of[key] = system
            answers: dict[str, list[Judgment]] = {}
            for annotator in ANNOTATORS:
                value = round(min(100.0, max(0.0, level + rng.uniform(-15, 15))), 1)
                marked: list[Judgment] = []
                if system != "sys-a":
                    marked.append(Span("errors", "minor", 4, 9, TEXT[4:9], "r0", system))
                answers[annotator] = [*marked, Rating("score", "", system, value, f"{value:g}")]
            tasks.append((item, key, answers))
    return tasks, system_of


MQM_SYSTEMS = ("sys-a", "sys-b", "sys-c")


def mqm_spans(system: str, rng: random.Random) -> list[tuple[str, str]]:
    """(label, severity) of the errors an annotator marks: sys-a one minor error at times, sys-b two or three major
    ones, sys-c now and then a non-translation (25, with a major: 30, clipped to 25)."""
    if system == "sys-a":
        return [("Fluency", "minor")] if rng.random() < 0.5 else []
    if system == "sys-b":
        return [("Accuracy", "major")] * rng.choice([2, 3]) + [("Fluency/Punctuation", "minor")]
    if rng.random() < 0.3:
        return [("Non-translation", "major"), ("Accuracy", "major")]
    return [("Style", "minor")] * rng.choice([0, 1, 2])


def mqm(items: int, seed: int = 13) -> tuple[list[Task], dict[str, str], dict[tuple[str, str], list[Any]]]:
    """One task per item and system; also (key, annotator) -> the (label, severity) marked, the truth."""
    rng = random.Random(seed)
    tasks: list[Task] = []
    system_of = {}
    truth: dict[tuple[str, str], list[Any]] = {}
    for item in range(items):
        for system in MQM_SYSTEMS:
            key = f"mqm-{item}-{system}"
            system_of[key] = system
            answers: dict[str, list[Judgment]] = {}
            for annotator in ANNOTATORS:
                marked = mqm_spans(system, rng)
                truth[(key, annotator)] = marked
                answers[annotator] = [Span("errors", label, 2 * n, 2 * n + 1, TEXT[2 * n], f"r{n}", system,
                                           {"severity": (severity,)}) for n, (label, severity) in enumerate(marked)]
            tasks.append((item, key, answers))
    return tasks, system_of, truth
