"""Request bodies of the order endpoints (sales, purchases, returns).

Every limit comes from ``kit/bounds.py`` (DESIGN.md §12): quantities and unit
prices carry at most 4 decimal places and fit NUMERIC(18,4), money 2 places and
NUMERIC(18,2) — more is a 422, never a silent rounding (DESIGN.md §3); texts are
storable and as long as their columns; business dates lie from 1970-01-01 to one
day after the server's UTC date. A line whose quantity × unit price is beyond
what the books hold is refused here, naming its quantity, so no order total is
ever computed from it.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from decimal import Decimal
from typing import Annotated, Any, Literal, TypeVar, get_args

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    Field,
    StrictBool,
    StrictStr,
    ValidationError,
    WithJsonSchema,
    model_validator,
)
from pydantic_core import InitErrorDetails, PydanticCustomError

from tillbook.fields import GiftCardCode, InCurrency, InvoiceNo, Ref, Reference, Strict, UniqueId
from tillbook.kit import bounds
from tillbook.kit.bounds import (
    MONEY,
    MinQuantity,
    Money,
    Note,
    Percent,
    PositiveMoney,
    Quantity,
    UnitPrice,
)


def _order_date(value: Any) -> Any:
    """``YYYY-MM-DD`` or an ISO 8601 date-time (the spec's terminal example)."""
    if isinstance(value, str):
        text = value.strip()
        if len(text) == 10:
            try:
                return OrderDate(dt.date.fromisoformat(text), None)
            except ValueError:
                pass
        else:
            try:
                when = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
            except ValueError:
                pass
            else:
                if when.tzinfo is None:
                    when = when.replace(tzinfo=dt.UTC)
                return OrderDate(when.date(), when)
    raise ValueError(f"must be a date YYYY-MM-DD or an ISO 8601 date-time, got {value!r}")


def _business_day(value: OrderDate) -> OrderDate:
    bounds.check_business_day(value.date)
    return value


class OrderDate:
    __slots__ = ("date", "datetime")

    def __init__(self, date: dt.date, datetime: dt.datetime | None):
        self.date = date
        self.datetime = datetime

    def __eq__(self, other: object) -> bool:
        return isinstance(other, OrderDate) and (self.date, self.datetime) == (
            other.date,
            other.datetime,
        )

    def __hash__(self) -> int:
        return hash((self.date, self.datetime))


DateIn = Annotated[
    OrderDate,
    BeforeValidator(_order_date),
    AfterValidator(_business_day),
    WithJsonSchema(
        {
            "type": "string",
            "description": "YYYY-MM-DD or ISO 8601 date-time",
            "examples": ["2026-11-20"],
        }
    ),
]


M = TypeVar("M", bound=BaseModel)


def _within_bounds(body: M, list_name: str, items: Sequence[Any]) -> M:
    """The first line whose quantity × unit price, or the running sum up to it, is
    beyond the largest amount the books hold is refused on its quantity (prices,
    discounts and taxes from the catalog are checked where the order is priced)."""
    running = Decimal(0)
    for i, item in enumerate(items):
        amount = item.quantity * item.unit_price
        running += amount
        problem = bounds.exceeds(amount, MONEY, "quantity × unit_price") or bounds.exceeds(
            running, MONEY, f"the sum of {list_name} up to this line"
        )
        if problem is not None:
            error = InitErrorDetails(
                type=PydanticCustomError("out_of_range", "{problem}", {"problem": problem}),
                loc=(list_name, i, "quantity"),
                input=str(item.quantity),
            )
            raise ValidationError.from_exception_data(type(body).__name__, [error])
    return body


class Tender(Strict):
    amount: PositiveMoney
    payment_mode_id: Ref
    reference: Reference | None = None
    notes: Note | None = None
    foreign_amount: PositiveMoney | None = Field(
        default=None,
        description="foreign cash handed over, in the currency of a payment mode holding "
        "one (DESIGN §16): worth at least `amount` at the day's rate; the rest is change "
        "in the base currency (additive)",
    )
    gift_card_code: GiftCardCode | None = Field(
        default=None,
        description="with payment_mode_id gift-card: the gift card this tender spends "
        "(a sale) or takes the refund (a sales return); without it a gift-card tender "
        "spends or credits the customer's store credit (additive, DESIGN §18)",
    )


class SaleItem(Strict):
    xid: Ref
    quantity: Quantity
    unit_price: UnitPrice
    selected_unit_id: Ref | None = None
    tax_id: Ref | None = None
    discount_rate: Percent = Decimal("0")


class SaleIn(InCurrency):
    user_id: Ref
    order_date: DateIn
    product_items: Annotated[list[SaleItem], Field(min_length=1, max_length=500)]
    discount: Money = Decimal("0")
    shipping: Money = Decimal("0")
    invoice_number: InvoiceNo | None = None
    all_payments: Annotated[list[Tender], Field(max_length=20)] = Field(default=[])
    subtotal: Money | None = None
    total: Money | None = None
    tax_amount: Money | None = None
    unique_id: UniqueId | None = None
    notes: Note | None = None
    shift_id: Ref | None = Field(
        default=None,
        description="the open till shift the sale is made in; default: the warehouse's "
        "open shift (additive to the spec)",
    )
    staff_member: Ref | None = Field(
        default=None,
        description="the cashier: a staff member of this branch; default: the key's own "
        "staff member (additive to the spec)",
    )
    apply_promotions: StrictBool = Field(
        default=True,
        description="price the sale by the company's promotions in force at its "
        "order_date (DESIGN §18; each line of the answer names its promotion); false "
        "for a client that prices its own offers (additive to the spec)",
    )
    offline: StrictBool = Field(
        default=False,
        description="rung up by a register while offline: taken even below zero stock, "
        "with a stock discrepancy alert; a register's credential only (additive)",
    )

    @model_validator(mode="after")
    def _lines_within_bounds(self) -> SaleIn:
        return _within_bounds(self, "product_items", self.product_items)


def _expiry_within(value: dt.date | None) -> dt.date | None:
    """A date the books can store and a person could mean (1970 to 2199): an expiry,
    an expected delivery."""
    if value is not None and not dt.date(1970, 1, 1) <= value <= dt.date(2199, 12, 31):
        raise ValueError("must be a date from 1970-01-01 to 2199-12-31")
    return value


BatchNumber = Annotated[StrictStr, Field(min_length=1, max_length=100), bounds.Clean]
CalendarDay = Annotated[dt.date | None, AfterValidator(_expiry_within)]


class PurchaseItem(Strict):
    xid: Ref
    quantity: Quantity
    unit_price: UnitPrice
    selected_unit_id: Ref | None = None
    batch_number: BatchNumber | None = Field(
        default=None, description="the supplier's batch or lot number (additive to the spec)"
    )
    expiry_date: CalendarDay = Field(
        default=None, description="YYYY-MM-DD: the batch's expiry (additive to the spec)"
    )
    tax_id: Ref | None = Field(
        default=None,
        description="the tax the supplier charged on the line, one of the company's taxes "
        "(its rate, inclusive or not, applies to unit_price); absent: no tax (additive to "
        "the spec)",
    )


class PurchaseIn(InCurrency):
    user_id: Ref
    order_date: DateIn
    product_items: Annotated[list[PurchaseItem], Field(min_length=1, max_length=500)]
    invoice_number: InvoiceNo | None = None
    all_payments: Annotated[list[Tender], Field(max_length=20)] = Field(default=[])
    unique_id: UniqueId | None = None
    notes: Note | None = None

    @model_validator(mode="after")
    def _lines_within_bounds(self) -> PurchaseIn:
        return _within_bounds(self, "product_items", self.product_items)


class ReturnItem(Strict):
    product_id: Ref
    quantity: MinQuantity
    unit_price: UnitPrice


class ReturnIn(InCurrency):
    user_id: Ref
    order_date: DateIn
    items: Annotated[list[ReturnItem], Field(min_length=1, max_length=500)]
    notes: Note | None = None
    invoice_number: InvoiceNo | None = Field(
        default=None, description="the original sale (or purchase) being returned against"
    )
    all_payments: Annotated[list[Tender], Field(max_length=20)] = Field(
        default=[], description="immediate refunds (sales returns only)"
    )
    unique_id: UniqueId | None = None
    staff_member: Ref | None = Field(
        default=None,
        description="the cashier: a staff member of this branch; default: the key's own "
        "staff member (additive to the spec)",
    )

    @model_validator(mode="after")
    def _lines_within_bounds(self) -> ReturnIn:
        return _within_bounds(self, "items", self.items)


def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be blank")
    return value


class VoidIn(Strict):
    reason: Annotated[
        str,
        Field(min_length=1, max_length=500, strict=True),
        bounds.Clean,
        AfterValidator(_not_blank),
    ]
    unique_id: UniqueId | None = None


# --- purchase orders (``orders.purchase_orders``) -------------------------------------

PO_STATUSES = ("draft", "ordered", "partially_received", "received", "closed", "cancelled")
# What the list of purchase orders may be filtered on: a state, or ``open`` (ordered or
# partially received: goods still to come).
POFilter = Literal[
    "open", "draft", "ordered", "partially_received", "received", "closed", "cancelled"
]
PO_FILTERS: tuple[str, ...] = get_args(POFilter)
MAX_PO_LINES = 500


class PurchaseOrderLineIn(Strict):
    """A product ordered, in its base unit, at the unit cost expected."""

    product_id: Ref
    quantity: Quantity
    unit_cost: UnitPrice


class PurchaseOrderIn(Strict):
    """A new purchase order (a draft), or the whole of a draft when it is edited
    (``warehouse_id`` is then ignored: an order stays in its branch)."""

    warehouse_id: Ref | None = None
    supplier_id: Ref
    order_date: CalendarDay = None
    expected_date: CalendarDay = None
    lines: Annotated[list[PurchaseOrderLineIn], Field(min_length=1, max_length=MAX_PO_LINES)]
    notes: Note | None = None
    unique_id: UniqueId | None = None


class ReceiptLineIn(Strict):
    """What came of one ordered product; ``unit_cost`` defaults to the order's."""

    product_id: Ref
    quantity: Quantity
    unit_cost: UnitPrice | None = None
    batch_number: BatchNumber | None = None
    expiry_date: CalendarDay = None
    tax_id: Ref | None = None


class PurchaseOrderReceiptIn(Strict):
    """A delivery against a purchase order: a purchase (``POST /purchases``) of these
    lines, on credit or with ``all_payments`` paid now."""

    order_date: DateIn
    lines: Annotated[list[ReceiptLineIn], Field(min_length=1, max_length=MAX_PO_LINES)]
    invoice_number: InvoiceNo | None = Field(
        default=None, description="the supplier's invoice number (default: the next PUR-)"
    )
    all_payments: Annotated[list[Tender], Field(max_length=20)] = Field(default=[])
    notes: Note | None = None
    unique_id: UniqueId | None = None


class PurchaseOrderCloseIn(Strict):
    """Close an order: what has not come is not coming."""

    reason: Annotated[StrictStr, Field(max_length=500), bounds.Clean] | None = None
    unique_id: UniqueId | None = None
