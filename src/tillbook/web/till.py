"""A branch's day in the browser: stock transfers between branches, voiding a
mistaken sale, and the tills' shifts with their X and Z reports.

Each page calls the till's own services (``inventory.transfers``,
``orders.voids``, ``payments.till``), which act for one warehouse as a key of it
would: ``auth.context.acting_for`` is the adapter, as for a stock adjustment. The
role table decides first: reading transfers and shifts is ``books.read`` (they
carry stock at cost and tenders), sending or receiving stock ``stock.write`` for
the sending or the receiving branch, a void ``sales.void`` for the sale's branch.
Every write is a form with a one-time token (``forms.submit``); the services audit
it (as they do a write through the public API)."""

from __future__ import annotations

from decimal import Decimal
from typing import Annotated, Any

from fastapi import Request
from fastapi.responses import Response
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession
from starlette.datastructures import FormData

from tillbook.api import routing
from tillbook.api.admin.deps import path_id
from tillbook.api.deps import DB
from tillbook.auth.admin import AdminContext
from tillbook.auth.context import acting_for
from tillbook.errors import NotFound, ValidationFailed
from tillbook.inventory import queries as stock_queries
from tillbook.inventory import transfers
from tillbook.inventory.schemas import StockTransferIn, TransferCancelIn, TransferReceiptIn
from tillbook.kit import bounds, numerals
from tillbook.kit.pagination import parse_page
from tillbook.models import StockTransfer
from tillbook.orders import queries as order_queries
from tillbook.orders.schemas import VoidIn
from tillbook.orders.voids import void_sale
from tillbook.payments import till
from tillbook.reports import dashboard
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
from tillbook.web.render import render
from tillbook.web.session import Page, read_form

router = routing.pages()
Reader = Annotated[AdminContext, Page("books.read", per_warehouse=True)]
StockWriter = Annotated[AdminContext, Page("stock.write", per_warehouse=True)]
Voider = Annotated[AdminContext, Page("sales.void", per_warehouse=True)]
Staff = Annotated[AdminContext, Page()]  # the page decides: ``own_work_only``


def _chosen(raw: str | None, ids: list[int]) -> int | None:
    """The branch a page shows: the one asked for when it is one of ``ids``, else
    the first of them."""
    wid = query_id(raw)
    return wid if wid in ids else (ids[0] if ids else None)


def _qty_rows(form: FormData, *, filled: bool = False) -> list[int]:
    """The products named by the form's ``qty-{product}`` fields, in the form's order
    (``filled``: only those not left blank). A name too long to be a product id names
    none, rather than a 500 from turning thousands of digits into a number."""
    return [
        pid
        for k in form
        if k.startswith("qty-")
        and (pid := numerals.whole(k[4:], max_digits=18)) is not None
        and (not filled or text(form, k))
    ]


def _quantities(
    form: FormData, product_ids: list[int], errors: dict[str, list[str]]
) -> dict[int, Decimal | None]:
    """The ``qty-{product}`` fields of a form, per product (None: left blank)."""
    return {pid: decimal_field(form, f"qty-{pid}", errors) for pid in product_ids}


def _item_errors(
    errors: dict[str, list[str]], order: list[int], field: str = "quantity"
) -> dict[str, list[str]]:
    """The service's ``items.{i}.…`` messages next to the form's row of that product."""
    shown: dict[str, list[str]] = {}
    for name, messages in errors.items():
        parts = name.split(".")
        i = numerals.whole(parts[1]) if len(parts) >= 2 and parts[0] == "items" else None
        if i is not None and i < len(order):
            shown.setdefault(f"qty-{order[i]}", []).extend(messages)
            continue
        shown.setdefault(name, []).extend(messages)
    return shown


# --- transfers --------------------------------------------------------------------------


