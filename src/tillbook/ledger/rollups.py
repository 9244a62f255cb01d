"""Balances per account (and party), warehouse and past month: what the reports
read instead of the whole journal.

A sale writes no balance row: the journal is append-only, and the months behind
us are rolled up from their lines in short transactions of one month each
(``roll_up``), whether or not anyone closes them: by the first report that
finds a month missing (``current``), by ``tillbook serve``'s background step
(``keep_rolled_up``), and by a close. A month is due once it has ended and a whole
day has passed (``due_through``), so no sale dated in it can still be on its way.

A back-dated entry (dated before the current month, rare) can land in a month
already rolled up: ``ledger.service`` then adds its lines to that month's rows in
the entry's own transaction (``hold_for_entry``, ``add_entry``), so the roll-ups
stay equal to their lines. A sale dated this month (the hot path) reads and locks
nothing for it: no build ever covers the current month.

How a build and a back-dated write cannot miss or double count each other on
PostgreSQL: the build holds the company's ``ledger_periods`` row ``FOR UPDATE``
from before it reads the lines until it commits the new ``rolled_up_through``; a
back-dated write takes the same row ``FOR SHARE`` before it inserts its entry and
reads ``rolled_up_through`` under that lock. A writer that locked first commits
before the build reads (the build counts its lines, the writer added nothing);
one that comes later waits for the build's commit, then sees the month rolled up
and adds its lines. SQLite has one writer at a time, so the two never overlap.

A report's sums for a date range are the roll-ups of the whole rolled-up months
inside the range plus the lines of the days around them: the edges of the range
that are not whole months, and the days after the last rolled-up month. The cost
follows the number of accounts and months and the length of the current month,
not the age of the shop. ``check`` recomputes every roll-up from the lines.

Warehouse 0 in a roll-up stands for lines with no warehouse (company-level
entries, such as a year-end close posted for them).
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from functools import partial
from typing import Any

from sqlalchemy import (
    Date,
    and_,
    cast,
    func,
    insert,
    literal,
    literal_column,
    or_,
    select,
    text,
    update,
)
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.db import DATABASE, Database, cross_tenant, in_write_unit, plans_by_values
from tillbook.errors import Conflict, ServiceUnavailable
from tillbook.kit import generations
from tillbook.kit.money import ZERO, to_money
from tillbook.models import (
    Company,
    JournalEntry,
    JournalLine,
    LedgerPeriod,
    LedgerRollup,
    PartyRollup,
)

log = logging.getLogger("tillbook.ledger.rollups")

CLOSING_SOURCE = "year_end_close"

# An account id, or a tuple: (account id, warehouse key) with ``by_warehouse``, and
# the month's first day after them with ``by_month``.
Key = Any


@dataclass
class Sum:
    debit: Decimal = ZERO
    credit: Decimal = ZERO

    def add(self, debit: Any, credit: Any) -> None:
        self.debit += to_money(debit)
        self.credit += to_money(credit)

    @property
    def balance(self) -> Decimal:
        """Debit minus credit."""
        return self.debit - self.credit


def month_start(day: dt.date) -> dt.date:
    return day.replace(day=1)


def next_month(day: dt.date) -> dt.date:
    first = day.replace(day=1)
    return (
        first.replace(year=first.year + 1, month=1)
        if first.month == 12
        else first.replace(month=first.month + 1)
    )


def month_end(day: dt.date) -> dt.date:
    return next_month(day) - dt.timedelta(days=1)


def last_whole_month_end(day: dt.date) -> dt.date | None:
    """The last day of the last month that ends on or before ``day``."""
    end = month_end(day)
    if end == day:
        return day
    previous = month_start(day) - dt.timedelta(days=1)
    return previous if previous.year >= 1 else None


@dataclass(frozen=True)
class Plan:
    """How a date range is read: roll-up months ``first_month``..``last_month``
    (period starts; ``first_month`` None: from the first), or none when
    ``last_month`` is None; and the day ranges read from the lines."""

    first_month: dt.date | None
    last_month: dt.date | None
    live: tuple[tuple[dt.date | None, dt.date | None], ...]


def plan(date_from: dt.date | None, date_to: dt.date | None, rolled: dt.date | None) -> Plan:
    """Split ``date_from``..``date_to`` (None: open ended) into whole rolled-up
    months and the days around them."""
    everything = Plan(None, None, ((date_from, date_to),))
    if rolled is None:
        return everything
    first = None if date_from is None or date_from.day == 1 else next_month(date_from)
    if date_from is not None and first is None:
        first = date_from
    end = rolled if date_to is None else min(date_to, rolled)
    last_end = last_whole_month_end(end)
    if last_end is None:
        return everything
    last = month_start(last_end)
    if first is not None and first > last:
        return everything
    live: list[tuple[dt.date | None, dt.date | None]] = []
    if date_from is not None and first is not None and date_from < first:
        live.append((date_from, first - dt.timedelta(days=1)))
    if date_to is None or date_to > last_end:
        live.append((last_end + dt.timedelta(days=1), date_to))
    return Plan(first, last, tuple(live))


async def rolled_up_through(session: AsyncSession, company_id: int) -> dt.date | None:
    return (
        await session.execute(
            select(LedgerPeriod.rolled_up_through).where(LedgerPeriod.company_id == company_id)
        )
    ).scalar_one_or_none()


def _date_filter(ranges: Sequence[tuple[dt.date | None, dt.date | None]]) -> Any:
    parts = []
    for start, end in ranges:
        conditions = []
        if start is not None:
            conditions.append(JournalEntry.entry_date >= start)
        if end is not None:
            conditions.append(JournalEntry.entry_date <= end)
        parts.append(and_(literal(True), *conditions))
    return or_(*parts)


def _wh_key(column: Any) -> Any:
    return func.coalesce(column, 0)


async def account_sums(
    session: AsyncSession,
    company_id: int,
    *,
    date_from: dt.date | None = None,
    date_to: dt.date | None = None,
    warehouse_id: int | None = None,
    account_ids: Iterable[int] | None = None,
    with_closing: bool = True,
    by_warehouse: bool = False,
    by_month: bool = False,
) -> dict[Key, Sum]:
    """Σ debit and Σ credit of the company's lines dated in the range, per account
    (per (account, warehouse key) with ``by_warehouse``, and per calendar month
    with ``by_month``: a chart's months in one read of each source, not one read
    of both per month); ``with_closing=False`` leaves year-end closing entries out
    (profit and loss)."""
    if date_from is not None and date_to is not None and date_from > date_to:
        return {}
    rolled = await current(session, company_id)
    how = plan(date_from, date_to, rolled)
    wanted = None if account_ids is None else sorted(set(account_ids))
    out: dict[Key, Sum] = {}

    if how.last_month is not None:
        r = LedgerRollup
        keys: list[Any] = [r.account_id] + ([r.warehouse_id] if by_warehouse else [])
        keys += [r.period] if by_month else []
        query = select(*keys, func.sum(r.debit), func.sum(r.credit)).where(
            r.company_id == company_id, r.period <= how.last_month
        )
        if how.first_month is not None:
            query = query.where(r.period >= how.first_month)
        if warehouse_id is not None:
            query = query.where(r.warehouse_id == warehouse_id)
        if wanted is not None:
            query = query.where(r.account_id.in_(wanted))
        if not with_closing:
            query = query.where(r.closing.is_(False))
        for row in (await session.execute(query.group_by(*keys))).all():
            out.setdefault(_key(row, len(keys)), Sum()).add(row[-2], row[-1])

    if how.live:
        line = JournalLine
        wh = _wh_key(line.warehouse_id)
        keys = [line.account_id] + ([wh] if by_warehouse else [])
        # by day, folded into months here: grouping by the entry's date costs
        # PostgreSQL a third less than by a month computed from it on every line
        keys += [JournalEntry.entry_date] if by_month else []
        query = (
            select(*keys, func.sum(line.debit), func.sum(line.credit))
            .join(
                JournalEntry,
                (JournalEntry.id == line.entry_id) & (JournalEntry.company_id == line.company_id),
            )
            .where(
                JournalEntry.company_id == company_id,
                line.company_id == company_id,
                _date_filter(how.live),
            )
        )
        if warehouse_id is not None:
            query = query.where(line.warehouse_id == warehouse_id)
        if wanted is not None:
            query = query.where(line.account_id.in_(wanted))
        if not with_closing:
            query = query.where(JournalEntry.source_type != CLOSING_SOURCE)
        for row in (await session.execute(query.group_by(*keys))).all():
            out.setdefault(_key(row, len(keys)), Sum()).add(row[-2], row[-1])
    return out


def _key(row: Any, width: int) -> Key:
    """A grouped row's key: the account id alone, or the tuple of the group's
    columns, a date among them as the first day of its month (whichever database
    grouped it, and whether by month or by day)."""
    if width == 1:
        return row[0]
    return tuple(month_start(_day(v)) if isinstance(v, str | dt.date) else v for v in row[:width])


async def party_sums(
    session: AsyncSession,
    company_id: int,
    party_ids: Iterable[int],
    *,
    account_ids: Iterable[int],
    date_from: dt.date | None = None,
    date_to: dt.date | None = None,
    warehouse_id: int | None = None,
) -> dict[tuple[int, int], Sum]:
    """Σ debit and Σ credit per (party, account) of the parties' lines on
    ``account_ids`` dated in the range."""
    parties = sorted(set(party_ids))
    accounts = sorted(set(account_ids))
    out: dict[tuple[int, int], Sum] = {}
    if not parties or not accounts:
        return out
    if date_from is not None and date_to is not None and date_from > date_to:
        return out
    how = plan(date_from, date_to, await current(session, company_id))
    if how.last_month is not None:
        r = PartyRollup
        query = select(r.party_id, r.account_id, func.sum(r.debit), func.sum(r.credit)).where(
            r.company_id == company_id,
            r.party_id.in_(parties),
            r.account_id.in_(accounts),
            r.period <= how.last_month,
        )
        if how.first_month is not None:
            query = query.where(r.period >= how.first_month)
        if warehouse_id is not None:
            query = query.where(r.warehouse_id == warehouse_id)
        for party, account, debit, credit in (
            await session.execute(query.group_by(r.party_id, r.account_id))
        ).all():
            out.setdefault((party, account), Sum()).add(debit, credit)
    if how.live:
        line = JournalLine
        live = (
            select(line.party_id, line.account_id, func.sum(line.debit), func.sum(line.credit))
            .join(
                JournalEntry,
                (JournalEntry.id == line.entry_id) & (JournalEntry.company_id == line.company_id),
            )
            .where(
                line.company_id == company_id,
                line.party_id.in_(parties),
                line.account_id.in_(accounts),
                _date_filter(how.live),
            )
        )
        if warehouse_id is not None:
            live = live.where(line.warehouse_id == warehouse_id)
        for lparty, laccount, ldebit, lcredit in (
            await session.execute(live.group_by(line.party_id, line.account_id))
        ).all():
            if lparty is not None:
                out.setdefault((lparty, laccount), Sum()).add(ldebit, lcredit)
    return out


# ------------------------------------------------------------------ building


# Constants of grouped statements are written inline: PostgreSQL compares GROUP BY
# expressions by their text, and two bound parameters are two different texts.
_CLOSING: Any = literal_column(f"'{CLOSING_SOURCE}'")


def _month_of(session: AsyncSession, column: Any) -> Any:
    if session.get_bind().dialect.name == "postgresql":
        return cast(func.date_trunc(literal_column("'month'"), column), Date)
    return func.date(column, literal_column("'start of month'"))


def _account_groups(session: AsyncSession, company_id: int, after: Any, through: Any) -> Any:
    month = _month_of(session, JournalEntry.entry_date)
    wh = _wh_key(JournalLine.warehouse_id)
    closing = JournalEntry.source_type == _CLOSING
    query = (
        select(
            literal_column(str(int(company_id))).label("company_id"),
            month.label("period"),
            JournalLine.account_id,
            wh.label("warehouse_id"),
            closing.label("closing"),
            func.sum(JournalLine.debit).label("debit"),
            func.sum(JournalLine.credit).label("credit"),
            func.count().label("lines"),
        )
        .join(
            JournalEntry,
            (JournalEntry.id == JournalLine.entry_id)
            & (JournalEntry.company_id == JournalLine.company_id),
        )
        .where(JournalEntry.company_id == company_id, JournalEntry.entry_date <= through)
        .group_by(month, JournalLine.account_id, wh, closing)
    )
    if after is not None:
        query = query.where(JournalEntry.entry_date > after)
    return query


def _party_groups(session: AsyncSession, company_id: int, after: Any, through: Any) -> Any:
    month = _month_of(session, JournalEntry.entry_date)
    wh = _wh_key(JournalLine.warehouse_id)
    query = (
        select(
            literal_column(str(int(company_id))).label("company_id"),
            JournalLine.party_id,
            month.label("period"),
            JournalLine.account_id,
            wh.label("warehouse_id"),
            func.sum(JournalLine.debit).label("debit"),
            func.sum(JournalLine.credit).label("credit"),
        )
        .join(
            JournalEntry,
            (JournalEntry.id == JournalLine.entry_id)
            & (JournalEntry.company_id == JournalLine.company_id),
        )
        .where(JournalEntry.company_id == company_id, JournalEntry.entry_date <= through)
        .group_by(JournalLine.party_id, month, JournalLine.account_id, wh)
    )
    if after is None:
        return query.where(JournalLine.party_id.is_not(None))
    # A few months: read from the entries of those days, not through the party
    # index, which holds every party line of history (a month's build would read
    # them all: 0.75 s a month at 1,000,000 sales, against 0.16 s). The index cannot serve
    # a test on an expression.
    return query.where(JournalEntry.entry_date > after, func.coalesce(JournalLine.party_id, 0) != 0)


@dataclass(frozen=True)
class Step:
    """What one build transaction left: the day rolled up through, and whether
    due months remain (built by the next step, in a transaction of its own)."""

    rolled_up_through: dt.date | None
    more: bool = False


async def build(
    session: AsyncSession,
    company_id: int,
    *,
    today: dt.date | None = None,
    months: int | None = None,
    skip_locked: bool = False,
) -> Step:
    """Roll up, in the caller's transaction, the whole months that are due (and
    every whole month closed) not yet rolled up, at most ``months`` of them
    (None: all; the first build takes all). ``skip_locked``: when another
    build, a close or a back-dated write holds the company's period row, build
    nothing now rather than wait. ``today``: the clock's day (tests)."""
    row = await _locked_period(session, company_id, skip_locked)
    if row is None:
        return Step(await rolled_up_through(session, company_id))
    await plans_by_values(session)  # (sums over a month of lines)
    closed, done = row
    target = _target(closed, dt.date.today() if today is None else today)
    if target is None or (done is not None and done >= target):
        return Step(done)
    if not await _no_old_writers(session):
        return Step(done)
    if done is None:
        first = (
            await session.execute(
                select(func.min(JournalEntry.entry_date)).where(
                    JournalEntry.company_id == company_id
                )
            )
        ).scalar_one_or_none()
        first_month = None if first is None else month_start(_day(first))
    else:
        first_month = next_month(done)
    through = target
    # The first build reads the whole history in one pass (one hash join: a
    # month at a time would probe the lines' index month after month, several
    # times slower); later ones are a month or two.
    if months is not None and first_month is not None and done is not None:
        last = first_month
        for _ in range(months - 1):
            last = next_month(last)
        through = min(target, month_end(last))
    if first_month is not None and first_month <= through:
        await _insert_groups(session, company_id, done, through)
    await session.execute(
        update(LedgerPeriod)
        .where(LedgerPeriod.company_id == company_id)
        .values(rolled_up_through=through)
    )
    return Step(through, more=through < target)


