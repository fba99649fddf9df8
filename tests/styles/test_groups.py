"""Ratings with many systems, a few per task (``[groups]``): the definition, the balanced groups
annols makes from one record per system output, the reference in every task, the errors that
name file, line and field, blinding, and judges naming candidates as the task shows them."""

from __future__ import annotations

import itertools
import json
import math
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from annols import protocols
from annols.definition import Definition, blinding, design
from annols.errors import DefinitionError, InputError
from annols.formats import SourceTask, format_for
from annols.protocols import config, load_definition
from annols.study import push
from annols.study.judges import Judges, read_judges
from annols.styles import decode
from annols.styles.answers import ExportedAnnotation, ExportedTask
from annols.styles.judgments import Rating
from tests.conftest import DATA, ROOT

EXAMPLE = ROOT / "examples" / "da-groups.toml"
EXAMPLE_INPUT = ROOT / "examples" / "da-groups.jsonl"

DEFINITION = """
name = "many"
style = "ratings"
summary = "Rate outputs."
guideline = "Rate each output."
{groups}

[[context]]
name = "document"
title = "Document"
{panes}

[[answers]]
code = "1"

[[answers]]
code = "2"

[[answers]]
code = "3"

[[aspects]]
name = "quality"
text = "Quality"
"""


def definition(tmp_path: Path, panes: int = 3, groups: str = '[groups]\nfield = "output"') -> Definition:
    text = DEFINITION.format(groups=groups, panes="".join(
        f'\n[[candidates]]\nname = "output_{i}"\ntitle = "Output {i}"\n' for i in range(1, panes + 1)))  # fmt: skip
    path = tmp_path / "many.toml"
    path.write_text(text, encoding="utf-8")
    return load_definition(path)


def outputs(tmp_path: Path, items: int, systems: list[str], name: str = "in.jsonl") -> Path:
    """One record per system output: `items` documents, every system's text naming both."""
    path = tmp_path / name
    lines = [{"document": f"doc {d}", "system": s, "output": f"{s} on doc {d}"} for d in range(items) for s in systems]
    path.write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
    return path


def by_item(tasks: list[SourceTask]) -> dict[str, list[tuple[str, ...]]]:
    out: dict[str, list[tuple[str, ...]]] = {}
    for t in tasks:
        out.setdefault(t.data["document"], []).append(t.systems)
    return out


# --- the definition -------------------------------------------------------------------------------


def test_example_loads_reads_the_groups_format_and_keeps_its_config(tmp_path: Path) -> None:
    d = protocols.load(str(EXAMPLE))
    assert d.spec.groups is not None
    assert (d.spec.groups.field, d.spec.groups.appearances, d.spec.groups.reference) == ("translation", 2, "human")
    assert format_for(d).name == "groups"
    # [groups] changes the input and the tasks, never what annotators see.
    plain = EXAMPLE.read_text("utf-8").split("[groups]")[0] + "[[context]]" + \
        EXAMPLE.read_text("utf-8").split("[[context]]", 1)[1]  # fmt: skip
    (tmp_path / "plain.toml").write_text(plain, encoding="utf-8")
    without = load_definition(tmp_path / "plain.toml")
    assert without.spec.groups is None and format_for(without).name == "generic"
    assert config.label_config(d) == config.label_config(without)
    assert config.label_config(d) == (DATA / "configs" / "da-groups.xml").read_text("utf-8"), (
        "regenerate with `annols config examples/da-groups.toml -o tests/data/configs/da-groups.xml`"
    )
    assert config.data_fields(d) == ["source_text", "translation_1", "translation_2", "translation_3",
                                     "translation_4"]  # fmt: skip


def test_defaults(tmp_path: Path) -> None:
    groups = definition(tmp_path).spec.groups
    assert (groups.field, groups.appearances, groups.reference) == ("output", 1, "")