@router.get("/transfers")
async def transfer_list(request: Request, ctx: Reader, db: DB) -> Response:
    params = request.query_params
    shops = [(i, n) for i, n in await branches(db, ctx) if ctx.can("books.read", i)]
    wid = _chosen(params.get("warehouse_id"), [i for i, _n in shops])
    status = bounds.query_value("status", params.get("status"))
    page = params.get("page")
    data: dict[str, Any] = {"data": [], "total": 0, "current_page": 1, "last_page": 1}
    if wid is not None:
        branch = wid

        async def read(s: AsyncSession) -> dict[str, Any]:
            key = await acting_for(s, ctx.company_id, branch, ctx.user_id)
            return dict(await transfers.transfer_page(s, key, page, "25", status))

        data = await db.read(read)
    return render(
        request,
        "transfers.html",
        data=data,
        branches=shops,
        values={"warehouse_id": str(wid or ""), "status": status or ""},
        may_send=any(ctx.can("stock.write", i) for i, _n in shops),
    )


async def _send_page(
    request: Request,
    ctx: AdminContext,
    db: Any,
    *,
    status: int = 200,
    errors: dict[str, list[str]] | None = None,
    form_values: dict[str, str] | None = None,
) -> Response:
    params = request.query_params
    shops = await branches(db, ctx)
    senders = [(i, n) for i, n in shops if ctx.can("stock.write", i)]
    chosen = (form_values or {}).get("warehouse_id") or params.get("warehouse_id")
    wid = _chosen(chosen, [i for i, _n in senders])
    if wid is None:
        ctx.require("stock.write", ctx.warehouse_id)  # says which permission is missing
    assert wid is not None
    search = bounds.query_text("q", params.get("q"), 200)
    paging = parse_page(params.get("page"), "50")

    async def read(s: AsyncSession) -> tuple[dict[str, Any], list[tuple[int, str]]]:
        stock = await stock_queries.levels_page(s, ctx.company_id, [wid], paging, search=search)
        everywhere = await dashboard.warehouses(s, ctx.company_id)
        return stock, [(i, n) for i, n in everywhere if i != wid]

    stock, destinations = await db.read(read)
    return render(
        request,
        "transfer_new.html",
        status=status,
        stock=stock,
        senders=senders,
        destinations=destinations,
        errors=errors or {},
        values=form_values or {"warehouse_id": str(wid), "q": search or ""},
        sending=wid,
    )


@router.get("/transfers/new")
async def transfer_new(request: Request, ctx: StockWriter, db: DB) -> Response:
    return await _send_page(request, ctx, db)


@router.post("/transfers/new")
async def transfer_send(request: Request, ctx: StockWriter, db: DB) -> Response:
    form = await read_form(request)
    errors: dict[str, list[str]] = {}
    from_id = id_field(form, "warehouse_id", errors)
    if from_id is None and "warehouse_id" not in errors:
        errors["warehouse_id"] = ["choose the sending branch"]
    to_id = id_field(form, "to_warehouse_id", errors)
    if to_id is None and "to_warehouse_id" not in errors:
        errors["to_warehouse_id"] = ["choose the branch the stock goes to"]
    rows = _qty_rows(form, filled=True)
    quantities = _quantities(form, rows, errors)
    order = [pid for pid in rows if quantities[pid] is not None]
    try:
        if from_id is not None:
            ctx.require("stock.write", from_id)
        if not order and not any(k.startswith("qty-") for k in errors):
            errors["items"] = ["enter a quantity for at least one product"]
        if errors:
            raise ValidationFailed(errors)
        parsed = parse_model(
            StockTransferIn,
            {
                "to_warehouse_id": str(to_id),
                "items": [{"product_id": str(p), "quantity": quantities[p]} for p in order],
                "notes": text(form, "notes") or None,
            },
        )
        assert from_id is not None
        sender = from_id

        async def work(uow: UnitOfWork) -> dict[str, Any]:
            key = await acting_for(uow.session, ctx.company_id, sender, ctx.user_id)
            done = await transfers.create_transfer(uow, key, parsed)
            return {"transfer_id": done["transfer_id"]}

        done, _replayed = await submit(request, ctx, work)
    except ValidationFailed as exc:
        return await _send_page(
            request,
            ctx,
            db,
            status=422,
            errors=_item_errors(exc.errors, order),
            form_values=values(form),
        )
    return see_other(f"/transfers/{done['transfer_id']}")


