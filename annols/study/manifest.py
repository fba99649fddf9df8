"""The coordinator's manifest: what blinding depends on, kept off the server.

Push writes ``<manifest dir>/<project>.manifest.jsonl``: a header (protocol, project, server,
seed) and one row per task: its key, its task id, the systems shown in position order, the
order they were placed in, its role (study item, gold item, attention check) and a digest of
the meta push sent, and what the reader tolerated in its input. The server holds none of
that but the key: every task's meta is ``{"annols_key": ...}``, whatever its role. Pull
unblinds from the manifest and checks the server against it (:mod:`annols.study.findings`).

The manifest is a secret of the study: whoever holds it can unblind every task. Team-mates
who pull from another machine get it with ``annols manifest export`` / ``import``. A study in
rounds (``annols next-round``) keeps its record beside the manifest, ``<project>.rounds.jsonl``;
the export carries it too (the manifest's lines as they are, then a line ``{"annols_rounds": N}``
and the record's N lines), so that a team-mate's next round continues the same record instead of
starting another (a new alpha split, a new round 1).

Manifests written before this (systems, order and a role tag in the task meta; rows without
``order``, ``role`` or ``meta``) are still read: what a row lacks is read from the meta.

A task's key (the ``key`` of its row, and of the result files) is a digest of its content,
which for some styles covers the systems: on the server it would let an annotator check a
guess. So the key the server holds (the row's ``sent``) is an HMAC of it under a secret of
the study, made at the first push and kept in the header (``version`` 2, ``secret``), never
on the server (:class:`Keys`). A manifest without a secret (version 1) is of a study pushed
before that, whose tasks carry their key itself: it is pushed to and pulled as it was.

A row's ``extra`` is what a format keeps off the server but wants back at pull
(extractive-ranking's original cells, whose column order would undo the shuffle).
"""

from __future__ import annotations

import hashlib
import hmac
import io
import json
import random
import re
import secrets
from collections.abc import Collection, Iterable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from annols import files, jsontext
from annols.errors import AnnolsError, InputError
from annols.study import roles

SUFFIX = ".manifest.jsonl"
ROUNDS_SUFFIX = ".rounds.jsonl"  # the record of a study in rounds, beside the manifest (annols.study.rounds)
ROUNDS_MARK = "annols_rounds"  # in an exported manifest: the line {"annols_rounds": N} before the record's N lines
VERSION = 2  # 2: the server's keys are HMACs under the header's secret; before (no version), the keys themselves
# How a study's placements are drawn (the header's ``placement``): 2, with the study's secret (designs, gold and
# attention positions, the order tasks are created in); absent (1), from the seed and the content alone, as
# studies pushed before were: those keep it, so that they resume as they were.
PLACEMENT = 2


