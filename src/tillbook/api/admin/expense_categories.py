"""Expense categories (``/expense-categories``), each posting to one 52xxx expense
account (an existing one, or a new one made for it)."""

from __future__ import annotations

from typing import Any

from tillbook.api.admin.editing import Resource, router_for
from tillbook.auth.admin import AdminContext
from tillbook.payments import setup
from tillbook.payments.setup import AdminExpenseCategory
from tillbook.payments.setup_schemas import ExpenseCategoryIn, ExpenseCategoryPatch
from tillbook.unit import UnitOfWork


async def _create(
    uow: UnitOfWork, ctx: AdminContext, body: ExpenseCategoryIn
) -> AdminExpenseCategory:
    cat, account = await setup.add_expense_category(
        uow.session,
        ctx.company_id,
        ctx.user_id,
        name=body.name,
        account_code=body.account_code,
        create_account=body.create_account,
    )
    return setup.expense_category_view(cat, account)


async def _edit(
    uow: UnitOfWork, ctx: AdminContext, id_: int, version: int | None, changes: dict[str, Any]
) -> AdminExpenseCategory:
    cat, account = await setup.edit_expense_category(
        uow.session, ctx.company_id, ctx.user_id, id_, version, changes
    )
    return setup.expense_category_view(cat, account)


async def _archive(
    uow: UnitOfWork, ctx: AdminContext, id_: int, version: int | None
) -> AdminExpenseCategory:
    cat, account = await setup.archive_expense_category(
        uow.session, ctx.company_id, ctx.user_id, id_, version
    )
    return setup.expense_category_view(cat, account)


router = router_for(
    Resource(
        prefix="expense-categories",
        noun="expense category",
        write="settings.write",
        create_body=ExpenseCategoryIn,
        patch_body=ExpenseCategoryPatch,
        page=lambda s, cid, p, archived: setup.expense_categories_page(
            s, cid, p, include_archived=archived
        ),
        one=setup.expense_category_one,
        create=_create,
        edit=_edit,
        archive=_archive,
    )
)
