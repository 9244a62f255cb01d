"""FIFO allocation (``inventory/fifo.py``) and its rounding (``kit/money.py``), tested
directly: pure functions, no database, no app.

Hypothesis draws random open layers (consistent values, values off by a few cents,
values unrelated to quantity × unit cost, expired or not, in any order) and random
takes; the properties are the ones the books rely on. Worked examples pin the
figures a reader can check by hand.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Sequence
from decimal import Decimal
from functools import partial

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tillbook.inventory.fifo import (
    Allocation,
    Draw,
    Layer,
    Shortage,
    ShortageList,
    allocate,
    allocate_many,
    fifo_order,
)
from tillbook.kit.money import ZERO, draw_cost, line_cost, money

# Pure and quick: no deadline (a loaded CI machine must not fail them), more examples.
FIFO = settings(deadline=None, max_examples=200)

D = Decimal
Q4 = Decimal("0.0001")


def _scaled(n: int) -> Decimal:
    return (Decimal(n) / 10000).quantize(Q4)


# Quantities with 4 places: whole units most of the time, fractions too.
quantities = st.one_of(
    st.integers(1, 12).map(Decimal),
    st.integers(1, 120_000).map(_scaled),
)
unit_costs = st.integers(0, 500_000).map(_scaled)
deficit_costs = unit_costs


def _cents_off(value: Decimal, cents: int) -> Decimal:
    return max(ZERO, value + cents * D("0.01"))


@st.composite
def layer_sets(draw: st.DrawFn, min_size: int = 0, max_size: int = 6) -> list[Layer]:
    """Open layers of one product, unique ids, shuffled (allocate must sort them)."""
    ids = draw(st.lists(st.integers(1, 10_000), unique=True, min_size=min_size, max_size=max_size))
    layers = []
    for layer_id in ids:
        quantity = draw(quantities)
        unit_cost = draw(unit_costs)
        # Quantity × unit cost as received, a few cents off it (earlier rounding), or
        # unrelated (value running out before quantity, or the reverse).
        value = draw(
            st.one_of(
                st.just(line_cost(quantity, unit_cost)),
                st.integers(-3, 3).map(partial(_cents_off, line_cost(quantity, unit_cost))),
                st.integers(0, 100_000).map(lambda cents: money(D(cents) / 100)),
            )
        )
        expired = draw(st.booleans())
        layers.append(Layer(layer_id, unit_cost, quantity, value, expired))
    return layers


def _on_hand(layers: Sequence[Layer]) -> Decimal:
    return sum((layer.quantity for layer in layers), D(0))


def _value(layers: Sequence[Layer]) -> Decimal:
    return sum((layer.value for layer in layers), ZERO)


def _stock_draws(allocation: Allocation) -> list[Draw]:
    return [d for d in allocation.draws if d.layer_id is not None]


Case = tuple[list[Layer], Decimal, Decimal | None]


@st.composite
def cases(draw: st.DrawFn, negative: bool | None = None) -> Case:
    """Layers, a quantity and a deficit cost that ``allocate`` accepts: without a
    deficit cost (negative stock refused) the quantity fits the layers; with one it
    fits, empties them exactly, or goes beyond. ``negative`` forces the choice."""
    allowed = draw(st.booleans()) if negative is None else negative
    deficit = draw(deficit_costs) if allowed else None
    layers = draw(layer_sets(min_size=0 if allowed else 1))
    on_hand = _on_hand(layers)
    ticks = int(on_hand / Q4)
    options = [
        st.integers(1, ticks).map(_scaled),  # anywhere across the layers
        st.integers(1, min(ticks, 20_000)).map(_scaled),  # a small take
        st.just(on_hand),  # all of it
    ]
    if allowed:
        options = (
            [*options, quantities.map(lambda extra: on_hand + extra)] if ticks else [quantities]
        )
    return layers, draw(st.one_of(options)), deficit


# ---------------------------------------------------------------- properties


@FIFO
@given(case=cases())
def test_quantity_drawn_is_quantity_asked(case: Case) -> None:
    layers, quantity, deficit = case
    allocation, left = allocate(7, layers, quantity, deficit_cost=deficit)
    assert allocation.product_id == 7
    assert allocation.quantity == quantity
    assert sum((d.quantity for d in allocation.draws), D(0)) == quantity
    assert all(d.quantity > 0 for d in allocation.draws)
    assert allocation.cost == sum((d.cost for d in allocation.draws), ZERO)
    # Stock on hand falls by exactly what was drawn from layers.
    assert _on_hand(layers) - _on_hand(left) == quantity - allocation.shortfall


@FIFO
@given(case=cases())
def test_value_drawn_is_value_removed(case: Case) -> None:
    layers, quantity, deficit = case
    allocation, left = allocate(1, layers, quantity, deficit_cost=deficit)
    drawn = sum((d.cost for d in _stock_draws(allocation)), ZERO)
    assert drawn == _value(layers) - _value(left)
    assert all(d.cost == money(d.cost) for d in allocation.draws)  # costs stay in cents


@FIFO
@given(case=cases())
def test_never_more_than_a_layer_holds(case: Case) -> None:
    layers, quantity, deficit = case
    allocation, left = allocate(1, layers, quantity, deficit_cost=deficit)
    before = {layer.id: layer for layer in layers}
    after = {layer.id: layer for layer in left}
    draws = _stock_draws(allocation)
    assert len({d.layer_id for d in draws}) == len(draws)  # one draw per layer at most
    for d in draws:
        assert d.layer_id is not None
        layer = before[d.layer_id]
        assert 0 < d.quantity <= layer.quantity
        assert d.cost <= layer.value
        assert d.cost == draw_cost(d.quantity, layer.quantity, layer.unit_cost, layer.value)
        if d.layer_id in after:
            assert after[d.layer_id].quantity == layer.quantity - d.quantity
            assert after[d.layer_id].value == layer.value - d.cost
            assert after[d.layer_id].value >= 0
    # Layers not drawn come back untouched; nothing new appears.
    drawn_ids = {d.layer_id for d in draws}
    for layer_id, layer in after.items():
        if layer_id not in drawn_ids:
            assert layer == before[layer_id]
    assert set(after) <= set(before)
    assert all(layer.quantity > 0 for layer in left)


@FIFO
@given(case=cases())
def test_oldest_first_and_expired_last(case: Case) -> None:
    layers, quantity, deficit = case
    allocation, left = allocate(1, layers, quantity, deficit_cost=deficit)
    order = [layer.id for layer in fifo_order(layers)]
    draws = _stock_draws(allocation)
    # The draws follow FIFO order from its start ...
    assert [d.layer_id for d in draws] == order[: len(draws)]
    # ... and a later layer is drawn only when every earlier one is emptied.
    assert all(d.empties for d in draws[:-1])
    # What is left is the rest, still in FIFO order.
    emptied = sum(1 for d in draws if d.empties)
    assert [layer.id for layer in left] == order[emptied:]
    # Expired stock goes out only when no unexpired stock is left.
    expired = {layer.id for layer in layers if layer.expired}
    if any(d.layer_id in expired for d in draws):
        assert all(layer.expired for layer in left)


@FIFO
@given(case=cases(), seed=st.integers())
def test_input_order_does_not_matter(case: Case, seed: int) -> None:
    layers, quantity, deficit = case
    shuffled = list(layers)
    random.Random(seed).shuffle(shuffled)
    assert allocate(1, layers, quantity, deficit_cost=deficit) == allocate(
        1, shuffled, quantity, deficit_cost=deficit
    )


@FIFO
@given(layers=layer_sets())
def test_fifo_order(layers: list[Layer]) -> None:
    ordered = fifo_order(layers)
    assert sorted(ordered, key=lambda layer: layer.id) == sorted(layers, key=lambda la: la.id)
    flags = [layer.expired for layer in ordered]
    assert flags == sorted(flags)  # every unexpired before every expired
    for group in (False, True):
        ids = [layer.id for layer in ordered if layer.expired is group]
        assert ids == sorted(ids)


@FIFO
@given(case=cases())
def test_empties_exactly_when_the_whole_layer_is_taken(case: Case) -> None:
    layers, quantity, deficit = case
    allocation, left = allocate(1, layers, quantity, deficit_cost=deficit)
    before = {layer.id: layer for layer in layers}
    left_ids = {layer.id for layer in left}
    for d in _stock_draws(allocation):
        assert d.layer_id is not None
        layer = before[d.layer_id]
        assert d.empties == (d.quantity == layer.quantity)
        assert d.empties == (d.layer_id not in left_ids)
        if d.empties:  # all it had: no cent left behind
            assert d.cost == layer.value
    assert all(not d.empties for d in allocation.draws if d.layer_id is None)


@FIFO
@given(
    layer=layer_sets(min_size=1, max_size=1).map(lambda layers: layers[0]),
    cuts=st.lists(st.integers(1, 10**9), max_size=6),
)
def test_a_layer_drawn_down_in_pieces_ends_at_value_zero(layer: Layer, cuts: list[int]) -> None:
    """However a layer is cut into takes, the takes cost exactly its value."""
    ticks = int(layer.quantity / Q4)
    marks = [0, *sorted({cut % ticks for cut in cuts} - {0}), ticks]
    layers = [layer]
    total = ZERO
    for start, end in itertools.pairwise(marks):
        on_hand = layers[0].quantity
        take = _scaled(end - start)
        allocation, layers = allocate(1, layers, take, deficit_cost=None)
        total += allocation.cost
        if layers:
            assert layers[0].quantity == on_hand - take
            assert not allocation.draws[-1].empties
        else:
            assert allocation.draws[-1].empties
    assert layers == []
    assert total == layer.value


@FIFO
@given(case=cases(negative=True))
def test_deficit_draw_only_when_negative_is_allowed_and_stock_is_short(case: Case) -> None:
    layers, quantity, deficit = case
    assert deficit is not None
    on_hand = _on_hand(layers)
    allocation, left = allocate(1, layers, quantity, deficit_cost=deficit)
    deficits = [d for d in allocation.draws if d.layer_id is None]
    if quantity <= on_hand:
        assert deficits == []
        assert allocation.shortfall == 0
        # Allowing negative stock changes nothing when stock suffices.
        assert (allocation, left) == allocate(1, layers, quantity, deficit_cost=None)
    else:
        short = quantity - on_hand
        assert deficits == [Draw(None, short, line_cost(short, deficit), False)]
        assert allocation.draws[-1] == deficits[0]  # after every layer
        assert allocation.shortfall == short
        assert left == []
        assert all(d.empties for d in _stock_draws(allocation))


@FIFO
@given(case=cases(negative=False))
def test_no_deficit_draw_when_negative_is_refused(case: Case) -> None:
    layers, quantity, _ = case
    allocation, _left = allocate(1, layers, quantity, deficit_cost=None)
    assert all(d.layer_id is not None for d in allocation.draws)
    assert allocation.shortfall == 0


@FIFO
@given(layers=layer_sets(), extra=quantities)
def test_shortage_carries_requested_and_available(layers: list[Layer], extra: Decimal) -> None:
    on_hand = _on_hand(layers)
    quantity = on_hand + extra
    with pytest.raises(Shortage) as raised:
        allocate(9, layers, quantity, deficit_cost=None)
    shortage = raised.value
    assert (shortage.product_id, shortage.requested, shortage.available) == (9, quantity, on_hand)


products = st.integers(1, 4)
Operation = tuple[dict[int, list[Layer]], list[tuple[int, Decimal]]]


@st.composite
def operations(draw: st.DrawFn) -> Operation:
    """Open layers of a few products and the takes of one operation (a product may be
    named twice): half the time all within stock, else of any product and size."""
    layers = draw(st.dictionaries(products, layer_sets(max_size=4), max_size=4))
    ticks = {product_id: int(_on_hand(on_hand) / Q4) for product_id, on_hand in layers.items()}
    takes = []
    if draw(st.booleans()):
        for _ in range(draw(st.integers(0, 8))):
            stocked = sorted(product_id for product_id, left in ticks.items() if left)
            if not stocked:
                break
            product_id = draw(st.sampled_from(stocked))
            take = draw(st.integers(1, ticks[product_id]))
            ticks[product_id] -= take
            takes.append((product_id, _scaled(take)))
    else:
        takes = draw(st.lists(st.tuples(products, quantities), min_size=1, max_size=8))
    return layers, takes


def _sequential(
    takes: Sequence[tuple[int, Decimal]],
    layers: dict[int, list[Layer]],
    deficits: dict[int, Decimal] | None,
) -> list[Allocation]:
    left = {product_id: list(on_hand) for product_id, on_hand in layers.items()}
    result = []
    for product_id, quantity in takes:
        allocation, left[product_id] = allocate(
            product_id,
            left.get(product_id, []),
            quantity,
            deficit_cost=None if deficits is None else deficits[product_id],
        )
        result.append(allocation)
    return result


@FIFO
@given(operation=operations(), costs=st.lists(deficit_costs, min_size=4, max_size=4))
def test_allocate_many_is_allocate_after_allocate_with_negative_allowed(
    operation: Operation, costs: list[Decimal]
) -> None:
    layers, takes = operation
    deficits = dict(zip(range(1, 5), costs, strict=True))
    many = allocate_many(takes, layers, deficit_costs=deficits)
    assert many == _sequential(takes, layers, deficits)
    assert [(a.product_id, a.quantity) for a in many] == takes


@FIFO
@given(operation=operations())
def test_allocate_many_without_negative(operation: Operation) -> None:
    layers, takes = operation
    asked: dict[int, Decimal] = {}
    for product_id, quantity in takes:
        asked[product_id] = asked.get(product_id, D(0)) + quantity
    short = [
        (product_id, total, _on_hand(layers.get(product_id, [])))
        for product_id, total in asked.items()
        if total > _on_hand(layers.get(product_id, []))
    ]
    if not short:
        assert allocate_many(takes, layers, deficit_costs=None) == _sequential(takes, layers, None)
        return
    # Every short product at once, as many times as it is short: once, whatever the
    # number of its lines; the sequential way stops at the first.
    with pytest.raises(ShortageList) as raised:
        allocate_many(takes, layers, deficit_costs=None)
    assert [(s.product_id, s.requested, s.available) for s in raised.value.shortages] == short
    with pytest.raises(Shortage):
        _sequential(takes, layers, None)


# ---------------------------------------------------------------- worked examples


def test_three_units_at_a_third_drawn_one_at_a_time() -> None:
    layers = [Layer(1, D("0.3333"), D(3), D("1.00"))]
    costs = []
    for _ in range(3):
        allocation, layers = allocate(1, layers, D(1), deficit_cost=None)
        costs.append(allocation.cost)
    assert costs == [D("0.33"), D("0.33"), D("0.34")]
    assert layers == []
    assert allocation.draws == (Draw(1, D(1), D("0.34"), True),)


def test_three_units_at_a_third_as_three_lines_of_one_operation() -> None:
    layers = {5: [Layer(1, D("0.3333"), D(3), D("1.00"))]}
    takes = [(5, D(1)), (5, D(1)), (5, D(1))]
    allocations = allocate_many(takes, layers, deficit_costs=None)
    assert [a.cost for a in allocations] == [D("0.33"), D("0.33"), D("0.34")]
    assert [a.draws[0].empties for a in allocations] == [False, False, True]


def test_oldest_layer_first_then_the_next() -> None:
    layers = [
        Layer(12, D("1.5000"), D(5), D("7.50")),
        Layer(10, D("1.0000"), D(2), D("2.00")),
    ]
    allocation, left = allocate(3, layers, D(3), deficit_cost=None)
    assert allocation == Allocation(
        product_id=3,
        quantity=D(3),
        draws=(Draw(10, D(2), D("2.00"), True), Draw(12, D(1), D("1.50"), False)),
        cost=D("3.50"),
        shortfall=ZERO,
    )
    assert left == [Layer(12, D("1.5000"), D(4), D("6.00"))]


def test_expired_layer_goes_last_even_when_older() -> None:
    layers = [
        Layer(1, D("2.0000"), D(4), D("8.00"), expired=True),
        Layer(2, D("3.0000"), D(1), D("3.00")),
    ]
    allocation, left = allocate(3, layers, D(2), deficit_cost=None)
    assert allocation.draws == (Draw(2, D(1), D("3.00"), True), Draw(1, D(1), D("2.00"), False))
    assert left == [Layer(1, D("2.0000"), D(3), D("6.00"), expired=True)]


def test_partial_draw_never_costs_more_than_the_layer_carries() -> None:
    # Earlier rounding left the layer with less value than quantity × unit cost.
    layers = [Layer(1, D("1.0000"), D(10), D("5.00"))]
    allocation, left = allocate(1, layers, D(7), deficit_cost=None)
    assert allocation.draws == (Draw(1, D(7), D("5.00"), False),)
    assert left == [Layer(1, D("1.0000"), D(3), D("0.00"))]


def test_partial_draw_rounds_half_up() -> None:
    layers = [Layer(1, D("0.0050"), D(3), D("0.02"))]
    allocation, _ = allocate(1, layers, D(1), deficit_cost=None)
    assert allocation.cost == D("0.01")


def test_shortfall_becomes_a_deficit_draw_at_the_deficit_cost() -> None:
    layers = [Layer(4, D("1.0000"), D(2), D("2.00"))]
    allocation, left = allocate(1, layers, D(5), deficit_cost=D("1.2345"))
    assert allocation.draws == (
        Draw(4, D(2), D("2.00"), True),
        Draw(None, D(3), D("3.70"), False),  # 3 × 1.2345 = 3.7035
    )
    assert allocation.cost == D("5.70")
    assert allocation.shortfall == D(3)
    assert left == []


def test_nothing_on_hand_and_negative_allowed() -> None:
    [allocation] = allocate_many([(8, D("0.5"))], {}, deficit_costs={8: D("3.0000")})
    assert allocation.draws == (Draw(None, D("0.5"), D("1.50"), False),)


def test_shortage_message_and_values() -> None:
    with pytest.raises(Shortage) as raised:
        allocate(2, [Layer(1, D(1), D("1.5"), D("1.50"))], D(4), deficit_cost=None)
    assert raised.value.requested == D(4)
    assert raised.value.available == D("1.5")
    assert str(raised.value) == "insufficient stock for product 2: requested 4, available 1.5"


def test_every_shortage_reported_together() -> None:
    layers = {
        1: [Layer(1, D(1), D(3), D("3.00"))],
        2: [Layer(2, D(1), D(10), D("10.00"))],
    }
    # Product 1 twice: 2 + 2 > 3 though each line alone fits; product 3 has nothing.
    takes = [(1, D(2)), (2, D(4)), (3, D(1)), (1, D(2))]
    with pytest.raises(ShortageList) as raised:
        allocate_many(takes, layers, deficit_costs=None)
    assert [(s.product_id, s.requested, s.available) for s in raised.value.shortages] == [
        (1, D(4), D(3)),
        (3, D(1), D(0)),
    ]
    assert "product 1" in str(raised.value) and "product 3" in str(raised.value)


def test_a_product_named_twice_draws_from_what_the_first_line_left() -> None:
    layers = {1: [Layer(1, D(2), D(3), D("6.00")), Layer(2, D(3), D(3), D("9.00"))]}
    first, second = allocate_many([(1, D(2)), (1, D(2))], layers, deficit_costs=None)
    assert first.draws == (Draw(1, D(2), D("4.00"), False),)
    assert second.draws == (Draw(1, D(1), D("2.00"), True), Draw(2, D(1), D("3.00"), False))


def test_caller_mistakes_are_refused() -> None:
    layer = Layer(1, D(1), D(1), D("1.00"))
    with pytest.raises(ValueError):
        allocate(1, [layer], D(0), deficit_cost=None)
    with pytest.raises(ValueError):
        allocate(1, [layer, layer], D(1), deficit_cost=None)
    with pytest.raises(ValueError):
        allocate(1, [Layer(2, D(1), D(-1), D("-1.00"))], D(1), deficit_cost=D(1))
    with pytest.raises(ValueError):
        allocate_many([(1, D(1))], {1: [layer]}, deficit_costs={})
    with pytest.raises(ValueError):
        allocate_many([(1, D(-1))], {1: [layer]}, deficit_costs=None)


def test_money_rounding_helpers() -> None:
    assert line_cost(D(3), D("1.2345")) == D("3.70")
    assert line_cost(D("0.5"), D("0.0100")) == D("0.01")  # 0.005 half-up
    assert draw_cost(D(3), D(3), D("0.3333"), D("1.00")) == D("1.00")
    assert draw_cost(D(1), D(3), D("0.3333"), D("1.00")) == D("0.33")
    assert draw_cost(D(2), D(3), D("1.0000"), D("1.50")) == D("1.50")
    with pytest.raises(ValueError):
        draw_cost(D(4), D(3), D(1), D("3.00"))
    with pytest.raises(ValueError):
        draw_cost(D(0), D(3), D(1), D("3.00"))
