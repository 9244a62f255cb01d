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

Each route is a ``Route``: FastAPI's own, documented as FastAPI documents it, but
served, when its endpoint takes nothing FastAPI must validate, by a plan made once
(``_Plan``) instead of FastAPI's request handler, and quick to reject a path that
does not begin with its own literal part (see there).
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from enum import Enum
from typing import Any

from fastapi import APIRouter, FastAPI, Request, Response
from fastapi._compat import ModelField
from fastapi.dependencies.models import Dependant
from fastapi.dependencies.utils import get_typed_return_annotation
from fastapi.routing import APIRoute
from starlette._utils import get_route_path
from starlette.routing import Match
from starlette.types import Receive, Scope, Send

from tillbook.api.responses import JSON


@dataclass(frozen=True)
class _Call:
    """A dependency that takes the request and other such dependencies only (the
    key, the database, a register's key, a page's staff member): called with them,
    once per request however many parameters ask for it, as FastAPI caches it."""

    call: Callable[..., Awaitable[Any]]
    request_name: str | None
    needs: tuple[tuple[str | None, _Call], ...]

    async def arguments(self, request: Request, done: dict[int, Any]) -> dict[str, Any]:
        """What the call takes: the request, and its dependencies' values (``done``:
        the values already found in this request, by call)."""
        args: dict[str, Any] = {}
        if self.request_name is not None:
            args[self.request_name] = request
        for name, need in self.needs:
            value = await need.value(request, done)
            if name is not None:  # a route's ``dependencies=[...]``: called, not passed
                args[name] = value
        return args

    async def value(self, request: Request, done: dict[int, Any]) -> Any:
        key = id(self.call)
        if key in done:
            return done[key]
        done[key] = found = await self.call(**await self.arguments(request, done))
        return found


def _plain_text(field: ModelField, *, optional: bool) -> bool:
    """A parameter FastAPI would pass on as the text it was sent: a ``str`` (a path
    parameter) or ``str | None = None`` (a query parameter), without constraints."""
    info = field.field_info
    if info.metadata or field.validation_alias not in (None, field.alias):
        return False
    if not optional:
        return info.annotation is str
    return info.annotation == (str | None) and not info.is_required() and info.default is None


def _call_of(dependant: Dependant, *, endpoint: bool = False) -> _Call | None:
    """``dependant`` as a ``_Call``, or None when FastAPI's handler must serve it:
    a parameter it validates or converts (a header, a cookie, a body, a number),
    a security scheme, a dependency that is not a coroutine function (a plain
    ``def`` runs in a thread, a generator around the answer), an uncached one."""
    call = dependant.call
    if (
        call is None
        or not inspect.iscoroutinefunction(call)
        or not dependant.use_cache
        or dependant.header_params
        or dependant.cookie_params
        or dependant.body_params
        or dependant.websocket_param_name
        or dependant.http_connection_param_name
        or dependant.response_param_name
        or dependant.background_tasks_param_name
        or dependant.security_scopes_param_name
        or dependant.own_oauth_scopes
        or (not endpoint and (dependant.path_params or dependant.query_params))
    ):
        return None
    needs: list[tuple[str | None, _Call]] = []
    for sub in dependant.dependencies:
        planned = _call_of(sub)
        if planned is None:
            return None
        needs.append((sub.name, planned))
    return _Call(call, dependant.request_param_name, tuple(needs))


@dataclass(frozen=True)
class _Plan:
    """How a route's endpoint is called, made once from what FastAPI read of its
    signature. FastAPI's handler solves the dependency graph again on every
    request (a fifth of a read by id's CPU, measured in process: three levels of
    dependencies, a validation per parameter, a dictionary of the answer checked
    against ``dict[str, Any]`` and dumped by pydantic); the service's endpoints take
    the request, its dependencies and texts only (parameters are parsed by the
    service so that a bad one is its own 422, DESIGN.md §12), so there is nothing
    to solve: the texts are passed as sent, the dependencies called once each, and
    an answer that is not already a response is encoded as every other one is
    (``responses.JSON``, ``kit.jsonio``)."""

    endpoint: _Call
    path: tuple[str, ...]
    query: tuple[tuple[str, str], ...]  # (parameter, name in the query string)
    status_code: int

    @classmethod
    def of(cls, route: APIRoute) -> _Plan | None:
        dependant = route.dependant
        endpoint = _call_of(dependant, endpoint=True)
        if endpoint is None or dependant.call is None:
            return None
        if not all(_plain_text(f, optional=False) for f in dependant.path_params):
            return None
        if not all(_plain_text(f, optional=True) for f in dependant.query_params):
            return None
        if route.response_model not in (None, dict[str, Any]):
            return None  # a model to validate or filter the answer with: FastAPI's work
        answers = route.response_class
        answers = getattr(answers, "value", answers)  # a router's default
        if not (isinstance(answers, type) and issubclass(answers, JSON)):
            returned = get_typed_return_annotation(dependant.call)
            if not (isinstance(returned, type) and issubclass(returned, Response)):
                return None
        status = route.status_code or 200
        if status < 200 or status in (204, 304):
            return None  # an answer without a body: FastAPI's handler empties it
        return cls(
            endpoint,
            tuple(f.name for f in dependant.path_params),
            tuple((f.name, f.alias) for f in dependant.query_params),
            status,
        )

    async def handle(self, request: Request) -> Response:
        values = await self.endpoint.arguments(request, {})
        if self.path:
            path = request.path_params
            for name in self.path:
                values[name] = path[name]
        if self.query:
            query = request.query_params
            for name, alias in self.query:
                values[name] = query.get(alias)
        answer = await self.endpoint.call(**values)
        if isinstance(answer, Response):
            return answer
        return JSON(answer, status_code=self.status_code)


class Route(APIRoute):
    """FastAPI's route, served by its ``_Plan`` when it has one.

    Its OpenAPI description, its matching and its errors are FastAPI's: an error
    raised by the endpoint or a dependency goes to the app's exception handlers
    (``app.create_app``) either way. A request whose path does not start with the
    route's literal part (``/api/v1/public/sales/`` of
    ``/api/v1/public/sales/{order_id}``) is no match without running its regular
    expression: a request is matched against the routes in order, and a sale read
    was tried against 24 of them."""

    def __init__(self, path: str, endpoint: Callable[..., Any], **options: Any) -> None:
        super().__init__(path, endpoint, **options)
        self.literal = self.path.split("{", 1)[0]
        plan = _Plan.of(self)
        self.plan = plan
        if plan is not None:
            handle = plan.handle

            async def app(scope: Scope, receive: Receive, send: Send) -> None:
                response = await handle(Request(scope, receive, send))
                await response(scope, receive, send)

            self.app = app

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        if scope["type"] == "http" and not get_route_path(scope).startswith(self.literal):
            return Match.NONE, {}
        return super().matches(scope)


PUBLIC = "/api/v1/public"
ADMIN = "/api/v1/admin"


def _router(prefix: str, tags: list[str | Enum] | None, include_in_schema: bool) -> APIRouter:
    return APIRouter(
        prefix=prefix,
        tags=tags,
        default_response_class=JSON,
        include_in_schema=include_in_schema,
        route_class=Route,
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
