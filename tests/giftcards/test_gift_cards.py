"""Gift cards and store credit (issue 29 items 2 and 4, DESIGN §18): sold, loaded,
checked, spent (partly, several on one sale), refunded to, voided back, expired to
breakage; every step keeps GL 21300 = Σ balances (``check_books``)."""

from __future__ import annotations

import asyncio
import datetime as dt
from decimal import Decimal
from typing import Any

import httpx
import pytest
from sqlalchemy import select

from tests.admin_helpers import ADMIN, login
from tests.cli_run import Run, cli_run  # noqa: F401  (the fixture)
from tests.factories import make_shop
from tests.invariants import check_books, gl_balance
from tillbook.db import Database
from tillbook.giftcards import codes
from tillbook.giftcards import service as giftcards
from tillbook.models import AuditEvent, GiftCardMovement, Payment

D = Decimal


async def sell(client, shop, amount: str, *, mode: str = "cash", **extra: Any) -> dict[str, Any]:
    body = {"amount": amount, "all_payments": [{"amount": amount, "payment_mode_id": mode}]}
    r = await client.post("/gift-cards", json={**body, **extra}, headers=shop.headers)
    assert r.status_code == 200, r.text
    return r.json()["data"]


def sale(shop, price: str, tenders: list[dict[str, Any]], quantity: int = 1) -> dict[str, Any]:
    return {
        "user_id": shop.customer_id,
        "order_date": dt.date.today().isoformat(),
        "product_items": [{"xid": shop.xid("water"), "quantity": quantity, "unit_price": price}],
        "all_payments": tenders,
    }


async def balance(db: Database, company_id: int, code: str) -> Decimal:
    card = await db.read(lambda s: giftcards.card_by_code(s, company_id, code))
    assert card is not None
    return D(card.balance)


async def test_sell_check_and_spend_a_card_across_branches(client, shop, db):
    card = await sell(client, shop, "50.00", user_id=shop.customer_id)
    code = card["code"]
    assert card["code_in_full"] is True and len(codes.normalize(code) or "") == 16
    assert card["balance"] == "50.00" and card["customer_id"] == shop.customer_id
    # Only the keyed hash and the last four are stored.
    row = await db.read(lambda s: giftcards.card_by_code(s, shop.company_id, code.lower()))
    assert (
        row is not None and row.last4 == code[-4:] and codes.normalize(code) not in row.lookup_key
    )
    assert await db.read(lambda s: gl_balance(s, shop.company_id, "21300")) == D("-50.0000")
    # The cash went into the drawer as a payment in, nothing left to allocate.
    pay = await db.read(
        lambda s: s.scalar(select(Payment).where(Payment.company_id == shop.company_id))
    )
    assert pay.amount == D("50") and pay.unallocated_amount == 0 and pay.order_id is None

    r = await client.post("/gift-cards/balance", json={"code": code}, headers=shop.headers)
    assert r.status_code == 200 and r.json()["data"]["balance"] == "50.00", r.text
    assert r.json()["data"]["code"].endswith(code[-4:]) and code not in r.text

    # Spent at the other branch, partly, beside cash.
    other = {**sale(shop, "0", []), "product_items": []}
    other["product_items"] = [
        {"xid": shop.other_products["coffee"], "quantity": 2, "unit_price": "4.00"}
    ]
    other["all_payments"] = [
        {"amount": "5.00", "payment_mode_id": "gift-card", "gift_card_code": code},
        {"amount": "3.00", "payment_mode_id": "cash"},
    ]
    r = await client.post("/sales", json=other, headers=shop.other_key.headers)
    assert r.status_code == 200, r.text
    assert r.json()["payment_status"] == "paid"
    assert await balance(db, shop.company_id, code) == D("45.00")
    await check_books(db, shop.company_id)


