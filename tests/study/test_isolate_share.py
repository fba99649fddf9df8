"""Isolated studies whose tasks go to some annotators, not all (``push --isolate --overlap K``), without a server:
the draw (balanced, seeded with the study's secret, whole items, kept by a re-push), the refusals of a re-push
that would change it (each before any instance is asked), and the merge's overlap."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from annols import protocols
from annols.cli import main
from annols.errors import AnnolsError, OptionError
from annols.formats import format_for
from annols.study import hybrid, isolate
from annols.study import push as push_lib
from annols.study.exports import PROJECT_FILE
from tests.definition.test_definition import MINIMAL, write
from tests.study.test_isolate_merge import _instance_pull

SECRET = b"s" * 32
PEOPLE = [f"a{n}@example.org" for n in range(10)]
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _units(n: int) -> dict[str, list[str]]:
    return {f"t{i:03d}": [f"t{i:03d}"] for i in range(n)}


def _count(assignment: dict[str, list[str]], people: list[str]) -> dict[str, int]:
    found = dict.fromkeys(people, 0)
    for who in assignment.values():
        for a in who:
            found[a] += 1
    return found


@pytest.mark.parametrize(("tasks", "k"), [(600, 3), (601, 3), (7, 1), (5, 10), (3, 4), (0, 2)])
def test_each_task_goes_to_k_distinct_annotators_balanced_within_one(tasks: int, k: int) -> None:
    drawn = isolate.draw(_units(tasks), PEOPLE, k, seed=0, secret=SECRET)
    assert sorted(drawn) == sorted(_units(tasks))
    assert all(len(set(who)) == len(who) == k and set(who) <= set(PEOPLE) for who in drawn.values())
    counts = _count(drawn, PEOPLE)
    assert max(counts.values()) - min(counts.values()) <= 1, counts
    assert sum(counts.values()) == tasks * k


def test_the_draw_is_seeded_with_the_seed_and_the_secret_and_ignores_the_files_order() -> None:
    one = isolate.draw(_units(60), PEOPLE, 3, seed=4, secret=SECRET)
    assert isolate.draw(_units(60), list(reversed(PEOPLE)), 3, seed=4, secret=SECRET) == one
    items = dict(reversed(_units(60).items()))  # the input's order of records: not part of the draw
    assert isolate.draw(items, PEOPLE, 3, seed=4, secret=SECRET) == one
    assert isolate.draw(_units(60), PEOPLE, 3, seed=5, secret=SECRET) != one
    # From the seed alone (which a study may publish) nobody can tell who else judges a task.
    assert isolate.draw(_units(60), PEOPLE, 3, seed=4, secret=b"t" * 32) != one


def test_items_of_several_tasks_go_whole_to_the_same_annotators() -> None:
    sizes = [1, 2, 3, 4, 5, 3, 2, 1, 4, 4, 2, 3]
    items = {f"item{i}": [f"item{i}-{j}" for j in range(size)] for i, size in enumerate(sizes)}
    people = PEOPLE[:4]
    drawn = isolate.draw(items, people, 2, seed=1, secret=SECRET)
    for keys in items.values():
        assert len({tuple(drawn[k]) for k in keys}) == 1  # one set of annotators for the item's every task
    counts = _count(drawn, people)
    assert max(counts.values()) - min(counts.values()) <= max(sizes), counts  # within the largest item


@pytest.mark.parametrize("example", ["esa", "summary-best-worst"])
def test_best_worst_tuples_and_span_candidates_are_items(example: str) -> None:
    """What push draws over: an article's tuples, a source's candidates, each one item."""
    d = protocols.load(str(EXAMPLES / f"{example}.toml"))
    source = [EXAMPLES / f"{example}.jsonl"]
    context = "source" if example == "esa" else "document"
    tasks = list(format_for(d).read(source, d))
    items = hybrid.items_of(d, source)
    assert len(items) == len({t.data[context] for t in tasks}) < len(tasks)
    drawn = isolate.draw(items, PEOPLE[:3], 1, seed=0, secret=SECRET)
    by_context: dict[str, set[str]] = {}
    for t in tasks:
        by_context.setdefault(t.data[context], set()).update(drawn[t.key])
    assert all(len(who) == 1 for who in by_context.values())


def test_a_re_push_keeps_the_draw_and_balances_what_is_new() -> None:
    first = isolate.draw(_units(30), PEOPLE[:4], 2, seed=0, secret=SECRET)
    again = isolate.draw(_units(30), PEOPLE[:4], 2, seed=0, secret=SECRET, earlier=first)
    assert again == first
    more = isolate.draw(_units(45), PEOPLE[:4], 2, seed=0, secret=SECRET, earlier=first)
    assert {k: more[k] for k in first} == first  # nothing moves
    counts = _count(more, PEOPLE[:4])
    assert max(counts.values()) - min(counts.values()) <= 1
    # A task added to an item drawn before goes to that item's annotators.
    grown = isolate.draw({**_units(30), "t000": ["t000", "t000b"]}, PEOPLE[:4], 2, seed=0,
                         secret=SECRET, earlier=first)  # fmt: skip
    assert grown["t000b"] == first["t000"]


def test_the_study_file_round_trips_with_one_line_per_task(tmp_path: Path) -> None:
    record = {"project": "p", "protocol": "x", "variant": None, "overlap": 2, "seed": 0, "annotators": PEOPLE[:2],
              "instances": [], "assignment": {"k1": PEOPLE[:2], "k2": [PEOPLE[1]]}}  # fmt: skip
    text = isolate._dumps(record)
    assert json.loads(text) == record
    assert '    "k1": ["a0@example.org", "a1@example.org"],\n' in text
    assert json.loads(isolate._dumps({**record, "assignment": {}})) == {**record, "assignment": {}}
    plain = {"project": "p", "protocol": "x", "variant": None, "instances": []}
    assert isolate._dumps(plain) == json.dumps(plain, indent=2) + "\n"  # a study on every instance: as it was


# --- refusals, before any instance is asked (none of these answers) -----------------------------


def _instances(n: int) -> list[isolate.Instance]:
    return [isolate.Instance(p, "http://127.0.0.1:9", None, "ANNOLS_TEST_UNSET_KEY") for p in PEOPLE[:n]]


def _study(tmp_path: Path, title: str = "shared", **recorded: object) -> push_lib.PushOptions:
    """Push options of an isolated study whose study file records ``recorded`` and one pushed instance."""
    options = push_lib.PushOptions(title=title, manifest_dir=tmp_path / ".annols")
    path = isolate.study_file(options.manifest_dir, options.title)
    path.parent.mkdir(parents=True, exist_ok=True)
    record = {"project": title, "protocol": "headline-check", "variant": None, **recorded,
              "instances": [{"annotator": PEOPLE[0], "url": "http://127.0.0.1:9", "project_id": 1, "user_id": 2}]}
    path.write_text(isolate._dumps(record), encoding="utf-8")  # fmt: skip
    return options


def _push(tmp_path: Path, options: push_lib.PushOptions, n: int = 3, **change: object) -> None:
    inputs = tmp_path / "study.jsonl"
    inputs.write_text(json.dumps({"headline_1": "a", "headline_2": "b", "id": 1}) + "\n", encoding="utf-8")
    d = protocols.load(str(write(tmp_path, MINIMAL)))
    isolate.push(_instances(n), d, [inputs], replace(options, **change))  # type: ignore[arg-type]


def test_a_re_push_that_would_change_the_draw_is_refused(tmp_path: Path) -> None:
    options = _study(tmp_path, overlap=2, seed=3, annotators=PEOPLE[:3])
    path = isolate.study_file(options.manifest_dir, options.title)
    with pytest.raises(OptionError, match=r"drawn with --overlap 2 --seed 3; this push asks for --overlap 1 --seed 3"):
        _push(tmp_path, options, overlap=1, seed=3)
    with pytest.raises(OptionError, match=r"this push asks for --overlap 2 --seed 0: push with the recorded ones"):
        _push(tmp_path, options, seed=0)  # no --overlap: the recorded K, but another seed
    with pytest.raises(AnnolsError, match=r"a3@example\.org was not among them: an annotator who joins later"):
        _push(tmp_path, options, 4, overlap=2, seed=3)
    with pytest.raises(AnnolsError, match=r"the instance of a2@example\.org is missing from the instances file"):
        _push(tmp_path, options, 2, overlap=2, seed=3)
    # The recorded K and seed, the same annotators: on to the instances (which do not answer here).
    with pytest.raises(AnnolsError, match="needs its API token in the environment variable"):
        _push(tmp_path, options, seed=3)
    assert json.loads(path.read_text(encoding="utf-8"))["overlap"] == 2  # nothing written before they answer

    every = _study(tmp_path / "every")
    with pytest.raises(OptionError, match=r"the study went to every instance \(pushed without --overlap\)"):
        _push(tmp_path, every, overlap=1)


def test_overlap_beyond_the_instances_is_refused_in_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("headlines.toml").write_text(MINIMAL, encoding="utf-8")
    Path("study.jsonl").write_text(json.dumps({"headline_1": "a", "headline_2": "b", "id": 1}) + "\n",
                                   encoding="utf-8")  # fmt: skip
    one = '[[instance]]\nannotator = "{}"\nurl = "http://127.0.0.1:9"\napi_key_env = "ANNOLS_TEST_UNSET_KEY"\n'
    Path("two.toml").write_text(one.format(PEOPLE[0]) + one.format(PEOPLE[1]), encoding="utf-8")
    runner = CliRunner(env={"LABEL_STUDIO_URL": None, "LABEL_STUDIO_API_KEY": None, "ANNOLS_DATA_DIR": None})
    for k in ("3", "0"):
        result = runner.invoke(main, ["push", "headlines.toml", "study.jsonl", "--project", "p", "--isolate",
                                      "two.toml", "--overlap", k])  # fmt: skip
        assert result.exit_code != 0 and "Traceback" not in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr
        assert f"--overlap: {k}: with --isolate each task goes to that many of the 2 instance(s)" in result.stderr
        assert "give 1 to 2" in result.stderr
    assert not Path(".annols").exists()


# --- the merge -----------------------------------------------------------------------------------


def test_the_merge_of_disjoint_instances_holds_each_task_once_with_overlap_k(tmp_path: Path) -> None:
    """Two instances, one task each (--overlap 1): the merged export holds both, each with its one
    annotator, and the merged project's overlap is K, not the number of instances."""
    definition = protocols.load(str(write(tmp_path, MINIMAL)))
    a = _instance_pull(tmp_path / "a", PEOPLE[0], ["sysa", "sysb"])
    b = _instance_pull(tmp_path / "b", PEOPLE[1], ["sysb", "sysa"], key="headline-check:ffffffffffffffffffff")
    (tmp_path / "merged").mkdir()
    users = isolate._merge([a, b], tmp_path / "merged", definition, "t", overlap=1)
    assert users == {1: PEOPLE[0], 2: PEOPLE[1]}
    tasks = json.loads((tmp_path / "merged" / "export.json").read_text(encoding="utf-8"))
    assert len(tasks) == 2 and len({t["id"] for t in tasks}) == 2  # the second task's id 1 was taken: renumbered
    assert sorted([a_["annols_instance"] for a_ in t["annotations"]] for t in tasks) == [[PEOPLE[0]], [PEOPLE[1]]]
    assert json.loads((tmp_path / "merged" / PROJECT_FILE).read_text(encoding="utf-8"))["overlap"] == 1
    (tmp_path / "every").mkdir()
    isolate._merge([a, b], tmp_path / "every", definition, "t")
    assert json.loads((tmp_path / "every" / PROJECT_FILE).read_text(encoding="utf-8"))["overlap"] == 2
