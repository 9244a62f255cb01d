"""Hostile input on every page of the back office (DESIGN.md §12; issue 22, item 5):
ids that are not ids, NUL, lone surrogates, huge numbers and markup in every query
parameter and form field, and numbers in other scripts' digits. A page refuses
(4xx) or answers, never a server error, and a refused form writes nothing."""

from __future__ import annotations

import datetime as dt
import re

import httpx
import pytest
from sqlalchemy import select

from tests.factories import Shop
from tests.web_helpers import (
    audit_count,
    count_rows,
    csrf_of,
    form_token_of,
    owner_page,
)
from tillbook.db import Database
from tillbook.models import ApiKey

HOSTILE_IDS = ("0", "-1", "abc", "9" * 40, "1.5", "%00")
# percent-encoded as sent: a NUL, a lone surrogate and a byte that is no UTF-8 at all
HOSTILE_VALUES = ("a%00b", "%ED%A0%80", "9" * 400, "-1e999999", "%3Cscript%3Ex", "", "%FF%FE")
FORM_FIELDS = (
    "name", "code", "version", "warehouse_id", "account_code", "quantity", "price",
    "sales_price", "purchase_price", "reason", "password", "email", "role", "url", "events",
    "timezone", "money_format", "date", "date_from", "date_to", "amount", "notes", "q",
    "item_code", "barcode", "unit_id", "category_id", "tax_id", "counted", "kind",
    "currency", "rate",
)  # fmt: skip


async def test_no_page_answers_a_500_to_hostile_input(
    web: httpx.AsyncClient, db: Database, shop: Shop, client: httpx.AsyncClient
) -> None:
    """Every web route, GET and POST, with ids that are not ids, query parameters
    and form fields holding NUL, lone surrogates, huge numbers and markup: a page
    that refuses (4xx) or answers, never a server error (DESIGN.md §12)."""
    from fastapi.routing import APIRoute

    from tillbook.web import ROUTERS

    home = await owner_page(web, db, shop, "/")
    csrf = csrf_of(home)
    routes = [
        r
        for router in ROUTERS
        for r in router.routes
        if isinstance(r, APIRoute) and r.path not in ("/logout", "/login")
    ]
    assert len(routes) > 80, len(routes)
    made = await client.post(
        "/sales",
        headers=shop.headers,
        json={
            "user_id": shop.customer_id,
            "order_date": dt.date.today().isoformat(),
            "product_items": [{"xid": shop.xid("apple"), "quantity": 1, "unit_price": "4"}],
        },
    )
    assert made.status_code == 200, made.text
    sale = made.json()["order_id"]
    key_id = await db.read(
        lambda s: s.scalar(select(ApiKey.id).where(ApiKey.public_key == shop.key.public_key))
    )
    # real records, so that forms reach the services' own checks, not only a 404
    real = {
        "product_id": str(shop.products["apple"]),
        "warehouse_id": str(shop.warehouse_id),
        "party_id": str(shop.customer_id),
        "order_id": str(sale),
        "key_id": str(key_id),
        "item_id": str(shop.card_mode_id),
        "kind": "brand",
    }
    failures: list[str] = []
    statuses: dict[tuple[str, int], int] = {}
    cases: list[tuple[APIRoute, dict[str, str], str]] = []
    for route in routes:
        params = re.findall(r"{(\w+)}", route.path)
        for i, bad in enumerate(HOSTILE_IDS if params else ("",)):
            cases.append((route, dict.fromkeys(params, bad), HOSTILE_VALUES[i % 7]))
        if params and all(p in real for p in params):
            for junk in HOSTILE_VALUES:
                cases.append((route, {p: real[p] for p in params}, junk))
    for n, (route, ids, junk) in enumerate(cases):
        path = route.path
        for name, value in ids.items():
            path = path.replace(f"{{{name}}}", value)
        for method in sorted(route.methods or ()):
            if method == "GET":
                query = "&".join(f"{f}={junk}" for f in ("q", "page", "date_from", "report"))
                r = await web.get(f"{path}?{query}")
            else:
                form = "&".join(f"{f}={junk}" for f in FORM_FIELDS)
                r = await web.post(
                    path,
                    content=f"{form}&csrf={csrf}&form_token=hostile-{n}".encode(),
                    headers={"content-type": "application/x-www-form-urlencoded"},
                )
            statuses[(method, r.status_code)] = statuses.get((method, r.status_code), 0) + 1
            if r.status_code >= 500:
                failures.append(f"{method} {path}: {r.status_code}")
    assert not failures, failures
    # the forms reached the services: some were taken, most refused by their checks
    assert statuses.get(("POST", 303), 0) > 5 and statuses.get(("POST", 422), 0) > 50, statuses


