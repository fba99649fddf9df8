"""The pairwise-aspects format: seed-001 folders and JSONL in, the release's files out (offline)."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from annols.definition import Definition
from annols.errors import InputError
from annols.formats import SourceTask, content_key, format_for
from annols.formats.pairwise_aspects import FORMAT
from annols.protocols import load
from annols.styles.answers import ExportedAnnotation, ExportedTask
from tests.formats.seed001_fixture import ASPECTS, Seed001Study, canonical_file, make_seed001_study

DATA = Path(__file__).resolve().parent.parent / "data"
EXAMPLE_TASK = Path(__file__).resolve().parents[2] / "annols" / "protocols" / "examples" / "pairwise-aspects.json"
WORDING = {"informative": "informative", "factual_consistency": "factual consistency", "readability": "readability"}


@pytest.fixture(scope="module")
def definition() -> Definition:
    return load("pairwise-aspects")


def answers_of(result: list[dict[str, Any]]) -> dict[str, str]:
    """The seed's aspect wording -> code, from Label Studio result items."""
    return {WORDING[item["from_name"]]: item["value"]["choices"][0] for item in result}


def exported(tasks: list[SourceTask]) -> list[ExportedTask]:
    """What a pull of these tasks gives back when nothing was swapped and everyone answered as in the source."""
    out = []
    for i, task in enumerate(tasks, start=1):
        annotations = tuple(
            ExportedAnnotation(id=i * 10 + j, annotator=a.annotator, result=a.result)
            for j, a in enumerate(task.annotations)
        )
        out.append(ExportedTask(id=i, key=task.key, data=task.data, systems=task.systems, annotations=annotations))
    return out


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def undo_quirks(path: Path) -> str:
    """An input file as the canonical writer would write it: no BOM, LF, no space after the colon."""
    text = path.read_bytes().decode("utf-8-sig").replace("\r\n", "\n")
    for aspect in ASPECTS:
        text = text.replace(f"[***] {aspect}: ", f"[***] {aspect}:")
    return text


def one_line_error(excinfo: pytest.ExceptionInfo[InputError]) -> str:
    message = str(excinfo.value)
    assert "\n" not in message
    return message


# ---------------------------------------------------------------------------------------
# Registry


def test_the_registry_finds_this_format(definition: Definition) -> None:
    assert format_for(definition) is FORMAT
    assert FORMAT.name == definition.name == "pairwise-aspects"
    assert "\n" not in FORMAT.describe


# ---------------------------------------------------------------------------------------
# Reading a seed-001 folder


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> Seed001Study:
    return make_seed001_study(tmp_path_factory.mktemp("seed001") / "human_evaluation")


def test_fixture_has_the_quirks(study: Seed001Study) -> None:
    assert len(study.bom) > 40 and all(p.read_bytes().startswith(b"\xef\xbb\xbf") for p in study.bom)
    assert study.crlf and all(b"\r\n" in p.read_bytes() for p in study.crlf)
    assert "[***] informative: " in study.file("C", 0).read_text(encoding="utf-8")
    assert not study.file("C", 8).exists()
    assert "\n" in study.samples[6].document and study.file("A", 6) in study.crlf
    assert any("ř" in s.document and any(ord(c) > 0xFFFF for c in s.document) for s in study.samples)
    assert {"0", "1", "2"} <= {
        v for by_sample in study.answers.values() for a in by_sample.values() for v in a.values()
    }


def test_seed_folder_reads_one_task_per_sample(study: Seed001Study, definition: Definition) -> None:
    tasks = list(FORMAT.read([study.root], definition))
    assert [t.data["sample"] for t in tasks] == list(range(100))
    for task, s in zip(tasks, study.samples, strict=True):
        assert task.data == {"document": s.document, "summary_1": s.summary_1, "summary_2": s.summary_2,
                             "sample": s.sample}  # fmt: skip
        assert task.systems == (s.system_1, s.system_2)
        assert task.fixed_order is True
        assert task.key == content_key(
            "pairwise-aspects", {"document": s.document, "summary_1": s.summary_1, "summary_2": s.summary_2}
        )
        expected = {a: by_sample[s.sample] for a, by_sample in study.answers.items() if s.sample in by_sample}
        assert {a.annotator: answers_of(a.result) for a in task.annotations} == expected


