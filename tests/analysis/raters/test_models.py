"""Annotator models on planted studies with known truth, one per style: three careful annotators
and one who answers at random. The random annotator gets the
lowest competence from both models, the models' labels agree with the truth at least as often as
majority vote, and Dawid-Skene's numbers equal an independent EM written here in numpy."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd  # type: ignore[import-untyped, unused-ignore]
import pytest

from annols.analysis.options import AnalysisOptions
from annols.analysis.raters import models
from annols.styles.judgments import TIDY_COLUMNS, Answer, BestWorst, Judgment, Preference, Rank, Rating, Row, Span, tidy

ITEMS = 150
SYSTEMS = ("sys-a", "sys-b", "sys-c")


def careful(rng: random.Random, truth: Any, choices: list[Any], accuracy: float) -> Any:
    return truth if rng.random() < accuracy else rng.choice([c for c in choices if c != truth])


# Each planter: (rng, item, accuracy or None for random) -> judgments; truth is (item, rng-free).
def truth_rating(item: int, system: str) -> int:
    return 1 + (item * 7 + SYSTEMS.index(system) * 3) % 5


def plant_ratings(rng: random.Random, item: int, acc: float | None) -> list[Judgment]:
    out: list[Judgment] = []
    for s in SYSTEMS:
        t = truth_rating(item, s)
        v = rng.randint(1, 5) if acc is None else careful(rng, t, [1, 2, 3, 4, 5], acc)
        out.append(Rating("quality", "c", s, float(v), str(v)))
    return out


def truth_pref(item: int) -> int | None:
    return [0, 1, None][item % 3]


def plant_pairwise(rng: random.Random, item: int, acc: float | None) -> list[Judgment]:
    options: list[int | None] = [0, 1, None]
    w = rng.choice(options) if acc is None else careful(rng, truth_pref(item), options, acc)
    return [Preference("overall", ("sys-a", "sys-b"), "x", w)]


def plant_ranking(rng: random.Random, item: int, acc: float | None) -> list[Judgment]:
    out: list[Judgment] = []
    for i, s in enumerate(SYSTEMS):
        t = 1 + (item + i) % 3
        r = rng.randint(1, 3) if acc is None else careful(rng, t, [1, 2, 3], acc)
        out.append(Rank("quality", "ABC"[i], s, r))
    return out


def plant_sentences(rng: random.Random, item: int, acc: float | None) -> list[Judgment]:
    out: list[Judgment] = []
    for row in (1, 2):
        t = ["yes", "no", "partly"][(item + row) % 3]
        c = rng.choice(["yes", "no", "partly"]) if acc is None else careful(rng, t, ["yes", "no", "partly"], acc)
        out.append(Row(row, "", {"correct": (c,)}, "", "sys-a"))
    return out


def plant_choice(rng: random.Random, item: int, acc: float | None) -> list[Judgment]:
    t = ["good", "bad"][item % 2]
    c = rng.choice(["good", "bad"]) if acc is None else careful(rng, t, ["good", "bad"], acc)
    return [Answer("verdict", (c,), system="sys-b")]


def plant_best_worst(rng: random.Random, item: int, acc: float | None) -> list[Judgment]:
    shown = ("sys-a", "sys-b", "sys-c", "sys-d")
    tb, tw = item % 4, (item + 1) % 4
    if acc is None or rng.random() >= acc:
        b, w = rng.sample(range(4), 2)
    else:
        b, w = tb, tw
    return [BestWorst("quality", shown, b, w)]


TEXT = "one two three four five six"
TOKENS = (np.array([0, 4, 8, 14, 19, 24]), np.array([3, 7, 13, 18, 23, 27]))


def plant_spans(rng: random.Random, item: int, acc: float | None) -> list[Judgment]:
    tokens = [i for i in range(6) if (item + i) % 3 == 0]  # the true error tokens
    out: list[Judgment] = []
    for i in range(6):
        marked = i in tokens
        if acc is None:
            marked = rng.random() < 0.5
        elif rng.random() >= acc:
            marked = not marked
        if marked:
            out.append(Span("errors", "error", int(TOKENS[0][i]), int(TOKENS[1][i]), "", f"r{i}"))
    return out


PLANTERS: dict[str, Callable[[random.Random, int, float | None], list[Judgment]]] = {
    "ratings": plant_ratings, "pairwise": plant_pairwise, "ranking": plant_ranking,
    "sentences": plant_sentences, "choice": plant_choice, "best-worst": plant_best_worst, "spans": plant_spans,
}  # fmt: skip


def study(style: str, accuracies: list[float | None], seed: int = 3) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = random.Random(seed)
    rows, judged = [], []
    uid = 0
    for item in range(ITEMS):
        for a, acc in enumerate(accuracies):
            judged.append((uid, f"item{item}", f"ann{a}"))
            for row in tidy(PLANTERS[style](rng, item, acc)):
                rows.append([uid, f"item{item}", f"ann{a}", *row])
            uid += 1
    frame = pd.DataFrame(rows, columns=["uid", "task_key", "annotator", *TIDY_COLUMNS])
    return frame, pd.DataFrame(judged, columns=["uid", "task_key", "annotator"])


def truth_of(style: str, question: str, unit: str) -> str:
    parts = unit.split(models.UNIT_SEP)
    item = int(parts[0].removeprefix("item"))
    if style == "ratings":
        return str(truth_rating(item, parts[2]))
    if style == "pairwise":
        return ["win", "loss", "tie"][item % 3]  # sys-a first in name order: 0 -> win
    if style == "ranking":
        return str(1 + (item + SYSTEMS.index(parts[2])) % 3)
    if style == "sentences":
        return ["yes", "no", "partly"][(item + int(parts[2])) % 3]
    if style == "choice":
        return ["good", "bad"][item % 2]
    if style == "best-worst":
        index = item % 4 if question.endswith("(best)") else (item + 1) % 4
        return ("sys-a", "sys-b", "sys-c", "sys-d")[index]
    return "error" if (item + int(parts[2])) % 3 == 0 else "O"


def independent_dawid_skene(data: pd.DataFrame, iterations: int = 500) -> tuple[dict[str, float], dict[str, str]]:
    """Dawid & Skene (1979) EM in numpy: majority-vote start, then E and M steps to convergence.
    Returns each annotator's accuracy (prior-weighted diagonal) and each unit's label."""
    units = sorted(data["unit"].unique())
    workers = sorted(data["annotator"].unique())
    labels = sorted(data["label"].unique())
    u = np.array([units.index(x) for x in data["unit"]])
    w = np.array([workers.index(x) for x in data["annotator"]])
    lab = np.array([labels.index(x) for x in data["label"]])
    n_u, n_w, n_l = len(units), len(workers), len(labels)
    post = np.zeros((n_u, n_l))
    np.add.at(post, (u, lab), 1)
    post /= post.sum(axis=1, keepdims=True)
    for _ in range(iterations):
        prior = post.mean(axis=0)
        conf = np.zeros((n_w, n_l, n_l))  # worker, true, given
        np.add.at(conf, (w, slice(None), lab), post[u])
        conf = np.clip(conf, 1e-12, None)
        conf /= conf.sum(axis=2, keepdims=True)
        log = np.tile(np.log(np.clip(prior, 1e-12, None)), (n_u, 1))
        np.add.at(log, u, np.log(conf[w, :, lab]))
        new = np.exp(log - log.max(axis=1, keepdims=True))
        new /= new.sum(axis=1, keepdims=True)
        if np.abs(new - post).max() < 1e-10:
            post = new
            break
        post = new
    prior = post.mean(axis=0)
    conf = np.zeros((n_w, n_l, n_l))  # the M step on the final posteriors
    np.add.at(conf, (w, slice(None), lab), post[u])
    conf = np.clip(conf, 1e-12, None)
    conf /= conf.sum(axis=2, keepdims=True)
    skill = {workers[i]: float(sum(prior[c] * conf[i, c, c] for c in range(n_l))) for i in range(n_w)}
    return skill, {units[i]: labels[int(np.argmax(post[i]))] for i in range(n_u)}


@pytest.mark.parametrize("style", list(PLANTERS))
def test_models_find_the_random_annotator_and_match_or_beat_majority(style: str) -> None:
    accuracies = [0.85, 0.8, 0.9, None]  # three careful annotators and one who answers at random
    frame, judged = study(style, accuracies)
    tokens = {f"item{i}": TOKENS for i in range(ITEMS)} if style == "spans" else None
    data = models.answers(frame, tokens, judged)
    assert not data.empty
    worst = "ann3"
    fitted = [(q, part) for q, part in data.groupby("question") if models.fittable(part)]
    assert fitted
    for question, part in fitted:
        fit = models.fit_question(part, str(question), reps=50)
        competence = fit.annotators.set_index("annotator")
        assert competence["Dawid-Skene"].idxmin() == worst, competence
        assert competence["MACE"].idxmin() == worst, competence
        truth = pd.Series([truth_of(style, str(question), unit) for unit in fit.units["unit"]])
        agree = {m: float((fit.units[m] == truth).mean()) for m in models.METHODS}
        assert agree["Dawid-Skene"] >= agree["majority"] and agree["MACE"] >= agree["majority"], agree
        # Dawid-Skene equals an independent EM.
        skill, labels = independent_dawid_skene(part)
        assert competence["Dawid-Skene"].to_dict() == pytest.approx(skill, abs=0.02)
        ours = fit.units.set_index("unit")["Dawid-Skene"]
        same = float(np.mean([ours[k] == v for k, v in labels.items()]))
        assert same >= 0.97, same
        # No competence interval (#41: with the posteriors held fixed it missed the true accuracy on ceiling plants).
        assert competence[["Dawid-Skene low", "Dawid-Skene high", "MACE low", "MACE high"]].isna().all().all()


def test_majority_vote_equals_an_independent_count_and_ties_go_to_the_first_label() -> None:
    data = pd.DataFrame({"unit": ["u1"] * 3 + ["u2"] * 2, "label": ["b", "a", "b", "b", "a"]})
    assert models.majority(data).to_dict() == {"u1": "b", "u2": "a"}


def test_known_labels_are_scored_and_the_report_section_says_whether_a_conclusion_changes() -> None:
    frame, _ = study("choice", [0.85, 0.8, 0.9, None])
    known = {f"item{i}{models.UNIT_SEP}verdict{models.UNIT_SEP}sys-b": ["good", "bad"][i % 2] for i in range(10)}
    (section,) = models.sections(frame, AnalysisOptions(bootstrap=50), known=known)
    names = [t.name for t in section.tables]
    assert names == ["models_competence", "models_items", "models_tables", "models_known"]
    acc = section.tables[-1].frame.set_index("method")["accuracy"]
    # Independent: the share of the ten known units whose majority label is the known one.
    data = models.answers(frame)
    mv = models.majority(data)
    assert acc["majority"] == pytest.approx(np.mean([mv[k] == v for k, v in known.items()]))
    assert acc["Dawid-Skene"] == 1.0  # fixed to the known labels while fitting
    assert any(line.startswith(("No conclusion changes", "Conclusions that change")) for line in section.text)
    assert models.NO_INTERVAL in section.text  # the competence's low and high are empty: it says why


def test_slider_values_are_not_categories() -> None:
    judgments = [Rating("adequacy", "t", "s", float(v), str(v)) for v in range(30)]
    rows = [[i, f"item{i}", "a", *row] for i, row in enumerate(tidy(judgments))]
    frame = pd.DataFrame(rows, columns=["uid", "task_key", "annotator", *TIDY_COLUMNS])
    assert models.answers(frame).empty


def test_without_crowd_kit_the_section_says_how_to_get_it(monkeypatch: pytest.MonkeyPatch) -> None:
    frame, _ = study("choice", [0.85, 0.8, 0.9, None])
    monkeypatch.setattr(models, "available", lambda: False)
    (section,) = models.sections(frame, AnalysisOptions(bootstrap=0))
    assert section.tables == [] and section.text == [
        "Dawid-Skene and MACE need crowd-kit, not installed here: pip install 'annols[models]'"
    ]
