"""Reading a large JSON array one element at a time.

Label Studio exports and some datasets are one JSON array of many objects; loading it
whole would need several times its size in memory. This reads fixed-size chunks and
decodes one element at a time with :meth:`json.JSONDecoder.raw_decode`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, Protocol

_WS = " \t\n\r"
_DECODER = json.JSONDecoder()


class TextReader(Protocol):
    """What is read from: a text file, or anything with its ``read``."""

    def read(self, size: int = -1, /) -> str: ...


class JSONStreamError(ValueError):
    """The text is not a JSON array; ``index`` is the element (0-based) where it broke."""

    def __init__(self, message: str, index: int) -> None:
        super().__init__(message)
        self.index = index


def iter_json_array(f: TextReader, chunk_size: int = 1 << 20) -> Iterator[Any]:
    """Yield the elements of the JSON array in text file ``f``, in order."""
    buf = f.read(chunk_size).lstrip(_WS + "\ufeff")
    while not buf:  # white space longer than a chunk
        more = f.read(chunk_size)
        if not more:
            break
        buf = more.lstrip(_WS)
    if not buf.startswith("["):
        raise JSONStreamError("not a JSON array (it must start with '[')", 0)
    pos = 1
    index = 0
    eof = False
    expect_value = True  # after '[' or ','
    while True:
        # Skip white space and separators, reading more when the buffer runs out.
        while True:
            while pos < len(buf) and buf[pos] in _WS:
                pos += 1
            if pos < len(buf) or eof:
                break
            more = f.read(chunk_size)
            eof = not more
            buf, pos = buf[pos:] + more, 0
        if pos >= len(buf):
            raise JSONStreamError("the array is not closed with ']'", index)
        char = buf[pos]
        if char == "]" and (index == 0 or not expect_value):
            rest = buf[pos + 1 :]
            while True:  # only white space may follow: anything else is not this array
                if rest.strip(_WS):
                    raise JSONStreamError(f"text after the closing ']' (after element {index})", index)
                if eof:
                    return
                rest = f.read(chunk_size)
                eof = not rest
        if not expect_value:
            if char != ",":
                raise JSONStreamError(f"expected ',' or ']' after element {index}", index)
            pos += 1
            expect_value = True
            continue
        while True:
            try:
                value, end = _DECODER.raw_decode(buf, pos)
            except json.JSONDecodeError as e:
                if eof:
                    raise JSONStreamError(f"element {index + 1}: {e.msg}", index) from None
                more = f.read(chunk_size)
                eof = not more
                buf, pos = buf[pos:] + more, 0
                continue
            # A number at the very end of the buffer may continue in the next chunk.
            if end == len(buf) and not eof:
                more = f.read(chunk_size)
                eof = not more
                buf, pos = buf[pos:] + more, 0
                continue
            break
        yield value
        index += 1
        pos = end
        expect_value = False
        if pos > chunk_size:
            buf, pos = buf[pos:], 0
