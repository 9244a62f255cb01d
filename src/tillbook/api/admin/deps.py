"""Back-office request dependencies: the admin session, JSON bodies, ids in paths."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from tillbook.api.deps import get_db
from tillbook.auth import admin
from tillbook.errors import NotFound, UnsupportedMediaType, invalid
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
    text = value.strip()
    if not (text.isascii() and text.isdigit()) or len(text) > 19:  # no id has more digits
        return None
    n = int(text)
    return n if 0 < n <= MAX_ID else None


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
