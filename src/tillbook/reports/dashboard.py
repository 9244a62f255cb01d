"""The back office's first page: what a shop owner looks at each morning.

Sales and gross margin per branch come from the books (``ledger.rollups``: closed
months from their roll-ups, the open days from their lines), so the figures agree
with profit and loss; the sales-per-day chart reads one month of invoices through
the orders' listing index; low stock and failing webhooks are one bounded query
each. A fixed number of statements whatever the size of the shop."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.kit.money import ZERO, money_str
from tillbook.ledger import chart, rollups
from tillbook.models import (
    Account,
    ApiKey,
    Listing,
    Order,
    OrderItem,
    Product,
    Tax,
    User,
    Warehouse,
    WebhookDelivery,
)

# Income that is sales (net of returns and discounts) and the cost of what was sold.
SALES_CODES = (chart.SALES_REVENUE, chart.SALES_RETURNS, chart.SALES_DISCOUNTS)
COST_CODES = (chart.COGS,)
# ``events.webhook_service.DELIVERY_STATUSES``: retrying after an error, or given up.
FAILING = ("retrying", "dead")


async def warehouses(
    session: AsyncSession, company_id: int, only: int | None = None
) -> list[tuple[int, str]]:
    """The company's branches (not archived), or the one a scoped staff member has."""
    query = select(Warehouse.id, Warehouse.name).where(
        Warehouse.company_id == company_id, Warehouse.archived_at.is_(None)
    )
    if only is not None:
        query = query.where(Warehouse.id == only)
    return [(i, n) for i, n in (await session.execute(query.order_by(Warehouse.id))).all()]


async def _sales_and_cost(
    session: AsyncSession,
    company_id: int,
    ids: dict[int, str],
    date_from: dt.date,
    date_to: dt.date,
) -> dict[int, tuple[Decimal, Decimal]]:
    sums = await rollups.account_sums(
        session,
        company_id,
        date_from=date_from,
        date_to=date_to,
        account_ids=list(ids),
        by_warehouse=True,
    )
    out: dict[int, tuple[Decimal, Decimal]] = {}
    for (account_id, warehouse_key), s in sums.items():
        sales, cost = out.get(warehouse_key, (ZERO, ZERO))
        if ids[account_id] in SALES_CODES:
            sales += s.credit - s.debit
        else:
            cost += s.debit - s.credit
        out[warehouse_key] = (sales, cost)
    return out


async def branch_figures(
    session: AsyncSession, company_id: int, branches: list[tuple[int, str]], today: dt.date
) -> list[dict[str, Any]]:
    """Per branch: today's and this month's sales, cost of sales and gross margin."""
    ids = {
        i: code
        for i, code in (
            await session.execute(
                select(Account.id, Account.code).where(
                    Account.company_id == company_id,
                    Account.code.in_(SALES_CODES + COST_CODES),
                )
            )
        ).all()
    }
    day = await _sales_and_cost(session, company_id, ids, today, today)
    month = await _sales_and_cost(session, company_id, ids, today.replace(day=1), today)
    rows = []
    for wid, name in branches:
        d_sales, d_cost = day.get(wid, (ZERO, ZERO))
        m_sales, m_cost = month.get(wid, (ZERO, ZERO))
        rows.append(
            {
                "warehouse_id": wid,
                "name": name,
                "today_sales": money_str(d_sales),
                "today_margin": money_str(d_sales - d_cost),
                "month_sales": money_str(m_sales),
                "month_margin": money_str(m_sales - m_cost),
            }
        )
    return rows


async def sales_per_day(
    session: AsyncSession, company_id: int, branch_ids: list[int], today: dt.date, days: int = 30
) -> list[tuple[dt.date, Decimal]]:
    """Invoiced sales (totals) per day over the last ``days`` days, every day present."""
    start = today - dt.timedelta(days=days - 1)
    totals: dict[dt.date, Decimal] = {}
    if branch_ids:
        rows = await session.execute(
            select(Order.order_date, func.sum(Order.total))
            .where(
                Order.company_id == company_id,
                Order.warehouse_id.in_(branch_ids),
                Order.order_type == "sales",
                Order.order_date >= start,
                Order.order_date <= today,
            )
            .group_by(Order.order_date)
        )
        for day, total in rows.all():
            totals[day] = Decimal(str(total or 0))
    return [
        (start + dt.timedelta(days=i), totals.get(start + dt.timedelta(days=i), ZERO))
        for i in range(days)
    ]


