"""The wire shapes of orders: list items and details (also the ``data`` of events),
declared once here as types (``kit/shapes.py``) and built by the functions below."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from decimal import Decimal
from typing import Annotated, Any, Literal, NotRequired, cast

from pydantic import Field
from sqlalchemy import BindParameter, ScalarSelect, Select, bindparam, func, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import InstrumentedAttribute, aliased
from typing_extensions import TypedDict

from tillbook.db import Reads, Record, SessionReads
from tillbook.inventory.service import Listed
from tillbook.kit import xid
from tillbook.kit.money import ZERO, money_str, number, price_str
from tillbook.kit.shapes import DateStr, DateTimeStr, MoneyStr, Named, PriceStr, ProductRef, answer
from tillbook.loyalty import points as loyalty
from tillbook.models import Order, OrderItem, Payment, PaymentAllocation, Product, User
from tillbook.models.base import M, columns_of, table_of, value_of
from tillbook.orders.currency import ForeignFigures, currency_fields

PaymentStatus = Literal["unpaid", "partially_paid", "paid"]
OrderType = Literal["sales", "purchases", "sales-returns", "purchase-returns"]


class _Order(ForeignFigures):
    """What a list item and a detail share; a foreign order adds its currency, rate
    and base totals (DESIGN §16)."""

    id: int
    xid: str
    unique_id: str
    invoice_number: str
    order_type: OrderType
    order_date: DateStr
    subtotal: MoneyStr
    tax_amount: MoneyStr
    discount: MoneyStr
    shipping: MoneyStr
    total: MoneyStr
    paid_amount: MoneyStr
    due_amount: MoneyStr
    order_status: str
    payment_status: PaymentStatus
    notes: str
    staff_member: Named | None


@answer
class OrderListItem(_Order):
    user: Named


@answer
class Party(TypedDict):
    id: int
    name: str
    phone: str | None


@answer
class OrderLine(TypedDict):
    id: int
    product_id: int
    quantity: float
    unit_id: int | None
    base_quantity: float
    unit_price: PriceStr
    discount_rate: float
    tax_rate: float
    tax_amount: MoneyStr
    subtotal: MoneyStr
    total: MoneyStr
    promotion_id: Annotated[int | None, Field(description="the promotion that priced the line")]
    promotion_discount: Annotated[
        MoneyStr, Field(description="what the promotion took off the line, on the price as given")
    ]
    product: ProductRef


@answer
class OrderPayment(TypedDict):
    id: int
    amount: Annotated[MoneyStr, Field(description="the part of the payment applied to this order")]
    payment_amount: MoneyStr
    payment_type: Literal["in", "out"]
    payment_mode_id: int
    date: DateStr
    reference: str | None


@answer
class OrderDetail(_Order, loyalty.OrderPoints):
    user: Party
    original_order_id: int | None
    # Additive to the spec: the till shift, and why and when a voided sale was voided.
    shift_id: NotRequired[
        Annotated[int | None, Field(default=None, description="the till shift it was made in")]
    ]
    void_reason: NotRequired[
        Annotated[str | None, Field(default=None, description="why a voided sale was voided")]
    ]
    voided_at: NotRequired[Annotated[DateTimeStr | None, Field(default=None)]]
    items: list[OrderLine]
    payments: list[OrderPayment]


def list_item(order: Order, party: User, staff: User | None) -> OrderListItem:
    return {
        "id": order.id,
        "xid": xid.encode(order.id),
        "unique_id": order.unique_id,
        "invoice_number": order.invoice_number,
        # The columns hold these codes only (their writers are typed with them).
        "order_type": cast(OrderType, order.order_type),
        "order_date": order.order_date.isoformat(),
        "subtotal": money_str(order.subtotal),
        "tax_amount": money_str(order.tax_amount),
        "discount": money_str(order.discount),
        "shipping": money_str(order.shipping),
        "total": money_str(order.total),
        "paid_amount": money_str(order.paid_amount),
        "due_amount": money_str(order.due_amount),
        "order_status": order.order_status,
        "payment_status": cast(PaymentStatus, order.payment_status),
        "notes": order.notes,
        "user": {"id": party.id, "name": party.name},
        "staff_member": {"id": staff.id, "name": staff.name} if staff else None,
        # A foreign order adds its currency, rate and base totals (DESIGN §16).
        **currency_fields(order),
    }


def detail(
    order: Order,
    party: User,
    staff: User | None,
    items: Sequence[tuple[OrderItem, Product | Listed]],
    payments: Sequence[tuple[Payment, Decimal]],
    points: loyalty.OrderPoints,
) -> OrderDetail:
    """``points``: what the order moved of its customer's loyalty points (DESIGN §18;
    an event sent as the order is recorded has none yet)."""
    voided = order.voided_at
    if voided is not None and voided.tzinfo is None:  # SQLite keeps no zone: UTC
        voided = voided.replace(tzinfo=dt.UTC)
    return {
        **list_item(order, party, staff),
        "user": {"id": party.id, "name": party.name, "phone": party.phone},
        "original_order_id": order.original_order_id,
        "shift_id": order.shift_id,
        "void_reason": order.void_reason,
        "voided_at": voided.isoformat() if voided else None,
        "items": [
            {
                "id": item.id,
                "product_id": item.product_id,
                "quantity": number(item.quantity),
                "unit_id": item.unit_id,
                "base_quantity": number(item.base_quantity),
                "unit_price": price_str(item.unit_price),
                "discount_rate": number(item.discount_rate),
                "tax_rate": number(item.tax_rate),
                "tax_amount": money_str(item.tax_amount),
                "subtotal": money_str(item.subtotal),
                "total": money_str(item.total),
                # Additive (DESIGN §18): the promotion that priced the line and what it
                # took off (on the price as given), 0.00 without one.
                "promotion_id": item.promotion_id,
                "promotion_discount": money_str(item.promotion_discount or ZERO),
                "product": {
                    "id": product.id,
                    "xid": xid.encode(product.id),
                    "name": product.name,
                    "item_code": product.item_code,
                },
            }
            for item, product in items
        ],
        "payments": [
            {
                "id": p.id,
                "amount": money_str(applied),
                "payment_amount": money_str(p.amount),
                "payment_type": cast(Literal["in", "out"], p.payment_type),
                "payment_mode_id": p.payment_mode_id,
                "date": p.date.isoformat(),
                "reference": p.reference,
            }
            for p, applied in payments
        ],
        **points,
    }


async def user_of(session: AsyncSession, company_id: int, user_id: int | None) -> User | None:
    """The company's party or staff member ``user_id`` (None for none)."""
    if user_id is None:
        return None
    found = await session.execute(
        select(User).where(User.company_id == company_id, User.id == user_id)
    )
    return found.scalar_one_or_none()


