"""Ratings turn by turn (``per_turn = true``, examples/chat-per-turn.toml): each assistant turn of a conversation
rated in one task. The config repeats a turn's block over the conversation's turns, a pull's ratings name their
turn, and the analysis keeps the item (each system's conversation of it) as the unit of the means and tests,
gives a table per turn position, and computes agreement over units (item, system, turn), overall and per turn
position, checked against ``krippendorff.alpha`` computed here."""

from __future__ import annotations

import json
import random
from pathlib import Path

import krippendorff
import numpy as np
import pandas as pd
import pytest
from scipy import stats

from annols import protocols
from annols.analysis import style_sections
from annols.analysis.by_style.best_worst import UNIT
from annols.definition import fields
from annols.errors import AnnolsError
from annols.formats.generic import GenericFormat
from annols.protocols import config
from annols.styles import decode
from annols.styles.answers import ExportedAnnotation, ExportedTask
from annols.styles.judgments import TIDY_COLUMNS, Rating, tidy
from tests.analysis.run import OPTIONS, Analysed
from tests.conftest import ROOT

EXAMPLE = ROOT / "examples" / "chat-per-turn.toml"
ASPECTS = ("helpfulness", "correctness")
SYSTEMS = ("model-x", "model-y")
ANNOTATORS = ("a", "b", "c")
ITEMS, TURNS = 12, 3


def conversation(turns: int) -> list[dict[str, str]]:
    out = [{"role": "system", "content": "Be brief."}]
    for t in range(turns):
        out += [{"role": "user", "content": f"question {t}"}, {"role": "assistant", "content": f"answer {t}"}]
    return out


def test_turns_are_cut_after_each_assistant_message() -> None:
    messages = [*conversation(2), {"role": "user", "content": "thanks"}]
    cut = fields.assistant_turns(messages)
    assert [[m["content"] for m in turn] for turn in cut] == [
        ["Be brief.", "question 0", "answer 0"], ["question 1", "answer 1", "thanks"]]
    assert fields.assistant_turns([{"role": "user", "content": "hi"}]) == []
    data = config.with_turns(protocols.load(str(EXAMPLE)), {"conversation": messages})
    assert data["annols_turns_conversation"] == cut and data["conversation"] == messages
    # a pull gives the data back without the turns
    assert fields.from_label_studio(data) == {"conversation": messages}


def test_the_config_repeats_a_turn_block_with_its_ratings() -> None:
    xml = config.label_config(protocols.load(str(EXAMPLE)))
    assert '<Repeater on="$annols_turns_conversation" indexFlag="{{idx}}">' in xml
    assert 'value="$annols_turns_conversation[{{idx}}]" layout="dialogue"' in xml
    for aspect in ASPECTS:
        assert f'name="{aspect}__turn{{{{idx}}}}" toName="conversation__turn{{{{idx}}}}"' in xml


def test_per_turn_needs_one_conversation_candidate(tmp_path: Path) -> None:
    text = EXAMPLE.read_text("utf-8").replace('kind = "conversation"\n', "")
    path = tmp_path / "bad.toml"
    path.write_text(text, "utf-8")
    with pytest.raises(AnnolsError, match=r"per_turn.*one \[\[candidates\]\] pane of kind"):
        protocols.load(str(path))


def test_a_record_without_an_assistant_message_is_refused(tmp_path: Path) -> None:
    d = protocols.load(str(EXAMPLE))
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps({"conversation": [{"role": "user", "content": "hi"}], "systems": ["m"]}) + "\n")
    with pytest.raises(AnnolsError, match=r"in.jsonl.*line 1.*conversation.*no message is the assistant's"):
        list(GenericFormat().read([source], d))


def result(scores: dict[tuple[str, int], int]) -> list[dict[str, object]]:
    return [{"id": f"r{aspect}{turn}", "from_name": f"{aspect}__turn{turn}", "to_name": f"conversation__turn{turn}",
             "type": "choices", "value": {"choices": [str(score)]}, "origin": "manual"}
            for (aspect, turn), score in scores.items()]  # fmt: skip


def test_decode_names_system_turn_and_aspect() -> None:
    d = protocols.load(str(EXAMPLE))
    task = ExportedTask(1, "k", {"conversation": conversation(2)}, ("model-y",), ())
    annotation = ExportedAnnotation(1, "a@x", result({("helpfulness", 1): 4, ("correctness", 0): 2,
                                                      ("helpfulness", 0): 5, ("correctness", 1): 3}))  # fmt: skip
    assert decode(d, task, annotation) == [
        Rating("helpfulness", "conversation", "model-y", 5.0, "5", turn=1),
        Rating("correctness", "conversation", "model-y", 2.0, "2", turn=1),
        Rating("helpfulness", "conversation", "model-y", 4.0, "4", turn=2),
        Rating("correctness", "conversation", "model-y", 3.0, "3", turn=2),
    ]
    rows = list(tidy(decode(d, task, annotation)))
    assert [r[TIDY_COLUMNS.index("row")] for r in rows] == [1, 1, 2, 2]


