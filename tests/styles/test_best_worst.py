"""The best-worst style: its definitions, config, tuple design, input format, decoding and validation."""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path
from typing import Any

import pytest
from label_studio_sdk.label_interface import LabelInterface
from lxml import etree

from annols import protocols
from annols.definition import blinding, design
from annols.errors import DefinitionError, InputError
from annols.formats import format_for
from annols.protocols import config, load_definition
from annols.study import push
from annols.styles import decode
from annols.styles.answers import ExportedAnnotation, ExportedTask
from annols.styles.judgments import BestWorst, tidy
from tests.conftest import ROOT

EXAMPLE = ROOT / "examples" / "summary-best-worst.toml"
EXAMPLE_INPUT = ROOT / "examples" / "summary-best-worst.jsonl"

SMALL = """
name = "bws"
style = "best-worst"
summary = "Best and worst."
guideline = "Pick."
{extra}

[candidate]
name = "headline"
title = "Headline"

[[aspects]]
name = "clarity"
text = "Clarity"
"""


def load(tmp_path: Path, extra: str = "") -> object:
    path = tmp_path / "bws.toml"
    path.write_text(SMALL.format(extra=extra), encoding="utf-8")
    return load_definition(path)


DESIGNS = [(5, 4, 4), (5, 4, 8), (7, 3, 6), (10, 4, 8), (12, 4, 8), (16, 4, 8), (20, 4, 8), (30, 5, 10), (100, 4, 8)]


@pytest.mark.parametrize(("k", "n", "appearances"), DESIGNS)
def test_design_each_candidate_equally_often_and_pairs_as_even_as_possible(k: int, n: int, appearances: int) -> None:
    tuples = design.tuples(k, n, appearances, seed="s")  # the example's pools are 5 of 4, 4 times
    assert len(tuples) == design.tuple_count(k, n, appearances)
    assert all(len(set(t)) == n and all(0 <= c < k for c in t) for t in tuples)
    # Independently counted: every candidate in exactly `appearances` tuples (k * appearances divides by n here).
    used = [sum(c in t for t in tuples) for c in range(k)]
    assert used == [appearances] * k
    met = [sum(a in t and b in t for t in tuples) for a, b in itertools.combinations(range(k), 2)]
    # As even as possible: the most even spread of these co-occurrences over the pairs has every pair
    # meet floor(mean) or ceil(mean) times; the design is within one of that, and its sum of squared
    # counts (what it minimises) within 3% of that spread's.
    total, pairs = sum(met), len(met)
    low, high = total // pairs, math.ceil(total / pairs)
    above = total - low * pairs
    best_squares = (pairs - above) * low**2 + above * high**2
    assert low - 1 <= min(met) and max(met) <= high + 1, (min(met), max(met), total / pairs)
    assert sum(m * m for m in met) <= 1.03 * best_squares
    assert design.balance(k, tuples) == design.Balance((appearances, appearances), (min(met), max(met)))
    assert design.tuples(k, n, appearances, seed="s") == tuples  # deterministic
    assert design.tuples(k, n, appearances, seed="other") != tuples or k == n


def test_design_uneven_total_and_too_small_pool() -> None:
    tuples = design.tuples(7, 4, 2, seed=1)  # 14 places in 4 tuples of 4: two candidates get a third
    used = sorted(sum(c in t for t in tuples) for c in range(7))
    assert len(tuples) == 4 and used[0] >= 2 and used[-1] <= 3
    with pytest.raises(ValueError, match="cannot fill"):
        design.tuples(3, 4, 2, seed=1)


def test_config_has_required_best_and_worst_per_aspect_and_the_sdk_reads_it() -> None:
    d = protocols.load(str(EXAMPLE))
    xml = config.label_config(d)
    interface = LabelInterface(xml)
    names = {c.name for c in interface.controls}
    assert names == {"informativeness_best", "informativeness_worst", "fluency_best", "fluency_worst"}
    for name in names:
        control = interface.get_control(name)
        assert control.attr["required"] == "true" and control.attr["choice"] == "single-radio"
        assert control.labels == ["A", "B", "C", "D"]  # the sdk names a choice by its alias
    tree = etree.fromstring(xml.encode("utf-8"))
    assert [c.get("alias") for c in tree.iter("Choice")] == list("ABCD") * 4
    assert config.data_fields(d) == ["document", "summary_1", "summary_2", "summary_3", "summary_4"]
    assert blinding.candidate_fields(d) == ["summary_1", "summary_2", "summary_3", "summary_4"]


@pytest.mark.parametrize(("extra", "message"), [
    ("tuple_size = 1", "tuple_size"),
    ("tuple_size = 11", "tuple_size"),
    ("appearances = 0", "appearances"),
    ('[[context]]\nname = "headline_2"\ntitle = "Other"', "candidate.name: the candidate field 'headline_2' has the "
     "same name as the context pane 'headline_2'"),
    ('[[questions]]\nname = "clarity_worst"\ntext = "Q"\nkind = "text"', "questions[0].name: the question "
     "'clarity_worst' has the same name as the worst answer of aspect 'clarity'"),
])  # fmt: skip
def test_bad_definitions_name_the_field(tmp_path: Path, extra: str, message: str) -> None:
    with pytest.raises(DefinitionError) as caught:
        load(tmp_path, extra)
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_defaults(tmp_path: Path) -> None:
    d = load(tmp_path)
    assert (d.spec.tuple_size, d.spec.appearances) == (4, 8)  # type: ignore[attr-defined]


