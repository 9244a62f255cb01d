"""Taxes (``/taxes``): a new rate applies to orders priced after the edit; orders
before keep the rate on their lines."""

from __future__ import annotations

from typing import Any

from tillbook.api.admin.editing import Resource, router_for
from tillbook.auth.admin import AdminContext
from tillbook.catalog import reference
from tillbook.catalog.reference import AdminTax
from tillbook.catalog.reference_schemas import TaxIn, TaxPatch
from tillbook.unit import UnitOfWork


async def _create(uow: UnitOfWork, ctx: AdminContext, body: TaxIn) -> AdminTax:
    tax = await reference.add_tax(
        uow.session,
        ctx.company_id,
        ctx.user_id,
        name=body.name,
        rate=body.rate,
        inclusive=body.inclusive,
    )
    return reference.tax_view(tax)


async def _edit(
    uow: UnitOfWork, ctx: AdminContext, id_: int, version: int | None, changes: dict[str, Any]
) -> AdminTax:
    tax = await reference.edit_tax(uow.session, ctx.company_id, ctx.user_id, id_, version, changes)
    return reference.tax_view(tax)


async def _archive(uow: UnitOfWork, ctx: AdminContext, id_: int, version: int | None) -> AdminTax:
    tax = await reference.archive_tax(uow.session, ctx.company_id, ctx.user_id, id_, version)
    return reference.tax_view(tax)


router = router_for(
    Resource(
        prefix="taxes",
        noun="tax",
        write="settings.write",
        create_body=TaxIn,
        patch_body=TaxPatch,
        page=lambda s, cid, p, archived: reference.page_of(
            s, "tax", cid, p, include_archived=archived
        ),
        one=lambda s, cid, id_: reference.one_of(s, "tax", cid, id_),
        create=_create,
        edit=_edit,
        archive=_archive,
    )
)
