"""Payment modes (``/payment-modes``), each posting to one cash or bank account
(an existing child of 11100, or a new one made for it)."""

from __future__ import annotations

from typing import Any

from tillbook.api.admin.editing import Resource, router_for
from tillbook.auth.admin import AdminContext
from tillbook.payments import setup
from tillbook.payments.setup import AdminPaymentMode
from tillbook.payments.setup_schemas import PaymentModeIn, PaymentModePatch
from tillbook.unit import UnitOfWork


async def _create(uow: UnitOfWork, ctx: AdminContext, body: PaymentModeIn) -> AdminPaymentMode:
    mode, account = await setup.add_payment_mode(
        uow.session,
        ctx.company_id,
        ctx.user_id,
        code=body.code,
        name=body.name,
        account_code=body.account_code,
        create_account=body.create_account,
        currency=body.currency,
    )
    return setup.mode_view(mode, account)


async def _edit(
    uow: UnitOfWork, ctx: AdminContext, id_: int, version: int | None, changes: dict[str, Any]
) -> AdminPaymentMode:
    mode, account = await setup.edit_payment_mode(
        uow.session, ctx.company_id, ctx.user_id, id_, version, changes
    )
    return setup.mode_view(mode, account)


async def _archive(
    uow: UnitOfWork, ctx: AdminContext, id_: int, version: int | None
) -> AdminPaymentMode:
    mode, account = await setup.archive_payment_mode(
        uow.session, ctx.company_id, ctx.user_id, id_, version
    )
    return setup.mode_view(mode, account)


router = router_for(
    Resource(
        prefix="payment-modes",
        noun="payment mode",
        write="settings.write",
        create_body=PaymentModeIn,
        patch_body=PaymentModePatch,
        page=lambda s, cid, p, archived: setup.modes_page(s, cid, p, include_archived=archived),
        one=setup.mode_one,
        create=_create,
        edit=_edit,
        archive=_archive,
    )
)
