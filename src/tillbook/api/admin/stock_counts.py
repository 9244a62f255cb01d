"""Stocktakes in the back-office API (``/stock-counts``): the same service as the
pages (``inventory.counts``). Every route needs ``stock.write`` for the count's
branch (the sheet shows costs and is the branch's stock work); a count of a branch
outside a scoped staff member's is not found. Every POST is idempotent on
``Idempotency-Key``."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Request
from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.api import envelope, routing
from tillbook.api.admin.deps import Allowed, path_id, query_id, require_json
from tillbook.api.body import openapi_body, parse_body
from tillbook.api.deps import DB
from tillbook.api.idempotent import run_admin_unit
from tillbook.api.responses import JSON
from tillbook.auth.admin import AdminContext
from tillbook.errors import NotFound
from tillbook.inventory import counts
from tillbook.inventory.schemas import StockCountEntriesIn, StockCountIn
from tillbook.kit.bounds import query_value
from tillbook.kit.pagination import parse_page
from tillbook.reports import dashboard
from tillbook.unit import UnitOfWork

router = routing.admin("/stock-counts", tags=["admin: stock"])
Counter = Annotated[AdminContext, Allowed("stock.write", per_warehouse=True)]


async def _branch(db: Any, ctx: AdminContext, count_id: int) -> int:
    wid: int = await db.read(lambda s: counts.warehouse_of(s, ctx.company_id, count_id))
    if not ctx.can("stock.write", wid):
        raise NotFound(f"stock count {count_id} not found")
    return wid


@router.get("")
async def list_counts(
    ctx: Counter,
    db: DB,
    warehouse_id: str | None = None,
    status: str | None = None,
    page: str | None = None,
    limit: str | None = None,
) -> dict[str, Any]:
    p = parse_page(page, limit)
    wid = query_id(warehouse_id, "warehouse_id")
    state = query_value("status", status)
    if wid is not None:
        ctx.require("stock.write", wid)

    async def read(s: AsyncSession) -> dict[str, Any]:
        ids = (
            [wid]
            if wid is not None
            else [i for i, _n in await dashboard.warehouses(s, ctx.company_id, ctx.warehouse_id)]
        )
        return await counts.counts_page(s, ctx.company_id, ids, p, state)

    return envelope.ok(await db.read(read))


@router.post("", status_code=201, openapi_extra=openapi_body(StockCountIn))
async def start_count(request: Request, ctx: Counter) -> JSON:
    require_json(request)
    body, _raw = await parse_body(request, StockCountIn)
    wid = query_id(str(body.warehouse_id), "warehouse_id")
    if wid is not None:
        ctx.require("stock.write", wid)

    async def work(uow: UnitOfWork) -> dict[str, Any]:
        return await counts.start_count(uow.session, ctx.company_id, ctx.user_id, body)

    return await run_admin_unit(request, ctx, work, status=201)


@router.get("/{count_id}")
async def get_count(count_id: str, ctx: Counter, db: DB) -> dict[str, Any]:
    cid = path_id(count_id, "stock count")
    await _branch(db, ctx, cid)
    data = await db.read(lambda s: counts.count_detail(s, ctx.company_id, cid))
    return envelope.ok(data)


@router.post("/{count_id}/entries", openapi_extra=openapi_body(StockCountEntriesIn))
async def enter_counts(count_id: str, request: Request, ctx: Counter, db: DB) -> JSON:
    cid = path_id(count_id, "stock count")
    await _branch(db, ctx, cid)
    require_json(request)
    body, _raw = await parse_body(request, StockCountEntriesIn)

    async def work(uow: UnitOfWork) -> dict[str, Any]:
        return await counts.enter_counts(uow.session, ctx.company_id, cid, ctx.user_id, body)

    return await run_admin_unit(request, ctx, work)


@router.post("/{count_id}/post")
async def post_count(count_id: str, request: Request, ctx: Counter, db: DB) -> JSON:
    cid = path_id(count_id, "stock count")
    await _branch(db, ctx, cid)

    async def work(uow: UnitOfWork) -> dict[str, Any]:
        return await counts.post_count(uow, ctx.company_id, cid, ctx.user_id)

    return await run_admin_unit(request, ctx, work)


@router.post("/{count_id}/cancel")
async def cancel_count(count_id: str, request: Request, ctx: Counter, db: DB) -> JSON:
    cid = path_id(count_id, "stock count")
    await _branch(db, ctx, cid)

    async def work(uow: UnitOfWork) -> dict[str, Any]:
        return await counts.cancel_count(uow.session, ctx.company_id, cid, ctx.user_id)

    return await run_admin_unit(request, ctx, work)
