"""Logging in and out of the back office."""

from __future__ import annotations

from typing import Any

from fastapi import Request

from tillbook.api import routing
from tillbook.api.admin.deps import CurrentAdmin, require_json
from tillbook.api.admin.schemas import LoginIn
from tillbook.api.body import openapi_body, parse_body
from tillbook.api.deps import DB
from tillbook.api.envelope import flat
from tillbook.auth import admin

router = routing.admin(tags=["admin: session"])


@router.post("/login", openapi_extra=openapi_body(LoginIn))
async def login(request: Request, db: DB) -> dict[str, Any]:
    require_json(request)
    body, _raw = await parse_body(request, LoginIn)
    address = request.client.host if request.client else "unknown"
    opened = await admin.login(
        db, request.app.state.ratelimiter, body.email, body.password, address
    )
    return flat(opened.answer())


@router.post("/logout")
async def logout(ctx: CurrentAdmin, db: DB) -> dict[str, Any]:
    await db.write(lambda s: admin.logout(s, ctx))
    return flat(admin.SESSION_ENDED)
