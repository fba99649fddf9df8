"""Planted judgments for the analysis tests: one study per style, built from typed judgments.

Three annotators (``a``, ``b``, ``c``) and three systems: ``good`` clearly better than
``fair``, ``fair`` than ``poor``. Known ties are planted, annotator ``c`` disagrees on
every third item, a seeded ``random.Random`` adds noise, and the last item has one
annotator only. Each generator returns the typed judgments per (item, annotator): the
truth the tests count from, never the frame the analysis reads.
"""

from __future__ import annotations

import random
import tomllib
from typing import Any

import pandas as pd

from annols.definition import Definition
from annols.protocols import parse_definition
from annols.styles.judgments import TIDY_COLUMNS, Answer, Judgment, Preference, Rank, Rating, Row, Span, tidy

ANNOTATORS = ("a", "b", "c")
SYSTEMS = ("good", "fair", "poor")
PAIRS = (("fair", "good"), ("good", "poor"), ("fair", "poor"))
ITEMS = 24
HEAD = 'summary = "Planted."\nguideline = "Judge."\n'

Study = dict[tuple[int, str], list[Judgment]]


def annotators_of(item: int) -> tuple[str, ...]:
    return ANNOTATORS[:1] if item == ITEMS - 1 else ANNOTATORS


def key(item: int) -> str:
    return f"item-{item:03d}"


def definition(toml: str) -> Definition:
    return parse_definition(tomllib.loads(toml), "planted.toml")


def frames(study: Study) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The tidy table (uid, task_key, annotator + TIDY_COLUMNS) and the judged annotations."""
    rows, judged = [], []
    for uid, ((item, annotator), judgments) in enumerate(sorted(study.items())):
        judged.append((uid, key(item), annotator))
        rows += [[uid, key(item), annotator, *row] for row in tidy(judgments)]
    return (pd.DataFrame(rows, columns=["uid", "task_key", "annotator", *TIDY_COLUMNS]),
            pd.DataFrame(judged, columns=["uid", "task_key", "annotator"]))  # fmt: skip


def confidence(rng: random.Random, annotator: str, item: int) -> Answer:
    code = "3" if annotator != "c" else str(1 + item % 3)
    return Answer("confidence", codes=(code if rng.random() < 0.8 else rng.choice("123"),))


CONFIDENCE = """
[[questions]]
name = "confidence"
text = "How sure are you?"
choices = [{ code = "1" }, { code = "2" }, { code = "3" }]

[[questions]]
name = "topics"
text = "Topics?"
multiple = true
choices = [{ code = "news" }, { code = "sport" }]
"""

# ----------------------------------------------------------------------------- pairwise

PAIRWISE = f"""name = "planted-pairwise"
style = "pairwise"
{HEAD}
[[candidates]]
name = "left"
title = "Left"

[[candidates]]
name = "right"
title = "Right"

[[answers]]
code = "L"
text = "Left"

[[answers]]
code = "R"
text = "Right"

[[answers]]
code = "T"
text = "Tie"

[[aspects]]
name = "helpful"
text = "More helpful"

[[aspects]]
name = "safe"
text = "Safer"
{CONFIDENCE}"""


def pairwise(seed: int = 1) -> Study:
    rng = random.Random(seed)
    out: Study = {}
    for item in range(ITEMS):
        pair = list(PAIRS[item % 3])
        rng.shuffle(pair)
        shown = (pair[0], pair[1])
        best = min(shown, key=SYSTEMS.index)
        for annotator in annotators_of(item):
            judged: list[Judgment] = []
            for aspect in ("helpful", "safe"):
                pick: str | None = best if rng.random() < 0.75 else rng.choice([*shown, None])
                if aspect == "safe" and set(shown) == {"fair", "poor"}:
                    pick = None  # known ties
                if annotator == "c" and item % 3 == 0 and pick is not None:
                    pick = shown[1 - shown.index(pick)]  # c disagrees
                winner = None if pick is None else shown.index(pick)
                judged.append(Preference(aspect, shown, "T" if winner is None else "LR"[winner], winner))
            out[(item, annotator)] = [*judged, confidence(rng, annotator, item)]
    return out


# ----------------------------------------------------------------------------- ranking

RANKING = f"""name = "planted-ranking"
style = "ranking"
{HEAD}positions = ["A", "B", "C"]

