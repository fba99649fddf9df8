"""The "Judges and humans" tables of a planted own study, computed from the plant alone.

Plain Python from the definitions (tests/report/formulas.py for kappa and alpha; the
t-test by its formula with scipy's t distribution; Benjamini-Yekutieli and Kendall's tau-b
by hand), never from what annols reads back. Rows are keyed by their text cells.
"""

from __future__ import annotations

import math
from collections import Counter
from itertools import combinations, pairwise
from typing import Any

from scipy.stats import t as student_t

from tests.judges_study import judge_truths
from tests.own_study import ANNOTATORS, ITEMS, SYSTEMS, OwnStudy, pairwise_systems, spans_system
from tests.report import formulas

EPSILON = 0.2
MAJORITY = "human majority"
SPANS = "spans (exact F1)"
Units = dict[tuple[str, int, str], Any]  # (question, item, about) -> answer


def email(annotator: str) -> str:
    return f"{annotator}@own.study"


def unit_answers(study: OwnStudy, item: int, truth: Any) -> dict[tuple[str, str], Any]:
    """(question, about) -> the answer one rater gave on an item, as the section compares it."""
    out: dict[tuple[str, str], Any] = {}
    if study.style == "pairwise":
        first, second = sorted(pairwise_systems(item))
        for aspect in ("helpful", "harmless"):
            pick = truth[aspect]
            out[(aspect, f"{first} vs {second}")] = "tie" if pick == "tie" else "win" if pick == first else "loss"
        out[("confidence", "")] = truth["confidence"]
    elif study.style in ("ranking", "ratings"):
        for question, by_system in truth.items():
            for system, value in by_system.items():
                out[(question, system)] = float(value)
    elif study.style == "spans":
        out[("adequacy", "")] = truth["adequacy"]
    else:
        for n, row in enumerate(truth, start=1):
            out[("special", f"row {n}")] = row.get("special", "-")
            if "severity" in row:
                out[("severity", f"row {n}")] = row["severity"]
    return out


def raters(study: OwnStudy) -> dict[str, dict[int, Any]]:
    """Rater name (as the report names it) -> item -> plant."""
    out = {email(a): {i: study.truth(i, a) for i in range(ITEMS)} for a in ANNOTATORS}
    for judge, truths in judge_truths(study).items():
        out[f"judge:{judge}"] = truths
    return out


def numeric(study: OwnStudy) -> bool:
    return study.style in ("ranking", "ratings")


def answers_by_rater(study: OwnStudy) -> dict[str, dict[tuple[str, int, str], Any]]:
    return {
        who: {(q, i, about): v for i, t in plant.items() for (q, about), v in unit_answers(study, i, t).items()}
        for who, plant in raters(study).items()
    }


