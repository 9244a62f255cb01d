"""Stocktakes in the browser: count sheets per branch, counted quantities typed or
scanned, the differences previewed at cost and posted as stock adjustments
(``inventory.counts``, which says what a difference is measured against).

Starting, counting, posting and cancelling need ``stock.write`` for the count's
branch; reading a count needs ``stock.write`` or ``books.read`` there (the sheet
shows costs). A count of a branch the staff member may not see is not found."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Request
from fastapi.responses import Response
from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.api import routing
from tillbook.api.admin.deps import path_id
from tillbook.api.deps import DB
from tillbook.auth.admin import AdminContext
from tillbook.errors import NotFound, ValidationFailed
from tillbook.inventory import counts
from tillbook.inventory.schemas import StockCountEntriesIn, StockCountIn
from tillbook.kit import bounds, numerals
from tillbook.kit.pagination import parse_page
from tillbook.unit import UnitOfWork
from tillbook.web.forms import branches, id_field, parse_model, see_other, submit, text, values
from tillbook.web.reference import reference_choices
from tillbook.web.render import render
from tillbook.web.session import Page, read_form
from tillbook.web.till import _item_errors, _qty_rows, _quantities

router = routing.pages()
Reader = Annotated[AdminContext, Page("catalog.read")]
StockWriter = Annotated[AdminContext, Page("stock.write", per_warehouse=True)]

SCOPES = [
    ("all", "Every product listed in the branch"),
    ("category", "One category"),
    ("list", "A list of products"),
]


def _may_read(ctx: AdminContext, warehouse_id: int) -> bool:
    return ctx.can("stock.write", warehouse_id) or ctx.can("books.read", warehouse_id)


async def _count_branch(db: Any, ctx: AdminContext, count_id: int, permission: str | None) -> int:
    """The count's branch, if this staff member may read it (and ``permission``
    there); otherwise not found, telling nothing about other branches' counts."""
    wid: int = await db.read(lambda s: counts.warehouse_of(s, ctx.company_id, count_id))
    if not _may_read(ctx, wid):
        raise NotFound(f"stock count {count_id} not found")
    if permission is not None:
        ctx.require(permission, wid)
    return wid


async def _list_page(
    request: Request,
    ctx: AdminContext,
    db: Any,
    *,
    status: int = 200,
    errors: dict[str, list[str]] | None = None,
    form_values: dict[str, str] | None = None,
) -> Response:
    params = request.query_params
    shops = [(i, n) for i, n in await branches(db, ctx) if _may_read(ctx, i)]
    counters = [(i, n) for i, n in shops if ctx.can("stock.write", i)]
    wanted = params.get("warehouse_id")
    ids = [i for i, _n in shops]
    picked = numerals.whole(wanted) if wanted else None
    chosen = [picked] if picked is not None and picked in ids else ids
    state = bounds.query_value("status", params.get("status"))
    paging = parse_page(params.get("page"), "25")
    data = await db.read(lambda s: counts.counts_page(s, ctx.company_id, chosen, paging, state))
    categories = (await reference_choices(db, ctx))["category"] if counters else []
    return render(
        request,
        "stock_counts.html",
        status=status,
        data=data,
        branches=shops,
        counters=counters,
        warehouse_names=dict(shops),
        scopes=SCOPES,
        categories=[(c["id"], c["name"]) for c in categories],
        errors=errors or {},
        values=form_values
        or {"warehouse_id": str(counters[0][0]) if counters else "", "scope": "all"},
        filters={"warehouse_id": wanted or "", "status": state or ""},
    )


@router.get("/stock/counts")
async def count_list(request: Request, ctx: Reader, db: DB) -> Response:
    return await _list_page(request, ctx, db)


@router.post("/stock/counts")
async def count_start(request: Request, ctx: StockWriter, db: DB) -> Response:
    form = await read_form(request)
    errors: dict[str, list[str]] = {}
    warehouse_id = id_field(form, "warehouse_id", errors)
    if warehouse_id is None and "warehouse_id" not in errors:
        errors["warehouse_id"] = ["choose a branch"]
    category_id = id_field(form, "category_id", errors)
    codes = [c.strip() for c in text(form, "item_codes").replace(",", "\n").splitlines()]
    try:
        if warehouse_id is not None:
            ctx.require("stock.write", warehouse_id)
        if errors:
            raise ValidationFailed(errors)
        body = parse_model(
            StockCountIn,
            {
                "warehouse_id": warehouse_id,
                "scope": text(form, "scope") or "all",
                "category_id": category_id,
                "item_codes": [c for c in codes if c] or None,
                "notes": text(form, "notes") or None,
            },
        )

        async def work(uow: UnitOfWork) -> dict[str, Any]:
            return await counts.start_count(uow.session, ctx.company_id, ctx.user_id, body)

        done, _replayed = await submit(request, ctx, work)
    except ValidationFailed as exc:
        shown = {
            ("item_codes" if k.startswith(("item_codes", "product_ids")) else k): v
            for k, v in exc.errors.items()
        }
        return await _list_page(
            request, ctx, db, status=422, errors=shown, form_values=values(form)
        )
    return see_other(f"/stock/counts/{done['count_id']}")


