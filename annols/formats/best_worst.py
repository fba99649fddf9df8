"""The input of a best-worst definition: a pool of candidates, one record each, made into tuples.

JSONL or CSV, one record per candidate: the definition's context fields (if any), the
candidate's text in the field the ``[candidate]`` pane names, and ``id`` naming the
candidate (an item, or the system that wrote it; its row in the report). Records with
the same context form one pool (without context panes the whole input is one pool);
:func:`annols.definition.design.tuples` makes each pool's tuples (each candidate in the same number
of tuples, pairs co-occurring as evenly as it can), from a seed of the pool's content, so
the same input always gives the same tasks and keys. A task's data holds the context and
``{candidate}_1`` .. ``{candidate}_N``; its systems are the candidates' ids, shuffled per
task at push from ``--seed`` like every blinded style. Results are the generic format's
(``<name>.jsonl`` with each annotation's judgments, unblinded); ``validate`` flags a
tuple whose best and worst are the same candidate, and answers decode cannot read.

A study made elsewhere brings its own tuples: a file whose records hold the tuple fields
``{candidate}_1`` .. ``{candidate}_N`` (and ``systems``, the candidates' ids in that order)
is read as given, in the generic layout, with the judgments its records hold (an
``annotator`` and ``{aspect}_best`` / ``{aspect}_worst`` letters of the record's order).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from annols.definition import Definition, design
from annols.errors import InputError
from annols.formats import SourcePrediction, SourceTask, Violation, content_key
from annols.formats.generic import FORMAT as GENERIC
from annols.formats.generic import iter_records, unread_answers
from annols.formats.pools import read_pools
from annols.styles.answers import ExportedAnnotation, ExportedTask


class BestWorstFormat:
    name = "best-worst"
    describe = "JSONL or CSV, one record per candidate: its context fields, its text and its 'id'"

    moves_judgments = GENERIC.moves_judgments  # a tuple given in the input is shuffled like the generic format's
    annotations_needed = f"tuples as given (the fields of each tuple and 'systems') and {GENERIC.annotations_needed}"

    def read(self, paths: Sequence[Path], definition: Definition) -> Iterator[SourceTask]:
        pools = []
        for path in paths:
            records = iter_records(path)
            first = next(records, None)
            records.close()
            if first is not None and definition.spec.field(0) in first[1]:  # tuples made elsewhere, as given
                yield from GENERIC.read([path], definition)
            else:
                pools.append(path)
        yield from self._tuples(pools, definition)

    def _tuples(self, paths: Sequence[Path], definition: Definition) -> Iterator[SourceTask]:
        """The tasks of pools of candidates: tuples annols makes."""
        spec = definition.spec
        context = [p.name for p in spec.context]
        text_field = spec.candidate.name
        for pool in read_pools(paths, context, text_field, "id", needs="every candidate needs an id",
                               twice="is already a candidate of this pool"):  # fmt: skip
            if len(pool) < spec.tuple_size:
                raise InputError(
                    pool[0].path,
                    pool[0].location,
                    "id",
                    f"this pool has {len(pool)} candidates, fewer than tuple_size {spec.tuple_size}",
                )
            first = {name: str(pool[0].record[name]) for name in context}
            pool_key = content_key(definition.name, {"context": first, "pool": sorted(c.name for c in pool)})
            tuples = design.tuples(len(pool), spec.tuple_size, spec.appearances, seed=pool_key)
            for number, members in enumerate(tuples):
                data: dict[str, Any] = dict(first)
                for position, index in enumerate(members):
                    data[spec.field(position)] = str(pool[index].record[text_field])
                systems = tuple(pool[index].name for index in members)
                yield SourceTask(
                    key=content_key(definition.name, {"pool": pool_key, "tuple": number, "ids": list(systems)}),
                    data=data,
                    location=f"{pool[members[0]].path}: {pool[members[0]].location} (tuple {number + 1} of its pool)",
                    systems=systems,
                )

    def read_predictions(self, paths: Sequence[Path], definition: Definition) -> Iterator[tuple[str, SourcePrediction]]:
        raise InputError(paths[0] if paths else "", "", "", "best-worst tasks take no pre-annotations")

    def write_results(self, tasks: Iterable[ExportedTask], definition: Definition, out_dir: Path) -> list[Path]:
        return GENERIC.write_results(tasks, definition, out_dir)

    def check(self, task: ExportedTask, annotation: ExportedAnnotation, definition: Definition) -> list[Violation]:
        """A best and a worst that are the same candidate (Label Studio cannot refuse it), and answers decode
        cannot read (:func:`annols.formats.generic.unread_answers`: two bests, a letter not in the tuple)."""
        from annols.styles import decode
        from annols.styles.judgments import BestWorst  # the styles import this package: import on use

        out = unread_answers(task, annotation, definition)
        for j in decode(definition, task, annotation):
            if isinstance(j, BestWorst) and j.best == j.worst:
                out.append(Violation(task.key, annotation.annotator, "best-differs-from-worst",
                                     f"{j.aspect}: {j.systems[j.best]!r} chosen as both best and worst"))  # fmt: skip
        return out


FORMAT = BestWorstFormat()
