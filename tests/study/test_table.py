"""The one reader of a study's pulls (annols.study.table): a pull folder read twice gives equal tables, every frame
and every attribute of the study table (compared field by field, down to the judgments' tokens, the gold answers
and the adjudication verdicts; a test changes one attribute at a time to show the comparison sees it); the
constants the study table names as the study layer does are the study layer's."""

from __future__ import annotations

import copy
import dataclasses
import json
import math
from array import array
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from annols.analysis import table as analysis_table
from annols.analysis.options import ReportOptions
from annols.study import attention, roles
from annols.study import findings as checks
from annols.study.table import read
from tests.report import examples, study
from tests.report.test_gold import Planted
from tests.report.test_judges_read_report import lower_judge, write_study
from tests.report.test_style_reports import definition_of, export

# The classes of the study table whose every attribute is compared (the rest compare with ==).
WALKED = (analysis_table.StudyTable, analysis_table.Study, analysis_table.Judgments, analysis_table.Column,
          analysis_table.GoldRows, analysis_table.AdjudicationRows, analysis_table.JudgeRows, analysis_table.Answer,
          analysis_table.Source)  # fmt: skip


def assert_same(a: Any, b: Any, where: str) -> None:
    """``a`` and ``b`` hold the same values, attribute by attribute, item by item (frames, arrays and NaN included)."""
    assert type(a) is type(b), where
    if isinstance(a, pd.DataFrame):
        pd.testing.assert_frame_equal(a, b, obj=where)
    elif isinstance(a, pd.Series):
        pd.testing.assert_series_equal(a, b, obj=where)
    elif isinstance(a, np.ndarray):
        assert a.dtype == b.dtype, where
        np.testing.assert_array_equal(a, b, err_msg=where)
    elif isinstance(a, array):
        assert a.typecode == b.typecode and a == b, where
    elif isinstance(a, WALKED):
        assert list(vars(a)) == list(vars(b)), where
        for name in vars(a):
            assert_same(getattr(a, name), getattr(b, name), f"{where}.{name}")
    elif isinstance(a, dict):
        assert list(a) == list(b), where
        for key in a:
            assert_same(a[key], b[key], f"{where}[{key!r}]")
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), where
        for n, (x, y) in enumerate(zip(a, b, strict=True)):
            assert_same(x, y, f"{where}[{n}]")
    elif isinstance(a, float) and math.isnan(a):
        assert math.isnan(b), where
    else:
        assert a == b, where


def assert_equal_tables(first: analysis_table.StudyTable, second: analysis_table.StudyTable) -> None:
    one, two = first.frames(), second.frames()  # the judgments tables made (their columns handed over)
    assert list(one) == list(two)
    for name in one:
        pd.testing.assert_frame_equal(one[name], two[name], obj=name)
        assert len(one[name].columns) or name == "findings", name
    assert first.blind == second.blind
    assert first.study.overlaps == second.study.overlaps and first.study.source_tasks == second.study.source_tasks
    assert first.judgments.units == second.judgments.units
    assert first.gold.roles == second.gold.roles and first.rounds == second.rounds
    assert first.findings == second.findings
    assert_same(first, second, "table")  # every attribute, the ones above included


@pytest.mark.parametrize("style", ["pairwise", "ratings", "spans", "sentences"])
def test_a_pull_folder_read_twice_gives_equal_tables(style: str, tmp_path: Path) -> None:
    tasks, _ = export(style)
    pull = study.write_pull(tmp_path / "pull", tasks)
    definition = definition_of(style)
    first, second = read(definition, [pull]), read(definition, [pull])
    assert len(first.judgments.table()) > 0 and len(first.study.kept) == len(tasks) * 3
    assert_equal_tables(first, second)


def test_a_best_worst_pull_read_twice_gives_equal_tables(tmp_path: Path) -> None:
    name = "summary-best-worst"
    pull = examples.pull(name, tmp_path / "pull")
    definition = examples.definition(name)
    first, second = read(definition, [pull]), read(definition, [pull])
    assert first.judgments.units  # best-worst: each task's item
    assert_equal_tables(first, second)


