"""On a generated study of 3 annotators x 100 samples, the report's numbers equal independently computed ones.

The expected values come from the generator's truth (what each annotator meant, never
parsed back from Label Studio results) with plain Python counting and the formulas of
tests/report/formulas.py, themselves checked on textbook examples in test_stats.py.
"""

from __future__ import annotations

import csv
import math
import re
import statistics
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path
from typing import Any

import pytest

from annols.protocols import load
from annols.report import ReportOptions
from tests.report import formulas, study
from tests.report.build import build_report
from tests.report.study import ANNOTATORS, Generated


@dataclass(frozen=True)
class Built:
    gen: Generated
    out: Path

    def table(self, name: str) -> list[dict[str, str]]:
        with (self.out / "tables" / f"{name}.csv").open(encoding="utf-8", newline="") as f:
            return list(csv.DictReader(f))

    def row(self, name: str, **match: str) -> dict[str, str]:
        rows = [r for r in self.table(name) if all(r[k] == v for k, v in match.items())]
        assert len(rows) == 1, f"{name}: {match} matches {len(rows)} rows"
        return rows[0]


def build(tmp: Path, protocol: str, gen: Generated, variant: str | None = None) -> Built:
    source = study.write_pull(tmp / "pull", gen.tasks)
    build_report(load(protocol, variant), [source], tmp / "report", ReportOptions(seed=11, bootstrap=400))
    return Built(gen, tmp / "report")


def close(found: str, expected: float, column: str = "") -> None:
    """A cell equals the expected value as the report rounds it (2 decimals for %, 1 for seconds, else 4)."""
    if isinstance(expected, float) and math.isnan(expected):
        assert found == "", f"{column}: expected an empty cell, found {found!r}"
        return
    places = 2 if column.endswith("%") else 1 if column.endswith("(s)") else 4
    assert float(found) == pytest.approx(expected, abs=0.5 * 10**-places + 1e-9), column


def pct(part: float, whole: float) -> float:
    return 100 * part / whole if whole else math.nan


def counted(gen: Generated) -> Iterable[tuple[int, str, Any]]:
    """(sample, annotator, truth) of every judgment that counts."""
    for (sample, annotator), truth in sorted(gen.truth.items()):
        yield sample, annotator, truth


# ----------------------------------------------------------------------------- every report


@pytest.fixture(scope="module")
def pairwise(tmp_path_factory: pytest.TempPathFactory) -> Built:
    return build(tmp_path_factory.mktemp("pairwise"), "pairwise-aspects", study.pairwise())


def test_annotators_lead_time_and_short_items(pairwise: Built) -> None:
    gen = pairwise.gen
    for annotator in ANNOTATORS:
        row = pairwise.row("annotators", annotator=annotator)
        assert int(row["annotations"]) == gen.submitted[annotator]
        assert int(row["skipped"]) == gen.skipped.get(annotator, 0)
        assert int(row["items"]) == sum(1 for s, a in gen.truth if a == annotator)
        close(row["median lead time (s)"], statistics.median(gen.lead_times[annotator]), "median lead time (s)")
    assert gen.submitted[ANNOTATORS[0]] == 101 and gen.skipped == {ANNOTATORS[2]: 1}  # the generator's own extras
    short = {r["task_key"]: int(r["annotators"]) for r in pairwise.table("under_annotated")}
    expected = {gen.keys[s]: len(study.annotators_of(s)) for s in range(100) if len(study.annotators_of(s)) < 3}
    assert short == expected == {gen.keys[95]: 2, gen.keys[96]: 2, gen.keys[97]: 2, gen.keys[98]: 2, gen.keys[99]: 1}
    assert pairwise.table("coverage") == [
        {"overlap asked": "3", "items": "100", "complete": "95", "fewer than asked": "5", "none": "0"}
    ]
    assert pairwise.table("violations") == [
        {"rule": "aspect-answered", "violations": "1", "annotations": "1", "annotations %": f"{100 / 294:.2f}"}
    ]


# ----------------------------------------------------------------------------- pairwise-aspects


def pairwise_judgments(gen: Generated) -> list[tuple[int, str, str, str, str, str]]:
    """(sample, annotator, aspect name, system, opponent, outcome from system's side)."""
    name = {wording: n for n, wording in study.ASPECTS}  # the plant keeps the wording; the tables, the name
    out = []
    for sample, annotator, truth in counted(gen):
        system, opponent = sorted(truth["shown"])
        for aspect, pick in truth["answers"].items():
            outcome = "tie" if pick == "tie" else ("win" if pick == system else "loss")
            out.append((sample, annotator, name[aspect], system, opponent, outcome))
    return out


