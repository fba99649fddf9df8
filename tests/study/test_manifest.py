"""The coordinator's manifest: nothing blinding depends on goes to the server, the manifest hands
over to a team-mate (export / import), and every kind of finding a pull reports (offline)."""

from __future__ import annotations

import csv
import json
import stat
import tomllib
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from annols.cli import main
from annols.definition import blinding
from annols.labelstudio.client import Project
from annols.protocols import parse_definition
from annols.study import findings, manifest, pull, push, roles
from annols.study.exports import read_export, write_blinding
from annols.study.manifest import Shown, meta_digest
from tests.definition.test_definition import MINIMAL
from tests.labelstudio.test_incremental import vote

DEFINITION = parse_definition(tomllib.loads(MINIMAL), "headlines.toml")
SYSTEMS = ("sysalpha", "sysbeta")


def _inputs(tmp_path: Path) -> tuple[Path, Path]:
    study, gold = tmp_path / "study.jsonl", tmp_path / "gold.jsonl"
    study.write_text("".join(json.dumps({"headline_1": f"First {i}", "headline_2": f"Second {i}",
                                         "systems": list(SYSTEMS), "id": i}) + "\n" for i in range(6)),
                     encoding="utf-8")  # fmt: skip
    gold.write_text("".join(json.dumps({"headline_1": f"Gold A {i}", "headline_2": f"Gold B {i}",
                                        "systems": list(SYSTEMS), "id": 100 + i, "result": vote("1")}) + "\n"
                            for i in range(2)), encoding="utf-8")  # fmt: skip
    return study, gold


def test_study_gold_and_attention_tasks_carry_the_same_meta_and_no_system(tmp_path: Path) -> None:
    study, gold = _inputs(tmp_path)
    shown: dict[str, Shown] = {}
    built = list(push.build_tasks(DEFINITION, [study], seed=3, gold=[gold], attention=2, shown=shown))
    assert sorted(shown[key].role for key, *_ in built) == [roles.ATTENTION] * 2 + [roles.GOLD] * 2 + [roles.STUDY] * 6
    metas = [payload["meta"] for _, _, payload, _ in built]
    assert {tuple(m) for m in metas} == {(blinding.META_KEY,)}
    assert len({len(m[blinding.META_KEY]) for m in metas}) == 1
    for key, systems, payload, _ in built:
        text = json.dumps(payload)
        assert not any(name in text for name in SYSTEMS)
        assert shown[key].systems == systems and shown[key].meta == meta_digest(payload["meta"])
        if shown[key].role != roles.ATTENTION:  # a check shows its first candidate twice
            assert [systems[shown[key].order.index(i)] for i in range(2)] == list(SYSTEMS)  # the order undoes it
    checks = [p["data"] for (key, _, p, _) in built if shown[key].role == roles.ATTENTION]
    assert all("record" not in data for data in checks)  # no study item's record id on a check


def _manifest(tmp_path: Path, title: str = "Study one") -> Path:
    path = manifest.manifest_path(tmp_path / "m", title)
    path.parent.mkdir(parents=True)
    header = {"protocol": "headline-check", "project": title, "project_id": 7, "url": "http://x", "seed": 0}
    tasks: dict[str, tuple[int | None, tuple[str, ...]]] = {"k:1": (1, SYSTEMS), "k:2": (2, SYSTEMS[::-1])}
    shown = {"k:1": Shown(SYSTEMS, [0, 1], roles.STUDY, meta_digest({"annols_key": "k:1"})),
             "k:2": Shown(SYSTEMS[::-1], [1, 0], roles.GOLD, meta_digest({"annols_key": "k:2"}))}  # fmt: skip
    manifest.write_manifest(path, header, tasks, shown=shown)
    return path


def _handed_over(tmp_path: Path) -> tuple[Path, str]:
    """``annols manifest export`` of the study _manifest wrote: the handed-over file and what the command said."""
    out = tmp_path / "handed-over.jsonl"
    result = CliRunner().invoke(main, ["manifest", "export", "--project", "Study one", "--manifest-dir",
                                       str(tmp_path / "m"), "-o", str(out)])  # fmt: skip
    assert result.exit_code == 0, result.output
    return out, result.output


