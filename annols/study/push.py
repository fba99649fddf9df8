"""From a protocol's input files to tasks in a Label Studio project, safely and fast.

A push reads its inputs streaming. The first pass checks every record (any input error
stops the push before anything is sent) and collects the task keys; the tasks the
project does not have yet are then imported in batches of one request each. Every task
carries a stable key in ``meta``, so a re-run adds nothing twice, also after a crash
mid-push or a batch whose answer was lost: the keys already on the server are listed
first and skipped. The key in ``meta`` is an HMAC of the task's key under the study's
secret, which the manifest keeps (:class:`annols.study.manifest.Keys`): a push reads it
from there, and refuses a project made before whose manifest it does not have.

Speed: the server, not annols, should set the pace (see docs/benchmarks.md).

- Plain tasks are built and serialised to JSON during the first pass, into a temporary
  spool file, so the server starts as soon as the input is checked and never waits for
  annols; tasks with judgments or predictions are built in a second pass over the inputs
  (they need user ids and predictions read after the first pass).
- Requests are few and large (up to ``--batch-size`` tasks and about 64 MB; the server
  spends about 0.2 s on each request beyond its tasks), posted by a background thread
  while the next batch is gathered. Each request body is streamed: spooled tasks are read
  from the spool as they are sent, built ones are held as bytes (one batch in flight, one
  being gathered), never joined into one string.
- Listing the keys of a large project is slow on the server (the Data Manager API loads
  whole tasks, about 3,000 a second), so a re-push first tries the local manifest: when it
  names a task id for every input key and the server confirms that every one of those ids
  is still in the project (a count per run of consecutive ids, one cheap request each),
  nothing needs listing or building. Anything else falls back to the full listing.
- Attention checks (``--attention N``) are counted per project, not per push: a push makes
  N from its input (the same ones on a re-run) and sends only as many as the project lacks.
  The checks already there are the manifest's (each marked with its role, and confirmed
  on the server with the push's keys) or, when the project is listed anyway, those whose
  key is that of a check made from another listed task (:func:`annols.study.attention.key_for`).
- Reading the input is skipped too when its bytes are those of an earlier push that
  checked every record (a digest of the input files, the definition and the annols
  version, kept beside the manifest in ``<project>.scan.json`` with the keys that push
  found) and the manifest is confirmed: then nothing is sent, so the guarantee that input
  is checked before anything is sent still holds.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import json
import os
import re
import tempfile
import threading
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, TypeVar

from annols import __version__, files, jsontext
from annols.definition import Definition, blinding, fields
from annols.errors import AnnolsError, InputError, ServerError, TransientServerError, WriteError
from annols.formats import ANNOTATOR_DOMAIN, IDENTITY, SourcePrediction, SourceTask, format_for
from annols.labelstudio.client import FilePart, LabelStudioClient, Project
from annols.protocols import config
from annols.study import roles
from annols.study.attention import key_for
from annols.study.gold import with_roles
from annols.study.judges import reframe
from annols.study.manifest import (
    Keys,
    Shown,
    config_digest,
    data_digest,
    keys_of,
    manifest_path,
    meta_digest,
    read_header,
    read_manifest_tasks,
    rows_by_key,
    write_manifest,
)

DEFAULT_BATCH_SIZE = 20000
# A request carries at most --batch-size tasks and about this many bytes: few requests (the
# server spends ~0.2 s on each beyond its tasks) and bounded memory (tasks built in a second
# pass are held in memory: one batch in flight, one being gathered).
MAX_REQUEST_BYTES = 64 * 1024 * 1024
_EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+")
T = TypeVar("T")


@dataclass(frozen=True)
class PushOptions:
    title: str
    overlap: int | None = None
    batch_size: int = DEFAULT_BATCH_SIZE
    seed: int = 0
    with_annotations: bool = False
    predictions: tuple[Path, ...] = ()
    manifest_dir: Path = Path(".annols")
    gold: tuple[Path, ...] = ()  # gold items (annols.study.gold), mixed in unseen
    attention: int = 0  # attention checks (annols.study.attention), mixed in unseen
    change_overlap: bool = False  # a reused project's overlap is changed only when asked
    overlap_from: str = "--overlap"  # where ``overlap`` came from, for messages
    # The study items to send: a round (annols next-round) or a hybrid study's human subset; None: all.
    only: frozenset[str] | None = None
    hybrid: dict[str, Any] | None = None  # its draw, recorded in the manifest's header (annols.study.hybrid)
    # A study without a manifest here gets this secret rather than a new one: isolated mode pushes one
    # study to every instance, whose tasks must carry the same shown order everywhere (annols.study.isolate).
    secret: bytes | None = None
    # Records whose shown texts are identical share one task, credited to every system that produced them
    # (single-candidate styles only, see SHARING_STYLES); recorded in the manifest at the first push.
    share_identical: bool = False


# The styles whose tasks show one candidate, where a shared task is one output judged once for several systems.
SHARING_STYLES = ("ratings", "spans", "sentences")


@dataclass
class Scan:
    """What the first pass found: every key once, and the original annotators."""

    keys: list[str] = field(default_factory=list)
    duplicates: int = 0
    annotators: set[str] = field(default_factory=set)
    annotations: int = 0
    warnings: list[str] = field(default_factory=list)  # what the readers tolerated, one per file and line
    spooled: list[tuple[str, tuple[str, ...], int]] = field(default_factory=list)  # key, systems, bytes in the spool
    attention: list[str] = field(default_factory=list)  # the keys of the attention checks made, in queue order
    shown: dict[str, Shown] = field(default_factory=dict)  # key -> order, role, meta digest (spooled tasks)
    # --share-identical: key -> the systems of each record that produced the task's texts, in input order
    shares: dict[str, list[tuple[str, ...]]] = field(default_factory=dict)

    @property
    def sharing(self) -> tuple[int, int]:
        """(outputs, tasks): how many records' outputs share how many tasks (tasks of two or more systems)."""
        shared = [len(s) for s in self.shares.values() if len(s) > 1]
        return sum(shared), len(shared)

    def shown_with_shares(self, shown: dict[str, Shown] | None = None) -> dict[str, Shown]:
        """``shown`` (by default the scan's own), each shared task's row with the systems of every record that
        produced its texts."""
        rows = self.shown if shown is None else shown
        return {k: v._replace(shares=tuple(self.shares[k])) if len(self.shares.get(k, ())) > 1 else v
                for k, v in rows.items()}  # fmt: skip


@dataclass(frozen=True)
class PushReport:
    project: Project
    created: int
    present: int
    total: int
    duplicates: int
    annotations: int
    predictions: int
    manifest: Path
    project_created: bool
    warnings: tuple[str, ...] = ()  # what the readers tolerated in the inputs, one per file and line
    attention: int = 0  # attention checks in the project after the push
    shared: tuple[int, int] = (0, 0)  # --share-identical: (outputs, tasks) of the tasks shared by several systems