@pytest.mark.parametrize(("panes", "groups", "message"), [
    (3, '[groups]\nfield = "document"', "groups.field: 'document' is a context pane's field"),
    (3, '[groups]\nfield = "system"', "groups.field: 'system' is the system's field"),
    (3, '[groups]\nappearances = 2', "groups.field: missing"),
    (3, '[groups]\nfield = "output"\nappearances = 0', "groups.appearances: 0 must be at least 1"),
    (3, '[groups]\nfield = "output"\nreference = " "', "groups.reference: must not be empty"),
    (1, '[groups]\nfield = "output"\nreference = "human"', "groups.reference: the reference fills one of the"),
    (3, '[groups]\nfield = "output"\nrefrence = "human"', "groups.refrence: unknown key"),
    (3, '[groups]\nfield = "output"\nappearances = "2"', "groups.appearances: expected a whole number"),
])  # fmt: skip
def test_bad_groups_name_the_field(tmp_path: Path, panes: int, groups: str, message: str) -> None:
    with pytest.raises(DefinitionError) as caught:
        definition(tmp_path, panes, groups)
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_groups_only_in_ratings(tmp_path: Path) -> None:
    text = (ROOT / "examples" / "chat-arena.toml").read_text("utf-8") + '\n[groups]\nfield = "response"\n'
    (tmp_path / "arena.toml").write_text(text, encoding="utf-8")
    with pytest.raises(DefinitionError, match="groups: unknown key"):
        load_definition(tmp_path / "arena.toml")


# --- the groups ------------------------------------------------------------------------------------

# (systems besides any reference, panes, appearances, reference)
DESIGNS = [(6, 3, 2, "human"), (6, 3, 1, ""), (6, 4, 2, "human"), (10, 4, 2, ""), (12, 3, 4, "ref"),
           (7, 4, 3, "ref"), (5, 3, 3, ""), (9, 3, 1, "")]  # fmt: skip


@pytest.mark.parametrize(("n", "panes", "appearances", "reference"), DESIGNS)
def test_groups_are_balanced_per_item_and_overall_with_the_reference_in_every_task(
    tmp_path: Path, n: int, panes: int, appearances: int, reference: str
) -> None:
    groups = f'[groups]\nfield = "output"\nappearances = {appearances}'
    groups += f'\nreference = "{reference}"' if reference else ""
    d = definition(tmp_path, panes, groups)
    systems = [f"sys{i:02d}" for i in range(n)]
    items = 8
    path = outputs(tmp_path, items, ([reference] if reference else []) + systems)
    tasks = list(format_for(d).read([path], d))
    slots = panes - bool(reference)
    assert len(tasks) == items * design.tuple_count(n, slots, appearances)
    overall: Counter[str] = Counter()
    overall_pairs: Counter[tuple[str, str]] = Counter()
    for document, shown in by_item(tasks).items():
        for t in shown:
            assert len(t) == panes and len(set(t)) == panes
            if reference:
                assert t[0] == reference  # in every task; blinding shuffles it with the others at push
        rest = [tuple(s for s in t if s != reference) for t in shown]
        # Independently counted: each system in exactly `appearances` tasks of the item.
        assert Counter(s for t in rest for s in t) == dict.fromkeys(systems, appearances)
        met = Counter(pair for t in rest for pair in itertools.combinations(sorted(t), 2))
        counts = [met[pair] for pair in itertools.combinations(systems, 2)]
        low, high = even(counts)
        assert low - 1 <= min(counts) and max(counts) <= high + 1, (document, counts)
        overall.update(s for t in rest for s in t)
        overall_pairs.update(met)
    assert set(overall.values()) == {items * appearances}  # every system equally often overall
    # Over the whole input the pairs meet as evenly as possible: within one of the most even spread of
    # these co-occurrences (every pair floor(mean) or ceil(mean) times), the sum of squared counts (what
    # the design minimises) within 3% of that spread's.
    counts = [overall_pairs[pair] for pair in itertools.combinations(systems, 2)]
    low, high = even(counts)
    assert low - 1 <= min(counts) and max(counts) <= high + 1, counts
    total, pairs = sum(counts), len(counts)
    best_squares = (pairs - (total - low * pairs)) * low**2 + (total - low * pairs) * high**2
    assert sum(c * c for c in counts) <= 1.03 * best_squares, counts


