"""Planted studies of own definitions, one per style, with three annotators.

Each study has three systems (``strong`` clearly better than ``mid``, ``mid`` than
``weak``), planted ties, and an annotator (``c``) who disagrees on every third item
(spans and sentences: on items 1, 5, 9, ..., which every system wrote in turn).
``truth(item, annotator)`` is what an annotator meant, in system terms; ``result`` turns
it into the Label Studio result for the order the task shows the systems in. The tests
compute every expected number from the truth, never from what comes back.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

ANNOTATORS = ("a", "b", "c")  # c disagrees on every third item
SYSTEMS = ("strong", "mid", "weak")
ITEMS = 24
PAIRS = (("strong", "mid"), ("strong", "weak"), ("mid", "weak"))


def better(x: str, y: str) -> str:
    return x if SYSTEMS.index(x) < SYSTEMS.index(y) else y


def choice(name: str, to: str, code: str) -> dict[str, Any]:
    return {"id": f"{name}", "from_name": name, "to_name": to, "type": "choices", "value": {"choices": [code]}}


HEAD = 'summary = "A planted study."\nguideline = "Judge the outputs."\n'

# ----------------------------------------------------------------------------- pairwise

# The context, candidates and answers of a pairwise definition, shared with tests/browser/test_hybrid_judge.py.
PAIRWISE_PARTS = """[[context]]
name = "prompt"
title = "Prompt"

[[candidates]]
name = "response_a"
title = "Response A"

[[candidates]]
name = "response_b"
title = "Response B"

[[answers]]
code = "tie"
text = "Tie"

[[answers]]
code = "A"
text = "A is better"
prefers = "response_a"

[[answers]]
code = "B"
text = "B is better"
prefers = "response_b"
"""

PAIRWISE = f"""name = "own-pairwise"
style = "pairwise"
{HEAD}
{PAIRWISE_PARTS}
[[aspects]]
name = "helpful"
text = "Which response is more helpful?"

[[aspects]]
name = "harmless"
text = "Which response is more harmless?"

[[questions]]
name = "confidence"
text = "How sure are you?"
required = true
choices = [{{ code = "1" }}, {{ code = "2" }}, {{ code = "3" }}]
"""


def pairwise_systems(item: int) -> tuple[str, str]:
    return PAIRS[item % 3]


def pairwise_truth(item: int, annotator: str) -> dict[str, Any]:
    """aspect -> the system preferred, or "tie"; plus the confidence code."""
    first, second = pairwise_systems(item)
    best, worst = better(first, second), (second if better(first, second) == first else first)
    helpful = "tie" if item % 4 == 0 else best
    if annotator == "c" and item % 3 == 0:
        helpful = worst
    harmless = "tie" if (first, second) == ("mid", "weak") else helpful  # known ties
    confidence = "3" if annotator != "c" else str(1 + item % 3)
    return {"helpful": helpful, "harmless": harmless, "confidence": confidence}


def pairwise_result(truth: dict[str, Any], shown: tuple[str, ...]) -> list[dict[str, Any]]:
    out = []
    for aspect in ("helpful", "harmless"):
        pick = truth[aspect]
        code = "tie" if pick == "tie" else "AB"[shown.index(pick)]
        out.append(choice(aspect, "response_a", code))
    return [*out, choice("confidence", "response_a", truth["confidence"])]


# ----------------------------------------------------------------------------- ranking

RANKING = f"""name = "own-ranking"
style = "ranking"
{HEAD}positions = ["A", "B", "C"]

[[context]]
name = "document"
title = "Document"

[[dimensions]]
name = "quality"
text = "Overall quality"

