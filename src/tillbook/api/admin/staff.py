"""Staff members of the session's company: the owner's business (``staff.manage``).

Reads answer the record's ``ETag``; an edit names the version it was based on
(``If-Match`` or body ``version``: 412 when stale, 428 when missing). Another
company's staff member is simply not found. Rules live in ``tenancy/staff.py``."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Request
from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.api import routing
from tillbook.api.admin.deps import Allowed, CurrentAdmin, path_id, require_json
from tillbook.api.admin.schemas import StaffIn, StaffPatch
from tillbook.api.body import openapi_body, parse_body
from tillbook.api.deps import DB
from tillbook.api.envelope import ok
from tillbook.api.idempotent import run_admin_write
from tillbook.api.responses import JSON
from tillbook.auth.admin import AdminContext
from tillbook.kit import pagination, versions
from tillbook.registers.schemas import PinIn
from tillbook.tenancy import staff as service

router = routing.admin("/staff", tags=["admin: staff"])

Owner = Annotated[AdminContext, Allowed("staff.manage")]


def _etag(body: dict[str, Any]) -> dict[str, str]:
    return {"ETag": versions.etag(int(body["data"]["version"]))}


@router.get("")
async def list_staff(
    ctx: Owner,
    db: DB,
    page: str | None = None,
    limit: str | None = None,
    archived: bool = True,
) -> dict[str, Any]:
    """Every staff member who can have a login, archived ones too unless
    ``archived=false``; the pagination envelope of the public API."""
    paging = pagination.parse_page(page, limit)
    total, rows = await db.read(
        lambda s: service.list_staff(s, ctx.company_id, paging, include_archived=archived)
    )
    return ok(pagination.paged(paging, total, [service.view(u) for u in rows]))


@router.post("", openapi_extra=openapi_body(StaffIn))
async def create_staff(request: Request, ctx: Owner) -> JSON:
    require_json(request)
    body, _raw = await parse_body(request, StaffIn)
    new = service.NewStaff(
        name=body.name,
        email=body.email,
        role=body.role,
        password=body.password,
        warehouse_id=body.warehouse_id,
    )

    async def write(s: AsyncSession) -> dict[str, Any]:
        user = await service.create_staff(s, ctx.company_id, new, actor_id=ctx.user_id)
        return ok(service.view(user))

    return await run_admin_write(request, ctx, write, headers=_etag)


@router.get("/{staff_id}")
async def get_staff(staff_id: str, ctx: Owner, db: DB) -> JSON:
    sid = path_id(staff_id, "staff member")
    user = await db.read(lambda s: service.get_staff(s, ctx.company_id, sid))
    body = ok(service.view(user))
    return JSON(body, headers=_etag(body))


@router.patch("/{staff_id}", openapi_extra=openapi_body(StaffPatch))
async def update_staff(request: Request, staff_id: str, ctx: Owner, db: DB) -> JSON:
    sid = path_id(staff_id, "staff member")
    require_json(request)
    body, _raw = await parse_body(request, StaffPatch)
    header = versions.parse_if_match(request.headers.get("if-match"))
    expected = header if header is not None else body.version
    changes: dict[str, Any] = {
        name: getattr(body, name)
        for name in ("name", "email", "role", "password")
        if getattr(body, name) is not None
    }
    if "warehouse_id" in body.model_fields_set:
        changes["warehouse_id"] = body.warehouse_id
    user = await db.write(
        lambda s: service.update_staff(
            s, ctx.company_id, sid, expected, actor_id=ctx.user_id, **changes
        )
    )
    answer = ok(service.view(user))
    return JSON(answer, headers=_etag(answer))


@router.post("/{staff_id}/archive")
async def archive_staff(request: Request, staff_id: str, ctx: Owner) -> JSON:
    """No login from now on, and every open session of theirs ends."""
    sid = path_id(staff_id, "staff member")

    async def write(s: AsyncSession) -> dict[str, Any]:
        user = await service.archive_staff(s, ctx.company_id, sid, actor_id=ctx.user_id)
        return ok(service.view(user))

    return await run_admin_write(request, ctx, write, headers=_etag)


@router.put("/{staff_id}/pin", openapi_extra=openapi_body(PinIn))
async def set_pin(request: Request, staff_id: str, ctx: CurrentAdmin, db: DB) -> JSON:
    """The PIN a staff member sells with at a register (4 to 8 digits; null removes
    it): set by an owner (``staff.manage``) or by the staff member themselves. The
    answer says whether one is set, never the PIN."""
    sid = path_id(staff_id, "staff member")
    if sid != ctx.user_id:
        ctx.require("staff.manage")
    require_json(request)
    body, _raw = await parse_body(request, PinIn)
    user = await db.write(
        lambda s: service.set_pin(s, ctx.company_id, sid, body.pin, actor_id=ctx.user_id)
    )
    answer = ok(service.view(user))
    return JSON(answer, headers=_etag(answer))
