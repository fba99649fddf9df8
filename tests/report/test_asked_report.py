"""Questions per candidate in a ratings definition, reported from an export built here (no server): a section for
every question, the slider's scores like a rating's, and the per-candidate choice's test of association over items
equal to scipy on the items' answers made by hand."""

from __future__ import annotations

import csv
import tomllib
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from scipy import stats

from annols.analysis.by_style import asked
from annols.definition.blinding import META_KEY, META_SYSTEMS, encode_systems
from annols.protocols import parse_definition
from annols.report import ReportOptions
from tests.report import study
from tests.report.build import build_report
from tests.styles.test_question_kinds import two_outputs

DEFINITION = (
    """
name = "kinds-ratings"
style = "ratings"
summary = "Two outputs rated, scored, judged usable, and a comment."
guideline = "Rate both."

"""
    + two_outputs("src", "1", "2")
    + """
[[aspects]]
name = "adequacy"
text = "Adequacy"

[[questions]]
name = "overall"
kind = "slider"
per = "candidate"
text = "Overall"
required = true

[[questions]]
name = "usable"
per = "candidate"
text = "Usable?"
required = true
choices = [{ code = "yes" }, { code = "no" }]

[[questions]]
name = "comment"
kind = "text"
text = "Comment"
"""
)
ITEMS = 8
SYSTEMS = ("sys-x", "sys-y")


def answer(item: int, a: int, system: str) -> tuple[int, str]:
    """The slider and the usable answer annotator ``a`` gives a system's output of an item."""
    strong = system == "sys-x"
    score = (70 if strong else 45) + 7 * a - 3 * item + (5 * item * a) % 11
    usable = "yes" if (strong and (item + a) % 4) or (not strong and (item * a) % 5 == 1) else "no"
    return score, usable


def export() -> list[dict[str, Any]]:
    tasks, next_id = [], 100
    for item in range(ITEMS):
        shown = SYSTEMS if item % 2 else SYSTEMS[::-1]
        task: dict[str, Any] = {"id": item + 1, "data": {"src": f"Satz {item}.", "out_1": "a", "out_2": "b"},
                                "meta": {META_KEY: f"kinds-ratings:{item:03d}", META_SYSTEMS: encode_systems(shown)},
                                "annotations": []}  # fmt: skip
        for a, email in enumerate(study.ANNOTATORS):
            result: list[dict[str, Any]] = []
            for position, system in enumerate(shown, start=1):
                score, usable = answer(item, a, system)
                pane = f"out_{position}"
                result += [
                    {"id": f"a{position}", "from_name": f"adequacy_{pane}", "to_name": pane, "type": "choices",
                     "value": {"choices": ["2" if system == "sys-x" else "1"]}},
                    {"id": f"o{position}", "from_name": f"overall_{pane}", "to_name": pane, "type": "number",
                     "value": {"number": score}},
                    {"id": f"u{position}", "from_name": f"usable_{pane}", "to_name": pane, "type": "choices",
                     "value": {"choices": [usable]}},
                ]  # fmt: skip
            result.append({"id": "c", "from_name": "comment", "to_name": "out_1", "type": "textarea",
                           "value": {"text": ["ok"] if a else []}})  # fmt: skip
            next_id += 1
            task["annotations"].append({"id": next_id, "completed_by": study.USER_IDS[email], "lead_time": 3.0,
                                        "result": result, "created_at": "2024-05-01T10:00:00.000000Z",
                                        "was_cancelled": False})  # fmt: skip
        tasks.append(task)
    return tasks


def table(out: Path, name: str) -> pd.DataFrame:
    with (out / "tables" / f"{name}.csv").open(encoding="utf-8", newline="") as f:
        return pd.DataFrame(list(csv.DictReader(f)))


