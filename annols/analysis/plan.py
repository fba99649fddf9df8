"""``annols plan``: how many items and annotators a study needs to tell two systems apart.

A seeded simulation of the style's main comparison, with the test and the correction the
report applies (:mod:`annols.analysis.detectable`: the corrected level is alpha / m, m the
tests in the report's Holm family, Holm's first step), over a grid of designs: ``items``
items, each judged by ``annotators`` annotators (the same ``annotators`` people judge every
item, so an annotator's bias does not average out over items: Card et al. 2020).

- pairwise: each judgment is a tie with probability ``tie_rate``; otherwise the first system
  wins with probability expit(logit(q) + u_item + b_annotator), u ~ N(0, item_sd),
  b ~ N(0, annotator_sd) on the logit scale, q = (1 + effect) / 2 (``effect``: wins minus
  losses as a share of the decided judgments, the report's measure). Test: the exact sign
  test of wins against losses over every judgment, ties set aside. With no item or
  annotator variance this is the binomial model, whose exact power is
  :func:`exact_pairwise_power`.
- ratings: the mixed-effects design of Card et al. on the paired difference: each
  annotator's rating of system B minus system A on an item is
  effect + u_item + b_annotator + e, u ~ N(0, item_sd), b ~ N(0, annotator_sd),
  e ~ N(0, residual_sd). Test: Wilcoxon signed-rank over items of the per-item mean
  difference (the report's paired test).
- ranking: each annotator ranks the ``positions`` candidates by latent utility
  mu_system + w_(item, system) + N(0, 1), w ~ N(0, item_sd); A and B are apart by a latent
  gap chosen (by bisection on a seeded sample) so their expected mean-rank difference is
  ``effect``, the others at the midpoint. Test: Wilcoxon signed-rank over items of the
  per-item mean-rank difference.

With a pilot (:func:`from_pilot`), the effect is the smallest non-zero difference the pilot
observed among its comparisons, and the tie rate and variance components come from the
pilot (statsmodels' MixedLM with an item group and an annotator variance component).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from functools import cache
from typing import Any

import numpy as np
import pandas as pd  # type: ignore[import-untyped, unused-ignore]
from scipy.special import expit, logit
from scipy.stats import binom, wilcoxon

from annols.analysis import detectable
from annols.definition import Definition
from annols.errors import InputError, OptionError

ITEMS = (25, 50, 100, 200, 400, 800)
ANNOTATORS = (1, 2, 3, 5)
SIMULATIONS = 500
STYLES = ("pairwise", "ratings", "ranking")
DEFAULTS: dict[str, dict[str, float]] = {
    "pairwise": {"effect": 0.2, "tie_rate": 0.2, "item_sd": 0.0, "annotator_sd": 0.0},
    "ratings": {"effect": 0.3, "item_sd": 0.7, "annotator_sd": 0.2, "residual_sd": 1.0},
    "ranking": {"effect": 0.3, "item_sd": 0.5},
}
UNITS = {"pairwise": "wins - losses as a share of decided judgments", "ratings": "points of the rating scale",
         "ranking": "mean rank"}  # fmt: skip


@dataclass(frozen=True)
class Assumptions:
    style: str
    effect: float
    tie_rate: float = 0.0
    item_sd: float = 0.0
    annotator_sd: float = 0.0
    residual_sd: float = 1.0
    positions: int = 2
    tests: int = 1  # the report's Holm family
    alpha: float = detectable.ALPHA
    power: float = detectable.POWER
    source: str = "given"  # or the pilot's folders
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Design:
    items: int
    annotators: int
    judgments: int
    cost: float | None
    power: float
    error: float  # Monte Carlo standard error of the power


@dataclass(frozen=True)
class Plan:
    assumptions: Assumptions
    simulations: int
    seed: int
    designs: list[Design] = field(default_factory=list)

    @property
    def cheapest(self) -> Design | None:
        """The design with the fewest judgments that reaches the target power (fewer annotators on a tie)."""
        ok = [d for d in self.designs if d.power >= self.assumptions.power]
        return min(ok, key=lambda d: (d.judgments, d.annotators)) if ok else None

    def table(self) -> pd.DataFrame:
        return pd.DataFrame([vars(d) for d in self.designs])


def family_size(definition: Definition) -> int:
    """How many tests the report corrects together for one comparison of the style."""
    spec = definition.spec
    if definition.style == "pairwise":
        return max(1, len(spec.aspects))
    if definition.style == "ratings":
        return max(1, math.comb(len(spec.candidates), 2))
    if definition.style == "ranking":
        return max(1, math.comb(len(spec.positions), 2))
    raise InputError(definition.source, "", "style", f"annols plan simulates the styles {', '.join(STYLES)}; "
                     f"{definition.style!r} has no comparison of two systems to plan for")  # fmt: skip


def assumptions(definition: Definition, alpha: float = detectable.ALPHA,
                power: float = detectable.POWER) -> Assumptions:  # fmt: skip
    """The style's defaults for a definition: its family of tests, its candidates (ranking)."""
    tests = family_size(definition)
    positions = len(definition.spec.positions) if definition.style == "ranking" else 2
    defaults: dict[str, Any] = dict(DEFAULTS[definition.style])
    return Assumptions(style=definition.style, positions=positions, tests=tests, alpha=alpha, power=power,
                       **defaults)  # fmt: skip


