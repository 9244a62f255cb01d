"""Settings → Registers: the devices paired to sell in the browser (DESIGN.md §15).

Listed with when each was last seen, the writes it holds queued and the ones the
server refused it (with their reasons), for an owner (every branch) or a manager
(their own branch when scoped); revoking one stops its credential at once.
Pairing is done on the device itself (``/register``), not here. Rules:
``registers/service.py``; who may: ``registers.manage`` (``auth/roles.py``)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Request
from fastapi.responses import Response

from tillbook.api import routing
from tillbook.api.admin.deps import path_id
from tillbook.api.deps import DB
from tillbook.auth.admin import AdminContext
from tillbook.registers import service
from tillbook.unit import UnitOfWork
from tillbook.web.forms import see_other, submit
from tillbook.web.render import render
from tillbook.web.session import Page

router = routing.pages()

PERMISSION = "registers.manage"
Manager = Annotated[AdminContext, Page(PERMISSION, per_warehouse=True)]


@router.get("/settings/registers")
async def registers_list(request: Request, ctx: Manager, db: DB) -> Response:
    scope = ctx.warehouse_for(PERMISSION, None)
    rows = await db.read(lambda s: service.list_registers(s, ctx.company_id, scope))
    return render(request, "registers.html", registers=rows)


async def _one(db: Any, ctx: AdminContext, register_id: int) -> dict[str, Any]:
    """The register, once this staff member may manage its branch (403 otherwise)."""

    async def read(s: Any) -> tuple[int, str]:
        register = await service.get_register(s, ctx.company_id, register_id)
        return register.warehouse_id, register.name

    warehouse_id, name = await db.read(read)
    ctx.require(PERMISSION, warehouse_id)
    return {"id": register_id, "name": name}


@router.get("/settings/registers/{register_id}/revoke")
async def register_revoke_confirm(
    request: Request, register_id: str, ctx: Manager, db: DB
) -> Response:
    rid = path_id(register_id, "register")
    return render(request, "register_revoke.html", register=await _one(db, ctx, rid))


@router.post("/settings/registers/{register_id}/revoke")
async def register_revoke(request: Request, register_id: str, ctx: Manager, db: DB) -> Response:
    rid = path_id(register_id, "register")
    await _one(db, ctx, rid)

    async def work(uow: UnitOfWork) -> dict[str, Any]:
        data, already = await service.revoke(uow.session, ctx.company_id, rid, actor_id=ctx.user_id)
        return {"id": data["id"], "already_revoked": already}

    await submit(request, ctx, work)
    return see_other("/settings/registers")