# What an order's detail reads beside the order: its lines with their products, the
# tenders and payments allocated to it (the allocation says how much of each payment
# settles this order: tenders taken with it and later payments alike), and the
# loyalty points it moved (DESIGN §18). Prebuilt, over ``order_id`` and
# ``company_id``: the public reads nest them in one statement (``read_detail``).
_ORDER_ID: BindParameter[int] = bindparam("order_id")
_COMPANY: BindParameter[int] = bindparam("company_id")


def line_product(column: InstrumentedAttribute[Any]) -> ScalarSelect[Any]:
    """A column of the line's product, looked up by its key for each line. Not a join:
    with the generic plan of a prepared statement PostgreSQL merge-joined the lines
    with the company's products read in id order from the first one, so a sale of
    the last product of a 20,000-product catalog cost 10 ms of its CPU to read (the
    first product's, 0.08 ms). A subquery in the select list is a lookup by key
    whatever the statistics say."""
    return (
        select(column)
        .where(Product.id == OrderItem.product_id, Product.company_id == OrderItem.company_id)
        .scalar_subquery()
    )


DETAIL_LISTS: dict[str, Select[*tuple[Any, ...]]] = {
    "items": select(
        *OrderItem.__table__.c,
        line_product(Product.name).label("product_name"),
        line_product(Product.item_code).label("product_item_code"),
    )
    .where(OrderItem.order_id == _ORDER_ID, OrderItem.company_id == _COMPANY)
    .order_by(OrderItem.id),
    "payments": select(*Payment.__table__.c, PaymentAllocation.amount.label("applied"))
    .join(
        PaymentAllocation,
        (PaymentAllocation.payment_id == Payment.id)
        & (PaymentAllocation.company_id == Payment.company_id),
    )
    .where(PaymentAllocation.order_id == _ORDER_ID, PaymentAllocation.company_id == _COMPANY)
    .order_by(Payment.id),
    "points": loyalty.ORDER_POINTS,
}
_PARTY = aliased(User, name="party")
_STAFF = aliased(User, name="staff")
_ORDER = (
    select(
        *Order.__table__.c,
        _PARTY.name.label("party_name"),
        _PARTY.phone.label("party_phone"),
        _STAFF.name.label("staff_name"),
    )
    .join(_PARTY, (_PARTY.id == Order.user_id) & (_PARTY.company_id == Order.company_id))
    .outerjoin(_STAFF, (_STAFF.id == Order.staff_user_id) & (_STAFF.company_id == Order.company_id))
    .where(Order.id == _ORDER_ID, Order.company_id == _COMPANY)
)


