"""``annols plan``: how many items and annotators a study needs to tell two systems apart.

A seeded simulation of the style's main comparison, with the test and the correction the
report applies (:mod:`annols.analysis.inference.detectable`: the corrected level is alpha / m, m the
tests in the report's Holm family, Holm's first step), over a grid of designs: ``items``
items, each judged by ``annotators`` annotators (the same ``annotators`` people judge every
item, so an annotator's bias does not average out over items: Card et al. 2020).

- pairwise: each judgment is a tie with probability ``tie_rate``; otherwise the first system
  wins with probability expit(logit(q) + u_item + b_annotator), u ~ N(0, item_sd),
  b ~ N(0, annotator_sd) on the logit scale, q = (1 + effect) / 2 (``effect``: wins minus
  losses as a share of the decided judgments, the report's measure). Test: the report's exact
  sign test over items of items won against items lost (an item's net: its wins minus
  losses), items even set aside (:mod:`annols.analysis.inference.item_tests`). With no item or
  annotator variance its exact power is :func:`exact_pairwise_power`.
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

Power counts only rejections towards the better system. Where annotators vary
(``annotator_sd`` > 0) the same few annotators' taste adds up over items, so the items'
test answers for these annotators only: power is then that of the crossed test, items and
annotators both random (Clark's min F', :func:`annols.analysis.inference.item_tests.min_f_prime`;
with one annotator it cannot reject). Beside it each design has the false-positive rate of
the report's items' test at effect 0 on the same simulated studies; a design where it is
above the corrected level by more than three Monte Carlo errors is unsafe and never
recommended. Every design reads the first items and annotators of the same simulated
studies (common random numbers), so more items or annotators do not show less power by noise.

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
from scipy.stats import wilcoxon

from annols.analysis.inference import detectable, item_tests
from annols.definition import Definition
from annols.errors import InputError, OptionError

ITEMS = (25, 50, 100, 200, 400, 800)
ANNOTATORS = (1, 2, 3, 5)
MORE_ANNOTATORS = (10, 20, 40)  # where annotators vary: where the crossed test gets its power


def annotators_for(a: Any) -> tuple[int, ...]:
    """The grid's annotators per item: :data:`ANNOTATORS`, and :data:`MORE_ANNOTATORS` where annotators vary (the
    crossed test's power grows with annotators, not items)."""
    return ANNOTATORS + MORE_ANNOTATORS if a.annotator_sd > 0 else ANNOTATORS
