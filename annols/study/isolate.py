"""Isolated studies: one Label Studio per annotator, so the server itself keeps their work apart.

On Label Studio's community edition every account of an organization may read, change and
delete everything in it (docs/security.md). The boundary the server does enforce is the
instance: an annotator whose only account is on their own instance cannot see or touch
anything of another's. An isolated study gives each annotator such an instance (the embedded
server on its own port and data dir, or one app service each in docker-compose.isolate.yml)
and runs the usual push, pull and status on every one:

- ``push`` fans the study out: each instance gets the project (every task), the annotator's
  account (:func:`annols.labelstudio.users.add_accounts`) and a manifest of its own, under
  ``<manifest-dir>/<project>.isolated/<annotator>/``, with the study's one secret (the same
  keys and shown orders on every instance). ``<project>.isolated.json`` beside it
  records which instance holds which annotator (URL and project id, never a token).
  With ``--overlap K`` each task goes to K of the instances instead (:func:`draw`: seeded with
  the study's secret, balanced, an item's tasks together), and the study file records the
  draw (K, the seed, the annotators drawn over, each task key's annotators) before anything
  is sent: a re-push sends each task to the same annotators, and refuses another K or seed
  or another set of annotators.
  With ``--judge`` the judges are checked as a shared push checks them and kept once for the
  study, in the judge store beside the study file (:mod:`annols.study.hidden_judges`), never
  sent to an instance; with ``--human-share`` only the drawn items go to the instances (the
  K-draw, if any, runs over them), the draw recorded in the study file as ``hybrid``.
- ``pull`` pulls each instance into ``<out>/instances/<annotator>/`` (an ordinary pull
  folder: its counts checked against that server, its findings against that manifest), adds
  a finding for every annotation on an instance credited to anyone but its annotator
  (``not-the-annotator``), and merges the instances into ``<out>`` as one study: tasks by
  key, annotators by email, so that convert and report read it as they read a shared pull
  (its overlap: the number of instances, or K), with the study's hidden judges added as a
  shared pull adds them (the instances' own folders get none).
- ``status`` sums the instances' statuses (with ``--overlap K``: a task once, against K judgments).

Each of them first checks that every instance answers (:func:`reached`): one that does not
(or refuses its token) fails the command in one line naming its annotator and where it is,
before anything is read, sent or written, so that a push is not half fanned out and a pull
leaves the earlier pull folder, its merged files and every instance's folder, as they were.

Then they visit up to ``jobs`` instances at once (:func:`in_order`; ``--jobs``, by default all of them up
to :data:`DEFAULT_JOBS`): each instance on a thread of its own with its own client, what is shared settled
before (the study's secret, push's draw and its record), and what they tell (notices, the study file's
lines) done on the calling thread in the instances' order. A failure is one error naming the first failed
instance in that order and how many others failed; the instances visited beside it finish (a pull updates
their own folders, never the merged files), those not yet visited are not.

Tokens never go into a file annols writes: the instances file names, per instance, either
the embedded server's data dir (the token is read from its own database) or the name of an
environment variable that holds it.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import json
import os
import queue
import random
import re
import shutil
import tempfile
import threading
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeVar

from annols import files
from annols.definition import Definition, design
from annols.errors import AnnolsError, InputError, OptionError, ServerError, Unreachable
from annols.jsonstream import iter_json_array
from annols.labelstudio import server
from annols.labelstudio.client import LabelStudioClient, connect
from annols.labelstudio.users import add_accounts, check_emails
from annols.study import findings as checks
from annols.study import hidden_judges
from annols.study import pull as pull_lib
from annols.study import push as push_lib
from annols.study import status as status_lib
from annols.study.exports import ANNOTATORS_FILE, EXPORT_FILE, PROJECT_FILE, load_blinding, write_blinding
from annols.study.hybrid import Draw, Judged, check_recorded, items_of
from annols.study.hybrid import keep as keep_judges
from annols.study.manifest import Keys, keys_of, manifest_path, rows_by_key

INSTANCES_DIR = "instances"  # in a merged pull folder: one ordinary pull folder per annotator
_TOKEN_KEYS = ("token", "api_key", "api-key", "key", "password")


@dataclass(frozen=True)
class Instance:
    """One annotator's Label Studio: where it is and where its token comes from (never the token)."""

    annotator: str
    url: str = ""
    data_dir: Path | None = None  # the embedded server's data dir: URL and token read from it
    api_key_env: str = ""  # else: the environment variable holding the instance's admin token

    @property
    def slug(self) -> str:
        return re.sub(r"[^A-Za-z0-9._@-]+", "-", self.annotator).strip("-") or "annotator"

    def connect(self, on_notice: Callable[[str], None] | None = None) -> LabelStudioClient:
        if self.data_dir is not None:
            return connect(None, None, self.data_dir, on_notice=on_notice)
        key = os.environ.get(self.api_key_env, "")
        if not key:
            raise ServerError(f"the instance of {self.annotator} ({self.url}) needs its API token in the environment "
                              f"variable {self.api_key_env}, which is not set")  # fmt: skip
        return connect(self.url, key, None, on_notice=on_notice)


