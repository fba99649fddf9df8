"""The annotator's attack of :mod:`tests.study.attack` on the shipped groups and best-worst examples, pushed to a
real Label Studio (issue #39): what the annotator sees is the server's tasks in id order.

A study whose manifest predates placements with the secret (a secret, no ``placement``) is pushed, and
re-pushed, as it always was: the attack names every text. A new study (its secret fixed here, unknown to
the attack) gives it no more than chance (one-sided binomial test, level 0.001).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from scipy import stats

from annols import protocols
from annols.definition import blinding
from annols.labelstudio.client import LabelStudioClient
from annols.study import manifest
from tests.conftest import LiveServer
from tests.study import attack
from tests.study.test_placement import DESIGNED, EXAMPLES, LEVEL
from tests.study.test_push_pull import cli, shown_by_task

COUNTS = {"da-groups": 12, "summary-best-worst": 15}  # tasks of each example


def _attack(name: str, client: LabelStudioClient, folder: Path, title: str) -> tuple[int, int]:
    definition = protocols.load(str(EXAMPLES / f"{name}.toml"))
    project = client.find_project(title)
    assert project is not None
    tasks = client.export_tasks(project.id)
    rows = shown_by_task(folder / ".annols", title)
    panes = blinding.candidate_fields(definition)
    truth = {(attack.item_key(definition, t["data"]), str(t["data"][p])): s
             for t in tasks for p, s in zip(panes, rows[t["id"]]["systems"], strict=True)}  # fmt: skip
    public = attack.public_design(definition, [EXAMPLES / f"{name}.jsonl"])
    named = attack.name_texts(definition, [(t["id"], t["data"]) for t in tasks], public, DESIGNED[name][0])
    return attack.text_hits(definition, named, truth), len(named)


@pytest.mark.parametrize("name", list(DESIGNED))
def test_the_shipped_designs_resist_the_attack_and_old_studies_resume_as_they_were(
    name: str, label_studio: LiveServer, client: LabelStudioClient, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    definition, inputs = str(EXAMPLES / f"{name}.toml"), str(EXAMPLES / f"{name}.jsonl")
    old, new = tmp_path / "old", tmp_path / "new"
    old.mkdir()
    new.mkdir()
    title = f"old placement {name}"
    path = manifest.manifest_path(old / ".annols", title)
    path.parent.mkdir()
    path.write_text(json.dumps({"protocol": name, "variant": None, "project": title, "seed": 0, "version": 2,
                                "secret": (b"o" * 32).hex()}) + "\n", encoding="utf-8")  # fmt: skip
    for expected in (f"created {COUNTS[name]}, already present 0", f"created 0, already present {COUNTS[name]}"):
        code, out, err = cli(label_studio, "push", definition, inputs, "--project", title, cwd=old)
        assert code == 0, err
        assert out.splitlines()[-1].startswith(expected)
    header, _ = manifest.read_rows(path)
    assert "placement" not in header  # it stays a study of the first scheme
    hits, named = _attack(name, client, old, title)
    assert hits == named == {"da-groups": 18, "summary-best-worst": 15}[name]

    monkeypatch.setattr(manifest.secrets, "token_bytes", lambda n: bytes(range(n)))  # fixed, unknown to the attack
    title = f"new placement {name}"
    code, out, err = cli(label_studio, "push", definition, inputs, "--project", title, cwd=new)
    assert code == 0, err
    assert manifest.read_rows(manifest.manifest_path(new / ".annols", title))[0]["placement"] == manifest.PLACEMENT
    hits, named = _attack(name, client, new, title)
    assert named == {"da-groups": 18, "summary-best-worst": 15}[name]
    assert stats.binomtest(hits, named, 1 / DESIGNED[name][1], alternative="greater").pvalue >= LEVEL, hits
