"""Settings → Webhooks (``web/hooks.py``): an endpoint added once, its secret shown
once, rotated and disabled; the delivery log with each attempt, redelivered once."""

from __future__ import annotations

import datetime as dt
import re

import httpx
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from tests.factories import Shop, by_id, make_shop
from tests.web_helpers import (
    OWNER_PASSWORD,
    audit_count,
    count_rows,
    owner_email,
    owner_page,
    sign_in,
    tokens,
)
from tillbook.db import Database
from tillbook.models import Webhook


async def test_a_webhook_added_once_its_secret_shown_once_rotated_and_disabled(
    web: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    page = await owner_page(web, db, shop, "/settings/webhooks")
    form = {**tokens(page), "url": "ftp://127.0.0.1/x", "events": "order.created"}
    bad = await web.post("/settings/webhooks", data=form)
    assert bad.status_code == 422 and 'id="f-url"' in bad.text and 'class="error"' in bad.text
    assert await count_rows(db, Webhook, shop.company_id) == 0
    no_csrf = await web.post(
        "/settings/webhooks", data={**form, "csrf": "", "url": "http://127.0.0.1:9/h"}
    )
    assert no_csrf.status_code == 403
    form["url"] = "http://127.0.0.1:9/hook"
    first = await web.post("/settings/webhooks", data=form)
    assert first.status_code == 200 and 'id="webhook-secret">whsec_' in first.text
    again = await web.post("/settings/webhooks", data=form)
    assert "whsec_" not in again.text and "already created" in again.text
    assert await count_rows(db, Webhook, shop.company_id) == 1
    listed = await web.get("/settings/webhooks")
    assert "127.0.0.1:9/hook" in listed.text and "whsec_" not in listed.text
    hook_id = await db.read(
        lambda s: s.scalar(select(Webhook.id).where(Webhook.company_id == shop.company_id))
    )

    confirm = await web.get(f"/settings/webhooks/{hook_id}/rotate")
    assert confirm.status_code == 200
    rotated = await web.post(f"/settings/webhooks/{hook_id}/rotate", data=tokens(confirm.text))
    assert rotated.status_code == 200 and 'id="webhook-secret">whsec_' in rotated.text
    secret = re.search(r'id="webhook-secret">(whsec_[^<]+)<', rotated.text)
    first_secret = re.search(r'id="webhook-secret">(whsec_[^<]+)<', first.text)
    assert secret and first_secret and secret.group(1) != first_secret.group(1)
    replay = await web.post(f"/settings/webhooks/{hook_id}/rotate", data=tokens(confirm.text))
    assert "whsec_" not in replay.text and "already rotated" in replay.text

    detail = await web.get(f"/settings/webhooks/{hook_id}")
    assert detail.status_code == 200 and "No deliveries" in detail.text
    off = await web.post(f"/settings/webhooks/{hook_id}/disable", data=tokens(detail.text))
    assert off.status_code == 303
    hook = await db.read(lambda s: by_id(s, Webhook, hook_id))
    assert hook is not None and hook.active is False
    assert "Enable" in (await web.get(f"/settings/webhooks/{hook_id}")).text
    # created, rotated, disabled: each once
    assert await audit_count(db, shop.company_id, "webhook") == 3


async def test_the_delivery_log_shows_each_attempt_and_redelivers_once(
    web: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    from tillbook.events import webhook_service
    from tillbook.kit import crypto
    from tillbook.models import DeliveryAttempt, OutboxEvent, WebhookDelivery

    now = dt.datetime.now(dt.UTC)

    async def seed(s: AsyncSession) -> int:
        hook, _secret = await webhook_service.add_webhook(
            s, shop.company_id, webhook_service.NewWebhook(url="http://127.0.0.1:9/log", events="*")
        )
        event = OutboxEvent(
            event_id="evt_" + crypto.random_token("", 8),
            company_id=shop.company_id,
            warehouse_id=shop.warehouse_id,
            type="order.created",
            payload="{}",
            dispatched=True,  # fanned out already: its delivery is the one below
        )
        s.add(event)
        await s.flush()
        delivery = WebhookDelivery(
            company_id=shop.company_id,
            event_id=event.id,
            webhook_id=hook.id,
            delivery_uid="dlv_test",
            status="dead",
            attempts=2,
            next_attempt_at=now,
            last_status_code=500,
            last_error="server error",
        )
        s.add(delivery)
        await s.flush()
        for code, error in ((None, "connection refused"), (500, "server error")):
            s.add(
                DeliveryAttempt(
                    company_id=delivery.company_id,
                    delivery_id=delivery.id,
                    attempted_at=now,
                    status_code=code,
                    latency_ms=12.5,
                    error=error,
                )
            )
        return int(delivery.id)

    did = await db.write(seed)
    hook_page = await owner_page(web, db, shop, "/settings/webhooks")
    hook_id = re.search(r'href="/settings/webhooks/(\d+)"', hook_page)
    assert hook_id is not None
    log = await web.get(f"/settings/webhooks/{hook_id.group(1)}?status=dead")
    assert f"/settings/webhooks/deliveries/{did}" in log.text and "order.created" in log.text
    assert (
        "No deliveries"
        in (await web.get(f"/settings/webhooks/{hook_id.group(1)}?status=delivered")).text
    )
    bad = await web.get(f"/settings/webhooks/{hook_id.group(1)}?status=nonsense")
    assert bad.status_code == 422 and 'id="e-status"' in bad.text
    page = await web.get(f"/settings/webhooks/deliveries/{did}")
    assert page.status_code == 200
    assert "connection refused" in page.text and "server error" in page.text
    again = await web.post(f"/settings/webhooks/deliveries/{did}/redeliver", data=tokens(page.text))
    assert again.status_code == 303
    await web.post(f"/settings/webhooks/deliveries/{did}/redeliver", data=tokens(page.text))
    delivery = await db.read(lambda s: by_id(s, WebhookDelivery, did))
    assert delivery is not None and delivery.status == "pending" and delivery.attempts == 0
    assert await audit_count(db, shop.company_id, "webhook_delivery") == 1
    other = await make_shop(db)
    await sign_in(web, await owner_email(db, other), OWNER_PASSWORD)
    assert (await web.get(f"/settings/webhooks/deliveries/{did}")).status_code == 404
