"""CSV cells that a spreadsheet shows and never runs (tillbook issue 22, item 3).

A customer, a supplier, a product or a narration is typed by a till, a cashier or
an import, and comes back in the CSV files this service writes. A spreadsheet that
opens such a file evaluates a cell that starts like a formula: ``=HYPERLINK(…)``,
``@SUM(…)``, ``+cmd|…``, ``-2+3`` (OWASP, "CSV Injection"). Every CSV writer of the
service goes through ``writer`` below, so no cell leaves without ``neutral``.

The rule, for every cell of every file:

* A cell that *starts like a formula* gets one ``'`` in front: its first
  character, after any ``'`` and spaces, is ``= + - @``, a tab, a carriage return
  or a line feed, or the full-width ``＝ ＋ － ＠`` (which spreadsheets in East
  Asian locales read as their ASCII forms). Excel and LibreOffice show a leading
  ``'`` as "this cell is text" and hide it.
* Except a plain number, ``-?[0-9]+(.[0-9]+)?`` in ASCII: ``-12.50`` in a money
  column stays a number a spreadsheet sums. Such a cell cannot carry a formula, so
  the exception is by content, not by column: a customer named ``-12`` is left as
  it is too, and reads back the same.
* The quote itself is escaped: a value that already starts with ``'`` before a
  formula character (a name really spelled ``'=x``) is written ``''=x``.

``restore`` undoes exactly that, and the imports apply it to every cell they read,
so export → import gives back every value as it was. A ``'`` that is not followed
(after more ``'`` and spaces) by a formula character is left alone on both sides: a
hand-made file's ``'hello`` imports as ``'hello``; its ``'=1`` (the spreadsheet's
own escape, typed by hand) imports as ``=1``, which is what it shows.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable
from typing import Any, Protocol

# The characters a spreadsheet starts a formula (or a DDE command) with.
FORMULA_START = frozenset("=+-@\t\r\n＝＋－＠")
_NUMBER = re.compile(r"-?[0-9]+(?:\.[0-9]+)?", re.ASCII)


def _starts_formula(text: str) -> bool:
    """``text``'s first character after any ``'`` and spaces starts a formula."""
    return text.lstrip("'").lstrip(" ")[:1] in FORMULA_START


def neutral(value: str) -> str:
    """``value`` as a cell a spreadsheet shows as text and never evaluates."""
    if _starts_formula(value) and not _NUMBER.fullmatch(value):
        return "'" + value
    return value


def restore(cell: str) -> str:
    """The value ``neutral`` turned into ``cell``: the one ``'`` it added dropped."""
    if cell.startswith("'") and _starts_formula(cell[1:]):
        return cell[1:]
    return cell


class _Writer(Protocol):
    def writerow(self, row: Iterable[Any], /) -> Any: ...


class SafeWriter:
    """``csv.writer`` whose every cell goes through ``neutral`` (``None`` as empty)."""

    def __init__(self, out: Any, **options: Any) -> None:
        self._writer: _Writer = csv.writer(out, **options)

    def writerow(self, row: Iterable[object]) -> None:
        self._writer.writerow(["" if c is None else neutral(str(c)) for c in row])

    def writerows(self, rows: Iterable[Iterable[object]]) -> None:
        for row in rows:
            self.writerow(row)


def writer(out: Any, **options: Any) -> SafeWriter:
    """The one way this service writes CSV: ``csv.writer(out, **options)`` made safe
    to open in a spreadsheet."""
    return SafeWriter(out, **options)
