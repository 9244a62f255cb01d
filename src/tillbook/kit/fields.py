"""Field types of request bodies, shared by every domain's schemas.

Limits on scale follow DESIGN.md §3: quantities and unit prices carry at most 4
decimal places, money at most 2; more is a 422, never a silent rounding. Each
bound is written here once, so a sale, a payment and an adjustment refuse the
same value with the same message.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr

Ref = Annotated[
    StrictInt | Annotated[StrictStr, Field(min_length=1, max_length=64)],
    Field(description="numeric id, numeric string or xid"),
]
Qty = Annotated[Decimal, Field(gt=0, max_digits=18, decimal_places=4, allow_inf_nan=False)]
MinQty = Annotated[
    Decimal, Field(ge=Decimal("0.01"), max_digits=18, decimal_places=4, allow_inf_nan=False)
]
UnitPrice = Annotated[Decimal, Field(ge=0, max_digits=18, decimal_places=4, allow_inf_nan=False)]
Money = Annotated[Decimal, Field(ge=0, max_digits=16, decimal_places=2, allow_inf_nan=False)]
PositiveMoney = Annotated[
    Decimal, Field(gt=0, max_digits=16, decimal_places=2, allow_inf_nan=False)
]
Percent = Annotated[Decimal, Field(ge=0, le=100, decimal_places=4, allow_inf_nan=False)]
Text = Annotated[str, Field(max_length=2000)]
Token = Annotated[str, Field(min_length=1, max_length=255)]
InvoiceNo = Annotated[str, Field(min_length=1, max_length=100, pattern=r"^[\x21-\x7e ]+$")]


class Strict(BaseModel):
    model_config = ConfigDict(extra="ignore", arbitrary_types_allowed=True)
