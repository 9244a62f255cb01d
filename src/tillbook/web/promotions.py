"""Promotions in the back office (DESIGN §18): the list with each promotion's state,
a form to create one, pause, resume and archive, and what each cost over a period.

Read with ``catalog.read`` (staff see the offers they sell with), the report with
``books.read``; every change is ``prices.write``, refused by the server (403) for
anyone else before the form is read. The forms call the services the admin API
calls, with its body model (``promotions/schemas.py``), so a value is refused with
the same message everywhere; targets are named as a shop names them (item codes,
category and brand names) and resolved to ids here."""

from __future__ import annotations

import datetime as dt
from collections.abc import Awaitable, Callable
from typing import Annotated, Any

from fastapi import Request
from fastapi.responses import Response
from starlette.datastructures import FormData

from tillbook.api import routing
from tillbook.api.admin.deps import path_id
from tillbook.api.deps import DB
from tillbook.auth.admin import AdminContext
from tillbook.errors import ValidationFailed
from tillbook.kit.pagination import Page as Paging
from tillbook.promotions import service
from tillbook.promotions.report import promotion_report
from tillbook.promotions.schemas import PromotionIn
from tillbook.unit import UnitOfWork
from tillbook.web.forms import branches, parse_model, query_date, see_other, submit, text, values
from tillbook.web.render import render
from tillbook.web.session import Page, read_form

router = routing.pages()

Reader = Annotated[AdminContext, Page("catalog.read")]
Writer = Annotated[AdminContext, Page("prices.write")]
HERE = "/promotions"
KINDS = (
    ("percent_off", "Percentage off"),
    ("amount_off", "Amount off each unit"),
    ("buy_x_get_y", "Buy X, get Y"),
    ("quantity_break", "Quantity breaks"),
    ("bundle", "Bundle at one price"),
)
TARGETS = (
    ("all", "Everything"),
    ("products", "Products (item codes)"),
    ("categories", "Categories (names)"),
    ("brands", "Brands (names)"),
)
DAYS = ((1, "Mon"), (2, "Tue"), (3, "Wed"), (4, "Thu"), (5, "Fri"), (6, "Sat"), (7, "Sun"))


def _days(form: FormData) -> list[int]:
    return [int(d) for d in form.getlist("weekdays") if isinstance(d, str) and d.isdigit()]


def _names(raw: str) -> list[str]:
    return [n.strip() for n in raw.replace("\n", ",").split(",") if n.strip()]


async def _body(db: Any, ctx: AdminContext, form: FormData) -> PromotionIn:
    """The form as the admin API's body: targets and bundle lines named by item code
    or name and resolved here; each problem named by the form's own field."""
    errors: dict[str, list[str]] = {}
    data: dict[str, Any] = {
        k: text(form, k)
        for k in ("name", "kind", "applies_to", "starts_on", "percent", "amount", "price")
    }
    for k in ("ends_on", "from_time", "until_time", "warehouse_id", "buy", "get"):
        if text(form, k):
            data[k] = text(form, k)
    for k in ("buy", "get", "priority", "warehouse_id"):
        if k in data and str(data[k]).isdigit():
            data[k] = int(data[k])
    data["priority"] = int(text(form, "priority")) if text(form, "priority").isdigit() else 0
    data["combines"] = text(form, "combines") != "no"
    data["weekdays"] = _days(form)
    for k in ("percent", "amount", "price"):
        if not data[k]:
            data.pop(k)
    kind, applies_to = data.get("kind"), data.get("applies_to") or "all"
    names = _names(text(form, "targets"))
    if kind != "bundle" and applies_to in ("products", "categories", "brands") and names:
        found = await db.read(lambda s: service.ids_by_name(s, ctx.company_id, applies_to, names))
        missing = [n for n in names if n.lower() not in found]
        if missing:
            errors["targets"] = [
                f"none of the company's {applies_to} is named {', '.join(missing)}"
            ]
        data["targets"] = [found[n.lower()] for n in names if n.lower() in found]
    if kind == "quantity_break":
        tiers = []
        for part in _names(text(form, "tiers")):
            least, _sep, share = part.partition(":")
            tiers.append({"min_quantity": least.strip(), "percent": share.strip()})
        data["tiers"] = tiers
    if kind == "bundle":
        data["applies_to"] = "all"
        lines = [ln.strip() for ln in text(form, "items").splitlines() if ln.strip()]
        codes = [ln.lower().split(" x ")[0].strip() for ln in lines]
        found = await db.read(lambda s: service.ids_by_name(s, ctx.company_id, "products", codes))
        items = []
        for line, code in zip(lines, codes, strict=True):
            _code, _sep, quantity = line.lower().partition(" x ")
            if code not in found:
                errors.setdefault("items", []).append(f"no product has the item code {code!r}")
                continue
            items.append({"product_id": found[code], "quantity": quantity.strip() or "1"})
        data["items"] = items
    try:
        body = parse_model(PromotionIn, data)
    except ValidationFailed as exc:
        raise ValidationFailed({**exc.errors, **errors}) from exc
    if errors:
        raise ValidationFailed(errors)
    return body


