"""Closing and reopening the books from the back office.

Reopening is the owner's decision: the lead wires the role check with the staff
roles; here it is audited like every change (``reports.periods``)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from tillbook.api.admin.deps import CurrentAdmin, require_json
from tillbook.api.body import openapi_body, parse_body
from tillbook.api.deps import DB
from tillbook.reports import periods
from tillbook.reports.schemas import PeriodCloseIn, PeriodReopenIn

router = APIRouter(prefix="/periods", tags=["admin: periods"])


@router.get("")
async def get_periods(ctx: CurrentAdmin, db: DB) -> dict[str, Any]:
    data = await db.read(lambda s: periods.status(s, ctx.company_id))
    return {"status": "success", "data": data}


@router.post("/close", openapi_extra=openapi_body(PeriodCloseIn))
async def close_period(request: Request, ctx: CurrentAdmin, db: DB) -> dict[str, Any]:
    require_json(request)
    body, _raw = await parse_body(request, PeriodCloseIn)
    data = await periods.close(db, ctx.company_id, body.through, actor_id=ctx.user_id)
    return {"status": "success", "data": data}


@router.post("/reopen", openapi_extra=openapi_body(PeriodReopenIn))
async def reopen_period(request: Request, ctx: CurrentAdmin, db: DB) -> dict[str, Any]:
    require_json(request)
    body, _raw = await parse_body(request, PeriodReopenIn)
    data = await periods.reopen(db, ctx.company_id, body.through, actor_id=ctx.user_id)
    return {"status": "success", "data": data}
