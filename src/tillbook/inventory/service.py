"""Stock rules: planning FIFO draws, writing them back, receiving new layers.

Every change to stock on hand goes through ``take`` (after ``plan``) or
``receive``; each writes a signed stock movement, so Σ movements =
``listings.current_stock`` always. Nothing here locks: a plan is made on what the
unit read, and written back by guarded updates in the unit's last statement
(``inventory.repository``); a neighbour that changed a layer first makes the unit
run again (``tillbook.unit.PremiseGone``), so FIFO order and costs come out as if
the units had run one after another.

Negative stock (a warehouse's ``allow_negative_stock``): a shortfall is a deficit
layer (negative quantity and value, costed at the purchase price) and a
discrepancy alert; a later receipt fills deficit layers first, and the difference
between what they were booked at and what the units cost is returned for the
``deficit_settlement`` posting.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from tillbook.errors import ValidationFailed
from tillbook.events.outbox import emit
from tillbook.inventory import repository as repo
from tillbook.inventory.fifo import Allocation, ShortageList, allocate_many
from tillbook.inventory.repository import Listed
from tillbook.kit import bounds
from tillbook.kit.bounds import MONEY, PRICE, QTY
from tillbook.kit.money import ZERO, draw_cost, line_cost, number
from tillbook.unit import UnitOfWork

__all__ = [
    "Allocation",
    "Listed",
    "Receipt",
    "draw",
    "plan",
    "products",
    "receive",
    "restore",
    "take",
]


async def products(
    uow: UnitOfWork,
    company_id: int,
    warehouse_id: int,
    product_ids: Iterable[int],
    *,
    lock: bool = False,
) -> dict[int, Listed]:
    """The company's products of the warehouse by id, read without a lock (see the
    module)."""
    return await repo.products(uow, company_id, warehouse_id, product_ids, lock=lock)


# (``products`` of these ids and, on a day given, the layers ``plan`` reads, sent
# with the unit's next read)
read_ahead = repo.read_ahead


async def plan(
    uow: UnitOfWork,
    products: Mapping[int, Listed],
    takes: Sequence[tuple[int, Decimal, str]],
    *,
    allow_negative: bool,
    today: dt.date | None = None,
) -> list[Allocation]:
    """FIFO allocations for ``takes`` (product id, base quantity, the request field
    that asked), in order, on the layers as read now. Without negative stock every
    shortage of the request is one 422, each naming its field, product and the
    requested and available quantities."""
    warehouses = {(products[p].company_id, products[p].warehouse_id) for p, _, _ in takes}
    assert len(warehouses) <= 1, "one plan draws from one warehouse"
    company_id, warehouse_id = next(iter(warehouses), (0, 0))
    layers = await repo.open_layers(
        uow,
        company_id,
        warehouse_id,
        (p for p, _, _ in takes),
        today or dt.date.today(),
    )
    deficit_costs = {p: products[p].purchase_price for p, _, _ in takes} if allow_negative else None
    try:
        allocations = allocate_many(
            [(p, q) for p, q, _ in takes], layers, deficit_costs=deficit_costs
        )
    except ShortageList as short:
        field_of: dict[int, str] = {}
        for product_id, _, field in takes:
            field_of.setdefault(product_id, field)
        errors: dict[str, list[str]] = {}
        for s in short.shortages:
            product = products[s.product_id]
            errors[field_of[s.product_id]] = [
                f"insufficient stock for {product.name!r} ({product.item_code}): "
                f"requested {_q(s.requested)}, available {_q(s.available)}"
            ]
        raise ValidationFailed(errors) from None
    if allow_negative:
        _refuse_unstorable(products, takes, allocations)
    return allocations


def _refuse_unstorable(
    products: Mapping[int, Listed],
    takes: Sequence[tuple[int, Decimal, str]],
    allocations: Sequence[Allocation],
) -> None:
    """Where negative stock is allowed, what the draws will write instead: the stock
    after them and the cost of the deficit layers (the units below zero at
    purchase_price) must be values the books hold (``kit/bounds.py``)."""
    taken: dict[int, Decimal] = {}
    deficit: dict[int, Decimal] = {}
    field_of: dict[int, str] = {}
    for (product_id, quantity, field), alloc in zip(takes, allocations, strict=True):
        taken[product_id] = taken.get(product_id, ZERO) + quantity
        field_of.setdefault(product_id, field)
        deficit[product_id] = deficit.get(product_id, ZERO) + sum(
            (d.cost for d in alloc.draws if d.layer_id is None), ZERO
        )
    errors: dict[str, list[str]] = {}
    for product_id, quantity in sorted(taken.items()):
        product = products[product_id]
        problem = bounds.exceeds(
            product.current_stock - quantity, QTY, f"the stock of {product.name!r} after this"
        ) or bounds.exceeds(
            deficit[product_id], MONEY, f"the cost of the units of {product.name!r} below zero"
        )
        if problem is not None:
            errors[field_of[product_id]] = [problem]
    if errors:
        raise ValidationFailed(errors)


def _q(value: Decimal) -> str:
    return format(value.normalize(), "f")


async def take(
    uow: UnitOfWork,
    products: Mapping[int, Listed],
    allocations: Sequence[Allocation],
    *,
    reason: str,
    source_type: str,
    source_id: int | None,
    allow_negative: bool,
) -> None:
    """Write planned draws back: guarded layer draws and stock levels, movements
    and (for a shortfall) the deficit layer and its alert. ``products`` get the
    stock level the unit leaves them at, as this unit saw it."""
    draws: list[dict[str, Any]] = []
    levels: list[dict[str, Any]] = []
    movements: list[dict[str, Any]] = []
    alerts: list[dict[str, Any]] = []
    for alloc in allocations:
        product = products[alloc.product_id]
        for draw in alloc.draws:
            batch_id = draw.layer_id
            if batch_id is None:
                batch_id = await repo.insert_batch(
                    uow,
                    _batch_values(
                        product,
                        unit_cost=product.purchase_price,
                        received=ZERO,
                        remaining=-draw.quantity,
                        value=-draw.cost,
                        source_type="deficit",
                        source_id=source_id,
                    ),
                )
            else:
                draws.append(
                    {
                        "company_id": product.company_id,
                        "id": batch_id,
                        "quantity_remaining": -draw.quantity,
                        "value_remaining": -draw.cost,
                        "empties": draw.empties,
                    }
                )
            movements.append(
                repo.movement(
                    product, batch_id, -draw.quantity, -draw.cost, reason, source_type, source_id
                )
            )
        product.current_stock = product.current_stock - alloc.quantity
        levels.append(
            {
                "company_id": product.company_id,
                "id": product.listing_id,
                "current_stock": -alloc.quantity,
                "negative_ok": allow_negative,
            }
        )
        if alloc.shortfall:
            alerts.append(
                {
                    "company_id": product.company_id,
                    "warehouse_id": product.warehouse_id,
                    "product_id": product.id,
                    "kind": "discrepancy",
                    "quantity_short": alloc.shortfall,
                    "stock_after": product.current_stock,
                    "source_type": source_type,
                    "source_id": source_id,
                }
            )
    repo.write_draws(uow, draws, levels, movements, alerts)


async def restore(
    uow: UnitOfWork,
    products: Mapping[int, Listed],
    draws: Sequence[tuple[int, int | None, Decimal, Decimal]],
    *,
    reason: str,
    source_type: str,
    source_id: int | None,
) -> None:
    """Undo draws: each (product id, batch id, quantity, cost) goes back into the
    layer it left, at the cost it left with. The layer keeps its place in FIFO order
    (it is the same row), and the value it gets back is exactly what the draw took,
    so 11700 (debited the same cost by the reversing entry) stays equal to the
    layers. A deficit layer the draw made is brought back towards zero the same way."""
    restores: list[dict[str, Any]] = []
    levels: list[dict[str, Any]] = []
    movements: list[dict[str, Any]] = []
    for product_id, batch_id, quantity, cost in draws:
        product = products[product_id]
        if batch_id is not None:
            restores.append(
                {
                    "company_id": product.company_id,
                    "id": batch_id,
                    "quantity_remaining": quantity,
                    "value_remaining": cost,
                }
            )
        product.current_stock = product.current_stock + quantity
        levels.append(
            {
                "company_id": product.company_id,
                "id": product.listing_id,
                "current_stock": quantity,
                "negative_ok": True,
            }
        )
        movements.append(
            repo.movement(product, batch_id, quantity, cost, reason, source_type, source_id)
        )
    repo.write_restores(uow, restores, levels, movements)


@dataclass
class Receipt:
    batch_id: int
    value: Decimal
    # Cost difference from filling deficit layers (sold below zero at purchase_price):
    # positive means the units cost more than they were booked at. Post it with
    # the ``deficit_settlement`` rule.
    deficit_variance: Decimal = ZERO


async def receive(
    uow: UnitOfWork,
    product: Listed,
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
    new_product: bool = False,
    filled: dict[int, tuple[Decimal, Decimal]] | None = None,
) -> Receipt:
    """Put ``quantity`` base units in as a new layer carrying ``value`` (to the cent).

    Deficit layers of the product are filled first (guarded: never past zero); the
    new layer keeps what is left. ``new_product``: the listing was created in
    this unit with its stock already counted, so no level change is queued.
    ``filled``: an operation that receives one product on several lines passes the
    same dict to each call (deficit layer id -> quantity and value this unit has
    filled so far), since the fills reach the database only with its last
    statement. The batch and the stock after the receipt must be values the books
    hold (``kit/bounds.py``); one that is not is a 422 naming ``field``."""
    for value_, kind, what in (
        (product.current_stock + quantity, QTY, f"the stock of {product.name!r} after this"),
        (unit_cost, PRICE, f"the unit cost of {product.name!r} in this batch"),
        (value, MONEY, f"the value of this batch of {product.name!r}"),
    ):
        bounds.check(field, value_, kind, what)
    filled = {} if filled is None else filled
    filled_q = filled_v = variance = ZERO
    fills: list[dict[str, Any]] = []
    if product.current_stock < 0:
        for d_id, d_cost, d_qty, d_value in await repo.deficit_layers(uow, product):
            before_q, before_v = filled.get(d_id, (ZERO, ZERO))
            open_q, open_v = -d_qty - before_q, -d_value - before_v
            left = quantity - filled_q
            if left <= 0:
                break
            if open_q <= 0:
                continue
            fill = min(left, open_q)
            booked = open_v if fill == open_q else line_cost(fill, d_cost)
            actual = draw_cost(fill, left, unit_cost, value - filled_v)
            fills.append(
                {
                    "company_id": product.company_id,
                    "id": d_id,
                    "quantity_remaining": fill,
                    "value_remaining": booked,
                }
            )
            filled[d_id] = (before_q + fill, before_v + booked)
            filled_q += fill
            filled_v += actual
            variance += actual - booked
    batch_id = await repo.insert_batch(
        uow,
        _batch_values(
            product,
            unit_cost=unit_cost,
            received=quantity,
            remaining=quantity - filled_q,
            value=value - filled_v,
            source_type=source_type,
            source_id=source_id,
            batch_number=batch_number,
            expiry_date=expiry_date,
        ),
    )
    level = None
    if not new_product:
        product.current_stock = product.current_stock + quantity
        level = {
            "company_id": product.company_id,
            "id": product.listing_id,
            "current_stock": quantity,
            "negative_ok": True,
        }
    repo.write_receipt(
        uow,
        fills,
        level,
        repo.movement(product, batch_id, quantity, value, reason, source_type, source_id),
    )
    return Receipt(batch_id=batch_id, value=value, deficit_variance=variance)


def _batch_values(
    product: Listed,
    *,
    unit_cost: Decimal,
    received: Decimal,
    remaining: Decimal,
    value: Decimal,
    source_type: str,
    source_id: int | None,
    batch_number: str | None = None,
    expiry_date: dt.date | None = None,
) -> dict[str, object]:
    return {
        "company_id": product.company_id,
        "warehouse_id": product.warehouse_id,
        "product_id": product.id,
        "batch_number": batch_number,
        "expiry_date": expiry_date,
        "unit_cost": unit_cost,
        "quantity_received": received,
        "quantity_remaining": remaining,
        "value_remaining": value,
        "source_type": source_type,
        "source_id": source_id,
    }


async def draw(
    uow: UnitOfWork,
    product: Listed,
    quantity: Decimal,
    *,
    reason: str,
    source_type: str,
    source_id: int | None,
    allow_negative: bool,
) -> Allocation:
    """``plan`` and ``take`` for one product: the FIFO draw of ``quantity`` base units."""
    products = {product.id: product}
    (allocation,) = await plan(
        uow, products, [(product.id, quantity, "quantity")], allow_negative=allow_negative
    )
    await take(
        uow,
        products,
        [allocation],
        reason=reason,
        source_type=source_type,
        source_id=source_id,
        allow_negative=allow_negative,
    )
    return allocation


def announce_shortfall(
    uow: UnitOfWork, product: Listed, shortfall: Decimal, source: Mapping[str, object]
) -> None:
    """A ``stock.discrepancy`` event for units taken below zero (negative stock
    allowed): the product, the shortfall, its stock as this unit leaves it, and
    ``source`` naming what took them (``order_id`` and ``invoice_number``, or
    ``adjustment_id``)."""
    emit(
        uow,
        company_id=product.company_id,
        warehouse_id=product.warehouse_id,
        types=["stock.discrepancy"],
        data={
            "product_id": product.id,
            "name": product.name,
            "item_code": product.item_code,
            "quantity_short": number(shortfall),
            "current_stock": number(product.current_stock),
            **source,
        },
    )