_COLUMN_KEYS: dict[type[Any], tuple[str, ...]] = {}


def _row_of(model: type[M], row: Record) -> M:
    """An instance of ``model`` from a row holding its table's columns by name
    (``columns_of``: the attributes are the columns' names), read once per model: a
    table's column collection costs more to walk than the row's values to copy."""
    keys = _COLUMN_KEYS.get(model)
    if keys is None:
        keys = _COLUMN_KEYS[model] = tuple(c.key for c in table_of(model).c)
    return columns_of(model, {k: row[k] for k in keys})


def _detail_from(
    order: Order, party: User, staff: User | None, lists: dict[str, list[Record]]
) -> OrderDetail:
    items = [
        (
            _row_of(OrderItem, r),
            value_of(
                Product,
                id=r["product_id"],
                name=r["product_name"],
                item_code=r["product_item_code"],
            ),
        )
        for r in lists["items"]
    ]
    payments = [(_row_of(Payment, r), r["applied"]) for r in lists["payments"]]
    points = loyalty.detail_fields(order.order_type, loyalty.moved_by_kind(lists["points"]))
    return detail(order, party, staff, items, payments, points)


async def load_detail(session: AsyncSession, order: Order) -> OrderDetail:
    """The detail of ``order`` as this session holds it (a write's, before COMMIT)."""
    party = await user_of(session, order.company_id, order.user_id)
    assert party is not None
    staff = await user_of(session, order.company_id, order.staff_user_id)
    reads = SessionReads(session)
    params = {"order_id": order.id, "company_id": order.company_id}
    lists = {name: list(await reads.all(stmt, params)) for name, stmt in DETAIL_LISTS.items()}
    return _detail_from(order, party, staff, lists)


async def read_detail(
    reads: Reads, company_id: int, order_id: int
) -> tuple[Order, OrderDetail] | None:
    """The company's order ``order_id`` and its detail, in one statement on PostgreSQL
    (``Reads.one``): a till reading back a sale pays one round trip."""
    found = await reads.one(
        _ORDER, {"order_id": order_id, "company_id": company_id}, **DETAIL_LISTS
    )
    if found is None:
        return None
    row, lists = found
    order = _row_of(Order, row)
    party = value_of(User, id=order.user_id, name=row["party_name"], phone=row["party_phone"])
    staff = None
    if order.staff_user_id is not None:
        staff = value_of(User, id=order.staff_user_id, name=row["staff_name"])
    return order, _detail_from(order, party, staff, lists)


async def order_of(session: AsyncSession, company_id: int, order_id: int) -> Order | None:
    """The company's order ``order_id`` (another company's is None, like a missing one)."""
    found = await session.execute(
        select(Order).where(Order.company_id == company_id, Order.id == order_id)
    )
    return found.scalar_one_or_none()


async def page_of_orders(
    session: AsyncSession,
    company_id: int,
    warehouse_id: int,
    order_type: str,
    *,
    date_from: Any,
    date_to: Any,
    offset: int,
    limit: int,
) -> tuple[int, list[OrderListItem]]:
    conditions = [
        Order.company_id == company_id,
        Order.warehouse_id == warehouse_id,
        Order.order_type == order_type,
    ]
    if date_from is not None:
        conditions.append(Order.order_date >= date_from)
    if date_to is not None:
        conditions.append(Order.order_date <= date_to)
    total = (await session.execute(select(func.count()).where(*conditions))).scalar_one()
    staff = aliased(User)
    rows = (
        await session.execute(
            select(Order, User, staff)
            .join(User, (User.id == Order.user_id) & (User.company_id == Order.company_id))
            .outerjoin(
                staff, (staff.id == Order.staff_user_id) & (staff.company_id == Order.company_id)
            )
            .where(*conditions)
            .order_by(Order.order_date.desc(), Order.id.desc())
            .offset(offset)
            .limit(limit)
        )
    ).all()
    return total, [list_item(o, u, s) for o, u, s in rows]
