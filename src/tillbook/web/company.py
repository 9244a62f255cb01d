"""Company settings in the browser (``settings.write``): the company's money format
(``tenancy/company.py``), payment modes and expense
categories (listed and created through ``payments/setup.py``) and the branches'
receipt texts and stock policy (``tenancy/warehouses.py``), the services and body
models the admin API uses, so the same rules and the same audit trail apply.

A branch's edit carries the version it was based on in a hidden field: an edit
over someone else's is refused (412) with the branch as it is now."""

from __future__ import annotations

from functools import cache
from typing import Annotated, Any
from zoneinfo import available_timezones

from fastapi import APIRouter, Request
from fastapi.responses import Response
from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.api.admin.deps import path_id
from tillbook.api.deps import DB
from tillbook.auth.admin import AdminContext
from tillbook.errors import PreconditionFailed, ValidationFailed
from tillbook.kit.pagination import envelope, parse_page
from tillbook.models.tenancy import MONEY_FORMATS
from tillbook.payments import setup
from tillbook.payments.setup_schemas import ExpenseCategoryIn, PaymentModeIn
from tillbook.tenancy import company as company_settings
from tillbook.tenancy import warehouses
from tillbook.tenancy.schemas import CompanySettingsIn, WarehousePatch
from tillbook.unit import UnitOfWork
from tillbook.web.forms import submit, text, values
from tillbook.web.pages import id_field, parse_model, see_other
from tillbook.web.render import render
from tillbook.web.session import Page, read_form

router = APIRouter(include_in_schema=False)

Setter = Annotated[AdminContext, Page("settings.write")]
STALE = (
    "Someone else changed this branch while you were editing it. "
    "Here it is as it is now; make your change again."
)

# path -> title
LISTS: dict[str, str] = {
    "payment-modes": "Payment modes",
    "expense-categories": "Expense categories",
}


async def _list_page(
    request: Request,
    ctx: AdminContext,
    db: Any,
    kind: str,
    page: str | None = None,
    *,
    status: int = 200,
    errors: dict[str, list[str]] | None = None,
    form_values: dict[str, str] | None = None,
) -> Response:
    paging = parse_page(page, "50")

    async def read(s: AsyncSession) -> tuple[int, list[dict[str, Any]]]:
        if kind == "payment-modes":
            return await setup.modes_page(s, ctx.company_id, paging, include_archived=True)
        return await setup.expense_categories_page(s, ctx.company_id, paging, include_archived=True)

    total, rows = await db.read(read)
    return render(
        request,
        "setup_list.html",
        status=status,
        kind=kind,
        title=LISTS[kind],
        rows=rows,
        pages=envelope(paging, total, []),
        errors=errors or {},
        values=form_values or {},
    )


@router.get("/settings/payment-modes")
async def modes_list(request: Request, ctx: Setter, db: DB, page: str | None = None) -> Response:
    return await _list_page(request, ctx, db, "payment-modes", page)


@router.get("/settings/expense-categories")
async def categories_list(
    request: Request, ctx: Setter, db: DB, page: str | None = None
) -> Response:
    return await _list_page(request, ctx, db, "expense-categories", page)


def _account_fields(form: Any) -> dict[str, Any]:
    return {
        "account_code": text(form, "account_code") or None,
        "create_account": text(form, "create_account") == "1",
    }


@router.post("/settings/payment-modes")
async def mode_create(request: Request, ctx: Setter, db: DB) -> Response:
    form = await read_form(request)
    try:
        body = parse_model(
            PaymentModeIn,
            {"code": text(form, "code"), "name": text(form, "name"), **_account_fields(form)},
        )

        async def work(uow: UnitOfWork) -> dict[str, Any]:
            mode, account = await setup.add_payment_mode(
                uow.session,
                ctx.company_id,
                ctx.user_id,
                code=body.code,
                name=body.name,
                account_code=body.account_code,
                create_account=body.create_account,
            )
            return setup.mode_view(mode, account)

        await submit(request, ctx, work)
    except ValidationFailed as exc:
        return await _list_page(
            request,
            ctx,
            db,
            "payment-modes",
            status=422,
            errors=exc.errors,
            form_values=values(form),
        )
    return see_other("/settings/payment-modes?saved=1")


@router.post("/settings/expense-categories")
async def category_create(request: Request, ctx: Setter, db: DB) -> Response:
    form = await read_form(request)
    try:
        body = parse_model(ExpenseCategoryIn, {"name": text(form, "name"), **_account_fields(form)})

        async def work(uow: UnitOfWork) -> dict[str, Any]:
            cat, account = await setup.add_expense_category(
                uow.session,
                ctx.company_id,
                ctx.user_id,
                name=body.name,
                account_code=body.account_code,
                create_account=body.create_account,
            )
            return setup.expense_category_view(cat, account)

        await submit(request, ctx, work)
    except ValidationFailed as exc:
        return await _list_page(
            request,
            ctx,
            db,
            "expense-categories",
            status=422,
            errors=exc.errors,
            form_values=values(form),
        )
    return see_other("/settings/expense-categories?saved=1")


# --- the company ---------------------------------------------------------------------


