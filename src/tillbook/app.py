"""create_app(): routers, middleware, exception handlers, lifespan."""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import fastapi_offline
from fastapi import FastAPI, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.utils import get_openapi
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles
from sqlalchemy.exc import DBAPIError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from tillbook import web
from tillbook.api import admin, public, routing, security
from tillbook.api.answers import Answers
from tillbook.api.body import BODY_SCHEMAS, errors_of_request
from tillbook.api.docs import add_components, document
from tillbook.api.health import router as health_router
from tillbook.api.limits import BodyLimit
from tillbook.api.public.openapi import finish_openapi
from tillbook.api.responses import JSON
from tillbook.auth.ratelimit import RateLimiter
from tillbook.config import Settings, get_settings
from tillbook.db import Database
from tillbook.errors import TillbookError, ValidationFailed
from tillbook.events.worker import DeliveryWorker
from tillbook.kit import generations, heap
from tillbook.kit.text import shorten
from tillbook.ledger import rollups

log = logging.getLogger("tillbook.app")


class ContextHeaders:
    """Adds the request id, the security headers (``api/security.py``: the
    Content-Security-Policy, no framing, the referrer policy, ``nosniff``) and the
    rate-limit headers to every response, errors, static files and the 500 included,
    whatever the path.

    It wraps the whole application, outside Starlette's error middleware, so the 500
    carries them too. That middleware answers an unexpected error (the handler in
    ``create_app``) and then raises it again for the server, which would log it with
    a traceback and the statement: it ends here instead, logged in one line (the
    traceback at DEBUG), also when it came after the response had started.
    """

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_id = os.urandom(8).hex()  # uuid4's 16 hex digits, without the UUID object
        scope.setdefault("state", {})["request_id"] = request_id
        answered = False

        async def send_with_headers(message: Message) -> None:
            nonlocal answered
            if message["type"] == "http.response.start":
                answered = True
                headers = list(message.get("headers", []))
                present = {k.lower() for k, _ in headers}
                headers.append((b"x-request-id", request_id.encode()))
                headers += [(k, v) for k, v in security.HEADERS if k not in present]
                extra: dict[str, str] = scope["state"].get("extra_headers") or {}
                for name, value in extra.items():
                    if name.lower().encode() not in present:
                        headers.append((name.lower().encode(), value.encode()))
                message["headers"] = headers
            await send(message)

        try:
            with generations.request_writes():
                await self.app(scope, receive, send_with_headers)
        except Exception as exc:
            if not answered:
                raise
            log.error("unhandled error (request %s): %s", request_id, _describe(exc))
            log.debug("traceback of request %s", request_id, exc_info=exc)


class _API(FastAPI):
    """FastAPI with ``ContextHeaders`` around its whole middleware stack."""

    def build_middleware_stack(self) -> ASGIApp:
        return ContextHeaders(super().build_middleware_stack())


def _describe(exc: Exception) -> str:
    """An exception in one line for the log, without the values of the request.

    A database error names its driver error and code (SQLSTATE) only: PostgreSQL's own
    message quotes the offending value (``invalid input syntax for type integer:
    "alice@example.com"``), and the statement's parameters are hidden by the
    engines (``hide_parameters``)."""
    if isinstance(exc, DBAPIError):
        orig = exc.orig
        driver = type(orig.__cause__ or orig).__name__ if orig is not None else "none"
        code = getattr(orig, "sqlstate", None) or getattr(orig, "sqlite_errorname", None)
        return f"{type(exc).__name__} (driver {driver}, code {code or 'none'})"
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {shorten(text, 200)}" if text else type(exc).__name__


def _error_response(request: Request, exc: TillbookError) -> Response:
    if web.wants_html(request):
        return web.error_page(request, exc)
    return JSON(exc.body(), status_code=exc.status_code, headers=exc.headers)


DOCS_ASSETS = Path(fastapi_offline.__file__).parent / "static"
"""Swagger UI and ReDoc, bundled by the ``fastapi-offline`` package: ``/docs`` works
on a shop's LAN without internet (FastAPI's default pages load them from a CDN)."""


