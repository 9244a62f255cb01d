"""The balance check: a pure function over lines, called by the only journal writer."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from tillbook.kit.money import CENT, ZERO, money


@dataclass(frozen=True)
class Line:
    """One posting: an account code, a debit or a credit (never both), a party.

    A line converted from a foreign document (``ledger.fx``) keeps its currency, its
    amount in that currency and the rate; ``debit``/``credit`` are always the base."""

    account: str
    debit: Decimal = ZERO
    credit: Decimal = ZERO
    party_id: int | None = None
    currency: str | None = None
    foreign: Decimal | None = None
    rate: Decimal | None = None


def imbalance(lines: list[Line]) -> str | None:
    """None when the entry may be posted; otherwise why not."""
    if not lines:
        return "an entry needs at least one line"
    for line in lines:
        if line.debit < 0 or line.credit < 0:
            return f"negative amount on {line.account}"
        if line.debit and line.credit:
            return f"line on {line.account} has both a debit and a credit"
        if money(line.debit) != line.debit or money(line.credit) != line.credit:
            return f"amount on {line.account} has more than two decimal places"
    debits = sum((line.debit for line in lines), ZERO)
    credits = sum((line.credit for line in lines), ZERO)
    if debits != credits:
        return f"debits {debits} != credits {credits} (difference {debits - credits})"
    if debits < CENT:
        return "an entry must move at least one cent"
    return None
