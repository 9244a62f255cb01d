"""Request bodies of the stock endpoints (POST /stock-adjustments, /stock-transfers).

Limits from ``kit/bounds.py``: quantities carry at most 4 decimal places, at
least 0.01 (spec: minimum quantity) and fit NUMERIC(18,4) — more decimals is a
422, never a silent rounding (DESIGN.md §3). An expiry date may lie years ahead
but must be a day the database holds.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StrictStr

from tillbook.fields import Ref, Strict, UniqueId
from tillbook.kit.bounds import (
    Clean,
    MinQuantity,
    Note,
    StorableDay,
    ZeroOrMoreQuantity,
    stored_length,
)
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


class TransferItemIn(Strict):
    """Base units of one product (a transfer moves stock, not selling units)."""

    product_id: Ref
    quantity: MinQuantity


class StockTransferIn(Strict):
    to_warehouse_id: Ref
    items: Annotated[list[TransferItemIn], Field(min_length=1, max_length=500)]
    notes: Note | None = None
    unique_id: UniqueId | None = None


class ReceivedItemIn(Strict):
    """What arrived of one product: 0 up to what was dispatched."""

    product_id: Ref
    quantity: ZeroOrMoreQuantity


class TransferReceiptIn(Strict):
    """Without ``items``, everything dispatched arrived. With them, a product of the
    transfer that is not named arrived not at all; what did not arrive is written off
    (``reason`` says why)."""

    items: Annotated[list[ReceivedItemIn], Field(max_length=500)] | None = None
    reason: Note | None = None
    unique_id: UniqueId | None = None


class TransferCancelIn(Strict):
    reason: Note | None = None
    unique_id: UniqueId | None = None
