"""An MQM vendor TSV (the WMT MQM releases' layout) read as judged records of examples/mqm.toml, and a public
release's system scores reproduced: annols' error scores against the paper's rule computed here with pandas
(per segment the mean over its raters of the sum of its errors' weights, then the mean over segments)."""

from __future__ import annotations

import csv
import tomllib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from annols.analysis.by_style import asked
from annols.analysis.protocol_tables import imported
from annols.definition import Definition
from annols.errors import InputError
from annols.formats import SourceTask, format_for
from annols.protocols import parse_definition
from annols.styles import decode
from annols.styles.answers import ExportedAnnotation, ExportedTask
from annols.styles.judgments import Span
from tests.conftest import DATA, ROOT

MQM = ROOT / "examples" / "mqm.toml"
REFERENCE = '[[context]]\nname = "reference"'


def release_toml() -> str:
    """examples/mqm.toml as a release needs it: the release has no reference translation, so no reference pane
    (the labels, the severity question and the weights are the example's)."""
    text = MQM.read_text(encoding="utf-8")
    start = text.index(REFERENCE)
    return text[:start] + text[text.index("[target]", start):]


def load_definition(_: Path = MQM) -> Definition:
    return parse_definition(tomllib.loads(release_toml()), str(MQM))
SUBSET = DATA / "mqm_ted_ende" / "mqm_ted_ende.subset.tsv"
# The release's own per-segment scores (ted/ende/mqm_ted_ende.avg_seg_scores.tsv, added in its commit 7481ded "add
# average scores for newstest2021 and tedtalks which were part of the WMT21 metric task"), cut to the same segments.
SEGMENT_SCORES = DATA / "mqm_ted_ende" / "mqm_ted_ende.avg_seg_scores.subset.tsv"
HEADER = "system\tdoc\tdoc_id\tseg_id\trater\tsource\ttarget\tcategory\tseverity\tcomment\n"


def release(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, sep="\t", quoting=csv.QUOTE_NONE, dtype=str, keep_default_na=False)


def paper_weight(category: str, severity: str) -> float:
    """Freitag et al. 2021: Major 5, Minor 1, Minor Fluency/Punctuation 0.1, Non-translation 25, no error 0."""
    if severity.lower() == "no-error":
        return 0.0
    if category.startswith("Non-translation"):
        return 25.0
    if severity == "Major":
        return 5.0
    return 0.1 if category == "Fluency/Punctuation" else 1.0


def paper_scores(rows: pd.DataFrame) -> pd.Series:
    """Per system: per segment, the mean over its raters of the sum of their errors' weights; then over segments."""
    weights = [paper_weight(c, s) for c, s in zip(rows["category"], rows["severity"], strict=True)]
    rated = rows.assign(weight=weights).groupby(["system", "doc", "seg_id", "rater"])["weight"].sum()
    return rated.groupby(["system", "doc", "seg_id"]).mean().groupby("system").mean()


def tasks(path: Path) -> list[SourceTask]:
    d = load_definition(MQM)
    return list(format_for(d).read([path], d))


def annols_scores(found: list[SourceTask]) -> pd.DataFrame:
    """annols' per-system table (``side_by_side``) from the tasks as read, each annotation decoded by its style."""
    return imported.error_scores(load_definition(MQM), found).table


def test_the_release_subset_reads_one_task_per_output_and_one_judgment_per_rater() -> None:
    rows = release(SUBSET)
    found = tasks(SUBSET)
    outputs = rows.groupby(["system", "doc", "seg_id"]).ngroups
    assert len(found) == outputs and len({t.key for t in found}) == outputs  # identical outputs stay apart
    assert sum(len(t.annotations) for t in found) == rows.groupby(["system", "doc", "seg_id", "rater"]).ngroups
    errors = rows[rows["severity"] != "No-error"]
    labelled = sum(1 for t in found for a in t.annotations for item in a.result if item["type"] == "labels")
    assert labelled == len(errors)
    same = rows.groupby(["doc", "seg_id", "target"])["system"].nunique()
    assert (same > 1).any()  # the fixture holds identical translations of different systems
    assert any(len(a.result) == 0 for t in found for a in t.annotations)  # and clean segments


def test_annols_error_scores_equal_the_papers_rule_on_the_release_subset() -> None:
    table = annols_scores(tasks(SUBSET))
    expected = paper_scores(release(SUBSET))
    assert sorted(table.index) == sorted(expected.index)
    assert np.allclose(table.loc[expected.index, f"mean {asked.SCORE}"].to_numpy(), expected.to_numpy())


