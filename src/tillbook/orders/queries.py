"""Read side of orders: pages with the ``dates`` filter, details by id, xid or invoice
number."""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import ColumnElement, func, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased

from tillbook.auth.context import AuthContext
from tillbook.db import Reads
from tillbook.errors import NotFound, invalid
from tillbook.kit import bounds
from tillbook.kit.money import ZERO, money_str
from tillbook.kit.pagination import Page, Paged, envelope, paged, parse_page
from tillbook.kit.refs import ref_to_id
from tillbook.kit.text import quoted
from tillbook.models import Company, Order, OrderItem, Product, User, Warehouse
from tillbook.orders import lookup, views
from tillbook.orders.returns import line_unit_price

NOUNS = {
    "sales": "sale",
    "purchases": "purchase",
    "sales-returns": "sales return",
    "purchase-returns": "purchase return",
}


def parse_dates(dates: str | None) -> tuple[dt.date | None, dt.date | None]:
    """``start,end`` (either may be blank): days the database holds (``kit/bounds.py``)."""
    text = bounds.query_value("dates", dates)
    if text is None:
        return None, None
    parts = text.split(",")
    if len(parts) != 2:
        raise invalid("dates", f"must be YYYY-MM-DD,YYYY-MM-DD, got {quoted(dates)}")
    start, end = (bounds.query_date("dates", p) for p in parts)
    if start and end and start > end:
        raise invalid("dates", f"start {start} is after end {end}")
    return start, end


async def order_page(
    session: AsyncSession,
    key: AuthContext,
    order_type: str,
    dates: str | None,
    page: str | None,
    limit: str | None,
) -> Paged[views.OrderListItem]:
    p = parse_page(page, limit)
    start, end = parse_dates(dates)
    total, rows = await views.page_of_orders(
        session,
        key.company_id,
        key.warehouse_id,
        order_type,
        date_from=start,
        date_to=end,
        offset=p.offset,
        limit=p.limit,
    )
    return paged(p, total, rows)


async def order_detail(
    reads: Reads, key: AuthContext, order_type: str, ref: str
) -> views.OrderDetail:
    """One order of the key's warehouse, named by id, xid or invoice number (an id
    first, as ``lookup.order_ids`` prefers): one statement for an id or xid on
    PostgreSQL, one more to find an invoice number."""
    found = None
    as_id = ref_to_id(ref)
    if as_id is not None:
        found = await views.read_detail(reads, key.company_id, as_id)
    if found is not None and (
        found[0].warehouse_id != key.warehouse_id or found[0].order_type != order_type
    ):
        found = None
    number = lookup.as_invoice_number(ref)
    if found is None and number is not None:
        rows = await reads.all(
            lookup.ORDER_BY_NUMBER,
            {
                "company_id": key.company_id,
                "warehouse_id": key.warehouse_id,
                "order_type": order_type,
                "number": number,
            },
        )
        if rows:
            found = await views.read_detail(reads, key.company_id, rows[0]["id"])
    if found is None:
        raise NotFound(f"{NOUNS[order_type]} not found")
    return found[1]


async def back_office_page(
    session: AsyncSession,
    company_id: int,
    warehouse_ids: list[int],
    order_type: str,
    *,
    date_from: dt.date | None,
    date_to: dt.date | None,
    invoice: str | None,
    page: Page,
    staff_user_id: int | None = None,
) -> dict[str, Any]:
    """One page of a type of orders across the given branches (the back office's
    lists): a date range, an invoice number prefix, and the staff member who made
    them (a cashier's own sales); one statement for the count and one for the page,
    its parties and staff joined."""
    conditions: list[ColumnElement[bool]] = [
        Order.company_id == company_id,
        Order.warehouse_id.in_(warehouse_ids),
        Order.order_type == order_type,
    ]
    if date_from is not None:
        conditions.append(Order.order_date >= date_from)
    if date_to is not None:
        conditions.append(Order.order_date <= date_to)
    if invoice:
        conditions.append(Order.invoice_number.startswith(invoice, autoescape=True))
    if staff_user_id is not None:
        conditions.append(Order.staff_user_id == staff_user_id)
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
            .offset(page.offset)
            .limit(page.limit)
        )
    ).all()
    # The back office's lists name each order's branch.
    items = [{**views.list_item(o, u, s), "warehouse_id": o.warehouse_id} for o, u, s in rows]
    return envelope(page, total, items)


