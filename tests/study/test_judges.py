"""Judge files (annols.study.judges): every style's answers read into Label Studio results, and every
answer that does not fit the config refused with its file, line and field."""

from __future__ import annotations

import dataclasses
import json
import tomllib
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from annols.cli import main
from annols.errors import InputError
from annols.protocols import parse_definition
from annols.study.judges import Judges, read_judges
from annols.styles import decode
from annols.styles.answers import ExportedAnnotation, ExportedTask
from tests.judges_study import answers
from tests.own_study import ANSWER, STUDIES


def definition(style: str) -> Any:
    study = STUDIES[style]
    return parse_definition(tomllib.loads(study.definition), f"{study.name}.toml")


def write(tmp_path: Path, *lines: Any) -> Path:
    path = tmp_path / "judge.jsonl"
    path.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines), encoding="utf-8")
    return path


def task(style: str, item: int, shown: tuple[str, ...] | None = None) -> ExportedTask:
    record = STUDIES[style].record(item)
    systems = tuple(record.pop("systems"))
    data = {**record, "record": {"item": item, "id": f"rec-{item}"}}
    return ExportedTask(id=1, key=f"k{item}", data=data, systems=shown or systems, annotations=(),
                        source_systems=systems)  # fmt: skip


@pytest.mark.parametrize("style", list(STUDIES))
def test_every_style_reads_back_what_the_judge_meant_whatever_order_the_task_shows(style: str, tmp_path: Path) -> None:
    d = definition(style)
    study = STUDIES[style]
    item = 2
    truth = study.truth(item, "c")
    path = write(tmp_path, {"id": f"rec-{item}", "judge": "j1", "answers": answers(study, item, truth)})
    judges = Judges.read(d, [path])
    record_systems = tuple(study.record(item)["systems"])
    shown = tuple(reversed(record_systems))  # the task shows the candidates the other way round
    (found,) = judges.annotations(task(style, item, shown))
    judges.check_used()
    assert found.annotator == "judge:j1" and found.source == "judge"
    # what an annotator meaning the same gives on the task as shown decodes the same
    human = study.result(truth, shown)
    as_human = decode(d, task(style, item, shown), ExportedAnnotation(id=1, annotator="h", result=human))
    assert unregioned(decode(d, task(style, item, shown), found)) == unregioned(as_human)


def unregioned(judgments: list[Any]) -> list[Any]:
    """Region ids are the writer's own (a span's id): the same span otherwise."""
    return [dataclasses.replace(j, region="") if hasattr(j, "region") else j for j in judgments]


BAD: list[tuple[str, Any, str, str]] = [
    ("pairwise", "not json", "", "not JSON"),
    ("pairwise", ["a list"], "", "expected a JSON object"),
    ("pairwise", {"task": "k0", "judge": "j", "answers": {"helpful": "A"}, "extra": 1}, "extra", "unknown field"),
    ("pairwise", {"task": "k0", "judge": "bad name!", "answers": {"helpful": "A"}}, "judge", "not a name"),
    ("pairwise", {"task": "k0", "id": "x", "judge": "j", "answers": {"helpful": "A"}}, "task", "exactly one"),
    ("pairwise", {"task": "k0", "judge": "j", "answers": {}}, "answers", "missing or empty"),
    ("pairwise", {"task": "k0", "judge": "j", "answers": {"helpfull": "A"}}, "answers.helpfull", "no such control"),
    ("pairwise", {"task": "k0", "judge": "j", "answers": {"helpful": "C"}}, "answers.helpful", "not one of the codes"),
    ("pairwise", {"task": "k0", "judge": "j", "answers": {"helpful": ["A", "B"]}}, "answers.helpful", "exactly one"),
    ("ranking", {"task": "k0", "judge": "j", "answers": {"quality": {"D": 1}}}, "answers.quality.D", "no control"),
    ("ranking", {"task": "k0", "judge": "j", "answers": {"quality": {"A": 4}}}, "answers.quality.A", "not one of"),
    ("ratings", {"task": "k0", "judge": "j", "answers": {"coherence": {"summary_1": 6}}},
     "answers.coherence.summary_1", "not one of"),
    ("spans", {"task": "k0", "judge": "j", "answers": {"spans": [{"label": "Odd", "start": 0, "end": 3}]}},
     "answers.spans[0].label", "not one of the labels"),
    ("spans", {"task": "k0", "judge": "j", "answers": {"spans": [{"label": "Wrong", "start": 5, "end": 2}]}},
     "answers.spans[0].end", "after start"),
    ("spans", {"task": "k0", "judge": "j", "answers": {"spans": [{"label": "Wrong"}]}},
     "answers.spans[0]", "start and end, or the quoted text"),
    ("sentences", {"task": "k0", "judge": "j", "answers": {"severity": {"3": "minor"}}}, "answers.severity.3",
     "no control"),
]  # fmt: skip


