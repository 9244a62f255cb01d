"""Purchase orders: draft -> ordered -> received in parts -> received, or closed; each
receipt a purchase through the same service as POST /purchases (batches with their
number and expiry, Dr 11700 / Cr 21100, tenders), nothing posted before; more than
ordered refused, also when two receipts race; the roles that may; the pages; and
the books after each scenario."""

from __future__ import annotations

import asyncio
import datetime as dt
from decimal import Decimal

import httpx
from sqlalchemy import func, select

from tests.admin_helpers import ADMIN, assert_error, login
from tests.factories import Shop
from tests.invariants import check_books, gl_balance
from tests.payments.test_admin_money import staff_login
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
from tillbook.models import AuditEvent, JournalEntry, Order, StockBatch

D = Decimal
PO = f"{ADMIN}/purchase-orders"
TODAY = dt.date.today().isoformat()


async def balance(db: Database, shop: Shop, code: str) -> Decimal:
    return await db.read(lambda s: gl_balance(s, shop.company_id, code))


async def entries(db: Database, shop: Shop) -> int:
    return int(
        await db.read(
            lambda s: s.scalar(
                select(func.count())
                .select_from(JournalEntry)
                .where(JournalEntry.company_id == shop.company_id)
            )
        )
    )


async def new_order(client, headers, shop: Shop, **extra) -> dict:
    body = {
        "warehouse_id": shop.warehouse_id,
        "supplier_id": shop.supplier_id,
        "expected_date": TODAY,
        "lines": [
            {"product_id": shop.products["apple"], "quantity": "10", "unit_cost": "2.00"},
            {"product_id": shop.products["tea"], "quantity": "4", "unit_cost": "5.50"},
        ],
        **extra,
    }
    r = await client.post(PO, json=body, headers=headers)
    assert r.status_code == 201, r.text
    return r.json()["data"]


