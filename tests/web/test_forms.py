"""Form handling shared by the pages (``web/forms.py``): a refused field is shown
next to it with what was typed, and a form's one-time token makes a write happen
once however often it is sent."""

from __future__ import annotations

import httpx
from sqlalchemy import func, select

from tests.factories import Shop
from tests.web_helpers import (
    OWNER_PASSWORD,
    count_rows,
    csrf_of,
    form_token_of,
    owner_email,
    sign_in,
)
from tillbook.db import Database
from tillbook.models import AuditEvent, Product


async def test_field_errors_are_shown_next_to_the_field_and_a_form_works_once(
    web: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    await sign_in(web, await owner_email(db, shop), OWNER_PASSWORD)
    page = await web.get("/products/new")
    wh = shop.warehouse_id
    form = {
        "csrf": csrf_of(page.text),
        "form_token": form_token_of(page.text),
        "name": "Oat milk",
        "item_code": f"OAT-{shop.company_id}",
        "barcodes": f"77{shop.company_id}01",
        f"list.{wh}.on": "1",
        f"list.{wh}.sales_price": "abc",
        f"list.{wh}.purchase_price": "1.20",
    }
    bad = await web.post("/products/new", data=form)
    assert bad.status_code == 422
    assert f'id="e-list.{wh}.sales_price"' in bad.text and "must be a number" in bad.text
    assert 'value="Oat milk"' in bad.text
    products = await count_rows(db, Product, shop.company_id)
    form[f"list.{wh}.sales_price"] = "2.50"
    form[f"list.{wh}.opening_stock.quantity"] = "12"
    form[f"list.{wh}.opening_stock.unit_cost"] = "1.10"
    first = await web.post("/products/new", data=form)
    assert first.status_code == 303, first.text
    again = await web.post("/products/new", data=form)
    assert again.status_code == 303 and again.headers["location"] == first.headers["location"]
    assert await count_rows(db, Product, shop.company_id) == products + 1
    shown = await web.get(first.headers["location"])
    assert "Oat milk" in shown.text and "2.50" in shown.text and ">12<" in shown.text
    audited = await db.read(
        lambda s: s.scalar(
            select(func.count())
            .select_from(AuditEvent)
            .where(AuditEvent.company_id == shop.company_id, AuditEvent.entity_type == "product")
        )
    )
    assert audited == 1
