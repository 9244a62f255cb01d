"""Stock SQL: listings (a product's stock row in a warehouse), FIFO layers (stock
batches), movements.

Statements are built once at import. Reads take no lock: what a write changes goes
in the unit's last statement as guarded, commutative updates (``tillbook.unit``),
so the rows every till of a shop touches are locked only from that statement to
COMMIT.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
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
from tillbook.models import (
    Listing,
    Product,
    StockAdjustment,
    StockAlert,
    StockBatch,
    StockMovement,
)
from tillbook.models.base import table_of
from tillbook.unit import QueuedInsert, QueuedUpdate, UnitOfWork

_products = table_of(Product)
_listings = table_of(Listing)
_batches = table_of(StockBatch)


@dataclass
class Listed:
    """A product as one warehouse lists it: the company-wide product's fields with
    this warehouse's prices and stock. A value read by a unit of work (never an ORM
    object attached to a session); ``current_stock`` is what this unit leaves it at.
    ``id`` is the product's id, ``listing_id`` the row whose stock a write moves."""

    id: int
    listing_id: int
    company_id: int
    warehouse_id: int
    name: str
    slug: str
    item_code: str
    barcode: str | None
    product_type: str
    category_id: int | None
    brand_id: int | None
    unit_id: int | None
    tax_id: int | None
    description: str
    sales_price: Decimal
    purchase_price: Decimal
    mrp: Decimal | None
    current_stock: Decimal
    reorder_level: Decimal
    # Archived products and inactive listings are not sold or bought any more.
    available: bool
    # When the product was archived: a sale rung up before then (an offline till's
    # queue) is still taken (``orders.intake``).
    archived_at: dt.datetime | None = None
    listing_active: bool = True


def _listed_rows(*, pg: bool, lock: bool) -> Any:
    ids = (
        _products.c.id == any_(bindparam("ids", type_=ARRAY(BigInteger)))
        if pg
        else _products.c.id.in_(bindparam("ids", expanding=True))
    )
    p, li = _products.c, _listings.c
    statement = (
        select(
            p.id,
            li.id.label("listing_id"),
            p.company_id,
            li.warehouse_id,
            p.name,
            p.slug,
            p.item_code,
            p.barcode,
            p.product_type,
            p.category_id,
            p.brand_id,
            p.unit_id,
            p.tax_id,
            p.description,
            li.sales_price,
            li.purchase_price,
            li.mrp,
            li.current_stock,
            li.reorder_level,
            and_(p.archived_at.is_(None), li.active).label("available"),
            p.archived_at,
            li.active.label("listing_active"),
        )
        .join(_listings, (li.product_id == p.id) & (li.company_id == p.company_id))
        .where(ids, p.company_id == bindparam("c_id"), li.warehouse_id == bindparam("w_id"))
        .order_by(p.id)
    )
    return statement.with_for_update(of=_listings) if lock else statement