async def _company_page(
    request: Request,
    ctx: AdminContext,
    db: Any,
    *,
    status: int = 200,
    errors: dict[str, list[str]] | None = None,
    form_values: dict[str, str] | None = None,
) -> Response:
    current = await db.read(lambda s: company_settings.settings_of(s, ctx.company_id))
    shown = {"money_format": current["money_format"], **(form_values or {})}
    return render(
        request,
        "company.html",
        status=status,
        company=current,
        formats=[(f, f) for f in MONEY_FORMATS],
        errors=errors or {},
        values=shown,
    )


@router.get("/settings/company")
async def company_detail(request: Request, ctx: Setter, db: DB) -> Response:
    return await _company_page(request, ctx, db)


@router.post("/settings/company")
async def company_edit(request: Request, ctx: Setter, db: DB) -> Response:
    form = await read_form(request)
    try:
        body = parse_model(CompanySettingsIn, {"money_format": text(form, "money_format")})

        async def work(uow: UnitOfWork) -> dict[str, Any]:
            changed = await company_settings.set_money_format(
                uow.session, ctx.company_id, ctx.user_id, body.money_format
            )
            return company_settings.settings_view(changed)

        await submit(request, ctx, work)
    except ValidationFailed as exc:
        return await _company_page(
            request, ctx, db, status=422, errors=exc.errors, form_values=values(form)
        )
    return see_other("/settings/company?saved=1")


@cache
def zone_names() -> tuple[str, ...]:
    """The tz database's zones, offered as suggestions on a branch's page."""
    return tuple(sorted(available_timezones()))


# --- branches ------------------------------------------------------------------------


@router.get("/settings/branches")
async def branches_list(request: Request, ctx: Setter, db: DB, page: str | None = None) -> Response:
    paging = parse_page(page, "50")
    total, rows = await db.read(
        lambda s: warehouses.warehouses_page(s, ctx.company_id, paging, include_archived=True)
    )
    return render(request, "branches.html", rows=rows, pages=envelope(paging, total, []))


async def _branch_page(
    request: Request,
    ctx: AdminContext,
    db: Any,
    wid: int,
    *,
    status: int = 200,
    errors: dict[str, list[str]] | None = None,
    form_values: dict[str, str] | None = None,
    message: str | None = None,
) -> Response:
    branch = await db.read(lambda s: warehouses.warehouse_one(s, ctx.company_id, wid))
    shown: dict[str, Any] = {
        k: ("" if branch[k] is None else branch[k])
        for k in ("name", "address", "phone", "receipt_header", "receipt_footer", "timezone")
    }
    shown["allow_negative_stock"] = "1" if branch["allow_negative_stock"] else ""
    shown["require_shift"] = "1" if branch["require_shift"] else ""
    if form_values is not None:
        shown.update(
            {k: form_values.get(k, "") for k in (*shown, "allow_negative_stock", "require_shift")}
        )
    shown["version"] = str(branch["version"])
    return render(
        request,
        "branch.html",
        status=status,
        branch=branch,
        zones=zone_names(),
        errors=errors or {},
        values=shown,
        message=message,
    )


@router.get("/settings/branches/{warehouse_id}")
async def branch_detail(request: Request, warehouse_id: str, ctx: Setter, db: DB) -> Response:
    return await _branch_page(request, ctx, db, path_id(warehouse_id, "warehouse"))


@router.post("/settings/branches/{warehouse_id}/edit")
async def branch_edit(request: Request, warehouse_id: str, ctx: Setter, db: DB) -> Response:
    wid = path_id(warehouse_id, "warehouse")
    form = await read_form(request)
    errors: dict[str, list[str]] = {}
    version = id_field(form, "version", errors)

    def multiline(name: str) -> str | None:
        raw = form.get(name)
        value = raw.replace("\r\n", "\n").strip() if isinstance(raw, str) else ""
        return value or None

    data: dict[str, Any] = {
        "name": text(form, "name"),
        "address": text(form, "address") or None,
        "phone": text(form, "phone") or None,
        "receipt_header": multiline("receipt_header"),
        "receipt_footer": multiline("receipt_footer"),
        "allow_negative_stock": text(form, "allow_negative_stock") == "1",
        "require_shift": text(form, "require_shift") == "1",
        "timezone": text(form, "timezone") or "UTC",
    }
    try:
        if errors:
            raise ValidationFailed(errors)
        patch = parse_model(WarehousePatch, {**data, "version": version})
        changes = patch.model_dump(exclude={"version"})

        async def work(uow: UnitOfWork) -> dict[str, Any]:
            branch = await warehouses.edit_warehouse(
                uow.session, ctx.company_id, ctx.user_id, wid, version, changes
            )
            return warehouses.warehouse_view(branch)

        await submit(request, ctx, work)
    except ValidationFailed as exc:
        return await _branch_page(
            request, ctx, db, wid, status=422, errors=exc.errors, form_values=values(form)
        )
    except PreconditionFailed:
        return await _branch_page(request, ctx, db, wid, status=412, message=STALE)
    return see_other(f"/settings/branches/{wid}?saved=1")
