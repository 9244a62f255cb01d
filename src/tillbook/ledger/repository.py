"""Journal SQL: an entry and its lines in one statement, the chart's account ids,
party sub-ledger balances.

Journal entries and lines are only ever inserted (the database refuses UPDATE and
DELETE on them); a correction is a new entry that names the one it reverses.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

from sqlalchemy import ARRAY, BigInteger, bindparam, func, insert, literal, select
from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.models import Account, JournalEntry, JournalLine, User
from tillbook.models.base import table_of
from tillbook.unit import QueuedInsert, QueuedUpdate, UnitOfWork, next_id

_entries = table_of(JournalEntry)
_lines = table_of(JournalLine)
_ENTRY_COLUMNS = (
    "company_id",
    "warehouse_id",
    "entry_date",
    "narration",
    "source_type",
    "source_id",
    "reverses_entry_id",
    "created_by",
)
_LINE_ARRAYS = ("account_id", "party_id", "debit", "credit", "currency", "amount_foreign", "rate")
_INSERT_ENTRY = insert(_entries).returning(_entries.c.id)
_INSERT_LINES = insert(_lines)


def _entry_with_lines() -> Any:
    """``WITH e AS (INSERT INTO journal_entries … RETURNING id) INSERT INTO
    journal_lines … SELECT e.id, … FROM e, unnest(:arrays) RETURNING entry_id``: an
    entry and all its lines in one round trip (PostgreSQL)."""
    entry = (
        insert(_entries)
        .values({c: bindparam(c, type_=_entries.c[c].type) for c in _ENTRY_COLUMNS})
        .returning(_entries.c.id)
        .cte("entry")
    )
    arrays = (
        func.unnest(*(bindparam(f"lines_{c}", type_=ARRAY(_lines.c[c].type)) for c in _LINE_ARRAYS))
        .table_valued(*_LINE_ARRAYS)
        .render_derived(name="given")
    )
    rows = (
        select(
            entry.c.id,
            bindparam("company_id", type_=BigInteger),
            bindparam("warehouse_id", type_=BigInteger),
            *(arrays.c[c] for c in _LINE_ARRAYS),
        )
        .select_from(entry)
        .join(arrays, literal(True))
    )
    return (
        insert(_lines)
        .from_select(["entry_id", "company_id", "warehouse_id", *_LINE_ARRAYS], rows)
        .returning(_lines.c.entry_id)
    )


_ENTRY_WITH_LINES = _entry_with_lines()

# The id the next journal entry takes, reserved by a statement a write sends anyway
# (the sale's order insert, ``orders.repository``), so that the entry itself can go
# with the unit's last statement (``queue_entry``). PostgreSQL only.
RESERVE_ENTRY_ID = next_id(_entries).label("entry_id")
_QUEUED_ENTRY = QueuedInsert(_entries, ["id", *_ENTRY_COLUMNS])
_QUEUED_LINES = QueuedInsert(_lines, ["entry_id", "company_id", "warehouse_id", *_LINE_ARRAYS])
_BALANCES = select(User.id, User.balance).where(
    User.company_id == bindparam("company_id"), User.id.in_(bindparam("ids", expanding=True))
)
_ACCOUNT_IDS = select(Account.code, Account.id).where(Account.company_id == bindparam("company_id"))

# Customers' balance is what they owe (11500), suppliers' what we owe them (21100):
# moved by a commutative increment with the unit's last statement.
PARTY_BALANCES = QueuedUpdate(table_of(User), ["id"], increments=["balance"])


async def load_account_ids(session: AsyncSession, company_id: int) -> dict[str, int]:
    rows = await session.execute(_ACCOUNT_IDS, {"company_id": company_id})
    return {code: id_ for code, id_ in rows.all()}


async def insert_entry(
    uow: UnitOfWork, entry: Mapping[str, Any], lines: Sequence[Mapping[str, Any]]
) -> int:
    """Insert one entry with its lines (each: account_id, party_id, debit, credit,
    and the currency, amount_foreign and rate of a converted line, else None) and
    return the entry's id."""
    values = {c: entry.get(c) for c in _ENTRY_COLUMNS}
    if uow.is_postgresql:
        params = dict(values)
        for c in _LINE_ARRAYS:
            params[f"lines_{c}"] = [line[c] for line in lines]
        rows = await uow.run(_ENTRY_WITH_LINES, params)
        return int(rows[0][0])
    entry_id = int((await uow.run(_INSERT_ENTRY, values))[0][0])
    await uow.session.execute(
        _INSERT_LINES,
        [
            {
                "entry_id": entry_id,
                "company_id": values["company_id"],
                "warehouse_id": values["warehouse_id"],
                **{c: line[c] for c in _LINE_ARRAYS},
            }
            for line in lines
        ],
    )
    return entry_id


def queue_entry(
    uow: UnitOfWork,
    entry_id: int,
    entry: Mapping[str, Any],
    lines: Sequence[Mapping[str, Any]],
) -> None:
    """``insert_entry`` with the unit's last statement, under an id reserved earlier
    (``RESERVE_ENTRY_ID``): nothing in the unit reads the entry back, and its
    narration may name a number that statement takes (``unit.Late``)."""
    values = {c: entry.get(c) for c in _ENTRY_COLUMNS}
    uow.defer(_QUEUED_ENTRY, [{"id": entry_id, **values}])
    uow.defer(
        _QUEUED_LINES,
        [
            {
                "entry_id": entry_id,
                "company_id": values["company_id"],
                "warehouse_id": values["warehouse_id"],
                **{c: line[c] for c in _LINE_ARRAYS},
            }
            for line in lines
        ],
    )


async def entry_lines(
    uow: UnitOfWork, company_id: int, entry_id: int
) -> tuple[JournalEntry, list[JournalLine]]:
    entry = (
        await uow.session.execute(
            select(JournalEntry).where(
                JournalEntry.company_id == company_id, JournalEntry.id == entry_id
            )
        )
    ).scalar_one_or_none()
    if entry is None:
        raise LookupError(f"journal entry {entry_id}")
    result = await uow.session.execute(
        select(JournalLine)
        .where(JournalLine.company_id == company_id, JournalLine.entry_id == entry_id)
        .order_by(JournalLine.id)
    )
    return entry, list(result.scalars())


def move_balances(uow: UnitOfWork, company_id: int, deltas: Mapping[int, Decimal]) -> None:
    """The company's parties' balances moved by ``deltas``, with the unit's last
    statement."""
    rows = [
        {"company_id": company_id, "id": p, "balance": d} for p, d in sorted(deltas.items()) if d
    ]
    uow.defer(PARTY_BALANCES, rows)


async def balances(
    uow: UnitOfWork, company_id: int, party_ids: Sequence[int]
) -> list[tuple[int, Decimal]]:
    """(id, balance) of the company's parties, as the unit reads them now."""
    rows = await uow.session.execute(_BALANCES, {"company_id": company_id, "ids": list(party_ids)})
    return [(r[0], r[1]) for r in rows]