async def test_order_receive_in_two_parts_then_received(client, db, shop) -> None:
    headers = await login(client, db, shop)
    before_entries = await entries(db, shop)
    po = await new_order(client, headers, shop)
    assert po["status"] == "draft" and po["number"] == "PO-00001" and po["total"] == "42.00"
    apple, tea = shop.products["apple"], shop.products["tea"]
    # a draft is edited whole; then ordered; neither posts anything
    edited = await client.put(
        f"{PO}/{po['id']}",
        json={
            "supplier_id": shop.supplier_id,
            "lines": [
                {"product_id": apple, "quantity": "10", "unit_cost": "2.00"},
                {"product_id": tea, "quantity": "6", "unit_cost": "5.00"},
            ],
        },
        headers=headers,
    )
    assert edited.status_code == 200 and edited.json()["data"]["total"] == "50.00", edited.text
    early = await client.post(
        f"{PO}/{po['id']}/receipts",
        json={"order_date": TODAY, "lines": [{"product_id": apple, "quantity": "1"}]},
        headers=headers,
    )
    assert_error(early, 409)  # a draft is not received
    ordered = await client.post(f"{PO}/{po['id']}/order", headers=headers)
    assert ordered.status_code == 200 and ordered.json()["data"]["status"] == "ordered"
    assert_error(
        await client.put(
            f"{PO}/{po['id']}",
            json={
                "supplier_id": shop.supplier_id,
                "lines": [{"product_id": apple, "quantity": "1", "unit_cost": "1"}],
            },
            headers=headers,
        ),
        409,
    )
    assert await entries(db, shop) == before_entries  # nothing posted before a receipt

    # first part: 6 apples with a batch and an expiry, at the order's cost, on credit
    first = await client.post(
        f"{PO}/{po['id']}/receipts",
        json={
            "order_date": TODAY,
            "invoice_number": "SUP-77",
            "lines": [
                {
                    "product_id": apple,
                    "quantity": "6",
                    "batch_number": "L-2026-11",
                    "expiry_date": "2027-03-31",
                }
            ],
        },
        headers={**headers, "Idempotency-Key": "rcv-1"},
    )
    assert first.status_code == 201, first.text
    out = first.json()
    assert out["data"]["status"] == "partially_received"
    assert out["purchase"]["total"] == "12.00" and out["purchase"]["payment_status"] == "unpaid"
    again = await client.post(
        f"{PO}/{po['id']}/receipts",
        json={
            "order_date": TODAY,
            "invoice_number": "SUP-77",
            "lines": [
                {
                    "product_id": apple,
                    "quantity": "6",
                    "batch_number": "L-2026-11",
                    "expiry_date": "2027-03-31",
                }
            ],
        },
        headers={**headers, "Idempotency-Key": "rcv-1"},
    )
    assert again.status_code == 201 and again.headers["Idempotent-Replayed"] == "true"
    batch = await db.read(
        lambda s: s.scalar(
            select(StockBatch).where(
                StockBatch.source_type == "purchase",
                StockBatch.source_id == out["purchase"]["purchase_id"],
            )
        )
    )
    assert batch.batch_number == "L-2026-11" and batch.expiry_date == dt.date(2027, 3, 31)
    assert batch.unit_cost == D("2.0000") and batch.quantity_received == 6
    assert await balance(db, shop, "21100") == D("-12.00")

    # more than is still to come: refused, naming the line; the same invoice number too
    over = await client.post(
        f"{PO}/{po['id']}/receipts",
        json={"order_date": TODAY, "lines": [{"product_id": apple, "quantity": "5"}]},
        headers=headers,
    )
    assert (
        "still to come (4.0000"
        in assert_error(over, 422, "lines.0.quantity")["errors"]["lines.0.quantity"][0]
    )
    dup = await client.post(
        f"{PO}/{po['id']}/receipts",
        json={
            "order_date": TODAY,
            "invoice_number": "SUP-77",
            "lines": [{"product_id": apple, "quantity": "1"}],
        },
        headers=headers,
    )
    assert_error(dup, 422, "invoice_number")
    off = await client.post(
        f"{PO}/{po['id']}/receipts",
        json={
            "order_date": TODAY,
            "lines": [{"product_id": shop.products["water"], "quantity": "1"}],
        },
        headers=headers,
    )
    assert_error(off, 422, "lines.0.product_id")

    # the rest, at a different cost, paid now in cash
    rest = await client.post(
        f"{PO}/{po['id']}/receipts",
        json={
            "order_date": TODAY,
            "lines": [
                {"product_id": apple, "quantity": "4", "unit_cost": "2.10"},
                {"product_id": tea, "quantity": "6"},
            ],
            "all_payments": [{"amount": "38.40", "payment_mode_id": "cash"}],
        },
        headers=headers,
    )
    assert rest.status_code == 201, rest.text
    done = rest.json()
    assert done["data"]["status"] == "received"
    assert done["purchase"]["total"] == "38.40" and done["purchase"]["payment_status"] == "paid"
    assert [r["total"] for r in done["data"]["receipts"]] == ["12.00", "38.40"]
    assert await balance(db, shop, "21100") == D("-12.00")
    assert await balance(db, shop, "11101") == D("-38.40")
    assert_error(await client.post(f"{PO}/{po['id']}/close", headers=headers), 409)
    detail = (await client.get(f"{PO}/{po['id']}", headers=headers)).json()["data"]
    assert [(li["received"], li["remaining"]) for li in detail["lines"]] == [
        ("10.0000", "0.0000"),
        ("6.0000", "0.0000"),
    ]
    listed = (await client.get(f"{PO}?status=received", headers=headers)).json()["data"]
    assert [o["number"] for o in listed["data"]] == ["PO-00001"]
    assert (await client.get(f"{PO}?status=draft", headers=headers)).json()["data"]["total"] == 0
    audited = await db.read(
        lambda s: s.scalars(
            select(AuditEvent.action)
            .where(
                AuditEvent.company_id == shop.company_id,
                AuditEvent.action.like("purchase_order.%"),
            )
            .order_by(AuditEvent.id)
        )
    )
    assert list(audited) == [
        "purchase_order.created",
        "purchase_order.edited",
        "purchase_order.ordered",
        "purchase_order.received",
        "purchase_order.received",
    ]
    await check_books(db, shop.company_id)


async def test_close_with_the_rest_not_coming_and_cancel_a_draft(client, db, shop) -> None:
    headers = await login(client, db, shop)
    po = await new_order(client, headers, shop)
    await client.post(f"{PO}/{po['id']}/order", headers=headers)
    r = await client.post(
        f"{PO}/{po['id']}/receipts",
        json={
            "order_date": TODAY,
            "lines": [{"product_id": shop.products["tea"], "quantity": "1"}],
        },
        headers=headers,
    )
    assert r.status_code == 201, r.text
    closed = await client.post(
        f"{PO}/{po['id']}/close", json={"reason": "supplier out of apples"}, headers=headers
    )
    assert closed.status_code == 200, closed.text
    assert closed.json()["data"]["status"] == "closed"
    assert closed.json()["data"]["close_reason"] == "supplier out of apples"
    late = await client.post(
        f"{PO}/{po['id']}/receipts",
        json={
            "order_date": TODAY,
            "lines": [{"product_id": shop.products["tea"], "quantity": "1"}],
        },
        headers=headers,
    )
    assert_error(late, 409)
    draft = await new_order(client, headers, shop)
    cancelled = await client.post(f"{PO}/{draft['id']}/close", headers=headers)
    assert cancelled.json()["data"]["status"] == "cancelled"
    await check_books(db, shop.company_id)


