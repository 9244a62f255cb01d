"""Routes are mounted flat (``api.routing``): one list the request is matched
against, no included router that each request would walk again; each served by its
plan where it has one, with the answers FastAPI's own handler gives."""

from __future__ import annotations

import re
from typing import Any

import httpx
import pytest
from fastapi import APIRouter, FastAPI, Request
from fastapi.routing import APIRoute, request_response
from starlette.routing import Mount, Route

from tests.admin_helpers import sale_body
from tests.factories import Shop
from tillbook.api import routing
from tillbook.api.responses import JSON
from tillbook.app import create_app
from tillbook.config import Settings
from tillbook.kit import xid


def test_the_app_holds_routes_only_each_whole() -> None:
    app = create_app(Settings(database_url="sqlite:///:memory:"))
    kinds = {type(route) for route in app.router.routes}
    assert kinds <= {APIRoute, routing.Route, Mount, Route}, kinds
    api = [r for r in app.router.routes if isinstance(r, APIRoute)]
    public = [r.path for r in api if r.path.startswith(routing.PUBLIC + "/")]
    admin = [r.path for r in api if r.path.startswith(routing.ADMIN + "/")]
    assert "/api/v1/public/products/{ref}" in public
    assert "/api/v1/admin/products" in admin
    assert len(public) > 50 and len(admin) > 50
    # an answer left to its default is the app's JSON (orjson), as an include gave it
    assert {r.response_class for r in api if r.path == "/api/v1/public/sales/{order_id}"} == {JSON}


async def test_mount_keeps_the_order_and_refuses_a_tree() -> None:
    app = FastAPI()
    first, second = routing.public(tags=["a"]), routing.public(tags=["b"])

    @first.get("/thing/{name}")
    async def named(name: str) -> dict[str, str]:
        return {"by": "name", "name": name}

    @second.get("/thing/fixed")
    async def fixed() -> dict[str, str]:
        return {"by": "fixed"}

    routing.mount(app, (first, second))
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        # the first route that matches answers, in the order mounted
        answer = await client.get("/api/v1/public/thing/fixed")
    assert answer.json() == {"by": "name", "name": "fixed"}

    outer = APIRouter()
    outer.include_router(routing.public(tags=["c"]))
    with pytest.raises(TypeError, match="plain routes only"):
        routing.mount(FastAPI(), (outer,))


def test_every_public_route_has_a_plan() -> None:
    """The public API's endpoints take the request, their dependencies and texts
    only (parameters are parsed by the service, DESIGN.md §12): none is left to
    FastAPI's per-request solving, which a new parameter type would bring back
    unnoticed. The back office's routes that authenticate with FastAPI's bearer
    scheme keep FastAPI's handler."""
    app = create_app(Settings(database_url="sqlite:///:memory:"))
    public = [r for r in app.router.routes if r.path.startswith(routing.PUBLIC)]
    assert public and all(isinstance(r, routing.Route) for r in public)
    assert [r.path for r in public if r.plan is None] == []  # type: ignore[attr-defined]
    planned = {r.path for r in app.router.routes if getattr(r, "plan", None)}
    assert "/health" in planned
    assert f"{routing.ADMIN}/products" not in planned  # HTTPBearer: FastAPI's