def test_pairwise_win_tie_loss_all_judgments_and_majority(pairwise: Built) -> None:
    judgments = pairwise_judgments(pairwise.gen)
    groups: dict[tuple[str, str, str], list[tuple[int, str]]] = {}
    for sample, _, aspect, system, opponent, outcome in judgments:
        groups.setdefault((aspect, system, opponent), []).append((sample, outcome))
    assert len(pairwise.table("pairwise_win_tie_loss")) == len(groups) == 9
    for (aspect, system, opponent), items in groups.items():
        c = Counter(o for _, o in items)
        row = pairwise.row("pairwise_win_tie_loss", aspect=aspect, system=system, opponent=opponent)
        assert (int(row["wins"]), int(row["ties"]), int(row["losses"])) == (c["win"], c["tie"], c["loss"])
        assert int(row["samples"]) == len({s for s, _ in items}) and int(row["judgments"]) == len(items)
        for key, column in (("win", "win %"), ("tie", "tie %"), ("loss", "loss %")):
            close(row[column], pct(c[key], len(items)), column)
        assert float(row["win CI low %"]) <= float(row["win %"]) <= float(row["win CI high %"])
        assert float(row["loss CI low %"]) <= float(row["loss %"]) <= float(row["loss CI high %"])
        per_sample: dict[int, Counter[str]] = {}
        for s, o in items:
            per_sample.setdefault(s, Counter())[o] += 1
        votes = Counter(next((o for o, n in v.items() if 2 * n > sum(v.values())), "none") for v in per_sample.values())
        decided = votes["win"] + votes["tie"] + votes["loss"]
        m = pairwise.row("pairwise_majority", aspect=aspect, system=system, opponent=opponent)
        assert (int(m["wins"]), int(m["ties"]), int(m["losses"]), int(m["no majority"])) == (
            votes["win"], votes["tie"], votes["loss"], votes["none"])  # fmt: skip
        close(m["win %"], pct(votes["win"], decided), "win %")
        close(m["loss %"], pct(votes["loss"], decided), "loss %")


def test_pairwise_per_annotator(pairwise: Built) -> None:
    c: Counter[tuple[str, str, str, str, str]] = Counter()
    for _, annotator, aspect, system, opponent, outcome in pairwise_judgments(pairwise.gen):
        c[(annotator, aspect, system, opponent, outcome)] += 1
    rows = pairwise.table("pairwise_annotators")
    assert len(rows) == 27
    for row in rows:
        key = (row["annotator"], row["aspect"], row["system"], row["opponent"])
        wins, ties, losses = (c[(*key, o)] for o in ("win", "tie", "loss"))
        assert (int(row["wins"]), int(row["ties"]), int(row["losses"])) == (wins, ties, losses)
        close(row["tie %"], pct(ties, wins + ties + losses), "tie %")


def test_pairwise_fleiss_krippendorff_cohen(pairwise: Built) -> None:
    judgments = pairwise_judgments(pairwise.gen)
    categories = ("win", "tie", "loss")
    for aspect in ("informative", "factual_consistency", "readability"):
        by_sample: dict[int, dict[str, str]] = {}
        for sample, annotator, a, _, _, outcome in judgments:
            if a == aspect:
                by_sample.setdefault(sample, {})[annotator] = outcome
        full = [[list(v.values()).count(c) for c in categories] for v in by_sample.values() if len(v) == 3]
        row = pairwise.row("pairwise_agreement", aspect=aspect)
        assert int(row["samples (Fleiss)"]) == len(full) and row["judgments per sample"] == "3"
        close(row["Fleiss kappa"], formulas.fleiss_kappa(full))
        units = [list(v.values()) for v in by_sample.values()]
        assert int(row["samples (alpha)"]) == sum(len(u) >= 2 for u in units)
        close(row["Krippendorff alpha"], formulas.krippendorff_alpha(units))
        for a, b in combinations(ANNOTATORS, 2):
            pairs = [(v[a], v[b]) for v in by_sample.values() if a in v and b in v]
            cohen = pairwise.row("pairwise_cohen", aspect=aspect, **{"annotator 1": a, "annotator 2": b})
            assert int(cohen["samples"]) == len(pairs)
            close(cohen["Cohen kappa"], formulas.cohens_kappa(pairs))
            close(cohen["agreement %"], pct(sum(x == y for x, y in pairs), len(pairs)), "agreement %")