def test_result_items_are_label_studio_choices(study: Seed001Study, definition: Definition) -> None:
    task = next(iter(FORMAT.read([study.root], definition)))
    item = task.annotations[0].result[1]
    assert item == {
        "id": "factual_consistency",
        "from_name": "factual_consistency",
        "to_name": "summary_1",
        "type": "choices",
        "value": {"choices": [study.answers["A"][0]["factual consistency"]]},
        "origin": "manual",
    }
    ids = [i["id"] for i in task.annotations[0].result]
    assert len(set(ids)) == 3


def test_template_gives_no_annotation(study: Seed001Study, definition: Definition) -> None:
    task = list(FORMAT.read([study.root], definition))[5]
    assert "C" not in {a.annotator for a in task.annotations}
    assert {a.annotator for a in task.annotations} == {"A", "B"}


def test_key_does_not_depend_on_which_folder_is_read(
    study: Seed001Study, definition: Definition, tmp_path: Path
) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(study.root, copy)
    shutil.rmtree(copy / "A")  # B (with BOMs) is now read first
    full = {t.data["sample"]: t.key for t in FORMAT.read([study.root], definition)}
    partial = {t.data["sample"]: t.key for t in FORMAT.read([copy / "index_marker.json"], definition)}
    assert partial == full


def test_top_level_templates_are_tasks_without_annotations(definition: Definition, tmp_path: Path) -> None:
    (tmp_path / "index_marker.json").write_text('[{"sample": 0, "summary #1": "bart", "summary #2": "JGR"}]')
    guideline_template = canonical_file("Dóc 🙂", "S one", "S two", {}, space=" ")
    (tmp_path / "0.txt").write_text("\n" + guideline_template + "\n", encoding="utf-8")
    (task,) = FORMAT.read([tmp_path], definition)
    assert task.data["document"] == "Dóc 🙂" and task.annotations == ()
    assert task.systems == ("bart", "JGR")


# ---------------------------------------------------------------------------------------
# Round trip: seed folder -> read -> (Label Studio) -> write_results


def test_round_trip_reproduces_the_release(study: Seed001Study, definition: Definition, tmp_path: Path) -> None:
    tasks = list(FORMAT.read([study.root], definition))
    out = tmp_path / "out"
    paths = FORMAT.write_results(iter(exported(tasks)), definition, out)

    assert (out / "index_marker.json").read_bytes() == study.index_marker
    written = sorted(p.relative_to(out).as_posix() for p in out.rglob("*.txt"))
    expected = sorted(f"{a}/{n}.txt" for a, by_sample in study.answers.items() for n in by_sample)
    assert written == expected and len(written) == 300 - 2
    assert set(paths) == {out / w for w in written} | {out / "judgments.csv", out / "index_marker.json"}
    for annotator, by_sample in study.answers.items():
        for n in by_sample:
            data = (out / annotator / f"{n}.txt").read_bytes()
            assert data == study.canonical(annotator, n).encode("utf-8")
            assert data.decode("utf-8") == undo_quirks(study.file(annotator, n))
    assert not (out / "C" / "5.txt").exists() and not (out / "C" / "8.txt").exists()


def test_round_trip_judgments_table(study: Seed001Study, definition: Definition, tmp_path: Path) -> None:
    tasks = list(FORMAT.read([study.root], definition))
    FORMAT.write_results(exported(tasks), definition, tmp_path)
    rows = read_csv(tmp_path / "judgments.csv")
    assert len(rows) == 3 * (300 - 2)
    assert list(rows[0]) == ["sample", "annotator", "aspect", "system_1", "system_2", "value", "winner"]
    for row in rows:
        s = study.samples[int(row["sample"])]
        value = study.answers[row["annotator"]][s.sample][row["aspect"]]
        assert row["value"] == value
        assert (row["system_1"], row["system_2"]) == (s.system_1, s.system_2)
        assert row["winner"] == {"1": s.system_1, "2": s.system_2, "0": "tie"}[value]
    assert {r["aspect"] for r in rows} == set(ASPECTS)


def test_written_results_read_back_identically(study: Seed001Study, definition: Definition, tmp_path: Path) -> None:
    first = list(FORMAT.read([study.root], definition))
    FORMAT.write_results(exported(first), definition, tmp_path)
    again = list(FORMAT.read([tmp_path], definition))
    assert [(t.key, t.data, t.systems) for t in again] == [(t.key, t.data, t.systems) for t in first]
    assert [{a.annotator: a.result for a in t.annotations} for t in again] == [
        {a.annotator: a.result for a in t.annotations} for t in first
    ]


# ---------------------------------------------------------------------------------------
# JSONL and blinding


