"""What each promotion cost and sold over a period (DESIGN §18): from the lines it
priced, so the figures reconcile with the books: Σ ``cost`` is what the sales of
the period debited to 41300 for promotions (the rest of 41300 is order discounts
and loyalty). Voided sales are left out (their entries are reversed); returns are
shown as units back, since a return refunds the discounted price and leaves the
discount where it was (``orders/returns.py``)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.kit import xid
from tillbook.kit.money import ZERO, money_str, number
from tillbook.models import Order, OrderItem, Promotion


async def promotion_report(
    session: AsyncSession,
    company_id: int,
    warehouse_id: int | None,
    start: dt.date | None,
    end: dt.date | None,
) -> dict[str, Any]:
    conds = [
        OrderItem.company_id == company_id,
        OrderItem.promotion_id.is_not(None),
        Order.order_type == "sales",
        Order.order_status != "cancelled",
    ]
    if warehouse_id is not None:
        conds.append(Order.warehouse_id == warehouse_id)
    if start is not None:
        conds.append(Order.order_date >= start)
    if end is not None:
        conds.append(Order.order_date <= end)
    rows = (
        await session.execute(
            select(
                Promotion.id,
                Promotion.name,
                Promotion.kind,
                func.count(func.distinct(Order.id)),
                func.sum(OrderItem.quantity),
                func.sum(OrderItem.returned_quantity),
                func.sum(OrderItem.total),
                func.sum(OrderItem.promotion_discount),
                func.sum(OrderItem.promotion_cost),
            )
            .select_from(OrderItem)
            .join(
                Order, (Order.id == OrderItem.order_id) & (Order.company_id == OrderItem.company_id)
            )
            .join(
                Promotion,
                (Promotion.id == OrderItem.promotion_id) & (Promotion.company_id == company_id),
            )
            .where(*conds)
            .group_by(Promotion.id, Promotion.name, Promotion.kind)
            .order_by(func.sum(OrderItem.promotion_cost).desc(), Promotion.id)
        )
    ).all()
    items = []
    total_discount = total_cost = total_sales = ZERO
    for pid, name, kind, orders, units, returned, sales, discount, cost in rows:
        sales, discount, cost = Decimal(sales), Decimal(discount), Decimal(cost)
        total_sales += sales
        total_discount += discount
        total_cost += cost
        items.append(
            {
                "promotion_id": pid,
                "xid": xid.encode(pid),
                "name": name,
                "kind": kind,
                "sales": orders,
                "units": number(Decimal(units)),
                "units_returned": number(Decimal(returned)),
                "sold": money_str(sales),
                "discount": money_str(discount),
                "cost": money_str(cost),
            }
        )
    return {
        "from": start.isoformat() if start else None,
        "to": end.isoformat() if end else None,
        "warehouse_id": warehouse_id,
        "promotions": items,
        "totals": {
            "sold": money_str(total_sales),
            "discount": money_str(total_discount),
            "cost": money_str(total_cost),
        },
    }
