"""Why stock moved, in words: the one mapping from a stock movement's stored
``reason`` code to what the back office shows, so a page never prints ``sales_return``."""

from __future__ import annotations

REASONS: dict[str, str] = {
    "opening": "Opening stock",
    "sale": "Sale",
    "sale_void": "Sale voided (back in stock)",
    "sales_return": "Customer return",
    "purchase": "Delivery from a supplier",
    "purchase_return": "Returned to the supplier",
    "adjustment": "Stock adjustment",
    "adjustment_add": "Stock adjustment (added)",
    "adjustment_subtract": "Stock adjustment (taken off)",
    "transfer_out": "Sent to another branch",
    "transfer_in": "Received from another branch",
    "transfer_back": "Transfer cancelled (back in stock)",
}


def movement_reason(reason: str | None) -> str:
    """The movement's cause in words; an unknown code is made readable, never hidden."""
    if not reason:
        return ""
    return REASONS.get(reason) or reason.replace("_", " ").capitalize()
