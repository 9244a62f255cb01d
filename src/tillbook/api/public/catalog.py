"""Catalog reads: warehouses, customers, products, categories, brands."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from tillbook.api.deps import DB, CurrentKey
from tillbook.catalog import queries

router = APIRouter(tags=["catalog"])


@router.get("/warehouses")
async def list_warehouses(key: CurrentKey, db: DB) -> dict[str, Any]:
    data = await db.read(lambda s: queries.warehouses(s, key))
    return {"status": "success", "data": data}
