"""A product's listing per branch (``web/listings.py``): edited once with its price
history, a stale edit refused, and the product listed in another branch."""

from __future__ import annotations

import re

import httpx

from tests.factories import Shop
from tests.web_helpers import (
    OWNER_PASSWORD,
    audit_count,
    csrf_of,
    owner_email,
    sign_in,
)
from tillbook.db import Database


async def test_a_listing_edit_once_a_stale_edit_refused_and_price_history(
    web: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    await sign_in(web, await owner_email(db, shop), OWNER_PASSWORD)
    apple, wh = shop.products["apple"], shop.warehouse_id
    page = await web.get(f"/products/{apple}")
    assert page.status_code == 200
    tokens = re.findall(r'name="form_token" value="([^"]+)"', page.text)
    assert len(tokens) == len(set(tokens)) > 1  # one token per form
    version = re.search(
        rf'action="/products/{apple}/listings/{wh}">.*?name="version" value="(\d+)"', page.text
    )
    assert version is not None
    form = {
        "csrf": csrf_of(page.text),
        "form_token": "form-listing-1",
        "version": version.group(1),
        "sales_price": "x",
        "purchase_price": "1.00",
        "reorder_level": "3",
        "active": "1",
    }
    bad = await web.post(f"/products/{apple}/listings/{wh}", data=form)
    assert bad.status_code == 422 and f'id="e-{wh}-sales_price"' in bad.text
    form["sales_price"] = "9.99"
    before = await audit_count(db, shop.company_id, "listing")
    first = await web.post(f"/products/{apple}/listings/{wh}", data=form)
    assert first.status_code == 303, first.text
    again = await web.post(f"/products/{apple}/listings/{wh}", data=form)
    assert again.status_code == 303
    assert await audit_count(db, shop.company_id, "listing") == before + 1
    stale = await web.post(
        f"/products/{apple}/listings/{wh}",
        data={**form, "form_token": "form-listing-2", "sales_price": "1.00"},
    )
    assert stale.status_code == 412 and "Someone else changed this listing" in stale.text
    shown = await web.get(f"/products/{apple}")
    assert "Price changes" in shown.text and "9.99" in shown.text


async def test_a_product_listed_in_another_branch(
    web: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    await sign_in(web, await owner_email(db, shop), OWNER_PASSWORD)
    tea = shop.products["tea"]
    page = await web.get(f"/products/{tea}")
    listed = re.findall(r'id="listing-(\d+)"', page.text)
    other = next(w for w in (shop.warehouse_id, shop.other_warehouse_id) if str(w) not in listed)
    form = {
        "csrf": csrf_of(page.text),
        "form_token": "form-add-1",
        "warehouse_id": str(other),
        "sales_price": "3.00",
        "purchase_price": "",
    }
    bad = await web.post(f"/products/{tea}/listings", data=form)
    assert bad.status_code == 422 and 'id="e-purchase_price"' in bad.text
    form.update({"purchase_price": "2.00", "opening_stock.quantity": "4"})
    form["opening_stock.unit_cost"] = "2.00"
    done = await web.post(f"/products/{tea}/listings", data=form)
    assert done.status_code == 303, done.text
    shown = await web.get(f"/products/{tea}")
    assert f'id="listing-{other}"' in shown.text
