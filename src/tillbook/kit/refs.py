"""References a client may send for a record: a numeric id, a numeric string or an xid."""

from __future__ import annotations

from tillbook.kit import numerals, xid


def ref_to_id(value: int | str | None) -> int | None:
    """The integer id a reference names, or None when it cannot name any record."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if 0 < value < 2**63 else None
    if value.isascii() and value.isdigit():
        # Past 19 digits no id fits: not found, not a 500 (kit/numerals.py).
        n = numerals.whole(value) or 0
        return n if 0 < n < 2**63 else None
    # Anything else is an xid or nothing: " 1", "+1", "1_000", "２" and "²" name
    # no record (no canonical xid has a space, a sign or another script's digit).
    return xid.decode(value)
