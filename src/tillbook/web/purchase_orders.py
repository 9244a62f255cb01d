"""Purchase orders in the browser, and returns to a supplier from a purchase's page.

The pages write through the same services as the back-office API
(``orders.purchase_orders``, ``orders.returns.create_return``): an order is drafted
(products and expected unit costs), edited while a draft, marked ordered, printed
as an A4 page the browser saves as a PDF for the supplier, received in parts
(quantities, batch numbers, expiry dates, unit costs; on credit or paid now) and
closed when the rest is not coming. Reading needs ``books.read`` for the branch,
every change ``purchases.write`` there (``auth/roles.py``), paying at receipt also
``payments.make``. Each form is CSRF-checked and single-use (``web.forms.submit``);
a refusal shows its message beside the field and writes nothing."""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Any

from fastapi import Request
from fastapi.responses import Response
from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.api import routing
from tillbook.api.admin.deps import path_id
from tillbook.api.deps import DB
from tillbook.auth.admin import AdminContext
from tillbook.auth.context import acting_for
from tillbook.errors import NotFound, ValidationFailed
from tillbook.inventory import queries as stock_queries
from tillbook.kit import bounds, numerals
from tillbook.kit.pagination import Page as Paging
from tillbook.kit.pagination import parse_page
from tillbook.orders import purchase_orders as pos
from tillbook.orders import queries as order_queries
from tillbook.orders.returns import create_return
from tillbook.orders.schemas import (
    PO_STATUSES,
    PurchaseOrderCloseIn,
    PurchaseOrderIn,
    PurchaseOrderReceiptIn,
    ReturnIn,
)
from tillbook.parties import service as parties
from tillbook.payments import setup as payment_setup
from tillbook.unit import UnitOfWork
from tillbook.web.forms import (
    branches,
    decimal_field,
    id_field,
    parse_model,
    see_other,
    submit,
    tax_choices,
    text,
    values,
)
from tillbook.web.render import render
from tillbook.web.session import Page, read_form
from tillbook.web.till import _qty_rows

router = routing.pages()
Reader = Annotated[AdminContext, Page("books.read", per_warehouse=True)]
Buyer = Annotated[AdminContext, Page("purchases.write", per_warehouse=True)]
EVERYTHING = Paging(page=1, limit=100)


def _line_errors(errors: dict[str, list[str]], order: list[int]) -> dict[str, list[str]]:
    """The service's ``lines.{i}.…`` messages beside the form's row of that product
    (``qty-``, ``cost-``, ``batch-``, ``expiry-``, ``tax-``)."""
    column = {
        "unit_cost": "cost",
        "batch_number": "batch",
        "expiry_date": "expiry",
        "tax_id": "tax",
    }
    shown: dict[str, list[str]] = {}
    for name, messages in errors.items():
        parts = name.split(".")
        i = numerals.whole(parts[1]) if len(parts) >= 2 and parts[0] == "lines" else None
        if i is not None and i < len(order):
            prefix = column.get(parts[2] if len(parts) > 2 else "", "qty")
            shown.setdefault(f"{prefix}-{order[i]}", []).extend(messages)
            continue
        if name.startswith("all_payments"):
            name = "paid_amount"
        elif name == "supplier_id":
            name = "user_id"
        shown.setdefault(name, []).extend(messages)
    return shown


async def _order(db: Any, ctx: AdminContext, po_id: int, permission: str) -> dict[str, Any]:
    wid = await db.read(lambda s: pos.warehouse_of(s, ctx.company_id, po_id))
    if not ctx.can("books.read", wid) and not ctx.can(permission, wid):
        raise NotFound(f"purchase order {po_id} not found")
    ctx.require(permission, wid)
    data: dict[str, Any] = await db.read(lambda s: pos.detail(s, ctx.company_id, po_id))
    return data


# --- list ----------------------------------------------------------------------------