# A month is due from the second day after it: a whole day after its end.
SETTLE = dt.timedelta(days=2)


def _target(closed: dt.date | None, today: dt.date) -> dt.date | None:
    """The last day the roll-ups should reach: every month due by the clock, and
    every whole month closed (a close refuses lines dated in them at once)."""
    days = [d for d in (due_through(today), closed and last_whole_month_end(closed)) if d]
    return max(days) if days else None


def due_through(today: dt.date) -> dt.date | None:
    """The last day of the last month due for a roll-up without a close: a month
    that ended at least a whole day ago. A sale takes today's date and locks
    nothing for the roll-ups (``ledger.service``), so one dated on a month's last
    day could still be committing just after midnight; a day later none can
    (``_no_old_writers`` checks it on PostgreSQL)."""
    return last_whole_month_end(today - SETTLE)


def may_be_rolled_up(entry_date: dt.date, today: dt.date | None = None) -> bool:
    """Whether an entry dated ``entry_date`` can fall into a month that is or is
    being rolled up: any day before the current month. Every other entry (a sale
    dated today) leaves the roll-ups alone without reading them."""
    return entry_date < month_start(dt.date.today() if today is None else today)


async def _locked_period(
    session: AsyncSession, company_id: int, skip_locked: bool
) -> tuple[dt.date | None, dt.date | None] | None:
    """(closed_through, rolled_up_through) of the company's period row, locked
    ``FOR UPDATE``, the row created first if it is missing (a company that never
    closed); None when ``skip_locked`` and someone holds it, or when there is no
    such company."""
    await _ensure_period(session, company_id)
    row = (
        await session.execute(
            select(LedgerPeriod.closed_through, LedgerPeriod.rolled_up_through)
            .where(LedgerPeriod.company_id == company_id)
            .with_for_update(skip_locked=skip_locked)
        )
    ).first()
    return None if row is None else (_opt_day(row[0]), _opt_day(row[1]))