def annotator_email(annotator: str) -> str:
    """The Label Studio user standing for an original annotator of an imported study.

    An annotator already named by an e-mail address (a sheet's ``ann@study.org``) keeps it,
    so the result files name them as the input did.
    """
    if _EMAIL.fullmatch(annotator):
        return annotator
    local = re.sub(r"[^A-Za-z0-9._-]+", "-", annotator).strip("-.") or "annotator"
    return f"{local}@{ANNOTATOR_DOMAIN}"


def study_keys(manifest_dir: Path, title: str) -> Keys:
    """The keys of the study ``title``: its manifest's, or new ones for a study not pushed yet (give their
    ``secret`` to the push, :attr:`PushOptions.secret`, so that it designs as whoever read the inputs before)."""
    return keys_of(manifest_path(manifest_dir, title)) or Keys.new()


def scan(
    definition: Definition,
    inputs: Sequence[Path],
    spool: IO[bytes] | None = None,
    seed: int = 0,
    gold: Sequence[Path] = (),
    attention: int = 0,
    only: Collection[str] | None = None,
    keys: Keys | None = None,
    share: bool = False,
) -> Scan:
    """Read every input once, checking it; raises InputError at the first bad record.

    With a ``spool``, each task (first occurrence of its key, without judgments or
    predictions) is also built and written to it as the JSON a push sends, so that a
    push needs no second pass over the inputs. ``only``: the study items read (the others are skipped).
    ``share``: records of the same shown texts share one task (:func:`sharing`), their systems in ``shares``.
    """
    result = Scan()
    seen: set[str] = set()
    pending: list[bytes] = []  # spooled JSON not yet written: one write a megabyte, not one a task
    pending_size = 0
    study = 0
    for task, role in sharing(with_roles(definition, inputs, gold, seed, attention, only, keys), share):
        _check_task(definition, task)
        result.warnings.extend(str(w) for w in task.warnings)
        if role in (None, roles.STUDY):
            study += 1
        for a in task.annotations:  # a repeated record's too: they are added to its first task
            result.annotators.add(a.annotator)
            result.annotations += 1
        another = False  # a record of another system's identical output, in a shared task
        if share and role in (None, roles.STUDY):
            outputs = result.shares.setdefault(task.key, [])
            another = task.systems not in outputs
            if another:
                outputs.append(task.systems)
        if task.key in seen:
            if not another:
                result.duplicates += 1
            continue
        seen.add(task.key)
        result.keys.append(task.key)
        if role == roles.ATTENTION:
            result.attention.append(task.key)
        if spool is not None:
            systems, payload = _payload(definition, task, seed=seed, role=role, shown=result.shown, keys=keys)
            data = jsontext.dumps(payload, ensure_ascii=False).encode("utf-8")
            pending.append(data)
            pending_size += len(data)
            if pending_size >= 1 << 20:
                spool.write(b"".join(pending))
                pending, pending_size = [], 0
            result.spooled.append((task.key, systems, len(data)))
    if not study:  # an empty input is a mistake, not a study of none: refused before anything is written or sent
        # Named together: a format may read its files as one input (a sheet and its mapping).
        raise InputError(", ".join(map(str, inputs)), "", "", "holds no records (an empty file or folder, or a "
                         "header without rows): nothing was written or sent")  # fmt: skip
    if spool is not None and pending:
        spool.write(b"".join(pending))
    return result


def sharing(tasks: Iterable[tuple[SourceTask, str | None]], share: bool) -> Iterator[tuple[SourceTask, str | None]]:
    """The tasks, with ``share`` each study task under the key of its shown texts alone (``texts_key``):
    the records of identical outputs are then one task, which push keeps once."""
    for task, role in tasks:
        if share and task.texts_key and role in (None, roles.STUDY) and task.key != task.texts_key:
            task = dataclasses.replace(task, key=task.texts_key)
        yield task, role


def check_sharing(definition: Definition, share: bool, with_annotations: bool = False) -> None:
    """``--share-identical`` only where a task shows one candidate, and never with judgments already made of each
    system's output (``--with-annotations``: they would be credited to both): refused in one line elsewhere. The
    rule of ``annols push`` and ``annols tasks`` alike."""
    if share and (definition.style not in SHARING_STYLES or len(blinding.candidate_fields(definition)) > 1):
        raise AnnolsError(f"--share-identical is for definitions whose tasks show one candidate (ratings, spans, "
                          f"sentences); {definition.name!r} shows several ({definition.style}): leave it out, "
                          "each system's output its own task")  # fmt: skip
    if share and with_annotations:  # judgments made apart would be credited to both
        raise AnnolsError("--share-identical shows identical outputs once, so judgments already made of each "
                          "system's output cannot come with it: use --with-annotations without it")  # fmt: skip


def _check_task(definition: Definition, task: SourceTask) -> None:
    missing = [f for f in config.data_fields(definition) if f not in task.data]
    if missing:  # a format bug rather than bad input, but say where
        raise InputError(task.location, "", missing[0], "the task lacks this field of the labeling config")
    candidates = blinding.candidate_fields(definition)
    if candidates and task.systems and len(task.systems) != len(candidates):
        raise InputError(task.location, "", "systems", f"{len(task.systems)} systems for {len(candidates)} candidates")


def check_with_annotations(definition: Definition, inputs: Sequence[Path], found: Scan) -> None:
    """``--with-annotations`` on inputs that hold no judgment is refused, not ignored: say what the input needs."""
    if found.annotations:
        return
    needed = getattr(format_for(definition), "annotations_needed", "the judgments of the protocol's own format")
    raise InputError(
        inputs[0] if inputs else "", "", "", f"--with-annotations, but the input holds no judgments; it needs {needed}"
    )


def load_predictions(definition: Definition, paths: Sequence[Path]) -> dict[str, SourcePrediction]:
    if not paths:
        return {}
    return dict(format_for(definition).read_predictions(paths, definition))


