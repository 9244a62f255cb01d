"""Stock SQL: products' stock rows, FIFO layers (stock batches), movements.

Statements are built once at import. Reads take no lock: what a write changes goes
in the unit's last statement as guarded, commutative updates (``tillbook.unit``),
so the rows every till of a shop touches are locked only from that statement to
COMMIT.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import Any

from sqlalchemy import (
    ARRAY,
    BigInteger,
    Boolean,
    Table,
    and_,
    any_,
    bindparam,
    case,
    func,
    insert,
    or_,
    select,
)

from tillbook.inventory.fifo import Layer
from tillbook.models import Product, StockAdjustment, StockAlert, StockBatch, StockMovement
from tillbook.models.base import table_of
from tillbook.unit import QueuedInsert, QueuedUpdate, UnitOfWork

_products = table_of(Product)
_batches = table_of(StockBatch)


def _product_rows(*, pg: bool, lock: bool) -> Any:
    ids = (
        _products.c.id == any_(bindparam("ids", type_=ARRAY(BigInteger)))
        if pg
        else _products.c.id.in_(bindparam("ids", expanding=True))
    )
    statement = (
        select(*_products.c)
        .where(ids, _products.c.warehouse_id == bindparam("w_id"))
        .order_by(_products.c.id)
    )
    return statement.with_for_update() if lock else statement


# PostgreSQL takes the ids as one array (one prepared statement whatever their
# number); SQLite an IN list.
_PRODUCTS = {
    (pg, lock): _product_rows(pg=pg, lock=lock) for pg in (True, False) for lock in (True, False)
}

_expired = case(
    (_batches.c.expiry_date.is_not(None) & (_batches.c.expiry_date < bindparam("today")), True),
    else_=False,
)


def _open_batches(*, pg: bool) -> Any:
    ids = (
        _batches.c.product_id == any_(bindparam("ids", type_=ARRAY(BigInteger)))
        if pg
        else _batches.c.product_id.in_(bindparam("ids", expanding=True))
    )
    return (
        select(
            _batches.c.id,
            _batches.c.product_id,
            _batches.c.unit_cost,
            _batches.c.quantity_remaining,
            _batches.c.value_remaining,
            _expired.label("expired"),
        )
        .where(ids, _batches.c.quantity_remaining > 0)
        .order_by(_batches.c.product_id, _batches.c.id)
    )


_OPEN_BATCHES = {pg: _open_batches(pg=pg) for pg in (True, False)}
_DEFICITS = (
    select(
        _batches.c.id,
        _batches.c.unit_cost,
        _batches.c.quantity_remaining,
        _batches.c.value_remaining,
    )
    .where(_batches.c.product_id == bindparam("product_id"), _batches.c.quantity_remaining < 0)
    .order_by(_batches.c.id)
)
_INSERT_BATCH = insert(_batches).returning(_batches.c.id)


def _qty(value: Any) -> Any:
    """Compared at the stored scale: exact on PostgreSQL's numeric; on SQLite, which
    computes increments in binary floating point, it keeps ``3.19`` equal to
    ``3.1899999999999995``."""
    return func.round(value, 4)


def _money(value: Any) -> Any:
    return func.round(value, 2)


# A product's stock moves by a delta; unless the warehouse allows negative stock
# (``negative_ok``) the premise is that it does not go below zero.
STOCK_LEVELS = QueuedUpdate(
    _products,
    ["id"],
    increments=["current_stock"],
    also={"updated_at": func.now()},
    flags={"negative_ok": Boolean()},
    guard=lambda t, given: or_(
        given["negative_ok"], _qty(t.c.current_stock + given["current_stock"]) >= 0
    ),
)


def _draw_guard(t: Table, given: Mapping[str, Any]) -> Any:
    """A draw that empties a layer needs it to hold exactly what was read; a partial
    draw needs strictly more than it takes (so it still is not the emptying one) and
    at least its cost in value. Increments are negative: ``-given`` is the take."""
    take, cost = -given["quantity_remaining"], -given["value_remaining"]
    left, value = _qty(t.c.quantity_remaining), _money(t.c.value_remaining)
    return case(
        (given["empties"], and_(left == _qty(take), value == _money(cost))),
        else_=and_(left > _qty(take), value >= _money(cost)),
    )


# Draws out of open layers (negative increments), guarded by the plan's premise.
LAYER_DRAWS = QueuedUpdate(
    _batches,
    ["id"],
    increments=["quantity_remaining", "value_remaining"],
    flags={"empties": Boolean()},
    guard=_draw_guard,
)
# A receipt filling deficit layers (positive increments): never past zero, so two
# receipts that read the same deficit cannot both fill it.
DEFICIT_FILLS = QueuedUpdate(
    _batches,
    ["id"],
    increments=["quantity_remaining", "value_remaining"],
    guard=lambda t, given: and_(
        _qty(t.c.quantity_remaining + given["quantity_remaining"]) <= 0,
        _money(t.c.value_remaining + given["value_remaining"]) <= 0,
    ),
)
MOVEMENTS = QueuedInsert(
    table_of(StockMovement),
    [
        "company_id",
        "warehouse_id",
        "product_id",
        "batch_id",
        "quantity",
        "cost_amount",
        "reason",
        "source_type",
        "source_id",
    ],
)
ALERTS = QueuedInsert(
    table_of(StockAlert),
    [
        "company_id",
        "warehouse_id",
        "product_id",
        "kind",
        "quantity_short",
        "stock_after",
        "source_type",
        "source_id",
    ],
)


async def products(
    uow: UnitOfWork, warehouse_id: int, product_ids: Iterable[int], *, lock: bool = False
) -> dict[int, Product]:
    """Products of this warehouse by id, as values (transient ``Product`` objects,
    never added to the session). ``lock``: ``FOR UPDATE`` in id order, for the cold
    paths that change the row itself (a price change)."""
    ids = sorted(set(product_ids))
    if not ids:
        return {}
    rows = await uow.run(_PRODUCTS[(uow.is_postgresql, lock)], {"ids": ids, "w_id": warehouse_id})
    return {row["id"]: Product(**row.as_dict()) for row in rows}


async def open_layers(
    uow: UnitOfWork, product_ids: Iterable[int], today: dt.date
) -> dict[int, list[Layer]]:
    """Every open FIFO layer of the products, by product."""
    ids = sorted(set(product_ids))
    out: dict[int, list[Layer]] = {}
    if not ids:
        return out
    rows = await uow.run(_OPEN_BATCHES[uow.is_postgresql], {"ids": ids, "today": today})
    for b_id, product_id, unit_cost, quantity, value, expired in rows:
        out.setdefault(product_id, []).append(
            Layer(b_id, unit_cost, quantity, value, expired=bool(expired))
        )
    return out


async def deficit_layers(
    uow: UnitOfWork, product_id: int
) -> list[tuple[int, Decimal, Decimal, Decimal]]:
    """(id, unit cost, quantity, value) of the product's deficit layers, oldest first."""
    rows = await uow.run(_DEFICITS, {"product_id": product_id})
    return [(r[0], r[1], r[2], r[3]) for r in rows]