def reached(instances: Sequence[Instance], nothing: str = "",
            on_notice: Callable[[str], None] | None = None) -> list[LabelStudioClient]:  # fmt: skip
    """A client of each instance, each seen to answer with its token: ServerError naming the annotator and where
    their instance is otherwise (``nothing``: what was therefore not done, said at the end)."""
    clients = []
    for instance in instances:
        where = instance.url or str(instance.data_dir)
        after = f"; {nothing}" if nothing else ""
        try:
            client = instance.connect(on_notice)
            client.whoami()
        except Unreachable as e:
            start = (f"start it (annols server start --data-dir {instance.data_dir})" if instance.data_dir is not None
                     else "start it, or correct its url in the instances file")  # fmt: skip
            raise ServerError(f"the instance of {instance.annotator} at {where} does not answer ({e.reason}): {start} "
                              f"and run the command again{after}") from None  # fmt: skip
        except ServerError as e:
            if instance.annotator in str(e):  # Instance.connect's own (no token in the environment): it names it
                raise
            raise ServerError(f"the instance of {instance.annotator} at {where}: {e}{after}") from None
        clients.append(client)
    return clients


def read_instances(path: Path) -> list[Instance]:
    """The instances of an isolated study, from a TOML file of ``[[instance]]`` tables.

    Each names ``annotator`` (an email) and either ``data_dir`` (an embedded server, as
    ``annols server start --annotator`` writes it) or ``url`` and ``api_key_env``. A token in
    the file is refused: the file is shared with the study, a token would let anyone in.
    """
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise InputError(path, "", "", f"cannot read it ({e.strerror or e})") from None
    except tomllib.TOMLDecodeError as e:
        raise InputError(path, "", "", f"not TOML ({e})") from None
    tables = raw.get("instance")
    if not isinstance(tables, list) or not tables:
        raise InputError(path, "", "instance", "no [[instance]] table: give one per annotator")
    instances = []
    for n, table in enumerate(tables, start=1):
        where = f"instance {n}"
        if not isinstance(table, dict):
            raise InputError(path, where, "", "not a table")
        secret = next((k for k in table if k.lower() in _TOKEN_KEYS), None)
        if secret is not None:
            raise InputError(path, where, secret, "tokens and passwords never go in this file: name the "
                             "environment variable that holds the token with api_key_env")  # fmt: skip
        unknown = sorted(set(table) - {"annotator", "url", "data_dir", "api_key_env"})
        if unknown:
            raise InputError(path, where, unknown[0], "unknown key (annotator, url, data_dir, api_key_env)")
        email = table.get("annotator")
        if not isinstance(email, str):
            raise InputError(path, where, "annotator", "missing: the annotator's email")
        try:
            (email,) = check_emails([email])
        except AnnolsError as e:
            raise InputError(path, where, "annotator", str(e)) from None
        data_dir = table.get("data_dir")
        url, env = str(table.get("url") or ""), str(table.get("api_key_env") or "")
        if data_dir is None and not (url and env):
            raise InputError(path, where, "data_dir", "give data_dir (an embedded server), or url and api_key_env")
        base = path.parent
        instances.append(Instance(email, url.rstrip("/"), None if data_dir is None else base / str(data_dir), env))
    emails = [i.annotator for i in instances]
    slugs = [i.slug for i in instances]
    for n, (email, slug) in enumerate(zip(emails, slugs, strict=True), start=1):
        if emails.index(email) != n - 1 or slugs.index(slug) != n - 1:
            raise InputError(path, f"instance {n}", "annotator", f"{email} has an instance already: one each")
    return instances


def write_instances(path: Path, instances: Sequence[Instance]) -> None:
    """The instances file (no token in it), written atomically."""
    lines = []
    for i in instances:
        lines.append("[[instance]]")
        lines.append(f"annotator = {json.dumps(i.annotator)}")
        if i.url:
            lines.append(f"url = {json.dumps(i.url)}")
        if i.data_dir is not None:
            lines.append(f"data_dir = {json.dumps(str(i.data_dir))}")
        if i.api_key_env:
            lines.append(f"api_key_env = {json.dumps(i.api_key_env)}")
        lines.append("")
    files.write_text(path, "\n".join(lines))


def start_local(base_dir: Path, annotators: Sequence[str], timeout: float = 240.0) -> list[tuple[Instance, bool]]:
    """One embedded server per annotator, each in ``base_dir/<annotator>`` on a free port (or found running)."""
    started = []
    for email in check_emails(annotators):
        instance = Instance(email)
        data_dir = (base_dir / instance.slug).expanduser().resolve()
        running = server.status(data_dir)
        state, already = server.start(data_dir, port=running.port if running else server.free_port(), timeout=timeout)
        started.append((replace(instance, url=state.url, data_dir=data_dir), already))
    return started


def study_file(manifest_dir: Path, title: str) -> Path:
    """``<manifest-dir>/<project>.isolated.json``: annotator -> instance URL, project id, manifest (no token)."""
    return manifest_path(manifest_dir, title).with_name(manifest_path(manifest_dir, title).name.removesuffix(
        ".manifest.jsonl") + ".isolated.json")  # fmt: skip


