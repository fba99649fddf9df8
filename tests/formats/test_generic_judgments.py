"""Judgments made elsewhere in an own definition's input (generic JSONL/CSV): read, checked against the
definition like annotator input, and turned into Label Studio results as the editor saves them."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from annols.cli import main
from annols.definition import blinding
from annols.errors import InputError
from annols.formats import SourceAnnotation, SourceTask, format_for
from annols.protocols import load_definition
from annols.study import manifest
from annols.study.push import write_task_file
from annols.styles import decode
from annols.styles.answers import ExportedAnnotation, ExportedTask
from annols.styles.judgments import BestWorst, Preference, Rank, Rating
from tests.analysis import planted
from tests.conftest import ROOT

RATINGS = ROOT / "examples" / "summeval-ratings.toml"
PAIRWISE = ROOT / "examples" / "chat-arena.toml"
BEST_WORST = ROOT / "examples" / "summary-best-worst.toml"
ASPECTS = ("coherence", "consistency", "fluency", "relevance")
SYSTEMS = ["ref", "lead", "abs", "comp"]


def ratings_row(doc: int, annotator: str, value: int = 3, **changes: str) -> dict[str, str]:
    row = {"id": f"d{doc}", "document": f"Article {doc}.", "annotator": annotator, "systems": "|".join(SYSTEMS)}
    row.update({f"summary_{i}": f"Summary {i} of {doc}." for i in range(1, 5)})
    row.update({f"{a}_summary_{i}": str((value + i + len(a)) % 5 + 1) for a in ASPECTS for i in range(1, 5)})
    row.update(changes)
    return row


def write_csv(path: Path, rows: list[dict[str, str]]) -> Path:
    with path.open("w", encoding="utf-8", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return path


def write_jsonl(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def read(definition_path: Path, path: Path) -> list[Any]:
    d = load_definition(definition_path)
    return list(format_for(d).read([path], d))


def failure(definition_path: Path, path: Path) -> str:
    with pytest.raises(InputError) as e:
        read(definition_path, path)
    return str(e.value)


def test_ratings_rows_of_one_task_are_one_task_with_an_annotation_each(tmp_path: Path) -> None:
    rows = [ratings_row(doc, a, value=doc * 7 + n) for doc in (1, 2) for n, a in enumerate(("A", "B", "C"))]
    tasks = read(RATINGS, write_csv(tmp_path / "in.csv", rows))
    assert [len(t.annotations) for t in tasks] == [3, 3]
    d = load_definition(RATINGS)
    for task, doc in zip(tasks, (1, 2), strict=True):
        assert task.systems == tuple(SYSTEMS)
        # Neither the annotator nor any answer is task data: annotators never see another's answers.
        assert task.data["record"] == {"id": f"d{doc}"}
        for annotation, row in zip(task.annotations, rows[(doc - 1) * 3 : doc * 3], strict=True):
            assert annotation.annotator == row["annotator"]
            for item in annotation.result:
                assert item["type"] == "choices" and item["origin"] == "manual"
                assert item["id"] == item["from_name"]
                assert item["to_name"] == item["from_name"].split("_", 1)[1]  # the candidate's pane
            got = {(j.aspect, j.system): j.value for j in decode(d, exported(task, annotation), _ann(annotation))
                   if isinstance(j, Rating)}  # fmt: skip
            want = {(a, SYSTEMS[i - 1]): float(row[f"{a}_summary_{i}"]) for a in ASPECTS for i in range(1, 5)}
            assert got == want


def exported(task: SourceTask, annotation: SourceAnnotation) -> ExportedTask:
    """The task as pull sees it, its order as given (judged tasks are not shuffled)."""
    return ExportedTask(id=1, key=task.key, data=task.data, systems=task.systems, annotations=(_ann(annotation),))


def _ann(annotation: SourceAnnotation) -> ExportedAnnotation:
    return ExportedAnnotation(id=1, annotator=annotation.annotator, result=annotation.result)


def test_a_value_off_the_scale_names_file_row_and_field(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "in.csv", [ratings_row(1, "A"), ratings_row(1, "B", fluency_summary_3="6")])
    message = failure(RATINGS, path)
    assert message == (f"{path}, line 3, field 'fluency_summary_3': '6' is not one of the codes "
                       "['1', '2', '3', '4', '5']")  # fmt: skip


def test_a_missing_required_answer_names_file_row_and_field(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "in.csv", [ratings_row(1, "A"), ratings_row(2, "A", relevance_summary_2="")])
    assert failure(RATINGS, path) == (f"{path}, line 3, field 'relevance_summary_2': missing; a required answer "
                                      "of the definition")  # fmt: skip


def test_answers_without_an_annotator_and_a_judge_twice_are_refused(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "in.csv", [ratings_row(1, "A"), ratings_row(1, "")])
    assert failure(RATINGS, path) == f"{path}, line 3, field 'annotator': missing; every judgment needs its annotator"
    path = write_csv(tmp_path / "twice.csv", [ratings_row(1, "A"), ratings_row(2, "B"), ratings_row(1, "A")])
    assert failure(RATINGS, path) == f"{path}, line 4, field 'annotator': 'A' already judged this task ({path}, line 2)"


def test_rows_of_one_task_must_name_its_systems_in_one_order(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "in.csv", [ratings_row(1, "A"), ratings_row(1, "B", systems="lead|ref|abs|comp")])
    message = failure(RATINGS, path)
    assert message.startswith(f"{path}, line 3, field 'systems': ['lead', 'ref', 'abs', 'comp'] differ from")


def test_a_task_nobody_judged_yet_can_stand_among_judged_ones(tmp_path: Path) -> None:
    plain = ratings_row(2, "")
    for key in list(plain):
        if key.split("_")[0] in ASPECTS:
            plain[key] = ""
    tasks = read(RATINGS, write_csv(tmp_path / "in.csv", [ratings_row(1, "A"), plain, ratings_row(3, "B")]))
    assert [len(t.annotations) for t in tasks] == [1, 0, 1]


def test_pairwise_jsonl_with_fields_or_an_answers_object_and_a_question(tmp_path: Path) -> None:
    text = (
        PAIRWISE.read_text(encoding="utf-8")
        + """
