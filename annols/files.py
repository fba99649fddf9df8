"""Writing files atomically: a reader sees the old file or the whole new one, never half."""

from __future__ import annotations

import contextlib
import datetime
import errno
import os
import shutil
import tempfile
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from annols.errors import WriteError


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


# Read once, at import (single-threaded): the mask a plain open() would apply.
_UMASK = _umask()


def _permissions_for(path: Path) -> int:
    """Those of the file being replaced, else what a plain ``open`` would give a new file."""
    try:
        return path.stat().st_mode & 0o7777
    except OSError:
        return 0o666 & ~_UMASK


PRIVATE_FILE = 0o600  # a file holding a study's secret or its system names: its owner's alone
PRIVATE_FOLDER = 0o700
# The folder annols keeps its manifests in unless told otherwise: made, and kept, its owner's alone.
PRIVATE_FOLDER_NAME = ".annols"


def private_folder(folder: Path) -> None:
    """Make ``folder`` (and its parents) if missing, the folder itself owner-only (0700); a folder that exists is
    made owner-only too if it is annols' own (``.annols``), left as it is otherwise (a folder the user named,
    which may be theirs to share: the files in it are owner-only all the same)."""
    folder = Path(folder)
    if not folder.exists():
        folder.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileExistsError):
            folder.mkdir(mode=PRIVATE_FOLDER)
        os.chmod(folder, PRIVATE_FOLDER)
    elif folder.name == PRIVATE_FOLDER_NAME:
        info = folder.stat()
        if info.st_mode & 0o077 and info.st_uid == os.getuid():
            os.chmod(folder, PRIVATE_FOLDER)


_KERNEL_COPY = 1 << 16  # from this many bytes a range is copied by the kernel (copy_file_range), where it can
_CHUNK = 1 << 20


def copy_range(out: IO[bytes], source: IO[bytes], start: int, end: int) -> None:
    """Bytes ``[start, end)`` of the open file ``source`` onto ``out`` (a binary file written from its end, as
    :func:`atomic_open` gives one); ValueError if ``source`` ends before ``end``. A long range is copied inside the
    kernel where the system can (no pass through this process), else read and written a chunk at a time."""
    left = end - start
    if left >= _KERNEL_COPY and hasattr(os, "copy_file_range"):
        out.flush()
        try:
            while left > 0:
                done = os.copy_file_range(source.fileno(), out.fileno(), left, start)
                if done == 0:
                    raise ValueError(f"{getattr(source, 'name', 'a file')} ends before byte {end}")
                start += done
                left -= done
        except OSError as e:  # not between these files (another file system, a pipe): copied in chunks
            if e.errno not in (errno.EXDEV, errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.EBADF):
                raise
        finally:
            out.seek(0, os.SEEK_END)  # the writer's own idea of its position, after the kernel's writes
    source.seek(start)
    while left > 0:
        chunk = source.read(min(_CHUNK, left))
        if not chunk:
            raise ValueError(f"{getattr(source, 'name', 'a file')} ends before byte {end}")
        out.write(chunk)
        left -= len(chunk)


@contextlib.contextmanager
def atomic_open(path: Path, mode: str = "w", private: bool = False, **kwargs: Any) -> Iterator[IO[Any]]:
    """Open a temporary file beside ``path``; it replaces ``path`` only if the block succeeds.

    The file gets the permissions a plain ``open`` would give it (a replaced file keeps its
    own), not the owner-only ones of a temporary file; ``private``: owner-only (0600) whatever
    it had, in a folder made owner-only (:func:`private_folder`).
    """
    path = Path(path)
    if "b" not in mode:
        kwargs.setdefault("encoding", "utf-8")
        kwargs.setdefault("newline", "")
    try:
        if private:
            private_folder(path.parent)
        path.parent.mkdir(parents=True, exist_ok=True)
        permissions = PRIVATE_FILE if private else _permissions_for(path)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as e:
        raise WriteError(path, e) from e
    try:
        os.fchmod(fd, permissions)
        with os.fdopen(fd, mode, **kwargs) as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException as e:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        # A write to this file (a full disk, a quota) has no file name of its own: name it.
        # An OSError with a name is about another file (one being read) and passes as it is.
        if isinstance(e, OSError) and e.filename in (None, tmp):
            raise WriteError(path, e) from e
        raise


def replace_durably(source: Path, path: Path, private: bool = False) -> None:
    """Move ``source`` (a finished file on the same file system) to ``path``, as :func:`atomic_open` would
    (``private``: owner-only)."""
    try:
        with open(source, "rb+") as f:
            os.fchmod(f.fileno(), PRIVATE_FILE if private else _permissions_for(path))
            os.fsync(f.fileno())
        os.replace(source, path)
    except OSError as e:
        raise WriteError(path, e) from e


def write_text(path: Path, text: str, private: bool = False) -> None:
    with atomic_open(path, "w", private=private) as f:
        f.write(text)


def write_bytes(path: Path, data: bytes, private: bool = False) -> None:
    with atomic_open(path, "wb", private=private) as f:
        f.write(data)


ZIP_TIME = (1980, 1, 1, 0, 0, 0)  # the earliest a zip entry can say
DOCUMENT_TIME = datetime.datetime(2000, 1, 1)


def save_workbook(workbook: Any, out: IO[bytes]) -> None:
    """Save an openpyxl workbook with fixed times (its properties' and its zip entries'), so that
    the same rows give the same bytes: a pull and a convert of one export write one file."""
    from openpyxl.writer.excel import ExcelWriter  # Workbook.save would stamp the time it saves at

    workbook.properties.created = workbook.properties.modified = DOCUMENT_TIME
    with tempfile.TemporaryFile() as raw:
        with zipfile.ZipFile(raw, "w", zipfile.ZIP_DEFLATED, allowZip64=True) as archive:
            ExcelWriter(workbook, archive).save()
        raw.seek(0)
        with zipfile.ZipFile(raw) as zin, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zout:
            for info in zin.infolist():
                fixed = zipfile.ZipInfo(info.filename, date_time=ZIP_TIME)
                fixed.compress_type = zipfile.ZIP_DEFLATED
                fixed.external_attr = info.external_attr
                with zin.open(info) as src, zout.open(fixed, "w") as dst:
                    shutil.copyfileobj(src, dst)
