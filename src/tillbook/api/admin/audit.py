"""The audit trail over HTTP: who changed what, when, from what to what
(``audit.read``: owners and accountants)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Query

from tillbook.api import envelope, routing
from tillbook.api.admin.deps import Allowed, query_id
from tillbook.api.deps import DB
from tillbook.audit.queries import AuditFilter, list_events
from tillbook.auth.admin import AdminContext
from tillbook.errors import invalid
from tillbook.kit import bounds, pagination
from tillbook.models import AuditEvent

router = routing.admin("/audit", tags=["admin: audit"])

ENTITY_TYPE_MAX = bounds.stored_length(AuditEvent.entity_type)


@router.get("")
async def list_audit_events(
    ctx: Annotated[AdminContext, Allowed("audit.read")],
    db: DB,
    entity_type: str | None = None,
    entity_id: str | None = None,
    user_id: str | None = None,
    date_from: Annotated[str | None, Query(alias="from")] = None,
    date_to: Annotated[str | None, Query(alias="to")] = None,
    page: str | None = None,
    limit: str | None = None,
) -> dict[str, Any]:
    """Newest first, in the pagination envelope; ``from``/``to`` are UTC days."""
    paging = pagination.parse_page(page, limit)
    start, end = bounds.query_date("from", date_from), bounds.query_date("to", date_to)
    if start is not None and end is not None and start > end:
        raise invalid("from", f"{start} is after to ({end})")
    where = AuditFilter(
        entity_type=bounds.query_text("entity_type", entity_type, ENTITY_TYPE_MAX),
        entity_id=query_id(entity_id, "entity_id"),
        user_id=query_id(user_id, "user_id"),
        date_from=start,
        date_to=end,
    )
    total, rows = await db.replica_read(lambda s: list_events(s, ctx.company_id, paging, where))
    return envelope.ok(pagination.envelope(paging, total, rows))