async def test_bad_input_names_the_field_and_writes_nothing(client, db, shop) -> None:
    headers = await login(client, db, shop)
    apple = shop.products["apple"]
    cases = [
        ({"supplier_id": shop.customer_id}, "supplier_id"),
        ({"supplier_id": 999999}, "supplier_id"),
        (
            {"lines": [{"product_id": 999999, "quantity": "1", "unit_cost": "1"}]},
            "lines.0.product_id",
        ),
        (
            {"lines": [{"product_id": apple, "quantity": "-1", "unit_cost": "1"}]},
            "lines.0.quantity",
        ),
        (
            {"lines": [{"product_id": apple, "quantity": "1", "unit_cost": "1.00001"}]},
            "lines.0.unit_cost",
        ),
        ({"lines": []}, "lines"),
        ({"expected_date": "3026-01-01"}, "expected_date"),
        ({"warehouse_id": 999999}, "warehouse_id"),
        (
            {
                "lines": [
                    {"product_id": apple, "quantity": "1", "unit_cost": "1"},
                    {"product_id": apple, "quantity": "2", "unit_cost": "1"},
                ]
            },
            "lines.1.product_id",
        ),
    ]
    for change, field in cases:
        body = {
            "warehouse_id": shop.warehouse_id,
            "supplier_id": shop.supplier_id,
            "lines": [{"product_id": apple, "quantity": "1", "unit_cost": "1"}],
            **change,
        }
        r = await client.post(PO, json=body, headers=headers)
        if field == "warehouse_id":
            assert r.status_code in (403, 422), r.text
        else:
            assert_error(r, 422, field)
    po = await new_order(client, headers, shop)
    await client.post(f"{PO}/{po['id']}/order", headers=headers)
    for body, field in [
        (
            {
                "order_date": TODAY,
                "lines": [{"product_id": apple, "quantity": "1", "expiry_date": "x"}],
            },
            "lines.0.expiry_date",
        ),
        (
            {
                "order_date": TODAY,
                "lines": [{"product_id": apple, "quantity": "1", "batch_number": "a\x00"}],
            },
            "lines.0.batch_number",
        ),
        (
            {
                "order_date": TODAY,
                "lines": [{"product_id": apple, "quantity": "1"}],
                "all_payments": [{"amount": "99", "payment_mode_id": "cash"}],
            },
            "all_payments",
        ),
        (
            {
                "order_date": TODAY,
                "lines": [{"product_id": apple, "quantity": "1"}],
                "all_payments": [{"amount": "1", "payment_mode_id": "nope"}],
            },
            "all_payments.0.payment_mode_id",
        ),
    ]:
        assert_error(
            await client.post(f"{PO}/{po['id']}/receipts", json=body, headers=headers), 422, field
        )
    assert_error(await client.get(f"{PO}/999999", headers=headers), 404)
    assert_error(await client.get(f"{PO}/abc", headers=headers), 404)
    assert (await client.get(f"{PO}/{po['id']}", headers=headers)).json()["data"]["receipts"] == []
    assert (
        await db.read(
            lambda s: s.scalar(
                select(func.count())
                .select_from(Order)
                .where(Order.company_id == shop.company_id, Order.order_type == "purchases")
            )
        )
        == 0
    )
    await check_books(db, shop.company_id)


async def test_roles_and_branch_scope(client, db, shop) -> None:
    owner = await login(client, db, shop)
    po = await new_order(client, owner, shop)
    cashier = await staff_login(client, db, shop, "cashier")
    assert_error(await client.post(f"{PO}/{po['id']}/order", headers=cashier), 403)
    accountant = await staff_login(client, db, shop, "accountant")
    assert (await client.get(f"{PO}/{po['id']}", headers=accountant)).status_code == 200
    assert_error(await client.post(f"{PO}/{po['id']}/order", headers=accountant), 403)
    other = await staff_login(client, db, shop, "manager", shop.other_warehouse_id)
    assert_error(await client.get(f"{PO}/{po['id']}", headers=other), 404)
    assert_error(await client.post(f"{PO}/{po['id']}/order", headers=other), 404)
    body = {
        "warehouse_id": shop.warehouse_id,
        "supplier_id": shop.supplier_id,
        "lines": [{"product_id": shop.products["apple"], "quantity": "1", "unit_cost": "1"}],
    }
    assert_error(await client.post(PO, json=body, headers=other), 403)
    assert (await client.get(PO, headers=other)).json()["data"]["total"] == 0
    mine = await staff_login(client, db, shop, "manager", shop.warehouse_id)
    assert (await client.post(f"{PO}/{po['id']}/order", headers=mine)).status_code == 200
    r = await client.post(
        f"{PO}/{po['id']}/receipts",
        json={
            "order_date": TODAY,
            "lines": [{"product_id": shop.products["apple"], "quantity": "2"}],
        },
        headers=mine,
    )
    assert r.status_code == 201, r.text
    await check_books(db, shop.company_id)


