"""What the books can hold, and so what a client may send (DESIGN.md §12).

Every limit on a value a client sends, or on a value a request produces, comes
from here:

- numbers: the NUMERIC(precision, scale) of the money, price, quantity and rate
  columns are defined once below. ``models/base.py`` builds its column types from
  them, the request schemas their annotated types (``Money``, ``Quantity``, ...),
  and the services check what they compute from a request (line totals, order
  totals, stock after the operation, a party's balance, batch values) with
  ``check``, which names the request field that caused an overflow.
- text: no C0 control character except tab, CR and LF (PostgreSQL refuses NUL in
  text, and the others have no business in a name or a note), no lone surrogate
  (JSON can escape one, UTF-8 cannot carry it); lengths as stored
  (``stored_length``).
- dates: business dates (an order, a payment, an expense) from 1970-01-01 to one
  day after the server's UTC date: offline tills post past sales, a clock years
  ahead is a mistake. Dates that are only stored (a batch's expiry) may lie years
  ahead but must be real dates in the database: asyncpg writes ``date.max`` and
  ``date.min`` as PostgreSQL ``infinity`` and ``-infinity``.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from decimal import Context, Decimal
from typing import Annotated, Any

from pydantic import AfterValidator, BeforeValidator, Field, StrictStr, WithJsonSchema
from sqlalchemy import Numeric, String
from sqlalchemy.orm import QueryableAttribute

from tillbook.errors import invalid
from tillbook.kit import numerals

# Arithmetic on values within the bounds never needs more than 40 digits; this
# context is wide enough that quantizing any such value (or any product of two of
# them) cannot raise InvalidOperation, so an out-of-range result reaches ``check``
# as a number instead of a 500.
WIDE = Context(prec=100)


@dataclass(frozen=True)
class Decimals:
    """One kind of NUMERIC(precision, scale) column and the largest value it holds."""

    noun: str
    precision: int
    scale: int
    step: Decimal  # the smallest unit: 0.01 for money
    max: Decimal  # 9999999999999999.99 for NUMERIC(18, 2)

    @classmethod
    def of(cls, noun: str, precision: int, scale: int) -> Decimals:
        step = Decimal(1).scaleb(-scale)
        return cls(noun, precision, scale, step, Decimal(10) ** (precision - scale) - step)

    def column(self) -> Numeric[Decimal]:
        """The SQL type of a column of this kind."""
        return Numeric(self.precision, self.scale, asdecimal=True)

    def holds(self, value: Decimal) -> bool:
        return -self.max <= value <= self.max


MONEY = Decimals.of("amount", 18, 2)
PRICE = Decimals.of("price", 18, 4)
QTY = Decimals.of("quantity", 18, 4)
RATE = Decimals.of("rate", 9, 4)
# Base-currency units per one unit of a foreign currency (DESIGN §16): eight places,
# so a rate such as 0.00006234 (a currency of many digits against one of few) holds.
FX_RATE = Decimals.of("exchange rate", 18, 8)


def exceeds(value: Decimal, kind: Decimals, what: str) -> str | None:
    """The message for a computed value its column cannot hold, or None when it fits."""
    if kind.holds(value):
        return None
    # A value of a client's making can have a million digits (1e999999 is a valid
    # decimal): written out in full, the message alone would be megabytes.
    shown = f"{value:f}" if value.adjusted() <= 40 else f"{value:.6E}"
    return (
        f"{what} would be {shown}, beyond the largest {kind.noun} the books hold "
        f"({'-' if value < 0 else ''}{kind.max})"
    )


def check(field: str, value: Decimal, kind: Decimals, what: str) -> None:
    """A value a request produces (a line total, the stock after it, a balance) that
    its column cannot hold: a 422 naming the request field that caused it."""
    problem = exceeds(value, kind, what)
    if problem is not None:
        raise invalid(field, problem)


# --- numbers a client sends ---------------------------------------------------------


def _places_within(kind: Decimals) -> AfterValidator:
    """Pydantic counts decimal places after ``normalize()``, which underflows to zero
    digits for exponents beyond the context (``1E-99999999`` passes as 0 places);
    counted here from the digits themselves, without a context. A value with trailing
    zeros beyond the scale (``5.000`` as money) is brought to the scale, so that no
    odd exponent reaches the database."""

    def check_places(value: Decimal) -> Decimal:
        _sign, digits, exponent = value.as_tuple()
        assert isinstance(exponent, int)  # finite: allow_inf_nan=False ran first
        if exponent >= -kind.scale:
            return value
        significant = "".join(map(str, digits)).rstrip("0")
        if significant and exponent + (len(digits) - len(significant)) < -kind.scale:
            raise ValueError(f"Decimal input should have no more than {kind.scale} decimal places")
        return value.quantize(kind.step, context=WIDE)

    return AfterValidator(check_places)


def _limits(kind: Decimals, **limits: Any) -> Any:
    """The ``Field`` of a number of this kind: its digits, places and range."""
    constraints: dict[str, Any] = {"le": kind.max, **limits}
    return Field(
        max_digits=kind.precision, decimal_places=kind.scale, allow_inf_nan=False, **constraints
    )


def _ascii_number(value: Any) -> Any:
    """A number sent as text is ASCII digits (``kit/numerals.py``): pydantic's
    Decimal, like Python's, reads ``"２"`` as 2 and takes ``" 1"``, ``"+1"`` and
    ``"1_000"``; a JSON number, a form field or a CSV cell is refused here instead."""
    if isinstance(value, str) and not numerals.is_decimal(value):
        raise ValueError("must be a number written with the digits 0-9, such as 12.50")
    return value


# Runs before pydantic's own parsing (``Annotated`` applies it first).
AsciiNumber = BeforeValidator(_ascii_number)

Money = Annotated[Decimal, AsciiNumber, _limits(MONEY, ge=0), _places_within(MONEY)]
PositiveMoney = Annotated[Decimal, AsciiNumber, _limits(MONEY, gt=0), _places_within(MONEY)]
Quantity = Annotated[Decimal, AsciiNumber, _limits(QTY, gt=0), _places_within(QTY)]
# The spec's minimum quantity of stock adjustments and returns.
MinQuantity = Annotated[Decimal, AsciiNumber, _limits(QTY, ge=Decimal("0.01")), _places_within(QTY)]
# What arrived of a line (a transfer's receipt): none at all is a quantity too.
ZeroOrMoreQuantity = Annotated[Decimal, AsciiNumber, _limits(QTY, ge=0), _places_within(QTY)]
UnitPrice = Annotated[Decimal, AsciiNumber, _limits(PRICE, ge=0), _places_within(PRICE)]
Percent = Annotated[Decimal, AsciiNumber, _limits(RATE, ge=0, le=100), _places_within(RATE)]
ExchangeRate = Annotated[Decimal, AsciiNumber, _limits(FX_RATE, gt=0), _places_within(FX_RATE)]
# How far a price moves (a batch price change's amount or percentage): negative is down.
PriceMove = Annotated[Decimal, AsciiNumber, _limits(PRICE, ge=-PRICE.max), _places_within(PRICE)]


# --- text ----------------------------------------------------------------------------

# Free text longer than this is a mistake even where the column is unbounded (TEXT).
NOTE_LENGTH = 2000
_FORBIDDEN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff]")


def text_problem(value: str) -> str | None:
    """Why a text cannot be stored, or None. Names the character, never the text."""
    found = _FORBIDDEN.search(value)
    if found is None:
        return None
    char = found.group()
    what = "a lone surrogate" if "\ud800" <= char <= "\udfff" else "a control character"
    return f"must not contain {what} (U+{ord(char):04X} at position {found.start()})"


def clean_text(value: str) -> str:
    problem = text_problem(value)
    if problem is not None:
        raise ValueError(problem)
    return value


# The check every string a client sends carries, after its length (as stored):
# ``Annotated[StrictStr, Field(max_length=stored_length(Order.unique_id)), Clean]``.
# (After the ``Field``: pydantic then checks the length on the string itself.)
Clean = AfterValidator(clean_text)
Note = Annotated[StrictStr, Field(max_length=NOTE_LENGTH), Clean]


def stored_length(attribute: QueryableAttribute[Any]) -> int:
    """The length of the VARCHAR column a text is stored in (``Order.unique_id``)."""
    type_ = attribute.expression.type
    assert isinstance(type_, String) and type_.length is not None, attribute
    return type_.length


def query_value(field: str, raw: str | None) -> str | None:
    """A query parameter as text: stripped, None when blank, a 422 naming the parameter
    when it holds a control character (checked before stripping: Python counts
    U+001C to U+001F as white space)."""
    if raw is None:
        return None
    problem = text_problem(raw)
    if problem is not None:
        raise invalid(field, problem)
    return raw.strip() or None


def query_text(field: str, raw: str | None, max_length: int) -> str | None:
    """A text query parameter (``search``): ``query_value``, at most ``max_length``
    characters."""
    value = query_value(field, raw)
    if value is not None and len(value) > max_length:
        raise invalid(field, f"must be at most {max_length} characters")
    return value


# --- dates ----------------------------------------------------------------------------

FIRST_DAY = dt.date(1970, 1, 1)
# ``date.max`` is written as PostgreSQL ``infinity`` by asyncpg: the last real day is
# the one before.
LAST_STORABLE_DAY = dt.date.max - dt.timedelta(days=1)
_PLAIN_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def last_business_day() -> dt.date:
    """One day after the server's UTC date: a till east of UTC may already be there."""
    return dt.datetime.now(dt.UTC).date() + dt.timedelta(days=1)


