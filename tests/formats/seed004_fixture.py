"""A synthetic study in the layout of the real seed-004 sheet (``../shared/seeds/README.md``, row 004).

``make_seed004_study(root)`` writes, in the folders of the real release, the distributed
sheet ``distribute/sampled_results_v2.1.xlsx`` (vertical, 7 rows per case, 5 columns:
``Case N`` / empty / the dimensions; the sample id and the url; ``ref`` and the
reference; the letters A-D, the outputs joined by ``</s>`` and three empty rank cells),
the three annotators' returned copies ``results/sampled_results_v2.1_<annotator>.xlsx``
and ``systems.json`` (letter -> system). Written with openpyxl, independently of annols.

Two layouts (``layout=``):

- ``"published"`` (the default), as the real files are: only Case 1's row carries the
  headers ``informative``, ``coherence``, ``overall`` in C-E; every later ``Case N`` row
  leaves C-E empty, in the distributed sheet and in every copy. Sample ids and the ranks
  the annotators typed are stored as numbers (the real copies store ``<v>2</v>``).
- ``"every-case"``: the headers on every ``Case N`` row, sample ids and ranks stored as
  text (``'2'``): the layout annols read (and wrote) before it knew the published one.

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
LAYOUTS = ("published", "every-case")

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
    root: Path  # the folder of the release: distribute/, results/, systems.json
    sheet: Path
    copies: dict[str, Path]
    mapping: Path
    layout: str = "published"
    # annotator -> case -> (dimension, letter) -> rank (int); filled cells only
    ranks: dict[str, dict[int, dict[tuple[str, str], int]]] = field(default_factory=dict)
    cases: int = 0

    @property
    def inputs(self) -> list[Path]:
        return [self.sheet, *self.copies.values(), self.mapping]

    def sample(self, number: int) -> int | str:
        """Case ``number``'s sample id as the sheet stores it."""
        return 100 + 7 * number if self.layout == "published" else str(100 + 7 * number)


def _case_rows(rng: random.Random, number: int, layout: str) -> list[list[object]]:
    outputs = ["</s>".join(rng.sample(_SENTENCES, 2)) for _ in LETTERS]
    headers = DIMENSIONS if number == 1 or layout == "every-case" else ()
    sample = 100 + 7 * number
    return [
        [f"Case {number}", None, *headers],
        [sample if layout == "published" else str(sample), f"https://edition.cnn.com/2015/04/{number:02d}/s{number}"],
        ["ref", " ".join(rng.sample(_SENTENCES, 3))],
        *([letter, output, None, None, None] for letter, output in zip(LETTERS, outputs, strict=True)),
    ]


def make_seed004_study(root: Path, cases: int = 8, seed: int = 0, layout: str = "published") -> Seed004Study:
    assert layout in LAYOUTS, layout
    rng = random.Random(seed)
    (root / "distribute").mkdir(parents=True, exist_ok=True)
    (root / "results").mkdir(exist_ok=True)
    blocks = [_case_rows(rng, n, layout) for n in range(1, cases + 1)]
    sheet_path = root / "distribute" / f"{STEM}.xlsx"
    study = Seed004Study(root, sheet_path, {}, root / "systems.json", layout=layout, cases=cases)

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
                        row[2 + j] = rank if layout == "published" else str(rank)
                        given.setdefault(number, {})[(dimension, str(letter))] = rank
                sheet.append(row)
        if annotator == "cas":
            for _ in range(3):
                sheet.append([None] * 5)
        path = root / "results" / f"{STEM}_{annotator}.xlsx"
        workbook.save(path)
        study.copies[annotator] = path
        study.ranks[annotator] = given
    study.mapping.write_text(json.dumps(SYSTEMS), encoding="utf-8")
    return study


def cells(path: Path) -> dict[str, object]:
    """Every non-empty cell of the first sheet, by coordinate, with its value as stored
    (a rank stored as the number 2 and one typed as the text '2' differ)."""
    from openpyxl import load_workbook

    workbook = load_workbook(path)
    try:
        sheet = workbook.worksheets[0]
        return {c.coordinate: c.value for row in sheet.iter_rows() for c in row if c.value not in (None, "")}
    finally:
        workbook.close()
