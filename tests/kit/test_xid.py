"""The xid codec's fast path (``kit/xid._OneNumber``) against sqids itself."""

from __future__ import annotations

import random
import sys

import pytest
from sqids import Sqids

from tillbook.kit import xid


def _pair(alphabet: str) -> tuple[Sqids, xid._OneNumber]:
    return Sqids(alphabet=alphabet, min_length=xid.MIN_LENGTH), xid._OneNumber(
        alphabet, xid.MIN_LENGTH
    )


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_fast_codec_encodes_and_decodes_as_sqids(seed: int) -> None:
    """Every number of a wide sample, on three alphabets: the same xid as sqids (or
    none where sqids' first candidate is blocked and it moves on), and the same
    number decoded from sqids' xid, blocked ones included."""
    letters = list(xid._BASE_ALPHABET)
    random.Random(seed).shuffle(letters)
    codec, fast = _pair("".join(letters))
    rng = random.Random(seed)
    numbers = [*range(0, 30_000), sys.maxsize, sys.maxsize - 1]
    numbers += [rng.randrange(30_000, 10**7) for _ in range(5_000)]
    numbers += [rng.randrange(10**7, sys.maxsize) for _ in range(5_000)]
    blocked = 0
    for n in numbers:
        want = codec.encode([n])
        got = fast.encode(n)
        if got is None:
            blocked += 1
        else:
            assert got == want, n
        assert fast.first_number(want) == n, n
    assert blocked > 0  # the sample reaches sqids' blocklist


def test_encode_and_decode_round_trip_through_the_module() -> None:
    for n in (1, 2, 61, 62, 3_844, 123_456_789, sys.maxsize):
        assert xid.decode(xid.encode(n)) == n
        assert xid.encode(n) == xid._codec().encode([n])


@pytest.mark.parametrize(
    "text", ["", "a", "!!!!!!!!", "x" * 33, "ÄÖÜäöüßé", "0000000000000000000000000000000"]
)
def test_what_is_no_xid_decodes_to_none(text: str) -> None:
    if text and all(c in xid._BASE_ALPHABET for c in text) and len(text) <= 32:
        n = xid.decode(text)
        assert n is None or xid.encode(n) == text
    else:
        assert xid.decode(text) is None


def test_non_canonical_strings_are_refused() -> None:
    """A string sqids decodes to a number but that is not that number's encoding
    (another padding, a second number) is no xid."""
    codec = xid._codec()
    canonical = xid.encode(987_654)
    assert xid.decode(canonical) == 987_654
    two = codec.encode([987_654, 1])
    assert xid.decode(two) is None
    assert xid.decode(canonical + canonical[-1]) is None
