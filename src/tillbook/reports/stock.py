"""Stock valuation: the FIFO layers of each product against GL 11700.

``value`` is Σ ``stock_batches.value_remaining`` of the product. Layers carry
their value to the cent (DESIGN.md §3), so the total equals the 11700 balance of
the warehouse's journal lines exactly; a difference means the books and the
layers disagree.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.kit import xid
from tillbook.kit.money import ZERO, money_str, number, to_money
from tillbook.kit.pagination import Page, envelope
from tillbook.ledger import chart, rollups
from tillbook.ledger.service import account_ids
from tillbook.models import Listing, Product, StockBatch, Warehouse
from tillbook.reports.common import check_scope


async def _inventory_gl(
    session: AsyncSession, company_id: int, warehouse_id: int | None
) -> Decimal:
    """The 11700 balance (closed months from their roll-ups, the rest from lines)."""
    ids = await account_ids(session, company_id, {chart.INVENTORY})
    sums = await rollups.account_sums(
        session, company_id, warehouse_id=warehouse_id, account_ids=[ids[chart.INVENTORY]]
    )
    found = sums.get(ids[chart.INVENTORY])
    return ZERO if found is None else found.balance


async def _valuation(session: AsyncSession, company_id: int, warehouse_id: int) -> dict[str, Any]:
    layers = (
        select(
            StockBatch.product_id.label("product_id"),
            func.sum(StockBatch.value_remaining).label("value"),
        )
        .where(StockBatch.company_id == company_id, StockBatch.warehouse_id == warehouse_id)
        .group_by(StockBatch.product_id)
        .subquery()
    )
    rows = await session.execute(
        select(Product.id, Product.name, Listing.current_stock, layers.c.value)
        .join(
            Listing, (Listing.product_id == Product.id) & (Listing.company_id == Product.company_id)
        )
        .outerjoin(layers, layers.c.product_id == Product.id)
        .where(Listing.company_id == company_id, Listing.warehouse_id == warehouse_id)
        .order_by(Product.id)
    )
    products = []
    total = ZERO
    for product_id, name, stock, value in rows.all():
        amount = to_money(value)
        total += amount
        products.append(
            {
                "product_id": product_id,
                "xid": xid.encode(product_id),
                "name": name,
                "current_stock": number(Decimal(str(stock))),
                "value": money_str(amount),
            }
        )
    gl = await _inventory_gl(session, company_id, warehouse_id)
    return {
        "warehouse_id": warehouse_id,
        "products": products,
        "total_value": money_str(total),
        "gl_inventory_balance": money_str(gl),
    }


async def stock_valuation(
    session: AsyncSession, company_id: int, warehouse_id: int
) -> dict[str, Any]:
    """``{"warehouse_id", "products": [{"product_id", "xid", "name", "current_stock",
    "value"}], "total_value", "gl_inventory_balance"}``, every product listed in
    the warehouse, in id order."""
    await check_scope(session, company_id, warehouse_id)
    return await _valuation(session, company_id, warehouse_id)


async def stock_valuation_company(session: AsyncSession, company_id: int) -> dict[str, Any]:
    """Every warehouse of the company: ``{"company_id", "warehouses": [<stock_valuation>
    ...], "total_value", "gl_inventory_balance"}``; the company-wide GL figure takes
    every 11700 line of the company, with or without a warehouse."""
    await check_scope(session, company_id)
    ids = (
        await session.execute(
            select(Warehouse.id).where(Warehouse.company_id == company_id).order_by(Warehouse.id)
        )
    ).scalars()
    warehouses = [await _valuation(session, company_id, wid) for wid in ids.all()]
    total = sum((Decimal(w["total_value"]) for w in warehouses), ZERO)
    gl = await _inventory_gl(session, company_id, None)
    return {
        "company_id": company_id,
        "warehouses": warehouses,
        "total_value": money_str(total),
        "gl_inventory_balance": money_str(gl),
    }


async def stock_valuation_page(
    session: AsyncSession, company_id: int, warehouse_ids: list[int], page: Page
) -> dict[str, Any]:
    """The valuation as a screen shows it: each warehouse's total at cost (one
    grouped sum of its layers, the same figure as ``stock_valuation``'s
    ``total_value``) and GL 11700 balance, and one page of the products (listing ×
    warehouse) with their stock and value, instead of every product at once."""
    for wid in warehouse_ids:
        await check_scope(session, company_id, wid)
    totals = dict(
        (
            await session.execute(
                select(StockBatch.warehouse_id, func.sum(StockBatch.value_remaining))
                .where(
                    StockBatch.company_id == company_id,
                    StockBatch.warehouse_id.in_(warehouse_ids),
                )
                .group_by(StockBatch.warehouse_id)
            )
        ).all()
    )
    warehouses = [
        {
            "warehouse_id": wid,
            "total_value": money_str(to_money(totals.get(wid))),
            "gl_inventory_balance": money_str(await _inventory_gl(session, company_id, wid)),
        }
        for wid in warehouse_ids
    ]
    conds = [Listing.company_id == company_id, Listing.warehouse_id.in_(warehouse_ids)]
    total = (
        await session.execute(select(func.count()).select_from(Listing).where(*conds))
    ).scalar_one()
    listed = (
        select(Listing.product_id, Listing.warehouse_id, Listing.current_stock)
        .where(*conds)
        .order_by(Listing.product_id, Listing.warehouse_id)
        .offset(page.offset)
        .limit(page.limit)
        .subquery()
    )
    value = (
        select(func.coalesce(func.sum(StockBatch.value_remaining), 0))
        .where(
            StockBatch.company_id == company_id,
            StockBatch.product_id == listed.c.product_id,
            StockBatch.warehouse_id == listed.c.warehouse_id,
        )
        .scalar_subquery()
    )
    rows = await session.execute(
        select(Product.id, Product.name, listed.c.warehouse_id, listed.c.current_stock, value)
        .join(listed, listed.c.product_id == Product.id)
        .where(Product.company_id == company_id)
        .order_by(Product.id, listed.c.warehouse_id)
    )
    return {
        "warehouses": warehouses,
        "total_value": money_str(sum((to_money(v) for v in totals.values()), ZERO)),
        "products": envelope(
            page,
            total,
            [
                {
                    "product_id": pid,
                    "name": name,
                    "warehouse_id": wid,
                    "current_stock": number(Decimal(str(stock))),
                    "value": money_str(to_money(amount)),
                }
                for pid, name, wid, stock, amount in rows.all()
            ],
        ),
    }