def test_pairwise_bradley_terry_solves_the_likelihood_equations(pairwise: Built) -> None:
    judgments = pairwise_judgments(pairwise.gen)
    for aspect in ("informative", "readability"):
        wins: Counter[tuple[str, str]] = Counter()
        ties: Counter[frozenset[str]] = Counter()
        for _, _, a, system, opponent, outcome in judgments:
            if a != aspect:
                continue
            if outcome == "tie":
                ties[frozenset((system, opponent))] += 1
            else:
                wins[(system, opponent) if outcome == "win" else (opponent, system)] += 1
        rows = [r for r in pairwise.table("pairwise_bradley_terry") if r["aspect"] == aspect]
        strength = {r["system"]: float(r["strength"]) for r in rows}
        assert set(strength) == set(study.PAIRWISE_SYSTEMS) and sum(strength.values()) == pytest.approx(1, abs=2e-4)
        for r in rows:
            s = r["system"]
            assert int(r["wins"]) == sum(n for (w, _), n in wins.items() if w == s)
            assert int(r["ties"]) == sum(n for pair, n in ties.items() if s in pair)
        scores = formulas.bradley_terry_scores(strength, wins, ties)
        assert max(abs(v) for v in scores.values()) < 0.05


# ----------------------------------------------------------------------------- extractive-ranking


@pytest.fixture(scope="module")
def ranking(tmp_path_factory: pytest.TempPathFactory) -> Built:
    return build(tmp_path_factory.mktemp("ranking"), "extractive-ranking", study.ranking())


def test_ranking_mean_rank_and_shares(ranking: Built) -> None:
    given: dict[tuple[str, str], dict[int, list[int]]] = {}
    for sample, _, truth in counted(ranking.gen):
        for dimension, ranks in truth.items():
            for system, rank in ranks.items():
                given.setdefault((dimension, system), {}).setdefault(sample, []).append(rank)
    assert len(ranking.table("ranking_mean_rank")) == len(given) == 12
    for (dimension, system), by_sample in given.items():
        row = ranking.row("ranking_mean_rank", dimension=dimension, system=system)
        assert int(row["rankings"]) == sum(map(len, by_sample.values())) == 294
        # The items rule: each sample's mean over its rankings, then the mean over samples.
        close(row["mean rank"], statistics.mean(statistics.mean(ranks) for ranks in by_sample.values()))
        for r in range(1, 5):
            share = statistics.mean(ranks.count(r) / len(ranks) for ranks in by_sample.values())
            close(row[f"rank {r} %"], 100 * share, f"rank {r} %")


def test_ranking_kendall_w_and_ordinal_alpha(ranking: Built) -> None:
    for dimension in study.DIMENSIONS:
        by_sample: dict[int, list[dict[str, int]]] = {}
        for sample, _, truth in counted(ranking.gen):
            by_sample.setdefault(sample, []).append(truth[dimension])
        ws = [formulas.kendall_w([[r[s] for s in sorted(r)] for r in rankings])
              for rankings in by_sample.values() if len(rankings) >= 2]  # fmt: skip
        defined = [w for w in ws if not math.isnan(w)]
        row = ranking.row("ranking_agreement", dimension=dimension)
        assert int(row["samples (W)"]) == len(defined) == 98 and row["samples all tied"] == "1"
        close(row["mean Kendall W"], statistics.mean(defined))
        close(row["median Kendall W"], statistics.median(defined))
        units = [[r[s] for r in rankings] for rankings in by_sample.values() for s in study.RANKING_SYSTEMS]
        assert int(row["units (alpha)"]) == sum(len(u) >= 2 for u in units)
        close(row["Krippendorff alpha"], formulas.krippendorff_alpha(units, "ordinal", [1, 2, 3, 4]))


# ----------------------------------------------------------------------------- spans (qa-feedback, summary-flaws)


