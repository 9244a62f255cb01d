"""Balances per account (and party), warehouse and closed month: what the reports
read instead of the whole journal.

A sale writes no balance row: the journal is append-only, and a month's roll-ups
are built from its lines once the month is closed (``build``), after which no line
can be dated into it (``ledger.periods``), so they are final. A report's sums for
a date range are then the roll-ups of the whole closed months inside the range
plus the lines of the days around them: the edges of the range that are not whole
months, and the days after the last rolled-up month (the open period). The cost
follows the number of accounts and months and the length of what is still open,
not the age of the shop. ``check`` recomputes every roll-up from the lines.

Warehouse 0 in a roll-up stands for lines with no warehouse (company-level
entries, such as a year-end close posted for them).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from sqlalchemy import (
    Date,
    and_,
    cast,
    delete,
    func,
    insert,
    literal,
    literal_column,
    or_,
    select,
    update,
)
from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.kit.money import ZERO, to_money
from tillbook.models import JournalEntry, JournalLine, LedgerPeriod, LedgerRollup, PartyRollup

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
    rolled = await rolled_up_through(session, company_id)
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
            .join(JournalEntry, JournalEntry.id == line.entry_id)
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
    how = plan(date_from, date_to, await rolled_up_through(session, company_id))
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
            .join(JournalEntry, JournalEntry.id == line.entry_id)
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
        .join(JournalEntry, JournalEntry.id == JournalLine.entry_id)
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
        .join(JournalEntry, JournalEntry.id == JournalLine.entry_id)
        .where(
            JournalEntry.company_id == company_id,
            JournalEntry.entry_date <= through,
            JournalLine.party_id.is_not(None),
        )
        .group_by(JournalLine.party_id, month, JournalLine.account_id, wh)
    )
    if after is not None:
        query = query.where(JournalEntry.entry_date > after)
    return query


async def build(session: AsyncSession, company_id: int) -> dt.date | None:
    """Roll up every whole month the company has closed and not yet rolled up, in
    the caller's transaction; returns the new ``rolled_up_through``. The months'
    lines are final (the close refuses new ones), so the roll-ups are too."""
    period = (
        await session.execute(
            select(LedgerPeriod).where(LedgerPeriod.company_id == company_id).with_for_update()
        )
    ).scalar_one_or_none()
    if period is None or period.closed_through is None:
        return None
    target = last_whole_month_end(period.closed_through)
    done = period.rolled_up_through
    if target is None or (done is not None and done >= target):
        return done
    account_rows = _account_groups(session, company_id, done, target)
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
    party_rows = _party_groups(session, company_id, done, target)
    await session.execute(
        insert(PartyRollup).from_select(
            ["company_id", "party_id", "period", "account_id", "warehouse_id", "debit", "credit"],
            party_rows,
        )
    )
    await session.execute(
        update(LedgerPeriod)
        .where(LedgerPeriod.company_id == company_id)
        .values(rolled_up_through=target)
    )
    return target


async def drop_after(session: AsyncSession, company_id: int, keep_through: dt.date | None) -> None:
    """Forget the roll-ups of every month not wholly on or before ``keep_through``
    (the months a reopening makes writable again)."""
    keep = None if keep_through is None else last_whole_month_end(keep_through)
    rolled = await rolled_up_through(session, company_id)
    if rolled is None or (keep is not None and keep >= rolled):
        return
    for table in (LedgerRollup, PartyRollup):
        query = delete(table).where(table.company_id == company_id)
        if keep is not None:
            query = query.where(table.period > keep)
        await session.execute(query)
    await session.execute(
        update(LedgerPeriod)
        .where(LedgerPeriod.company_id == company_id)
        .values(rolled_up_through=keep)
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
