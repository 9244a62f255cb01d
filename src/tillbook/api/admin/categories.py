"""Product categories (``/categories``): a tree; a rename, move or archive tells
tills to refresh their cached categories (``product.updated``)."""

from __future__ import annotations

from typing import Any

from tillbook.api.admin.editing import Resource, router_for
from tillbook.auth.admin import AdminContext
from tillbook.catalog import reference
from tillbook.catalog.reference import AdminCategory
from tillbook.catalog.reference_schemas import CategoryIn, CategoryPatch
from tillbook.unit import UnitOfWork


async def _create(uow: UnitOfWork, ctx: AdminContext, body: CategoryIn) -> AdminCategory:
    category = await reference.add_category(
        uow.session,
        ctx.company_id,
        ctx.user_id,
        name=body.name,
        slug=body.slug,
        parent_id=body.parent_id,
        image=body.image,
    )
    return reference.category_view(category)


async def _edit(
    uow: UnitOfWork, ctx: AdminContext, id_: int, version: int | None, changes: dict[str, Any]
) -> AdminCategory:
    category = await reference.edit_category(
        uow, ctx.company_id, ctx.user_id, id_, version, changes
    )
    return reference.category_view(category)


async def _archive(
    uow: UnitOfWork, ctx: AdminContext, id_: int, version: int | None
) -> AdminCategory:
    category = await reference.archive_category(uow, ctx.company_id, ctx.user_id, id_, version)
    return reference.category_view(category)


router = router_for(
    Resource(
        prefix="categories",
        noun="category",
        write="catalog.write",
        create_body=CategoryIn,
        patch_body=CategoryPatch,
        page=lambda s, cid, p, archived: reference.page_of(
            s, "category", cid, p, include_archived=archived
        ),
        one=lambda s, cid, id_: reference.one_of(s, "category", cid, id_),
        create=_create,
        edit=_edit,
        archive=_archive,
    )
)
