"""The wire shapes of orders: list items and details (also the ``data`` of events)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

from sqlalchemy import BindParameter, Select, bindparam, func, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased

from tillbook.db import Reads, Record, SessionReads
from tillbook.inventory.service import Listed
from tillbook.kit import xid
from tillbook.kit.money import ZERO, money_str, number, price_str
from tillbook.loyalty import points as loyalty
from tillbook.models import Order, OrderItem, Payment, PaymentAllocation, Product, User
from tillbook.models.base import M, table_of, value_of
from tillbook.orders.currency import currency_fields

MONEY_FIELDS = (
    "subtotal",
    "tax_amount",
    "discount",
    "shipping",
    "total",
    "paid_amount",
    "due_amount",
)


def list_item(order: Order, party: User, staff: User | None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": order.id,
        "xid": xid.encode(order.id),
        "unique_id": order.unique_id,
        "invoice_number": order.invoice_number,
        "order_type": order.order_type,
        "order_date": order.order_date.isoformat(),
    }
    for f in MONEY_FIELDS:
        out[f] = money_str(getattr(order, f))
    out.update(
        order_status=order.order_status,
        payment_status=order.payment_status,
        notes=order.notes,
        user={"id": party.id, "name": party.name},
        staff_member={"id": staff.id, "name": staff.name} if staff else None,
    )
    # A foreign order adds its currency, rate and base totals (DESIGN §16).
    out.update(currency_fields(order))
    return out


def detail(
    order: Order,
    party: User,
    staff: User | None,
    items: Sequence[tuple[OrderItem, Product | Listed]],
    payments: Sequence[tuple[Payment, Decimal]],
) -> dict[str, Any]:
    out = list_item(order, party, staff)
    out["user"] = {"id": party.id, "name": party.name, "phone": party.phone}
    out["original_order_id"] = order.original_order_id
    # Additive to the spec: the till shift, and why and when a voided sale was voided.
    out["shift_id"] = order.shift_id
    out["void_reason"] = order.void_reason
    voided = order.voided_at
    if voided is not None and voided.tzinfo is None:  # SQLite keeps no zone: UTC
        voided = voided.replace(tzinfo=dt.UTC)
    out["voided_at"] = voided.isoformat() if voided else None
    out["items"] = [
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
    ]
    out["payments"] = [
        {
            "id": p.id,
            "amount": money_str(applied),
            "payment_amount": money_str(p.amount),
            "payment_type": p.payment_type,
            "payment_mode_id": p.payment_mode_id,
            "date": p.date.isoformat(),
            "reference": p.reference,
        }
        for p, applied in payments
    ]
    return out


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
DETAIL_LISTS: dict[str, Select[*tuple[Any, ...]]] = {
    "items": select(
        *OrderItem.__table__.c,
        Product.name.label("product_name"),
        Product.item_code.label("product_item_code"),
    )
    .join(
        Product,
        (Product.id == OrderItem.product_id) & (Product.company_id == OrderItem.company_id),
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


def _row_of(model: type[M], row: Record) -> M:
    """An instance of ``model`` from a row holding its table's columns by name
    (``value_of``: the attributes are the columns' names)."""
    return value_of(model, **{c.key: row[c.key] for c in table_of(model).c})


def _detail_from(
    order: Order, party: User, staff: User | None, lists: dict[str, list[Record]]
) -> dict[str, Any]:
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
    out = detail(order, party, staff, items, payments)
    out.update(loyalty.detail_fields(order.order_type, loyalty.moved_by_kind(lists["points"])))
    return out


async def load_detail(session: AsyncSession, order: Order) -> dict[str, Any]:
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
) -> tuple[Order, dict[str, Any]] | None:
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
) -> tuple[int, list[dict[str, Any]]]:
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
