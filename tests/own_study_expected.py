"""The report tables of the planted own studies (tests/own_study.py), computed from the truth alone.

Plain Python (statistics, math, itertools, Counter) and the tests' own formulas
(tests/report/formulas.py, tests/analysis/independent.py): never annols.analysis or
annols.analysis.inference.stats, never the pulled files. Every table is a list of rows, each a dict
of every column of the report's table: text and integers exact, floats compared at the
report's rounding, bootstrap bounds as :class:`Low` / :class:`High` of the point estimate.
"""

from __future__ import annotations

import math
import re
import statistics
from collections import Counter
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

from tests import own_study
from tests.analysis import independent
from tests.own_study import ANNOTATORS, ITEMS, SYSTEMS
from tests.report import formulas

Row = dict[str, Any]
NAN = math.nan
OUTCOMES = ("win", "tie", "loss")


@dataclass(frozen=True)
class Low:
    """A bootstrap lower bound: at most the point estimate. ``or_empty``: a median's, whose interval is left empty
    where every resample gives the same median (tested offline in tests/report/test_style_reports.py and
    tests/analysis/judging/test_ceiling.py, on the same plant and on an all-equal one)."""

    point: float
    or_empty: bool = False


@dataclass(frozen=True)
class High:
    """A bootstrap upper bound: at least the point estimate (``or_empty``: as :class:`Low`'s)."""

    point: float
    or_empty: bool = False


def pct(part: float, whole: float) -> float:
    return 100 * part / whole if whole else NAN


def judgments() -> list[tuple[int, str]]:
    """(item, annotator) of every judgment: each of the three annotators judged every item once."""
    return [(item, a) for item in range(ITEMS) for a in ANNOTATORS]


def email(annotator: str) -> str:
    return f"{annotator}@own.study"


def fleiss(units: Sequence[Sequence[Hashable]], categories: Sequence[Hashable]) -> tuple[int, int, float]:
    """(units with the most common number of ratings, that number, Fleiss' kappa over them)."""
    pairable = [u for u in units if len(u) >= 2]
    size = Counter(len(u) for u in pairable).most_common(1)[0][0]
    full = [[list(u).count(c) for c in categories] for u in pairable if len(u) == size]
    return len(full), size, formulas.fleiss_kappa(full)


def agreement_columns(units: Sequence[Sequence[Hashable]], categories: Sequence[Hashable], level: str,
                      order: Sequence[Hashable] = ()) -> Row:  # fmt: skip
    """The shared agreement columns (annols.analysis.raters.agreement.COLUMNS) of units of ratings."""
    n, size, kappa = fleiss(units, categories)
    out = {"units (alpha)": sum(len(u) >= 2 for u in units),
           "Krippendorff alpha": formulas.krippendorff_alpha(units, level, order),
           "units (Fleiss)": n, "ratings per unit": size, "Fleiss kappa": kappa}  # fmt: skip
    if level == "ordinal":  # a scale of numbers: its interval alpha beside the ordinal one
        out["Krippendorff alpha (interval)"] = formulas.krippendorff_alpha(units, "interval", order)
    return out


def question_tables(question: str, codes: Sequence[str], answer: dict[tuple[int, str], str],
                    unit_of: Any) -> tuple[list[Row], list[Row]]:  # fmt: skip
    """questions_distribution and questions_agreement of one single-choice question with numeric codes."""
    given = Counter(answer.values())
    dist = [{"question": question, "answer": c, "judgments": given[c], "answered": len(answer),
             "judgments %": pct(given[c], len(answer))} for c in codes]  # fmt: skip
    units: dict[Any, list[str]] = {}
    for (item, _), code in sorted(answer.items()):
        units.setdefault(unit_of(item), []).append(code)
    order = sorted(codes, key=float)
    agree = {"question": question, "level": "ordinal",
             **agreement_columns(list(units.values()), order, "ordinal", order)}  # fmt: skip
    return dist, [agree]


# ----------------------------------------------------------------------------- common


def annotators() -> list[Row]:
    return [{"annotator": email(a), "annotations": ITEMS, "skipped": 0, "items": ITEMS,
             "median lead time (s)": 10.0} for a in ANNOTATORS]  # fmt: skip


def coverage() -> list[Row]:
    return [{"overlap asked": 3, "items": ITEMS, "complete": ITEMS, "fewer than asked": 0, "none": 0}]


