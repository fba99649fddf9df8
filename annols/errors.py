"""The exceptions annols raises.

Every error a user can cause is an :class:`AnnolsError`. The CLI catches it once and
prints ``str(error)``: one line that says what went wrong, where, and what to do next.
"""

from __future__ import annotations

from pathlib import Path


class AnnolsError(Exception):
    """Base of every error annols reports to a user."""


class DefinitionError(AnnolsError):
    """A protocol definition file is wrong: names the file and the field."""

    def __init__(self, source: str | Path, field: str, problem: str) -> None:
        self.source = str(source)
        self.field = field
        self.problem = problem
        where = f"{self.source}: {field}" if field else self.source
        super().__init__(f"{where}: {problem}")


class UnknownProtocolError(AnnolsError):
    """Neither a shipped protocol name nor a definition file."""


class InputError(AnnolsError):
    """An input record is wrong: names the file, the line or record, and the field."""

    def __init__(self, source: str | Path, location: str, field: str, problem: str) -> None:
        self.source = str(source)
        self.location = location
        self.field = field
        self.problem = problem
        parts = [self.source]
        if location:
            parts.append(location)
        if field:
            parts.append(f"field {field!r}")
        super().__init__(f"{', '.join(parts)}: {problem}")


class OptionError(AnnolsError):
    """A value given on the command line (or its default) cannot be used: names the option."""

    def __init__(self, option: str, problem: str) -> None:
        self.option = option
        self.problem = problem
        super().__init__(f"{option}: {problem}")


class ServerError(AnnolsError):
    """Label Studio could not be reached, refused us, or answered unexpectedly."""


class TransientServerError(ServerError):
    """A failure that may pass: a proxy's 502/503/504, a connection dropped, a body cut short.

    Reads are retried on it; after a write it means the server may or may not have acted.
    ``reason`` is the short cause, for the retry notices.
    """

    def __init__(self, message: str, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


class Unreachable(ServerError):
    """Nothing answers where Label Studio should be: nothing listens at the URL, or the local one is not running.
    ``reason`` is the short cause (``ConnectError``, ``not running``), for callers that say where to look."""

    def __init__(self, message: str, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


class WriteError(AnnolsError):
    """A local file could not be written (a full disk, a read-only folder): names the file."""

    def __init__(self, path: str | Path, cause: OSError) -> None:
        self.path = Path(path)
        self.cause = cause
        super().__init__(f"cannot write {self.path}: {cause.strerror or cause}")
