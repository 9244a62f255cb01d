"""Brands (``/brands``); a rename or archive tells tills to refresh their cached
brands (``product.updated``)."""

from __future__ import annotations

from typing import Any

from tillbook.api.admin.editing import Resource, router_for
from tillbook.auth.admin import AdminContext
from tillbook.catalog import reference
from tillbook.catalog.reference import AdminBrand
from tillbook.catalog.reference_schemas import BrandIn, BrandPatch
from tillbook.unit import UnitOfWork


async def _create(uow: UnitOfWork, ctx: AdminContext, body: BrandIn) -> AdminBrand:
    brand = await reference.add_brand(
        uow.session, ctx.company_id, ctx.user_id, name=body.name, slug=body.slug, image=body.image
    )
    return reference.brand_view(brand)


async def _edit(
    uow: UnitOfWork, ctx: AdminContext, id_: int, version: int | None, changes: dict[str, Any]
) -> AdminBrand:
    brand = await reference.edit_brand(uow, ctx.company_id, ctx.user_id, id_, version, changes)
    return reference.brand_view(brand)


async def _archive(uow: UnitOfWork, ctx: AdminContext, id_: int, version: int | None) -> AdminBrand:
    brand = await reference.archive_brand(uow, ctx.company_id, ctx.user_id, id_, version)
    return reference.brand_view(brand)


router = router_for(
    Resource(
        prefix="brands",
        noun="brand",
        write="catalog.write",
        create_body=BrandIn,
        patch_body=BrandPatch,
        page=lambda s, cid, p, archived: reference.page_of(
            s, "brand", cid, p, include_archived=archived
        ),
        one=lambda s, cid, id_: reference.one_of(s, "brand", cid, id_),
        create=_create,
        edit=_edit,
        archive=_archive,
    )
)