async def _transfer_side(db: Any, ctx: AdminContext, tid: int, permission: str) -> tuple[int, int]:
    """The transfer, if the staff member may ``permission`` on one of its two
    branches; another company's, or one between two branches of someone scoped to
    a third, is not found. (sending branch, receiving branch)"""

    async def read(s: AsyncSession) -> tuple[int, int] | None:
        row = (
            await s.execute(
                select(StockTransfer.from_warehouse_id, StockTransfer.to_warehouse_id).where(
                    StockTransfer.id == tid, StockTransfer.company_id == ctx.company_id
                )
            )
        ).one_or_none()
        return None if row is None else (int(row[0]), int(row[1]))

    found: tuple[int, int] | None = await db.read(read)
    if found is None or not (ctx.can(permission, found[0]) or ctx.can(permission, found[1])):
        raise NotFound("stock transfer not found")
    return found


async def _transfer_page(
    request: Request,
    ctx: AdminContext,
    db: Any,
    tid: int,
    *,
    status: int = 200,
    errors: dict[str, list[str]] | None = None,
    form_values: dict[str, str] | None = None,
) -> Response:
    sender, receiver = await _transfer_side(db, ctx, tid, "books.read")
    side = receiver if ctx.can("books.read", receiver) else sender

    async def read(s: AsyncSession) -> transfers.Transfer:
        key = await acting_for(s, ctx.company_id, side, ctx.user_id)
        return await transfers.transfer_detail(s, key, tid)

    transfer = await db.read(read)
    dispatched = transfer["status"] == "dispatched"
    return render(
        request,
        "transfer.html",
        status=status,
        transfer=transfer,
        may_receive=dispatched and ctx.can("stock.write", receiver),
        may_cancel=dispatched and ctx.can("stock.write", sender),
        errors=errors or {},
        values=form_values or {},
    )


@router.get("/transfers/{transfer_id}")
async def transfer_detail(request: Request, transfer_id: str, ctx: Reader, db: DB) -> Response:
    return await _transfer_page(request, ctx, db, path_id(transfer_id, "stock transfer"))


@router.post("/transfers/{transfer_id}/receive")
async def transfer_receive(
    request: Request, transfer_id: str, ctx: StockWriter, db: DB
) -> Response:
    tid = path_id(transfer_id, "stock transfer")
    _sender, receiver = await _transfer_side(db, ctx, tid, "stock.write")
    ctx.require("stock.write", receiver)
    form = await read_form(request)
    errors: dict[str, list[str]] = {}
    rows = sorted(_qty_rows(form))[:500]
    quantities = _quantities(form, rows, errors)
    # All blank: everything dispatched arrived; any filled in: a blank one is none.
    partial = any(q is not None for q in quantities.values())
    try:
        if errors:
            raise ValidationFailed(errors)
        parsed = parse_model(
            TransferReceiptIn,
            {
                "items": [
                    {"product_id": str(p), "quantity": quantities[p] or Decimal(0)} for p in rows
                ]
                if partial
                else None,
                "reason": text(form, "reason") or None,
            },
        )

        async def work(uow: UnitOfWork) -> dict[str, Any]:
            key = await acting_for(uow.session, ctx.company_id, receiver, ctx.user_id)
            await transfers.receive_transfer(uow, key, str(tid), parsed)
            return {"transfer_id": tid}

        await submit(request, ctx, work)
    except ValidationFailed as exc:
        return await _transfer_page(
            request,
            ctx,
            db,
            tid,
            status=422,
            errors=_item_errors(exc.errors, rows),
            form_values=values(form),
        )
    return see_other(f"/transfers/{tid}")


@router.post("/transfers/{transfer_id}/cancel")
async def transfer_cancel(request: Request, transfer_id: str, ctx: StockWriter, db: DB) -> Response:
    tid = path_id(transfer_id, "stock transfer")
    sender, _receiver = await _transfer_side(db, ctx, tid, "stock.write")
    ctx.require("stock.write", sender)
    form = await read_form(request)
    try:
        parsed = parse_model(TransferCancelIn, {"reason": text(form, "reason") or None})

        async def work(uow: UnitOfWork) -> dict[str, Any]:
            key = await acting_for(uow.session, ctx.company_id, sender, ctx.user_id)
            await transfers.cancel_transfer(uow, key, str(tid), parsed)
            return {"transfer_id": tid}

        await submit(request, ctx, work)
    except ValidationFailed as exc:
        return await _transfer_page(
            request, ctx, db, tid, status=422, errors=exc.errors, form_values=values(form)
        )
    return see_other(f"/transfers/{tid}")


