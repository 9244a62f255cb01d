"""The wire shapes of orders: list items and details (also the ``data`` of events),
declared once here as types (``kit/shapes.py``) and built by the functions below."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from decimal import Decimal
from typing import Annotated, Any, Literal, NotRequired, cast

from pydantic import Field
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased
from typing_extensions import TypedDict

from tillbook.inventory.service import Listed
from tillbook.kit import xid
from tillbook.kit.money import ZERO, money_str, number, price_str
from tillbook.kit.shapes import DateStr, DateTimeStr, MoneyStr, Named, PriceStr, ProductRef, answer
from tillbook.loyalty import points as loyalty
from tillbook.models import Order, OrderItem, Payment, PaymentAllocation, Product, User
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


async def load_detail(session: AsyncSession, order: Order) -> OrderDetail:
    party = await session.get(User, order.user_id)
    assert party is not None
    staff = await session.get(User, order.staff_user_id) if order.staff_user_id else None
    items = (
        await session.execute(
            select(OrderItem, Product)
            .join(Product, Product.id == OrderItem.product_id)
            .where(OrderItem.order_id == order.id)
            .order_by(OrderItem.id)
        )
    ).all()
    # Tenders taken with the order and later payments allocated to it alike: the
    # allocation says how much of each payment settles this order.
    payments = (
        await session.execute(
            select(Payment, PaymentAllocation.amount)
            .join(PaymentAllocation, PaymentAllocation.payment_id == Payment.id)
            .where(PaymentAllocation.order_id == order.id)
            .order_by(Payment.id)
        )
    ).all()
    return detail(
        order,
        party,
        staff,
        [(i, p) for i, p in items],
        [(p, a) for p, a in payments],
        await loyalty.detail_fields(session, order.id, order.order_type),
    )


async def page_of_orders(
    session: AsyncSession,
    warehouse_id: int,
    order_type: str,
    *,
    date_from: Any,
    date_to: Any,
    offset: int,
    limit: int,
) -> tuple[int, list[OrderListItem]]:
    conditions = [Order.warehouse_id == warehouse_id, Order.order_type == order_type]
    if date_from is not None:
        conditions.append(Order.order_date >= date_from)
    if date_to is not None:
        conditions.append(Order.order_date <= date_to)
    total = (await session.execute(select(func.count()).where(*conditions))).scalar_one()
    staff = aliased(User)
    rows = (
        await session.execute(
            select(Order, User, staff)
            .join(User, User.id == Order.user_id)
            .outerjoin(staff, staff.id == Order.staff_user_id)
            .where(*conditions)
            .order_by(Order.order_date.desc(), Order.id.desc())
            .offset(offset)
            .limit(limit)
        )
    ).all()
    return total, [list_item(o, u, s) for o, u, s in rows]
