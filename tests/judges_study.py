"""Two judges for each planted own study (tests/own_study.py): one that copies the human
majority and one that answers at random (seeded), written as judge files (annols.study.judges).

``units(style, truth)`` turns one annotator's (or judge's) plant into the units the
"Judges and humans" section compares, in system terms, so the tests compute every
expected number from the plant alone.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path
from typing import Any

from tests.own_study import ANNOTATORS, ANSWER, ITEMS, SYSTEMS, WORDS, OwnStudy, pairwise_systems

MAJORITY_JUDGE = "copycat"
RANDOM_JUDGE = "dice"


def _majority_code(values: list[Any]) -> Any:
    code, count = Counter(values).most_common(1)[0]
    assert count * 2 > len(values), "the plant has a majority everywhere"
    return code


def majority_truth(study: OwnStudy, item: int) -> Any:
    """What the human majority said on an item, in the plant's own terms."""
    truths = [study.truth(item, a) for a in ANNOTATORS]
    if study.style in ("ranking", "ratings"):  # per cell: the median of three
        return {q: {s: sorted(t[q][s] for t in truths)[1] for s in truths[0][q]} for q in truths[0]}
    if study.style == "pairwise":
        return {k: _majority_code([t[k] for t in truths]) for k in truths[0]}
    if study.style == "spans":
        spans = _majority_code([tuple(t["spans"]) for t in truths])
        return {"spans": list(spans), "adequacy": _majority_code([t["adequacy"] for t in truths])}
    return [dict(r) for r in _majority_code([tuple(tuple(sorted(r.items())) for r in t) for t in truths])]


def random_truth(study: OwnStudy, item: int, rng: random.Random) -> Any:
    if study.style == "pairwise":
        first, second = pairwise_systems(item)
        return {"helpful": rng.choice(["tie", first, second]), "harmless": rng.choice(["tie", first, second]),
                "confidence": rng.choice("123")}  # fmt: skip
    if study.style == "ranking":
        return {d: {s: rng.randint(1, 3) for s in SYSTEMS} for d in ("quality", "brevity")}
    if study.style == "ratings":
        return {a: {s: rng.randint(1, 5) for s in SYSTEMS} for a in ("coherence", "fluency")}
    if study.style == "spans":
        marked = []
        for word, at in WORDS:
            if rng.random() < 0.4:
                marked.append((rng.choice(["Wrong", "Vague"]), at, at + len(word)))
        return {"spans": marked, "adequacy": rng.choice("1234")}
    rows = []
    for row in (1, 2):
        pick = rng.choice(["OK", "Missing", "minor", "major"])
        rows.append({"special": pick} if pick in ("OK", "Missing") else {"severity": pick, "why": f"dice {row}"})
    return rows


def answers(study: OwnStudy, item: int, truth: Any) -> dict[str, Any]:
    """A plant as a judge line's answers, candidates in the input record's order."""
    if study.style == "pairwise":
        first, _ = pairwise_systems(item)
        code = {"tie": "tie", first: "A"}
        out = {a: code.get(truth[a], "B") for a in ("helpful", "harmless")}
        return {**out, "confidence": truth["confidence"]}
    if study.style == "ranking":
        return {d: {"ABC"[i]: ranks[s] for i, s in enumerate(SYSTEMS)} for d, ranks in truth.items()}
    if study.style == "ratings":
        return {a: {f"summary_{i + 1}": v[s] for i, s in enumerate(SYSTEMS)} for a, v in truth.items()}
    if study.style == "spans":
        spans = [{"label": label, "start": s, "end": e} if n % 2 == 0 else {"label": label, "text": ANSWER[s:e]}
                 for n, (label, s, e) in enumerate(truth["spans"])]  # fmt: skip
        out = {"adequacy": truth["adequacy"]}
        return {**out, "spans": spans} if spans else {**out, "errors_none": "No errors"}
    out: dict[str, dict[str, Any]] = {}
    for n, row in enumerate(truth, start=1):
        for name in ("special", "severity", "why"):
            if name in row:
                out.setdefault(name, {})[str(n)] = row[name]
    return out


def judge_truths(study: OwnStudy) -> dict[str, dict[int, Any]]:
    rng = random.Random(15)
    return {MAJORITY_JUDGE: {i: majority_truth(study, i) for i in range(ITEMS)},
            RANDOM_JUDGE: {i: random_truth(study, i, rng) for i in range(ITEMS)}}  # fmt: skip


def write_judges(study: OwnStudy, keys: dict[int, str], folder: Path) -> dict[str, Path]:
    """One judge file per judge (by task key), the plant behind it in :func:`judge_truths`."""
    out = {}
    for judge, truths in judge_truths(study).items():
        path = folder / f"{judge}.jsonl"
        lines = [json.dumps({"task": keys[i], "judge": judge, "answers": answers(study, i, t)}) for i, t in
                 truths.items()]  # fmt: skip
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        out[judge] = path
    return out
