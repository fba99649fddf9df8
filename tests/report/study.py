"""A generated study per protocol: Label Studio raw JSON exports with answers we control.

3 annotators x 100 samples, in the shape :func:`annols.study.exports.read_export` reads. Every
generator also returns the truth: what each annotator meant, in plain Python records
keyed by sample and annotator, so tests can compute the expected numbers without
parsing a result. Built in:

- blinding: the systems shown as #1/#2 (A..D) are shuffled per task;
- disagreements and ties from a seeded ``random.Random``;
- samples 95-98 have two annotators, sample 99 one (the overlap asked is 3);
- annotator C skipped sample 95 (a cancelled annotation: it must not count);
- annotator A submitted sample 0 twice; the later annotation counts;
- the truth's ``judgments`` lists only the judgment that counts per sample and annotator.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from annols.definition.blinding import META_KEY, META_SYSTEMS, encode_systems

ANNOTATORS = ("ann-a@example.org", "ann-b@example.org", "ann-c@example.org")
USER_IDS = {email: i + 1 for i, email in enumerate(ANNOTATORS)}
SAMPLES = 100
OVERLAP = 3


def annotators_of(sample: int) -> tuple[str, ...]:
    """Who judged a sample: everyone, except C on 95-98 and B and C on 99."""
    if sample == 99:
        return ANNOTATORS[:1]
    if sample >= 95:
        return ANNOTATORS[:2]
    return ANNOTATORS


@dataclass
class Generated:
    tasks: list[dict[str, Any]] = field(default_factory=list)  # the raw export
    truth: dict[tuple[int, str], Any] = field(default_factory=dict)  # (sample, annotator) -> what counts
    keys: dict[int, str] = field(default_factory=dict)  # sample -> task key
    lead_times: dict[str, list[float]] = field(default_factory=dict)  # annotator -> submitted lead times
    submitted: dict[str, int] = field(default_factory=dict)  # annotator -> submitted annotations
    skipped: dict[str, int] = field(default_factory=dict)


class _Builder:
    """Numbers tasks and annotations like Label Studio does and keeps the bookkeeping."""

    def __init__(self, out: Generated) -> None:
        self.out = out
        self.next_annotation = 1000

    def task(self, sample: int, key: str, data: dict[str, Any], systems: tuple[str, ...] = ()) -> dict[str, Any]:
        meta: dict[str, Any] = {META_KEY: key}
        if systems:
            meta[META_SYSTEMS] = encode_systems(systems)
        task = {"id": 500 + sample, "data": data, "meta": meta, "annotations": []}
        self.out.tasks.append(task)
        self.out.keys[sample] = key
        return task

    def annotate(self, task: dict[str, Any], sample: int, annotator: str, result: list[dict[str, Any]],
                 minute: int = 0, cancelled: bool = False) -> None:  # fmt: skip
        self.next_annotation += 1
        lead = float(10 + sample % 7 + 5 * ANNOTATORS.index(annotator) + minute)
        task["annotations"].append({
            "id": self.next_annotation,
            "completed_by": USER_IDS[annotator],
            "result": [] if cancelled else result,
            "lead_time": lead,
            "created_at": f"2024-05-{1 + sample % 28:02d}T10:{minute:02d}:00.000000Z",
            "was_cancelled": cancelled,
        })  # fmt: skip
        if cancelled:
            self.out.skipped[annotator] = self.out.skipped.get(annotator, 0) + 1
        else:
            self.out.submitted[annotator] = self.out.submitted.get(annotator, 0) + 1
            self.out.lead_times.setdefault(annotator, []).append(lead)

    def extras(self, task: dict[str, Any], sample: int, first: list[dict[str, Any]]) -> None:
        """The skip of C on sample 95; an earlier annotation of A on sample 0 (``first``: its result)."""
        if sample == 95:
            self.annotate(task, sample, ANNOTATORS[2], [], cancelled=True)
        if sample == 0:
            self.annotate(task, sample, ANNOTATORS[0], first, minute=0)  # 10:00, before the others' 10:05


def write_pull(folder: Path, tasks: list[dict[str, Any]], overlap: int | None = OVERLAP, title: str = "study",
               project_id: int = 7) -> Path:  # fmt: skip
    """A pull output folder: export.json, annotators.json, project.json (without overlap if None)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "export.json").write_text(json.dumps(tasks, ensure_ascii=False, indent=1), encoding="utf-8")
    users = {str(uid): email for email, uid in USER_IDS.items()}
    (folder / "annotators.json").write_text(json.dumps(users), encoding="utf-8")
    project: dict[str, Any] = {"title": title, "id": project_id, "url": "http://127.0.0.1:8080"}
    if overlap is not None:
        project["overlap"] = overlap
    (folder / "project.json").write_text(json.dumps(project), encoding="utf-8")
    return folder