SIMULATIONS = 500
STYLES = ("pairwise", "ratings", "ranking")
# Ratings: the item, annotator and residual sd of a rating difference as shares of the scale's range (highest code
# minus lowest), from a real study: SQuALITY's expert ratings (Wang et al. 2022; 100 items, 4 reviewers, 0-100),
# the medians over its 9 paired differences (3 pairs of systems x 3 properties), fitted as a pilot is
# (scripts/plan_defaults.py; tests/data/squality_ratings; docs/statistics.md). A scale's defaults are these shares
# times its range; the effect's default is REFERENCE_EFFECT of a range of REFERENCE_RANGE, scaled the same way.
STUDY = "SQuALITY expert ratings (Wang et al. 2022)"
STUDY_SHARES = {"item_sd": 0.135, "annotator_sd": 0.107, "residual_sd": 0.222}
REFERENCE_RANGE = 4.0  # a 1-5 scale
REFERENCE_EFFECT = 0.3
DEFAULTS: dict[str, dict[str, float]] = {
    "pairwise": {"effect": 0.2, "tie_rate": 0.2, "item_sd": 0.0, "annotator_sd": 0.0},
    "ratings": {"effect": REFERENCE_EFFECT, **{k: round(v * REFERENCE_RANGE, 4) for k, v in STUDY_SHARES.items()}},
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
    power: float  # rejections towards the better system only
    error: float  # Monte Carlo standard error of the power
    false_positives: float = 0.0  # the items' test's rejections at effect 0, either way
    unsafe: bool = False  # false positives above the corrected level by more than 3 Monte Carlo errors
    # The two claims a team may make (CLAIMS), each with its own test's power and false-positive rate:
    items_power: float = 0.0  # the items' test towards the better system: "new items, these annotators"
    items_false: float = 0.0  # its rejections at effect 0 where these annotators' mean bias is 0
    crossed_power: float = 0.0  # the crossed test (min F') towards the better system: "new items and annotators"
    crossed_false: float = 0.0  # its rejections at effect 0 under the same variances


@dataclass(frozen=True)
class Plan:
    assumptions: Assumptions
    simulations: int
    seed: int
    designs: list[Design] = field(default_factory=list)

    level: float = 0.05  # the corrected level of each test
    margin: float = 0.0  # 3 Monte Carlo errors of a false-positive rate at that level

    @property
    def cheapest(self) -> Design | None:
        """The safe design with the fewest judgments that reaches the target power (fewer annotators on a tie)."""
        ok = [d for d in self.designs if d.power >= self.assumptions.power and not d.unsafe]
        return min(ok, key=lambda d: (d.judgments, d.annotators)) if ok else None

    def cheapest_for(self, claim: str) -> Design | None:
        """The design with the fewest judgments whose test for ``claim`` (:data:`CLAIMS`) reaches the target power
        with its false positives within the corrected level plus 3 Monte Carlo errors."""
        power, false = ("items_power", "items_false") if claim == "items" else ("crossed_power", "crossed_false")
        ok = [d for d in self.designs
              if getattr(d, power) >= self.assumptions.power and getattr(d, false) <= self.level + self.margin]
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
    notes: tuple[str, ...] = ()
    if definition.style == "ratings":
        scale = scale_range(definition)
        factor = scale / REFERENCE_RANGE
        defaults = {k: v * factor for k, v in defaults.items()}
        notes = (f"sds by default: {STUDY}'s shares of the scale's range x {scale:g} (item "
                 f"{STUDY_SHARES['item_sd']}, annotator {STUDY_SHARES['annotator_sd']}, residual "
                 f"{STUDY_SHARES['residual_sd']}); effect by default {REFERENCE_EFFECT} per "
                 f"{REFERENCE_RANGE:g} points of range",)  # fmt: skip
    return Assumptions(style=definition.style, positions=positions, tests=tests, alpha=alpha, power=power,
                       notes=notes, **defaults)  # fmt: skip


def scale_range(definition: Definition) -> float:
    """A ratings scale's range: its highest code minus its lowest (a slider: max - min)."""
    spec = definition.spec
    if spec.slider is not None:
        return float(spec.slider.max - spec.slider.min)
    codes = [float(c.code) for c in spec.answers]
    return max(codes) - min(codes)


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
    """region[d]: the sign test on d decided items rejects when items won <= region[d] or >= d - region[d]."""
    return np.array([detectable.sign_test_region(d, alpha) for d in range(n_max + 1)])


def exact_pairwise_power(items: int, annotators: int, effect: float, tie_rate: float, alpha: float) -> float:
    """The items' sign test's exact directed power with independent judgments (no item or annotator variance)."""
    return detectable.items_exact_power(items, effect, tie_rate, annotators, alpha)


# Each simulated study is drawn once at the grid's largest size; a design reads its first items and annotators
# (common random numbers), so a larger design differs from a smaller one by its extra judgments only, not by
# noise, and the effect-0 studies are the same draws without the effect.


def _pairwise_draws(a: Assumptions, items: int, annotators: int, sims: int, rng: np.random.Generator) -> dict:
    return {"u": rng.normal(0, a.item_sd, (sims, items, 1)) if a.item_sd > 0 else np.zeros((sims, items, 1)),
            "b": rng.normal(0, a.annotator_sd, (sims, 1, annotators)) if a.annotator_sd > 0
            else np.zeros((sims, 1, annotators)), "draws": rng.random((sims, items, annotators))}  # fmt: skip


def _pairwise(a: Assumptions, d: dict, effect: float, n: int, k: int) -> np.ndarray:
    """Per judgment: 1 a win of the first system, -1 a loss, 0 a tie."""
    q = min(max((1 + effect) / 2, 1e-12), 1 - 1e-12)
    p = expit(logit(q) + d["u"][:, :n] + d["b"][:, :, :k])
    draws = d["draws"][:, :n, :k]
    # Among the decided, a win when the rescaled draw is below p: one uniform draw per judgment.
    rescaled = (draws - a.tie_rate) / (1 - a.tie_rate)
    return np.where(draws < a.tie_rate, 0, np.where(rescaled < p, 1, -1)).astype(float)


def _ratings_draws(a: Assumptions, items: int, annotators: int, sims: int, rng: np.random.Generator) -> dict:
    u = rng.normal(0, a.item_sd, (sims, items, 1)) if a.item_sd > 0 else 0.0
    b = rng.normal(0, a.annotator_sd, (sims, 1, annotators)) if a.annotator_sd > 0 else np.zeros((sims, 1, annotators))
    return {"noise": u + rng.normal(0, a.residual_sd, (sims, items, annotators)), "b": b}


def _ratings(a: Assumptions, d: dict, effect: float, n: int, k: int) -> np.ndarray:
    """Per judgment: the rating of B minus A."""
    return effect + d["noise"][:, :n, :k] + d["b"][:, :, :k]


def _these_annotators(a: Assumptions, d: dict, k: int) -> dict:
    """The draws with the first ``k`` annotators' biases centred: the null of "these annotators" (their mean bias
    0), against which the items' test's false positives count for that claim. Ranking has no annotator bias."""
    if "b" not in d:
        return d
    b = d["b"][:, :, :k]
    if a.style != "pairwise":
        return {**d, "b": b - b.mean(axis=2, keepdims=True)}
    # Pairwise biases act on the logit scale: shift them by the c that makes these annotators' mean chance of a
    # win 1/2 over items, E_u expit(u + b - c) ~ expit((b - c) / s) with s = sqrt(1 + pi item_sd^2 / 8) (the
    # probit approximation), found by bisection (the mean is monotone in c).
    spread = math.sqrt(1 + math.pi * a.item_sd**2 / 8)
    low, high = b.min(axis=2, keepdims=True), b.max(axis=2, keepdims=True)
    for _ in range(50):
        mid = (low + high) / 2
        above = expit((b - mid) / spread).mean(axis=2, keepdims=True) > 0.5
        low, high = np.where(above, mid, low), np.where(above, high, mid)
    return {**d, "b": b - (low + high) / 2}


def _ranks(gap: float, a: Assumptions, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """Ranks (1 best) of A and B, shape + (2,), among ``positions`` candidates; shape is (items, annotators)
    or (sims, items, annotators)."""
    sims, items, annotators = (1, *shape) if len(shape) == 2 else shape
    return _ranked(gap, _ranking_draws(a, sims, items, annotators, rng))[..., :2].reshape(*shape, 2)


def _ranking_draws(a: Assumptions, sims: int, items: int, annotators: int, rng: np.random.Generator) -> dict:
    w = rng.normal(0, a.item_sd, (sims, items, 1, a.positions)) if a.item_sd > 0 else 0.0
    return {"noise": w + rng.normal(0, 1, (sims, items, annotators, a.positions))}


def _ranked(gap: float, d: dict) -> np.ndarray:
    mu = np.zeros(d["noise"].shape[-1])
    mu[0], mu[1] = gap / 2, -gap / 2
    return (-(mu + d["noise"])).argsort(axis=-1).argsort(axis=-1) + 1


@cache
def ranking_gap(effect: float, positions: int, item_sd: float, seed: int = 0) -> float:
    """The latent gap between A and B whose expected mean-rank difference (B minus A) is ``effect``."""
    a = Assumptions("ranking", effect, item_sd=item_sd, positions=positions)
    draws = _ranking_draws(a, 20000, 1, 1, np.random.default_rng(seed))

    def rank_difference(gap: float) -> float:
        r = _ranked(gap, draws)
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


def _ranking(a: Assumptions, d: dict, effect: float, n: int, k: int) -> np.ndarray:
    """Per judgment: the rank of B minus the rank of A."""
    gap = ranking_gap(effect, a.positions, a.item_sd) if effect else 0.0
    ranks = _ranked(gap, {"noise": d["noise"][:, :n, :k]})
    return (ranks[..., 1] - ranks[..., 0]).astype(float)


DRAWS = {"pairwise": lambda a, n, k, s, rng: _pairwise_draws(a, n, k, s, rng),
         "ratings": lambda a, n, k, s, rng: _ratings_draws(a, n, k, s, rng),
         "ranking": lambda a, n, k, s, rng: _ranking_draws(a, s, n, k, rng)}  # fmt: skip
OUTCOMES = {"pairwise": _pairwise, "ratings": _ratings, "ranking": _ranking}


def items_test(a: Assumptions, y: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
    """The report's test over items of ``y`` (sims x items x annotators): (rejects, rejects towards the first
    system). Pairwise: the sign test of items won against items lost; else Wilcoxon of the per-item means."""
    if a.style == "pairwise":
        net = y.sum(axis=2)
        won, lost = (net > 0).sum(axis=1), (net < 0).sum(axis=1)
        region = _regions(y.shape[1], level)[won + lost]
        up, down = (region >= 0) & (lost <= region), (region >= 0) & (won <= region)
        return up | down, up
    means = np.round(y.mean(axis=2), 9)
    nonzero = (means != 0).any(axis=1)
    rejects = np.zeros(len(means), dtype=bool)
    if nonzero.any():
        rejects[nonzero] = np.atleast_1d(wilcoxon(means[nonzero], axis=1).pvalue) <= level
    return rejects, rejects & (means.mean(axis=1) > 0)


def crossed_test(y: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
    """Items and annotators both random (:func:`annols.analysis.inference.item_tests.min_f_prime`)."""
    p, mean = item_tests.min_f_prime(y)
    rejects = p <= level  # nan (one annotator): never
    return rejects, rejects & (mean > 0)


def plan(a: Assumptions, items: tuple[int, ...] = ITEMS, annotators: tuple[int, ...] = ANNOTATORS,
         simulations: int = SIMULATIONS, seed: int = 0, cost_per_judgment: float | None = None) -> Plan:  # fmt: skip
    """Power and false-positive rate of every design of the grid, from ``numpy.random.default_rng(seed)``.

    Power: the share of simulated studies at the effect whose test rejects towards the better system (the
    items' test without annotator variance, the crossed test with it). False positives: the share of the same
    studies without the effect whose items' test (the report's) rejects either way."""
    _check(a)
    rng = np.random.default_rng(seed)
    n_max, k_max = max(items), max(annotators)
    level = a.alpha / a.tests
    crossed = a.annotator_sd > 0
    chunk = max(1, 2_000_000 // max(1, n_max * k_max * max(a.positions, 1)))
    counts = {(n, k): np.zeros(5, dtype=int) for n in items for k in annotators}  # see below
    for done in range(0, simulations, chunk):
        draws = DRAWS[a.style](a, n_max, k_max, min(chunk, simulations - done), rng)
        for n, k in counts:
            y = OUTCOMES[a.style](a, draws, a.effect, n, k)
            null = OUTCOMES[a.style](a, draws, 0.0, n, k)
            these = OUTCOMES[a.style](a, _these_annotators(a, draws, k), 0.0, n, k) if crossed else null
            items_up = items_test(a, y, level)[1]
            crossed_up = crossed_test(y, level)[1] if k > 1 else np.zeros(len(y), dtype=bool)
            crossed_null = crossed_test(null, level)[0] if k > 1 else np.zeros(len(y), dtype=bool)
            # items' power, crossed power, items' test at effect 0 (annotators as drawn, and centred), crossed's
            counts[n, k] += [items_up.sum(), crossed_up.sum(), items_test(a, null, level)[0].sum(),
                             items_test(a, these, level)[0].sum(), crossed_null.sum()]  # fmt: skip
    margin = 3 * math.sqrt(level * (1 - level) / simulations)
    designs = []
    for (n, k), c in counts.items():
        items_power, crossed_power, false, items_false, crossed_false = (float(v) / simulations for v in c)
        share = crossed_power if crossed else items_power
        cost = None if cost_per_judgment is None else n * k * cost_per_judgment
        designs.append(Design(n, k, n * k, cost, share, math.sqrt(share * (1 - share) / simulations), false,
                              false > level + margin, items_power, items_false, crossed_power,
                              crossed_false))  # fmt: skip
    return Plan(a, simulations, seed, designs, level, margin)


def simulate(a: Assumptions, items: int, annotators: int, sims: int, seed: int) -> float:
    """The power of one design alone (:func:`plan` of a one-design grid)."""
    return plan(a, (items,), (annotators,), sims, seed).designs[0].power


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
    the pulls by :func:`annols.study.table.read_judgments`."""
    from annols.analysis import naming
    from annols.analysis.by_style import pairwise, ranking, ratings

    spec = definition.spec
    if definition.style == "pairwise":
        aspects = naming.aspect_names(spec.aspects)
        frame = pairwise.judgments(tidy, aspects)
        return _pairwise_pilot(frame, base, where)
    if definition.style == "ratings":
        aspects = naming.aspect_names(spec.aspects)
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
    item_sd, annotator_sd, residual = fitted_components(table)
    if residual is None:  # no fit: what the total variance leaves
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
    """Item and annotator standard deviations of ``y`` (:func:`fitted_components`)."""
    item, annotator, _ = fitted_components(table)
    return item, annotator


def fitted_components(table: pd.DataFrame) -> tuple[float, float, float | None]:
    """Item, annotator and residual standard deviations of ``y``: REML MixedLM with crossed item and annotator
    variance components (one group holding every row); zero (and no residual) where the pilot cannot separate
    them."""
    import warnings

    import statsmodels.formula.api as smf  # type: ignore[import-untyped, unused-ignore]

    if table["item"].nunique() < 2 or len(table) < 4 or np.var(table["y"]) == 0:
        return 0.0, 0.0, None
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
            return 0.0, 0.0, None
    components = dict(zip(fit.model.exog_vc.names, np.asarray(fit.vcomp, dtype=float), strict=True))
    item = float(np.sqrt(max(components.get("item", 0.0), 0.0)))
    annotator = float(np.sqrt(max(components.get("annotator", 0.0), 0.0)))
    residual = float(np.sqrt(fit.scale)) if np.isfinite(fit.scale) and fit.scale > 0 else None
    return item, annotator, residual


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
    test = ("the crossed test, items and annotators both random (min F'), since annotators vary"
            if a.annotator_sd > 0 else "the report's test over items")  # fmt: skip
    lines.append(f"Power: rejections towards the better system by {test}. False positives: the report's test "
                 "over items at effect 0 under the same variances; unsafe where they exceed the corrected level "
                 "by more than 3 Monte Carlo errors (too few annotators for their variance): never recommended.")
    return lines


CLAIMS = {"items": "new items, these annotators (the items' test)",
          "crossed": "new items and new annotators (the crossed test, min F')"}  # fmt: skip


def claim(name: str, annotators: int | None = None) -> str:
    """A claim (:data:`CLAIMS`) in plan's words, the report's headline's too; ``annotators``: how many the crossed
    test had."""
    words = CLAIMS[name]
    return words if annotators is None else f"{words[:-1]}, {annotators} annotators)"


def claim_alone(name: str) -> str:
    """The claim's words without its test: where the test was not run ("new items and new annotators")."""
    return CLAIMS[name].split(" (")[0]


def claims(result: Plan, currency: str = "") -> list[str]:
    """One line per claim: the cheapest design for it, or what the grid reached and what more it would take."""
    lines = []
    target = result.assumptions.power
    for claim, words in CLAIMS.items():
        best = result.cheapest_for(claim)
        if best is not None:
            power, false = ((best.items_power, best.items_false) if claim == "items" else
                            (best.crossed_power, best.crossed_false))  # fmt: skip
            cost = f", cost {currency}{best.cost:,.2f}" if best.cost is not None else ""
            lines.append(f"For {words}: {best.items} items x {best.annotators} annotator(s) = {best.judgments} "
                         f"judgments{cost} (power {power:.3f}, false positives {false:.3f}).")  # fmt: skip
            continue
        most = max(d.annotators for d in result.designs)
        top = max((d for d in result.designs if d.annotators == most),
                  key=lambda d: d.items_power if claim == "items" else d.crossed_power)  # fmt: skip
        reached = top.items_power if claim == "items" else top.crossed_power
        if claim == "crossed":
            lines.append(f"For {words}: no design of the grid reaches power {target}; the most, {most} annotators x "
                         f"{top.items} items, reaches {reached:.3f}. Its power grows with annotators more than with "
                         f"items: try --annotators {most},{2 * most},{4 * most} (or a larger effect).")  # fmt: skip
        else:
            lines.append(f"For {words}: no design of the grid reaches power {target} (at most {reached:.3f}): more "
                         "items or a larger effect.")  # fmt: skip
    return lines


def summary(result: Plan, currency: str = "") -> list[str]:
    best = result.cheapest
    if best is None:
        return [f"No safe design of the grid reaches power {result.assumptions.power}: more items, more annotators "
                "or a larger effect."]
    cost = f", cost {currency}{best.cost:,.2f}" if best.cost is not None else ""
    return [f"Cheapest design reaching power {result.assumptions.power}: {best.items} items x "
            f"{best.annotators} annotator(s) = {best.judgments} judgments{cost} "
            f"(power {best.power:.3f} ± {best.error:.3f})."]  # fmt: skip


HEADER = ("items\tannotators\tjudgments\tcost\tpower\tfalse positives\tsafe\tpower (these annotators)\t"
          "false positives (these annotators)\tpower (new annotators)\tfalse positives (new annotators)")


def as_rows(result: Plan) -> list[list[Any]]:
    return [[d.items, d.annotators, d.judgments, "" if d.cost is None else f"{d.cost:,.2f}", f"{d.power:.3f}",
             f"{d.false_positives:.3f}", "unsafe" if d.unsafe else "safe", f"{d.items_power:.3f}",
             f"{d.items_false:.3f}", f"{d.crossed_power:.3f}", f"{d.crossed_false:.3f}"]
            for d in result.designs]  # fmt: skip