[[dimensions]]
name = "brevity"
text = "Brevity"
"""


def ranking_truth(item: int, annotator: str) -> dict[str, dict[str, int]]:
    """dimension -> system -> rank."""
    quality = {"strong": 1, "mid": 2, "weak": 3}
    if item % 4 == 0:
        quality = {"strong": 1, "mid": 2, "weak": 2}  # planted tie
    if annotator == "c" and item % 3 == 0:
        quality = {"strong": 3, "mid": 2, "weak": 1}
    brevity = {"strong": 1, "mid": 1, "weak": 1} if item % 2 else dict(quality)
    return {"quality": quality, "brevity": brevity}


def ranking_result(truth: dict[str, dict[str, int]], shown: tuple[str, ...]) -> list[dict[str, Any]]:
    return [choice(f"{dim}_{'abc'[i]}", f"output_{'abc'[i]}", str(ranks[system]))
            for dim, ranks in truth.items() for i, system in enumerate(shown)]  # fmt: skip


# ----------------------------------------------------------------------------- ratings

RATINGS = f"""name = "own-ratings"
style = "ratings"
{HEAD}
[[context]]
name = "document"
title = "Document"

[[candidates]]
name = "summary_1"
title = "Summary 1"

[[candidates]]
name = "summary_2"
title = "Summary 2"

[[candidates]]
name = "summary_3"
title = "Summary 3"

[[answers]]
code = "1"
text = "1: poor"

[[answers]]
code = "2"

[[answers]]
code = "3"

[[answers]]
code = "4"

[[answers]]
code = "5"
text = "5: excellent"

[[aspects]]
name = "coherence"
text = "Coherence"

[[aspects]]
name = "fluency"
text = "Fluency"
"""


def ratings_truth(item: int, annotator: str) -> dict[str, dict[str, int]]:
    """aspect -> system -> rating 1..5."""
    lift = {"a": 0, "b": -1, "c": 0}[annotator]  # b is stricter: z-scores take that out
    coherence = {"strong": 5 + min(lift, 0), "mid": 3 + lift + item % 2, "weak": 2 + lift + (item % 3 == 1)}
    if annotator == "c" and item % 3 == 0:
        coherence = {"strong": 1, "mid": 4, "weak": 5}
    fluency = {"strong": 4, "mid": 4, "weak": 4} if item % 2 else {"strong": 5, "mid": 4, "weak": 3 + (item % 4 == 1)}
    return {"coherence": coherence, "fluency": fluency}


def ratings_result(truth: dict[str, dict[str, int]], shown: tuple[str, ...]) -> list[dict[str, Any]]:
    return [choice(f"{aspect}_summary_{i + 1}", f"summary_{i + 1}", str(values[system]))
            for aspect, values in truth.items() for i, system in enumerate(shown)]  # fmt: skip


# ----------------------------------------------------------------------------- spans

SPANS = f"""name = "own-spans"
style = "spans"
{HEAD}
[[context]]
name = "question"
title = "Question"

[target]
name = "answer"
title = "Answer"

[spans]
name = "errors"
none_answer = "No errors"

[[spans.labels]]
value = "Wrong"

[[spans.labels]]
value = "Vague"

[[questions]]
name = "adequacy"
text = "How adequate is the answer?"
required = true
choices = [{{ code = "1" }}, {{ code = "2" }}, {{ code = "3" }}, {{ code = "4" }}]
"""

ANSWER = "The river flows north past the old mill and then turns east"
WORDS = [(w, ANSWER.index(w)) for w in ("river", "north", "old mill", "east")]


def spans_system(item: int) -> str:
    return SYSTEMS[item % 3]


def spans_truth(item: int, annotator: str) -> dict[str, Any]:
    """spans as (label, start, end), the adequacy code."""
    system = spans_system(item)
    marked: list[tuple[str, int, int]] = []
    if system != "strong":
        word, at = WORDS[1]
        marked.append(("Wrong", at, at + len(word)))
    if system == "weak":
        word, at = WORDS[2]
        marked.append(("Vague", at, at + len(word)))
    if annotator == "c" and item % 4 == 1 and marked:  # items 1, 5, 9, ...: every system in turn
        label, start, end = marked[0]
        marked[0] = (label, start, end + 5)  # overlaps, but is not exact
    adequacy = {"strong": "4", "mid": "3", "weak": "2"}[system]
    if annotator == "c" and item % 4 == 1:
        adequacy = "1"
    return {"spans": marked, "adequacy": adequacy}


def spans_result(truth: dict[str, Any], shown: tuple[str, ...]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for n, (label, start, end) in enumerate(truth["spans"]):
        out.append({"id": f"s{n}", "from_name": "errors", "to_name": "answer", "type": "labels",
                    "value": {"start": start, "end": end, "text": ANSWER[start:end], "labels": [label]}})  # fmt: skip
    if not truth["spans"]:
        out.append(choice("errors_none", "answer", "No errors"))
    return [*out, choice("adequacy", "answer", truth["adequacy"])]


# ----------------------------------------------------------------------------- sentences

SENTENCES = f"""name = "own-sentences"
style = "sentences"
{HEAD}rows = 2

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
required = true
choices = [{{ code = "minor" }}, {{ code = "major" }}]

