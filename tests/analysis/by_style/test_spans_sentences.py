"""Spans and sentences analysis on planted studies: every number against the test's own count or formula."""

from __future__ import annotations

import re
from collections import Counter
from itertools import combinations

import numpy as np
import pytest

from annols.styles.judgments import Row, Span
from tests.analysis import planted
from tests.analysis.run import analyse
from tests.report import formulas

LABELS = ("Wrong", "Vague")


def spans_of(study: planted.Study) -> dict[tuple[int, str], list[tuple[str, int, int]]]:
    """The target's spans per (item, annotator), as (label, start, end)."""
    return {k: [(j.label, int(j.start), int(j.end)) for j in judged if isinstance(j, Span) and j.control == "errors"]
            for k, judged in sorted(study.items())}  # fmt: skip


def tokens() -> dict[str, tuple[np.ndarray, np.ndarray]]:
    found = [(m.start(), m.end()) for m in re.finditer(r"\S+", planted.TEXT)]
    pair = (np.array([s for s, _ in found]), np.array([e for _, e in found]))
    return {planted.key(item): pair for item in range(planted.ITEMS)}


def test_span_counts_per_label_and_system() -> None:
    study = planted.spans()
    result = analyse(planted.SPANS, study, tokens())
    given = spans_of(study)
    for system in ("(all)", *planted.SYSTEMS):
        mine = {k: v for k, v in given.items() if system in ("(all)", planted.spans_system(k[0]))}
        for label in LABELS:
            row = result.row("spans_counts", label=label, system=system)
            assert row["spans"] == sum(1 for v in mine.values() for s in v if s[0] == label)
            with_it = sum(any(s[0] == label for s in v) for v in mine.values())
            assert (row["judgments with it"], row["judgments"]) == (with_it, len(mine))
            assert row["judgments %"] == pytest.approx(100 * with_it / len(mine))
    assert result.row("spans_counts", label="Wrong", system="good")["spans"] < result.row(
        "spans_counts", label="Wrong", system="poor")["spans"]  # fmt: skip  # the planted effect


def test_span_agreement_exact_overlap_and_token_alpha() -> None:
    study = planted.spans()
    result = analyse(planted.SPANS, study, tokens())
    given = spans_of(study)
    by_item: dict[int, list[list[tuple[str, int, int]]]] = {}
    for (item, _), spans in given.items():
        by_item.setdefault(item, []).append(spans)
    words = [(m.start(), m.end()) for m in re.finditer(r"\S+", planted.TEXT)]
    for label in [*LABELS, "all labels"]:
        exact = total = found_x = found_y = size_x = size_y = 0
        units: list[list[str]] = []
        for judgments in by_item.values():
            for x, y in combinations(judgments, 2):
                xs = [s for s in x if label in ("all labels", s[0])]
                ys = [s for s in y if label in ("all labels", s[0])]
                exact += sum((Counter(xs) & Counter(ys)).values())
                total += len(xs) + len(ys)
                found_x += sum(any(u[0] == v[0] and u[1] < v[2] and v[1] < u[2] for v in ys) for u in xs)
                found_y += sum(any(u[0] == v[0] and u[1] < v[2] and v[1] < u[2] for v in xs) for u in ys)
                size_x, size_y = size_x + len(xs), size_y + len(ys)
            if len(judgments) >= 2:
                for start, end in words:
                    values = []
                    for spans in judgments:
                        ordered = sorted(spans, key=lambda t: (t[1], t[2]))
                        covering = [lab for lab, s, e in ordered if s < end and e > start]
                        value = covering[0] if covering else "none"
                        values.append(value if label == "all labels" else str(value == label))
                    units.append(values)
        row = result.row("spans_agreement", label=label)
        assert (row["spans"], row["exact matches"]) == (total, exact)
        assert row["exact F1"] == pytest.approx(2 * exact / total)
        p, r = found_x / size_x, found_y / size_y
        assert row["overlap F1"] == pytest.approx(2 * p * r / (p + r))
        assert row["token alpha"] == pytest.approx(formulas.krippendorff_alpha(units))


