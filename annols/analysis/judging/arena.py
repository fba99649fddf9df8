"""Agreement on pairwise votes as the MT-Bench paper counts it (Zheng et al. 2023, "Judging LLM-as-a-Judge
with MT-Bench and Chatbot Arena", Table 2): with ties and without.

A unit is an item and aspect (an arena battle: question, turn and pair). Two kinds of voter are
compared, humans with humans or a judge with the humans:

- humans with each other: every two human votes on a unit make one pair;
- a judge with the humans: the judge's vote on a unit with each human vote on it makes one pair.

Agreement is the share of pairs whose votes are equal, a tie equal to any tie (``tie`` and
``tie (bothbad)`` are both ties). "Without ties" leaves out every pair in which either vote is a
tie. This is the counting of the authors' ``compute_agreement.py`` (FastChat, llm_judge), pooled over
the turns; the test computes it again by hand.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import pandas as pd  # type: ignore[import-untyped, unused-ignore]

from annols.analysis.results import Table, percent
from annols.formats.answers import is_judge

TIE = "tie"
COLUMNS = ["raters", "pairs", "agree", "agreement %", "pairs w/o tie", "agree w/o tie", "agreement w/o tie %"]


def _pairs(rows: list[tuple[str, str]]) -> tuple[int, int, int, int]:
    """(pairs, agree, pairs without ties, agree without ties) of (vote, vote) rows."""
    pairs = len(rows)
    agree = sum(a == b for a, b in rows)
    decided = [(a, b) for a, b in rows if a != TIE and b != TIE]
    return pairs, agree, len(decided), sum(a == b for a, b in decided)


def vote_pairs(frame: pd.DataFrame, judge: str | None) -> list[tuple[str, str]]:
    """The pairs of votes compared: of two humans on a unit (``judge`` None), or of the judge and each human.
    ``frame``: preference rows (task_key, annotator, question, value win/tie/loss from one side)."""
    part = frame[frame["kind"] == "preference"]
    out: list[tuple[str, str]] = []
    for _, unit in part.groupby(["task_key", "question"], sort=True):
        humans = [str(v) for a, v in zip(unit["annotator"], unit["value"], strict=True) if not is_judge(str(a))]
        if judge is None:
            out += list(itertools.combinations(humans, 2))
            continue
        mine = [str(v) for v in unit.loc[unit["annotator"] == judge, "value"]]
        out += [(j, h) for j in mine[:1] for h in humans]
    return out


def agreement(frame: pd.DataFrame, judges: Sequence[str]) -> Table:
    """Humans with each other, then each judge with the humans: with ties and without."""
    rows = []
    for name, judge in [("humans with each other", None), *((f"{j} with humans", j) for j in judges)]:
        pairs, agree, decided, decided_agree = _pairs(vote_pairs(frame, judge))
        rows.append([name, pairs, agree, decided, decided_agree])
    table = pd.DataFrame(rows, columns=["raters", "pairs", "agree", "pairs w/o tie", "agree w/o tie"])
    table["agreement %"] = percent(table["agree"], table["pairs"])
    table["agreement w/o tie %"] = percent(table["agree w/o tie"], table["pairs w/o tie"])
    return Table("judges_mt_bench_agreement", "Agreement on votes as MT-Bench counts it: pairs of votes on a "
                 "unit (two humans, or the judge and a human) that are equal, with ties (a tie equals any tie) "
                 "and without (pairs with a tie left out)", table[COLUMNS])  # fmt: skip
