"""A shop starts in the browser: on a service with no company yet, ``/start`` makes
the first one (name, base currency, first branch, owner) and signs its owner in.

The page is open to anyone who reaches the service, so it exists only while the
service is empty and ``TILLBOOK_FIRST_RUN_SETUP`` allows it (a hosted service turns
it off); the service call itself refuses a second company under a table lock
(``tenancy.service.start_first_shop``). Its CSRF token is a nonce in a cookie of its
own, as the sign-in form's is: there is no session yet to bind one to."""

from __future__ import annotations

from fastapi import Request
from fastapi.responses import RedirectResponse, Response

from tillbook.api import routing
from tillbook.api.deps import DB, get_db
from tillbook.auth import admin
from tillbook.errors import NotFound, TillbookError, ValidationFailed
from tillbook.tenancy import service as tenancy
from tillbook.web import session as web_session
from tillbook.web.forms import text
from tillbook.web.render import render
from tillbook.web.session import read_form

router = routing.pages()

START_COOKIE = "tillbook_start"
CURRENCIES = ("USD", "EUR", "GBP", "CHF", "CAD", "AUD", "JPY", "INR", "ZAR", "NGN", "KES", "BRL")
FIELDS = (
    "company_name",
    "base_currency",
    "branch_name",
    "owner_name",
    "owner_email",
)


async def may_start(request: Request) -> bool:
    """The first-run page is on: allowed by the operator, and no company exists."""
    if not request.app.state.settings.first_run_setup:
        return False
    return bool(await get_db(request).read(tenancy.service_is_empty))


def _form(
    request: Request,
    values: dict[str, str],
    errors: dict[str, list[str]],
    status: int = 200,
) -> Response:
    nonce = web_session.new_login_nonce()
    response = render(
        request,
        "start.html",
        status=status,
        csrf=nonce,
        values=values,
        errors=errors,
        currencies=CURRENCIES,
    )
    response.set_cookie(
        START_COOKIE,
        nonce,
        max_age=3600,
        httponly=True,
        samesite="lax",
        secure=web_session.secure(request),
        path="/start",
    )
    return response


@router.get("/start")
async def start_page(request: Request) -> Response:
    if not await may_start(request):
        raise NotFound("this service already has a company: sign in instead")
    return _form(request, {"base_currency": "USD"}, {})


@router.post("/start")
async def start(request: Request, db: DB) -> Response:
    if not await may_start(request):
        raise NotFound("this service already has a company: sign in instead")
    form = await read_form(request)
    web_session.check_csrf(form, request.cookies.get(START_COOKIE) or "\x00")
    values = {name: text(form, name) for name in FIELDS}
    password, again = form.get("owner_password"), form.get("owner_password_again")
    if not isinstance(password, str) or not isinstance(again, str):
        password, again = "", ""
    try:
        if password != again:
            raise ValidationFailed({"owner_password_again": ["the two passwords differ"]})
        new = tenancy.NewShop(
            company_name=values["company_name"],
            base_currency=values["base_currency"],
            branch_name=values["branch_name"],
            owner_name=values["owner_name"],
            owner_email=values["owner_email"],
            owner_password=password,
        )
        await db.write(lambda s: tenancy.start_first_shop(s, new))
        address = request.client.host if request.client else "unknown"
        opened = await admin.login(
            db, request.app.state.ratelimiter, values["owner_email"], password, address
        )
    except TillbookError as exc:
        errors = (
            exc.errors if isinstance(exc, ValidationFailed) else {"company_name": [exc.message]}
        )
        return _form(request, values, errors, status=exc.status_code)
    moved = RedirectResponse("/", status_code=303)
    web_session.set_session_cookie(
        moved, request, opened.token, int(admin.SESSION_TTL.total_seconds())
    )
    moved.delete_cookie(START_COOKIE, path="/start")
    return moved