def _item(id_: str, from_name: str, to_name: str, kind: str, value: dict[str, Any]) -> dict[str, Any]:
    return {"id": id_, "from_name": from_name, "to_name": to_name, "type": kind, "value": value, "origin": "manual"}


# ------------------------------------------------------------------------------------ pairwise


PAIRWISE_SYSTEMS = ("JGR", "bart", "pegasus")
ASPECTS = (("informative", "informative"), ("factual_consistency", "factual consistency"),
           ("readability", "readability"))  # fmt: skip
CODES = {0: "1", 1: "2"}  # shown position -> code; a tie is "0"


def pairwise(seed: int = 1) -> Generated:
    """truth[(sample, annotator)] = {aspect wording: winning system or "tie"}; truth pair in ``pairs``."""
    rng = random.Random(seed)
    out = Generated()
    b = _Builder(out)
    for sample in range(SAMPLES):
        pair = [PAIRWISE_SYSTEMS[p] for p in ((0, 1), (0, 2), (1, 2))[sample % 3]]
        rng.shuffle(pair)
        shown = (pair[0], pair[1])
        data = {"document": f"Document {sample}.", "summary_1": f"S1 of {sample}", "summary_2": f"S2 of {sample}"}
        task = b.task(sample, f"pairwise-aspects:{sample:04d}", data, shown)
        consensus = {w: rng.choice([*shown, "tie"]) for _, w in ASPECTS}
        for annotator in annotators_of(sample):
            meant: dict[str, str] = {}
            result = []
            for name, wording in ASPECTS:
                if sample == 10 and annotator == ANNOTATORS[1] and name == "readability":
                    continue  # unanswered: no judgment (and a rule violation)
                pick = consensus[wording] if rng.random() < 0.7 else rng.choice([*shown, "tie"])
                meant[wording] = pick
                code = "0" if pick == "tie" else CODES[shown.index(pick)]
                result.append(_item(f"r{rng.randrange(10**8)}", name, "summary_1", "choices", {"choices": [code]}))
            rng.shuffle(result)  # the browser's order is arbitrary
            b.annotate(task, sample, annotator, result, minute=5)
            out.truth[(sample, annotator)] = {"shown": shown, "answers": meant}
        first = [_item("old", name, "summary_1", "choices", {"choices": ["1"]}) for name, _ in ASPECTS]
        b.extras(task, sample, first)
    return out


# ------------------------------------------------------------------------------------ ranking


RANKING_SYSTEMS = ("bertsum", "lead3", "matchsum", "oracle")
POSITIONS = ("A", "B", "C", "D")
DIMENSIONS = ("informative", "coherence", "overall")