def override(a: Assumptions, **given: float | None) -> Assumptions:
    """``a`` with the values given (None: kept); a value the style does not use is refused by name."""
    values: dict[str, Any] = {k: float(v) for k, v in given.items() if v is not None}
    unused = sorted(k for k in values if k not in DEFAULTS[a.style])
    if unused:
        raise OptionError("--" + unused[0].replace("_", "-"), f"the {a.style} simulation has no such parameter "
                          f"(it uses {', '.join('--' + k.replace('_', '-') for k in DEFAULTS[a.style])})")  # fmt: skip
    source = a.source if not values or a.source == "given" else f"{a.source}, with given {', '.join(values)}"
    return replace(a, source=source, **values)


@cache
def _regions(n_max: int, alpha: float) -> np.ndarray:
    """region[d]: the sign test on d decided judgments rejects when wins <= region[d] or >= d - region[d]."""
    return np.array([detectable.sign_test_region(d, alpha) for d in range(n_max + 1)])


def exact_pairwise_power(judgments: int, effect: float, tie_rate: float, alpha: float) -> float:
    """The sign test's exact power with independent judgments: decided ~ Bin(N, 1 - t), wins ~ Bin(decided, q)."""
    q = (1 + effect) / 2
    d = np.arange(judgments + 1)
    weights = binom.pmf(d, judgments, 1 - tie_rate)
    powers = np.array([detectable.sign_test_power(int(k), q, alpha) for k in d])
    return float(weights @ powers)


def _pairwise(a: Assumptions, items: int, annotators: int, sims: int, rng: np.random.Generator) -> np.ndarray:
    level = a.alpha / a.tests
    q = min(max((1 + a.effect) / 2, 1e-12), 1 - 1e-12)
    u = rng.normal(0, a.item_sd, (sims, items, 1)) if a.item_sd > 0 else 0.0
    b = rng.normal(0, a.annotator_sd, (sims, 1, annotators)) if a.annotator_sd > 0 else 0.0
    p = np.broadcast_to(expit(logit(q) + u + b), (sims, items, annotators))
    draws = rng.random((sims, items, annotators))
    tie = draws < a.tie_rate
    # Among the decided, a win when the rescaled draw is below p: one uniform draw per judgment.
    rescaled = (draws - a.tie_rate) / (1 - a.tie_rate) if a.tie_rate < 1 else draws
    wins = ((~tie) & (rescaled < p)).sum(axis=(1, 2))
    decided = (~tie).sum(axis=(1, 2))
    region = _regions(items * annotators, level)[decided]
    return (region >= 0) & ((wins <= region) | (wins >= decided - region))


def _wilcoxon_rejects(diffs: np.ndarray, level: float) -> np.ndarray:
    diffs = np.round(diffs, 9)
    nonzero = (diffs != 0).any(axis=1)
    out = np.zeros(len(diffs), dtype=bool)
    if nonzero.any():
        p = np.atleast_1d(wilcoxon(diffs[nonzero], axis=1).pvalue)
        out[nonzero] = p <= level
    return out