def build_tasks(
    definition: Definition,
    inputs: Sequence[Path],
    *,
    seed: int = 0,
    with_annotations: bool = False,
    predictions: dict[str, SourcePrediction] | None = None,
    user_ids: dict[str, int] | None = None,
    gold: Sequence[Path] = (),
    attention: int = 0,
    shown: dict[str, Shown] | None = None,
    only: Collection[str] | None = None,
    keys: Keys | None = None,
    share: bool = False,
) -> Iterator[tuple[str, tuple[str, ...], dict[str, Any], bool]]:
    """(key, systems shown, Label Studio task, repeat) for each input task, in input order.

    ``repeat`` marks a record whose key came earlier in the input: the same task again,
    whose judgments (if any) belong to the first one. ``shown`` gets each task's order, role
    and meta digest (for the manifest). ``keys``: the study's, which say each task's key on the
    server (without, its key itself). ``share``: records of the same shown texts are one task (:func:`sharing`).
    """
    seen: set[str] = set()
    # Judgments a format reads by the input's order of candidates it lets push move with them (judges.reframe):
    # such tasks are shuffled like any. The shipped formats' judgments keep the order their annotators saw.
    moves = with_annotations and bool(getattr(format_for(definition), "moves_judgments", False))
    for task, role in sharing(with_roles(definition, inputs, gold, seed, attention, only, keys), share):
        repeat = task.key in seen
        seen.add(task.key)
        prediction = None if repeat else (predictions or {}).get(task.key)
        systems, payload = _payload(definition, task, seed, with_annotations, prediction, user_ids, role, moves,
                                    None if repeat else shown, keys)  # fmt: skip
        yield task.key, systems, payload, repeat


def _payload(
    definition: Definition,
    task: SourceTask,
    seed: int = 0,
    with_annotations: bool = False,
    prediction: SourcePrediction | None = None,
    user_ids: dict[str, int] | None = None,
    role: str | None = None,
    moves: bool = False,
    shown: dict[str, Shown] | None = None,
    keys: Keys | None = None,
) -> tuple[tuple[str, ...], dict[str, Any]]:
    """(systems shown, Label Studio task) of one source task: blinded, keyed, with what it carries.
    ``moves``: its judgments move with the shuffled candidates (else a judged task keeps the input order).
    ``shown``: gets the task's order, role and meta digest, for the manifest."""
    # Judgments already made refer to the input order: keep it for tasks that carry them, or move them.
    keep = task.fixed_order or (with_annotations and bool(task.annotations) and not moves)
    keys = keys or Keys(None)
    # The shuffle too is drawn with the secret: from the seed and the key alone, a guess of the
    # systems (which gives the key) would be checked against the order shown.
    data, systems, order = blinding.blind(definition, task.data, task.systems, keys.shuffle(task.key), seed, keep)
    # Only the key goes to the server: the systems shown, their order, the task's role and what
    # the reader tolerated in its input (which names the input file and line) stay in the
    # coordinator's manifest (annols.study.manifest), so every task, study item, gold item or
    # attention check, carries meta of the same keys and lengths. The key itself is a digest of the
    # task's content, systems included for some styles: the server gets an HMAC of it (Keys).
    meta: dict[str, Any] = {blinding.META_KEY: keys.sent(task.key)}
    data, extra = _displayed(definition, data, task.extra, keys)
    sent = fields.to_label_studio(config.with_turns(definition, data))
    if shown is not None:
        warnings = tuple(str(w) for w in task.warnings)
        shown[task.key] = Shown(systems, order, role or roles.STUDY, meta_digest(meta), warnings, extra or None,
                                data_digest(sent))  # fmt: skip
    payload: dict[str, Any] = {"data": sent, "meta": meta}
    if with_annotations and task.annotations:
        payload["annotations"] = [
            _annotation(reframe(definition, a.result, order, tuples=True) if moves else a.result, a.lead_time,
                        (user_ids or {}).get(annotator_email(a.annotator)))
            for a in task.annotations
        ]  # fmt: skip
    if prediction is not None:
        item: dict[str, Any] = {"result": prediction.result, "model_version": prediction.model_version}
        if prediction.score is not None:
            item["score"] = prediction.score
        payload["predictions"] = [item]
    return systems, payload


