"""Stock: locking product rows, FIFO draws from batches, receipts into new batches.

Every change to stock on hand goes through ``draw`` or ``receive``; each writes a
signed stock movement, so Σ movements = ``products.current_stock`` always.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal

from sqlalchemy import ARRAY, BigInteger, any_, bindparam, case, func, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm.attributes import set_committed_value
from sqlalchemy.orm.util import identity_key

from tillbook.deferred import DeferredInsert, DeferredUpdate, defer, write_now
from tillbook.errors import ValidationFailed
from tillbook.kit import bounds
from tillbook.kit.bounds import MONEY, PRICE, QTY
from tillbook.kit.money import ZERO, money
from tillbook.models import Product, StockAlert, StockBatch, StockMovement
from tillbook.models.base import table_of
from tillbook.rawsql import as_dict, on_postgresql, run

_LOCK_PRODUCTS = (
    select(Product)
    .where(
        Product.id.in_(bindparam("ids", expanding=True)),
        Product.warehouse_id == bindparam("w_id"),
    )
    .order_by(Product.id)
    .with_for_update()
)


@dataclass
class Draw:
    batch_id: int
    quantity: Decimal
    cost: Decimal


@dataclass
class Allocation:
    product_id: int
    quantity: Decimal
    cost: Decimal = ZERO
    draws: list[Draw] = field(default_factory=list)
    shortfall: Decimal = ZERO


_product_rows = table_of(Product)
# The same lock read as rows, the ids as one array on PostgreSQL (``rawsql``).
_LOCK_PRODUCT_ROWS = (
    select(*_product_rows.c)
    .where(
        _product_rows.c.id == any_(bindparam("ids", type_=ARRAY(BigInteger))),
        _product_rows.c.warehouse_id == bindparam("w_id"),
    )
    .order_by(_product_rows.c.id)
    .with_for_update()
)


async def lock_products(
    session: AsyncSession, warehouse_id: int, product_ids: Iterable[int], *, attach: bool = True
) -> dict[int, Product]:
    """Products of this warehouse, locked in id order (no oversell, no deadlock).

    ``attach=False`` (a sale): the rows as detached ``Product`` values, a third of
    the CPU of an ORM load. A sale changes products only through statements
    (``draw_many``'s level update); a purchase or an adjustment changes the loaded
    objects and lets the unit of work write them, so it needs them attached."""
    ids = sorted(set(product_ids))
    if not ids:
        return {}
    params = {"ids": ids, "w_id": warehouse_id}
    if not attach and on_postgresql(session):
        rows = await run(session, _LOCK_PRODUCT_ROWS, params)
        return {row["id"]: Product(**as_dict(row)) for row in rows}
    found = (await session.execute(_LOCK_PRODUCTS, params)).scalars()
    return {p.id: p for p in found}


def check_shortages(
    products: dict[int, Product],
    needed: dict[int, Decimal],
    *,
    allow_negative: bool,
    field_of: dict[int, str],
) -> None:
    """All shortages of a request at once, as one 422 naming each product.

    Where negative stock is allowed, what the draw will write instead: the stock
    after it and the cost of the deficit layer (the units below zero at
    purchase_price) must be values the books hold (``kit/bounds.py``)."""
    errors: dict[str, list[str]] = {}
    for product_id, qty in sorted(needed.items()):
        product = products[product_id]
        if not allow_negative:
            if qty > product.current_stock:
                errors[field_of[product_id]] = [
                    f"insufficient stock for {product.name!r} ({product.item_code}): "
                    f"requested {_q(qty)}, available {_q(product.current_stock)}"
                ]
            continue
        below_zero = qty - max(product.current_stock, ZERO)
        problem = bounds.exceeds(
            product.current_stock - qty, QTY, f"the stock of {product.name!r} after this"
        ) or bounds.exceeds(
            below_zero * product.purchase_price,
            MONEY,
            f"the cost of the {_q(below_zero)} units of {product.name!r} taken below zero",
        )
        if problem is not None:
            errors[field_of[product_id]] = [problem]
    if errors:
        raise ValidationFailed(errors)


def _q(value: Decimal) -> str:
    return format(value.normalize(), "f")


async def draw(
    session: AsyncSession,
    product: Product,
    quantity: Decimal,
    *,
    reason: str,
    source_type: str,
    source_id: int | None,
    allow_negative: bool,
    today: dt.date | None = None,
) -> Allocation:
    """Take ``quantity`` base units out by FIFO (oldest first, expired last).

    Costs are rounded per draw; a draw that empties a batch takes exactly the
    value the batch still carries, so layers and GL 11700 agree to the cent.
    A shortfall (only when negative stock is allowed) is costed at the product's
    purchase_price in a deficit layer with negative quantity and value, and
    raises a stock-discrepancy alert.
    """
    allocations = await draw_many(
        session,
        [(product, quantity)],
        reason=reason,
        source_type=source_type,
        source_id=source_id,
        allow_negative=allow_negative,
        today=today,
    )
    return allocations[0]


_batches = table_of(StockBatch)
_products = table_of(Product)
_expired_last = case(
    (_batches.c.expiry_date.is_not(None) & (_batches.c.expiry_date < bindparam("today")), 1),
    else_=0,
)
# The hot path of every sale: statements built once, run on tables (no unit of work).
_OPEN_BATCH_COLUMNS = (
    _batches.c.id,
    _batches.c.product_id,
    _batches.c.unit_cost,
    _batches.c.quantity_remaining,
    _batches.c.value_remaining,
)
_BATCH_ORDER = (_batches.c.product_id, _expired_last, _batches.c.id)
OPEN_BATCHES = (
    select(*_OPEN_BATCH_COLUMNS)
    .where(
        _batches.c.product_id.in_(bindparam("ids", expanding=True)),
        _batches.c.quantity_remaining > 0,
    )
    .order_by(*_BATCH_ORDER)
)
# The same on PostgreSQL with the ids as one array: one prepared statement on the
# asyncpg connection whatever the number of products (``rawsql``).
_OPEN_BATCHES_PG = (
    select(*_OPEN_BATCH_COLUMNS)
    .where(
        _batches.c.product_id == any_(bindparam("ids", type_=ARRAY(BigInteger))),
        _batches.c.quantity_remaining > 0,
    )
    .order_by(*_BATCH_ORDER)
)
# A draw's new stock levels, sent in one round trip (a later draw of the same unit
# reads the batches again, so they cannot wait for the COMMIT).
STOCK_LEVELS = DeferredUpdate(
    _products, ["id"], [], increments=["current_stock"], also={"updated_at": func.now()}
)
BATCH_LEVELS = DeferredUpdate(_batches, ["id"], ["quantity_remaining", "value_remaining"])
# Nothing reads a unit's own movements back: they go out with its COMMIT.
MOVEMENTS = DeferredInsert(
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


@dataclass
class _Layer:
    id: int
    unit_cost: Decimal
    quantity: Decimal
    value: Decimal
    drawn: bool = False


async def draw_many(
    session: AsyncSession,
    takes: Sequence[tuple[Product, Decimal]],
    *,
    reason: str,
    source_type: str,
    source_id: int | None,
    allow_negative: bool,
    today: dt.date | None = None,
) -> list[Allocation]:
    """``draw`` for several lines of one operation, in order, with the same result as
    one ``draw`` after the other (a product named twice draws twice), in four round
    trips instead of several per line: one SELECT of every open batch of the
    products, one UPDATE of the products and one of the batches (each executemany),
    one insert of the movements.

    The products must be locked (``lock_products``): the batches read here are then
    the ones written back. The products' ``current_stock`` is moved by an UPDATE of
    the table and mirrored on the loaded objects without marking them dirty.
    """
    today = today or dt.date.today()
    ids = sorted({product.id for product, _ in takes})
    open_batches: dict[int, list[_Layer]] = {}
    if ids:
        rows = await run(
            session, _OPEN_BATCHES_PG, {"ids": ids, "today": today}, elsewhere=OPEN_BATCHES
        )
        for b_id, product_id, unit_cost, quantity, value in rows:
            open_batches.setdefault(product_id, []).append(_Layer(b_id, unit_cost, quantity, value))
    allocations: list[Allocation] = []
    movements: list[dict[str, object]] = []
    moved: dict[int, Decimal] = {}
    for product, quantity in takes:
        alloc = Allocation(product_id=product.id, quantity=quantity)
        left = quantity
        for layer in open_batches.get(product.id, []):
            if left <= 0:
                break
            if layer.quantity <= 0:  # emptied by an earlier line
                continue
            take = min(left, layer.quantity)
            if take == layer.quantity:
                cost = layer.value
            else:
                cost = min(money(take * layer.unit_cost), layer.value)
            layer.quantity -= take
            layer.value -= cost
            layer.drawn = True
            alloc.draws.append(Draw(layer.id, take, cost))
            alloc.cost += cost
            left -= take
            movements.append(
                _movement(product, layer.id, -take, -cost, reason, source_type, source_id)
            )
        if left > 0:
            if not allow_negative:
                raise ValidationFailed(
                    {
                        f"product {product.id}": [
                            f"insufficient stock for {product.name!r}: requested "
                            f"{_q(quantity)}, available {_q(quantity - left)}"
                        ]
                    }
                )
            cost = money(left * product.purchase_price)
            deficit = StockBatch(
                company_id=product.company_id,
                warehouse_id=product.warehouse_id,
                product_id=product.id,
                unit_cost=product.purchase_price,
                quantity_received=ZERO,
                quantity_remaining=-left,
                value_remaining=-cost,
                source_type="deficit",
                source_id=source_id,
            )
            session.add(deficit)
            await session.flush()
            alloc.draws.append(Draw(deficit.id, left, cost))
            alloc.cost += cost
            alloc.shortfall = left
            movements.append(
                _movement(product, deficit.id, -left, -cost, reason, source_type, source_id)
            )
        set_committed_value(product, "current_stock", product.current_stock - quantity)
        moved[product.id] = moved.get(product.id, ZERO) - quantity
        if alloc.shortfall:
            session.add(
                StockAlert(
                    company_id=product.company_id,
                    warehouse_id=product.warehouse_id,
                    product_id=product.id,
                    kind="discrepancy",
                    quantity_short=alloc.shortfall,
                    stock_after=product.current_stock,
                    source_type=source_type,
                    source_id=source_id,
                )
            )
        allocations.append(alloc)
    drawn = [layer for layers in open_batches.values() for layer in layers if layer.drawn]
    await write_now(
        session,
        (STOCK_LEVELS, [{"id": pid, "current_stock": delta} for pid, delta in moved.items()]),
        (
            BATCH_LEVELS,
            [
                {
                    "id": layer.id,
                    "quantity_remaining": layer.quantity,
                    "value_remaining": layer.value,
                }
                for layer in drawn
            ],
        ),
    )
    _mirror_batches(session, drawn)
    defer(session, MOVEMENTS, movements)
    return allocations


def _levels(layer: _Layer) -> dict[str, object]:
    return {"id": layer.id, "quantity_remaining": layer.quantity, "value_remaining": layer.value}


def _mirror_batches(session: AsyncSession, layers: list[_Layer]) -> None:
    """Batches this transaction also holds as objects (rare: a receipt earlier in the
    same unit) get the written values, so no later read sees them stale."""
    for layer in layers:
        batch = session.identity_map.get(identity_key(StockBatch, layer.id))
        if isinstance(batch, StockBatch):
            set_committed_value(batch, "quantity_remaining", layer.quantity)
            set_committed_value(batch, "value_remaining", layer.value)


@dataclass
class Receipt:
    batch_id: int
    value: Decimal
    # Cost difference from filling deficit layers (sold below zero at purchase_price):
    # positive means the units cost more than they were booked at. Post it with
    # the ``deficit_settlement`` rule.
    deficit_variance: Decimal = ZERO


async def receive(
    session: AsyncSession,
    product: Product,
    quantity: Decimal,
    *,
    unit_cost: Decimal,
    value: Decimal,
    reason: str,
    source_type: str,
    source_id: int | None,
    field: str,
    batch_number: str | None = None,
    expiry_date: dt.date | None = None,
) -> Receipt:
    """Put ``quantity`` base units in as a new batch carrying ``value`` (to the cent).

    The batch and the stock after the receipt must be values the books hold
    (``kit/bounds.py``); one that is not is a 422 naming ``field``, the request field
    that brought the units in. The product is locked, so the stock checked is the
    stock written."""
    for value_, kind, what in (
        (product.current_stock + quantity, QTY, f"the stock of {product.name!r} after this"),
        (unit_cost, PRICE, f"the unit cost of {product.name!r} in this batch"),
        (value, MONEY, f"the value of this batch of {product.name!r}"),
    ):
        bounds.check(field, value_, kind, what)
    batch = StockBatch(
        company_id=product.company_id,
        warehouse_id=product.warehouse_id,
        product_id=product.id,
        batch_number=batch_number,
        expiry_date=expiry_date,
        unit_cost=unit_cost,
        quantity_received=quantity,
        quantity_remaining=quantity,
        value_remaining=value,
        source_type=source_type,
        source_id=source_id,
    )
    session.add(batch)
    await session.flush()
    receipt = Receipt(batch_id=batch.id, value=value)
    if product.current_stock < 0:
        receipt.deficit_variance = await _fill_deficits(session, product, batch)
    product.current_stock += quantity
    await session.flush()
    defer(
        session,
        MOVEMENTS,
        [_movement(product, batch.id, quantity, value, reason, source_type, source_id)],
    )
    return receipt


async def _fill_deficits(session: AsyncSession, product: Product, batch: StockBatch) -> Decimal:
    deficits = (
        await session.execute(
            select(StockBatch)
            .where(StockBatch.product_id == product.id, StockBatch.quantity_remaining < 0)
            .order_by(StockBatch.id)
        )
    ).scalars()
    variance = ZERO
    for deficit in deficits:
        if batch.quantity_remaining <= 0:
            break
        fill = min(batch.quantity_remaining, -deficit.quantity_remaining)
        booked = (
            -deficit.value_remaining
            if fill == -deficit.quantity_remaining
            else money(fill * deficit.unit_cost)
        )
        actual = (
            batch.value_remaining
            if fill == batch.quantity_remaining
            else money(fill * batch.unit_cost)
        )
        deficit.quantity_remaining += fill
        deficit.value_remaining += booked
        batch.quantity_remaining -= fill
        batch.value_remaining -= actual
        variance += actual - booked
    return variance


def _movement(
    product: Product,
    batch_id: int | None,
    quantity: Decimal,
    cost: Decimal,
    reason: str,
    source_type: str,
    source_id: int | None,
) -> dict[str, object]:
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