@pytest.mark.parametrize(("style", "line", "field", "problem"), BAD)
def test_an_answer_that_does_not_fit_is_refused_with_file_line_and_field(
    style: str, line: Any, field: str, problem: str, tmp_path: Path
) -> None:
    good = {"task": "k9", "judge": "j", "answers": {"helpful": "A"}} if style == "pairwise" else None
    path = write(tmp_path, *([good] if good else []), line)
    with pytest.raises(InputError) as found:
        read_judges([path], definition(style))
    e = found.value
    assert e.source == str(path) and e.location == f"line {2 if good else 1}"
    assert e.field == field and problem in e.problem, str(e)


def test_spans_off_the_text_and_lines_about_no_task_are_refused_when_set_beside_the_tasks(tmp_path: Path) -> None:
    d = definition("spans")
    far = {"task": "k0", "judge": "j", "answers": {"spans": [{"label": "Wrong", "start": 0, "end": len(ANSWER) + 1}]}}
    absent = {"task": "k0", "judge": "j", "answers": {"spans": [{"label": "Wrong", "text": "the sea"}]}}
    wrong_quote = {"task": "k0", "judge": "j", "answers": {"spans": [{"label": "Wrong", "start": 4, "end": 9,
                                                                     "text": "north"}]}}  # fmt: skip
    cases = [(far, "answers.spans[0].end", "past the end"), (absent, "answers.spans[0].text", "not in the text"),
             (wrong_quote, "answers.spans[0].text", "is not the text at 4-9")]  # fmt: skip
    for line, field, problem in cases:
        judges = Judges.read(d, [write(tmp_path, line)])
        with pytest.raises(InputError) as found:
            judges.annotations(task("spans", 0))
        assert (found.value.location, found.value.field) == ("line 1", field) and problem in found.value.problem
    judges = Judges.read(d, [write(tmp_path, {"task": "k0", "judge": "j", "answers": {"adequacy": "2"}},
                                   {"id": "rec-7", "judge": "j", "answers": {"adequacy": "2"}})])  # fmt: skip
    judges.annotations(task("spans", 0))
    with pytest.raises(InputError) as found:
        judges.check_used()
    assert (found.value.location, found.value.field) == ("line 2", "id") and "no task of this study" in str(found.value)


def test_a_judge_answer_whose_task_was_deleted_is_skipped_and_named(tmp_path: Path) -> None:
    d = definition("spans")
    path = write(tmp_path, {"task": "k0", "judge": "j", "answers": {"adequacy": "2"}},
                 {"task": "k-deleted", "judge": "j", "answers": {"adequacy": "2"}})  # fmt: skip
    judges = Judges.read(d, [path])
    judges.annotations(task("spans", 0))
    assert judges.check_used(gone={"k-deleted"}) == [f"{path}, line 2"]  # a warning of pull, not a failure
    with pytest.raises(InputError):
        judges.check_used()


def test_a_judge_answering_a_task_twice_is_refused(tmp_path: Path) -> None:
    line = {"task": "k0", "judge": "j", "answers": {"helpful": "A"}}
    with pytest.raises(InputError) as found:
        read_judges([write(tmp_path, line, line)], definition("pairwise"))
    assert found.value.location == "line 2" and "already answered" in found.value.problem