def even(counts: list[int]) -> tuple[int, int]:
    """floor and ceil of the mean: the most even spread of these co-occurrences has every pair at one of them."""
    return sum(counts) // len(counts), math.ceil(sum(counts) / len(counts))


def test_each_pane_holds_the_text_of_the_system_named_for_it_and_keys_are_stable(tmp_path: Path) -> None:
    d = protocols.load(str(EXAMPLE))
    tasks = list(format_for(d).read([EXAMPLE_INPUT], d))
    assert len(tasks) == 3 * 4  # three sentences; six systems x 2 appearances over three places: four tasks each
    text = {(r["source_text"], r["system"]): r["translation"]
            for r in map(json.loads, EXAMPLE_INPUT.read_text("utf-8").splitlines())}  # fmt: skip
    for t in tasks:
        assert set(t.data) == set(config.data_fields(d))  # nothing else travels: no system name in the data
        for i, system in enumerate(t.systems):
            assert t.data[f"translation_{i + 1}"] == text[(t.data["source_text"], system)]
    again = list(format_for(d).read([EXAMPLE_INPUT], d))
    assert [t.key for t in again] == [t.key for t in tasks] and len({t.key for t in tasks}) == len(tasks)
    # The input in another order is the same items and the same tasks.
    reversed_input = tmp_path / "reversed.jsonl"
    reversed_input.write_text("".join(reversed(EXAMPLE_INPUT.read_text("utf-8").splitlines(True))), "utf-8")
    assert {t.key for t in format_for(d).read([reversed_input], d)} == {t.key for t in tasks}

    # Pushed: systems hidden, positions shuffled per task from --seed (the reference too), and the
    # meta names the system behind the text at each position.
    for seed in (1, 2):
        built = list(push.build_tasks(d, [EXAMPLE_INPUT], seed=seed))
        assert [b[0] for b in built] == [t.key for t in tasks]
        positions = {b[1].index("human") for b in built}
        assert len(positions) > 1
        for _, shown, payload, _ in built:
            assert set(payload["meta"]) == {blinding.META_KEY}  # the systems shown stay in the manifest
            assert not any(s in json.dumps(payload["data"]) for s in shown)
            for i, system in enumerate(shown):
                assert payload["data"][f"translation_{i + 1}"] == text[(payload["data"]["source_text"], system)]
    orders = [list(push.build_tasks(d, [EXAMPLE_INPUT], seed=s)) for s in (1, 1, 2)]
    assert [b[1] for b in orders[0]] == [b[1] for b in orders[1]] != [b[1] for b in orders[2]]


def test_an_item_with_as_many_outputs_as_places_is_one_task(tmp_path: Path) -> None:
    d = definition(tmp_path, 3, '[groups]\nfield = "output"\nappearances = 4\nreference = "ref"')
    tasks = list(format_for(d).read([outputs(tmp_path, 2, ["ref", "a", "b"])], d))
    assert [sorted(t.systems) for t in tasks] == [["a", "b", "ref"]] * 2


@pytest.mark.parametrize(("records", "groups", "found"), [
    ([{"document": "d", "output": "x"}], "", "line 1, field 'system': missing; every output needs the system"),
    ([{"document": "d", "system": "a"}], "", "line 1, field 'output': missing"),
    ([{"system": "a", "output": "x"}], "", "line 1, field 'document': missing"),
    ([{"document": "d", "system": s, "output": s} for s in "abca"], "",
     "line 4, field 'system': 'a' already has an output for this item"),
    ([{"document": "d", "system": s, "output": s} for s in "ab"], "",
     "line 1, field 'system': this item has 2 system output(s), fewer than the 3 a task shows"),
    ([{"document": "d", "system": s, "output": s} for s in "abcd"], '\nreference = "ref"',
     "line 1, field 'system': this item has no output of the reference system 'ref'"),
    ([{"document": "d", "system": s, "output": s} for s in ["ref", "a"]], '\nreference = "ref"',
     "line 1, field 'system': this item has 1 system output(s) besides the reference, fewer than the 2"),
    ([{"document": "d", "system": s, "output": s} for s in "abcd"], "",
     "line 1, field 'system': this item's 4 system outputs x appearances 1 = 4 places do not fill tasks of 3 "
     "evenly, so its systems would not be shown equally often; make appearances a multiple of 3"),
])  # fmt: skip
def test_input_errors_name_file_line_and_field(
    tmp_path: Path, records: list[dict[str, str]], groups: str, found: str
) -> None:
    d = definition(tmp_path, 3, '[groups]\nfield = "output"' + groups)
    path = tmp_path / "bad.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    with pytest.raises(InputError) as caught:
        list(format_for(d).read([path], d))
    assert str(caught.value) == f"{path}, {found}" or str(caught.value).startswith(f"{path}, {found}")