def _displayed(
    definition: Definition, data: dict[str, Any], extra: Mapping[str, Any] | None, keys: Keys
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the data the server gets, what the manifest keeps): only the fields the labeling config shows go to
    the server, so study items, gold items and attention checks carry the same fields with the same kinds of
    values; whatever else the input (or a gold file) carries (a record id, a row number) stays in the manifest
    and comes back at pull. A study pushed before (placement 1) sends its tasks as it did."""
    if keys.placement < 2:
        return data, dict(extra or {})
    shown = set(config.data_fields(definition))
    hidden = {k: v for k, v in data.items() if k not in shown}
    if not hidden:
        return data, dict(extra or {})
    return {k: v for k, v in data.items() if k in shown}, {**hidden, **(extra or {})}


def _creation_order(keys: Keys, count: int) -> list[int]:
    """The order a push creates its ``count`` tasks in (indexes into input order): drawn with the study's
    secret, so that the task ids annotators see say nothing of the input's order (or of a design's, which
    ``annols tasks`` shows to anyone); input order for a study pushed before (placement 1)."""
    order = list(range(count))
    rng = keys.rng("creation")
    if rng is not None:
        rng.shuffle(order)
    return order


def _annotation(result: list[dict[str, Any]], lead_time: float | None, user_id: int | None) -> dict[str, Any]:
    out: dict[str, Any] = {"result": result}
    if user_id is not None:
        out["completed_by"] = user_id
    if lead_time is not None:
        out["lead_time"] = lead_time
    return out


def ensure_project(
    client: LabelStudioClient, definition: Definition, options: PushOptions, found: Future[Project | None] | None = None
) -> tuple[Project, bool]:
    """The project titled ``options.title`` (looked up, or ``found`` already): reused if its config matches,
    created otherwise."""
    wanted = config.label_config(definition)
    existing = client.find_project(options.title) if found is None else found.result()
    if existing is None:
        project, made = client.create_project(
            options.title, wanted, config.instructions(definition), overlap=options.overlap or 1
        )
        if made:
            return project, True
        existing = project  # another push made it at the same moment: checked as any project found
    if _normalise(existing.label_config) != _normalise(wanted):
        raise ServerError(
            f"project {options.title!r} on {client.url} exists with a different labeling config than "
            f"{definition.name}{' ' + definition.variant if definition.variant else ''}: "
            "push into another --project, or check the protocol and variant"
        )
    if options.overlap is not None:
        _keep_or_change_overlap(client, existing, options)
    return existing, False


def _settings_sent(
    client: LabelStudioClient, definition: Definition, options: PushOptions, project: Project, created: bool,
    manifest: Path,
) -> dict[str, Any]:
    """What the manifest keeps of the project's settings, for pull to tell whether anyone changed what
    annotators are shown or how many judge a task: a digest of the label config push sent (the project's
    was checked to be the same) and the overlap it set or found."""
    overlap: Any
    if created or options.overlap is not None:
        overlap = options.overlap or 1
    else:
        earlier = (read_header(manifest) or {}).get("overlap")
        overlap = earlier if isinstance(earlier, int) else client.project(project.id).get("maximum_annotations")
    return {"config": config_digest(config.label_config(definition)), "overlap": overlap}


def _keep_or_change_overlap(client: LabelStudioClient, project: Project, options: PushOptions) -> None:
    """Refuse to change a reused project's overlap unless asked (``change_overlap``); then say so.

    Annotators may already be at work: a different overlap changes which tasks count as done.
    """
    current = client.project(project.id).get("maximum_annotations")
    if current == options.overlap:
        return
    if current is None:  # a server that does not say: set it, as there is nothing to keep
        client.update_project(project.id, maximum_annotations=options.overlap)
        return
    if not options.change_overlap:
        raise AnnolsError(
            f"project {options.title!r} asks for {current} annotator(s) per task, this push for "
            f"{options.overlap} ({options.overlap_from}): nothing was sent; add --change-overlap to change the "
            f"project's overlap, or give --overlap {current} to keep it"
        )
    client.update_project(project.id, maximum_annotations=options.overlap)
    client.notice(f"Changed the overlap of project {options.title!r} from {current} to {options.overlap}")


def _normalise(xml: str) -> str:
    return re.sub(r">\s+<", "><", xml.strip())


def ensure_users(client: LabelStudioClient, annotators: set[str]) -> dict[str, int]:
    """A Label Studio user per original annotator (created if missing): email -> id."""
    users = client.users()
    for annotator in sorted(annotators):
        email = annotator_email(annotator)
        if email not in users:
            users[email] = client.create_user(email, first_name=annotator)
    return users


def push(
    client: LabelStudioClient,
    definition: Definition,
    inputs: Sequence[Path],
    options: PushOptions,
    on_progress: Callable[[int, int], None] | None = None,
    on_project: Callable[[Project, bool], None] | None = None,
) -> PushReport:
    """Push the inputs into the project; safe to re-run. ``on_project(project, created)`` once the
    project is there, ``on_progress(done, total)`` after each batch."""
    if options.batch_size < 1:
        raise AnnolsError("--batch-size must be at least 1")
    check_sharing(definition, options.share_identical, options.with_annotations)
    # Plain tasks are built once, in the first pass, into a temporary spool file; tasks with
    # judgments or predictions (which need user ids and predictions read later) are built
    # in a second pass over the inputs.
    spooling = not options.with_annotations and not options.predictions
    with contextlib.ExitStack() as stack:
        spool = stack.enter_context(tempfile.TemporaryFile(prefix="annols-push-")) if spooling else None
        return _push(client, definition, inputs, options, spool, on_progress, on_project)


def _push(
    client: LabelStudioClient,
    definition: Definition,
    inputs: Sequence[Path],
    options: PushOptions,
    spool: IO[bytes] | None,
    on_progress: Callable[[int, int], None] | None,
    on_project: Callable[[Project, bool], None] | None = None,
) -> PushReport:
    manifest = manifest_path(options.manifest_dir, options.title)
    # The study's secret, which the keys sent depend on, is the manifest's: the tasks are built
    # (and spooled) before the project is known. A study without a manifest here gets a new one,
    # checked once the project is known (_check_keys).
    keys = keys_of(manifest)
    no_manifest = keys is None
    keys = keys or (Keys(options.secret) if options.secret else Keys.new())
    # The project is looked up (read only) while the inputs are read: the server answers meanwhile.
    # A daemon thread: bad input is reported at once, even if the server is slow to answer.
    project = _in_background(client.find_project, options.title)
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="annols-digest") as beside:
        found = None
        cacheable = not (options.gold or options.attention or options.only is not None or options.share_identical)
        if _scan_path(manifest).exists() and cacheable:
            found = _cached_scan(client, manifest, input_fingerprint(definition, inputs))
        from_cache = found is not None
        if found is None:
            stamp = _input_stamp(inputs)
            found = scan(definition, inputs, spool, options.seed, options.gold, options.attention, options.only, keys,
                         options.share_identical)  # fmt: skip
            # The digest is taken while the server imports (hashing releases the GIL); it is
            # kept only if no input changed meanwhile, so it is the digest of what was checked.
            fingerprinting = beside.submit(input_fingerprint, definition, inputs)
        try:
            return _push_checked(
                client,
                definition,
                inputs,
                options,
                spool,
                on_progress,
                manifest,
                found,
                from_cache,
                project,
                on_project,
                keys,
                no_manifest,
            )
        finally:
            if not from_cache:
                fingerprint = fingerprinting.result()
                if stamp is not None and _input_stamp(inputs) == stamp and cacheable:
                    _save_scan(manifest, fingerprint, found)


def _in_background(function: Callable[..., T], *args: Any) -> Future[T]:
    """``function(*args)`` in a daemon thread (one that does not keep the process alive)."""
    future: Future[T] = Future()

    def run() -> None:
        try:
            future.set_result(function(*args))
        except BaseException as e:  # handed to whoever asks for the result
            future.set_exception(e)

    threading.Thread(target=run, name="annols-lookup", daemon=True).start()
    return future


def _push_checked(
    client: LabelStudioClient,
    definition: Definition,
    inputs: Sequence[Path],
    options: PushOptions,
    spool: IO[bytes] | None,
    on_progress: Callable[[int, int], None] | None,
    manifest: Path,
    found: Scan,
    from_cache: bool,
    project_found: Future[Project | None],
    on_project: Callable[[Project, bool], None] | None = None,
    keys: Keys | None = None,
    no_manifest: bool = False,
) -> PushReport:
    """The push once the first pass found every input record good (or its findings were cached).

    ``keys``: the study's, from the manifest (``no_manifest``: there was none, these are new)."""
    keys = keys or Keys(None)
    if options.with_annotations:
        check_with_annotations(definition, inputs, found)
    predictions = load_predictions(definition, options.predictions)
    known = set(found.keys)
    unknown = [k for k in predictions if k not in known]
    if unknown:
        raise InputError(
            options.predictions[0], "", "", f"{len(unknown)} prediction(s) match no input task (first key {unknown[0]})"
        )

    if options.with_annotations and options.overlap is None and found.annotators:
        # An imported study brings its overlap: every task was judged by up to this many annotators.
        options = dataclasses.replace(options, overlap=len(found.annotators),
                                      overlap_from="the input's annotators, --with-annotations")  # fmt: skip
    if project_found.result() is None:  # a new project: checked before it is made
        _attention_dropped(found.attention, set(), options.attention, inputs)
    project, created_project = ensure_project(client, definition, options, project_found)
    if on_project is not None:
        on_project(project, created_project)
    user_ids = ensure_users(client, found.annotators) if options.with_annotations else {}

    present: dict[str, tuple[int | None, tuple[str, ...]]] = {}
    recorded: dict[str, Any] = {}  # the manifest's header, when the manifest is confirmed
    # A project this push made is empty, unless another push of the same title reused it before
    # this one looked (it was counted after its creation): then it is listed as any project is.
    fresh = created_project and not project.task_count
    if fresh and keys.secret is None:  # an older study's manifest, but a new project: its keys get a secret
        keys = Keys.new()
        if spool is not None and not from_cache:  # the spooled tasks carry the old keys: built again
            spool.seek(0)
            spool.truncate()
            found = scan(definition, inputs, spool, options.seed, options.gold, options.attention, options.only, keys,
                         options.share_identical)  # fmt: skip
    elif not fresh:
        _check_keys(client, project, manifest, keys, no_manifest)
    header = {
        "protocol": definition.name,
        "variant": definition.variant,
        "project": options.title,
        "project_id": project.id,
        "url": client.url,
        "seed": options.seed,
        **({"hybrid": options.hybrid} if options.hybrid else {}),
        **_settings_sent(client, definition, options, project, created_project, manifest),
        **({"share_identical": True} if options.share_identical else {}),
        **keys.header(),
    }
    if fresh:  # the secret is kept before any task carries a key made with it: a killed push can resume
        write_manifest(manifest, header, {}, keys=keys)
    # --attention N is the number of attention checks in the project: this push keeps, of the
    # checks it made, those already there and as many more as the project lacks. Which are
    # there: the manifest's, confirmed on the server with the push's keys, or else the listing's.
    recorded_header, recorded_tasks, attention = ({}, {}, set()) if fresh else read_manifest_tasks(manifest)
    if recorded_tasks and bool(recorded_header.get("share_identical")) != options.share_identical:
        was = "with" if recorded_header.get("share_identical") else "without"
        raise AnnolsError(f"project {options.title!r} was pushed {was} --share-identical ({manifest}): push it "
                          f"{was} it again, or push into another --project")  # fmt: skip
    earlier_rows = {} if fresh else rows_by_key(manifest)  # what the manifest knew of tasks this push does not build
    _check_credited(manifest, found.shown, earlier_rows)
    dropped = _attention_dropped(found.attention, attention, options.attention)
    counted = sorted(attention - set(found.keys)) if options.attention else []  # other pushes' checks
    wanted = [k for k in found.keys if k not in dropped] + counted
    confirmed = None if fresh else _confirmed_manifest(client, project.id, recorded_header, recorded_tasks, wanted,
                                                       keys)  # fmt: skip

    @functools.cache
    def reverse() -> dict[str, str]:
        """Server key -> key of every task this push or the manifest knows (the checks an input makes
        too): made only when the project is listed."""
        return keys.reverse([*found.keys, *map(key_for, found.keys), *earlier_rows])
    if confirmed is not None:
        recorded, present = confirmed
    else:
        if from_cache:  # the server no longer has them all: check every record, as any push does
            found = scan(definition, inputs, spool, options.seed, options.gold, options.attention, options.only, keys,
                         options.share_identical)  # fmt: skip
        attention = set()
        if not fresh:
            present = _listed(client, project.id, attention, reverse(), keys)
            _check_keys(client, project, manifest, keys, no_manifest, present)
        dropped = _attention_dropped(found.attention, attention, options.attention, inputs)
    if dropped:
        found = dataclasses.replace(found, keys=[k for k in found.keys if k not in dropped])
    attention.update(k for k in found.attention if k not in dropped)
    already = sum(1 for k in found.keys if k in present)
    todo = len(found.keys) - already
    if on_progress:
        on_progress(0, todo)
    sent = _Sent()
    if todo or recorded != header:  # else the manifest already says all there is to say
        failure: BaseException | None = None
        try:
            if todo:

                def progress() -> None:
                    if on_progress:
                        on_progress(sent.done, todo)

                # Judgments on a task that appears again later in the input: added once the task exists.
                repeated: list[tuple[str, dict[str, Any]]] = []
                before = frozenset(present)

                def tasks() -> Iterator[_Ready]:
                    """The tasks still missing (asked again after a failed import)."""
                    if spool is not None:
                        return _from_spool(spool, found.spooled, present, dropped, keys)
                    repeated.clear()
                    return _built(definition, inputs, options, predictions, user_ids, present, dropped, before,
                                  repeated, found.shown, keys)  # fmt: skip

                def recount() -> None:  # after a listing: what this push added, confirmed or not
                    sent.done = sum(1 for k in found.keys if k in present) - already
                    sent.count_carried(present)

                # Counted before the keys were listed: any task beyond these, another push's too, is checked.
                expected = (project.task_count or 0) + todo
                _import(client, project.id, tasks, options.batch_size, present, sent, progress, recount,
                        lambda: _listed(client, project.id, None, reverse(), keys))  # fmt: skip
                _remove_replayed(client, project.id, expected, present, before, reverse)
                for key, a in repeated:
                    target = present[key][0]
                    if target is not None:
                        client.create_annotation(
                            target, a["result"], completed_by=a.get("completed_by"), lead_time=a.get("lead_time")
                        )
                        sent.annotations += 1
        except BaseException as e:
            failure = e
            raise
        finally:
            # Whatever happened, record what is known to be in the project.
            _record(manifest, header, present, attention, project, client.url, sent, failure,
                    found.shown_with_shares(), earlier_rows, keys)  # fmt: skip
    return PushReport(
        project=project,
        created=sent.done,
        present=already,
        total=len(found.keys),
        duplicates=found.duplicates,
        annotations=sent.annotations,
        predictions=sent.predictions,
        manifest=manifest,
        project_created=created_project,
        warnings=tuple(found.warnings),
        attention=sum(1 for k in attention if k in present),
        shared=found.sharing,
    )