# ----------------------------------------------------------------------------- pairwise

ASPECTS = {"helpful": "Which response is more helpful?", "harmless": "Which response is more harmless?"}


def pairwise_outcomes() -> list[tuple[int, str, str, str, str, str]]:
    """(item, annotator, aspect name, system, opponent, outcome from system's side); pairs in name order."""
    out = []
    for item, a in judgments():
        truth = own_study.pairwise_truth(item, a)
        system, opponent = sorted(own_study.pairwise_systems(item))
        for aspect in ASPECTS:
            pick = truth[aspect]
            outcome = "tie" if pick == "tie" else "win" if pick == system else "loss"
            out.append((item, a, aspect, system, opponent, outcome))
    return out


def _shares(c: Counter[str], whole: int) -> Row:
    return {"win %": pct(c["win"], whole), "tie %": pct(c["tie"], whole), "loss %": pct(c["loss"], whole)}


def pairwise_tables() -> dict[str, list[Row]]:
    found = pairwise_outcomes()
    groups: dict[tuple[str, str, str], list[tuple[int, str, str]]] = {}
    for item, a, aspect, system, opponent, outcome in found:
        groups.setdefault((aspect, system, opponent), []).append((item, a, outcome))
    wtl, majority, sign = [], [], []
    holm_groups: dict[tuple[str, ...], list[tuple[int, float]]] = {}
    # One Holm family: with more than two systems every pair of an aspect (a question), else a pair's aspects.
    many = len({s for _, system, opponent in groups for s in (system, opponent)}) > 2
    for (aspect, system, opponent), part in groups.items():
        key = {"aspect": aspect, "system": system, "opponent": opponent}
        c = Counter(o for _, _, o in part)
        shares = _shares(c, len(part))
        wtl.append({**key, "samples": len({i for i, _, _ in part}), "judgments": len(part), "wins": c["win"],
                    "ties": c["tie"], "losses": c["loss"], **shares,
                    "win CI low %": Low(shares["win %"]), "win CI high %": High(shares["win %"]),
                    "loss CI low %": Low(shares["loss %"]), "loss CI high %": High(shares["loss %"])})  # fmt: skip
        per_item: dict[int, Counter[str]] = {}
        for i, _, o in part:
            per_item.setdefault(i, Counter())[o] += 1
        votes = Counter(next((o for o, n in v.items() if 2 * n > sum(v.values())), "none") for v in per_item.values())
        decided = votes["win"] + votes["tie"] + votes["loss"]
        majority.append({**key, "samples": len(per_item), "wins": votes["win"], "ties": votes["tie"],
                         "losses": votes["loss"], "no majority": votes["none"], **_shares(votes, decided)})  # fmt: skip
        # The sign test's unit is the item: its net preference, wins minus losses over its judgments.
        nets = [v["win"] - v["loss"] for v in per_item.values()]
        won, lost = sum(n > 0 for n in nets), sum(n < 0 for n in nets)
        p = independent.sign_test_p(won, lost) if won + lost else NAN
        effect = pct(c["win"] - c["loss"], c["win"] + c["loss"]) if c["win"] + c["loss"] else NAN
        sign.append({**key, "items": len(nets), "items won": won, "items lost": lost,
                     "items even": len(nets) - won - lost, "judgments": len(part), "ties": c["tie"],
                     "win - loss %": effect, "CI low %": Low(effect) if c["win"] + c["loss"] else NAN,
                     "CI high %": High(effect) if c["win"] + c["loss"] else NAN, "p (sign test)": p,
                     "p (Holm)": NAN})  # fmt: skip
        if not math.isnan(p):
            holm_groups.setdefault((aspect,) if many else (system, opponent), []).append((len(sign) - 1, p))
    for tested in holm_groups.values():
        for (at, _), corrected in zip(tested, independent.holm([p for _, p in tested]), strict=True):
            sign[at]["p (Holm)"] = corrected

    per_annotator: Counter[tuple[str, str, str, str, str]] = Counter()
    for _, a, aspect, system, opponent, outcome in found:
        per_annotator[(email(a), aspect, system, opponent, outcome)] += 1
    annotators_rows = []
    for a in ANNOTATORS:
        for aspect, system, opponent in groups:
            key4 = (email(a), aspect, system, opponent)
            c = Counter({o: per_annotator[(*key4, o)] for o in OUTCOMES})
            n = sum(c.values())
            annotators_rows.append({"annotator": email(a), "aspect": aspect, "system": system, "opponent": opponent,
                                    "judgments": n, "wins": c["win"], "ties": c["tie"], "losses": c["loss"],
                                    **_shares(c, n)})  # fmt: skip

    agreement, cohen, bt = [], [], []
    for aspect in ASPECTS:
        by_item: dict[int, dict[str, str]] = {}
        for item, a, asp, _, _, outcome in found:
            if asp == aspect:
                by_item.setdefault(item, {})[a] = outcome
        units = [list(v.values()) for _, v in sorted(by_item.items())]
        n, size, kappa = fleiss(units, OUTCOMES)
        agreement.append({"aspect": aspect, "samples (Fleiss)": n, "judgments per sample": size, "Fleiss kappa": kappa,
                          "samples (alpha)": sum(len(u) >= 2 for u in units),
                          "Krippendorff alpha": formulas.krippendorff_alpha(units)})  # fmt: skip
        for x, y in combinations(sorted(ANNOTATORS), 2):
            pairs = [(v[x], v[y]) for v in by_item.values()]
            cohen.append({"aspect": aspect, "annotator 1": email(x), "annotator 2": email(y), "samples": len(pairs),
                          "agreement %": pct(sum(p == q for p, q in pairs), len(pairs)),
                          "Cohen kappa": formulas.cohens_kappa(pairs)})  # fmt: skip
        bt += bradley_terry_counts(aspect, found)
    return {"pairwise_win_tie_loss": wtl, "pairwise_majority": majority, "pairwise_annotators": annotators_rows,
            "pairwise_sign_test": sign, "pairwise_agreement": agreement, "pairwise_cohen": cohen,
            "pairwise_bradley_terry": bt}  # fmt: skip


