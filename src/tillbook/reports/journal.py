"""The journal as plain-text accounting (beancount or hledger) and one account's ledger.

Export lets an accountant check the books with independent tools (``bean-check``,
``hledger check``): every account name carries its code
(``Assets:11101-Cash-on-Hand``) and every journal entry is one transaction.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import AsyncIterator
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.errors import NotFound, invalid
from tillbook.kit.money import ZERO, to_money
from tillbook.kit.text import quoted
from tillbook.models import Account, JournalEntry, JournalLine
from tillbook.reports.common import check_period, check_scope, iso

ROOTS = {
    "asset": "Assets",
    "liability": "Liabilities",
    "equity": "Equity",
    "income": "Income",
    "contra-income": "Income",
    "expense": "Expenses",
    "contra-expense": "Expenses",
}
FORMATS = ("beancount", "ledger")


def account_name(code: str, name: str, type_: str) -> str:
    words = re.sub(r"[^A-Za-z0-9]+", "-", name).strip("-")
    return f"{ROOTS[type_]}:{code}-{words}"


def _text(value: str) -> str:
    return value.replace('"', "'").replace("\n", " ").strip()


async def export_journal(session: AsyncSession, company_id: int, fmt: str) -> AsyncIterator[str]:
    """Lines of the whole journal of a company, oldest entry first."""
    if fmt not in FORMATS:
        raise invalid("format", f"must be one of {', '.join(FORMATS)}, got {quoted(fmt)}")
    company = await check_scope(session, company_id)
    currency = company.base_currency
    accounts = {
        a.id: a
        for a in (
            await session.execute(select(Account).where(Account.company_id == company_id))
        ).scalars()
    }
    first = (
        await session.execute(
            select(JournalEntry.entry_date)
            .where(JournalEntry.company_id == company_id)
            .order_by(JournalEntry.entry_date)
            .limit(1)
        )
    ).scalar_one_or_none() or dt.date.today()
    yield f"; tillbook journal of company {company_id} ({_text(company.name)})"
    if fmt == "beancount":
        yield f'option "operating_currency" "{currency}"'
    yield ""
    for account in sorted(accounts.values(), key=lambda a: a.code):
        if not account.is_posting:
            continue
        name = account_name(account.code, account.name, account.type)
        if fmt == "beancount":
            yield f"{first.isoformat()} open {name} {currency}"
        else:
            yield f"account {name}"
    yield ""
    entries = await session.stream(
        select(JournalEntry, JournalLine)
        .join(JournalLine, JournalLine.entry_id == JournalEntry.id)
        .where(JournalEntry.company_id == company_id)
        .order_by(JournalEntry.entry_date, JournalEntry.id, JournalLine.id)
    )
    current: int | None = None
    async for entry, line in entries:
        if entry.id != current:
            if current is not None:
                yield ""
            current = entry.id
            narration = _text(entry.narration) or entry.source_type
            if fmt == "beancount":
                yield f'{entry.entry_date.isoformat()} * "{narration}"'
                yield f'  entry: "{entry.id}"'
            else:
                yield f"{entry.entry_date.isoformat()} * {narration}  ; entry:{entry.id}"
        account = accounts[line.account_id]
        amount = to_money(line.debit) - to_money(line.credit)
        name = account_name(account.code, account.name, account.type)
        yield f"  {name}  {amount} {currency}"
    if current is not None:
        yield ""


async def account_ledger(
    session: AsyncSession,
    company_id: int,
    code: str,
    *,
    warehouse_id: int | None = None,
    date_from: dt.date | None = None,
    date_to: dt.date | None = None,
) -> dict[str, Any]:
    """Every line of one account with a running balance (debit − credit)."""
    await check_scope(session, company_id, warehouse_id)
    check_period(date_from, date_to)
    account = (
        await session.execute(
            select(Account).where(Account.company_id == company_id, Account.code == code)
        )
    ).scalar_one_or_none()
    if account is None:
        raise NotFound(f"account {code} not found")
    conditions = [JournalLine.account_id == account.id]
    if warehouse_id is not None:
        conditions.append(JournalLine.warehouse_id == warehouse_id)
    opening = ZERO
    if date_from is not None:
        before = await session.execute(
            select(JournalLine.debit, JournalLine.credit)
            .join(JournalEntry, JournalEntry.id == JournalLine.entry_id)
            .where(*conditions, JournalEntry.entry_date < date_from)
        )
        opening = sum((to_money(d) - to_money(c) for d, c in before.all()), ZERO)
        conditions.append(JournalEntry.entry_date >= date_from)
    if date_to is not None:
        conditions.append(JournalEntry.entry_date <= date_to)
    rows = await session.execute(
        select(JournalEntry, JournalLine)
        .join(JournalEntry, JournalEntry.id == JournalLine.entry_id)
        .where(*conditions)
        .order_by(JournalEntry.entry_date, JournalEntry.id, JournalLine.id)
    )
    running = opening
    lines: list[dict[str, Any]] = []
    for entry, line in rows.all():
        debit, credit = to_money(line.debit), to_money(line.credit)
        running += debit - credit
        lines.append(
            {
                "entry_id": entry.id,
                "date": entry.entry_date.isoformat(),
                "narration": entry.narration,
                "source_type": entry.source_type,
                "source_id": entry.source_id,
                "warehouse_id": line.warehouse_id,
                "party_id": line.party_id,
                "debit": str(debit),
                "credit": str(credit),
                "balance": str(running),
            }
        )
    return {
        "company_id": company_id,
        "account": {"code": account.code, "name": account.name, "type": account.type},
        "warehouse_id": warehouse_id,
        "date_from": iso(date_from),
        "date_to": iso(date_to),
        "opening_balance": str(opening),
        "closing_balance": str(running),
        "lines": lines,
    }