def instance_manifest_dir(manifest_dir: Path, title: str, instance: Instance) -> Path:
    return study_file(manifest_dir, title).with_suffix("") / instance.slug


@dataclass(frozen=True)
class InstancePush:
    instance: Instance
    url: str
    report: push_lib.PushReport
    account: str  # created / exists


def study_keys(instances: Sequence[Instance], manifest_dir: Path, title: str,
               secret: bytes | None = None) -> Keys:  # fmt: skip
    """The isolated study's keys: the first instance's manifest's that has a secret (and its placement scheme),
    else new ones (under ``secret`` if given). Every instance's tasks carry the same keys and, drawn from them,
    the same shown order and designs, which the merged pull's one blinding needs."""
    for instance in instances:
        keys = keys_of(manifest_path(instance_manifest_dir(manifest_dir, title, instance), title))
        if keys is not None and keys.secret is not None:
            return keys
    return Keys(secret) if secret is not None else Keys.new()


def push(
    instances: Sequence[Instance],
    definition: Definition,
    inputs: Sequence[Path],
    options: push_lib.PushOptions,
    passwords: Sequence[str] | None = None,
    on_notice: Callable[[str], None] | None = None,
    on_instance: Callable[[Instance, LabelStudioClient], None] | None = None,
    judged: Judged | None = None,
    jobs: int | None = None,
) -> list[InstancePush]:
    """:func:`push_study` with the study's keys (:func:`study_keys`; ``options.secret`` if given for a new
    study): the inputs read here (the K-draw's items, the judges' store) are designed as the instances' pushes
    design them, with the study's secret."""
    keys = study_keys(instances, options.manifest_dir, options.title, options.secret)
    with design.drawn_with(keys.design_secret()):
        return push_study(instances, definition, inputs, replace(options, secret=keys.secret), passwords,
                          on_notice, on_instance, judged, jobs)  # fmt: skip


def push_study(
    instances: Sequence[Instance],
    definition: Definition,
    inputs: Sequence[Path],
    options: push_lib.PushOptions,
    passwords: Sequence[str] | None = None,
    on_notice: Callable[[str], None] | None = None,
    on_instance: Callable[[Instance, LabelStudioClient], None] | None = None,
    judged: Judged | None = None,
    jobs: int | None = None,
) -> list[InstancePush]:
    """Push the study to every instance, then the annotator's account. Without ``options.overlap`` each
    annotator gets every task; with it (K), each task goes to K of the instances (:func:`draw`), recorded in
    the study file before anything is sent, so that a re-push sends each task to the same annotators.

    ``judged``: the study's hidden judges (:func:`annols.study.hybrid.judged`), sent to no instance: kept once
    for the study, in the judge store beside the study file, after every instance was pushed. With a human share
    only the drawn items go to the instances (with K, the K-draw runs over them); the draw is recorded in the
    study file before anything is sent, and a re-push with another share or seed, or none, is refused.

    Up to ``jobs`` instances at once (:func:`jobs_for`); ``on_notice`` and ``on_instance`` are called on this
    thread, in the instances' order. Safe to re-run: each instance's push is (its own manifest), and accounts
    that exist are kept.
    """
    if options.with_annotations:
        raise AnnolsError("--isolate pushes a study to be annotated: --with-annotations imports one already done")
    if options.overlap is not None and not 1 <= options.overlap <= len(instances):
        raise OptionError("--overlap", f"{options.overlap}: with --isolate each task goes to that many of the "
                          f"{len(instances)} instance(s), one annotator each: give 1 to {len(instances)}, or leave it "
                          "out to send every task to every instance")  # fmt: skip
    if passwords is not None and len(passwords) != len(instances):
        raise ValueError("one password per instance")
    path = study_file(options.manifest_dir, options.title)
    earlier = read_study(path)
    k = _sharing(path, earlier, options.overlap, options.seed, [i.annotator for i in instances])
    items = items_of(definition, inputs) if k is not None else {}  # read (and checked) before any server is asked
    hybrid = _judged_share(path, earlier, judged, options.title, options.manifest_dir)
    if hybrid is not None:
        humans = hybrid.humans
        items = {item: keys for item, keys in items.items() if humans.issuperset(keys)}  # K of the humans' items
        options = replace(options, only=humans)  # without K: the humans' items to every instance
    clients = reached(instances, "nothing was pushed", on_notice)  # every instance answers before anything is sent
    # A new study's secret is drawn here, not by the first instance's push: the draw needs it, and the instances
    # are pushed side by side (each would draw one of its own).
    secret = options.secret or _study_secret(instances, options.manifest_dir, options.title) or Keys.new().secret
    assert secret is not None
    share: dict[str, Any] = {} if hybrid is None else {"hybrid": hybrid.header}
    record: dict[str, Any] = {"project": options.title, "protocol": definition.name, "variant": definition.variant,
                              **share, "instances": []}  # fmt: skip
    assignment: dict[str, list[str]] | None = None
    if k is not None:
        assignment = draw(items, [i.annotator for i in instances], k, options.seed, secret,
                          (earlier or {}).get("assignment"))  # fmt: skip
        record = {"project": options.title, "protocol": definition.name, "variant": definition.variant,
                  "overlap": k, "seed": options.seed, "annotators": sorted(i.annotator for i in instances), **share,
                  "instances": (earlier or {}).get("instances") or [], "assignment": assignment}  # fmt: skip
        # Recorded before anything is sent: a push cut short resumes with the same draw.
        files.write_text(path, _dumps(record), private=True)
        record["instances"] = []
    elif hybrid is not None:  # the human share too: recorded before anything is sent
        files.write_text(path, _dumps({**record, "instances": (earlier or {}).get("instances") or []}), private=True)
    own = [replace(options, manifest_dir=instance_manifest_dir(options.manifest_dir, options.title, instance),
                   overlap=1, secret=secret,
                   only=options.only if assignment is None else frozenset(
                       key for key, who in assignment.items() if instance.annotator in who))
           for instance in instances]  # fmt: skip

    def record_instance(done: InstancePush, user_id: int) -> None:  # said: on this thread alone
        record["instances"].append({"annotator": done.instance.annotator, "url": done.url,
                                    "project_id": done.report.project.id, "user_id": user_id})  # fmt: skip
        # Written after each instance: a push cut short still says where the study went.
        files.write_text(path, _dumps(record), private=True)

    def push_one(n: int, say: Say) -> InstancePush:
        instance, client = instances[n], clients[n]
        _notices_said(client, on_notice, say)
        if on_instance is not None:
            say(functools.partial(on_instance, instance, client))
        report = push_lib.push(client, definition, inputs, own[n])
        (added,) = add_accounts(client, [instance.annotator], None if passwords is None else [passwords[n]])
        done = InstancePush(instance, client.url, report, "created" if added.created else "exists")
        say(functools.partial(record_instance, done, added.id))
        return done

    done = _each(instances, push_one, jobs)
    if judged is not None:  # kept once for the study, never sent: as a shared push keeps them once it is done
        keep_judges(definition, judged, inputs, hidden_judges.store_dir(options.manifest_dir, options.title), None,
                    options.title)  # fmt: skip
    return done


