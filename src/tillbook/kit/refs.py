"""References a client may send for a record: a numeric id, a numeric string or an xid."""

from __future__ import annotations

from tillbook.kit import xid


def ref_to_id(value: int | str | None) -> int | None:
    """The integer id a reference names, or None when it cannot name any record."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if 0 < value < 2**63 else None
    text = value.strip()
    if text.isascii() and text.isdigit():  # "²".isdigit() is True, int("²") fails
        # Past 19 digits no id fits (and past 4300 int() raises): not found, not a 500.
        n = int(text) if len(text) <= 19 else 0
        return n if 0 < n < 2**63 else None
    return xid.decode(text)