async def _ensure_period(session: AsyncSession, company_id: int) -> None:
    """The company's ``ledger_periods`` row, inserted if missing (nothing closed,
    nothing rolled up): the row a build and a back-dated write lock. No row for a
    company that does not exist."""
    await session.execute(
        _dialect_insert(session, LedgerPeriod)
        .from_select(["company_id"], select(Company.id).where(Company.id == company_id))
        .on_conflict_do_nothing(index_elements=["company_id"])
    )


async def _no_old_writers(session: AsyncSession) -> bool:
    """False while another PostgreSQL transaction that has written has been open
    for more than half a day: it could be a sale that took the last day of a month
    now due and has not committed (``due_through``); the build waits for it (the
    reports read those months from their lines meanwhile)."""
    if session.get_bind().dialect.name != "postgresql":
        return True
    old = (
        await session.execute(
            text(
                "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
                "AND pid <> pg_backend_pid() AND backend_xid IS NOT NULL "
                "AND xact_start < now() - interval '12 hours' LIMIT 1"
            )
        )
    ).first()
    if old is not None:
        log.warning("roll-ups wait: transaction of backend %s has been open over 12 hours", old[0])
    return old is None


async def _insert_groups(
    session: AsyncSession, company_id: int, after: dt.date | None, through: dt.date
) -> None:
    account_rows = _account_groups(session, company_id, after, through)
    await session.execute(
        insert(LedgerRollup).from_select(
            [
                "company_id",
                "period",
                "account_id",
                "warehouse_id",
                "closing",
                "debit",
                "credit",
                "lines",
            ],
            account_rows,
        )
    )
    party_rows = _party_groups(session, company_id, after, through)
    await session.execute(
        insert(PartyRollup).from_select(
            ["company_id", "party_id", "period", "account_id", "warehouse_id", "debit", "credit"],
            party_rows,
        )
    )


