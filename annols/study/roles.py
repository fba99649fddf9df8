"""A task's role: study item, gold item or attention check.

The role is kept in the coordinator's manifest (:mod:`annols.study.manifest`), never on the
server: gold items and attention checks carry the same meta as study items and sit at
random places among them (from ``--seed``), not at the end. Pull reads the role from the
manifest into :attr:`annols.styles.answers.ExportedTask.role`.

Projects pushed before that carried the role in meta, :data:`META_TAG`: a tag an annotator
who reads annols' source could decode (a digest of the task's key). :func:`decode_tag`
still reads the exports of those projects; a task without a tag is a study task.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from typing import Any

META_TAG = "annols_tag"
STUDY, GOLD, ATTENTION = "study", "gold", "attention"
ROLES = (STUDY, GOLD, ATTENTION)
_TAG_BYTES = 12


def _mask(key: str) -> bytes:
    return hashlib.sha256(b"annols-tag\0" + key.encode("utf-8")).digest()[:_TAG_BYTES]


def encode_tag(key: str, role: str, info: int = 0) -> str:
    """The meta value of a task's role: 16 characters whatever the role."""
    mask = _mask(key)
    raw = bytes([mask[0] ^ ROLES.index(role), mask[1] ^ (info & 0xFF)]) + mask[2:]
    return base64.urlsafe_b64encode(raw).decode("ascii")


def decode_tag(key: str, tag: Any) -> tuple[str, int]:
    """(role, info) from a tag written by :func:`encode_tag` for ``key``; (study, 0) for anything else."""
    if not isinstance(tag, str):
        return STUDY, 0
    try:
        raw = base64.urlsafe_b64decode(tag.encode("ascii"))
    except (binascii.Error, ValueError, UnicodeEncodeError):
        return STUDY, 0
    mask = _mask(key)
    if len(raw) != _TAG_BYTES or raw[2:] != mask[2:] or (raw[0] ^ mask[0]) >= len(ROLES):
        return STUDY, 0
    return ROLES[raw[0] ^ mask[0]], raw[1] ^ mask[1]


def role_of(meta: dict[str, Any], key: str) -> str:
    return decode_tag(key, meta.get(META_TAG))[0]
