"""Warehouses (``/warehouses``): the company's branches, their receipt texts and
stock policy; archived only once no active API key is bound to one."""

from __future__ import annotations

from typing import Any

from tillbook.api.admin.editing import Resource, router_for
from tillbook.auth.admin import AdminContext
from tillbook.tenancy import warehouses
from tillbook.tenancy.schemas import WarehouseIn, WarehousePatch
from tillbook.tenancy.warehouses import AdminWarehouse
from tillbook.unit import UnitOfWork


async def _create(uow: UnitOfWork, ctx: AdminContext, body: WarehouseIn) -> AdminWarehouse:
    warehouse = await warehouses.add_warehouse(
        uow.session, ctx.company_id, ctx.user_id, body.model_dump()
    )
    return warehouses.warehouse_view(warehouse)


async def _edit(
    uow: UnitOfWork, ctx: AdminContext, id_: int, version: int | None, changes: dict[str, Any]
) -> AdminWarehouse:
    warehouse = await warehouses.edit_warehouse(
        uow.session, ctx.company_id, ctx.user_id, id_, version, changes
    )
    return warehouses.warehouse_view(warehouse)


async def _archive(
    uow: UnitOfWork, ctx: AdminContext, id_: int, version: int | None
) -> AdminWarehouse:
    warehouse = await warehouses.archive_warehouse(
        uow.session, ctx.company_id, ctx.user_id, id_, version
    )
    return warehouses.warehouse_view(warehouse)


router = router_for(
    Resource(
        prefix="warehouses",
        noun="warehouse",
        write="settings.write",
        create_body=WarehouseIn,
        patch_body=WarehousePatch,
        page=lambda s, cid, p, archived: warehouses.warehouses_page(
            s, cid, p, include_archived=archived
        ),
        one=warehouses.warehouse_one,
        create=_create,
        edit=_edit,
        archive=_archive,
    )
)