def business_day_problem(day: dt.date) -> str | None:
    last = last_business_day()
    if FIRST_DAY <= day <= last:
        return None
    return f"must be from {FIRST_DAY} to {last} (one day after today, UTC)"


def storable_day_problem(day: dt.date) -> str | None:
    if FIRST_DAY <= day <= LAST_STORABLE_DAY:
        return None
    return f"must be from {FIRST_DAY} to {LAST_STORABLE_DAY}"


def check_business_day(day: dt.date) -> dt.date:
    problem = business_day_problem(day)
    if problem is not None:
        raise ValueError(problem)
    return day


def check_storable_day(day: dt.date) -> dt.date:
    problem = storable_day_problem(day)
    if problem is not None:
        raise ValueError(problem)
    return day


def _plain_date(value: Any) -> Any:
    """Exactly ``YYYY-MM-DD`` and a real calendar day; no timestamps, no words."""
    if isinstance(value, str) and _PLAIN_DATE.match(value.strip()):
        try:
            return dt.date.fromisoformat(value.strip())
        except ValueError:
            pass
    raise ValueError("must be a date YYYY-MM-DD")


BusinessDay = Annotated[
    dt.date,
    BeforeValidator(_plain_date),
    AfterValidator(check_business_day),
    WithJsonSchema({"type": "string", "format": "date", "examples": ["2026-11-20"]}),
]
StorableDay = Annotated[
    dt.date,
    BeforeValidator(_plain_date),
    AfterValidator(check_storable_day),
    WithJsonSchema({"type": "string", "format": "date", "examples": ["2027-03-31"]}),
]


def query_date(field: str, raw: str | None) -> dt.date | None:
    """A date in a query string (a report's ``from``): None when blank, else ISO 8601
    and a day the database holds, or a 422 naming the parameter."""
    text = query_value(field, raw)
    if text is None:
        return None
    try:
        day = dt.date.fromisoformat(text)
    except ValueError:
        raise invalid(field, f"must be a date as YYYY-MM-DD (got {_shown(text)})") from None
    problem = storable_day_problem(day)
    if problem is not None:
        raise invalid(field, f"{problem} (got {day})")
    return day


def _shown(text: str) -> str:
    """At most 100 characters of a value quoted back (DESIGN.md §12)."""
    return repr(text) if len(text) <= 100 else repr(text[:100]) + "…"
