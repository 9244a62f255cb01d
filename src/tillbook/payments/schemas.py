"""Request bodies of POST /payments and POST /expenses, of approving and paying a
pending expense and of moving money between two payment modes' accounts.

Limits from ``kit/bounds.py``: money carries at most 2 decimal places, is above
zero and fits NUMERIC(18,2) — more decimals is a 422, never a silent rounding
(DESIGN.md §3); dates are exactly ``YYYY-MM-DD`` business days (1970-01-01 to one
day after the server's UTC date); texts are storable and as long as their columns.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Annotated, Literal

from pydantic import AfterValidator, Field, StrictInt, StrictStr

from tillbook.fields import GiftCardCode, InCurrency, Ref, Reference, Strict, UniqueId
from tillbook.kit.bounds import BusinessDay, Clean, Money, Note, PositiveMoney, stored_length
from tillbook.models import Expense
from tillbook.orders.schemas import Tender


class AllocationIn(Strict):
    order_id: Ref
    amount: PositiveMoney


class PaymentIn(InCurrency):
    user_id: Ref
    payment_type: Literal["in", "out"]
    amount: PositiveMoney
    payment_mode_id: Ref
    date: BusinessDay | None = None
    reference: Reference | None = None
    notes: Note | None = None
    invoices: Annotated[list[AllocationIn], Field(max_length=500)] | None = None
    unique_id: UniqueId | None = None


class ExpenseIn(InCurrency):
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


class ExpensePaymentIn(InCurrency):
    """Approving and paying a pending expense: the mode it is paid by, and when
    (default today; not before the expense's own date). A foreign expense is paid
    in its currency, at ``exchange_rate`` or the rate of that day."""

    payment_mode_id: Ref
    date: BusinessDay | None = None
    reference: Reference | None = None
    unique_id: UniqueId | None = None


class AccountMoveIn(Strict):
    """Money moved from one payment mode's account to another's: takings paid into
    the bank (from ``cash`` to ``bank``), cash drawn from it (the other way)."""

    from_payment_mode_id: Ref
    to_payment_mode_id: Ref
    amount: PositiveMoney
    date: BusinessDay | None = None
    reference: Reference | None = None
    notes: Note | None = None
    unique_id: UniqueId | None = None


# The back office names the branch a payment, expense or move is recorded in (a key
# is bound to one; a staff member may work in several).
BranchId = Annotated[
    StrictInt,
    Field(
        gt=0,
        le=2**63 - 1,
        description="the branch it is recorded in; default: a scoped staff member's own",
    ),
]


class BranchPaymentIn(PaymentIn):
    warehouse_id: BranchId | None = None


class BranchExpenseIn(ExpenseIn):
    warehouse_id: BranchId | None = None


class BranchMoveIn(AccountMoveIn):
    warehouse_id: BranchId | None = None


def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be blank")
    return value


Reason = Annotated[
    StrictStr, Field(min_length=1, max_length=500), Clean, AfterValidator(_not_blank)
]
Register = Annotated[
    StrictStr, Field(min_length=1, max_length=50), Clean, AfterValidator(_not_blank)
]


# A register's own name for a shift it opened (``R1-S000007``): letters and digits
# in parts joined by dashes. The dash keeps it apart from an id or an xid (neither has
# one), so the one path parameter may name a shift either way.
ShiftReference = Annotated[
    StrictStr, Field(min_length=3, max_length=50, pattern=r"^[A-Za-z0-9]+(-[A-Za-z0-9]+)+$")
]


class ShiftIn(Strict):
    opening_float: Money = Decimal("0")
    # ``register`` on the wire; the attribute is named apart from BaseModel's own.
    register_name: Register = Field(default="main", alias="register")
    cash_payment_mode_id: Ref | None = Field(
        default=None, description="the drawer's payment mode; default: the mode coded cash"
    )
    notes: Note | None = None
    unique_id: UniqueId | None = None
    reference: ShiftReference | None = Field(
        default=None,
        description="the register's own reference for the shift (R1-S000007), unique in "
        "the branch: opening it again answers the shift already opened, and the "
        "reference names the shift wherever its id does",
    )


class ShiftCashIn(Strict):
    """Cash into or out of the drawer. Out: to an expense category (petty cash) or
    to another payment mode's account (takings dropped at the bank); in: from
    another payment mode's account (a float top-up from the bank)."""

    direction: Literal["in", "out"]
    amount: PositiveMoney
    reason: Reason
    expense_category_id: Ref | None = None
    payment_mode_id: Ref | None = None
    unique_id: UniqueId | None = None


class CountIn(Strict):
    payment_mode_id: Ref
    amount: Money


class ShiftCloseIn(Strict):
    counted: Annotated[list[CountIn], Field(min_length=1, max_length=20)]
    notes: Note | None = None
    unique_id: UniqueId | None = None


class GiftCardIn(Strict):
    """Selling a gift card, or loading more onto one (``code``): the amount goes onto
    the card and the tenders pay for all of it (DESIGN §18)."""

    amount: PositiveMoney
    all_payments: Annotated[list[Tender], Field(min_length=1, max_length=20)]
    code: GiftCardCode | None = Field(
        default=None, description="an existing card to load; without it a new card is sold"
    )
    user_id: Ref | None = Field(
        default=None,
        description="the customer buying it (default: the walk-in customer); a new card "
        "is listed under them",
    )
    expires_on: dt.date | None = Field(
        default=None, description="a new card's last day (YYYY-MM-DD); default: never"
    )
    date: BusinessDay | None = None
    unique_id: UniqueId | None = None


class GiftCardCodeIn(Strict):
    """A card named by its code: in a body, never in a URL (URLs are logged)."""

    code: GiftCardCode


class BranchGiftCardIn(GiftCardIn):
    """A gift card sold in the back office, recorded in one branch."""

    warehouse_id: BranchId | None = None