[[dimensions]]
name = "quality"
text = "Quality"

[[dimensions]]
name = "brevity"
text = "Brevity"
"""


def ranking(seed: int = 2) -> Study:
    rng = random.Random(seed)
    out: Study = {}
    for item in range(ITEMS):
        shown = list(SYSTEMS)
        rng.shuffle(shown)
        for annotator in annotators_of(item):
            judged: list[Judgment] = []
            for dimension in ("quality", "brevity"):
                ranks = {"good": 1, "fair": 2, "poor": 3}
                if rng.random() < 0.25:
                    ranks = {"good": 1, "fair": 2, "poor": 2}  # a planted tie
                elif rng.random() < 0.2:
                    ranks = {"good": 2, "fair": 1, "poor": 3}
                if dimension == "brevity" and item % 5 == 0:
                    ranks = dict.fromkeys(SYSTEMS, 1)  # all tied: no W
                if annotator == "c" and item % 3 == 0:
                    ranks = {s: 4 - r for s, r in ranks.items()}  # c disagrees
                judged += [Rank(dimension, "ABC"[i], s, ranks[s]) for i, s in enumerate(shown)]
            out[(item, annotator)] = judged
    return out


# ----------------------------------------------------------------------------- ratings

RATINGS = f"""name = "planted-ratings"
style = "ratings"
{HEAD}
[[candidates]]
name = "first"
title = "First"

[[candidates]]
name = "second"
title = "Second"

[[candidates]]
name = "third"
title = "Third"

[[answers]]
code = "1"

[[answers]]
code = "2"

[[answers]]
code = "3"

[[answers]]
code = "4"

[[answers]]
code = "5"

[[aspects]]
name = "coherence"
text = "Coherence"

[[aspects]]
name = "fluency"
text = "Fluency"
"""

SLIDER = f"""name = "planted-slider"
style = "ratings"
{HEAD}scale = "slider"

[[candidates]]
name = "first"
title = "First"

[[candidates]]
name = "second"
title = "Second"

[[candidates]]
name = "third"
title = "Third"

[[aspects]]
name = "coherence"
text = "Coherence"

[[aspects]]
name = "fluency"
text = "Fluency"
"""
RATING_ITEMS = 13  # the paired tests stay in scipy's exhaustive range (13 samples or fewer)


def ratings(seed: int = 3, slider: bool = False) -> Study:
    rng = random.Random(seed)
    out: Study = {}
    base = {"good": 4.2, "fair": 3.0, "poor": 2.0}
    for item in range(RATING_ITEMS):
        for annotator in ("a",) if item == RATING_ITEMS - 1 else ANNOTATORS:
            judged: list[Judgment] = []
            for aspect in ("coherence", "fluency"):
                for i, system in enumerate(SYSTEMS):
                    mean = 4.0 if aspect == "fluency" and item % 2 else base[system]  # known ties on fluency
                    mean -= 1 if annotator == "b" else 0  # b is strict: z-scores take that out
                    if annotator == "c" and item % 3 == 0:
                        mean = 6 - mean  # c disagrees
                    if slider:
                        value = round(min(100.0, max(0.0, 20 * mean + rng.uniform(-9, 9))), 1)
                        code = f"{value:g}"
                    else:
                        value = float(min(5, max(1, round(mean + rng.choice([-1, 0, 0, 0, 1])))))
                        code = str(int(value))
                    judged.append(Rating(aspect, ("first", "second", "third")[i], system, value, code))
            out[(item, annotator)] = judged
    return out


# ----------------------------------------------------------------------------- spans

SPANS = f"""name = "planted-spans"
style = "spans"
{HEAD}
[target]
name = "answer"
title = "Answer"

