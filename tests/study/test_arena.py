"""Arena battles in: a file in the public arena layout, read as a pull, reported as any pairwise study.

The fixture ``tests/data/arena/mt_bench_sample.jsonl`` is built after the public layout of the
MT-Bench human judgments release (lmsys/mt_bench_human_judgments on the Hugging Face hub: question_id,
model_a, model_b, winner, judge, conversation_a, conversation_b, turn; conversations as lists of
{content, role}), not downloaded: 4 systems, 6 questions, both turns, people ``expert_*`` and
``author_*`` and the model judge ``gpt4_pair`` on every battle, ties and ``tie (bothbad)``, and
voters who saw the same battle with the sides swapped. The checks compute every number again
from the file itself, by another path than annols': the Bradley-Terry strengths with choix, the
agreement as FastChat's ``compute_agreement.py`` counts it.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import choix  # type: ignore[import-untyped, unused-ignore]
import numpy as np
import pytest
from click.testing import CliRunner

from annols import protocols
from annols.cli import main
from annols.errors import AnnolsError, InputError
from annols.report import ReportOptions
from annols.study import arena
from tests.conftest import DATA
from tests.report.build import build_report

FIXTURE = DATA / "arena" / "mt_bench_sample.jsonl"
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "arena.toml"


def rows() -> list[dict[str, Any]]:
    return [json.loads(line) for line in FIXTURE.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.fixture(scope="module")
def reported(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("arena")
    definition = protocols.load(str(EXAMPLE))
    done = arena.import_arena(definition, FIXTURE, tmp / "pull")
    result = build_report(definition, [tmp / "pull"], tmp / "report", ReportOptions(seed=3, bootstrap=100))
    tables = {t.name: t.frame for s in result.sections for t in s.tables}
    return {"done": done, "tables": tables, "result": result}


def test_people_and_model_judges_are_told_apart(reported: dict[str, Any]) -> None:
    done = reported["done"]
    assert done.judges == ["gpt4_pair"]
    assert done.people == ["author_0", "author_1", "expert_0", "expert_1", "expert_2"]
    data = rows()
    assert done.judge_votes == sum(r["judge"] == "gpt4_pair" for r in data)
    assert done.votes == len(data) - done.judge_votes
    assert done.items == len({(r["question_id"], r["turn"], *sorted((r["model_a"], r["model_b"]))) for r in data})


@pytest.mark.parametrize(("judge", "model"), [
    ("gpt4_pair", True), ("gpt-4", True), ("claude-v1", True), ("llama3_judge", True), ("vicuna-13b", True),
    ("expert_0", False), ("author_3", False), ("arena_user_8132", False), ("human", False),
    ("gptfan", False), ("palmer_j", False), ("gpt_fan", True),
])  # fmt: skip
def test_which_judge_values_name_a_model(judge: str, model: bool) -> None:
    assert arena.is_model(judge, ["gpt-4", "claude-v1", "vicuna-13b-v1.2"]) is model


def test_a_short_system_name_names_no_judge() -> None:
    assert arena.is_model("author_0", ["a", "b"]) is False
    assert arena.is_model("abc_judge", ["abc"]) is True


def test_overrides_name_judges_and_people() -> None:
    assert arena.is_model("gpt_fan", [], humans=["gpt_fan"]) is False
    assert arena.is_model("rater_x", [], judges=["rater_x"]) is True


def _wins_and_ties(data: list[dict[str, Any]], systems: list[str]) -> tuple[np.ndarray, np.ndarray]:
    at = {s: i for i, s in enumerate(systems)}
    k = len(systems)
    wins, ties = np.zeros((k, k)), np.zeros((k, k))
    for r in data:
        a, b = at[r["model_a"]], at[r["model_b"]]
        if r["winner"] == "model_a":
            wins[a, b] += 1
        elif r["winner"] == "model_b":
            wins[b, a] += 1
        else:
            ties[a, b] += 1
            ties[b, a] += 1
    return wins, ties


def test_bradley_terry_strengths_equal_choix_on_the_same_battles(reported: dict[str, Any]) -> None:
    humans = [r for r in rows() if r["judge"] != "gpt4_pair"]
    systems = sorted({r["model_a"] for r in humans} | {r["model_b"] for r in humans})
    wins, ties = _wins_and_ties(humans, systems)
    theta = choix.ilsr_pairwise_dense(wins + ties / 2, alpha=0.01, max_iter=10_000)
    expected = np.exp(theta) / np.exp(theta).sum()
    table = reported["tables"]["pairwise_bradley_terry"].set_index("system")
    got = table.loc[systems, "strength"].to_numpy(dtype=float)
    np.testing.assert_allclose(got, expected, rtol=1e-6)
    assert table.loc[systems, "judgments"].sum() == 2 * len(humans)  # each battle counts for both systems
    assert list(table.sort_values("rank").index[:1]) == ["gpt-4"]  # the planted strongest
    assert (table["strength CI low"] <= table["strength"]).all()
    assert (table["strength"] <= table["strength CI high"]).all()
    assert table["group"].str.len().gt(0).all() and table["rank low"].notna().all()


def _fastchat_agreement(data: list[dict[str, Any]], judge: str | None, ban_ties: bool) -> tuple[int, int]:
    """The counting of FastChat's compute_agreement.py, pooled over both turns, written again here."""
    votes: dict[tuple[Any, ...], dict[str, list[str]]] = {}
    for r in data:
        a, b, w = r["model_a"], r["model_b"], r["winner"]
        if a > b:
            a, b = b, a
            w = {"model_a": "model_b", "model_b": "model_a"}.get(w, w)
        who = "judge" if r["judge"] == "gpt4_pair" else "human"
        votes.setdefault((r["turn"], r["question_id"], a, b), {}).setdefault(who, []).append(w)

    def banned(v: str) -> bool:
        return ban_ties and "tie" in v

    def equal(v: str, u: str) -> bool:
        return ("tie" in v and "tie" in u) or v == u

    agree = total = 0
    for found in votes.values():
        humans = found.get("human", [])
        if judge is None:
            pairs = list(itertools.combinations(humans, 2))
        else:
            pairs = [(found["judge"][0], h) for h in humans] if "judge" in found else []
        for v, u in pairs:
            if banned(v) or banned(u):
                continue
            total += 1
            agree += equal(v, u)
    return agree, total