def write_jsonl(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


RECORD = {
    "id": "cnn-17",
    "document": "Praha – Ve středu 🌧️ pršelo.\nDruhý řádek.",
    "system_1": "bart",
    "summary_1": "V Praze pršelo.",
    "system_2": "JGR",
    "summary_2": "Ve středu pršelo 🌧️.",
    "split": "test",
}


def test_jsonl_reads_records_without_system_names_in_data(definition: Definition, tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "pairs.jsonl", [RECORD, {**RECORD, "id": "cnn-18", "summary_2": "Jiné."}])
    first, second = FORMAT.read([path], definition)
    assert first.data == {
        "document": RECORD["document"],
        "summary_1": RECORD["summary_1"],
        "summary_2": RECORD["summary_2"],
        "record": {"id": "cnn-17", "split": "test"},
    }
    assert first.systems == ("bart", "JGR") and first.fixed_order is False
    assert first.key == content_key(
        "pairwise-aspects",
        {"document": RECORD["document"], "summary_1": RECORD["summary_1"], "summary_2": RECORD["summary_2"]},
    )
    assert second.key != first.key and second.location.endswith("line 2")
    assert "bart" not in json.dumps(first.data)


def choice(from_name: str, code: str, item_id: str) -> dict[str, Any]:
    return {"id": item_id, "from_name": from_name, "to_name": "summary_1", "type": "choices",
            "value": {"choices": [code]}, "origin": "manual"}  # fmt: skip


def test_swapped_candidates_are_unblinded(definition: Definition, tmp_path: Path) -> None:
    (task,) = FORMAT.read([write_jsonl(tmp_path / "in.jsonl", [RECORD])], definition)
    # The push showed JGR's summary as #1 and bart's as #2.
    shown = {**task.data, "summary_1": task.data["summary_2"], "summary_2": task.data["summary_1"]}
    systems = (task.systems[1], task.systems[0])
    # The annotator prefers bart (shown as #2) for informative, JGR (shown as #1) for readability.
    result = [choice("readability", "1", "x9Kq"), choice("informative", "2", "aB3d"),
              choice("factual_consistency", "0", "Zz01")]  # fmt: skip
    annotation = ExportedAnnotation(id=1, annotator="rater.one@lab.example", result=result)
    out = tmp_path / "out"
    FORMAT.write_results([ExportedTask(1, task.key, shown, systems, (annotation,))], definition, out)

    winners = {r["aspect"]: r["winner"] for r in read_csv(out / "judgments.csv")}
    assert winners == {"informative": "bart", "factual consistency": "tie", "readability": "JGR"}
    rows = read_csv(out / "judgments.csv")
    assert (rows[0]["system_1"], rows[0]["system_2"], rows[0]["annotator"]) == ("JGR", "bart", "rater.one")
    assert json.loads((out / "index_marker.json").read_text()) == [
        {"sample": 0, "summary #1": "JGR", "summary #2": "bart"}
    ]
    text = (out / "rater.one" / "0.txt").read_text(encoding="utf-8")
    assert text == canonical_file(RECORD["document"], RECORD["summary_2"], RECORD["summary_1"],
                                  {"informative": "2", "factual consistency": "0", "readability": "1"})  # fmt: skip
    # Read back as a seed folder, the answer still names bart as the informative winner.
    (back,) = FORMAT.read([out], definition)
    informative = answers_of(back.annotations[0].result)["informative"]
    assert back.systems[int(informative) - 1] == "bart"


def test_jsonl_tasks_get_running_sample_numbers(definition: Definition, tmp_path: Path) -> None:
    records = [RECORD, {**RECORD, "summary_1": "Jinak."}, {**RECORD, "summary_1": "Třetí."}]
    tasks = list(FORMAT.read([write_jsonl(tmp_path / "in.jsonl", records)], definition))
    result = [choice("informative", "1", "a"), choice("factual_consistency", "1", "b"), choice("readability", "1", "c")]
    pulled = [
        ExportedTask(i, t.key, t.data, t.systems, (ExportedAnnotation(i, "x@y.z", result),) if i != 2 else ())
        for i, t in enumerate(tasks, start=1)
    ]
    FORMAT.write_results(pulled, definition, tmp_path / "out")
    assert sorted(p.name for p in (tmp_path / "out" / "x").iterdir()) == ["0.txt", "2.txt"]
    marker = json.loads((tmp_path / "out" / "index_marker.json").read_text())
    assert [e["sample"] for e in marker] == [0, 1, 2]


# ---------------------------------------------------------------------------------------
# Results from the browser


def test_example_annotation_gives_the_golden_file(definition: Definition, tmp_path: Path) -> None:
    data = json.loads(EXAMPLE_TASK.read_text(encoding="utf-8"))[0]["data"]
    result = json.loads((DATA / "example_annotations" / "pairwise-aspects.json").read_text(encoding="utf-8"))
    annotation = ExportedAnnotation(id=1, annotator="annotator-a@annols.local", result=result)
    task = ExportedTask(id=1, key="k", data=data, systems=("bart", "JGR"), annotations=(annotation,))
    FORMAT.write_results([task], definition, tmp_path)
    golden = DATA / "pairwise_aspects"
    assert (tmp_path / "annotator-a" / "0.txt").read_bytes() == (golden / "example_0.txt").read_bytes()
    assert (tmp_path / "judgments.csv").read_bytes() == (golden / "example_judgments.csv").read_bytes()
    assert (tmp_path / "index_marker.json").read_bytes() == (golden / "example_index_marker.json").read_bytes()


def test_browser_results_cancelled_and_repeated_annotations(definition: Definition, tmp_path: Path) -> None:
    data = {"document": "D", "summary_1": "one", "summary_2": "two", "sample": 4}
    browser = [
        {**choice("readability", "0", "Xy12"), "meta": {"lead": 1}},
        {**choice("informative", "2: Summary #2 is better", "Qw34")},  # a shown text instead of the alias
        choice("factual_consistency", "1", "Er56"),
    ]
    annotations = (
        ExportedAnnotation(1, "a@x.org", [choice("informative", "1", "old")], created_at="2025-01-01T10:00:00Z"),
        ExportedAnnotation(2, "a@x.org", browser, created_at="2025-01-02T10:00:00Z"),
        ExportedAnnotation(3, "skipper@x.org", [], cancelled=True),
        ExportedAnnotation(4, "a@y.org", [choice("informative", "0", "k")]),
    )
    FORMAT.write_results([ExportedTask(9, "k", data, ("S1", "S2"), annotations)], definition, tmp_path)
    assert (
        (tmp_path / "a" / "4.txt")
        .read_text(encoding="utf-8")
        .endswith("[***] informative:2\n[***] factual consistency:1\n[***] readability:0\n")
    )
    assert not (tmp_path / "skipper").exists()
    second = (tmp_path / "a@y.org" / "4.txt").read_text(encoding="utf-8")
    assert second.endswith("[***] informative:0\n[***] factual consistency:\n[***] readability:\n")
    rows = [(r["annotator"], r["aspect"], r["value"], r["winner"]) for r in read_csv(tmp_path / "judgments.csv")]
    assert rows[:3] == [("a", "informative", "2", "S2"), ("a", "factual consistency", "1", "S1"),
                        ("a", "readability", "0", "tie")]  # fmt: skip
    assert rows[4] == ("a@y.org", "factual consistency", "", "")


# ---------------------------------------------------------------------------------------
# Input errors


@pytest.fixture
def small(tmp_path: Path) -> Seed001Study:
    return make_seed001_study(tmp_path / "he", samples=3, seed=7)


def test_missing_index_marker_entry(small: Seed001Study, definition: Definition) -> None:
    marker = json.loads(small.index_marker)
    (small.root / "index_marker.json").write_text(json.dumps(marker[:2]))
    with pytest.raises(InputError) as excinfo:
        list(FORMAT.read([small.root], definition))
    message = one_line_error(excinfo)
    assert "index_marker.json" in message and "field 'sample'" in message and "sample 2" in message
    assert "A/2.txt" in message


def test_malformed_index_marker_record(small: Seed001Study, definition: Definition) -> None:
    (small.root / "index_marker.json").write_text('[{"sample": 0, "summary #1": "bart"}]')
    with pytest.raises(InputError) as excinfo:
        list(FORMAT.read([small.root], definition))
    assert one_line_error(excinfo).endswith(
        "index_marker.json, record 1, field 'summary #2': missing; name the system that wrote this summary"
    )


def test_file_without_summary_2_section(small: Seed001Study, definition: Definition) -> None:
    path = small.file("A", 1)
    text = path.read_text(encoding="utf-8")
    head, _, tail = text.partition("Summary #2\n")
    path.write_text(head.rstrip("\n") + "\n\n" + tail.partition("\n" + "=" * 70 + "\n\n")[2], encoding="utf-8")
    with pytest.raises(InputError) as excinfo:
        list(FORMAT.read([small.root], definition))
    message = one_line_error(excinfo)
    assert f"{path}, line 9, field 'Summary #2': expected the line 'Summary #2', found '[***] informative:" in message


def test_bad_answer_value(small: Seed001Study, definition: Definition) -> None:
    path = small.file("C", 0)
    text = path.read_text(encoding="utf-8")
    lines = text.split("\n")
    number = next(i for i, line in enumerate(lines, start=1) if line.startswith("[***] factual consistency:"))
    lines[number - 1] = "[***] factual consistency: 3"
    path.write_text("\n".join(lines), encoding="utf-8")
    with pytest.raises(InputError) as excinfo:
        list(FORMAT.read([small.root], definition))
    assert one_line_error(excinfo) == (
        f"{path}, line {number}, field 'factual consistency': '3' is not an answer; type one of 1, 2, 0 (0 = tie)"
    )


def test_missing_answer_line(small: Seed001Study, definition: Definition) -> None:
    path = small.file("B", 2)
    text = path.read_bytes().decode("utf-8-sig")
    kept = [line for line in text.split("\n") if not line.startswith("[***] readability:")]
    path.write_text("\n".join(kept), encoding="utf-8")
    with pytest.raises(InputError) as excinfo:
        list(FORMAT.read([small.root], definition))
    assert "field 'readability': the line '[***] readability:' is missing" in one_line_error(excinfo)


def test_document_differs_across_annotators(small: Seed001Study, definition: Definition) -> None:
    path = small.file("B", 1)
    data = path.read_bytes().replace(b"Doc:\n", b"Doc:\nExtra line.\n", 1)
    path.write_bytes(data)
    with pytest.raises(InputError) as excinfo:
        list(FORMAT.read([small.root], definition))
    message = one_line_error(excinfo)
    assert message.startswith(f"{path}, line 2, field 'document': differs from {small.file('A', 1)}")


def test_summary_differs_only_by_bom_and_crlf_is_fine(small: Seed001Study, definition: Definition) -> None:
    path = small.file("A", 0)
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes().replace(b"\n", b"\r\n"))
    assert len(list(FORMAT.read([small.root], definition))) == 3


