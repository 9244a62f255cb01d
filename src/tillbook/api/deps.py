"""Request dependencies: the database, the authenticated key, JSON bodies."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Path, Request

from tillbook.auth.context import AuthContext
from tillbook.auth.service import authenticate, request_target
from tillbook.db import Database
from tillbook.errors import RateLimited, UnsupportedMediaType
from tillbook.kit import generations
from tillbook.kit.text import quoted


def get_db(request: Request) -> Database:
    db: Database = request.app.state.db
    return db


async def _db_dependency(request: Request) -> Database:
    """``get_db`` as a dependency: FastAPI runs a plain ``def`` dependency in a worker
    thread, a thread hop per request for one attribute read."""
    return get_db(request)


async def current_key(request: Request) -> AuthContext:
    h = request.headers
    # A body is read before the key is judged: one over the cap is a 413
    # (``api.limits``) whatever the key. A request without either header has none (a
    # till's GET), and awaiting its empty body cost 2% of a read by id's CPU.
    body = await request.body() if "content-length" in h or "transfer-encoding" in h else b""
    ctx = await authenticate(
        get_db(request),
        public_key=h.get("x-service-public-key"),
        secret_key=h.get("x-service-secret-key"),
        signature=h.get("x-service-signature"),
        timestamp=h.get("x-service-timestamp"),
        method=request.method,
        target=request_target(request.scope),
        body=body,
    )
    request.state.auth = ctx
    generations.writing_for(ctx.company_id)
    verdict = await request.app.state.ratelimiter.hit(h["x-service-public-key"], ctx.rate_limit)
    request.state.extra_headers = verdict.headers()
    if not verdict.allowed:
        raise RateLimited(
            f"rate limit of {ctx.rate_limit} exceeded; retry after "
            f"{verdict.headers()['Retry-After']} seconds",
            headers=verdict.headers(),
        )
    if request.method in ("POST", "PUT", "PATCH"):
        ctype = h.get("content-type", "")
        if ctype.split(";")[0].strip().lower() != "application/json":
            raise UnsupportedMediaType(
                f"Content-Type must be application/json, got {quoted(ctype or 'none')}"
            )
    return ctx


DB = Annotated[Database, Depends(_db_dependency)]
CurrentKey = Annotated[AuthContext, Depends(current_key)]
# A sale, purchase or return in a path: resolved by ``orders.lookup.order_ids``.
OrderRef = Annotated[
    str, Path(description="the order's id, xid or invoice number (SAL-00003, PUR-00001, …)")
]