def _judged_share(path: Path, earlier: dict[str, Any] | None, judged: Judged | None, title: str,
                  manifest_dir: Path) -> Draw | None:  # fmt: skip
    """The human share of this push (None: every item to the instances), refused where it would change the
    study's recorded one; a judge store of another study (a shared project of the same title) refused too."""
    found = judged.draw if judged is not None else None
    check_recorded(path, (earlier or {}).get("hybrid"), found.header if found is not None else None,
                   bool((earlier or {}).get("instances")))  # fmt: skip
    if judged is not None:
        hidden_judges.stored(hidden_judges.store_dir(manifest_dir, title), None, title)
    return found


def read_study(path: Path) -> dict[str, Any] | None:
    """The study file (:func:`study_file`), None if there is none yet; InputError if it is not one."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except OSError as e:
        raise InputError(path, "", "", f"cannot read it ({e.strerror or e})") from None
    try:
        record = json.loads(text)
    except ValueError as e:
        raise InputError(path, "", "", f"not JSON ({e}): the isolated study's record is damaged") from None
    if not isinstance(record, dict) or not isinstance(record.get("instances"), list):
        raise InputError(path, "", "instances", "missing: not an isolated study's record")
    return record


def recorded_overlap(manifest_dir: Path, title: str) -> int | None:
    """K of a study whose tasks went to K of its instances each (``push --isolate --overlap K``); None for a
    study whose every task went to every instance (or none pushed from here)."""
    record = read_study(study_file(manifest_dir, title))
    overlap = (record or {}).get("overlap")
    return int(overlap) if overlap is not None else None


def _sharing(path: Path, earlier: dict[str, Any] | None, overlap: int | None, seed: int,
             annotators: Sequence[str]) -> int | None:  # fmt: skip
    """The K of this push (None: every task to every instance), refused where it would change an earlier draw."""
    if earlier is None or not (earlier.get("instances") or "overlap" in earlier):
        return overlap  # a new study
    if "overlap" not in earlier:
        if overlap is not None:
            raise OptionError("--overlap", f"{path}: the study went to every instance (pushed without --overlap); "
                              "leave out --overlap, or push the study to a new project")  # fmt: skip
        return None
    k, drawn_seed = int(earlier["overlap"]), int(earlier.get("seed", 0))
    if (overlap or k, seed) != (k, drawn_seed):
        raise OptionError("--overlap", f"{path}: the study's tasks were drawn with --overlap {k} --seed {drawn_seed}; "
                          f"this push asks for --overlap {overlap or k} --seed {seed}: push with the recorded ones, or "
                          "the study to a new project")  # fmt: skip
    drawn = set(earlier.get("annotators") or ())
    new = sorted(set(annotators) - drawn)
    if new:
        # Its share would be of new tasks only: the study's balance and each item's K annotators drawn from one
        # pool would not hold. Tasks drawn stay with their annotators.
        raise AnnolsError(f"{path}: the study's tasks were drawn over {', '.join(sorted(drawn))}; {new[0]} was "
                          "not among them: an annotator who joins later gets a study of their own (another "
                          "--project)")  # fmt: skip
    gone = sorted(drawn - set(annotators))
    if gone:
        raise AnnolsError(f"{path}: the study's tasks were drawn over {', '.join(sorted(drawn))}; the instance "
                          f"of {gone[0]} is missing from the instances file: give every instance the study went "
                          "to")  # fmt: skip
    return k


def draw(items: dict[str, list[str]], annotators: Sequence[str], k: int, seed: int, secret: bytes,
         earlier: dict[str, list[str]] | None = None) -> dict[str, list[str]]:  # fmt: skip
    """Task key -> the ``k`` annotators it goes to, for every task of ``items`` (item -> its task keys) and of
    ``earlier`` (an earlier push's draw, kept as it is).

    An item goes whole to the same annotators (best-worst: an article's tuples; spans: a source's candidates),
    also a task added later to an item drawn before. The items not drawn before are taken in a random order
    (largest first) drawn from ``seed`` and the study's ``secret`` (from the seed alone, who else judges a task
    could be worked out), each to the ``k`` annotators with the fewest tasks so far (ties broken at random): an
    annotator's tasks differ from another's by at most the tasks of the largest item, one where an item is one
    task. Annotators are taken by name, so the order of the instances file does not matter.
    """
    pool = sorted(annotators)
    out = {key: list(who) for key, who in (earlier or {}).items()}
    load = dict.fromkeys(pool, 0)
    for who in out.values():
        for a in who:
            load[a] = load.get(a, 0) + 1
    fresh = []
    for item in sorted(items):
        held = next((out[key] for key in items[item] if key in out), None)
        if held is None:
            fresh.append(item)
            continue
        for key in items[item]:
            if key not in out:
                out[key] = list(held)
                for a in held:
                    load[a] = load.get(a, 0) + 1
    rng = random.Random(hmac.new(secret, f"isolate\0{seed}".encode(), hashlib.sha256).hexdigest())
    rng.shuffle(fresh)
    fresh.sort(key=lambda item: -len(items[item]))  # stable: the shuffled order among items of one size
    for item in fresh:
        chosen = sorted(sorted(pool, key=lambda a: (load[a], rng.random()))[:k])
        for key in items[item]:
            out[key] = chosen
        for a in chosen:
            load[a] += len(items[item])
    return out


def _dumps(record: dict[str, Any]) -> str:
    """The study file's text: indented, but a task's annotators on the task's one line."""
    assignment = record.get("assignment")
    if assignment is None:
        return json.dumps(record, indent=2) + "\n"
    head = json.dumps({k: v for k, v in record.items() if k != "assignment"}, indent=2)
    rows = ",\n".join(f"    {json.dumps(key)}: {json.dumps(who)}" for key, who in assignment.items())
    return head.removesuffix("\n}") + ',\n  "assignment": {' + (f"\n{rows}\n  " if rows else "") + "}\n}\n"