async def low_stock(
    session: AsyncSession, company_id: int, branch_ids: list[int], limit: int = 20
) -> tuple[int, list[dict[str, Any]]]:
    """Active listings whose stock is under their reorder level: (how many, the
    first ``limit`` of them, the furthest under first)."""
    conds = [
        Listing.company_id == company_id,
        Listing.warehouse_id.in_(branch_ids),
        Listing.active.is_(True),
        Listing.current_stock < Listing.reorder_level,
        Product.archived_at.is_(None),
    ]
    count = (
        await session.execute(
            select(func.count())
            .select_from(Listing)
            .join(
                Product,
                (Product.id == Listing.product_id) & (Product.company_id == Listing.company_id),
            )
            .where(*conds)
        )
    ).scalar_one()
    rows = await session.execute(
        select(
            Product.id,
            Product.name,
            Product.item_code,
            Warehouse.name,
            Listing.current_stock,
            Listing.reorder_level,
        )
        .join(
            Product, (Product.id == Listing.product_id) & (Product.company_id == Listing.company_id)
        )
        .join(
            Warehouse,
            (Warehouse.id == Listing.warehouse_id) & (Warehouse.company_id == Listing.company_id),
        )
        .where(*conds)
        .order_by((Listing.current_stock - Listing.reorder_level), Listing.id)
        .limit(limit)
    )
    return count, [
        {
            "product_id": pid,
            "name": name,
            "item_code": code,
            "warehouse": wname,
            "current_stock": stock,
            "reorder_level": level,
        }
        for pid, name, code, wname, stock, level in rows.all()
    ]


async def failing_webhooks(session: AsyncSession, company_id: int) -> int:
    """Deliveries retrying after an error or given up."""
    return int(
        (
            await session.execute(
                select(func.count())
                .select_from(WebhookDelivery)
                .where(
                    WebhookDelivery.company_id == company_id,
                    WebhookDelivery.status.in_(FAILING),
                )
            )
        ).scalar_one()
    )


async def top_products(
    session: AsyncSession,
    company_id: int,
    branch_ids: list[int],
    today: dt.date,
    days: int = 30,
    limit: int = 10,
) -> list[dict[str, Any]]:
    """The products that sold the most (by amount, net of line discounts, before
    returns) over the last ``days`` days in these branches: one grouped read of that
    month's lines through the orders' date index."""
    if not branch_ids:
        return []
    start = today - dt.timedelta(days=days - 1)
    amount = func.sum(OrderItem.subtotal).label("amount")
    rows = await session.execute(
        select(Product.id, Product.name, func.sum(OrderItem.base_quantity), amount)
        .join(Order, (Order.id == OrderItem.order_id) & (Order.company_id == OrderItem.company_id))
        .join(
            Product,
            (Product.id == OrderItem.product_id) & (Product.company_id == OrderItem.company_id),
        )
        .where(
            Order.company_id == company_id,
            Order.warehouse_id.in_(branch_ids),
            Order.order_type == "sales",
            Order.order_status != "cancelled",
            Order.order_date >= start,
            Order.order_date <= today,
        )
        .group_by(Product.id, Product.name)
        .order_by(amount.desc(), Product.id)
        .limit(limit)
    )
    return [
        {
            "product_id": pid,
            "name": name,
            "quantity": Decimal(str(qty)),
            "amount": money_str(Decimal(str(total or 0))),
        }
        for pid, name, qty, total in rows.all()
    ]


async def dues(
    session: AsyncSession, company_id: int, branch_ids: list[int], today: dt.date
) -> dict[str, Any]:
    """What customers owe on open sales invoices (receivables) and what the shop owes
    on open purchase invoices (payables), in these branches: in all, and how much of
    it is over 30 days old."""
    out: dict[str, Any] = {}
    old = today - dt.timedelta(days=30)
    for key, order_type in (("receivable", "sales"), ("payable", "purchases")):
        total = overdue = ZERO
        if branch_ids:
            row = (
                await session.execute(
                    select(
                        func.coalesce(func.sum(Order.due_amount), 0),
                        func.coalesce(func.sum(Order.due_amount).filter(Order.order_date < old), 0),
                    ).where(
                        Order.company_id == company_id,
                        Order.warehouse_id.in_(branch_ids),
                        Order.order_type == order_type,
                        Order.order_status != "cancelled",
                        Order.due_amount > 0,
                    )
                )
            ).one()
            total, overdue = Decimal(str(row[0])), Decimal(str(row[1]))
        out[key] = {"total": money_str(total), "over_30_days": money_str(overdue)}
    return out


async def setup_checklist(session: AsyncSession, company_id: int) -> list[dict[str, Any]]:
    """What a new shop still has to do before it trades, each read from the shop's
    own state (so an item is ticked when it is done, however it was done): a
    product, a tax, a second staff member, a till (an API key or a register). The
    dashboard shows the list until every item is done."""

    async def some(model: Any, *where: Any) -> bool:
        found = await session.scalar(
            select(model.id).where(model.company_id == company_id, *where).limit(1)
        )
        return found is not None

    return [
        {
            "label": "Add your products, or import your catalog from a CSV file",
            "done": await some(Product),
            "link": "/products/new",
        },
        {
            "label": "Set up your sales taxes (and check the payment modes)",
            "done": await some(Tax),
            "link": "/reference?kind=taxes",
        },
        {
            "label": "Add your staff, each with their role",
            "done": await some(User, User.user_type == "staff", User.role != "owner"),
            "link": "/settings/staff",
        },
        {
            "label": "Connect a till: pair a register or create an API key",
            "done": await some(ApiKey),
            "link": "/settings/keys",
        },
    ]
