"""A synthetic study in the layout of seed 001 (Shen et al.'s ``human_evaluation/`` release).

``make_seed001_study(root)`` writes ``index_marker.json`` and annotator folders ``A``, ``B``,
``C`` of ``<n>.txt`` files with the release's real-world quirks, and returns what a reader
must find there. Deterministic for a given ``seed``, so unit tests and the server
round-trip tests can share it.

Quirks, as in the release and its mirror:

- ``A`` writes the canonical layout (``[***] informative:1``);
- ``B``: about two files in three start with a UTF-8 BOM;
- ``C`` writes a space after the colon (``[***] informative: 2``), has no file for sample 8
  (the release's C lacks two samples) and left sample 5 unanswered (a template);
- every 7th sample of every annotator has CRLF line endings;
- some documents and summaries are Czech with emoji, one document (sample 6, CRLF) spans three lines, and
  texts keep CNN/DM's double spaces and `` .`` endings.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from pathlib import Path

RULE = "=" * 70
ANNOTATORS = ("A", "B", "C")
ASPECTS = ("informative", "factual consistency", "readability")
SYSTEMS = ("bart", "JGR")
MISSING = {("C", 8)}  # (annotator, sample) without a file
UNANSWERED = {("C", 5)}  # (annotator, sample) left as a template

_ENGLISH = [
    "Rita Ora, 24, has channeled her passion for fashion into a new adidas range .",
    "QPR host West Ham on Saturday as they look to climb out of the relegation zone .",
    "The singer also recently unveiled a beauty range for Rimmel.",
    "She's a best-selling singer, actress,  beauty buff and one of the world's most stylish stars.",
    "Cesc Fabregas' 88th minute strike saw Chelsea grab a late 1-0 win at QPR earlier this month .",
    "‘We are probably half the wage bill of the next team in the division,’ said Dyche.",
]
_CZECH = [
    "Příliš žluťoučký kůň úpěl ďábelské ódy 🐴.",
    "Vláda schválila nový zákon o dani z příjmů 📈 — platit bude od ledna.",
    "Hokejisté porazili Švédsko 3:2 po nájezdech 🏒🇨🇿.",
    "Starostka Černošic řekla: „Úřad zůstane otevřený i v sobotu.“",
]


@dataclass(frozen=True)
class Seed001Sample:
    """What one sample shows: the same in every annotator's file."""

    sample: int
    document: str
    summary_1: str
    summary_2: str
    system_1: str
    system_2: str


@dataclass
class Seed001Study:
    """What a reader must find in the generated folder."""

    root: Path
    samples: list[Seed001Sample]
    # annotator -> sample -> the seed's aspect wording -> "1" | "2" | "0"; answered files only
    answers: dict[str, dict[int, dict[str, str]]] = field(default_factory=dict)
    bom: set[Path] = field(default_factory=set)
    crlf: set[Path] = field(default_factory=set)
    index_marker: bytes = b""

    def file(self, annotator: str, sample: int) -> Path:
        return self.root / annotator / f"{sample}.txt"

    def canonical(self, annotator: str, sample: int) -> str:
        """The file as a result writer must write it: canonical layout, this annotator's answers."""
        s = self.samples[sample]
        answers = self.answers.get(annotator, {}).get(sample, {})
        return canonical_file(s.document, s.summary_1, s.summary_2, answers)


def canonical_file(document: str, summary_1: str, summary_2: str, answers: dict[str, str], space: str = "") -> str:
    """The release's layout (see annols.formats.pairwise_aspects), written independently of it."""
    lines = ["Doc:", document, RULE, "", "Summary #1", summary_1, RULE, "", "Summary #2", summary_2, RULE, ""]
    lines += [f"[***] {aspect}:{space}{answers.get(aspect, '')}" for aspect in ASPECTS]
    return "\n".join(lines) + "\n"


def _text(rng: random.Random, sentences: int, czech: bool) -> str:
    pool = _CZECH if czech else _ENGLISH
    return " ".join(rng.choice(pool) for _ in range(sentences))