def test_csv_input_and_no_pre_annotations(tmp_path: Path) -> None:
    d = definition(tmp_path, 3)
    path = tmp_path / "in.csv"
    path.write_text("document,system,output\n" + "".join(f"d,{s},text {s}\n" for s in "abc"), encoding="utf-8")
    (task,) = format_for(d).read([path], d)
    assert sorted(task.systems) == ["a", "b", "c"] and task.data[f"output_{task.systems.index('b') + 1}"] == "text b"
    with pytest.raises(InputError, match="take no pre-annotations"):
        list(format_for(d).read_predictions([path], d))


# --- what comes back ---------------------------------------------------------------------------------


def exported(d: Definition, seed: int = 5) -> list[ExportedTask]:
    """The example's tasks as pull reads them back: systems as shown, and in the input's order."""
    out = []
    kept: dict[str, Any] = {}  # key -> what only the manifest keeps (the order shown among them)
    for n, (key, shown, payload, _) in enumerate(push.build_tasks(d, [EXAMPLE_INPUT], seed=seed, shown=kept)):
        order = kept[key].order
        out.append(ExportedTask(id=n + 1, key=key, data=payload["data"], systems=shown, annotations=(),
                                source_systems=blinding.source_order(shown, order)))  # fmt: skip
    return out


def slider(task: ExportedTask, value: Any) -> list[dict[str, Any]]:
    return [{"id": f"r{i}", "from_name": f"adequacy_translation_{i}", "to_name": f"translation_{i}",
             "type": "number", "value": {"number": value(task, i)}} for i in range(1, 5)]  # fmt: skip


def test_ratings_decode_to_the_system_whose_text_was_shown_and_judges_answer_as_shown(tmp_path: Path) -> None:
    d = protocols.load(str(EXAMPLE))
    system_of = {(r["source_text"], r["translation"]): r["system"]
                 for r in map(json.loads, EXAMPLE_INPUT.read_text("utf-8").splitlines())}  # fmt: skip
    tasks = exported(d)
    assert any(t.systems != t.source_systems for t in tasks)  # shuffled
    score = {s: 10 * i for i, s in enumerate(sorted({s for t in tasks for s in t.systems}))}

    def value(task: ExportedTask, pane: int) -> int:
        return score[system_of[(task.data["source_text"], task.data[f"translation_{pane}"])]]

    for t in tasks:
        ratings = [j for j in decode(d, t, ExportedAnnotation(id=1, annotator="a", result=slider(t, value)))
                   if isinstance(j, Rating)]  # fmt: skip
        assert len(ratings) == 4
        for j in ratings:
            assert j.system == system_of[(t.data["source_text"], t.data[j.candidate])]
            assert j.value == score[j.system]
    # A judge reading the task as annotators see it (`annols tasks`) names the panes as shown.
    judge = tmp_path / "judge.jsonl"
    judge.write_text("".join(json.dumps({"task": t.key, "judge": "j", "answers": {"adequacy": {
        f"translation_{i}": value(t, i) for i in range(1, 5)}}}) + "\n" for t in tasks), encoding="utf-8")  # fmt: skip
    judges = Judges(d, list(read_judges([judge], d)))
    for t in tasks:
        (annotation,) = judges.annotations(t)
        for j in decode(d, t, annotation):
            assert isinstance(j, Rating) and j.value == score[j.system]
    judges.check_used()
