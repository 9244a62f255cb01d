"""What every report shares: scope checks and per-account sums of journal lines."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from decimal import Decimal

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.errors import NotFound, invalid
from tillbook.kit.money import to_money
from tillbook.models import Account, Company, JournalEntry, JournalLine, Warehouse


@dataclass(frozen=True)
class AccountSum:
    code: str
    name: str
    type: str
    debit: Decimal
    credit: Decimal

    @property
    def balance(self) -> Decimal:
        """Debit minus credit."""
        return self.debit - self.credit


async def check_scope(
    session: AsyncSession, company_id: int, warehouse_id: int | None = None
) -> Company:
    """The company, and the warehouse when given; a warehouse of another company is
    reported exactly like one that does not exist."""
    company = await session.get(Company, company_id)
    if company is None:
        raise NotFound(f"company {company_id} not found")
    if warehouse_id is not None:
        warehouse = await session.get(Warehouse, warehouse_id)
        if warehouse is None or warehouse.company_id != company_id:
            raise NotFound(f"warehouse {warehouse_id} not found in company {company_id}")
    return company


def check_period(date_from: dt.date | None, date_to: dt.date | None) -> None:
    if date_from is not None and date_to is not None and date_from > date_to:
        raise invalid("date_from", f"{date_from} is after date_to {date_to}")


async def account_sums(
    session: AsyncSession,
    company_id: int,
    *,
    warehouse_id: int | None = None,
    date_from: dt.date | None = None,
    date_to: dt.date | None = None,
) -> list[AccountSum]:
    """Σ debit and Σ credit of every posting account of the company, in code order.

    Accounts without lines in the scope are included with zeros. ``warehouse_id``
    keeps the lines of that warehouse; the dates filter on the entry date
    (both ends inclusive).
    """
    lines = select(
        JournalLine.account_id.label("account_id"),
        func.sum(JournalLine.debit).label("debit"),
        func.sum(JournalLine.credit).label("credit"),
    ).where(JournalLine.company_id == company_id)
    if warehouse_id is not None:
        lines = lines.where(JournalLine.warehouse_id == warehouse_id)
    if date_from is not None or date_to is not None:
        lines = lines.join(JournalEntry, JournalEntry.id == JournalLine.entry_id)
        if date_from is not None:
            lines = lines.where(JournalEntry.entry_date >= date_from)
        if date_to is not None:
            lines = lines.where(JournalEntry.entry_date <= date_to)
    sums = lines.group_by(JournalLine.account_id).subquery()
    rows = await session.execute(
        select(Account.code, Account.name, Account.type, sums.c.debit, sums.c.credit)
        .outerjoin(sums, sums.c.account_id == Account.id)
        .where(Account.company_id == company_id, Account.is_posting.is_(True))
        .order_by(Account.code)
    )
    return [
        AccountSum(code, name, type_, to_money(debit), to_money(credit))
        for code, name, type_, debit, credit in rows.all()
    ]


def iso(day: dt.date | None) -> str | None:
    return None if day is None else day.isoformat()