def ranking(seed: int = 2) -> Generated:
    """truth[(sample, annotator)] = {dimension: {system: rank}} (ties as given)."""
    rng = random.Random(seed)
    out = Generated()
    b = _Builder(out)
    quality = {"oracle": 3.0, "matchsum": 2.0, "bertsum": 1.6, "lead3": 1.0}
    for sample in range(SAMPLES):
        shown = list(RANKING_SYSTEMS)
        rng.shuffle(shown)
        data: dict[str, Any] = {"url": f"https://news.example/{sample}", "reference": f"Reference {sample}."}
        for p, system in zip(POSITIONS, shown, strict=True):
            data[f"output_{p.lower()}"] = f"{system} sentence one.\n{system} sentence two."
        data["raw"] = [f"{s} sentence one. </s> {s} sentence two." for s in RANKING_SYSTEMS]
        task = b.task(sample, f"extractive-ranking:{sample:04d}", data, tuple(shown))
        for annotator in annotators_of(sample):
            meant: dict[str, dict[str, int]] = {}
            result = []
            for dimension in DIMENSIONS:
                ranks = _ranks(rng, quality, sample)
                meant[dimension] = ranks
                for p, system in zip(POSITIONS, shown, strict=True):
                    cell = f"{dimension}_{p.lower()}"
                    result.append(
                        _item(cell, cell, f"output_{p.lower()}", "choices", {"choices": [str(ranks[system])]})
                    )
            rng.shuffle(result)
            b.annotate(task, sample, annotator, result, minute=5)
            out.truth[(sample, annotator)] = meant
        first = [_item(f"{d}_{p.lower()}", f"{d}_{p.lower()}", f"output_{p.lower()}", "choices", {"choices": ["1"]})
                 for d in DIMENSIONS for p in POSITIONS]  # fmt: skip
        b.extras(task, sample, first)
    return out


def _ranks(rng: random.Random, quality: dict[str, float], sample: int) -> dict[str, int]:
    """Ranks 1..4 from noisy scores; about one in five rankings ties two or more systems."""
    scores = {s: q + rng.gauss(0, 0.9) for s, q in quality.items()}
    if rng.random() < 0.2:
        scores = {s: round(v) for s, v in scores.items()}  # coarse scores tie
    ordered = sorted(set(scores.values()), reverse=True)
    # Ties as the seed writes them: A=3, B=1, C=1, D=2 (dense ranks).
    ranks = {s: ordered.index(v) + 1 for s, v in scores.items()}
    if sample == 3:
        ranks = dict.fromkeys(quality, 1)  # everyone tied: no W for this ranking
    return ranks


# ------------------------------------------------------------------------------------ spans (shared)


WORDS = 40


def _words(sample: int) -> tuple[str, list[tuple[int, int]]]:
    """A text of WORDS words (some with punctuation or 'é') and each word's offsets."""
    words = [f"w{sample}x{i}" + ("é," if i % 9 == 4 else "") for i in range(WORDS)]
    text, offsets, at = "", [], 0
    for i, w in enumerate(words):
        sep = "  " if i % 11 == 10 else " "
        if i:
            text += sep
            at += len(sep)
        offsets.append((at, at + len(w)))
        text += w
        at += len(w)
    return text, offsets


