"""Shared by the live tests: the Label Studio result JSON an annotator's answer makes, per style (what the editor
posts for the config annols writes), the same spans as a judge file gives them, the MQM weights written out as
Freitag et al. state them, and the check that nothing the server holds names a system, not even base64-encoded or
inside a JSON string."""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Iterable, Iterator
from typing import Any

LETTERS = "ABCD"  # best-worst's positions, as its choices name them
WORD = re.compile(r"\S+")


def best_worst(picks: dict[str, tuple[int, int]], to_name: str = "summary_1") -> list[dict[str, Any]]:
    """Best-worst: per aspect, the positions (0-based) chosen best and worst."""
    return [{"id": f"{aspect}-{end}", "from_name": f"{aspect}_{end}", "to_name": to_name, "type": "choices",
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


def span_items(hypothesis: str, marks: list[tuple[str, str | None]], control: str = "errors") -> list[dict[str, Any]]:
    """Spans: a labelled region on the k-th word for each (label, severity), the severity as its per-region answer."""
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


def number(name: str, value: float, to_name: str = "hypothesis") -> dict[str, Any]:
    """A slider's or number's answer (ESA's score)."""
    return {"id": name, "from_name": name, "to_name": to_name, "type": "number", "value": {"number": value},
            "origin": "manual"}  # fmt: skip


def mqm_weight(label: str, severity: str) -> float:
    """Freitag et al.'s weights, written out as the rule they state (not read from a definition)."""
    if label == "Non-translation":
        return 25.0
    if label == "Fluency/Punctuation" and severity == "minor":
        return 0.1
    return 5.0 if severity == "major" else 1.0


def leaks(text: str, systems: Iterable[str]) -> list[str]:
    """System names in ``text``, or in any base64 run in it once decoded (JSON strings included)."""
    names = list(systems)
    found = [name for name in names if name in text]
    for run in re.findall(r"[A-Za-z0-9+/_=-]{8,}", text):
        for decode in (base64.urlsafe_b64decode, base64.b64decode):
            try:
                decoded = decode(run + "=" * (-len(run) % 4)).decode("utf-8", "replace")
            except (binascii.Error, ValueError):
                continue
            found += [f"{name} in base64 {run!r}" for name in names if name in decoded]
    return found


def strings(value: Any) -> Iterator[str]:
    """Every string in a JSON value, and the strings inside any string that is JSON itself."""
    if isinstance(value, str):
        yield value
        try:
            inner = json.loads(value)
        except ValueError:
            return
        if not isinstance(inner, str):
            yield from strings(inner)
    elif isinstance(value, dict):
        for k, v in value.items():
            yield str(k)
            yield from strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from strings(v)


def named_systems(value: Any, systems: Iterable[str]) -> list[str]:
    """:func:`leaks` of a JSON value: of its text and of every string in it."""
    names = list(systems)
    return leaks(json.dumps(value, ensure_ascii=False), names) + [leak for s in strings(value) for leak in
                                                                  leaks(s, names)]  # fmt: skip
