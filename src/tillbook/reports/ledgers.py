"""An account's ledger and a party's statement for a date range, a page at a time.

A page is the next ``limit`` lines after a cursor, in (date, entry, line) order,
each with its running balance. The opening balance (everything before the range)
and the closing balance (everything through its end) come from the roll-ups of the
closed months and the lines of the rest (``ledger.rollups``), so neither reads
history line by line; a page reads its own lines from the entries of its dates
(index ``ix_journal_entries_company_date``). The cursor carries the position, the
running balance after it and the closing balance, so later pages read only their
lines. The cursor is signed (``kit.cursors``) for its ledger or statement, company,
warehouse and range: a client that edited the running balance would be shown books
that are not the books. ``csv_rows`` walks every page and yields CSV text as it goes, in constant
memory, for a download.
"""

from __future__ import annotations

import datetime as dt
import io
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any, Literal, get_args

from sqlalchemy import and_, func, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.config import cursor_key
from tillbook.errors import NotFound, invalid
from tillbook.kit import csvcells
from tillbook.kit.bounds import MONEY
from tillbook.kit.cursors import Scope
from tillbook.kit.money import ZERO, money_str, to_money
from tillbook.ledger import chart, rollups
from tillbook.ledger.service import account_ids
from tillbook.models import Account, JournalEntry, JournalLine, Order, User
from tillbook.reports.common import check_period, check_scope, iso

# A ledger or statement as a page of JSON or the whole range as a CSV download.
LedgerFormat = Literal["json", "csv"]
FORMATS: tuple[str, ...] = get_args(LedgerFormat)
DEFAULT_LIMIT = 100
MAX_LIMIT = 1000
CSV_PAGE = 1000
CSV_COLUMNS = (
    "date",
    "entry_id",
    "narration",
    "source_type",
    "source_id",
    "warehouse_id",
    "party_id",
    "account",
    "debit",
    "credit",
    "balance",
)

# party type -> (its control account, True when the balance is debit − credit)
CONTROL = {"customer": (chart.RECEIVABLE, True), "supplier": (chart.PAYABLE, False)}


@dataclass(frozen=True)
class Cursor:
    day: dt.date
    entry_id: int
    line_id: int
    running: Decimal
    closing: Decimal

    def encode(self, scope: Scope) -> str:
        raw = json.dumps(
            [
                self.day.isoformat(),
                self.entry_id,
                self.line_id,
                str(self.running),
                str(self.closing),
            ]
        )
        return scope.seal(raw.encode())

    @staticmethod
    def decode(text: str, scope: Scope, field: str = "cursor") -> Cursor:
        position = scope.open(text, field)
        try:
            day, entry_id, line_id, running, closing = json.loads(position)
            # A cursor this report gave holds BIGINT ids and balances the books can
            # hold; checked though signed, so a bad one is never a 500.
            ids = (entry_id, line_id)
            if any(type(i) is not int or not 0 <= i < 2**63 for i in ids):
                raise ValueError(ids)
            balances = (Decimal(running), Decimal(closing))
            if not all(b.is_finite() and MONEY.holds(b) for b in balances):
                raise ValueError(balances)
            return Cursor(dt.date.fromisoformat(day), entry_id, line_id, *balances)
        except (
            ValueError,
            TypeError,
            OverflowError,
            InvalidOperation,
            UnicodeError,
        ):
            raise invalid(field, "is not a cursor this report gave") from None


def parse_limit(limit: int | None) -> int:
    if limit is None:
        return DEFAULT_LIMIT
    if limit < 1 or limit > MAX_LIMIT:
        raise invalid("limit", f"must be 1 to {MAX_LIMIT}, got {limit}")
    return limit


@dataclass(frozen=True)
class _Scope:
    """What a ledger or statement reads: the line filter and the sign of its
    balance (1: debit − credit, -1: credit − debit)."""

    company_id: int
    conditions: tuple[Any, ...]
    sign: int
    opening: Callable[[dt.date], Awaitable[Decimal]]  # balance before a day
    through: Callable[[dt.date | None], Awaitable[Decimal]]  # balance through a day


def _signing(kind: str, *parts: int | str | dt.date | None) -> Scope:
    """The scope a ledger's or statement's cursor is signed for: the report, what it
    is of, the company, the warehouse and the range (the cursor carries the range's
    closing balance)."""
    texts = [p.isoformat() if isinstance(p, dt.date) else p for p in parts]
    return Scope(cursor_key(), (kind, *texts))


