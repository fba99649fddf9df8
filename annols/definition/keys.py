"""Every key a definition may hold, declared once: its kind, default, the styles that take it, what it means.

The parser reads a definition through :class:`annols.definition.Table`, and every read goes through this
catalogue: a key the code reads must be declared here with the kind the reading helper expects and the default
the code passes (else it is a programming error, raised at once), the value's type is checked against the
declared kind, and a key nobody read is refused with what the catalogue knows of it (unknown, or a key of other
styles). The definition reference (``docs/reference/definition.md``) and the JSON Schema editors use
(``docs/reference/definition.schema.json``) are written from the same catalogue
(:mod:`annols.protocols.reference`), so the three cannot disagree.

The sections every style shares are here; each style module declares its own top-level keys (``KEYS``) and the
tables only it reads (``SECTIONS``); :data:`annols.styles.CATALOGUE` puts them together.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

STYLES = ("spans", "pairwise", "sentences", "ranking", "ratings", "best-worst")


class _Marker:
    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


REQUIRED = _Marker("REQUIRED")  # the key must be given
COMPUTED = _Marker("COMPUTED")  # the default depends on other keys: ``default_doc`` says how

# kind -> (the Python types a TOML value of it has, how an error message names it)
KINDS: dict[str, tuple[type | tuple[type, ...], str]] = {
    "string": (str, "a string"),
    "name": (str, "a string"),  # lowercase letters, digits and _
    "field": (str, "a string"),  # a task field as the data names it
    "bool": (bool, "true or false"),
    "integer": (int, "a whole number"),
    "number": ((int, float), "a number"),
    "strings": (list, "a list of strings"),
    "table": (dict, "a table"),
    "tables": (list, "a list of tables ([[...]])"),
}


@dataclass(frozen=True)
class Key:
    """One key: ``of`` names the section a table (or each table of a list) is read as."""

    name: str
    kind: str
    doc: str
    default: Any = None
    default_doc: str = ""
    values: tuple[str, ...] = ()  # the only values a string takes
    of: str = ""
    styles: tuple[str, ...] = STYLES  # at the top level: the styles that take the key
    needed: bool = False  # read with a default, but refused when absent by a rule with its own message
    required_when: str = ""  # required only then (e.g. "scale = choices"); otherwise the default

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"{self.name}: unknown kind {self.kind!r}")
        if (self.kind in ("table", "tables")) != bool(self.of):
            raise ValueError(f"{self.name}: a table or list of tables names its section (of), nothing else does")

    @property
    def required(self) -> bool:
        return self.default is REQUIRED or self.needed


@dataclass(frozen=True)
class Section:
    """A kind of table a definition holds: the top level, a pane, a question... ``any_key`` for a table whose
    keys are names the user chooses (``[variants.NAME]``)."""

    name: str
    title: str
    doc: str
    keys: tuple[Key, ...] = ()
    any_key: Key | None = None


@dataclass(frozen=True)
class Catalogue:
    sections: Mapping[str, Section] = field(default_factory=dict)

    def keys(self, section: str, style: str | None = None) -> dict[str, Key]:
        """The keys a table of ``section`` may hold in a definition of ``style`` (any style when None)."""
        return {k.name: k for k in self.sections[section].keys if style is None or style in k.styles}

    def key(self, section: str, name: str, style: str | None) -> Key:
        """The declared key the parser reads; a read of an undeclared one is a programming error."""
        s = self.sections[section]
        found = self.keys(section, style).get(name)
        if found is None and s.any_key is not None:
            return s.any_key
        if found is None:
            raise LookupError(f"the parser reads {section}.{name} (style {style}), which annols/definition/keys.py "
                              "does not declare")  # fmt: skip
        return found

    def why_unknown(self, section: str, name: str, style: str | None) -> str:
        """The one line for a key a definition gives that no one read."""
        others = [k for k in self.sections[section].keys if k.name == name]
        styles = sorted({s for k in others for s in k.styles})
        if others and style is not None and style not in styles:
            return f"unknown key for a {style} definition (a key of {', '.join(styles)}: docs/reference/definition.md)"
        if others:
            return "unknown key here (docs/reference/definition.md says where it applies)"
        return "unknown key (check the spelling against docs/reference/definition.md)"


def catalogue(sections: Iterable[Section]) -> Catalogue:
    """The shared sections, the styles' own, and the top level made of the shared keys and every style's."""
    found: dict[str, Section] = {}
    for s in (*SHARED, *sections):
        if s.name in found:
            previous = found[s.name]
            s = Section(s.name, previous.title, previous.doc, previous.keys + s.keys, previous.any_key or s.any_key)
        found[s.name] = s
    return Catalogue(found)


def style_keys(style: str, keys: Iterable[Key]) -> Section:
    """A style's top-level keys, as part of the top-level section."""
    return Section("definition", "", "", tuple(Key(**{**k.__dict__, "styles": (style,)}) for k in keys))


# --- the sections every style reads ------------------------------------------------------------------------------

