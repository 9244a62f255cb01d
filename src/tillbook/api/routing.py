"""How the service's routers are made and mounted: flat, each route whole.

Since 0.137 FastAPI's ``include_router`` keeps the included router as a node of a
tree that every request walks again: each level re-counts the versions of all the
routers below it (an ``isinstance`` over every route of the public API) and matches
its routes twice, once to find the branch and once to handle it. Measured with
callgrind, in process, that walk was a fifth of a read's instructions (a product
read 1.84 M → 1.49 M without it, a sale read 4.07 M → 3.23 M) and 6% of a sale's.

So every router here is built with its whole path prefix and the answer class of
the app (``JSON``, orjson), which is what an include would have added, and
``mount`` appends its routes to the app's own list, in order: a request is matched
against one flat list of routes, as FastAPI itself did before 0.137.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import Enum

from fastapi import APIRouter, FastAPI
from fastapi.routing import APIRoute

from tillbook.api.responses import JSON

PUBLIC = "/api/v1/public"
ADMIN = "/api/v1/admin"


def _router(prefix: str, tags: list[str | Enum] | None, include_in_schema: bool) -> APIRouter:
    return APIRouter(
        prefix=prefix,
        tags=tags,
        default_response_class=JSON,
        include_in_schema=include_in_schema,
    )


def public(*, tags: list[str | Enum]) -> APIRouter:
    """A router of the public API (``/api/v1/public``)."""
    return _router(PUBLIC, tags, True)


def admin(path: str = "", *, tags: list[str | Enum]) -> APIRouter:
    """A router of the back-office API (``/api/v1/admin`` + ``path``)."""
    return _router(ADMIN + path, tags, True)


def root(*, tags: list[str | Enum]) -> APIRouter:
    """A router at the server's root (the probes)."""
    return _router("", tags, True)


def pages() -> APIRouter:
    """A router of the back office's pages: HTML, not in the OpenAPI document."""
    return _router("", None, False)


def mount(app: FastAPI, routers: Iterable[APIRouter]) -> None:
    """Appends each router's routes to ``app``'s, in order (the first route that
    matches a request answers it). A router here holds routes only: one that
    included another would bring the per-request tree walk back."""
    for router in routers:
        for route in router.routes:
            if not isinstance(route, APIRoute):
                raise TypeError(f"{route!r}: mount routers of plain routes only")
        app.router.routes.extend(router.routes)
