"""The summary-flaws format: inputs, critic predictions, seed-exact result blocks, rules."""

from __future__ import annotations

import csv
import json
import random
import re
from pathlib import Path
from typing import Any

import pytest

from annols.definition import Definition
from annols.errors import InputError
from annols.formats import SourceTask, content_key, format_for
from annols.formats import summary_flaws as sf
from annols.protocols import load
from annols.styles.answers import ExportedAnnotation, ExportedTask

DATA = Path(__file__).resolve().parent.parent / "data"
FIXTURES = DATA / "summary_flaws"
EXAMPLES = Path(sf.__file__).resolve().parent.parent / "protocols" / "examples"


@pytest.fixture(scope="module")
def definition() -> Definition:
    return load("summary-flaws")


def write_jsonl(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


def seed_examples() -> list[tuple[str, str, str]]:
    """(document, summary, answer block) of the seed's Examples 1-3 (fixture copied byte for byte from seed 000)."""
    text = (FIXTURES / "seed-examples.txt").read_text(encoding="utf-8")
    entries = re.split(r"(?:\n\n)?##### Example \d #####\n", text)[1:]
    out = []
    for entry in entries:
        m = re.fullmatch(
            r"Source Document:\n(.*)\n\nSummary to be Labeled:\n(.*)\n\n(Problematic Spans.*)\n", entry, re.DOTALL
        )
        assert m, entry[:80]
        out.append((m.group(1), m.group(2), m.group(3)))
    return out


def export(task: SourceTask, *annotations: ExportedAnnotation, task_id: int = 1) -> ExportedTask:
    return ExportedTask(id=task_id, key=task.key, data=task.data, systems=(), annotations=annotations)


def annotation(result: list[dict[str, Any]], annotator: str = "ann@example.org", **kw: Any) -> ExportedAnnotation:
    return ExportedAnnotation(id=kw.pop("id", 1), annotator=annotator, result=result, **kw)


def one_task(tmp_path: Path, definition: Definition, record: dict[str, Any]) -> SourceTask:
    tasks = list(sf.FORMAT.read([write_jsonl(tmp_path / "in.jsonl", [record])], definition))
    assert len(tasks) == 1
    return tasks[0]


def written_blocks(out_dir: Path) -> list[str]:
    """The entries of summary-flaws.txt, without their header lines."""
    text = (out_dir / "summary-flaws.txt").read_text(encoding="utf-8")
    return [e.split("\n", 1)[1] for e in re.split(r"\n\n(?=##### Task )", text)]


# ---------------------------------------------------------------------------- the seed, end to end


def test_registry_finds_the_format(definition: Definition) -> None:
    fmt = format_for(definition)
    assert fmt is sf.FORMAT
    assert fmt.name == "summary-flaws"
    assert "\n" not in fmt.describe


def test_seed_examples_round_trip_to_the_seed_blocks(tmp_path: Path, definition: Definition) -> None:
    examples = seed_examples()
    assert [s for _, s, _ in examples][1] == (
        "People switched universities and decided to change, why did you decide to switch?"
    )
    records = [{"document": d, "summary": s, "critique": block} for d, s, block in examples]
    preds_file = write_jsonl(tmp_path / "critic.jsonl", [{**r, "model": "critic-1"} for r in records])
    tasks_file = write_jsonl(tmp_path / "tasks.jsonl", [{"document": d, "summary": s} for d, s, _ in examples])

    tasks = list(sf.FORMAT.read([tasks_file], definition))
    predictions = dict(sf.FORMAT.read_predictions([preds_file], definition))
    assert [t.key for t in tasks] == list(predictions)
    assert all(p.model_version == "critic-1" for p in predictions.values())

    exported = [export(t, annotation(predictions[t.key].result, id=i), task_id=i) for i, t in enumerate(tasks, 1)]
    paths = sf.FORMAT.write_results(exported, definition, tmp_path / "out")
    assert [p.name for p in paths] == ["summary-flaws.txt", "summary-flaws.jsonl"]

    written = (tmp_path / "out" / "summary-flaws.txt").read_text(encoding="utf-8")
    for n, task in enumerate(tasks, 1):
        written = written.replace(
            f"##### Task {task.key} | Annotator ann@example.org #####", f"##### Example {n} #####"
        )
    assert written == (FIXTURES / "seed-examples.txt").read_text(encoding="utf-8")

    # The consuming code's regex reads the same spans and labels from our blocks as from the seed's.
    for (_, _, seed_block), ours in zip(examples, written_blocks(tmp_path / "out"), strict=True):
        ours_block = ours[ours.index("Problematic Spans") :]
        assert sf.SPAN_REGEX.findall(ours_block) == sf.SPAN_REGEX.findall(seed_block)
    example3 = written_blocks(tmp_path / "out")[2]
    assert [(m[0], m[1]) for m in sf.SPAN_REGEX.findall(example3[example3.index("Problematic") :])] == [
        ("only watch movies people with no skill in do", " (Label: Incoherent)"),
        ("I view her like I like people with no skill in do.", " (Label: Non-factual)"),
    ]


def test_seed_example_offsets(definition: Definition) -> None:
    _, summary, block = seed_examples()[2]
    result = sf.critique_result(sf.parse_critique(block, sf.names_for(definition)), summary, sf.names_for(definition))
    regions = [(r["value"]["start"], r["value"]["end"], r["value"]["labels"]) for r in result if r["type"] == "labels"]
    assert regions == [(28, 72, ["Incoherent"]), (74, 124, ["Non-factual"])]
    assert result[-1]["value"] == {"choices": ["Yes"]}
    _, _, none_block = seed_examples()[0]
    items = sf.critique_result(sf.parse_critique(none_block, sf.names_for(definition)), "x", sf.names_for(definition))
    assert [(i["from_name"], i["value"]) for i in items] == [
        ("flaws_none", {"choices": ["None identified"]}),
        ("missing_key_information", {"choices": ["No"]}),
    ]


EXAMPLE_BLOCK = """\
Source Document:
SUBREDDIT: r/relationships TITLE: Is my 23GF realistically upset about me (23M) about celebrities? POST: I like \
watching movies and like saying if an actor or actress does a good job in a movie. My girlfriend gets upset about \
this. She gets upset that I place so much value on a person who has a meaningless job (acting). I explain to her that \
I like watching movies and can notice if someone is doing a good job or not. Ever since she first brought it up, I \
don't talk about their performance. To add, we've been together for 5 years believe it or not.

Summary to be Labeled:
My girlfriend views me like only watch movies people with no skill in do. I view her like I like people with no \
skill in do.

Problematic Spans Identified in the Summary:
Span 1: only watch movies people with no skill in do (Label: Incoherent)
Span 2: I view her like I like people with no skill in do. (Label: Non-factual)

Is the summary missing key information?
Yes
"""


def test_shipped_example_task_and_annotation(tmp_path: Path, definition: Definition) -> None:
    [task] = sf.FORMAT.read([EXAMPLES / "summary-flaws.json"], definition)
    result = json.loads((DATA / "example_annotations" / "summary-flaws.json").read_text(encoding="utf-8"))
    exported = export(task, annotation(result, "admin@annols.local", lead_time=12.5, created_at="2026-01-02T03:04:05Z"))
    sf.FORMAT.write_results([exported], definition, tmp_path)
    text = (tmp_path / "summary-flaws.txt").read_text(encoding="utf-8")
    assert text == f"##### Task {task.key} | Annotator admin@annols.local #####\n" + EXAMPLE_BLOCK
    [line] = (tmp_path / "summary-flaws.jsonl").read_text(encoding="utf-8").splitlines()
    row = json.loads(line)
    assert row["spans"] == [
        {"start": 28, "end": 72, "text": "only watch movies people with no skill in do", "label": "Incoherent"},
        {"start": 74, "end": 124, "text": "I view her like I like people with no skill in do.", "label": "Non-factual"},
    ]
    assert (row["none_identified"], row["missing_key_information"]) == (False, "Yes")
    assert (row["lead_time"], row["created_at"], row["annotator"]) == (
        12.5,
        "2026-01-02T03:04:05Z",
        "admin@annols.local",
    )
    assert sf.FORMAT.check(exported, exported.annotations[0], definition) == []


def test_browser_annotations_any_order_random_ids(tmp_path: Path, definition: Definition) -> None:
    [task] = sf.FORMAT.read([EXAMPLES / "summary-flaws.json"], definition)
    result = json.loads((DATA / "example_annotations" / "summary-flaws.json").read_text(encoding="utf-8"))
    for item in result:
        item["id"] = "".join(random.Random(item["id"]).choices("abcdefXYZ0123", k=10))
        if item["type"] == "labels":
            item["value"]["extra"] = {"k": 1}
            item["readonly"] = False
    result.reverse()
    sf.FORMAT.write_results([export(task, annotation(result, "admin@annols.local"))], definition, tmp_path)
    assert written_blocks(tmp_path) == [EXAMPLE_BLOCK]


# ---------------------------------------------------------------------------- critic predictions


def test_messy_critic_output(tmp_path: Path, definition: Definition) -> None:
    summary = "My  boyfriend thinks I stay over\ntoo much. I don't know what to do."
    critique = (
        "Sure, here is my critique of the summary.\r\n\r\n"
        "Problematic Spans Identified in the Summary:   \r\n"
        "Span 1: my boyfriend THINKS i stay over too much. (Label: non-factual)   \r\n"
        'Span 2: "I don\'t know what to do." (Label: Relevance)\r\n'
        "\r\n"
        "Is the summary missing key information?  \r\n"
        "Yes.\r\n"
    )
    path = write_jsonl(tmp_path / "p.jsonl", [{"document": "doc", "summary": summary, "critique": critique}])
    [(key, prediction)] = sf.FORMAT.read_predictions([path], definition)
    assert key == content_key("summary-flaws", {"document": "doc", "summary": summary})
    spans = [r["value"] for r in prediction.result if r["type"] == "labels"]
    assert spans == [
        {"start": 0, "end": 42, "text": "My  boyfriend thinks I stay over\ntoo much.", "labels": ["Non-factual"]},
        {"start": 43, "end": 67, "text": "I don't know what to do.", "labels": ["Irrelevant"]},
    ]
    assert prediction.result[-1]["value"] == {"choices": ["Yes"]}
    assert prediction.model_version == "" and prediction.score is None
    assert len({r["id"] for r in prediction.result}) == len(prediction.result)


def test_critic_continuation_without_header_or_question(definition: Definition) -> None:
    names = sf.names_for(definition)
    c = sf.parse_critique("\nSpan 1: stay (Label: Irrelevant)\n\n##### Example 4 #####\nSpan 1: x (Label: Y)", names)
    assert c == sf.Critique(spans=(("stay", "Irrelevant"),), none_identified=False, missing=None)


def test_repeated_span_text_takes_the_next_occurrence(definition: Definition) -> None:
    names = sf.names_for(definition)
    summary = "He left. She left. He left."
    critique = sf.parse_critique(
        "Span 1: He left. (Label: Irrelevant)\nSpan 2: He left. (Label: Incoherent)\n\n"
        "Is the summary missing key information?\nNo",
        names,
    )
    assert sf.locate_spans(summary, critique.spans) == [(0, 8, "Irrelevant"), (19, 27, "Incoherent")]


def test_span_not_in_summary_is_an_input_error(tmp_path: Path, definition: Definition) -> None:
    critique = "Problematic Spans Identified in the Summary:\nSpan 1: a cat (Label: Irrelevant)\n"
    records = [
        {"document": "d", "summary": "A dog.", "critique": "None identified"},
        {"document": "d", "summary": "A dog barks.", "critique": critique},
    ]
    path = write_jsonl(tmp_path / "p.jsonl", records)
    with pytest.raises(InputError) as e:
        list(sf.FORMAT.read_predictions([path], definition))
    assert (e.value.source, e.value.location, e.value.field) == (str(path), "line 2", "critique")
    assert str(e.value).startswith(f"{path}, line 2, field 'critique': Span 1 'a cat' is not in the summary")
    assert "\n" not in str(e.value)


@pytest.mark.parametrize(
    ("critique", "problem"),
    [
        ("Span 1: dog (Label: Wrong)\n", "unknown label 'Wrong'"),
        ("Span 1: dog (Label: Coverage)\n", "labelled Coverage"),
        ("Span 1: dog\n", "Span 1 has no label"),
        (
            "Span 1: dog (Label: Irrelevant)\n\nIs the summary missing key information?\nMaybe",
            "expected one of Yes, No",
        ),
        ("The summary is fine.", "expected the seed's answer block"),
    ],
)
def test_bad_critique(tmp_path: Path, definition: Definition, critique: str, problem: str) -> None:
    path = write_jsonl(tmp_path / "p.jsonl", [{"document": "d", "summary": "A dog.", "critique": critique}])
    with pytest.raises(InputError, match=re.escape(problem)) as e:
        list(sf.FORMAT.read_predictions([path], definition))
    assert (e.value.location, e.value.field) == ("line 1", "critique")


def test_prediction_needs_a_critique_and_a_numeric_score(tmp_path: Path, definition: Definition) -> None:
    path = write_jsonl(tmp_path / "p.jsonl", [{"document": "d", "summary": "A dog."}])
    with pytest.raises(InputError, match="field 'critique': missing"):
        list(sf.FORMAT.read_predictions([path], definition))
    rec = {"document": "d", "summary": "A dog.", "critique": "None identified", "model": "m", "score": "high"}
    with pytest.raises(InputError, match="field 'score'"):
        list(sf.FORMAT.read_predictions([write_jsonl(tmp_path / "q.jsonl", [rec])], definition))
    [(_, p)] = sf.FORMAT.read_predictions([write_jsonl(tmp_path / "r.jsonl", [{**rec, "score": 0.25}])], definition)
    assert (p.model_version, p.score) == ("m", 0.25)


def test_czech_and_emoji_offsets_are_code_points(tmp_path: Path, definition: Definition) -> None:
    summary = "Příliš žluťoučký kůň 🐎 úpěl ďábelské ódy. 👍"
    critique = (
        "Problematic Spans Identified in the Summary:\nSpan 1: kůň 🐎 úpěl (Label: Non-factual)\n"
        "Span 2: 👍 (Label: Irrelevant)\n\nIs the summary missing key information?\nNo\n"
    )
    record = {"document": "Článek o koni 🐴.", "summary": summary, "critique": critique, "annotator": "Jiří"}
    task = one_task(tmp_path, definition, record)
    [source] = task.annotations
    assert source.annotator == "Jiří"
    values = [r["value"] for r in source.result if r["type"] == "labels"]
    assert [(v["start"], v["end"], v["text"]) for v in values] == [(17, 27, "kůň 🐎 úpěl"), (42, 43, "👍")]
    assert len(summary) == 43 and len(summary.encode("utf-16-le")) // 2 == 45  # not UTF-16 units
    out = tmp_path / "out"
    sf.FORMAT.write_results([export(task, annotation(source.result))], definition, out)
    assert (
        (out / "summary-flaws.txt")
        .read_bytes()
        .decode("utf-8")
        .endswith(f"Summary to be Labeled:\n{summary}\n\n{critique}")
    )
    row = json.loads((out / "summary-flaws.jsonl").read_text(encoding="utf-8"))
    assert row["summary"] == summary and row["spans"][0]["text"] == "kůň 🐎 úpěl"
    assert "kůň 🐎" in (out / "summary-flaws.jsonl").read_text(encoding="utf-8")  # not \\u-escaped


# ---------------------------------------------------------------------------- inputs


def test_tldr_fields_and_plain_document(tmp_path: Path, definition: Definition) -> None:
    records = [
        {"id": "t3_1", "subreddit": "college", "title": "Why switch?", "post": "I wonder.", "summary": "S.", "x": [1]},
        {"subreddit": "r/college", "title": "Why switch?", "post": "I wonder.", "summary": "S.", "model": "bart"},
        {"document": "SUBREDDIT: r/college TITLE: Why switch? POST: I wonder.", "summary": "S."},
        {"document": "Another text.", "summary": "S.", "model": "JGR"},
    ]
    tasks = list(sf.FORMAT.read([write_jsonl(tmp_path / "in.jsonl", records)], definition))
    doc = "SUBREDDIT: r/college TITLE: Why switch? POST: I wonder."
    # The first three hold the same content: one task (consecutive), same key.
    assert len(tasks) == 2
    assert tasks[0].data == {
        "document": doc,
        "summary": "S.",
        "record": {"id": "t3_1", "subreddit": "college", "title": "Why switch?", "post": "I wonder.", "x": [1]},
    }
    assert tasks[0].key == content_key("summary-flaws", {"document": doc, "summary": "S."})
    assert tasks[0].location == f"{tmp_path / 'in.jsonl'}: line 1"
    # The model is kept out of the task data annotators can see (it goes to meta, like blinded systems).
    assert tasks[1].data == {"document": "Another text.", "summary": "S.", "record": {}}
    assert tasks[1].systems == ("JGR",)
    assert tasks[0].annotations == () and tasks[0].systems == ()
    again = list(sf.FORMAT.read([write_jsonl(tmp_path / "again.jsonl", records[3:])], definition))
    assert again[0].key == tasks[1].key


def test_critiques_in_the_input_become_annotations(tmp_path: Path, definition: Definition) -> None:
    base = {"document": "D.", "summary": "A dog barks."}
    records = [
        {**base, "critique": "Span 1: barks (Label: Non-factual)\n\nIs the summary missing key information?\nNo"},
        {**base, "critique": "None identified\n\nIs the summary missing key information?\nYes", "annotator": "B"},
        {"document": "D.", "summary": "Other."},
    ]
    tasks = list(sf.FORMAT.read([write_jsonl(tmp_path / "in.jsonl", records)], definition))
    assert [len(t.annotations) for t in tasks] == [2, 0]
    first, second = tasks[0].annotations
    assert (first.annotator, second.annotator) == ("original", "B")
    assert first.result[0]["value"] == {"start": 6, "end": 11, "text": "barks", "labels": ["Non-factual"]}
    assert [i["from_name"] for i in second.result] == ["flaws_none", "missing_key_information"]
    assert "critique" not in tasks[0].data["record"]


def test_csv_input(tmp_path: Path, definition: Definition) -> None:
    path = tmp_path / "in.csv"
    with path.open("w", encoding="utf-8-sig", newline="") as f:
        w = csv.writer(f)
        w.writerow(["id", "subreddit", "title", "post", "document", "summary", "model"])
        w.writerow(["1", "college", "T", "Line one.\nLine two.", "", "Sum, with comma.", ""])
        w.writerow(["2", "", "", "", "Plain doc.", "Čeština 😀", "m2"])
    first, second = sf.FORMAT.read([path], definition)
    assert first.data == {
        "document": "SUBREDDIT: r/college TITLE: T POST: Line one.\nLine two.",
        "summary": "Sum, with comma.",
        "record": {"id": "1", "subreddit": "college", "title": "T", "post": "Line one.\nLine two."},
    }
    assert second.data == {"document": "Plain doc.", "summary": "Čeština 😀", "record": {"id": "2"}}
    assert (first.systems, second.systems) == ((), ("m2",))
    assert second.location.endswith("in.csv: line 4")  # the first record spans lines 2-3
    with path.open("a", encoding="utf-8", newline="") as f:
        csv.writer(f).writerow(["3", "", "", "", "Plain doc.", "", ""])
    with pytest.raises(InputError) as e:
        list(sf.FORMAT.read([path], definition))
    assert (e.value.location, e.value.field) == ("line 5", "summary")
    assert "empty" in e.value.problem


def test_json_array_input_is_read_incrementally(
    tmp_path: Path, definition: Definition, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sf, "_CHUNK", 7)
    records = [{"document": f"Doc {i} – ü", "summary": f"Summary {i} 🐎."} for i in range(5)]
    path = tmp_path / "in.json"
    path.write_text(" [\n" + ",\n  ".join(json.dumps(r, ensure_ascii=False) for r in records) + "\n]\n", "utf-8")
    tasks = list(sf.FORMAT.read([path], definition))
    assert [t.data["summary"] for t in tasks] == [r["summary"] for r in records]
    assert tasks[4].location == f"{path}: record 5"
    path.write_text('[{"document": "d", "summary": "s"}, {"document": "d"}]', "utf-8")
    with pytest.raises(InputError) as e:
        list(sf.FORMAT.read([path], definition))
    assert (e.value.location, e.value.field) == ("record 2", "summary")


@pytest.mark.parametrize(
    ("line", "field", "problem"),
    [
        ({"document": "d"}, "summary", "missing"),
        ({"document": "d", "summary": "  "}, "summary", "empty"),
        ({"document": "d", "summary": 5}, "summary", "expected a string, got int 5"),
        ({"document": ["d"], "summary": "s"}, "document", "expected a string, got a list"),
        ({"summary": "s"}, "document", "missing; give the document, or the TL;DR fields"),
        ({"subreddit": "x", "post": "p", "summary": "s"}, "title", "missing; the TL;DR fields"),
        ({"document": "d", "summary": "s", "model": 3}, "model", "expected a string"),
        ('{"document": "d", "summary": "s",}', "", "not valid JSON"),
        ("[1, 2]", "", "expected a JSON object, got a list"),
    ],
)
def test_input_errors_name_file_line_and_field(
    tmp_path: Path, definition: Definition, line: Any, field: str, problem: str
) -> None:
    path = tmp_path / "in.jsonl"
    good = json.dumps({"document": "d", "summary": "fine"})
    path.write_text(good + "\n\n" + (line if isinstance(line, str) else json.dumps(line)) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as e:
        list(sf.FORMAT.read([path], definition))
    assert (e.value.source, e.value.location, e.value.field) == (str(path), "line 3", field)
    assert problem in e.value.problem
    assert "\n" not in str(e.value)


def test_unsupported_and_missing_files(tmp_path: Path, definition: Definition) -> None:
    with pytest.raises(InputError, match=re.escape("unsupported file type '.txt'")):
        list(sf.FORMAT.read([tmp_path / "in.txt"], definition))
    with pytest.raises(InputError, match="file not found"):
        list(sf.FORMAT.read([tmp_path / "nope.jsonl"], definition))
    bad = tmp_path / "latin1.jsonl"
    bad.write_bytes(b'{"document": "d", "summary": "s"}\n{"summary": "\xe9"}\n')
    with pytest.raises(InputError, match="line 2: not UTF-8"):
        list(sf.FORMAT.read([bad], definition))


# ---------------------------------------------------------------------------- results and rules

SUMMARY = "A dog barks at the cat."


def span(start: int, end: int, label: str = "Irrelevant", text: str | None = None, rid: str = "r") -> dict[str, Any]:
    text = SUMMARY[start:end] if text is None else text
    value = {"start": start, "end": end, "text": text, "labels": [label]}
    return {"id": rid, "from_name": "flaws", "to_name": "summary", "type": "labels", "value": value, "origin": "manual"}


def choice(name: str, value: str) -> dict[str, Any]:
    return {"id": name, "from_name": name, "to_name": "summary", "type": "choices", "value": {"choices": [value]}}


def small_task() -> ExportedTask:
    data = {"document": "D.", "summary": SUMMARY, "record": {"id": 7}}
    return ExportedTask(id=3, key="summary-flaws:k", data=data, systems=(), annotations=())


def rules(result: list[dict[str, Any]], definition: Definition) -> list[str]:
    task = small_task()
    return [v.rule for v in sf.FORMAT.check(task, annotation(result), definition)]


def test_check_rules_each_able_to_fail(definition: Definition) -> None:
    answered = choice("missing_key_information", "No")
    assert rules([span(2, 5), answered], definition) == []
    assert rules([choice("flaws_none", "None identified"), answered], definition) == []
    assert rules([answered], definition) == ["spans-xor-none"]
    assert rules([span(2, 5), choice("flaws_none", "None identified"), answered], definition) == ["spans-xor-none"]
    assert rules([span(2, 5)], definition) == ["missing-info-answered"]
    assert rules([span(2, 5, text="dig"), answered], definition) == ["span-text-matches"]
    assert rules([span(2, 50, text="x"), answered], definition) == ["span-text-matches"]
    assert rules([span(2, 11, rid="a"), span(6, 14, "Incoherent", rid="b"), answered], definition) == [
        "overlapping-spans"
    ]
    assert rules([span(2, 5, rid="a"), span(5, 11, rid="b"), answered], definition) == []  # touching is fine
    [v] = sf.FORMAT.check(small_task(), annotation([span(2, 5, text="dig"), answered], "x@y.z"), definition)
    assert (v.task_key, v.annotator) == ("summary-flaws:k", "x@y.z")
    assert "'dig'" in v.found and "'dog'" in v.found


def test_unanswered_and_cancelled_annotations(tmp_path: Path, definition: Definition) -> None:
    task = small_task()
    annotations = (
        annotation([span(6, 11, "Non-factual", text="stale")], "a@x", id=1),
        annotation([span(2, 5)], "b@x", id=2, cancelled=True),
        annotation([choice("flaws_none", "None identified"), choice("missing_key_information", "Yes")], "c@x", id=3),
    )
    exported = ExportedTask(**{**task.__dict__, "annotations": annotations})
    sf.FORMAT.write_results([exported], definition, tmp_path)
    text = (tmp_path / "summary-flaws.txt").read_text(encoding="utf-8")
    assert text == (
        "##### Task summary-flaws:k | Annotator a@x #####\nSource Document:\nD.\n\nSummary to be Labeled:\n"
        f"{SUMMARY}\n\nProblematic Spans Identified in the Summary:\nSpan 1: barks (Label: Non-factual)\n\n"
        "Is the summary missing key information?\n\n"
        "\n\n##### Task summary-flaws:k | Annotator c@x #####\nSource Document:\nD.\n\nSummary to be Labeled:\n"
        f"{SUMMARY}\n\nProblematic Spans Identified in the Summary:\nNone identified\n\n"
        "Is the summary missing key information?\nYes\n"
    )
    rows = [json.loads(x) for x in (tmp_path / "summary-flaws.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [r["annotator"] for r in rows] == ["a@x", "c@x"]
    assert rows[0]["missing_key_information"] is None and rows[1]["none_identified"] is True
    assert rows[0]["spans"] == [{"start": 6, "end": 11, "text": "barks", "label": "Non-factual"}]
    assert rows[0]["record"] == {"id": 7} and "model" not in rows[0]
    with_model = ExportedTask(**{**exported.__dict__, "systems": ("bart",)})  # the model comes back from meta
    sf.FORMAT.write_results([with_model], definition, tmp_path / "m")
    first_line = (tmp_path / "m" / "summary-flaws.jsonl").read_text(encoding="utf-8").splitlines()[0]
    assert json.loads(first_line)["model"] == "bart"
    assert sf.FORMAT.check(exported, annotations[1], definition) == []
    assert [v.rule for v in sf.FORMAT.check(exported, annotations[0], definition)] == [
        "missing-info-answered",
        "span-text-matches",
    ]


def test_spans_written_in_offset_order(tmp_path: Path, definition: Definition) -> None:
    result = [span(19, 22, "Incoherent", rid="z"), choice("missing_key_information", "No"), span(2, 5, rid="a")]
    task = ExportedTask(**{**small_task().__dict__, "annotations": (annotation(result),)})
    sf.FORMAT.write_results(iter([task]), definition, tmp_path)
    [block] = written_blocks(tmp_path)
    assert "Span 1: dog (Label: Irrelevant)\nSpan 2: cat (Label: Incoherent)\n\n" in block
    assert [m[0] for m in sf.SPAN_REGEX.findall(block)] == ["dog", "cat"]


def test_failed_write_leaves_no_partial_file(tmp_path: Path, definition: Definition) -> None:
    (tmp_path / "summary-flaws.txt").write_text("old", encoding="utf-8")

    def tasks() -> Any:
        yield ExportedTask(**{**small_task().__dict__, "annotations": (annotation([span(2, 5)]),)})
        raise RuntimeError("export broke")

    with pytest.raises(RuntimeError):
        sf.FORMAT.write_results(tasks(), definition, tmp_path)
    assert (tmp_path / "summary-flaws.txt").read_text(encoding="utf-8") == "old"
    assert not (tmp_path / "summary-flaws.jsonl").exists()
    assert [p.name for p in tmp_path.iterdir()] == ["summary-flaws.txt"]


@pytest.mark.parametrize(
    ("summary", "marked", "problem"),
    [
        ("He went (Label: home) at 9 and slept.", "went (Label: home)", "holds ' (Label: '"),
        ("The notes say None identified here.", "say None identified", "holds 'None identified'"),
        ("First line.\nSecond line.", "line.\nSecond", "holds a line break"),
    ],
)
def test_spans_the_seed_regex_would_read_back_otherwise_are_flagged(
    definition: Definition, summary: str, marked: str, problem: str
) -> None:
    start = summary.index(marked)
    item = span(start, start + len(marked), text=marked)
    task = ExportedTask(id=3, key="summary-flaws:k", data={"document": "D.", "summary": summary}, systems=(),
                        annotations=())  # fmt: skip
    found = sf.FORMAT.check(task, annotation([item, choice("missing_key_information", "No")]), definition)
    assert [v.rule for v in found] == ["span-parses-back"] and problem in found[0].found
    # What the seed's consuming code reads back from the block we write is not the span.
    block = sf.answer_block([(marked, "Irrelevant")], "No", sf.names_for(definition))
    parsed = re.findall(r"Span \d+: (.*?)( \(Label: .*?\))?(\n|$)", block)
    if "None identified" in marked:  # the regex reads it, but the block now says nothing was found
        assert parsed[0][0] == marked and "None identified" in block
    else:
        assert parsed and parsed[0][0] != marked


def test_push_warns_about_a_summary_with_line_breaks(tmp_path: Path, definition: Definition) -> None:
    task = one_task(tmp_path, definition, {"summary": "One.\nTwo.", "document": "D."})
    assert [str(w) for w in task.warnings] == [
        f"{tmp_path / 'in.jsonl'}, line 1: field 'summary' holds line breaks: the seed's pipeline flattens them to "
        "spaces before the critic sees it, and a span across one does not parse back from summary-flaws.txt"
    ]
    assert not one_task(tmp_path, definition, {"summary": "One. Two.", "document": "D."}).warnings


def test_what_a_real_spreadsheet_holds_is_read_with_warnings(tmp_path: Path, definition: Definition) -> None:
    """A BOM, CRLF, stray spaces and NBSP around header names, trailing empty columns, empty rows,
    and a note beside the table after an empty column: the same tasks as the clean file."""
    records = [{"id": str(i), "summary": f"Summary {i}.", "document": f"Doc {i}.", "model": "m"} for i in range(3)]
    clean = write_jsonl(tmp_path / "clean.jsonl", records)
    rows = [[" id", "summary\u00a0", "document ", "model", "", ""]]
    rows += [[r["id"], r["summary"], r["document"], r["model"], "", ""] for r in records]
    rows.insert(2, [""] * 6)
    rows[3] += ["", "a note"]
    messy = tmp_path / "messy.csv"
    with messy.open("w", encoding="utf-8", newline="") as f:
        csv.writer(f, lineterminator="\r\n").writerows(rows)
    messy.write_bytes(b"\xef\xbb\xbf" + messy.read_bytes())
    expected = list(sf.FORMAT.read([clean], definition))
    tasks = list(sf.FORMAT.read([messy], definition))
    assert [(t.key, t.data, t.systems) for t in tasks] == [(t.key, t.data, t.systems) for t in expected]
    assert [str(w) for t in tasks for w in t.warnings] == [
        f"{messy}, line 4: ignored a note beside the table in column 8 ('a note')"
    ]
