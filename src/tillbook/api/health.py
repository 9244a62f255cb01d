"""Probes at the root of the server for load balancers and orchestrators.

``GET /health``: the process answers (liveness; touches nothing else).
``GET /ready``: the database answers ``SELECT 1`` through the pool the requests use
(readiness); 503 in the error envelope when it does not, within ``READY_TIMEOUT``
seconds, so a probe is never left hanging on an unreachable host.

Neither needs a key or a session: they say nothing about any company.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.api import routing
from tillbook.api.deps import DB
from tillbook.errors import ServiceUnavailable

log = logging.getLogger("tillbook.health")

READY_TIMEOUT = 5.0

router = routing.root(tags=["health"])


@router.get("/health")
async def health() -> dict[str, Any]:
    return {"status": "success"}


async def _select_one(session: AsyncSession) -> None:
    await session.execute(text("SELECT 1"))


@router.get("/ready", responses={503: {"description": "the database does not answer"}})
async def ready(db: DB) -> dict[str, Any]:
    try:
        await asyncio.wait_for(db.read(_select_one), READY_TIMEOUT)
    except ServiceUnavailable:
        raise
    except Exception as exc:  # a timeout, or a database that refuses us (gone, renamed)
        log.warning("not ready: the database did not answer: %s", type(exc).__name__)
        raise ServiceUnavailable(headers={"Retry-After": "2"}) from None
    return {"status": "success"}