def _record(
    manifest: Path,
    header: dict[str, Any],
    present: dict[str, tuple[int | None, tuple[str, ...]]],
    attention: Collection[str],
    project: Project,
    url: str,
    sent: _Sent,
    failure: BaseException | None,
    shown: dict[str, Shown],
    earlier: dict[str, dict[str, Any]],
    keys: Keys,
) -> None:
    """Write the manifest; if it cannot be written after a push that went well, say what was imported.

    A task the manifest knew keeps its row: a re-push with another ``--seed`` builds it shuffled otherwise, but
    the server holds it as the first push sent it (pull's data digest would say so)."""
    shown = {k: v for k, v in shown.items() if not (k in earlier and "order" in earlier[k])}
    try:
        write_manifest(manifest, header, present, attention, shown, earlier, keys)
    except WriteError as e:
        if failure is not None:
            return  # the push's own error is the one to report; a re-run lists the project instead
        raise AnnolsError(
            f"imported {sent.done} task(s) into project {project.title!r} ({url}/projects/{project.id}), "
            f"but the manifest could not be written ({e}); free some space and re-run the push: "
            "it resumes from the server and sends nothing twice"
        ) from e


def _check_credited(manifest: Path, shown: Mapping[str, Shown], earlier: Mapping[str, dict[str, Any]]) -> None:
    """A task already pushed stays credited to the systems it was pushed for.

    The first record of given texts keeps the key of its texts alone (formats.generic.Identities):
    an input whose records of identical outputs came in another order would give that key another
    record's systems, and the manifest would credit the judgments made to them. Refused, as is a
    record whose systems were edited since."""
    for key, now in shown.items():
        before = (earlier.get(key) or {}).get("systems")
        if before and now.systems and sorted(map(str, before)) != sorted(now.systems):
            raise InputError(manifest, f"task {key}", "systems", f"pushed for {sorted(before)}, but the input now "
                             f"gives it {sorted(now.systems)}: push the input in the order (and with the systems) "
                             "the study was pushed with")  # fmt: skip


