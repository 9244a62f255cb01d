"""Company settings in the browser (``settings.write``): the company's money format
(``tenancy/company.py``), payment modes and expense
categories (listed and created through ``payments/setup.py``) and the branches'
receipt texts and stock policy (``tenancy/warehouses.py``), the services and body
models the admin API uses, so the same rules and the same audit trail apply.

A branch's edit carries the version it was based on in a hidden field: an edit
over someone else's is refused (412) with the branch as it is now."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Annotated, Any
from zoneinfo import available_timezones

from fastapi import Request
from fastapi.responses import Response
from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.api import routing
from tillbook.api.admin.deps import path_id
from tillbook.api.deps import DB
from tillbook.auth.admin import AdminContext
from tillbook.errors import PreconditionFailed, ValidationFailed
from tillbook.kit.pagination import envelope, parse_page
from tillbook.models.tenancy import MONEY_FORMATS
from tillbook.payments import setup
from tillbook.payments.setup_schemas import (
    ExpenseCategoryIn,
    ExpenseCategoryPatch,
    PaymentModeIn,
    PaymentModePatch,
)
from tillbook.tenancy import company as company_settings
from tillbook.tenancy import warehouses
from tillbook.tenancy.schemas import CompanySettingsIn, WarehouseIn, WarehousePatch
from tillbook.unit import UnitOfWork
from tillbook.web import document_currency
from tillbook.web.forms import id_field, parse_model, see_other, submit, text, values
from tillbook.web.render import render
from tillbook.web.session import Page, read_form

router = routing.pages()

Setter = Annotated[AdminContext, Page("settings.write")]


def stale(noun: str) -> str:
    return (
        f"Someone else changed this {noun} while you were editing it. "
        "Here it is as it is now; make your change again."
    )


STALE = stale("branch")


@dataclass(frozen=True)
class _Setup:
    """What the pages of one list call: the same services as the admin API's
    ``/payment-modes`` and ``/expense-categories``."""

    title: str
    noun: str
    rows: Callable[..., Awaitable[tuple[int, Sequence[Mapping[str, Any]]]]]
    one: Callable[[AsyncSession, int, int], Awaitable[Mapping[str, Any]]]
    edit: Callable[..., Awaitable[tuple[Any, Any]]]
    archive: Callable[..., Awaitable[tuple[Any, Any]]]
    view: Callable[[Any, Any], Mapping[str, Any]]
    patch: type[PaymentModePatch] | type[ExpenseCategoryPatch]


SETUPS: dict[str, _Setup] = {
    "payment-modes": _Setup(
        "Payment modes",
        "payment mode",
        setup.modes_page,
        setup.mode_one,
        setup.edit_payment_mode,
        setup.archive_payment_mode,
        setup.mode_view,
        PaymentModePatch,
    ),
    "expense-categories": _Setup(
        "Expense categories",
        "expense category",
        setup.expense_categories_page,
        setup.expense_category_one,
        setup.edit_expense_category,
        setup.archive_expense_category,
        setup.expense_category_view,
        ExpenseCategoryPatch,
    ),
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
    spec = SETUPS[kind]
    total, rows = await db.read(
        lambda s: spec.rows(s, ctx.company_id, paging, include_archived=True)
    )
    return render(
        request,
        "setup_list.html",
        status=status,
        kind=kind,
        title=spec.title,
        rows=rows,
        pages=envelope(paging, total, []),
        currencies=(
            await document_currency.choices(db, ctx.company_id) if kind == "payment-modes" else []
        ),
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
            {
                "code": text(form, "code"),
                "name": text(form, "name"),
                "currency": text(form, "currency") or None,
                **_account_fields(form),
            },
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
                currency=body.currency,
            )
            return dict(setup.mode_view(mode, account))

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
            return dict(setup.expense_category_view(cat, account))

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


# --- one payment mode or expense category: rename, another account, archive -------------


def _setup_item_routes(kind: str, spec: _Setup) -> None:
    base = f"/settings/{kind}"

    async def page(
        request: Request,
        ctx: AdminContext,
        db: Any,
        item_id: int,
        *,
        status: int = 200,
        errors: dict[str, list[str]] | None = None,
        form_values: dict[str, str] | None = None,
        message: str | None = None,
        confirm: bool = False,
    ) -> Response:
        item = await db.read(lambda s: spec.one(s, ctx.company_id, item_id))
        shown = {"name": item["name"], "account_code": item["account_code"]}
        shown.update(form_values or {})
        shown["version"] = str(item["version"])
        return render(
            request,
            "setup_item.html",
            status=status,
            kind=kind,
            title=spec.title,
            noun=spec.noun,
            item=item,
            errors=errors or {},
            values=shown,
            message=message,
            confirm=confirm,
        )

    @router.get(f"{base}/{{item_id}}", name=f"web_{kind}_item")
    async def item_page(request: Request, item_id: str, ctx: Setter, db: DB) -> Response:
        return await page(request, ctx, db, path_id(item_id, spec.noun))

    @router.get(f"{base}/{{item_id}}/archive", name=f"web_{kind}_archive_confirm")
    async def archive_confirm(request: Request, item_id: str, ctx: Setter, db: DB) -> Response:
        return await page(request, ctx, db, path_id(item_id, spec.noun), confirm=True)

    Work = Callable[[UnitOfWork], Awaitable[dict[str, Any]]]

    async def versioned(
        request: Request,
        ctx: AdminContext,
        db: Any,
        item_id: str,
        prepare: Callable[[int, int | None, Any], Awaitable[Work]],
        done: str,
    ) -> Response:
        """One change to the record at the version the form was drawn from: the
        form's ``version`` (a 422 beside the field when missing), ``prepare``
        (which may refuse the form with a 422) giving the unit to submit, a 412
        with the record as it is now when someone changed it in between."""
        iid = path_id(item_id, spec.noun)
        form = await read_form(request)
        errors: dict[str, list[str]] = {}
        version = id_field(form, "version", errors)
        try:
            if errors:
                raise ValidationFailed(errors)
            await submit(request, ctx, await prepare(iid, version, form))
        except ValidationFailed as exc:
            return await page(
                request, ctx, db, iid, status=422, errors=exc.errors, form_values=values(form)
            )
        except PreconditionFailed:
            return await page(request, ctx, db, iid, status=412, message=stale(spec.noun))
        return see_other(f"{base}/{iid}?{done}=1")

    @router.post(f"{base}/{{item_id}}/edit", name=f"web_{kind}_edit")
    async def item_edit(request: Request, item_id: str, ctx: Setter, db: DB) -> Response:
        async def prepare(iid: int, version: int | None, form: Any) -> Work:
            body = parse_model(
                spec.patch,
                {"name": text(form, "name"), **_account_fields(form), "version": version},
            )
            changes = body.model_dump(exclude={"version"}, exclude_none=True)
            # the account stays unless another code is typed or a new one is asked for
            current = await db.read(lambda s: spec.one(s, ctx.company_id, iid))
            if changes.get("account_code") == current["account_code"]:
                changes.pop("account_code")

            async def work(uow: UnitOfWork) -> dict[str, Any]:
                return dict(
                    spec.view(
                        *await spec.edit(
                            uow.session, ctx.company_id, ctx.user_id, iid, version, changes
                        )
                    )
                )

            return work

        return await versioned(request, ctx, db, item_id, prepare, "saved")

    @router.post(f"{base}/{{item_id}}/archive", name=f"web_{kind}_archive")
    async def item_archive(request: Request, item_id: str, ctx: Setter, db: DB) -> Response:
        async def prepare(iid: int, version: int | None, form: Any) -> Work:
            async def work(uow: UnitOfWork) -> dict[str, Any]:
                return dict(
                    spec.view(
                        *await spec.archive(uow.session, ctx.company_id, ctx.user_id, iid, version)
                    )
                )

            return work

        return await versioned(request, ctx, db, item_id, prepare, "archived")


for _kind, _spec in SETUPS.items():
    _setup_item_routes(_kind, _spec)


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


async def _branches_page(
    request: Request,
    ctx: AdminContext,
    db: Any,
    page: str | None = None,
    *,
    status: int = 200,
    errors: dict[str, list[str]] | None = None,
    form_values: dict[str, str] | None = None,
) -> Response:
    paging = parse_page(page, "50")
    total, rows = await db.read(
        lambda s: warehouses.warehouses_page(s, ctx.company_id, paging, include_archived=True)
    )
    return render(
        request,
        "branches.html",
        status=status,
        rows=rows,
        pages=envelope(paging, total, []),
        zones=zone_names(),
        errors=errors or {},
        values=form_values or {"timezone": "UTC"},
    )


@router.get("/settings/branches")
async def branches_list(request: Request, ctx: Setter, db: DB, page: str | None = None) -> Response:
    return await _branches_page(request, ctx, db, page)


def _branch_fields(form: Any) -> dict[str, Any]:
    """A branch's fields as the form gives them (the same form adds and edits)."""

    def multiline(name: str) -> str | None:
        raw = form.get(name)
        value = raw.replace("\r\n", "\n").strip() if isinstance(raw, str) else ""
        return value or None

    return {
        "name": text(form, "name"),
        "address": text(form, "address") or None,
        "phone": text(form, "phone") or None,
        "receipt_header": multiline("receipt_header"),
        "receipt_footer": multiline("receipt_footer"),
        "allow_negative_stock": text(form, "allow_negative_stock") == "1",
        "require_shift": text(form, "require_shift") == "1",
        "timezone": text(form, "timezone") or "UTC",
    }