def bt_wins_ties(aspect: str) -> tuple[Counter[tuple[str, str]], Counter[frozenset[str]]]:
    wins: Counter[tuple[str, str]] = Counter()
    ties: Counter[frozenset[str]] = Counter()
    for _, _, asp, system, opponent, outcome in pairwise_outcomes():
        if asp != aspect:
            continue
        if outcome == "tie":
            ties[frozenset((system, opponent))] += 1
        else:
            wins[(system, opponent) if outcome == "win" else (opponent, system)] += 1
    return wins, ties


def bradley_terry_counts(aspect: str, found: Any) -> list[Row]:
    """The count columns of pairwise_bradley_terry; the fitted columns are checked apart (the Bradley-Terry
    likelihood equations, ties as half wins), so they are left out here."""
    wins, ties = bt_wins_ties(aspect)
    rows = []
    for s in sorted(SYSTEMS):
        w = sum(n for (x, _), n in wins.items() if x == s)
        lo = sum(n for (_, y), n in wins.items() if y == s)
        t = sum(n for pair, n in ties.items() if s in pair)
        rows.append({"aspect": aspect, "system": s, "judgments": w + t + lo, "wins": w, "ties": t, "losses": lo})
    return rows


# ----------------------------------------------------------------------------- ranking

DIMENSIONS = ("quality", "brevity")