def majority_of(values: list[Any], is_numeric: bool) -> Any:
    if is_numeric:
        return sorted(values)[(len(values) - 1) // 2]
    code, count = Counter(values).most_common(1)[0]
    return code if count * 2 > len(values) else None


def questions(study: OwnStudy) -> list[str]:
    return sorted({q for per in answers_by_rater(study).values() for q, _, _ in per})


def _pair_numbers(one: dict[Any, Any], two: dict[Any, Any], is_numeric: bool) -> list[Any]:
    common = sorted(set(one) & set(two), key=str)
    pairs = [(one[u], two[u]) for u in common]
    agree = 100 * sum(a == b for a, b in pairs) / len(pairs)
    kappa = formulas.weighted_kappa(pairs) if is_numeric else formulas.cohens_kappa(pairs)
    values = sorted({v for p in pairs for v in p}, key=str if not is_numeric else float)
    if len(values) < 2:
        alpha = math.nan
    else:
        level = "ordinal" if is_numeric else "nominal"
        alpha = formulas.krippendorff_alpha([list(p) for p in pairs], level, values if is_numeric else ())
    return [len(pairs), agree, kappa, alpha]


def agreement(study: OwnStudy) -> dict[tuple[str, str, str], list[Any]]:
    every = answers_by_rater(study)
    humans = [email(a) for a in ANNOTATORS]
    judges = sorted(w for w in every if w.startswith("judge:"))
    out = {}
    for q in questions(study):
        of = {w: {(i, about): v for (qq, i, about), v in per.items() if qq == q} for w, per in every.items()}
        for a, b in combinations(humans, 2):
            out[(q, a, b)] = _pair_numbers(of[a], of[b], numeric(study))
        units = sorted(set().union(*(of[h] for h in humans)), key=str)
        best = {u: majority_of([of[h][u] for h in humans if u in of[h]], numeric(study)) for u in units}
        best = {u: v for u, v in best.items() if v is not None}
        for j in judges:
            for h in humans:
                out[(q, j, h)] = _pair_numbers(of[j], of[h], numeric(study))
            out[(q, j, MAJORITY)] = _pair_numbers(of[j], best, numeric(study))
    return out


# ----------------------------------------------------------------------------- the alternative annotator test


def _score(mine: Any, others: list[Any], is_numeric: bool) -> float:
    if is_numeric:
        return -math.sqrt(sum((mine - o) ** 2 for o in others) / len(others))
    return sum(mine == o for o in others) / len(others)


def one_sided_t(d: list[float], epsilon: float) -> tuple[float, float]:
    """(t, p) of H1: mean(d) < epsilon; a constant d gives (nan, 0 or 1)."""
    n = len(d)
    mean = sum(d) / n
    if all(x == d[0] for x in d):
        return math.nan, 0.0 if mean < epsilon else 1.0
    sd = math.sqrt(sum((x - mean) ** 2 for x in d) / (n - 1))
    t = (mean - epsilon) / (sd / math.sqrt(n))
    return t, float(student_t.cdf(t, n - 1))


def benjamini_yekutieli(p: list[float]) -> list[float]:
    m = len(p)
    c = sum(1 / k for k in range(1, m + 1))
    order = sorted(range(m), key=lambda i: p[i])
    adjusted = [0.0] * m
    running = 1.0
    for rank in range(m, 0, -1):
        i = order[rank - 1]
        running = min(running, p[i] * m * c / rank)
        adjusted[i] = min(1.0, running)
    return adjusted


def _alt(scores: dict[str, tuple[list[float], list[float]]], epsilon: float) -> tuple[list[list[Any]], list[Any]]:
    rows = []
    for who in sorted(scores):
        f, h = scores[who]
        w_f = [float(x >= y) for x, y in zip(f, h, strict=True)]
        w_h = [float(y >= x) for x, y in zip(f, h, strict=True)]
        t, p = one_sided_t([b - a for a, b in zip(w_f, w_h, strict=True)], epsilon)
        rows.append([who, len(f), sum(w_f) / len(f), sum(w_h) / len(h), t, p])
    adjusted = benjamini_yekutieli([r[5] for r in rows])
    for r, q in zip(rows, adjusted, strict=True):
        r += [q, "yes" if q <= 0.05 else "no"]
    rejected = sum(r[7] == "yes" for r in rows)
    omega = rejected / len(rows)
    rho = sum(r[2] for r in rows) / len(rows)
    return rows, [len(rows), rejected, omega, rho, "yes" if omega >= 0.5 else "no"]


def alt_test(study: OwnStudy, epsilon: float = EPSILON) -> tuple[dict[tuple[str, ...], list[Any]], dict[Any, Any]]:
    """Rows of the per-annotator table and of the summary, keyed (judge, question[, annotator])."""
    every = answers_by_rater(study)
    humans = [email(a) for a in ANNOTATORS]
    judges = sorted(w for w in every if w.startswith("judge:"))
    groups: list[tuple[str, str, dict[str, tuple[list[float], list[float]]]]] = []
    for q in questions(study):
        of = {w: {(i, about): v for (qq, i, about), v in per.items() if qq == q} for w, per in every.items()}
        for j in judges:
            scores: dict[str, tuple[list[float], list[float]]] = {}
            for unit in sorted(of[j], key=str):
                given = {h: of[h][unit] for h in humans if unit in of[h]}
                if len(given) < 2:
                    continue
                for h, mine in given.items():
                    others = [v for w, v in given.items() if w != h]
                    f, hh = scores.setdefault(h, ([], []))
                    f.append(_score(of[j][unit], others, numeric(study)))
                    hh.append(_score(mine, others, numeric(study)))
            groups.append((j, q, scores))
    if study.style == "spans":
        sets = span_sets(study)
        for j in judges:
            scores = {}
            for item in range(ITEMS):
                for h in humans:
                    others = [sets[w][item] for w in humans if w != h]
                    f, hh = scores.setdefault(h, ([], []))
                    f.append(sum(item_f1(sets[j][item], o) for o in others) / len(others))
                    hh.append(sum(item_f1(sets[h][item], o) for o in others) / len(others))
            groups.append((j, SPANS, scores))
    rows, summary = {}, {}
    for j, q, scores in groups:
        found, total = _alt(scores, epsilon)
        for r in found:
            rows[(j, q, r[0])] = r[1:]
        summary[(j, q)] = total
    return rows, summary


# ----------------------------------------------------------------------------- spans


def span_sets(study: OwnStudy) -> dict[str, dict[int, Counter[tuple[str, int, int]]]]:
    return {who: {i: Counter(tuple(s) for s in t["spans"]) for i, t in plant.items()}
            for who, plant in raters(study).items()}  # fmt: skip


def item_f1(a: Counter[Any], b: Counter[Any]) -> float:
    both = sum(a.values()) + sum(b.values())
    return 1.0 if both == 0 else 2 * sum((a & b).values()) / both


def _f1(pairs: list[tuple[Counter[Any], Counter[Any]]]) -> list[Any]:
    one, two = sum(sum(a.values()) for a, _ in pairs), sum(sum(b.values()) for _, b in pairs)
    matched = sum(sum((a & b).values()) for a, b in pairs)
    return [len(pairs), one, two, 2 * matched / (one + two) if one + two else math.nan]


def span_f1(study: OwnStudy) -> dict[tuple[str, str, str], list[Any]]:
    sets = span_sets(study)
    humans = [email(a) for a in ANNOTATORS]
    out = {}
    for a, b in combinations(humans, 2):
        out[("humans", a, b)] = _f1([(sets[a][i], sets[b][i]) for i in range(ITEMS)])
    for j in sorted(w for w in sets if w.startswith("judge:")):
        for h in humans:
            out[(j, j, h)] = _f1([(sets[j][i], sets[h][i]) for i in range(ITEMS)])
        majority = []
        for i in range(ITEMS):
            marked = Counter(s for h in humans for s in set(sets[h][i]))
            majority.append((sets[j][i], Counter({s: 1 for s, n in marked.items() if n * 2 > len(humans)})))
        out[(j, j, MAJORITY)] = _f1(majority)
    return out


# ----------------------------------------------------------------------------- systems


def system_scores(study: OwnStudy, plants: list[dict[int, Any]]) -> dict[tuple[str, str], float]:
    """(question, system) -> win rate % (ties half), mean rank or mean rating, over the plants given."""
    points: dict[tuple[str, str], list[float]] = {}
    for plant in plants:
        for item, truth in plant.items():
            if study.style == "pairwise":
                for aspect in ("helpful", "harmless"):
                    one, two = pairwise_systems(item)
                    pick = truth[aspect]
                    share = 0.5 if pick == "tie" else float(pick == one)
                    points.setdefault((aspect, one), []).append(100 * share)
                    points.setdefault((aspect, two), []).append(100 * (1 - share))
            elif study.style in ("ranking", "ratings"):
                for q, by in truth.items():
                    for s, v in by.items():
                        points.setdefault((q, s), []).append(float(v))
            elif study.style == "spans":  # spans per item, by the item's system
                points.setdefault(("errors", spans_system(item)), []).append(float(len(truth["spans"])))
            else:  # % of rows with a severity, by the item's system
                for row in truth:
                    points.setdefault(("severity", spans_system(item)), []).append(100.0 * ("severity" in row))
    return {k: sum(v) / len(v) for k, v in points.items()}


def tau_b(x: list[float], y: list[float]) -> float:
    concordant = discordant = ties_x = ties_y = 0
    for i, j in combinations(range(len(x)), 2):
        dx, dy = x[i] - x[j], y[i] - y[j]
        if dx == 0 and dy == 0:
            continue
        if dx == 0:
            ties_x += 1
        elif dy == 0:
            ties_y += 1
        elif dx * dy > 0:
            concordant += 1
        else:
            discordant += 1
    denominator = math.sqrt((concordant + discordant + ties_x) * (concordant + discordant + ties_y))
    return (concordant - discordant) / denominator if denominator else math.nan


def order(scores: dict[str, float], lower_first: bool) -> str:
    ranked = sorted(scores, key=lambda s: (scores[s] if lower_first else -scores[s], s))
    out = ranked[0]
    for before, system in pairwise(ranked):
        out += (" = " if math.isclose(scores[before], scores[system], abs_tol=1e-9) else " > ") + system
    return out


def systems(study: OwnStudy) -> tuple[dict[tuple[str, str], list[float]], dict[tuple[str, str], list[Any]]]:
    """judges_systems rows (question, system) -> [humans, judge...]; order rows (judge, question) -> cells."""
    every = raters(study)
    humans = system_scores(study, [every[email(a)] for a in ANNOTATORS])
    judges = sorted(w for w in every if w.startswith("judge:"))
    by_judge = {j: system_scores(study, [every[j]]) for j in judges}
    side = {k: [v, *(by_judge[j][k] for j in judges)] for k, v in humans.items()}
    orders = {}
    lower_first = study.style in ("ranking", "spans", "sentences")  # ranks, spans and coded rows: fewer is better
    for q in sorted({q for q, _ in humans}):
        h = {s: humans[(q, s)] for s in SYSTEMS}
        for j in judges:
            mine = {s: by_judge[j][(q, s)] for s in SYSTEMS}
            human_order, judge_order = order(h, lower_first), order(mine, lower_first)
            tau = tau_b([h[s] for s in SYSTEMS], [mine[s] for s in SYSTEMS])
            same = "yes" if human_order == judge_order else "no"
            orders[(j, q)] = [len(SYSTEMS), human_order, judge_order, same, tau]
    return side, orders


# ----------------------------------------------------------------------------- disagreements


def disagreements(study: OwnStudy) -> set[tuple[str, str, int, str, str]]:
    """(judge, question, item, about, the judge's answer) where it equals no human's."""
    every = answers_by_rater(study)
    humans = [email(a) for a in ANNOTATORS]
    out = set()
    for j in sorted(w for w in every if w.startswith("judge:")):
        for (q, i, about), v in every[j].items():
            theirs = {every[h][(q, i, about)] for h in humans if (q, i, about) in every[h]}
            if theirs and v not in theirs:
                shown = str(int(v)) if isinstance(v, float) else str(v)
                out.add((j, q, i, about, shown))
    return out
