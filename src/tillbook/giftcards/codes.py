"""A gift card's code: random, shown once, stored only as a keyed hash.

16 characters of RFC 4648 base32 (A–Z, 2–7: no 0/O or 1/I to misread off a
receipt) are 80 random bits: guessing one of even a million live cards takes
about 2^60 tries, so the rate limits (``giftcards.guard``) make walking the space
hopeless rather than merely slow. The code is printed in groups of four
(``ABCD-EFGH-JKLM-NPQR``); dashes, spaces and lower case are accepted back.

The database keeps HMAC-SHA256 of ``company id : code`` under a key derived from
the master key (``config.derived_key``): a copy of the tables spends no card, the
same code in two companies is two unrelated keys, and a card is found by an
indexed equality on the digest, which takes the same time whichever characters of
a wrong code differ (there is no prefix to time).
"""

from __future__ import annotations

import hmac
import secrets
from hashlib import sha256

from tillbook.config import derived_key, master_key

ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
LENGTH = 16


def new_code() -> str:
    return "".join(secrets.choice(ALPHABET) for _ in range(LENGTH))


def shown(code: str) -> str:
    """The code as printed: groups of four joined by dashes."""
    return "-".join(code[i : i + 4] for i in range(0, len(code), 4))


def masked(last4: str | None) -> str:
    """What lists and statements show: the last four only."""
    return "****-****-****-" + (last4 or "????")


def normalize(text: str) -> str | None:
    """The code as stored, or None when ``text`` cannot be one (so a wrong
    shape is refused like an unknown code, without a database read)."""
    code = "".join(ch for ch in text.upper() if ch not in "- ")
    if len(code) != LENGTH or any(ch not in ALPHABET for ch in code):
        return None
    return code


def lookup_key(company_id: int, code: str) -> str:
    """The keyed hash a card is stored and found under."""
    key = derived_key(master_key(), "gift-card-codes/v1")
    return hmac.new(key, f"{company_id}:{code}".encode(), sha256).hexdigest()


def credit_key(customer_id: int) -> str:
    """Where a customer's store credit is found: one row per customer."""
    return f"customer:{customer_id}"
