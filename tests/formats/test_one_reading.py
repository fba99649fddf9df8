"""One reading of an annotation: each format's result files say what the style's decode reads, no more.

Malformed exports (two answers to one question, a code the protocol does not offer, a rank off
1..N, an item that is no choice) are converted with ``annols.study.pull.convert``: what decode
leaves out is left out of the result files (a blank, as the format writes an unanswered
question) and named in violations.csv. Before, the formats' own parsers wrote such answers as
given ("1,2", "1; 2", a 7, a rank from an item without a type).
"""

from __future__ import annotations

import csv
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from openpyxl import load_workbook  # type: ignore[import-untyped, unused-ignore]

from annols import protocols
from annols.definition import Definition
from annols.formats import format_for
from annols.protocols import load_definition
from annols.study import pull
from annols.study.push import build_tasks
from annols.styles.answers import ExportedAnnotation, ExportedTask
from tests.conftest import ROOT
from tests.formats.seed004_fixture import DIMENSIONS, LETTERS, cells, make_seed004_study

PAIRWISE_INPUT = Path(protocols.__file__).parent / "examples" / "input" / "pairwise-aspects"
RANKING_INPUT = Path(protocols.__file__).parent / "examples" / "input" / "extractive-ranking.csv"
RATINGS = ROOT / "examples" / "summeval-ratings.toml"
BEST_WORST = ROOT / "examples" / "summary-best-worst.toml"
GROUPS = ROOT / "examples" / "da-groups.toml"
USERS = {1: "a@x.org", 2: "b@x.org"}


def export(definition: Definition, inputs: list[Path], results: list[list[list[dict[str, Any]]]] | None = None,
           path: Path | None = None) -> Path:  # fmt: skip
    """A raw JSON export as Label Studio writes one of the inputs' tasks: their own judgments, or ``results``
    (per task, one result list per annotator), annotators 1, 2, ... in order."""
    tasks: list[dict[str, Any]] = []
    built = [b for b in build_tasks(definition, inputs, with_annotations=results is None) if not b[3]]
    for number, (key, _systems, task, _repeat) in enumerate(built):
        task_id = number + 1
        given = [a["result"] for a in task.get("annotations", [])] if results is None else results[number]
        annotations = [{"id": task_id * 10 + i, "completed_by": 1 + i, "result": r, "was_cancelled": False,
                        "lead_time": 1.5, "created_at": "2026-11-21T10:00:00Z", "task": task_id}
                       for i, r in enumerate(given)]  # fmt: skip
        tasks.append({"id": task_id, "annotations": annotations, "drafts": [], "predictions": [], "data": task["data"],
                      "meta": {**task["meta"], "annols_key": key}, "created_at": "2026-11-21T09:00:00Z"})  # fmt: skip
    assert path is not None
    path.write_text(json.dumps(tasks, ensure_ascii=False), encoding="utf-8")
    return path


def rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def violations(out: Path) -> list[tuple[str, str, str]]:
    return [(v["annotator"], v["rule"], v["found"]) for v in rows(out / pull.VIOLATIONS_FILE)]


def choice(name: str, *codes: str, to_name: str = "x", kind: str | None = "choices") -> dict[str, Any]:
    item: dict[str, Any] = {"id": name, "from_name": name, "to_name": to_name, "value": {"choices": list(codes)}}
    return {**item, "type": kind} if kind else item