def _check_keys(
    client: LabelStudioClient,
    project: Project,
    manifest: Path,
    keys: Keys,
    no_manifest: bool,
    present: Collection[str] | None = None,
) -> None:
    """Refuse a push into a project made before (not by this push) whose keys it cannot know.

    Its tasks carry keys under the secret of the manifest that pushed them. Without a manifest,
    this push's keys (under a new secret) would match none of them and every task would be
    imported a second time; so would those of a manifest of another study of the same title,
    which shows once the project is listed (``present``: it holds annols tasks, and none whose
    key this push knows). A study pushed before keys had a secret carries its keys themselves:
    any push finds them."""
    if keys.secret is None:
        return
    if no_manifest:
        where = f"there is no manifest of it in {manifest.parent} ({manifest.name})"
    elif present and all(k in keys.foreign for k in present):
        where = f"none of its {len(present)} task(s) carries a key made with the secret of {manifest}"
    else:
        return
    raise AnnolsError(
        f"project {project.title!r} on {client.url} ({client.url}/projects/{project.id}) exists, and {where}: "
        "its tasks' keys depend on the secret in the manifest of the push that made it, so this push could not "
        "tell which tasks are there and nothing was sent; import that manifest (`annols manifest export` where it "
        "was pushed, `annols manifest import` here, or give its --manifest-dir), or push into another --project"
    )


def _remove_replayed(
    client: LabelStudioClient,
    project_id: int,
    expected: int,
    present: dict[str, tuple[int | None, tuple[str, ...]]],
    before: frozenset[str],
    reverse: Callable[[], dict[str, str]],
) -> None:
    """Remove tasks made twice, keeping the first of each key.

    Two ways a task arrives twice: on SQLite, Label Studio's DatabaseIsLockedRetryMiddleware
    replays a whole import that hit "database is locked", even after it was committed (the
    answer names one copy of each task, the project holds two); and another push of the same
    input may import the same keys at the same moment. Only when the project holds more tasks
    than it held plus those sent are the keys listed. Of the tasks sharing a key this push
    added, the lowest id is kept (the same rule in every push, so two pushes at once agree)
    and the others are deleted, if nobody has annotated them yet. The push whose import ends
    last lists after every other import was committed, so it sees every copy. A listing
    runs again while it finds copies: another push's deletions meanwhile shift its pages.
    """
    if int(client.project(project_id).get("task_number") or 0) <= expected:
        return
    removed = 0
    for _ in range(3):
        copies: dict[str, list[tuple[int, int]]] = {}  # key -> (task id, annotations)
        for task in client.task_fields(project_id, "id,meta,total_annotations"):
            key = (task.get("meta") or {}).get(blinding.META_KEY)
            key = reverse().get(key, key) if isinstance(key, str) else None
            if key is not None and key in present and key not in before:  # a key this push sent
                copies.setdefault(key, []).append((int(task["id"]), int(task.get("total_annotations") or 0)))
        extra = []
        for key, found in copies.items():
            found.sort()
            extra += [task_id for task_id, annotations in found[1:] if not annotations]
            present[key] = (found[0][0], present.get(key, (None, ()))[1])
        if not extra:
            break
        client.delete_tasks(project_id, extra)
        removed += len(extra)
    if removed:
        client.notice(
            f"Removed {removed} task(s) made twice (a replayed import, or another push of this input "
            "at the same moment): each is there once"
        )


def _import(
    client: LabelStudioClient,
    project_id: int,
    tasks: Callable[[], Iterator[_Ready]],
    batch_size: int,
    present: dict[str, tuple[int | None, tuple[str, ...]]],
    sent: _Sent,
    progress: Callable[[], None],
    recount: Callable[[], None],
    listed: Callable[[], dict[str, tuple[int | None, tuple[str, ...]]]],
) -> None:
    """Send ``tasks()`` in batches. An import is never sent again blindly: after one that failed in a
    way that may pass (its answer lost or timed out, any 5xx), the keys in the project are listed and
    only the tasks still missing are sent, a bounded number of times without progress.

    A timed-out import may still be running on the server when the keys are listed (SQLite's
    middleware replays a locked request for up to about 15 minutes): if it commits after the
    missing tasks were sent again, its copies are removed by :func:`_remove_replayed` only if
    they arrived before the push ends."""
    failures = 0
    while True:
        done = sent.done
        try:
            _send(client, project_id, tasks(), batch_size, present, sent, progress)
            return
        except TransientServerError as e:
            failures = 1 if sent.done > done else failures + 1
            if failures > client.retries:
                raise
            client.pause(f"{e.reason} to an import", failures, then="listing the tasks that arrived")
            present.update(listed())
            recount()
            progress()


def input_fingerprint(definition: Definition, inputs: Sequence[Path]) -> str | None:
    """A digest of everything that decides what the first pass finds: the annols version, how records
    become tasks (formats.IDENTITY), the definition (its config) and the bytes of every input file; None
    if an input is missing."""
    digest = hashlib.blake2b(digest_size=24)
    identity = [__version__, IDENTITY, definition.name, definition.variant, definition.format,
                config.label_config(definition)]  # fmt: skip
    digest.update(json.dumps(identity).encode("utf-8"))
    try:
        for path in map(Path, inputs):
            members = _input_files(path)
            if members is None:
                return None
            digest.update(b"\0input\0")
            for member in members:
                digest.update(os.fsencode(member.relative_to(path)) + b"\0" if member != path else b"\0")
                with open(member, "rb") as f:
                    while chunk := f.read(1 << 20):
                        digest.update(chunk)
    except OSError:
        return None  # the first pass reports it
    return digest.hexdigest()


def _input_files(path: Path) -> list[Path] | None:
    """The files of one input (a file, or every file below a folder, sorted); None if it is missing."""
    if path.is_dir():
        return sorted(p for p in path.rglob("*") if p.is_file())
    return [path] if path.is_file() else None


def _input_stamp(inputs: Sequence[Path]) -> tuple[tuple[str, int, int], ...] | None:
    """Size and modification time of every input file (None if one is missing): a cheap "unchanged?"."""
    stamp = []
    try:
        for path in map(Path, inputs):
            members = _input_files(path)
            if members is None:
                return None
            for member in members:
                info = member.stat()
                stamp.append((str(member), info.st_size, info.st_mtime_ns))
    except OSError:
        return None
    return tuple(stamp)


