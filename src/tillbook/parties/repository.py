"""The SQL of customers and suppliers: reads by id, code and page, and the opening
balances the journal holds for them."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from decimal import Decimal

from sqlalchemy import ColumnElement, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.kit.money import to_money
from tillbook.kit.pagination import Page
from tillbook.kit.search import matches
from tillbook.models import JournalEntry, JournalLine, User, Warehouse

OPENING = "opening_balance"  # journal_entries.source_type of an opening balance


def _of(company_id: int, kind: str) -> list[ColumnElement[bool]]:
    return [User.company_id == company_id, User.user_type == kind]


async def get(
    session: AsyncSession, company_id: int, kind: str, party_id: int, *, lock: bool = False
) -> User | None:
    """``lock``: the row is held to COMMIT (PostgreSQL; SQLite has one writer), so
    that two edits of one party cannot both pass the version check."""
    stmt = select(User).where(User.id == party_id, *_of(company_id, kind))
    if lock:
        stmt = stmt.with_for_update()
    return (await session.execute(stmt)).scalar_one_or_none()


async def by_codes(
    session: AsyncSession, company_id: int, kind: str, codes: Collection[str]
) -> dict[str, User]:
    """The parties of this kind whose code is one of ``codes`` (archived ones too: a
    code stays taken), in chunks the drivers' parameter limits allow."""
    found: dict[str, User] = {}
    wanted = sorted(codes)
    for start in range(0, len(wanted), 500):
        chunk = wanted[start : start + 500]
        rows = await session.execute(
            select(User).where(*_of(company_id, kind), User.code.in_(chunk))
        )
        for user in rows.scalars():
            assert user.code is not None
            found[user.code] = user
    return found


async def code_owner(session: AsyncSession, company_id: int, kind: str, code: str) -> int | None:
    return await session.scalar(
        select(User.id).where(*_of(company_id, kind), User.code == code).limit(1)
    )


async def first_warehouse(session: AsyncSession, company_id: int) -> int | None:
    return await session.scalar(
        select(func.min(Warehouse.id)).where(Warehouse.company_id == company_id)
    )


async def warehouses_by_ref(session: AsyncSession, company_id: int) -> dict[str, int]:
    """The company's warehouses by id (as text) and by lower-cased name, as an import
    file's ``warehouse`` cell names one."""
    rows = await session.execute(
        select(Warehouse.id, Warehouse.name)
        .where(Warehouse.company_id == company_id)
        .order_by(Warehouse.id)
    )
    out: dict[str, int] = {}
    for wid, name in rows.all():
        out[str(wid)] = wid
        out.setdefault(name.lower(), wid)
    return out


async def warehouse_in_company(session: AsyncSession, company_id: int, warehouse_id: int) -> bool:
    found = await session.scalar(
        select(Warehouse.id).where(Warehouse.id == warehouse_id, Warehouse.company_id == company_id)
    )
    return found is not None


def _search(text: str) -> ColumnElement[bool]:
    return matches(text, User.name, User.phone, User.email, User.code)


def _listed(
    company_id: int, kind: str, search: str | None, include_archived: bool
) -> list[ColumnElement[bool]]:
    conds = _of(company_id, kind)
    if not include_archived:
        conds.append(User.archived_at.is_(None))
    if search:
        conds.append(_search(search))
    return conds


async def matching(
    session: AsyncSession,
    company_id: int,
    kind: str,
    *,
    search: str | None,
    include_archived: bool,
) -> Sequence[User]:
    """Every party a list shows (the command line prints them all), in id order."""
    conds = _listed(company_id, kind, search, include_archived)
    return (await session.execute(select(User).where(*conds).order_by(User.id))).scalars().all()


async def page(
    session: AsyncSession,
    company_id: int,
    kind: str,
    pg: Page,
    *,
    search: str | None,
    include_archived: bool,
) -> tuple[int, Sequence[User]]:
    """One page of the company's parties of ``kind`` in id order, with the total."""
    conds = _listed(company_id, kind, search, include_archived)
    total = (
        await session.execute(select(func.count()).select_from(User).where(*conds))
    ).scalar_one()
    if pg.offset >= total:
        return total, []
    users = (
        await session.execute(
            select(User).where(*conds).order_by(User.id).limit(pg.limit).offset(pg.offset)
        )
    ).scalars()
    return total, users.all()


async def all_of_kind(session: AsyncSession, company_id: int, kind: str) -> Sequence[User]:
    """Every party of ``kind``, archived ones too (an export is the whole list)."""
    rows = await session.execute(select(User).where(*_of(company_id, kind)).order_by(User.id))
    return rows.scalars().all()


async def opening_balances(
    session: AsyncSession, company_id: int, kind: str, party_ids: Collection[int] | None = None
) -> dict[int, Decimal]:
    """party id -> the opening balance posted for it (customers: what they owed,
    suppliers: what they were owed), for the parties that have one: the party's
    own line of the entry its set-up posted."""
    stmt = (
        select(JournalEntry.source_id, func.sum(JournalLine.debit), func.sum(JournalLine.credit))
        .join(
            JournalLine,
            (JournalLine.entry_id == JournalEntry.id)
            & (JournalLine.company_id == JournalEntry.company_id),
        )
        .join(
            User, (User.id == JournalEntry.source_id) & (User.company_id == JournalEntry.company_id)
        )
        .where(
            JournalEntry.company_id == company_id,
            JournalEntry.source_type == OPENING,
            JournalLine.party_id == JournalEntry.source_id,
            User.user_type == kind,
        )
        .group_by(JournalEntry.source_id)
    )
    if party_ids is not None:
        stmt = stmt.where(JournalEntry.source_id.in_(tuple(party_ids)))
    out: dict[int, Decimal] = {}
    for party_id, debit, credit in (await session.execute(stmt)).all():
        if party_id is None:
            continue
        dr, cr = to_money(debit), to_money(credit)
        out[party_id] = dr - cr if kind == "customer" else cr - dr
    return out
