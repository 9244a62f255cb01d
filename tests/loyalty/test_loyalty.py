"""Loyalty points (issue 29 items 3 and 4, DESIGN §18): the programme set and
audited, points earned in the sale's own entry, redeemed as a tender (whole points,
never more than held, never by the walk-in customer), taken back by returns pro
rata, given back by a refund in the loyalty mode, undone exactly by a void, and
revalued when the point value changes; every step keeps GL 21400 = Σ points ×
value and each balance = Σ its movements (``check_books``)."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
from decimal import Decimal
from typing import Any

import httpx
import pytest
from sqlalchemy import func, select

from tests.admin_helpers import ADMIN, login
from tests.factories import Shop, by_id, make_shop
from tests.invariants import check_books, gl_balance
from tests.live_server import CHROMIUM
from tests.web_helpers import (
    OWNER_PASSWORD,
    STAFF_PASSWORD,
    add_staff,
    csrf_of,
    form_token_of,
    owner_email,
    sign_in,
)
from tillbook.auth.actor import Actor
from tillbook.currency import rates
from tillbook.db import Database
from tillbook.loyalty import points as loyalty
from tillbook.models import (
    Account,
    AuditEvent,
    JournalLine,
    LoyaltyMovement,
    LoyaltyProgramme,
    Order,
)

D = Decimal
TODAY = dt.date.today().isoformat()


async def set_programme(
    client: httpx.AsyncClient, headers: dict[str, str], **body: Any
) -> httpx.Response:
    return await client.put(f"{ADMIN}/loyalty", json=body, headers=headers)


async def enrol(client, db, shop: Shop, earn_unit: str = "1.00", point_value: str = "0.05"):
    owner = await login(client, db, shop)
    r = await set_programme(client, owner, earn_unit=earn_unit, point_value=point_value)
    assert r.status_code == 200, r.text
    return owner


def sale(
    shop: Shop,
    price: str,
    tenders: list[dict[str, Any]],
    quantity: int = 1,
    customer: int | None = None,
) -> dict[str, Any]:
    return {
        "user_id": customer or shop.customer_id,
        "order_date": TODAY,
        "product_items": [{"xid": shop.xid("water"), "quantity": quantity, "unit_price": price}],
        "all_payments": tenders,
    }


def cash(amount: str) -> dict[str, str]:
    return {"amount": amount, "payment_mode_id": "cash"}


def points_tender(amount: str) -> dict[str, str]:
    return {"amount": amount, "payment_mode_id": "loyalty"}


async def held(db: Database, shop: Shop, customer: int | None = None) -> int:
    return await db.read(
        lambda s: loyalty.balance(s, shop.company_id, customer or shop.customer_id)
    )


async def entry_lines(db: Database, entry_id: int) -> dict[str, tuple[Decimal, Decimal]]:
    """account code -> (Σ debit, Σ credit) of one entry."""

    async def read(s: Any) -> dict[str, tuple[Decimal, Decimal]]:
        rows = (
            await s.execute(
                select(Account.code, func.sum(JournalLine.debit), func.sum(JournalLine.credit))
                .join(Account, Account.id == JournalLine.account_id)
                .where(JournalLine.entry_id == entry_id)
                .group_by(Account.code)
            )
        ).all()
        return {code: (D(debit), D(credit)) for code, debit, credit in rows}

    return await db.read(read)


async def order_count(db: Database, shop: Shop) -> int:
    return await db.read(
        lambda s: s.scalar(
            select(func.count()).select_from(Order).where(Order.company_id == shop.company_id)
        )
    )


async def test_programme_is_set_read_versioned_and_audited(client, shop, db):
    owner = await login(client, db, shop)
    first = await client.get(f"{ADMIN}/loyalty", headers=owner)
    assert first.status_code == 200, first.text
    assert first.json()["data"]["configured"] is False
    r = await set_programme(client, owner, earn_unit="2.00", point_value="0.10")
    assert r.status_code == 200, r.text
    data = r.json()["data"]
    assert (data["earn_unit"], data["point_value"], data["active"], data["version"]) == (
        "2.00",
        "0.10",
        True,
        1,
    )
    assert r.headers["ETag"] == '"1"'
    # A change names the version it is based on.
    missing = await set_programme(client, owner, earn_unit="1.00", point_value="0.10")
    assert missing.status_code == 428, missing.text
    stale = await set_programme(client, owner, earn_unit="1.00", point_value="0.10", version=7)
    assert stale.status_code == 412, stale.text
    done = await set_programme(
        client, owner, earn_unit="1.00", point_value="0.10", active=False, version=1
    )
    assert done.status_code == 200 and done.json()["data"]["version"] == 2, done.text
    # Bad input is a 422 naming the field, and writes nothing.
    for body, field in (
        ({"earn_unit": "0", "point_value": "0.10", "version": 2}, "earn_unit"),
        ({"earn_unit": "1.00", "point_value": "-1", "version": 2}, "point_value"),
        ({"earn_unit": "1.00", "point_value": "0.001", "version": 2}, "point_value"),
        ({"earn_unit": "1.00", "point_value": "0.10", "active": "yes", "version": 2}, "active"),
        ({"point_value": "0.10", "version": 2}, "earn_unit"),
    ):
        bad = await set_programme(client, owner, **body)
        assert bad.status_code == 422 and field in bad.json()["errors"], (body, bad.text)
    read = (await client.get(f"{ADMIN}/loyalty", headers=owner)).json()["data"]
    assert (read["earn_unit"], read["active"], read["version"]) == ("1.00", False, 2)
    audited = await db.read(
        lambda s: s.execute(
            select(AuditEvent.before, AuditEvent.after)
            .where(AuditEvent.company_id == shop.company_id, AuditEvent.action == "loyalty.updated")
            .order_by(AuditEvent.id)
        )
    )
    rows = [tuple(json.loads(v) if isinstance(v, str) else v for v in row) for row in audited.all()]
    assert len(rows) == 2
    assert rows[0][0] is None and rows[0][1]["earn_unit"] == "2.00"
    assert rows[1][0]["active"] is True and rows[1][1]["active"] is False
    # Another company has its own (none yet).
    other = await make_shop(db)
    theirs = await login(client, db, other)
    assert (await client.get(f"{ADMIN}/loyalty", headers=theirs)).json()["data"][
        "configured"
    ] is False


async def test_a_sale_earns_points_in_its_own_entry(client, shop, db):
    await enrol(client, db, shop)
    body = sale(shop, "4.00", [cash("10.00")], quantity=3)  # 12.00, 2.00 left due
    preview = await client.post("/sales/preview", json=body, headers=shop.headers)
    assert preview.status_code == 200, preview.text
    assert preview.json()["data"]["points_earned"] == 12
    r = await client.post("/sales", json=body, headers=shop.headers)
    assert r.status_code == 200, r.text
    assert (r.json()["points_earned"], r.json()["points_redeemed"]) == (12, 0)
    assert await held(db, shop) == 12
    order = await db.read(lambda s: by_id(s, Order, r.json()["order_id"]))
    lines = await entry_lines(db, order.journal_entry_id)
    # 12 points × 0.05: Dr 41300, Cr 21400, in the sale's one entry.
    assert lines["21400"] == (D("0"), D("0.60"))
    assert lines["41300"] == (D("0.60"), D("0"))
    detail = await client.get(f"/sales/{order.id}", headers=shop.headers)
    assert detail.json()["data"]["points_earned"] == 12, detail.text
    # The same sale sent again answers the same, earning nothing more.
    again = await client.post(
        "/sales", json={**body, "invoice_number": order.invoice_number}, headers=shop.headers
    )
    assert again.status_code == 200 and again.json()["points_earned"] == 12, again.text
    assert await held(db, shop) == 12
    # The walk-in customer earns nothing; a fraction of the unit earns nothing.
    walk_in = sale(shop, "9.99", [cash("9.99")], customer=shop.walk_in_id)
    r = await client.post("/sales", json=walk_in, headers=shop.headers)
    assert r.status_code == 200 and r.json()["points_earned"] == 0, r.text
    small = await client.post(
        "/sales", json=sale(shop, "0.99", [cash("0.99")]), headers=shop.headers
    )
    assert small.json()["points_earned"] == 0
    await check_books(db, shop.company_id)


async def test_an_inactive_programme_earns_nothing_but_points_still_pay(client, shop, db):
    owner = await enrol(client, db, shop)
    await client.post("/sales", json=sale(shop, "5.00", [cash("5.00")], 4), headers=shop.headers)
    assert await held(db, shop) == 20
    r = await set_programme(
        client, owner, earn_unit="1.00", point_value="0.05", active=False, version=1
    )
    assert r.status_code == 200, r.text
    paid = await client.post(
        "/sales",
        json=sale(shop, "3.00", [points_tender("0.50"), cash("2.50")]),
        headers=shop.headers,
    )
    assert paid.status_code == 200, paid.text
    assert (paid.json()["points_earned"], paid.json()["points_redeemed"]) == (0, 10)
    assert await held(db, shop) == 10
    await check_books(db, shop.company_id)


async def test_points_redeem_as_a_tender(client, shop, db):
    await enrol(client, db, shop)
    await client.post("/sales", json=sale(shop, "4.00", [cash("12.00")], 3), headers=shop.headers)
    assert await held(db, shop) == 12
    body = sale(shop, "8.00", [points_tender("0.50"), cash("7.50")])
    preview = await client.post("/sales/preview", json=body, headers=shop.headers)
    assert preview.json()["data"]["points_redeemed"] == 10, preview.text
    # Only what is not paid with points earns: floor(7.50 / 1.00) = 7.
    assert preview.json()["data"]["points_earned"] == 7
    r = await client.post("/sales", json=body, headers=shop.headers)
    assert r.status_code == 200, r.text
    assert (r.json()["points_redeemed"], r.json()["points_earned"]) == (10, 7)
    assert await held(db, shop) == 9
    order = await db.read(lambda s: by_id(s, Order, r.json()["order_id"]))
    lines = await entry_lines(db, order.journal_entry_id)
    # The tender debits 21400 by 0.50, the earned 7 points credit it 0.35.
    assert lines["21400"] == (D("0.50"), D("0.35"))
    moves = await db.read(
        lambda s: s.execute(
            select(LoyaltyMovement.kind, LoyaltyMovement.points, LoyaltyMovement.value)
            .where(LoyaltyMovement.order_id == order.id)
            .order_by(LoyaltyMovement.id)
        )
    )
    assert [tuple(m) for m in moves.all()] == [("redeem", -10, D("-0.50")), ("earn", 7, D("0.35"))]
    # The receipt says so, as text and as a page.
    text = await client.get(f"/sales/{order.id}/receipt?format=text", headers=shop.headers)
    assert text.status_code == 200, text.text
    lines = text.text.splitlines()
    assert any(ln.startswith("Points redeemed") and ln.endswith(" 10") for ln in lines), text.text
    assert any(ln.startswith("Points earned") and ln.endswith(" 7") for ln in lines), text.text
    page = await client.get(f"/sales/{order.id}/receipt", headers=shop.headers)
    assert '<td>Points earned</td><td class="r">7</td>' in page.text, page.text
    await check_books(db, shop.company_id)


async def test_refused_point_tenders_write_nothing(client, shop, db):
    await enrol(client, db, shop)
    await client.post("/sales", json=sale(shop, "4.00", [cash("12.00")], 3), headers=shop.headers)
    before = await order_count(db, shop)
    cases = [
        # not a whole number of points (0.05 each)
        (sale(shop, "1.00", [points_tender("0.03"), cash("0.97")]), "all_payments.0.amount"),
        # more than the customer holds (12 points are 0.60)
        (sale(shop, "1.00", [points_tender("0.65"), cash("0.35")]), "all_payments.0.amount"),
        # two tenders adding up to more
        (
            sale(shop, "1.00", [points_tender("0.40"), points_tender("0.40"), cash("0.20")]),
            "all_payments.1.amount",
        ),
        # the walk-in customer has no points
        (
            sale(shop, "1.00", [points_tender("0.05"), cash("0.95")], customer=shop.walk_in_id),
            "all_payments.0.payment_mode_id",
        ),
    ]
    for body, field in cases:
        for path in ("/sales/preview", "/sales"):
            r = await client.post(path, json=body, headers=shop.headers)
            assert r.status_code == 422, (path, r.text)
            assert field in r.json()["errors"], (path, r.text)
    assert await order_count(db, shop) == before
    assert await held(db, shop) == 12
    # Where a gift-card mode is refused, so is the loyalty mode: the same rule.
    refusals = [
        (
            "/payments",
            {
                "user_id": shop.customer_id,
                "date": TODAY,
                "payment_type": "in",
                "amount": "0.05",
                "payment_mode_id": "loyalty",
            },
            "payment_mode_id",
        ),
        (
            "/gift-cards",
            {"amount": "0.05", "all_payments": [points_tender("0.05")]},
            "all_payments.0.payment_mode_id",
        ),
        (
            "/purchases",
            {
                "user_id": shop.supplier_id,
                "order_date": TODAY,
                "product_items": [{"xid": shop.xid("water"), "quantity": 1, "unit_price": "0.05"}],
                "all_payments": [points_tender("0.05")],
            },
            "all_payments.0.payment_mode_id",
        ),
    ]
    for path, body, field in refusals:
        r = await client.post(path, json=body, headers=shop.headers)
        assert r.status_code == 422, (path, r.text)
        assert field in r.json()["errors"] and "loyalty points" in r.text, (path, r.text)
    await check_books(db, shop.company_id)


async def test_no_programme_no_points(client, shop, db):
    r = await client.post(
        "/sales", json=sale(shop, "1.00", [points_tender("1.00")]), headers=shop.headers
    )
    assert r.status_code == 422 and "all_payments.0.payment_mode_id" in r.json()["errors"]
    ok = await client.post("/sales", json=sale(shop, "5.00", [cash("5.00")]), headers=shop.headers)
    assert ok.status_code == 200 and ok.json()["points_earned"] == 0
    await check_books(db, shop.company_id)


async def test_returns_take_back_points_pro_rata_and_may_go_below_zero(client, shop, db):
    await enrol(client, db, shop)
    # 3 × 3.30 = 9.90: 9 points.
    r = await client.post(
        "/sales", json=sale(shop, "3.30", [cash("9.90")], 3), headers=shop.headers
    )
    assert r.json()["points_earned"] == 9
    invoice = r.json()["invoice_number"]
    # Spend 6 of them.
    spent = await client.post(
        "/sales", json=sale(shop, "0.30", [points_tender("0.30")]), headers=shop.headers
    )
    assert spent.status_code == 200 and spent.json()["points_redeemed"] == 6, spent.text
    assert await held(db, shop) == 3

    def ret(quantity: int, tenders: list[dict[str, Any]]) -> dict[str, Any]:
        return {
            "user_id": shop.customer_id,
            "order_date": TODAY,
            "invoice_number": invoice,
            "items": [
                {"product_id": shop.xid("water"), "quantity": quantity, "unit_price": "3.30"}
            ],
            "all_payments": tenders,
        }

    first = await client.post("/sales-returns", json=ret(1, [cash("3.30")]), headers=shop.headers)
    assert first.status_code == 200, first.text
    # floor(9 × 3.30 / 9.90) = 3
    assert first.json()["points_taken_back"] == 3
    assert await held(db, shop) == 0
    second = await client.post("/sales-returns", json=ret(2, [cash("3.30")]), headers=shop.headers)
    assert second.status_code == 200, second.text
    # the rest of the 9: below zero, since 6 were spent
    assert second.json()["points_taken_back"] == 6
    assert await held(db, shop) == -6
    order = await db.read(lambda s: by_id(s, Order, second.json()["return_id"]))
    lines = await entry_lines(db, order.journal_entry_id)
    assert lines["21400"] == (D("0.30"), D("0")) and lines["41300"] == (D("0"), D("0.30"))
    detail = await client.get(f"/sales-returns/{order.id}", headers=shop.headers)
    assert detail.json()["data"]["points_taken_back"] == 6, detail.text
    # Below zero, no points pay.
    refused = await client.post(
        "/sales", json=sale(shop, "0.05", [points_tender("0.05")]), headers=shop.headers
    )
    assert refused.status_code == 422 and "all_payments.0.amount" in refused.json()["errors"]
    await check_books(db, shop.company_id)


async def test_a_refund_in_the_loyalty_mode_gives_points_back(client, shop, db):
    await enrol(client, db, shop)
    await client.post("/sales", json=sale(shop, "2.00", [cash("10.00")], 5), headers=shop.headers)
    paid = await client.post(
        "/sales", json=sale(shop, "0.50", [points_tender("0.50")]), headers=shop.headers
    )
    assert paid.status_code == 200 and await held(db, shop) == 0
    body = {
        "user_id": shop.customer_id,
        "order_date": TODAY,
        "invoice_number": paid.json()["invoice_number"],
        "items": [{"product_id": shop.xid("water"), "quantity": 1, "unit_price": "0.50"}],
    }
    odd = await client.post(
        "/sales-returns",
        json={**body, "all_payments": [points_tender("0.47")]},
        headers=shop.headers,
    )
    assert odd.status_code == 422 and "all_payments.0.amount" in odd.json()["errors"]
    r = await client.post(
        "/sales-returns",
        json={**body, "all_payments": [points_tender("0.50")]},
        headers=shop.headers,
    )
    assert r.status_code == 200, r.text
    assert r.json()["points_refunded"] == 10 and await held(db, shop) == 10
    await check_books(db, shop.company_id)


async def test_a_void_undoes_points_exactly_even_after_a_new_value(client, shop, db):
    owner = await enrol(client, db, shop)
    await client.post("/sales", json=sale(shop, "5.00", [cash("10.00")], 2), headers=shop.headers)
    r = await client.post(
        "/sales",
        json=sale(shop, "6.00", [points_tender("0.50"), cash("5.50")]),
        headers=shop.headers,
    )
    assert (r.json()["points_redeemed"], r.json()["points_earned"]) == (10, 5), r.text
    assert await held(db, shop) == 5
    # The point value doubles: 5 points outstanding were 0.25, now 0.50.
    up = await set_programme(client, owner, earn_unit="1.00", point_value="0.10", version=1)
    assert up.status_code == 200, up.text
    assert up.json()["data"]["outstanding_value"] == "0.50"
    assert up.json()["data"]["revaluation_entry_id"] is not None
    await check_books(db, shop.company_id)
    void = await client.post(
        f"/sales/{r.json()['order_id']}/void", json={"reason": "mistake"}, headers=shop.headers
    )
    assert void.status_code == 200, void.text
    assert await held(db, shop) == 10
    assert await db.read(lambda s: gl_balance(s, shop.company_id, "21400")) == D("-1.0000")
    await check_books(db, shop.company_id)


async def test_a_new_point_value_revalues_the_outstanding_points(client, shop, db):
    owner = await enrol(client, db, shop)
    other = await make_shop(db)
    await client.post("/sales", json=sale(shop, "4.00", [cash("40.00")], 10), headers=shop.headers)
    assert await held(db, shop) == 40
    r = await set_programme(client, owner, earn_unit="1.00", point_value="0.02", version=1)
    assert r.status_code == 200, r.text
    # 40 × (0.02 − 0.05) = −1.20: 21400 falls, 41300 gets it back.
    assert await db.read(lambda s: gl_balance(s, shop.company_id, "21400")) == D("-0.8000")
    lines = await entry_lines(db, r.json()["data"]["revaluation_entry_id"])
    assert lines == {"21400": (D("1.20"), D("0")), "41300": (D("0"), D("1.20"))}
    statement = await client.get(f"{ADMIN}/customers/{shop.customer_id}/loyalty", headers=owner)
    assert statement.status_code == 200, statement.text
    data = statement.json()["data"]
    assert (data["points"], data["point_value"], data["value"]) == (40, "0.02", "0.80")
    moves = data["movements"]["data"]
    assert [(m["kind"], m["points"], m["value"]) for m in moves] == [
        ("revalue", 0, "-1.20"),
        ("earn", 40, "2.00"),
    ]
    assert moves[1]["invoice_number"] is not None and moves[1]["journal_entry_id"]
    # Tenants: another company's customer is a 404, and so is a supplier.
    theirs = await login(client, db, other)
    missing = await client.get(f"{ADMIN}/customers/{shop.customer_id}/loyalty", headers=theirs)
    assert missing.status_code == 404, missing.text
    supplier = await client.get(f"{ADMIN}/customers/{shop.supplier_id}/loyalty", headers=owner)
    assert supplier.status_code == 404
    garbage = await client.get(f"{ADMIN}/customers/abc/loyalty", headers=owner)
    assert garbage.status_code == 404
    await check_books(db, shop.company_id)


async def test_concurrent_sales_cannot_spend_the_same_points(client, db, backend):
    if backend == "sqlite":
        pytest.skip("concurrency is PostgreSQL's: SQLite has one writer")
    shop = await make_shop(db)
    await enrol(client, db, shop)
    await client.post("/sales", json=sale(shop, "5.00", [cash("10.00")], 2), headers=shop.headers)
    assert await held(db, shop) == 10

    async def spend() -> httpx.Response:
        # 4 points each (0.20), nothing left to earn on.
        body = sale(shop, "0.20", [points_tender("0.20")])
        return await client.post("/sales", json=body, headers=shop.headers)

    answers = await asyncio.gather(*(spend() for _ in range(5)))
    codes = sorted(r.status_code for r in answers)
    assert codes == [200, 200, 422, 422, 422], [r.text for r in answers]
    assert await held(db, shop) == 2
    await check_books(db, shop.company_id)


async def test_concurrent_revaluation_and_sales_keep_21400(client, db, backend):
    if backend == "sqlite":
        pytest.skip("concurrency is PostgreSQL's: SQLite has one writer")
    shop = await make_shop(db)
    owner = await enrol(client, db, shop)

    async def buy() -> httpx.Response:
        body = sale(shop, "3.00", [cash("3.00")])
        return await client.post("/sales", json=body, headers=shop.headers)

    async def revalue() -> httpx.Response:
        return await set_programme(client, owner, earn_unit="1.00", point_value="0.07", version=1)

    answers = await asyncio.gather(buy(), buy(), revalue(), buy(), buy())
    assert all(r.status_code == 200 for r in answers), [r.text for r in answers]
    value = await db.read(
        lambda s: s.scalar(
            select(LoyaltyProgramme.point_value).where(
                LoyaltyProgramme.company_id == shop.company_id
            )
        )
    )
    assert value == D("0.07")
    await check_books(db, shop.company_id)


# --------------------------------------------------------------------------- the pages


def _tokens(html: str) -> dict[str, str]:
    return {"csrf": csrf_of(html), "form_token": form_token_of(html)}


async def test_settings_page_sets_the_programme_and_the_customer_page_shows_points(
    web: httpx.AsyncClient, client: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    await sign_in(web, await owner_email(db, shop), OWNER_PASSWORD)
    page = await web.get("/settings/loyalty")
    assert page.status_code == 200 and "not set up" in page.text, page.text
    assert 'href="/settings/loyalty"' in page.text  # in the menu
    form = {"earn_unit": "1.00", "point_value": "0.05", "active": "1", "version": "0"}
    bad = await web.post(
        "/settings/loyalty", data={**_tokens(page.text), **form, "earn_unit": "abc"}
    )
    assert bad.status_code == 422 and 'id="e-earn_unit"' in bad.text, bad.text
    assert (
        await db.read(
            lambda s: s.scalar(
                select(func.count())
                .select_from(LoyaltyProgramme)
                .where(LoyaltyProgramme.company_id == shop.company_id)
            )
        )
        == 0
    )
    saved = await web.post("/settings/loyalty", data={**_tokens(page.text), **form})
    assert saved.status_code == 303, saved.text
    await client.post("/sales", json=sale(shop, "4.00", [cash("12.00")], 3), headers=shop.headers)
    page = await web.get("/settings/loyalty")
    assert 'id="outstanding-points">12<' in page.text, page.text
    # A new value revalues; the same form sent again is stale (412) and changes nothing.
    again = {**_tokens(page.text), **form, "point_value": "0.10", "version": "1"}
    assert (await web.post("/settings/loyalty", data=again)).status_code == 303
    stale = await web.post(
        "/settings/loyalty", data={**again, "form_token": form_token_of(page.text) + "x"}
    )
    assert stale.status_code == 412, stale.text
    assert await db.read(lambda s: gl_balance(s, shop.company_id, "21400")) == D("-1.2000")
    customer = await web.get(f"/customers/{shop.customer_id}")
    assert customer.status_code == 200, customer.text
    assert 'id="points">12<' in customer.text and "1.20" in customer.text
    assert "revalue" in customer.text and "earn" in customer.text
    # A cashier may not open the settings page, and sees the customer's points.
    await sign_in(web, await add_staff(db, shop, "cashier"), STAFF_PASSWORD)
    assert (await web.get("/settings/loyalty")).status_code == 403
    assert 'id="points">12<' in (await web.get(f"/customers/{shop.customer_id}")).text
    await check_books(db, shop.company_id)


async def test_a_foreign_sale_earns_on_its_base_amount_and_cannot_redeem(client, shop, db):
    await enrol(client, db, shop)

    async def euros(uow: Any) -> None:
        await rates.enable(uow.session, shop.company_id, "EUR", Actor.system())
        await rates.set_rate(
            uow.session, shop.company_id, "EUR", dt.date(2026, 11, 1), D("1.10"), Actor.system()
        )

    await db.unit(euros)
    body = {
        "user_id": shop.customer_id,
        "order_date": "2026-11-10",
        "currency": "EUR",
        "product_items": [{"xid": shop.products["apple"], "quantity": 3, "unit_price": "10.00"}],
    }
    r = await client.post("/sales", json=body, headers=shop.headers)
    assert r.status_code == 200, r.text
    base = D(r.json()["base_total"])
    assert r.json()["points_earned"] == int(base) and base > D("30")
    order = await db.read(lambda s: by_id(s, Order, r.json()["order_id"]))
    lines = await entry_lines(db, order.journal_entry_id)
    assert lines["21400"] == (D("0"), int(base) * D("0.05"))
    refused = await client.post(
        "/sales",
        json={**body, "all_payments": [{"amount": "1.00", "payment_mode_id": "loyalty"}]},
        headers=shop.headers,
    )
    assert refused.status_code == 422, refused.text
    assert "all_payments.0.payment_mode_id" in refused.json()["errors"]
    ret = {
        "user_id": shop.customer_id,
        "order_date": "2026-11-10",
        "invoice_number": r.json()["invoice_number"],
        "items": [{"product_id": shop.products["apple"], "quantity": 3, "unit_price": "10.00"}],
    }
    back = await client.post("/sales-returns", json=ret, headers=shop.headers)
    assert back.status_code == 200, back.text
    assert back.json()["points_taken_back"] == int(base) and await held(db, shop) == 0
    await check_books(db, shop.company_id)


@pytest.mark.skipif(CHROMIUM is None, reason="no Chromium executable")
async def test_the_register_shows_a_picked_customers_points_online_only(
    server: str, client: httpx.AsyncClient, db: Database, tmp_path: Any, pw: Any
) -> None:
    from tests.registers.test_register_browser import open_register, pair_with_key

    shop = await make_shop(db)
    await enrol(client, db, shop)
    await client.post("/sales", json=sale(shop, "4.00", [cash("12.00")], 3), headers=shop.headers)
    # The public API the register asks: another company's customer is a 404.
    r = await client.get(f"/customers/{shop.customer_id}/loyalty", headers=shop.headers)
    assert r.status_code == 200 and r.json()["data"]["points"] == 12, r.text
    assert r.json()["data"]["value"] == "0.60"
    other = await make_shop(db)
    theirs = await client.get(f"/customers/{shop.customer_id}/loyalty", headers=other.headers)
    assert theirs.status_code == 404, theirs.text
    walk_in = await client.get(f"/customers/{shop.walk_in_id}/loyalty", headers=shop.headers)
    assert walk_in.json()["data"]["enrolled"] is False

    context, page = await open_register(pw, tmp_path / "profile")
    page.on("dialog", lambda d: d.accept())
    await pair_with_key(page, server, shop)
    line = page.locator("#customer-points")

    async def pick() -> None:
        await page.keyboard.press("F4")
        await page.locator("#customer-search").fill("Ada")
        await page.get_by_role("button", name="Ada Customer").click()

    await pick()
    await page.wait_for_function(
        "() => document.getElementById('customer-points').textContent.includes('12')"
    )
    assert await line.text_content() == "Loyalty points: 12 (worth 0.60)"
    await context.set_offline(True)
    await page.wait_for_function("() => document.getElementById('net').textContent === 'Offline'")
    await pick()
    assert "offline" in (await line.text_content() or "")
    await context.close()


async def test_a_sale_reads_the_terms_with_its_customer(client, shop, db, backend):
    """A sale's quote takes the programme's terms from the read of its customer (no
    statement of its own); with a programme, the one read of the terms alone is
    ``confirm``'s, under the shared lock. Counted on PostgreSQL's driver statements
    and SQLAlchemy's alike."""
    from sqlalchemy import event

    from tillbook import unit

    seen: list[str] = []

    def record(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        seen.append(statement)

    async def programme_reads(body: dict[str, Any]) -> list[str]:
        seen.clear()
        engines = {db.engine.sync_engine, db.write_engine.sync_engine}  # SQLite: two
        for engine in engines:
            event.listen(engine, "before_cursor_execute", record)
        unit.statement_observers.append(seen.append)
        try:
            r = await client.post("/sales", json=body, headers=shop.headers)
        finally:
            unit.statement_observers.remove(seen.append)
            for engine in engines:
                event.remove(engine, "before_cursor_execute", record)
        assert r.status_code == 200, r.text
        # (on SQLite the driver's statements go through SQLAlchemy: each seen twice)
        return sorted({s for s in seen if "loyalty_programmes" in s})

    without = await programme_reads(sale(shop, "2.00", [cash("2.00")]))
    assert len(without) == 1 and "users" in without[0], without
    await enrol(client, db, shop)
    enrolled = await programme_reads(sale(shop, "2.00", [cash("2.00")]))
    alone = [s for s in enrolled if "users" not in s]
    assert len(enrolled) == 2 and len(alone) == 1, enrolled
    if backend == "postgresql":
        assert "FOR KEY SHARE" in alone[0], alone
    assert await held(db, shop) == 2
    await check_books(db, shop.company_id)
