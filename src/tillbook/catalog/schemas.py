"""Request bodies of the catalog write endpoints (POST /price-adjustments)."""

from __future__ import annotations

from tillbook.kit.bounds import Note, UnitPrice
from tillbook.orders.schemas import Ref, Strict, UniqueId


class PriceAdjustmentIn(Strict):
    product_id: Ref
    new_sales_price: UnitPrice
    notes: Note | None = None
    unique_id: UniqueId | None = None