def test_push_refuses_a_bad_judge_file_before_contacting_any_server(tmp_path: Path) -> None:
    study = STUDIES["pairwise"]
    toml = tmp_path / "own.toml"
    toml.write_text(study.definition, encoding="utf-8")
    inputs = tmp_path / "inputs.jsonl"
    inputs.write_text("".join(json.dumps(study.record(i)) + "\n" for i in range(3)), encoding="utf-8")
    judge = write(tmp_path, {"task": "nope", "judge": "j", "answers": {"helpful": "A"}})
    env = {"LABEL_STUDIO_URL": "http://127.0.0.1:9", "LABEL_STUDIO_API_KEY": "secret-token-x"}
    result = CliRunner(env=env).invoke(main, ["push", str(toml), str(inputs), "--project", "p", "--judge", str(judge)])
    assert result.exit_code != 0
    assert result.stderr.strip().splitlines() == [f"Error: {judge}, line 1, field 'task': task 'nope' is no task of "
                                                  "this study"]  # fmt: skip
    assert "secret-token-x" not in result.output + result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / ".annols").exists()


MQM = Path(__file__).resolve().parents[2] / "examples" / "mqm.toml"


def test_a_span_carries_its_own_answers_and_they_weigh_as_an_annotators(tmp_path: Path) -> None:
    """MQM: a judge's span takes its severity (a per-span question) in the span's answers; decoded, the span has
    the answer an annotator's region has, and weighs the same in the error score."""
    from annols import protocols

    d = protocols.load(str(MQM))
    hypothesis = "The train to Hamburg falls out today, because a strike."
    line = {"task": "k0", "judge": "j", "answers": {"spans": [
        {"label": "Accuracy", "text": "falls out", "answers": {"severity": "major"}},
        {"label": "Fluency/Punctuation", "start": 36, "end": 37, "answers": {"severity": "Minor"}},  # by its text
        {"label": "Non-translation", "text": "Hamburg"}]}}  # fmt: skip
    judges = Judges.read(d, [write(tmp_path, line)])
    shown = ExportedTask(id=1, key="k0", data={"source": "Der Zug", "reference": "r", "hypothesis": hypothesis},
                         systems=("sys-b",), annotations=(), source_systems=("sys-b",))  # fmt: skip
    (found,) = judges.annotations(shown)
    spans = decode(d, shown, found)
    assert [(s.label, s.text, s.answers) for s in spans] == [
        ("Accuracy", "falls out", {"severity": ("major",)}), ("Fluency/Punctuation", ",", {"severity": ("minor",)}),
        ("Non-translation", "Hamburg", {})]  # fmt: skip
    assert [d.spec.weight_of(s.label, s.answers.get("severity", ())) for s in spans] == [5, 0.1, 25]


@pytest.mark.parametrize(("answers", "field", "problem"), [
    ({"severity": "major"}, "answers.severity", "is asked per span: give it in a span's answers"),
    ({"spans": [{"label": "Style", "text": "x", "answers": {"severty": "major"}}]},
     "answers.spans[0].answers.severty", "no per-span question 'severty' in the config; per-span questions: severity"),
    ({"spans": [{"label": "Style", "text": "x", "answers": {"severity": "fatal"}}]},
     "answers.spans[0].answers.severity", "'fatal' is not one of the codes ['major', 'minor']"),
    ({"spans": [{"label": "Style", "text": "x", "answers": ["major"]}]}, "answers.spans[0].answers",
     "must be an object"),
])  # fmt: skip
def test_a_spans_own_answer_that_does_not_fit_is_refused(answers: Any, field: str, problem: str,
                                                         tmp_path: Path) -> None:  # fmt: skip
    from annols import protocols

    with pytest.raises(InputError) as found:
        read_judges([write(tmp_path, {"task": "k0", "judge": "j", "answers": answers})], protocols.load(str(MQM)))
    assert (found.value.location, found.value.field) == ("line 1", field) and problem in found.value.problem
