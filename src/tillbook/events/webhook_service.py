"""Webhook endpoints and their deliveries: register, list, disable, remove, rotate the
secret, list deliveries and redeliver. Services flush, never commit.

``Webhook.events`` holds ``*`` or a comma-separated list of event types; the
secret is stored encrypted under the master key (context ``webhook-secret``) and
shown once, when created or rotated. A URL is registered only after the address
policy (``events/urlpolicy.py``) accepted it, and checked again at every delivery.

Every change is recorded in the audit trail here, by the actor that made it, so the
admin API, the back office and the command line leave the same record; a secret
never is: a rotation is recorded as ``"secret": "rotated"``.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, get_args

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.audit.service import record
from tillbook.auth.actor import Actor
from tillbook.config import master_key
from tillbook.db import cross_tenant
from tillbook.errors import NotFound, ValidationFailed
from tillbook.events.outbox import EVENT_TYPES
from tillbook.events.urlpolicy import UrlPolicy, UrlRefused, check_url
from tillbook.kit import crypto
from tillbook.models import DeliveryAttempt, OutboxEvent, Webhook, WebhookDelivery

SECRET_CONTEXT = b"webhook-secret"
# A delivery's states, and the ``status`` filter of its list (documented from here).
DeliveryStatus = Literal["pending", "delivering", "retrying", "delivered", "dead"]
DELIVERY_STATUSES: tuple[str, ...] = get_args(DeliveryStatus)


# Who acts when a caller names no one: the system (a script, a test's set-up).
SYSTEM = Actor.system()


def new_secret() -> str:
    return crypto.random_token("whsec_", 32)


def webhook_secret(webhook: Webhook) -> str:
    return crypto.decrypt(webhook.secret_encrypted, master_key(), context=SECRET_CONTEXT)


def subscribed(webhook_events: str, event_type: str) -> bool:
    names = {name.strip() for name in webhook_events.split(",")}
    return "*" in names or event_type in names


@dataclass(frozen=True)
class NewWebhook:
    """A registration that passed :func:`check_new_webhook`: what :func:`add_webhook` stores."""

    url: str
    events: str  # ``*`` or the comma-separated event types


async def check_new_webhook(
    url: str, events: Sequence[str] | None, policy: UrlPolicy
) -> NewWebhook:
    """Check a registration before any transaction opens: the URL against the address
    policy (which resolves the host, a network wait no write lock should cover) and the
    event names. Every problem is reported at once, each under its field."""
    errors: dict[str, list[str]] = {}
    try:
        await check_url(url, policy)
    except UrlRefused as exc:
        errors["url"] = [str(exc)]
    names = list(events) if events else ["*"]
    unknown = [name for name in names if name != "*" and name not in EVENT_TYPES]
    if unknown:
        errors["events"] = [
            f"unknown event {name!r}; use * or one of {', '.join(EVENT_TYPES)}" for name in unknown
        ]
    if errors:
        raise ValidationFailed(errors)
    return NewWebhook(url=url, events="*" if "*" in names else ",".join(dict.fromkeys(names)))


def _audited(webhook: Webhook) -> dict[str, Any]:
    return {"url": webhook.url, "events": webhook.events, "active": webhook.active}


async def _audit(
    session: AsyncSession,
    company_id: int,
    actor: Actor,
    action: str,
    entity_id: int,
    before: dict[str, Any] | None,
    after: dict[str, Any] | None,
    entity_type: str = "webhook",
) -> None:
    await record(
        session,
        company_id=company_id,
        actor=actor,
        action=action,
        entity_type=entity_type,
        entity_id=entity_id,
        before=before,
        after=after,
    )


async def add_webhook(
    session: AsyncSession, company_id: int, new: NewWebhook, *, actor: Actor = SYSTEM
) -> tuple[Webhook, str]:
    """Register a checked endpoint; returns it and its secret (shown only now)."""
    secret = new_secret()
    webhook = Webhook(
        company_id=company_id,
        url=new.url,
        events=new.events,
        secret_encrypted=crypto.encrypt(secret, master_key(), context=SECRET_CONTEXT),
        active=True,
        created_at=dt.datetime.now(dt.UTC),
    )
    session.add(webhook)
    await session.flush()
    await _audit(session, company_id, actor, "created", webhook.id, None, _audited(webhook))
    return webhook, secret


async def get_webhook(session: AsyncSession, company_id: int, webhook_id: int) -> Webhook:
    found = await session.scalar(
        select(Webhook).where(Webhook.id == webhook_id, Webhook.company_id == company_id)
    )
    if found is None:
        raise NotFound(f"webhook {webhook_id} not found")
    return found


async def list_webhooks(session: AsyncSession, company_id: int) -> list[Webhook]:
    rows = await session.scalars(
        select(Webhook).where(Webhook.company_id == company_id).order_by(Webhook.id)
    )
    return list(rows)


async def set_active(
    session: AsyncSession, company_id: int, webhook_id: int, active: bool, *, actor: Actor = SYSTEM
) -> Webhook:
    """Enable a webhook, or disable it: no new deliveries, and due ones are held until
    the webhook is enabled again."""
    webhook = await get_webhook(session, company_id, webhook_id)
    before = _audited(webhook)
    webhook.active = active
    await session.flush()
    action = "enabled" if active else "disabled"
    await _audit(session, company_id, actor, action, webhook_id, before, _audited(webhook))
    return webhook


async def disable_webhook(
    session: AsyncSession, company_id: int, webhook_id: int, *, actor: Actor = SYSTEM
) -> Webhook:
    return await set_active(session, company_id, webhook_id, False, actor=actor)


async def enable_webhook(
    session: AsyncSession, company_id: int, webhook_id: int, *, actor: Actor = SYSTEM
) -> Webhook:
    return await set_active(session, company_id, webhook_id, True, actor=actor)


async def remove_webhook(
    session: AsyncSession, company_id: int, webhook_id: int, *, actor: Actor = SYSTEM
) -> None:
    """Delete the endpoint with its deliveries and their attempts."""
    webhook = await get_webhook(session, company_id, webhook_id)
    before = _audited(webhook)
    delivery_ids = select(WebhookDelivery.id).where(
        WebhookDelivery.company_id == company_id, WebhookDelivery.webhook_id == webhook.id
    )
    await session.execute(
        delete(DeliveryAttempt).where(
            DeliveryAttempt.company_id == company_id, DeliveryAttempt.delivery_id.in_(delivery_ids)
        )
    )
    await session.execute(
        delete(WebhookDelivery).where(
            WebhookDelivery.company_id == company_id, WebhookDelivery.webhook_id == webhook.id
        )
    )
    await session.delete(webhook)
    await session.flush()
    await _audit(session, company_id, actor, "removed", webhook_id, before, None)


async def rotate_secret(
    session: AsyncSession, company_id: int, webhook_id: int, *, actor: Actor = SYSTEM
) -> tuple[Webhook, str]:
    """A new secret, effective for every send from now on; the old one stops working."""
    webhook = await get_webhook(session, company_id, webhook_id)
    secret = new_secret()
    webhook.secret_encrypted = crypto.encrypt(secret, master_key(), context=SECRET_CONTEXT)
    await session.flush()
    await _audit(session, company_id, actor, "updated", webhook_id, {"secret": None},
                 {"secret": "rotated"})  # fmt: skip
    return webhook, secret


async def list_deliveries(
    session: AsyncSession,
    company_id: int,
    status: str | None = None,
    *,
    webhook_id: int | None = None,
    limit: int = 100,
) -> list[WebhookDelivery]:
    if status is not None and status not in DELIVERY_STATUSES:
        raise ValidationFailed(
            {"status": [f"{status!r} is not one of {', '.join(DELIVERY_STATUSES)}"]}
        )
    query = select(WebhookDelivery).where(WebhookDelivery.company_id == company_id)
    if status is not None:
        query = query.where(WebhookDelivery.status == status)
    if webhook_id is not None:
        query = query.where(WebhookDelivery.webhook_id == webhook_id)
    rows = await session.scalars(query.order_by(WebhookDelivery.id.desc()).limit(limit))
    return list(rows)


async def get_delivery(session: AsyncSession, company_id: int, delivery_id: int) -> WebhookDelivery:
    found = await session.scalar(
        select(WebhookDelivery).where(
            WebhookDelivery.id == delivery_id, WebhookDelivery.company_id == company_id
        )
    )
    if found is None:
        raise NotFound(f"delivery {delivery_id} not found")
    return found


async def event_refs(
    session: AsyncSession, deliveries: Sequence[WebhookDelivery]
) -> dict[int, tuple[str, str]]:
    """Outbox row id -> (public event id ``evt_...``, event type) for these deliveries."""
    ids = {d.event_id for d in deliveries}
    if not ids:
        return {}
    # (one company's deliveries, so one company's events: a router query)
    companies = {d.company_id for d in deliveries}
    rows = await session.execute(
        select(OutboxEvent.id, OutboxEvent.event_id, OutboxEvent.type).where(
            OutboxEvent.company_id.in_(companies), OutboxEvent.id.in_(ids)
        )
    )
    return {row_id: (event_id, type_) for row_id, event_id, type_ in rows.all()}


async def list_attempts(
    session: AsyncSession, company_id: int, delivery_id: int
) -> list[DeliveryAttempt]:
    rows = await session.scalars(
        select(DeliveryAttempt)
        .where(DeliveryAttempt.company_id == company_id, DeliveryAttempt.delivery_id == delivery_id)
        .order_by(DeliveryAttempt.id)
    )
    return list(rows)


async def redeliver(
    session: AsyncSession,
    delivery_id: int,
    *,
    company_id: int | None = None,
    actor: Actor = SYSTEM,
) -> WebhookDelivery:
    """Queue a delivery again now, whatever its state (a dead one gets a fresh 24 h)."""
    query = select(WebhookDelivery).where(WebhookDelivery.id == delivery_id)
    if company_id is not None:
        query = query.where(WebhookDelivery.company_id == company_id)
        delivery = await session.scalar(query)
    else:
        with cross_tenant("operator"):  # the operator's CLI names any company's delivery
            delivery = await session.scalar(query)
    if delivery is None:
        raise NotFound(f"delivery {delivery_id} not found")
    now = dt.datetime.now(dt.UTC)
    delivery.status = "pending"
    delivery.next_attempt_at = now
    delivery.locked_until = None
    delivery.attempts = 0
    delivery.created_at = now
    await session.flush()
    await _audit(session, delivery.company_id, actor, "redelivered", delivery.id, None,
                 {"webhook_id": delivery.webhook_id}, entity_type="webhook_delivery")  # fmt: skip
    return delivery