async def test_racing_receipts_never_take_the_same_units_twice(client, db, shop) -> None:
    headers = await login(client, db, shop)
    po = await new_order(client, headers, shop)
    await client.post(f"{PO}/{po['id']}/order", headers=headers)
    apple = shop.products["apple"]
    answers = await asyncio.gather(
        *(
            client.post(
                f"{PO}/{po['id']}/receipts",
                json={"order_date": TODAY, "lines": [{"product_id": apple, "quantity": "4"}]},
                headers=headers,
            )
            for _ in range(4)
        )
    )
    codes = sorted(a.status_code for a in answers)
    assert codes == [201, 201, 422, 422], [a.text for a in answers]
    detail = (await client.get(f"{PO}/{po['id']}", headers=headers)).json()["data"]
    assert detail["lines"][0]["received"] == "8.0000"
    assert len(detail["receipts"]) == 2
    await check_books(db, shop.company_id)


# --- the pages -------------------------------------------------------------------------


async def _post(web: httpx.AsyncClient, page_url: str, url: str, data: dict) -> httpx.Response:
    page = await web.get(page_url)
    assert page.status_code == 200, page.text
    form = {"csrf": csrf_of(page.text), "form_token": form_token_of(page.text), **data}
    return await web.post(url, data=form)


async def test_a_week_of_buying_in_the_browser(web, db, shop) -> None:
    await sign_in(web, await owner_email(db, shop), OWNER_PASSWORD)
    apple, tea = shop.products["apple"], shop.products["tea"]
    posted = await entries(db, shop)
    assert "/purchase-orders/new" in (await web.get("/purchase-orders")).text
    new = "/purchase-orders/new"
    base = {"warehouse_id": str(shop.warehouse_id), "user_id": str(shop.supplier_id)}
    bad = await _post(web, new, new, {**base, f"qty-{apple}": "5"})
    assert bad.status_code == 422 and f'id="e-cost-{apple}"' in bad.text
    junk = await _post(web, new, new, {**base, f"qty-{apple}": "x", f"cost-{apple}": "1"})
    assert junk.status_code == 422 and f'id="e-qty-{apple}"' in junk.text
    nobody = await _post(
        web,
        new,
        new,
        {"warehouse_id": str(shop.warehouse_id), f"qty-{apple}": "1", f"cost-{apple}": "1"},
    )
    assert nobody.status_code == 422 and 'id="e-user_id"' in nobody.text
    late = await _post(
        web,
        new,
        new,
        {**base, "expected_date": "1900-01-01", f"qty-{apple}": "1", f"cost-{apple}": "1"},
    )
    assert late.status_code == 422 and 'id="e-expected_date"' in late.text
    empty = await _post(web, new, new, base)
    assert empty.status_code == 422 and 'id="e-items"' in empty.text

    made = await _post(
        web,
        new,
        new,
        {**base, f"qty-{apple}": "10", f"cost-{apple}": "2", f"qty-{tea}": "3", f"cost-{tea}": "4"},
    )
    assert made.status_code == 303, made.text
    url = made.headers["location"]
    page = await web.get(url)
    assert "PO-00001" in page.text and "draft" in page.text
    edit = await _post(
        web,
        f"{url}/edit",
        f"{url}/edit",
        {
            "user_id": str(shop.supplier_id),
            f"qty-{apple}": "12",
            f"cost-{apple}": "2",
            f"qty-{tea}": "3",
            f"cost-{tea}": "4",
        },
    )
    assert edit.status_code == 303, edit.text
    printed = await web.get(f"{url}?print=1")
    assert printed.status_code == 200 and "print.css" in printed.text and "36.00" in printed.text
    ordered = await _post(web, url, f"{url}/order", {})
    assert ordered.status_code == 303
    assert "ordered" in (await web.get(url)).text
    supplier = await web.get(f"/suppliers/{shop.supplier_id}")
    assert 'id="on-order"' in supplier.text and "PO-00001" in supplier.text

    receive = f"{url}/receive"
    form = await web.get(receive)
    assert f'name="qty-{apple}"' in form.text and 'value="12.0000"' in form.text
    too_many = await _post(web, receive, receive, {f"qty-{apple}": "13", f"cost-{apple}": "2"})
    assert too_many.status_code == 422 and f'id="e-qty-{apple}"' in too_many.text
    bad_expiry = await _post(
        web, receive, receive, {f"qty-{apple}": "1", f"expiry-{apple}": "31/12/2027"}
    )
    assert bad_expiry.status_code == 422 and f'id="e-expiry-{apple}"' in bad_expiry.text
    no_mode = await _post(web, receive, receive, {f"qty-{apple}": "1", "paid_amount": "2"})
    assert no_mode.status_code == 422 and 'id="e-payment_mode_id"' in no_mode.text
    assert await entries(db, shop) == posted  # nothing posted before the first receipt

    part = {
        f"qty-{apple}": "7",
        f"cost-{apple}": "2",
        f"batch-{apple}": "B1",
        f"expiry-{apple}": "2027-06-30",
        f"qty-{tea}": "",
        "invoice_number": "INV-9",
    }
    page = await web.get(receive)
    first = await web.post(
        receive, data={"csrf": csrf_of(page.text), "form_token": form_token_of(page.text), **part}
    )
    assert first.status_code == 303, first.text
    again = await web.post(
        receive, data={"csrf": csrf_of(page.text), "form_token": form_token_of(page.text), **part}
    )
    assert again.headers["location"] == first.headers["location"]  # single-use: once only
    assert "partially received" in (await web.get(url)).text
    rest = await _post(
        web,
        receive,
        receive,
        {
            f"qty-{apple}": "5",
            f"cost-{apple}": "2",
            f"qty-{tea}": "3",
            f"cost-{tea}": "4",
            "paid_amount": "22",
            "payment_mode_id": str(shop.cash_mode_id),
        },
    )
    assert rest.status_code == 303, rest.text
    shown = await web.get(url)
    assert "INV-9" in shown.text and '<dd id="po-status">received</dd>' in shown.text
    assert await balance(db, shop, "21100") == D("-14.00")

    # a return to the supplier from the first purchase's page
    purchase = first.headers["location"]
    assert "/return" in (await web.get(purchase)).text
    back = f"{purchase}/return"
    over = await _post(web, back, back, {f"qty-{apple}": "8"})
    assert over.status_code == 422 and f'id="e-qty-{apple}"' in over.text
    returned = await _post(web, back, back, {f"qty-{apple}": "2"})
    assert returned.status_code == 303, returned.text
    assert "/purchase-returns/" in returned.headers["location"]
    assert await balance(db, shop, "21100") == D("-10.00")
    actions = set(
        await db.read(
            lambda s: s.scalars(
                select(AuditEvent.action).where(AuditEvent.company_id == shop.company_id)
            )
        )
    )
    assert {"purchase_order.created", "purchase_order.ordered", "purchase.returned"} <= actions
    await check_books(db, shop.company_id)