def _ratings(a: Assumptions, items: int, annotators: int, sims: int, rng: np.random.Generator) -> np.ndarray:
    u = rng.normal(0, a.item_sd, (sims, items, 1)) if a.item_sd > 0 else 0.0
    b = rng.normal(0, a.annotator_sd, (sims, 1, annotators)) if a.annotator_sd > 0 else 0.0
    e = rng.normal(0, a.residual_sd, (sims, items, annotators))
    means = (a.effect + u + b + e).mean(axis=2)
    return _wilcoxon_rejects(means, a.alpha / a.tests)


def _ranks(gap: float, a: Assumptions, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """Ranks (1 best) of A and B, shape + (2,), among ``positions`` candidates."""
    mu = np.zeros(a.positions)
    mu[0], mu[1] = gap / 2, -gap / 2
    w = rng.normal(0, a.item_sd, (*shape[:-1], 1, a.positions)) if a.item_sd > 0 else 0.0
    latent = mu + w + rng.normal(0, 1, (*shape, a.positions))
    ranks = (-latent).argsort(axis=-1).argsort(axis=-1) + 1
    return ranks[..., :2]


@cache
def ranking_gap(effect: float, positions: int, item_sd: float, seed: int = 0) -> float:
    """The latent gap between A and B whose expected mean-rank difference (B minus A) is ``effect``."""
    a = Assumptions("ranking", effect, item_sd=item_sd, positions=positions)

    def rank_difference(gap: float) -> float:
        r = _ranks(gap, a, (20000, 1), np.random.default_rng(seed))
        return float((r[..., 1] - r[..., 0]).mean())

    most = positions - 1
    if not 0 < effect < most:
        raise OptionError("--effect", f"a mean-rank difference between 0 and {most} (the ranks of "
                          f"{positions} candidates) is needed, not {effect}")  # fmt: skip
    low, high = 0.0, 1.0
    while rank_difference(high) < effect and high < 64:
        high *= 2
    for _ in range(40):
        mid = (low + high) / 2
        low, high = (mid, high) if rank_difference(mid) < effect else (low, mid)
    return (low + high) / 2


def _ranking(a: Assumptions, items: int, annotators: int, sims: int, rng: np.random.Generator) -> np.ndarray:
    gap = ranking_gap(a.effect, a.positions, a.item_sd)
    ranks = _ranks(gap, a, (sims, items, annotators), rng)
    diffs = (ranks[..., 1] - ranks[..., 0]).mean(axis=2)
    return _wilcoxon_rejects(diffs, a.alpha / a.tests)


SIMULATE = {"pairwise": _pairwise, "ratings": _ratings, "ranking": _ranking}


def simulate(a: Assumptions, items: int, annotators: int, sims: int, seed: int) -> float:
    """The share of ``sims`` simulated studies of this design whose test rejects at the corrected level.

    Design (items, annotators) draws from ``numpy.random.default_rng([seed, items, annotators])``,
    in chunks bounding memory."""
    rng = np.random.default_rng([seed, items, annotators])
    chunk = max(1, 2_000_000 // max(1, items * annotators * max(a.positions, 1)))
    rejected = 0
    for done in range(0, sims, chunk):
        rejected += int(SIMULATE[a.style](a, items, annotators, min(chunk, sims - done), rng).sum())
    return rejected / sims


def plan(a: Assumptions, items: tuple[int, ...] = ITEMS, annotators: tuple[int, ...] = ANNOTATORS,
         simulations: int = SIMULATIONS, seed: int = 0, cost_per_judgment: float | None = None) -> Plan:  # fmt: skip
    """Power of every design of the grid."""
    _check(a)
    designs = []
    for n in items:
        for k in annotators:
            power = simulate(a, n, k, simulations, seed)
            error = math.sqrt(power * (1 - power) / simulations)
            cost = None if cost_per_judgment is None else n * k * cost_per_judgment
            designs.append(Design(n, k, n * k, cost, power, error))
    return Plan(a, simulations, seed, designs)


def _check(a: Assumptions) -> None:
    if a.style == "pairwise" and not 0 < a.effect < 1:
        raise OptionError("--effect", f"a pairwise effect is wins minus losses over decided judgments, "
                          f"between 0 and 1 (0.2: 60% of decided judgments won), not {a.effect}")  # fmt: skip
    if a.style != "pairwise" and not a.effect > 0:
        raise OptionError("--effect", f"the effect must be above 0, not {a.effect}")
    if not 0 <= a.tie_rate < 1:
        raise OptionError("--tie-rate", f"a tie rate is between 0 and 1 (below 1), not {a.tie_rate}")
    for name in ("item_sd", "annotator_sd", "residual_sd"):
        if getattr(a, name) < 0:
            raise OptionError("--" + name.replace("_", "-"), f"a standard deviation cannot be negative, "
                              f"not {getattr(a, name)}")  # fmt: skip
    for name in ("alpha", "power"):
        if not 0 < getattr(a, name) < 1:
            raise OptionError("--" + name, f"between 0 and 1, not {getattr(a, name)}")


# ----------------------------------------------------------------------------- pilot


def from_pilot(definition: Definition, tidy: pd.DataFrame, where: str, base: Assumptions) -> Assumptions:
    """Effect, tie rate and variance components estimated from a pilot's judgments table (given values left as
    they are only where the pilot cannot say); ``where`` names the pilot's pulls in errors. The table is read from
    the pulls by :func:`annols.report.read_judgments`."""
    from annols.analysis import naming, pairwise, ranking, ratings

    spec = definition.spec
    if definition.style == "pairwise":
        tidy, aspects = naming.by_aspect_text(tidy, spec.aspects)
        frame = pairwise.judgments(tidy, aspects)
        return _pairwise_pilot(frame, base, where)
    if definition.style == "ratings":
        tidy, aspects = naming.by_aspect_text(tidy, spec.aspects)
        frame = ratings.judgments(tidy, aspects).rename(columns={"rating": "value"})
        return _paired_pilot(frame, "aspect", base, where)
    frame = ranking.judgments(tidy, [d.name for d in spec.dimensions], len(spec.positions))
    frame = frame.rename(columns={"rank": "value", "dimension": "aspect"})
    return _paired_pilot(frame, "aspect", base, where)


def _no_pilot(where: str, why: str) -> InputError:
    return InputError(where, "", "", f"the pilot cannot be planned from: {why}")


def _pairwise_pilot(frame: pd.DataFrame, base: Assumptions, where: str) -> Assumptions:
    if not len(frame):
        raise _no_pilot(where, "it has no preference judgments")
    tie_rate = float((frame["outcome"] == "tie").mean())
    decided = frame[frame["outcome"] != "tie"]
    effects = []
    for key, part in decided.groupby(["aspect", "system", "opponent"], observed=True):
        wins = (part["outcome"] == "win").to_numpy()
        if abs(2 * wins.mean() - 1) > 0:
            effects.append((abs(2 * wins.mean() - 1), key, part))
    if not effects:
        raise _no_pilot(where, "no comparison has more wins than losses or the reverse")
    effect, key, part = min(effects, key=lambda e: e[0])
    effect = min(effect, 0.99)
    # Variance components of winning on the probability scale, then on the logit scale at q.
    y = (part["outcome"] == "win").astype(float).to_numpy()
    table = pd.DataFrame({"y": y, "item": part["task_key"].astype(str).to_numpy(),
                          "annotator": part["annotator"].astype(str).to_numpy()})  # fmt: skip
    items_sd, annotators_sd = _components(table)
    q = (1 + effect) / 2
    scale = 1 / (q * (1 - q))
    notes = (f"effect: the smallest difference in the pilot ({key[1]} vs {key[2]}, {key[0]}), "
             f"tie rate over all {len(frame)} preference judgments",)  # fmt: skip
    return replace(base, effect=effect, tie_rate=min(tie_rate, 0.99), item_sd=items_sd * scale,
                   annotator_sd=annotators_sd * scale, source=where, notes=notes)  # fmt: skip


def _paired_pilot(frame: pd.DataFrame, group: str, base: Assumptions, where: str) -> Assumptions:
    """Ratings and ranking: per (item, annotator), B's value minus A's for each pair; the smallest non-zero mean."""
    found = []
    for aspect, part in frame.groupby(group, observed=True):
        wide = part.pivot_table(index=["task_key", "annotator"], columns="system", values="value", aggfunc="mean")
        for i, a in enumerate(sorted(wide.columns)):
            for b in sorted(wide.columns)[i + 1 :]:
                d = (wide[b] - wide[a]).dropna()
                if len(d) and abs(d.mean()) > 0:
                    found.append((abs(float(d.mean())), (aspect, a, b), d))
    if not found:
        raise _no_pilot(where, "no two systems were judged on the same items with different means")
    effect, key, d = min(found, key=lambda f: f[0])
    sign = 1.0 if d.mean() > 0 else -1.0
    table = pd.DataFrame({"y": sign * d.to_numpy(), "item": d.index.get_level_values(0).astype(str),
                          "annotator": d.index.get_level_values(1).astype(str)})  # fmt: skip
    item_sd, annotator_sd = _components(table)
    residual = (
        float(np.sqrt(max(np.var(table["y"], ddof=1) - item_sd**2 - annotator_sd**2, 1e-12)))
        if len(table) > 1
        else base.residual_sd
    )
    notes = (f"effect: the smallest difference in the pilot ({key[1]} vs {key[2]}, {key[0]})",)
    if base.style == "ranking":
        most = base.positions - 1
        return replace(base, effect=min(effect, most * 0.99), item_sd=item_sd, source=where, notes=notes)
    return replace(base, effect=effect, item_sd=item_sd, annotator_sd=annotator_sd, residual_sd=residual,
                   source=where, notes=notes)  # fmt: skip


def _components(table: pd.DataFrame) -> tuple[float, float]:
    """Item and annotator standard deviations of ``y``: REML MixedLM with crossed item and annotator variance
    components (one group holding every row); zero where the pilot cannot separate them."""
    import warnings

    import statsmodels.formula.api as smf  # type: ignore[import-untyped, unused-ignore]

    if table["item"].nunique() < 2 or len(table) < 4 or np.var(table["y"]) == 0:
        return 0.0, 0.0
    # Crossed effects in statsmodels: one group holding everything, items and annotators variance components.
    table = table.assign(whole=1)
    vc = {"item": "0 + C(item)"}
    if table["annotator"].nunique() > 1:
        vc["annotator"] = "0 + C(annotator)"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            fit = smf.mixedlm("y ~ 1", table, groups="whole", re_formula="0", vc_formula=vc).fit(reml=True)
        except (ValueError, np.linalg.LinAlgError):
            return 0.0, 0.0
    components = dict(zip(fit.model.exog_vc.names, np.asarray(fit.vcomp, dtype=float), strict=True))
    item = float(np.sqrt(max(components.get("item", 0.0), 0.0)))
    annotator = float(np.sqrt(max(components.get("annotator", 0.0), 0.0)))
    return item, annotator


def describe(a: Assumptions) -> list[str]:
    """Lines saying what was assumed."""
    lines = [f"Style {a.style}: effect {a.effect:.4g} ({UNITS[a.style]}), alpha {a.alpha} corrected for "
             f"{a.tests} test(s) (alpha / {a.tests}, Holm's first step), target power {a.power}."]  # fmt: skip
    if a.style == "pairwise":
        lines.append(f"Tie rate {a.tie_rate:.3g}; item sd {a.item_sd:.3g}, annotator sd {a.annotator_sd:.3g} "
                     "(logit scale).")  # fmt: skip
    elif a.style == "ratings":
        lines.append(f"Item sd {a.item_sd:.3g}, annotator sd {a.annotator_sd:.3g}, residual sd {a.residual_sd:.3g} "
                     "(of a rating difference).")  # fmt: skip
    else:
        lines.append(f"{a.positions} candidates; item sd {a.item_sd:.3g} (latent utilities, noise sd 1).")
    lines.append(f"From: {a.source}." + "".join(f" {n}." for n in a.notes))
    return lines


def summary(result: Plan, currency: str = "") -> list[str]:
    best = result.cheapest
    if best is None:
        return [f"No design of the grid reaches power {result.assumptions.power}: more items or a larger effect."]
    cost = f", cost {currency}{best.cost:,.2f}" if best.cost is not None else ""
    return [f"Cheapest design reaching power {result.assumptions.power}: {best.items} items x "
            f"{best.annotators} annotator(s) = {best.judgments} judgments{cost} "
            f"(power {best.power:.3f} ± {best.error:.3f})."]  # fmt: skip


def as_rows(result: Plan) -> list[list[Any]]:
    return [[d.items, d.annotators, d.judgments, "" if d.cost is None else f"{d.cost:,.2f}", f"{d.power:.3f}"]
            for d in result.designs]  # fmt: skip