def test_jsonl_missing_field(definition: Definition, tmp_path: Path) -> None:
    record = {k: v for k, v in RECORD.items() if k != "system_2"}
    path = write_jsonl(tmp_path / "pairs.jsonl", [RECORD, record])
    with pytest.raises(InputError) as excinfo:
        list(FORMAT.read([path], definition))
    assert one_line_error(excinfo).startswith(f"{path}, line 2, field 'system_2': missing;")


def test_jsonl_bad_json_and_folder_without_marker(definition: Definition, tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(RECORD) + "\n\n{oops\n", encoding="utf-8")
    with pytest.raises(InputError) as excinfo:
        list(FORMAT.read([path], definition))
    assert one_line_error(excinfo).startswith(f"{path}, line 3: not valid JSON")
    with pytest.raises(InputError) as excinfo:
        list(FORMAT.read([tmp_path], definition))
    assert "no index_marker.json" in one_line_error(excinfo)


# ---------------------------------------------------------------------------------------
# check()


def full_result() -> list[dict[str, Any]]:
    return [choice("informative", "1", "a"), choice("factual_consistency", "0", "b"), choice("readability", "2", "c")]


def violations(result: list[dict[str, Any]], definition: Definition) -> list[tuple[str, str]]:
    annotation = ExportedAnnotation(id=1, annotator="a@x.org", result=result)
    task = ExportedTask(id=1, key="k1", data={}, systems=("s1", "s2"), annotations=(annotation,))
    found = FORMAT.check(task, annotation, definition)
    assert all(v.task_key == "k1" and v.annotator == "a@x.org" for v in found)
    return [(v.rule, v.found) for v in found]


