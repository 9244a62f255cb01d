"""Closed periods: the day through which a company's books are closed, the refusal
of anything dated into them, and the year-end closing entry.

Nothing can be dated on or before ``ledger_periods.closed_through``. The database
enforces it for every journal entry (a BEFORE INSERT trigger, migration
``b7c4d2e9f013``): the check rides in the insert a write already sends, so a sale
dated today costs one primary-key lookup inside that statement and no round trip,
and it reads the date as the row goes in, so a close committed in another process
a moment ago is seen (the close also waits for writes already past their insert,
``reports.periods``). ``ledger.service`` turns the trigger's refusal into a 422
naming the request's date field. Writes that post no entry (a price change, an
entry whose figures are all zero) call ``refuse_closed``, one read.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence
from decimal import Decimal

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.errors import ValidationFailed
from tillbook.models import LedgerPeriod

REFUSAL = "tillbook: period closed"
_THROUGH = re.compile(r"period closed through (\d{4}-\d{2}-\d{2})")

INCOME_EXPENSE_TYPES = ("income", "contra-income", "expense", "contra-expense")


def is_closed_refusal(exc: BaseException) -> bool:
    """The trigger's refusal, whichever layer raised it (SQLAlchemy's wrapper,
    the DB-API error, asyncpg's own exception)."""
    seen: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in seen:
        seen.append(current)
        if REFUSAL in str(current):
            return True
        current = getattr(current, "orig", None) or current.__cause__
    return False


def refused_through(exc: BaseException) -> dt.date | None:
    """The closed-through day the refusal names (PostgreSQL's message has it)."""
    match = _THROUGH.search(str(exc))
    return None if match is None else dt.date.fromisoformat(match.group(1))


def refusal(field: str, day: dt.date, closed: dt.date | None) -> ValidationFailed:
    through = f"through {closed.isoformat()}" if closed is not None else "through that day"
    return ValidationFailed(
        {
            field: [
                f"{day.isoformat()} is in a closed period (the books are closed {through}); "
                "nothing can be recorded on or before that day: date it in the open period, "
                "or ask the owner to reopen the period"
            ]
        }
    )


async def closed_through(session: AsyncSession, company_id: int) -> dt.date | None:
    return (
        await session.execute(
            select(LedgerPeriod.closed_through).where(LedgerPeriod.company_id == company_id)
        )
    ).scalar_one_or_none()


async def refuse_closed(session: AsyncSession, company_id: int, day: dt.date, field: str) -> None:
    """A 422 naming ``field`` when ``day`` is in the company's closed period: the
    guard of writes that post no journal entry."""
    closed = await closed_through(session, company_id)
    if closed is not None and day <= closed:
        raise refusal(field, day, closed)


def year_ends(after: dt.date, through: dt.date) -> list[dt.date]:
    """Every 31 December in ``(after, through]``: the fiscal year is the calendar
    year, and a close that passes a year's end closes that year."""
    return [
        dt.date(year, 12, 31)
        for year in range(after.year, through.year + 1)
        if after < dt.date(year, 12, 31) <= through
    ]


def closing_figures(
    balances: Sequence[tuple[str, Decimal]],
) -> dict[str, Decimal | Sequence[tuple[str, Decimal]]]:
    """The ``year_end_close`` rule's figures from each income and expense account's
    (code, credit − debit) for the year: the lines move every balance out, the
    net profit (Σ credit − debit) to retained earnings."""
    moved = [(code, amount) for code, amount in balances if amount != 0]
    earnings = sum((amount for _, amount in moved), Decimal("0.00"))
    return {"balances": moved, "earnings": earnings}
