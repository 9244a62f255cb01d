"""FIFO allocation as a pure rule: open layers and a quantity in, draws out.

No I/O here: the caller reads the open batches, hands them over as ``Layer`` values,
and writes back what the returned ``Draw``s say. Keeping the arithmetic apart lets it
be tested directly (tests/inventory/test_fifo.py) and lets the caller choose how and when to
lock and write. Rounding comes from ``kit.money`` only (DESIGN.md §3).

The rule, as the books rely on it:

- Oldest layer first (by id, ids grow with receipt time); expired layers after every
  unexpired one, so expired stock goes out only when nothing else is left.
- A draw that empties a layer takes exactly the value the layer still carries; a
  partial draw costs ``line_cost(take, unit_cost)``, never more than the layer carries
  (``kit.money.draw_cost``). Layers and the inventory account so agree to the cent.
- Stock short: without a deficit cost the allocation is refused (``Shortage``); with
  one (negative stock allowed) the remainder becomes a deficit draw, a new layer of
  negative quantity and value costed at ``line_cost(left, deficit_cost)``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from decimal import Decimal

from tillbook.kit.money import ZERO, draw_cost, line_cost

__all__ = [
    "Allocation",
    "Draw",
    "Layer",
    "Shortage",
    "ShortageList",
    "allocate",
    "allocate_many",
    "fifo_order",
]


@dataclass(frozen=True)
class Layer:
    """One open FIFO layer (a stock batch) as read from the database."""

    id: int
    unit_cost: Decimal  # 4 places
    quantity: Decimal  # remaining, > 0: deficit layers are never drawn from
    value: Decimal  # remaining, to the cent
    expired: bool = False


@dataclass(frozen=True)
class Draw:
    """Units taken out of one layer, or the deficit draw (``layer_id`` None).

    ``empties``: the draw takes all the layer had, quantity and value. A caller that
    writes the draw back conditionally uses it as the premise "the layer still holds
    exactly what was read"; a partial draw only needs "at least ``quantity`` left".
    """

    layer_id: int | None
    quantity: Decimal  # > 0, base units
    cost: Decimal  # to the cent
    empties: bool


@dataclass(frozen=True)
class Allocation:
    """The draws that make up one take of one product."""

    product_id: int
    quantity: Decimal  # asked
    draws: tuple[Draw, ...]
    cost: Decimal  # Σ draw costs
    shortfall: Decimal  # quantity of the deficit draw, 0 when none


class Shortage(Exception):
    """Not enough stock for a take, and negative stock is not allowed."""

    def __init__(self, product_id: int, requested: Decimal, available: Decimal) -> None:
        super().__init__(product_id, requested, available)
        self.product_id = product_id
        self.requested = requested
        self.available = available

    def __str__(self) -> str:
        return (
            f"insufficient stock for product {self.product_id}: "
            f"requested {_plain(self.requested)}, available {_plain(self.available)}"
        )


class ShortageList(Exception):
    """Every shortage of an operation at once (one per product), so the client hears
    about all of them in one answer instead of one per attempt."""

    def __init__(self, shortages: Sequence[Shortage]) -> None:
        self.shortages = list(shortages)
        super().__init__(self.shortages)

    def __str__(self) -> str:
        return "; ".join(str(shortage) for shortage in self.shortages)


def fifo_order(layers: Iterable[Layer]) -> list[Layer]:
    """Oldest first (by id), expired layers after all unexpired ones."""
    return sorted(layers, key=lambda layer: (layer.expired, layer.id))


def allocate(
    product_id: int,
    layers: Sequence[Layer],
    quantity: Decimal,
    *,
    deficit_cost: Decimal | None,
) -> tuple[Allocation, list[Layer]]:
    """Draw ``quantity`` from ``layers`` (any order in; ``fifo_order`` applied).

    Returns the allocation and the layers left after it, in FIFO order: emptied
    layers dropped, a partially drawn one with its quantity and value reduced, so a
    second line of the same product in one operation draws from what the first left.

    ``deficit_cost`` None: a shortage raises ``Shortage`` and nothing is drawn. Else
    the remainder is a deficit draw costed at ``line_cost(left, deficit_cost)``.
    Raises ``ValueError`` for a quantity that is not positive, a layer that holds
    nothing, or two layers with one id: each is a caller's mistake, not a shortage.
    """
    if quantity <= 0:
        raise ValueError(f"product {product_id}: a draw needs a positive quantity, not {quantity}")
    ordered = fifo_order(layers)
    _check_layers(product_id, ordered)
    available = _on_hand(ordered)
    if deficit_cost is None and quantity > available:
        raise Shortage(product_id, quantity, available)
    draws: list[Draw] = []
    remaining: list[Layer] = []
    left = quantity
    for layer in ordered:
        if left == 0:
            remaining.append(layer)
            continue
        take = min(left, layer.quantity)
        cost = draw_cost(take, layer.quantity, layer.unit_cost, layer.value)
        empties = take == layer.quantity
        draws.append(Draw(layer.id, take, cost, empties))
        if not empties:
            remaining.append(
                replace(layer, quantity=layer.quantity - take, value=layer.value - cost)
            )
        left -= take
    shortfall = ZERO
    if left > 0:
        assert deficit_cost is not None  # the shortage check above refused it otherwise
        draws.append(Draw(None, left, line_cost(left, deficit_cost), False))
        shortfall = left
    allocation = Allocation(
        product_id=product_id,
        quantity=quantity,
        draws=tuple(draws),
        cost=sum((draw.cost for draw in draws), ZERO),
        shortfall=shortfall,
    )
    return allocation, remaining


def allocate_many(
    takes: Sequence[tuple[int, Decimal]],
    layers: Mapping[int, Sequence[Layer]],
    *,
    deficit_costs: Mapping[int, Decimal] | None,
) -> list[Allocation]:
    """One allocation per take, in order; a product named twice draws twice, the
    second time from what the first left (as ``allocate`` after ``allocate``).

    ``layers``: the open layers by product id; a product absent has none.
    ``deficit_costs`` None: negative stock is not allowed; every product whose takes
    together ask more than its layers hold is collected, in the order the takes first
    name them, and all are raised together as ``ShortageList`` before anything is
    drawn. Else it must name every product taken (``ValueError`` otherwise, checked
    before drawing, whether or not the product turns out short).
    """
    for product_id, quantity in takes:
        if quantity <= 0:
            raise ValueError(
                f"product {product_id}: a draw needs a positive quantity, not {quantity}"
            )
    if deficit_costs is None:
        _refuse_shortages(takes, layers)
    else:
        missing = sorted({product_id for product_id, _ in takes} - deficit_costs.keys())
        if missing:
            raise ValueError(f"no deficit cost for products {missing}")
    left: dict[int, Sequence[Layer]] = {}
    allocations: list[Allocation] = []
    for product_id, quantity in takes:
        on_hand = left[product_id] if product_id in left else layers.get(product_id, ())
        allocation, left[product_id] = allocate(
            product_id,
            on_hand,
            quantity,
            deficit_cost=None if deficit_costs is None else deficit_costs[product_id],
        )
        allocations.append(allocation)
    return allocations


def _refuse_shortages(
    takes: Sequence[tuple[int, Decimal]], layers: Mapping[int, Sequence[Layer]]
) -> None:
    requested: dict[int, Decimal] = {}
    for product_id, quantity in takes:
        requested[product_id] = requested.get(product_id, Decimal(0)) + quantity
    shortages: list[Shortage] = []
    for product_id, asked in requested.items():
        available = _on_hand(layers.get(product_id, ()))
        if asked > available:
            shortages.append(Shortage(product_id, asked, available))
    if shortages:
        raise ShortageList(shortages)


def _check_layers(product_id: int, layers: Sequence[Layer]) -> None:
    seen: set[int] = set()
    for layer in layers:
        if layer.quantity <= 0:
            raise ValueError(
                f"product {product_id}: layer {layer.id} holds {layer.quantity}, "
                "only open layers (quantity > 0) can be drawn from"
            )
        if layer.id in seen:
            raise ValueError(f"product {product_id}: layer {layer.id} given twice")
        seen.add(layer.id)


def _on_hand(layers: Iterable[Layer]) -> Decimal:
    return sum((layer.quantity for layer in layers), Decimal(0))


def _plain(value: Decimal) -> str:
    return format(value.normalize(), "f")