def test_judge_and_human_agreement_equal_fastchat_counting(reported: dict[str, Any]) -> None:
    table = reported["tables"]["judges_mt_bench_agreement"].set_index("raters")
    data = rows()
    for raters, judge in (("humans with each other", None), ("judge:gpt4_pair with humans", "gpt4_pair")):
        agree, total = _fastchat_agreement(data, judge, ban_ties=False)
        assert (table.loc[raters, "agree"], table.loc[raters, "pairs"]) == (agree, total)
        assert table.loc[raters, "agreement %"] == pytest.approx(100 * agree / total)
        agree, total = _fastchat_agreement(data, judge, ban_ties=True)
        assert (table.loc[raters, "agree w/o tie"], table.loc[raters, "pairs w/o tie"]) == (agree, total)
        assert total < table.loc[raters, "pairs"]  # the fixture's ties were left out


def test_the_alternative_annotator_test_and_human_agreement_are_reported(reported: dict[str, Any]) -> None:
    tables = reported["tables"]
    assert "pairwise_agreement" in tables and len(tables["pairwise_agreement"])
    alt = [name for name in tables if name.startswith("judges_alt_test")]
    assert alt, sorted(tables)
    assert any(len(tables[n]) for n in alt)


def _write(path: Path, data: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in data), encoding="utf-8")
    return path


def test_a_json_array_and_extra_columns_are_read_and_said(tmp_path: Path) -> None:
    data = rows()[:12]
    for r in data:
        r["language"] = "English"
    source = tmp_path / "battles.json"
    source.write_text(json.dumps(data), encoding="utf-8")
    done = arena.import_arena(protocols.load(str(EXAMPLE)), source, tmp_path / "pull")
    assert done.votes + done.judge_votes == 12
    assert any("language" in w for w in done.warnings)


def test_parquet_as_the_hub_serves_it(tmp_path: Path) -> None:
    import pyarrow as pa  # type: ignore[import-untyped, unused-ignore]
    import pyarrow.parquet as pq  # type: ignore[import-untyped, unused-ignore]

    data = rows()[:20]
    source = tmp_path / "human-00000-of-00001.parquet"
    pq.write_table(pa.Table.from_pylist(data), source)
    done = arena.import_arena(protocols.load(str(EXAMPLE)), source, tmp_path / "pull")
    assert done.votes + done.judge_votes == 20


