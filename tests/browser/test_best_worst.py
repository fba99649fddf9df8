"""The best-worst style in Label Studio's editor, in Chromium: one pool of four summaries
pushed by `annols push` (one tuple, shuffled), best and worst chosen with clicks, a submit
missing one worst answer refused with nothing sent, and the pulled judgments naming the
systems that were shown at the positions clicked."""

from __future__ import annotations

import json
from pathlib import Path

from playwright.sync_api import Locator

from annols import protocols
from annols.labelstudio.client import LabelStudioClient
from annols.study.exports import read_export
from annols.styles import decode
from annols.styles.judgments import BestWorst
from tests.browser.conftest import LabelingView, pull, push
from tests.browser.test_annotate import read_csv
from tests.browser.test_enforced import annotations_of
from tests.conftest import ROOT, LiveServer

EXAMPLES = ROOT / "examples"
# The planted preference: best and worst per aspect, by system.
PICKS = {"informativeness": ("abstractive-a", "hallucinator"), "fluency": ("lead-extract", "keyword-dump")}
TEXTS = {"informativeness": "Informativeness", "fluency": "Fluency"}


def line(labeling: LabelingView, aspect_text: str, end: str) -> Locator:
    """The choices of the best (or worst) line of one aspect's block."""
    heading = f"(//h3[normalize-space()='{aspect_text}']/following::h4[normalize-space()='{end}'])[1]"
    return labeling.page.locator(f"xpath={heading}/..").locator(".lsf-choices")


def test_best_worst_refuses_a_missing_worst_then_pulls_the_systems_shown(
    label_studio: LiveServer, client: LabelStudioClient, labeling: LabelingView, tmp_path: Path
) -> None:
    definition = EXAMPLES / "summary-best-worst.toml"
    records = [json.loads(x) for x in (EXAMPLES / "summary-best-worst.jsonl").read_text("utf-8").splitlines()]
    pool = [r for r in records if r["document"] == records[0]["document"] and r["id"] != "fragmenter"]
    source = tmp_path / "pool.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in pool), encoding="utf-8")
    title = "browser best-worst"
    project = push(label_studio, [str(definition), str(source), "--seed", "5"], title, tmp_path)

    task = labeling.open(project)
    shown = labeling.shown_systems
    assert sorted(shown) == sorted(r["id"] for r in pool)
    text_of = {r["id"]: r["summary"] for r in pool}
    for i, system in enumerate(shown):
        assert task["data"][f"summary_{i + 1}"] == text_of[system]
    assert not any(system in json.dumps(task["data"]) for system in shown)

    letter = "ABCD"
    for aspect, (best, worst) in PICKS.items():
        labeling.choose(line(labeling, TEXTS[aspect], "Best"), f"Summary {letter[shown.index(best)]}")
        if aspect != "fluency":
            labeling.choose(line(labeling, TEXTS[aspect], "Worst"), f"Summary {letter[shown.index(worst)]}")
    assert labeling.refused() == "Please answer: Worst: Fluency"
    assert annotations_of(client, project) == 0
    labeling.choose(line(labeling, "Fluency", "Worst"), f"Summary {letter[shown.index(PICKS['fluency'][1])]}")
    labeling.screenshot("summary-best-worst")
    labeling.submit()
    assert annotations_of(client, project) == 1

    out = pull(label_studio, [str(definition)], title, tmp_path / "pulled")
    rows = read_csv(out / "results.csv")
    assert sorted((r["question"], r["system"]) for r in rows) == sorted(
        (f"{aspect}_{end}", system) for aspect, (best, worst) in PICKS.items()
        for end, system in (("best", best), ("worst", worst))
    )  # fmt: skip
    d = protocols.load(str(definition))
    (exported,) = read_export(out / "export.json")
    judged = decode(d, exported, exported.annotations[0])
    assert judged == [
        BestWorst(aspect, shown, shown.index(best), shown.index(worst)) for aspect, (best, worst) in PICKS.items()
    ]