@router.get("/purchase-orders")
async def order_list(request: Request, ctx: Reader, db: DB) -> Response:
    params = request.query_params
    shops = [(i, n) for i, n in await branches(db, ctx) if ctx.can("books.read", i)]
    if not shops:
        ctx.require("books.read", ctx.warehouse_id)
    status = bounds.query_text("status", params.get("status"), 30)
    if status not in (*PO_STATUSES, "open"):
        status = None
    paging = parse_page(params.get("page"), "25")
    data = await db.read(
        lambda s: pos.orders_page(s, ctx.company_id, [i for i, _n in shops], paging, status)
    )
    return render(
        request,
        "purchase_orders.html",
        data=data,
        statuses=[("open", "open (ordered, part received)")] + [(s, s) for s in PO_STATUSES],
        warehouse_names=dict(shops),
        values={"status": status or ""},
        can_write=any(ctx.can("purchases.write", i) for i, _n in shops),
    )


# --- new and edit --------------------------------------------------------------------


async def _form_page(
    request: Request,
    ctx: AdminContext,
    db: Any,
    *,
    order: dict[str, Any] | None = None,
    status: int = 200,
    errors: dict[str, list[str]] | None = None,
    form_values: dict[str, str] | None = None,
) -> Response:
    params = request.query_params
    buyers = [(i, n) for i, n in await branches(db, ctx) if ctx.can("purchases.write", i)]
    if order is not None:
        wid: int | None = int(order["warehouse_id"])
    else:
        raw = (form_values or {}).get("warehouse_id") or params.get("warehouse_id")
        ids = [i for i, _n in buyers]
        picked = numerals.whole(raw) if raw else None
        wid = picked if picked is not None and picked in ids else (ids[0] if ids else None)
    if wid is None:
        ctx.require("purchases.write", ctx.warehouse_id)
    assert wid is not None
    search = bounds.query_text("q", params.get("q"), 200)
    paging = parse_page(params.get("page"), "50")

    async def read(s: AsyncSession) -> dict[str, Any]:
        suppliers = await parties.page(s, ctx.company_id, "supplier", EVERYTHING)
        stock = await stock_queries.levels_page(s, ctx.company_id, [wid], paging, search=search)
        return {"suppliers": [(p["id"], p["name"]) for p in suppliers["data"]], "stock": stock}

    data = await db.read(read)
    shown = form_values
    if shown is None:
        shown = {"warehouse_id": str(wid), "q": search or ""}
        if order is not None:
            shown.update(
                {
                    "user_id": str(order["supplier"]["id"]),
                    "order_date": order["order_date"],
                    "expected_date": order["expected_date"] or "",
                    "notes": order["notes"],
                }
            )
            for line in order["lines"]:
                shown[f"qty-{line['product_id']}"] = line["quantity"]
                shown[f"cost-{line['product_id']}"] = line["unit_cost"]
        else:
            shown["order_date"] = dt.date.today().isoformat()
    on_order = [] if order is None else order["lines"]
    listed = {line["product_id"] for line in on_order}
    return render(
        request,
        "purchase_order_form.html",
        status=status,
        order=order,
        buyers=buyers,
        buying=wid,
        on_order=on_order,
        others=[r for r in data["stock"]["data"] if r["product_id"] not in listed],
        stock=data["stock"],
        suppliers=data["suppliers"],
        errors=errors or {},
        values=shown,
    )


def _order_body(form: Any, errors: dict[str, list[str]]) -> tuple[dict[str, Any], list[int]]:
    """The order's fields and lines as the service takes them, and the products in
    line order (to show the service's messages beside their rows)."""
    supplier_id = id_field(form, "user_id", errors)
    if supplier_id is None and "user_id" not in errors:
        errors["user_id"] = ["choose the supplier"]
    rows = _qty_rows(form, filled=True)[:500]
    lines: list[dict[str, Any]] = []
    order: list[int] = []
    for pid in rows:
        quantity = decimal_field(form, f"qty-{pid}", errors)
        cost = decimal_field(form, f"cost-{pid}", errors)
        if cost is None and f"cost-{pid}" not in errors:
            errors[f"cost-{pid}"] = ["give the expected unit cost beside the quantity"]
        if quantity is not None and cost is not None:
            lines.append({"product_id": pid, "quantity": quantity, "unit_cost": cost})
            order.append(pid)
    if not lines and not any(k.startswith(("qty-", "cost-")) for k in errors):
        errors["items"] = ["enter a quantity and unit cost for at least one product"]
    body = {
        "supplier_id": supplier_id,
        "order_date": text(form, "order_date") or None,
        "expected_date": text(form, "expected_date") or None,
        "notes": text(form, "notes") or None,
        "lines": lines,
    }
    return body, order