def test_a_pull_with_judges_read_twice_gives_equal_tables(tmp_path: Path) -> None:
    source = write_study(tmp_path)
    judge = lower_judge(tmp_path)
    definition = definition_of("ratings")
    first = read(definition, [source], ReportOptions(), judges=[judge])
    second = read(definition, [source], ReportOptions(), judges=[judge])
    assert first.judges is not None and first.judges.rows and first.judges.names == ["judge:low"]
    assert_equal_tables(first, second)


def test_the_study_table_names_roles_as_the_study_layer_does() -> None:
    assert (analysis_table.STUDY, analysis_table.GOLD, analysis_table.ATTENTION) == (roles.STUDY, roles.GOLD,
                                                                                    roles.ATTENTION)  # fmt: skip
    assert analysis_table.ATTENTION_ASPECT == attention.ASPECT


def pull_with_everything(tmp_path: Path) -> tuple[Any, Path, ReportOptions]:
    """A pairwise pull whose table fills what the plain pulls leave empty: gold answers and scores
    (tests.report.test_gold's planted study), adjudication verdicts on 10 items and the judgments on them, a
    finding, a record of rounds."""
    planted = Planted("pairwise-aspects", tmp_path)
    verdicts = []
    for task in json.loads((planted.without_gold / "export.json").read_text(encoding="utf-8"))[:10]:
        verdict = copy.deepcopy(task)
        verdict["meta"]["annols_adjudication"] = 1
        verdict["annotations"] = [{**task["annotations"][0], "completed_by": 99}]
        verdicts.append(verdict)
    adjudicated = tmp_path / "adjudicated"
    adjudicated.mkdir()
    (adjudicated / "export.json").write_text(json.dumps(verdicts), encoding="utf-8")
    checks.write([checks.Finding("edited-by-other", "an annotation changed by another user", 507,
                                 verdicts[0]["meta"]["annols_key"], 1009)],
                 planted.pulls / checks.FINDINGS_FILE)  # fmt: skip
    record = tmp_path / "study.rounds.jsonl"
    record.write_text(json.dumps({"round": 1, "pushed": [t["meta"]["annols_key"] for t in verdicts]}) + "\n",
                      encoding="utf-8")  # fmt: skip
    return planted.definition, planted.pulls, ReportOptions(gold=(planted.gold,), adjudicated=(adjudicated,),
                                                            rounds=record)  # fmt: skip


def test_a_pull_with_gold_adjudication_findings_and_rounds_read_twice_gives_equal_tables(tmp_path: Path) -> None:
    definition, pull, options = pull_with_everything(tmp_path)
    first, second = read(definition, [pull], options), read(definition, [pull], options)
    assert first.gold.gold and first.gold.given and first.gold.roles == {"gold"}
    assert len(first.adjudication.verdicts) == 10 and first.adjudication.given
    assert [row[4] for row in first.findings] == ["edited-by-other"]
    assert first.rounds is not None and first.rounds[0]["round"] == 1
    assert_equal_tables(first, second)


def _first(found: dict[Any, Any]) -> Any:
    return next(iter(found))


def _retoken(t: analysis_table.StudyTable) -> None:
    tokens = t.judgments.tokens
    assert tokens is not None
    key = _first(tokens)
    starts, ends = tokens[key]
    tokens[key] = (starts, ends + 1)


# One attribute of the study table changed, deep in it: the comparison must see each.
CHANGES: dict[str, Callable[[analysis_table.StudyTable], object]] = {
    "study.items": lambda t: setattr(t.study, "items", t.study.items.iloc[1:]),
    "study.source_tasks": lambda t: setattr(t.study, "source_tasks", [n + 1 for n in t.study.source_tasks]),
    "judgments.tokens": _retoken,
    "judgments.judged_system": lambda t: t.judgments.judged_system.update(
        {_first(t.judgments.judged_system): "another system"}),
    "gold.gold": lambda t: t.gold.gold.update(
        {_first(t.gold.gold): dataclasses.replace(t.gold.gold[_first(t.gold.gold)], key="another key")}),
    "gold.given": lambda t: t.gold.given[0][2].update({_first(t.gold.given[0][2]): -1.0}),
    "gold.roles": lambda t: t.gold.roles.add("attention"),
    "adjudication.verdicts": lambda t: t.adjudication.verdicts.pop(_first(t.adjudication.verdicts)),
    "adjudication.given": lambda t: t.adjudication.given[0][2].pop(),
    "findings": lambda t: t.findings[0].__setitem__(5, "another detail"),
    "rounds": lambda t: (t.rounds or [{}])[0].__setitem__("round", 2),
    "blind": lambda t: setattr(t, "blind", not t.blind),
}  # fmt: skip


