"""Numbers a client writes as text: ASCII digits, and nothing else (issue 22, item 5).

Python reads more than ``0-9`` as digits: ``int("２")`` is 2 (full-width),
``int("١")`` is 1 (Arabic-Indic), ``"²".isdigit()`` is True but ``int("²")``
raises, and ``int`` also takes ``" 1"``, ``"+1"`` and ``"1_000"``. ``Decimal``
does the same. A parameter read that way either names a record the client never
wrote (``?warehouse_id=２`` as branch 2) or ends in a 500. Every id, version,
page, limit and quantity taken from a query string, a path, a form or a text cell
goes through one of these two functions, so every door reads the same numbers.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

# re.ASCII: without it ``[0-9]`` is still ASCII, but say so for the reader.
_WHOLE = re.compile(r"[0-9]+", re.ASCII)
# A decimal as people and spreadsheets write it: an optional minus, digits, an
# optional fraction (``12``, ``-12.50``, ``.5``, ``12.``) and an optional exponent
# (``1E+2``, what ``str(Decimal)`` may write).
_DECIMAL = re.compile(r"-?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]{1,4})?", re.ASCII)

# No id, version or count has more digits (2**63 has 19); past that, and long
# before int()'s 4300-digit limit, a number is refused without reading it.
MAX_DIGITS = 19


def whole(text: str, max_digits: int = MAX_DIGITS) -> int | None:
    """The number ``text`` writes in ASCII digits only (no sign, space, ``_`` or
    other script's digits), or None."""
    if len(text) > max_digits or not _WHOLE.fullmatch(text):
        return None
    return int(text)


def is_decimal(text: str) -> bool:
    """``text`` is a plain ASCII decimal (see ``_DECIMAL``); at most 64 characters."""
    return len(text) <= 64 and _DECIMAL.fullmatch(text) is not None


def decimal(text: str) -> Decimal | None:
    """The ``Decimal`` ``text`` writes as a plain ASCII decimal, or None."""
    if not is_decimal(text):
        return None
    try:
        return Decimal(text)
    except InvalidOperation:  # pragma: no cover - the pattern admits only numbers
        return None
