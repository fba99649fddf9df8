""":class:`annols.analysis.table.Column`: ``extend`` and ``repeat`` (how the reader adds an annotation's rows, a
column at a time) keep the codes, values and code width that ``append`` of each value one by one keeps."""

from __future__ import annotations

import random
from typing import Any

import pytest

from annols.analysis.table import Column


def _appended(values: list[Any]) -> Column:
    column = Column()
    for v in values:
        column.append(v)
    return column


def _state(column: Column) -> tuple[str, bytes, list[tuple[type, Any]], dict[Any, int]]:
    return column.codes.typecode, column.codes.tobytes(), [(type(v), v) for v in column.values], column.index


def _values(n: int, distinct: int, seed: int) -> list[Any]:
    rng = random.Random(seed)
    kinds = [lambda i: i, str, float, lambda i: None, lambda i: i == 1]  # 1, "1", 1.0, None and True stay apart
    return [kinds[rng.randrange(len(kinds))](rng.randrange(distinct)) for _ in range(n)]


@pytest.mark.parametrize(("n", "distinct"), [(50, 3), (2_000, 100), (5_000, 400), (200_000, 40_000)])
def test_extend_in_batches_keeps_what_append_keeps(n: int, distinct: int) -> None:
    values = _values(n, distinct, seed=n)
    rng = random.Random(1)
    column, at = Column(), 0
    while at < len(values):  # batches of every size, one value past the widths 127 and 32767 among them
        size = rng.choice([0, 1, 2, 17, 129, 5_000, 40_000])
        column.extend(values[at:at + size])
        at += size
    assert _state(column) == _state(_appended(values))


def test_extend_widens_the_codes_in_one_batch_as_append_does() -> None:
    for values in ([*range(127)], [*range(128)], [*range(40_000)], [*range(100), *range(300)]):
        column = Column()
        column.extend(values)
        assert _state(column) == _state(_appended(values))
    assert Column().code_array().size == 0


@pytest.mark.parametrize("before", [[], ["a"], list(range(127)), list(range(32_767))])
def test_repeat_keeps_what_appending_one_value_again_and_again_keeps(before: list[Any]) -> None:
    for value, times in (("a", 3), (5, 1), (None, 0), ("new", 2), (1.0, 4)):
        column = _appended(before)
        column.repeat(value, times)
        assert _state(column) == _state(_appended([*before, *[value] * times]))