def _study_secret(instances: Sequence[Instance], manifest_dir: Path, title: str) -> bytes | None:
    """The secret of the first instance's manifest that has one: every instance's tasks then carry the
    same keys and, drawn from them, the same shown order, which the merged pull's one blinding needs."""
    for instance in instances:
        keys = keys_of(manifest_path(instance_manifest_dir(manifest_dir, title, instance), title))
        if keys is not None and keys.secret is not None:
            return keys.secret
    return None


# --- pull ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class InstancePull:
    instance: Instance
    report: pull_lib.PullReport


@dataclass(frozen=True)
class IsolatedPull:
    instances: list[InstancePull]
    convert: pull_lib.ConvertReport
    findings: list[checks.Finding] = field(default_factory=list)  # every instance's, each naming its annotator


def pull(
    instances: Sequence[Instance],
    definition: Definition,
    title: str,
    out_dir: Path,
    manifest_dir: Path,
    *,
    full: bool = False,
    strict: bool = False,
    on_notice: Callable[[str], None] | None = None,
    jobs: int | None = None,
) -> IsolatedPull:
    """Pull every instance into ``out_dir/instances/<annotator>``, then merge them into ``out_dir``.

    The merged files are staged beside ``out_dir`` and moved in only when every instance was
    pulled and merged: a failed pull leaves them as they were (an instance pulled before the
    failure, or beside it, has its own folder updated, as any pull of it would). With ``strict``
    any finding fails before the merged files are written. Up to ``jobs`` instances are pulled
    at once (:func:`jobs_for`), ``on_notice`` called on this thread in the instances' order.

    The study's hidden judges (``push --isolate --judge``, kept beside the study file) are added to the merged
    files as a shared pull adds a project's, and copied to ``out_dir/judges``; no instance's folder gets them.
    """
    out_dir = Path(out_dir)
    kept = pull_lib.stored_judges(definition, hidden_judges.store_dir(manifest_dir, title), None, title)
    clients = reached(instances, "nothing was pulled", on_notice)  # else an earlier instance's folder would move on
    at_once = jobs_for(instances, jobs)

    def pull_one(n: int, say: Say) -> InstancePull:
        instance, client = instances[n], clients[n]
        _notices_said(client, on_notice, say)
        manifest = manifest_path(instance_manifest_dir(manifest_dir, title, instance), title)
        folder = out_dir / INSTANCES_DIR / instance.slug
        # Side by side, a large export is converted in this thread alone: the parts' processes are forked.
        one = pull_lib.pull(client, definition, title, folder, full=full, manifest=manifest, strict=strict,
                            annotator=instance.annotator, workers=None if at_once == 1 else 1)  # fmt: skip
        return InstancePull(instance, one)

    pulled = _each(instances, pull_one, at_once)
    found = [replace(f, detail=f"on {p.instance.annotator}'s instance: {f.detail}")
             for p in pulled for f in p.report.findings]  # fmt: skip
    try:
        out_dir.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.annols-merge-", dir=out_dir.parent))
    except OSError as e:
        raise AnnolsError(f"cannot write {out_dir}: {e.strerror or e}") from e
    try:
        users = _merge(pulled, staging, definition, title, recorded_overlap(manifest_dir, title))
        report = pull_lib.convert(staging / EXPORT_FILE, definition, staging, users,
                                  judges=kept.judges if kept is not None else None)  # fmt: skip
        if kept is not None:
            report.files.extend(pull_lib.add_stored_judges(kept, found, staging))
        checks.write(found, staging / checks.FINDINGS_FILE)
        pull_lib._move_in(staging, out_dir)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    moved = [out_dir / p.relative_to(staging) for p in report.files]
    return IsolatedPull(pulled, replace(report, files=moved), found)