def test_manifest_export_and_import_round_trip(tmp_path: Path) -> None:
    source = _manifest(tmp_path)
    out, said = _handed_over(tmp_path)
    assert "secret" in said
    assert out.read_bytes() == source.read_bytes()
    assert stat.S_IMODE(out.stat().st_mode) == 0o600

    runner = CliRunner()
    elsewhere = tmp_path / "team-mate"
    result = runner.invoke(main, ["manifest", "import", str(out), "--manifest-dir", str(elsewhere)])
    assert result.exit_code == 0, result.output
    target = manifest.manifest_path(elsewhere, "Study one")
    assert target.read_bytes() == source.read_bytes()
    assert manifest.read_manifest_tasks(target)[1] == manifest.read_manifest_tasks(source)[1]
    assert runner.invoke(main, ["manifest", "import", str(out), "--manifest-dir", str(elsewhere)]).exit_code == 0

    other = tmp_path / "other.jsonl"  # another manifest of the same project is not silently replaced
    other.write_text(source.read_text("utf-8").replace('"task_id": 2', '"task_id": 3'), encoding="utf-8")
    result = runner.invoke(main, ["manifest", "import", str(other), "--manifest-dir", str(elsewhere)])
    assert result.exit_code == 1 and "--replace" in result.stderr and len(result.stderr.splitlines()) == 1
    assert target.read_bytes() == source.read_bytes()
    assert runner.invoke(main, ["manifest", "import", str(other), "--manifest-dir", str(elsewhere),
                                "--replace"]).exit_code == 0  # fmt: skip
    assert target.read_bytes() == other.read_bytes()


