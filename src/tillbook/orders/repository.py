"""Order SQL: orders, their lines, invoice counters.

An order is inserted early in its unit, before its number exists (``invoice_number``
NULL: the unique index ignores it, and the unit always sets it before COMMIT); the
number is taken from the counter in the unit's closing step and written with the
unit's last statement (``ORDER_NUMBERS``), so the counter row, which every sale of
the warehouse queues on, is locked for the closing step only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Text, bindparam, cast, exists, func, insert, select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from tillbook.kit.money import ZERO
from tillbook.ledger.repository import RESERVE_ENTRY_ID
from tillbook.models import InvoiceCounter, Order, OrderItem, Payment, PriceAdjustmentBatch
from tillbook.models.base import table_of, value_of
from tillbook.unit import Late, QueuedUpdate, UnitOfWork, next_ids

_counters = table_of(InvoiceCounter)
_orders = table_of(Order)
_items = table_of(OrderItem)
_payments = table_of(Payment)
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


def _late_number() -> Late:
    """The counter's next value as its number (``numbering.format_number`` in SQL:
    the prefix, then the value zero-padded to five digits, longer when it grows),
    taken by the unit's last statement (``numbering.take_late``)."""
    upsert = pg_insert(_counters).values(
        warehouse_id=bindparam("late_number_warehouse_id"),
        counter_type=bindparam("late_number_counter_type"),
        company_id=bindparam("late_number_company_id"),
        last_value=1,
    )
    value = cast(_counters.c.last_value, Text)
    number = bindparam("late_number_prefix", type_=Text) + func.lpad(
        value, func.greatest(5, func.length(value)), "0"
    )
    return Late(
        upsert.on_conflict_do_update(
            index_elements=[
                _counters.c.warehouse_id,
                _counters.c.counter_type,
                _counters.c.company_id,
            ],
            set_={"last_value": _counters.c.last_value + 1},
        ).returning(number.label("number")),
        "number",
    )


LATE_NUMBER = _late_number()
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


def late_number(
    uow: UnitOfWork, company_id: int, warehouse_id: int, counter_type: str, prefix: str
) -> str:
    """The placeholder of the number the unit's last statement takes (PostgreSQL)."""
    return uow.late(
        LATE_NUMBER,
        {
            "late_number_company_id": company_id,
            "late_number_warehouse_id": warehouse_id,
            "late_number_counter_type": counter_type,
            "late_number_prefix": prefix,
        },
    )


async def insert_order(uow: UnitOfWork, values: Mapping[str, Any]) -> int:
    (order_id,) = await uow.insert_returning_ids(_orders, [values])
    return order_id


# The order and, from the sequences, the ids its journal entry, lines and payments
# will have.
_INSERT_RESERVING = insert(_orders).returning(
    _orders.c.id,
    RESERVE_ENTRY_ID,
    next_ids(_items, "reserve_items").label("item_ids"),
    next_ids(_payments, "reserve_payments").label("payment_ids"),
)


@dataclass(frozen=True)
class Reserved:
    """Ids taken from the sequences by an order's insert, for rows the unit then
    writes with its last statement (none on SQLite: its rows are written at once)."""

    entry_id: int | None = None
    item_ids: list[int] | None = None
    payment_ids: list[int] | None = None


async def insert_order_reserving(
    uow: UnitOfWork, values: Mapping[str, Any], *, items: int, payments: int
) -> tuple[int, Reserved]:
    """Insert the order and, in the same statement, reserve the ids of its journal
    entry, its ``items`` lines and its ``payments`` payments, so that those go with
    the unit's last statement (``ledger.service.post(entry_id=…)``, ``insert_items``
    and ``tenders.record_order_tenders`` given the ids): a sale's order, lines,
    payments and entry cost one round trip before it instead of four."""
    if not uow.is_postgresql:
        return await insert_order(uow, values), Reserved()
    params = {**values, "reserve_items": items, "reserve_payments": payments}
    row = (await uow.run(_INSERT_RESERVING, params))[0]
    return int(row[0]), Reserved(int(row[1]), list(row[2] or []), list(row[3] or []))


# The columns only a sale's lines fill (a promotion that priced the line): every
# other order's lines are written with them empty, since the array insert applies
# no column default (``UnitOfWork.insert_returning_ids``).
_NO_PROMOTION = {"promotion_id": None, "promotion_discount": ZERO, "promotion_cost": ZERO}


async def insert_items(
    uow: UnitOfWork, rows: Sequence[Mapping[str, Any]], ids: Sequence[int] | None = None
) -> list[int]:
    """The order's lines, now, or under ``ids`` reserved for them
    (``insert_order_reserving``) with the unit's last statement."""
    full = [{**_NO_PROMOTION, **row} for row in rows]
    if ids is None:
        return await uow.insert_returning_ids(_items, full)
    uow.insert_later(_items, [{"id": id_, **row} for id_, row in zip(ids, full, strict=True)])
    return list(ids)


def number_order(uow: UnitOfWork, order: Order, number: str, entry_id: int | None) -> None:
    """The order's number and journal entry, written with the unit's last statement."""
    row = {
        "company_id": order.company_id,
        "id": order.id,
        "invoice_number": number,
        "journal_entry_id": entry_id,
    }
    uow.defer(ORDER_NUMBERS, [row])
