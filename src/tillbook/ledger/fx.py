"""Converting a foreign document's lines into the base currency (DESIGN §16).

A document in a foreign currency hands ``ledger.service.post`` its figures in that
currency, with a :class:`Conversion`. Every line of a foreign figure becomes
round(foreign × rate, 2) in the base and keeps its currency, foreign amount and
rate; figures the caller already has in the base (a sale's FIFO cost) stay as they
are, and a figure with a carried base value (an invoice's receivable, settled at
the rate it was booked at) takes that value.

Rounding each line on its own can leave the entry a few cents out of balance. The
difference is never dropped: it goes to one named line (``balance_on``: the
figure whose first line absorbs it, e.g. the sale's receivable or its first tender)
or, when the document settles something booked at another rate (``EXCHANGE``), to
71100 Exchange Gain or 71200 Exchange Loss. Either way the entry balances in the
base by construction and the balance check still runs after."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from decimal import ROUND_HALF_UP, Decimal

from tillbook.kit.bounds import FX_RATE
from tillbook.kit.money import CENT, ZERO, money
from tillbook.ledger import chart
from tillbook.ledger.balance import Line

RATE_STEP = FX_RATE.step

# ``balance_on`` for a settlement: the difference is an exchange gain or loss.
EXCHANGE = "exchange"


@dataclass(frozen=True)
class Held:
    """Foreign money a line of a base-currency document moves (foreign cash taken at
    the till): its currency, amount and the rate it was taken at. The line's base
    amount is given beside it."""

    currency: str
    amount: Decimal
    rate: Decimal


@dataclass(frozen=True)
class Conversion:
    """A document's currency and its rate: base units per one unit of ``currency``."""

    currency: str
    rate: Decimal

    def to_base(self, amount: Decimal) -> Decimal:
        return to_base(amount, self.rate)


def to_base(amount: Decimal, rate: Decimal) -> Decimal:
    """round(amount × rate, 2), half-up: the one conversion every line and every
    carried base value is computed with."""
    return money(amount * rate)


def share(base: Decimal, part: Decimal, whole: Decimal) -> Decimal:
    """The base value of ``part`` of a foreign amount ``whole`` carried at ``base``:
    pro rata, and exactly ``base`` when the part is the whole, so a document settled
    in pieces leaves not a cent behind in its account."""
    if whole == 0 or part >= whole:
        return base
    return money(base * part / whole)


def convert(
    lines: Sequence[tuple[str, Line]],
    fx: Conversion,
    *,
    base_figures: Collection[str],
    fixed: Mapping[str, Decimal],
    balance_on: str | Sequence[str],
) -> list[Line]:
    """The entry's lines in the base currency; ``lines``: (figure name, line in the
    document's currency) as the rule built them. ``balance_on``: the figure whose
    first line takes the rounding, or several tried in order (the first with a line),
    or ``EXCHANGE``."""
    out: list[tuple[str, Line]] = []
    converted = 0
    for name, line in lines:
        if name in base_figures or line.currency is not None:
            out.append((name, line))
            continue
        foreign = line.debit or line.credit
        rate = fx.rate
        if name in fixed:
            # A carried value: the line states the rate it was booked at.
            base = fixed[name]
            rate = (base / foreign).quantize(RATE_STEP, rounding=ROUND_HALF_UP)
        else:
            base = fx.to_base(foreign)
        converted += 1
        out.append(
            (
                name,
                replace(
                    line,
                    debit=base if line.debit else ZERO,
                    credit=base if line.credit else ZERO,
                    currency=fx.currency,
                    foreign=foreign,
                    rate=rate,
                ),
            )
        )
    result = [line for _name, line in out]
    difference = sum((line.debit - line.credit for line in result), ZERO)
    if difference == 0:
        return result
    if balance_on == EXCHANGE:
        # Debits exceed credits: the base received is more than the base carried, a
        # gain (credited); otherwise a loss (debited).
        if difference > 0:
            result.append(Line(chart.EXCHANGE_GAIN, credit=difference))
        else:
            result.append(Line(chart.EXCHANGE_LOSS, debit=-difference))
        return result
    # Rounding alone is at most half a cent per converted line; more is a value
    # carried at another rate (``fixed``) and so an exchange difference.
    if abs(difference) > CENT * converted:
        return convert(lines, fx, base_figures=base_figures, fixed=fixed, balance_on=EXCHANGE)
    names = (balance_on,) if isinstance(balance_on, str) else tuple(balance_on)
    for wanted in names:
        for i, (name, line) in enumerate(out):
            if name != wanted:
                continue
            if line.debit:
                result[i] = replace(line, debit=line.debit - difference)
            else:
                result[i] = replace(line, credit=line.credit + difference)
            return result
    # No named line: the difference is still not lost (exchange gain or loss).
    return convert(lines, fx, base_figures=base_figures, fixed=fixed, balance_on=EXCHANGE)