[[questions]]
name = "topics"
text = "Topics"
multiple = true
choices = [{ code = "food" }, { code = "law" }, { code = "other" }]
"""
    )
    definition = tmp_path / "arena.toml"
    definition.write_text(text, encoding="utf-8")
    base = {"prompt": "P?", "response_a": "a", "response_b": "b", "systems": ["x", "y"]}
    records = [
        {**base, "annotator": "ann1", "helpfulness": "A", "harmlessness": "tie", "topics": ["food"]},
        {**base, "annotator": "ann2",
         "answers": {"helpfulness": "B is better", "harmlessness": "A", "topics": ["law", "other"]}},
    ]  # fmt: skip
    tasks = read(definition, write_jsonl(tmp_path / "in.jsonl", records))
    assert len(tasks) == 1 and len(tasks[0].annotations) == 2
    d = load_definition(definition)
    judged = [decode(d, exported(tasks[0], a), _ann(a)) for a in tasks[0].annotations]
    prefs = [{j.aspect: j.winner_system or "tie" for j in js if isinstance(j, Preference)} for js in judged]
    assert prefs == [{"helpfulness": "x", "harmlessness": "tie"}, {"helpfulness": "y", "harmlessness": "x"}]
    assert [[j.codes for j in js if not isinstance(j, Preference)] for js in judged] == [
        [("food",)], [("law", "other")]]  # fmt: skip
    records[1]["answers"]["harmlessness"] = "C"
    path = write_jsonl(tmp_path / "bad.jsonl", records)
    assert failure(definition, path) == (f"{path}, line 2, field 'answers.harmlessness': 'C' is not one of the "
                                         "codes ['A', 'B', 'tie']")  # fmt: skip


RANKING = """
name = "outputs-ranked"
style = "ranking"
summary = "Rank three outputs."
guideline = "Rank them."
positions = ["A", "B", "C"]