PANE = Section("pane", "A pane", "What a task shows: `[[context]]`, `[target]`, `[[candidates]]`, `[candidate]`, "
               "`[generated]`.", (
    Key("name", "field", "The task field it shows, as the data names it (no commas, no spaces at either end).",
        REQUIRED),
    Key("title", "string", "The pane's title.", REQUIRED),
    Key("kind", "string", "`text`, `paragraphs` (a list of `{ref, text}` items), or `conversation` (a list of "
        "`{role, content}` messages, shown as a dialogue).", "text", values=("text", "paragraphs", "conversation")),
    Key("note", "string", "Shown framed as context only.", ""),
    Key("labels", "tables", "Labels on its paragraphs (a pane of kind `paragraphs` only).", of="label"),
    Key("granularity", "string", "`word`: a drag selects whole words (a spans target).", "",
        values=("", "symbol", "word")),
    Key("optional", "bool", "A context pane some records leave empty or out: it then shows nothing (no error). "
        "Context panes only.", False),
))

CHOICE = Section("choice", "A choice", "An answer of a question (`choices = [{code = ...}]`), a style's `[[answers]]`.",
                 (
    Key("code", "string", "What results store.", REQUIRED),
    Key("text", "string", "What annotators see.", COMPUTED, "the code"),
    Key("hint", "string", "A tooltip.", ""),
))

GROUP = Section("group", "A group of choices", "A titled group of a question's choices (`groups`).", (
    Key("title", "string", "The group's title.", REQUIRED),
    Key("choices", "tables", "Its choices.", REQUIRED, of="choice"),
))

QUESTION = Section("question", "A question", "`[[questions]]`, `[special]`, `[[columns]]`, `[explanation]`, a "
                   "label's `question`, `[[spans.questions]]`.", (
    Key("name", "name", "The control's name (lowercase letters, digits and _).", REQUIRED),
    Key("text", "string", "The question as shown.", REQUIRED),
    Key("kind", "string", "`choice`, `scale` (a Likert scale: numeric codes, lowest first), `number`, `slider`, "
        "`text`.", "choice", values=("choice", "scale", "number", "slider", "text")),
    Key("per", "string", "`item` (once per task) or `candidate` (about each candidate's system).", "item",
        values=("item", "candidate")),
    Key("choices", "tables", "Its answers (choice and scale).", of="choice"),
    Key("groups", "tables", "Titled groups of answers, instead of `choices`.", of="group"),
    Key("options_from", "field", "A task field listing `{value}` options, instead of `choices`."),
    Key("required", "bool", "An answer is required.", False),
    Key("multiple", "bool", "Several answers (choice).", False),
    Key("hint", "string", "A tooltip.", ""),
    Key("placeholder", "string", "A text question's placeholder.", ""),
    Key("min", "number", "The lowest value (number, slider; required for number).", COMPUTED,
        "0 for a slider"),
    Key("max", "number", "The highest value (number, slider; required for number).", COMPUTED,
        "100 for a slider"),
    Key("step", "number", "The step (number, slider).", 1),
    Key("low", "string", "The slider's low anchor.", ""),
    Key("high", "string", "The slider's high anchor.", ""),
))

LABEL = Section("label", "A label", "`[[spans.labels]]`, a paragraphs pane's `labels`.", (
    Key("value", "string", "The label as shown and stored.", REQUIRED),
    Key("hint", "string", "A tooltip.", ""),
    Key("color", "string", "Its colour.", ""),
    Key("question", "table", "Asked of each span of this label.", of="question"),
    Key("links_to", "string", "A label this one is linked to (an arrow, e.g. a repetition to what it repeats)."),
    Key("helper", "bool", "A helper label: marks what another refers to, not an error of its own.", False),
))

ASPECT = Section("aspect", "An aspect", "`[[aspects]]`: what candidates are judged on.", (
    Key("name", "name", "Its name (lowercase letters, digits and _).", REQUIRED),
    Key("text", "string", "As shown.", REQUIRED),
    Key("hint", "string", "A tooltip.", ""),
))

VARIANTS = Section("variants", "Variants", "`[variants.NAME]`: tables whose keys replace the top-level ones; "
                   "`--variant NAME` picks one.", (),
                   Key("NAME", "table", "A variant: any top-level keys, replacing them.", of="definition"))

TOP = Section("definition", "The top level", "The keys every definition holds, then each style's own.", (
    Key("name", "string", "The protocol's name (lowercase letters, digits and -).", REQUIRED),
    Key("style", "string", "The style.", REQUIRED, values=STYLES),
    Key("summary", "string", "One line.", REQUIRED),
    Key("guideline", "string", "Plain text: blank lines separate paragraphs; `# ` and `## ` start headings; `- ` "
        "and `1. ` make lists; `> ` lines are quoted examples.", REQUIRED),
    Key("seed", "string", "Where the guideline comes from.", ""),
    Key("origin", "string", "The published study it follows.", ""),
    Key("format", "string", "A native input and result format of a shipped protocol (annols/formats)."),
    Key("variants", "table", "Variants of the definition.", of="variants"),
    Key("context", "tables", "Panes shown above what is judged.", of="pane"),
    Key("questions", "tables", "Questions asked after the style's own.", of="question"),
))

SHARED = (TOP, PANE, CHOICE, GROUP, QUESTION, LABEL, ASPECT, VARIANTS)