def _sample(rng: random.Random, n: int) -> Seed001Sample:
    czech = n % 4 == 3
    document = _text(rng, 6, czech)
    if n == 6:
        document = f"{document}\n{_text(rng, 2, czech)}\n{_text(rng, 1, not czech)}"
    systems = list(SYSTEMS)
    rng.shuffle(systems)
    return Seed001Sample(
        sample=n,
        document=document,
        summary_1=_text(rng, 2, czech) + (" 😀" if n % 5 == 0 else ""),
        summary_2=_text(rng, 2, not czech and n % 6 == 1),
        system_1=systems[0],
        system_2=systems[1],
    )


def make_seed001_study(root: Path, samples: int = 100, seed: int = 0, gaps: bool = True) -> Seed001Study:
    """Write a seed-001 folder under ``root`` and return what it holds.

    ``gaps`` leaves one file out and one unanswered (template) file, as real folders may.
    """
    rng = random.Random(seed)
    root.mkdir(parents=True, exist_ok=True)
    study = Seed001Study(root=root, samples=[_sample(rng, n) for n in range(samples)])
    for annotator in ANNOTATORS:
        (root / annotator).mkdir(exist_ok=True)
        for s in study.samples:
            if gaps and (annotator, s.sample) in MISSING:
                continue
            answered = not gaps or (annotator, s.sample) not in UNANSWERED
            answers = {aspect: rng.choice("120") for aspect in ASPECTS} if answered else {}
            if answered:
                study.answers.setdefault(annotator, {})[s.sample] = answers
            _write_file(study, annotator, s, answers, rng)
    marker = [{"sample": s.sample, "summary #1": s.system_1, "summary #2": s.system_2} for s in study.samples]
    study.index_marker = json.dumps(marker).encode("utf-8")
    (root / "index_marker.json").write_bytes(study.index_marker)
    return study


def _write_file(
    study: Seed001Study, annotator: str, s: Seed001Sample, answers: dict[str, str], rng: random.Random
) -> None:
    text = canonical_file(s.document, s.summary_1, s.summary_2, answers, space=" " if annotator == "C" else "")
    path = study.file(annotator, s.sample)
    if s.sample % 7 == 6:
        text = text.replace("\n", "\r\n")
        study.crlf.add(path)
    data = text.encode("utf-8")
    if annotator == "B" and rng.random() < 0.67:
        data = b"\xef\xbb\xbf" + data
        study.bom.add(path)
    path.write_bytes(data)


# The typos annotators of the real release typed into their files (two of its 300 files), and
# more of the same kinds: (annotator, sample, what is done, the line it lands on in the file).
TYPOS = (
    ("A", 2, "x before Doc:", 1),
    ("B", 3, "a lone digit after the last answer", None),
    ("C", 4, "a stray character after a line of 70 '='", 3),
    ("A", 5, "a stray character before [***]", None),
    ("B", 1, "a stray character after Summary #2", 9),
)


def add_typos(study: Seed001Study) -> list[tuple[Path, int]]:
    """Type the TYPOS into the study's files (which keep their BOM and line endings); returns
    (file, line) of each, where a reader must warn. No judgment changes."""
    where = []
    for annotator, sample, kind, line in TYPOS:
        path = study.file(annotator, sample)
        data = path.read_bytes()
        bom = data.startswith(b"\xef\xbb\xbf")
        text = data.decode("utf-8-sig")
        newline = "\r\n" if "\r\n" in text else "\n"
        lines = text.split(newline)
        if kind == "x before Doc:":
            lines[0] = "xDoc:"
        elif kind == "a lone digit after the last answer":
            assert study.answers[annotator][sample]["readability"], "the typo needs an answered file"
            lines[-1:] = ["1", ""]
            line = len(lines) - 1
        elif kind == "a stray character after a line of 70 '='":
            lines[line - 1] += "`"
        elif kind == "a stray character before [***]":
            line = next(i for i, x in enumerate(lines) if x.startswith("[***] readability")) + 1
            lines[line - 1] = "s" + lines[line - 1]
        else:
            line = next(i for i, x in enumerate(lines) if x == "Summary #2") + 1
            lines[line - 1] += "q"
        assert line is not None
        path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + newline.join(lines).encode("utf-8"))
        where.append((path, line))
    return where