[[dimensions]]
name = "quality"
text = "Quality"
"""


def test_ranking_csv_ties_allowed_and_a_rank_off_the_scale_refused(tmp_path: Path) -> None:
    definition = tmp_path / "rank.toml"
    definition.write_text(RANKING, encoding="utf-8")
    row = {"output_a": "a", "output_b": "b", "output_c": "c", "systems": "s1|s2|s3", "annotator": "ann@lab.org",
           "quality_a": "2", "quality_b": "1", "quality_c": "2"}  # fmt: skip
    tasks = read(definition, write_csv(tmp_path / "in.csv", [row]))
    d = load_definition(definition)
    annotation = tasks[0].annotations[0]
    ranks = {j.system: j.rank for j in decode(d, exported(tasks[0], annotation), _ann(annotation))
             if isinstance(j, Rank)}  # fmt: skip
    assert ranks == {"s1": 2, "s2": 1, "s3": 2}
    path = write_csv(tmp_path / "bad.csv", [{**row, "quality_c": "4"}])
    codes = ["1", "2", "3"]
    assert failure(definition, path) == f"{path}, line 2, field 'quality_c': '4' is not one of the codes {codes}"


def test_best_worst_tuples_made_elsewhere_are_read_as_given(tmp_path: Path) -> None:
    d = load_definition(BEST_WORST)
    spec = d.spec
    record: dict[str, Any] = {p.name: "The article." for p in spec.context}
    record.update({spec.field(i): f"summary {i}" for i in range(spec.tuple_size)})
    record["systems"] = [f"sys{i}" for i in range(spec.tuple_size)]
    answers = {f"{a.name}_{end}": letter for a in spec.aspects for end, letter in (("best", "B"), ("worst", "D"))}
    tasks = read(BEST_WORST, write_jsonl(tmp_path / "tuples.jsonl", [{**record, "annotator": "A", **answers}]))
    assert len(tasks) == 1 and tasks[0].systems == tuple(record["systems"])
    annotation = tasks[0].annotations[0]
    found = [j for j in decode(d, exported(tasks[0], annotation), _ann(annotation)) if isinstance(j, BestWorst)]
    assert [(j.aspect, j.systems[j.best], j.systems[j.worst]) for j in found] == [
        (a.name, "sys1", "sys3") for a in spec.aspects]  # fmt: skip


SPANS = """
name = "my-spans"
style = "spans"
summary = "Mark errors."
guideline = "Mark them."

[target]
name = "text"
title = "Text"

[spans]
name = "errors"

[[spans.labels]]
value = "Wrong"
"""


SEVERITY = """
[[spans.questions]]
name = "severity"
text = "Severity"
required = true
choices = [{ code = "major", text = "Major" }, { code = "minor", text = "Minor" }]

