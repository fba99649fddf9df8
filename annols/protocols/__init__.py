"""The registry of protocols: the definition files shipped in this folder, and how any definition file is read.

A protocol is named either by a shipped name (``qa-feedback``) or by the path of a
user's own definition file (``./my-protocol.toml``); both resolve to a
:class:`~annols.definition.Definition`. Adding a protocol means adding one ``.toml``
file here (and, for a native input or result format, its module in ``annols.formats``).
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from annols.definition import Definition, parse_shared
from annols.errors import DefinitionError, UnknownProtocolError
from annols.styles import CATALOGUE, STYLE_MODULES

HERE = Path(__file__).parent


def load_definition(path: str | Path, variant: str | None = None) -> Definition:
    """Read a definition file and check it completely."""
    path = Path(path)
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as e:
        raise DefinitionError(path, "", "file not found") from e
    except UnicodeDecodeError as e:
        raise DefinitionError(path, "", "not UTF-8 text") from e
    except tomllib.TOMLDecodeError as e:
        raise DefinitionError(path, "", f"not valid TOML ({e})") from e
    return parse_definition(raw, str(path), variant)


def parse_definition(raw: dict[str, Any], source: str, variant: str | None = None) -> Definition:
    """A definition from its TOML table: the shared parts, then the style's spec from the rest."""
    definition, rest = parse_shared(raw, source, variant, catalogue=CATALOGUE)
    spec = STYLE_MODULES[definition.style].parse(rest)
    rest.check_unknown()
    return Definition(**{**definition.__dict__, "spec": spec})


def shipped() -> dict[str, Path]:
    """Shipped protocol names and their definition files, in name order."""
    return {p.stem: p for p in sorted(HERE.glob("*.toml"))}


def names() -> list[str]:
    return list(shipped())


def load(protocol: str, variant: str | None = None) -> Definition:
    """Load a shipped protocol by name, or a definition file by path."""
    files = shipped()
    if protocol in files:
        return load_definition(files[protocol], variant)
    path = Path(protocol)
    if path.suffix == ".toml" or path.exists():
        return load_definition(path, variant)
    raise UnknownProtocolError(
        f"unknown protocol {protocol!r}: use one of {', '.join(files)} "
        "or the path of a definition file (see `annols protocols`)"
    )


def variants(protocol: str) -> tuple[str, ...]:
    """The variant names of a protocol (empty if it has none)."""
    files = shipped()
    path = files.get(protocol, Path(protocol))
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError):
        return ()
    table = raw.get("variants")
    return tuple(table) if isinstance(table, dict) else ()


def all_definitions() -> list[Definition]:
    """Every shipped protocol, once per variant."""
    out = []
    for name in shipped():
        for variant in variants(name) or (None,):
            out.append(load(name, variant))
    return out
