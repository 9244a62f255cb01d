"""Customers and suppliers in the back office (``web/parties.py``): listed, created,
edited and archived once each with an audit record; what a cashier may add; a
party's statement in pages and as a download."""

from __future__ import annotations

import datetime as dt

import httpx

from tests.factories import Shop
from tests.web_helpers import (
    OWNER_PASSWORD,
    STAFF_PASSWORD,
    add_staff,
    audit_count,
    csrf_of,
    form_token_of,
    owner_email,
    sign_in,
)
from tillbook.db import Database


async def test_customers_list_create_edit_and_archive(
    web: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    await sign_in(web, await owner_email(db, shop), OWNER_PASSWORD)
    listed = await web.get("/customers?q=")
    assert listed.status_code == 200 and "Balance" in listed.text
    page = await web.get("/customers/new")
    form = {
        "csrf": csrf_of(page.text),
        "form_token": form_token_of(page.text),
        "name": "Ada Web",
        "code": f"ADA-{shop.company_id}",
        "email": "not an email",
        "credit_limit": "100",
    }
    bad = await web.post("/customers/new", data=form)
    assert bad.status_code == 422 and 'id="e-email"' in bad.text
    assert 'value="Ada Web"' in bad.text
    form["email"] = "ada@example.com"
    before = await audit_count(db, shop.company_id, "customer")
    first = await web.post("/customers/new", data=form)
    assert first.status_code == 303, first.text
    again = await web.post("/customers/new", data=form)
    assert again.headers["location"] == first.headers["location"]
    assert await audit_count(db, shop.company_id, "customer") == before + 1
    detail = await web.get(first.headers["location"])
    assert "Ada Web" in detail.text and "Outstanding invoices" in detail.text
    found = await web.get("/customers?q=Ada+Web")
    assert "Ada Web" in found.text
    pid = first.headers["location"].split("/customers/")[1].split("?")[0]

    # An edit based on an old version is refused with a clear message.
    edit = {
        "csrf": csrf_of(detail.text),
        "form_token": form_token_of(detail.text),
        "name": "Ada Lovelace",
        "version": "1",
        "credit_limit": "150",
    }
    saved = await web.post(f"/customers/{pid}/edit", data=edit)
    assert saved.status_code == 303, saved.text
    stale = await web.post(
        f"/customers/{pid}/edit", data={**edit, "form_token": "form-other", "name": "Lost"}
    )
    assert stale.status_code == 412 and "changed this record" in stale.text
    assert "Ada Lovelace" in (await web.get(f"/customers/{pid}")).text

    confirm = await web.get(f"/customers/{pid}/archive")
    assert confirm.status_code == 200 and "Archive Ada Lovelace?" in confirm.text
    done = await web.post(
        f"/customers/{pid}/archive",
        data={"csrf": csrf_of(confirm.text), "form_token": form_token_of(confirm.text)},
    )
    assert done.status_code == 303
    assert "(archived)" in (await web.get(f"/customers/{pid}")).text
    assert await audit_count(db, shop.company_id, "customer") == before + 3


async def test_a_cashier_adds_a_customer_but_not_a_supplier_nor_a_credit_limit(
    web: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    await sign_in(web, await add_staff(db, shop, "cashier"), STAFF_PASSWORD)
    page = await web.get("/customers/new")
    assert page.status_code == 200 and "credit_limit" not in page.text
    assert (await web.get("/suppliers")).status_code == 200
    assert (await web.get("/suppliers/new")).status_code == 403
    csrf = csrf_of(page.text)
    r = await web.post(
        "/customers/new", data={"csrf": csrf, "name": "Sneaky", "credit_limit": "1000"}
    )
    assert r.status_code == 403
    r = await web.post("/suppliers/new", data={"csrf": csrf, "name": "Sneaky supplier"})
    assert r.status_code == 403
    assert (await web.get(f"/customers/{shop.customer_id}/statement")).status_code == 403
    r = await web.post("/customers/new", data={"name": "No token", "form_token": "form-x"})
    assert r.status_code == 403


async def test_a_party_statement_pages_and_downloads(
    web: httpx.AsyncClient, db: Database, shop: Shop, client: httpx.AsyncClient
) -> None:

    for _n in range(3):
        sale = await client.post(
            "/sales",
            headers=shop.headers,
            json={
                "user_id": shop.customer_id,
                "order_date": dt.date.today().isoformat(),
                "product_items": [{"xid": shop.xid("apple"), "quantity": 1, "unit_price": "4"}],
            },
        )
        assert sale.status_code == 200, sale.text
    await sign_in(web, await owner_email(db, shop), OWNER_PASSWORD)
    detail = await web.get(f"/customers/{shop.customer_id}")
    assert detail.text.count('href="/sales/') == 3  # three invoices still due
    statement = await web.get(f"/customers/{shop.customer_id}/statement")
    assert statement.status_code == 200 and "Opening balance" in statement.text
    assert 'id="closing">12.00' in statement.text
    csv_file = await web.get(f"/customers/{shop.customer_id}/statement?format=csv")
    assert csv_file.headers["content-type"].startswith("text/csv")
    assert "Closing balance" in csv_file.text
    bad = await web.get(f"/customers/{shop.customer_id}/statement?date_from=2024-13-01")
    assert bad.status_code == 422 and 'id="e-date_from"' in bad.text