def planted(seed: int = 5) -> tuple[pd.DataFrame, pd.DataFrame, dict[tuple[int, str, int, str, str], int]]:
    """Each item a conversation each system held (its own task), each task rated by three annotators on
    every turn; model-x a point better than model-y, turn 3 rated lower, annotator c noisy."""
    rng = random.Random(seed)
    rows, judged, given = [], [], {}
    uid = 0
    for item in range(ITEMS):
        for system in SYSTEMS:
            key = f"task-{item}-{system}"
            for annotator in ANNOTATORS:
                judgments = []
                for turn in range(1, TURNS + 1):
                    for aspect in ASPECTS:
                        base = (4 if system == "model-x" else 3) - (turn == TURNS) + (item % 2)
                        noise = rng.choice([-2, -1, 0, 1, 2]) if annotator == "c" else rng.choice([0, 0, 0, 1])
                        score = min(5, max(1, base + noise))
                        given[(item, system, turn, aspect, annotator)] = score
                        judgments.append(Rating(aspect, "conversation", system, float(score), str(score),
                                                turn=turn))  # fmt: skip
                judged.append((uid, key, annotator))
                rows += [[uid, key, annotator, *row, f"item-{item}"] for row in tidy(judgments)]
                uid += 1
    frame = pd.DataFrame(rows, columns=["uid", "task_key", "annotator", *TIDY_COLUMNS, UNIT])
    return frame, pd.DataFrame(judged, columns=["uid", "task_key", "annotator"]), given


@pytest.fixture(scope="module")
def analysed() -> tuple[Analysed, dict[tuple[int, str, int, str, str], int]]:
    frame, judged, given = planted()
    return Analysed(style_sections(protocols.load(str(EXAMPLE)), frame, judged, OPTIONS)), given


def test_the_item_is_the_unit_of_means_and_tests(analysed: tuple[Analysed, dict]) -> None:
    result, given = analysed
    for aspect in ASPECTS:
        means = {}
        for system in SYSTEMS:
            row = result.row("ratings_summary", aspect=aspect, system=system)
            per_item = [np.mean([v for (i, s, _, a, _), v in given.items() if (i, s, a) == (item, system, aspect)])
                        for item in range(ITEMS)]  # fmt: skip
            assert row["samples"] == ITEMS and row["ratings"] == ITEMS * TURNS * len(ANNOTATORS)
            assert row["mean"] == pytest.approx(np.mean(per_item))
            means[system] = per_item
        test = result.row("ratings_paired_tests", aspect=aspect, system="model-x", opponent="model-y")
        differences = np.round(np.subtract(means["model-x"], means["model-y"]), 12)
        assert test["samples"] == ITEMS
        assert test["p (Wilcoxon)"] == pytest.approx(stats.wilcoxon(differences[differences != 0]).pvalue, rel=1e-9)


def test_a_table_per_turn_position(analysed: tuple[Analysed, dict]) -> None:
    result, given = analysed
    for aspect in ASPECTS:
        for system in SYSTEMS:
            for turn in range(1, TURNS + 1):
                row = result.row("ratings_turns", aspect=aspect, system=system, turn=turn)
                values = [[v for (i, s, t, a, _), v in given.items() if (i, s, t, a) == (item, system, turn, aspect)]
                          for item in range(ITEMS)]  # fmt: skip
                assert row["samples"] == ITEMS and row["ratings"] == ITEMS * len(ANNOTATORS)
                assert row["mean"] == pytest.approx(np.mean([np.mean(v) for v in values]))
            if system == "model-x":
                test = result.row("ratings_turn_paired_tests", aspect=aspect, system=system,
                                  opponent="model-y", turn=turn)  # fmt: skip
                means = {s: [np.mean([v for (i, s2, t, a, _), v in given.items() if (i, s2, t, a) ==
                                      (item, s, turn, aspect)]) for item in range(ITEMS)] for s in SYSTEMS}  # fmt: skip
                differences = np.round(np.subtract(means["model-x"], means["model-y"]), 12)  # 4/3 - 1/3 is not 1
                assert test["samples"] == ITEMS
                assert test["mean difference"] == pytest.approx(differences.mean())
                assert test["p (Wilcoxon)"] == pytest.approx(stats.wilcoxon(differences[differences != 0]).pvalue,
                                                             rel=1e-9)  # fmt: skip


def alpha_of(given: dict[tuple[int, str, int, str, str], int], aspect: str, turn: int | None, level: str) -> float:
    """``krippendorff.alpha`` over units (item, system, turn): annotators x units, nan where not rated."""
    units = sorted({(i, s, t) for (i, s, t, a, _) in given if a == aspect and turn in (None, t)})
    matrix = np.array([[given[(i, s, t, aspect, who)] for (i, s, t) in units] for who in ANNOTATORS], dtype=float)
    return float(krippendorff.alpha(reliability_data=matrix, level_of_measurement=level,
                                    value_domain=[1, 2, 3, 4, 5] if level == "ordinal" else None))  # fmt: skip


def test_agreement_per_turn_and_overall_equals_krippendorff(analysed: tuple[Analysed, dict]) -> None:
    result, given = analysed
    for aspect in ASPECTS:
        overall = result.row("ratings_agreement", aspect=aspect)
        assert overall["units (alpha)"] == ITEMS * len(SYSTEMS) * TURNS  # a unit per system's turn of an item
        assert overall["Krippendorff alpha"] == pytest.approx(alpha_of(given, aspect, None, "ordinal"))
        for turn in [*range(1, TURNS + 1), None]:
            row = result.row("ratings_agreement_turns", aspect=aspect, turn="all" if turn is None else str(turn))
            assert row["units (alpha)"] == ITEMS * len(SYSTEMS) * (TURNS if turn is None else 1)
            assert row["Krippendorff alpha"] == pytest.approx(alpha_of(given, aspect, turn, "ordinal"))
            assert row["Krippendorff alpha (interval)"] == pytest.approx(alpha_of(given, aspect, turn, "interval"))
    # the turns differ: the agreement of one position is not the overall one
    rows = result.table("ratings_agreement_turns")
    assert rows["Krippendorff alpha"].nunique() > len(ASPECTS)
