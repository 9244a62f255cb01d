"""The company's units and taxes as a till reads them (GET /units, GET /taxes):
company reference data, archived rows left out, in name order."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.auth.context import AuthContext
from tillbook.kit import xid
from tillbook.kit.money import number
from tillbook.models import Tax, Unit


async def units(session: AsyncSession, key: AuthContext) -> list[dict[str, Any]]:
    rows = await session.execute(
        select(Unit)
        .where(Unit.company_id == key.company_id, Unit.archived_at.is_(None))
        .order_by(Unit.name, Unit.id)
    )
    return [
        {"id": u.id, "xid": xid.encode(u.id), "name": u.name, "short_name": u.short_name}
        for u in rows.scalars()
    ]


async def taxes(session: AsyncSession, key: AuthContext) -> list[dict[str, Any]]:
    rows = await session.execute(
        select(Tax)
        .where(Tax.company_id == key.company_id, Tax.archived_at.is_(None))
        .order_by(Tax.name, Tax.id)
    )
    return [
        {
            "id": t.id,
            "xid": xid.encode(t.id),
            "name": t.name,
            "rate": number(t.rate),
            "inclusive": t.inclusive,
        }
        for t in rows.scalars()
    ]