async def test_plans_answer_as_fastapis_handler(
    client: httpx.AsyncClient, shop: Shop, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same requests answered by the routes' plans and then by FastAPI's own
    handler of the same routes: status, body (byte for byte, but a feed's
    ``sync_token`` and cursor, which move with the clock) and headers (but the request id
    and the rate limit's counters) equal, for reads by id and lists, change feeds,
    a 304, a receipt, a missing record, bad parameters, a bad body and no key."""
    sold = await client.post("/sales", json=sale_body(shop, 2), headers=shop.headers)
    assert sold.status_code == 200, sold.text
    order_id = sold.json()["order_id"]
    apple = shop.xid("apple")
    since = "2020-01-01T00:00:00Z"
    feed = await client.get("/products", params={"updated_since": since}, headers=shop.headers)
    cursor = feed.json()["data"]["next_cursor"] or "x"
    tag = (await client.get(f"/products/{apple}", headers=shop.headers)).headers["etag"]
    h = shop.headers
    requests: list[tuple[str, str, dict[str, Any]]] = [
        ("GET", f"/products/{apple}", {"headers": h}),
        ("GET", f"/products/{apple}", {"headers": {**h, "If-None-Match": tag}}),
        ("GET", f"/products/{xid.encode(10**9)}", {"headers": h}),
        ("GET", "/products", {"headers": h, "params": {"search": "app", "limit": "2"}}),
        ("GET", "/products", {"headers": h, "params": {"page": "x"}}),
        ("GET", "/products", {"headers": h, "params": {"page": "1", "page ": "2", "limit": ""}}),
        ("GET", "/products", {"headers": h, "params": {"updated_since": since, "limit": "2"}}),
        ("GET", "/products", {"headers": h, "params": {"cursor": cursor}}),
        ("GET", "/products", {"headers": h, "params": {"cursor": "not-a-cursor"}}),
        ("GET", f"/sales/{order_id}", {"headers": h}),
        ("GET", f"/sales/{order_id}/receipt", {"headers": h, "params": {"format": "text"}}),
        ("GET", "/sales/SAL-00001", {"headers": h}),
        ("GET", "/sales/99999999", {"headers": h}),
        ("GET", "/sales", {"headers": h, "params": {"dates": "2026-11-01,2026-11-30"}}),
        ("GET", "/sales", {"headers": h, "params": {"dates": "yesterday"}}),
        ("GET", "/categories", {"headers": h}),
        ("GET", "/warehouses", {"headers": h}),
        ("GET", "/customers", {"headers": h, "params": {"updated_since": since}}),
        ("GET", "/sales", {}),
        ("GET", "/sales", {"headers": {**h, "X-Service-Secret-Key": "wrong"}}),
        ("POST", "/sales", {"headers": h, "content": b"{not json"}),
        ("POST", "/sales", {"headers": {**h, "Content-Type": "text/plain"}, "content": b"{}"}),
        ("POST", "/sales", {"headers": h, "json": {"user_id": "x"}}),
        ("POST", f"/sales/{order_id}/void", {"headers": h, "json": {"reason": ""}}),
        ("GET", "http://testserver/health", {}),
    ]

    async def answers() -> list[tuple[int, bytes, dict[str, str]]]:
        found = []
        for method, url, options in requests:
            r = await client.request(method, url, **options)
            headers = {
                k: v
                for k, v in r.headers.items()
                if k not in ("x-request-id", "x-ratelimit-remaining", "x-ratelimit-reset")
            }
            body = re.sub(rb'"(sync_token|next_cursor)":"[^"]*"', rb'"\1":"-"', r.content)
            found.append((r.status_code, body, headers))
        return found

    planned = await answers()
    app = client._transport.app  # type: ignore[attr-defined]
    served = 0
    for route in app.router.routes:
        if getattr(route, "plan", None) is not None:
            monkeypatch.setattr(route, "app", request_response(APIRoute.get_route_handler(route)))
            served += 1
    assert served > 50
    by_fastapi = await answers()
    for request, mine, theirs in zip(requests, planned, by_fastapi, strict=True):
        assert mine == theirs, request
    statuses = {status for status, _, _ in planned}
    assert {200, 304, 401, 404, 415, 422} <= statuses, statuses


async def test_a_path_that_does_not_begin_with_the_literal_part_is_no_match() -> None:
    """``Route.matches`` refuses by the literal part before the pattern, and a path
    that begins with it is matched by the pattern as before."""
    router = routing.public(tags=["t"])

    @router.get("/things/{name}/parts")
    async def parts(request: Request, name: str) -> dict[str, str]:
        return {"name": name, "path": request.url.path}

    (route,) = router.routes
    assert isinstance(route, routing.Route) and route.literal == "/api/v1/public/things/"
    app = FastAPI()
    routing.mount(app, (router,))
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        assert (await client.get("/api/v1/public/things/a%2Fb/parts")).status_code == 404
        ok = await client.get("/api/v1/public/things/x/parts")
        assert ok.json() == {"name": "x", "path": "/api/v1/public/things/x/parts"}
        assert (await client.get("/api/v1/public/thing/x/parts")).status_code == 404
        assert (await client.post("/api/v1/public/things/x/parts")).status_code == 405


async def test_a_route_with_a_response_model_keeps_fastapis_handler() -> None:
    """A plan passes the answer on as it is; a route that declares a model to
    validate or filter its answer with is left to FastAPI, so the fields the model
    leaves out stay out."""
    from pydantic import BaseModel

    class Shown(BaseModel):
        name: str

    router = routing.public(tags=["t"])

    @router.get("/shown", response_model=Shown)
    async def shown() -> dict[str, str]:
        return {"name": "n", "secret": "s"}

    @router.get("/plain")
    async def plain() -> dict[str, Any]:
        return {"name": "n", "secret": "s"}

    by_path = {r.path: r for r in router.routes}
    assert by_path["/api/v1/public/shown"].plan is None  # type: ignore[attr-defined]
    assert by_path["/api/v1/public/plain"].plan is not None  # type: ignore[attr-defined]
    app = FastAPI()
    routing.mount(app, (router,))
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        assert (await client.get("/api/v1/public/shown")).json() == {"name": "n"}
        assert (await client.get("/api/v1/public/plain")).json() == {"name": "n", "secret": "s"}
