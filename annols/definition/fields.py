"""Task field names: the user's, and the keys Label Studio stores them under.

Every name a definition gives a task field is kept in the user's files (inputs, results,
``<name>.jsonl``, judgments, report). In the task data sent to Label Studio, and in the
config's ``$variables`` that read it, a name the editor would read otherwise is stored
under an internal key ``annols_f_<name>``; a pull maps it back. The map needs no
definition, so every reader of an export gets the user's names.

Which names need it (Label Studio 1.23.2):

- ``source``: the editor's task store sets ``data.source`` to the whole task as JSON
  (``TaskStore.dataObj``), so ``$source`` showed the task, blinding meta included.
- a name that is no plain ``$variable``: the editor reads ``$`` followed by letters,
  digits and ``_``; a ``.`` or ``[`` is a path into nested data, anything else ends it.
- a name starting with the internal prefix, so that mapping back is never ambiguous.

``id``, ``data``, ``meta``, ``annotations``, ``predictions`` and names starting with
``_`` are read from the task data as given (the editor looks ``$id`` up in the data, not
the task), so they are kept.

In an internal key, letters a-z and digits stand for themselves and every other
character is written ``_<hex code point>_``: ``source`` -> ``annols_f_source``,
``Source text`` -> ``annols_f__53_ource_20_text``.
"""

from __future__ import annotations

import re
from typing import Any

PREFIX = "annols_f_"
# A conversation rated turn by turn (ratings ``per_turn``) is also sent cut into its turns, under a key of
# its own that a pull drops again (the conversation itself is sent as it is).
TURNS_PREFIX = "annols_turns_"
# Names the editor fills in itself, whatever the task data holds (see the module docstring).
EDITOR_NAMES = frozenset({"source"})
_VARIABLE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_PLAIN = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")
_ESCAPE = re.compile(r"_([0-9a-f]+)_")


def stored(name: str) -> bool:
    """Whether ``name`` is stored in Label Studio under a key of its own (not an internal one)."""
    return name not in EDITOR_NAMES and not name.startswith(PREFIX) and bool(_VARIABLE.match(name))


def data_key(name: str) -> str:
    """The key Label Studio's task data holds field ``name`` under."""
    if stored(name):
        return name
    return PREFIX + "".join(c if c in _PLAIN else f"_{ord(c):x}_" for c in name)


def user_name(key: str) -> str:
    """The field name a key of Label Studio's task data stands for (the inverse of :func:`data_key`)."""
    if not key.startswith(PREFIX):
        return key
    body = key[len(PREFIX) :]
    name = _ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), body)
    # Not one of ours (someone else's key with the prefix): keep it as it is.
    return name if data_key(name) == key else key


def variable(name: str) -> str:
    """The config's ``$variable`` reading field ``name``."""
    return "$" + data_key(name)


def to_label_studio(data: dict[str, Any]) -> dict[str, Any]:
    """Task data with each field under its Label Studio key (the same dict when none moves)."""
    if all(stored(k) for k in data):
        return data
    return {data_key(k): v for k, v in data.items()}


def from_label_studio(data: dict[str, Any]) -> dict[str, Any]:
    """Task data from Label Studio with the user's field names (the same dict when none moves); a conversation's
    turns, sent beside it, are left out."""
    if not any(k.startswith((PREFIX, TURNS_PREFIX)) for k in data):
        return data
    return {user_name(k): v for k, v in data.items() if not k.startswith(TURNS_PREFIX)}


def turns_key(name: str) -> str:
    """The key Label Studio's task data holds the turns of conversation field ``name`` under."""
    return TURNS_PREFIX + data_key(name)


SEPARATOR = "\n\n"  # between messages in a conversation's text (what span agreement and word counts read)


def conversation_text(messages: Any) -> tuple[str, list[int]]:
    """A conversation's messages' contents as one text (joined by a blank line), and where each message starts
    in it; a value that is no list of messages gives its text and no messages."""
    if not isinstance(messages, list):
        return str(messages), []
    contents = [str(m.get("content", "")) if isinstance(m, dict) else "" for m in messages]
    starts, at = [], 0
    for content in contents:
        starts.append(at)
        at += len(content) + len(SEPARATOR)
    return SEPARATOR.join(contents), starts


def assistant_turns(messages: list[Any]) -> list[list[Any]]:
    """A conversation cut into its turns: each ends with an assistant message and starts after the one before
    (the system and user messages that led to it); messages after the last assistant message go with the last
    turn. No turn when no message is the assistant's."""
    turns: list[list[Any]] = []
    current: list[Any] = []
    for message in messages:
        current.append(message)
        if isinstance(message, dict) and message.get("role") == "assistant":
            turns.append(current)
            current = []
    if current and turns:
        turns[-1] = turns[-1] + current
    return turns