async def roll_up(db: Database, company_id: int, *, skip_locked: bool = True) -> dt.date | None:
    """Roll up every due month, one month per transaction after the first build
    (a back-dated write waits on the company's period row for one month's build
    at most; the first build, of the whole history, in one): the day rolled up
    through."""
    while True:
        step = await db.write(
            lambda s: build(s, company_id, months=1, skip_locked=skip_locked), attempts=2
        )
        if not step.more:
            return step.rolled_up_through


async def current(session: AsyncSession, company_id: int) -> dt.date | None:
    """``rolled_up_through`` for a report: when months are due and not rolled up,
    the first report to see it rolls them up first, in transactions of its own
    (``roll_up``), then reads the day again in its own transaction (which, on
    SQLite, may still see the day before: its lines are read instead, which is as
    exact). Inside a write, or when the build cannot run now, the lines are read."""
    rolled = await rolled_up_through(session, company_id)
    due = due_through(dt.date.today())
    if due is None or (rolled is not None and rolled >= due):
        return rolled
    db = session.info.get(DATABASE)
    if not isinstance(db, Database) or in_write_unit():
        return rolled
    try:
        await roll_up(db, company_id)
    except (Conflict, ServiceUnavailable) as exc:
        log.warning("roll-up of company %s put off: %s", company_id, exc)
        return rolled
    return await rolled_up_through(session, company_id)