def _spans(rng: random.Random, labels: tuple[str, ...], offsets: list[tuple[int, int]],
           annotators: tuple[str, ...]) -> dict[str, list[tuple[str, int, int]]]:  # fmt: skip
    """Per annotator, non-overlapping spans (label, start, end): shared ones kept, shifted, or missed; extras."""
    slots = [(4 * k, 4 * k + 3) for k in range(WORDS // 4)]  # word ranges [a, b), disjoint with a gap
    chosen = rng.sample(slots, rng.randint(0, 3))
    truth = [(rng.choice(labels), a, b) for a, b in chosen]
    free = [s for s in slots if s not in chosen]
    out: dict[str, list[tuple[str, int, int]]] = {}
    for annotator in annotators:
        mine = []
        for label, a, b2 in truth:
            roll = rng.random()
            if roll < 0.7:
                mine.append((label, offsets[a][0], offsets[b2 - 1][1]))
            elif roll < 0.85:
                mine.append((label, offsets[a + 1][0], offsets[b2 - 1][1]))  # overlapping, not exact
            elif roll < 0.92:
                mine.append((rng.choice(labels), offsets[a][0], offsets[b2 - 1][1]))  # maybe another label
        if free and rng.random() < 0.3:
            a, b2 = rng.choice(free)
            mine.append((rng.choice(labels), offsets[a][0], offsets[a + 1][1]))
        out[annotator] = sorted(mine, key=lambda s: s[1])
    return out


# ------------------------------------------------------------------------------------ qa-feedback


QA_LABELS = {"Irrelevant": "Irrelevant", "Redundant": "Repetitive", "Incoherent": "Incoherent",
             "Wrong-Grounding": "Inconsistent Fact", "Unverifiable": "Unverifiable Fact"}  # fmt: skip
QA_MISSING = {"Missing-Answer": "Missing Answer", "Missing-Major-Auxiliary": "Missing Major Auxiliary",
              "Missing-Minor-Auxiliary": "Missing Minor Auxiliary"}  # fmt: skip


def qa_feedback(seed: int = 3) -> Generated:
    """truth[(sample, annotator)] = {"spans": [(type, start, end)], "evidence": [n per Wrong-Grounding, in
    span order], "missing": [(type, sentences)], "corrected": bool}; ``tasks[i]["data"]["prediction"]`` the text."""
    rng = random.Random(seed)
    out = Generated()
    b = _Builder(out)
    for sample in range(SAMPLES):
        text, offsets = _words(sample)
        items = [{"ref": f"P{p} S{s}", "text": f"Passage {p} sentence {s} of {sample}.", "passage": p, "sentence": s}
                 for p in (1, 2) for s in range(4)]  # fmt: skip
        data = {"question": f"Question {sample}?", "passages": items, "reference": "Ref.", "prediction": text,
                "evidence_options": [{"value": f"P{it['passage']}:S{it['sentence']}"} for it in items]}  # fmt: skip
        task = b.task(sample, f"qa-feedback:{sample:04d}", data)
        spans = _spans(rng, tuple(QA_LABELS), offsets, annotators_of(sample))
        for annotator in annotators_of(sample):
            result: list[dict[str, Any]] = []
            evidence = []
            for n, (kind, start, end) in enumerate(spans[annotator]):
                region = {"start": start, "end": end, "text": text[start:end]}
                rid = f"e{rng.randrange(10**8)}"
                result.append(_item(rid, "errors", "prediction", "labels", {**region, "labels": [QA_LABELS[kind]]}))
                if kind == "Wrong-Grounding":
                    size = rng.randint(1, 3)
                    choices = [f"P{1 + n % 2}:S{s}" for s in range(size)]
                    result.append(_item(rid, "evidence", "prediction", "choices", {**region, "choices": choices}))
                    evidence.append(size)
            missing = []
            for m in range(rng.choice([0, 0, 1, 2])):
                kind = rng.choice(list(QA_MISSING))
                first = 4 * (m % 2) + rng.randint(0, 1)
                size = rng.randint(1, 2)
                value = {"start": str(first), "end": str(first + size - 1), "startOffset": 0,
                         "endOffset": len(items[first + size - 1]["text"]),
                         "text": "\n".join(it["text"] for it in items[first:first + size]),
                         "paragraphlabels": [QA_MISSING[kind]]}  # fmt: skip
                result.append(_item(f"m{rng.randrange(10**8)}", "passages_labels", "passages", "paragraphlabels",
                                    value))  # fmt: skip
                missing.append((kind, size))
            corrected = rng.random() < 0.6
            if corrected:
                result.append(_item("c", "corrected_prediction", "prediction", "textarea", {"text": [text + "!"]}))
            b.annotate(task, sample, annotator, result, minute=5)
            out.truth[(sample, annotator)] = {"spans": spans[annotator], "evidence": evidence, "missing": missing,
                                              "corrected": corrected}  # fmt: skip
        b.extras(task, sample, [])
    return out


# ------------------------------------------------------------------------------------ summary-flaws


FLAW_LABELS = ("Non-factual", "Irrelevant", "Incoherent")


def summary_flaws(seed: int = 4) -> Generated:
    """truth[(sample, annotator)] = {"spans": [(label, start, end)], "none": bool, "missing": "Yes"|"No"|""}."""
    rng = random.Random(seed)
    out = Generated()
    b = _Builder(out)
    for sample in range(SAMPLES):
        text, offsets = _words(sample)
        data = {"document": f"SUBREDDIT: r/test TITLE: t{sample} POST: post {sample}", "summary": text}
        task = b.task(sample, f"summary-flaws:{sample:04d}", data)
        spans = _spans(rng, FLAW_LABELS, offsets, annotators_of(sample))
        for annotator in annotators_of(sample):
            result = [_item(f"f{rng.randrange(10**8)}", "flaws", "summary", "labels",
                            {"start": s, "end": e, "text": text[s:e], "labels": [label]})
                      for label, s, e in spans[annotator]]  # fmt: skip
            none = not spans[annotator] and rng.random() < 0.9  # sometimes forgotten: a violation
            if none:
                result.append(_item("none", "flaws_none", "summary", "choices", {"choices": ["None identified"]}))
            missing = rng.choice(["Yes", "No", "No", ""])
            if missing:
                result.append(_item("mk", "missing_key_information", "summary", "choices", {"choices": [missing]}))
            rng.shuffle(result)
            b.annotate(task, sample, annotator, result, minute=5)
            out.truth[(sample, annotator)] = {"spans": spans[annotator], "none": none, "missing": missing}
        b.extras(task, sample, [])
    return out


# ------------------------------------------------------------------------------------ sentence-errors


SPECIAL = ("OK", "Repetitive", "Sentence missing")
MAPPING = ("Omission", "Wrong combination", "Fabrication", "Lack of rewriting")
MEANING = ("Ungrammatical", "Semantically implausible", "No meaning can be inferred",
           "Meaning changed, not entailed", "Meaning changed, contradiction", "Pragmatic meaning changed")  # fmt: skip
ROWS = 3


def sentence_errors(seed: int = 5) -> Generated:
    """truth[(sample, annotator)] = [(special, mapping, meaning) per row 1..3]; "" where not given."""
    rng = random.Random(seed)
    out = Generated()
    b = _Builder(out)
    for sample in range(SAMPLES):
        sentences = [f"Věta {n} ze vzorku {sample}." for n in range(1, 4 if sample % 5 else 3)]
        data: dict[str, Any] = {"input_text": f"Článek {sample}.", "gold": "Zlato.",
                                "generated": "\n".join(f"• {s}" for s in sentences)}  # fmt: skip
        for n in range(1, ROWS + 1):
            data[f"sentence_{n}"] = sentences[n - 1] if n <= len(sentences) else ""
        data["record"] = {"id": f"rec{sample}", "variant": "abstract"}
        task = b.task(sample, f"sentence-errors:{sample:04d}", data)
        consensus = [_row(rng, n, len(sentences)) for n in range(1, ROWS + 1)]
        for annotator in annotators_of(sample):
            rows = [c if rng.random() < 0.75 else _row(rng, n, len(sentences)) for n, c in enumerate(consensus, 1)]
            result = []
            for n, (special, mapping, meaning) in enumerate(rows, 1):
                if special:
                    result.append(_item(f"s{n}", f"special_{n}", f"sentence_{n}", "choices", {"choices": [special]}))
                    continue
                result.append(_item(f"p{n}", f"mapping_{n}", f"sentence_{n}", "choices", {"choices": [mapping]}))
                if meaning:
                    result.append(_item(f"m{n}", f"meaning_{n}", f"sentence_{n}", "choices", {"choices": [meaning]}))
                result.append(_item(f"x{n}", f"explanation_{n}", f"sentence_{n}", "textarea", {"text": ["why"]}))
            rng.shuffle(result)
            b.annotate(task, sample, annotator, result, minute=5)
            out.truth[(sample, annotator)] = rows
        b.extras(task, sample, [])
    return out


def _row(rng: random.Random, n: int, sentences: int) -> tuple[str, str, str]:
    if n > sentences:
        return ("Sentence missing", "", "")
    if rng.random() < 0.5:
        return (rng.choice(SPECIAL[:2]), "", "")
    meaning = rng.choice(MEANING) if rng.random() < 0.9 else ""  # sometimes unanswered (a violation)
    return ("", rng.choice(MAPPING), meaning)