class Keys:
    """The key a task carries on the server (its ``annols_key``): the HMAC-SHA256 of its key under
    the study's secret, or, for a study pushed before manifests kept one (``secret`` None), its key."""

    def __init__(self, secret: bytes | None, placement: int = PLACEMENT) -> None:
        self.secret = secret
        # Without a secret nothing is drawn with one: such a study places as it always did.
        self.placement = placement if secret is not None else 1
        self.foreign: set[str] = set()  # keys listed on the server that no known task's key gives: kept as they are
        # Keyed once, copied per task: a third of the cost of hmac.new for each of a push's keys.
        self._mac = hmac.new(secret or b"", digestmod=hashlib.sha256)
        self._shuffle = self._mac.copy()
        self._shuffle.update(b"shuffle\0")

    @classmethod
    def new(cls) -> Keys:
        return cls(secrets.token_bytes(32))

    def sent(self, key: str) -> str:
        if self.secret is None or key in self.foreign:
            return key
        # The shape of a content key, "<protocol>:" and 20 hex digits (80 bits), so the protocol
        # a task was pushed as is still read from its key (pull.protocol_of), and every task of
        # a study, whatever its role, carries a key of one length.
        prefix = key.rsplit(":", 1)[0] + ":" if ":" in key else ""
        mac = self._mac.copy()
        mac.update(key.encode("utf-8"))
        return prefix + mac.hexdigest()[:20]

    def shuffle(self, key: str) -> str:
        """What a task's shuffle is drawn from (with the seed): not its key on the server, which
        annotators see, but another HMAC under the secret; an older study's key itself."""
        if self.secret is None:
            return key
        mac = self._shuffle.copy()
        mac.update(key.encode("utf-8"))
        return mac.hexdigest()

    def design_secret(self) -> bytes | None:
        """What a study's designs (groups, best-worst tuples) are drawn with
        (:func:`annols.definition.design.drawn_with`); None for a study that draws them from its content."""
        if self.secret is None or self.placement < 2:
            return None
        return hmac.new(self.secret, b"design\0", hashlib.sha256).digest()

    def rng(self, label: str) -> random.Random | None:
        """A generator seeded with an HMAC of ``label`` under the secret, for a placement no one without the
        secret can reproduce; None for a study that draws its placements from the seed alone."""
        if self.secret is None or self.placement < 2:
            return None
        return random.Random(hmac.new(self.secret, b"placement\0" + label.encode("utf-8"), hashlib.sha256).digest())

    def reverse(self, keys: Iterable[str]) -> dict[str, str]:
        """Server key -> key, of ``keys`` (empty when they are the same)."""
        return {} if self.secret is None else {self.sent(k): k for k in keys}

    def header(self) -> dict[str, Any]:
        """What the manifest's header says of the keys (nothing for a study pushed before they had a secret)."""
        if self.secret is None:
            return {}
        return {"version": VERSION, "secret": self.secret.hex(), **({"placement": 2} if self.placement >= 2 else {})}


class NoManifest(AnnolsError):
    """A command that reads a study without its manifest, which alone says which system is shown where and which
    tasks are gold items or attention checks: refused, in one line (``where``: which manifest is missing)."""

    def __init__(self, where: str, blind: bool = True) -> None:
        also = ", or pull with --blind-only for results without systems" if blind else ""
        super().__init__(f"{where}: it alone says which system is shown where and which tasks are gold items or "
                         f"attention checks; import it with `annols manifest import FILE`{also}")  # fmt: skip


def require(path: Path, title: str, blind: bool = False) -> Path:
    """``path`` if the manifest of study ``title`` is there, else :class:`NoManifest` (``blind``: it names
    pull's --blind-only)."""
    if read_header(path) is None:
        raise NoManifest(f"no manifest of project {title!r} ({path})", blind)
    return path


def keys_of(path: Path) -> Keys | None:
    """The keys of the manifest at ``path``; None if there is none (or it is not one): a study not yet pushed.
    A header without a secret is of a study pushed before keys had one."""
    header = read_header(path)
    if header is None:
        return None
    secret = header.get("secret")
    if secret is None:
        return Keys(None)
    placement = header.get("placement", 1)
    if not isinstance(placement, int) or placement not in (1, PLACEMENT):
        raise InputError(path, "line 1", "placement", f"{placement!r} is not a placement scheme this annols knows "
                         f"(1 or {PLACEMENT}): the manifest is damaged, or written by a newer annols")  # fmt: skip
    try:
        return Keys(bytes.fromhex(secret), placement)
    except (TypeError, ValueError):  # taken for an older study, its keys would match none on the server
        raise InputError(path, "line 1", "secret", "not a study's secret (hex digits): the manifest is damaged; "
                         "import it again from where the study was pushed") from None


def read_header(path: Path) -> dict[str, Any] | None:
    """The header of the manifest at ``path`` alone (None if there is none, or it is not one)."""
    try:
        with open(path, encoding="utf-8") as f:
            header = json.loads(f.readline())
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    return header if isinstance(header, dict) and "protocol" in header else None


def server_key(row: Mapping[str, Any]) -> str:
    """The key a manifest (or blinding.jsonl) row's task carries on the server."""
    return str(row.get("sent", row["key"]))