@router.get("/purchase-orders/new")
async def order_new(request: Request, ctx: Buyer, db: DB) -> Response:
    return await _form_page(request, ctx, db)


@router.post("/purchase-orders/new")
async def order_create(request: Request, ctx: Buyer, db: DB) -> Response:
    form = await read_form(request)
    errors: dict[str, list[str]] = {}
    warehouse_id = id_field(form, "warehouse_id", errors)
    if warehouse_id is None and "warehouse_id" not in errors:
        errors["warehouse_id"] = ["choose the branch the order is for"]
    fields, order = _order_body(form, errors)
    try:
        if warehouse_id is not None:
            ctx.require("purchases.write", warehouse_id)
        if errors:
            raise ValidationFailed(errors)
        body = parse_model(PurchaseOrderIn, {**fields, "warehouse_id": warehouse_id})

        async def work(uow: UnitOfWork) -> dict[str, Any]:
            return await pos.create_order(uow, ctx.company_id, ctx.user_id, body)

        done, _replayed = await submit(request, ctx, work)
    except ValidationFailed as exc:
        return await _form_page(
            request,
            ctx,
            db,
            status=422,
            errors=_line_errors(exc.errors, order),
            form_values=values(form),
        )
    return see_other(f"/purchase-orders/{done['data']['id']}")


@router.get("/purchase-orders/{po_id}/edit")
async def order_edit(request: Request, po_id: str, ctx: Buyer, db: DB) -> Response:
    order = await _order(db, ctx, path_id(po_id, "purchase order"), "purchases.write")
    return await _form_page(request, ctx, db, order=order)


@router.post("/purchase-orders/{po_id}/edit")
async def order_save(request: Request, po_id: str, ctx: Buyer, db: DB) -> Response:
    pid = path_id(po_id, "purchase order")
    current = await _order(db, ctx, pid, "purchases.write")
    form = await read_form(request)
    errors: dict[str, list[str]] = {}
    fields, order = _order_body(form, errors)
    try:
        if errors:
            raise ValidationFailed(errors)
        body = parse_model(PurchaseOrderIn, fields)

        async def work(uow: UnitOfWork) -> dict[str, Any]:
            return await pos.edit_order(uow, ctx.company_id, pid, ctx.user_id, body)

        await submit(request, ctx, work)
    except ValidationFailed as exc:
        return await _form_page(
            request,
            ctx,
            db,
            order=current,
            status=422,
            errors=_line_errors(exc.errors, order),
            form_values=values(form),
        )
    return see_other(f"/purchase-orders/{pid}")


# --- the order, printed, ordered, closed ---------------------------------------------


@router.get("/purchase-orders/{po_id}")
async def order_page(request: Request, po_id: str, ctx: Reader, db: DB) -> Response:
    order = await _order(db, ctx, path_id(po_id, "purchase order"), "books.read")
    template = "purchase_order_print.html" if request.query_params.get("print") else None
    return render(
        request,
        template or "purchase_order.html",
        order=order,
        can_write=ctx.can("purchases.write", order["warehouse_id"]),
        errors={},
        values={},
    )


@router.post("/purchase-orders/{po_id}/order")
async def order_send(request: Request, po_id: str, ctx: Buyer, db: DB) -> Response:
    pid = path_id(po_id, "purchase order")
    await _order(db, ctx, pid, "purchases.write")

    async def work(uow: UnitOfWork) -> dict[str, Any]:
        return await pos.mark_ordered(uow, ctx.company_id, pid, ctx.user_id)

    await submit(request, ctx, work)
    return see_other(f"/purchase-orders/{pid}")


