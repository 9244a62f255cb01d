"""Request bodies of POST /payments and POST /expenses.

Limits from ``kit/bounds.py``: money carries at most 2 decimal places, is above
zero and fits NUMERIC(18,2) — more decimals is a 422, never a silent rounding
(DESIGN.md §3); dates are exactly ``YYYY-MM-DD`` business days (1970-01-01 to one
day after the server's UTC date); texts are storable and as long as their columns.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StrictStr

from tillbook.fields import Ref, Reference, Strict, UniqueId
from tillbook.kit.bounds import BusinessDay, Clean, Note, PositiveMoney, stored_length
from tillbook.models import Expense


class AllocationIn(Strict):
    order_id: Ref
    amount: PositiveMoney


class PaymentIn(Strict):
    user_id: Ref
    payment_type: Literal["in", "out"]
    amount: PositiveMoney
    payment_mode_id: Ref
    date: BusinessDay | None = None
    reference: Reference | None = None
    notes: Note | None = None
    invoices: Annotated[list[AllocationIn], Field(max_length=500)] | None = None
    unique_id: UniqueId | None = None


class ExpenseIn(Strict):
    expense_category_id: Ref
    amount: PositiveMoney
    date: BusinessDay
    payment_mode_id: Ref | None = None
    user_id: Ref | None = None
    reference: (
        Annotated[StrictStr, Field(max_length=stored_length(Expense.reference)), Clean] | None
    ) = None
    notes: Note | None = None
    unique_id: UniqueId | None = None
