"""The one reader of a study's pulls (annols.study.table): a pull folder read twice gives equal tables, every frame
of the study table; the constants the study table names as the study layer does are the study layer's."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from annols.analysis import table as analysis_table
from annols.analysis.options import ReportOptions
from annols.study import attention, roles
from annols.study.table import read
from tests.report import examples, study
from tests.report.test_judges_read_report import lower_judge, write_study
from tests.report.test_style_reports import definition_of, export


def assert_equal_tables(first: analysis_table.StudyTable, second: analysis_table.StudyTable) -> None:
    one, two = first.frames(), second.frames()
    assert list(one) == list(two)
    for name in one:
        pd.testing.assert_frame_equal(one[name], two[name], obj=name)
        assert len(one[name].columns) or name == "findings", name
    assert first.blind == second.blind
    assert first.study.overlaps == second.study.overlaps and first.study.source_tasks == second.study.source_tasks
    assert first.judgments.units == second.judgments.units
    assert first.gold.roles == second.gold.roles and first.rounds == second.rounds
    assert first.findings == second.findings


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