async def _page(
    request: Request,
    ctx: AdminContext,
    db: Any,
    *,
    status: int = 200,
    errors: dict[str, list[str]] | None = None,
    form_values: dict[str, Any] | None = None,
) -> Response:
    start = query_date(request.query_params.get("from"), "from")
    end = query_date(request.query_params.get("to"), "to")
    if start is None and end is None:
        end = dt.date.today()
        start = end.replace(day=1)
    _total, rows = await db.read(
        lambda s: service.page_of(s, ctx.company_id, Paging(page=1, limit=200), True)
    )
    report = None
    if ctx.can("books.read"):
        report = await db.read(
            lambda s: promotion_report(s, ctx.company_id, ctx.warehouse_id, start, end)
        )
    return render(
        request,
        "promotions.html",
        status=status,
        promotions=rows,
        report=report,
        start=start,
        end=end,
        kinds=KINDS,
        targets=TARGETS,
        days=DAYS,
        branch_choices=await branches(db, ctx),
        may_change=ctx.can("prices.write"),
        errors=errors or {},
        values=form_values or {"weekdays": [d for d, _n in DAYS], "combines": "yes"},
        message=request.query_params.get("done"),
    )


@router.get(HERE)
async def promotions_page(request: Request, ctx: Reader, db: DB) -> Response:
    return await _page(request, ctx, db)


@router.post(HERE)
async def promotion_create(request: Request, ctx: Writer, db: DB) -> Response:
    form = await read_form(request)
    shown = {**values(form), "weekdays": _days(form)}
    try:
        body = await _body(db, ctx, form)

        async def work(uow: UnitOfWork) -> dict[str, Any]:
            promotion = await service.create(uow.session, ctx.company_id, ctx.user_id, body)
            return {"done": f"{promotion.name} created"}

        result, _replayed = await submit(request, ctx, work)
    except ValidationFailed as exc:
        return await _page(request, ctx, db, status=422, errors=exc.errors, form_values=shown)
    return see_other(f"{HERE}?done={result['done']}")


async def _change(
    request: Request,
    ctx: AdminContext,
    db: Any,
    work: Callable[[UnitOfWork], Awaitable[dict[str, Any]]],
) -> Response:
    try:
        result, _replayed = await submit(request, ctx, work)
    except ValidationFailed as exc:
        return await _page(request, ctx, db, status=422, errors=exc.errors)
    return see_other(f"{HERE}?done={result['done']}")


def _state_route(verb: str, status: str, done: str) -> None:
    @router.post(HERE + "/{promotion_id}/" + verb)
    async def change(promotion_id: str, request: Request, ctx: Writer, db: DB) -> Response:
        pid = path_id(promotion_id, "promotion")
        # The version the page showed: a promotion changed since is a 412, not a
        # change made on what the owner did not see.
        raw = text(await read_form(request), "version")
        seen = int(raw) if raw.isdigit() else None

        async def work(uow: UnitOfWork) -> dict[str, Any]:
            promotion = await service.set_state(
                uow.session, ctx.company_id, ctx.user_id, pid, seen, status
            )
            return {"done": f"{promotion.name} {done}"}

        return await _change(request, ctx, db, work)


_state_route("pause", "paused", "paused")
_state_route("resume", "active", "resumed")
_state_route("archive", "archived", "archived")
