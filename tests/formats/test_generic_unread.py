"""The shortcut of :func:`annols.formats.generic.unread_answers`: an annotation whose every task-level choice and
number answer is plain is passed without the full check. Here the shortcut and the full check
(``_unread_answers``) are run side by side on plain and malformed annotations of each kind of control (the malformed
answers of tests/formats/test_one_reading.py and more): the same violations every time, the shortcut taken on the
plain ones and never on one the full check names."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from annols import protocols
from annols.definition import Definition
from annols.formats.generic import _controls_of, _plain_answers, _plainly_answered, _unread_answers, unread_answers
from annols.protocols import load_definition
from annols.study.push import build_tasks
from annols.styles.answers import ExportedAnnotation, ExportedTask
from tests.conftest import ROOT

CASES = {  # definition -> an input of it
    "ratings": (ROOT / "examples" / "summeval-ratings.toml", ROOT / "examples" / "summeval-ratings.jsonl"),
    "best-worst": (ROOT / "examples" / "summary-best-worst.toml", ROOT / "examples" / "summary-best-worst.jsonl"),
    "groups (slider)": (ROOT / "examples" / "da-groups.toml", ROOT / "examples" / "da-groups.jsonl"),
    "pairwise-aspects": (None, Path(protocols.__file__).parent / "examples" / "input" / "pairwise-aspects"),
}


def _definition(case: str) -> tuple[Definition, ExportedTask]:
    toml, source = CASES[case]
    definition = load_definition(toml) if toml is not None else protocols.load(case)
    key, systems, task, _repeat = next(b for b in build_tasks(definition, [source]) if not b[3])
    return definition, ExportedTask(id=1, key=key, data=task["data"], systems=tuple(systems), annotations=())


def _plain_item(control: Any) -> dict[str, Any]:
    if control.kind == "number":
        number = control.low if math.isfinite(control.low) else 1
        value: dict[str, Any] = {"number": number}
    else:
        value = {"choices": [control.codes[0]]}
    return {"id": control.name, "from_name": control.name, "to_name": control.to_name, "type": control.kind,
            "value": value}  # fmt: skip


def _mutations(control: Any, plain: dict[str, Any]) -> list[tuple[str, Any]]:
    """(what, the item or items standing for ``plain``) for each malformed or unusual answer of ``control``."""
    v = plain["value"]
    out: list[tuple[str, Any]] = [
        ("twice", [plain, plain]),
        ("typeless", {k: x for k, x in plain.items() if k != "type"}),
        ("another type", {**plain, "type": "textarea"}),
        ("valueless", {k: x for k, x in plain.items() if k != "value"}),
        ("value a list", {**plain, "value": [v]}),
        ("value null", {**plain, "value": None}),
        ("per region", {**plain, "value": {**v, "start": 0, "end": 3}}),
        ("per region twice", [plain, {**plain, "value": {**v, "start": 0, "end": 3}}]),
        ("name a list", {**plain, "from_name": [control.name]}),
        ("name a number", {**plain, "from_name": 7}),
        ("no item of it", []),
        ("an item not a dict", [plain, "junk"]),
        ("null beside it", [plain, None]),
        ("an unknown control", [plain, {**plain, "from_name": "not_a_control"}]),
    ]
    if control.kind == "number":
        out += [(f"number {n!r}", {**plain, "value": {"number": n}})
                for n in (control.high + 1, control.low - 1, True, math.nan, math.inf, "60", None, [1])]
        out += [("two numbers", [plain, {**plain, "value": {"number": control.low}}])]
    else:
        offered = control.codes
        out += [
            ("two codes", {**plain, "value": {"choices": list(offered[:2])}}),
            ("a code not offered", {**plain, "value": {"choices": ["Z9"]}}),
            ("a string", {**plain, "value": {"choices": offered[0]}}),
            ("no code", {**plain, "value": {"choices": []}}),
            ("choices null", {**plain, "value": {"choices": None}}),
            ("a number for a code", {**plain, "value": {"choices": [3]}}),
            ("a list for a code", {**plain, "value": {"choices": [[offered[0]]]}}),
            ("a number value", {**plain, "value": {"number": 3}}),
        ]
        out += [(f"shown text {text!r}", {**plain, "value": {"choices": [text]}})
                for text, code in control.code_of_text.items() if text != code][:1]
    return out


def _outcome(task: ExportedTask, result: list[Any], definition: Definition, full: bool) -> Any:
    annotation = ExportedAnnotation(id=1, annotator="a@x.org", result=result)
    try:
        found = (_unread_answers if full else unread_answers)(task, annotation, definition)
    except Exception as e:  # both paths must fail alike, if at all
        return type(e).__name__
    return [(v.task_key, v.annotator, v.rule, v.found) for v in found]


@pytest.mark.parametrize("case", list(CASES))
def test_the_shortcut_names_what_the_full_check_names(case: str) -> None:
    definition, task = _definition(case)
    known = _controls_of(definition)
    plain = _plain_answers(definition)
    assert known
    full = [_plain_item(c) for c in known.values()]
    assert _plainly_answered(full, plain)  # the shortcut is taken on a plain annotation
    assert _outcome(task, full, definition, full=False) == _outcome(task, full, definition, full=True) == []
    named = 0
    for at, control in enumerate(known.values()):
        for what, changed in _mutations(control, full[at]):
            result = [*full[:at], *(changed if isinstance(changed, list) else [changed]), *full[at + 1:]]
            slow = _outcome(task, result, definition, full=True)
            assert _outcome(task, result, definition, full=False) == slow, (control.name, what)
            if slow:
                named += 1
                assert not _plainly_answered(result, plain), (control.name, what)
    assert named  # the full check names some of them: the comparison is not of empty lists only
