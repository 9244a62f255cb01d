"""Money, quantities and rounding: the only place rounding happens (DESIGN.md §3)."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

from tillbook.kit.bounds import MONEY, PRICE, QTY, WIDE

# The scales of the columns (``kit/bounds.py``): rounding goes to what is stored.
CENT = MONEY.step
ZERO = Decimal("0.00")
MONEY_PLACES = MONEY.scale
PRICE_PLACES = PRICE.scale
QTY_PLACES = QTY.scale
HUNDRED = Decimal(100)
_PRICE_STEP = PRICE.step


def money(value: Decimal | int | str) -> Decimal:
    """Round half-up to the cent. In the wide context: a value beyond what the books
    hold is still rounded (and then refused by ``bounds.check``), never an
    InvalidOperation."""
    return Decimal(value).quantize(CENT, rounding=ROUND_HALF_UP, context=WIDE)


def price4(value: Decimal) -> Decimal:
    """Round half-up to 4 places: stored unit prices and costs."""
    return value.quantize(_PRICE_STEP, rounding=ROUND_HALF_UP, context=WIDE)


def places(value: Decimal) -> int:
    """Number of decimal places a value carries (``1.50`` has 2, ``1e2`` has 0)."""
    exponent = value.normalize().as_tuple().exponent
    assert isinstance(exponent, int)
    return max(0, -exponent)


def money_str(value: Decimal) -> str:
    """Order money on the wire: a decimal string with two places."""
    return str(money(value))


def price_str(value: Decimal) -> str:
    """A unit price as a decimal string: two places, or four when it needs them."""
    two = money(value)
    return str(two) if two == value else str(price4(value))


def number(value: Decimal | float) -> float | int:
    """Product prices and stock on the wire are JSON numbers (spec): a whole one as
    an integer. A float is what the database gave for a column it converted itself
    (``catalog.queries``' product columns), the same double as ``float`` of the
    stored decimal; one of more than 15 digits may have lost its fraction to the
    double either way, and is then written whole (the same value)."""
    if isinstance(value, float):
        return int(value) if value.is_integer() else value
    normalized = value.normalize()
    if normalized == normalized.to_integral_value():
        return int(normalized)
    return float(normalized)


def line_base(quantity: Decimal, unit_price: Decimal, discount_rate: Decimal) -> Decimal:
    """A line's amount on the price as given, after its own discount rate and before
    tax is split out or added: what a promotion's discount is worked out on."""
    return money(quantity * unit_price * (1 - discount_rate / HUNDRED))


def line_amounts(
    quantity: Decimal,
    unit_price: Decimal,
    discount_rate: Decimal,
    tax_rate: Decimal,
    tax_inclusive: bool,
    off: Decimal = ZERO,
) -> tuple[Decimal, Decimal, Decimal]:
    """(net subtotal, tax, gross) of one order line, rounded per line.

    ``off``: an amount a promotion takes off the line (``orders/promotions.py``), on
    the price as given (``line_base``), before the tax is worked out on what is left."""
    gross = line_base(quantity, unit_price, discount_rate) - off
    if tax_rate == 0:
        return gross, ZERO, gross
    if tax_inclusive:
        tax = money(gross * tax_rate / (HUNDRED + tax_rate))
        return gross - tax, tax, gross
    tax = money(gross * tax_rate / HUNDRED)
    return gross, tax, gross + tax


def line_cost(quantity: Decimal, unit_cost: Decimal) -> Decimal:
    """Cost of ``quantity`` units at ``unit_cost``, rounded half-up to the cent: the
    figure a receipt, an adjustment or a deficit layer carries (DESIGN.md §3)."""
    return money(quantity * unit_cost)


def draw_cost(
    take: Decimal, layer_quantity: Decimal, layer_unit_cost: Decimal, layer_value: Decimal
) -> Decimal:
    """Cost of taking ``take`` units out of a FIFO layer that still holds
    ``layer_quantity`` units worth ``layer_value``.

    A draw that empties the layer takes exactly the value it still carries, so the
    cents that per-draw rounding left behind go out with the last unit and the layers
    agree with the inventory account to the cent (1.00 for 3 units at 0.3333 is drawn
    0.33, 0.33, 0.34). A partial draw is ``line_cost`` of the units taken, but never
    more than the layer still carries.
    """
    if not 0 < take <= layer_quantity:
        raise ValueError(f"cannot take {take} from a layer holding {layer_quantity}")
    if take == layer_quantity:
        return layer_value
    return min(line_cost(take, layer_unit_cost), layer_value)


def to_money(value: object) -> Decimal:
    """A database sum as money: SQLite may hand back floats or ints, PostgreSQL Decimals."""
    if value is None:
        return ZERO
    if isinstance(value, Decimal):
        return money(value)
    return money(Decimal(str(value)))


# The steps a price change may round its new prices to (``catalog.batch_prices``).
PRICE_STEPS: tuple[Decimal, ...] = tuple(
    Decimal(s) for s in ("0.01", "0.05", "0.10", "0.50", "1.00")
)


def round_to_step(value: Decimal, step: Decimal) -> Decimal:
    """``value`` rounded half-up to a multiple of ``step`` (0.05: a price a till can
    give change for), kept at two places."""
    units = (value / step).quantize(Decimal(1), rounding=ROUND_HALF_UP, context=WIDE)
    return money(units * step)
