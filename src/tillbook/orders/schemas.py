"""Request bodies of the order endpoints (sales, purchases, returns).

The field types and their limits (DESIGN.md §3) are shared with the other
domains: ``kit/fields.py``.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Annotated, Any

from pydantic import BeforeValidator, Field, WithJsonSchema

from tillbook.kit.fields import (
    InvoiceNo,
    MinQty,
    Money,
    Percent,
    PositiveMoney,
    Qty,
    Ref,
    Strict,
    Text,
    Token,
    UnitPrice,
)


def _order_date(value: Any) -> Any:
    """``YYYY-MM-DD`` or an ISO 8601 date-time (the spec's terminal example)."""
    if isinstance(value, str):
        text = value.strip()
        if len(text) == 10:
            try:
                return OrderDate(dt.date.fromisoformat(text), None)
            except ValueError:
                pass
        else:
            try:
                when = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
            except ValueError:
                pass
            else:
                if when.tzinfo is None:
                    when = when.replace(tzinfo=dt.UTC)
                return OrderDate(when.date(), when)
    raise ValueError(f"must be a date YYYY-MM-DD or an ISO 8601 date-time, got {value!r}")


class OrderDate:
    __slots__ = ("date", "datetime")

    def __init__(self, date: dt.date, datetime: dt.datetime | None):
        self.date = date
        self.datetime = datetime

    def __eq__(self, other: object) -> bool:
        return isinstance(other, OrderDate) and (self.date, self.datetime) == (
            other.date,
            other.datetime,
        )

    def __hash__(self) -> int:
        return hash((self.date, self.datetime))


DateIn = Annotated[
    OrderDate,
    BeforeValidator(_order_date),
    WithJsonSchema(
        {
            "type": "string",
            "description": "YYYY-MM-DD or ISO 8601 date-time",
            "examples": ["2026-11-20"],
        }
    ),
]


class Tender(Strict):
    amount: PositiveMoney
    payment_mode_id: Ref
    reference: Annotated[str, Field(max_length=200)] | None = None
    notes: Text | None = None


class SaleItem(Strict):
    xid: Ref
    quantity: Qty
    unit_price: UnitPrice
    selected_unit_id: Ref | None = None
    tax_id: Ref | None = None
    discount_rate: Percent = Decimal("0")


class SaleIn(Strict):
    user_id: Ref
    order_date: DateIn
    product_items: Annotated[list[SaleItem], Field(min_length=1, max_length=500)]
    discount: Money = Decimal("0")
    shipping: Money = Decimal("0")
    invoice_number: InvoiceNo | None = None
    all_payments: Annotated[list[Tender], Field(max_length=20)] = Field(default=[])
    subtotal: Money | None = None
    total: Money | None = None
    tax_amount: Money | None = None
    unique_id: Token | None = None
    notes: Text | None = None


class PurchaseItem(Strict):
    xid: Ref
    quantity: Qty
    unit_price: UnitPrice
    selected_unit_id: Ref | None = None


class PurchaseIn(Strict):
    user_id: Ref
    order_date: DateIn
    product_items: Annotated[list[PurchaseItem], Field(min_length=1, max_length=500)]
    invoice_number: InvoiceNo | None = None
    all_payments: Annotated[list[Tender], Field(max_length=20)] = Field(default=[])
    unique_id: Token | None = None
    notes: Text | None = None


class ReturnItem(Strict):
    product_id: Ref
    quantity: MinQty
    unit_price: UnitPrice


class ReturnIn(Strict):
    user_id: Ref
    order_date: DateIn
    items: Annotated[list[ReturnItem], Field(min_length=1, max_length=500)]
    notes: Text | None = None
    invoice_number: InvoiceNo | None = Field(
        default=None, description="the original sale (or purchase) being returned against"
    )
    all_payments: Annotated[list[Tender], Field(max_length=20)] = Field(
        default=[], description="immediate refunds (sales returns only)"
    )
    unique_id: Token | None = None
