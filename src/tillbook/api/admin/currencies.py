"""The company's currencies and exchange rates (DESIGN §16): ``/currencies`` and
``/exchange-rates``.

Changing them is the owner's (``settings.write``, company-wide): a rate decides the
base value of every foreign document posted from then on, in every branch. Reading
them is ``books.read`` in any branch (a branch accountant reads the rates its
documents were posted at). Every write is idempotent on ``Idempotency-Key``; a
rates file is bound to its bytes, like the catalog's import."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Request

from tillbook.api import routing
from tillbook.api.admin.deps import Allowed, require_json
from tillbook.api.admin.editing import flag
from tillbook.api.admin.uploads import uploaded_file
from tillbook.api.body import openapi_body, parse_body
from tillbook.api.deps import DB
from tillbook.api.envelope import flat, ok
from tillbook.api.idempotent import run_admin_unit
from tillbook.api.responses import JSON
from tillbook.auth.admin import AdminContext
from tillbook.currency import rates
from tillbook.currency.schemas import CurrencyIn, ExchangeRateIn
from tillbook.errors import NotFound
from tillbook.kit import currencies
from tillbook.kit.bounds import query_value
from tillbook.kit.text import quoted
from tillbook.unit import UnitOfWork

router = routing.admin(tags=["admin: currencies"])

Reader = Annotated[AdminContext, Allowed("books.read", per_warehouse=True)]
Writer = Annotated[AdminContext, Allowed("settings.write")]


@router.get("/currencies")
async def list_currencies(ctx: Reader, db: DB) -> dict[str, Any]:
    seen = await db.read(lambda s: rates.overview(s, ctx.company_id))
    answer: rates.CurrencyList = {
        "base_currency": seen["base_currency"],
        "base_minor_units": seen["base_minor_units"],
        "data": seen["currencies"],
    }
    return flat(answer)


@router.post("/currencies", openapi_extra=openapi_body(CurrencyIn))
async def enable_currency(request: Request, ctx: Writer) -> JSON:
    require_json(request)
    body, _raw = await parse_body(request, CurrencyIn)

    async def work(uow: UnitOfWork) -> dict[str, Any]:
        row = await rates.enable(uow.session, ctx.company_id, body.currency, ctx.actor)
        return ok(rates.currency_view(row))

    return await run_admin_unit(request, ctx, work)


def path_code(value: str) -> str:
    """A currency in the path: anything that is not an ISO 4217 code names no
    currency of the company, so it is not found (like an id that is not one)."""
    code = currencies.normalise(value)
    if not currencies.is_currency(code):
        raise NotFound(f"currency {quoted(value)} not found")
    return code


@router.post("/currencies/{code}/disable")
async def disable_currency(code: str, request: Request, ctx: Writer) -> JSON:
    currency = path_code(code)

    async def work(uow: UnitOfWork) -> dict[str, Any]:
        row = await rates.enable(uow.session, ctx.company_id, currency, ctx.actor, on=False)
        return ok(rates.currency_view(row))

    return await run_admin_unit(request, ctx, work)


@router.get("/exchange-rates")
async def list_exchange_rates(
    ctx: Reader, db: DB, currency: str | None = None, corrections: str | None = None
) -> dict[str, Any]:
    code = query_value("currency", currency)
    every = flag("corrections", corrections)
    found = await db.read(
        lambda s: rates.list_rates(s, ctx.company_id, currency=code, with_corrections=every)
    )
    return ok([rates.rate_view(r) for r in found])


@router.post("/exchange-rates", openapi_extra=openapi_body(ExchangeRateIn))
async def set_exchange_rate(request: Request, ctx: Writer) -> JSON:
    require_json(request)
    body, _raw = await parse_body(request, ExchangeRateIn)

    async def work(uow: UnitOfWork) -> dict[str, Any]:
        rate = await rates.set_rate(
            uow.session, ctx.company_id, body.currency, body.date, body.rate, ctx.actor
        )
        return ok(rates.rate_view(rate))

    return await run_admin_unit(request, ctx, work, status=201)


@router.post("/exchange-rates/import")
async def import_exchange_rates(request: Request, ctx: Writer) -> JSON:
    data = await uploaded_file(request, rates.MAX_IMPORT_BYTES)
    text = rates.decode_file(data)

    async def work(uow: UnitOfWork) -> dict[str, Any]:
        count = await rates.import_rates(uow.session, ctx.company_id, text, ctx.actor)
        imported: rates.RatesImported = {"imported": count}
        return ok(imported)

    return await run_admin_unit(request, ctx, work, content=data)
