"""Price changes in the browser: choose products (a search, a category or a list of
item codes) and branches, say how the price moves, preview old -> new for every
listing, apply it in one step, and read the history (``catalog.batch_prices``).

Everything needs ``prices.write`` for each branch named (a scoped manager: their own
only; naming another one is refused, 403). The preview writes nothing; applying is
a one-time form like every other write, and is refused whole when a price moved
since the preview."""

from __future__ import annotations

from decimal import Decimal
from typing import Annotated, Any

from fastapi import Request
from fastapi.responses import Response
from starlette.datastructures import FormData

from tillbook.api import routing
from tillbook.api.deps import DB
from tillbook.auth.admin import AdminContext
from tillbook.catalog import batch_prices
from tillbook.catalog.batch_prices import PriceChangeIn
from tillbook.errors import ValidationFailed
from tillbook.kit import numerals
from tillbook.kit.money import PRICE_STEPS
from tillbook.kit.pagination import parse_page
from tillbook.unit import UnitOfWork
from tillbook.web.forms import branches, id_field, see_other, submit, text, values
from tillbook.web.reference import reference_choices
from tillbook.web.render import render
from tillbook.web.session import Page, read_form

router = routing.pages()
PriceWriter = Annotated[AdminContext, Page("prices.write", per_warehouse=True)]

SCOPES = [
    ("search", "Products whose name or item code contains"),
    ("category", "One category"),
    ("list", "A list of item codes"),
]
TARGETS = [("sales", "Sales price"), ("purchase", "Purchase price"), ("both", "Both")]
METHODS = [
    ("percent", "By a percentage (negative: down)"),
    ("amount", "By an amount (negative: down)"),
    ("set", "Set to a fixed price"),
]
STEPS = [(str(s), f"to {s}") for s in PRICE_STEPS]
FIELDS = ("scope", "search", "category_id", "item_codes", "target", "method", "value", "step")


def _body(form: FormData, ctx: AdminContext, errors: dict[str, list[str]]) -> PriceChangeIn:
    """The form as a change; each unreadable field noted in ``errors``. Every branch
    named must be one this staff member may price (403 otherwise)."""
    wids: list[int] = []
    for raw in form.getlist("warehouse_ids")[:100]:
        wid = numerals.whole(raw) if isinstance(raw, str) else None
        if wid is not None:
            wids.append(wid)
        else:
            errors["warehouse_ids"] = ["choose branches from the list"]
    for wid in wids:
        ctx.require("prices.write", wid)
    raw_value = text(form, "value")
    parsed = numerals.decimal(raw_value) if len(raw_value) <= 30 else None
    value = parsed if parsed is not None else Decimal(0)
    if parsed is None:
        errors["value"] = ["enter a number" if not raw_value else "must be a number"]
    rounding = numerals.decimal(text(form, "step") or "0.01")
    step = rounding if rounding is not None else Decimal("0.01")
    if rounding is None:
        errors["step"] = ["choose a rounding"]
    category_id = id_field(form, "category_id", errors)
    codes = [c.strip() for c in text(form, "item_codes").replace(",", "\n").splitlines()]
    return PriceChangeIn(
        warehouse_ids=tuple(dict.fromkeys(wids)),
        scope=text(form, "scope") or "search",
        target=text(form, "target") or "sales",
        method=text(form, "method") or "percent",
        value=value,
        step=step,
        search=text(form, "search")[:200] or None,
        category_id=category_id,
        item_codes=tuple(dict.fromkeys(c[:100] for c in codes if c))[:1000],
        notes=text(form, "notes")[:500],
    )


async def _page(
    request: Request,
    ctx: AdminContext,
    db: Any,
    *,
    status: int = 200,
    errors: dict[str, list[str]] | None = None,
    form_values: dict[str, str] | None = None,
    chosen: list[str] | None = None,
    preview: batch_prices.Plan | None = None,
) -> Response:
    shops = [(i, n) for i, n in await branches(db, ctx) if ctx.can("prices.write", i)]
    categories = (await reference_choices(db, ctx))["category"]
    paging = parse_page(request.query_params.get("page"), "20")
    history = await db.read(
        lambda s: batch_prices.history_page(s, ctx.company_id, ctx.warehouse_id, paging)
    )
    return render(
        request,
        "prices.html",
        status=status,
        branches=shops,
        warehouse_names=dict(shops),
        categories=[(c["id"], c["name"]) for c in categories],
        scopes=SCOPES,
        targets=TARGETS,
        methods=METHODS,
        steps=STEPS,
        fields=FIELDS,
        history=history,
        preview=preview,
        chosen=chosen if chosen is not None else [str(i) for i, _n in shops[:1]],
        errors=errors or {},
        values=form_values or {"scope": "search", "target": "sales", "method": "percent"},
    )


@router.get("/prices")
async def price_changes(request: Request, ctx: PriceWriter, db: DB) -> Response:
    return await _page(request, ctx, db)


@router.post("/prices/preview")
async def price_preview(request: Request, ctx: PriceWriter, db: DB) -> Response:
    """Old -> new for every chosen listing; writes nothing."""
    form = await read_form(request)
    errors: dict[str, list[str]] = {}
    body = _body(form, ctx, errors)
    chosen = [str(i) for i in body.warehouse_ids]
    try:
        if errors:
            raise ValidationFailed(errors)
        plan = await db.read(lambda s: batch_prices.plan(s, ctx.company_id, body))
    except ValidationFailed as exc:
        return await _page(
            request, ctx, db, status=422, errors=exc.errors, form_values=values(form), chosen=chosen
        )
    return await _page(request, ctx, db, form_values=values(form), chosen=chosen, preview=plan)


@router.post("/prices/apply")
async def price_apply(request: Request, ctx: PriceWriter, db: DB) -> Response:
    form = await read_form(request)
    errors: dict[str, list[str]] = {}
    body = _body(form, ctx, errors)
    chosen = [str(i) for i in body.warehouse_ids]
    fingerprint = text(form, "fingerprint")[:64]
    try:
        if errors:
            raise ValidationFailed(errors)

        async def work(uow: UnitOfWork) -> dict[str, Any]:
            return await batch_prices.apply(
                uow, ctx.company_id, body, fingerprint=fingerprint, actor_id=ctx.user_id
            )

        done, _replayed = await submit(request, ctx, work)
    except ValidationFailed as exc:
        return await _page(
            request, ctx, db, status=422, errors=exc.errors, form_values=values(form), chosen=chosen
        )
    return see_other(f"/prices?applied={int(done.get('changed', 0))}")