def _merge(pulled: Sequence[InstancePull], staging: Path, definition: Definition, title: str,
           overlap: int | None = None) -> dict[int, str]:  # fmt: skip
    """One export of the study from the instances' pull folders: each task once (by key, with the id it has on
    the first instance that holds it), with every instance's annotations; users and annotations numbered anew
    (ids are per instance), each annotation keeping its instance and id there. ``overlap``: the K of a study whose
    tasks went to K instances each (None: every task to every instance). Returns the merged users."""
    tasks: dict[str, dict[str, Any]] = {}
    rows: dict[str, dict[str, Any]] = {}
    emails: dict[str, int] = {}
    annotation_id = 0
    for p in pulled:
        folder = p.report.export.parent
        users = pull_lib.load_annotators(folder / EXPORT_FILE)
        blind = load_blinding(folder / EXPORT_FILE) or {}
        with open(folder / EXPORT_FILE, encoding="utf-8") as f:
            for raw in iter_json_array(f):
                row = blind.get(int(raw["id"]))
                key = str(row["key"]) if row else str((raw.get("meta") or {}).get("annols_key") or "")
                if not key:
                    continue  # a task the push did not make: a finding of that instance's pull, not part of the study
                merged = tasks.setdefault(key, {**raw, "annotations": [], "drafts": [], "predictions": []})
                if row and key not in rows:
                    rows[key] = row
                elif row and key in rows and row.get("systems") != rows[key].get("systems"):
                    # One blinding serves the merged tasks: an answer given in another order would be
                    # credited to the wrong system. Instances pushed with secrets of their own differ so.
                    raise AnnolsError(f"{folder / EXPORT_FILE}: task {raw['id']} (key {key}) shows its systems in "
                                      f"another order on {p.instance.annotator}'s instance than on another: the "
                                      "instances were pushed as different studies and cannot be merged; push "
                                      "the study again to new instances")  # fmt: skip
                for a in raw.get("annotations") or ():
                    who = checks.user_id(a.get("completed_by"))
                    email = users.get(who, f"user-{who}") if who is not None else "unknown"
                    if email.lower() != p.instance.annotator:
                        continue  # a not-the-annotator finding: kept out of the study's tables
                    annotation_id += 1
                    uid = emails.setdefault(email, len(emails) + 1)
                    merged["annotations"].append({**a, "id": annotation_id, "completed_by": uid,
                                                  "updated_by": uid, "annols_instance": p.instance.annotator,
                                                  "annols_instance_annotation": a.get("id")})  # fmt: skip
    # Task ids: the first instance's; one taken already (a task only a later instance holds) gets a new one.
    used: set[int] = set()
    order = []
    for key, task in tasks.items():
        if int(task["id"]) in used:
            task["id"] = max(used | {int(t["id"]) for t in tasks.values()}) + 1
        used.add(int(task["id"]))
        if key in rows:
            rows[key] = {**rows[key], "task_id": int(task["id"])}
        order.append(task)
    order.sort(key=lambda t: int(t["id"]))
    with files.atomic_open(staging / EXPORT_FILE) as f:
        f.write("[")
        for n, task in enumerate(order):
            f.write(("," if n else "") + "\n" + json.dumps(task, ensure_ascii=False))
        f.write("\n]\n")
    if rows:
        write_blinding(staging, rows.values())
    users_merged = {uid: email for email, uid in emails.items()}
    files.write_text(staging / ANNOTATORS_FILE, json.dumps({str(k): v for k, v in sorted(users_merged.items())},
                                                           indent=2))  # fmt: skip
    project = {
        "title": title,
        "protocol": definition.name,
        "variant": definition.variant,
        "overlap": len(pulled) if overlap is None else overlap,  # annotators asked for each task
        "isolated": [{"annotator": p.instance.annotator, "url": _project_url(p)} for p in pulled],
    }
    files.write_text(staging / PROJECT_FILE, json.dumps(project, indent=2, ensure_ascii=False) + "\n")
    return users_merged