@pytest.mark.parametrize("path", list(CHANGES))
def test_the_comparison_sees_a_change_to_any_attribute(path: str, tmp_path: Path) -> None:
    """Each attribute changed alone in a second read makes the comparison fail (a comparison that cannot fail proves
    nothing): the spans pull for the tokens and systems, the pairwise one with gold, adjudication, findings, rounds."""
    if path.startswith("judgments."):
        tasks, _ = export("spans")
        pull = study.write_pull(tmp_path / "pull", tasks)
        definition, options = definition_of("spans"), ReportOptions()
    else:
        definition, pull, options = pull_with_everything(tmp_path)
    first, second = read(definition, [pull], options), read(definition, [pull], options)
    assert_equal_tables(first, second)
    CHANGES[path](second)
    with pytest.raises(AssertionError):
        assert_equal_tables(first, second)


def test_report_and_plan_pilot_read_the_pull_through_the_one_reader(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The two commands that read a pull folder offline go through :func:`annols.study.table.read` (spied here, and
    the export streams it makes): ``annols report`` once, ``annols plan --pilot`` for its judgments
    (``read_judgments``) and for a judge in the pilot (``read_judged``). ``status --pull``, ``next-round
    --pull``, ``adjudicate`` and ``pull`` need a server: test_adjudicate.py spies ``read`` the same way, and
    test_rounds.py and test_pull_counts_table.py hold ``next-round`` and ``pull`` to ``read_judgments`` and
    ``task_reading``."""
    from click.testing import CliRunner

    import annols.study.exports as exports_module
    import annols.study.table as table_module
    from annols.cli import main
    from tests.analysis.planning.test_plan_pilot import definition as pilot_definition
    from tests.analysis.planning.test_plan_pilot import planted_pilot

    d, toml = pilot_definition(tmp_path)
    planted_pilot(tmp_path / "pull", d, 0.0, seed=5)
    real_read, real_export = table_module.read, exports_module.read_export
    reads: list[list[Path]] = []
    exports_read: list[Path] = []

    def spying(definition: Any, sources: Any, *args: Any, **kwargs: Any) -> Any:
        reads.append([Path(s) for s in sources])
        return real_read(definition, sources, *args, **kwargs)

    def export_spying(path: Path, *args: Any, **kwargs: Any) -> Any:
        exports_read.append(Path(path))
        return real_export(path, *args, **kwargs)

    monkeypatch.setattr(table_module, "read", spying)
    monkeypatch.setattr(table_module, "read_export", export_spying)  # the reader's own streaming of each export
    monkeypatch.setattr(exports_module, "read_export", export_spying)  # a module that imports it when it runs
    result = CliRunner().invoke(main, ["report", str(toml), str(tmp_path / "pull"), "-o", str(tmp_path / "report"),
                                       "--bootstrap", "0"])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert reads == [[tmp_path / "pull"]]
    assert exports_read == [tmp_path / "pull" / "export.json"]  # the reader streamed the export once
    reads.clear()
    exports_read.clear()
    result = CliRunner().invoke(main, ["plan", str(toml), "--pilot", str(tmp_path / "pull"), "--effect", "3",
                                       "--items", "25", "--annotators", "3", "--simulations", "20"])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert reads == [[tmp_path / "pull"], [tmp_path / "pull"]]  # the judgments, then any judge in the pilot (once)
    assert exports_read == [tmp_path / "pull" / "export.json"] * 2  # once a read
    # read_judged of a pilot without a judge: the humans' rows of the one table it read, as read_judgments gives them
    reads.clear()
    frame, names = table_module.read_judged(d, [tmp_path / "pull"])
    assert names == [] and reads == [[tmp_path / "pull"]]
    pd.testing.assert_frame_equal(frame, table_module.read_judgments(d, [tmp_path / "pull"])[0])
