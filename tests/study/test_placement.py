"""Placements drawn with the study's secret (issue #39): designs, gold and attention places, creation order.

The attack of :mod:`tests.study.attack` (a motivated annotator with the system names, the texts and annols)
is run on the shipped groups and best-worst examples as push builds them: a study placed as before
(placement 1) falls to it completely, one placed with its secret gives it no more hits than guessing
(a one-sided binomial test at level 0.001 over many studies, each with its own secret drawn from a fixed
seed: reproducible, yet the attacker knows none of them). A text is the unit: the annotator names one
system per text, and every position showing that text follows from it.
"""

from __future__ import annotations

import json
import random
import tomllib
from pathlib import Path
from typing import Any

import pytest
from scipy import stats

from annols import protocols
from annols.definition import Definition, blinding, design
from annols.formats import format_for
from annols.protocols import config, parse_definition
from annols.study import gold as gold_lib
from annols.study import manifest, push, roles
from annols.study.manifest import Keys, Shown
from tests.definition.test_definition import MINIMAL
from tests.labelstudio.test_incremental import vote
from tests.study import attack

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
LEVEL = 0.001  # the chance that a placement as good as guessing fails these tests
STUDIES = 30  # studies (secrets) per test: 450 to 540 texts, where a hit rate of 1.5 x chance is found
DESIGNED = {"da-groups": ("human", 6), "summary-best-worst": (None, 5)}  # reference shown in every task; systems


def _secrets(n: int) -> list[bytes]:
    rng = random.Random(39)
    return [rng.randbytes(32) for _ in range(n)]


def built(definition: Definition, inputs: list[Path], keys: Keys, gold: tuple[Path, ...] = (), attention: int = 0,
          seed: int = 0) -> tuple[list[tuple[int, dict[str, Any], str]], dict[str, Shown]]:  # fmt: skip
    """The tasks as the server holds them after a push with ``keys``: (task id, data, key), ids in creation order."""
    shown: dict[str, Shown] = {}
    made = push.build_tasks(definition, inputs, seed=seed, keys=keys, shown=shown, gold=gold, attention=attention)
    tasks = [(key, payload) for key, _, payload, repeat in made if not repeat]
    order = push._creation_order(keys, len(tasks))
    return [(n + 1, tasks[i][1]["data"], tasks[i][0]) for n, i in enumerate(order)], shown


def truth(definition: Definition, server: list[tuple[int, dict[str, Any], str]], shown: dict[str, Shown]
          ) -> dict[tuple[str, str], str]:  # fmt: skip
    panes = blinding.candidate_fields(definition)
    out = {}
    for _, data, key in server:
        for pane, system in zip(panes, shown[key].systems, strict=True):
            out[(attack.item_key(definition, data), str(data[pane]))] = system
    return out


def _attacked(name: str, keys: Keys) -> tuple[int, int]:
    """(texts named right, texts named) by the attack on the example ``name`` pushed with ``keys``."""
    definition = protocols.load(str(EXAMPLES / f"{name}.toml"))
    inputs = [EXAMPLES / f"{name}.jsonl"]
    server, shown = built(definition, inputs, keys)
    named = attack.name_texts(definition, [(i, d) for i, d, _ in server], attack.public_design(definition, inputs),
                              DESIGNED[name][0])  # fmt: skip
    return attack.text_hits(definition, named, truth(definition, server, shown)), len(named)


@pytest.mark.parametrize("name", list(DESIGNED))
def test_a_study_placed_as_before_falls_to_the_public_design(name: str) -> None:
    """The attack works: placement 1 (the design from the content, tasks created in input order) names every text."""
    hits, named = _attacked(name, Keys(b"k" * 32, placement=1))
    assert named == {"da-groups": 18, "summary-best-worst": 15}[name]
    assert hits == named


