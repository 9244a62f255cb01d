"""String hash ids (``xid``) for integer primary keys.

The alphabet is shuffled per deployment from the master key, so xids of one
installation do not decode on another.
"""

from __future__ import annotations

import hashlib
import random
from functools import lru_cache

from sqids import Sqids

from tillbook.config import get_settings, master_key_bytes

_BASE_ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"


@lru_cache
def _codec() -> Sqids:
    seed = hashlib.sha256(b"xid:" + master_key_bytes(get_settings())).digest()
    letters = list(_BASE_ALPHABET)
    random.Random(seed).shuffle(letters)
    return Sqids(alphabet="".join(letters), min_length=8)


# Both directions are pure functions of the master key and cost tens of
# microseconds each in sqids (alphabet shuffles, a blocklist scan), several times
# per request: remembered.
@lru_cache(maxsize=65536)
def encode(id_: int) -> str:
    return _codec().encode([id_])


def decode(xid: str) -> int | None:
    """The id behind an xid, or None when the string is not a canonical xid."""
    if not xid or len(xid) > 32:
        return None
    return _decode(xid)


@lru_cache(maxsize=65536)
def _decode(xid: str) -> int | None:
    try:
        numbers = _codec().decode(xid)
        # Only the canonical encoding of a number is its xid; the check goes through
        # ``encode``'s cache (responses encode the same ids). Re-encoding raises for
        # decoded numbers beyond 2**63 - 1: not an xid either.
        if len(numbers) != 1 or encode(numbers[0]) != xid:
            return None
    except Exception:
        return None
    return numbers[0]
