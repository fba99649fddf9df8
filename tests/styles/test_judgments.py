"""Judgments by style: each style decodes Label Studio results into typed, unblinded judgments."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from annols import protocols, styles
from annols.definition import Definition
from annols.errors import DefinitionError
from annols.formats.generic import FORMAT as GENERIC
from annols.study.pull import tidy_rows
from annols.styles import judgments
from annols.styles.answers import ExportedAnnotation, ExportedTask
from annols.styles.judgments import Answer, BestWorst, Preference, Rank, Rating, Row, Span, tidy, untidy
from tests.conftest import DATA
from tests.definition.test_definition import MINIMAL, write

EXAMPLES = DATA / "example_annotations"


def task(systems: tuple[str, ...] = (), result: list[dict[str, Any]] | None = None, **data: Any) -> ExportedTask:
    annotation = ExportedAnnotation(id=7, annotator="ann@x.org", result=result or [])
    return ExportedTask(id=1, key="k1", data=data, systems=systems, annotations=(annotation,))


def choice(name: str, *codes: str) -> dict[str, Any]:
    return {"id": f"r-{name}", "from_name": name, "to_name": "x", "type": "choices", "value": {"choices": list(codes)}}


def decode(d: Definition, t: ExportedTask) -> list[judgments.Judgment]:
    return styles.decode(d, t, t.annotations[0])


ARENA = MINIMAL.replace(
    '[[answers]]\ncode = "1"\n\n[[answers]]\ncode = "2"',
    """
[[answers]]
code = "tie"
text = "About the same"

[[answers]]
code = "second"
text = "#2 is better"
prefers = "headline_2"

[[answers]]
code = "first"
text = "#1 is better"
prefers = "headline_1"

