"""Loyalty points in the back office (DESIGN §18): the company's programme and a
customer's points with their statement.

Who may (``auth/roles.py``): reading the programme is ``books.read`` (what its
points owe is on 21400); setting it is ``settings.write``, company-wide, like every
settings change (a new point value revalues every branch's outstanding points).
A customer's points are read with ``parties.read``, as the customer is. The PUT
names the version it is based on once a programme exists (``If-Match`` or
``version``; 412 stale, 428 missing) and is idempotent on ``Idempotency-Key``."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Request

from tillbook.api import envelope, routing
from tillbook.api.admin.deps import Allowed, path_id, require_json
from tillbook.api.admin.editing import expected_version
from tillbook.api.body import openapi_body, parse_body
from tillbook.api.deps import DB
from tillbook.api.idempotent import run_admin_unit
from tillbook.api.responses import JSON
from tillbook.auth.admin import AdminContext
from tillbook.kit.pagination import parse_page
from tillbook.loyalty import programme, queries
from tillbook.loyalty.schemas import ProgrammeIn
from tillbook.unit import UnitOfWork

router = routing.admin(tags=["admin: loyalty"])

Reader = Annotated[AdminContext, Allowed("books.read", per_warehouse=True)]
Setter = Annotated[AdminContext, Allowed("settings.write")]
PartyReader = Annotated[AdminContext, Allowed("parties.read")]


@router.get("/loyalty")
async def read_programme(ctx: Reader, db: DB) -> JSON:
    """The programme (``configured`` false before it is set up) and what its
    outstanding points owe."""
    view = await db.read(lambda s: programme.read(s, ctx.company_id))
    return JSON(envelope.ok(view), headers={"ETag": programme.etag(view)})


@router.put("/loyalty", openapi_extra=openapi_body(ProgrammeIn))
async def set_programme(request: Request, ctx: Setter) -> JSON:
    require_json(request)
    body, _raw = await parse_body(request, ProgrammeIn)
    expected = expected_version(request, body.version)

    async def work(uow: UnitOfWork) -> dict[str, Any]:
        view = await programme.put(uow, ctx.company_id, ctx.actor, body, expected)
        return envelope.ok(view)

    return await run_admin_unit(
        request, ctx, work, headers=lambda answer: {"ETag": programme.etag(answer["data"])}
    )


@router.get("/customers/{customer_id}/loyalty")
async def customer_points(
    customer_id: str,
    ctx: PartyReader,
    db: DB,
    page: str | None = None,
    limit: str | None = None,
) -> dict[str, Any]:
    """A customer's points, their value today and their movements, newest first."""
    cid = path_id(customer_id, "customer")
    paging = parse_page(page, limit)
    data = await db.read(lambda s: queries.statement(s, ctx.company_id, cid, paging))
    return envelope.ok(data)