[explanation]
name = "why"
text = "Why?"
kind = "text"
required = true
"""


def sentences_truth(item: int, annotator: str) -> list[dict[str, str]]:
    """Per row: special case, or severity and explanation."""
    system = spans_system(item)
    rows: list[dict[str, str]] = []
    for row in (1, 2):
        if system == "strong" or (row == 2 and system == "mid"):
            rows.append({"special": "OK"})
            continue
        severity = "major" if system == "weak" and row == 1 else "minor"
        if annotator == "c" and item % 4 == 1:
            severity = "minor" if severity == "major" else "major"
        rows.append({"severity": severity, "why": f"row {row} of item {item}"})
    return rows


def sentences_result(truth: list[dict[str, str]], shown: tuple[str, ...]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for n, row in enumerate(truth, start=1):
        if "special" in row:
            out.append(choice(f"special_{n}", f"sentence_{n}", row["special"]))
        else:
            out.append(choice(f"severity_{n}", f"sentence_{n}", row["severity"]))
            out.append({"id": f"why_{n}", "from_name": f"why_{n}", "to_name": f"sentence_{n}", "type": "textarea",
                        "value": {"text": [row["why"]]}})  # fmt: skip
    return out


# ----------------------------------------------------------------------------- the five


@dataclass(frozen=True)
class OwnStudy:
    style: str
    definition: str  # TOML
    truth: Any  # (item, annotator) -> what the annotator meant
    result: Any  # (truth, systems shown) -> Label Studio result

    @property
    def name(self) -> str:
        return f"own-{self.style}"

    def record(self, item: int) -> dict[str, Any]:
        """The input record of one item (generic JSONL: the task fields, systems, carried fields)."""
        if self.style == "pairwise":
            first, second = pairwise_systems(item)
            return {"prompt": f"Prompt {item}", "response_a": f"Answer by {first} to {item}",
                    "response_b": f"Answer by {second} to {item}", "systems": [first, second],
                    "item": item}  # fmt: skip
        if self.style == "ranking":
            fields = {f"output_{x}": f"Output of {s} for {item}" for x, s in zip("abc", SYSTEMS, strict=True)}
            return {"document": f"Document {item}", **fields, "systems": list(SYSTEMS), "item": item}
        if self.style == "ratings":
            fields = {f"summary_{i + 1}": f"Summary by {s} of {item}" for i, s in enumerate(SYSTEMS)}
            return {"document": f"Document {item}", **fields, "systems": list(SYSTEMS), "item": item}
        if self.style == "spans":
            return {"question": f"Where does river {item} flow?", "answer": ANSWER,
                    "systems": [spans_system(item)], "item": item}  # fmt: skip
        return {"summary": f"Summary {item}. Second sentence.", "sentence_1": f"Summary {item}.",
                "sentence_2": "Second sentence.", "systems": [spans_system(item)], "item": item}  # fmt: skip


STUDIES = {
    "pairwise": OwnStudy("pairwise", PAIRWISE, pairwise_truth, pairwise_result),
    "ranking": OwnStudy("ranking", RANKING, ranking_truth, ranking_result),
    "ratings": OwnStudy("ratings", RATINGS, ratings_truth, ratings_result),
    "spans": OwnStudy("spans", SPANS, spans_truth, spans_result),
    "sentences": OwnStudy("sentences", SENTENCES, sentences_truth, sentences_result),
}
