"""Closing and reopening a company's books, whichever door asks (CLI, admin API).

A close through day *D*:

1. in one transaction: refuses a day that has not come yet, or one on or before
   the day already closed (nothing changes); on PostgreSQL takes
   ``SHARE ROW EXCLUSIVE`` on ``journal_entries``, which waits for every write that
   has already inserted its entry (one that read the old closed day) to commit,
   and holds new entries back until this commit, after which the insert trigger
   refuses them on or before *D*; posts each year-end closing entry the close
   passes (``ledger.periods``); records the new closed day and an audit event;
2. then rolls up every whole month closed or due (``ledger.rollups.roll_up``),
   in transactions of its own, without holding back sales. If that step does not
   run (a crash), the next report, ``tillbook serve``'s background step or
   ``report check-rollups --build`` does it; reports read those months from their
   lines until then.

Reopening moves the closed day back (an audited act, meant for the owner: the
lead wires the role check) and keeps the closing entries already posted: closing
again posts what changed since. The roll-ups stay: they no longer depend on the
close (a write dated into a rolled-up month adds itself to them, ``ledger.service``).
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

from sqlalchemy import func, select, text
from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.audit.service import record
from tillbook.currency import revaluation
from tillbook.db import Database, plans_by_values
from tillbook.errors import Conflict, invalid
from tillbook.ledger import chart, periods, rollups
from tillbook.ledger.service import account_ids, post
from tillbook.models import Account, JournalEntry, LedgerPeriod
from tillbook.reports.common import check_scope
from tillbook.unit import UnitOfWork

EARLIEST = dt.date(1970, 1, 1)


def _iso(day: dt.date | None) -> str | None:
    return None if day is None else day.isoformat()


async def status(session: AsyncSession, company_id: int) -> dict[str, Any]:
    await check_scope(session, company_id)
    row = await session.get(LedgerPeriod, company_id)
    return {
        "company_id": company_id,
        "closed_through": _iso(row.closed_through) if row else None,
        "rolled_up_through": _iso(row.rolled_up_through) if row else None,
        "closed_at": row.closed_at.isoformat() if row and row.closed_at else None,
    }


def suggested_close(today: dt.date, closed_through: dt.date | None) -> dt.date | None:
    """The day the close form offers: the last day of the previous month, when
    that month is not closed yet; otherwise none (the next month to close is still
    open, and a day inside an open month is never offered: closing half a month
    is the owner's own decision, typed in)."""
    month_end = today.replace(day=1) - dt.timedelta(days=1)
    if closed_through is not None and closed_through >= month_end:
        return None
    return month_end


async def _locked_period(session: AsyncSession, company_id: int) -> LedgerPeriod:
    """The company's row, locked (one close or reopen at a time), created at the
    first close."""
    row = (
        await session.execute(
            select(LedgerPeriod).where(LedgerPeriod.company_id == company_id).with_for_update()
        )
    ).scalar_one_or_none()
    if row is None:
        # Two first closes at once: the company row is locked first so that
        # they queue here rather than race on the insert.
        await session.execute(
            text("SELECT id FROM companies WHERE id = :id FOR UPDATE")
            if session.get_bind().dialect.name == "postgresql"
            else text("SELECT id FROM companies WHERE id = :id"),
            {"id": company_id},
        )
        row = await session.get(LedgerPeriod, company_id, populate_existing=True)
        if row is None:
            row = LedgerPeriod(company_id=company_id)
            session.add(row)
            await session.flush()
    return row


async def _close(
    uow: UnitOfWork, company_id: int, through: dt.date, actor_id: int | None
) -> dict[str, Any]:
    session = uow.session
    await check_scope(session, company_id)
    await plans_by_values(session)  # (sums over years of lines)
    today = dt.date.today()
    if through > today:
        raise invalid("through", f"{through} has not ended yet; close a day up to today ({today})")
    row = await _locked_period(session, company_id)
    before = row.closed_through
    if before is not None and through == before:
        raise Conflict(f"the books are already closed through {before}; nothing was changed")
    if before is not None and through < before:
        raise Conflict(
            f"the books are closed through {before}, after {through}: a close must be later "
            "than the last one (reopen first to close an earlier day); nothing was changed"
        )
    if uow.is_postgresql:
        await session.execute(text("LOCK TABLE journal_entries IN SHARE ROW EXCLUSIVE MODE"))
    first = (
        await session.execute(
            select(func.min(JournalEntry.entry_date)).where(JournalEntry.company_id == company_id)
        )
    ).scalar_one_or_none()
    after = before if before is not None else (first or through) - dt.timedelta(days=1)
    # Open foreign invoices at the period-end rate first, so a year closed now
    # carries its unrealised exchange differences into retained earnings.
    revalued = await revaluation.revalue(uow, company_id, through, actor_id)
    closing_entries = []
    for year_end in periods.year_ends(after, through):
        closing_entries += await _close_year(uow, company_id, year_end, actor_id)
    row.closed_through = through
    row.closed_at = dt.datetime.now(dt.UTC)
    row.closed_by = actor_id
    await session.flush()
    await record(
        session,
        company_id=company_id,
        actor_id=actor_id,
        action="period.close",
        entity_type="ledger_period",
        entity_id=company_id,
        before={"closed_through": _iso(before)},
        after={
            "closed_through": through.isoformat(),
            "closing_entries": closing_entries,
            "revaluation_entries": revalued["entries"],
        },
    )
    return {
        "closed_through": through.isoformat(),
        "closing_entries": closing_entries,
        "revaluation": revalued,
    }


async def _close_year(
    uow: UnitOfWork, company_id: int, year_end: dt.date, actor_id: int | None
) -> list[int]:
    """One closing entry per warehouse (and one for lines with none) moving the
    year's income and expense balances to 31200, so each warehouse's own balance
    sheet stays whole; balances already moved by an earlier close of this year
    (before a reopening) are included, so only what changed since moves now."""
    session = uow.session
    await account_ids(session, company_id, {chart.RETAINED_EARNINGS})
    accounts = {
        a.id: a.code
        for a in (
            await session.execute(
                select(Account).where(
                    Account.company_id == company_id,
                    Account.type.in_(periods.INCOME_EXPENSE_TYPES),
                )
            )
        ).scalars()
    }
    sums = await rollups.account_sums(
        session,
        company_id,
        date_from=dt.date(year_end.year, 1, 1),
        date_to=year_end,
        account_ids=accounts,
        by_warehouse=True,
    )
    by_warehouse: dict[int, list[tuple[str, Decimal]]] = {}
    for (account_id, warehouse), amount in sorted(sums.items()):
        by_warehouse.setdefault(warehouse, []).append(
            (accounts[account_id], amount.credit - amount.debit)
        )
    entries: list[int] = []
    for warehouse, balances in sorted(by_warehouse.items()):
        figures = periods.closing_figures(balances)
        entry_id = await post(
            uow,
            company_id=company_id,
            warehouse_id=warehouse or None,
            rule="year_end_close",
            figures=figures,
            narration=f"Year-end close {year_end.year}: income and expenses to retained earnings",
            field="through",
            source_type=rollups.CLOSING_SOURCE,
            source_id=year_end.year,
            entry_date=year_end,
            created_by=actor_id,
            date_field="through",
        )
        if entry_id is not None:
            entries.append(entry_id)
    return entries


async def close(
    db: Database, company_id: int, through: dt.date, actor_id: int | None = None
) -> dict[str, Any]:
    """Close the books through ``through`` and roll up the whole months closed."""
    result = await db.unit(lambda uow: close_in(uow, company_id, through, actor_id), attempts=2)
    return {"company_id": company_id, **result, "rolled_up_through": await roll_up(db, company_id)}


async def close_in(
    uow: UnitOfWork, company_id: int, through: dt.date, actor_id: int | None
) -> dict[str, Any]:
    """The close itself, in the caller's unit of work (the back office's pages run it
    under a form's one-time token); ``roll_up`` afterwards, in its own transaction."""
    return await _close(uow, company_id, through, actor_id)


async def roll_up(db: Database, company_id: int) -> str | None:
    """Roll up the whole months closed or due so far: the day rolled up through."""
    return _iso(await rollups.roll_up(db, company_id, skip_locked=False))


async def _reopen(
    session: AsyncSession, company_id: int, through: dt.date | None, actor_id: int | None
) -> dict[str, Any]:
    await check_scope(session, company_id)
    row = await _locked_period(session, company_id)
    before = row.closed_through
    if before is None:
        raise Conflict("the books have no closed period to reopen; nothing was changed")
    if through is not None and through >= before:
        raise Conflict(
            f"the books are closed through {before}: reopening keeps an earlier day closed "
            f"(got {through}); nothing was changed"
        )
    if through is not None and through < EARLIEST:
        raise invalid("through", f"must be {EARLIEST} or later")
    row.closed_through = through
    await session.flush()
    await record(
        session,
        company_id=company_id,
        actor_id=actor_id,
        action="period.reopen",
        entity_type="ledger_period",
        entity_id=company_id,
        before={"closed_through": before.isoformat()},
        after={"closed_through": _iso(through)},
    )
    return {
        "company_id": company_id,
        "closed_through": _iso(through),
        "reopened_from": (through + dt.timedelta(days=1)).isoformat() if through else None,
        "was_closed_through": before.isoformat(),
    }


async def reopen(
    db: Database, company_id: int, through: dt.date | None, actor_id: int | None = None
) -> dict[str, Any]:
    """Reopen the books after ``through`` (None: reopen every period)."""
    return await db.write(lambda s: _reopen(s, company_id, through, actor_id))


async def reopen_in(
    session: AsyncSession, company_id: int, through: dt.date | None, actor_id: int | None
) -> dict[str, Any]:
    """The reopen in the caller's transaction (a back-office form's unit of work)."""
    return await _reopen(session, company_id, through, actor_id)


async def check(db: Database, company_id: int, *, build: bool = False) -> dict[str, Any]:
    """The roll-ups compared with the lines; ``build`` first rolls up any month
    closed or due and still missing."""
    if build:
        await rollups.roll_up(db, company_id, skip_locked=False)

    async def compare(session: AsyncSession) -> dict[str, Any]:
        await check_scope(session, company_id)
        return await rollups.check(session, company_id)

    return await db.read(compare)