async def keep_rolled_up(db: Database, stop: asyncio.Event, every_s: float) -> None:
    """``tillbook serve``'s background step: every ``every_s`` seconds (and at the
    start), roll up the due months of every company behind, so that the reports
    rarely pay for it. Several processes may run it: a company's build skips a
    period row another holds."""
    while not stop.is_set():
        try:
            due = due_through(dt.date.today())
            if due is not None:
                with cross_tenant("roll-ups"):
                    behind = await db.read(partial(_behind, due=due))
                for company_id in behind:
                    if stop.is_set():
                        break
                    with generations.unseen_writes():  # in no answer a worker keeps
                        await roll_up(db, company_id)
        except Exception:
            log.exception("roll-up pass failed")
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), every_s)


async def _behind(session: AsyncSession, due: dt.date) -> list[int]:
    """The companies whose roll-ups stop before ``due``."""
    rows = await session.execute(
        select(Company.id)
        .outerjoin(LedgerPeriod, LedgerPeriod.company_id == Company.id)
        .where(or_(LedgerPeriod.rolled_up_through.is_(None), LedgerPeriod.rolled_up_through < due))
        .order_by(Company.id)
    )
    return [r[0] for r in rows.all()]


# ------------------------------------------------------------------ back-dated entries


async def hold_for_entry(session: AsyncSession, company_id: int) -> dt.date | None:
    """Before a back-dated entry is inserted: the company's period row locked
    ``FOR SHARE`` (created if missing) and ``rolled_up_through`` read under the
    lock, which a build holds ``FOR UPDATE`` until its commit. Taken before the
    entry's insert: a close takes the row, then a table lock that waits for
    inserted entries, so the other order could deadlock with it."""
    query = (
        select(LedgerPeriod.rolled_up_through)
        .where(LedgerPeriod.company_id == company_id)
        .with_for_update(read=True)
    )
    row = (await session.execute(query)).first()
    if row is None:
        await _ensure_period(session, company_id)
        row = (await session.execute(query)).first()
    return None if row is None else _opt_day(row[0])