@router.post("/settings/branches")
async def branch_create(request: Request, ctx: Setter, db: DB) -> Response:
    """A new branch (``warehouses.add_warehouse``, as ``POST /admin/warehouses``):
    it starts with no products listed and no API key; list products in it from a
    product's page and give its tills keys on the API keys page."""
    form = await read_form(request)
    try:
        body = parse_model(WarehouseIn, _branch_fields(form))

        async def work(uow: UnitOfWork) -> dict[str, Any]:
            branch = await warehouses.add_warehouse(
                uow.session, ctx.company_id, ctx.user_id, body.model_dump()
            )
            return dict(warehouses.warehouse_view(branch))

        created, _replayed = await submit(request, ctx, work)
    except ValidationFailed as exc:
        return await _branches_page(
            request, ctx, db, status=422, errors=exc.errors, form_values=values(form)
        )
    return see_other(f"/settings/branches/{created['id']}?saved=1")


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
        shown.update({k: form_values.get(k, "") for k in shown})
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
    data = _branch_fields(form)
    try:
        if errors:
            raise ValidationFailed(errors)
        patch = parse_model(WarehousePatch, {**data, "version": version})
        changes = patch.model_dump(exclude={"version"})

        async def work(uow: UnitOfWork) -> dict[str, Any]:
            branch = await warehouses.edit_warehouse(
                uow.session, ctx.company_id, ctx.user_id, wid, version, changes
            )
            return dict(warehouses.warehouse_view(branch))

        await submit(request, ctx, work)
    except ValidationFailed as exc:
        return await _branch_page(
            request, ctx, db, wid, status=422, errors=exc.errors, form_values=values(form)
        )
    except PreconditionFailed:
        return await _branch_page(request, ctx, db, wid, status=412, message=STALE)
    return see_other(f"/settings/branches/{wid}?saved=1")