async def back_office_detail(
    session: AsyncSession, company_id: int, order_type: str, order_id: int
) -> tuple[dict[str, Any], Warehouse, Company]:
    """One order of the company with its branch and company (what an invoice prints);
    another company's order is not found, like a missing one."""
    order = await views.order_of(session, company_id, order_id)
    if order is None or order.order_type != order_type:
        raise NotFound(f"{NOUNS[order_type]} {order_id} not found")
    warehouse = (
        await session.execute(
            select(Warehouse).where(
                Warehouse.company_id == company_id, Warehouse.id == order.warehouse_id
            )
        )
    ).scalar_one_or_none()
    company = await session.get(Company, company_id)
    assert warehouse is not None and company is not None
    data = {
        **await views.load_detail(session, order),
        "warehouse_id": order.warehouse_id,
        "staff_user_id": order.staff_user_id,
        "recorded_at": order.created_at,  # when it was entered (shown on the branch's clock)
    }
    return data, warehouse, company


# party type -> the orders that leave it owing or owed
PARTY_ORDERS = {"customer": "sales", "supplier": "purchases"}


async def outstanding_page(
    session: AsyncSession,
    company_id: int,
    party_id: int,
    party_type: str,
    warehouse_ids: list[int],
    page: Page,
) -> dict[str, Any]:
    """One page of a party's invoices with something still due, oldest first, in the
    given branches (a customer's sales, a supplier's purchases): what a statement's
    balance is made of, invoice by invoice."""
    conditions: list[ColumnElement[bool]] = [
        Order.company_id == company_id,
        Order.user_id == party_id,
        Order.order_type == PARTY_ORDERS[party_type],
        Order.warehouse_id.in_(warehouse_ids),
        Order.due_amount > 0,
    ]
    total = (await session.execute(select(func.count()).where(*conditions))).scalar_one()
    rows = (
        await session.execute(
            select(Order, User)
            .join(User, (User.id == Order.user_id) & (User.company_id == Order.company_id))
            .where(*conditions)
            .order_by(Order.order_date, Order.id)
            .offset(page.offset)
            .limit(page.limit)
        )
    ).all()
    items = [{**views.list_item(o, u, None), "warehouse_id": o.warehouse_id} for o, u in rows]
    return envelope(page, total, items)


async def returns_of_sale(
    session: AsyncSession, company_id: int, order_id: int
) -> list[dict[str, Any]]:
    """The sales returns taken against one sale, oldest first (its page lists them)."""
    rows = (
        await session.execute(
            select(Order)
            .where(
                Order.company_id == company_id,
                Order.original_order_id == order_id,
                Order.order_type == "sales-returns",
            )
            .order_by(Order.id)
        )
    ).scalars()
    return [
        {
            "id": r.id,
            "invoice_number": r.invoice_number,
            "order_date": r.order_date.isoformat(),
            "total": money_str(r.total),
            "paid_amount": money_str(r.paid_amount),
        }
        for r in rows
    ]


async def returnable(session: AsyncSession, company_id: int, order_id: int) -> list[dict[str, Any]]:
    """What of a sale can still come back, per product in line order: the base units
    sold, returned and left, and the price per base unit a refund takes by default
    (the lowest of its lines with units left: a higher one would be refused for the
    cheaper line, ``returns.parts_from_invoice``)."""
    rows = (
        await session.execute(
            select(OrderItem, views.line_product(Product.name))
            .join(
                Order, (Order.id == OrderItem.order_id) & (Order.company_id == OrderItem.company_id)
            )
            .where(Order.id == order_id, Order.company_id == company_id)
            .order_by(OrderItem.id)
        )
    ).all()
    out: dict[int, dict[str, Any]] = {}
    for line, name in rows:
        item = out.setdefault(
            line.product_id,
            {"product_id": line.product_id, "name": name, "sold": ZERO, "returned": ZERO},
        )
        item["sold"] += line.base_quantity
        item["returned"] += line.returned_quantity
        if line.base_quantity > line.returned_quantity:
            price = line_unit_price(line)
            item["unit_price"] = min(item.get("unit_price", price), price)
    for item in out.values():
        item["left"] = item["sold"] - item["returned"]
        item["unit_price"] = item.get("unit_price", ZERO)
    return list(out.values())