def release_segment_scores(path: Path = SEGMENT_SCORES) -> pd.Series:
    """The score file as the release writes it: system, a tab, the negated MQM score and the seg_id separated by a
    space; "None" for a segment nobody rated. Indexed by (system, seg_id); its reference is "ref-A" ("ref" in the
    TSV). Unrated segments are left out."""
    rows = [line.split("\t") for line in path.read_text(encoding="utf-8").splitlines()[1:]]
    cells = [(system, *rest.split(" ")) for system, rest in rows]
    scores = {("ref" if system == "ref-A" else system, seg): -float(score)
              for system, score, seg in cells if score != "None"}  # fmt: skip
    return pd.Series(scores).sort_index()


def test_annols_scores_equal_the_releases_own_segment_scores() -> None:
    """Every output of the fixture: annols' item score (its judgments' error scores, the mean over its raters) is
    the release's own per-segment score, sign turned; the segments the score file marks unrated are not in the TSV."""
    found = tasks(SUBSET)
    scored = imported.error_scores(load_definition(MQM), found)
    seg_of = {t.key: t.data["record"]["seg_id"] for t in found}
    per_output = scored.scores.assign(seg_id=scored.scores["task_key"].map(seg_of))
    mine = per_output.groupby(["system", "seg_id"])[asked.SCORE].mean().sort_index()
    theirs = release_segment_scores()
    assert len(theirs) == len(mine) == release(SUBSET).groupby(["system", "doc", "seg_id"]).ngroups == 126
    assert list(mine.index) == list(theirs.index)
    assert np.allclose(mine.to_numpy(), theirs.to_numpy(), rtol=0, atol=1e-9)
    assert mine[("eTranslation", "278")] == 11.0  # two majors on the same word (5 each) and a minor
    rated = set(release(SUBSET)["seg_id"])
    lines = SEGMENT_SCORES.read_text(encoding="utf-8").splitlines()
    unrated = {line.split(" ")[-1] for line in lines if "None" in line}
    assert unrated == {"141"} and not unrated & rated  # talk.2's first segment: not rated, in no row of the TSV


def test_two_errors_on_the_same_words_are_two_regions_each_with_its_severity() -> None:
    rows = release(SUBSET)
    found = {(t.systems[0], t.data["record"]["seg_id"]): t for t in tasks(SUBSET)}
    d = load_definition(MQM)
    # eTranslation 278: two majors on "Es"; metricsystem5 139: a minor punctuation and a minor style error on
    # "Danke Danke" (the release's rows 3291-3292 and 2341-2342).
    for (system, seg), pair in {("eTranslation", "278"): 10.0, ("metricsystem5", "139"): 1.1}.items():
        task = found[(system, seg)]
        [annotation] = task.annotations
        exported = ExportedTask(id=1, key=task.key, data=task.data, systems=task.systems, annotations=())
        spans = [j for j in decode(d, exported, ExportedAnnotation(id=1, annotator="r", result=annotation.result))
                 if isinstance(j, Span)]  # fmt: skip
        same = [s for s in spans if [(t.start, t.end) for t in spans].count((s.start, s.end)) == 2]
        assert len(same) == 2 and len({s.region for s in same}) == 2
        assert np.isclose(sum(d.spec.weight_of(s.label, s.answers["severity"]) for s in same), pair)
        mine = rows[(rows["system"] == system) & (rows["seg_id"] == seg)]
        total = sum(paper_weight(c, v) for c, v in zip(mine["category"], mine["severity"], strict=True))
        assert np.isclose(sum(d.spec.weight_of(s.label, s.answers["severity"]) for s in spans), total)


def test_minor_1_and_major_5_on_the_same_words_score_6(tmp_path: Path) -> None:
    path = tmp_path / "vendor.tsv"
    target = "Der <v>Zug</v> fährt."
    path.write_text(HEADER + f"sys\td\t1\t1\tr1\tThe train leaves.\t{target}\tAccuracy/Mistranslation\tMinor\t\n"
                    f"sys\td\t1\t1\tr1\tThe train leaves.\t{target}\tFluency/Grammar\tMajor\t\n", encoding="utf-8")
    table = annols_scores(tasks(path))
    assert table.loc["sys", f"mean {asked.SCORE}"] == 6.0


