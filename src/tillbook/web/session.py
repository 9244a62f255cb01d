"""Who is behind a page: the staff session in a cookie, its CSRF token, and the
permission each page needs.

The cookie carries the same bearer token as the back-office API's login
(``auth/admin.py``: the same throttling, the same 12-hour expiry, the same
``authenticate`` read afresh on every request), so a demotion or an archiving
takes effect on the next page. The cookie is HttpOnly, SameSite=Lax, and Secure
when the request came over https.

CSRF: every form carries a token derived from the session's secret (an HMAC of
the token, so it needs no storage and dies with the session); a POST whose
``csrf`` field is missing or wrong is refused with 403 before any work, whatever
the role. The sign-in form, which has no session yet, pairs its field with a
random cookie of its own (double submit).

Permissions: a page names its permission in its signature, ``Page("catalog.read")``,
and the check is ``AdminContext.require``, the one in ``auth/roles.py``: a link
the navigation hides is refused by the server all the same (403).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import Depends, Request
from fastapi.responses import Response
from starlette.datastructures import FormData

from tillbook.api.deps import get_db
from tillbook.auth import admin, roles
from tillbook.errors import Forbidden, Unauthorized
from tillbook.tenancy.company import page_settings

COOKIE = "tillbook_session"
LOGIN_COOKIE = "tillbook_login"
CSRF_FIELD = "csrf"


class LoginNeeded(Exception):
    """No session, or one that expired: the page answers a redirect to sign-in."""

    def __init__(self, next_url: str = "/") -> None:
        super().__init__("sign in")
        self.next_url = next_url


def csrf_for(secret: str) -> str:
    return hmac.new(secret.encode(), b"tillbook web csrf", hashlib.sha256).hexdigest()


def new_login_nonce() -> str:
    return secrets.token_urlsafe(24)


def secure(request: Request) -> bool:
    return request.url.scheme == "https"


def set_session_cookie(response: Response, request: Request, token: str, max_age: int) -> None:
    response.set_cookie(
        COOKIE,
        token,
        max_age=max_age,
        httponly=True,
        samesite="lax",
        secure=secure(request),
        path="/",
    )


def clear_session_cookie(response: Response, request: Request) -> None:
    response.delete_cookie(COOKIE, path="/", httponly=True, samesite="lax", secure=secure(request))


async def read_form(request: Request) -> FormData:
    """The form (cached by Starlette, so the page reads the same one)."""
    return await request.form(max_files=1, max_fields=400)


def check_csrf(form: FormData, expected: str) -> None:
    sent = form.get(CSRF_FIELD)
    if not isinstance(sent, str) or not hmac.compare_digest(sent.encode(), expected.encode()):
        raise Forbidden("the form's security token is missing or wrong; reload the page")


async def current_staff(request: Request) -> admin.AdminContext:
    """The signed-in staff member, or ``LoginNeeded``; a POST must carry the
    session's CSRF token (403 otherwise, before the page runs)."""
    token = request.cookies.get(COOKIE)
    target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    if not token:
        raise LoginNeeded(target if request.method == "GET" else "/")
    try:
        ctx = await admin.authenticate(get_db(request), f"Bearer {token}")
    except Unauthorized:
        raise LoginNeeded(target if request.method == "GET" else "/") from None
    request.state.admin = ctx
    request.state.csrf = csrf_for(token)
    # The company's money format and the branches' zones, for the ``money`` and
    # ``when`` filters (``render.py``).
    request.state.money_format, request.state.branch_zones = await get_db(request).read(
        lambda s: page_settings(s, ctx.company_id)
    )
    if request.method == "POST":
        check_csrf(await read_form(request), request.state.csrf)
    return ctx


def Page(permission: str | None = None, *, per_warehouse: bool = False) -> Any:
    """The dependency of a page: the staff member, refused (403) without
    ``permission``. ``per_warehouse``: the role is checked here and the page calls
    ``ctx.require(permission, warehouse_id)`` once it knows the warehouse."""
    if permission is not None:
        roles.known(permission)

    async def page(request: Request) -> admin.AdminContext:
        ctx = await current_staff(request)
        if permission is not None:
            if per_warehouse:
                roles.check(ctx.role, None, permission)
            else:
                ctx.require(permission)
        return ctx

    page.__name__ = f"page_{(permission or 'any').replace('.', '_')}"
    checker: Callable[..., Awaitable[admin.AdminContext]] = page
    return Depends(checker)