@router.post("/purchase-orders/{po_id}/close")
async def order_close(request: Request, po_id: str, ctx: Buyer, db: DB) -> Response:
    pid = path_id(po_id, "purchase order")
    order = await _order(db, ctx, pid, "purchases.write")
    form = await read_form(request)
    try:
        body = parse_model(PurchaseOrderCloseIn, {"reason": text(form, "reason") or None})

        async def work(uow: UnitOfWork) -> dict[str, Any]:
            return await pos.close_order(uow, ctx.company_id, pid, ctx.user_id, body)

        await submit(request, ctx, work)
    except ValidationFailed as exc:
        return render(
            request,
            "purchase_order.html",
            status=422,
            order=order,
            can_write=True,
            errors=exc.errors,
            values=values(form),
        )
    return see_other(f"/purchase-orders/{pid}")


# --- receiving -----------------------------------------------------------------------


async def _receive_page(
    request: Request,
    ctx: AdminContext,
    db: Any,
    order: dict[str, Any],
    *,
    status: int = 200,
    errors: dict[str, list[str]] | None = None,
    form_values: dict[str, str] | None = None,
) -> Response:
    _total, modes = await db.read(
        lambda s: payment_setup.modes_page(s, ctx.company_id, EVERYTHING, include_archived=False)
    )
    shown = form_values
    if shown is None:
        shown = {"order_date": dt.date.today().isoformat()}
        for line in order["lines"]:
            shown[f"qty-{line['product_id']}"] = line["remaining"]
            shown[f"cost-{line['product_id']}"] = line["unit_cost"]
    return render(
        request,
        "purchase_order_receive.html",
        status=status,
        order=order,
        taxes=await tax_choices(db, ctx),
        modes=[(m["id"], m["name"]) for m in modes],
        errors=errors or {},
        values=shown,
    )


@router.get("/purchase-orders/{po_id}/receive")
async def receive_form(request: Request, po_id: str, ctx: Buyer, db: DB) -> Response:
    order = await _order(db, ctx, path_id(po_id, "purchase order"), "purchases.write")
    return await _receive_page(request, ctx, db, order)


@router.post("/purchase-orders/{po_id}/receive")
async def receive(request: Request, po_id: str, ctx: Buyer, db: DB) -> Response:
    pid = path_id(po_id, "purchase order")
    order = await _order(db, ctx, pid, "purchases.write")
    form = await read_form(request)
    errors: dict[str, list[str]] = {}
    lines: list[dict[str, Any]] = []
    picked: list[int] = []
    for line in order["lines"]:
        p = line["product_id"]
        quantity = decimal_field(form, f"qty-{p}", errors)
        cost = decimal_field(form, f"cost-{p}", errors)
        tax = id_field(form, f"tax-{p}", errors)
        if quantity is None or quantity == 0:
            continue
        picked.append(p)
        lines.append(
            {
                "product_id": p,
                "quantity": quantity,
                "unit_cost": cost,
                "batch_number": text(form, f"batch-{p}") or None,
                "expiry_date": text(form, f"expiry-{p}") or None,
                "tax_id": tax,
            }
        )
    paid = decimal_field(form, "paid_amount", errors)
    mode_id = id_field(form, "payment_mode_id", errors)
    paying = paid is not None and paid > 0
    if paying and mode_id is None and "payment_mode_id" not in errors:
        errors["payment_mode_id"] = ["choose how the supplier is paid now"]
    try:
        if paying:
            ctx.require("payments.make", order["warehouse_id"])
        if not lines and not any(k.startswith(("qty-", "cost-")) for k in errors):
            errors["items"] = ["enter the quantity received of at least one product"]
        if errors:
            raise ValidationFailed(errors)
        body = parse_model(
            PurchaseOrderReceiptIn,
            {
                "order_date": text(form, "order_date") or dt.date.today().isoformat(),
                "invoice_number": text(form, "invoice_number") or None,
                "notes": text(form, "notes") or None,
                "lines": lines,
                "all_payments": ([{"amount": paid, "payment_mode_id": mode_id}] if paying else []),
            },
        )

        async def work(uow: UnitOfWork) -> dict[str, Any]:
            return await pos.receive(uow, ctx.company_id, pid, ctx.user_id, body)

        done, _replayed = await submit(request, ctx, work)
    except ValidationFailed as exc:
        return await _receive_page(
            request,
            ctx,
            db,
            order,
            status=422,
            errors=_line_errors(exc.errors, picked),
            form_values=values(form),
        )
    return see_other(f"/purchases/{done['purchase']['purchase_id']}")


