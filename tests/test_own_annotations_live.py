"""An own ratings study made elsewhere, imported with `annols push --with-annotations` into the real
server, pulled and reported: results.csv and the report's numbers must be what pandas computes on the
input CSV itself."""

from __future__ import annotations

import csv
import json
import random
from pathlib import Path

import pandas as pd  # type: ignore[import-untyped, unused-ignore]
import pytest

from annols.labelstudio.client import LabelStudioClient
from tests.conftest import ROOT, LiveServer
from tests.study.test_push_pull import cli

DEFINITION = ROOT / "examples" / "summeval-ratings.toml"
ARTICLES = ROOT / "examples" / "summeval-ratings.jsonl"
ASPECTS = ("coherence", "consistency", "fluency", "relevance")
ANNOTATORS = ("A", "B", "C")
CELLS = [f"{a}_summary_{i}" for a in ASPECTS for i in range(1, 5)]
DECIMALS = 5e-5  # the report's tables hold 4 decimals


def study_csv(path: Path) -> Path:
    """Three annotators' ratings of every article; C's rows come last, apart from the others of their task."""
    rng = random.Random(29)
    articles = [json.loads(line) for line in ARTICLES.read_text(encoding="utf-8").splitlines()]
    rows = []
    for annotator in ANNOTATORS:
        for article in articles:
            row = {k: article[k] for k in ("id", "document", "summary_1", "summary_2", "summary_3", "summary_4")}
            row["systems"] = "|".join(article["systems"])
            row["annotator"] = annotator
            # Systems differ in quality, annotators in leniency: the paired tests have something to find.
            for cell in CELLS:
                quality = int(cell[-1]) - 1
                row[cell] = str(min(5, max(1, 5 - quality + rng.choice((-1, 0, 0, 1)) - (annotator == "C"))))
            rows.append(row)
    rows.sort(key=lambda r: (r["annotator"] == "C", r["id"], r["annotator"]))
    with path.open("w", encoding="utf-8", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return path


def long_ratings(path: Path) -> pd.DataFrame:
    """One row per rating of the CSV: article id, annotator, aspect, system, value."""
    frame = pd.read_csv(path, dtype=str)
    long = frame.melt(id_vars=["id", "annotator", "systems"], value_vars=CELLS, var_name="cell", value_name="value")
    long["aspect"] = long["cell"].str.rsplit("_", n=2).str[0]
    position = long["cell"].str[-1].astype(int) - 1
    long["system"] = [s.split("|")[p] for s, p in zip(long["systems"], position, strict=True)]
    long["value"] = long["value"].astype(float)
    return long


@pytest.fixture(scope="module")
def imported(label_studio: LiveServer, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    tmp = tmp_path_factory.mktemp("own-annotations")
    inputs = study_csv(tmp / "study.csv")
    title = "own ratings imported"
    code, out, err = cli(label_studio, "push", str(DEFINITION), str(inputs), "--project", title, "--with-annotations",
                         "--seed", "11", cwd=tmp)  # fmt: skip
    assert code == 0, err
    articles = len(ARTICLES.read_text(encoding="utf-8").splitlines())
    assert out.splitlines()[-1] == (
        f"created {articles}, already present 0, total {articles} ({articles} repeated "
        f"input record(s) merged into their first task; {articles * 3} annotations)"
    )
    code, out, err = cli(label_studio, "push", str(DEFINITION), str(inputs), "--project", title, "--with-annotations",
                         "--seed", "11", cwd=tmp)  # fmt: skip
    assert code == 0, err
    assert out.splitlines()[-1].startswith(f"created 0, already present {articles}, total {articles}")
    folder = tmp / "pulled"
    code, out, err = cli(label_studio, "pull", str(DEFINITION), "--project", title, "-o", str(folder), cwd=tmp)
    assert code == 0, err
    assert f"Counts match the server: {articles} tasks, {articles * 3} annotations, 0 skipped." in out
    report = tmp / "report"
    code, out, err = cli(label_studio, "report", str(DEFINITION), str(folder), "-o", str(report))
    assert code == 0, err
    return inputs, folder, report


def test_pulled_results_are_the_csv_ratings(imported: tuple[Path, Path, Path], client: LabelStudioClient) -> None:
    inputs, folder, _ = imported
    long = long_ratings(inputs)
    lines = [json.loads(line) for line in (folder / "summeval-ratings.jsonl").read_text("utf-8").splitlines()]
    article_of = {line["key"]: line["data"]["record"]["id"] for line in lines}
    assert len(lines) == len(long) // len(CELLS)
    results = pd.read_csv(folder / "results.csv", dtype=str)
    aspect = results["question"].str.rsplit("_", n=2).str[0]
    got = sorted(zip(results["task_key"].map(article_of), results["annotator"], aspect, results["system"],
                     results["answer"].astype(float), strict=True))  # fmt: skip
    want = sorted(zip(long["id"], long["annotator"] + "@annotators.annols.local", long["aspect"], long["system"],
                      long["value"], strict=True))  # fmt: skip
    assert got == want
    # The judged tasks were shuffled like any (the answers moved with their candidates): blinding holds for
    # annotators who add judgments in Label Studio.
    given = {line["data"]["record"]["id"]: line["systems"] for line in lines}
    inputs_order = long.drop_duplicates("id").set_index("id")["systems"].str.split("|")
    assert any(given[i] != inputs_order[i] for i in given)
    # Each annotation is by the Label Studio user standing for its annotator.
    users = client.users()
    assert {f"{a}@annotators.annols.local" for a in ANNOTATORS} <= set(users)


def test_report_means_and_paired_differences_are_pandas_on_the_csv(imported: tuple[Path, Path, Path]) -> None:
    inputs, _, report = imported
    long = long_ratings(inputs)
    means = long.groupby(["aspect", "system"])["value"].mean()
    summary = pd.read_csv(report / "tables" / "ratings_summary.csv")
    assert len(summary) == len(means)
    for row in summary.itertuples(index=False):
        assert row.mean == pytest.approx(means[(row.aspect.lower(), row.system)], abs=DECIMALS)

    per_article = long.groupby(["aspect", "id", "system"])["value"].mean().unstack("system")
    tests = pd.read_csv(report / "tables" / "ratings_paired_tests.csv")
    systems = sorted(long["system"].unique())
    assert len(tests) == len(ASPECTS) * len(systems) * (len(systems) - 1) // 2
    for row in tests.to_dict("records"):
        both = per_article.loc[row["aspect"].lower()]
        difference = (both[row["system"]] - both[row["opponent"]]).mean()
        assert row["mean difference"] == pytest.approx(difference, abs=DECIMALS)
    assert (tests["mean difference"] != 0).any()


def test_with_annotations_on_input_without_judgments_is_refused(
    label_studio: LiveServer, client: LabelStudioClient, tmp_path: Path
) -> None:
    title = "own ratings no judgments"
    code, _, err = cli(label_studio, "push", str(DEFINITION), str(ARTICLES), "--project", title,
                       "--with-annotations", cwd=tmp_path)  # fmt: skip
    assert code != 0
    assert len(err.strip().splitlines()) == 1
    assert "--with-annotations, but the input holds no judgments; it needs an 'annotator' field" in err
    assert client.find_project(title) is None  # nothing pushed


def test_a_pulled_judgments_file_pushes_the_same_study_again(
    imported: tuple[Path, Path, Path], label_studio: LiveServer, tmp_path: Path
) -> None:
    inputs, folder, _ = imported
    title = "own ratings copied"
    code, out, err = cli(label_studio, "push", str(DEFINITION), str(folder / "summeval-ratings.jsonl"), "--project",
                         title, "--with-annotations", "--seed", "12", cwd=tmp_path)  # fmt: skip
    assert code == 0, err
    articles = len(ARTICLES.read_text(encoding="utf-8").splitlines())
    # A pull writes the lines of a task together: one task each, with its three annotations in one import.
    total = f"created {articles}, already present 0, total {articles}"
    assert out.splitlines()[-1] == f"{total} ({articles * 3} annotations)"
    again = tmp_path / "again"
    code, out, err = cli(label_studio, "pull", str(DEFINITION), "--project", title, "-o", str(again),
                         cwd=tmp_path)  # fmt: skip
    assert code == 0, err
    assert f"Counts match the server: {articles} tasks, {articles * 3} annotations, 0 skipped." in out

    def judged(pulled: Path) -> list[tuple[str, str, str, str, float]]:
        lines = [json.loads(x) for x in (pulled / "summeval-ratings.jsonl").read_text("utf-8").splitlines()]
        return sorted((line["data"]["record"]["id"], line["annotator"], j["aspect"], j["system"], j["value"])
                      for line in lines for j in line["judgments"])  # fmt: skip

    long = long_ratings(inputs)
    assert judged(again) == sorted(zip(long["id"], long["annotator"] + "@annotators.annols.local", long["aspect"],
                                       long["system"], long["value"], strict=True))  # fmt: skip
