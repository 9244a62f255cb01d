"""Payments and expenses in the browser: read-only lists (``books.read``) with a
date range and a reference search, across the company or, for a staff member
limited to one branch, that branch (``payments/queries.py``)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Request
from fastapi.responses import Response
from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.api import routing
from tillbook.api.deps import DB
from tillbook.auth.admin import AdminContext
from tillbook.errors import ValidationFailed
from tillbook.kit.bounds import query_text
from tillbook.kit.pagination import parse_page
from tillbook.payments import queries
from tillbook.web.forms import branches, query_date
from tillbook.web.render import render
from tillbook.web.session import Page

router = routing.pages()

Reader = Annotated[AdminContext, Page("books.read", per_warehouse=True)]
TITLES = {"payments": "Payments", "expenses": "Expenses"}


async def _list(
    request: Request,
    kind: str,
    ctx: AdminContext,
    db: Any,
    date_from: str | None,
    date_to: str | None,
    reference: str | None,
    page: str | None,
) -> Response:
    wh = ctx.warehouse_for("books.read", None)  # a scoped member's own branch
    paging = parse_page(page, "25")
    errors: dict[str, list[str]] = {}
    start = end = None
    try:
        start, end = query_date(date_from, "date_from"), query_date(date_to, "date_to")
    except ValidationFailed as exc:
        errors = exc.errors
    search = query_text("reference", reference, 100)
    reader = queries.payments_page if kind == "payments" else queries.expenses_page

    async def read(s: AsyncSession) -> dict[str, object]:
        return await reader(
            s,
            ctx.company_id,
            wh,
            date_from=start,
            date_to=end,
            reference=search,
            page=paging,
        )

    data = await db.read(read)
    return render(
        request,
        "cashbook.html",
        status=422 if errors else 200,
        kind=kind,
        title=TITLES[kind],
        data=data,
        warehouse_names=dict(await branches(db, ctx)),
        errors=errors,
        values={
            "date_from": date_from or "",
            "date_to": date_to or "",
            "reference": reference or "",
        },
    )


@router.get("/payments")
async def payments_list(
    request: Request,
    ctx: Reader,
    db: DB,
    date_from: str | None = None,
    date_to: str | None = None,
    reference: str | None = None,
    page: str | None = None,
) -> Response:
    return await _list(request, "payments", ctx, db, date_from, date_to, reference, page)


@router.get("/expenses")
async def expenses_list(
    request: Request,
    ctx: Reader,
    db: DB,
    date_from: str | None = None,
    date_to: str | None = None,
    reference: str | None = None,
    page: str | None = None,
) -> Response:
    return await _list(request, "expenses", ctx, db, date_from, date_to, reference, page)
