"""Units of measure (``/units``): the company's, created, edited, archived."""

from __future__ import annotations

from typing import Any

from tillbook.api.admin.editing import Resource, router_for
from tillbook.auth.admin import AdminContext
from tillbook.catalog import reference
from tillbook.catalog.reference import AdminUnit
from tillbook.catalog.reference_schemas import UnitIn, UnitPatch
from tillbook.unit import UnitOfWork


async def _create(uow: UnitOfWork, ctx: AdminContext, body: UnitIn) -> AdminUnit:
    unit = await reference.add_unit(
        uow.session, ctx.company_id, ctx.user_id, name=body.name, short_name=body.short_name
    )
    return reference.unit_view(unit)


async def _edit(
    uow: UnitOfWork, ctx: AdminContext, id_: int, version: int | None, changes: dict[str, Any]
) -> AdminUnit:
    unit = await reference.edit_unit(
        uow.session, ctx.company_id, ctx.user_id, id_, version, changes
    )
    return reference.unit_view(unit)


async def _archive(uow: UnitOfWork, ctx: AdminContext, id_: int, version: int | None) -> AdminUnit:
    unit = await reference.archive_unit(uow.session, ctx.company_id, ctx.user_id, id_, version)
    return reference.unit_view(unit)


router = router_for(
    Resource(
        prefix="units",
        noun="unit",
        write="catalog.write",
        create_body=UnitIn,
        patch_body=UnitPatch,
        page=lambda s, cid, p, archived: reference.page_of(
            s, "unit", cid, p, include_archived=archived
        ),
        one=lambda s, cid, id_: reference.one_of(s, "unit", cid, id_),
        create=_create,
        edit=_edit,
        archive=_archive,
    )
)
