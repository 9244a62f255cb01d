"""Request bodies of POST /payments and POST /expenses.

Money carries at most 2 decimal places and must be above zero; more decimals is a
422, never a silent rounding (DESIGN.md §3). Dates are exactly ``YYYY-MM-DD``.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field, WithJsonSchema

from tillbook.kit.fields import PositiveMoney, Ref, Strict, Text, Token

_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def _plain_date(value: Any) -> Any:
    """Exactly ``YYYY-MM-DD`` and a real calendar day; no timestamps, no words."""
    if isinstance(value, str) and _DATE.match(value.strip()):
        try:
            return dt.date.fromisoformat(value.strip())
        except ValueError:
            pass
    raise ValueError("must be a date YYYY-MM-DD")


PlainDate = Annotated[
    dt.date,
    BeforeValidator(_plain_date),
    WithJsonSchema({"type": "string", "format": "date", "examples": ["2026-11-20"]}),
]
Reference = Annotated[str, Field(max_length=200)]


class AllocationIn(Strict):
    order_id: Ref
    amount: PositiveMoney


class PaymentIn(Strict):
    user_id: Ref
    payment_type: Literal["in", "out"]
    amount: PositiveMoney
    payment_mode_id: Ref
    date: PlainDate | None = None
    reference: Reference | None = None
    notes: Text | None = None
    invoices: Annotated[list[AllocationIn], Field(max_length=500)] | None = None
    unique_id: Token | None = None


class ExpenseIn(Strict):
    expense_category_id: Ref
    amount: PositiveMoney
    date: PlainDate
    payment_mode_id: Ref | None = None
    user_id: Ref | None = None
    reference: Reference | None = None
    notes: Text | None = None
    unique_id: Token | None = None
