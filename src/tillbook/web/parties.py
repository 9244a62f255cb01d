"""Customers and suppliers: lists with balances and search, create, edit, archive
(with a confirmation), a party's outstanding invoices and its statement.

The same rules as the back-office API (``api/admin/parties.py``): reading needs
``parties.read``; customers are written with ``parties.write``, suppliers with
``suppliers.write``; a credit limit or an opening balance needs ``parties.credit``
as well (the field is only on the form for a role that has it, and the server
refuses it from anyone else). A statement is the books (``books.read``, narrowed
to a scoped staff member's branch), paged with the report's cursor and
downloadable as CSV."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Request
from fastapi.responses import Response, StreamingResponse
from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.api import routing
from tillbook.api.admin.deps import path_id
from tillbook.api.deps import DB
from tillbook.auth.admin import AdminContext
from tillbook.errors import Conflict, PreconditionFailed, ValidationFailed, invalid
from tillbook.kit import bounds
from tillbook.kit.pagination import Page as Paging
from tillbook.kit.pagination import parse_page
from tillbook.loyalty import queries as loyalty
from tillbook.orders import purchase_orders
from tillbook.orders import queries as order_queries
from tillbook.parties import service
from tillbook.parties.schemas import PartyIn, PartyPatch
from tillbook.reports.ledgers import CSV_PAGE, csv_rows, party_statement_page
from tillbook.unit import UnitOfWork
from tillbook.web.forms import (
    branches,
    decimal_field,
    id_field,
    parse_model,
    query_id,
    see_other,
    submit,
    text,
    values,
)
from tillbook.web.money import PAYMENT_OF
from tillbook.web.render import render
from tillbook.web.session import Page, read_form

router = routing.pages()

# path segment -> (party kind, title, the permission that writes it)
KINDS = {
    "customers": ("customer", "Customers", "parties.write"),
    "suppliers": ("supplier", "Suppliers", "suppliers.write"),
}
Reader = Annotated[AdminContext, Page("parties.read")]
FIELDS = ("name", "code", "phone", "email", "tax_number", "address")


def _kind(segment: str) -> tuple[str, str, str]:
    return KINDS[segment]


async def _list(request: Request, segment: str, ctx: AdminContext, db: Any) -> Response:
    kind, title, write = _kind(segment)
    params = request.query_params
    paging = parse_page(params.get("page"), "25")
    search = bounds.query_text("q", params.get("q"), 200)
    archived = params.get("archived") == "1"
    data = await db.read(
        lambda s: service.page(
            s, ctx.company_id, kind, paging, search=search, include_archived=archived
        )
    )
    return render(
        request,
        "parties.html",
        segment=segment,
        kind=kind,
        title=title,
        data=data,
        q=search or "",
        archived=archived,
        can_write=ctx.can(write),
    )


def _party_form(
    request: Request,
    segment: str,
    ctx: AdminContext,
    shops: list[tuple[int, str]],
    *,
    status: int = 200,
    errors: dict[str, list[str]] | None = None,
    form_values: dict[str, str] | None = None,
) -> Response:
    kind, title, _write = _kind(segment)
    return render(
        request,
        "party_new.html",
        status=status,
        segment=segment,
        kind=kind,
        title=title,
        branches=shops,
        can_credit=ctx.can("parties.credit"),
        errors=errors or {},
        values=form_values or {},
    )


def _contact(form: Any) -> dict[str, Any]:
    return {f: text(form, f) for f in FIELDS}


async def _create(request: Request, segment: str, ctx: AdminContext, db: Any) -> Response:
    kind, _title, write = _kind(segment)
    ctx.require(write)
    form = await read_form(request)
    errors: dict[str, list[str]] = {}
    body: dict[str, Any] = {k: v for k, v in _contact(form).items() if v or k == "name"}
    credit = {
        "credit_limit": decimal_field(form, "credit_limit", errors),
        "opening_balance": decimal_field(form, "opening_balance", errors),
    }
    sent_credit = {k: v for k, v in credit.items() if v is not None}
    named = id_field(form, "warehouse_id", errors)
    if sent_credit:
        ctx.require("parties.credit")
        body.update(sent_credit)
    if sent_credit.get("opening_balance"):
        # In the staff member's scope, their own branch when none is chosen
        # (``auth/roles.py``), asked before anything is looked up.
        warehouse_id = ctx.warehouse_for("parties.credit", named)
        if warehouse_id is not None:
            body["warehouse_id"] = warehouse_id
    elif named is not None:
        ctx.require(write, named)
    shops = await branches(db, ctx)
    try:
        if errors:
            raise ValidationFailed(errors)
        parsed = parse_model(PartyIn, body)

        async def work(uow: UnitOfWork) -> dict[str, Any]:
            return dict(
                await service.create(uow, ctx.company_id, kind, parsed, actor_id=ctx.user_id)
            )

        created, _replayed = await submit(request, ctx, work)
    except ValidationFailed as exc:
        return _party_form(
            request, segment, ctx, shops, status=422, errors=exc.errors, form_values=values(form)
        )
    return see_other(f"/{segment}/{created['id']}?saved=1")


async def _detail(
    request: Request,
    segment: str,
    ctx: AdminContext,
    db: Any,
    party_id: int,
    *,
    status: int = 200,
    errors: dict[str, list[str]] | None = None,
    form_values: dict[str, str] | None = None,
    message: str | None = None,
) -> Response:
    kind, title, write = _kind(segment)
    party = await db.read(lambda s: service.read(s, ctx.company_id, kind, party_id))
    shops = await branches(db, ctx)
    outstanding = None
    if ctx.can("books.read", ctx.warehouse_id):
        paging = parse_page(request.query_params.get("page"), "20")
        outstanding = await db.read(
            lambda s: order_queries.outstanding_page(
                s, ctx.company_id, party_id, kind, [i for i, _n in shops], paging
            )
        )
    on_order = None
    if kind == "supplier" and ctx.can("books.read", ctx.warehouse_id):
        on_order = await db.read(
            lambda s: purchase_orders.still_to_come(
                s, ctx.company_id, party_id, [i for i, _n in shops]
            )
        )
    points = None
    if kind == "customer":  # the customer's loyalty points and their last movements
        points = await db.read(
            lambda s: loyalty.statement(s, ctx.company_id, party_id, Paging(1, 10))
        )
    shown = form_values or {
        **{f: party[f] or "" for f in FIELDS},
        "credit_limit": party["credit_limit"] or "",
    }
    return render(
        request,
        "party.html",
        status=status,
        segment=segment,
        kind=kind,
        title=title,
        party=party,
        outstanding=outstanding,
        on_order=on_order,
        points=points,
        warehouse_names=dict(shops),
        can_write=ctx.can(write),
        can_credit=ctx.can("parties.credit"),
        can_books=ctx.can("books.read", ctx.warehouse_id),
        can_pay=any(ctx.can(PAYMENT_OF[segment][2], i) for i, _n in shops),
        errors=errors or {},
        values=shown,
        message=message,
        saved=request.query_params.get("saved") == "1",
    )


async def _edit(request: Request, segment: str, ctx: AdminContext, db: Any, pid: int) -> Response:
    kind, _title, write = _kind(segment)
    ctx.require(write)
    form = await read_form(request)
    errors: dict[str, list[str]] = {}
    patch: dict[str, Any] = _contact(form)
    patch["version"] = id_field(form, "version", errors)
    if "credit_limit" in form:
        ctx.require("parties.credit")
        patch["credit_limit"] = decimal_field(form, "credit_limit", errors)
    try:
        if errors:
            raise ValidationFailed(errors)
        parsed = parse_model(PartyPatch, patch)

        async def work(uow: UnitOfWork) -> dict[str, Any]:
            return dict(
                await service.update(
                    uow.session,
                    ctx.company_id,
                    kind,
                    pid,
                    parsed,
                    expected_version=parsed.version,
                    actor_id=ctx.user_id,
                )
            )

        await submit(request, ctx, work)
    except ValidationFailed as exc:
        return await _detail(
            request, segment, ctx, db, pid, status=422, errors=exc.errors, form_values=values(form)
        )
    except PreconditionFailed:
        return await _detail(
            request,
            segment,
            ctx,
            db,
            pid,
            status=412,
            message="Someone else changed this record while you were editing it. "
            "Here it is as it is now; make your change again.",
        )
    return see_other(f"/{segment}/{pid}?saved=1")


async def _archive(
    request: Request, segment: str, ctx: AdminContext, db: Any, pid: int
) -> Response:
    kind, _title, write = _kind(segment)
    ctx.require(write)
    if request.method == "GET":
        party = await db.read(lambda s: service.read(s, ctx.company_id, kind, pid))
        return render(request, "party_archive.html", segment=segment, party=party, message=None)

    async def work(uow: UnitOfWork) -> dict[str, Any]:
        return dict(
            await service.archive(
                uow.session, ctx.company_id, kind, pid, expected_version=None, actor_id=ctx.user_id
            )
        )

    try:
        await submit(request, ctx, work)
    except Conflict as exc:
        party = await db.read(lambda s: service.read(s, ctx.company_id, kind, pid))
        return render(
            request,
            "party_archive.html",
            status=409,
            segment=segment,
            party=party,
            message=exc.message,
        )
    return see_other(f"/{segment}/{pid}")


# --- statements --------------------------------------------------------------------


def _date(raw: str | None, field: str) -> Any:
    return bounds.query_date(field, raw or None)


async def _statement(
    request: Request, segment: str, ctx: AdminContext, db: Any, pid: int
) -> Response:
    kind, title, _write = _kind(segment)
    ctx.require("books.read", ctx.warehouse_id)
    params = request.query_params
    shops = await branches(db, ctx)
    errors: dict[str, list[str]] = {}
    start = end = None
    wid: int | None = None
    cursor = bounds.query_value("cursor", params.get("cursor") or None)
    try:
        wid = ctx.warehouse_for("books.read", query_id(params.get("warehouse_id")))
        start, end = (
            _date(params.get("date_from"), "date_from"),
            _date(params.get("date_to"), "date_to"),
        )
        if start is not None and end is not None and start > end:
            raise invalid("date_from", f"{start} is after the end date ({end})")
    except ValidationFailed as exc:
        errors = exc.errors
    party = await db.read(lambda s: service.read(s, ctx.company_id, kind, pid))

    def read_page(at: str | None, size: int = 50) -> Any:
        async def read(s: AsyncSession) -> dict[str, Any]:
            return await party_statement_page(
                s,
                ctx.company_id,
                pid,
                warehouse_id=wid,
                date_from=start,
                date_to=end,
                cursor=at,
                limit=size,
            )

        return db.read(read)

    if params.get("format") == "csv" and not errors:
        first = await read_page(None, CSV_PAGE)

        async def again(at: str | None) -> dict[str, Any]:
            return first if at is None else await read_page(at, CSV_PAGE)  # type: ignore[no-any-return]

        async def body() -> Any:
            async for chunk in csv_rows(again):
                yield chunk.encode()

        return StreamingResponse(
            body(),
            media_type="text/csv; charset=utf-8",
            headers={"Content-Disposition": f'attachment; filename="statement-{pid}.csv"'},
        )
    data = None if errors else await read_page(cursor)
    shown = {
        "warehouse_id": params.get("warehouse_id") or "",
        "date_from": params.get("date_from") or "",
        "date_to": params.get("date_to") or "",
    }
    return render(
        request,
        "statement.html",
        status=422 if errors else 200,
        segment=segment,
        title=title,
        party=party,
        data=data,
        branches=shops,
        errors=errors,
        values=shown,
        first_page=cursor is None,
    )


def _routes(segment: str) -> None:
    @router.get(f"/{segment}", name=f"web_{segment}")
    async def listing(request: Request, ctx: Reader, db: DB) -> Response:
        return await _list(request, segment, ctx, db)

    @router.get(f"/{segment}/new", name=f"web_{segment}_new")
    async def new(request: Request, ctx: Reader, db: DB) -> Response:
        ctx.require(_kind(segment)[2])
        return _party_form(request, segment, ctx, await branches(db, ctx))

    @router.post(f"/{segment}/new", name=f"web_{segment}_create")
    async def create(request: Request, ctx: Reader, db: DB) -> Response:
        return await _create(request, segment, ctx, db)

    @router.get(f"/{segment}/{{party_id}}", name=f"web_{segment}_detail")
    async def detail(request: Request, party_id: str, ctx: Reader, db: DB) -> Response:
        return await _detail(request, segment, ctx, db, path_id(party_id, _kind(segment)[0]))

    @router.post(f"/{segment}/{{party_id}}/edit", name=f"web_{segment}_edit")
    async def edit(request: Request, party_id: str, ctx: Reader, db: DB) -> Response:
        return await _edit(request, segment, ctx, db, path_id(party_id, _kind(segment)[0]))

    @router.api_route(
        f"/{segment}/{{party_id}}/archive", methods=["GET", "POST"], name=f"web_{segment}_archive"
    )
    async def archive(request: Request, party_id: str, ctx: Reader, db: DB) -> Response:
        return await _archive(request, segment, ctx, db, path_id(party_id, _kind(segment)[0]))

    @router.get(f"/{segment}/{{party_id}}/statement", name=f"web_{segment}_statement")
    async def statement(request: Request, party_id: str, ctx: Reader, db: DB) -> Response:
        return await _statement(request, segment, ctx, db, path_id(party_id, _kind(segment)[0]))


for _segment in KINDS:
    _routes(_segment)
