"""Recording a back-office change: one call, in the change's own transaction.

Every service that changes a company's set-up (catalog, parties, staff, settings)
calls :func:`record` after it has flushed the change, with the record's fields
before and after, so that whichever door the change came through (admin API, CLI,
web page) it is recorded the same way."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.kit.jsonio import dumps
from tillbook.models import AuditEvent


def _encode(fields: Mapping[str, Any] | None) -> str | None:
    return None if fields is None else dumps(dict(fields)).decode()


def changed(before: Mapping[str, Any], after: Mapping[str, Any]) -> dict[str, Any]:
    """The fields of ``after`` whose value differs from ``before``."""
    return {k: v for k, v in after.items() if before.get(k) != v}


async def record(
    session: AsyncSession,
    *,
    company_id: int,
    actor_id: int | None,
    action: str,
    entity_type: str,
    entity_id: int | None,
    before: Mapping[str, Any] | None = None,
    after: Mapping[str, Any] | None = None,
) -> None:
    """One audit event. For an update, only the fields that changed are kept on
    each side (a price change is recorded as its old and new price, not the whole
    product twice)."""
    if before is not None and after is not None:
        keys = set(changed(before, after)) | {k for k in before if k not in after}
        before = {k: before.get(k) for k in sorted(keys)}
        after = {k: after.get(k) for k in sorted(keys)}
    session.add(
        AuditEvent(
            company_id=company_id,
            user_id=actor_id,
            action=action,
            entity_type=entity_type,
            entity_id=entity_id,
            before=_encode(before),
            after=_encode(after),
        )
    )
    await session.flush()
