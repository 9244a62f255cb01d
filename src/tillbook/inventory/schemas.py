"""Request bodies of the stock endpoints (POST /stock-adjustments).

Limits from ``kit/bounds.py``: quantities carry at most 4 decimal places, at
least 0.01 (spec: minimum quantity) and fit NUMERIC(18,4) — more decimals is a
422, never a silent rounding (DESIGN.md §3). An expiry date may lie years ahead
but must be a day the database holds.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StrictStr

from tillbook.fields import Ref, Strict, UniqueId
from tillbook.kit.bounds import Clean, MinQuantity, Note, StorableDay, stored_length
from tillbook.models import StockBatch

BatchNumber = Annotated[
    StrictStr, Field(min_length=1, max_length=stored_length(StockBatch.batch_number)), Clean
]


class StockAdjustmentIn(Strict):
    product_id: Ref
    quantity: MinQuantity
    adjustment_type: Literal["add", "subtract"]
    notes: Note | None = None
    batch_number: BatchNumber | None = None
    expiry_date: StorableDay | None = None
    unique_id: UniqueId | None = None