def token_units(text: str, spans_by_annotator: list[list[tuple[str, int, int]]], only: str = "") -> list[list[str]]:
    """Per whitespace token, the label each annotator gives it: the first span by start covering it, or none."""
    units = []
    for m in re.finditer(r"\S+", text):
        values = []
        for spans in spans_by_annotator:
            covering = [lab for lab, s, e in sorted(spans, key=lambda x: (x[1], x[2])) if s < m.end() and e > m.start()]
            label = covering[0] if covering else "none"
            values.append(label if not only else str(label == only))
        units.append(values)
    return units


def overlapping(mine: list[tuple[str, int, int]], theirs: list[tuple[str, int, int]]) -> int:
    """How many of my spans share a character with one of theirs with the same label."""
    return sum(any(u[0] == v[0] and u[1] < v[2] and v[1] < u[2] for v in theirs) for u in mine)


def check_span_agreement(built: Built, name: str, labels: Iterable[str], texts: dict[int, str]) -> None:
    by_sample: dict[int, list[list[tuple[str, int, int]]]] = {}
    for sample, _, truth in counted(built.gen):
        by_sample.setdefault(sample, []).append(truth["spans"])
    for label in [*labels, "all labels"]:
        exact = total = found_x = found_y = size_x = size_y = 0
        units: list[list[str]] = []
        for sample, judgments in by_sample.items():
            for x, y in combinations(judgments, 2):
                xs = [s for s in x if label in ("all labels", s[0])]
                ys = [s for s in y if label in ("all labels", s[0])]
                exact += sum((Counter(xs) & Counter(ys)).values())
                total += len(xs) + len(ys)
                found_x, found_y = found_x + overlapping(xs, ys), found_y + overlapping(ys, xs)
                size_x, size_y = size_x + len(xs), size_y + len(ys)
            if len(judgments) >= 2:
                units += token_units(texts[sample], judgments, "" if label == "all labels" else label)
        row = built.row(name, label=label)
        assert int(row["spans"]) == total and int(row["exact matches"]) == exact
        close(row["exact F1"], 2 * exact / total if total else math.nan)
        p, r = found_x / size_x, found_y / size_y
        close(row["overlap F1"], 2 * p * r / (p + r))
        close(row["token alpha"], formulas.krippendorff_alpha(units))
        assert int(row["token units"]) == len(units)


@pytest.fixture(scope="module")
def qa(tmp_path_factory: pytest.TempPathFactory) -> Built:
    return build(tmp_path_factory.mktemp("qa"), "qa-feedback", study.qa_feedback())


def test_qa_feedback_types_missing_evidence(qa: Built) -> None:
    truths = [t for _, _, t in counted(qa.gen)]
    n = len(truths)
    for kind, label in study.QA_LABELS.items():
        row = qa.row("qa_error_types", type=kind)
        assert row["label"] == label
        assert int(row["spans"]) == sum(1 for t in truths for s in t["spans"] if s[0] == kind)
        has = sum(1 for t in truths if any(s[0] == kind for s in t["spans"]))
        assert int(row["responses"]) == has
        close(row["responses %"], pct(has, n), "responses %")
    any_error = qa.row("qa_error_types", type="any error")
    assert int(any_error["responses"]) == sum(1 for t in truths if t["spans"])
    for kind in study.QA_MISSING:
        row = qa.row("qa_missing_info", type=kind)
        entries = [size for t in truths for k, size in t["missing"] if k == kind]
        assert int(row["entries"]) == len(entries) and int(row["sentences"]) == sum(entries)
        assert int(row["responses"]) == sum(1 for t in truths if any(k == kind for k, _ in t["missing"]))
        sizes = qa.row("qa_evidence_sizes", **{"cited by": kind})
        close(sizes["mean sentences"], statistics.mean(entries))
        close(sizes["median sentences"], statistics.median(entries))
    evidence = [n for t in truths for n in t["evidence"]]
    row = qa.row("qa_evidence_sizes", **{"cited by": "Wrong-Grounding evidence"})
    assert int(row["entries"]) == len(evidence) and int(row["max sentences"]) == max(evidence)
    close(row["mean sentences"], statistics.mean(evidence))
    corrected = qa.row("qa_responses", measure="with a corrected prediction")
    assert int(corrected["responses"]) == sum(t["corrected"] for t in truths)


def test_qa_feedback_span_agreement(qa: Built) -> None:
    texts = {int(t["meta"]["annols_key"].split(":")[1]): t["data"]["prediction"] for t in qa.gen.tasks}
    check_span_agreement(qa, "qa_span_agreement", study.QA_LABELS, texts)


