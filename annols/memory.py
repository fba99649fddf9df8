"""Handing freed memory back to the system between the report's stages (glibc only).

glibc's allocator keeps memory a process has freed for its own later use: after the
report streams an export of hundreds of megabytes, or drops a stage's tables, the
process's resident size stays as high as it was. ``malloc_trim(0)`` returns the free
pages. Elsewhere (musl, macOS, Windows) :func:`release` does nothing.
"""

from __future__ import annotations

import ctypes
import sys
from typing import Any


def _trim() -> Any:
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError):  # no glibc (musl), or a glibc without malloc_trim
        return None


_MALLOC_TRIM = _trim()


def release() -> None:
    """Return the allocator's free memory to the system, where the C library can (glibc's malloc_trim)."""
    if _MALLOC_TRIM is not None:
        _MALLOC_TRIM(0)
