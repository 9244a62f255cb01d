"""Field types of request bodies that every domain's schemas share: references,
tokens, invoice numbers, payment references and the body base class. Their limits
come from ``kit/bounds.py`` (derived from the columns that store them), so a sale,
a payment and an adjustment refuse the same value with the same message."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr

from tillbook.kit.bounds import Clean, PositiveMoney, stored_length
from tillbook.models import Order, Payment

__all__ = ["InvoiceNo", "PositiveMoney", "Ref", "Reference", "Strict", "UniqueId"]

Ref = Annotated[
    StrictInt | Annotated[StrictStr, Field(min_length=1, max_length=64), Clean],
    Field(description="numeric id, numeric string or xid"),
]
# Kept as the order's ``unique_id`` (and as the idempotency token).
UniqueId = Annotated[
    StrictStr, Field(min_length=1, max_length=stored_length(Order.unique_id)), Clean
]
InvoiceNo = Annotated[
    StrictStr,
    Field(
        min_length=1,
        max_length=stored_length(Order.invoice_number),
        pattern=r"^[\x21-\x7e ]+$",
    ),
    Clean,
]
Reference = Annotated[StrictStr, Field(max_length=stored_length(Payment.reference)), Clean]


class Strict(BaseModel):
    model_config = ConfigDict(extra="ignore", arbitrary_types_allowed=True)
