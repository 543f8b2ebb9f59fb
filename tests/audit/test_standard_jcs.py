"""RFC 8785 with the standard library alone (audit.hashing.standard_jcs, what the offline verifier
uses on a machine without the `rfc8785` package) writes exactly the package's bytes: numbers of
every magnitude (random bit patterns of doubles, powers of ten around each notation's edge),
strings with control characters and astral characters, keys sorted by UTF-16 code units."""

import math
import random
import struct

import pytest
import rfc8785

from audit.hashing import standard_jcs


def test_every_double_is_written_as_the_package_writes_it():
    rng = random.Random(8785)
    numbers = [m * 10.0**e for e in range(-30, 30) for m in (1, 1.5, 9.99, 123456789, 0.3)]
    while len(numbers) < 60_000:
        value = struct.unpack("<d", struct.pack("<Q", rng.getrandbits(64)))[0]
        if math.isfinite(value):
            numbers.append(value)
    numbers += [0.0, -0.0, 5e-324, 1.7976931348623157e308, 1e21, 1e-7, 1e-6, 2.0**53]
    differ = [n for n in numbers if standard_jcs(n) != rfc8785.dumps(n).decode()]
    assert differ == []


def test_strings_keys_and_nesting_are_written_as_the_package_writes_them():
    rng = random.Random(17)
    alphabet = ["a", "Z", "\n", "\x00", "\x1f", "\x7f", '"', "\\", "é", "\ue000", "\U0001f600", "\u2028", "/"]

    def text() -> str:
        return "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 6)))

    def value(depth: int):
        kind = rng.randrange(7 if depth < 3 else 5)
        if kind == 0:
            return text()
        if kind == 1:
            return rng.choice([None, True, False])
        if kind == 2:
            return rng.randint(-(2**53) + 1, 2**53 - 1)
        if kind == 3:
            return rng.uniform(-1e6, 1e6) * 10.0 ** rng.randint(-12, 12)
        if kind == 4:
            return float(rng.randint(-1000, 1000))
        if kind == 5:
            return [value(depth + 1) for _ in range(rng.randint(0, 4))]
        return {text(): value(depth + 1) for _ in range(rng.randint(0, 5))}

    for _ in range(3000):
        document = {text(): value(0) for _ in range(4)}
        assert standard_jcs(document) == rfc8785.dumps(document).decode(), document


@pytest.mark.parametrize("value", [float("nan"), float("inf"), 2**53, "\ud800", {"a": object()}])
def test_what_is_not_json_text_is_refused(value):
    with pytest.raises(ValueError):
        standard_jcs(value)
