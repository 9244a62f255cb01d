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


# --- stocktakes (``inventory.counts``) -------------------------------------------------

MAX_COUNT_LINES = 5000
# What one request names (a list to count, the entries of one save): a body stays
# well within the request cap (DESIGN.md §12); a bigger sheet is drawn up by scope.
MAX_COUNT_ITEMS = 500
# A barcode or an item code, as scanned or typed.
Barcode = Annotated[StrictStr, Field(min_length=1, max_length=100), Clean]


class StockCountIn(Strict):
    """A new count sheet for one branch: every product listed there (``all``), those
    of one category (``category``, ``category_id``) or a chosen list (``list``:
    ``product_ids`` and/or ``item_codes``, each an item code or a barcode; scanning
    adds more later)."""

    warehouse_id: Ref
    scope: Literal["all", "category", "list"] = "all"
    category_id: Ref | None = None
    product_ids: Annotated[list[Ref], Field(max_length=MAX_COUNT_ITEMS)] | None = None
    item_codes: Annotated[list[Barcode], Field(max_length=MAX_COUNT_ITEMS)] | None = None
    notes: Note | None = None
    unique_id: UniqueId | None = None


class CountEntryIn(Strict):
    """What was counted of one product of the sheet; ``counted`` null clears it
    (not counted: posting leaves that product's stock as it is)."""

    product_id: Ref
    counted: ZeroOrMoreQuantity | None


class StockCountEntriesIn(Strict):
    """Counted quantities typed in, and/or one scan: ``barcode`` (a barcode or item
    code) adds one to its product's line, adding the line when the branch lists the
    product and the sheet lacks it."""

    items: Annotated[list[CountEntryIn], Field(max_length=MAX_COUNT_ITEMS)] = Field(
        default_factory=list
    )
    barcode: Barcode | None = None
    unique_id: UniqueId | None = None


class StockCountPostIn(Strict):
    unique_id: UniqueId | None = None
