"""Price adjustments: a new sales price for one product in the key's warehouse.

Each change is a batch (``ADJ-BATCH-N``) with one immutable price-history row:
history rows are inserted here and nowhere updated or deleted. A price change
moves no money, so no journal entry is posted.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from decimal import Decimal
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession
from typing_extensions import TypedDict

from tillbook.auth.context import AuthContext
from tillbook.catalog import announcements
from tillbook.catalog.schemas import PriceAdjustmentIn
from tillbook.kit import xid
from tillbook.kit.money import number
from tillbook.kit.pagination import Paged, paged, parse_page
from tillbook.kit.problems import Problems
from tillbook.kit.refs import ref_to_id
from tillbook.kit.shapes import DateStr, Named, ProductRef, answer
from tillbook.ledger import periods
from tillbook.models import Listing, PriceHistory, Product, User
from tillbook.models import PriceAdjustmentBatch as BatchRow
from tillbook.orders import numbering
from tillbook.unit import UnitOfWork


@answer
class PriceChange(TypedDict):
    product_id: int
    product: ProductRef
    old_price: float
    new_price: float


@answer
class PriceAdjustmentBatch(TypedDict):
    # A numbered batch of price changes as a till lists it, with its changes.
    id: int
    invoice_number: str
    date: DateStr
    notes: str
    creator: Named | None
    items: list[PriceChange]


@answer
class PriceAdjusted(TypedDict):
    # ``POST /price-adjustments``' answer (flat beside ``status``).
    batch_invoice: str
    new_price: float
    batch_id: int


async def open_batch(
    uow: UnitOfWork, company_id: int, warehouse_id: int, notes: str, actor_id: int | None
) -> BatchRow:
    """A numbered price-adjustment batch (``ADJ-BATCH-N``) of one warehouse, for one
    price change or many (``catalog.batch_prices``). A price change posts no entry,
    so the closed-period guard is asked here."""
    session = uow.session
    now = dt.datetime.now(dt.UTC)
    await periods.refuse_closed(session, company_id, now.date(), "date")
    invoice_number = await numbering.take(uow, company_id, warehouse_id, "price-adjustments")
    batch = BatchRow(
        company_id=company_id,
        warehouse_id=warehouse_id,
        invoice_number=invoice_number,
        date=now.date(),
        notes=notes,
        created_by=actor_id,
        created_at=now,
    )
    session.add(batch)
    await session.flush()
    return batch


async def record_price_change(
    uow: UnitOfWork,
    product: Product,
    listing: Listing,
    new_price: Decimal,
    *,
    actor_id: int | None,
    notes: str,
    announce: bool = True,
    batch: BatchRow | None = None,
) -> BatchRow:
    """A new sales price for a listing, whichever door it came through (a till's
    price adjustment, the back office): a numbered batch (``batch``, when the change
    is one of many in the warehouse) with its immutable history row, the listing
    changed (its version moves on) and ``product.updated`` for the warehouse's tills
    (unless the caller ``announce``s a larger change itself). The listing must be
    locked by the caller."""
    session = uow.session
    if batch is None:
        batch = await open_batch(uow, listing.company_id, listing.warehouse_id, notes, actor_id)
    session.add(
        PriceHistory(
            company_id=listing.company_id,
            warehouse_id=listing.warehouse_id,
            batch_id=batch.id,
            product_id=product.id,
            old_price=listing.sales_price,
            new_price=new_price,
            created_by=actor_id,
            created_at=dt.datetime.now(dt.UTC),
        )
    )
    listing.sales_price = new_price
    listing.version += 1
    await session.flush()
    if announce:
        announcements.announce(uow, listing.company_id, product, listing)
    return batch


async def create_price_adjustment(
    uow: UnitOfWork, key: AuthContext, body: PriceAdjustmentIn
) -> PriceAdjusted:
    """A price change edits the warehouse's listing of the product, so it locks that
    row (a cold path)."""
    session = uow.session
    problems = Problems()
    product_id = ref_to_id(body.product_id)
    found = None
    if product_id is not None:
        found = (
            await session.execute(
                select(Product, Listing)
                .join(
                    Listing,
                    (Listing.product_id == Product.id) & (Listing.company_id == Product.company_id),
                )
                .where(
                    Product.company_id == key.company_id,
                    Product.id == product_id,
                    Listing.warehouse_id == key.warehouse_id,
                )
                .with_for_update(of=Listing)
            )
        ).first()
    if found is None:
        problems.add("product_id", f"unknown product {body.product_id!r}")
    problems.raise_if_any()
    assert found is not None
    product, listing = found

    batch = await record_price_change(
        uow,
        product,
        listing,
        body.new_sales_price,
        actor_id=key.user_id,
        notes=body.notes or "",
    )
    invoice_number = batch.invoice_number
    return {
        "batch_invoice": invoice_number,
        "new_price": number(body.new_sales_price),
        "batch_id": batch.id,
    }


async def price_adjustment_page(
    session: AsyncSession, key: AuthContext, page: str | None, limit: str | None
) -> Paged[PriceAdjustmentBatch]:
    """The key's warehouse's price-adjustment batches, newest first, with their items."""
    p = parse_page(page, limit)
    where = (
        BatchRow.company_id == key.company_id,
        BatchRow.warehouse_id == key.warehouse_id,
    )
    total = (
        await session.execute(select(func.count()).select_from(BatchRow).where(*where))
    ).scalar_one()
    if p.offset >= total:
        return paged(p, total, [])
    batches = (
        await session.execute(
            select(BatchRow, User)
            .outerjoin(
                User,
                (User.id == BatchRow.created_by) & (User.company_id == BatchRow.company_id),
            )
            .where(*where)
            .order_by(BatchRow.id.desc())
            .offset(p.offset)
            .limit(p.limit)
        )
    ).all()
    items: dict[int, list[PriceChange]] = defaultdict(list)
    history = await session.execute(
        select(PriceHistory, Product)
        .join(
            Product,
            (Product.id == PriceHistory.product_id)
            & (Product.company_id == PriceHistory.company_id),
        )
        .where(
            PriceHistory.company_id == key.company_id,
            PriceHistory.warehouse_id == key.warehouse_id,
            PriceHistory.batch_id.in_([b.id for b, _ in batches]),
        )
        .order_by(PriceHistory.id)
    )
    for h, product in history:
        items[h.batch_id].append(
            {
                "product_id": h.product_id,
                "product": {
                    "id": product.id,
                    "xid": xid.encode(product.id),
                    "name": product.name,
                    "item_code": product.item_code,
                },
                "old_price": number(h.old_price),
                "new_price": number(h.new_price),
            }
        )
    rows: list[PriceAdjustmentBatch] = [
        {
            "id": b.id,
            "invoice_number": b.invoice_number,
            "date": b.date.isoformat(),
            "notes": b.notes,
            "creator": None if u is None else {"id": u.id, "name": u.name},
            "items": items.get(b.id, []),
        }
        for b, u in batches
    ]
    return paged(p, total, rows)


async def history(
    session: AsyncSession,
    company_id: int,
    product_id: int,
    warehouse_ids: list[int],
    limit: int = 20,
) -> list[dict[str, Any]]:
    """A product's latest sales-price changes in the given branches, newest first,
    with who made them (index ``price_history.product_id``)."""
    rows = await session.execute(
        select(PriceHistory, User.name)
        .outerjoin(
            User,
            (User.id == PriceHistory.created_by) & (User.company_id == PriceHistory.company_id),
        )
        .where(
            PriceHistory.company_id == company_id,
            PriceHistory.product_id == product_id,
            PriceHistory.warehouse_id.in_(warehouse_ids),
        )
        .order_by(PriceHistory.id.desc())
        .limit(limit)
    )
    return [
        {
            "warehouse_id": h.warehouse_id,
            "old_price": number(h.old_price),
            "new_price": number(h.new_price),
            "by": name,
            "at": h.created_at,
        }
        for h, name in rows.all()
    ]
