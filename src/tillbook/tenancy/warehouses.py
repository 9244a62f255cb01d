"""Warehouses (branches) as the back office keeps them: created, edited and
archived, never deleted (their orders, stock and entries name them).

A new one is made by ``tenancy.service.create_warehouse``, as the CLI and the demo
make theirs, then given its address, phone and receipt texts. Names are unique
among the company's warehouses that are not archived (409 naming ``name``).
``allow_negative_stock`` is read with the API key on every request, so an edit
applies to the branch's next sale. A warehouse is archived only once no active
API key is bound to it: a till still selling there would otherwise sell from an
archived branch; revoke its keys first.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession
from typing_extensions import TypedDict

from tillbook.audit import setup_records
from tillbook.errors import Conflict, duplicate, invalid
from tillbook.kit import xid
from tillbook.kit.pagination import Page
from tillbook.kit.shapes import DateTimeStr, answer
from tillbook.models import ApiKey, Warehouse
from tillbook.orders.lookup import reference_changed
from tillbook.tenancy.service import create_warehouse


# The back office's answer (``api/admin/warehouses.py``); a till reads a slimmer one
# (``catalog/views.Warehouse``).
@answer
class AdminWarehouse(TypedDict):
    id: int
    xid: str
    name: str
    address: str | None
    phone: str | None
    allow_negative_stock: bool
    require_shift: bool
    receipt_header: str | None
    receipt_footer: str | None
    timezone: str
    version: int
    archived_at: DateTimeStr | None


def warehouse_view(w: Warehouse) -> AdminWarehouse:
    return {
        "id": w.id,
        "xid": xid.encode(w.id),
        "name": w.name,
        "address": w.address,
        "phone": w.phone,
        "allow_negative_stock": w.allow_negative_stock,
        "require_shift": w.require_shift,
        "receipt_header": w.receipt_header,
        "receipt_footer": w.receipt_footer,
        "timezone": w.timezone,
        "version": w.version,
        "archived_at": setup_records.iso(w.archived_at),
    }


async def warehouses_page(
    session: AsyncSession, company_id: int, page: Page, *, include_archived: bool
) -> tuple[int, list[AdminWarehouse]]:
    total, rows = await setup_records.page_of(
        session,
        Warehouse,
        company_id,
        page,
        include_archived=include_archived,
        order_by=(Warehouse.name,),
    )
    return total, [warehouse_view(w) for w in rows]


async def warehouse_one(
    session: AsyncSession, company_id: int, warehouse_id: int
) -> AdminWarehouse:
    return warehouse_view(
        await setup_records.find(
            session, Warehouse, company_id, warehouse_id, "warehouse", lock=False
        )
    )


def _fields(view: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in view.items() if k not in ("id", "xid", "version")}


async def _name_free(
    session: AsyncSession, company_id: int, name: str, exclude: int | None
) -> None:
    if await setup_records.taken(
        session, Warehouse, company_id, Warehouse.name, name, exclude_id=exclude
    ):
        raise duplicate("name", f"a warehouse named {name!r} already exists")


async def add_warehouse(
    session: AsyncSession,
    company_id: int,
    actor_id: int | None,
    fields: Mapping[str, Any],
) -> Warehouse:
    await reference_changed(session, company_id)
    name = fields["name"]
    await _name_free(session, company_id, name, None)
    warehouse = await create_warehouse(
        session,
        company_id,
        name,
        allow_negative_stock=bool(fields.get("allow_negative_stock", False)),
    )
    for column in ("address", "phone", "receipt_header", "receipt_footer"):
        setattr(warehouse, column, fields.get(column))
    warehouse.require_shift = bool(fields.get("require_shift", False))
    warehouse.timezone = fields.get("timezone") or "UTC"
    await setup_records.created(
        session,
        warehouse,
        actor_id=actor_id,
        entity_type="warehouse",
        fields=_fields(warehouse_view(warehouse)),
    )
    return warehouse


async def edit_warehouse(
    session: AsyncSession,
    company_id: int,
    actor_id: int | None,
    warehouse_id: int,
    expected_version: int | None,
    changes: Mapping[str, Any],
) -> Warehouse:
    """``address``, ``phone`` and the receipt texts may be cleared with null."""
    await reference_changed(session, company_id)
    warehouse = await setup_records.find(
        session, Warehouse, company_id, warehouse_id, "warehouse", lock=True
    )
    setup_records.check_version(warehouse, expected_version, f"warehouse {warehouse.id}")
    for required in ("name", "allow_negative_stock", "require_shift", "timezone"):
        if required in changes and changes[required] is None:
            raise invalid(required, "must not be null")
    before = _fields(warehouse_view(warehouse))
    await _name_free(session, company_id, changes.get("name", warehouse.name), warehouse.id)
    if setup_records.apply(warehouse, changes):
        await setup_records.updated(
            session,
            warehouse,
            actor_id=actor_id,
            entity_type="warehouse",
            before=before,
            after=_fields(warehouse_view(warehouse)),
        )
    return warehouse


async def archive_warehouse(
    session: AsyncSession,
    company_id: int,
    actor_id: int | None,
    warehouse_id: int,
    expected_version: int | None,
) -> Warehouse:
    await reference_changed(session, company_id)
    warehouse = await setup_records.find(
        session, Warehouse, company_id, warehouse_id, "warehouse", lock=True
    )
    setup_records.check_version(warehouse, expected_version, f"warehouse {warehouse.id}")
    open_keys = list(
        (
            await session.execute(
                select(ApiKey.name)
                .where(
                    ApiKey.company_id == company_id,
                    ApiKey.warehouse_id == warehouse.id,
                    ApiKey.status == 1,
                )
                .order_by(ApiKey.id)
            )
        ).scalars()
    )
    if open_keys and warehouse.archived_at is None:
        names = ", ".join(repr(n) for n in open_keys[:5]) + (" …" if len(open_keys) > 5 else "")
        raise Conflict(
            f"warehouse {warehouse.id} still has {len(open_keys)} active API key(s) "
            f"({names}); a till could keep selling there: revoke them first"
        )
    await setup_records.archive(
        session,
        warehouse,
        expected_version=expected_version,
        what=f"warehouse {warehouse.id}",
        actor_id=actor_id,
        entity_type="warehouse",
    )
    return warehouse
