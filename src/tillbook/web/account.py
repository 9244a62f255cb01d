"""Signing in and out, and the signed-in staff member's own password.

The sign-in form has no session yet, so its CSRF token is a nonce in a cookie of
its own (``session.LOGIN_COOKIE``); a failed sign-in renders the form again with
the reason, throttled per address by the app's rate limiter (``auth.admin.login``)."""

from __future__ import annotations

from typing import Annotated

from fastapi import Request
from fastapi.responses import Response

from tillbook.api import routing
from tillbook.api.deps import DB, get_db
from tillbook.auth import admin
from tillbook.auth.admin import AdminContext
from tillbook.errors import RateLimited, TillbookError, ValidationFailed, invalid
from tillbook.tenancy import staff as staff_service
from tillbook.web import session as web_session
from tillbook.web.forms import see_other, text
from tillbook.web.render import render
from tillbook.web.session import Page, read_form
from tillbook.web.start import may_start

router = routing.pages()

Staff = Annotated[AdminContext, Page()]


def _safe_next(target: str | None) -> str:
    if not target or not target.startswith("/") or target.startswith("//"):
        return "/"
    return target


@router.get("/login")
async def login_page(request: Request, next: str | None = None) -> Response:
    if await may_start(request):  # nobody can sign in yet: start the first shop
        return see_other("/start")
    nonce = web_session.new_login_nonce()
    response = render(
        request, "login.html", csrf=nonce, next=_safe_next(next), values={}, errors={}
    )
    response.set_cookie(
        web_session.LOGIN_COOKIE,
        nonce,
        max_age=3600,
        httponly=True,
        samesite="lax",
        secure=web_session.secure(request),
        path="/login",
    )
    return response


@router.post("/login")
async def login(request: Request) -> Response:
    form = await read_form(request)
    web_session.check_csrf(form, request.cookies.get(web_session.LOGIN_COOKIE) or "\x00")
    email, password = text(form, "email"), form.get("password")
    target = _safe_next(text(form, "next"))
    address = request.client.host if request.client else "unknown"
    try:
        if not email or not isinstance(password, str) or not password:
            raise invalid("email", "enter your email and password")
        opened = await admin.login(
            get_db(request), request.app.state.ratelimiter, email, password, address
        )
    except TillbookError as exc:
        nonce = web_session.new_login_nonce()
        errors = exc.errors if isinstance(exc, ValidationFailed) else {"email": [exc.message]}
        response = render(
            request,
            "login.html",
            status=exc.status_code,
            csrf=nonce,
            next=target,
            values={"email": email},
            errors=errors,
        )
        response.set_cookie(
            web_session.LOGIN_COOKIE,
            nonce,
            max_age=3600,
            httponly=True,
            samesite="lax",
            secure=web_session.secure(request),
            path="/login",
        )
        for name, value in (exc.headers or {}).items():
            response.headers[name] = value
        return response
    moved = see_other(target)
    ttl = int(admin.SESSION_TTL.total_seconds())
    web_session.set_session_cookie(moved, request, opened.token, ttl)
    moved.delete_cookie(web_session.LOGIN_COOKIE, path="/login")
    return moved


@router.post("/logout")
async def logout(request: Request, ctx: Staff, db: DB) -> Response:
    await db.write(lambda s: admin.logout(s, ctx))
    response = see_other("/login")
    web_session.clear_session_cookie(response, request)
    return response


@router.get("/account")
async def account(request: Request, ctx: Staff) -> Response:
    return render(request, "account.html")


@router.post("/account/password")
async def account_password(request: Request, ctx: Staff, db: DB) -> Response:
    """The signed-in staff member's new password, after their current one
    (throttled like a login): every session of theirs ends
    (``tenancy.staff.change_own_password``) and this browser gets the new one, so
    it stays signed in. Not a one-time form: the new session's token must not be
    kept in a replay record."""
    form = await read_form(request)
    current, new = form.get("current_password"), form.get("password")
    try:
        if not isinstance(current, str) or not current:
            raise invalid("current_password", "enter your current password")
        if not isinstance(new, str) or not new:
            raise invalid("password", "enter a new password")
        await admin.confirm_password(
            db,
            request.app.state.ratelimiter,
            ctx.company_id,
            ctx.user_id,
            current,
            "current_password",
        )
        opened = await db.write(
            lambda s: staff_service.change_own_password(s, ctx.company_id, ctx.user_id, new)
        )
    except ValidationFailed as exc:
        return render(request, "account.html", status=422, errors=exc.errors)
    except RateLimited as exc:
        page = render(
            request, "account.html", status=429, errors={"current_password": [exc.message]}
        )
        page.headers.update(exc.headers or {})
        return page
    moved = see_other("/account?saved=1")
    ttl = int(admin.SESSION_TTL.total_seconds())
    web_session.set_session_cookie(moved, request, opened.token, ttl)
    return moved
