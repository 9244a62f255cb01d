"""The lists and pages of sales, purchases and their returns, one route pair per
kind (``ORDER_TYPES``), with the invoice and receipt print views. A cashier reads
only the sales they made (``auth.roles.own_work_only``); everything else needs
``books.read`` in the order's branch."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request
from fastapi.responses import Response

from tillbook.api import routing
from tillbook.api.admin.deps import path_id
from tillbook.api.deps import DB
from tillbook.auth import roles
from tillbook.auth.admin import AdminContext
from tillbook.errors import NotFound, ValidationFailed
from tillbook.kit.bounds import query_text
from tillbook.kit.pagination import parse_page
from tillbook.orders import queries as order_queries
from tillbook.web.forms import branches, query_date
from tillbook.web.render import render
from tillbook.web.session import Page

router = routing.pages()

Staff = Annotated[AdminContext, Page()]


ORDER_TYPES = {
    "sales": ("sales", "Sales"),
    "purchases": ("purchases", "Purchases"),
    "sales-returns": ("sales-returns", "Sales returns"),
    "purchase-returns": ("purchase-returns", "Purchase returns"),
}


def _kind(request: Request) -> str:
    """Which list a path is: its first segment (``/sales/…``, ``/purchases/…``)."""
    return request.url.path.strip("/").split("/")[0]


async def order_list(
    request: Request,
    kind: Annotated[str, Depends(_kind)],
    ctx: Staff,
    db: DB,
    date_from: str | None = None,
    date_to: str | None = None,
    invoice: str | None = None,
    page: str | None = None,
) -> Response:
    # A cashier reads the sales they made (``auth.roles.own_work_only``); the other
    # lists, and everyone's sales, need ``books.read``.
    own = kind == "sales" and ctx.own_work_only()
    if not own:
        ctx.warehouse_for("books.read", None)
    order_type, title = ORDER_TYPES[kind]
    paging = parse_page(page, "25")
    errors: dict[str, list[str]] = {}
    start = end = None
    try:
        start, end = query_date(date_from, "date_from"), query_date(date_to, "date_to")
    except ValidationFailed as exc:
        errors = exc.errors
    search = query_text("invoice", invoice, 100)
    shops = await branches(db, ctx)
    if own:
        shops = [(i, n) for i, n in shops if ctx.can("sales.own", i)]
    data = await db.read(
        lambda s: order_queries.back_office_page(
            s,
            ctx.company_id,
            [i for i, _n in shops],
            order_type,
            date_from=start,
            date_to=end,
            invoice=search,
            page=paging,
            staff_user_id=ctx.user_id if own else None,
        )
    )
    return render(
        request,
        "orders.html",
        status=422 if errors else 200,
        kind=kind,
        title=title,
        data=data,
        warehouse_names=dict(shops),
        own=own,
        errors=errors,
        values={"date_from": date_from or "", "date_to": date_to or "", "invoice": search or ""},
    )


async def order_detail(
    request: Request,
    kind: Annotated[str, Depends(_kind)],
    order_id: str,
    ctx: Staff,
    db: DB,
    print: str | None = None,
) -> Response:
    own = kind == "sales" and ctx.own_work_only()  # refused before any lookup
    if not own:
        roles.check(ctx.role, None, "books.read")
    order_type, title = ORDER_TYPES[kind]
    oid = path_id(order_id, order_queries.NOUNS[order_type])
    order, warehouse, company = await db.read(
        lambda s: order_queries.back_office_detail(s, ctx.company_id, order_type, oid)
    )
    if own:
        # Someone else's sale is not found, like a missing one.
        if order["staff_user_id"] != ctx.user_id or not ctx.can("sales.own", order["warehouse_id"]):
            raise NotFound(f"sale {oid} not found")
    else:
        ctx.require("books.read", order["warehouse_id"])
    returns = []
    if order_type == "sales":
        returns = await db.read(lambda s: order_queries.returns_of_sale(s, ctx.company_id, oid))
    template = {"invoice": "invoice.html", "receipt": "receipt.html"}.get(print or "", "order.html")
    return render(
        request,
        template,
        kind=kind,
        title=title,
        order=order,
        warehouse=warehouse,
        company=company,
        returns=returns,
    )


for _kind_name in ORDER_TYPES:
    router.add_api_route(f"/{_kind_name}", order_list, methods=["GET"])
    router.add_api_route(f"/{_kind_name}/{{order_id}}", order_detail, methods=["GET"])