@pytest.mark.parametrize("name", list(DESIGNED))
def test_with_the_secret_no_text_is_named_better_than_chance(name: str) -> None:
    hits = named = 0
    for secret in _secrets(STUDIES):
        h, n = _attacked(name, Keys(secret))
        hits, named = hits + h, named + n
    chance = 1 / DESIGNED[name][1]
    result = stats.binomtest(hits, named, chance, alternative="greater")
    assert result.pvalue >= LEVEL, (hits, named, chance)
    # And the test could fail: the hit rate of a study placed as before is far beyond it.
    assert stats.binomtest(named // STUDIES * STUDIES, named, chance, alternative="greater").pvalue < LEVEL


HEADLINES = parse_definition(tomllib.loads(MINIMAL), "headlines.toml")


def _headlines(tmp_path: Path) -> tuple[list[Path], tuple[Path, ...]]:
    study = tmp_path / "study.jsonl"
    study.write_text("".join(json.dumps({"headline_1": f"First {i}", "headline_2": f"Second {i}", "systems": ["a", "b"],
                                         "id": i}) + "\n" for i in range(20)), encoding="utf-8")  # fmt: skip
    gold = tmp_path / "gold.jsonl"
    gold.write_text("".join(json.dumps({"headline_1": f"Gold {i}", "headline_2": f"Other {i}", "systems": ["a", "b"],
                                        "id": f"g{i}", "result": vote("1")}) + "\n" for i in range(4)),
                    encoding="utf-8")  # fmt: skip
    return [study], (gold,)


def _gold_hits(tmp_path: Path, keys: Keys) -> tuple[int, int, int]:
    """(gold items and attention checks among the places the seed alone gives, those places, tasks)."""
    inputs, gold = _headlines(tmp_path)
    server, shown = built(HEADLINES, inputs, keys, gold, attention=4)
    extra = sum(1 for _, _, key in server if shown[key].role != roles.STUDY)
    guessed = attack.public_gold_places(0, len(server) - extra, extra)
    hits = sum(1 for n, (_, _, key) in enumerate(server) if n in guessed and shown[key].role != roles.STUDY)
    return hits, len(guessed), len(server)


def test_gold_and_attention_places_are_no_better_than_a_guess_with_the_secret(tmp_path: Path) -> None:
    hits, guessed, total = _gold_hits(tmp_path, Keys(b"k" * 32, placement=1))
    assert hits == guessed == 8 and total == 28  # as before: the seed (0, the default) gives every place
    hits = guessed = 0
    for secret in _secrets(STUDIES):
        h, g, _ = _gold_hits(tmp_path, Keys(secret))
        hits, guessed = hits + h, guessed + g
    assert stats.binomtest(hits, guessed, 8 / 28, alternative="greater").pvalue >= LEVEL, (hits, guessed)


def test_every_role_carries_the_same_fields_with_the_same_kinds_of_values(tmp_path: Path) -> None:
    """A record id, a gold file's own fields: in the manifest, not on the server, whatever the role."""
    inputs, gold = _headlines(tmp_path)
    server, shown = built(HEADLINES, inputs, Keys(b"k" * 32), gold, attention=4)
    assert {shown[key].role for _, _, key in server} == {roles.STUDY, roles.GOLD, roles.ATTENTION}
    shapes = {tuple(sorted((k, type(v).__name__) for k, v in data.items())) for _, data, _ in server}
    assert shapes == {tuple(sorted((f, "str") for f in config.data_fields(HEADLINES)))}
    kept = {key: dict(shown[key].extra or {}) for _, _, key in server}
    assert sorted(str(v["record"]["id"]) for k, v in kept.items() if shown[k].role != roles.ATTENTION) == sorted(
        [str(i) for i in range(20)] + [f"g{i}" for i in range(4)])  # fmt: skip
    # A study placed as before sends its tasks as it did (the record's other fields on the server).
    old, _ = built(HEADLINES, inputs, Keys(b"k" * 32, placement=1), gold, attention=4)
    assert sum(1 for _, data, _ in old if "record" in data) == 24


def test_an_old_manifest_resumes_as_it_was(tmp_path: Path) -> None:
    """A manifest written before placements had a secret (a secret, no ``placement``): push designs from the
    content, places gold from the seed and creates in input order, as the study's first push did."""
    path = manifest.manifest_path(tmp_path, "old")
    path.write_text(json.dumps({"protocol": "da-groups", "project": "old", "seed": 0, "version": 2,
                                "secret": (b"o" * 32).hex()}) + "\n", encoding="utf-8")  # fmt: skip
    keys = manifest.keys_of(path)
    assert keys is not None and keys.placement == 1 and keys.design_secret() is None and keys.rng("gold") is None
    assert "placement" not in keys.header()
    definition = protocols.load(str(EXAMPLES / "da-groups.toml"))
    inputs = [EXAMPLES / "da-groups.jsonl"]
    with design.drawn_with(None):
        public = [t.key for t in format_for(definition).read(inputs, definition)]
    server, _ = built(definition, inputs, keys)
    assert [key for _, _, key in server] == public  # the same design, created in input order
    new, _ = built(definition, inputs, Keys(b"o" * 32))
    assert [key for _, _, key in new] != public and sorted(k for _, _, k in new) != sorted(public)
    # A new study's header says which scheme it uses; one this annols does not know is refused.
    assert Keys(b"o" * 32).header()["placement"] == manifest.PLACEMENT
    path.write_text(json.dumps({"protocol": "da-groups", "secret": (b"o" * 32).hex(), "placement": 9}) + "\n",
                    encoding="utf-8")  # fmt: skip
    with pytest.raises(Exception, match="placement"):
        manifest.keys_of(path)


def test_the_design_secret_is_set_for_each_step_and_never_left_set() -> None:
    definition = protocols.load(str(EXAMPLES / "summary-best-worst.toml"))
    inputs = [EXAMPLES / "summary-best-worst.jsonl"]
    keys = Keys(b"d" * 32)
    read = gold_lib.read_study(definition, inputs, keys)
    first = next(read)
    assert design._SECRET.get() is None  # between steps the caller's context is as it was
    rest = list(read)
    with design.drawn_with(keys.design_secret()):
        same = list(format_for(definition).read(inputs, definition))
    assert [t.key for t in [first, *rest]] == [t.key for t in same]