async def _page(
    session: AsyncSession,
    scope: _Scope,
    date_from: dt.date | None,
    date_to: dt.date | None,
    cursor: Cursor | None,
    limit: int,
    accounts: dict[int, str],
    signing: Scope,
) -> dict[str, Any]:
    if cursor is None:
        opening = ZERO if date_from is None else await scope.opening(date_from)
        closing = await scope.through(date_to)
        running = opening
    else:
        opening = None
        closing = cursor.closing
        running = cursor.running
    conditions = [JournalEntry.company_id == scope.company_id, *scope.conditions]
    if date_from is not None:
        conditions.append(JournalEntry.entry_date >= date_from)
    if date_to is not None:
        conditions.append(JournalEntry.entry_date <= date_to)
    if cursor is not None:
        conditions.append(
            or_(
                JournalEntry.entry_date > cursor.day,
                and_(JournalEntry.entry_date == cursor.day, JournalEntry.id > cursor.entry_id),
                and_(
                    JournalEntry.entry_date == cursor.day,
                    JournalEntry.id == cursor.entry_id,
                    JournalLine.id > cursor.line_id,
                ),
            )
        )
    rows = (
        await session.execute(
            select(
                JournalEntry.entry_date,
                JournalEntry.id,
                JournalEntry.narration,
                JournalEntry.source_type,
                JournalEntry.source_id,
                JournalLine.id,
                JournalLine.warehouse_id,
                JournalLine.party_id,
                JournalLine.account_id,
                JournalLine.debit,
                JournalLine.credit,
                JournalLine.currency,
                JournalLine.amount_foreign,
                JournalLine.rate,
            )
            .join(
                JournalLine,
                (JournalLine.entry_id == JournalEntry.id)
                & (JournalLine.company_id == JournalEntry.company_id),
            )
            .where(*conditions)
            .order_by(JournalEntry.entry_date, JournalEntry.id, JournalLine.id)
            .limit(limit + 1)
        )
    ).all()
    more = len(rows) > limit
    lines: list[dict[str, Any]] = []
    last: Cursor | None = None
    for row in rows[:limit]:
        day, entry_id, narration, source_type, source_id, line_id = row[:6]
        warehouse_id, party_id, account_id, debit, credit, code, foreign, rate = row[6:]
        dr, cr = to_money(debit), to_money(credit)
        running += (dr - cr) * scope.sign
        # A line of a foreign document also says what it was in that currency
        # (DESIGN §16: statements in both); base lines keep v1's shape.
        in_currency = (
            {}
            if code is None or foreign is None
            else {"currency": code, "amount_foreign": money_str(foreign), "rate": str(rate)}
        )
        lines.append(
            {
                **in_currency,
                "date": day.isoformat(),
                "entry_id": entry_id,
                "line_id": line_id,
                "narration": narration,
                "source_type": source_type,
                "source_id": source_id,
                "warehouse_id": warehouse_id,
                "party_id": party_id,
                "account": accounts.get(account_id, str(account_id)),
                "debit": money_str(dr),
                "credit": money_str(cr),
                "balance": money_str(running),
            }
        )
        last = Cursor(day, entry_id, line_id, running, closing)
    return {
        "date_from": iso(date_from),
        "date_to": iso(date_to),
        "opening_balance": None if opening is None else money_str(opening),
        "closing_balance": money_str(closing),
        "lines": lines,
        "next_cursor": last.encode(signing) if more and last is not None else None,
    }


async def _account_scope(
    session: AsyncSession, company_id: int, code: str, warehouse_id: int | None
) -> tuple[Account, _Scope]:
    account = (
        await session.execute(
            select(Account).where(Account.company_id == company_id, Account.code == code)
        )
    ).scalar_one_or_none()
    if account is None or not account.is_posting:
        raise NotFound(f"account {code} not found")
    conditions: list[Any] = [JournalLine.account_id == account.id]
    if warehouse_id is not None:
        conditions.append(JournalLine.warehouse_id == warehouse_id)

    async def balance(date_to: dt.date | None) -> Decimal:
        sums = await rollups.account_sums(
            session,
            company_id,
            date_to=date_to,
            warehouse_id=warehouse_id,
            account_ids=[account.id],
        )
        found = sums.get(account.id)
        return ZERO if found is None else found.balance

    async def opening(day: dt.date) -> Decimal:
        return await balance(day - dt.timedelta(days=1))

    return account, _Scope(company_id, tuple(conditions), 1, opening, balance)


async def account_ledger_page(
    session: AsyncSession,
    company_id: int,
    code: str,
    *,
    warehouse_id: int | None = None,
    date_from: dt.date | None = None,
    date_to: dt.date | None = None,
    cursor: str | None = None,
    limit: int | None = None,
) -> dict[str, Any]:
    """One page of an account's ledger: ``{"company_id", "account", "warehouse_id",
    "date_from", "date_to", "opening_balance" (first page), "closing_balance",
    "lines": [{"date", "entry_id", "line_id", "narration", ..., "debit", "credit",
    "balance"}], "next_cursor"}``; balances are debit − credit."""
    await check_scope(session, company_id, warehouse_id)
    check_period(date_from, date_to)
    size = parse_limit(limit)
    signing = _signing("ledger", company_id, code, warehouse_id, date_from, date_to)
    position = None if cursor is None else Cursor.decode(cursor, signing)
    account, scope = await _account_scope(session, company_id, code, warehouse_id)
    page = await _page(
        session, scope, date_from, date_to, position, size, {account.id: account.code}, signing
    )
    return {
        "company_id": company_id,
        "account": {"code": account.code, "name": account.name, "type": account.type},
        "warehouse_id": warehouse_id,
        **page,
    }


