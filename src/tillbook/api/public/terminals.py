"""Inbound terminal callbacks: authenticated by the provider's signature, not API keys."""

from __future__ import annotations

from fastapi import Request

from tillbook.api import envelope, routing
from tillbook.api.body import openapi_body, parse_bytes
from tillbook.api.deps import DB
from tillbook.api.public import openapi as r
from tillbook.api.responses import JSON
from tillbook.payments import terminal_callbacks as terminals
from tillbook.unit import UnitOfWork

router = routing.public(tags=["terminal callbacks"])


@router.post(
    "/terminal-callbacks/{provider}",
    openapi_extra=openapi_body(terminals.CallbackIn),
    responses=r.ok(r.CallbackResult, 400, 401, 404, 409, 422, keyed=False),
)
async def terminal_callback(provider: str, request: Request, db: DB) -> JSON:
    raw = await request.body()
    found = await db.read(lambda s: terminals.find_provider(s, provider))
    terminals.verify_signature(found, raw, request.headers.get("x-service-signature"))
    body = parse_bytes(raw, terminals.CallbackIn)

    async def work(uow: UnitOfWork) -> terminals.CallbackOutcome:
        fresh = await terminals.find_provider(uow.session, provider)
        return await terminals.handle_callback(uow, fresh, body)

    return JSON(envelope.flat(await db.unit(work)))
