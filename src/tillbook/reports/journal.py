"""The journal as plain-text accounting (beancount or hledger) and one account's ledger.

Export lets an accountant check the books with independent tools (``bean-check``,
``hledger check``): every account name carries its code
(``Assets:11101-Cash-on-Hand``) and every journal entry is one transaction.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import AsyncIterator
from decimal import Decimal
from typing import Any

from sqlalchemy import and_, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.errors import invalid
from tillbook.kit.money import to_money
from tillbook.kit.text import quoted
from tillbook.ledger import rollups
from tillbook.models import Account, CompanyCurrency, JournalEntry, JournalLine
from tillbook.reports.common import check_period, check_scope, iso
from tillbook.reports.ledgers import MAX_LIMIT, account_ledger_page

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


EXPORT_PAGE = 500


async def export_journal(
    session: AsyncSession,
    company_id: int,
    fmt: str,
    *,
    date_from: dt.date | None = None,
    date_to: dt.date | None = None,
) -> AsyncIterator[str]:
    """Lines of the journal of a company, oldest entry first: everything, or the
    entries dated in ``date_from``..``date_to`` after one transaction carrying the
    balances before ``date_from`` (so the text still balances account by account).

    It writes as it reads, in constant memory: entries a page at a time (keyset
    on (date, id), index ``ix_journal_entries_company_date``), each page's lines in
    one statement, plain rows (no ORM objects kept by the session)."""
    if fmt == "hledger":
        fmt = "ledger"
    if fmt not in FORMATS:
        raise invalid("format", f"must be one of beancount, hledger (or ledger), got {quoted(fmt)}")
    company = await check_scope(session, company_id)
    check_period(date_from, date_to)
    currency = company.base_currency
    # Accounts hold the base and every currency the company has traded in (a
    # beancount ``open`` lists what an account may hold).
    held = ",".join([currency, *await _foreign_currencies(session, company_id)])
    accounts = {
        a.id: a
        for a in (
            await session.execute(select(Account).where(Account.company_id == company_id))
        ).scalars()
    }
    names = {a.id: account_name(a.code, a.name, a.type) for a in accounts.values() if a.is_posting}
    in_range: list[Any] = [JournalEntry.company_id == company_id]
    if date_from is not None:
        in_range.append(JournalEntry.entry_date >= date_from)
    if date_to is not None:
        in_range.append(JournalEntry.entry_date <= date_to)
    first = (
        date_from
        or (
            await session.execute(
                select(JournalEntry.entry_date)
                .where(*in_range)
                .order_by(JournalEntry.entry_date)
                .limit(1)
            )
        ).scalar_one_or_none()
        or dt.date.today()
    )
    yield f"; tillbook journal of company {company_id} ({_text(company.name)})"
    if date_from is not None or date_to is not None:
        yield f"; entries dated {iso(date_from) or 'from the first'} to {iso(date_to) or 'today'}"
    if fmt == "beancount":
        yield f'option "operating_currency" "{currency}"'
    yield ""
    for account in sorted(accounts.values(), key=lambda a: a.code):
        if not account.is_posting:
            continue
        name = names[account.id]
        if fmt == "beancount":
            yield f"{first.isoformat()} open {name} {held}"
        else:
            yield f"account {name}"
    yield ""
    if date_from is not None:
        before = await rollups.account_sums(
            session, company_id, date_to=date_from - dt.timedelta(days=1)
        )
        opening = [
            (names[account_id], found.balance)
            for account_id, found in sorted(before.items(), key=lambda kv: names[kv[0]])
            if found.balance and account_id in names
        ]
        if opening:
            if fmt == "beancount":
                yield f'{date_from.isoformat()} * "Opening balances"'
            else:
                yield f"{date_from.isoformat()} * Opening balances"
            for name, amount in opening:
                yield f"  {name}  {amount} {currency}"
            yield ""
    after: tuple[dt.date, int] | None = None
    while True:
        page = select(
            JournalEntry.id,
            JournalEntry.entry_date,
            JournalEntry.narration,
            JournalEntry.source_type,
        ).where(*in_range)
        if after is not None:
            page = page.where(
                or_(
                    JournalEntry.entry_date > after[0],
                    and_(JournalEntry.entry_date == after[0], JournalEntry.id > after[1]),
                )
            )
        entries = (
            await session.execute(
                page.order_by(JournalEntry.entry_date, JournalEntry.id).limit(EXPORT_PAGE)
            )
        ).all()
        if not entries:
            break
        lines: dict[int, list[tuple[int, str]]] = {}
        for entry_id, account_id, debit, credit, foreign_code, foreign in (
            await session.execute(
                select(
                    JournalLine.entry_id,
                    JournalLine.account_id,
                    JournalLine.debit,
                    JournalLine.credit,
                    JournalLine.currency,
                    JournalLine.amount_foreign,
                )
                .where(
                    JournalLine.company_id == company_id,
                    JournalLine.entry_id.in_([e[0] for e in entries]),
                )
                .order_by(JournalLine.entry_id, JournalLine.id)
            )
        ).all():
            amount = to_money(debit) - to_money(credit)
            lines.setdefault(entry_id, []).append(
                (account_id, posting_amount(amount, currency, foreign_code, foreign))
            )
        for entry_id, entry_date, narration_text, source_type in entries:
            narration = _text(narration_text) or source_type
            if fmt == "beancount":
                yield f'{entry_date.isoformat()} * "{narration}"'
                yield f'  entry: "{entry_id}"'
            else:
                yield f"{entry_date.isoformat()} * {narration}  ; entry:{entry_id}"
            for account_id, amount_text in lines.get(entry_id, []):
                yield f"  {names[account_id]}  {amount_text}"
            yield ""
        last = entries[-1]
        after = (last[1], last[0])
        if len(entries) < EXPORT_PAGE:
            break


def posting_amount(amount: Decimal, base: str, code: str | None, foreign: Decimal | None) -> str:
    """A posting's amount: ``12.50 USD``, or for a line of a foreign document
    ``-100.00 EUR @@ 108.50 USD`` (its foreign amount at the total base price it
    was booked at), which beancount and hledger weigh at exactly that base amount,
    so the entry balances in both as it does in the books."""
    if code is None or foreign is None:
        return f"{amount} {base}"
    signed = -to_money(foreign) if amount < 0 else to_money(foreign)
    return f"{signed} {code} @@ {abs(amount)} {base}"


async def _foreign_currencies(session: AsyncSession, company_id: int) -> list[str]:
    """Every currency the company has enabled, now or before: a foreign line can
    only be in one of them (read from the few rows of ``company_currencies``, not
    from the journal)."""
    rows = await session.execute(
        select(CompanyCurrency.code)
        .where(CompanyCurrency.company_id == company_id)
        .order_by(CompanyCurrency.code)
    )
    return [code for (code,) in rows]


async def account_ledger(
    session: AsyncSession,
    company_id: int,
    code: str,
    *,
    warehouse_id: int | None = None,
    date_from: dt.date | None = None,
    date_to: dt.date | None = None,
) -> dict[str, Any]:
    """Every line of one account in the range with a running balance (debit −
    credit), all pages of ``ledgers.account_ledger_page`` in one dict: for small
    ranges and tests; the CLI and the API page."""
    first = await account_ledger_page(
        session,
        company_id,
        code,
        warehouse_id=warehouse_id,
        date_from=date_from,
        date_to=date_to,
        limit=MAX_LIMIT,
    )
    lines = list(first["lines"])
    cursor = first["next_cursor"]
    while cursor is not None:
        page = await account_ledger_page(
            session,
            company_id,
            code,
            warehouse_id=warehouse_id,
            date_from=date_from,
            date_to=date_to,
            cursor=cursor,
            limit=MAX_LIMIT,
        )
        lines += page["lines"]
        cursor = page["next_cursor"]
    return {**first, "lines": lines, "next_cursor": None}