class Shown(NamedTuple):
    """What push did with one task that only the manifest keeps."""

    systems: tuple[str, ...]  # shown, in position order
    order: list[int]  # position i shows input candidate order[i]; empty when nothing is blinded
    role: str
    meta: str  # digest of the meta sent (meta_digest)
    warnings: tuple[str, ...] = ()  # what the reader tolerated in the task's input (file, line)
    extra: Mapping[str, Any] | None = None  # what the format wants back at pull, kept off the server
    data: str = ""  # digest of the data sent (data_digest); empty for a study pushed before placement 2
    # push --share-identical: the systems of each record that produced the task's texts (one tuple each), when
    # more than one did; the task is credited to each
    shares: tuple[tuple[str, ...], ...] = ()


DATA_DIGEST = 8  # bytes: 16 hex digits a row, enough to tell a change; a study of 100,000 tasks ~2.5 MB more


def data_digest(data: Mapping[str, Any]) -> str:
    """A short digest of a task's data as push sent it, to tell at pull whether anyone changed what annotators
    are shown (its keys in any order: the server may return them so)."""
    canonical = json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.blake2b(canonical.encode("utf-8"), digest_size=DATA_DIGEST).hexdigest()


def config_digest(label_config: str) -> str:
    """A digest of a label config, blanks between tags left out (as push compares configs)."""
    normal = re.sub(r">\s+<", "><", label_config.strip())
    return hashlib.blake2b(normal.encode("utf-8"), digest_size=12).hexdigest()


