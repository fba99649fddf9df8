"""Adjudication in Label Studio's own editor, in Chromium.

A pairwise-aspects study (seed-001 layout) of one sample on which annotators A and B
disagree is pushed with its judgments and adjudicated by ``annols adjudicate``. The
adjudicator opens the adjudication task from the Data Manager (a click on the task, which
is ``?task=ID``): the editor's top bar lists every version, each prediction named by its
``model_version`` (the annotator). A click on B's version shows B's answers; its menu's
"Duplicate Annotation" makes an annotation from it; the adjudicator changes one answer and
submits. ``annols pull`` of the adjudication project writes ``adjudicated/0.txt`` holding
exactly B's answers with that one change, and no other annotator's file.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from playwright.sync_api import Locator

from annols.labelstudio.client import LabelStudioClient
from tests.browser.conftest import PUSHED_FROM, LabelingView, pull, push
from tests.conftest import LiveServer
from tests.formats.seed001_fixture import ANNOTATORS, ASPECTS, canonical_file, make_seed001_study
from tests.study.test_push_pull import cli

SHOWN = {"1": "1: Summary #1 is better", "2": "2: Summary #2 is better", "0": "0: tie"}
ANSWERS = {  # A and B disagree on two aspects
    "A": {"informative": "1", "factual consistency": "1", "readability": "0"},
    "B": {"informative": "2", "factual consistency": "1", "readability": "2"},
}
PICKED, CHANGED, TO = "B", "readability", "1"


def version(labeling: LabelingView, name: str) -> Locator:
    """The button of one version (annotation or prediction) in the editor's top bar, by its exact name."""
    page = labeling.page
    named = page.locator(".lsf-annotation-button__name", has_text=re.compile(f"^\\s*{re.escape(name)}\\s*$"))
    return page.locator(".lsf-annotation-button", has=named)


def checked(labeling: LabelingView, expected: dict[str, str]) -> dict[str, str]:
    """The answer checked under each aspect, as its code, once the editor shows ``expected``
    (it redraws the choices a moment after a version is selected) or after 10 s."""
    code_of = {text: code for code, text in SHOWN.items()}
    out: dict[str, str] = {}
    for _ in range(100):
        found = labeling.page.evaluate(_CHECKED, list(ASPECTS))
        out = {a: ",".join(code_of.get(n, n) for n in names) for a, names in found.items() if names}
        if out == expected:
            break
        labeling.page.wait_for_timeout(100)
    return out


def test_adjudicator_picks_a_version_edits_and_submits(
    label_studio: LiveServer, client: LabelStudioClient, labeling: LabelingView, tmp_path: Path
) -> None:
    study = make_seed001_study(tmp_path / "human_evaluation", samples=1, seed=4, gaps=False)
    s = study.samples[0]
    for annotator in ANNOTATORS:
        if annotator not in ANSWERS:
            shutil.rmtree(study.root / annotator)
            continue
        study.file(annotator, 0).write_text(
            canonical_file(s.document, s.summary_1, s.summary_2, ANSWERS[annotator]), encoding="utf-8"
        )
    title = "browser adjudication"
    push(label_studio, ["pairwise-aspects", str(study.root), "--with-annotations"], title, tmp_path)
    into = f"{title} adjudication"
    code, out, err = cli(label_studio, "adjudicate", "pairwise-aspects", "--project", title, "--into", into,
                         cwd=tmp_path)  # the study's manifest is there; the adjudication project's goes beside it
    assert code == 0, err
    assert out.splitlines()[0] == "1 of 1 items with two or more annotators disagree"
    project = client.find_project(into)
    assert project is not None
    PUSHED_FROM[project.id] = (tmp_path, into)
    (task,) = client.export_tasks(project.id)

    page = labeling.page
    page.goto(f"{label_studio.url}/projects/{project.id}/data?tab=0&task={task['id']}")
    page.get_by_test_id("bottombar-submit-button").wait_for()
    # Every annotator's version is listed by name.
    names = page.locator(".lsf-annotation-button__name")
    names.first.wait_for()
    for annotator in ANSWERS:
        version(labeling, annotator).wait_for()
    assert {n.strip() for n in names.all_inner_texts()} >= set(ANSWERS)
    for annotator, answers in ANSWERS.items():  # a click shows that version's answers
        version(labeling, annotator).locator(".lsf-annotation-button__mainSection").click()
        page.wait_for_function(_SELECTED, arg=annotator)
        assert checked(labeling, answers) == answers, annotator
    labeling.screenshot("adjudication")

    # Start from B's version: its menu, "Duplicate Annotation".
    picked = version(labeling, PICKED)
    picked.locator(".lsf-annotation-button__trigger").click()
    page.get_by_text("Duplicate Annotation", exact=True).click()
    page.wait_for_function(_SELECTED_ANNOTATION)
    assert checked(labeling, ANSWERS[PICKED]) == ANSWERS[PICKED]
    labeling.choose(labeling.choices_after(CHANGED), SHOWN[TO])
    saved = labeling.submit()
    assert saved["result"]

    out_dir = pull(label_studio, ["pairwise-aspects"], into, tmp_path / "pulled")
    want = {**ANSWERS[PICKED], CHANGED: TO}
    expected = canonical_file(s.document, s.summary_1, s.summary_2, want)
    assert (out_dir / "adjudicated" / "0.txt").read_bytes() == expected.encode("utf-8")
    assert sorted(p.name for p in out_dir.iterdir() if p.is_dir()) == ["adjudicated"]


# The selected version in the top bar is the prediction named `name`.
_SELECTED = """(name) => {
  const sel = document.querySelector('.lsf-annotation-button_selected .lsf-annotation-button__name');
  return sel !== null && sel.textContent.trim() === name;
}"""

# The selected version is an annotation, not a prediction (a new one has no saved id yet).
_SELECTED_ANNOTATION = """() => {
  const sel = document.querySelector('.lsf-annotation-button_selected');
  return sel !== null && sel.querySelector('.lsf-annotation-button__userpic_prediction') === null;
}"""

# Per aspect: the names of the checked choices of the Choices below each header that reads it.
_CHECKED = """(aspects) => {
  const out = {};
  for (const a of aspects) {
    out[a] = [];
    for (const h of document.querySelectorAll('h3, h4')) {
      if (h.textContent.trim() !== a) continue;
      let e = h.nextElementSibling;
      while (e && !e.classList.contains('lsf-choices')) e = e.nextElementSibling;
      if (!e) continue;
      for (const i of e.querySelectorAll('input')) {
        const shown = i.closest('label');  // the radio's drawn state, as the adjudicator sees it
        if (i.checked || (shown && /checked/.test(shown.className))) out[a].push(i.name);
      }
    }
  }
  return out;
}"""
