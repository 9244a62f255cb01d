"""The books over HTTP, for the accountant: trial balance and stock valuation."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Query

from tillbook.api import envelope, routing
from tillbook.api.admin.deps import Allowed, query_id
from tillbook.api.deps import DB
from tillbook.auth.admin import AdminContext
from tillbook.errors import invalid
from tillbook.kit import bounds
from tillbook.promotions.report import promotion_report
from tillbook.reports import stock_valuation, stock_valuation_company, trial_balance

router = routing.admin("/reports", tags=["admin: reports"])

# A staff member scoped to one warehouse reads that warehouse's books only.
BooksReader = Annotated[AdminContext, Allowed("books.read", per_warehouse=True)]


@router.get("/trial-balance")
async def get_trial_balance(
    ctx: BooksReader,
    db: DB,
    warehouse_id: str | None = None,
    date_from: Annotated[str | None, Query(alias="from")] = None,
    date_to: Annotated[str | None, Query(alias="to")] = None,
) -> dict[str, Any]:
    wid = ctx.warehouse_for("books.read", query_id(warehouse_id, "warehouse_id"))
    start, end = bounds.query_date("from", date_from), bounds.query_date("to", date_to)
    if start is not None and end is not None and start > end:
        raise invalid("from", f"{start} is after to ({end})")
    data = await db.replica_read(lambda s: trial_balance(s, ctx.company_id, wid, start, end))
    return envelope.ok(data)


@router.get("/promotions")
async def get_promotion_report(
    ctx: BooksReader,
    db: DB,
    warehouse_id: str | None = None,
    date_from: Annotated[str | None, Query(alias="from")] = None,
    date_to: Annotated[str | None, Query(alias="to")] = None,
) -> dict[str, Any]:
    """Each promotion's sales, units, discount and cost (its share of 41300) over the
    sales dated in the period (DESIGN §18); voided sales left out."""
    wid = ctx.warehouse_for("books.read", query_id(warehouse_id, "warehouse_id"))
    start, end = bounds.query_date("from", date_from), bounds.query_date("to", date_to)
    if start is not None and end is not None and start > end:
        raise invalid("from", f"{start} is after to ({end})")
    data = await db.replica_read(lambda s: promotion_report(s, ctx.company_id, wid, start, end))
    return envelope.ok(data)


@router.get("/stock-valuation")
async def get_stock_valuation(
    ctx: BooksReader, db: DB, warehouse_id: str | None = None
) -> dict[str, Any]:
    wid = ctx.warehouse_for("books.read", query_id(warehouse_id, "warehouse_id"))
    if wid is None:
        data = await db.replica_read(lambda s: stock_valuation_company(s, ctx.company_id))
    else:
        data = await db.replica_read(lambda s: stock_valuation(s, ctx.company_id, wid))
    return envelope.ok(data)
