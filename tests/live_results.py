"""Label Studio results as the editor saves them, for the live tests that post annotations through the API:
spans with their per-region answers (ESA, MQM) and best-worst picks. Shared by tests/test_esa_mqm_live.py,
tests/test_best_worst_live.py and tests/test_hybrid_live.py."""

from __future__ import annotations

import re
from typing import Any

WORD = re.compile(r"\S+")
LETTERS = "ABCD"


def mqm_weight(label: str, severity: str) -> float:
    """Freitag et al.'s weights, written out here as the rule they state (not read from the definition)."""
    if label == "Non-translation":
        return 25.0
    if label == "Fluency/Punctuation" and severity == "minor":
        return 0.1
    return 5.0 if severity == "major" else 1.0


def span_items(hypothesis: str, marks: list[tuple[str, str | None]], control: str = "errors") -> list[dict[str, Any]]:
    """A labelled region on the k-th word for each (label, severity), the severity as its per-region answer."""
    words = list(WORD.finditer(hypothesis))
    out: list[dict[str, Any]] = []
    for k, (label, severity) in enumerate(marks):
        w = words[k % len(words)]
        where = {"start": w.start(), "end": w.end(), "text": w.group()}
        out.append({"id": f"s{k}", "from_name": control, "to_name": "hypothesis", "type": "labels",
                    "value": {**where, "labels": [label]}, "origin": "manual"})  # fmt: skip
        if severity is not None:
            out.append({"id": f"s{k}", "from_name": "severity", "to_name": "hypothesis", "type": "choices",
                        "value": {**where, "choices": [severity]}, "origin": "manual"})  # fmt: skip
    return out


def judge_spans(hypothesis: str, marks: list[tuple[str, str | None]]) -> list[dict[str, Any]]:
    """The same spans as :func:`span_items` places, as a judge file gives them (offsets, the severity its answer)."""
    words = list(WORD.finditer(hypothesis))
    out = []
    for k, (label, severity) in enumerate(marks):
        w = words[k % len(words)]
        out.append({"label": label, "start": w.start(), "end": w.end(),
                    **({"answers": {"severity": severity}} if severity is not None else {})})  # fmt: skip
    return out


def best_worst_result(picks: dict[str, tuple[int, int]]) -> list[dict[str, Any]]:
    """Each aspect's best and worst pick, as positions shown (0 is A)."""
    return [{"id": f"{aspect}-{end}", "from_name": f"{aspect}_{end}", "to_name": "summary_1", "type": "choices",
             "value": {"choices": [LETTERS[position]]}, "origin": "manual"}
            for aspect, (best, worst) in picks.items()
            for end, position in (("best", best), ("worst", worst))]  # fmt: skip


def best_worst_picks(shown: tuple[str, ...], order: list[str], aspect: str) -> tuple[int, int]:
    """(best, worst) positions of a tuple for an annotator who orders the systems ``order`` (best first); on
    fluency the other way round."""
    ranked = sorted(range(len(shown)), key=lambda i: order.index(shown[i]))
    if aspect == "fluency":
        ranked = ranked[::-1]
    return ranked[0], ranked[-1]
