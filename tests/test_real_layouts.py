"""Real layouts through a real Label Studio: the seed-004 sheet as distributed with three
annotators' copies, and a seed-001 release with the typos real annotators typed, pushed,
pulled and converted with every judgment identical."""

from __future__ import annotations

import csv
from pathlib import Path

from click.testing import CliRunner

from annols.cli import main
from annols.labelstudio import LabelStudioClient

from .conftest import LiveServer
from .formats.seed001_fixture import TYPOS, add_typos, make_seed001_study
from .formats.seed004_fixture import LETTERS, SYSTEMS, cells, make_seed004_study
from .test_push_pull import cli
from .test_round_trips import pull_and_convert


def test_seed004_sheet_and_copies_push_pull_and_come_back_cell_for_cell(
    label_studio: LiveServer, client: LabelStudioClient, tmp_path: Path
) -> None:
    study = make_seed004_study(tmp_path / "etc", cases=10, seed=7)
    title = "seed-004 sheet as distributed"
    env = {"LABEL_STUDIO_URL": label_studio.url, "LABEL_STUDIO_API_KEY": label_studio.api_key}
    args = ["push", "extractive-ranking", *map(str, study.inputs), "--project", title, "--with-annotations",
            "--manifest-dir", str(tmp_path / "m")]  # fmt: skip
    result = CliRunner(env=env).invoke(main, args)
    code, out, err = result.exit_code, result.stdout, result.stderr
    assert code == 0, err
    given = sum(len(by_case) for by_case in study.ranks.values())
    assert f"created 10, already present 0, total 10 ({given} annotations)" in out
    assert "note beside the table" in err and "input warning(s), listed above" in out
    # The project is named before the import runs, and records the overlap the study brought.
    assert result.output.index(f"Created project {title!r}") < result.output.index("Importing")
    project = client.find_project(title)
    assert project is not None and client.project(project.id)["maximum_annotations"] == 3

    pulled = pull_and_convert(label_studio, ["extractive-ranking"], title, tmp_path)
    code, out, err = cli(label_studio, "pull", "extractive-ranking", "--project", title, "-o", str(pulled))
    assert code == 0, err
    for name in ("export.json", "annotators.json", "project.json", "results.csv", f"{study.sheet.stem}_ben.xlsx"):
        assert f"wrote {pulled / name}" in out.splitlines(), name
    for annotator, copy in study.copies.items():
        assert cells(pulled / copy.name) == cells(copy), annotator

    code, out, err = cli(label_studio, "report", "extractive-ranking", str(pulled), "-o", str(tmp_path / "report"))
    assert code == 0, err
    with open(tmp_path / "report" / "tables" / "ranking_mean_rank.csv", encoding="utf-8") as f:
        table = {(r["dimension"], r["system"]): float(r["mean rank"]) for r in csv.DictReader(f)}
    # Independently: every filled cell of every copy, by the mapping's system.
    expected: dict[tuple[str, str], list[int]] = {}
    for by_case in study.ranks.values():
        for ranks in by_case.values():
            for (dimension, letter), rank in ranks.items():
                expected.setdefault((dimension, SYSTEMS[letter]), []).append(rank)
    assert set(table) == set(expected) and len(expected) == 3 * len(LETTERS)
    for key, ranks in expected.items():
        assert abs(table[key] - sum(ranks) / len(ranks)) < 1e-9, key


def test_seed001_release_with_typos_pushes_pulls_and_converts_with_every_judgment_identical(
    label_studio: LiveServer, tmp_path: Path
) -> None:
    root = tmp_path / "human_evaluation"
    study = make_seed001_study(root, samples=12, seed=5)
    where = add_typos(study)
    title = "seed-001 with typos"
    code, out, err = cli(label_studio, "push", "pairwise-aspects", str(root), "--project", title,
                         "--with-annotations", cwd=tmp_path)  # fmt: skip
    assert code == 0, err
    for path, line in where:
        assert f"warning: {path}, line {line}: ignored " in err, (path, line, err)
    assert out.splitlines()[-1] == (f"{len(TYPOS)} input warning(s), listed above: only harmless typos were "
                                    "ignored, no judgment guessed")  # fmt: skip

    pulled = pull_and_convert(label_studio, ["pairwise-aspects"], title, tmp_path)
    for annotator, by_sample in study.answers.items():
        for n in by_sample:
            assert (pulled / annotator / f"{n}.txt").read_text("utf-8") == study.canonical(annotator, n)
    code, out, err = cli(label_studio, "convert", "pairwise-aspects", str(pulled / "export.json"),
                         "-o", str(tmp_path / "again"))  # fmt: skip
    assert code == 0, err
    assert f"{len(TYPOS)} input warning(s), from push (task meta in export.json), listed above" in out
    assert err.count("warning: ") == len(TYPOS)
