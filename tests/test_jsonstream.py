import io
import json
import random

import pytest

from annols.jsonstream import JSONStreamError, iter_json_array


@pytest.mark.parametrize("chunk_size", [1, 2, 7, 64, 1 << 20])
def test_elements_come_back_whatever_the_chunk_size(chunk_size: int) -> None:
    rng = random.Random(chunk_size)
    values = [{"id": i, "text": 'é😀 \\"],' * rng.randrange(5), "n": [1.5e-7, 123456789, None]} for i in range(40)]
    values += [12345, "tail", [], {}]
    for text in (json.dumps(values), json.dumps(values, indent=2, ensure_ascii=False), "\ufeff " + json.dumps(values)):
        assert list(iter_json_array(io.StringIO(text + "\n"), chunk_size)) == values


@pytest.mark.parametrize(
    ("text", "index", "words"),
    [
        ('{"a": 1}', 0, "must start with '['"),
        ("[1, 2", 2, "not closed"),
        ("[1 2]", 1, "expected ','"),
        ('[1, {"a": }]', 1, "element 2"),
        ("[1, 2] [3]", 2, "after the closing ']'"),
        ('[{"a": 1}]}', 1, "after the closing ']'"),
    ],
)
def test_what_is_not_one_array_is_an_error_naming_the_element(text: str, index: int, words: str) -> None:
    with pytest.raises(JSONStreamError) as e:
        list(iter_json_array(io.StringIO(text), chunk_size=3))
    assert e.value.index == index and words in str(e.value)


def test_empty_array() -> None:
    assert list(iter_json_array(io.StringIO(" [ ] \n"))) == []