async def insert_batch(uow: UnitOfWork, values: Mapping[str, Any]) -> int:
    rows = await uow.run(_INSERT_BATCH, dict(values))
    return int(rows[0][0])


def movement(
    product: Product,
    batch_id: int | None,
    quantity: Decimal,
    cost: Decimal,
    reason: str,
    source_type: str,
    source_id: int | None,
) -> dict[str, Any]:
    return {
        "company_id": product.company_id,
        "warehouse_id": product.warehouse_id,
        "product_id": product.id,
        "batch_id": batch_id,
        "quantity": quantity,
        "cost_amount": cost,
        "reason": reason,
        "source_type": source_type,
        "source_id": source_id,
    }


def write_draws(
    uow: UnitOfWork,
    draws: list[dict[str, Any]],
    levels: list[dict[str, Any]],
    movements: list[dict[str, Any]],
    alerts: list[dict[str, Any]],
) -> None:
    """Planned draws, stock levels, movements and alerts, with the unit's last
    statement (the draws and levels guarded)."""
    uow.defer(LAYER_DRAWS, draws)
    uow.defer(STOCK_LEVELS, levels)
    uow.defer(MOVEMENTS, movements)
    uow.defer(ALERTS, alerts)


def write_receipt(
    uow: UnitOfWork,
    fills: list[dict[str, Any]],
    level: dict[str, Any] | None,
    movement: dict[str, Any],
) -> None:
    """A receipt's deficit fills (guarded), stock level and movement, with the unit's
    last statement."""
    uow.defer(DEFICIT_FILLS, fills)
    if level is not None:
        uow.defer(STOCK_LEVELS, [level])
    uow.defer(MOVEMENTS, [movement])


_ADJUSTMENT_ENTRY = QueuedUpdate(table_of(StockAdjustment), ["id"], ["journal_entry_id"])


def link_adjustment_entry(uow: UnitOfWork, adjustment_id: int, entry_id: int | None) -> None:
    """An adjustment's journal entry, written with the unit's last statement (set on
    the adjustment object instead, it would be flushed after that statement, while
    the stock rows are locked)."""
    uow.defer(_ADJUSTMENT_ENTRY, [{"id": adjustment_id, "journal_entry_id": entry_id}])
