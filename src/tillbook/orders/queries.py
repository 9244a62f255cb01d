"""Read side of orders: pages with the ``dates`` filter, details by id, xid or invoice
number."""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.auth.context import AuthContext
from tillbook.errors import NotFound, invalid
from tillbook.kit import bounds
from tillbook.kit.pagination import envelope, parse_page
from tillbook.kit.text import quoted
from tillbook.models import Order
from tillbook.orders import lookup, views

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
) -> dict[str, Any]:
    p = parse_page(page, limit)
    start, end = parse_dates(dates)
    total, rows = await views.page_of_orders(
        session,
        key.warehouse_id,
        order_type,
        date_from=start,
        date_to=end,
        offset=p.offset,
        limit=p.limit,
    )
    return envelope(p, total, rows)


async def order_detail(
    session: AsyncSession, key: AuthContext, order_type: str, ref: str
) -> dict[str, Any]:
    """One order of the key's warehouse, named by id, xid or invoice number."""
    id_ = await lookup.order_id(session, key.warehouse_id, [order_type], ref)
    order = await session.get(Order, id_) if id_ is not None else None
    if order is None:
        raise NotFound(f"{NOUNS[order_type]} not found")
    return await views.load_detail(session, order)
