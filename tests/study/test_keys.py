"""The keys tasks carry on the server are opaque: an HMAC of the task's key under the study's
secret, which the manifest keeps (never the server), not a digest an annotator can recompute
from what they see and a guess of the systems. extractive-ranking's original cells stay in
the manifest too. Offline: push's task building, the manifest, and a pull's reading of an export."""

from __future__ import annotations

import csv
import itertools
import json
import re
from pathlib import Path
from typing import Any

import pytest

from annols import protocols
from annols.definition import blinding
from annols.errors import InputError
from annols.formats import content_key
from annols.formats.extractive_ranking import NAME
from annols.protocols import config
from annols.study import findings, manifest, push, roles
from annols.study.exports import read_export, write_blinding
from annols.study.manifest import Keys, Shown

DEFINITION = protocols.load("extractive-ranking")
SYSTEMS = ("bart", "pegasus", "matchsum", "oracle")
CELLS = ["One .</s>Two .", "Three .", "Four .</s> Five .", "Six ."]
URL, REFERENCE = "https://example.org/1", "The reference ."


def _sheet(path: Path, systems: tuple[str, ...]) -> Path:
    with path.open("w", encoding="utf-8", newline="") as f:
        csv.writer(f).writerows([["url", "reference", *systems], [URL, REFERENCE, *CELLS]])
    return path


def _built(path: Path, keys: Keys | None, shown: dict[str, Shown] | None = None) -> tuple[str, dict[str, Any]]:
    ((key, _, payload, _),) = push.build_tasks(DEFINITION, [path], seed=1, keys=keys, shown=shown)
    return key, payload


def test_systems_swapped_variants_get_unrelated_keys_and_no_guess_matches(tmp_path: Path) -> None:
    swapped = (SYSTEMS[1], SYSTEMS[0], *SYSTEMS[2:])  # the same item, two systems' columns swapped
    keys = Keys.new()
    key, payload = _built(_sheet(tmp_path / "a.csv", SYSTEMS), keys)
    other_key, other = _built(_sheet(tmp_path / "b.csv", swapped), keys)
    sent, other_sent = payload["meta"][blinding.META_KEY], other["meta"][blinding.META_KEY]
    assert key != other_key and sent != other_sent
    assert re.fullmatch(r"extractive-ranking:[0-9a-f]{20}", sent) and len(other_sent) == len(sent)
    assert {sent, other_sent}.isdisjoint({key, other_key})

    # The old key was a digest an annotator could recompute: with the cells and the right guess of
    # the systems it was the task's key. No guess, the right one included, gives the key on the server.
    guesses = [content_key(NAME, {"url": URL, "reference": REFERENCE, "outputs": dict(zip(order, CELLS, strict=True))})
               for order in itertools.permutations(SYSTEMS)]  # fmt: skip
    assert key in guesses and other_key in guesses  # what the old key would have confirmed
    assert sent not in guesses and other_sent not in guesses

    # Another study (another secret) gives the same item another key; the same secret the same key.
    assert _built(tmp_path / "a.csv", Keys.new())[1]["meta"] != payload["meta"]
    assert _built(tmp_path / "a.csv", Keys(keys.secret))[1]["meta"] == payload["meta"]
    # Without keys (a study pushed before they had a secret) the key is sent as it is.
    assert _built(tmp_path / "a.csv", None)[1]["meta"] == {blinding.META_KEY: key}


def test_the_shuffle_is_drawn_with_the_secret(tmp_path: Path) -> None:
    """From the seed and the key alone, the order shown would check a guess of the systems as the key did."""
    rows = [[f"https://example.org/{i}", f"Reference {i} .", *(f"{c} {i}" for c in CELLS)] for i in range(24)]
    path = tmp_path / "many.csv"
    with path.open("w", encoding="utf-8", newline="") as f:
        csv.writer(f).writerows([["url", "reference", *SYSTEMS], *rows])

    def orders(keys: Keys | None) -> dict[str, list[int]]:
        shown: dict[str, Shown] = {}
        list(push.build_tasks(DEFINITION, [path], seed=1, keys=keys, shown=shown))
        return {key: s.order for key, s in shown.items()}

    keys = Keys.new()
    drawn = orders(keys)
    assert drawn == orders(Keys(keys.secret))  # the same study, the same orders
    from_key = {key: blinding.order_for(1, key, len(SYSTEMS)) for key in drawn}
    assert from_key == orders(None)  # a study pushed before keys had a secret: as it was
    assert sum(drawn[k] == from_key[k] for k in drawn) < len(drawn) // 2  # 1 in 24 agrees by chance


SHUFFLING = b"s" * 32  # a fixed secret (a new one would keep the column order 1 time in 24)