def _project_url(p: InstancePull) -> str:
    try:
        settings = json.loads((p.report.export.parent / PROJECT_FILE).read_text(encoding="utf-8"))
        return f"{settings['url']}/projects/{settings['id']}"
    except (OSError, ValueError, KeyError):
        return ""


# --- status ----------------------------------------------------------------------------------


def status(
    instances: Sequence[Instance],
    definition: Definition,
    title: str,
    on_notice: Callable[[str], None] | None = None,
    manifest_dir: Path = Path(".annols"),
    jobs: int | None = None,
) -> status_lib.Status:
    """The instances' statuses summed. A study whose every task went to every instance: tasks, complete and
    short count each instance's copy of a task (each with an overlap of one). One whose tasks went to K
    instances each (``push --isolate --overlap K``): a task counts once, the overlap is K, and a task is
    complete when every instance it went to holds its judgment (:func:`_short_tasks`). Up to ``jobs``
    instances are asked at once (:func:`jobs_for`)."""
    clients = reached(instances, "", on_notice)
    k = recorded_overlap(manifest_dir, title)

    def status_one(n: int, say: Say) -> tuple[status_lib.Status, list[int]]:
        """The instance's status and, in a study of K instances a task, its unjudged tasks' ids (where it has
        any: listed only then)."""
        _notices_said(clients[n], on_notice, say)
        one = status_lib.status(clients[n], definition, title)
        if k is None or not one.short:
            return one, []
        unjudged = [status_lib._number("total_annotations", "less", 1)]
        return one, [int(t["id"]) for t in clients[n].task_fields(one.project_id, "id", filters=unjudged)]

    asked = _each(instances, status_one, jobs)
    found = [one for one, _ in asked]
    first = found[0]
    paces = [s.pace for s in found]
    missing = sum(s.missing for s in found)
    pace = round(sum(paces), 2)
    etas = [s.eta for s in found if s.missing]
    overlap, tasks, short = max(s.overlap for s in found), sum(s.tasks for s in found), sum(s.short for s in found)
    if k is not None:
        overlap = k
        tasks, short = _short_tasks(instances, asked, manifest_dir, title)
    return replace(
        first,
        project=title,
        project_id=0,
        url="",
        instances=[f"{i.annotator}: {s.url}/projects/{s.project_id}" for i, s in zip(instances, found, strict=True)],
        overlap=overlap,
        tasks=tasks,
        annotations=sum(s.annotations for s in found),
        skipped=sum(s.skipped for s in found),
        complete=tasks - short,
        short=short,
        missing=missing,
        per_hour=[sum(h) for h in zip(*(s.per_hour for s in found), strict=True)],
        per_hour_counts="tasks" if any(s.per_hour_counts == "tasks" for s in found) else "annotations",
        pace=pace,
        # Reached when the slowest instance reaches it; None if any instance never will.
        eta=None if not missing or any(e is None for e in etas) else max(e for e in etas if e is not None),
        annotators=[a for s in found for a in s.annotators],
        exported=sum(s.exported for s in found),
        listed=sum(s.listed for s in found),
    )


def _short_tasks(instances: Sequence[Instance], asked: Sequence[tuple[status_lib.Status, list[int]]],
                 manifest_dir: Path, title: str) -> tuple[int, int]:  # fmt: skip
    """(tasks, tasks short) of a study whose tasks went to some instances each: a task by its key (the instances'
    manifests say which task is which), short when any instance it went to lacks its judgment. ``asked``: each
    instance's status and the ids of its unjudged tasks."""
    keys: set[str] = set()
    short: set[str] = set()
    for instance, (one, unjudged) in zip(instances, asked, strict=True):
        path = manifest_path(instance_manifest_dir(manifest_dir, title, instance), title)
        rows = rows_by_key(path)
        if not rows and one.tasks:
            raise AnnolsError(f"{path}: no manifest of {instance.annotator}'s instance, which says which of its "
                              "tasks is which: run status where the study was pushed (--manifest-dir)")  # fmt: skip
        keys.update(rows)
        by_id = {int(r["task_id"]): key for key, r in rows.items() if r.get("task_id") is not None}
        # A task the push did not make is a task of its own.
        short.update(by_id.get(task_id, f"{instance.annotator}:{task_id}") for task_id in unjudged)
    return len(keys | short), len(short)


# --- instances side by side -----------------------------------------------------------------

# Instances visited at once unless told otherwise: each is a server of its own, and a visit is mostly
# waiting on it; more at once mostly adds load to the machine the servers share.
DEFAULT_JOBS = 4
T = TypeVar("T")
Say = Callable[[Callable[[], object]], None]


class Failed(Exception):
    """What :func:`in_order` raises: the first of its work, in input order, that failed (``index``,
    ``error``), and the indexes of every one that failed."""

    def __init__(self, index: int, error: BaseException, failed: Sequence[int]) -> None:
        super().__init__(f"work {index} failed ({type(error).__name__})")
        self.index = index
        self.error = error
        self.failed = list(failed)


