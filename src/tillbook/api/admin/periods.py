"""Closing and reopening the books from the back office.

Closing is the accountant's month end (``books.close``); reopening changes figures
that were final, so it is the owner's decision (``books.reopen``), audited like
every change (``reports.periods``). Both are company-wide: a staff member scoped to
one warehouse cannot close the company's books. Neither takes an
``Idempotency-Key``: a repeated close of the same day is a 409 naming what is closed,
so a retried request cannot close further than asked."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Request

from tillbook.api import envelope, routing
from tillbook.api.admin.deps import Allowed, require_json
from tillbook.api.body import openapi_body, parse_body
from tillbook.api.deps import DB
from tillbook.auth.admin import AdminContext
from tillbook.reports import periods
from tillbook.reports.schemas import PeriodCloseIn, PeriodReopenIn

router = routing.admin("/periods", tags=["admin: periods"])


@router.get("")
async def get_periods(
    ctx: Annotated[AdminContext, Allowed("books.read", per_warehouse=True)], db: DB
) -> dict[str, Any]:
    data = await db.read(lambda s: periods.status(s, ctx.company_id))
    return envelope.ok(data)


@router.post("/close", openapi_extra=openapi_body(PeriodCloseIn))
async def close_period(
    request: Request, ctx: Annotated[AdminContext, Allowed("books.close")], db: DB
) -> dict[str, Any]:
    require_json(request)
    body, _raw = await parse_body(request, PeriodCloseIn)
    data = await periods.close(db, ctx.company_id, body.through, actor_id=ctx.user_id)
    return envelope.ok(data)


@router.post("/reopen", openapi_extra=openapi_body(PeriodReopenIn))
async def reopen_period(
    request: Request, ctx: Annotated[AdminContext, Allowed("books.reopen")], db: DB
) -> dict[str, Any]:
    require_json(request)
    body, _raw = await parse_body(request, PeriodReopenIn)
    data = await periods.reopen(db, ctx.company_id, body.through, actor_id=ctx.user_id)
    return envelope.ok(data)