def test_check_accepts_a_complete_annotation(definition: Definition) -> None:
    assert violations(full_result(), definition) == []


def test_check_missing_aspect(definition: Definition) -> None:
    assert violations(full_result()[:2], definition) == [("aspect-answered", "readability: no answer")]


def test_check_two_answers_and_a_bad_code(definition: Definition) -> None:
    result = full_result()
    result[0] = {**result[0], "value": {"choices": ["1", "2"]}}
    result[2] = {**result[2], "value": {"choices": ["3"]}}
    assert violations(result, definition) == [
        ("aspect-answered", "informative: 2 answers (1, 2)"),
        ("aspect-answered", "readability: '3' is not one of 1, 2, 0"),
    ]


def test_check_unknown_question(definition: Definition) -> None:
    result = [*full_result(), {"id": "q", "from_name": "overall", "to_name": "summary_1", "type": "choices",
                                "value": {"choices": ["1"]}}]  # fmt: skip
    assert violations(result, definition) == [("unknown-question", "an answer to 'overall'")]


def test_check_ignores_skipped_annotations(definition: Definition) -> None:
    annotation = ExportedAnnotation(id=1, annotator="a@x.org", result=[], cancelled=True)
    task = ExportedTask(id=1, key="k1", data={}, systems=(), annotations=(annotation,))
    assert FORMAT.check(task, annotation, definition) == []


