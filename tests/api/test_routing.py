"""Routes are mounted flat (``api.routing``): one list the request is matched
against, no included router that each request would walk again."""

from __future__ import annotations

import httpx
import pytest
from fastapi import APIRouter, FastAPI
from fastapi.routing import APIRoute
from starlette.routing import Mount, Route

from tillbook.api import routing
from tillbook.api.responses import JSON
from tillbook.app import create_app
from tillbook.config import Settings


def test_the_app_holds_routes_only_each_whole() -> None:
    app = create_app(Settings(database_url="sqlite:///:memory:"))
    kinds = {type(route) for route in app.router.routes}
    assert kinds <= {APIRoute, Mount, Route}, kinds
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