def ranking_tables() -> dict[str, list[Row]]:
    given: dict[tuple[str, str], list[tuple[int, int]]] = {}  # (dimension, system) -> (item, rank)
    for item, a in judgments():
        for dimension, ranks in own_study.ranking_truth(item, a).items():
            for system, rank in ranks.items():
                given.setdefault((dimension, system), []).append((item, rank))
    mean_rank, intervals = [], []
    for (dimension, system), part in given.items():
        ranks = [r for _, r in part]
        mean = float(statistics.mean(ranks))
        mean_rank.append({"dimension": dimension, "system": system, "rankings": len(ranks), "mean rank": mean,
                          **{f"rank {r} %": pct(ranks.count(r), len(ranks)) for r in (1, 2, 3)}})  # fmt: skip
        intervals.append({"dimension": dimension, "system": system, "samples": len({i for i, _ in part}),
                          "rankings": len(ranks), "mean rank": mean,
                          "CI low": Low(mean), "CI high": High(mean)})  # fmt: skip
    wins = []
    for dimension in DIMENSIONS:
        for system, opponent in combinations(sorted(SYSTEMS), 2):
            c: Counter[str] = Counter()
            for item, a in judgments():
                ranks = own_study.ranking_truth(item, a)[dimension]
                mine, theirs = ranks[system], ranks[opponent]
                c["win" if mine < theirs else "tie" if mine == theirs else "loss"] += 1
            n = sum(c.values())
            wins.append({"dimension": dimension, "system": system, "opponent": opponent, "rankings": n,
                         "wins": c["win"], "ties": c["tie"], "losses": c["loss"], **_shares(c, n)})  # fmt: skip
    agreement = []
    for dimension in DIMENSIONS:
        ws = [formulas.kendall_w([[own_study.ranking_truth(item, a)[dimension][s] for s in SYSTEMS]
                                  for a in ANNOTATORS]) for item in range(ITEMS)]  # fmt: skip
        defined = [w for w in ws if not math.isnan(w)]
        units = [[own_study.ranking_truth(item, a)[dimension][s] for a in ANNOTATORS]
                 for item in range(ITEMS) for s in SYSTEMS]  # fmt: skip
        agreement.append({"dimension": dimension, "samples (W)": len(defined),
                          "samples all tied": len(ws) - len(defined),
                          "mean Kendall W": statistics.mean(defined) if defined else NAN,
                          "median Kendall W": statistics.median(defined) if defined else NAN,
                          "units (alpha)": len(units),
                          "Krippendorff alpha": formulas.krippendorff_alpha(units, "ordinal", [1, 2, 3])})  # fmt: skip
    return {"ranking_mean_rank": mean_rank, "ranking_mean_rank_intervals": intervals, "ranking_pairwise_wins": wins,
            "ranking_agreement": agreement}  # fmt: skip


# ----------------------------------------------------------------------------- ratings

RATING_ASPECTS = {"coherence": "Coherence", "fluency": "Fluency"}
CODES = ("1", "2", "3", "4", "5")


def ratings_given() -> list[tuple[int, str, str, str, int]]:
    """(item, annotator, aspect name, system, rating)."""
    return [(item, a, aspect, system, value)
            for item, a in judgments()
            for aspect, by in own_study.ratings_truth(item, a).items() for system, value in by.items()]  # fmt: skip


def rank_biserial(differences: Sequence[float]) -> float:
    """Kerby's (2014) matched-pairs rank-biserial r: zeros dropped, the sizes' midranks, (positive ranks -
    negative ranks) / all ranks."""
    nonzero = [d for d in differences if d != 0]
    if not nonzero:
        return NAN
    ranks = independent.midranks([abs(d) for d in nonzero])
    signed = sum(r if d > 0 else -r for r, d in zip(ranks, nonzero, strict=True))
    return signed / sum(ranks)


def wilcoxon_normal(differences: Sequence[float]) -> float:
    """The large-sample signed-rank p, which ``scipy.stats.wilcoxon`` (the report's test) gives when the
    non-zero differences' sizes tie or some differences are zero, as here on every pair: T+ the sum of
    the positive differences' midranks over the n non-zero ones, mean n (n + 1) / 4, variance
    n (n + 1) (2n + 1) / 24 - sum(t^3 - t) / 48 over tied groups of size t, no continuity correction,
    two-sided normal p."""
    nonzero = [d for d in differences if d != 0]
    n = len(nonzero)
    ranks = independent.midranks([abs(d) for d in nonzero])
    t_plus = sum(r for r, d in zip(ranks, nonzero, strict=True) if d > 0)
    ties = Counter(abs(d) for d in nonzero).values()
    variance = n * (n + 1) * (2 * n + 1) / 24 - sum(t**3 - t for t in ties) / 48
    z = (t_plus - n * (n + 1) / 4) / math.sqrt(variance)
    return math.erfc(abs(z) / math.sqrt(2))


