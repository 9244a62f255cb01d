"""Recording a back-office change: one call, in the change's own transaction.

Every service that changes a company's set-up (catalog, parties, staff, settings)
calls :func:`record` after it has flushed the change, with the record's fields
before and after, so that whichever door the change came through (public API, admin
API, CLI, web page) it is recorded the same way. The record is written by the service
that makes the change, never by a route or a page: a door that does not call it
cannot leave the change unaudited. Who acted is the service's
:class:`~tillbook.auth.actor.Actor` (``actor``), or for the older callers its staff
member's id (``actor_id``; None for the command line)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.auth.actor import Actor
from tillbook.kit.jsonio import dumps
from tillbook.models import AuditEvent
from tillbook.models.base import table_of


def _encode(fields: Mapping[str, Any] | None) -> str | None:
    return None if fields is None else dumps(dict(fields)).decode()


def changed(before: Mapping[str, Any], after: Mapping[str, Any]) -> dict[str, Any]:
    """The fields of ``after`` whose value differs from ``before``."""
    return {k: v for k, v in after.items() if before.get(k) != v}


@dataclass(frozen=True)
class Change:
    """One change to record: ``before`` is None for a creation."""

    action: str
    entity_type: str
    entity_id: int | None
    after: Mapping[str, Any] | None
    before: Mapping[str, Any] | None = None


def _row(company_id: int, actor_id: int | None, change: Change) -> dict[str, Any]:
    before, after = change.before, change.after
    if before is not None and after is not None:
        # An update keeps only the fields that changed on each side (a price change
        # is its old and new price, not the whole product twice).
        keys = set(changed(before, after)) | {k for k in before if k not in after}
        before = {k: before.get(k) for k in sorted(keys)}
        after = {k: after.get(k) for k in sorted(keys)}
    return {
        "company_id": company_id,
        "user_id": actor_id,
        "action": change.action,
        "entity_type": change.entity_type,
        "entity_id": change.entity_id,
        "before": _encode(before),
        "after": _encode(after),
    }


async def record(
    session: AsyncSession,
    *,
    company_id: int,
    actor_id: int | None = None,
    actor: Actor | None = None,
    action: str,
    entity_type: str,
    entity_id: int | None,
    before: Mapping[str, Any] | None = None,
    after: Mapping[str, Any] | None = None,
) -> None:
    """One audit event, by ``actor`` (or the staff member ``actor_id``)."""
    if actor is not None:
        actor_id = actor.user_id
    change = Change(action, entity_type, entity_id, after, before)
    session.add(AuditEvent(**_row(company_id, actor_id, change)))
    await session.flush()


async def record_many(
    session: AsyncSession, *, company_id: int, actor_id: int | None, changes: Sequence[Change]
) -> None:
    """Many audit events in a few statements (an import of thousands of rows), each
    recorded exactly as :func:`record` would."""
    table = table_of(AuditEvent)
    rows = [_row(company_id, actor_id, c) for c in changes]
    for start in range(0, len(rows), 2_000):
        await session.execute(table.insert(), rows[start : start + 2_000])
