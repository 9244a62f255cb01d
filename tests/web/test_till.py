"""A branch's day from the pages (``web/till.py``): stock transfers sent, received
and cancelled, a sale voided once, shifts and their reports; who may do each."""

from __future__ import annotations

import re

import httpx

from tests.factories import Shop
from tests.web_helpers import (
    OWNER_PASSWORD,
    STAFF_PASSWORD,
    add_staff,
    csrf_of,
    form_token_of,
    owner_email,
    sign_in,
)
from tillbook.db import Database


def _stock_cell(html: str, warehouse_id: int) -> str:
    found = re.search(rf'id="stock-{warehouse_id}">([^<]*)<', html)
    return found.group(1) if found else ""


async def test_a_transfer_sent_and_received_from_the_pages(
    web: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    from tests.invariants import check_books

    await sign_in(web, await owner_email(db, shop), OWNER_PASSWORD)
    apple, water = shop.products["apple"], shop.products["water"]
    listing = await web.get("/transfers")
    assert listing.status_code == 200 and "Send stock to another branch" in listing.text
    page = await web.get(f"/transfers/new?warehouse_id={shop.warehouse_id}")
    assert page.status_code == 200 and f'name="qty-{apple}"' in page.text
    form = {
        "csrf": csrf_of(page.text),
        "form_token": form_token_of(page.text),
        "warehouse_id": str(shop.warehouse_id),
        "to_warehouse_id": str(shop.other_warehouse_id),
        "notes": "weekend rush",
        f"qty-{apple}": "50",
        f"qty-{water}": "10",
    }
    too_many = await web.post("/transfers/new", data=form)
    assert too_many.status_code == 422, too_many.text
    assert f'id="e-qty-{apple}"' in too_many.text  # the service's message, by its row
    form[f"qty-{apple}"] = "5"
    sent = await web.post("/transfers/new", data=form)
    assert sent.status_code == 303, sent.text
    again = await web.post("/transfers/new", data=form)
    assert again.headers["location"] == sent.headers["location"]  # sent once
    where = sent.headers["location"]
    assert _stock_cell((await web.get(f"/stock/products/{apple}")).text, shop.warehouse_id) == "15"
    shown = await web.get(where)
    assert shown.status_code == 200 and 'id="transfer-status">dispatched<' in shown.text
    assert "Cancel the transfer" in shown.text and f'name="qty-{apple}"' in shown.text
    listed = await web.get(f"/transfers?warehouse_id={shop.other_warehouse_id}")
    assert where.rsplit("/", 1)[1] in listed.text and "In" in listed.text
    await check_books(db, shop.company_id)

    # the apples arrived in part, the water not at all: written off with the reason
    receive = {
        "csrf": csrf_of(shown.text),
        "form_token": form_token_of(shown.text),
        f"qty-{apple}": "4",
        f"qty-{water}": "",
        "reason": "a box fell off the van",
    }
    over = await web.post(f"{where}/receive", data={**receive, f"qty-{apple}": "9"})
    assert over.status_code == 422 and f'id="e-qty-{apple}"' in over.text
    got = await web.post(f"{where}/receive", data=receive)
    assert got.status_code == 303, got.text
    done = await web.get(where)
    assert 'id="transfer-status">received<' in done.text
    assert f'id="received-{apple}">4<' in done.text and f'id="received-{water}">0<' in done.text
    assert "Cancel the transfer" not in done.text
    product = await web.get(f"/stock/products/{apple}")
    assert _stock_cell(product.text, shop.other_warehouse_id) == "4"
    twice = await web.post(f"{where}/receive", data={**receive, "form_token": "form-another"})
    assert twice.status_code == 409  # the service's refusal: received once
    await check_books(db, shop.company_id)


async def test_a_transfer_cancelled_and_who_may_move_stock(
    web: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    from tests.invariants import check_books

    apple = shop.products["apple"]
    await sign_in(web, await add_staff(db, shop, "manager", shop.warehouse_id), STAFF_PASSWORD)
    page = await web.get("/transfers/new")
    assert page.status_code == 200
    sent = await web.post(
        "/transfers/new",
        data={
            "csrf": csrf_of(page.text),
            "form_token": form_token_of(page.text),
            "warehouse_id": str(shop.warehouse_id),
            "to_warehouse_id": str(shop.other_warehouse_id),
            f"qty-{apple}": "3",
        },
    )
    assert sent.status_code == 303, sent.text
    where = sent.headers["location"]
    shown = await web.get(where)
    # the manager of the sending branch may call it back, not receive it
    assert "Cancel the transfer" in shown.text and f'name="qty-{apple}"' not in shown.text
    refused = await web.post(f"{where}/receive", data={"csrf": csrf_of(shown.text)})
    assert refused.status_code == 403
    from_other = await web.post(
        "/transfers/new",
        data={
            "csrf": csrf_of(shown.text),
            "warehouse_id": str(shop.other_warehouse_id),
            "to_warehouse_id": str(shop.warehouse_id),
            f"qty-{apple}": "1",
        },
    )
    assert from_other.status_code == 403
    no_csrf = await web.post(f"{where}/cancel", data={"reason": "wrong branch"})
    assert no_csrf.status_code == 403
    back = await web.post(
        f"{where}/cancel",
        data={
            "csrf": csrf_of(shown.text),
            "form_token": form_token_of(shown.text),
            "reason": "wrong branch",
        },
    )
    assert back.status_code == 303, back.text
    assert 'id="transfer-status">cancelled<' in (await web.get(where)).text
    assert _stock_cell((await web.get(f"/stock/products/{apple}")).text, shop.warehouse_id) == "20"
    await check_books(db, shop.company_id)
    for role in ("cashier", "accountant"):
        other = httpx.AsyncClient(transport=web._transport, base_url="http://testserver")
        async with other:
            await sign_in(other, await add_staff(db, shop, role), STAFF_PASSWORD)
            landing = await other.get("/", follow_redirects=True)
            assert (await other.get("/transfers/new")).status_code == 403, role
            r = await other.post(f"{where}/cancel", data={"csrf": csrf_of(landing.text)})
            assert r.status_code == 403, role
            seen = await other.get(where)
            if role == "cashier":
                assert (
                    seen.status_code == 403 and (await other.get("/transfers")).status_code == 403
                )
            else:
                assert seen.status_code == 200 and "Cancel the transfer" not in seen.text


async def test_a_sale_voided_from_its_page_once(
    web: httpx.AsyncClient, client: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    from tests.invariants import check_books

    sale = await client.post(
        "/sales",
        json={
            "user_id": shop.customer_id,
            "order_date": "2026-11-20",
            "product_items": [{"xid": shop.xid("apple"), "quantity": 2, "unit_price": 3.5}],
            "payments": [{"amount": "7.70", "payment_mode_id": "cash"}],
        },
        headers=shop.headers,
    )
    assert sale.status_code == 200, sale.text
    oid = sale.json()["order_id"]
    apple = shop.products["apple"]
    accountant = httpx.AsyncClient(transport=web._transport, base_url="http://testserver")
    async with accountant:
        await sign_in(accountant, await add_staff(db, shop, "accountant"), STAFF_PASSWORD)
        seen = await accountant.get(f"/sales/{oid}")
        assert seen.status_code == 200 and f"/sales/{oid}/void" not in seen.text
        assert (await accountant.get(f"/sales/{oid}/void")).status_code == 403
        r = await accountant.post(
            f"/sales/{oid}/void", data={"csrf": csrf_of(seen.text), "reason": "x"}
        )
        assert r.status_code == 403
    await sign_in(web, await owner_email(db, shop), OWNER_PASSWORD)
    detail = await web.get(f"/sales/{oid}")
    assert f'href="/sales/{oid}/void"' in detail.text
    confirm = await web.get(f"/sales/{oid}/void")
    assert confirm.status_code == 200 and "Void sale" in confirm.text
    form = {"csrf": csrf_of(confirm.text), "form_token": form_token_of(confirm.text)}
    forged = await web.post(f"/sales/{oid}/void", data={**form, "csrf": "", "reason": "x"})
    assert forged.status_code == 403
    blank = await web.post(f"/sales/{oid}/void", data={**form, "reason": "  "})
    assert blank.status_code == 422 and 'id="e-reason"' in blank.text
    voided = await web.post(f"/sales/{oid}/void", data={**form, "reason": "rang up twice"})
    assert voided.status_code == 303, voided.text
    after = await web.get(f"/sales/{oid}")
    assert "cancelled" in after.text and f'href="/sales/{oid}/void"' not in after.text
    assert _stock_cell((await web.get(f"/stock/products/{apple}")).text, shop.warehouse_id) == "20"
    second = await web.get(f"/sales/{oid}/void")
    again = await web.post(
        f"/sales/{oid}/void",
        data={
            "csrf": csrf_of(second.text),
            "form_token": form_token_of(second.text),
            "reason": "again",
        },
    )
    assert again.status_code == 409 and "already voided" in again.text
    await check_books(db, shop.company_id)


async def test_shifts_and_their_reports_for_who_reads_the_books(
    web: httpx.AsyncClient, client: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    opened = await client.post(
        "/shifts", json={"register": "till-1", "opening_float": "100.00"}, headers=shop.headers
    )
    assert opened.status_code == 200, opened.text
    sid = opened.json()["data"]["id"]
    await sign_in(web, await owner_email(db, shop), OWNER_PASSWORD)
    listing = await web.get(f"/shifts?warehouse_id={shop.warehouse_id}")
    assert listing.status_code == 200 and "till-1" in listing.text and "X report" in listing.text
    x = await web.get(f"/shifts/{sid}")
    assert x.status_code == 200 and "X report" in x.text and "100.00" in x.text
    closed = await client.post(
        f"/shifts/{sid}/close",
        json={"counted": [{"payment_mode_id": "cash", "amount": "99.00"}]},
        headers=shop.headers,
    )
    assert closed.status_code == 200, closed.text
    z = await web.get(f"/shifts/{sid}")
    assert "Z report" in z.text and 'id="over-short">-1.00<' in z.text
    assert (await web.get("/shifts/999999999")).status_code == 404
    other = httpx.AsyncClient(transport=web._transport, base_url="http://testserver")
    async with other:
        await sign_in(other, await add_staff(db, shop, "cashier"), STAFF_PASSWORD)
        # A cashier lists the shifts they opened (none here) and not this one.
        assert "till-1" not in (await other.get("/shifts")).text
        assert (await other.get(f"/shifts/{sid}")).status_code == 404
    scoped = httpx.AsyncClient(transport=web._transport, base_url="http://testserver")
    async with scoped:
        email = await add_staff(db, shop, "accountant", shop.other_warehouse_id)
        await sign_in(scoped, email, STAFF_PASSWORD)
        assert (await scoped.get(f"/shifts/{sid}")).status_code == 403
        mine = await scoped.get("/shifts")
        assert mine.status_code == 200 and "till-1" not in mine.text
