"""Settings → Currencies: the company's base currency, the foreign currencies it has
enabled, their exchange rates (newest first, corrections shown as such), and forms
to enable or disable a currency, set a rate and import a rates file.

The page is read with ``books.read`` (an accountant checks the rates documents were
posted at); every form is the owner's ``settings.write``, refused by the server
(403) for anyone else before the form is read. The forms call the services the
admin API and the command line call (``currency/rates.py``), with the API's body
model for a rate, so the same value is refused with the same message everywhere;
each carries its one-time token (``forms.submit``), so a form sent twice does its
work once."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated, Any

from fastapi import Request
from fastapi.responses import Response

from tillbook.api import routing
from tillbook.api.admin.currencies import path_code
from tillbook.api.deps import DB
from tillbook.auth.admin import AdminContext
from tillbook.currency import rates
from tillbook.currency.schemas import ExchangeRateIn
from tillbook.errors import ValidationFailed, invalid
from tillbook.unit import UnitOfWork
from tillbook.web.forms import parse_model, see_other, submit, text, upload, values
from tillbook.web.render import render
from tillbook.web.session import Page, read_form

router = routing.pages()

Reader = Annotated[AdminContext, Page("books.read", per_warehouse=True)]
Setter = Annotated[AdminContext, Page("settings.write")]
HERE = "/settings/currencies"
# Rates shown on the page, newest first (every entry, corrections included).
SHOWN = 300


async def _page(
    request: Request,
    ctx: AdminContext,
    db: Any,
    *,
    status: int = 200,
    failed: str | None = None,
    errors: dict[str, list[str]] | None = None,
    form_values: dict[str, str] | None = None,
    message: str | None = None,
) -> Response:
    async def read(session: Any) -> tuple[rates.CurrencyOverview, list[rates.Rate]]:
        seen = await rates.overview(session, ctx.company_id)
        found = await rates.list_rates(session, ctx.company_id, limit=SHOWN, with_corrections=True)
        return seen, found

    seen, found = await db.read(read)
    by_currency: dict[str, list[rates.AdminExchangeRate]] = {}
    for rate in found:
        by_currency.setdefault(rate.currency, []).append(rates.rate_view(rate))
    return render(
        request,
        "currencies.html",
        status=status,
        overview=seen,
        rates=by_currency,
        may_change=ctx.can("settings.write"),
        failed=failed,
        errors=errors or {},
        values=form_values or {},
        message=message or request.query_params.get("done"),
    )


async def _change(
    request: Request,
    ctx: AdminContext,
    db: Any,
    which: str,
    work: Callable[[UnitOfWork], Awaitable[dict[str, Any]]],
    *,
    file_bytes: bytes = b"",
) -> Response:
    """Run one form's work once; a refusal shows the page again with the errors
    beside that form's fields (422), nothing written."""
    form = await read_form(request)
    try:
        result, _replayed = await submit(request, ctx, work, file_bytes=file_bytes)
    except ValidationFailed as exc:
        return await _page(
            request, ctx, db, status=422, failed=which, errors=exc.errors, form_values=values(form)
        )
    return see_other(f"{HERE}?done={result['done']}")


@router.get(HERE)
async def currencies_page(request: Request, ctx: Reader, db: DB) -> Response:
    return await _page(request, ctx, db)


@router.post(HERE)
async def currency_enable(request: Request, ctx: Setter, db: DB) -> Response:
    code = text(await read_form(request), "currency")

    async def work(uow: UnitOfWork) -> dict[str, Any]:
        row = await rates.enable(uow.session, ctx.company_id, code, ctx.actor)
        return {"done": f"{row.code} enabled"}

    return await _change(request, ctx, db, "enable", work)


@router.post(HERE + "/{code}/disable")
async def currency_disable(code: str, request: Request, ctx: Setter, db: DB) -> Response:
    currency = path_code(code)

    async def work(uow: UnitOfWork) -> dict[str, Any]:
        row = await rates.enable(uow.session, ctx.company_id, currency, ctx.actor, on=False)
        return {"done": f"{row.code} disabled"}

    return await _change(request, ctx, db, "disable", work)


@router.post(HERE + "/rates")
async def rate_set(request: Request, ctx: Setter, db: DB) -> Response:
    form = await read_form(request)
    try:
        body = parse_model(
            ExchangeRateIn,
            {k: text(form, k) for k in ("currency", "date", "rate")},
        )
    except ValidationFailed as exc:
        return await _page(
            request, ctx, db, status=422, failed="rate", errors=exc.errors, form_values=values(form)
        )

    async def work(uow: UnitOfWork) -> dict[str, Any]:
        rate = await rates.set_rate(
            uow.session, ctx.company_id, body.currency, body.date, body.rate, ctx.actor
        )
        what = "corrected" if rate.corrects else "set"
        return {"done": f"{rate.currency} {rate.date}: {rates.rate_text(rate.rate)} {what}"}

    return await _change(request, ctx, db, "rate", work)


@router.post(HERE + "/import")
async def rates_import(request: Request, ctx: Setter, db: DB) -> Response:
    form = await read_form(request)
    data = await upload(form, "file", rates.MAX_IMPORT_BYTES)
    try:
        if not data:
            raise invalid("file", "choose a CSV file of date,currency,rate")
        content = rates.decode_file(data)
    except ValidationFailed as exc:
        return await _page(request, ctx, db, status=422, failed="import", errors=exc.errors)

    async def work(uow: UnitOfWork) -> dict[str, Any]:
        count = await rates.import_rates(uow.session, ctx.company_id, content, ctx.actor)
        return {"done": f"{count} rates imported"}

    return await _change(request, ctx, db, "import", work, file_bytes=data)