# Python's int() and Decimal() read all of these as numbers (or fail with a 500 for
# "²"); a page reads none of them. Percent-encoded as a browser sends them.
OTHER_DIGITS = ("%C2%B2", "%EF%BC%92", "%D9%A1", "%201", "1_000", "%2B1")


async def test_no_page_reads_other_scripts_digits_as_numbers(
    web: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    """Every GET page, with ``warehouse_id`` or ``page`` written in another script's
    digits, with a sign, a space or an underscore: refused like ``abc`` (a 4xx page)
    or ignored like it, never a 500, never read as a number. A path id written so is
    not found."""
    from fastapi.routing import APIRoute

    from tillbook.web import ROUTERS

    await owner_page(web, db, shop, "/")
    real = {
        "product_id": str(shop.products["apple"]),
        "warehouse_id": str(shop.warehouse_id),
        "party_id": str(shop.customer_id),
        "item_id": str(shop.card_mode_id),
        "kind": "brand",
    }
    routes = [
        r
        for router in ROUTERS
        for r in router.routes
        if isinstance(r, APIRoute) and "GET" in (r.methods or ()) and r.path != "/logout"
    ]
    failures: list[str] = []
    refused = 0
    for route in routes:
        names = re.findall(r"{(\w+)}", route.path)
        if not all(n in real for n in names):
            continue
        path = route.path
        for name in names:
            path = path.replace(f"{{{name}}}", real[name])
        for param in ("warehouse_id", "page"):
            plain = await web.get(f"{path}?{param}=abc")
            for bad in OTHER_DIGITS:
                r = await web.get(f"{path}?{param}={bad}")
                if r.status_code >= 500 or (plain.status_code >= 400) != (r.status_code >= 400):
                    failures.append(f"{path}?{param}={bad}: {r.status_code} ({plain.status_code})")
                refused += r.status_code >= 400
        for name in names:
            if name == "kind":
                continue
            for bad in OTHER_DIGITS:
                r = await web.get(route.path.replace(f"{{{name}}}", bad).format(**real))
                if r.status_code not in (404, 422):
                    failures.append(f"{route.path} {name}={bad}: {r.status_code}")
    assert not failures, failures
    assert refused >= 9 * len(OTHER_DIGITS), refused  # the pages that take them


@pytest.mark.parametrize("bad", ["２", "١", "²", "+1", "1_000"])
async def test_form_numbers_in_other_scripts_are_refused_and_nothing_written(
    web: httpx.AsyncClient, db: Database, shop: Shop, bad: str
) -> None:
    """A branch, a quantity and a price typed in a form: ASCII digits or a 4xx with
    the form again, and nothing sent, changed or audited."""
    from tillbook.models import StockTransfer

    apple, wh = shop.products["apple"], shop.warehouse_id
    page = await owner_page(web, db, shop, f"/transfers/new?warehouse_id={wh}")
    form = {
        "csrf": csrf_of(page),
        "form_token": form_token_of(page),
        "warehouse_id": str(wh),
        "to_warehouse_id": str(shop.other_warehouse_id),
        f"qty-{apple}": "2",
    }
    for field in ("warehouse_id", "to_warehouse_id", f"qty-{apple}"):
        r = await web.post("/transfers/new", data={**form, field: bad})
        assert 400 <= r.status_code < 500, (field, r.status_code)
    assert await count_rows(db, StockTransfer, shop.company_id) == 0

    product = await web.get(f"/products/{apple}")
    version = re.search(
        rf'action="/products/{apple}/listings/{wh}">.*?name="version" value="(\d+)"', product.text
    )
    assert version is not None
    listing = {
        "csrf": csrf_of(product.text),
        "form_token": "form-listing-digits",
        "version": version.group(1),
        "sales_price": "9.99",
        "purchase_price": "1.00",
        "reorder_level": "3",
        "active": "1",
    }
    before = await audit_count(db, shop.company_id, "listing")
    for field in ("sales_price", "purchase_price", "reorder_level", "version"):
        r = await web.post(f"/products/{apple}/listings/{wh}", data={**listing, field: bad})
        assert r.status_code in (412, 422, 428), (field, r.status_code)
    assert await audit_count(db, shop.company_id, "listing") == before