def test_an_exact_repeat_counts_once_and_says_so(tmp_path: Path) -> None:
    data = rows()[:5]
    done = arena.import_arena(protocols.load(str(EXAMPLE)), _write(tmp_path / "b.jsonl", [*data, data[0]]),
                              tmp_path / "pull")  # fmt: skip
    assert done.votes + done.judge_votes == 5
    assert any("line 6 repeats line 1" in w for w in done.warnings)


@pytest.mark.parametrize(("change", "message"), [
    (lambda r: r.update(winner="model_c"), "'winner': 'model_c' is not one of"),
    (lambda r: r.update(model_b=r["model_a"]), "the same system"),
    (lambda r: r.pop("judge"), "'judge': missing"),
    (lambda r: r.update(conversation_a=[{"role": "user"}]), "conversation_a[0]"),
    (lambda r: r.update(turn=0), "'turn': 0 is not a turn number"),
])  # fmt: skip
def test_a_bad_row_is_refused_in_one_line_and_nothing_is_written(tmp_path: Path, change: Any, message: str) -> None:
    data = rows()[:4]
    change(data[2])
    with pytest.raises(InputError) as e:
        arena.import_arena(protocols.load(str(EXAMPLE)), _write(tmp_path / "b.jsonl", data), tmp_path / "pull")
    assert "line 3" in str(e.value) and message in str(e.value) and "\n" not in str(e.value)
    assert not (tmp_path / "pull").exists() and [p.name for p in tmp_path.iterdir()] == ["b.jsonl"]


def test_two_verdicts_of_one_voter_on_one_battle_are_never_merged(tmp_path: Path) -> None:
    first = rows()[0]
    other = dict(first, winner="model_b" if first["winner"] != "model_b" else "model_a")
    with pytest.raises(InputError, match="voted otherwise on the same battle at line 1"):
        arena.import_arena(protocols.load(str(EXAMPLE)), _write(tmp_path / "b.jsonl", [first, other]),
                           tmp_path / "pull")  # fmt: skip


def test_one_battle_with_two_different_conversations_is_refused(tmp_path: Path) -> None:
    first = rows()[0]
    other = dict(first, judge="expert_9", conversation_a=[{"role": "user", "content": "something else"}])
    with pytest.raises(InputError, match="has other conversations at line 1"):
        arena.import_arena(protocols.load(str(EXAMPLE)), _write(tmp_path / "b.jsonl", [first, other]),
                           tmp_path / "pull")  # fmt: skip


def test_a_folder_with_files_is_not_overwritten(tmp_path: Path) -> None:
    (tmp_path / "pull").mkdir()
    (tmp_path / "pull" / "keep.txt").write_text("x")
    with pytest.raises(AnnolsError, match="not an empty folder"):
        arena.import_arena(protocols.load(str(EXAMPLE)), FIXTURE, tmp_path / "pull")


def test_a_definition_without_the_arena_answers_is_refused(tmp_path: Path) -> None:
    with pytest.raises(AnnolsError, match="pairwise definition with one aspect"):
        arena.import_arena(protocols.load("pairwise-aspects"), FIXTURE, tmp_path / "pull")
    other = tmp_path / "other.toml"
    other.write_text(EXAMPLE.read_text(encoding="utf-8").replace('code = "bothbad"', 'code = "both-bad"'), "utf-8")
    with pytest.raises(AnnolsError, match="answer codes A"):
        arena.import_arena(protocols.load(str(other)), FIXTURE, tmp_path / "pull")
    assert not (tmp_path / "pull").exists()


def test_the_command_imports_and_the_report_reads_it(tmp_path: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(main, ["arena", str(EXAMPLE), str(FIXTURE), "-o", str(tmp_path / "pull")])
    assert result.exit_code == 0, result.output
    assert "4 systems" in result.output and "gpt4_pair" in result.output
    result = runner.invoke(main, ["report", str(EXAMPLE), str(tmp_path / "pull"), "-o", str(tmp_path / "report"),
                                  "--bootstrap", "50"])  # fmt: skip
    assert result.exit_code == 0, result.output
    text = (tmp_path / "report" / "report.md").read_text(encoding="utf-8")
    assert "Bradley-Terry" in text and "as MT-Bench counts it" in text
