"""Buying in the browser: a supplier's delivery received into a branch, on credit
or paid now.

The page writes through the API's own purchase (``orders.purchases.create_purchase``,
acting for the branch as its key would): each line a new FIFO batch at its unit
cost, Dr 11700 / Cr 21100, and a payment made now Dr 21100 / Cr the mode's account
(DESIGN.md §5). A line may name the tax the supplier charged (blank: none): the
batch then takes the cost net of it and the tax goes to 11800. Receiving needs
``stock.write`` for the branch; the purchase is audited once."""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Any

from fastapi import Request
from fastapi.responses import Response
from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.api import routing
from tillbook.api.deps import DB
from tillbook.auth.admin import AdminContext
from tillbook.auth.context import acting_for
from tillbook.errors import ValidationFailed
from tillbook.inventory import queries as stock_queries
from tillbook.kit import bounds, numerals
from tillbook.kit.pagination import Page as Paging
from tillbook.kit.pagination import parse_page
from tillbook.orders.purchases import create_purchase
from tillbook.orders.schemas import PurchaseIn
from tillbook.parties import service as parties
from tillbook.payments import setup as payment_setup
from tillbook.unit import UnitOfWork
from tillbook.web import document_currency
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
from tillbook.web.till import _item_errors, _qty_rows, _quantities

router = routing.pages()
StockWriter = Annotated[AdminContext, Page("stock.write", per_warehouse=True)]


def _chosen(raw: str | None, ids: list[int]) -> int | None:
    chosen = numerals.whole(raw) if raw else None
    if chosen is not None and chosen in ids:
        return chosen
    return ids[0] if ids else None


async def _delivery_page(
    request: Request,
    ctx: AdminContext,
    db: Any,
    *,
    status: int = 200,
    errors: dict[str, list[str]] | None = None,
    form_values: dict[str, str] | None = None,
) -> Response:
    params = request.query_params
    receivers = [(i, n) for i, n in await branches(db, ctx) if ctx.can("stock.write", i)]
    chosen = (form_values or {}).get("warehouse_id") or params.get("warehouse_id")
    wid = _chosen(chosen, [i for i, _n in receivers])
    if wid is None:
        ctx.require("stock.write", ctx.warehouse_id)  # says which permission is missing
    assert wid is not None
    search = bounds.query_text("q", params.get("q"), 200)
    paging = parse_page(params.get("page"), "50")
    everything = Paging(page=1, limit=100)

    async def read(s: AsyncSession) -> dict[str, Any]:
        suppliers = await parties.page(s, ctx.company_id, "supplier", everything)
        _total, modes = await payment_setup.modes_page(
            s, ctx.company_id, everything, include_archived=False
        )
        stock = await stock_queries.levels_page(s, ctx.company_id, [wid], paging, search=search)
        return {
            "suppliers": [(p["id"], p["name"]) for p in suppliers["data"]],
            "modes": [(m["id"], m["name"]) for m in modes],
            "stock": stock,
        }

    data = await db.read(read)
    return render(
        request,
        "delivery_new.html",
        taxes=await tax_choices(db, ctx),
        status=status,
        receivers=receivers,
        receiving=wid,
        currencies=await document_currency.choices(db, ctx.company_id),
        errors=errors or {},
        values=form_values
        or {"warehouse_id": str(wid), "q": search or "", "order_date": dt.date.today().isoformat()},
        **data,
    )


@router.get("/purchases/new")
async def delivery_new(request: Request, ctx: StockWriter, db: DB) -> Response:
    return await _delivery_page(request, ctx, db)


@router.post("/purchases/new")
async def delivery_receive(request: Request, ctx: StockWriter, db: DB) -> Response:
    form = await read_form(request)
    errors: dict[str, list[str]] = {}
    warehouse_id = id_field(form, "warehouse_id", errors)
    if warehouse_id is None and "warehouse_id" not in errors:
        errors["warehouse_id"] = ["choose the branch that receives the delivery"]
    supplier_id = id_field(form, "user_id", errors)
    if supplier_id is None and "user_id" not in errors:
        errors["user_id"] = ["choose the supplier"]
    rows = _qty_rows(form, filled=True)[:500]
    quantities = _quantities(form, rows, errors)
    costs = {pid: decimal_field(form, f"cost-{pid}", errors) for pid in rows}
    taxes = {pid: id_field(form, f"tax-{pid}", errors) for pid in rows}
    for pid in rows:
        if costs[pid] is None and f"cost-{pid}" not in errors:
            errors[f"qty-{pid}"] = ["give the unit cost beside the quantity"]
    order = [pid for pid in rows if quantities[pid] is not None and costs[pid] is not None]
    paid = decimal_field(form, "paid_amount", errors)
    mode_id = id_field(form, "payment_mode_id", errors)
    in_currency = document_currency.read(form, errors)
    if paid is not None and paid > 0 and mode_id is None and "payment_mode_id" not in errors:
        errors["payment_mode_id"] = ["choose how the supplier is paid now"]
    try:
        if warehouse_id is not None:
            ctx.require("stock.write", warehouse_id)
        if not order and not any(k.startswith(("qty-", "cost-")) for k in errors):
            errors["items"] = ["enter a quantity and unit cost for at least one product"]
        if errors:
            raise ValidationFailed(errors)
        body = parse_model(
            PurchaseIn,
            {
                "user_id": supplier_id,
                "order_date": text(form, "order_date") or dt.date.today().isoformat(),
                "invoice_number": text(form, "invoice_number") or None,
                "notes": text(form, "notes") or None,
                "product_items": [
                    {
                        "xid": p,
                        "quantity": quantities[p],
                        "unit_price": costs[p],
                        "tax_id": taxes[p],
                    }
                    for p in order
                ],
                "all_payments": (
                    [{"amount": paid, "payment_mode_id": mode_id}]
                    if paid is not None and paid > 0
                    else []
                ),
                **in_currency,
            },
        )
        assert warehouse_id is not None
        receiver = warehouse_id

        async def work(uow: UnitOfWork) -> dict[str, Any]:
            key = await acting_for(uow.session, ctx.company_id, receiver, ctx.user_id)
            return dict(await create_purchase(uow, key, body))

        done, _replayed = await submit(request, ctx, work)
    except ValidationFailed as exc:
        shown = _item_errors(exc.errors, order)
        for name in list(shown):
            parts = name.split(".")
            if parts[-1] == "tax_id" and parts[0] == "product_items":
                i = numerals.whole(parts[1])
                if i is not None and i < len(order):  # beside the line's tax select
                    shown.setdefault(f"tax-{order[i]}", []).extend(shown.pop(name))
                    continue
            if name.startswith("product_items."):
                shown.setdefault("items", []).extend(shown.pop(name))
            elif name.startswith("all_payments"):
                shown.setdefault("paid_amount", []).extend(shown.pop(name))
        return await _delivery_page(
            request, ctx, db, status=422, errors=shown, form_values=values(form)
        )
    return see_other(f"/purchases/{done['purchase_id']}")
