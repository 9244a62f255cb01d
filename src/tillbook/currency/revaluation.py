"""Revaluing open foreign invoices when a period closes (DESIGN §16).

At the close through day *D*, each open foreign invoice dated on or before *D* is
worth ``round(due × rate on D, 2)`` in the base, against the ``base_due`` it is
carried at. The difference, summed per party, branch and currency, is posted as an
unrealised exchange gain or loss (rule ``revaluation``) dated *D*, and reversed on
*D* + 1: the period's balance sheet shows receivables and payables at the period-end
rate, and the next period starts again from the carried values, so the payment that
settles an invoice later books the whole realised difference from its own rate
(the reversal method; nothing on the invoice itself changes).

A currency with no rate on or before *D* is left at its carried value and named in
the close's summary."""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from decimal import Decimal
from typing import Any

from sqlalchemy import case, func, select

from tillbook.currency import rates
from tillbook.kit.money import ZERO, money, money_str
from tillbook.ledger.fx import to_base
from tillbook.ledger.service import post, reverse
from tillbook.models import Account, JournalEntry, JournalLine, Order, PaymentMode
from tillbook.unit import UnitOfWork

# order_type -> (figure of the party's account, what a rise of its base value is)
_ACCOUNT = {"sales": "receivable", "purchases": "payable"}


async def revalue(
    uow: UnitOfWork, company_id: int, through: dt.date, actor_id: int | None
) -> dict[str, Any]:
    """Post the revaluation of every open foreign invoice at ``through`` and its
    reversal the day after; the summary the close reports."""
    session = uow.session
    rows = (
        await session.execute(
            select(
                Order.user_id,
                Order.warehouse_id,
                Order.order_type,
                Order.currency,
                Order.due_amount,
                Order.base_due,
            )
            .where(
                Order.company_id == company_id,
                Order.currency.is_not(None),
                Order.order_type.in_(tuple(_ACCOUNT)),
                Order.due_amount > 0,
                Order.order_date <= through,
            )
            .order_by(Order.id)
        )
    ).all()
    rate_at: dict[str, Decimal | None] = {}
    # (party, warehouse, order type, currency) -> (revalued − carried)
    moves: dict[tuple[int, int, str, str], Decimal] = defaultdict(lambda: ZERO)
    for party, warehouse, order_type, code, due, carried in rows:
        assert code is not None  # the query's filter
        if code not in rate_at:
            found = await rates.rate_on(session, company_id, code, through)
            rate_at[code] = None if found is None else found[1]
        rate = rate_at[code]
        if rate is None:
            continue
        moves[(party, warehouse, order_type, code)] += to_base(due, rate) - (carried or ZERO)
    entries: list[int] = []
    totals: dict[str, Decimal] = defaultdict(lambda: ZERO)
    for (party, warehouse, order_type, code), difference in sorted(moves.items()):
        if difference == 0:
            continue
        # A receivable worth more is a gain; a payable worth more is a loss.
        gain = difference if order_type == "sales" else -difference
        figures: dict[str, Any] = {
            "receivable": difference if order_type == "sales" else ZERO,
            "payable": difference if order_type == "purchases" else ZERO,
            "cash": [],
            "gain": max(gain, ZERO),
            "loss": max(-gain, ZERO),
        }
        common: dict[str, Any] = dict(
            source_type="revaluation", source_id=None, created_by=actor_id, date_field="through"
        )
        entry_id = await post(
            uow,
            company_id=company_id,
            warehouse_id=warehouse,
            rule="revaluation",
            figures=figures,
            narration=f"Revaluation of open {code} invoices at {rate_at[code]} on {through}",
            field="through",
            entry_date=through,
            party_id=party,
            **common,
        )
        if entry_id is None:
            continue
        back = await reverse(
            uow,
            company_id,
            entry_id,
            narration=f"Reversal of the {code} revaluation of {through}",
            entry_date=through + dt.timedelta(days=1),
            **common,
        )
        entries += [entry_id, back]
        totals[code] += gain
    cash = await _foreign_cash(uow, company_id, through, rate_at)
    for (account_code, branch, code), difference in sorted(
        cash.items(), key=lambda kv: (kv[0][0], kv[0][1] or 0, kv[0][2])
    ):
        entry_id = await post(
            uow,
            company_id=company_id,
            warehouse_id=branch,
            rule="revaluation",
            figures={
                "receivable": ZERO,
                "payable": ZERO,
                "cash": [(account_code, difference)],
                "gain": max(difference, ZERO),
                "loss": max(-difference, ZERO),
            },
            narration=f"Revaluation of {code} cash ({account_code}) at {rate_at[code]} "
            f"on {through}",
            field="through",
            entry_date=through,
            source_type="revaluation",
            source_id=None,
            created_by=actor_id,
            date_field="through",
        )
        if entry_id is None:
            continue
        back = await reverse(
            uow,
            company_id,
            entry_id,
            narration=f"Reversal of the {code} cash revaluation of {through}",
            entry_date=through + dt.timedelta(days=1),
            source_type="revaluation",
            source_id=None,
            created_by=actor_id,
            date_field="through",
        )
        entries += [entry_id, back]
        totals[code] += difference
    return {
        "entries": entries,
        "by_currency": [
            {
                "currency": code,
                "rate": None if rate_at[code] is None else str(rate_at[code]),
                "unrealised": money_str(totals[code]) if rate_at[code] is not None else None,
            }
            for code in sorted(rate_at)
        ],
    }


async def _foreign_cash(
    uow: UnitOfWork, company_id: int, through: dt.date, rate_at: dict[str, Decimal | None]
) -> dict[tuple[str, int | None, str], Decimal]:
    """(account, branch, currency) -> what the period-end rate adds to the base value
    of the foreign money a mode's account holds (its lines' foreign amounts, signed
    by side, at that rate, less their base amounts). Fills ``rate_at``."""
    session = uow.session
    held = (
        await session.execute(
            select(PaymentMode.currency, Account.id, Account.code)
            .join(
                Account,
                (Account.id == PaymentMode.account_id)
                & (Account.company_id == PaymentMode.company_id),
            )
            .where(PaymentMode.company_id == company_id, PaymentMode.currency.is_not(None))
        )
    ).all()
    out: dict[tuple[str, int | None, str], Decimal] = {}
    for code, account_id, account_code in held:
        assert code is not None  # the query's filter
        rows = (
            await session.execute(
                select(
                    JournalLine.warehouse_id,
                    func.coalesce(func.sum(JournalLine.debit - JournalLine.credit), 0),
                    func.coalesce(
                        func.sum(
                            case(
                                (JournalLine.debit > 0, JournalLine.amount_foreign),
                                else_=-JournalLine.amount_foreign,
                            )
                        ),
                        0,
                    ),
                )
                .join(
                    JournalEntry,
                    (JournalEntry.id == JournalLine.entry_id)
                    & (JournalEntry.company_id == JournalLine.company_id),
                )
                .where(
                    JournalLine.company_id == company_id,
                    JournalLine.account_id == account_id,
                    JournalLine.currency == code,
                    JournalEntry.entry_date <= through,
                )
                .group_by(JournalLine.warehouse_id)
            )
        ).all()
        if not rows:
            continue
        if code not in rate_at:
            found = await rates.rate_on(session, company_id, code, through)
            rate_at[code] = None if found is None else found[1]
        rate = rate_at[code]
        if rate is None:
            continue
        for warehouse, base, foreign in rows:
            difference = to_base(Decimal(foreign), rate) - money(Decimal(base))
            if difference:
                out[(account_code, warehouse, code)] = difference
    return out
