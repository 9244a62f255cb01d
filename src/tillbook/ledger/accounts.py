"""Accounts the back office adds to a company's chart, and the ones set-up records
may point at.

A payment mode posts to one cash or bank account: a posting child of 11100 Cash &
Bank Accounts (11101 Cash on Hand, 11105 Card / Terminal Clearing, …); a new one
takes the lowest free code from 11101 to 11199 (11200 and up belong to other asset
groups). An expense category posts to one 52xxx expense account; a new one takes
the lowest free hundred (52200, 52400, …), then the lowest free code from 52001.
Accounts are only ever added: their code and id never change, and the posting
code's cache (``ledger.service.account_ids``) finds a new one by its code.
"""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.errors import invalid
from tillbook.ledger import chart
from tillbook.models import Account

CASH_CODES = [str(n) for n in range(11101, 11200)]
EXPENSE_PREFIX = "52"
EXPENSE_CODES = [f"52{h}00" for h in range(1, 10)] + [
    str(n) for n in range(52001, 53000) if n % 100
]


def is_cash_account(account: Account) -> bool:
    return account.parent_code == chart.CASH_PARENT and account.is_posting


def is_expense_account(account: Account) -> bool:
    return (
        account.code.startswith(EXPENSE_PREFIX)
        and len(account.code) == 5
        and account.type == "expense"
        and account.is_posting
    )


async def by_code(session: AsyncSession, company_id: int, code: str) -> Account | None:
    return (
        await session.execute(
            select(Account).where(Account.company_id == company_id, Account.code == code)
        )
    ).scalar_one_or_none()


async def by_id(session: AsyncSession, company_id: int, account_id: int) -> Account | None:
    return (
        await session.execute(
            select(Account).where(Account.company_id == company_id, Account.id == account_id)
        )
    ).scalar_one_or_none()


async def many(session: AsyncSession, company_id: int, ids: Iterable[int]) -> list[Account]:
    wanted = list(ids)
    if not wanted:
        return []
    return list(
        (
            await session.execute(
                select(Account).where(Account.company_id == company_id, Account.id.in_(wanted))
            )
        ).scalars()
    )


async def _first_free(
    session: AsyncSession, company_id: int, candidates: Iterable[str], field: str, what: str
) -> str:
    used = set(
        (
            await session.execute(select(Account.code).where(Account.company_id == company_id))
        ).scalars()
    )
    for code in candidates:
        if code not in used:
            return code
    raise invalid(field, f"no free account code is left for a new {what}; name an existing one")


async def add_cash_account(
    session: AsyncSession, company_id: int, name: str, field: str
) -> Account:
    """A new posting child of 11100 for a payment mode. The caller holds the
    company's reference lock, so two new accounts cannot take one code."""
    code = await _first_free(session, company_id, CASH_CODES, field, "cash or bank account")
    return await _add(session, company_id, code, name, "asset", chart.CASH_PARENT)


async def add_expense_account(
    session: AsyncSession, company_id: int, name: str, field: str
) -> Account:
    code = await _first_free(session, company_id, EXPENSE_CODES, field, "expense account")
    return await _add(session, company_id, code, name, "expense", None)


async def _add(
    session: AsyncSession,
    company_id: int,
    code: str,
    name: str,
    type_: str,
    parent_code: str | None,
) -> Account:
    account = Account(
        company_id=company_id,
        code=code,
        name=name,
        type=type_,
        parent_code=parent_code,
        is_posting=True,
    )
    session.add(account)
    await session.flush()
    return account
