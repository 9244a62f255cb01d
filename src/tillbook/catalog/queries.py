"""Read-only catalog queries, scoped to the key's company or warehouse."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.auth.context import AuthContext
from tillbook.kit import xid
from tillbook.models import Warehouse


async def warehouses(session: AsyncSession, key: AuthContext) -> list[dict[str, Any]]:
    """Only the key's own warehouse: a key is bound to one branch."""
    wh = (
        await session.execute(select(Warehouse).where(Warehouse.id == key.warehouse_id))
    ).scalar_one()
    return [{"id": wh.id, "xid": xid.encode(wh.id), "name": wh.name,
             "allow_negative_stock": wh.allow_negative_stock}]