def meta_digest(meta: Mapping[str, Any]) -> str:
    """A digest of a task's meta, to tell at pull whether anyone changed it on the server."""
    canonical = json.dumps(meta, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.blake2b(canonical.encode("utf-8"), digest_size=12).hexdigest()


def manifest_path(manifest_dir: Path, title: str) -> Path:
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", title).strip("-") or "project"
    return manifest_dir / f"{slug}{SUFFIX}"


def rounds_path(manifest_dir: Path, title: str) -> Path:
    """``<project>.rounds.jsonl`` beside the project's manifest: the record ``annols next-round`` keeps."""
    return manifest_path(manifest_dir, title).with_name(manifest_path(manifest_dir, title).name.removesuffix(SUFFIX)
                                                        + ROUNDS_SUFFIX)  # fmt: skip


def round_rows(source: Path, lines: Iterable[str], first: int = 1) -> list[dict[str, Any]]:
    """The rounds of a record's lines (``first``: the number of the first line in ``source``); InputError naming
    the line if one is not a round."""
    out = []
    for n, line in enumerate(lines, start=first):
        try:
            row = json.loads(line)
        except ValueError:
            row = None
        if not isinstance(row, dict) or not isinstance(row.get("round"), int):
            raise InputError(source, f"line {n}", "round", "not a round written by annols next-round")
        out.append(row)
    return out


# the fields of a row push did not rebuild, kept as the earlier manifest had them
_CARRIED = ("systems", "order", "role", "meta", "warnings", "extra", "sent", "data", "shares")


def write_manifest(
    path: Path,
    header: dict[str, Any],
    tasks: dict[str, tuple[int | None, tuple[str, ...]]],
    attention: Collection[str] = (),
    shown: Mapping[str, Shown] | None = None,
    earlier: Mapping[str, dict[str, Any]] | None = None,
    keys: Keys | None = None,
) -> None:
    """The local record of a project's tasks: key, task id, systems shown, and, from ``shown`` (this
    push) or ``earlier`` (the rows of the manifest it replaces), order, role, meta digest and what
    the format keeps off the server; ``attention``: the keys of the attention checks; ``keys``: the
    study's (its secret goes in the header, each task's key on the server in its row's ``sent``)."""
    keys = keys or Keys(None)
    with files.atomic_open(path, private=True) as f:
        f.write(json.dumps({**header, **keys.header()}, ensure_ascii=False) + "\n")
        for key, (task_id, systems) in tasks.items():
            row: dict[str, Any] = {"key": key, "task_id": task_id, "systems": list(systems)}
            if keys.secret is not None:
                row["sent"] = keys.sent(key)
            known = (shown or {}).get(key)
            if known is not None:  # the server holds no systems: those listed from it are none
                row.update(systems=list(known.systems), order=known.order, role=known.role, meta=known.meta)
                if known.warnings:
                    row["warnings"] = list(known.warnings)
                if known.extra:
                    row["extra"] = dict(known.extra)
                if known.data:
                    row["data"] = known.data
                if known.shares:
                    row["shares"] = [list(s) for s in known.shares]
            else:
                before = (earlier or {}).get(key, {})
                row.update({k: before[k] for k in _CARRIED if k in before and (k != "systems" or not systems)})
            if key in attention:
                row["role"] = roles.ATTENTION
            f.write(jsontext.dumps(row, ensure_ascii=False) + "\n")


def read_rows(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The header and rows of a manifest; InputError naming the line if it is not one."""
    try:
        with open(path, encoding="utf-8") as f:
            return _rows_of(path, f)
    except FileNotFoundError:
        raise InputError(path, "", "", "file not found") from None


def _rows_of(path: Path, lines: Iterable[str]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    rows: list[dict[str, Any]] = []
    lines = iter(lines)
    try:
        header = json.loads(next(lines, "null"))
        for n, line in enumerate(lines, start=2):
            row = json.loads(line)
            if not isinstance(row, dict) or not isinstance(row.get("key"), str):
                raise InputError(path, f"line {n}", "key", "not a manifest row (a JSON object with a key)")
            rows.append(row)
    except ValueError as e:  # UnicodeDecodeError too
        raise InputError(path, "", "", f"not a manifest written by annols push ({e})") from None
    if not isinstance(header, dict) or "protocol" not in header:
        raise InputError(path, "line 1", "", "not a manifest written by annols push (no header)")
    return header, rows


def read_manifest_tasks(
    path: Path,
) -> tuple[dict[str, Any], dict[str, tuple[int | None, tuple[str, ...]]], set[str]]:
    """The header, key -> (task id, systems shown), and the keys of the attention checks of a
    manifest written by push ({}, {} and an empty set if none)."""
    if not path.exists():
        return {}, {}, set()
    tasks: dict[str, tuple[int | None, tuple[str, ...]]] = {}
    attention: set[str] = set()
    try:
        header, rows = read_rows(path)
        for row in rows:
            task_id = row.get("task_id")
            tasks[row["key"]] = (task_id if isinstance(task_id, int) else None, tuple(row.get("systems") or ()))
            if row.get("role") == roles.ATTENTION:
                attention.add(row["key"])
    except (InputError, KeyError, TypeError, AttributeError):
        return {}, {}, set()  # not ours or damaged: the server listing decides
    return header, tasks, attention


def rows_by_key(path: Path) -> dict[str, dict[str, Any]]:
    """Key -> row of a manifest (empty if there is none or it is damaged)."""
    if not path.exists():
        return {}
    try:
        return {row["key"]: row for row in read_rows(path)[1]}
    except InputError:
        return {}


# --- handing the manifest to a team-mate -------------------------------------------------------


class Exported(NamedTuple):
    tasks: int  # in the manifest
    rounds: int  # in the record of a study in rounds carried with it (0: none)


def export_manifest(manifest_dir: Path, title: str, out: Path) -> Exported:
    """Write the project's manifest to ``out`` (a secret of the study), with the record of its rounds if it has one
    (:func:`rounds_path`)."""
    source = manifest_path(manifest_dir, title)
    if not source.exists():
        raise AnnolsError(f"no manifest of project {title!r} in {manifest_dir} ({source.name}): export it on the "
                          "machine that pushed, or give its --manifest-dir")  # fmt: skip
    _, rows = read_rows(source)
    data = source.read_bytes()
    record = rounds_path(manifest_dir, title)
    rounds = _record_lines(record, record.read_bytes()) if record.exists() else []
    if rounds:
        ends = b"" if data.endswith(b"\n") else b"\n"
        data += ends + f'{{"{ROUNDS_MARK}": {len(rounds)}}}\n'.encode() + b"".join(rounds)
    files.write_bytes(out, data, private=True)
    out.chmod(0o600)  # whoever reads it can unblind the study
    return Exported(len(rows), len(rounds))


class Imported(NamedTuple):
    path: Path  # the manifest written
    title: str
    tasks: int
    record: Path | None  # the record of the rounds written (None: the file carried none)
    rounds: int


def import_manifest(file: Path, manifest_dir: Path, replace: bool = False, title: str | None = None) -> Imported:
    """Put an exported manifest (and the record of the study's rounds it carries, if any) where push, pull and
    next-round look for them.

    ``title``: the project it is of, when its header names none (the manifest ``annols tasks``
    writes, whose tasks were imported by hand into a project). A different manifest or record
    of the same project already there is kept, and nothing written, unless ``replace``. A file
    that carries no record (an export of a study not in rounds, or of an older annols) leaves
    any record there as it is."""
    data, record = _split_export(file, file.read_bytes())
    try:
        header, rows = _rows_of(file, io.StringIO(data.decode("utf-8")))
    except UnicodeDecodeError as e:
        raise InputError(file, "", "", f"not a manifest written by annols push ({e})") from None
    title = title or header.get("project")
    if not isinstance(title, str) or not title:
        raise InputError(file, "line 1", "project", "the header names no project (a manifest of annols tasks?): "
                         "give --project, the project its tasks were imported into")  # fmt: skip
    target = manifest_path(manifest_dir, title)
    if target.exists() and target.read_bytes() != data and not replace:
        raise AnnolsError(f"{target} already holds another manifest of project {title!r}: nothing was changed; "
                          "add --replace to replace it")  # fmt: skip
    record_target = rounds_path(manifest_dir, title) if record is not None else None
    if record_target is not None and record_target.exists() and record_target.read_bytes() != record and not replace:
        raise AnnolsError(f"{record_target} already holds another record of the rounds of project {title!r}: "
                          "nothing was changed; add --replace to replace it")  # fmt: skip
    files.private_folder(manifest_dir)
    files.write_bytes(target, data, private=True)
    target.chmod(0o600)
    if record_target is not None and record is not None:
        files.write_bytes(record_target, record, private=True)
        record_target.chmod(0o600)  # it lists the study's task keys, which the server holds only as HMACs
    return Imported(target, title, len(rows), record_target, (record or b"").count(b"\n"))


def _record_lines(source: Path, data: bytes, first: int = 1) -> list[bytes]:
    """The lines of a record of rounds (each ending in a newline), checked to be rounds."""
    lines = [line if line.endswith(b"\n") else line + b"\n" for line in data.splitlines(keepends=True)]
    try:
        round_rows(source, (line.decode("utf-8") for line in lines), first)
    except UnicodeDecodeError:
        raise InputError(source, "", "round", "not a record written by annols next-round (not UTF-8)") from None
    return lines


def _split_export(file: Path, data: bytes) -> tuple[bytes, bytes | None]:
    """An exported manifest's own bytes, and those of the record of rounds it carries (None: none)."""
    at = data.find(f'\n{{"{ROUNDS_MARK}":'.encode())  # no manifest row starts so: a row opens with its key
    if at < 0:
        return data, None
    head, rest = data[: at + 1], data[at + 1 :]
    line, _, record = rest.partition(b"\n")
    n = head.count(b"\n") + 1
    where = f"line {n}"
    try:
        count = json.loads(line)[ROUNDS_MARK]
    except (ValueError, KeyError, TypeError):
        count = None
    if not isinstance(count, int) or count < 1:
        raise InputError(file, where, ROUNDS_MARK, "not the count of the rounds that follow")
    lines = _record_lines(file, record, n + 1)
    if len(lines) != count:
        raise InputError(file, where, ROUNDS_MARK, f"{count} round(s) should follow, {len(lines)} do: the file "
                         "was cut short or edited; export it again")  # fmt: skip
    return head, b"".join(lines)
