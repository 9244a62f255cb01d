"""The dashboard (``/``): each branch's figures today, sales per day, low stock, the
best sellers and what is due; the set-up checklist and failing webhooks for those
who may act on them. A staff member who may not read the books lands on their own
first page instead (``render.landing_for``)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Annotated, Any

from fastapi import Request
from fastapi.responses import Response
from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.api import routing
from tillbook.api.deps import DB
from tillbook.auth.admin import AdminContext
from tillbook.reports import dashboard
from tillbook.web.charts import bar_chart
from tillbook.web.forms import see_other
from tillbook.web.render import landing_for, render
from tillbook.web.session import Page

router = routing.pages()

Staff = Annotated[AdminContext, Page()]


def chart(days: list[tuple[dt.date, Decimal]]) -> dict[str, Any]:
    """Sales per day as a labelled bar chart (``web.charts``): a date every week."""
    return bar_chart(
        [(d.isoformat(), d.strftime("%d %b"), v) for d, v in days],
        title="Sales per day, last 30 days",
        x_label="Day",
        y_label="Sales",
        label_every=7,
    )


@router.get("/")
async def home(request: Request, ctx: Staff, db: DB) -> Response:
    if not ctx.can("books.read", ctx.warehouse_id):
        return see_other(landing_for(ctx))
    ctx.warehouse_for("books.read", None)
    today = dt.date.today()

    async def read(s: AsyncSession) -> dict[str, Any]:
        shops = await dashboard.warehouses(s, ctx.company_id, ctx.warehouse_id)
        ids = [i for i, _n in shops]
        low_count, low = await dashboard.low_stock(s, ctx.company_id, ids)
        return {
            "figures": await dashboard.branch_figures(s, ctx.company_id, shops, today),
            "days": chart(await dashboard.sales_per_day(s, ctx.company_id, ids, today)),
            "low_count": low_count,
            "low": low,
            "top": await dashboard.top_products(s, ctx.company_id, ids, today),
            "dues": await dashboard.dues(s, ctx.company_id, ids, today),
            "checklist": (
                await dashboard.setup_checklist(s, ctx.company_id)
                if ctx.can("settings.write")
                else None
            ),
            "failing": (
                await dashboard.failing_webhooks(s, ctx.company_id)
                if ctx.can("webhooks.manage")
                else None
            ),
        }

    return render(request, "dashboard.html", today=today, **await db.read(read))