# PostgreSQL takes the ids as one array (one prepared statement whatever their
# number); SQLite an IN list.
_LISTED = {
    (pg, lock): _listed_rows(pg=pg, lock=lock) for pg in (True, False) for lock in (True, False)
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
        .where(
            ids,
            _batches.c.company_id == bindparam("c_id"),
            _batches.c.warehouse_id == bindparam("w_id"),
            _batches.c.quantity_remaining > 0,
        )
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
    .where(
        _batches.c.company_id == bindparam("c_id"),
        _batches.c.product_id == bindparam("product_id"),
        _batches.c.warehouse_id == bindparam("w_id"),
        _batches.c.quantity_remaining < 0,
    )
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


# A listing's stock moves by a delta; unless the warehouse allows negative stock
# (``negative_ok``) the premise is that it does not go below zero. Its change time
# moves (a till's feed serves it again); its edit time, which is indexed, is named
# as it is so that the column's ``onupdate`` does not move it: the update stays HOT,
# and the feed finds the stock that moved by the movements (``catalog.changes``).
STOCK_LEVELS = QueuedUpdate(
    _listings,
    ["id"],
    increments=["current_stock"],
    also={"updated_at": func.now(), "edited_at": _listings.c.edited_at},
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
# Units put back into the layers they were drawn from (a voided sale): positive
# increments, commutative, so unguarded; a neighbour's draw planned on the layer as
# it was still meets its own premise or runs again.
LAYER_RESTORES = QueuedUpdate(
    _batches, ["id"], increments=["quantity_remaining", "value_remaining"]
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


def _by_ids(
    company_id: int, warehouse_id: int, product_ids: Iterable[int], **more: Any
) -> dict[str, Any] | None:
    """The values of a read of the warehouse's products by id (``_LISTED``,
    ``_OPEN_BATCHES``), the same for the read and for the read sent ahead; None
    for no products."""
    ids = sorted(set(product_ids))
    if not ids:
        return None
    return {"ids": ids, "c_id": company_id, "w_id": warehouse_id, **more}


def read_ahead(
    uow: UnitOfWork,
    company_id: int,
    warehouse_id: int,
    product_ids: Iterable[int],
    *,
    layers_on: dt.date | None = None,
) -> None:
    """Send ``products`` (unlocked) of these ids, and with ``layers_on`` their
    ``open_layers`` on that day, with the unit's next read (``UnitOfWork.read_ahead``):
    the layers only while nothing the unit waits for decides what its plan may read
    (a sale on its first run; a run again reads its layers after taking its number,
    ``orders.numbering``)."""
    params = _by_ids(company_id, warehouse_id, product_ids)
    if params is None:
        return
    uow.read_ahead(_LISTED[(uow.is_postgresql, False)], params)
    if layers_on is not None:
        uow.read_ahead(_OPEN_BATCHES[uow.is_postgresql], {**params, "today": layers_on})


async def products(
    uow: UnitOfWork,
    company_id: int,
    warehouse_id: int,
    product_ids: Iterable[int],
    *,
    lock: bool = False,
) -> dict[int, Listed]:
    """Products listed in this warehouse, by product id (a product not listed there
    is absent, like one that does not exist). ``lock``: ``FOR UPDATE`` of the
    listings in id order, for the cold paths that change the listing itself (a
    price change)."""
    params = _by_ids(company_id, warehouse_id, product_ids)
    if params is None:
        return {}
    rows = await uow.run(_LISTED[(uow.is_postgresql, lock)], params)
    out: dict[int, Listed] = {}
    for row in rows:
        values = row.as_dict()
        values["available"] = bool(values["available"])
        values["listing_active"] = bool(values["listing_active"])
        out[row["id"]] = Listed(**values)
    return out


async def open_layers(
    uow: UnitOfWork, company_id: int, warehouse_id: int, product_ids: Iterable[int], today: dt.date
) -> dict[int, list[Layer]]:
    """Every open FIFO layer of the products in the warehouse, by product."""
    out: dict[int, list[Layer]] = {}
    params = _by_ids(company_id, warehouse_id, product_ids, today=today)
    if params is None:
        return out
    rows = await uow.run(_OPEN_BATCHES[uow.is_postgresql], params)
    for b_id, product_id, unit_cost, quantity, value, expired in rows:
        out.setdefault(product_id, []).append(
            Layer(b_id, unit_cost, quantity, value, expired=bool(expired))
        )
    return out


async def deficit_layers(
    uow: UnitOfWork, product: Listed
) -> list[tuple[int, Decimal, Decimal, Decimal]]:
    """(id, unit cost, quantity, value) of the listing's deficit layers, oldest first."""
    params = {"c_id": product.company_id, "product_id": product.id, "w_id": product.warehouse_id}
    rows = await uow.run(_DEFICITS, params)
    return [(r[0], r[1], r[2], r[3]) for r in rows]


async def insert_batch(uow: UnitOfWork, values: Mapping[str, Any]) -> int:
    rows = await uow.run(_INSERT_BATCH, dict(values))
    return int(rows[0][0])


def movement(
    product: Listed,
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


def write_restores(
    uow: UnitOfWork,
    restores: list[dict[str, Any]],
    levels: list[dict[str, Any]],
    movements: list[dict[str, Any]],
) -> None:
    """Units going back into their layers, the stock levels and the movements, with
    the unit's last statement."""
    uow.defer(LAYER_RESTORES, restores)
    uow.defer(STOCK_LEVELS, levels)
    uow.defer(MOVEMENTS, movements)


_ADJUSTMENT_ENTRY = QueuedUpdate(table_of(StockAdjustment), ["id"], ["journal_entry_id"])


def link_adjustment_entry(
    uow: UnitOfWork, company_id: int, adjustment_id: int, entry_id: int | None
) -> None:
    """An adjustment's journal entry, written with the unit's last statement (set on
    the adjustment object instead, it would be flushed after that statement, while
    the stock rows are locked)."""
    row = {"company_id": company_id, "id": adjustment_id, "journal_entry_id": entry_id}
    uow.defer(_ADJUSTMENT_ENTRY, [row])