[[spans.labels]]
value = "Style"
"""


def spans_definition(tmp_path: Path) -> Path:
    definition = tmp_path / "spans.toml"
    definition.write_text(SPANS + SEVERITY, encoding="utf-8")
    return definition


def test_span_judgments_are_imported_each_span_its_own_region_with_its_answers(tmp_path: Path) -> None:
    definition = spans_definition(tmp_path)
    text = "The old mill stood."
    spans = [{"label": "Wrong", "start": 4, "end": 12, "answers": {"severity": "minor"}},
             {"label": "Style", "text": "old mill", "answers": {"severity": "Major"}},
             {"label": "Wrong", "text": "stood", "answers": {"severity": "major"}}]  # fmt: skip
    path = write_jsonl(tmp_path / "in.jsonl", [{"text": text, "systems": ["s1"], "annotator": "A",
                                                "answers": {"spans": spans}},
                                               {"text": text, "systems": ["s1"], "annotator": "B",
                                                "answers": {"spans": []}}])  # fmt: skip
    [task] = read(definition, path)
    assert [a.annotator for a in task.annotations] == ["A", "B"]
    d = load_definition(definition)
    found = decode(d, exported(task, task.annotations[0]), _ann(task.annotations[0]))
    assert [(j.label, j.start, j.end, j.region, j.answers) for j in found] == [
        ("Wrong", 4, 12, "span-1", {"severity": ("minor",)}),
        ("Style", 4, 12, "span-2", {"severity": ("major",)}),
        ("Wrong", 13, 18, "span-3", {"severity": ("major",)})]  # fmt: skip
    assert decode(d, exported(task, task.annotations[1]), _ann(task.annotations[1])) == []


def test_a_span_judgment_off_the_text_or_without_its_required_answer_names_file_line_and_field(
        tmp_path: Path) -> None:  # fmt: skip
    definition = spans_definition(tmp_path)

    def one(span: dict[str, Any]) -> str:
        path = write_jsonl(tmp_path / "in.jsonl", [{"text": "Some text.", "annotator": "A",
                                                    "answers": {"spans": [span]}}])  # fmt: skip
        return failure(definition, path).removeprefix(f"{path}, ")

    assert one({"label": "Wrong", "start": 5, "end": 40, "answers": {"severity": "minor"}}) == (
        "line 1, field 'answers.spans[0].end': 40 is past the end of the text (10 characters)")
    assert one({"label": "Wrong", "text": "other", "answers": {"severity": "minor"}}) == (
        "line 1, field 'answers.spans[0].text': 'other' is not in the text")
    assert one({"label": "Right", "text": "Some", "answers": {"severity": "minor"}}) == (
        "line 1, field 'answers.spans[0].label': 'Right' is not one of the labels ['Wrong', 'Style']")
    assert one({"label": "Wrong", "text": "Some", "answers": {"severity": "huge"}}) == (
        "line 1, field 'answers.spans[0].answers.severity': 'huge' is not one of the codes ['major', 'minor']")
    assert one({"label": "Wrong", "text": "Some"}) == (
        "line 1, field 'answers.spans[0].answers.severity': missing; the editor requires it of every such span")


def test_with_annotations_on_an_input_without_judgments_exits_with_one_line(tmp_path: Path) -> None:
    inputs = ROOT / "examples" / "summeval-ratings.jsonl"
    result = CliRunner().invoke(main, ["tasks", str(RATINGS), str(inputs), "-o", str(tmp_path / "t.json"),
                                       "--with-annotations"])  # fmt: skip
    assert result.exit_code != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].endswith(f"{inputs}: --with-annotations, but the input holds no judgments; it needs an "
                             "'annotator' field in each judged record, and one field per answer named as the config "
                             "stores it (e.g. coherence_summary_1), or an 'answers' object in JSONL")  # fmt: skip
    assert not (tmp_path / "t.json").exists()



def manifests(tmp_path: Path) -> Path:
    return tmp_path / ".annols"


def blinded(tmp_path: Path, tasks_file: Path, task: dict[str, Any]) -> tuple[list[int], tuple[str, ...]]:
    """The order and systems shown of a task of ``annols tasks``, from the manifest it wrote (the task's meta holds
    only its key)."""
    rows = manifest.rows_by_key(manifest.manifest_path(manifests(tmp_path), tasks_file.stem))
    (row,) = (r for r in rows.values() if manifest.server_key(r) == task["meta"][blinding.META_KEY])
    return list(row.get("order") or []), tuple(row["systems"])


def kept(tmp_path: Path, tasks_file: Path, task: dict[str, Any]) -> dict[str, Any]:
    """What the manifest of ``annols tasks`` kept of a task off the server (the fields its config does not show)."""
    rows = manifest.rows_by_key(manifest.manifest_path(manifests(tmp_path), tasks_file.stem))
    (row,) = (r for r in rows.values() if manifest.server_key(r) == task["meta"][blinding.META_KEY])
    return dict(row.get("extra") or {})


def fixed_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    """The study's secret fixed, so that the tests of the shuffle see one (a new secret keeps a task's order 1 time
    in 24 with four candidates: the test would then check nothing)."""
    monkeypatch.setattr(manifest.secrets, "token_bytes", lambda n: b"s" * n)


def test_judgments_move_with_the_shuffled_candidates(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fixed_secret(monkeypatch)
    rows = [ratings_row(1, a, value=n) for n, a in enumerate(("A", "B"))]
    path = write_csv(tmp_path / "in.csv", rows)
    out = tmp_path / "tasks.json"
    count, duplicates, _, _ = write_task_file(load_definition(RATINGS), [path], out, seed=4, with_annotations=True,
                                           manifest_dir=manifests(tmp_path))
    assert (count, duplicates) == (1, 0)
    (task,) = json.loads(out.read_text(encoding="utf-8"))
    order, shown = blinded(tmp_path, out, task)  # position p shows input candidate order[p]
    assert order != sorted(order)  # judged tasks are shuffled like any
    assert shown == tuple(SYSTEMS[i] for i in order)
    assert set(task["meta"]) == {blinding.META_KEY}  # the server is told nothing of the blinding
    assert [task["data"][f"summary_{p + 1}"] for p in range(4)] == [rows[0][f"summary_{i + 1}"] for i in order]
    for annotation, row in zip(task["annotations"], rows, strict=True):
        got = {item["from_name"]: (item["id"], item["to_name"], item["value"]["choices"])
               for item in annotation["result"]}  # fmt: skip
        # The answer given to input candidate i is now the answer of the position showing it.
        assert got == {f"{a}_summary_{p + 1}": (f"{a}_summary_{p + 1}", f"summary_{p + 1}",
                                                [row[f"{a}_summary_{i + 1}"]])
                       for a in ASPECTS for p, i in enumerate(order)}  # fmt: skip


def test_best_worst_letters_move_with_the_shuffled_tuple(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fixed_secret(monkeypatch)
    d = load_definition(BEST_WORST)
    spec = d.spec
    record: dict[str, Any] = {p.name: "The article." for p in spec.context}
    record.update({spec.field(i): f"summary {i}" for i in range(spec.tuple_size)})
    record["systems"] = [f"sys{i}" for i in range(spec.tuple_size)]
    answers = {f"{a.name}_{end}": letter for a in spec.aspects for end, letter in (("best", "B"), ("worst", "D"))}
    path = write_jsonl(tmp_path / "tuples.jsonl", [{**record, "annotator": "A", **answers}])
    out = tmp_path / "tasks.json"
    write_task_file(d, [path], out, seed=2, with_annotations=True,
                    manifest_dir=manifests(tmp_path))
    (task,) = json.loads(out.read_text(encoding="utf-8"))
    _, shown = blinded(tmp_path, out, task)
    assert shown != tuple(record["systems"])
    picked = {item["from_name"]: shown[spec.letters.index(item["value"]["choices"][0])]
              for item in task["annotations"][0]["result"]}  # fmt: skip
    assert picked == {f"{a.name}_{end}": system for a in spec.aspects
                      for end, system in (("best", "sys1"), ("worst", "sys3"))}  # fmt: skip


def test_a_slider_cell_is_a_number_on_the_slider(tmp_path: Path) -> None:
    definition = ROOT / "examples" / "wmt-da.toml"
    row = {"source_text": "Der Zug.", "translation": "The train.", "systems": "sys-a", "annotator": "A",
           "adequacy_translation": "73.5"}  # fmt: skip
    (task,) = read(definition, write_csv(tmp_path / "in.csv", [row, {**row, "annotator": "B",
                                                                    "adequacy_translation": "100"}]))  # fmt: skip
    assert [a.result[0]["value"] for a in task.annotations] == [{"number": 73.5}, {"number": 100}]
    assert [a.result[0]["type"] for a in task.annotations] == ["number", "number"]
    path = write_csv(tmp_path / "high.csv", [{**row, "adequacy_translation": "101"}])
    assert failure(definition, path) == f"{path}, line 2, field 'adequacy_translation': 101 is off the scale 0 to 100"
    path = write_csv(tmp_path / "word.csv", [{**row, "adequacy_translation": "good"}])
    assert failure(definition, path) == f"{path}, line 2, field 'adequacy_translation': 'good' is not a number"


def test_pairwise_and_ranking_answers_move_with_the_shuffled_candidates(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    fixed_secret(monkeypatch)  # a new secret keeps the two candidates' order for all six seeds 1 time in 32
    ranking = tmp_path / "rank.toml"
    ranking.write_text(RANKING, encoding="utf-8")
    base = {"prompt": "P?", "response_a": "a", "response_b": "b", "systems": ["x", "y"], "annotator": "A"}
    row = {"output_a": "a", "output_b": "b", "output_c": "c", "systems": ["s1", "s2", "s3"], "annotator": "A",
           "quality_a": "3", "quality_b": "1", "quality_c": "2"}  # fmt: skip
    cases = [(PAIRWISE, {**base, "helpfulness": "A", "harmlessness": "tie"}, Preference),
             (ranking, row, Rank)]  # fmt: skip
    for definition_path, record, kind in cases:
        d = load_definition(definition_path)
        given = read(definition_path, write_jsonl(tmp_path / "in.jsonl", [record]))[0]
        want = [j for j in decode(d, exported(given, given.annotations[0]), _ann(given.annotations[0]))
                if isinstance(j, kind)]  # fmt: skip
        orders = set()
        for seed in range(6):  # some seeds swap the candidates, some may not: either way the judgments hold
            out = tmp_path / "tasks.json"
            write_task_file(d, [tmp_path / "in.jsonl"], out, seed=seed, with_annotations=True,
                            manifest_dir=manifests(tmp_path))
            (task,) = json.loads(out.read_text(encoding="utf-8"))
            _, shown = blinded(tmp_path, out, task)
            orders.add(shown)
            pushed = ExportedTask(id=1, key=given.key, data=task["data"], systems=shown, annotations=())
            annotation = ExportedAnnotation(id=1, annotator="A", result=task["annotations"][0]["result"])
            got = [j for j in decode(d, pushed, annotation) if isinstance(j, kind)]
            if kind is Preference:
                assert [(j.aspect, j.winner_system) for j in got] == [(j.aspect, j.winner_system) for j in want]
            else:
                assert sorted((j.dimension, j.system, j.rank) for j in got) == sorted(
                    (j.dimension, j.system, j.rank) for j in want)  # fmt: skip
        assert len(orders) > 1


def test_an_earlier_pulls_judgments_file_is_read_back_as_judgments(tmp_path: Path) -> None:
    d = load_definition(RATINGS)
    rows = [ratings_row(doc, a, value=doc * 5 + n) for doc in (1, 2) for n, a in enumerate(("A", "B", "C"))]
    tasks_file = tmp_path / "tasks.json"
    write_task_file(d, [write_csv(tmp_path / "in.csv", rows)], tasks_file, seed=9, with_annotations=True,
                    manifest_dir=manifests(tmp_path))
    # What a pull of those tasks writes: the data as shown and what the manifest kept off the server (the record's
    # other fields), the systems as shown, each annotation's raw result.
    exported_tasks = [
        ExportedTask(id=n, key=f"k{n}", data={**t["data"], **kept(tmp_path, tasks_file, t)},
                     systems=blinded(tmp_path, tasks_file, t)[1],
                     annotations=tuple(ExportedAnnotation(id=10 * n + i, annotator=f"{a}@annotators.annols.local",
                                                          result=ann["result"])
                                       for i, (a, ann) in enumerate(zip("ABC", t["annotations"], strict=True))))
        for n, t in enumerate(json.loads(tasks_file.read_text(encoding="utf-8")))
    ]  # fmt: skip
    pulled = tmp_path / "pulled"
    pulled.mkdir()
    (judgments_file,) = format_for(d).write_results(exported_tasks, d, pulled)
    back = read(RATINGS, judgments_file)
    assert [len(t.annotations) for t in back] == [3, 3]
    got = sorted((t.data["record"]["id"], a.annotator, j.aspect, j.system, j.value)
                 for t in back for a in t.annotations
                 for j in decode(d, exported(t, a), _ann(a)) if isinstance(j, Rating))  # fmt: skip
    want = sorted((row["id"], row["annotator"], aspect, SYSTEMS[i - 1], float(row[f"{aspect}_summary_{i}"]))
                  for row in rows for aspect in ASPECTS for i in range(1, 5))  # fmt: skip
    assert got == want

    lines = judgments_file.read_text(encoding="utf-8").splitlines()
    line = json.loads(lines[1])
    line["result"][0]["value"]["choices"] = ["7"]
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join([lines[0], json.dumps(line), *lines[2:]]) + "\n", encoding="utf-8")
    name = line["result"][0]["from_name"]
    assert failure(RATINGS, bad) == (f"{bad}, line 2, field 'result.{name}': '7' is not one of the codes "
                                     "['1', '2', '3', '4', '5']")  # fmt: skip
    line["annotator"] = "judge:gpt"
    bad.write_text(json.dumps(line) + "\n", encoding="utf-8")
    message = f"{bad}, line 1, field 'annotator': 'judge:gpt' is a judge: give its answers with --judge"
    assert failure(RATINGS, bad) == message


def test_sentence_judgments_are_imported_row_by_row_as_a_judge_file_names_them(tmp_path: Path) -> None:
    definition = tmp_path / "sentences.toml"
    definition.write_text(planted.SENTENCES, encoding="utf-8")
    record = {"summary": "One. Two. Three.", "sentence_1": "One.", "sentence_2": "Two.", "sentence_3": "Three.",
              "annotator": "A", "answers": {"severity": {"1": "minor"}, "kind": {"1": "fact"},
                                            "special": {"2": "OK"}, "why": {"1": "wrong date"}}}  # fmt: skip
    [task] = read(definition, write_jsonl(tmp_path / "in.jsonl", [record]))
    [annotation] = task.annotations
    rows = decode(load_definition(definition), exported(task, annotation), _ann(annotation))
    assert [(r.row, r.special, r.columns, r.explanation) for r in rows] == [
        (1, "", {"severity": ("minor",), "kind": ("fact",)}, "wrong date"), (2, "OK", {}, ""),
        (3, "", {"severity": (), "kind": ()}, "")]  # fmt: skip
    record["answers"] = {"severity": {"1": "huge"}}
    path = write_jsonl(tmp_path / "bad.jsonl", [record])
    assert failure(definition, path) == (f"{path}, line 1, field 'answers.severity.1': 'huge' is not one of the "
                                         "codes ['minor', 'major']")  # fmt: skip