def records(tmp_path: Path, lines: list[dict[str, str]]) -> Path:
    path = tmp_path / "in.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
    return path


def test_format_makes_balanced_tuples_per_pool_with_stable_keys(tmp_path: Path) -> None:
    d = protocols.load(str(EXAMPLE))
    tasks = list(format_for(d).read([EXAMPLE_INPUT], d))
    assert len(tasks) == 3 * 5  # three pools of five, appearances 4: five tuples each
    by_document: dict[str, list[tuple[str, ...]]] = {}
    for t in tasks:
        by_document.setdefault(t.data["document"], []).append(t.systems)
    source = [json.loads(x) for x in EXAMPLE_INPUT.read_text("utf-8").splitlines()]
    text = {(r["document"], r["id"]): r["summary"] for r in source}
    for t in tasks:
        for i, system in enumerate(t.systems):
            assert t.data[f"summary_{i + 1}"] == text[(t.data["document"], system)]
    for systems in by_document.values():
        counts = {s: sum(s in t for t in systems) for s in {x for t in systems for x in t}}
        assert sorted(counts.values()) == [4] * 5
    again = [t.key for t in format_for(d).read([EXAMPLE_INPUT], d)]
    assert again == [t.key for t in tasks] and len(set(again)) == len(again)
    # Pushed: the systems hidden, shuffled per task from the seed.
    kept: dict[str, Any] = {}  # what only the manifest keeps: the order shown
    built = list(push.build_tasks(d, [EXAMPLE_INPUT], seed=7, shown=kept))
    assert len({tuple(kept[b[0]].order) for b in built}) > 1
    for _, shown, payload, _ in built:
        assert not any(s in json.dumps(payload) for s in shown)


@pytest.mark.parametrize(("lines", "found"), [
    ([{"document": "d", "summary": "s"}], "line 1, field 'id': missing"),
    ([{"document": "d", "summary": "s", "id": "x"}, {"document": "d", "summary": "t", "id": "x"}],
     "line 2, field 'id': 'x' is already a candidate"),
    ([{"document": "d", "summary": f"s{i}", "id": f"x{i}"} for i in range(3)],
     "line 1, field 'id': this pool has 3 candidates, fewer than tuple_size 4"),
])  # fmt: skip
def test_format_errors_name_file_line_and_field(tmp_path: Path, lines: list[dict[str, str]], found: str) -> None:
    d = protocols.load(str(EXAMPLE))
    path = records(tmp_path, lines)
    with pytest.raises(InputError) as caught:
        list(format_for(d).read([path], d))
    assert str(caught.value).startswith(f"{path}, {found}")


def answer(best: str, worst: str, aspect: str = "informativeness") -> list[dict[str, object]]:
    return [{"id": f"{aspect}{end}", "from_name": f"{aspect}_{end}", "to_name": "summary_1", "type": "choices",
             "value": {"choices": [letter]}} for end, letter in (("best", best), ("worst", worst))]  # fmt: skip


def test_decode_unblinds_and_validate_flags_best_equal_to_worst() -> None:
    d = protocols.load(str(EXAMPLE))
    systems = ("s1", "s2", "s3", "s4")
    task = ExportedTask(id=1, key="summary-best-worst:00000000000000000000", data={}, systems=systems,
                        annotations=())  # fmt: skip
    good = ExportedAnnotation(id=1, annotator="a@x", result=answer("C", "A") + answer("Summary B", "D", "fluency"))
    assert decode(d, task, good) == [BestWorst("informativeness", systems, 2, 0), BestWorst("fluency", systems, 1, 3)]
    rows = list(tidy(decode(d, task, good)))
    assert [(r[1], r[2], r[4], r[5]) for r in rows[:4]] == [
        ("informativeness", "s1", -1, "worst"), ("informativeness", "s2", 0, ""),
        ("informativeness", "s3", 1, "best"), ("informativeness", "s4", 0, ""),
    ]  # fmt: skip
    same = ExportedAnnotation(id=2, annotator="a@x", result=answer("B", "B"))
    assert decode(d, task, same) == [BestWorst("informativeness", systems, 1, 1)]
    assert list(tidy(decode(d, task, same))) == []  # says nothing: not counted
    fmt = format_for(d)
    assert fmt.check(task, good, d) == []
    (violation,) = fmt.check(task, same, d)
    assert violation.rule == "best-differs-from-worst" and "'s2' chosen as both best and worst" in violation.found
    missing = ExportedAnnotation(id=3, annotator="a@x", result=answer("B", "C")[:1])
    assert decode(d, task, missing) == []