@pytest.fixture(scope="module")
def flaws(tmp_path_factory: pytest.TempPathFactory) -> Built:
    return build(tmp_path_factory.mktemp("flaws"), "summary-flaws", study.summary_flaws())


def test_summary_flaws_labels_none_missing(flaws: Built) -> None:
    truths = [t for _, _, t in counted(flaws.gen)]
    n = len(truths)
    for label in study.FLAW_LABELS:
        row = flaws.row("flaws_labels", label=label)
        assert int(row["spans"]) == sum(1 for t in truths for s in t["spans"] if s[0] == label)
        has = sum(1 for t in truths if any(s[0] == label for s in t["spans"]))
        close(row["summaries %"], pct(has, n), "summaries %")
    overview = {r["measure"]: r for r in flaws.table("flaws_overview")}
    none = sum(1 for t in truths if not t["spans"])
    assert int(overview["with no flaw span"]["count"]) == none
    close(overview["with no flaw span"]["%"], pct(none, n), "%")
    assert int(overview["'None identified' ticked"]["count"]) == sum(t["none"] for t in truths)
    answered = [t["missing"] for t in truths if t["missing"]]
    yes = overview["missing key information: Yes"]
    assert int(yes["count"]) == answered.count("Yes") and int(yes["of"]) == len(answered)
    close(yes["%"], pct(answered.count("Yes"), len(answered)), "%")


def test_summary_flaws_span_agreement(flaws: Built) -> None:
    texts = {int(t["meta"]["annols_key"].split(":")[1]): t["data"]["summary"] for t in flaws.gen.tasks}
    check_span_agreement(flaws, "flaws_span_agreement", study.FLAW_LABELS, texts)


# ----------------------------------------------------------------------------- sentence-errors


@pytest.fixture(scope="module")
def sentences(tmp_path_factory: pytest.TempPathFactory) -> Built:
    return build(tmp_path_factory.mktemp("sentences"), "sentence-errors", study.sentence_errors(), "abstract")


def sentence_cells(gen: Generated) -> list[tuple[int, int, str, str, str]]:
    """(sample, row, special case, mapping, meaning) as the report's columns read them."""
    out = []
    for sample, _, rows in counted(gen):
        for n, (special, mapping, meaning) in enumerate(rows, 1):
            if special:
                out.append((sample, n, special, "(special case)", "(special case)"))
            else:
                out.append((sample, n, "(no special case)", mapping or "(unanswered)", meaning or "(unanswered)"))
    return out


def test_sentence_errors_distribution(sentences: Built) -> None:
    cells = sentence_cells(sentences.gen)
    table = sentences.table("sentence_errors_distribution")
    for i, column in enumerate(("special case", "mapping", "meaning")):
        c = Counter(cell[2 + i] for cell in cells)
        rows = {r["answer"]: r for r in table if r["column"] == column}
        assert {a: int(r["rows"]) for a, r in rows.items()} == dict(c)
        for answer, r in rows.items():
            assert r["variant"] == "abstract"
            close(r["rows %"], pct(c[answer], len(cells)), "rows %")
    assert {r["group"] for r in table if r["answer"] == "Ungrammatical"} == {"Malformed"}


def test_sentence_errors_agreement(sentences: Built) -> None:
    cells = sentence_cells(sentences.gen)
    for i, column in enumerate(("special case", "mapping", "meaning")):
        units: dict[tuple[int, int], list[str]] = {}
        for sample, n, *values in cells:
            value = values[i]
            if column == "special case" or value not in ("(special case)", "(unanswered)"):
                units.setdefault((sample, n), []).append(value)
        pairable = [u for u in units.values() if len(u) >= 2]
        row = sentences.row("sentence_errors_agreement", column=column)
        assert int(row["units"]) == len(pairable)
        close(row["Krippendorff alpha"], formulas.krippendorff_alpha(list(units.values())))
        agree = sum(sum(1 for x, y in combinations(u, 2) if x == y) for u in pairable)
        close(row["observed agreement %"], pct(agree, sum(len(u) * (len(u) - 1) / 2 for u in pairable)), "%")
        size = Counter(len(u) for u in pairable).most_common(1)[0][0]
        values = sorted({v for u in pairable for v in u})
        full = [[u.count(v) for v in values] for u in pairable if len(u) == size]
        assert int(row["units (Fleiss)"]) == len(full)
        close(row["Fleiss kappa"], formulas.fleiss_kappa(full))
