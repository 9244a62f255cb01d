"""Everything a refused request must not have written, for one company."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from tests.factories import Shop
from tillbook.db import Database
from tillbook.models import (
    Account,
    AdminSession,
    AuditEvent,
    Brand,
    Category,
    CompanyCurrency,
    ExchangeRate,
    Expense,
    ExpenseCategory,
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
    PaymentMode,
    PriceAdjustmentBatch,
    PriceHistory,
    Product,
    ProductBarcode,
    ProductUnit,
    Register,
    Shift,
    ShiftCash,
    StockAdjustment,
    StockBatch,
    StockCount,
    StockCountLine,
    StockMovement,
    Tax,
    TerminalCallback,
    TerminalProvider,
    Unit,
    User,
    Warehouse,
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
    AuditEvent,
    Account,
    ProductBarcode,
    ProductUnit,
    Shift,
    ShiftCash,
    Register,
    StockCount,
    StockCountLine,
    ExchangeRate,
)
# Set-up records an edit changes in place: their count and the sum of their versions.
EDITABLE_TABLES = (Product, Unit, Category, Brand, Tax, PaymentMode, ExpenseCategory, Warehouse)


async def snapshot(db: Database, shop: Shop) -> dict[str, Any]:
    """Row counts of every table a write touches, stock levels, prices and balances."""

    async def read(session: AsyncSession) -> dict[str, Any]:
        cid = shop.company_id
        out: dict[str, Any] = {}
        for model in COMPANY_TABLES:
            out[model.__name__] = await session.scalar(
                select(func.count()).select_from(model).where(model.company_id == cid)
            )
        for editable in EDITABLE_TABLES:
            out[editable.__name__] = tuple(
                (
                    await session.execute(
                        select(func.count(), func.sum(editable.version)).where(
                            editable.company_id == cid
                        )
                    )
                ).one()
            )
        out["IdempotencyRecord"] = await session.scalar(
            select(func.count())
            .select_from(IdempotencyRecord)
            .where(IdempotencyRecord.warehouse_id.in_([shop.warehouse_id, shop.other_warehouse_id]))
        )
        out["AdminIdempotencyRecord"] = await session.scalar(
            select(func.count())
            .select_from(IdempotencyRecord)
            .where(IdempotencyRecord.company_id == cid, IdempotencyRecord.warehouse_id.is_(None))
        )
        # Records a write moves from one state to the next in place.
        out["states"] = sorted(
            [
                *(
                    ("expense", str(status), n)
                    for status, n in await session.execute(
                        select(Expense.status, func.count())
                        .where(Expense.company_id == cid)
                        .group_by(Expense.status)
                    )
                ),
                *(
                    ("stock count", str(status), n)
                    for status, n in await session.execute(
                        select(StockCount.status, func.count())
                        .where(StockCount.company_id == cid)
                        .group_by(StockCount.status)
                    )
                ),
                (
                    "registers revoked",
                    "",
                    await session.scalar(
                        select(func.count()).where(
                            Register.company_id == cid, Register.revoked_at.is_not(None)
                        )
                    ),
                ),
                (
                    "count lines counted",
                    "",
                    await session.scalar(
                        select(func.count()).where(
                            StockCountLine.company_id == cid, StockCountLine.counted.is_not(None)
                        )
                    ),
                ),
            ]
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
        out["currencies"] = sorted(
            (code, enabled)
            for code, enabled in await session.execute(
                select(CompanyCurrency.code, CompanyCurrency.enabled).where(
                    CompanyCurrency.company_id == cid
                )
            )
        )
        out["listing_versions"] = await session.scalar(
            select(func.sum(Listing.version)).where(Listing.company_id == cid)
        )
        out["balances"] = sorted(
            (uid, Decimal(str(balance)), version)
            for uid, balance, version in (
                await session.execute(
                    select(User.id, User.balance, User.version).where(User.company_id == cid)
                )
            ).all()
        )
        return out

    return await db.read(read)
