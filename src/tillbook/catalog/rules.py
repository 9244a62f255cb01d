"""The catalog's pure rules: what makes a product, a listing or its opening stock
acceptable, whatever the door (the admin API, the back office, the CLI or a CSV
import).

Each rule takes plain values and answers the problem in words (or None), so the
product service (``catalog.products``) and the import (``catalog.import_export``)
word a refusal the same way and cannot drift apart; they only differ in where they
report it (a field path such as ``listings.0.sales_price``, or a file's line and
column). Rules that need the database (an item code or barcode already another
product's, an archived category) stay with the services that read it. The shapes
of single values (a name, an item code, a barcode's characters and length) are the
request types of ``catalog.schemas``, which both doors parse with.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from decimal import Decimal

from tillbook.kit import bounds
from tillbook.kit.bounds import MONEY, QTY

# At most this many barcodes per product (``ProductIn.barcodes``, an import's
# ``barcode`` cell separated by ``|``).
MAX_BARCODES = 20


def slugify(name: str) -> str:
    """The URL slug of a name: lower-case ASCII letters and digits joined by ``-``."""
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "item"


def price_problem(sales: Decimal | None, mrp: Decimal | None) -> str | None:
    """The MRP (maximum retail price) is the most a shop may charge: a sales price
    above it is refused."""
    if sales is not None and mrp is not None and sales > mrp:
        return f"{sales} is above the MRP {mrp}"
    return None


def repeated(values: Sequence[str]) -> list[int]:
    """The positions of the values already given earlier in ``values`` (a barcode
    names one product, so a product lists each once)."""
    seen: set[str] = set()
    out: list[int] = []
    for i, value in enumerate(values):
        if value in seen:
            out.append(i)
        seen.add(value)
    return out


def unit_problems(unit_ids: Sequence[int], base_unit: int | None) -> list[tuple[int, str]]:
    """An additional unit counts the product in another unit than its base one, so
    the product needs a base unit, and each additional unit is another unit, given
    once: ``(position, problem)`` for each that is not."""
    out: list[tuple[int, str]] = []
    seen: set[int] = set()
    for i, unit_id in enumerate(unit_ids):
        if base_unit is None:
            out.append((i, "the product has no base unit (unit_id) to count it in"))
        elif unit_id == base_unit:
            out.append((i, "is the product's base unit"))
        if unit_id in seen:
            out.append((i, f"unit {unit_id} is given twice"))
        seen.add(unit_id)
    return out


def opening_stock_problem(quantity: Decimal, unit_cost: Decimal) -> str | None:
    """A new listing's opening stock: none or more, and with its value within what
    the books hold (``kit.bounds``)."""
    if quantity < 0:
        return "must be 0 or more for a new listing"
    if quantity == 0:
        return None
    return bounds.exceeds(quantity, QTY, "the opening stock") or bounds.exceeds(
        quantity * unit_cost, MONEY, "the opening stock's value"
    )
