"""Request bodies of the catalog write endpoints (POST /price-adjustments)."""

from __future__ import annotations

from tillbook.kit.fields import Ref, Strict, Text, Token, UnitPrice


class PriceAdjustmentIn(Strict):
    product_id: Ref
    new_sales_price: UnitPrice
    notes: Text | None = None
    unique_id: Token | None = None
