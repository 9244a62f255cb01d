"""Buying in the back office: a supplier's delivery received from the browser, on
credit or paid now, through the API's own purchase; the books checked after."""

from __future__ import annotations

from decimal import Decimal

import httpx
from sqlalchemy import func, select

from tests.factories import Shop
from tests.invariants import check_books
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
from tillbook.models import AuditEvent, Listing, Order


async def _purchases(db: Database, company_id: int) -> list[tuple[Decimal, Decimal, str]]:
    rows = await db.read(
        lambda s: s.execute(
            select(Order.total, Order.due_amount, Order.payment_status).where(
                Order.company_id == company_id, Order.order_type == "purchases"
            )
        )
    )
    return [tuple(r) for r in rows.all()]


async def _stock(db: Database, warehouse_id: int, product_id: int) -> Decimal:
    return Decimal(
        await db.read(
            lambda s: s.scalar(
                select(Listing.current_stock).where(
                    Listing.warehouse_id == warehouse_id, Listing.product_id == product_id
                )
            )
        )
    )


async def test_a_delivery_on_credit_then_one_paid_now(
    web: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    await sign_in(web, await owner_email(db, shop), OWNER_PASSWORD)
    assert "/purchases/new" in (await web.get("/purchases")).text
    page = await web.get("/purchases/new")
    assert page.status_code == 200 and "Receive a delivery" in page.text
    apple, tea = shop.products["apple"], shop.products["tea"]
    base = {
        "csrf": csrf_of(page.text),
        "warehouse_id": str(shop.warehouse_id),
        "user_id": str(shop.supplier_id),
    }
    bad = await web.post(
        "/purchases/new",
        data={**base, "form_token": form_token_of(page.text), f"qty-{apple}": "5"},
    )
    assert bad.status_code == 422 and f'id="e-qty-{apple}"' in bad.text  # no unit cost
    junk = await web.post(
        "/purchases/new",
        data={
            **base,
            "form_token": form_token_of(page.text),
            f"qty-{apple}": "5",
            f"cost-{apple}": "x",
        },
    )
    assert junk.status_code == 422 and f'id="e-cost-{apple}"' in junk.text
    no_mode = await web.post(
        "/purchases/new",
        data={
            **base,
            "form_token": form_token_of(page.text),
            f"qty-{apple}": "5",
            f"cost-{apple}": "2",
            "paid_amount": "3",
        },
    )
    assert no_mode.status_code == 422 and 'id="e-payment_mode_id"' in no_mode.text
    assert await _purchases(db, shop.company_id) == []

    form = {
        **base,
        "form_token": form_token_of(page.text),
        f"qty-{apple}": "5",
        f"cost-{apple}": "2.20",
        f"qty-{tea}": "2",
        f"cost-{tea}": "5",
        "invoice_number": "SUP-1",
    }
    first = await web.post("/purchases/new", data=form)
    assert first.status_code == 303, first.text
    again = await web.post("/purchases/new", data=form)
    assert again.headers["location"] == first.headers["location"]
    assert await _purchases(db, shop.company_id) == [(Decimal("21.00"), Decimal("21.00"), "unpaid")]
    assert await _stock(db, shop.warehouse_id, apple) == 25
    assert await _stock(db, shop.warehouse_id, tea) == 2
    shown = await web.get(first.headers["location"])
    assert shown.status_code == 200 and "SUP-1" in shown.text

    page = await web.get("/purchases/new")
    paid = await web.post(
        "/purchases/new",
        data={
            **base,
            "csrf": csrf_of(page.text),
            "form_token": form_token_of(page.text),
            f"qty-{apple}": "1",
            f"cost-{apple}": "2",
            "paid_amount": "2",
            "payment_mode_id": str(shop.cash_mode_id),
        },
    )
    assert paid.status_code == 303, paid.text
    assert (Decimal("2.00"), Decimal("0.00"), "paid") in await _purchases(db, shop.company_id)
    audited = await db.read(
        lambda s: s.scalar(
            select(func.count())
            .select_from(AuditEvent)
            .where(
                AuditEvent.company_id == shop.company_id,
                AuditEvent.action == "purchase.received",
            )
        )
    )
    assert audited == 2
    await check_books(db, shop.company_id)


async def test_who_may_receive(web: httpx.AsyncClient, db: Database, shop: Shop) -> None:
    await sign_in(web, await add_staff(db, shop, "cashier"), STAFF_PASSWORD)
    assert (await web.get("/purchases/new")).status_code == 403
    async with httpx.AsyncClient(transport=web._transport, base_url="http://testserver") as m:
        await sign_in(
            m, await add_staff(db, shop, "manager", shop.other_warehouse_id), STAFF_PASSWORD
        )
        page = await m.get("/purchases/new")
        assert page.status_code == 200
        r = await m.post(
            "/purchases/new",
            data={
                "csrf": csrf_of(page.text),
                "warehouse_id": str(shop.warehouse_id),
                "user_id": str(shop.supplier_id),
                f"qty-{shop.products['apple']}": "1",
                f"cost-{shop.products['apple']}": "1",
            },
        )
        assert r.status_code == 403
    assert await _purchases(db, shop.company_id) == []