def in_order(work: Sequence[Callable[[Say], T]], jobs: int) -> list[T]:
    """Call each of ``work`` on up to ``jobs`` threads at once, started in input order; their results, in input
    order.

    Each is called with ``say``: a callable given to it is called on the calling thread, in input order, as if
    the work had run one after another: the first unfinished work's as they come, a later one's once every
    earlier one has ended. What they print or write through it thus comes out in one order, whichever ends
    first. The work must not share anything it writes.

    When one fails (or a callable it said), no more work is started and the started ends (its ``say`` still
    called); then :class:`Failed` names the first failure in input order. With ``jobs`` 1 the work runs on the
    calling thread, one after another, up to the first failure. Interrupted (Ctrl-C), it returns at once: the
    threads are daemons, a work they run ends with the process, as one killed.
    """
    if jobs <= 1 or len(work) <= 1:

        def now(call: Callable[[], object]) -> None:
            call()

        results = []
        for n, one in enumerate(work):
            try:
                results.append(one(now))
            except Exception as e:
                raise Failed(n, e, [n]) from e
        return results
    said: queue.SimpleQueue[tuple[int, Callable[[], object] | None]] = queue.SimpleQueue()  # None: ended
    results_at: dict[int, T] = {}
    errors: dict[int, BaseException] = {}
    ended = [False] * len(work)
    lock = threading.Lock()
    started = 0  # the work is started in input order: these have been
    stopped = False  # after a failure: nothing more is started

    def say_for(n: int) -> Say:
        return lambda call: said.put((n, call))

    def run() -> None:
        nonlocal started
        while True:
            with lock:
                if stopped or started == len(work):
                    return
                n = started
                started += 1
            try:
                results_at[n] = work[n](say_for(n))
            except BaseException as e:  # told by the calling thread, once every work has ended
                errors[n] = e
            finally:
                said.put((n, None))

    def stop(n: int, e: BaseException) -> None:
        nonlocal stopped
        errors.setdefault(n, e)
        with lock:
            stopped = True
            for m in range(started, len(work)):  # never started: nothing to wait for
                ended[m] = True

    def call(n: int, said_call: Callable[[], object]) -> None:
        try:
            said_call()
        except Exception as e:  # what a work said failed (a file it writes): that work failed
            stop(n, e)

    threads = [threading.Thread(target=run, name=f"annols-instance-{t}", daemon=True)
               for t in range(min(jobs, len(work)))]  # fmt: skip
    waiting: list[list[Callable[[], object]]] = [[] for _ in work]
    head = 0  # the first work not ended: what it says is called at once
    try:
        for thread in threads:
            thread.start()
        while head < len(work):
            n, said_call = said.get()
            if said_call is not None:
                if n == head:
                    call(n, said_call)
                else:
                    waiting[n].append(said_call)
                continue
            ended[n] = True
            if n in errors:
                stop(n, errors[n])
            while head < len(work) and ended[head]:
                head += 1
                if head < len(work):  # what the next work said while an earlier one ran
                    for said_call in waiting[head]:
                        call(head, said_call)
                    waiting[head].clear()
    except BaseException:
        with lock:
            stopped = True
        raise
    for thread in threads:
        thread.join()  # each has ended its last work: they only return now
    if errors:
        first = min(errors)
        raise Failed(first, errors[first], sorted(errors)) from errors[first]
    return [results_at[n] for n in range(len(work))]


def jobs_for(instances: Sequence[Instance], jobs: int | None) -> int:
    """How many instances are visited at once: ``jobs`` (``--jobs``), by default all of them up to DEFAULT_JOBS."""
    if jobs is None:
        return max(1, min(len(instances), DEFAULT_JOBS))
    if jobs < 1:
        raise OptionError("--jobs", f"{jobs}: give the number of instances to visit at once, 1 or more")
    return jobs


def _each(instances: Sequence[Instance], work: Callable[[int, Say], T], jobs: int | None) -> list[T]:
    """``work(n, say)`` for every instance ``n`` (:func:`in_order`), up to ``jobs`` at once; a failure as one
    error naming the instance's annotator (the first in the file's order, and how many others failed)."""
    try:
        return in_order([functools.partial(work, n) for n in range(len(instances))], jobs_for(instances, jobs))
    except Failed as failed:
        e = failed.error
        if not isinstance(e, AnnolsError):
            raise e from None  # a bug: as it came, for ANNOLS_DEBUG's traceback
        others = [instances[n].annotator for n in failed.failed if n != failed.index]
        also = f" ({len(others)} other instance(s) failed too: {', '.join(others)})" if others else ""
        first, _, rest = str(e).partition("\n")  # a multi-line error (pull --strict's findings): named first
        text = f"the instance of {instances[failed.index].annotator}{also}: {first}" + (f"\n{rest}" if rest else "")
        raise (ServerError if isinstance(e, ServerError) else AnnolsError)(text) from e


def _notices_said(client: LabelStudioClient, on_notice: Callable[[str], None] | None, say: Say) -> None:
    """The client's notices (retries, a busy server) told through ``say``: in the instances' order."""
    if on_notice is not None:
        client.on_notice = lambda line: say(functools.partial(on_notice, line))