async def test_a_card_spent_to_the_cent_in_steps(client, shop, db):
    """Half of 1.13, then exactly what is left: SQLite adds in binary floating
    point, where 1.13 - 0.56 is 0.5699999999999999, and the second spend was refused
    as if another sale had spent the card first (found by the random sequences of
    tests/robustness/test_loyalty_books.py)."""
    code = (await sell(client, shop, "1.13"))["code"]
    for price in ("0.56", "0.57"):
        tender = {"amount": price, "payment_mode_id": "gift-card", "gift_card_code": code}
        r = await client.post("/sales", json=sale(shop, price, [tender]), headers=shop.headers)
        assert r.status_code == 200, r.text
    assert await balance(db, shop.company_id, code) == D("0.00")
    refused = {"amount": "0.01", "payment_mode_id": "gift-card", "gift_card_code": code}
    r = await client.post("/sales", json=sale(shop, "0.01", [refused]), headers=shop.headers)
    assert r.status_code == 422, r.text
    await check_books(db, shop.company_id)


async def test_load_an_existing_card_and_replay_hides_the_code(client, shop, db):
    body = {"amount": "20", "all_payments": [{"amount": "20", "payment_mode_id": "card"}]}
    headers = {**shop.headers, "Idempotency-Key": "gift-1"}
    first = await client.post("/gift-cards", json=body, headers=headers)
    again = await client.post("/gift-cards", json=body, headers=headers)
    assert first.status_code == again.status_code == 200
    code = first.json()["data"]["code"]
    assert again.headers.get("Idempotent-Replayed") == "true"
    assert again.json()["data"]["code_in_full"] is False and code not in again.text
    loaded = await sell(client, shop, "5.50", code=code.replace("-", " ").lower())
    assert loaded["balance"] == "25.50" and loaded["code_in_full"] is False
    assert await balance(db, shop.company_id, code) == D("25.50")
    await check_books(db, shop.company_id)


async def test_several_cards_on_one_sale_and_the_void_gives_them_back(client, shop, db):
    a = (await sell(client, shop, "3.00"))["code"]
    b = (await sell(client, shop, "10.00"))["code"]
    body = sale(
        shop,
        "1.00",
        [
            {"amount": "3.00", "payment_mode_id": "gift-card", "gift_card_code": a},
            {"amount": "4.00", "payment_mode_id": "gift-card", "gift_card_code": b},
        ],
        quantity=7,
    )
    r = await client.post("/sales", json=body, headers=shop.headers)
    assert r.status_code == 200, r.text
    order_id = r.json()["order_id"]
    assert await balance(db, shop.company_id, a) == 0
    assert await balance(db, shop.company_id, b) == D("6.00")
    await check_books(db, shop.company_id)
    # A spent card is refused like an unknown one.
    r = await client.post("/gift-cards/balance", json={"code": a}, headers=shop.headers)
    assert r.status_code == 422 and "code" in r.json()["errors"]

    r = await client.post(
        f"/sales/{order_id}/void", json={"reason": "rung up twice"}, headers=shop.headers
    )
    assert r.status_code == 200, r.text
    assert await balance(db, shop.company_id, a) == D("3.00")
    assert await balance(db, shop.company_id, b) == D("10.00")
    await check_books(db, shop.company_id)