def ratings_tables() -> dict[str, list[Row]]:
    given = ratings_given()
    by_ann: dict[tuple[str, str], list[int]] = {}
    for _, a, aspect, _, v in given:
        by_ann.setdefault((a, aspect), []).append(v)
    z: dict[tuple[str, str], list[float]] = {}
    for _, a, aspect, system, v in given:
        values = by_ann[(a, aspect)]
        sd = statistics.stdev(values) if len(values) > 1 else 0.0  # sample sd, as the module documents
        if sd > 0:
            z.setdefault((aspect, system), []).append((v - statistics.mean(values)) / sd)
    summary, dist, tests, agreement = [], [], [], []
    for aspect in RATING_ASPECTS:
        for system in SYSTEMS:
            values = [v for _, _, asp, s, v in given if (asp, s) == (aspect, system)]
            items = {i for i, _, asp, s, _ in given if (asp, s) == (aspect, system)}
            mean, median = float(statistics.mean(values)), float(statistics.median(values))
            zs = z.get((aspect, system), [])
            summary.append({"aspect": aspect, "system": system, "samples": len(items), "ratings": len(values),
                            "mean": mean, "mean CI low": Low(mean), "mean CI high": High(mean), "median": median,
                            "median CI low": Low(median, True), "median CI high": High(median, True),
                            "ratings with z": len(zs),
                            "mean z": float(statistics.mean(zs)) if zs else NAN})  # fmt: skip
            c = Counter(str(v) for v in values)
            dist += [{"aspect": aspect, "system": system, "answer": code, "ratings": c[code],
                      "ratings %": pct(c[code], len(values))} for code in CODES]  # fmt: skip
        means = {(i, s): statistics.mean(v for i2, _, asp, s2, v in given if (i2, asp, s2) == (i, aspect, s))
                 for i in range(ITEMS) for s in SYSTEMS}  # fmt: skip
        rows = []
        for system, opponent in combinations(sorted(SYSTEMS), 2):
            diffs = [round(means[(i, system)] - means[(i, opponent)], 9) for i in range(ITEMS)]
            p = wilcoxon_normal(diffs) if any(diffs) else NAN
            mean = float(statistics.mean(diffs))
            rows.append({"aspect": aspect, "system": system, "opponent": opponent, "samples": ITEMS,
                         "mean difference": mean, "CI low": Low(mean), "CI high": High(mean),
                         "rank-biserial r": rank_biserial(diffs),
                         "samples system higher": sum(d > 0 for d in diffs),
                         "samples opponent higher": sum(d < 0 for d in diffs), "p (Wilcoxon)": p,
                         "p (Holm)": NAN})  # fmt: skip
        tested = [r for r in rows if not math.isnan(r["p (Wilcoxon)"])]
        for r, corrected in zip(tested, independent.holm([r["p (Wilcoxon)"] for r in tested]), strict=True):
            r["p (Holm)"] = corrected
        tests += rows
        units = [[str(v) for i, _, asp, s, v in given if (i, asp, s) == (item, aspect, system)]
                 for item in range(ITEMS) for system in SYSTEMS]  # fmt: skip
        agreement.append({"aspect": aspect, "level": "ordinal", **agreement_columns(units, CODES, "ordinal", CODES)})
    return {"ratings_summary": summary, "ratings_distribution": dist, "ratings_paired_tests": tests,
            "ratings_agreement": agreement}  # fmt: skip


# ----------------------------------------------------------------------------- spans

LABELS = ("Wrong", "Vague")


def token_units(spans_by_annotator: list[list[tuple[str, int, int]]], only: str = "") -> list[list[str]]:
    """Per whitespace token of the answer, what each annotator gives it: the label of the first span
    (by start) covering it, or none; for one label, whether it is that label."""
    units = []
    for m in re.finditer(r"\S+", own_study.ANSWER):
        values = []
        for spans in spans_by_annotator:
            covering = [lab for lab, s, e in sorted(spans, key=lambda x: (x[1], x[2])) if s < m.end() and e > m.start()]
            label = covering[0] if covering else "none"
            values.append(label if not only else str(label == only))
        units.append(values)
    return units


def overlapping(mine: list[tuple[str, int, int]], theirs: list[tuple[str, int, int]]) -> int:
    """How many of my spans share a character with one of theirs of the same label."""
    return sum(any(u[0] == v[0] and u[1] < v[2] and v[1] < u[2] for v in theirs) for u in mine)


