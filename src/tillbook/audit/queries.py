"""Reading the audit trail: a company's events, newest first, filtered."""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.kit.pagination import Page
from tillbook.models import AuditEvent, User


@dataclass(frozen=True)
class AuditFilter:
    entity_type: str | None = None
    entity_id: int | None = None
    user_id: int | None = None
    date_from: dt.date | None = None  # first day, UTC
    date_to: dt.date | None = None  # last day, UTC, included


def _iso(moment: dt.datetime) -> str:
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)  # SQLite hands back naive UTC times
    return moment.astimezone(dt.UTC).isoformat().replace("+00:00", "Z")


def _fields(encoded: str | None) -> dict[str, Any] | None:
    return None if encoded is None else dict(json.loads(encoded))


def _midnight(day: dt.date) -> dt.datetime:
    return dt.datetime.combine(day, dt.time(), tzinfo=dt.UTC)


async def list_events(
    session: AsyncSession, company_id: int, page: Page, where: AuditFilter
) -> tuple[int, list[dict[str, Any]]]:
    """(total, one page of events), newest first, each naming who made the change
    (NULL user: an operator at the command line)."""
    conditions = [AuditEvent.company_id == company_id]
    if where.entity_type is not None:
        conditions.append(AuditEvent.entity_type == where.entity_type)
    if where.entity_id is not None:
        conditions.append(AuditEvent.entity_id == where.entity_id)
    if where.user_id is not None:
        conditions.append(AuditEvent.user_id == where.user_id)
    if where.date_from is not None:
        conditions.append(AuditEvent.created_at >= _midnight(where.date_from))
    if where.date_to is not None and where.date_to < dt.date.max:
        conditions.append(AuditEvent.created_at < _midnight(where.date_to + dt.timedelta(days=1)))
    total = (
        await session.scalar(select(func.count()).select_from(AuditEvent).where(*conditions))
    ) or 0
    rows = await session.execute(
        select(AuditEvent, User.name)
        .outerjoin(
            User, (User.id == AuditEvent.user_id) & (User.company_id == AuditEvent.company_id)
        )
        .where(*conditions)
        .order_by(AuditEvent.id.desc())
        .offset(page.offset)
        .limit(page.limit)
    )
    return total, [
        {
            "id": event.id,
            "at": _iso(event.created_at),
            "user": None if event.user_id is None else {"id": event.user_id, "name": name},
            "action": event.action,
            "entity_type": event.entity_type,
            "entity_id": event.entity_id,
            "before": _fields(event.before),
            "after": _fields(event.after),
        }
        for event, name in rows.all()
    ]
