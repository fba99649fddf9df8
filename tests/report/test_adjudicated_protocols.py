"""qa-feedback, summary-flaws and sentence-errors with an adjudication pull: their tables again, adjudicated.

The planted studies of tests/report/study.py (3 annotators x 100 samples) and a planted
adjudication pull: the verdict on samples 10..21 is annotator B's judgment, submitted by a
user who is none of the annotators. Expected: each ``adjudicated_`` table holds what
tests/report/test_study_numbers.py checks for the study's own table, on the study where
samples 10..21 have B's judgment (by truth) as their one judgment, by ``adjudicated``,
and every other sample keeps A's, B's and C's. The study's own tables stay those of the
report without the adjudication pull.
"""

from __future__ import annotations

import copy
import csv
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from annols.analysis.by_style.style_findings import ADJUDICATED, PREFIX
from annols.protocols import load
from annols.report import ReportOptions
from tests.report import study
from tests.report import test_study_numbers as numbers
from tests.report.build import build_report
from tests.report.study import ANNOTATORS, USER_IDS, Generated

VERDICTS = range(10, 22)
JUDGE = ANNOTATORS[1]  # whose judgment the verdict copies


@dataclass(frozen=True)
class Adjudicated(numbers.Built):
    """The report's ``adjudicated_`` tables, read by the names of the study's own."""

    def table(self, name: str) -> list[dict[str, str]]:
        return super().table(PREFIX + name)


def rows(out: Path, name: str) -> list[dict[str, str]]:
    with (out / "tables" / f"{name}.csv").open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def adjudicated_truth(gen: Generated) -> Generated:
    """The generator's truth with the verdict standing alone on :data:`VERDICTS`."""
    truth = {(s, a): t for (s, a), t in gen.truth.items() if s not in VERDICTS}
    truth.update({(s, ADJUDICATED): gen.truth[(s, JUDGE)] for s in VERDICTS})
    return Generated(gen.tasks, truth, gen.keys)


def adjudication_pull(gen: Generated, folder: Path) -> Path:
    by_sample = {int(t["meta"]["annols_key"].rsplit(":", 1)[1]): t for t in gen.tasks}
    verdicts = []
    for s in VERDICTS:
        task = copy.deepcopy(by_sample[s])
        task["meta"]["annols_adjudication"] = 1
        [judged] = [a for a in task["annotations"] if a["completed_by"] == USER_IDS[JUDGE]]
        task["annotations"] = [{**judged, "id": 7000 + s, "completed_by": 99}]
        verdicts.append(task)
    folder.mkdir()
    (folder / "export.json").write_text(json.dumps(verdicts), encoding="utf-8")
    return folder


Check = Callable[[numbers.Built], None]
PROTOCOLS: dict[str, tuple[str | None, Callable[[], Generated], list[Check], list[str]]] = {
    "qa-feedback": (None, study.qa_feedback,
                    [numbers.test_qa_feedback_types_missing_evidence, numbers.test_qa_feedback_span_agreement],
                    ["qa_responses", "qa_error_types", "qa_missing_info", "qa_evidence_sizes", "qa_span_agreement",
                     "spans_counts"]),
    "summary-flaws": (None, study.summary_flaws,
                      [numbers.test_summary_flaws_labels_none_missing, numbers.test_summary_flaws_span_agreement],
                      ["flaws_overview", "flaws_labels", "flaws_span_agreement", "spans_counts"]),
    "sentence-errors": ("abstract", study.sentence_errors,
                        [numbers.test_sentence_errors_distribution, numbers.test_sentence_errors_agreement],
                        ["sentence_errors_distribution", "sentence_errors_agreement"]),
}  # fmt: skip


@pytest.mark.parametrize("protocol", list(PROTOCOLS))
def test_adjudicated_tables_of_the_protocol(protocol: str, tmp_path: Path) -> None:
    variant, make, checks, names = PROTOCOLS[protocol]
    gen = make()
    pull = study.write_pull(tmp_path / "pull", gen.tasks)
    adjudication = adjudication_pull(gen, tmp_path / "adjudication")
    definition = load(protocol, variant)
    with_verdicts, plain = tmp_path / "with", tmp_path / "plain"
    build_report(definition, [pull], with_verdicts, ReportOptions(seed=11, bootstrap=50, adjudicated=(adjudication,)))
    build_report(definition, [pull], plain, ReportOptions(seed=11, bootstrap=50))

    for check in checks:  # the numbers of each adjudicated table, from the truth
        check(Adjudicated(adjudicated_truth(gen), with_verdicts))
    for name in names:  # the study's own tables untouched; the adjudicated ones differ from them
        assert rows(with_verdicts, name) == rows(plain, name), name
        assert rows(with_verdicts, PREFIX + name) != rows(plain, name), name
    assert not any(p.name.startswith(PREFIX) for p in (plain / "tables").iterdir())
    md = (with_verdicts / "report.md").read_text(encoding="utf-8")
    first = "Feedback" if protocol == "qa-feedback" else "Flaws" if protocol == "summary-flaws" else "Answers"
    assert f"## Adjudicated: {first}" in md and "## Adjudication" in md
