"""The SQL and the steps every back-office edit of a set-up record shares.

A set-up record (``models.base.Editable``: units, categories, brands, taxes,
payment modes, expense categories, warehouses) belongs to one company, carries a
``version`` and is archived, never deleted. Whatever the record, an edit goes the
same way: find it in the company (another company's id reads as missing), lock it,
check the version the client based its edit on (``kit/versions.py``), apply the
fields that changed, bump the version once, and record the change
(``audit.service.record``) in the same transaction. The domain services keep the
rules of each kind (a category tree, a payment mode's account); this module keeps
the steps, so no kind can skip one.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

from sqlalchemy import ColumnElement, func, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import InstrumentedAttribute

from tillbook.audit.service import record
from tillbook.errors import Conflict, NotFound
from tillbook.kit.pagination import Page
from tillbook.kit.versions import expect
from tillbook.models import (
    Brand,
    Category,
    ExpenseCategory,
    PaymentMode,
    Promotion,
    Tax,
    Unit,
    Warehouse,
)

R = TypeVar("R", Unit, Category, Brand, Tax, PaymentMode, ExpenseCategory, Warehouse, Promotion)


def iso(value: dt.datetime | None) -> str | None:
    """ISO 8601 UTC with a ``Z`` (SQLite hands back naive UTC timestamps)."""
    if value is None:
        return None
    aware = value.replace(tzinfo=dt.UTC) if value.tzinfo is None else value.astimezone(dt.UTC)
    return aware.isoformat().replace("+00:00", "Z")


async def find(
    session: AsyncSession, model: type[R], company_id: int, id_: int, what: str, *, lock: bool
) -> R:
    """The company's record ``id_``, locked for the edit when ``lock``; another
    company's id is as missing as an id that never existed."""
    statement = select(model).where(model.id == id_, model.company_id == company_id)
    if lock:
        statement = statement.with_for_update()
    row = (await session.execute(statement)).scalar_one_or_none()
    if row is None:
        raise NotFound(f"{what} {id_} not found")
    return row


async def page_of(
    session: AsyncSession,
    model: type[R],
    company_id: int,
    page: Page,
    *,
    include_archived: bool,
    order_by: Sequence[InstrumentedAttribute[Any] | ColumnElement[Any]],
) -> tuple[int, list[R]]:
    """One page of the company's records and how many there are in all."""
    conds: list[ColumnElement[bool]] = [model.company_id == company_id]
    if not include_archived:
        conds.append(model.archived_at.is_(None))
    total = (
        await session.execute(select(func.count()).select_from(model).where(*conds))
    ).scalar_one()
    rows: list[R] = []
    if page.offset < total:
        rows = list(
            (
                await session.execute(
                    select(model)
                    .where(*conds)
                    .order_by(*order_by, model.id)
                    .offset(page.offset)
                    .limit(page.limit)
                )
            ).scalars()
        )
    return total, rows


async def taken(
    session: AsyncSession,
    model: type[R],
    company_id: int,
    column: InstrumentedAttribute[str],
    value: str,
    *,
    exclude_id: int | None = None,
    where: Sequence[ColumnElement[bool]] = (),
    archived_too: bool = False,
) -> bool:
    """Whether another of the company's records (not archived, unless
    ``archived_too``) has this value, compared without regard to case and outer
    spaces. The caller holds the company's reference lock
    (``orders.lookup.reference_changed``), so the answer holds until it commits."""
    conds: list[ColumnElement[bool]] = [
        model.company_id == company_id,
        func.lower(func.trim(column)) == value.strip().lower(),
        *where,
    ]
    if not archived_too:
        conds.append(model.archived_at.is_(None))
    if exclude_id is not None:
        conds.append(model.id != exclude_id)
    found = await session.scalar(select(model.id).where(*conds).limit(1))
    return found is not None


def check_version(row: R, expected: int | None, what: str) -> None:
    expect(row.version, expected, what)


def apply(row: R, changes: Mapping[str, Any]) -> bool:
    """Set the fields whose value differs; whether any did."""
    changed = False
    for name, value in changes.items():
        if getattr(row, name) != value:
            setattr(row, name, value)
            changed = True
    return changed


async def created(
    session: AsyncSession,
    row: R,
    *,
    actor_id: int | None,
    entity_type: str,
    fields: Mapping[str, Any],
) -> None:
    """A new record: flushed, then recorded with its fields."""
    await session.flush()
    await record(
        session,
        company_id=row.company_id,
        actor_id=actor_id,
        action=f"{entity_type}.created",
        entity_type=entity_type,
        entity_id=row.id,
        after=fields,
    )


async def updated(
    session: AsyncSession,
    row: R,
    *,
    actor_id: int | None,
    entity_type: str,
    before: Mapping[str, Any],
    after: Mapping[str, Any],
    action: str = "updated",
) -> None:
    """An edit already applied to ``row``: one version more, flushed, recorded."""
    row.version += 1
    await session.flush()
    await record(
        session,
        company_id=row.company_id,
        actor_id=actor_id,
        action=f"{entity_type}.{action}",
        entity_type=entity_type,
        entity_id=row.id,
        before={**before, "version": row.version - 1},
        after={**after, "version": row.version},
    )


async def archive(
    session: AsyncSession,
    row: R,
    *,
    expected_version: int | None,
    what: str,
    actor_id: int | None,
    entity_type: str,
) -> None:
    """Archive a record (it keeps its history; it takes no new use)."""
    check_version(row, expected_version, what)
    if row.archived_at is not None:
        raise Conflict(f"{what} is already archived (since {iso(row.archived_at)})")
    row.archived_at = dt.datetime.now(dt.UTC)
    await updated(
        session,
        row,
        actor_id=actor_id,
        entity_type=entity_type,
        before={"archived_at": None},
        after={"archived_at": iso(row.archived_at)},
        action="archived",
    )
