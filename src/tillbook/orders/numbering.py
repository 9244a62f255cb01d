"""Invoice numbers from a counter row locked in the issuing transaction (never MAX()+1).

``SAL-00001``, ``PUR-00001``, ``SRET-00001``, ``PRET-00001``: width 5, growing past
99999. ``ADJ-BATCH-1`` for price-adjustment batches. A number a client already
took by hand (``invoice_number`` in a request) is skipped.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import (
    BigInteger,
    String,
    Text,
    bindparam,
    cast,
    exists,
    func,
    insert,
    select,
    update,
)
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.db import after_conflict
from tillbook.deferred import LateSource, late
from tillbook.models import InvoiceCounter, Order, PriceAdjustmentBatch
from tillbook.models.base import table_of
from tillbook.rawsql import on_postgresql

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


def format_number_sql(prefix: Any, value: Any) -> Any:
    """``format_number`` of an order series in SQL (``SAL-00042``, ``SAL-123456``), for
    numbers taken inside a statement; tests hold the two to the same output."""
    digits = cast(value, Text)
    return prefix + func.lpad(digits, func.greatest(5, func.length(digits)), "0")


_counters = table_of(InvoiceCounter)
_orders = table_of(Order)
_batches = table_of(PriceAdjustmentBatch)
# Built once: the counter statements run under the counter's lock, on every sale.
_NEXT = (
    update(_counters)
    .where(
        _counters.c.warehouse_id == bindparam("w_id"),
        _counters.c.counter_type == bindparam("c_type"),
    )
    .values(last_value=_counters.c.last_value + 1)
    .returning(_counters.c.last_value)
)
_FIRST = insert(_counters).values(last_value=1)
_ORDER_TAKEN = select(
    exists().where(
        _orders.c.warehouse_id == bindparam("warehouse_id"),
        _orders.c.order_type == bindparam("counter_type"),
        _orders.c.invoice_number == bindparam("number"),
    )
)
# The next number as the first CTE of a sale's last statement (``issue_at_commit``):
# an upsert, so the first number of a warehouse needs no separate insert.
_LATE_NUMBER = LateSource(
    pg_insert(_counters)
    .values(
        warehouse_id=bindparam("late_warehouse_id", type_=BigInteger),
        counter_type=bindparam("late_counter_type", type_=String),
        last_value=1,
    )
    .on_conflict_do_update(
        index_elements=[_counters.c.warehouse_id, _counters.c.counter_type],
        set_={"last_value": _counters.c.last_value + 1},
    )
    .returning(
        format_number_sql(bindparam("late_prefix", type_=String), _counters.c.last_value).label(
            "value"
        )
    )
)
_BATCH_TAKEN = select(
    exists().where(
        _batches.c.warehouse_id == bindparam("warehouse_id"),
        _batches.c.invoice_number == bindparam("number"),
    )
)


async def _next_value(session: AsyncSession, warehouse_id: int, counter_type: str) -> int:
    where = {"w_id": warehouse_id, "c_type": counter_type}
    value: int | None = (await session.execute(_NEXT, where)).scalar_one_or_none()
    if value is None:
        # First number of this type here; a concurrent first insert loses the
        # primary-key race and the unit of work runs again.
        await session.execute(_FIRST, {"warehouse_id": warehouse_id, "counter_type": counter_type})
        value = 1
    return value


async def issue(session: AsyncSession, warehouse_id: int, counter_type: str) -> str:
    """The next number of the series, skipping numbers clients already took.

    Order numbers are unique per warehouse and type in the table itself, so a
    collision with a client's own number fails the transaction, and ``Database.write``
    runs it again; only then (``after_conflict``) is each number checked first. That
    keeps a lookup out of the common path, which runs under the counter's lock."""
    trust_index = counter_type != "price-adjustments" and not after_conflict.get()
    while True:
        number = format_number(counter_type, await _next_value(session, warehouse_id, counter_type))
        if trust_index or not await _taken(session, warehouse_id, counter_type, number):
            return number


async def issue_at_commit(session: AsyncSession, warehouse_id: int, counter_type: str) -> str:
    """The next order number, taken by the unit's last statement just before COMMIT
    (``tillbook.deferred.late``): returns a placeholder that every late column and
    the unit's result carry until then. The counter row, which every sale of the
    warehouse queues on, is then locked for that statement and COMMIT only.

    On SQLite (one writer at a time: nothing queues on the row) and when the unit
    runs again after a unique violation (a client took the next number by hand,
    which needs a check per number) the number is taken at once, as by ``issue``."""
    assert counter_type != "price-adjustments", "order series only"
    if not on_postgresql(session) or after_conflict.get():
        return await issue(session, warehouse_id, counter_type)
    params = {
        "late_warehouse_id": warehouse_id,
        "late_counter_type": counter_type,
        "late_prefix": PREFIXES[counter_type],
    }
    return late(session, _LATE_NUMBER, params)


async def _taken(session: AsyncSession, warehouse_id: int, counter_type: str, number: str) -> bool:
    query = _BATCH_TAKEN if counter_type == "price-adjustments" else _ORDER_TAKEN
    params = {"warehouse_id": warehouse_id, "counter_type": counter_type, "number": number}
    return bool((await session.execute(query, params)).scalar())