def change(result: list[dict[str, Any]], name: str, item: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The result with the items of ``name`` replaced by ``item`` (dropped when None)."""
    kept = [i for i in result if i.get("from_name") != name]
    return kept if item is None else [*kept, item]


# ------------------------------------------------------------------ pairwise-aspects


def _pairwise(tmp_path: Path, first: list[dict[str, Any]]) -> tuple[Definition, list[dict[str, Any]], Path]:
    """A pairwise-aspects export whose first task's first annotation is ``first``, every other answer "1"."""
    definition = protocols.load("pairwise-aspects")
    full = [choice(a.name, "1", to_name="summary_1") for a in definition.spec.aspects]
    n_tasks = sum(1 for b in build_tasks(definition, [PAIRWISE_INPUT]) if not b[3])
    path = export(definition, [PAIRWISE_INPUT], [[first, full]] + [[full]] * (n_tasks - 1), tmp_path / "export.json")
    out = tmp_path / "out"
    pull.convert(path, definition, out, USERS, workers=1)
    return definition, json.loads(path.read_text(encoding="utf-8")), out


def test_pairwise_aspects_leaves_out_what_decode_cannot_read(tmp_path: Path) -> None:
    definition = protocols.load("pairwise-aspects")
    shown = {a.code: a.text for a in definition.spec.answers}
    bad = [choice("informative", "1", "2", to_name="summary_1"), choice("readability", "7", to_name="summary_1"),
           choice("factual_consistency", shown["2"], to_name="summary_1")]  # by its shown text: read  # fmt: skip
    _, tasks, out = _pairwise(tmp_path, bad)

    sample = tasks[0]["data"]["sample"]
    judged = [r for r in rows(out / "judgments.csv") if r["sample"] == str(sample) and r["annotator"] == "a"]
    by_aspect = {r["aspect"]: (r["value"], r["winner"]) for r in judged}
    wording = {a.name: a.text for a in definition.spec.aspects}
    assert by_aspect[wording["informative"]] == ("", "")  # before: "1,2"
    assert by_aspect[wording["readability"]] == ("", "")  # before: "7"
    assert by_aspect[wording["factual_consistency"]][0] == "2"
    text = (out / "a" / f"{sample}.txt").read_text(encoding="utf-8")
    assert f"[***] {wording['informative']}:\n" in text
    assert f"[***] {wording['readability']}:\n" in text
    assert f"[***] {wording['factual_consistency']}:2\n" in text
    assert violations(out) == [
        ("a@x.org", "aspect-answered", f"{wording['informative']}: 2 answers (1, 2)"),
        ("a@x.org", "aspect-answered", f"{wording['readability']}: '7' is not one of 1, 2, 0"),
    ]


def test_pairwise_aspects_reads_a_string_choice_as_decode_does(tmp_path: Path) -> None:
    """``"choices": "12"`` (a string, not a list): decode reads one code "12", not "1" and "2"."""
    item = choice("informative", to_name="summary_1")
    item["value"]["choices"] = "12"
    definition, _, out = _pairwise(tmp_path, [item, choice("factual_consistency", "0"), choice("readability", "0")])
    wording = definition.spec.aspects[0].text
    assert violations(out) == [("a@x.org", "aspect-answered", f"{wording}: '12' is not one of 1, 2, 0")]


# ------------------------------------------------------------------ extractive-ranking


def test_extractive_ranking_leaves_out_what_decode_cannot_read(tmp_path: Path) -> None:
    definition = protocols.load("extractive-ranking")
    spec = definition.spec
    cells = [(d.name, p) for d in spec.dimensions for p in spec.positions]
    full = [choice(spec.cell(d, p), str(1 + k % 4), to_name=spec.field(p))
            for k, (d, p) in enumerate((d, p) for d in spec.dimensions for p in spec.positions)]  # fmt: skip
    twice, off, typeless = (spec.cell(next(d for d in spec.dimensions if d.name == n), p)
                            for n, p in (cells[0], cells[1], cells[2]))  # fmt: skip
    bad = change(full, twice, choice(twice, "1", "2"))
    bad = change(bad, off, choice(off, "7"))
    bad = change(bad, typeless, choice(typeless, "3", kind=None))
    n_tasks = sum(1 for b in build_tasks(definition, [RANKING_INPUT]) if not b[3])
    out = tmp_path / "out"
    pull.convert(export(definition, [RANKING_INPUT], [[bad, full]] + [[full]] * (n_tasks - 1),
                        tmp_path / "export.json"), definition, out, USERS, workers=1)  # fmt: skip

    table = rows(out / "extractive-ranking.csv")
    first = table[0]
    ranked = {k: v for k, v in first.items() if k.startswith("a@x.org:")}
    assert len(ranked) == len(cells) and sum(v == "" for v in ranked.values()) == 3  # before: "1; 2", 7 and 3
    assert all(v for k, v in first.items() if k.startswith("b@x.org:"))
    sheet = load_workbook(out / "extractive-ranking.xlsx", read_only=True).worksheets[0]
    values = list(sheet.iter_rows(values_only=True))
    header = list(values[0])
    assert sum(values[1][header.index(k)] is None for k in ranked) == 3
    found = violations(out)
    assert ("a@x.org", "one-rank-per-cell", f"{twice} has 2 ranks: 1; 2") in found
    assert ("a@x.org", "rank-in-range", f"{off}: '7' is not a rank 1..4") in found
    assert [f for f in found if f[1] == "unreadable-answer"] == [
        ("a@x.org", "unreadable-answer", f'{typeless}: a typeless item, not a choice of rank ({{"choices": ["3"]}})')]
    assert not [f for f in found if f[1] == "ranking-complete"]


# ------------------------------------------------------------------ generic, best-worst, groups


def _jsonl(out: Path, name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()]


def test_generic_names_in_violations_what_its_jsonl_leaves_out(tmp_path: Path) -> None:
    definition = load_definition(RATINGS)
    spec = definition.spec
    records = [json.loads(line) for line in (ROOT / "examples" / "summeval-ratings.jsonl").read_text().splitlines()]
    inputs = [tmp_path / "in.jsonl"]
    inputs[0].write_text("".join(json.dumps(r) + "\n" for r in records[:2]), encoding="utf-8")
    cells = [spec.cell(a, c) for c in spec.candidates for a in spec.aspects]
    full = [choice(name, "3", to_name=spec.candidates[0].name) for name in cells]
    text = {a.code: a.text for a in spec.answers}
    bad = change(full, cells[0], choice(cells[0], "3", "4"))
    bad = change(bad, cells[1], choice(cells[1], "9"))
    bad = change(bad, cells[2], choice(cells[2], text["5"]))  # by its shown text: read
    out = tmp_path / "out"
    pull.convert(export(definition, inputs, [[bad, full], [full]], tmp_path / "export.json"), definition, out, USERS,
                 workers=1)  # fmt: skip
    lines = _jsonl(out, definition.name)
    ratings = [j for j in lines[0]["judgments"] if j["kind"] == "rating"]
    assert len(ratings) == len(cells) - 2 and len([j for j in lines[1]["judgments"] if j["kind"] == "rating"]) == len(
        cells)
    assert lines[0]["result"] == bad  # the raw result is kept as it was
    assert violations(out) == [
        ("a@x.org", "unreadable-answer", f"{cells[0]}: 3, 4 (give exactly one code of ['1', '2', '3', '4', '5']); "
         "left out of the judgments"),
        ("a@x.org", "unreadable-answer", f"{cells[1]}: 9 ('9' is not one of the codes ['1', '2', '3', '4', '5']); "
         "left out of the judgments"),
    ]  # fmt: skip


def test_best_worst_names_two_bests_and_a_letter_not_in_the_tuple(tmp_path: Path) -> None:
    definition = load_definition(BEST_WORST)
    spec = definition.spec
    source = ROOT / "examples" / "summary-best-worst.jsonl"
    n_tasks = sum(1 for b in build_tasks(definition, [source]) if not b[3])
    aspect, other = spec.aspects[0], spec.aspects[1]
    full = [choice(spec.control(a, end), letter, to_name=spec.field(0))
            for a in spec.aspects for end, letter in (("best", "A"), ("worst", "B"))]  # fmt: skip
    bad = change(full, spec.control(aspect, "best"), choice(spec.control(aspect, "best"), "A", "C"))
    bad = change(bad, spec.control(other, "worst"), choice(spec.control(other, "worst"), "Z"))
    same = change(full, spec.control(aspect, "worst"), choice(spec.control(aspect, "worst"), "A"))
    out = tmp_path / "out"
    pull.convert(export(definition, [source], [[bad, same]] + [[full]] * (n_tasks - 1), tmp_path / "export.json"),
                 definition, out, USERS, workers=1)  # fmt: skip
    first = _jsonl(out, definition.name)[:2]
    assert [j for j in first[0]["judgments"] if j["kind"] == "best-worst"] == []
    assert len([j for j in first[1]["judgments"] if j["kind"] == "best-worst"]) == 2  # best = worst is kept
    found = violations(out)
    assert [f[:2] for f in found] == [("a@x.org", "unreadable-answer")] * 2 + [("b@x.org", "best-differs-from-worst")]
    assert found[0][2].startswith(f"{spec.control(aspect, 'best')}: A, C (give exactly one code")
    assert found[1][2].startswith(f"{spec.control(other, 'worst')}: Z ('Z' is not one of the codes")


def test_groups_names_a_score_off_the_slider(tmp_path: Path) -> None:
    definition = load_definition(GROUPS)
    spec = definition.spec
    source = ROOT / "examples" / "da-groups.jsonl"
    n_tasks = sum(1 for b in build_tasks(definition, [source]) if not b[3])
    cells = [spec.cell(spec.aspects[0], c) for c in spec.candidates]
    full = [{"id": n, "from_name": n, "to_name": spec.candidates[0].name, "type": "number", "value": {"number": 60}}
            for n in cells]  # fmt: skip
    bad = [*full[1:], {**full[0], "value": {"number": 150}}]
    out = tmp_path / "out"
    pull.convert(export(definition, [source], [[bad, full]] + [[full]] * (n_tasks - 1), tmp_path / "export.json"),
                 definition, out, USERS, workers=1)  # fmt: skip
    first = _jsonl(out, definition.name)[0]
    assert len([j for j in first["judgments"] if j["kind"] == "rating"]) == len(cells) - 1
    assert violations(out) == [("a@x.org", "unreadable-answer",
                                f"{cells[0]}: 150 (150 is off the scale 0 to 100); left out of the judgments")]


def test_the_seed004_sheets_leave_a_cell_decode_cannot_read_empty(tmp_path: Path) -> None:
    """The annotators' vertical copies written back: the malformed cells empty, every other cell as given."""
    study = make_seed004_study(tmp_path / "etc", layout="published")
    definition = protocols.load("extractive-ranking")
    fmt = format_for(definition)
    tasks = list(fmt.read(study.inputs, definition))
    exported = [ExportedTask(id=i, key=t.key, data=t.data, systems=t.systems, source_systems=t.systems,
                             annotations=tuple(ExportedAnnotation(id=i * 10 + j, annotator=a.annotator, result=a.result)
                                               for j, a in enumerate(t.annotations)))
                for i, t in enumerate(tasks, start=1)]  # fmt: skip
    first = exported[0].annotations[0]
    twice, off = first.result[0]["from_name"], first.result[1]["from_name"]
    bad = change(change(first.result, twice, choice(twice, "1", "2")), off, choice(off, "9"))
    exported[0] = replace(exported[0], annotations=(replace(first, result=bad), *exported[0].annotations[1:]))
    out = tmp_path / "out"
    fmt.write_results(exported, definition, out)
    copy = study.copies[first.annotator]
    before, after = cells(copy), cells(out / copy.name)
    assert set(before) - set(after) == {_coordinate(twice), _coordinate(off)}  # before: "1; 2" and 9 written
    assert {k: v for k, v in before.items() if k in after} == after
    assert [v.rule for v in fmt.check(exported[0], exported[0].annotations[0], definition)] == [
        "one-rank-per-cell", "rank-in-range"]


def _coordinate(cell: str) -> str:
    """Where case 1 holds a rank cell in the published layout: rows 4-7 are A-D, columns C-E the dimensions."""
    dimension, letter = cell.rsplit("_", 1)
    return f"{'CDE'[DIMENSIONS.index(dimension)]}{4 + LETTERS.index(letter.upper())}"
