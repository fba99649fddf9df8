"""A synthetic study in the layout of the real seed-004 sheet (``../shared/seeds/README.md``, row 004).

``make_seed004_study(root)`` writes the distributed sheet ``sampled_results_v2.1.xlsx``
(vertical, 7 rows per case, 5 columns: ``Case N`` / empty / the dimensions; the sample id as
text and the url; ``ref`` and the reference; the letters A-D, the outputs joined by
``</s>`` and three empty rank cells), the three annotators' returned copies
``sampled_results_v2.1_<annotator>.xlsx`` with the ranks typed as text, and
``systems.json`` (letter -> system). Written with openpyxl, independently of annols.

As in the real study: letters are fixed systems for the whole sheet, ties are allowed,
one annotator (``ben``) did only the first cases, one rank cell was left empty
(``cas``, case 2, coherence of B), and one annotator is named by an e-mail address.
The distributed sheet has a note beside the table; one copy ends with empty rows.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from pathlib import Path

from openpyxl import Workbook

STEM = "sampled_results_v2.1"
LETTERS = ("A", "B", "C", "D")
DIMENSIONS = ("informative", "coherence", "overall")
SYSTEMS = {"A": "ex44", "B": "ex46", "C": "ex47", "D": "ex48"}
ANNOTATORS = ("ann@study.org", "ben", "cas")
PARTIAL = ("ben", 5)  # did only the first 5 cases
EMPTY = ("cas", 2, "coherence", "B")  # one cell left empty

_SENTENCES = [
    "( CNN ) James Best , best known for his portrayal of bumbling sheriff Rosco P. Coltrane , died Monday .",
    "He was 88 .",
    "Best died in hospice in Hickory , North Carolina , of complications from pneumonia .",
    "Příliš žluťoučký kůň úpěl ďábelské ódy .",
    "The company said it would ` ` review '' its policy , according to a statement .",
    "Police said the 23-year-old was arrested on Tuesday night in Manchester .",
]


@dataclass
class Seed004Study:
    root: Path
    sheet: Path
    copies: dict[str, Path]
    mapping: Path
    # annotator -> case -> (dimension, letter) -> rank (int); filled cells only
    ranks: dict[str, dict[int, dict[tuple[str, str], int]]] = field(default_factory=dict)
    cases: int = 0

    @property
    def inputs(self) -> list[Path]:
        return [self.sheet, *self.copies.values(), self.mapping]


def _case_rows(rng: random.Random, number: int) -> list[list[object]]:
    outputs = ["</s>".join(rng.sample(_SENTENCES, 2)) for _ in LETTERS]
    return [
        [f"Case {number}", None, *DIMENSIONS],
        [str(100 + 7 * number), f"https://edition.cnn.com/2015/04/{number:02d}/story-{number}.html"],
        ["ref", " ".join(rng.sample(_SENTENCES, 3))],
        *([letter, output, None, None, None] for letter, output in zip(LETTERS, outputs, strict=True)),
    ]


def make_seed004_study(root: Path, cases: int = 8, seed: int = 0) -> Seed004Study:
    rng = random.Random(seed)
    root.mkdir(parents=True, exist_ok=True)
    blocks = [_case_rows(rng, n) for n in range(1, cases + 1)]
    study = Seed004Study(root, root / f"{STEM}.xlsx", {}, root / "systems.json", cases=cases)

    workbook = Workbook()
    sheet = workbook.active
    for block in blocks:
        for row in block:
            sheet.append(row)
    sheet["G2"] = "note: check case 1 again"  # a note beside the table
    workbook.save(study.sheet)

    for annotator in ANNOTATORS:
        workbook = Workbook()
        sheet = workbook.active
        given: dict[int, dict[tuple[str, str], int]] = {}
        for number, block in enumerate(blocks, start=1):
            done = not (annotator == PARTIAL[0] and number > PARTIAL[1])
            for k, row in enumerate(block):
                row = list(row)
                if k >= 3 and done:
                    letter = row[0]
                    for j, dimension in enumerate(DIMENSIONS):
                        if (annotator, number, dimension, letter) == EMPTY:
                            continue
                        rank = rng.randint(1, 4)  # ties allowed
                        row[2 + j] = str(rank)  # typed as text, as the real annotators' cells are
                        given.setdefault(number, {})[(dimension, str(letter))] = rank
                sheet.append(row)
        if annotator == "cas":
            for _ in range(3):
                sheet.append([None] * 5)
        path = root / f"{STEM}_{annotator}.xlsx"
        workbook.save(path)
        study.copies[annotator] = path
        study.ranks[annotator] = given
    study.mapping.write_text(json.dumps(SYSTEMS), encoding="utf-8")
    return study


def cells(path: Path) -> dict[str, object]:
    """Every non-empty cell of the first sheet, by coordinate, with its value as stored."""
    from openpyxl import load_workbook

    workbook = load_workbook(path)
    try:
        sheet = workbook.worksheets[0]
        return {c.coordinate: c.value for row in sheet.iter_rows() for c in row if c.value not in (None, "")}
    finally:
        workbook.close()
