"""Opaque task keys against the real Label Studio, through the CLI: the server holds HMACs of the
keys under the study's secret, a push resumes and re-runs with them (from the manifest or by
listing the project), a team-mate pushes and pulls with the imported manifest, a push without
it (or with another study's) is refused before anything is sent, and a study pushed before
keys had a secret still resumes and pulls with its keys as they were."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest

from annols.definition import blinding
from annols.labelstudio.client import LabelStudioClient
from annols.study import manifest
from tests.conftest import LiveServer
from tests.definition.test_definition import MINIMAL
from tests.study.test_push_pull import cli

SYSTEMS = ("bart", "pegasus")


def _study(tmp_path: Path, count: int = 12) -> tuple[Path, Path, Path]:
    """The definition, the whole input and its first 4 records."""
    definition = tmp_path / "headlines.toml"
    definition.write_text(MINIMAL)
    lines = [json.dumps({"headline_1": f"Headline {i} by bart", "headline_2": f"Headline {i} by pegasus",
                         "systems": list(SYSTEMS), "id": i}) + "\n" for i in range(count)]  # fmt: skip
    whole, part = tmp_path / "headlines.jsonl", tmp_path / "part.jsonl"
    whole.write_text("".join(lines), encoding="utf-8")
    part.write_text("".join(lines[:4]), encoding="utf-8")
    return definition, whole, part


def _last(out: str) -> str:
    return out.splitlines()[-1]


def _rows(folder: Path, title: str) -> tuple[dict[str, object], list[dict[str, object]]]:
    return manifest.read_rows(manifest.manifest_path(folder / ".annols", title))


def _result_keys(folder: Path) -> set[str]:
    with open(folder / "results.csv", encoding="utf-8", newline="") as f:
        return {r["task_key"] for r in csv.DictReader(f)}


def _vote(client: LabelStudioClient, task_ids: list[int]) -> None:
    rater = client.users().get("keys-rater@example.org") or client.create_user("keys-rater@example.org")
    for task_id in task_ids:
        result = [{"id": "f", "from_name": "fluency", "to_name": "headline_1", "type": "choices",
                   "value": {"choices": ["1"]}, "origin": "manual"}]  # fmt: skip
        client.create_annotation(task_id, result, completed_by=rater, lead_time=1.0)


def test_keys_on_the_server_are_opaque_and_pushes_resume_with_them(
    label_studio: LiveServer, client: LabelStudioClient, tmp_path: Path
) -> None:
    definition, whole, part = _study(tmp_path)
    title = "opaque keys"
    coordinator = tmp_path / "coordinator"
    coordinator.mkdir()
    code, out, err = cli(label_studio, "push", str(definition), str(part), "--project", title, cwd=coordinator)
    assert code == 0 and _last(out) == "created 4, already present 0, total 4", err
    # The rest of the input: the manifest names no task id for the new keys, so the project is listed.
    code, out, err = cli(label_studio, "push", str(definition), str(whole), "--project", title, cwd=coordinator)
    assert code == 0 and _last(out) == "created 8, already present 4, total 12", err
    code, out, err = cli(label_studio, "push", str(definition), str(whole), "--project", title, cwd=coordinator)
    assert code == 0 and _last(out) == "created 0, already present 12, total 12", err

    project = client.find_project(title)
    assert project is not None
    tasks = client.export_tasks(project.id)
    header, rows = _rows(coordinator, title)
    assert header["version"] == manifest.VERSION and isinstance(header["secret"], str)
    by_id = {r["task_id"]: r for r in rows}
    assert len(tasks) == len(rows) == 12
    for task in tasks:
        sent = task["meta"][blinding.META_KEY]
        assert re.fullmatch(r"headline-check:[0-9a-f]{20}", sent) and sent == manifest.server_key(by_id[task["id"]])
    text = json.dumps(tasks)
    assert not any(str(r["key"]) in text for r in rows) and str(header["secret"]) not in text

    # A re-push that cannot trust the manifest's task ids lists the project: the same keys, nothing twice.
    path = manifest.manifest_path(coordinator / ".annols", title)
    lost = [header, *({**r, "task_id": None} for r in rows)]
    path.write_text("".join(json.dumps(line) + "\n" for line in lost), encoding="utf-8")
    for scan in (coordinator / ".annols").glob("*.scan.json"):
        scan.unlink()
    code, out, err = cli(label_studio, "push", str(definition), str(whole), "--project", title, cwd=coordinator)
    assert code == 0 and _last(out) == "created 0, already present 12, total 12", err
    assert _rows(coordinator, title)[1] == rows  # listed back to the same keys, task ids and keys sent

    _vote(client, [t["id"] for t in tasks[:3]])
    code, _, err = cli(label_studio, "pull", str(definition), "--project", title, "-o", "pulled", "--strict",
                       cwd=coordinator)  # fmt: skip
    assert code == 0, err
    assert _result_keys(coordinator / "pulled") == {str(by_id[t["id"]]["key"]) for t in tasks[:3]}

    # A push without the manifest cannot know the keys: refused, nothing sent.
    stranger = tmp_path / "stranger"
    stranger.mkdir()
    code, out, err = cli(label_studio, "push", str(definition), str(whole), "--project", title, cwd=stranger)
    assert code == 1 and len(err.splitlines()) == 1 and "annols manifest import" in err, err
    assert "Traceback" not in err and label_studio.api_key not in err
    assert client.project(project.id)["task_number"] == 12

    # A manifest of another study of that title (another secret): refused once the project is listed.
    other = manifest.manifest_path(tmp_path / "other" / ".annols", title)
    other.parent.mkdir(parents=True)
    secret = manifest.Keys.new().secret
    assert secret is not None
    other.write_text(json.dumps({**header, "secret": secret.hex()}) + "\n", encoding="utf-8")
    code, out, err = cli(label_studio, "push", str(definition), str(whole), "--project", title, cwd=tmp_path / "other")
    assert code == 1 and "none of its 12 task(s) carries a key made with the secret of" in err, err
    assert client.project(project.id)["task_number"] == 12

    # A team-mate with the manifest handed over pushes and pulls as the coordinator does.
    handed = tmp_path / "handed.jsonl"
    code, _, err = cli(label_studio, "manifest", "export", "--project", title, "-o", str(handed), cwd=coordinator)
    assert code == 0, err
    mate = tmp_path / "mate"
    mate.mkdir()
    code, _, err = cli(label_studio, "manifest", "import", str(handed), cwd=mate)
    assert code == 0, err
    code, out, err = cli(label_studio, "push", str(definition), str(whole), "--project", title, cwd=mate)
    assert code == 0 and _last(out) == "created 0, already present 12, total 12", err
    code, _, err = cli(label_studio, "pull", str(definition), "--project", title, "-o", "pulled", "--strict", cwd=mate)
    assert code == 0, err
    assert (mate / "pulled" / "results.csv").read_bytes() == (coordinator / "pulled" / "results.csv").read_bytes()


def test_a_study_pushed_before_keys_had_a_secret_resumes_and_pulls_as_it_was(
    label_studio: LiveServer, client: LabelStudioClient, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    definition, whole, part = _study(tmp_path)
    title = "keys from before"
    with monkeypatch.context() as before:  # what push did before: the keys themselves, a manifest without a secret
        before.setattr(manifest.Keys, "new", classmethod(lambda cls: cls(None)))
        code, out, err = cli(label_studio, "push", str(definition), str(part), "--project", title, cwd=tmp_path)
    assert code == 0 and _last(out) == "created 4, already present 0, total 4", err
    header, rows = _rows(tmp_path, title)
    assert "secret" not in header and all("sent" not in r for r in rows)

    code, out, err = cli(label_studio, "push", str(definition), str(whole), "--project", title, cwd=tmp_path)
    assert code == 0 and _last(out) == "created 8, already present 4, total 12", err
    header, rows = _rows(tmp_path, title)
    assert "secret" not in header  # the study keeps its kind of keys: the tasks already there carry them
    project = client.find_project(title)
    assert project is not None
    tasks = client.export_tasks(project.id)
    keys = {r["task_id"]: r["key"] for r in rows}
    assert len(tasks) == 12 and all(t["meta"] == {blinding.META_KEY: keys[t["id"]]} for t in tasks)

    _vote(client, [t["id"] for t in tasks])
    code, _, err = cli(label_studio, "pull", str(definition), "--project", title, "-o", "pulled", "--strict",
                       cwd=tmp_path)  # fmt: skip
    assert code == 0, err
    assert _result_keys(tmp_path / "pulled") == set(keys.values())


def test_a_team_mate_continues_a_study_in_rounds_with_the_exported_manifest(
    label_studio: LiveServer, client: LabelStudioClient, tmp_path: Path
) -> None:
    """The export carries the record of the rounds: the team-mate's next round is round 2 of the same record
    (its alpha split and width as fixed at round 1), not a new round 1."""
    from annols.study import rounds

    definition, whole, _ = _study(tmp_path)
    title = "rounds handed over"
    coordinator, mate = tmp_path / "coordinator", tmp_path / "mate"
    coordinator.mkdir()
    mate.mkdir()
    next_round = ["next-round", str(definition), str(whole), "--project", title, "--effect", "0.5", "--overlap", "1",
                  "--batch", "4"]  # fmt: skip
    code, out, err = cli(label_studio, *next_round, cwd=coordinator)
    assert code == 0 and "round 1: pushed 4 item(s) (4 new)" in out, err
    record = rounds.rounds_path(coordinator / ".annols", title)
    (first,) = rounds.read_rounds(record)

    handed = tmp_path / "handed.jsonl"
    code, out, err = cli(label_studio, "manifest", "export", "--project", title, "-o", str(handed), cwd=coordinator)
    assert code == 0 and "the record of its 1 round(s)" in out, err
    code, out, err = cli(label_studio, "manifest", "import", str(handed), cwd=mate)
    assert code == 0 and "record of its 1 round(s)" in out, err
    assert rounds.rounds_path(mate / ".annols", title).read_bytes() == record.read_bytes()

    by_key = {r["key"]: r["task_id"] for r in _rows(coordinator, title)[1]}
    _vote(client, [int(by_key[k]) for k in first["pushed"]])  # type: ignore[call-overload]
    code, _, err = cli(label_studio, "pull", str(definition), "--project", title, "-o", "pulled", cwd=mate)
    assert code == 0, err
    code, out, err = cli(label_studio, *next_round, "--pull", "pulled", cwd=mate)
    assert code == 0 and "round 2: pushed 4 item(s) (4 new), 8 study items in the project" in out, err
    again = rounds.read_rounds(rounds.rounds_path(mate / ".annols", title))
    assert [r["round"] for r in again] == [1, 2] and again[0] == first
    assert all(again[1][k] == first[k] for k in ("eta", "tests", "alpha", "effect"))
    assert not set(again[1]["pushed"]) & set(first["pushed"])