async def test_refused_card_tenders_write_nothing(client, shop, db):
    code = (await sell(client, shop, "5.00"))["code"]
    before = await db.read(lambda s: gl_balance(s, shop.company_id, "21300"))
    cases = [
        # more than the card holds (two tenders of one card add up)
        (
            [
                {"amount": "3.00", "payment_mode_id": "gift-card", "gift_card_code": code},
                {"amount": "3.00", "payment_mode_id": "gift-card", "gift_card_code": code},
            ],
            "all_payments.1.gift_card_code",
        ),
        # unknown code, and a code of the wrong shape
        (
            [{"amount": "1.00", "payment_mode_id": "gift-card", "gift_card_code": "A" * 16}],
            "all_payments.0.gift_card_code",
        ),
        (
            [{"amount": "1.00", "payment_mode_id": "gift-card", "gift_card_code": "nope"}],
            "all_payments.0.gift_card_code",
        ),
        # a code on a cash tender
        (
            [{"amount": "1.00", "payment_mode_id": "cash", "gift_card_code": code}],
            "all_payments.0.gift_card_code",
        ),
        # store credit the customer does not have
        ([{"amount": "1.00", "payment_mode_id": "gift-card"}], "all_payments.0.amount"),
    ]
    for tenders, field in cases:
        r = await client.post("/sales", json=sale(shop, "6.00", tenders), headers=shop.headers)
        assert r.status_code == 422, r.text
        assert field in r.json()["errors"], r.text
        assert r.json()["status"] == "error"
    # The gift-card mode is refused where it would move 21300 without a card.
    r = await client.post(
        "/payments",
        json={
            "user_id": shop.customer_id,
            "payment_type": "in",
            "amount": "1",
            "payment_mode_id": "gift-card",
        },
        headers=shop.headers,
    )
    assert r.status_code == 422 and "payment_mode_id" in r.json()["errors"], r.text
    r = await client.post(
        "/gift-cards",
        json={"amount": "5", "all_payments": [{"amount": "5", "payment_mode_id": "gift-card"}]},
        headers=shop.headers,
    )
    assert r.status_code == 422 and "all_payments.0.payment_mode_id" in r.json()["errors"]
    r = await client.post(
        "/gift-cards",
        json={"amount": "5", "all_payments": [{"amount": "4", "payment_mode_id": "cash"}]},
        headers=shop.headers,
    )
    assert r.status_code == 422 and "all_payments" in r.json()["errors"]
    r = await client.post("/gift-cards/balance", json={"code": ""}, headers=shop.headers)
    assert r.status_code == 422
    assert await db.read(lambda s: gl_balance(s, shop.company_id, "21300")) == before
    assert await balance(db, shop.company_id, code) == D("5.00")
    await check_books(db, shop.company_id)


async def test_another_company_cannot_use_a_card(client, shop, db):
    code = (await sell(client, shop, "5.00"))["code"]
    other = await make_shop(db)
    r = await client.post("/gift-cards/balance", json={"code": code}, headers=other.headers)
    assert r.status_code == 422 and "code" in r.json()["errors"]


async def test_return_to_store_credit_then_spend_it(client, shop, db):
    r = await client.post(
        "/sales",
        json=sale(shop, "2.00", [{"amount": "6.00", "payment_mode_id": "cash"}], quantity=3),
        headers=shop.headers,
    )
    assert r.status_code == 200, r.text
    invoice = r.json()["invoice_number"]
    ret = {
        "user_id": shop.customer_id,
        "order_date": dt.date.today().isoformat(),
        "invoice_number": invoice,
        "items": [{"product_id": shop.xid("water"), "quantity": 2, "unit_price": "2.00"}],
        "all_payments": [{"amount": "4.00", "payment_mode_id": "gift-card"}],
    }
    r = await client.post("/sales-returns", json=ret, headers=shop.headers)
    assert r.status_code == 200, r.text
    credit = await db.read(lambda s: giftcards.store_credit(s, shop.company_id, shop.customer_id))
    assert credit is not None and credit.balance == D("4.00") and credit.kind == "credit"
    await check_books(db, shop.company_id)
    # Spent as a tender without a code: the sale's customer's credit.
    r = await client.post(
        "/sales",
        json=sale(shop, "2.50", [{"amount": "2.50", "payment_mode_id": "gift-card"}]),
        headers=shop.headers,
    )
    assert r.status_code == 200, r.text
    credit = await db.read(lambda s: giftcards.store_credit(s, shop.company_id, shop.customer_id))
    assert credit is not None and credit.balance == D("1.50")
    # The walk-in customer has no store credit to take a refund on.
    ret_walk = {
        **ret,
        "user_id": shop.walk_in_id,
        "items": [{"product_id": shop.xid("water"), "quantity": 1, "unit_price": "1.00"}],
        "all_payments": [{"amount": "1.00", "payment_mode_id": "gift-card"}],
    }
    ret_walk.pop("invoice_number")
    r = await client.post("/sales-returns", json=ret_walk, headers=shop.headers)
    assert r.status_code == 422 and "all_payments.0.payment_mode_id" in r.json()["errors"]
    await check_books(db, shop.company_id)


