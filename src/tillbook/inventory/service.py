"""Stock: locking product rows, FIFO draws from batches, receipts into new batches.

Every change to stock on hand goes through ``draw`` or ``receive``; each writes a
signed stock movement, so Σ movements = ``products.current_stock`` always.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal

from sqlalchemy import case, insert, select
from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.errors import ValidationFailed
from tillbook.kit.money import ZERO, money
from tillbook.models import Product, StockAlert, StockBatch, StockMovement


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


async def lock_products(
    session: AsyncSession, warehouse_id: int, product_ids: Iterable[int]
) -> dict[int, Product]:
    """Products of this warehouse, locked in id order (no oversell, no deadlock)."""
    ids = sorted(set(product_ids))
    if not ids:
        return {}
    rows = (
        await session.execute(
            select(Product)
            .where(Product.id.in_(ids), Product.warehouse_id == warehouse_id)
            .order_by(Product.id)
            .with_for_update()
        )
    ).scalars()
    return {p.id: p for p in rows}


def check_shortages(
    products: dict[int, Product],
    needed: dict[int, Decimal],
    *,
    allow_negative: bool,
    field_of: dict[int, str],
) -> None:
    """All shortages of a request at once, as one 422 naming each product."""
    if allow_negative:
        return
    errors: dict[str, list[str]] = {}
    for product_id, qty in sorted(needed.items()):
        product = products[product_id]
        if qty > product.current_stock:
            errors[field_of[product_id]] = [
                f"insufficient stock for {product.name!r} ({product.item_code}): "
                f"requested {_q(qty)}, available {_q(product.current_stock)}"
            ]
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
    one ``draw`` after the other (a product named twice draws twice), in three round
    trips instead of three per line: one SELECT of every open batch of the products,
    one flush, one insert of the movements."""
    today = today or dt.date.today()
    ids = sorted({product.id for product, _ in takes})
    open_batches: dict[int, list[StockBatch]] = {}
    if ids:
        rows = (
            await session.execute(
                select(StockBatch)
                .where(StockBatch.product_id.in_(ids), StockBatch.quantity_remaining > 0)
                .order_by(
                    StockBatch.product_id,
                    case(
                        (
                            StockBatch.expiry_date.is_not(None) & (StockBatch.expiry_date < today),
                            1,
                        ),
                        else_=0,
                    ),
                    StockBatch.id,
                )
            )
        ).scalars()
        for batch in rows:
            open_batches.setdefault(batch.product_id, []).append(batch)
    allocations: list[Allocation] = []
    movements: list[dict[str, object]] = []
    for product, quantity in takes:
        alloc = Allocation(product_id=product.id, quantity=quantity)
        left = quantity
        for batch in open_batches.get(product.id, []):
            if left <= 0:
                break
            if batch.quantity_remaining <= 0:  # emptied by an earlier line
                continue
            take = min(left, batch.quantity_remaining)
            if take == batch.quantity_remaining:
                cost = batch.value_remaining
            else:
                cost = min(money(take * batch.unit_cost), batch.value_remaining)
            batch.quantity_remaining -= take
            batch.value_remaining -= cost
            alloc.draws.append(Draw(batch.id, take, cost))
            alloc.cost += cost
            left -= take
            movements.append(
                _movement(product, batch.id, -take, -cost, reason, source_type, source_id)
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
        product.current_stock -= quantity
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
    await session.flush()
    if movements:
        await session.execute(insert(StockMovement), movements)
    return allocations


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
    batch_number: str | None = None,
    expiry_date: dt.date | None = None,
) -> Receipt:
    """Put ``quantity`` base units in as a new batch carrying ``value`` (to the cent)."""
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
    await session.execute(
        insert(StockMovement),
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