async def _sheet(
    request: Request,
    ctx: AdminContext,
    db: Any,
    count_id: int,
    *,
    template: str = "stock_count.html",
    status: int = 200,
    errors: dict[str, list[str]] | None = None,
    form_values: dict[str, str] | None = None,
) -> Response:
    wid = await _count_branch(db, ctx, count_id, None)

    async def read(s: AsyncSession) -> dict[str, Any]:
        return await counts.count_detail(s, ctx.company_id, count_id)

    count = await db.read(read)
    focus = request.query_params.get("focus", "")
    return render(
        request,
        template,
        status=status,
        count=count,
        may_write=count["status"] == "draft" and ctx.can("stock.write", wid),
        focus=numerals.whole(focus),
        errors=errors or {},
        values=form_values or {},
    )


@router.get("/stock/counts/{count_id}")
async def count_sheet(request: Request, count_id: str, ctx: Reader, db: DB) -> Response:
    return await _sheet(request, ctx, db, path_id(count_id, "stock count"))


@router.get("/stock/counts/{count_id}/print")
async def count_print(request: Request, count_id: str, ctx: Reader, db: DB) -> Response:
    return await _sheet(
        request, ctx, db, path_id(count_id, "stock count"), template="stock_count_print.html"
    )


@router.post("/stock/counts/{count_id}/enter")
async def count_enter(request: Request, count_id: str, ctx: StockWriter, db: DB) -> Response:
    """Saves what was typed (only the lines changed on this page: each row carries
    the value it was shown with, so two people counting one sheet do not blank
    each other's lines) and applies a scan."""
    cid = path_id(count_id, "stock count")
    await _count_branch(db, ctx, cid, "stock.write")
    form = await read_form(request)
    errors: dict[str, list[str]] = {}
    rows = _qty_rows(form)[:5000]
    quantities = _quantities(form, rows, errors)
    order = [p for p in rows if text(form, f"qty-{p}") != text(form, f"was-{p}")]
    barcode = text(form, "barcode") or None
    try:
        if errors:
            raise ValidationFailed(errors)
        body = parse_model(
            StockCountEntriesIn,
            {
                "items": [{"product_id": p, "counted": quantities[p]} for p in order],
                "barcode": barcode,
            },
        )

        async def work(uow: UnitOfWork) -> dict[str, Any]:
            return await counts.enter_counts(uow.session, ctx.company_id, cid, ctx.user_id, body)

        done, _replayed = await submit(request, ctx, work)
    except ValidationFailed as exc:
        return await _sheet(
            request,
            ctx,
            db,
            cid,
            status=422,
            errors=_item_errors(exc.errors, order, "counted"),
            form_values=values(form),
        )
    if done.get("focus"):
        return see_other(f"/stock/counts/{cid}?focus={done['focus']}#line-{done['focus']}")
    return see_other(f"/stock/counts/{cid}?saved=1")


@router.post("/stock/counts/{count_id}/post")
async def count_post(request: Request, count_id: str, ctx: StockWriter, db: DB) -> Response:
    cid = path_id(count_id, "stock count")
    await _count_branch(db, ctx, cid, "stock.write")

    async def work(uow: UnitOfWork) -> dict[str, Any]:
        return await counts.post_count(uow, ctx.company_id, cid, ctx.user_id)

    try:
        await submit(request, ctx, work)
    except ValidationFailed as exc:
        return await _sheet(request, ctx, db, cid, status=422, errors=exc.errors)
    return see_other(f"/stock/counts/{cid}?posted=1")


@router.post("/stock/counts/{count_id}/cancel")
async def count_cancel(request: Request, count_id: str, ctx: StockWriter, db: DB) -> Response:
    cid = path_id(count_id, "stock count")
    await _count_branch(db, ctx, cid, "stock.write")

    async def work(uow: UnitOfWork) -> dict[str, Any]:
        return await counts.cancel_count(uow.session, ctx.company_id, cid, ctx.user_id)

    await submit(request, ctx, work)
    return see_other(f"/stock/counts/{cid}")
