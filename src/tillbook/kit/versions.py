"""Optimistic concurrency for back-office edits.

Every editable record carries a ``version`` (``models.base.Editable``). A read
answers it as the ``ETag`` header (``"<version>"``) and as a ``version`` field; an
edit names the version it was based on, as ``If-Match`` or as ``version`` in its
body. An edit of a record changed since (another manager, another tab) is refused
with 412 instead of silently overwriting that change; an edit that names no
version is refused with 428, so no client can skip the check by omission."""

from __future__ import annotations

from tillbook.errors import PreconditionFailed, PreconditionRequired
from tillbook.kit import numerals

MAX_VERSION = 2**31 - 1


def etag(version: int) -> str:
    return f'"{version}"'


def parse_if_match(header: str | None) -> int | None:
    """The version an ``If-Match`` header names (``"3"``, ``W/"3"`` or ``3``); None
    when absent. Anything else names no version this service ever issued."""
    if header is None or not header.strip():
        return None
    text = header.strip()
    if text.startswith("W/"):
        text = text[2:]
    text = text.strip('"')
    version = numerals.whole(text, max_digits=10)
    return -1 if version is None else version


def expect(current: int, expected: int | None, what: str) -> None:
    """Refuse an edit based on anything but the record's current version."""
    if expected is None:
        raise PreconditionRequired(
            f"{what}: send If-Match with the ETag from your last read (or a 'version' field)"
        )
    if expected != current:
        raise PreconditionFailed(
            f"{what} was changed since you read it (it is now at version {current}); "
            "read it again and reapply your change"
        )