# --- voiding a sale ---------------------------------------------------------------------


async def _void_page(
    request: Request,
    ctx: AdminContext,
    db: Any,
    oid: int,
    *,
    status: int = 200,
    errors: dict[str, list[str]] | None = None,
    form_values: dict[str, str] | None = None,
) -> Response:
    order, warehouse, _company = await db.read(
        lambda s: order_queries.back_office_detail(s, ctx.company_id, "sales", oid)
    )
    ctx.require("sales.void", order["warehouse_id"])
    return render(
        request,
        "sale_void.html",
        status=status,
        order=order,
        warehouse=warehouse,
        errors=errors or {},
        values=form_values or {},
    )


@router.get("/sales/{order_id}/void")
async def void_confirm(request: Request, order_id: str, ctx: Voider, db: DB) -> Response:
    return await _void_page(request, ctx, db, path_id(order_id, "sale"))


@router.post("/sales/{order_id}/void")
async def void(request: Request, order_id: str, ctx: Voider, db: DB) -> Response:
    oid = path_id(order_id, "sale")
    order, _warehouse, _company = await db.read(
        lambda s: order_queries.back_office_detail(s, ctx.company_id, "sales", oid)
    )
    branch = int(order["warehouse_id"])
    ctx.require("sales.void", branch)
    form = await read_form(request)
    try:
        parsed = parse_model(VoidIn, {"reason": text(form, "reason")})

        async def work(uow: UnitOfWork) -> dict[str, Any]:
            key = await acting_for(uow.session, ctx.company_id, branch, ctx.user_id)
            await void_sale(uow, key, str(oid), parsed)
            return {"order_id": oid}

        await submit(request, ctx, work)
    except ValidationFailed as exc:
        return await _void_page(
            request, ctx, db, oid, status=422, errors=exc.errors, form_values=values(form)
        )
    return see_other(f"/sales/{oid}")


# --- shifts -----------------------------------------------------------------------------


@router.get("/shifts")
async def shift_list(request: Request, ctx: Staff, db: DB) -> Response:
    own = ctx.own_work_only()  # a cashier: the shifts they opened
    permission = "sales.own" if own else "books.read"
    shops = [(i, n) for i, n in await branches(db, ctx) if ctx.can(permission, i)]
    wid = _chosen(request.query_params.get("warehouse_id"), [i for i, _n in shops])
    shifts: list[till.ShiftHead] = []
    if wid is not None:
        branch = wid

        async def read(s: AsyncSession) -> list[till.ShiftHead]:
            key = await acting_for(s, ctx.company_id, branch, ctx.user_id)
            opener = ctx.user_id if own else None
            return await till.list_shifts(s, key, opened_by=opener)

        shifts = await db.read(read)
    return render(
        request,
        "shifts.html",
        shifts=shifts,
        branches=shops,
        branch_id=wid,
        own=own,
        values={"warehouse_id": str(wid or "")},
    )


@router.get("/shifts/{shift_id}")
async def shift_report(request: Request, shift_id: str, ctx: Staff, db: DB) -> Response:
    own = ctx.own_work_only()  # refused before any lookup
    sid = path_id(shift_id, "shift")

    found = await db.read(lambda s: till.shift_branch(s, ctx.company_id, sid))
    if found is None:
        raise NotFound("shift not found")
    branch, opener = found
    if own:
        if opener != ctx.user_id or not ctx.can("sales.own", branch):
            raise NotFound("shift not found")  # someone else's, like a missing one
    else:
        ctx.require("books.read", branch)

    async def read(s: AsyncSession) -> till.ShiftReport:
        key = await acting_for(s, ctx.company_id, branch, ctx.user_id)
        return await till.read_shift(s, key, str(sid))

    names = dict(await branches(db, ctx))
    return render(
        request,
        "shift.html",
        shift=await db.read(read),
        branch=names.get(branch, ""),
        branch_id=branch,
    )
