"""Protocol definitions: the TOML files that say what a study asks of its annotators.

A definition names a style (spans, pairwise, sentences, ranking, ratings, best-worst), the task fields shown,
the labels, questions and answer codes, and the guideline. The shipped protocols live in
``annols/protocols/*.toml``; a user's own file in the same format works wherever a
protocol name does. Every mistake is reported as a :class:`DefinitionError` naming the
file and the field (``labels[2].value``).

Parsing is split in two: this module reads the parts every style shares (names,
questions, labels, fields, variants); each style module turns the rest into its own
frozen spec with the :class:`Table` helpers defined here.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from annols.definition import keys
from annols.definition.keys import STYLES
from annols.errors import DefinitionError

__all__ = ["STYLES", "Table"]
_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
_PROTOCOL_NAME = re.compile(r"^[a-z][a-z0-9-]*$")
# Label Studio reads toName="a,b" as two objects; control characters do not survive XML.
_NOT_IN_FIELD = re.compile(r"[,\x00-\x1f\x7f]")


class Table:
    """A TOML table with its path, so every error can name file and field, read as a section of the catalogue of
    keys (:mod:`annols.definition.keys`): every read is of a declared key, its value checked against the declared
    kind, the default the code passes the declared one."""

    def __init__(self, data: dict[str, Any], source: str, path: str = "", *, catalogue: keys.Catalogue,
                 section: str = "definition", style: str | None = None) -> None:  # fmt: skip
        self.data = data
        self.source = source
        self.path = path
        self.catalogue = catalogue
        self.section = section
        self.style = style
        self._read: set[str] = set()

    def _child(self, data: dict[str, Any], key: str, path: str) -> Table:
        of = self.catalogue.key(self.section, key, self.style).of
        return Table(data, self.source, path, catalogue=self.catalogue, section=of, style=self.style)

    def where(self, key: str) -> str:
        return f"{self.path}.{key}" if self.path else key

    def fail(self, key: str, problem: str) -> DefinitionError:
        return DefinitionError(self.source, self.where(key), problem)

    def has(self, key: str) -> bool:
        self.catalogue.key(self.section, key, self.style)
        return key in self.data

    def _get(self, key: str, default: Any, *kinds: str) -> Any:
        """The value of a declared key of one of ``kinds``, type-checked by its declared kind; ``default`` (or
        :data:`_REQUIRED`) must be what the catalogue declares unless the declared default is computed."""
        declared = self.catalogue.key(self.section, key, self.style)
        if declared.kind not in kinds:
            raise LookupError(f"{self.section}.{key} is declared {declared.kind}, read as {'/'.join(kinds)}")
        wanted = keys.REQUIRED if default is _REQUIRED else default
        free = declared.default is keys.COMPUTED or declared is self.catalogue.sections[self.section].any_key or (
            declared.required_when and wanted is keys.REQUIRED)
        if not free and wanted is not declared.default and wanted != declared.default:
            raise LookupError(f"{self.section}.{key}: the parser's default {wanted!r} is not the declared "
                              f"{declared.default!r}")  # fmt: skip
        kind, what = keys.KINDS[declared.kind]
        self._read.add(key)
        if key not in self.data:
            if default is _REQUIRED:
                raise self.fail(key, f"missing; expected {what}")
            return default
        value = self.data[key]
        if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
            raise self.fail(key, f"expected {what}, got {_describe(value)}")
        if declared.values and value not in declared.values:
            raise self.fail(key, f"{value!r} is not one of {', '.join(repr(v) for v in declared.values if v)}")
        return value

    def text(self, key: str, default: Any = None, *, required: bool = False) -> Any:
        value = self._get(key, _REQUIRED if required else default, "string", "name", "field")
        if required and not value.strip():
            raise self.fail(key, "must not be empty")
        return value

    def name(self, key: str, default: Any = None, *, required: bool = True) -> Any:
        value = self.text(key, default, required=required)
        if value is not None and not _NAME.match(value):
            raise self.fail(key, f"{value!r} is not a valid name (lowercase letters, digits and _)")
        return value

    def field_name(self, key: str, *, required: bool = True) -> Any:
        """A task field's name as the user's data has it (stored under a key Label Studio
        can read: :mod:`annols.definition.fields`); only what the config itself cannot hold is refused."""
        value = self.text(key, required=required)
        if value is not None and (value != value.strip() or _NOT_IN_FIELD.search(value)):
            raise self.fail(
                key, f"{value!r} is not a usable field name (no commas, no control characters, no spaces at either end)"
            )
        return value

    def flag(self, key: str, default: bool = False) -> bool:
        return bool(self._get(key, default, "bool"))

    def number(self, key: str, default: Any = None, *, required: bool = False) -> Any:
        return self._get(key, _REQUIRED if required else default, "integer")

    def real(self, key: str, default: Any = None) -> Any:
        """A number, whole or not (a float is kept as given)."""
        return self._get(key, default, "number")

    def strings(self, key: str, *, required: bool = False) -> tuple[str, ...]:
        values = self._get(key, _REQUIRED if required else None, "strings") or []
        for i, value in enumerate(values):
            if not isinstance(value, str) or not value.strip():
                raise self.fail(f"{key}[{i}]", f"expected a non-empty string, got {_describe(value)}")
        if required and not values:
            raise self.fail(key, "must list at least one value")
        return tuple(values)

    def table(self, key: str, *, required: bool = False) -> Table | None:
        raw = self._get(key, _REQUIRED if required else None, "table")
        return None if raw is None else self._child(raw, key, self.where(key))

    def tables(self, key: str, *, required: bool = False) -> list[Table]:
        raw = self._get(key, _REQUIRED if required else None, "tables") or []
        if required and not raw:
            raise self.fail(key, "must have at least one entry")
        out = []
        for i, item in enumerate(raw):
            if not isinstance(item, dict):
                raise self.fail(f"{key}[{i}]", f"expected a table, got {_describe(item)}")
            out.append(self._child(item, key, self.where(f"{key}[{i}]")))
        return out

    def check_unknown(self) -> None:
        """Reject keys nobody read: a typo must not be silently ignored."""
        unknown = sorted(set(self.data) - self._read)
        if unknown:
            raise self.fail(unknown[0], self.catalogue.why_unknown(self.section, unknown[0], self.style))

    def check_unique_names(self, claims: Iterable[tuple[str, str, str]]) -> None:
        """Each ``(name, what, key)`` must use a name no earlier one used (names of fields and
        controls share one namespace in a labeling config); the first repeat is refused at its key."""
        seen: dict[str, str] = {}
        for name, what, key in claims:
            if name in seen:
                raise self.fail(key, f"{what} {name!r} has the same name as {seen[name]}")
            seen[name] = f"{what} {name!r}"


_REQUIRED = object()


def _describe(value: Any) -> str:
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "a list"
    return f"{type(value).__name__} {value!r}"


@dataclass(frozen=True)
class Choice:
    """One answer option. ``code`` is what the result stores, ``text`` what is shown."""

    code: str
    text: str
    hint: str = ""


KINDS = ("choice", "scale", "number", "slider", "text")
NUMERIC_KINDS = ("scale", "number", "slider")  # answers that are numbers: analysed like ratings
PLACES = ("item", "candidate")


@dataclass(frozen=True)
class Question:
    """A question: single or multiple choice, a scale of numeric codes (Likert), a number or a
    slider in a range, or free text (``kind``); asked once per task (``per = "item"``) or once
    per candidate shown (``per = "candidate"``)."""

    name: str
    text: str
    kind: str = "choice"  # one of KINDS
    choices: tuple[Choice, ...] = ()
    groups: tuple[tuple[str, tuple[Choice, ...]], ...] = ()  # titled groups of choices
    required: bool = False
    multiple: bool = False
    hint: str = ""
    options_from: str | None = None  # choices read from this task field at labeling time
    placeholder: str = ""
    per: str = "item"  # "item" | "candidate"
    min: float | None = None  # number and slider: the range and the step
    max: float | None = None
    step: float | None = None
    low: str = ""  # slider: anchor texts at its ends
    high: str = ""

    @property
    def all_choices(self) -> tuple[Choice, ...]:
        return self.choices + tuple(c for _, group in self.groups for c in group)

    @property
    def numeric(self) -> bool:
        """Its answer is a number (a scale's code, a number, a slider): analysed like a rating."""
        return self.kind in NUMERIC_KINDS

    @property
    def per_candidate(self) -> bool:
        return self.per == "candidate"

    def control(self, candidate: str | None = None) -> str:
        """The control name of its answer: its name, or ``{name}_{candidate}`` when asked per candidate of
        a task that shows several (the candidate pane's name)."""
        return f"{self.name}_{candidate}" if candidate is not None and self.per_candidate else self.name

    def value_code(self, code: Any) -> Any:
        """A scale's answer by its code (a result may store the shown text)."""
        return next((c.code for c in self.all_choices if code in (c.code, c.text)), code)

    def value(self, code: Any) -> float | None:
        """A numeric answer as a number, or None when it is not one the question takes."""
        if isinstance(code, bool):
            return None
        if self.kind == "scale":
            known = {c.code: c for c in self.all_choices} | {c.text: c for c in self.all_choices}
            choice = known.get(str(code))
            return float(choice.code) if choice is not None else None
        if not isinstance(code, int | float) or not math.isfinite(code):
            return None
        low = -math.inf if self.min is None else self.min
        high = math.inf if self.max is None else self.max
        return float(code) if low <= code <= high else None


@dataclass(frozen=True)
class Label:
    """A span label. ``question`` is asked per span; ``links_to`` asks for a relation."""

    value: str
    hint: str = ""
    color: str = ""
    question: Question | None = None
    links_to: str | None = None
    helper: bool = False  # marks supporting text (e.g. what a span repeats), not an error


@dataclass(frozen=True)
class Aspect:
    """What one required answer per candidate is about (pairwise, ratings)."""

    name: str
    text: str
    hint: str = ""


@dataclass(frozen=True)
class Pane:
    """A task field shown to the annotator."""

    name: str
    title: str
    kind: str = "text"  # "text" | "paragraphs" | "conversation" (a list of {role, content} messages)
    note: str = ""  # a line under the title, e.g. "context only, do not judge"
    labels: tuple[Label, ...] = ()  # paragraph labels, for kind = "paragraphs"
    granularity: str = ""  # a span target's selection: "word" snaps spans to whole words ("" = any characters)
    optional: bool = False  # a context pane some records leave empty: then it shows nothing (no error)


@dataclass(frozen=True)
class Definition:
    """A protocol: the shared header plus the style's own spec, for one variant."""

    name: str
    style: str
    summary: str
    guideline: str
    source: str  # file it was read from
    seed: str = ""
    origin: str = ""
    format: str | None = None  # native input/result format, for shipped protocols
    variant: str | None = None
    variants: tuple[str, ...] = ()
    spec: Any = field(default=None, compare=False)


def parse_choice(t: Table) -> Choice:
    code = t.text("code", required=True)
    choice = Choice(code=code, text=t.text("text", code), hint=t.text("hint", ""))
    t.check_unknown()
    return choice


def parse_question(t: Table) -> Question:
    kind = t.text("kind", "choice")
    if kind not in KINDS:
        raise t.fail("kind", f"{kind!r} is not one of {', '.join(repr(k) for k in KINDS)}")
    per = t.text("per", "item")
    if per not in PLACES:
        raise t.fail("per", f"{per!r} is not one of 'item', 'candidate'")
    name = t.name("name")
    text = t.text("text", required=True)
    choices = tuple(parse_choice(c) for c in t.tables("choices"))
    groups = []
    for g in t.tables("groups"):
        group = tuple(parse_choice(c) for c in g.tables("choices", required=True))
        groups.append((g.text("title", required=True), group))
        g.check_unknown()
    options_from = t.field_name("options_from", required=False)
    question = Question(
        name=name,
        text=text,
        kind=kind,
        choices=choices,
        groups=tuple(groups),
        required=t.flag("required", False),
        multiple=t.flag("multiple", False),
        hint=t.text("hint", ""),
        options_from=options_from,
        placeholder=t.text("placeholder", ""),
        per=per,
        **_range(t, kind),
    )
    if kind == "choice" and not question.all_choices and not options_from:
        raise t.fail("choices", "a choice question needs choices (or options_from)")
    if kind in ("text", "number", "slider") and (question.all_choices or options_from):
        raise t.fail("choices", f"a {kind} question takes no choices")
    if kind == "scale":
        _check_scale(t, question)
    codes = [c.code for c in question.all_choices]
    duplicate = next((c for c in codes if codes.count(c) > 1), None)
    if duplicate is not None:
        raise t.fail("choices", f"answer code {duplicate!r} appears twice")
    t.check_unknown()
    return question


def _range(t: Table, kind: str) -> dict[str, Any]:
    """``min``, ``max``, ``step`` (and a slider's ``low`` and ``high`` anchors) of a number or slider question."""
    if kind not in ("number", "slider"):
        return {}
    default = 0 if kind == "slider" else None
    found = {"min": t.real("min", default), "max": t.real("max", 100 if kind == "slider" else None),
             "step": t.real("step", 1)}  # fmt: skip
    for key in ("min", "max"):
        if found[key] is None:
            raise t.fail(key, "missing; a number question needs its range (min and max)")
    if found["max"] <= found["min"]:
        raise t.fail("max", f"{found['max']} must be above min ({found['min']})")
    if found["step"] <= 0:
        raise t.fail("step", f"{found['step']} must be above 0")
    if kind == "slider":
        found.update(low=t.text("low", ""), high=t.text("high", ""))
    return found


def _check_scale(t: Table, q: Question) -> None:
    """A scale's codes are numbers, lowest first (Likert: 1 to 5), a single choice."""
    previous: float | None = None
    if q.multiple or q.options_from or len(q.all_choices) < 2:
        raise t.fail("choices", "a scale is one answer of two or more numeric codes, listed lowest first")
    for i, c in enumerate(q.all_choices):
        try:
            value = float(c.code)
        except ValueError:
            raise t.fail(f"choices[{i}].code", f"{c.code!r} is not a number; a scale's codes are numbers") from None
        if previous is not None and value <= previous:
            raise t.fail(f"choices[{i}].code", f"{c.code!r} must be higher than the code before it")
        previous = value


def parse_label(t: Table) -> Label:
    q = t.table("question")
    label = Label(
        value=t.text("value", required=True),
        hint=t.text("hint", ""),
        color=t.text("color", ""),
        question=parse_question(q) if q else None,
        links_to=t.text("links_to"),
        helper=t.flag("helper", False),
    )
    t.check_unknown()
    return label


def parse_labels(t: Table, key: str, *, required: bool = False) -> tuple[Label, ...]:
    labels = tuple(parse_label(x) for x in t.tables(key, required=required))
    values = [x.value for x in labels]
    for i, label in enumerate(labels):
        if values.count(label.value) > 1:
            raise t.fail(f"{key}[{i}].value", f"label {label.value!r} appears twice")
        if label.links_to is not None and label.links_to not in values:
            raise t.fail(f"{key}[{i}].links_to", f"{label.links_to!r} is not one of the labels {values}")
    return labels


def parse_aspects(t: Table) -> tuple[Aspect, ...]:
    aspects = []
    for a in t.tables("aspects", required=True):
        aspects.append(Aspect(name=a.name("name"), text=a.text("text", required=True), hint=a.text("hint", "")))
        a.check_unknown()
    return tuple(aspects)


PANE_KINDS = ("text", "paragraphs", "conversation")


def parse_pane(t: Table, *, context: bool = False) -> Pane:
    """A pane; ``context``: one of the panes of context, which may be ``optional``."""
    kind = t.text("kind", "text")
    if kind not in PANE_KINDS:
        raise t.fail("kind", f"{kind!r} is not one of {', '.join(repr(k) for k in PANE_KINDS)}")
    pane = Pane(
        name=t.field_name("name"),
        title=t.text("title", required=True),
        kind=kind,
        note=t.text("note", ""),
        labels=parse_labels(t, "labels"),
        granularity=t.text("granularity", ""),
        optional=t.flag("optional"),
    )
    if pane.optional and not context:
        raise t.fail("optional", "only a context pane can be optional (what annotators judge is never empty)")
    if pane.granularity not in ("", "symbol", "word"):
        raise t.fail("granularity", f"{pane.granularity!r} is not one of 'symbol', 'word'")
    if pane.labels and kind != "paragraphs":
        raise t.fail("labels", "only a pane of kind 'paragraphs' takes labels")
    t.check_unknown()
    return pane


def parse_panes(t: Table, key: str) -> tuple[Pane, ...]:
    return tuple(parse_pane(x, context=key == "context") for x in t.tables(key))


def parse_shared(
    raw: dict[str, Any], source: str, variant: str | None = None, *, catalogue: keys.Catalogue
) -> tuple[Definition, Table]:
    """The parts every style shares (no ``spec`` yet), and the rest for the style to read
    (:func:`annols.protocols.parse_definition` hands it to the style): a variant's keys
    replace the top-level ones. ``catalogue``: every key a definition may hold (:data:`annols.styles.CATALOGUE`)."""
    top = Table(raw, source, catalogue=catalogue)
    name = top.text("name", required=True)
    if not _PROTOCOL_NAME.match(name):
        raise top.fail("name", f"{name!r} is not a valid protocol name (lowercase letters, digits and -)")
    style = top.text("style", required=True)
    if style not in STYLES:
        raise top.fail("style", f"{style!r} is not one of {', '.join(STYLES)}")

    variants_table = top.table("variants")
    variant_names = tuple(variants_table.data) if variants_table else ()
    overrides: dict[str, Any] = {}
    if variant_names:
        if variant is None:
            raise DefinitionError(
                source, "variants", f"{name} has variants: choose one with --variant {'|'.join(variant_names)}"
            )
        if variant not in variant_names:
            raise DefinitionError(
                source, "variants", f"{name} has no variant {variant!r} (choose one of {', '.join(variant_names)})"
            )
        chosen = variants_table.table(variant) if variants_table else None
        overrides = chosen.data if chosen else {}
    elif variant is not None:
        raise DefinitionError(source, "variants", f"{name} has no variants, but {variant!r} was asked for")

    definition = Definition(
        name=name,
        style=style,
        summary=top.text("summary", required=True),
        guideline=top.text("guideline", required=True),
        source=source,
        seed=top.text("seed", ""),
        origin=top.text("origin", ""),
        format=top.text("format"),
        variant=variant,
        variants=variant_names,
    )
    merged = {k: v for k, v in raw.items() if k not in top._read}
    merged.update(overrides)
    return definition, Table(merged, source, catalogue=catalogue, style=style)
