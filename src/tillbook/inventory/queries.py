"""Read side of stock for the back office: levels per branch, a product's open
batches with their expiry, and its movements. Each is one count and one page
statement (or one statement), whatever the page's length."""

from __future__ import annotations

from typing import Any

from sqlalchemy import ColumnElement, func, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.kit.pagination import Page, envelope
from tillbook.kit.search import matches
from tillbook.models import Listing, Product, ProductBarcode, StockBatch, StockMovement


async def levels_page(
    session: AsyncSession,
    company_id: int,
    warehouse_ids: list[int],
    page: Page,
    *,
    search: str | None = None,
    low_only: bool = False,
) -> dict[str, Any]:
    """One page of listings (product × branch) with stock, reorder level and
    price; ``low_only``: active listings under their reorder level, the furthest
    under first."""
    conds: list[ColumnElement[bool]] = [
        Listing.company_id == company_id,
        Listing.warehouse_id.in_(warehouse_ids),
        Product.archived_at.is_(None),
    ]
    if low_only:
        conds += [Listing.active.is_(True), Listing.current_stock < Listing.reorder_level]
    if search:
        conds.append(
            or_(
                matches(search, Product.name, Product.item_code),
                Product.id.in_(
                    select(ProductBarcode.product_id).where(
                        ProductBarcode.company_id == company_id,
                        ProductBarcode.barcode == search.strip(),
                    )
                ),
            )
        )
    base = (
        select(func.count())
        .select_from(Listing)
        .join(
            Product, (Product.id == Listing.product_id) & (Product.company_id == Listing.company_id)
        )
    )
    total = (await session.execute(base.where(*conds))).scalar_one()
    order = (
        [Listing.current_stock - Listing.reorder_level, Listing.id]
        if low_only
        else [Listing.product_id, Listing.warehouse_id]
    )
    rows = (
        await session.execute(
            select(
                Product.id,
                Product.name,
                Product.item_code,
                Listing.warehouse_id,
                Listing.current_stock,
                Listing.reorder_level,
                Listing.sales_price,
                Listing.active,
            )
            .join(
                Product,
                (Product.id == Listing.product_id) & (Product.company_id == Listing.company_id),
            )
            .where(*conds)
            .order_by(*order)
            .offset(page.offset)
            .limit(page.limit)
        )
    ).all()
    return envelope(
        page,
        total,
        [
            {
                "product_id": r[0],
                "name": r[1],
                "item_code": r[2],
                "warehouse_id": r[3],
                "current_stock": r[4],
                "reorder_level": r[5],
                "sales_price": r[6],
                "active": r[7],
                "low": r[7] and r[4] < r[5],
            }
            for r in rows
        ],
    )


async def open_batches(
    session: AsyncSession, company_id: int, product_id: int, warehouse_ids: list[int]
) -> list[dict[str, Any]]:
    """A product's batches with stock left in the given branches, the soonest to
    expire first (then FIFO order)."""
    rows = (
        await session.execute(
            select(StockBatch)
            .where(
                StockBatch.company_id == company_id,
                StockBatch.product_id == product_id,
                StockBatch.warehouse_id.in_(warehouse_ids),
                StockBatch.quantity_remaining != 0,
            )
            .order_by(StockBatch.expiry_date.is_(None), StockBatch.expiry_date, StockBatch.id)
        )
    ).scalars()
    return [
        {
            "id": b.id,
            "warehouse_id": b.warehouse_id,
            "batch_number": b.batch_number,
            "expiry_date": b.expiry_date,
            "quantity_received": b.quantity_received,
            "quantity_remaining": b.quantity_remaining,
            "unit_cost": b.unit_cost,
            "value_remaining": b.value_remaining,
            "source_type": b.source_type,
            "received_at": b.created_at,
        }
        for b in rows
    ]


async def movements_page(
    session: AsyncSession,
    company_id: int,
    product_id: int,
    warehouse_ids: list[int],
    page: Page,
) -> dict[str, Any]:
    """One page of a product's stock movements in the given branches, newest first
    (index ``stock_movements.product_id``)."""
    conds = [
        StockMovement.company_id == company_id,
        StockMovement.product_id == product_id,
        StockMovement.warehouse_id.in_(warehouse_ids),
    ]
    total = (
        await session.execute(select(func.count()).select_from(StockMovement).where(*conds))
    ).scalar_one()
    rows = (
        await session.execute(
            select(StockMovement)
            .where(*conds)
            .order_by(StockMovement.id.desc())
            .offset(page.offset)
            .limit(page.limit)
        )
    ).scalars()
    return envelope(
        page,
        total,
        [
            {
                "id": m.id,
                "warehouse_id": m.warehouse_id,
                "batch_id": m.batch_id,
                "quantity": m.quantity,
                "cost_amount": m.cost_amount,
                "reason": m.reason,
                "source_type": m.source_type,
                "source_id": m.source_id,
                "created_at": m.created_at,
            }
            for m in rows
        ],
    )
