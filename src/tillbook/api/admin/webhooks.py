"""Webhook endpoints and their deliveries, for the session's company only.

A webhook's secret is shown twice in its life: in the answer that creates it and in
the one that rotates it. Ids of another company's records are simply not found.
Owners only (``webhooks.manage``). Every change is recorded in the audit trail by
the service (``events.webhook_service``), in the change's own transaction.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any

from fastapi import Request
from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.api import envelope, routing
from tillbook.api.admin.deps import Allowed, path_id, query_id, require_json
from tillbook.api.admin.schemas import WebhookIn
from tillbook.api.body import openapi_body, parse_body
from tillbook.api.deps import DB
from tillbook.api.idempotent import run_admin_write
from tillbook.api.responses import JSON
from tillbook.auth.admin import AdminContext, iso_utc
from tillbook.config import Settings
from tillbook.errors import invalid
from tillbook.events import webhook_service as service
from tillbook.events.urlpolicy import UrlPolicy
from tillbook.kit import numerals
from tillbook.kit.text import quoted
from tillbook.models import DeliveryAttempt, Webhook, WebhookDelivery

router = routing.admin("/webhooks", tags=["admin: webhooks"])

CurrentAdmin = Annotated[AdminContext, Allowed("webhooks.manage")]

MAX_LIMIT = 500


def webhook_view(webhook: Webhook, secret: str | None = None) -> dict[str, Any]:
    view: dict[str, Any] = {
        "id": webhook.id,
        "url": webhook.url,
        "events": [name.strip() for name in webhook.events.split(",") if name.strip()],
        "active": webhook.active,
        "created_at": iso_utc(webhook.created_at),
    }
    if secret is not None:
        view["secret"] = secret
    return view


def delivery_view(d: WebhookDelivery, events: dict[int, tuple[str, str]]) -> dict[str, Any]:
    event_id, event_type = events.get(d.event_id, (None, None))
    return {
        "id": d.id,
        "webhook_id": d.webhook_id,
        "event_id": event_id,
        "event_type": event_type,
        "delivery_uid": d.delivery_uid,
        "status": d.status,
        "attempts": d.attempts,
        "next_attempt_at": iso_utc(d.next_attempt_at),
        "last_status_code": d.last_status_code,
        "last_error": d.last_error,
        "delivered_at": None if d.delivered_at is None else iso_utc(d.delivered_at),
        "created_at": iso_utc(d.created_at),
    }


def attempt_view(a: DeliveryAttempt) -> dict[str, Any]:
    return {
        "id": a.id,
        "attempted_at": iso_utc(a.attempted_at),
        "status_code": a.status_code,
        "latency_ms": round(a.latency_ms, 1),
        "error": a.error,
    }


def _limit(value: str | None) -> int:
    if value is None or value == "":
        return 100
    n = numerals.whole(value)
    if n is None or not 1 <= n <= MAX_LIMIT:
        raise invalid("limit", f"must be an integer from 1 to {MAX_LIMIT} (got {quoted(value)})")
    return n


async def _with_events(
    session: AsyncSession, deliveries: Sequence[WebhookDelivery]
) -> list[dict[str, Any]]:
    events = await service.event_refs(session, deliveries)
    return [delivery_view(d, events) for d in deliveries]


@router.post("", openapi_extra=openapi_body(WebhookIn))
async def add_webhook(request: Request, ctx: CurrentAdmin) -> JSON:
    require_json(request)
    body, _raw = await parse_body(request, WebhookIn)
    settings: Settings = request.app.state.settings
    new = await service.check_new_webhook(body.url, body.events, UrlPolicy.from_settings(settings))

    async def write(s: AsyncSession) -> dict[str, Any]:
        webhook, secret = await service.add_webhook(s, ctx.company_id, new, actor=ctx.actor)
        return envelope.ok(webhook_view(webhook, secret))

    return await run_admin_write(request, ctx, write)


@router.get("")
async def list_webhooks(ctx: CurrentAdmin, db: DB) -> dict[str, Any]:
    hooks = await db.read(lambda s: service.list_webhooks(s, ctx.company_id))
    return envelope.ok([webhook_view(w) for w in hooks])


@router.get("/deliveries")
async def list_deliveries(
    ctx: CurrentAdmin,
    db: DB,
    status: str | None = None,
    webhook_id: str | None = None,
    limit: str | None = None,
) -> dict[str, Any]:
    hook_id = query_id(webhook_id, "webhook_id")
    count = _limit(limit)
    state = status or None

    async def read(s: AsyncSession) -> list[dict[str, Any]]:
        if hook_id is not None:
            await service.get_webhook(s, ctx.company_id, hook_id)
        rows = await service.list_deliveries(
            s, ctx.company_id, state, webhook_id=hook_id, limit=count
        )
        return await _with_events(s, rows)

    return envelope.ok(await db.read(read))


@router.get("/deliveries/{delivery_id}/attempts")
async def list_attempts(delivery_id: str, ctx: CurrentAdmin, db: DB) -> dict[str, Any]:
    did = path_id(delivery_id, "delivery")

    async def read(s: AsyncSession) -> dict[str, Any]:
        delivery = await service.get_delivery(s, ctx.company_id, did)
        attempts = await service.list_attempts(s, delivery.company_id, delivery.id)
        view = (await _with_events(s, [delivery]))[0]
        view["attempt_log"] = [attempt_view(a) for a in attempts]
        return view

    return envelope.ok(await db.read(read))


@router.post("/deliveries/{delivery_id}/redeliver")
async def redeliver(request: Request, delivery_id: str, ctx: CurrentAdmin) -> JSON:
    did = path_id(delivery_id, "delivery")

    async def write(s: AsyncSession) -> dict[str, Any]:
        delivery = await service.redeliver(s, did, company_id=ctx.company_id, actor=ctx.actor)
        return envelope.ok((await _with_events(s, [delivery]))[0])

    return await run_admin_write(request, ctx, write)


@router.post("/{webhook_id}/disable")
async def disable_webhook(request: Request, webhook_id: str, ctx: CurrentAdmin) -> JSON:
    wid = path_id(webhook_id, "webhook")

    async def write(s: AsyncSession) -> dict[str, Any]:
        webhook = await service.set_active(s, ctx.company_id, wid, False, actor=ctx.actor)
        return envelope.ok(webhook_view(webhook))

    return await run_admin_write(request, ctx, write)


@router.post("/{webhook_id}/enable")
async def enable_webhook(request: Request, webhook_id: str, ctx: CurrentAdmin) -> JSON:
    wid = path_id(webhook_id, "webhook")

    async def write(s: AsyncSession) -> dict[str, Any]:
        webhook = await service.set_active(s, ctx.company_id, wid, True, actor=ctx.actor)
        return envelope.ok(webhook_view(webhook))

    return await run_admin_write(request, ctx, write)


@router.post("/{webhook_id}/rotate-secret")
async def rotate_secret(request: Request, webhook_id: str, ctx: CurrentAdmin) -> JSON:
    wid = path_id(webhook_id, "webhook")

    async def write(s: AsyncSession) -> dict[str, Any]:
        webhook, secret = await service.rotate_secret(s, ctx.company_id, wid, actor=ctx.actor)
        return envelope.ok(webhook_view(webhook, secret))

    return await run_admin_write(request, ctx, write)


@router.delete("/{webhook_id}")
async def remove_webhook(webhook_id: str, ctx: CurrentAdmin, db: DB) -> dict[str, Any]:
    wid = path_id(webhook_id, "webhook")

    async def write(s: AsyncSession) -> None:
        await service.remove_webhook(s, ctx.company_id, wid, actor=ctx.actor)

    await db.write(write)
    return envelope.done(f"webhook {wid} removed")
