import json
import random
import struct

import pytest

from annols import jsontext

ALPHABET = [chr(i) for i in range(0x100)] + ["\u2028", "\u2029", "😀", "\ufeff", "\ud800", "/", "\\", '"', "é"]


def random_value(rng: random.Random, depth: int = 0) -> object:
    kind = rng.randrange(9 if depth < 3 else 6)
    if kind == 0:
        return "".join(rng.choice(ALPHABET) for _ in range(rng.randrange(10)))
    if kind == 1:
        return rng.choice([0, -1, 7, 2**53, -(2**63) - 1, 2**70])
    if kind == 2:
        raw = struct.unpack("d", rng.randbytes(8))[0]
        return rng.choice([raw, rng.random() * 10 ** rng.randint(-12, 22), 1e-7, 1e16, -0.0, 1.0])
    if kind == 3:
        return rng.choice([None, True, False])
    if kind == 4:
        return rng.choice([float("nan"), float("inf"), [], {}])
    if kind == 5:
        return "plain text"
    if kind == 6:
        return [random_value(rng, depth + 1) for _ in range(rng.randrange(4))]
    keys = [str(random_value(rng, 3)) for _ in range(rng.randrange(4))]  # keys as JSON has them
    return {k: random_value(rng, depth + 1) for k in keys}


@pytest.mark.parametrize("ensure_ascii", [True, False])
@pytest.mark.parametrize("indent", [None, 2])
def test_same_text_as_json_dumps(ensure_ascii: bool, indent: int | None) -> None:
    rng = random.Random(f"{ensure_ascii}{indent}")
    for _ in range(5000):
        value = random_value(rng)
        assert jsontext.dumps(value, ensure_ascii=ensure_ascii, indent=indent) == json.dumps(
            value, ensure_ascii=ensure_ascii, indent=indent
        ), repr(value)


def test_the_two_known_differences_fall_back() -> None:
    for value in ({"x": 1e-07}, ["\x7f"], {"a": [1e-5, "b"]}):
        assert jsontext.dumps(value, indent=2) == json.dumps(value, indent=2)
        assert jsontext.dumps(value) == json.dumps(value)


def test_what_json_refuses_is_refused() -> None:
    with pytest.raises(TypeError):
        jsontext.dumps({"x": object()})


def test_content_key_fast_path_is_the_json_dumps_key() -> None:
    import hashlib

    from annols.formats import content_key

    rng = random.Random(7)
    for _ in range(2000):
        value = {str(random_value(rng, 3)): "".join(rng.choice(ALPHABET) for _ in range(5)) for _ in range(3)}
        canonical = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        expected = f"p:{hashlib.sha256(canonical.encode('utf-8', 'surrogatepass')).hexdigest()[:20]}"
        try:
            assert content_key("p", value) == expected
        except UnicodeEncodeError:  # a lone surrogate: both ways refuse it
            with pytest.raises(UnicodeEncodeError):
                json.dumps(value, ensure_ascii=False).encode("utf-8")
