"""Everything a refused request must not have written, for one company."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from tests.factories import Shop
from tillbook.db import Database
from tillbook.models import (
    AdminSession,
    Expense,
    FailedTransaction,
    IdempotencyRecord,
    JournalEntry,
    JournalLine,
    Listing,
    Order,
    OrderItem,
    OutboxEvent,
    Payment,
    PaymentAllocation,
    PriceAdjustmentBatch,
    PriceHistory,
    StockAdjustment,
    StockBatch,
    StockMovement,
    TerminalCallback,
    TerminalProvider,
    User,
    Webhook,
)

COMPANY_TABLES = (
    Order,
    OrderItem,
    JournalEntry,
    JournalLine,
    Payment,
    PaymentAllocation,
    Expense,
    StockAdjustment,
    StockBatch,
    StockMovement,
    PriceAdjustmentBatch,
    PriceHistory,
    OutboxEvent,
    FailedTransaction,
    Webhook,
    AdminSession,
)


async def snapshot(db: Database, shop: Shop) -> dict[str, Any]:
    """Row counts of every table a write touches, stock levels, prices and balances."""

    async def read(session: AsyncSession) -> dict[str, Any]:
        cid = shop.company_id
        out: dict[str, Any] = {}
        for model in COMPANY_TABLES:
            out[model.__name__] = await session.scalar(
                select(func.count()).select_from(model).where(model.company_id == cid)
            )
        out["IdempotencyRecord"] = await session.scalar(
            select(func.count())
            .select_from(IdempotencyRecord)
            .where(IdempotencyRecord.warehouse_id.in_([shop.warehouse_id, shop.other_warehouse_id]))
        )
        out["TerminalCallback"] = await session.scalar(
            select(func.count())
            .select_from(TerminalCallback)
            .join(TerminalProvider, TerminalProvider.id == TerminalCallback.provider_id)
            .where(TerminalProvider.company_id == cid)
        )
        out["products"] = sorted(
            (pid, wh, Decimal(str(stock)), Decimal(str(price)))
            for pid, wh, stock, price in (
                await session.execute(
                    select(
                        Listing.product_id,
                        Listing.warehouse_id,
                        Listing.current_stock,
                        Listing.sales_price,
                    ).where(Listing.company_id == cid)
                )
            ).all()
        )
        out["balances"] = sorted(
            (uid, Decimal(str(balance)))
            for uid, balance in (
                await session.execute(select(User.id, User.balance).where(User.company_id == cid))
            ).all()
        )
        return out

    return await db.read(read)