def test_the_original_cells_stay_off_the_server(tmp_path: Path) -> None:
    shown: dict[str, Shown] = {}
    key, payload = _built(_sheet(tmp_path / "a.csv", SYSTEMS), Keys(SHUFFLING), shown)
    assert "raw" not in payload["data"] and not any(cell in json.dumps(payload) for cell in CELLS[:1])
    order = shown[key].order
    assert order != [0, 1, 2, 3]  # this secret shuffles: the cells in column order would undo it
    # The row number too (the config does not show it): an attention check has none, so no task carries it.
    assert "row" not in payload["data"] and set(payload["data"]) == set(config.data_fields(DEFINITION))
    assert dict(shown[key].extra or {}) == {"raw": CELLS, "row": 2}


def _pushed(tmp_path: Path, keys: Keys) -> tuple[Path, list[dict[str, Any]], str]:
    """A manifest and the export of a project holding the sheet's task (id 5), as push and the server leave them."""
    shown: dict[str, Shown] = {}
    key, payload = _built(_sheet(tmp_path / "a.csv", SYSTEMS), keys, shown)
    path = manifest.manifest_path(tmp_path / "m", "ranked")
    path.parent.mkdir(parents=True, exist_ok=True)
    header = {"protocol": DEFINITION.name, "project": "ranked", "project_id": 3, "url": "http://x", "seed": 1}
    manifest.write_manifest(path, {**header, **keys.header()}, {key: (5, shown[key].systems)}, shown=shown, keys=keys)
    export = [{"id": 5, "data": payload["data"], "meta": payload["meta"], "annotations": []}]
    return path, export, key


def test_manifest_keeps_the_secret_and_each_task_s_key_on_the_server(tmp_path: Path) -> None:
    keys = Keys.new()
    path, export, key = _pushed(tmp_path, keys)
    header, (row,) = manifest.read_rows(path)
    assert header["version"] == manifest.VERSION and bytes.fromhex(header["secret"]) == keys.secret
    assert row["key"] == key and row["sent"] == export[0]["meta"][blinding.META_KEY] == manifest.server_key(row)
    assert row["extra"] == {"raw": CELLS, "row": 2} and row["role"] == roles.STUDY
    again = manifest.keys_of(path)  # what a re-push (or a team-mate's, after `manifest import`) uses
    assert again is not None and again.secret == keys.secret and again.sent(key) == row["sent"]
    assert manifest.keys_of(tmp_path / "none.manifest.jsonl") is None


def test_pull_reads_the_manifest_key_and_cells_and_checks_the_key_sent(tmp_path: Path) -> None:
    path, export, key = _pushed(tmp_path, Keys.new())
    folder = tmp_path / "pull"
    folder.mkdir()
    (folder / "export.json").write_text(json.dumps(export), encoding="utf-8")
    rows = manifest.read_rows(path)[1]
    write_blinding(folder, rows)
    (task,) = read_export(folder / "export.json")
    assert task.key == key  # result files keep the key they always had
    assert task.data["raw"] == CELLS and task.source_systems == SYSTEMS
    assert findings.check(folder / "export.json", rows, {}) == []
    # Someone who writes the old key (a digest of the content) into the task's meta is found out.
    export[0]["meta"] = {blinding.META_KEY: key}
    (folder / "export.json").write_text(json.dumps(export), encoding="utf-8")
    assert [f.kind for f in findings.check(folder / "export.json", rows, {})] == ["key-changed", "meta-changed"]


def test_a_manifest_without_a_secret_is_an_older_study_whose_keys_are_sent_as_they_are(tmp_path: Path) -> None:
    old = Keys(None)
    path, export, key = _pushed(tmp_path, old)
    header, (row,) = manifest.read_rows(path)
    assert "secret" not in header and "version" not in header and "sent" not in row
    assert export[0]["meta"] == {blinding.META_KEY: key} and manifest.server_key(row) == key
    keys = manifest.keys_of(path)
    assert keys is not None and keys.secret is None and keys.sent(key) == key
    folder = tmp_path / "pull"
    folder.mkdir()
    (folder / "export.json").write_text(json.dumps(export), encoding="utf-8")
    write_blinding(folder, manifest.read_rows(path)[1])
    assert [t.key for t in read_export(folder / "export.json")] == [key]
    assert findings.check(folder / "export.json", manifest.read_rows(path)[1], {}) == []


def test_a_damaged_secret_is_an_error_not_an_older_study(tmp_path: Path) -> None:
    """Taken for a study without a secret, a push would send keys that match none of the project's."""
    path, _, _ = _pushed(tmp_path, Keys.new())
    header, *rows = path.read_text("utf-8").splitlines()
    path.write_text("\n".join([json.dumps({**json.loads(header), "secret": "not hex"}), *rows]) + "\n", "utf-8")
    with pytest.raises(InputError) as e:
        manifest.keys_of(path)
    assert str(e.value).startswith(str(path)) and "secret" in str(e.value) and "\n" not in str(e.value)