def _scan_path(manifest: Path) -> Path:
    return manifest.with_name(manifest.name.removesuffix(".manifest.jsonl") + ".scan.json")


def _save_scan(manifest: Path, fingerprint: str | None, found: Scan) -> None:
    """Remember what the first pass found for these exact inputs (see :func:`_cached_scan`)."""
    if fingerprint is None:
        return
    record = {
        "fingerprint": fingerprint,
        "keys": found.keys,
        "duplicates": found.duplicates,
        "annotators": sorted(found.annotators),
        "annotations": found.annotations,
        "warnings": found.warnings,
    }
    with contextlib.suppress(OSError, WriteError):  # only a shortcut: a read-only folder costs speed, not correctness
        files.write_text(_scan_path(manifest), json.dumps(record, ensure_ascii=False), private=True)


def _cached_scan(client: LabelStudioClient, manifest: Path, fingerprint: str | None) -> Scan | None:
    """The first pass's findings of an earlier push of the same bytes, when they can stand in for reading.

    Only for a re-push that will send nothing: the manifest of the same project (same id,
    same server) must name a task id for every key; the server still confirms them
    before the push trusts it (:func:`_confirmed_manifest`).
    """
    if fingerprint is None:
        return None
    try:
        record = json.loads(_scan_path(manifest).read_text(encoding="utf-8"))
        if record.get("fingerprint") != fingerprint:
            return None
        found = Scan(
            keys=[str(k) for k in record["keys"]],
            duplicates=int(record["duplicates"]),
            annotators={str(a) for a in record["annotators"]},
            annotations=int(record["annotations"]),
            warnings=[str(w) for w in record.get("warnings", [])],
        )
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    # Which project it is, and whether the server still has those tasks, is confirmed later.
    header, tasks, _ = read_manifest_tasks(manifest)
    if header.get("url") != client.url or any(tasks.get(k, (None,))[0] is None for k in found.keys):
        return None
    return found


@dataclass
class _Sent:
    """What the imports of one push created."""

    done: int = 0
    annotations: int = 0
    predictions: int = 0
    # Key -> (annotations, predictions) of every task sent with any, its answer come or lost.
    carried: dict[str, tuple[int, int]] = field(default_factory=dict)

    def count_carried(self, present: dict[str, Any]) -> None:
        """Annotations and predictions of the tasks sent that are in the project (``present``, just
        listed): a task is imported with its annotations and predictions in one transaction."""
        arrived = [counts for key, counts in self.carried.items() if key in present]
        self.annotations = sum(a for a, _ in arrived)
        self.predictions = sum(p for _, p in arrived)


@dataclass
class _Batch:
    """Tasks serialised for one import request: each task's JSON bytes, with what the manifest needs."""

    parts: list[bytes | FilePart] = field(default_factory=list)
    # key, systems shown, annotations, predictions
    tasks: list[tuple[str, tuple[str, ...], int, int]] = field(default_factory=list)
    size: int = 0


# A task ready to send: key, systems shown, annotations, predictions, its JSON (or where it is).
_Ready = tuple[str, tuple[str, ...], int, int, bytes | FilePart]


def _listed(
    client: LabelStudioClient,
    project_id: int,
    attention: set[str] | None = None,
    reverse: dict[str, str] | None = None,
    keys: Keys | None = None,
) -> dict[str, tuple[int | None, tuple[str, ...]]]:
    """Key -> (task id, systems shown) of every annols task in the project, from the server; the
    keys of the attention checks go to ``attention``: their role is not on the server, but a
    check's key is made from the key of the study item it copies (or, pushed by an earlier
    annols, its meta holds a role tag). ``reverse``: server key -> key of the tasks known; a key
    it lacks stays as the server has it (noted in ``keys``, so the manifest keeps it so)."""
    present: dict[str, tuple[int | None, tuple[str, ...]]] = {}
    for task_id, meta in client.task_meta(project_id):
        key = meta.get(blinding.META_KEY)
        if isinstance(key, str):
            if reverse and key in reverse:
                key = reverse[key]
            elif reverse and keys is not None:
                keys.foreign.add(key)
            systems = meta.get(blinding.META_SYSTEMS)
            present[key] = (task_id, blinding.decode_systems(systems) if isinstance(systems, str) else ())
            if attention is not None and roles.role_of(meta, key) == roles.ATTENTION:
                attention.add(key)
    if attention is not None:
        made = {key_for(k) for k in present}
        attention.update(k for k in present if k in made)
    return present


def _attention_dropped(
    made: Sequence[str], there: set[str], wanted: int, inputs: Sequence[Path] | None = None
) -> set[str]:
    """The attention checks this push made (``made``, in queue order) that it leaves out: the
    project holds ``there`` and should hold ``wanted``, so the first checks it lacks are kept.

    With ``inputs`` (the project's checks are known), an input too small to make the missing
    checks from is an error, before anything is sent.
    """
    missing = max(0, wanted - len(there))
    new = [k for k in made if k not in there]
    if inputs is not None and len(new) < missing:
        raise InputError(inputs[0], "", "", f"--attention {wanted} needs {missing} more attention check(s) than "
                         f"the project holds ({len(there)}), each made from a study item; the input holds "
                         f"{len(new)} that are not one already")  # fmt: skip
    return set(new[missing:])


MAX_ID_RUNS = 50  # beyond this many requests, listing the keys is as cheap


def _confirmed_manifest(
    client: LabelStudioClient,
    project_id: int,
    header: dict[str, Any],
    tasks: dict[str, tuple[int | None, tuple[str, ...]]],
    wanted: Sequence[str],
    keys: Keys,
) -> tuple[dict[str, Any], dict[str, tuple[int | None, tuple[str, ...]]]] | None:
    """The manifest's header and tasks if they provably hold every input key, else None (then the server is listed).

    Proof: the manifest was written for this project on this server and names a task id
    for every key; the server counts every one of those ids in the project (task ids are
    never reused and annols never changes a task's key), checked per run of consecutive
    ids with one cheap request; and the tasks at both ends of each run carry the keys the
    manifest says (against a server whose database was replaced by another one).
    """
    if header.get("project_id") != project_id or header.get("url") != client.url:
        return None
    key_of: dict[int, str] = {}
    for key in wanted:
        task_id = tasks.get(key, (None, ()))[0]
        if task_id is None:
            return None
        key_of[task_id] = key
    runs = _runs(sorted(key_of))
    if len(runs) > MAX_ID_RUNS:
        return None
    for low, high in runs:
        for start, expected in ((low, high - low + 1), (high, 1)):
            count, first = client.id_range(project_id, start, high)
            if count != expected or first is None or first[0] != start:
                return None
            if first[1].get(blinding.META_KEY) != keys.sent(key_of[start]):
                return None
    return header, tasks


