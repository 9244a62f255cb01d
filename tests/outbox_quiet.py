"""Delivery tests share one database per run with every other test, whose webhooks
point at receivers long gone. A delivery test's worker serves every company, oldest
first, so whether it reached this test's deliveries in its passes depended on which
tests ran before it. ``quiet_outbox`` sets that backlog aside (everything not yet
dispatched or delivered when the test begins, whichever company it is of), so the
worker works on what the test itself makes; what a real worker does with a backlog
is tested where one is made (``test_another_companys_burst_...``)."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import update

from tillbook.db import Database
from tillbook.models import OutboxEvent, WebhookDelivery


async def set_aside_backlog(db: Database) -> None:
    async def quiet(session: Any) -> None:
        await session.execute(
            update(OutboxEvent).where(OutboxEvent.dispatched.is_(False)).values(dispatched=True)
        )
        await session.execute(
            update(WebhookDelivery)
            .where(WebhookDelivery.status.in_(("pending", "retrying")))
            .values(status="dead")
        )

    await db.write(quiet)


@pytest.fixture
async def quiet_outbox(db: Database) -> None:
    await set_aside_backlog(db)