async def test_refund_onto_a_card(client, shop, db):
    code = (await sell(client, shop, "1.00"))["code"]
    ret = {
        "user_id": shop.customer_id,
        "order_date": dt.date.today().isoformat(),
        "items": [{"product_id": shop.xid("water"), "quantity": 1, "unit_price": "1.00"}],
        "all_payments": [
            {"amount": "1.00", "payment_mode_id": "gift-card", "gift_card_code": code}
        ],
    }
    r = await client.post("/sales-returns", json=ret, headers=shop.headers)
    assert r.status_code == 200, r.text
    assert await balance(db, shop.company_id, code) == D("2.00")
    await check_books(db, shop.company_id)


async def test_expiry_moves_the_rest_to_breakage(client, shop, db):
    tomorrow = dt.date.today() + dt.timedelta(days=1)
    code = (await sell(client, shop, "8.00", expires_on=tomorrow.isoformat()))["code"]
    keeps = (await sell(client, shop, "2.00"))["code"]
    r = await client.post(
        "/sales",
        json=sale(
            shop,
            "3.00",
            [{"amount": "3.00", "payment_mode_id": "gift-card", "gift_card_code": code}],
        ),
        headers=shop.headers,
    )
    assert r.status_code == 200, r.text

    async def run(uow: Any) -> list[giftcards.Expired]:
        return await giftcards.expire(uow, shop.company_id, tomorrow + dt.timedelta(days=1), None)

    done = await db.unit(run)
    assert [(e.amount) for e in done] == [D("5.00")]
    assert await db.read(lambda s: gl_balance(s, shop.company_id, "41500")) == D("-5.0000")
    assert await balance(db, shop.company_id, code) == 0
    assert await balance(db, shop.company_id, keeps) == D("2.00")
    # An expired card neither takes a load, nor pays, nor answers its balance.
    load = {
        "amount": "1",
        "code": code,
        "all_payments": [{"amount": "1", "payment_mode_id": "cash"}],
    }
    r = await client.post("/gift-cards", json=load, headers=shop.headers)
    assert r.status_code == 422 and "code" in r.json()["errors"]
    tender = {"amount": "1.00", "payment_mode_id": "gift-card", "gift_card_code": code}
    r = await client.post("/sales", json=sale(shop, "1.00", [tender]), headers=shop.headers)
    assert r.status_code == 422 and "all_payments.0.gift_card_code" in r.json()["errors"]
    r = await client.post("/gift-cards/balance", json={"code": code}, headers=shop.headers)
    assert r.status_code == 422
    assert await db.unit(run) == []  # nothing left to expire
    await check_books(db, shop.company_id)


async def test_expiry_date_is_checked(client, shop):
    for bad in [dt.date.today().isoformat(), "2999-01-01", "not a date"]:
        r = await client.post(
            "/gift-cards",
            json={
                "amount": "1",
                "expires_on": bad,
                "all_payments": [{"amount": "1", "payment_mode_id": "cash"}],
            },
            headers=shop.headers,
        )
        assert r.status_code == 422 and "expires_on" in r.json()["errors"], r.text


async def test_wrong_codes_are_rate_limited_per_key(client, db):
    shop = await make_shop(db)
    statuses = []
    for i in range(25):
        r = await client.post(
            "/gift-cards/balance",
            json={"code": f"{i:016d}".replace("0", "A")},
            headers=shop.headers,
        )
        statuses.append(r.status_code)
    assert statuses[:20] == [422] * 20
    assert statuses[20:] == [429] * 5
    assert "Retry-After" in r.headers
    # The other branch's key is its own window.
    r = await client.post(
        "/gift-cards/balance", json={"code": "B" * 16}, headers=shop.other_key.headers
    )
    assert r.status_code == 422


async def test_one_code_is_rate_limited_per_card(client, db):
    shop = await make_shop(db)
    code = (await sell(client, shop, "5.00"))["code"]
    seen = []
    for _ in range(32):
        r = await client.post("/gift-cards/balance", json={"code": code}, headers=shop.headers)
        seen.append(r.status_code)
    assert seen[:30] == [200] * 30 and seen[30:] == [429, 429]