async def test_pages_refuse_who_may_not_buy(web, db, shop) -> None:
    await sign_in(web, await owner_email(db, shop), OWNER_PASSWORD)
    made = await _post(
        web,
        "/purchase-orders/new",
        "/purchase-orders/new",
        {
            "warehouse_id": str(shop.warehouse_id),
            "user_id": str(shop.supplier_id),
            f"qty-{shop.products['apple']}": "1",
            f"cost-{shop.products['apple']}": "1",
        },
    )
    url = made.headers["location"]
    await web.post("/logout")
    web.cookies.clear()
    email = await add_staff(db, shop, "cashier")
    await sign_in(web, email, STAFF_PASSWORD)
    assert (await web.get("/purchase-orders/new")).status_code == 403
    assert (await web.get(f"{url}/receive")).status_code == 403
    web.cookies.clear()
    email = await add_staff(db, shop, "manager", shop.other_warehouse_id)
    await sign_in(web, email, STAFF_PASSWORD)
    assert (await web.get(url)).status_code == 404
    page = await web.get("/purchase-orders/new")
    assert page.status_code == 200
    refused = await web.post(
        f"{url}/order",
        data={"csrf": csrf_of(page.text), "form_token": form_token_of(page.text)},
    )
    assert refused.status_code == 404
    no_csrf = await web.post(
        "/purchase-orders/new", data={"warehouse_id": str(shop.other_warehouse_id)}
    )
    assert no_csrf.status_code == 403
    await check_books(db, shop.company_id)
