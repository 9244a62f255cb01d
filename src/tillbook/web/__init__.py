"""The back office in the browser: server-rendered pages over the same services and
the same role table as the back-office API (``api/admin``), served at ``/``.

``install`` adds the pages and their static files to the app; ``wants_html`` and
``error_page`` let the app's one error handler answer a page with a page."""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.responses import RedirectResponse, Response
from fastapi.staticfiles import StaticFiles

from tillbook.api import routing
from tillbook.errors import TillbookError
from tillbook.web import (
    account,
    books,
    buying,
    cashbook,
    company,
    currencies,
    dashboard,
    hooks,
    listings,
    loyalty,
    money,
    orders,
    parties,
    prices,
    products,
    promotions,
    purchase_orders,
    reference,
    register,
    registers,
    returns,
    settings,
    staffing,
    start,
    stock,
    stocktake,
    till,
)
from tillbook.web.render import HERE, render
from tillbook.web.session import LoginNeeded

NOT_PAGES = ("/api/", "/health", "/ready", "/openapi.json", "/docs", "/redoc", "/static/")


def wants_html(request: Request) -> bool:
    path = request.url.path
    return not any(path == p.rstrip("/") or path.startswith(p) for p in NOT_PAGES)


def error_page(request: Request, exc: TillbookError, status: int | None = None) -> Response:
    code = status or exc.status_code
    response = render(request, "error.html", status=code, message=exc.message, code=code)
    for name, value in (exc.headers or {}).items():
        response.headers[name] = value
    return response


# Every page's router, in the order they are matched (the sign-in, dashboard,
# catalog, reference and order pages last: their routes are the most general);
# tests walk these to reach every page.
ROUTERS = (
    start.router,
    register.router,
    books.router,
    buying.router,
    purchase_orders.router,
    listings.router,
    settings.router,
    registers.router,
    staffing.router,
    hooks.router,
    company.router,
    loyalty.router,
    currencies.router,
    promotions.router,
    money.router,
    cashbook.router,
    returns.router,
    parties.router,
    prices.router,
    stocktake.router,
    stock.router,
    till.router,
    account.router,
    dashboard.router,
    products.router,
    reference.router,
    orders.router,
)


def install(app: FastAPI) -> None:
    app.mount("/static", StaticFiles(directory=HERE / "static"), name="static")
    routing.mount(app, ROUTERS)

    @app.exception_handler(LoginNeeded)
    async def _login(request: Request, exc: LoginNeeded) -> Response:
        from urllib.parse import quote

        return RedirectResponse(f"/login?next={quote(exc.next_url, safe='/')}", status_code=303)