# --- returns to the supplier ---------------------------------------------------------


async def _purchase(db: Any, ctx: AdminContext, oid: int) -> dict[str, Any]:
    order, _warehouse, _company = await db.read(
        lambda s: order_queries.back_office_detail(s, ctx.company_id, "purchases", oid)
    )
    ctx.require("purchases.write", order["warehouse_id"])
    result: dict[str, Any] = order
    return result


async def _return_page(
    request: Request,
    ctx: AdminContext,
    db: Any,
    order: dict[str, Any],
    *,
    status: int = 200,
    errors: dict[str, list[str]] | None = None,
    form_values: dict[str, str] | None = None,
) -> Response:
    lines = await db.read(lambda s: order_queries.returnable(s, ctx.company_id, order["id"]))
    return render(
        request,
        "purchase_return.html",
        status=status,
        order=order,
        lines=lines,
        errors=errors or {},
        values=form_values or {"order_date": dt.date.today().isoformat()},
    )


@router.get("/purchases/{order_id}/return")
async def return_form(request: Request, order_id: str, ctx: Buyer, db: DB) -> Response:
    order = await _purchase(db, ctx, path_id(order_id, "purchase"))
    return await _return_page(request, ctx, db, order)


@router.post("/purchases/{order_id}/return")
async def take_return(request: Request, order_id: str, ctx: Buyer, db: DB) -> Response:
    oid = path_id(order_id, "purchase")
    order = await _purchase(db, ctx, oid)
    branch = int(order["warehouse_id"])
    lines = await db.read(lambda s: order_queries.returnable(s, ctx.company_id, oid))
    form = await read_form(request)
    errors: dict[str, list[str]] = {}
    items: list[dict[str, Any]] = []
    picked: list[int] = []
    for line in lines:
        p = line["product_id"]
        quantity = decimal_field(form, f"qty-{p}", errors)
        if quantity is not None and quantity != 0:
            picked.append(p)
            items.append({"product_id": p, "quantity": quantity, "unit_price": line["unit_price"]})
    try:
        if not items and not any(k.startswith("qty-") for k in errors):
            errors["items"] = ["enter a quantity for at least one product"]
        if errors:
            raise ValidationFailed(errors)
        body = parse_model(
            ReturnIn,
            {
                "user_id": order["user"]["id"],
                "order_date": text(form, "order_date") or dt.date.today().isoformat(),
                "items": items,
                "notes": text(form, "notes") or None,
                "invoice_number": order["invoice_number"],
            },
        )

        async def work(uow: UnitOfWork) -> dict[str, Any]:
            key = await acting_for(uow.session, ctx.company_id, branch, ctx.user_id)
            # (audited by the service, as a return through the public API is)
            return dict(await create_return(uow, key, body, "purchase-returns"))

        done, _replayed = await submit(request, ctx, work)
    except ValidationFailed as exc:
        shown: dict[str, list[str]] = {}
        for name, messages in exc.errors.items():
            parts = name.split(".")
            i = numerals.whole(parts[1]) if len(parts) >= 2 and parts[0] == "items" else None
            if i is not None and i < len(picked):
                name = f"qty-{picked[i]}"
            shown.setdefault(name, []).extend(messages)
        return await _return_page(
            request, ctx, db, order, status=422, errors=shown, form_values=values(form)
        )
    return see_other(f"/purchase-returns/{done['return_id']}")