def spans_tables() -> dict[str, list[Row]]:
    truth = {(item, a): own_study.spans_truth(item, a) for item, a in judgments()}
    counts = []
    for system in ("(all)", *sorted(SYSTEMS)):
        mine = [t for (item, _), t in truth.items() if system in ("(all)", own_study.spans_system(item))]
        for label in LABELS:
            spans = sum(1 for t in mine for s in t["spans"] if s[0] == label)
            having = sum(1 for t in mine if any(s[0] == label for s in t["spans"]))
            counts.append({"label": label, "system": system, "spans": spans, "judgments with it": having,
                           "judgments": len(mine), "judgments %": pct(having, len(mine))})  # fmt: skip
    agreement = []
    pairs = ITEMS * len(list(combinations(ANNOTATORS, 2)))
    for label in [*LABELS, "all labels"]:
        exact = total = found_x = found_y = size_x = size_y = 0
        units: list[list[str]] = []
        for item in range(ITEMS):
            judged = [truth[(item, a)]["spans"] for a in ANNOTATORS]
            for x, y in combinations(judged, 2):
                xs = [s for s in x if label in ("all labels", s[0])]
                ys = [s for s in y if label in ("all labels", s[0])]
                exact += sum((Counter(xs) & Counter(ys)).values())
                total += len(xs) + len(ys)
                found_x, found_y = found_x + overlapping(xs, ys), found_y + overlapping(ys, xs)
                size_x, size_y = size_x + len(xs), size_y + len(ys)
            units += token_units(judged, "" if label == "all labels" else label)
        p, r = found_x / size_x, found_y / size_y
        agreement.append({"label": label, "annotator pairs": pairs, "spans": total, "exact matches": exact,
                          "exact F1": 2 * exact / total if total else NAN, "overlap F1": 2 * p * r / (p + r),
                          "token alpha": formulas.krippendorff_alpha(units), "token units": len(units)})  # fmt: skip
    answer = {key: t["adequacy"] for key, t in truth.items()}
    dist, agree = question_tables("adequacy", ("1", "2", "3", "4"), answer, lambda item: item)
    return {"spans_counts": counts, "spans_agreement": agreement, "questions_distribution": dist,
            "questions_agreement": agree}  # fmt: skip


# ----------------------------------------------------------------------------- sentences


def sentences_cells() -> list[tuple[int, int, str, str]]:
    """(item, row, special case, severity) as the report's columns read them."""
    out = []
    for item, a in judgments():
        for n, row in enumerate(own_study.sentences_truth(item, a), start=1):
            if "special" in row:
                out.append((item, n, row["special"], "(special case)"))
            else:
                out.append((item, n, "(no special case)", row["severity"]))
    return out


def sentences_tables() -> dict[str, list[Row]]:
    cells = sentences_cells()
    dist, agreement = [], []
    for i, column in enumerate(("special", "severity")):
        c = Counter(cell[2 + i] for cell in cells)
        dist += [{"column": column, "answer": answer, "rows": n, "rows %": pct(n, len(cells))}
                 for answer, n in c.items()]  # fmt: skip
        units: dict[tuple[int, int], list[str]] = {}
        for item, n, *values in cells:
            if column == "special" or values[i] not in ("(special case)", "(unanswered)"):
                units.setdefault((item, n), []).append(values[i])
        pairable = [u for u in units.values() if len(u) >= 2]
        agree = sum(sum(1 for x, y in combinations(u, 2) if x == y) for u in pairable)
        observed = pct(agree, sum(len(u) * (len(u) - 1) / 2 for u in pairable))
        categories = sorted({v for u in pairable for v in u})
        agreement.append({"column": column, "observed agreement %": observed,
                          **agreement_columns(list(units.values()), categories, "nominal")})  # fmt: skip
    return {"sentences_distribution": dist, "sentences_agreement": agreement}


# ----------------------------------------------------------------------------- confidence (pairwise question)


def confidence_tables() -> dict[str, list[Row]]:
    answer = {(item, a): own_study.pairwise_truth(item, a)["confidence"] for item, a in judgments()}
    dist, agree = question_tables("confidence", ("1", "2", "3"), answer, lambda item: item)
    return {"questions_distribution": dist, "questions_agreement": agree}


def expected_tables(style: str) -> dict[str, list[Row]]:
    if style == "pairwise":
        return {**pairwise_tables(), **confidence_tables()}
    return {"ranking": ranking_tables, "ratings": ratings_tables, "spans": spans_tables,
            "sentences": sentences_tables}[style]()  # fmt: skip
