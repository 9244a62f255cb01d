"""Back-office request dependencies: the staff session and what it may do, JSON
bodies, ids in paths.

Every route names the permission it needs in its signature, one line::

    ctx: Annotated[AdminContext, Allowed("webhooks.manage")]

``Allowed`` authenticates the session (401) and refuses a role without the
permission (403 naming it), before the route's body runs. A permission held per
warehouse (``auth/roles.WAREHOUSE_BOUND``) is checked here for the whole company
unless the route says ``Allowed(p, per_warehouse=True)``: the route then calls
``ctx.require(p, warehouse_id)`` (or ``ctx.warehouse_for`` for a read) once it
knows which warehouse the request touches."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated, Any

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from tillbook.api.deps import get_db
from tillbook.auth import admin, roles
from tillbook.errors import NotFound, UnsupportedMediaType, invalid
from tillbook.kit import numerals
from tillbook.kit.text import quoted

MAX_ID = 2**63 - 1

# Declares the bearer scheme in the OpenAPI document; the header is checked below.
_bearer = HTTPBearer(auto_error=False, description="the token from POST /api/v1/admin/login")


async def current_admin(
    request: Request,
    _documented: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> admin.AdminContext:
    ctx = await admin.authenticate(get_db(request), request.headers.get("authorization"))
    request.state.admin = ctx
    return ctx


def require_json(request: Request) -> None:
    ctype = request.headers.get("content-type", "")
    if ctype.split(";")[0].strip().lower() != "application/json":
        raise UnsupportedMediaType(
            f"Content-Type must be application/json, got {quoted(ctype or 'none')}"
        )


def _as_id(value: str) -> int | None:
    n = numerals.whole(value)  # ASCII digits only: not " 1", "+1" or "２"
    return n if n is not None and 0 < n <= MAX_ID else None


def path_id(value: str, what: str) -> int:
    """An id from the path; anything that cannot name a record is simply not found."""
    n = _as_id(value)
    if n is None:
        raise NotFound(f"{what} {quoted(value)} not found")
    return n


def query_id(value: str | None, field: str) -> int | None:
    """An optional id from the query string; garbage is a 422 naming the parameter."""
    if value is None or value == "":
        return None
    n = _as_id(value)
    if n is None:
        raise invalid(field, f"must be a positive integer id (got {quoted(value)})")
    return n


CurrentAdmin = Annotated[admin.AdminContext, Depends(current_admin)]
"""Any logged-in staff member (logout); every other route uses ``Allowed``."""


def Allowed(permission: str, *, per_warehouse: bool = False) -> Any:
    """The dependency of a route that needs ``permission``: the session's
    ``AdminContext``, or 401/403. ``per_warehouse``: the role is checked here and the
    warehouse scope is left to the route (``ctx.require(permission, warehouse_id)``)."""
    roles.known(permission)

    async def allowed(ctx: CurrentAdmin) -> admin.AdminContext:
        if per_warehouse:
            roles.check(ctx.role, None, permission)
        else:
            ctx.require(permission)
        return ctx

    allowed.__name__ = f"allowed_{permission.replace('.', '_')}"
    checker: Callable[..., Awaitable[admin.AdminContext]] = allowed
    return Depends(checker)