async def _party_scope(
    session: AsyncSession, company_id: int, party_id: int, warehouse_id: int | None
) -> tuple[User, str, _Scope]:
    party = await session.scalar(
        select(User).where(User.company_id == company_id, User.id == party_id)
    )
    if party is None or party.user_type not in CONTROL:
        raise NotFound(f"party {party_id} not found")
    code, debit_normal = CONTROL[party.user_type]
    ids = await account_ids(session, company_id, {code})
    account_id = ids[code]
    sign = 1 if debit_normal else -1
    conditions: list[Any] = [JournalLine.party_id == party.id, JournalLine.account_id == account_id]
    if warehouse_id is not None:
        conditions.append(JournalLine.warehouse_id == warehouse_id)

    async def balance(date_to: dt.date | None) -> Decimal:
        sums = await rollups.party_sums(
            session,
            company_id,
            [party.id],
            account_ids=[account_id],
            date_to=date_to,
            warehouse_id=warehouse_id,
        )
        found = sums.get((party.id, account_id))
        return ZERO if found is None else found.balance * sign

    async def opening(day: dt.date) -> Decimal:
        return await balance(day - dt.timedelta(days=1))

    return party, code, _Scope(company_id, tuple(conditions), sign, opening, balance)


async def party_statement_page(
    session: AsyncSession,
    company_id: int,
    party_id: int,
    *,
    warehouse_id: int | None = None,
    date_from: dt.date | None = None,
    date_to: dt.date | None = None,
    cursor: str | None = None,
    limit: int | None = None,
) -> dict[str, Any]:
    """One page of a customer's (11500: what they owe) or a supplier's (21100:
    what is owed to them) statement, shaped like ``account_ledger_page`` with
    ``party`` instead of ``account``."""
    await check_scope(session, company_id, warehouse_id)
    check_period(date_from, date_to)
    size = parse_limit(limit)
    signing = _signing("statement", company_id, party_id, warehouse_id, date_from, date_to)
    position = None if cursor is None else Cursor.decode(cursor, signing)
    party, code, scope = await _party_scope(session, company_id, party_id, warehouse_id)
    ids = await account_ids(session, company_id, {code})
    page = await _page(
        session, scope, date_from, date_to, position, size, {ids[code]: code}, signing
    )
    return {
        "company_id": company_id,
        "party": {"id": party.id, "name": party.name, "type": party.user_type, "account": code},
        "warehouse_id": warehouse_id,
        **page,
        **await _open_in_currencies(session, company_id, party.id, warehouse_id),
    }


async def _open_in_currencies(
    session: AsyncSession, company_id: int, party_id: int, warehouse_id: int | None
) -> dict[str, Any]:
    """What the party's open foreign invoices come to, per currency: due in that
    currency and carried in the base (DESIGN §16: balances per currency and in the
    base). Nothing for a party with none, so a base-only statement keeps v1's shape."""
    conditions: list[Any] = [
        Order.company_id == company_id,
        Order.user_id == party_id,
        Order.currency.is_not(None),
        Order.order_type.in_(("sales", "purchases")),
        Order.due_amount > 0,
    ]
    if warehouse_id is not None:
        conditions.append(Order.warehouse_id == warehouse_id)
    rows = (
        await session.execute(
            select(Order.currency, func.sum(Order.due_amount), func.sum(Order.base_due))
            .where(*conditions)
            .group_by(Order.currency)
            .order_by(Order.currency)
        )
    ).all()
    if not rows:
        return {}
    return {
        "open_by_currency": [
            {"currency": code, "due": money_str(due), "base_carried": money_str(carried or ZERO)}
            for code, due, carried in rows
        ]
    }


PageReader = Callable[[str | None], Awaitable[dict[str, Any]]]


async def csv_rows(read_page: PageReader) -> AsyncIterator[str]:
    """CSV text of every page ``read_page(cursor)`` gives, a page at a time: a
    header, an opening line, the lines with their running balance, a closing line."""
    buffer = io.StringIO()
    writer = csvcells.writer(buffer, lineterminator="\n")

    def flush() -> str:
        text = buffer.getvalue()
        buffer.seek(0)
        buffer.truncate()
        return text

    page = await read_page(None)
    writer.writerow(CSV_COLUMNS)
    writer.writerow(_summary_row(page["date_from"], "Opening balance", page["opening_balance"]))
    closing = page["closing_balance"]
    while True:
        for line in page["lines"]:
            writer.writerow([line[c] if line[c] is not None else "" for c in CSV_COLUMNS])
        yield flush()
        if page["next_cursor"] is None:
            break
        page = await read_page(page["next_cursor"])
    writer.writerow(_summary_row(page["date_to"], "Closing balance", closing))
    yield flush()


def _summary_row(day: str | None, label: str, balance: str | None) -> list[str]:
    row = dict.fromkeys(CSV_COLUMNS, "")
    row.update(date=day or "", narration=label, balance=balance or "")
    return list(row.values())