async def test_concurrent_sales_cannot_overspend_one_card(client, db, backend):
    if backend != "postgresql":
        pytest.skip("concurrency is PostgreSQL's: SQLite has one writer")
    shop = await make_shop(db)
    code = (await sell(client, shop, "10.00"))["code"]

    async def spend() -> httpx.Response:
        body = sale(
            shop,
            "3.00",
            [{"amount": "3.00", "payment_mode_id": "gift-card", "gift_card_code": code}],
        )
        return await client.post("/sales", json=body, headers=shop.headers)

    answers = await asyncio.gather(*(spend() for _ in range(6)))
    codes_ = sorted(r.status_code for r in answers)
    assert codes_ == [200, 200, 200, 422, 422, 422], [r.text for r in answers]
    assert await balance(db, shop.company_id, code) == D("1.00")
    moves = await db.read(
        lambda s: s.scalar(
            select(GiftCardMovement.balance_after)
            .where(GiftCardMovement.company_id == shop.company_id)
            .order_by(GiftCardMovement.id.desc())
            .limit(1)
        )
    )
    assert moves == D("1.00")
    await check_books(db, shop.company_id)


async def test_cli_expires_cards(client, shop, db, cli_run: Run):  # noqa: F811
    tomorrow = dt.date.today() + dt.timedelta(days=1)
    await sell(client, shop, "4.25", expires_on=tomorrow.isoformat())
    later = (tomorrow + dt.timedelta(days=1)).isoformat()
    args = ("giftcards", "expire", "--company", str(shop.company_id), "--today", later, "--json")
    ran = await asyncio.to_thread(cli_run, *args)
    assert ran.json()["breakage"] == "4.25" and len(ran.json()["expired"]) == 1
    again = await asyncio.to_thread(cli_run, *args)
    assert again.json()["expired"] == []
    assert await db.read(lambda s: gl_balance(s, shop.company_id, "41500")) == D("-4.2500")
    await check_books(db, shop.company_id)


async def test_admin_sells_lists_and_reads_a_statement(client, shop, db):
    owner = await login(client, db, shop)
    body = {
        "warehouse_id": shop.warehouse_id,
        "amount": "30.00",
        "user_id": shop.customer_id,
        "all_payments": [{"amount": "30.00", "payment_mode_id": "card"}],
    }
    headers = {**owner, "Idempotency-Key": "admin-gift-1"}
    r = await client.post(f"{ADMIN}/gift-cards", json=body, headers=headers)
    assert r.status_code == 201, r.text
    code = r.json()["data"]["code"]
    assert r.json()["data"]["code_in_full"] is True
    replay = await client.post(f"{ADMIN}/gift-cards", json=body, headers=headers)
    assert replay.status_code == 201 and code not in replay.text
    card_id = r.json()["data"]["id"]
    tender = {"amount": "12.00", "payment_mode_id": "gift-card", "gift_card_code": code}
    sold = await client.post("/sales", json=sale(shop, "4.00", [tender], 3), headers=shop.headers)
    assert sold.status_code == 200, sold.text

    listed = await client.get(f"{ADMIN}/gift-cards", headers=owner)
    assert listed.status_code == 200, listed.text
    rows = listed.json()["data"]["data"]
    assert [(c["id"], c["balance"], c["customer_name"]) for c in rows] == [
        (card_id, "18.00", "Ada Customer")
    ]
    assert code not in listed.text and rows[0]["code"].endswith(code[-4:])
    statement = await client.get(f"{ADMIN}/gift-cards/{card_id}", headers=owner)
    moves = statement.json()["data"]["movements"]
    assert [(m["kind"], m["amount"], m["balance_after"]) for m in moves] == [
        ("issue", "30.00", "30.00"),
        ("spend", "-12.00", "18.00"),
    ]
    assert moves[1]["order_id"] == sold.json()["order_id"]
    audited = await db.read(
        lambda s: s.scalar(
            select(AuditEvent.after).where(
                AuditEvent.company_id == shop.company_id, AuditEvent.action == "gift_card.sold"
            )
        )
    )
    assert audited is not None and code not in str(audited)
    # Another company's card is a 404, a bad filter a 422.
    other = await make_shop(db)
    theirs = await login(client, db, other)
    assert (await client.get(f"{ADMIN}/gift-cards/{card_id}", headers=theirs)).status_code == 404
    bad = await client.get(f"{ADMIN}/gift-cards?kind=coupon", headers=owner)
    assert bad.status_code == 422 and "kind" in bad.json()["errors"]
    await check_books(db, shop.company_id)
