"""What every report shares: scope checks and per-account sums of journal lines."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.errors import NotFound, invalid
from tillbook.kit.money import ZERO
from tillbook.ledger import rollups
from tillbook.models import Account, Company, Warehouse


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
        warehouse = await session.scalar(
            select(Warehouse).where(
                Warehouse.company_id == company_id, Warehouse.id == warehouse_id
            )
        )
        if warehouse is None:
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
    with_closing: bool = True,
) -> list[AccountSum]:
    """Σ debit and Σ credit of every posting account of the company, in code order.

    Accounts without lines in the scope are included with zeros. ``warehouse_id``
    keeps the lines of that warehouse; the dates filter on the entry date
    (both ends inclusive). Closed months are read from their roll-ups and only the
    rest from the lines (``ledger.rollups``); ``with_closing=False`` leaves out
    year-end closing entries (profit and loss).
    """
    sums = await rollups.account_sums(
        session,
        company_id,
        warehouse_id=warehouse_id,
        date_from=date_from,
        date_to=date_to,
        with_closing=with_closing,
    )
    return with_accounts(await posting_accounts(session, company_id), sums)


@dataclass(frozen=True)
class PostingAccount:
    id: int
    code: str
    name: str
    type: str


async def posting_accounts(session: AsyncSession, company_id: int) -> list[PostingAccount]:
    """The company's posting accounts, in code order."""
    rows = await session.execute(
        select(Account.id, Account.code, Account.name, Account.type)
        .where(Account.company_id == company_id, Account.is_posting.is_(True))
        .order_by(Account.code)
    )
    return [PostingAccount(*row) for row in rows.all()]


def with_accounts(
    accounts: list[PostingAccount], sums: Mapping[int, rollups.Sum]
) -> list[AccountSum]:
    """Every account with its sums (zeros for an account without lines)."""
    out = []
    for a in accounts:
        found = sums.get(a.id)
        debit, credit = (found.debit, found.credit) if found else (ZERO, ZERO)
        out.append(AccountSum(a.code, a.name, a.type, debit, credit))
    return out


def iso(day: dt.date | None) -> str | None:
    return None if day is None else day.isoformat()
