"""Request bodies of the stock endpoints (POST /stock-adjustments).

Quantities carry at most 4 decimal places and at least 0.01 (spec: minimum
quantity); more decimals is a 422, never a silent rounding (DESIGN.md §3).
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field, WithJsonSchema

from tillbook.kit.fields import MinQty, Ref, Strict, Text, Token

_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def _calendar_date(value: Any) -> Any:
    """Exactly ``YYYY-MM-DD`` and a real calendar day; no timestamps, no date-times."""
    if isinstance(value, str) and _DATE.match(value):
        try:
            return dt.date.fromisoformat(value)
        except ValueError:
            pass
    raise ValueError("must be a real calendar date YYYY-MM-DD")


CalendarDate = Annotated[
    dt.date,
    BeforeValidator(_calendar_date),
    WithJsonSchema({"type": "string", "format": "date", "examples": ["2027-03-31"]}),
]
BatchNumber = Annotated[str, Field(min_length=1, max_length=100)]


class StockAdjustmentIn(Strict):
    product_id: Ref
    quantity: MinQty
    adjustment_type: Literal["add", "subtract"]
    notes: Text | None = None
    batch_number: BatchNumber | None = None
    expiry_date: CalendarDate | None = None
    unique_id: Token | None = None