def test_every_question_of_a_ratings_definition_gets_its_section(tmp_path: Path) -> None:
    definition = parse_definition(tomllib.loads(DEFINITION), "kinds.toml")
    result = build_report(definition, [study.write_pull(tmp_path / "pull", export())], tmp_path / "report",
                          ReportOptions(bootstrap=0))  # fmt: skip
    titles = [s.title for s in result.sections]
    for title in ("Ratings", "Question overall (slider, per candidate): ratings",
                  "Question overall (slider, per candidate): agreement", "Question usable (choice, per candidate)",
                  "Question comment (text, per item)"):  # fmt: skip
        assert title in titles, titles
    out = tmp_path / "report"
    planted = pd.DataFrame([(item, a, system, *answer(item, a, system)) for item in range(ITEMS)
                            for a in range(3) for system in SYSTEMS],
                           columns=["item", "annotator", "system", "score", "usable"])  # fmt: skip

    summary = table(out, "q_overall_summary").set_index("system")
    for system, mean in planted.groupby("system")["score"].mean().items():
        assert float(summary.loc[system, "mean"]) == pytest.approx(mean, abs=1e-4)
        assert int(summary.loc[system, "samples"]) == ITEMS  # items, not tasks or judgments

    shares = table(out, "q_usable_by_system").set_index(["system", "answer"])
    for (system, code), n in planted.groupby(["system", "usable"]).size().items():
        assert int(shares.loc[(system, code), "judgments"]) == n
    # Each item's answer for a system: its judgments' most common code (three annotators: no ties).
    majority = planted.groupby(["item", "system"])["usable"].agg(lambda v: v.value_counts().idxmax()).reset_index()
    crossed = pd.crosstab(majority["system"], majority["usable"])
    assert crossed.shape == (2, 2)
    # An item's two answers are paired: with two systems and two answers, permuting the systems within items is
    # the exact McNemar test, a binomial test of the items where the systems' answers differ.
    paired = majority.pivot(index="item", columns="system", values="usable")
    x_only = int(((paired["sys-x"] == "yes") & (paired["sys-y"] == "no")).sum())
    y_only = int(((paired["sys-x"] == "no") & (paired["sys-y"] == "yes")).sum())
    p = stats.binomtest(x_only, x_only + y_only, 0.5).pvalue
    (row,) = table(out, "q_usable_association").to_dict("records")
    assert (row["test"], int(row["item answers"])) == ("chi-square, systems permuted within items", 2 * ITEMS)
    assert float(row["p (test)"]) == pytest.approx(p, abs=1e-4)
    assert table(out, "q_comment_answered")["judgments answering"].astype(int).sum() == 2 * ITEMS
    # The aspect's own tables are untouched by the questions' ratings.
    assert set(table(out, "ratings_summary")["aspect"]) == {"adequacy"}


PER_ITEM_QUESTION = """
[[questions]]
name = "certainty"
kind = "slider"
per = "item"
text = "How sure are you?"
required = true
"""


def test_a_per_item_number_in_a_multi_candidate_style_is_reported_as_per_item(tmp_path: Path) -> None:
    """Issue 29's leftover: the answers of a per-item slider are about no candidate; the question's tables name
    them "(per item)", never an empty system name."""
    definition = parse_definition(tomllib.loads(DEFINITION + PER_ITEM_QUESTION), "kinds.toml")
    tasks = export()
    planted = {}
    for task in tasks:
        for a, annotation in enumerate(task["annotations"]):
            planted[(task["id"], a)] = 10 * a + task["id"]
            annotation["result"].append({"id": "s", "from_name": "certainty", "to_name": "out_1", "type": "number",
                                         "value": {"number": planted[(task["id"], a)]}})  # fmt: skip
    build_report(definition, [study.write_pull(tmp_path / "pull", tasks)], tmp_path / "report",
                 ReportOptions(bootstrap=0))  # fmt: skip
    summary = table(tmp_path / "report", "q_certainty_summary")
    assert list(summary["system"]) == [asked.PER_ITEM]
    assert float(summary["mean"].iloc[0]) == pytest.approx(sum(planted.values()) / len(planted), abs=1e-4)
    assert int(summary["samples"].iloc[0]) == ITEMS