def test_predictions_are_refused_with_what_to_do_instead(tmp_path: Path, definition: Definition) -> None:
    with pytest.raises(InputError) as info:
        list(FORMAT.read_predictions([tmp_path / "critic.jsonl"], definition))
    assert str(info.value) == (
        f"{tmp_path / 'critic.jsonl'}: pairwise-aspects takes no --predictions; "
        "push judgments the input already holds with --with-annotations"
    )


# ---------------------------------------------------------------------------------------
# Typos annotators typed into their files (the real release has two in 300 files)


def test_typos_around_markers_and_after_the_answers_are_ignored_with_a_warning(
    definition: Definition, tmp_path: Path
) -> None:
    from tests.formats.seed001_fixture import add_typos

    study = make_seed001_study(tmp_path / "human_evaluation", samples=10, seed=4)
    clean = [(t.key, t.data, [(a.annotator, a.result) for a in t.annotations])
             for t in FORMAT.read([study.root], definition)]  # fmt: skip
    where = add_typos(study)
    tasks = list(FORMAT.read([study.root], definition))
    # Every judgment (and text) is what it was without the typos.
    assert [(t.key, t.data, [(a.annotator, a.result) for a in t.annotations]) for t in tasks] == clean
    warnings = [w for t in tasks for w in t.warnings]
    assert sorted((Path(w.source), w.location) for w in warnings) == sorted((p, f"line {n}") for p, n in where)
    text = "\n".join(map(str, warnings))
    assert "ignored stray 'x' typed around the line 'Doc:'" in text
    assert "ignored a stray line '1' after the last answer" in text
    assert "ignored stray '`' typed around the line of 70 '='" in text
    assert "ignored stray 's' typed before '[***]'" in text
    assert "ignored stray 'q' typed around the line 'Summary #2'" in text


@pytest.mark.parametrize(
    ("tail", "problem"),
    [
        ("[***] informative:2x\n[***] factual consistency:1\n[***] readability:0\n", "'2x' is not an answer"),
        ("[***] informative:2\n7\n[***] factual consistency:1\n[***] readability:0\n", "expected a line '[***]"),
        ("[***] informative:2\n[***] factual consistency:1\n[***] readability:\n2\n", "'2' stands alone after"),
        (
            "[***] informative:2\n[***] factual consistency:1\n[***] readability:0\nxyz1\n[***] informative:1\n",
            "answered twice",
        ),
    ],
)
def test_typos_that_could_change_a_judgment_stay_errors(
    definition: Definition, tmp_path: Path, tail: str, problem: str
) -> None:
    root = tmp_path / "study"
    (root / "A").mkdir(parents=True)
    (root / "index_marker.json").write_text('[{"sample": 0, "summary #1": "a", "summary #2": "b"}]')
    head = canonical_file("doc", "one", "two", {}).split("[***]")[0]
    (root / "A" / "0.txt").write_text(head + tail, encoding="utf-8")
    with pytest.raises(InputError) as excinfo:
        list(FORMAT.read([root], definition))
    message = one_line_error(excinfo)
    assert problem in message and "A/0.txt, line " in message


def test_a_marker_line_with_more_than_a_typo_stays_an_error(definition: Definition, tmp_path: Path) -> None:
    root = tmp_path / "study"
    (root / "A").mkdir(parents=True)
    (root / "index_marker.json").write_text('[{"sample": 0, "summary #1": "a", "summary #2": "b"}]')
    text = canonical_file("doc", "one", "two", {"informative": "1"}).replace("Doc:", "Document:")
    (root / "A" / "0.txt").write_text(text, encoding="utf-8")
    with pytest.raises(InputError, match="line 1, field 'Doc:': expected the line 'Doc:', found 'Document:'"):
        list(FORMAT.read([root], definition))
