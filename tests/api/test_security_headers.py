"""Every response tells the browser how to treat it (``api/security.py``): the
Content-Security-Policy, no framing, the referrer policy and ``nosniff``, whatever
the path: each page route of the app (walked, signed in and not), the
documentation, static files, the API's JSON and its errors, a path no route has
yet (the register's ``/register``)."""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import re
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from fastapi.routing import APIRoute

from tests.factories import Shop
from tests.web_helpers import OWNER_PASSWORD, owner_email, sign_in
from tillbook.api import security
from tillbook.app import create_app
from tillbook.config import Settings
from tillbook.db import Database
from tillbook.orders import receipts

STRICT = {
    "default-src": "'self'",
    "script-src": "'self'",
    "object-src": "'none'",
    "base-uri": "'none'",
    "frame-ancestors": "'none'",
}


def directives(policy: str) -> dict[str, str]:
    return dict(d.strip().partition(" ")[::2] for d in policy.split(";"))


def check_headers(r: httpx.Response, what: str, *, docs: bool = False) -> None:
    policy = r.headers.get("content-security-policy", "")
    found = directives(policy)
    for name, value in STRICT.items():
        assert found.get(name) == value, (what, name, policy)
    assert "unsafe-inline" not in found["script-src"] and "unsafe-eval" not in policy, what
    if not docs:
        assert "unsafe-inline" not in policy, (what, policy)
        assert found["style-src"].startswith("'self'"), (what, policy)
    assert r.headers.get("x-frame-options") == "DENY", what
    assert r.headers.get("referrer-policy") in ("same-origin", "no-referrer"), what
    assert r.headers.get("x-content-type-options") == "nosniff", what
    assert r.headers.get("x-request-id"), what
    # each once, even where a route sets its own
    for name in ("content-security-policy", "x-frame-options", "x-content-type-options"):
        assert len(r.headers.get_list(name)) == 1, (what, name)


@pytest.fixture
async def app_client(
    settings: Settings, db: Database
) -> AsyncIterator[tuple[Any, httpx.AsyncClient]]:
    app = create_app(settings, database=db)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app, client=("10.79.0.1", 4321))
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as c:
            yield app, c


def page_paths(real: dict[str, str]) -> list[str]:
    """Every GET route of the back office (the routers ``web.install`` adds) and the
    documentation, their path parameters filled with ``real`` records (else 1)."""
    from tillbook.web import ROUTERS

    paths = ["/docs", "/redoc"]
    for router in ROUTERS:
        for route in router.routes:
            if isinstance(route, APIRoute) and "GET" in route.methods:
                paths.append(re.sub(r"\{(\w+)\}", lambda m: real.get(m[1], "1"), route.path))
    return sorted(set(paths))


async def test_every_page_route_sends_the_headers(
    app_client: tuple[Any, httpx.AsyncClient], db: Database, shop: Shop
) -> None:
    _app, client = app_client
    made = await client.post(
        "/api/v1/public/sales",
        headers=shop.headers,
        json={
            "user_id": shop.customer_id,
            "order_date": dt.date.today().isoformat(),
            "product_items": [{"xid": shop.xid("apple"), "quantity": 1, "unit_price": "4"}],
        },
    )
    assert made.status_code == 200, made.text
    paths = page_paths(
        {
            "product_id": str(shop.products["apple"]),
            "warehouse_id": str(shop.warehouse_id),
            "party_id": str(shop.customer_id),
            "order_id": str(made.json()["order_id"]),
            "item_id": str(shop.card_mode_id),
            "kind": "brand",
        }
    )
    assert "/" in paths and "/products" in paths and "/docs" in paths and "/account" in paths
    # Not signed in: the sign-in redirect, the sign-in page itself, the docs.
    for path in paths:
        r = await client.get(path)
        check_headers(r, f"{path} (signed out)", docs=path in ("/docs", "/redoc"))
    r = await sign_in(client, await owner_email(db, shop), OWNER_PASSWORD)
    assert r.status_code == 303, r.text
    shown = 0
    for path in paths:
        r = await client.get(path)
        assert r.status_code < 500, (path, r.status_code)
        check_headers(r, path, docs=path in ("/docs", "/redoc"))
        shown += r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    assert shown > 40, shown  # pages, not only refusals


async def test_everything_else_sends_them_too(
    app_client: tuple[Any, httpx.AsyncClient], shop: Shop
) -> None:
    _app, client = app_client
    cases = [
        ("GET", "/register", None),  # a page still to come: the 404 page has them
        ("GET", "/static/app.css", None),
        ("GET", "/docs-assets/swagger-ui.css", None),
        ("GET", "/health", None),
        ("GET", "/openapi.json", None),
        ("GET", "/api/v1/public/products", shop.headers),
        ("GET", "/api/v1/public/products", None),  # 401
        ("GET", "/api/v1/admin/staff", None),
        ("POST", "/login", None),  # 403: no form token
    ]
    for method, path, headers in cases:
        r = await client.request(method, path, headers=headers)
        check_headers(r, f"{method} {path} {r.status_code}")
    assert (await client.get("/register")).headers["content-type"].startswith("text/html")


async def test_the_docs_keep_scripts_to_the_bundled_files(
    app_client: tuple[Any, httpx.AsyncClient],
) -> None:
    _app, client = app_client
    for path in ("/docs", "/redoc"):
        r = await client.get(path)
        assert r.status_code == 200
        assert r.headers["content-security-policy"] == security.DOCS_POLICY
        assert "<style" not in r.text and " style=" not in r.text
        scripts = re.findall(r"<script([^>]*)>(.*?)</script>", r.text, re.S)
        assert scripts and all('src="/' in attrs and not body.strip() for attrs, body in scripts)


def test_the_receipt_style_is_the_one_the_policy_allows() -> None:
    """The receipt's inline style (the only one) is allowed by its hash, size by size;
    any change to the style text changes the hash with it."""
    allowed = directives(security.PAGE_POLICY)["style-src"]
    for size, style in receipts.STYLES.items():
        digest = base64.b64encode(hashlib.sha256(style.encode()).digest()).decode()
        assert f"'sha256-{digest}'" in allowed, size
    template = (receipts.resources.files("tillbook.orders") / "templates/receipt.html").read_text()
    assert len(re.findall(r"<style>", template)) == 1
    assert "<style>{{ style }}</style>" in template and " style=" not in template
    assert "<script" not in template


def test_no_template_carries_inline_script_or_style() -> None:
    """What the policy would refuse, found before a browser does: inline scripts,
    ``<style>`` blocks, ``style=`` attributes, ``on…=`` handlers, ``javascript:``
    links (the receipt's one style is checked above)."""
    from tillbook.web.render import HERE

    inline = re.compile(
        r"<script(?![^>]*\bsrc=)|<style|\sstyle=|\son[a-z]+=|javascript:", re.IGNORECASE
    )
    templates = sorted((HERE / "templates").glob("*.html"))
    assert len(templates) > 30
    for template in templates:
        found = inline.search(template.read_text())
        assert found is None, (template.name, found)