def _runs(ids: Sequence[int]) -> list[tuple[int, int]]:
    """Sorted distinct ids as (first, last) runs of consecutive ids."""
    runs: list[tuple[int, int]] = []
    for i in ids:
        if runs and i == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], i)
        else:
            runs.append((i, i))
    return runs


def _from_spool(
    spool: IO[bytes], spooled: Sequence[tuple[str, tuple[str, ...], int]], present: dict[str, Any], left: set[str],
    keys: Keys | None = None,
) -> Iterator[_Ready]:
    """The spooled tasks the project does not have yet, but those ``left`` out, in the study's creation order
    (:func:`_creation_order`; read when sent)."""
    spool.flush()
    offset = 0
    parts = []
    for key, systems, length in spooled:
        parts.append((key, systems, offset, length))
        offset += length
    for n in _creation_order(keys or Keys(None), len(parts)):
        key, systems, offset, length = parts[n]
        if key not in present and key not in left:
            yield key, systems, 0, 0, FilePart(spool.fileno(), offset, length)


def _built(
    definition: Definition,
    inputs: Sequence[Path],
    options: PushOptions,
    predictions: dict[str, SourcePrediction],
    user_ids: dict[str, int],
    present: dict[str, Any],
    left: set[str],
    before: frozenset[str],
    repeated: list[tuple[str, dict[str, Any]]],
    shown: dict[str, Shown],
    keys: Keys,
) -> Iterator[_Ready]:
    """The tasks the project does not have yet, but those ``left`` out, built in a second pass over the inputs.

    Judgments on a repeated record of a task this push adds (not in ``before``) go to ``repeated``.
    """
    ready: list[_Ready] = []
    for key, systems, task, repeat in build_tasks(
        definition,
        inputs,
        seed=options.seed,
        with_annotations=options.with_annotations,
        predictions=predictions,
        user_ids=user_ids,
        gold=options.gold,
        attention=options.attention,
        shown=shown,
        only=options.only,
        keys=keys,
        share=options.share_identical,
    ):
        if repeat:
            if key not in before:
                repeated.extend((key, a) for a in task.get("annotations", ()))
            continue
        if key in present or key in left:
            continue
        data = jsontext.dumps(task, ensure_ascii=False).encode("utf-8")
        ready.append((key, systems, len(task.get("annotations", ())), len(task.get("predictions", ())), data))
    # Held until all are built, to be created in the study's order (tasks with judgments or predictions only).
    # Judgments imported from elsewhere (--with-annotations) were made before any annotator here saw a task, so
    # their tasks keep the input's order: the protocol's own files then come back in it, as the dataset has them.
    order = range(len(ready)) if options.with_annotations else _creation_order(keys, len(ready))
    for n in order:
        yield ready[n]


def _send(
    client: LabelStudioClient,
    project_id: int,
    tasks: Iterator[_Ready],
    batch_size: int,
    present: dict[str, tuple[int | None, tuple[str, ...]]],
    sent: _Sent,
    progress: Callable[[], None],
) -> None:
    """Import the tasks in batches; each batch is gathered while the previous one is sent.

    ``present`` and ``sent`` are updated after each batch the server confirmed, also when
    a later one fails.
    """
    pending: tuple[Future[list[int]], _Batch] | None = None

    def settle() -> None:
        """Wait for the request in flight and record what it created."""
        nonlocal pending
        if pending is None:
            return
        future, in_flight = pending
        pending = None
        # A busy server (SQLite under annotators' saves) can take minutes: say so.
        with client.waiting(f"Label Studio is still importing {len(in_flight.tasks)} tasks"):
            ids = future.result()
        in_flight.parts.clear()
        for i, (key, systems, annotated, predicted) in enumerate(in_flight.tasks):
            present[key] = (ids[i] if i < len(ids) else None, systems)
            sent.annotations += annotated
            sent.predictions += predicted
        sent.done += len(in_flight.tasks)
        progress()

    batch = _Batch()
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="annols-import") as sender:

        def submit() -> None:
            nonlocal pending, batch
            settle()
            for key, _, annotated, predicted in batch.tasks:  # counted once listed, should the answer be lost
                if annotated or predicted:
                    sent.carried[key] = (annotated, predicted)
            pending = (sender.submit(client.import_serialised, project_id, batch.parts), batch)
            batch = _Batch()

        try:
            for key, systems, annotated, predicted, data in tasks:
                length = data.length if isinstance(data, FilePart) else len(data)
                if batch.tasks and (len(batch.tasks) >= batch_size or batch.size + length > MAX_REQUEST_BYTES):
                    submit()
                batch.parts.append(data)
                batch.tasks.append((key, systems, annotated, predicted))
                batch.size += length + 1
            if batch.tasks:
                submit()
            settle()
        finally:
            if pending is not None:  # an error while gathering: still record the batch in flight
                with contextlib.suppress(Exception):
                    settle()


def write_task_file(
    definition: Definition,
    inputs: Sequence[Path],
    output: Path,
    *,
    seed: int = 0,
    with_annotations: bool = False,
    predictions: Sequence[Path] = (),
    manifest_dir: Path | None = None,
    share: bool = False,
) -> tuple[int, int, list[str], tuple[int, int]]:
    """``annols tasks``: the same tasks as a push, as a Label Studio import file. ``share``: as ``push
    --share-identical`` (:func:`sharing`), the shares in the manifest's rows and its header.

    Returns (tasks, duplicates, warnings on the input, (outputs, tasks) shared by several systems)."""
    check_sharing(definition, share, with_annotations)
    found = scan(definition, inputs, share=share)
    if with_annotations:
        check_with_annotations(definition, inputs, found)
    preds = load_predictions(definition, predictions)
    systems_of: dict[str, tuple[int | None, tuple[str, ...]]] = {}
    shown: dict[str, Shown] = {}
    path = manifest_path(manifest_dir, output.stem) if manifest_dir is not None else None
    keys = (keys_of(path) if path is not None else None) or Keys.new()  # a file made again keeps its keys
    with files.atomic_open(output) as f:
        f.write("[")
        written = 0
        for key, systems, task, repeat in build_tasks(
            definition, inputs, seed=seed, with_annotations=with_annotations, predictions=preds, shown=shown, keys=keys,
            share=share,
        ):  # fmt: skip
            if repeat:
                continue
            f.write(("," if written else "") + "\n" + jsontext.dumps(task, ensure_ascii=False))
            written += 1
            systems_of[key] = (None, systems)
        f.write("\n]\n")
    if path is not None:
        header = {"protocol": definition.name, "variant": definition.variant, "tasks_file": str(output), "seed": seed,
                  **({"share_identical": True} if share else {})}  # fmt: skip
        write_manifest(path, header, systems_of, shown=found.shown_with_shares(shown), keys=keys)
    return len(found.keys), found.duplicates, found.warnings, found.sharing
