"""Tuple designs: which candidates of a pool are shown together in one task.

Best-worst scaling's tuples (:mod:`annols.formats.best_worst`: the candidates of a pool)
and ratings' groups (:mod:`annols.formats.groups`: the system outputs of an item, a few
per task) are both such designs.

:func:`tuples` makes ``ceil(k * appearances / n)`` tuples of ``n`` distinct candidates
out of a pool of ``k`` (a pool of exactly ``n`` is one tuple), greedily, one tuple at a
time: it takes the candidates that are in the fewest tuples so far, so every candidate
is in ``appearances`` tuples (one more for some when ``k * appearances`` is not a multiple
of ``n``), and among those it adds, one by one, the candidate that has met the ones
already taken least often, so pairs co-occur as evenly as it can (Kiritchenko & Mohammad
2016 ask the same of their tuples: each item in the same number of tuples, no pair
repeated more than needed). Ties are broken by a random order drawn from ``seed``, so the
same seed and pool give the same tuples on every run and machine.

A study's designs are drawn with its secret as well (:func:`drawn_with`, set by push for
the inputs it reads): from the content alone anyone could make the same tuples (``annols
tasks``), and an annotator who knows which systems share which tasks names every position
by the texts that recur. Without a secret (``annols tasks`` alone, studies pushed before)
the seed is the content's.

No maintained sampler fits: ``bwsample`` (PyPI) draws random sets without equal
appearances. :func:`balance` measures a design; tests check both properties.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import itertools
import math
import random
from collections.abc import Callable, Iterator, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TypeVar

import numpy as np

T = TypeVar("T")
_SECRET: ContextVar[bytes | None] = ContextVar("annols_design_secret", default=None)


@contextlib.contextmanager
def drawn_with(secret: bytes | None) -> Iterator[None]:
    """Within: :func:`tuples` draws with ``secret`` (None: from its seed alone, as before)."""
    token = _SECRET.set(secret)
    try:
        yield
    finally:
        _SECRET.reset(token)


def iterate_with(secret: bytes | None, make: Callable[[], Iterator[T]]) -> Iterator[T]:
    """The items of ``make()``, each made with :func:`drawn_with` ``secret`` (a format's reader makes its
    designs lazily, between the items it yields: the secret is set for each step, never left set)."""
    with drawn_with(secret):
        items = make()
    while True:
        with drawn_with(secret):
            try:
                item = next(items)
            except StopIteration:
                return
        yield item


def _generator(seed: str | int) -> random.Random:
    label = f"best-worst-design:{seed}"
    secret = _SECRET.get()
    if secret is None:
        return random.Random(label)
    return random.Random(hmac.new(secret, label.encode("utf-8"), hashlib.sha256).digest())


def tuple_count(k: int, n: int, appearances: int) -> int:
    """How many tuples a pool of ``k`` candidates gets."""
    if k == n:
        return 1
    return math.ceil(k * appearances / n)


def tuples(k: int, n: int, appearances: int, seed: str | int, met: np.ndarray | None = None) -> list[tuple[int, ...]]:
    """Tuples of ``n`` distinct indexes into a pool of ``k`` (each tuple in increasing order).

    ``met`` (k x k, symmetric, left as it is) says how often each pair has met already, in
    other pools of the same candidates: the tuples then even out the pairs' totals instead.
    """
    if k < n:
        raise ValueError(f"a pool of {k} candidates cannot fill a tuple of {n}")
    # The name stays: it seeds every design, and a pushed design's task keys name its tuples.
    rng = _generator(seed)
    tiebreaks = np.random.default_rng(rng.getrandbits(64))
    count = tuple_count(k, n, appearances)
    used = np.zeros(k, dtype=np.int64)
    met = np.zeros((k, k), dtype=np.int64) if met is None else np.array(met, dtype=np.int64)
    design: list[list[int]] = []
    for _ in range(count):
        rank = tiebreaks.permutation(k)  # a random tie-break
        # The least used candidates: every one of them must be taken before any more used one.
        by_use = np.lexsort((rank, used))
        threshold = used[by_use[n - 1]]
        chosen = [int(c) for c in by_use[used[by_use] < threshold]]
        may = by_use[used[by_use] == threshold][:WIDTH]
        while len(chosen) < n:
            seen = met[np.ix_(may, chosen)] if chosen else np.zeros((len(may), 1), dtype=np.int64)
            pick = int(np.lexsort((rank[may], seen.max(axis=1), seen.sum(axis=1)))[0])
            chosen.append(int(may[pick]))
            may = np.delete(may, pick)
        _meet(met, chosen, 1)
        used[chosen] += 1
        design.append(chosen)
    _improve(design, met, rng, rounds=min(max(SWAPS * count, 20_000), 200_000))
    return [tuple(sorted(t)) for t in design]


WIDTH = 64  # candidates weighed for each place of a tuple (the least used, in random order)
SWAPS = 30  # swaps tried per tuple after the greedy pass


def _meet(met: np.ndarray, members: Sequence[int], by: int) -> None:
    for a, b in itertools.combinations(members, 2):
        met[a, b] += by
        met[b, a] += by


def _improve(design: list[list[int]], met: np.ndarray, rng: random.Random, rounds: int) -> None:
    """Swap candidates between two tuples, annealing on the sum of squared pair counts.

    A swap keeps every candidate's number of tuples; a lower sum of squares with the same
    total is a more even spread of co-occurrences. A swap that lowers it (or keeps it) is
    always taken, one that raises it with a probability falling over the rounds (simulated
    annealing, so the search leaves local minima); the best design seen is kept.
    """
    if len(design) < 2:
        return
    cost = int((met * met).sum()) // 2
    best_cost, best = cost, [list(t) for t in design]
    for step in range(rounds):
        t1, t2 = rng.randrange(len(design)), rng.randrange(len(design))
        if t1 == t2:
            continue
        a, b = design[t1], design[t2]
        x, y = rng.choice(a), rng.choice(b)
        if x == y or y in a or x in b:
            continue
        rest_a = [o for o in a if o != x]
        rest_b = [o for o in b if o != y]
        # Pair counts change by -1 for (x, rest_a), (y, rest_b) and +1 for (y, rest_a), (x, rest_b);
        # a member of both tuples keeps its pairs with x and y (one -1, one +1 each).
        change: dict[tuple[int, int], int] = {}
        for u, others, by in ((x, rest_a, -1), (y, rest_b, -1), (y, rest_a, 1), (x, rest_b, 1)):
            for o in others:
                pair = (min(u, o), max(u, o))
                change[pair] = change.get(pair, 0) + by
        delta = sum(2 * by * int(met[p]) + by * by for p, by in change.items() if by)
        temperature = 0.6 * (1 - step / rounds) + 1e-3
        if delta > 0 and rng.random() >= math.exp(-delta / temperature):
            continue
        _meet(met, a, -1)
        _meet(met, b, -1)
        a[a.index(x)] = y
        b[b.index(y)] = x
        _meet(met, a, 1)
        _meet(met, b, 1)
        cost += delta
        if cost < best_cost:
            best_cost, best = cost, [list(t) for t in design]
    design[:] = best


@dataclass(frozen=True)
class Balance:
    """How even a design is: appearances per candidate and co-occurrences per pair (min, max)."""

    appearances: tuple[int, int]
    pairs: tuple[int, int]


def balance(k: int, design: Sequence[Sequence[int]]) -> Balance:
    used = [0] * k
    met: dict[tuple[int, int], int] = dict.fromkeys(itertools.combinations(range(k), 2), 0)
    for t in design:
        for c in t:
            used[c] += 1
        for pair in itertools.combinations(sorted(t), 2):
            met[pair] += 1
    pairs = list(met.values()) or [0]
    return Balance((min(used), max(used)), (min(pairs), max(pairs)))
