"""Registers (``/registers``): pairing a device to a branch, listing and revoking
them (``registers.manage``: an owner, or a manager for their own branch). Rules
live in ``registers/service.py``.

The pairing's answer holds the register's secret key, shown this once: the stored
answer an ``Idempotency-Key`` replays has it removed (``secret_key`` null), as the
back office's keys page does with a form sent twice."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Request

from tillbook.api import routing
from tillbook.api.admin.deps import Allowed, path_id, require_json
from tillbook.api.body import openapi_body, parse_body
from tillbook.api.deps import DB
from tillbook.api.envelope import ok
from tillbook.api.idempotent import admin_unit, idempotency_token, run_admin_unit
from tillbook.api.responses import JSON
from tillbook.auth.admin import AdminContext
from tillbook.errors import invalid
from tillbook.kit.refs import ref_to_id
from tillbook.registers import service
from tillbook.registers.schemas import RegisterIn
from tillbook.unit import UnitOfWork

PERMISSION = "registers.manage"
router = routing.admin("/registers", tags=["admin: registers"])
Manager = Annotated[AdminContext, Allowed(PERMISSION, per_warehouse=True)]


@router.get("/branches")
async def pairable_branches(ctx: Manager, db: DB) -> dict[str, Any]:
    """The branches this staff member may pair a register to: every active one
    for an owner or an unscoped manager, their own for a scoped manager."""
    rows = await db.read(lambda s: service.branches(s, ctx.company_id, ctx.warehouse_id))
    return ok(rows)


@router.get("")
async def list_registers(ctx: Manager, db: DB) -> dict[str, Any]:
    """The company's registers (a scoped manager: their branch's), with when each
    was last seen, its writes queued and the writes the server refused it."""
    scope = ctx.warehouse_for(PERMISSION, None)
    rows = await db.read(lambda s: service.list_registers(s, ctx.company_id, scope))
    return ok(rows)


@router.post("", status_code=201, openapi_extra=openapi_body(RegisterIn))
async def pair_register(request: Request, ctx: Manager) -> JSON:
    require_json(request)
    body, _raw = await parse_body(request, RegisterIn)
    warehouse_id = ref_to_id(body.warehouse_id)
    if warehouse_id is None:
        raise invalid("warehouse_id", "must be a warehouse id")
    ctx.require(PERMISSION, warehouse_id)
    secret: dict[str, str] = {}

    async def work(uow: UnitOfWork) -> dict[str, Any]:
        paired = await service.pair(
            uow.session, ctx.company_id, warehouse_id, body.name, actor_id=ctx.user_id
        )
        secret["secret_key"] = paired.key.secret_key
        return ok(paired.answer())

    code, answer, replayed = await admin_unit(
        request, ctx, work, status=201, token=idempotency_token(request)
    )
    if replayed:
        return JSON(answer, status_code=code, headers={"Idempotent-Replayed": "true"})
    answer = {**answer, "data": {**answer["data"], **secret}}
    return JSON(answer, status_code=code)


@router.post("/{register_id}/revoke")
async def revoke_register(request: Request, register_id: str, ctx: Manager) -> JSON:
    """Its key stops at once: the device's next request is a 401."""
    rid = path_id(register_id, "register")

    async def work(uow: UnitOfWork) -> dict[str, Any]:
        register = await service.get_register(uow.session, ctx.company_id, rid)
        ctx.require(PERMISSION, register.warehouse_id)
        data, _already = await service.revoke(
            uow.session, ctx.company_id, rid, actor_id=ctx.user_id
        )
        return ok(data)

    return await run_admin_unit(request, ctx, work)
