"""Order SQL: orders, their lines, invoice counters.

An order is inserted early in its unit, before its number exists (``invoice_number``
NULL: the unique index ignores it, and the unit always sets it before COMMIT); the
number is taken from the counter in the unit's closing step and written with the
unit's last statement (``ORDER_NUMBERS``), so the counter row, which every sale of
the warehouse queues on, is locked for the closing step only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import bindparam, exists, select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from tillbook.kit.money import ZERO
from tillbook.models import InvoiceCounter, Order, OrderItem, PriceAdjustmentBatch
from tillbook.models.base import table_of, value_of
from tillbook.unit import QueuedUpdate, UnitOfWork

_counters = table_of(InvoiceCounter)
_orders = table_of(Order)
_items = table_of(OrderItem)
_price_batches = table_of(PriceAdjustmentBatch)


def _next_value(insert: Any) -> Any:
    """The counter's next value, the first of a warehouse and type included: an
    upsert, so that no first-insert race exists."""
    statement = insert(_counters).values(
        warehouse_id=bindparam("warehouse_id"),
        counter_type=bindparam("counter_type"),
        company_id=bindparam("company_id"),
        last_value=1,
    )
    return statement.on_conflict_do_update(
        index_elements=[_counters.c.warehouse_id, _counters.c.counter_type, _counters.c.company_id],
        set_={"last_value": _counters.c.last_value + 1},
    ).returning(_counters.c.last_value)


_NEXT = {True: _next_value(pg_insert), False: _next_value(sqlite_insert)}
_ORDER_TAKEN = select(
    exists().where(
        _orders.c.company_id == bindparam("company_id"),
        _orders.c.warehouse_id == bindparam("warehouse_id"),
        _orders.c.order_type == bindparam("counter_type"),
        _orders.c.invoice_number == bindparam("number"),
    )
)
_BATCH_TAKEN = select(
    exists().where(
        _price_batches.c.company_id == bindparam("company_id"),
        _price_batches.c.warehouse_id == bindparam("warehouse_id"),
        _price_batches.c.invoice_number == bindparam("number"),
    )
)
_CLIENT_NUMBERED = select(_orders).where(
    _orders.c.company_id == bindparam("company_id"),
    _orders.c.warehouse_id == bindparam("warehouse_id"),
    _orders.c.order_type == bindparam("order_type"),
    _orders.c.invoice_number == bindparam("number"),
)

# The number and the journal entry of an order inserted earlier in the unit.
ORDER_NUMBERS = QueuedUpdate(_orders, ["id"], ["invoice_number", "journal_entry_id"])


async def next_counter_value(
    uow: UnitOfWork, company_id: int, warehouse_id: int, counter_type: str
) -> int:
    """The next value of the counter; its row stays locked until COMMIT."""
    params = {"company_id": company_id, "warehouse_id": warehouse_id, "counter_type": counter_type}
    return int((await uow.run(_NEXT[uow.is_postgresql], params))[0][0])


async def number_taken(
    uow: UnitOfWork, company_id: int, warehouse_id: int, counter_type: str, number: str
) -> bool:
    query = _BATCH_TAKEN if counter_type == "price-adjustments" else _ORDER_TAKEN
    params = {
        "company_id": company_id,
        "warehouse_id": warehouse_id,
        "counter_type": counter_type,
        "number": number,
    }
    return bool((await uow.run(query, params))[0][0])


async def client_numbered(
    uow: UnitOfWork, company_id: int, warehouse_id: int, order_type: str, number: str
) -> Order | None:
    """The order a client's own invoice number names, if it exists."""
    rows = await uow.run(
        _CLIENT_NUMBERED,
        {
            "company_id": company_id,
            "warehouse_id": warehouse_id,
            "order_type": order_type,
            "number": number,
        },
    )
    return value_of(Order, **rows[0].as_dict()) if rows else None


async def insert_order(uow: UnitOfWork, values: Mapping[str, Any]) -> int:
    (order_id,) = await uow.insert_returning_ids(_orders, [values])
    return order_id


# The columns only a sale's lines fill (a promotion that priced the line): every
# other order's lines are written with them empty, since the array insert applies
# no column default (``UnitOfWork.insert_returning_ids``).
_NO_PROMOTION = {"promotion_id": None, "promotion_discount": ZERO, "promotion_cost": ZERO}


async def insert_items(uow: UnitOfWork, rows: Sequence[Mapping[str, Any]]) -> list[int]:
    return await uow.insert_returning_ids(_items, [{**_NO_PROMOTION, **row} for row in rows])


def number_order(uow: UnitOfWork, order: Order, number: str, entry_id: int | None) -> None:
    """The order's number and journal entry, written with the unit's last statement."""
    row = {
        "company_id": order.company_id,
        "id": order.id,
        "invoice_number": number,
        "journal_entry_id": entry_id,
    }
    uow.defer(ORDER_NUMBERS, [row])
