"""Values quoted back to a client in error messages.

An error message names what was wrong and may show what was sent, but only a
short piece of it: a 900 KB field echoed in the message (and again in ``errors``)
turns one bad request into a large answer and a large log line (DESIGN.md §12).
Passwords and secrets are never quoted at all (``api/body.py`` decides which
fields those are).
"""

from __future__ import annotations

QUOTE_LIMIT = 100
ELLIPSIS = "…"


def shorten(text: str, limit: int = QUOTE_LIMIT) -> str:
    """``text`` itself when it is at most ``limit`` characters, else its first
    ``limit`` characters and an ellipsis."""
    return text if len(text) <= limit else text[:limit] + ELLIPSIS


def quoted(value: object, limit: int = QUOTE_LIMIT) -> str:
    """``repr(value)`` showing at most ``limit`` characters of the value.

    Strings and bytes are cut before ``repr`` (so the quotes stay balanced and
    the ellipsis sits outside them); anything else has its ``repr`` cut."""
    if isinstance(value, str | bytes) and len(value) > limit:
        return repr(value[:limit]) + ELLIPSIS
    return shorten(repr(value), limit)