async def add_entry(
    session: AsyncSession,
    company_id: int,
    *,
    warehouse_id: int | None,
    entry_date: dt.date,
    source_type: str,
    lines: Sequence[Mapping[str, Any]],
) -> None:
    """Add one entry's lines (each: account_id, party_id, debit, credit) to the
    roll-ups of its month, an increment of each row (inserted when new): called
    in the entry's transaction when that month is already rolled up. Rows are
    written in key order, so two such writers lock them in the same order."""
    period = month_start(entry_date)
    wh = warehouse_id or 0
    closing = source_type == CLOSING_SOURCE
    accounts: dict[int, list[Any]] = {}
    parties: dict[tuple[int, int], list[Any]] = {}
    for line in lines:
        debit, credit = to_money(line["debit"]), to_money(line["credit"])
        total = accounts.setdefault(line["account_id"], [ZERO, ZERO, 0])
        total[0] += debit
        total[1] += credit
        total[2] += 1
        if line["party_id"] is not None:
            party = parties.setdefault((line["party_id"], line["account_id"]), [ZERO, ZERO])
            party[0] += debit
            party[1] += credit
    if accounts:
        await session.execute(
            _increment(
                session,
                LedgerRollup,
                ["company_id", "period", "account_id", "warehouse_id", "closing"],
                ["debit", "credit", "lines"],
            ),
            [
                {
                    "company_id": company_id,
                    "period": period,
                    "account_id": account,
                    "warehouse_id": wh,
                    "closing": closing,
                    "debit": debit,
                    "credit": credit,
                    "lines": count,
                }
                for account, (debit, credit, count) in sorted(accounts.items())
            ],
        )
    if parties:
        await session.execute(
            _increment(
                session,
                PartyRollup,
                ["company_id", "party_id", "period", "account_id", "warehouse_id"],
                ["debit", "credit"],
            ),
            [
                {
                    "company_id": company_id,
                    "party_id": party_id,
                    "period": period,
                    "account_id": account,
                    "warehouse_id": wh,
                    "debit": debit,
                    "credit": credit,
                }
                for (party_id, account), (debit, credit) in sorted(parties.items())
            ],
        )


