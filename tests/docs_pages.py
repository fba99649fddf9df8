"""The fenced blocks of a documentation page, with what the page says of each, for the tests that run them.

A command block of a tutorial or how-to page carries a marker on the line before its fence:
``<!-- docs: run -->`` (a test runs it, in the page's order), ``<!-- docs: run by tests/PATH -->`` (that test
runs it), ``<!-- docs: illustration -->`` (shown, not run: it needs what a test cannot have, as a team's
server or a user's files) or ``<!-- docs: in FILE -->`` (lines the page shows from a file a run block wrote).
A block with a ``title="NAME"`` is a file the reader saves under that name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

BLOCK = re.compile(r'^(?:(?P<indent>[ ]*)<!-- docs: (?P<marker>[^>]*?) -->\n)?(?P<fence>[ ]*)```(?P<lang>[\w-]*)'
                   r'(?: title="(?P<title>[^"]+)")?\n(?P<body>.*?)^(?P=fence)```$', re.S | re.M)  # fmt: skip
COMMAND_LANGUAGES = ("bash", "sh", "shell", "console", "")


@dataclass(frozen=True)
class Block:
    lang: str
    body: str
    marker: str | None
    title: str | None
    line: int

    @property
    def is_command(self) -> bool:
        return self.title is None and self.lang in COMMAND_LANGUAGES


def blocks(path: Path) -> list[Block]:
    text = path.read_text(encoding="utf-8")
    return [Block(m["lang"], _dedent(m["body"], m["fence"]), m["marker"], m["title"],
                  text.count("\n", 0, m.start("lang")) + 1) for m in BLOCK.finditer(text)]  # fmt: skip


def _dedent(body: str, indent: str) -> str:
    return "".join(line.removeprefix(indent) for line in body.splitlines(keepends=True))