def test_harmless_mess_is_read_with_a_warning_and_an_omission_spans_the_whole_target(tmp_path: Path) -> None:
    path = tmp_path / "vendor.tsv"
    path.write_text(HEADER + "sys\td\t1\t1\t rater1 \tHello.\tHallo.\tno-error\tNO-ERROR\t\n"
                    "sys\td\t1\t2\trater1\tBye now.\tTschüss.\tAccuracy/Omission\tMajor\t\n", encoding="utf-8")
    found = tasks(path)
    assert [a.annotator for t in found for a in t.annotations] == ["rater1", "rater1"]
    assert [f"{w.location}: {w.what}" for t in found for w in t.warnings] == [
        "line 2: ignored spaces around 'rater'", "line 2: read 'NO-ERROR' as no-error",
        "line 3: marks no words: the error is placed on the whole target"]  # fmt: skip
    [span] = [item for item in found[1].annotations[0].result if item["type"] == "labels"]
    assert (span["value"]["start"], span["value"]["end"], span["value"]["labels"]) == (0, 8, ["Accuracy"])


@pytest.mark.parametrize(("row", "message"), [
    ("sys\td\t1\t1\tr1\tHi.\tH<v>all</v>o.\tGrammar\tMinor\t",
     "line 2, field 'category': 'Grammar' is none of the definition's labels ['Accuracy', 'Fluency', "
     "'Fluency/Punctuation', 'Terminology', 'Style', 'Non-translation', 'Other'] (nor one of them followed by '/')"),
    ("sys\td\t1\t1\tr1\tHi.\tH<v>all</v>o.\tStyle/Awkward\tCritical\t",
     "line 2, field 'severity': 'Critical' is none of the severities ['major', 'minor'] nor no-error"),
    ("sys\td\t1\t1\tr1\tHi.\tH<v>all<v>o.\tStyle/Awkward\tMinor\t",
     "line 2, field 'target': needs one <v> and one </v> after it around the error's words (a row per error)"),
    ("sys\td\t1\t1\tr1\tHi.\tHallo.\tStyle/Awkward\tMinor",
     "line 2: 9 cells for 10 columns (a tab inside a cell?)"),
])  # fmt: skip
def test_a_malformed_row_is_refused_in_one_line_naming_file_line_and_field(tmp_path: Path, row: str,
                                                                           message: str) -> None:  # fmt: skip
    path = tmp_path / "vendor.tsv"
    path.write_text(HEADER + row + "\n", encoding="utf-8")
    with pytest.raises(InputError) as e:
        tasks(path)
    assert str(e.value) == f"{path}, {message}"


def test_a_segment_whose_targets_differ_between_rows_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "vendor.tsv"
    path.write_text(HEADER + "sys\td\t1\t1\tr1\tHi.\t<v>Hallo</v>.\tStyle/Awkward\tMinor\t\n"
                    "sys\td\t1\t1\tr2\tHi.\tHallo!\tNo-error\tNo-error\t\n", encoding="utf-8")
    with pytest.raises(InputError) as e:
        tasks(path)
    assert str(e.value) == (f"{path}, line 3, field 'target': differs from line 2's target of the same segment "
                            "(markers removed); one segment has one translation")  # fmt: skip


def test_two_segments_of_the_same_source_text_are_two_items(tmp_path: Path) -> None:
    path = tmp_path / "vendor.tsv"
    rows = ["sys\td\t1\t1\tr1\t(Applause)\t<v>(Applaus</v>\tFluency/Punctuation\tMajor\t",
            "sys\td\t1\t1\tr2\t(Applause)\t(Applaus\tNo-error\tNo-error\t",
            "sys\td\t1\t7\tr1\t(Applause)\t(Applaus\tNo-error\tNo-error\t",
            "sys\td\t1\t9\tr1\tThanks.\tDanke.\tNo-error\tNo-error\t"]  # fmt: skip
    path.write_text(HEADER + "\n".join(rows) + "\n", encoding="utf-8")
    found = tasks(path)
    d = load_definition(MQM)
    units = {t.data["record"]["seg_id"]: asked.unit_of(d.spec, t.data, t.key) for t in found}
    assert len(set(units.values())) == 3
    # Per segment over raters: 2.5, 0, 0; over segments 0.8333 (a unit of the source text alone: 1.25, 0 -> 0.625).
    table = annols_scores(found)
    assert np.isclose(table.loc["sys", f"mean {asked.SCORE}"], paper_scores(release(path)).loc["sys"])
    assert np.isclose(table.loc["sys", f"mean {asked.SCORE}"], 2.5 / 3)
