"""Invoice numbers from a counter row locked in the issuing transaction (never MAX()+1).

``SAL-00001``, ``PUR-00001``, ``SRET-00001``, ``PRET-00001``: width 5, growing past
99999. ``ADJ-BATCH-1`` for price-adjustment batches. A number a client already
took by hand (``invoice_number`` in a request) is skipped.
"""

from __future__ import annotations

from sqlalchemy import exists, insert, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.models import InvoiceCounter, Order, PriceAdjustmentBatch

PREFIXES = {
    "sales": "SAL-",
    "purchases": "PUR-",
    "sales-returns": "SRET-",
    "purchase-returns": "PRET-",
    "price-adjustments": "ADJ-BATCH-",
}


def format_number(counter_type: str, value: int) -> str:
    prefix = PREFIXES[counter_type]
    if counter_type == "price-adjustments":
        return f"{prefix}{value}"
    return f"{prefix}{value:05d}"


async def _next_value(session: AsyncSession, warehouse_id: int, counter_type: str) -> int:
    value = (
        await session.execute(
            update(InvoiceCounter)
            .where(
                InvoiceCounter.warehouse_id == warehouse_id,
                InvoiceCounter.counter_type == counter_type,
            )
            .values(last_value=InvoiceCounter.last_value + 1)
            .returning(InvoiceCounter.last_value)
        )
    ).scalar_one_or_none()
    if value is None:
        # First number of this type here; a concurrent first insert loses the
        # primary-key race and the unit of work runs again.
        await session.execute(
            insert(InvoiceCounter).values(
                warehouse_id=warehouse_id, counter_type=counter_type, last_value=1
            )
        )
        value = 1
    return value


async def issue(session: AsyncSession, warehouse_id: int, counter_type: str) -> str:
    while True:
        number = format_number(counter_type, await _next_value(session, warehouse_id, counter_type))
        if not await _taken(session, warehouse_id, counter_type, number):
            return number


async def _taken(session: AsyncSession, warehouse_id: int, counter_type: str, number: str) -> bool:
    if counter_type == "price-adjustments":
        query = exists().where(
            PriceAdjustmentBatch.warehouse_id == warehouse_id,
            PriceAdjustmentBatch.invoice_number == number,
        )
    else:
        query = exists().where(
            Order.warehouse_id == warehouse_id,
            Order.order_type == counter_type,
            Order.invoice_number == number,
        )
    return bool((await session.execute(select(query))).scalar())
