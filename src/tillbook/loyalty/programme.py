"""The company's loyalty programme: read it, set it, and revalue the points it owes.

One row per company (``LoyaltyProgramme``). Setting it is a settings change
(``settings.write``), audited as ``loyalty.updated`` with the values before and
after. A new point value changes what every outstanding point is worth, so the
same transaction posts the difference (Σ points × (new − old)) between 21400 and
41300 and writes a ``revalue`` movement of no points on every account holding
some: GL 21400 = Σ points × value holds after the commit, and each account's
statement shows the change.

Sales, returns and voids read the terms with a shared lock (``terms(lock=True)``)
and a change takes the row's exclusive lock first: on PostgreSQL a change waits
for sales in flight and sales wait for the change, so no point is earned or
redeemed at a value the revaluation did not count. SQLite has one writer anyway.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from sqlalchemy import bindparam, func, insert, select
from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.audit.service import record
from tillbook.audit.setup_records import iso
from tillbook.auth.actor import Actor
from tillbook.kit import bounds, versions
from tillbook.kit.bounds import MONEY
from tillbook.kit.money import money_str
from tillbook.ledger.service import post
from tillbook.loyalty.schemas import ProgrammeIn
from tillbook.models import LoyaltyAccount, LoyaltyMovement, LoyaltyProgramme
from tillbook.models.base import utcnow
from tillbook.unit import UnitOfWork


@dataclass(frozen=True)
class Terms:
    """The programme as a sale needs it: a value, not a row in the session."""

    earn_unit: Decimal
    point_value: Decimal
    active: bool


def _of_company(column: Any, name: str) -> Any:
    return (
        select(column)
        .where(LoyaltyProgramme.company_id == bindparam("company_id"))
        .scalar_subquery()
        .label(name)
    )


# The company's terms as three columns of another statement over ``:company_id``
# (a sale's read of its customer, ``orders.lookup.customer``): the quote a sale
# prices with costs no round trip of its own. Unlocked, as ``terms()``; the sale's
# ``confirm`` reads them again with the lock when there is a programme.
TERMS_COLUMNS = (
    _of_company(LoyaltyProgramme.earn_unit, "programme_earn_unit"),
    _of_company(LoyaltyProgramme.point_value, "programme_point_value"),
    _of_company(LoyaltyProgramme.active, "programme_active"),
)
TERMS_NAMES = frozenset(column.name for column in TERMS_COLUMNS)


def terms_in(row: Mapping[str, Any]) -> Terms | None:
    """The terms ``TERMS_COLUMNS`` put in ``row`` (None: no programme)."""
    if row["programme_earn_unit"] is None:
        return None
    return Terms(
        Decimal(row["programme_earn_unit"]),
        Decimal(row["programme_point_value"]),
        bool(row["programme_active"]),
    )


async def terms(session: AsyncSession, company_id: int, *, lock: bool = False) -> Terms | None:
    """The company's programme, or None when it has never set one up. ``lock``: a
    shared lock until commit (a write that earns or redeems at these terms)."""
    stmt = select(
        LoyaltyProgramme.earn_unit, LoyaltyProgramme.point_value, LoyaltyProgramme.active
    ).where(LoyaltyProgramme.company_id == company_id)
    if lock:
        stmt = stmt.with_for_update(read=True, key_share=True)
    row = (await session.execute(stmt)).one_or_none()
    if row is None:
        return None
    return Terms(Decimal(row[0]), Decimal(row[1]), bool(row[2]))


async def outstanding(session: AsyncSession, company_id: int) -> int:
    """Σ points of every account of the company (below zero ones included)."""
    return int(
        (
            await session.execute(
                select(func.coalesce(func.sum(LoyaltyAccount.points), 0)).where(
                    LoyaltyAccount.company_id == company_id
                )
            )
        ).scalar_one()
    )


def _view(row: LoyaltyProgramme | None, points: int) -> dict[str, Any]:
    value = row.point_value if row is not None else None
    return {
        "configured": row is not None,
        "earn_unit": money_str(row.earn_unit) if row is not None else None,
        "point_value": money_str(value) if value is not None else None,
        "active": bool(row.active) if row is not None else False,
        "customers": "named",
        "version": row.version if row is not None else 0,
        "outstanding_points": points,
        "outstanding_value": money_str(points * value) if value is not None else "0.00",
        "updated_at": iso(row.updated_at) if row is not None else None,
    }


async def _row(session: AsyncSession, company_id: int, *, lock: bool) -> LoyaltyProgramme | None:
    stmt = select(LoyaltyProgramme).where(LoyaltyProgramme.company_id == company_id)
    if lock:
        stmt = stmt.with_for_update()
    return (await session.execute(stmt)).scalar_one_or_none()


async def read(session: AsyncSession, company_id: int) -> dict[str, Any]:
    """The programme as the admin API and the settings page show it, with what its
    points owe now; a company without one reads ``configured`` false."""
    return _view(
        await _row(session, company_id, lock=False), await outstanding(session, company_id)
    )


async def put(
    uow: UnitOfWork,
    company_id: int,
    actor: Actor,
    body: ProgrammeIn,
    expected: int | None,
) -> dict[str, Any]:
    """Set the programme (making it the first time), revaluing outstanding points
    when the point value changes. A change to an existing programme names the
    version it is based on (412 stale, 428 missing), like every settings edit."""
    session = uow.session
    row = await _row(session, company_id, lock=True)
    before = None
    entry_id = None
    if row is None:
        row = LoyaltyProgramme(
            company_id=company_id,
            earn_unit=body.earn_unit,
            point_value=body.point_value,
            active=body.active,
            version=1,
            updated_by=actor.user_id,
            updated_at=utcnow(),
        )
        session.add(row)
        await session.flush()
    else:
        versions.expect(row.version, expected, "the loyalty programme")
        before = _settings(row)
        old_value = Decimal(row.point_value)
        if body.point_value != old_value:
            entry_id = await revalue(uow, company_id, old_value, body.point_value, actor.user_id)
        row.earn_unit = body.earn_unit
        row.point_value = body.point_value
        row.active = body.active
        row.version += 1
        row.updated_by = actor.user_id
        row.updated_at = utcnow()
        await session.flush()
    await record(
        session,
        company_id=company_id,
        actor=actor,
        action="loyalty.updated",
        entity_type="loyalty_programme",
        entity_id=row.id,
        before=before,
        after={**_settings(row), "revaluation_entry_id": entry_id},
    )
    view = _view(row, await outstanding(session, company_id))
    view["revaluation_entry_id"] = entry_id
    return view


def _settings(row: LoyaltyProgramme) -> dict[str, Any]:
    return {
        "earn_unit": money_str(row.earn_unit),
        "point_value": money_str(row.point_value),
        "active": bool(row.active),
    }


async def revalue(
    uow: UnitOfWork, company_id: int, old: Decimal, new: Decimal, created_by: int | None
) -> int | None:
    """Outstanding points from ``old`` to ``new`` each: one entry (Dr 41300 / Cr
    21400 for a rise, the other way for a fall) and a ``revalue`` movement on every
    account holding points, in one statement. The caller holds the
    programme's lock."""
    session = uow.session
    points = await outstanding(session, company_id)
    amount = points * (new - old)
    bounds.check("point_value", amount, MONEY, "the revaluation of outstanding points")
    entry_id = await post(
        uow,
        company_id=company_id,
        warehouse_id=None,
        rule="loyalty_revaluation",
        figures={"amount": amount},
        narration=f"Loyalty points revalued from {money_str(old)} to {money_str(new)} a point",
        field="point_value",
        source_type="loyalty",
        source_id=None,
        entry_date=dt.date.today(),
        created_by=created_by,
    )
    held = (
        await session.execute(
            select(LoyaltyAccount.id, LoyaltyAccount.points)
            .where(LoyaltyAccount.company_id == company_id, LoyaltyAccount.points != 0)
            .order_by(LoyaltyAccount.id)
        )
    ).all()
    rows = [
        {
            "company_id": company_id,
            "account_id": account_id,
            "warehouse_id": None,
            "kind": "revalue",
            "points": 0,
            "points_after": int(balance),
            # Computed here, not in SQL: SQLite multiplies decimals as floats.
            "value": int(balance) * (new - old),
            "order_id": None,
            "journal_entry_id": entry_id,
            "created_by": created_by,
        }
        for account_id, balance in held
    ]
    for start in range(0, len(rows), 2_000):
        await session.execute(insert(LoyaltyMovement), rows[start : start + 2_000])
    return entry_id


def etag(view: dict[str, Any]) -> str:
    return versions.etag(int(view["version"]))
