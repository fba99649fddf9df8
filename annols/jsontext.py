"""``json.dumps`` text, byte for byte, written faster.

Result files must match what ``json.dumps`` writes (QA-Feedback's ``dev_feedback.json`` is
``indent=2`` with ASCII escapes), and the standard library encodes with ``indent`` in pure
Python. ujson (a dependency of label-studio-sdk) writes the same text several times
faster, except in two places, both detected on its output: a float with a one-digit
negative exponent (``1e-7``; Python writes ``1e-07``) and DEL (U+007F), which Python escapes
in ASCII mode. There, and on anything ujson refuses (a lone surrogate, an unknown type),
the text comes from ``json.dumps`` itself.
"""

from __future__ import annotations

import json
import re
from typing import Any

import ujson

# Starts with a literal so that the search skims the text; the digit before is checked after.
_NEGATIVE_EXPONENT = re.compile(r"e-\d(?!\d)")


def dumps(value: Any, *, ensure_ascii: bool = True, indent: int | None = None) -> str:
    """Exactly ``json.dumps(value, ensure_ascii=ensure_ascii, indent=indent)``, for values as JSON
    decodes them: dict keys are strings (ujson writes other keys differently)."""
    try:
        if indent is None:
            text = ujson.dumps(value, ensure_ascii=ensure_ascii, escape_forward_slashes=False, separators=(", ", ": "))
        else:
            text = ujson.dumps(value, ensure_ascii=ensure_ascii, escape_forward_slashes=False, indent=indent)
    except (TypeError, ValueError, OverflowError, UnicodeError):
        text = None
    if text is None or (ensure_ascii and "\x7f" in text) or _short_negative_exponent(text):
        return json.dumps(value, ensure_ascii=ensure_ascii, indent=indent)
    return text


def _short_negative_exponent(text: str) -> bool:
    """A number like ``1e-7`` somewhere in ``text`` (or text that looks like one, inside a string)."""
    return any(m.start() and text[m.start() - 1].isdigit() for m in _NEGATIVE_EXPONENT.finditer(text))
