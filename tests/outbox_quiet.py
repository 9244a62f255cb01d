"""Delivery tests share one database per run with every other test, whose webhooks
point at receivers long gone. A delivery test's worker serves every company, oldest
first: set the others' backlog aside so that it works on this test's deliveries only
(what a real worker does with them is tested where they are made)."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import update

from tests.factories import Shop
from tillbook.db import Database
from tillbook.models import OutboxEvent, WebhookDelivery


async def only_this_company(db: Database, company_id: int) -> None:
    async def quiet(session: Any) -> None:
        await session.execute(
            update(OutboxEvent)
            .where(OutboxEvent.company_id != company_id, OutboxEvent.dispatched.is_(False))
            .values(dispatched=True)
        )
        await session.execute(
            update(WebhookDelivery)
            .where(
                WebhookDelivery.company_id != company_id,
                WebhookDelivery.status.in_(("pending", "retrying")),
            )
            .values(status="dead")
        )

    await db.write(quiet)


@pytest.fixture
async def quiet_outbox(db: Database, shop: Shop) -> None:
    await only_this_company(db, shop.company_id)
