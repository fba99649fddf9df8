"""A task's role (study item, gold item, attention check), tagged in its meta so that nothing shown names it.

What the server holds is only the role. Every task of a push with gold items carries
one more meta key, :data:`META_TAG`, of the same length for every task: two bytes (role
and a spare) masked by a digest of the task's key, then ten bytes of that digest, base64.
No value names a role, gold tasks have the same keys in the same order as study tasks,
and they sit at random places among them (from ``--seed``), not at the end. As with
blinding (systems base64 in meta) this hides the role from what the editor shows and
loads, not from someone who reads annols' source and decodes the task JSON by hand.

Pull reads the tag back into :attr:`annols.styles.answers.ExportedTask.role`; a task without one
is a study task.
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