_DOCS_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title><link rel="icon" href="/docs-assets/favicon.png">
{head}</head>
<body>{body}</body></html>
"""


def _offline_docs(app: FastAPI) -> None:
    """The two documentation pages, written here rather than by FastAPI's helpers:
    theirs start Swagger UI with an inline script and style ReDoc with an inline
    ``<style>``, which the Content-Security-Policy refuses."""
    app.mount("/docs-assets", StaticFiles(directory=DOCS_ASSETS), name="docs-assets")
    docs_headers = {"Content-Security-Policy": security.DOCS_POLICY, "Cache-Control": "no-cache"}

    @app.get("/docs", include_in_schema=False)
    async def swagger() -> HTMLResponse:
        page = _DOCS_PAGE.format(
            title=f"{app.title} - Swagger UI",
            head='<link rel="stylesheet" href="/docs-assets/swagger-ui.css">',
            body='<div id="swagger-ui"></div>'
            '<script src="/docs-assets/swagger-ui-bundle.js"></script>'
            '<script src="/static/swagger-init.js"></script>',
        )
        return HTMLResponse(page, headers=docs_headers)

    @app.get("/redoc", include_in_schema=False)
    async def redoc() -> HTMLResponse:
        page = _DOCS_PAGE.format(
            title=f"{app.title} - ReDoc",
            head='<link rel="stylesheet" href="/static/docs.css">',
            body="<noscript>ReDoc needs JavaScript.</noscript>"
            '<redoc spec-url="/openapi.json"></redoc>'
            '<script src="/docs-assets/redoc.standalone.js"></script>',
        )
        return HTMLResponse(page, headers=docs_headers)


def create_app(settings: Settings | None = None, database: Database | None = None) -> FastAPI:
    settings = settings or get_settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        owned = database is None
        app.state.db = database or Database(
            settings.database_url,
            read_url=settings.read_database_url,
            pool_size=settings.db_pool_size,
        )
        app.state.ratelimiter = RateLimiter(settings.redis_url)
        app.state.answers = answers = Answers(settings.answer_cache_s, app.state.db.generations)
        await answers.look(app.state.db)
        app.state.settings = settings
        stop = asyncio.Event()
        tasks = []
        if settings.run_worker:
            worker = DeliveryWorker(app.state.db, settings)
            tasks.append(asyncio.create_task(worker.run_forever(stop)))
        if settings.run_rollups:
            tasks.append(
                asyncio.create_task(
                    rollups.keep_rolled_up(app.state.db, stop, settings.rollup_every_s)
                )
            )
            tasks.append(asyncio.create_task(app.state.db.keep_statistics(stop)))
        tasks.append(asyncio.create_task(answers.watch(app.state.db, stop)))
        if settings.settle_heap:
            heap.settle()
        try:
            yield
        finally:
            stop.set()
            for task in tasks:
                await task
            if owned:
                await app.state.db.dispose()

    app = _API(
        title="tillbook public API",
        version="1.0.0",
        default_response_class=JSON,
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
    )
    _offline_docs(app)
    app.add_middleware(
        BodyLimit,
        max_bytes=settings.max_body_bytes,
        larger={
            "/api/v1/admin/import/": settings.max_import_bytes,
            "/import": settings.max_import_bytes,
        },
    )

    @app.exception_handler(TillbookError)
    async def _tillbook(request: Request, exc: TillbookError) -> Response:
        return _error_response(request, exc)

    @app.exception_handler(RequestValidationError)
    async def _validation(request: Request, exc: RequestValidationError) -> Response:
        return _error_response(request, ValidationFailed(errors_of_request(exc.errors())))

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> Response:
        message = {404: "not found", 405: "method not allowed"}.get(
            exc.status_code, str(exc.detail)
        )
        if web.wants_html(request):
            return web.error_page(request, TillbookError(message), exc.status_code)
        return JSON({"status": "error", "message": message}, status_code=exc.status_code)

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSON:
        request_id = request.scope.get("state", {}).get("request_id", "")
        body: dict[str, Any] = {
            "status": "error",
            "message": f"internal error; quote request id {request_id}",
            "request_id": request_id,
        }
        return JSON(body, status_code=500)

    routing.mount(app, (health_router, *public.ROUTERS, *admin.ROUTERS))
    web.install(app)

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            schema = get_openapi(title=app.title, version=app.version, routes=app.routes)
            add_components(schema, BODY_SCHEMAS)
            app.openapi_schema = document(finish_openapi(schema))
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
    return app
