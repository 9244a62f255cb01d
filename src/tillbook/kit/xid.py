"""String hash ids (``xid``) for integer primary keys.

The alphabet is shuffled per deployment from the master key, so xids of one
installation do not decode on another.

An xid is sqids' encoding of one number (``Sqids(alphabet, min_length=8)``).
sqids works out, on every call, alphabets that depend only on one of 62 offsets
(rotations, reversals, shuffles) and scans its blocklist word by word: 30-40 µs a
call, several calls a request (a sale's three products, their xids in the answer
and the events). ``_OneNumber`` computes the 62 rounds once and checks the
blocklist by set lookups; an id the blocklist refuses, which sqids
encodes again with the next offset, is left to sqids itself. At start it checks
itself against sqids on a few hundred numbers and is not used if any differs
(``tests/kit/test_xid.py`` compares them on many more).
"""

from __future__ import annotations

import hashlib
import logging
import random
import sys
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from sqids import Sqids
from sqids.constants import DEFAULT_BLOCKLIST

from tillbook.config import get_settings, master_key_bytes

log = logging.getLogger("tillbook.xid")

_BASE_ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
MIN_LENGTH = 8


def _alphabet() -> str:
    seed = hashlib.sha256(b"xid:" + master_key_bytes(get_settings())).digest()
    letters = list(_BASE_ALPHABET)
    random.Random(seed).shuffle(letters)
    return "".join(letters)


def _shuffle(alphabet: str) -> str:
    """sqids' own shuffle (``Sqids.__shuffle``)."""
    chars = list(alphabet)
    i, j = 0, len(chars) - 1
    while j > 0:
        r = (i * j + ord(chars[i]) + ord(chars[j])) % len(chars)
        chars[i], chars[r] = chars[r], chars[i]
        i += 1
        j -= 1
    return "".join(chars)


class _OneNumber:
    """sqids' encoding of a single number, its per-offset alphabets computed once.

    For one number sqids rotates its alphabet by an offset taken from the number,
    takes the first character as the prefix, reverses the rest, writes the number
    in base 61 over it and, below the minimum length, pads with the reversed
    alphabet's first character and then its shuffle. Decoding reads the prefix's
    offset and the digits up to that separator."""

    def __init__(self, alphabet: str, min_length: int):
        self.alphabet = shuffled = _shuffle(alphabet)  # as ``Sqids.__init__``
        self.size = len(shuffled)
        self.min_length = min_length
        self.index = {c: i for i, c in enumerate(shuffled)}
        self.rounds: list[tuple[str, str, dict[str, int], str]] = []
        for offset in range(self.size):
            rotated = shuffled[offset:] + shuffled[:offset]
            reverse = rotated[::-1]
            digits = reverse[1:]
            pad = reverse[0] + _shuffle(reverse)
            self.rounds.append((rotated[0], digits, {c: i for i, c in enumerate(digits)}, pad))
        # The blocklist as ``Sqids.__init__`` filters it for a custom alphabet.
        lower = set(shuffled.lower())
        exact: set[str] = set()
        ends: set[str] = set()
        anywhere: set[str] = set()
        for word in DEFAULT_BLOCKLIST:
            if len(word) < 3:
                continue
            w = word.lower()
            if set(w) & lower != set(w):
                continue
            if len(word) == 3:
                exact.add(w)
            elif set(w) & set("0123456789"):
                ends.add(w)
            else:
                anywhere.add(w)
        self.exact = exact
        # Looked up by the id's own prefixes, suffixes and substrings of each
        # length a word has: the same answer as sqids' scan of every word.
        self.ends = ends
        self.end_lengths = sorted({len(w) for w in ends})
        self.anywhere = anywhere
        self.anywhere_lengths = sorted({len(w) for w in anywhere})

    def blocked(self, id_: str) -> bool:
        """``Sqids.__is_blocked_id``."""
        low = id_.lower()
        size = len(low)
        if size == 3:
            return low in self.exact
        for n in self.end_lengths:
            if n > size:
                break
            if low[:n] in self.ends or low[size - n :] in self.ends:
                return True
        for n in self.anywhere_lengths:
            if n > size:
                break
            for i in range(size - n + 1):
                if low[i : i + n] in self.anywhere:
                    return True
        return False

    def encode(self, number: int) -> str | None:
        """The xid of ``number``; None when sqids would move to the next offset
        (the first candidate is blocked), which sqids then does."""
        if not 0 <= number <= sys.maxsize:
            raise ValueError(f"Encoding supports numbers between 0 and {sys.maxsize}")
        size = self.size
        prefix, digits, _index, pad = self.rounds[(ord(self.alphabet[number % size]) + 1) % size]
        base = size - 1
        out = []
        rest = number
        while True:
            out.append(digits[rest % base])
            rest //= base
            if not rest:
                break
        id_ = prefix + "".join(reversed(out))
        if len(id_) < self.min_length:
            id_ += pad[: self.min_length - len(id_)]
        if len(id_) >= 3 and self.blocked(id_):
            return None
        return id_

    def first_number(self, id_: str) -> int | None:
        """The first number sqids decodes from ``id_`` (None: it decodes none)."""
        index = self.index
        for c in id_:
            if c not in index:
                return None
        _prefix, _digits, digit_of, pad = self.rounds[index[id_[0]]]
        chunk = id_[1:].split(pad[0], 1)[0]  # up to the separator
        if not chunk:
            return None
        base = self.size - 1
        number = 0
        for c in chunk:
            number = number * base + digit_of[c]
        return number


