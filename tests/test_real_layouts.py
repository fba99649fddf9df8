"""Real layouts through a real Label Studio: the seed-004 sheet as distributed with three
annotators' copies (both layouts; and the real release too when ANNOLS_SEED004_DIR points at
it), and a seed-001 release with the typos real annotators typed, pushed, pulled and
converted with every judgment identical."""

from __future__ import annotations

import csv
import json
import os
import shutil
from pathlib import Path

import openpyxl
import pytest
from click.testing import CliRunner

from annols.cli import main
from annols.labelstudio.client import LabelStudioClient
from tests.conftest import LiveServer
from tests.formats.seed001_fixture import TYPOS, add_typos, make_seed001_study
from tests.formats.seed004_fixture import DIMENSIONS, LAYOUTS, LETTERS, STEM, SYSTEMS, cells, make_seed004_study
from tests.study.test_push_pull import cli
from tests.test_round_trips import pull_and_convert

REAL_SEED004 = os.environ.get("ANNOLS_SEED004_DIR", "")
"""The real release, not in the repository (no licence): a folder with
``distribute/sampled_results_v2.1.xlsx`` and ``results/sampled_results_v2.1_<annotator>.xlsx``
(the release's ``etc/human evaluation/`` will do). When set, the same test runs on it too."""
SEED004_SOURCES = [*LAYOUTS, *(["real"] if REAL_SEED004 else [])]


def _seed004_inputs(source: str, root: Path) -> tuple[Path, list[Path]]:
    """The distributed sheet and the returned copies in ``root`` (with systems.json), as released."""
    if source != "real":
        study = make_seed004_study(root, cases=10, seed=7, layout=source)
        return study.sheet, list(study.copies.values())
    real = Path(REAL_SEED004)
    (root / "distribute").mkdir(parents=True)
    (root / "results").mkdir()
    sheet = Path(shutil.copy(real / "distribute" / f"{STEM}.xlsx", root / "distribute"))
    copies = [
        Path(shutil.copy(p, root / "results"))
        for p in sorted((real / "results").glob(f"{STEM}_*.xlsx"))
        if not p.stem.endswith("_merged")
    ]  # the authors' merged workbook is not a returned copy
    (root / "systems.json").write_text(json.dumps(SYSTEMS), encoding="utf-8")  # their merged workbook's mapping
    return sheet, copies


def _filled_ranks(copy: Path) -> dict[tuple[int, str, str], int]:
    """(case, dimension, letter) -> rank of every filled rank cell, read with openpyxl alone."""
    found, case = {}, 0
    for a, _, *ranks in openpyxl.load_workbook(copy).active.iter_rows(max_col=5, values_only=True):
        if isinstance(a, str) and a.strip().startswith("Case "):
            case = int(a.split()[1])
        elif a in LETTERS:
            found.update({(case, d, a): int(r) for d, r in zip(DIMENSIONS, ranks, strict=True) if r not in (None, "")})
    return found


@pytest.mark.parametrize("source", SEED004_SOURCES)
def test_seed004_sheet_and_copies_push_pull_and_come_back_cell_for_cell(
    label_studio: LiveServer, client: LabelStudioClient, tmp_path: Path, source: str
) -> None:
    """The release folder as it is: tasks, push --with-annotations, pull and convert give every
    annotator's copy back cell for cell (headers, sample ids and rank cells as they were stored)."""
    root = tmp_path / "human evaluation"
    sheet, copies = _seed004_inputs(source, root)
    given = {copy: _filled_ranks(copy) for copy in copies}
    cases = sum(1 for row in openpyxl.load_workbook(sheet).active.iter_rows(max_col=1, values_only=True)
                if str(row[0] or "").startswith("Case "))  # fmt: skip
    annotations = sum(len({c for c, _, _ in ranks}) for ranks in given.values())
    title = f"seed-004 sheet as distributed ({source})"
    env = {"LABEL_STUDIO_URL": label_studio.url, "LABEL_STUDIO_API_KEY": label_studio.api_key}

    offline = CliRunner(env=env).invoke(main, [
        "tasks", "extractive-ranking", str(root), "--with-annotations", "-o", str(tmp_path / "tasks.json"),
        "--manifest-dir", str(tmp_path / "t")])  # fmt: skip
    assert offline.exit_code == 0, offline.stderr
    imported = json.loads((tmp_path / "tasks.json").read_text("utf-8"))
    assert len(imported) == cases and sum(len(t.get("annotations", [])) for t in imported) == annotations

    args = ["push", "extractive-ranking", str(root), "--project", title, "--with-annotations",
            "--manifest-dir", str(tmp_path / ".annols")]  # where pull (run in tmp_path) finds it  # fmt: skip
    result = CliRunner(env=env).invoke(main, args)
    code, out, err = result.exit_code, result.stdout, result.stderr
    assert code == 0, err
    assert f"created {cases}, already present 0, total {cases} ({annotations} annotations)" in out
    if source != "real":
        assert "note beside the table" in err and "input warning(s), listed above" in out
    # The project is named before the import runs, and records the overlap the study brought.
    assert result.output.index(f"Created project {title!r}") < result.output.index("Importing")
    project = client.find_project(title)
    assert project is not None and client.project(project.id)["maximum_annotations"] == len(copies)

    pulled = pull_and_convert(label_studio, ["extractive-ranking"], title, tmp_path)  # convert == pull, byte for byte
    for copy in copies:
        assert cells(pulled / copy.name) == cells(copy), copy.name

    code, out, err = cli(label_studio, "report", "extractive-ranking", str(pulled), "-o", str(tmp_path / "report"))
    assert code == 0, err
    with open(tmp_path / "report" / "tables" / "ranking_mean_rank.csv", encoding="utf-8") as f:
        table = {(r["dimension"], r["system"]): float(r["mean rank"]) for r in csv.DictReader(f)}
    # Independently: every filled cell of every copy, by the mapping's system; by the items rule, each case's mean
    # over the copies that ranked it, then the mean over cases.
    expected: dict[tuple[str, str], dict[int, list[int]]] = {}
    for ranks in given.values():
        for (case, dimension, letter), rank in ranks.items():
            expected.setdefault((dimension, SYSTEMS[letter]), {}).setdefault(case, []).append(rank)
    assert set(table) == set(expected) and len(expected) == 3 * len(LETTERS)
    for key, by_case in expected.items():  # the report writes 4 decimals
        mean = sum(sum(r) / len(r) for r in by_case.values()) / len(by_case)
        assert f"{table[key]:.4f}" == f"{mean:.4f}", key


def test_the_fixture_copies_hold_what_the_fixture_says(tmp_path: Path) -> None:
    """The independent reader above against the fixture's own record of the ranks it typed."""
    for layout in LAYOUTS:
        study = make_seed004_study(tmp_path / layout, cases=10, seed=7, layout=layout)
        for annotator, copy in study.copies.items():
            want = {(c, d, p): r for c, by in study.ranks[annotator].items() for (d, p), r in by.items()}
            assert _filled_ranks(copy) == want


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
    said = "input warning(s), from push (blinding.jsonl, or the task meta of earlier pushes), listed above"
    assert f"{len(TYPOS)} {said}" in out
    assert err.count("warning: ") == len(TYPOS)
