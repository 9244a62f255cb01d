"""Returns from the browser: from a sale's page, pick the products and quantities
that came back and refund them to a tender or to the customer's account (DESIGN.md
§5), through the same returns service as the public ``POST /sales-returns``
(``orders.returns.return_as_staff``: acting for the sale's branch, audited).

Who may: ``sales.return`` for the sale's branch (``auth/roles.py``). A voided sale
takes no return (the service refuses it too); a sale with a return offers no void
(``orders.voids`` refuses it). Each refund line takes the invoice's own price, so
a customer never gets back more than they paid; what can still come back is shown
beside each product."""

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
from tillbook.errors import Conflict, ValidationFailed
from tillbook.kit import numerals
from tillbook.kit.pagination import Page as Paging
from tillbook.orders import queries as order_queries
from tillbook.orders.returns import return_as_staff
from tillbook.orders.schemas import ReturnIn
from tillbook.payments import setup
from tillbook.unit import UnitOfWork
from tillbook.web.forms import decimal_field, id_field, parse_model, see_other, submit, text, values
from tillbook.web.render import render
from tillbook.web.session import Page, read_form

router = routing.pages()
Returner = Annotated[AdminContext, Page("sales.return", per_warehouse=True)]
ACCOUNT = "account"  # the refund choice that credits the customer's account


async def _sale(db: Any, ctx: AdminContext, oid: int) -> tuple[dict[str, Any], Any]:
    order, warehouse, _company = await db.read(
        lambda s: order_queries.back_office_detail(s, ctx.company_id, "sales", oid)
    )
    ctx.require("sales.return", order["warehouse_id"])
    if order["order_status"] == "cancelled":
        raise Conflict(f"sale {order['invoice_number']} was voided: it takes no return")
    return order, warehouse


async def _return_page(
    request: Request,
    ctx: AdminContext,
    db: Any,
    oid: int,
    *,
    status: int = 200,
    errors: dict[str, list[str]] | None = None,
    form_values: dict[str, str] | None = None,
) -> Response:
    order, warehouse = await _sale(db, ctx, oid)

    async def read(s: AsyncSession) -> tuple[list[dict[str, Any]], tuple[int, Any]]:
        lines = await order_queries.returnable(s, ctx.company_id, oid)
        modes = await setup.modes_page(
            s, ctx.company_id, Paging(page=1, limit=100), include_archived=False
        )
        return lines, modes

    lines, (_total, modes) = await db.read(read)
    cash = next((str(m["id"]) for m in modes if m["code"] == "cash"), ACCOUNT)
    return render(
        request,
        "sale_return.html",
        status=status,
        order=order,
        warehouse=warehouse,
        lines=lines,
        refunds=[(ACCOUNT, "The customer's account (a credit)")]
        + [(str(m["id"]), m["name"]) for m in modes],
        errors=errors or {},
        values=form_values or {"refund_to": cash, "order_date": dt.date.today().isoformat()},
    )


@router.get("/sales/{order_id}/return")
async def return_form(request: Request, order_id: str, ctx: Returner, db: DB) -> Response:
    return await _return_page(request, ctx, db, path_id(order_id, "sale"))


def _item_errors(errors: dict[str, list[str]], order: list[int]) -> dict[str, list[str]]:
    """The service's ``items.{i}.…`` messages beside the product's row."""
    shown: dict[str, list[str]] = {}
    for name, messages in errors.items():
        parts = name.split(".")
        i = numerals.whole(parts[1]) if len(parts) >= 2 and parts[0] == "items" else None
        if i is not None and i < len(order):
            shown.setdefault(f"qty-{order[i]}", []).extend(messages)
            continue
        if name == "refund_mode":
            name = "refund_to"
        shown.setdefault(name, []).extend(messages)
    return shown


@router.post("/sales/{order_id}/return")
async def take_return(request: Request, order_id: str, ctx: Returner, db: DB) -> Response:
    oid = path_id(order_id, "sale")
    order, _warehouse = await _sale(db, ctx, oid)
    branch = int(order["warehouse_id"])
    lines = await db.read(lambda s: order_queries.returnable(s, ctx.company_id, oid))
    prices = {line["product_id"]: line["unit_price"] for line in lines}
    form = await read_form(request)
    errors: dict[str, list[str]] = {}
    items: list[dict[str, Any]] = []
    picked: list[int] = []
    for product_id in prices:
        quantity = decimal_field(form, f"qty-{product_id}", errors)
        if quantity is not None and quantity != 0:
            picked.append(product_id)
            items.append(
                {
                    "product_id": product_id,
                    "quantity": quantity,
                    "unit_price": prices[product_id],
                }
            )
    refund_to = text(form, "refund_to") or ACCOUNT
    refund_mode = None
    if refund_to != ACCOUNT:
        refund_mode = id_field(form, "refund_to", errors)
        if refund_mode is None and "refund_to" not in errors:
            errors["refund_to"] = ["choose where the refund goes"]
    try:
        if not items and not any(k.startswith("qty-") for k in errors):
            errors["items"] = ["enter a quantity for at least one product"]
        if errors:
            raise ValidationFailed(errors)
        parsed = parse_model(
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
            done = await return_as_staff(
                uow, ctx.company_id, branch, ctx.user_id, parsed, refund_mode=refund_mode
            )
            return dict(done)

        done, _replayed = await submit(request, ctx, work)
    except ValidationFailed as exc:
        return await _return_page(
            request,
            ctx,
            db,
            oid,
            status=422,
            errors=_item_errors(exc.errors, picked),
            form_values=values(form),
        )
    return see_other(f"/sales-returns/{done['return_id']}")