def _agrees(fast: _OneNumber, codec: Sqids) -> bool:
    rng = random.Random(0)
    numbers = [0, 1, 2, 60, 61, 62, 3843, 3844, sys.maxsize, *range(1, 200)]
    numbers += [rng.randrange(1, 10**12) for _ in range(150)]
    for n in numbers:
        want = codec.encode([n])
        got = fast.encode(n)
        if (got is not None and got != want) or fast.first_number(want) != n:
            return False
    return True


@lru_cache
def _codecs() -> tuple[Sqids, _OneNumber | None]:
    alphabet = _alphabet()
    codec = Sqids(alphabet=alphabet, min_length=MIN_LENGTH)
    fast: _OneNumber | None = _OneNumber(alphabet, MIN_LENGTH)
    if fast is not None and not _agrees(fast, codec):
        log.warning("the fast xid codec disagrees with sqids here; using sqids alone")
        fast = None
    return codec, fast


def _codec() -> Sqids:
    return _codecs()[0]


# Both directions are pure functions of the master key: remembered.
@lru_cache(maxsize=65536)
def encode(id_: int) -> str:
    codec, fast = _codecs()
    if fast is not None:
        found = fast.encode(id_)
        if found is not None:
            return found
    return codec.encode([id_])


def decode(xid: str) -> int | None:
    """The id behind an xid, or None when the string is not a canonical xid."""
    if not xid or len(xid) > 32:
        return None
    return _decode(xid)


@lru_cache(maxsize=65536)
def _decode(xid: str) -> int | None:
    try:
        codec, fast = _codecs()
        if fast is not None:
            number = fast.first_number(xid)
            numbers = [] if number is None else [number]
        else:
            numbers = codec.decode(xid)
        # Only the canonical encoding of a number is its xid (so one number, and
        # a string that is its encoding is all sqids decodes from it); the check
        # goes through ``encode``'s cache (responses encode the same ids).
        # Re-encoding raises for decoded numbers beyond 2**63 - 1: not an xid either.
        if len(numbers) != 1 or encode(numbers[0]) != xid:
            return None
    except Exception:
        return None
    return numbers[0]


def record(row: Mapping[str, Any], *names: str) -> dict[str, Any]:
    """A record as the API shows it: its ``id`` and ``xid`` first, then the columns
    ``names`` of ``row`` (a row by column name), as a till's reference lists and
    their change feeds show brands, units, taxes, categories and payment modes."""
    id_ = row["id"]
    return {"id": id_, "xid": encode(id_), **{name: row[name] for name in names}}