[[questions]]
name = "topic"
text = "Topic?"
choices = [{ code = "news" }, { code = "sport" }]
""",
)


def test_pairwise_preferences_by_prefers_unblinded(tmp_path: Path) -> None:
    d = protocols.load(str(write(tmp_path, ARENA)))
    t = task(("pegasus", "bart"), [choice("fluency", "first"), choice("topic", "sport")])
    (pref, topic) = decode(d, t)
    assert pref == Preference("fluency", ("pegasus", "bart"), "first", 0)
    assert pref.winner_system == "pegasus" and pref.outcome() == ("bart", "pegasus", "loss")
    assert topic == Answer("topic", codes=("sport",))
    # the shown text of an answer maps back to its code; a tie has no winner
    (tie, _) = decode(d, task(("pegasus", "bart"), [choice("fluency", "About the same"), choice("topic", "news")]))
    assert tie.winner is None and tie.outcome() == ("bart", "pegasus", "tie")  # type: ignore[union-attr]
    # two codes or an unknown one is no judgment (validate reports it), an unanswered question none
    assert decode(d, task(("a", "b"), [choice("fluency", "first", "second")])) == []
    assert decode(d, task(("a", "b"), [choice("fluency", "3")])) == []


def test_pairwise_convention_and_names_without_systems(tmp_path: Path) -> None:
    d = protocols.load(str(write(tmp_path, MINIMAL.replace('code = "2"', 'code = "2"\n\n[[answers]]\ncode = "0"'))))
    assert d.spec.prefers == (0, 1, None)
    codes = {"1": 0, "2": 1, "0": None}
    for code, winner in codes.items():
        (p,) = decode(d, task((), [choice("fluency", code)]))
        assert p == Preference("fluency", ("headline #1", "headline #2"), code, winner)
    bad = MINIMAL.replace('[[answers]]\ncode = "1"', '[[answers]]\ncode = "1"\nprefers = "headline_3"')
    with pytest.raises(DefinitionError, match=r"answers\[0\]\.prefers: 'headline_3' is not one of the candidates"):
        protocols.load(str(write(tmp_path, bad)))


def test_pairwise_aspects_example_and_results_csv_names_the_winner() -> None:
    d = protocols.load("pairwise-aspects")
    result = json.loads((EXAMPLES / "pairwise-aspects.json").read_text("utf-8"))
    t = task(("JGR", "bart"), result)
    assert [(p.aspect, p.winner_system) for p in decode(d, t)] == [  # type: ignore[union-attr]
        ("informative", "JGR"), ("factual_consistency", ""), ("readability", "bart"),
    ]  # fmt: skip
    rows = list(tidy_rows(t, d))
    assert [(r["question"], r["answer"], r["system"]) for r in rows] == [  # rows by question
        ("factual_consistency", "0", ""), ("informative", "1", "JGR"), ("readability", "2", "bart"),
    ]  # fmt: skip


def test_ranking_ranks_unblinded_ties_kept_bad_cells_left_out() -> None:
    d = protocols.load("extractive-ranking")
    result = json.loads((EXAMPLES / "extractive-ranking.json").read_text("utf-8"))
    shown = ("ex47", "ex44", "ex48", "ex46")
    ranks = decode(d, task(shown, result))
    assert len(ranks) == 12
    informative = {r.system: r.rank for r in ranks if isinstance(r, Rank) and r.dimension == "informative"}
    assert informative == {"ex47": 3, "ex44": 1, "ex48": 1, "ex46": 2}
    broken = [choice("overall_a", "5"), choice("overall_b", "1", "2"), choice("overall_c", "x"),
              choice("overall_d", "4")]  # fmt: skip
    assert decode(d, task(shown, broken)) == [Rank("overall", "D", "ex46", 4)]
    # without recorded systems, the letters shown
    assert decode(d, task((), [choice("overall_a", "2")])) == [Rank("overall", "A", "A", 2)]
    assert {r["question"]: r["system"] for r in tidy_rows(task(shown, result), d)}["coherence_c"] == "ex48"


def test_spans_with_answers_links_and_paragraph_labels() -> None:
    d = protocols.load("qa-feedback")
    result = json.loads((EXAMPLES / "qa-feedback.json").read_text("utf-8"))
    found = decode(d, task((), result))
    spans = [j for j in found if isinstance(j, Span)]
    by_region = {s.region: s for s in spans}
    assert by_region["qa1"].label == "Inconsistent Fact" and (by_region["qa1"].start, by_region["qa1"].end) == (79, 94)
    assert by_region["qa1"].answers == {"evidence": ("P1:S1",)}
    assert by_region["qa2"].links == ("qa3",) and by_region["qa3"].label == "Repeated text"
    missing = by_region["qa5"]
    assert (missing.control, missing.label, missing.start, missing.end) == (
        "passages_labels", "Missing Major Auxiliary", 5, 6)  # fmt: skip
    assert [j for j in found if isinstance(j, Answer)] == [
        Answer("corrected_prediction", text=result[-1]["value"]["text"][0])
    ]
    rows = list(judgments.tidy(found))
    assert ["span-answer", "evidence", "", "", "P1:S1", "", "", 79, 94, "", "qa1"] in rows
    assert ["link", "errors", "", "", "qa3", "", "", 95, 126, "", "qa2"] in rows


def test_spans_none_answer_and_one_system_per_text(tmp_path: Path) -> None:
    d = protocols.load("summary-flaws")
    t = task(("gpt-4",), [choice("flaws_none", "None identified"), choice("missing_key_information", "No")])
    assert decode(d, t) == [Answer("flaws_none", codes=("None identified",), system="gpt-4"),
                            Answer("missing_key_information", codes=("No",), system="gpt-4")]  # fmt: skip


def test_sentences_special_case_hides_the_row() -> None:
    d = protocols.load("sentence-errors", "abstract")
    result = json.loads((EXAMPLES / "sentence-errors-abstract.json").read_text("utf-8"))
    rows = decode(d, task((), result))
    assert [(r.row, r.special) for r in rows] == [(1, ""), (2, "OK"), (3, "Sentence missing")]  # type: ignore[union-attr]
    first = rows[0]
    assert isinstance(first, Row)
    assert first.columns == {"mapping": ("Omission",), "meaning": ("Pragmatic meaning changed",)}
    assert first.explanation == result[2]["value"]["text"][0]
    assert rows[1] == Row(2, "OK", {}, "")
    tidy = list(judgments.tidy(rows))
    assert [r[0] for r in tidy] == ["row", "cell", "cell", "cell-text", "row", "row"]


def test_own_protocol_jsonl_holds_unblinded_judgments(tmp_path: Path) -> None:
    d = protocols.load(str(write(tmp_path, ARENA)))
    t = task(("pegasus", "bart"), [choice("fluency", "second")], headline_1="A", headline_2="B")
    (path,) = GENERIC.write_results([t], d, tmp_path)
    (line,) = [json.loads(x) for x in path.read_text("utf-8").splitlines()]
    assert line["judgments"] == [{"kind": "preference", "aspect": "fluency", "systems": ["pegasus", "bart"],
                                  "code": "second", "winner": 1}]  # fmt: skip
    assert (line["key"], line["annotator"], line["systems"], line["data"]) == (
        "k1", "ann@x.org", ["pegasus", "bart"], {"headline_1": "A", "headline_2": "B"})  # fmt: skip
    assert line["result"] == t.annotations[0].result


def test_untidy_is_the_inverse_of_tidy_for_preferences_ranks_and_best_worst() -> None:
    """``untidy`` gives back judgments that tidy to the same rows (a preference with its pair in name order, its
    winner on the same system), skips the kinds it does not rebuild, and keeps the order tidied."""
    judged = [
        Preference("fluency", ("zeta", "alpha"), "A", 0),  # shown in the other order than the names'
        Preference("fluency", ("alpha", "zeta"), "B", 1),
        Preference("coherence", ("zeta", "alpha"), "tie", None),
        Rating("fluency", "a", "alpha", 4.0, "4"),
        Rank("overall", "B", "zeta", 1),
        Rank("overall", "A", "alpha", 2),
        BestWorst("fluency", ("p", "q", "r", "s"), 2, 0),
        BestWorst("coherence", ("s", "r", "q"), 0, 2),
    ]
    rows = list(tidy(judged))
    back = untidy(rows)
    kept = [r for r in rows if r[0] in ("preference", "rank", "best-worst")]
    assert list(tidy(back)) == kept
    assert [j.winner_system for j in back[:3]] == ["zeta", "zeta", ""]  # the same winner, whatever the order shown
    assert [type(j).__name__ for j in back] == ["Preference"] * 3 + ["Rank"] * 2 + ["BestWorst"] * 2
    assert back[5] == BestWorst("fluency", ("p", "q", "r", "s"), 2, 0)
    assert back[4] == Rank("overall", "A", "alpha", 2)
