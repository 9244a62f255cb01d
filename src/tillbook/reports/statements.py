"""Profit and loss over a period; balance sheet as of a day.

Signs follow each section's normal side: income is credit minus debit (a
contra-income account such as Sales Returns therefore shows negative), expenses,
assets are debit minus credit, liabilities and equity credit minus debit.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from decimal import Decimal
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.kit.money import ZERO, money_str
from tillbook.ledger import rollups
from tillbook.reports.common import (
    AccountSum,
    account_sums,
    check_period,
    check_scope,
    iso,
    posting_accounts,
    with_accounts,
)

INCOME_TYPES = ("income", "contra-income")
EXPENSE_TYPES = ("expense", "contra-expense")
ASSET_TYPES = ("asset", "contra-asset")
LIABILITY_TYPES = ("liability", "contra-liability")
EQUITY_TYPES = ("equity", "contra-equity")
CREDIT_NORMAL = INCOME_TYPES + LIABILITY_TYPES + EQUITY_TYPES


def _amount(s: AccountSum) -> Decimal:
    return s.credit - s.debit if s.type in CREDIT_NORMAL else s.debit - s.credit


def _section(sums: Iterable[AccountSum], types: tuple[str, ...]) -> tuple[dict[str, Any], Decimal]:
    rows = [s for s in sums if s.type in types]
    total = sum((_amount(s) for s in rows), ZERO)
    return (
        {
            "accounts": [
                {"code": s.code, "name": s.name, "type": s.type, "amount": money_str(_amount(s))}
                for s in rows
            ],
            "total": money_str(total),
        },
        total,
    )


async def profit_loss(
    session: AsyncSession,
    company_id: int,
    warehouse_id: int | None = None,
    date_from: dt.date | None = None,
    date_to: dt.date | None = None,
    *,
    by_month: bool = False,
) -> dict[str, Any]:
    """``{"company_id", "warehouse_id", "date_from", "date_to", "income": {"accounts":
    [{"code", "name", "type", "amount"}], "total"}, "expenses": {...}, "net_profit"}``.

    ``by_month`` adds ``"months"``: ``[(first day of the month, net profit)]`` for
    every calendar month of the range with lines, from the same read (the sums
    grouped by account and month, then added up per account), so a page with a
    monthly chart reads the books once."""
    await check_scope(session, company_id, warehouse_id)
    check_period(date_from, date_to)
    # A year-end close moves the year's income and expenses to retained earnings;
    # the year's profit and loss is what it was before that.
    # Only the profit-and-loss accounts' lines are read: a third of a shop's lines.
    accounts = await posting_accounts(session, company_id)
    wanted = {a.id for a in accounts if a.type in INCOME_TYPES + EXPENSE_TYPES}
    grouped = await rollups.account_sums(
        session,
        company_id,
        warehouse_id=warehouse_id,
        date_from=date_from,
        date_to=date_to,
        account_ids=wanted,
        with_closing=False,
        by_month=by_month,
    )
    months: list[tuple[dt.date, Decimal]] | None = None
    if by_month:
        per_account: dict[int, rollups.Sum] = {}
        net: dict[dt.date, Decimal] = {}
        for (account_id, month), found in grouped.items():
            per_account.setdefault(account_id, rollups.Sum()).add(found.debit, found.credit)
            net[month] = net.get(month, ZERO) - found.balance
        grouped = per_account
        months = sorted(net.items())
    sums = with_accounts(accounts, grouped)
    income, income_total = _section(sums, INCOME_TYPES)
    expenses, expense_total = _section(sums, EXPENSE_TYPES)
    out: dict[str, Any] = {
        "company_id": company_id,
        "warehouse_id": warehouse_id,
        "date_from": iso(date_from),
        "date_to": iso(date_to),
        "income": income,
        "expenses": expenses,
        "net_profit": money_str(income_total - expense_total),
    }
    if months is not None:
        out["months"] = months
    return out


async def balance_sheet(
    session: AsyncSession,
    company_id: int,
    warehouse_id: int | None = None,
    as_of: dt.date | None = None,
) -> dict[str, Any]:
    """Every entry up to and including ``as_of`` (default today):
    ``{"company_id", "warehouse_id", "as_of", "assets": {"accounts", "total"},
    "liabilities": {...}, "equity": {"accounts", "current_earnings", "total"},
    "total_liabilities_and_equity", "balanced"}``. ``current_earnings`` is income
    minus expenses to date (not yet closed into equity), included in equity's total.
    """
    await check_scope(session, company_id, warehouse_id)
    day = as_of or dt.date.today()
    sums = await account_sums(session, company_id, warehouse_id=warehouse_id, date_to=day)
    assets, asset_total = _section(sums, ASSET_TYPES)
    liabilities, liability_total = _section(sums, LIABILITY_TYPES)
    equity, equity_total = _section(sums, EQUITY_TYPES)
    earnings = sum((_amount(s) for s in sums if s.type in INCOME_TYPES), ZERO) - sum(
        (_amount(s) for s in sums if s.type in EXPENSE_TYPES), ZERO
    )
    equity_total += earnings
    equity["current_earnings"] = money_str(earnings)
    equity["total"] = money_str(equity_total)
    return {
        "company_id": company_id,
        "warehouse_id": warehouse_id,
        "as_of": day.isoformat(),
        "assets": assets,
        "liabilities": liabilities,
        "equity": equity,
        "total_liabilities_and_equity": money_str(liability_total + equity_total),
        "balanced": asset_total == liability_total + equity_total,
    }
