"""Request bodies of the catalog write endpoints (POST /price-adjustments)."""

from __future__ import annotations

from tillbook.fields import Ref, Strict, UniqueId
from tillbook.kit.bounds import Note, UnitPrice


class PriceAdjustmentIn(Strict):
    product_id: Ref
    new_sales_price: UnitPrice
    notes: Note | None = None
    unique_id: UniqueId | None = None
