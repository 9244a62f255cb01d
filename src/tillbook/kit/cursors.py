"""Cursors the service signs, so a client reads back only what it was given.

A cursor is a position in a paged read (a change feed's last (time, id), a ledger's
last line and running balance). A client that could edit one could skip records,
repeat them, or move a feed's time ahead and be told it has caught up when it has
missed every change. So each cursor carries an HMAC-SHA256 over its position and
its ``Scope``: what it pages (the feed or report, the company, the warehouse, and
whatever else fixes the answer). A cursor edited, cut short, or issued for another
scope fails the check (compared in constant time) and is refused as a 422 naming
``cursor``. The position is signed, not hidden: the cursor is opaque by contract,
and nothing in it is secret.

The key is derived from the master key by the caller (``config.cursor_key()``):
kit reads no settings.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
from collections.abc import Sequence
from dataclasses import dataclass

import orjson

from tillbook.errors import invalid

MAC_BYTES = 32  # the whole SHA-256 tag: cursors are short enough as it is


@dataclass(frozen=True)
class Scope:
    """What a cursor may page: its key, and the names and ids that fix the answer
    (``("feed", "products", company_id, warehouse_id)``)."""

    key: bytes
    parts: Sequence[str | int | None]

    def _mac(self, position: bytes) -> bytes:
        # JSON keeps the parts apart ("a", "bc" is not "ab", "c") and the position
        # follows them whole, so no two (scope, position) pairs sign the same bytes.
        message = orjson.dumps(list(self.parts)) + b"\n" + position
        return hmac.new(self.key, message, hashlib.sha256).digest()

    def seal(self, position: bytes) -> str:
        """The url-safe cursor for ``position`` (bytes the caller reads back)."""
        raw = self._mac(position) + position
        return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")

    def open(self, text: str, field: str = "cursor") -> bytes:
        """The position ``seal`` gave in this scope, or a 422 naming ``field``."""
        try:
            raw = base64.urlsafe_b64decode(text.encode("ascii") + b"=" * (-len(text) % 4))
        except (binascii.Error, UnicodeError, ValueError):
            raise invalid(field, "is not a cursor this service gave") from None
        tag, position = raw[:MAC_BYTES], raw[MAC_BYTES:]
        if len(raw) <= MAC_BYTES or not hmac.compare_digest(tag, self._mac(position)):
            raise invalid(field, "is not a cursor this service gave for this list")
        return position


def peek(text: str) -> bytes:
    """The position inside a cursor this process has just sealed, unchecked: for
    the ETag of the page that carries it (``api.conditional``), never for paging."""
    raw = base64.urlsafe_b64decode(text.encode("ascii") + b"=" * (-len(text) % 4))
    return raw[MAC_BYTES:]