def test_per_span_question_distribution() -> None:
    study = planted.spans()
    result = analyse(planted.SPANS, study, tokens())
    given = [
        c for judged in study.values() for j in judged if isinstance(j, Span) for c in j.answers.get("how_wrong", ())
    ]
    for code in ("slightly", "badly"):
        row = result.row("span_questions_distribution", question="how_wrong", answer=code)
        assert (row["spans"], row["spans answered"]) == (given.count(code), len(given))
        assert row["spans %"] == pytest.approx(100 * given.count(code) / len(given))
    assert "No agreement statistic" in " ".join(result.section("Per-span questions").text)


def test_span_agreement_without_texts_and_with_one_annotator() -> None:
    study = planted.spans()
    no_texts = analyse(planted.SPANS, study)
    assert "token alpha" not in no_texts.table("spans_agreement").columns
    assert "were not given" in " ".join(no_texts.section("Span agreement").text)
    alone = analyse(planted.SPANS, {k: v for k, v in study.items() if k[1] == "c"}, tokens())
    assert alone.section("Span agreement").text == ["No agreement statistics: each item has one annotator."]


def cells_of(study: planted.Study) -> list[tuple[int, int, str, str, str]]:
    """(item, row, special, severity, kind) as the distribution reads them."""
    out = []
    for (item, _), judged in sorted(study.items()):
        for j in judged:
            assert isinstance(j, Row)
            if j.special:
                out.append((item, j.row, j.special, "(special case)", "(special case)"))
                continue
            severity, kind = (" + ".join(sorted(j.columns.get(c, ()))) or "(unanswered)" for c in ("severity", "kind"))
            out.append((item, j.row, "(no special case)", severity, kind))
    return out


def test_sentences_distribution_and_agreement() -> None:
    study = planted.sentences()
    result = analyse(planted.SENTENCES, study)
    cells = cells_of(study)
    assert "fact + style" in {c[4] for c in cells} and "(unanswered)" in {c[4] for c in cells}  # the plant has both
    for i, column in enumerate(("special", "severity", "kind")):
        c = Counter(cell[2 + i] for cell in cells)
        table = result.table("sentences_distribution")
        rows = table[table["column"] == column]
        assert dict(zip(rows["answer"], rows["rows"], strict=True)) == dict(c)
        assert list(rows["rows %"]) == pytest.approx([100 * n / len(cells) for n in rows["rows"]])
        units: dict[tuple[int, int], list[str]] = {}
        for item, n, *values in cells:
            if column == "special" or values[i] not in ("(special case)", "(unanswered)"):
                units.setdefault((item, n), []).append(values[i])
        pairable = [u for u in units.values() if len(u) >= 2]
        row = result.row("sentences_agreement", column=column)
        assert row["units (alpha)"] == len(pairable)
        assert row["Krippendorff alpha"] == pytest.approx(formulas.krippendorff_alpha(list(units.values())))
        size = Counter(len(u) for u in pairable).most_common(1)[0][0]
        values = sorted({v for u in pairable for v in u})
        full = [[u.count(v) for v in values] for u in pairable if len(u) == size]
        assert (row["units (Fleiss)"], row["ratings per unit"]) == (len(full), size)
        assert row["Fleiss kappa"] == pytest.approx(formulas.fleiss_kappa(full))
        agree = sum(x == y for u in pairable for x, y in combinations(u, 2))
        pairs = sum(len(u) * (len(u) - 1) / 2 for u in pairable)
        assert row["observed agreement %"] == pytest.approx(100 * agree / pairs)


def test_sentences_agreement_says_why() -> None:
    study = planted.sentences()
    alone = analyse(planted.SENTENCES, {k: v for k, v in study.items() if k[1] == "a"})
    assert alone.section("Agreement per column").text == ["No agreement statistics: each item has one annotator."]
    same = {k: [Row(j.row, "OK", {}, "", j.system) for j in v if isinstance(j, Row)] for k, v in study.items()}
    result = analyse(planted.SENTENCES, same)
    text = result.section("Agreement per column").text
    assert "special: no agreement statistic, only one category was used." in text
    assert "severity: no agreement statistic, nothing was answered." in text