def _dialect_insert(session: AsyncSession, model: Any) -> Any:
    if session.get_bind().dialect.name == "postgresql":
        return postgresql.insert(model)
    return sqlite.insert(model)


def _increment(session: AsyncSession, model: Any, keys: list[str], sums: list[str]) -> Any:
    """``INSERT … ON CONFLICT (keys) DO UPDATE SET s = s + excluded.s`` for each
    of ``sums`` (PostgreSQL and SQLite spell it alike)."""
    statement = _dialect_insert(session, model)
    table = model.__table__
    return statement.on_conflict_do_update(
        index_elements=keys,
        set_={name: table.c[name] + statement.excluded[name] for name in sums},
    )


async def check(session: AsyncSession, company_id: int) -> dict[str, Any]:
    """Every roll-up compared with the sums of its lines: ``{"company_id",
    "rolled_up_through", "rollups", "party_rollups", "differences": [...]}``; no
    differences means the roll-ups agree with the journal."""
    rolled = await rolled_up_through(session, company_id)
    differences: list[dict[str, Any]] = []
    counts = {"rollups": 0, "party_rollups": 0}
    if rolled is not None:
        kept: dict[tuple[Any, ...], tuple[Decimal, Decimal]] = {}
        for row in (
            await session.execute(
                select(
                    LedgerRollup.period,
                    LedgerRollup.account_id,
                    LedgerRollup.warehouse_id,
                    LedgerRollup.closing,
                    LedgerRollup.debit,
                    LedgerRollup.credit,
                ).where(LedgerRollup.company_id == company_id)
            )
        ).all():
            kept[(_day(row[0]), row[1], row[2], bool(row[3]))] = (
                to_money(row[4]),
                to_money(row[5]),
            )
        counts["rollups"] = len(kept)
        computed = {
            (_day(r.period), r.account_id, r.warehouse_id, bool(r.closing)): (
                to_money(r.debit),
                to_money(r.credit),
            )
            for r in (
                await session.execute(_account_groups(session, company_id, None, rolled))
            ).all()
        }
        differences += _differ("rollup", kept, computed)
        kept_party: dict[tuple[Any, ...], tuple[Decimal, Decimal]] = {}
        for prow in (
            await session.execute(
                select(
                    PartyRollup.party_id,
                    PartyRollup.period,
                    PartyRollup.account_id,
                    PartyRollup.warehouse_id,
                    PartyRollup.debit,
                    PartyRollup.credit,
                ).where(PartyRollup.company_id == company_id)
            )
        ).all():
            kept_party[(prow[0], _day(prow[1]), prow[2], prow[3])] = (
                to_money(prow[4]),
                to_money(prow[5]),
            )
        counts["party_rollups"] = len(kept_party)
        computed_party = {
            (r.party_id, _day(r.period), r.account_id, r.warehouse_id): (
                to_money(r.debit),
                to_money(r.credit),
            )
            for r in (await session.execute(_party_groups(session, company_id, None, rolled))).all()
        }
        differences += _differ("party_rollup", kept_party, computed_party)
    return {
        "company_id": company_id,
        "rolled_up_through": None if rolled is None else rolled.isoformat(),
        **counts,
        "differences": differences,
        "ok": not differences,
    }


def _opt_day(value: Any) -> dt.date | None:
    return None if value is None else _day(value)


def _day(value: Any) -> dt.date:
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    return dt.date.fromisoformat(str(value)[:10])


def _differ(
    kind: str,
    kept: dict[tuple[Any, ...], tuple[Decimal, Decimal]],
    computed: dict[tuple[Any, ...], tuple[Decimal, Decimal]],
) -> list[dict[str, Any]]:
    out = []
    for key in sorted(set(kept) | set(computed), key=lambda k: tuple(str(p) for p in k)):
        a = kept.get(key, (ZERO, ZERO))
        b = computed.get(key, (ZERO, ZERO))
        if a != b:
            out.append(
                {
                    "kind": kind,
                    "key": [p.isoformat() if isinstance(p, dt.date) else p for p in key],
                    "rollup": [str(a[0]), str(a[1])],
                    "lines": [str(b[0]), str(b[1])],
                }
            )
    return out