def _record(path: Path, rounds: int) -> bytes:
    """A record of ``rounds`` rounds as next-round writes it (one JSON line a round)."""
    from annols import jsontext

    rows = [{"round": n, "time": f"2026-11-2{n}T10:00:00+00:00", "pushed": [f"k:{n}"], "items": n, "alpha": 0.05,
             "comparisons": [{"key": ["Fluency", "a", "b"], "decision": "undecided", "mean": 0.1 * n}]}
            for n in range(1, rounds + 1)]  # fmt: skip
    data = "".join(jsontext.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode("utf-8")
    path.write_bytes(data)
    return data


def test_the_record_of_a_study_in_rounds_goes_with_the_manifest(tmp_path: Path) -> None:
    from annols.study import rounds

    source = _manifest(tmp_path)
    record = _record(manifest.rounds_path(tmp_path / "m", "Study one"), 2)
    assert manifest.rounds_path(tmp_path / "m", "Study one") == rounds.rounds_path(tmp_path / "m", "Study one")
    out, said = _handed_over(tmp_path)
    assert "2 tasks, and the record of its 2 round(s)" in said
    assert out.read_bytes() == source.read_bytes() + b'{"annols_rounds": 2}\n' + record
    assert stat.S_IMODE(out.stat().st_mode) == 0o600

    runner = CliRunner()
    elsewhere = tmp_path / "team-mate"
    result = runner.invoke(main, ["manifest", "import", str(out), "--manifest-dir", str(elsewhere)])
    assert result.exit_code == 0, result.output
    mine = manifest.rounds_path(elsewhere, "Study one")
    assert manifest.manifest_path(elsewhere, "Study one").read_bytes() == source.read_bytes()
    assert mine.read_bytes() == record and f"record of its 2 round(s) to {mine}" in result.output
    assert rounds.read_rounds(mine) == rounds.read_rounds(manifest.rounds_path(tmp_path / "m", "Study one"))
    assert runner.invoke(main, ["manifest", "import", str(out), "--manifest-dir", str(elsewhere)]).exit_code == 0

    # The team-mate's record went on (a round of their own): a record of the coordinator's is not put over it.
    theirs = _record(mine, 3)
    result = runner.invoke(main, ["manifest", "import", str(out), "--manifest-dir", str(elsewhere)])
    assert result.exit_code == 1 and len(result.stderr.splitlines()) == 1, result.output
    assert "another record of the rounds" in result.stderr and "--replace" in result.stderr
    assert mine.read_bytes() == theirs
    # An export without a record (a study not in rounds, an older annols) leaves the record there alone.
    old = tmp_path / "old-export.jsonl"
    old.write_bytes(source.read_bytes())
    result = runner.invoke(main, ["manifest", "import", str(old), "--manifest-dir", str(elsewhere)])
    assert result.exit_code == 0 and "round" not in result.output, result.output
    assert mine.read_bytes() == theirs
    result = runner.invoke(main, ["manifest", "import", str(out), "--manifest-dir", str(elsewhere), "--replace"])
    assert result.exit_code == 0 and mine.read_bytes() == record, result.output

    # A conflict on the manifest writes neither file.
    fresh = tmp_path / "fresh"
    other = manifest.manifest_path(fresh, "Study one")
    other.parent.mkdir()
    other.write_text(source.read_text("utf-8").replace('"task_id": 2', '"task_id": 3'), encoding="utf-8")
    result = runner.invoke(main, ["manifest", "import", str(out), "--manifest-dir", str(fresh)])
    assert result.exit_code == 1 and "another manifest" in result.stderr
    assert not manifest.rounds_path(fresh, "Study one").exists()

    # An export cut short (or a record line edited into something else) is refused, naming the line.
    lines = out.read_bytes().splitlines(keepends=True)
    cut = tmp_path / "cut.jsonl"
    cut.write_bytes(b"".join(lines[:-1]))
    result = runner.invoke(main, ["manifest", "import", str(cut), "--manifest-dir", str(tmp_path / "cut")])
    assert result.exit_code == 1 and len(result.stderr.splitlines()) == 1
    assert f"{cut}, line 4, field 'annols_rounds': 2 round(s) should follow, 1 do" in result.stderr
    cut.write_bytes(b"".join(lines[:-1]) + b'{"not": "a round"}\n')
    result = runner.invoke(main, ["manifest", "import", str(cut), "--manifest-dir", str(tmp_path / "cut")])
    assert result.exit_code == 1 and f"{cut}, line 6, field 'round'" in result.stderr, result.stderr
    assert not (tmp_path / "cut").exists()


def test_manifest_commands_fail_in_one_line(tmp_path: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(main, ["manifest", "export", "--project", "nope", "--manifest-dir", str(tmp_path),
                                  "-o", str(tmp_path / "x")])  # fmt: skip
    assert result.exit_code == 1 and len(result.stderr.splitlines()) == 1 and "no manifest" in result.stderr
    junk = tmp_path / "junk.jsonl"
    junk.write_text("[1, 2]\n", encoding="utf-8")
    result = runner.invoke(main, ["manifest", "import", str(junk), "--manifest-dir", str(tmp_path / "m")])
    assert result.exit_code == 1 and len(result.stderr.splitlines()) == 1 and str(junk) in result.stderr
    assert "Traceback" not in result.output


def _task(task_id: int, meta: dict[str, Any], annotations: list[dict[str, Any]] = ()) -> dict[str, Any]:  # type: ignore[assignment]
    return {"id": task_id, "annotations": list(annotations), "data": {"headline_1": "a", "headline_2": "b"},
            "meta": meta}  # fmt: skip


def _annotation(annotation_id: int, by: int, updated: int | None = None) -> dict[str, Any]:
    return {"id": annotation_id, "completed_by": by, "updated_by": updated, "result": vote("1"),
            "was_cancelled": False, "lead_time": 1.0, "created_at": "2026-11-26T00:00:00Z"}  # fmt: skip


def _export(folder: Path, tasks: list[dict[str, Any]]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "export.json"
    path.write_text(json.dumps(tasks), encoding="utf-8")
    return path


def _rows(path: Path) -> list[dict[str, Any]]:
    return manifest.read_rows(path)[1]


def _kinds(found: list[findings.Finding]) -> list[tuple[str, int | None, int | None]]:
    return sorted((f.kind, f.task_id, f.annotation_id) for f in found)


def test_an_untouched_project_has_no_finding(tmp_path: Path) -> None:
    export = _export(tmp_path / "pull", [_task(1, {"annols_key": "k:1"}, [_annotation(10, 5, 5)]),
                                         _task(2, {"annols_key": "k:2"}, [_annotation(11, 6)])])  # fmt: skip
    assert findings.check(export, _rows(_manifest(tmp_path)), {}) == []


@pytest.mark.parametrize(
    ("tasks", "expected"),
    [
        # another user saved annotation 10 (an edit, or one posted in user 5's name)
        ([_task(1, {"annols_key": "k:1"}, [_annotation(10, 5, 6)]), _task(2, {"annols_key": "k:2"})],
         [("edited-by-other", 1, 10)]),
        # systems written into a task's meta; a gold item re-tagged
        ([_task(1, {"annols_key": "k:1", "annols_systems": blinding.encode_systems(SYSTEMS[::-1])}),
          _task(2, {"annols_key": "k:2", roles.META_TAG: roles.encode_tag("k:2", roles.STUDY)})],
         [("meta-changed", 1, None), ("meta-changed", 2, None)]),
        ([_task(1, {"annols_key": "k:9"}), _task(2, {"annols_key": "k:2"})],
         [("key-changed", 1, None), ("meta-changed", 1, None)]),
        ([_task(1, {"annols_key": "k:1"}), _task(2, {"annols_key": "k:2"}), _task(3, {"annols_key": "k:1"})],
         [("task-added", 3, None)]),
        ([_task(2, {"annols_key": "k:2"})], [("task-deleted", 1, None)]),
    ],
)  # fmt: skip
def test_each_finding_names_its_task_and_annotation(
    tmp_path: Path, tasks: list[dict[str, Any]], expected: list[tuple[str, int, int | None]]
) -> None:
    found = findings.check(_export(tmp_path / "pull", tasks), _rows(_manifest(tmp_path)), {5: "a@x", 6: "b@x"})
    assert _kinds(found) == sorted(expected)
    for f in found:
        line = f.line()
        assert line.startswith(f"task {f.task_id} (") and "\n" not in line
        if f.annotation_id is not None:
            assert f" annotation {f.annotation_id}: " in line
    if expected[0][0] == "edited-by-other":
        assert found[0].detail == "credited to a@x, last saved by b@x"


def test_the_coordinators_own_saves_and_imported_annotations_are_trusted(tmp_path: Path) -> None:
    export = _export(tmp_path / "pull", [_task(1, {"annols_key": "k:1"}, [_annotation(10, 5, 1)]),
                                         _task(2, {"annols_key": "k:2"}, [_annotation(11, 6, None)])])  # fmt: skip
    assert findings.check(export, _rows(_manifest(tmp_path)), {}, trusted=[1]) == []


def test_annotations_an_earlier_pull_saw_that_are_gone(tmp_path: Path) -> None:
    earlier = _export(tmp_path / "earlier", [_task(1, {"annols_key": "k:1"}, [_annotation(10, 5), _annotation(12, 6)]),
                                             _task(2, {"annols_key": "k:2"}, [_annotation(11, 6)])])  # fmt: skip
    now = _export(tmp_path / "now", [_task(1, {"annols_key": "k:1"}, [_annotation(12, 6)])])
    found = findings.check(now, _rows(_manifest(tmp_path)), {}, findings.annotations_of(earlier))
    assert _kinds(found) == [("annotation-gone", 1, 10), ("task-deleted", 2, None)]
    assert "with the 1 annotation(s) an earlier pull saw" in next(f for f in found if f.task_id == 2).detail


def test_a_pull_without_manifest_says_so_and_legacy_meta_is_checked(tmp_path: Path) -> None:
    export = _export(tmp_path / "pull", [_task(1, {"annols_key": "k:1"})])
    (only,) = findings.check(export, None, {})
    assert only.kind == "no-manifest" and only.line().startswith("project: no-manifest: ")
    # A manifest written before it kept a digest of the meta: the meta's systems and role tag are compared.
    legacy = [{"key": "k:1", "task_id": 1, "systems": list(SYSTEMS), "role": roles.GOLD}]
    tampered = {"annols_key": "k:1", "annols_systems": blinding.encode_systems(SYSTEMS[::-1]),
                roles.META_TAG: roles.encode_tag("k:1", roles.STUDY)}  # fmt: skip
    found = findings.check(_export(tmp_path / "old", [_task(1, tampered)]), legacy, {})
    assert _kinds(found) == [("role-changed", 1, None), ("systems-changed", 1, None)]


def test_findings_file_round_trip(tmp_path: Path) -> None:
    found = [findings.Finding("task-deleted", "gone", 3, "k:3"), findings.Finding("edited-by-other", "x", 1, "k:1", 9),
             findings.Finding("no-manifest", "none")]  # fmt: skip
    path = tmp_path / findings.FINDINGS_FILE
    findings.write(found, path)
    with open(path, encoding="utf-8", newline="") as f:
        assert next(csv.reader(f)) == findings.COLUMNS
    assert sorted(findings.read(path), key=repr) == sorted(found, key=repr)


def test_the_study_unblinds_from_the_manifest_never_from_tampered_meta(tmp_path: Path) -> None:
    folder = tmp_path / "pull"
    tampered = {"annols_key": "k:1", "annols_systems": blinding.encode_systems(SYSTEMS[::-1]), "annols_order": [1, 0],
                roles.META_TAG: roles.encode_tag("k:1", roles.GOLD)}  # fmt: skip
    export = _export(folder, [_task(1, tampered), _task(2, {"annols_key": "k:2"}), _task(5, tampered)])
    write_blinding(folder, _rows(_manifest(tmp_path)))
    one, two, added = read_export(export)
    assert (one.key, one.systems, one.source_systems, one.role) == ("k:1", SYSTEMS, SYSTEMS, roles.STUDY)
    assert (two.systems, two.source_systems, two.role) == (SYSTEMS[::-1], SYSTEMS, roles.GOLD)
    assert (added.systems, added.role) == ((), roles.STUDY)  # not the push's: nothing of its meta believed
    # An export pulled before the manifest kept the blinding (systems in meta) is read as it always was.
    (folder / "blinding.jsonl").unlink()
    legacy = next(iter(read_export(export)))
    assert (legacy.systems, legacy.source_systems, legacy.role) == (SYSTEMS[::-1], SYSTEMS, roles.GOLD)


def test_the_manifest_of_a_tasks_file_is_imported_for_its_project_and_matched_by_key(tmp_path: Path) -> None:
    study, _ = _inputs(tmp_path)
    out = tmp_path / "tasks.json"
    push.write_task_file(DEFINITION, [study], out, seed=3, manifest_dir=tmp_path / "m")
    written = manifest.manifest_path(tmp_path / "m", "tasks")
    runner = CliRunner()
    result = runner.invoke(main, ["manifest", "import", str(written), "--manifest-dir", str(tmp_path / "d")])
    assert result.exit_code == 1 and "--project" in result.stderr and len(result.stderr.splitlines()) == 1
    result = runner.invoke(main, ["manifest", "import", str(written), "--manifest-dir", str(tmp_path / "d"),
                                  "--project", "By hand"])  # fmt: skip
    assert result.exit_code == 0, result.output
    rows = _rows(manifest.manifest_path(tmp_path / "d", "By hand"))
    assert all(r["task_id"] is None for r in rows)  # imported through the web UI: pull finds them by key
    tasks = [{"id": 300 + n, **t, "annotations": []} for n, t in enumerate(json.loads(out.read_text("utf-8")))]
    export = _export(tmp_path / "pull", tasks)
    pull._fill_task_ids(rows, export)
    write_blinding(export.parent, rows)
    systems = {r["key"]: tuple(r["systems"]) for r in rows}
    read = list(read_export(export))
    assert [t.id for t in read] == [300 + n for n in range(6)]
    assert all(t.systems == systems[t.key] and sorted(t.systems) == sorted(SYSTEMS) for t in read)
    assert findings.check(export, rows, {}) == []


def test_a_pull_folder_unblinds_a_later_pull_without_the_manifest(tmp_path: Path) -> None:
    folder = tmp_path / "pull"
    _export(folder, [_task(1, {"annols_key": "k:1"})])
    (folder / "project.json").write_text(json.dumps({"id": 7, "url": "http://x"}), encoding="utf-8")
    written = _rows(_manifest(tmp_path))
    write_blinding(folder, written)
    project = Project(7, "Study one", "")
    rows, why = pull._manifest_rows(None, project, folder, "http://x")
    assert why == "" and rows == [{k: r[k] for k in ("task_id", "key", "systems", "order", "role", "meta")}
                                  for r in written]  # fmt: skip
    deleted = findings.Finding("task-deleted", "a task the push made is no longer on the server", 2, "k:2")
    assert findings.check(folder / "export.json", rows, {}) == [deleted]
    # Of another project, or no folder: nothing stands in for the manifest, and pull says so.
    rows, why = pull._manifest_rows(tmp_path / "nowhere.jsonl", Project(8, "Other", ""), folder, "http://x")
    assert rows is None and why.startswith(f"no manifest {tmp_path / 'nowhere.jsonl'}: ")
    (only,) = findings.check(folder / "export.json", rows, {}, why=why)
    assert (only.kind, only.detail) == ("no-manifest", why)