def each_against_the_rest(values: dict[tuple[object, str], object]) -> dict[str, dict[str, float]]:
    """Independently of annols: per annotator, their value on each unit paired with every other annotator's there;
    agreement % of equal pairs, and the pairs as data for the krippendorff package (one unit per pair)."""
    by_unit: dict[object, dict[str, object]] = {}
    for (unit, who), value in values.items():
        by_unit.setdefault(unit, {})[who] = value
    out: dict[str, dict[str, object]] = {}
    for given in by_unit.values():
        for who, value in given.items():
            others = [v for w, v in given.items() if w != who]
            if others:
                mine = out.setdefault(who, {"x": [], "y": [], "me": [], "rest": []})
                mine["x"] += [value] * len(others)  # type: ignore[operator]
                mine["y"] += others  # type: ignore[operator]
                mine["me"].append(value)  # type: ignore[union-attr]
                mine["rest"].append(others)  # type: ignore[union-attr]
    return out  # type: ignore[return-value]


def test_each_annotator_against_the_rest_on_span_counts() -> None:
    """Issue 28 item 6 for spans: each annotator's spans per candidate against the others', recomputed with scipy
    and the krippendorff package."""
    import krippendorff
    from scipy import stats

    study = planted.spans()
    result = analyse(planted.SPANS, study, tokens())
    given = spans_of(study)
    for label in ("all labels", *LABELS):
        counts = {(item, who): sum(1 for s in spans if label == "all labels" or s[0] == label)
                  for (item, who), spans in given.items()}  # fmt: skip
        for who, mine in each_against_the_rest(counts).items():
            row = result.row("spans_agreement_annotators", label=label, annotator=who)
            x, y = np.array(mine["x"], dtype=float), np.array(mine["y"], dtype=float)
            assert (row["units"], row["pairs"]) == (len(mine["me"]), len(x))
            assert row["agreement %"] == pytest.approx(100 * np.mean(x == y))
            want = krippendorff.alpha(reliability_data=np.vstack([x, y]), level_of_measurement="interval")
            assert row["Krippendorff alpha"] == pytest.approx(want)
            rest = [float(np.mean(o)) for o in mine["rest"]]
            assert row["Spearman (others' mean)"] == pytest.approx(stats.spearmanr(mine["me"], rest).statistic)
    assert result.table("spans_agreement_annotators")["Krippendorff alpha"].notna().all()


def test_each_annotator_against_the_rest_per_sentence_column() -> None:
    import krippendorff

    study = planted.sentences()
    result = analyse(planted.SENTENCES, study)
    answers: dict[str, dict[tuple[object, str], str]] = {"special": {}, "severity": {}, "kind": {}}
    for (item, who), judged in sorted(study.items()):
        for j in judged:
            assert isinstance(j, Row)
            answers["special"][((item, j.row), who)] = j.special or "(no special case)"
            for column in ("severity", "kind"):
                if not j.special and j.columns.get(column):
                    answers[column][((item, j.row), who)] = " + ".join(sorted(j.columns[column]))
    for column, values in answers.items():
        found = each_against_the_rest(values)
        assert found
        for who, mine in found.items():
            row = result.row("sentences_agreement_annotators", column=column, annotator=who)
            x, y = mine["x"], mine["y"]
            assert row["pairs"] == len(x)
            assert row["agreement %"] == pytest.approx(100 * np.mean([a == b for a, b in zip(x, y, strict=True)]))
            codes = {v: i for i, v in enumerate(sorted(set(x) | set(y)))}
            data = np.array([[codes[v] for v in x], [codes[v] for v in y]], dtype=float)
            if len(codes) > 1:
                want = krippendorff.alpha(reliability_data=data, level_of_measurement="nominal")
                assert row["Krippendorff alpha"] == pytest.approx(want)
