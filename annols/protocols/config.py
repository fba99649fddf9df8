"""Label Studio labeling configs and instructions for a protocol definition."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from annols import files, protocols
from annols.definition import Definition, fields
from annols.definition.markup import guideline_html, to_xml
from annols.styles import STYLE_MODULES


def label_config(d: Definition) -> str:
    """The labeling config XML of a definition (one variant)."""
    return to_xml(STYLE_MODULES[d.style].build_config(d))


def instructions(d: Definition) -> str:
    """The guideline as HTML, for the project's instructions (``expert_instruction``)."""
    return guideline_html(d.guideline, d.summary)


def data_fields(d: Definition) -> list[str]:
    """The task data fields the config shows (each task must have them)."""
    return list(STYLE_MODULES[d.style].data_fields(d.spec))


def turns_fields(d: Definition) -> dict[str, str]:
    """Conversation field -> the task data key its turns are sent under, for a definition that rates turn by
    turn (ratings ``per_turn``); empty otherwise."""
    if not getattr(d.spec, "per_turn", False):
        return {}
    return {c.name: fields.turns_key(c.name) for c in d.spec.candidates}


def with_turns(d: Definition, data: dict[str, Any]) -> dict[str, Any]:
    """Task data with each conversation rated turn by turn also cut into its turns (what the config's Repeater
    reads); the same dict for any other definition."""
    cut = turns_fields(d)
    if not cut:
        return data
    return {**data, **{key: fields.assistant_turns(data[name]) for name, key in cut.items()
                       if isinstance(data.get(name), list)}}  # fmt: skip


def optional_fields(d: Definition) -> frozenset[str]:
    """The task fields of the panes declared ``optional``: a record may leave them empty or out."""
    return frozenset(p.name for p in getattr(d.spec, "context", ()) if p.optional)


def config_filename(d: Definition) -> str:
    return f"{d.name}-{d.variant}.xml" if d.variant else f"{d.name}.xml"


@dataclass(frozen=True)
class ConfigFile:
    path: Path
    status: str  # "written", "unchanged", "stale", "missing"


def sync_configs(directory: Path, *, check: bool = False) -> list[ConfigFile]:
    """Write ``<name>[-<variant>].xml`` for every shipped protocol, or only compare them."""
    out = []
    for d in protocols.all_definitions():
        path = directory / config_filename(d)
        wanted = label_config(d)
        current = path.read_text(encoding="utf-8") if path.exists() else None
        if current == wanted:
            out.append(ConfigFile(path, "unchanged"))
        elif check:
            out.append(ConfigFile(path, "missing" if current is None else "stale"))
        else:
            directory.mkdir(parents=True, exist_ok=True)
            files.write_text(path, wanted)
            out.append(ConfigFile(path, "written"))
    return out
