"""Webhooks in the browser (``webhooks.manage``): add one, rotate its secret,
disable and enable it, the delivery log with each attempt, redeliver.

The URL is checked by the admin API's own path (``webhook_service.check_new_webhook``
under the address policy of ``events/urlpolicy.py``, before any transaction), and
every change is the service's (``events.webhook_service``), which audits it.

A secret is shown once, on the page that answers the creation or the rotation: it
is kept out of the form's replay record (``forms.submit`` stores only the
webhook's id), so the same form sent twice creates or rotates once and its second
answer says the secret was shown already."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Request
from fastapi.responses import Response
from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.api import routing
from tillbook.api.admin import webhooks as admin_webhooks
from tillbook.api.admin.deps import path_id
from tillbook.api.admin.schemas import WebhookIn
from tillbook.api.deps import DB
from tillbook.auth.admin import AdminContext
from tillbook.config import Settings
from tillbook.errors import ValidationFailed
from tillbook.events import webhook_service as service
from tillbook.events.outbox import EVENT_TYPES
from tillbook.events.urlpolicy import UrlPolicy
from tillbook.unit import UnitOfWork
from tillbook.web.forms import parse_model, see_other, submit, text, values
from tillbook.web.render import render
from tillbook.web.session import Page, read_form

router = routing.pages()

Hooks = Annotated[AdminContext, Page("webhooks.manage")]
LOG_LENGTH = 100  # the newest deliveries a webhook's page shows


async def _list_page(
    request: Request,
    ctx: AdminContext,
    db: Any,
    *,
    status: int = 200,
    shown: dict[str, Any] | None = None,
    errors: dict[str, list[str]] | None = None,
    form_values: dict[str, str] | None = None,
    chosen: list[str] | None = None,
) -> Response:
    hooks = await db.read(lambda s: service.list_webhooks(s, ctx.company_id))
    return render(
        request,
        "webhooks.html",
        status=status,
        hooks=[admin_webhooks.webhook_view(h) for h in hooks],
        event_types=EVENT_TYPES,
        chosen=chosen or [],
        shown=shown,
        errors=errors or {},
        values=form_values or {},
    )


@router.get("/settings/webhooks")
async def webhooks_list(request: Request, ctx: Hooks, db: DB) -> Response:
    return await _list_page(request, ctx, db)


@router.post("/settings/webhooks")
async def webhook_add(request: Request, ctx: Hooks, db: DB) -> Response:
    form = await read_form(request)
    chosen = [v for v in form.getlist("events") if isinstance(v, str) and v]
    secret: dict[str, str] = {}
    try:
        body = parse_model(WebhookIn, {"url": text(form, "url"), "events": chosen or None})
        settings: Settings = request.app.state.settings
        new = await service.check_new_webhook(
            body.url, body.events, UrlPolicy.from_settings(settings)
        )

        async def work(uow: UnitOfWork) -> dict[str, Any]:
            webhook, new_secret = await service.add_webhook(
                uow.session, ctx.company_id, new, actor=ctx.actor
            )
            secret["secret"] = new_secret  # kept out of the stored answer
            return admin_webhooks.webhook_view(webhook)

        done, replayed = await submit(request, ctx, work)
    except ValidationFailed as exc:
        return await _list_page(
            request,
            ctx,
            db,
            status=422,
            errors=exc.errors,
            form_values=values(form),
            chosen=chosen,
        )
    return await _list_page(
        request, ctx, db, shown={**done, **secret, "replayed": replayed, "what": "created"}
    )


@router.get("/settings/webhooks/{webhook_id}")
async def webhook_detail(
    request: Request, webhook_id: str, ctx: Hooks, db: DB, status: str | None = None
) -> Response:
    wid = path_id(webhook_id, "webhook")
    state = status or None

    async def read(s: AsyncSession) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        hook = await service.get_webhook(s, ctx.company_id, wid)
        rows = await service.list_deliveries(
            s, ctx.company_id, state, webhook_id=wid, limit=LOG_LENGTH
        )
        events = await service.event_refs(s, rows)
        return admin_webhooks.webhook_view(hook), [
            admin_webhooks.delivery_view(d, events) for d in rows
        ]

    errors: dict[str, list[str]] = {}
    try:
        hook, deliveries = await db.read(read)
    except ValidationFailed as exc:  # an unknown status in the filter
        errors, state = exc.errors, None
        hook, deliveries = await db.read(read)
    return render(
        request,
        "webhook.html",
        status=422 if errors else 200,
        hook=hook,
        deliveries=deliveries,
        statuses=service.DELIVERY_STATUSES,
        errors=errors,
        values={"status": state or ""},
        limit=LOG_LENGTH,
    )


@router.post("/settings/webhooks/{webhook_id}/disable")
async def webhook_disable(request: Request, webhook_id: str, ctx: Hooks) -> Response:
    return await _set_active(request, webhook_id, ctx, active=False)


@router.post("/settings/webhooks/{webhook_id}/enable")
async def webhook_enable(request: Request, webhook_id: str, ctx: Hooks) -> Response:
    return await _set_active(request, webhook_id, ctx, active=True)


async def _set_active(
    request: Request, webhook_id: str, ctx: AdminContext, *, active: bool
) -> Response:
    wid = path_id(webhook_id, "webhook")

    async def work(uow: UnitOfWork) -> dict[str, Any]:
        hook = await service.set_active(uow.session, ctx.company_id, wid, active, actor=ctx.actor)
        return admin_webhooks.webhook_view(hook)

    await submit(request, ctx, work)
    return see_other(f"/settings/webhooks/{wid}")


@router.get("/settings/webhooks/{webhook_id}/rotate")
async def webhook_rotate_confirm(request: Request, webhook_id: str, ctx: Hooks, db: DB) -> Response:
    wid = path_id(webhook_id, "webhook")
    hook = await db.read(lambda s: service.get_webhook(s, ctx.company_id, wid))
    return render(request, "webhook_rotate.html", hook=admin_webhooks.webhook_view(hook))


@router.post("/settings/webhooks/{webhook_id}/rotate")
async def webhook_rotate(request: Request, webhook_id: str, ctx: Hooks, db: DB) -> Response:
    wid = path_id(webhook_id, "webhook")
    secret: dict[str, str] = {}

    async def work(uow: UnitOfWork) -> dict[str, Any]:
        hook, new_secret = await service.rotate_secret(
            uow.session, ctx.company_id, wid, actor=ctx.actor
        )
        secret["secret"] = new_secret  # kept out of the stored answer
        return admin_webhooks.webhook_view(hook)

    done, replayed = await submit(request, ctx, work)
    return await _list_page(
        request, ctx, db, shown={**done, **secret, "replayed": replayed, "what": "rotated"}
    )


@router.get("/settings/webhooks/deliveries/{delivery_id}")
async def delivery_detail(request: Request, delivery_id: str, ctx: Hooks, db: DB) -> Response:
    did = path_id(delivery_id, "delivery")

    async def read(s: AsyncSession) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        delivery = await service.get_delivery(s, ctx.company_id, did)
        events = await service.event_refs(s, [delivery])
        attempts = await service.list_attempts(s, delivery.company_id, delivery.id)
        return admin_webhooks.delivery_view(delivery, events), [
            admin_webhooks.attempt_view(a) for a in attempts
        ]

    delivery, attempts = await db.read(read)
    return render(request, "delivery.html", delivery=delivery, attempts=attempts)


@router.post("/settings/webhooks/deliveries/{delivery_id}/redeliver")
async def delivery_redeliver(request: Request, delivery_id: str, ctx: Hooks) -> Response:
    did = path_id(delivery_id, "delivery")

    async def work(uow: UnitOfWork) -> dict[str, Any]:
        delivery = await service.redeliver(
            uow.session, did, company_id=ctx.company_id, actor=ctx.actor
        )
        return {"id": delivery.id, "webhook_id": delivery.webhook_id}

    await submit(request, ctx, work)
    return see_other(f"/settings/webhooks/deliveries/{did}?queued=1")
