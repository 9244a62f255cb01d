"""Till shifts and the cash drawer (additive to the spec, issue 16)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Path, Request

from tillbook.api import envelope, routing
from tillbook.api.body import parse_body
from tillbook.api.deps import DB, CurrentKey
from tillbook.api.idempotent import run_write
from tillbook.api.public import openapi as r
from tillbook.api.responses import JSON
from tillbook.kit.bounds import query_value
from tillbook.payments import till
from tillbook.payments.schemas import ShiftCashIn, ShiftCloseIn, ShiftIn

router = routing.public(tags=["shifts"])
ShiftRef = Annotated[
    str, Path(description="the shift's id, xid or register reference (R1-S000007)")
]


@router.post(
    "/shifts", openapi_extra=r.write_body(ShiftIn), responses=r.ok(r.ShiftResponse, *r.WRITE)
)
async def open_shift(request: Request, key: CurrentKey) -> JSON:
    body, raw = await parse_body(request, ShiftIn)
    return await run_write(
        request,
        key,
        raw,
        body.unique_id,
        lambda u: till.open_shift(u, key, body),
        answer=envelope.ok,
    )


@router.get("/shifts", responses=r.ok(r.ShiftList, *r.READ))
async def list_shifts(key: CurrentKey, db: DB) -> dict[str, Any]:
    return envelope.ok(await db.read(lambda s: till.list_shifts(s, key)))


@router.get("/shifts/{shift_id}", responses=r.ok(r.ShiftResponse, *r.ONE))
async def read_shift(shift_id: ShiftRef, key: CurrentKey, db: DB) -> dict[str, Any]:
    """The X report of an open shift, the Z report of a closed one."""
    return envelope.ok(await db.read(lambda s: till.read_shift(s, key, shift_id)))


@router.post(
    "/shifts/{shift_id}/cash",
    openapi_extra=r.write_body(ShiftCashIn),
    responses=r.ok(r.ShiftResponse, 404, *r.WRITE),
)
async def move_cash(request: Request, shift_id: ShiftRef, key: CurrentKey) -> JSON:
    query_value("shift_id", shift_id)  # the path before the body (DESIGN.md §12)
    body, raw = await parse_body(request, ShiftCashIn)
    return await run_write(
        request,
        key,
        raw,
        body.unique_id,
        lambda u: till.move_cash(u, key, shift_id, body),
        answer=envelope.ok,
    )


@router.post(
    "/shifts/{shift_id}/close",
    openapi_extra=r.write_body(ShiftCloseIn),
    responses=r.ok(r.ShiftResponse, 404, *r.WRITE),
)
async def close_shift(request: Request, shift_id: ShiftRef, key: CurrentKey) -> JSON:
    query_value("shift_id", shift_id)  # the path before the body (DESIGN.md §12)
    body, raw = await parse_body(request, ShiftCloseIn)
    return await run_write(
        request,
        key,
        raw,
        body.unique_id,
        lambda u: till.close_shift(u, key, shift_id, body),
        answer=envelope.ok,
    )