[spans]
name = "errors"

[[spans.labels]]
value = "Wrong"
question = {{ name = "how_wrong", text = "How wrong?", choices = [{{ code = "slightly" }}, {{ code = "badly" }}] }}

[[spans.labels]]
value = "Vague"
{CONFIDENCE}"""

TEXT = "The river flows north past the old mill and then turns east"


def word(w: str) -> tuple[int, int]:
    return TEXT.index(w), TEXT.index(w) + len(w)


def spans_system(item: int) -> str:
    return SYSTEMS[item % 3]


def spans(seed: int = 4) -> Study:
    rng = random.Random(seed)
    out: Study = {}
    for item in range(ITEMS):
        system = spans_system(item)
        for annotator in annotators_of(item):
            marked: list[tuple[str, int, int]] = []
            if system != "good":
                marked.append(("Wrong", *word("north")))
            if system == "poor" or rng.random() < 0.2:
                marked.append(("Vague", *word("old mill")))
            if annotator == "c" and item % 3 == 0 and marked:
                label, start, end = marked[0]
                marked[0] = (label, start, end + 5)  # overlaps, not exact
            if rng.random() < 0.15:
                marked.append(("Wrong", *word("east")))
            judged: list[Judgment] = []
            for n, (label, s, e) in enumerate(marked):
                how = (
                    {"how_wrong": (rng.choice(["slightly", "badly"]),)}
                    if label == "Wrong" and rng.random() < 0.8
                    else {}
                )
                judged.append(Span("errors", label, s, e, TEXT[s:e], f"r{n}", system, how))
            judged.append(Span("context_labels", "Wrong", 0, 1, "x", "ctx", system))  # another control: not counted
            out[(item, annotator)] = [*judged, confidence(rng, annotator, item)]
    return out


# ----------------------------------------------------------------------------- sentences

SENTENCES = f"""name = "planted-sentences"
style = "sentences"
{HEAD}rows = 3

[generated]
name = "summary"
title = "Summary"

[special]
name = "special"
text = "Special case"
choices = [{{ code = "OK" }}, {{ code = "Missing" }}]

[[columns]]
name = "severity"
text = "Severity"
choices = [{{ code = "minor" }}, {{ code = "major" }}]

[[columns]]
name = "kind"
text = "Kind"
choices = [{{ code = "fact" }}, {{ code = "style" }}]

[explanation]
name = "why"
text = "Why?"
kind = "text"
"""


def sentences(seed: int = 5) -> Study:
    rng = random.Random(seed)
    out: Study = {}
    for item in range(ITEMS):
        system = spans_system(item)
        for annotator in annotators_of(item):
            rows: list[Judgment] = []
            for n in (1, 2, 3):
                if (system == "good" and n != 2) or (n == 3 and rng.random() < 0.3):
                    rows.append(Row(n, "OK", {}, "", system))
                    continue
                severity = "major" if system == "poor" else "minor"
                if annotator == "c" and item % 3 == 0:
                    severity = "minor" if severity == "major" else "major"
                kind = rng.choice(["fact", "style"])
                columns: dict[str, tuple[str, ...]] = {"severity": (severity,), "kind": (kind,)}
                if rng.random() < 0.1:
                    columns["kind"] = ()  # unanswered
                elif rng.random() < 0.05:
                    columns["kind"] = ("fact", "style")  # two codes: a violation
                rows.append(Row(n, "", columns, "because", system))
            out[(item, annotator)] = rows
    return out


def all_studies() -> dict[str, Any]:
    return {"pairwise": pairwise(), "ranking": ranking(), "ratings": ratings(), "spans": spans(),
            "sentences": sentences()}  # fmt: skip
