"""An order's currency columns and answer fields (DESIGN §16), one shape for sales,
purchases and returns.

A foreign order keeps its amounts in its currency, its ``exchange_rate``, its total
in the base (``base_total``: what its receivable or payable line and its tenders
were booked at) and ``base_due``: the base value still carried for it in 11500 or
21100. A payment settling it later at another rate takes its share of ``base_due``
off the account (``ledger.fx.share``), and the difference to what the payment is
worth today is the exchange gain or loss."""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from typing import Any

from typing_extensions import TypedDict

from tillbook.kit.money import ZERO, money_str
from tillbook.kit.shapes import MoneyStr
from tillbook.ledger.fx import Conversion, share
from tillbook.models import Order


def base_total(fx: Conversion, due: Decimal, tenders: Sequence[Decimal]) -> Decimal:
    """The order's total in the base as its entry books it: the due line and each
    tender's line, each converted on its own (the rounding sits on the other side)."""
    return fx.to_base(due) + sum((fx.to_base(t) for t in tenders), ZERO)


def order_currency(
    fx: Conversion | None,
    due: Decimal,
    tenders: Sequence[Decimal],
    *,
    total_in_base: Decimal | None = None,
) -> dict[str, Any]:
    """The currency columns of a new order (all None for a base-currency one).
    ``total_in_base``: a total booked otherwise than line by line on its due and
    tenders (a purchase's stock, converted line by line); its due is what is left
    after the tenders, each converted on its own."""
    if fx is None:
        return {"currency": None, "exchange_rate": None, "base_total": None, "base_due": None}
    if total_in_base is None:
        total_in_base = base_total(fx, due, tenders)
        carried = fx.to_base(due)
    else:
        carried = total_in_base - sum((fx.to_base(t) for t in tenders), ZERO)
    return {
        "currency": fx.currency,
        "exchange_rate": fx.rate,
        "base_total": total_in_base,
        "base_due": carried,
    }


class ForeignFigures(TypedDict, total=False):
    """What a foreign order's answers add (``currency_fields``); nothing for a base
    one (v1's shapes). An answer's shape inherits these as its optional fields."""

    currency: str
    exchange_rate: str
    base_total: MoneyStr
    base_due: MoneyStr


def currency_fields(order: Order) -> ForeignFigures:
    """What a foreign order's answers add; nothing for a base one (v1's shapes)."""
    if order.currency is None:
        return {}
    return {
        "currency": order.currency,
        "exchange_rate": str(order.exchange_rate),
        "base_total": money_str(order.base_total or ZERO),
        "base_due": money_str(order.base_due or ZERO),
    }


def conversion_of(order: Order) -> Conversion | None:
    """The order's own conversion: a return or a payment against it uses its rate
    for what it carries."""
    if order.currency is None or order.exchange_rate is None:
        return None
    return Conversion(order.currency, order.exchange_rate)


def settle_base(order: Order, amount: Decimal) -> Decimal:
    """The base value that settling ``amount`` of the order's due takes off its
    account, and that value taken off ``base_due`` (call before reducing
    ``due_amount``). Exactly what is left when the whole due is settled."""
    carried = order.base_due or ZERO
    part = share(carried, amount, order.due_amount)
    order.base_due = carried - part
    return part
