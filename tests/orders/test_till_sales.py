"""POST /sales/preview and POST /sales/{id}/void (issue 16, parts 1 and 2)."""

from __future__ import annotations

import asyncio
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import func, select

from tests.factories import Shop, by_id, make_shop
from tests.invariants import check_books, gl_balance
from tests.written import snapshot
from tillbook.db import Database
from tillbook.models import JournalEntry, Listing, OutboxEvent, Payment, StockBatch

D = Decimal
DAY = "2026-11-20"


def sale(shop: Shop, items: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    body = {"user_id": shop.customer_id, "order_date": DAY, "product_items": items}
    body.update(extra)
    return body


async def stock_of(db: Database, product_id: int, warehouse_id: int) -> Decimal:
    return await db.read(
        lambda s: s.scalar(
            select(Listing.current_stock).where(
                Listing.product_id == product_id, Listing.warehouse_id == warehouse_id
            )
        )
    )


# --------------------------------------------------------------------------- preview


MIXED = [
    ("apple", 3, "3.50", "tax10", "0"),
    ("water", "2.5", "1.0001", None, "12.5"),
    ("apple", 1, "3.33", "incl", "7"),
    ("water", 1, "10.00", "incl", "0", "box"),
]


def lines(shop: Shop, rows: list[tuple[Any, ...]]) -> list[dict[str, Any]]:
    out = []
    for row in rows:
        code, qty, price, tax, rate = row[:5]
        line: dict[str, Any] = {
            "xid": shop.xid(code),
            "quantity": qty,
            "unit_price": price,
            "discount_rate": rate,
        }
        if tax is not None:
            line["tax_id"] = shop.tax10_id if tax == "tax10" else shop.tax_incl_id
        if len(row) > 5:
            line["selected_unit_id"] = shop.box_unit_id
        out.append(line)
    return out


async def test_preview_is_what_the_sale_records_and_records_nothing(client, shop, db) -> None:
    body = sale(shop, lines(shop, MIXED), discount="1.13", shipping="2.50")
    before = await snapshot(db, shop)
    r = await client.post("/sales/preview", json=body, headers=shop.headers)
    assert r.status_code == 200, r.text
    preview = r.json()["data"]
    assert await snapshot(db, shop) == before
    # the per-line figures add up to the totals
    assert sum(D(i["net"]) for i in preview["items"]) == D(preview["subtotal"])
    assert sum(D(i["tax"]) for i in preview["items"]) == D(preview["tax_amount"])
    total = D(preview["subtotal"]) + D(preview["tax_amount"]) + D("2.50") - D("1.13")
    assert D(preview["total"]) == total
    # inclusive line: 3.33 less 7 % = 3.10 gross, 20 % inside it
    incl = preview["items"][2]
    assert (incl["total"], incl["tax"], incl["net"], incl["discount"]) == (
        "3.10",
        "0.52",
        "2.58",
        "0.23",
    )
    # a till tendering the previewed total exactly, with the previewed totals
    paid = sale(
        shop,
        lines(shop, MIXED),
        discount="1.13",
        shipping="2.50",
        subtotal=preview["subtotal"],
        tax_amount=preview["tax_amount"],
        total=preview["total"],
        all_payments=[{"amount": preview["total"], "payment_mode_id": "cash"}],
    )
    r = await client.post("/sales", json=paid, headers=shop.headers)
    assert r.status_code == 200, r.text
    assert r.json()["payment_status"] == "paid"
    detail = (await client.get(f"/sales/{r.json()['order_id']}", headers=shop.headers)).json()
    d = detail["data"]
    for name in ("subtotal", "tax_amount", "discount", "shipping", "total"):
        assert d[name] == preview[name], name
    for line, item in zip(d["items"], preview["items"], strict=True):
        assert (line["subtotal"], line["tax_amount"], line["total"]) == (
            item["net"],
            item["tax"],
            item["total"],
        )
    await check_books(db, shop.company_id)


@pytest.fixture(scope="module")
async def pricing_shop(db: Database) -> Shop:
    return await make_shop(db, allow_negative_stock=True)


prices = st.decimals(min_value=D("0"), max_value=D("999.9999"), places=4)
quantities = st.decimals(min_value=D("0.0001"), max_value=D("50"), places=4)
rates = st.decimals(min_value=D("0"), max_value=D("100"), places=2)


@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    rows=st.lists(
        st.tuples(
            st.sampled_from(["apple", "water"]),
            quantities,
            prices,
            st.sampled_from([None, "tax10", "incl"]),
            rates,
        ),
        min_size=1,
        max_size=4,
    ),
    shipping=st.decimals(min_value=D("0"), max_value=D("20"), places=2),
)
async def test_a_till_tendering_the_preview_is_never_refused(
    client, db, pricing_shop, rows, shipping
) -> None:
    shop = pricing_shop
    items = lines(shop, [(c, str(q), str(p), t, str(r)) for c, q, p, t, r in rows])
    body = sale(shop, items, shipping=str(shipping))
    r = await client.post("/sales/preview", json=body, headers=shop.headers)
    assert r.status_code == 200, r.text
    preview = r.json()["data"]
    body["all_payments"] = [{"amount": preview["total"], "payment_mode_id": "cash"}]
    body["total"] = preview["total"]
    if D(preview["total"]) == 0:
        del body["all_payments"]
    r = await client.post("/sales", json=body, headers=shop.headers)
    assert r.status_code == 200, r.text
    assert D(r.json()["due_amount"]) == 0


@pytest.mark.parametrize(
    ("edit", "field"),
    [
        (lambda s, b: {**b, "product_items": [{**b["product_items"][0], "xid": "nope"}]},
         "product_items.0.xid"),
        (lambda s, b: {**b, "product_items": [{**b["product_items"][0], "xid": "a\x00b"}]},
         "product_items.0.xid"),
        (lambda s, b: {**b, "product_items": [{**b["product_items"][0], "quantity": "1.00001"}]},
         "product_items.0.quantity"),
        (lambda s, b: {**b, "product_items": [{**b["product_items"][0], "quantity": "1e30"}]},
         "product_items.0.quantity"),
        (lambda s, b: {**b, "discount": "999999"}, "discount"),
        (lambda s, b: {**b, "total": "1.00"}, "total"),
        (lambda s, b: {**b, "user_id": 999999999}, "user_id"),
        (lambda s, b: {**b, "notes": "a\x07b"}, "notes"),
        (lambda s, b: {**b, "product_items": [{**b["product_items"][0],
                                               "xid": s.extra["other_product"]}]},
         "product_items.0.xid"),
        (lambda s, b: {**b, "all_payments": [{"amount": "100.00", "payment_mode_id": "cash"}]},
         "all_payments"),
        # what would refuse the sale refuses its preview: a shift that is not open
        (lambda s, b: {**b, "shift_id": 999999}, "shift_id"),
        (lambda s, b: {**b, "shift_id": "0x10"}, "shift_id"),
    ],
)  # fmt: skip
async def test_preview_bad_input_names_the_field(client, shop, db, edit, field) -> None:
    shop.extra["other_product"] = shop.other_products.get("coffee") or 10**9
    body = edit(shop, sale(shop, [{"xid": shop.xid("apple"), "quantity": 1, "unit_price": 3.5}]))
    before = await snapshot(db, shop)
    r = await client.post("/sales/preview", json=body, headers=shop.headers)
    assert r.status_code == 422, r.text
    assert field in r.json()["errors"], r.text
    assert await snapshot(db, shop) == before


# --------------------------------------------------------------------------- void


async def batches(db: Database, product_id: int, warehouse_id: int) -> list[tuple[Any, ...]]:
    rows = await db.read(
        lambda s: s.execute(
            select(StockBatch.id, StockBatch.quantity_remaining, StockBatch.value_remaining)
            .where(StockBatch.product_id == product_id, StockBatch.warehouse_id == warehouse_id)
            .order_by(StockBatch.id)
        )
    )
    return [tuple(r) for r in rows.all()]


async def test_void_puts_everything_back(client, shop, db) -> None:
    apple = shop.products["apple"]
    layers_before = await batches(db, apple, shop.warehouse_id)
    codes = ("11500", "41100", "21200", "51100", "11700", "41300", "11105", "11101")

    async def gl() -> dict[str, Decimal]:
        return {c: await db.read(lambda s, c=c: gl_balance(s, shop.company_id, c)) for c in codes}

    gl_before = await gl()
    body = sale(
        shop,
        [{"xid": shop.xid("apple"), "quantity": 12, "unit_price": "3.50", "tax_id": shop.tax10_id}],
        discount="0.20",
        all_payments=[
            {"amount": "20.00", "payment_mode_id": "cash"},
            {"amount": "10.00", "payment_mode_id": "card"},
        ],
    )
    r = await client.post("/sales", json=body, headers=shop.headers)
    assert r.status_code == 200, r.text
    order_id = r.json()["order_id"]
    assert await stock_of(db, apple, shop.warehouse_id) == 8

    r = await client.post(
        f"/sales/{order_id}/void", json={"reason": "rung up twice"}, headers=shop.headers
    )
    assert r.status_code == 200, r.text
    out = r.json()
    assert out["order_status"] == "cancelled"
    assert sorted((x["payment_mode_id"], x["amount"]) for x in out["refunds"]) == sorted(
        [(shop.cash_mode_id, "20.00"), (shop.card_mode_id, "10.00")]
    )
    # stock back in the very layers, at the cost it left with
    assert await stock_of(db, apple, shop.warehouse_id) == 20
    assert await batches(db, apple, shop.warehouse_id) == layers_before
    # the reversing entry names the original; the books are as before the sale
    entry = await db.read(lambda s: by_id(s, JournalEntry, out["reversing_entry_id"]))
    assert entry.reverses_entry_id is not None and entry.source_type == "sale_void"
    assert await gl() == gl_before
    # readable, cancelled, not open
    d = (await client.get(f"/sales/{order_id}", headers=shop.headers)).json()["data"]
    assert d["order_status"] == "cancelled" and d["due_amount"] == "0.00"
    assert d["void_reason"] == "rung up twice"
    inv = await client.get(
        "/payments/user-invoices", params={"user_id": shop.customer_id}, headers=shop.headers
    )
    assert all(i["order_id"] != order_id for i in inv.json()["data"]["invoices"])
    types = await db.read(
        lambda s: s.scalars(
            select(OutboxEvent.type).where(OutboxEvent.company_id == shop.company_id)
        )
    )
    assert "order.cancelled" in list(types)
    await check_books(db, shop.company_id)
    # twice: refused, nothing written
    before = await snapshot(db, shop)
    r = await client.post(f"/sales/{order_id}/void", json={"reason": "x"}, headers=shop.headers)
    assert r.status_code in (409, 422), r.text
    assert await snapshot(db, shop) == before


async def test_void_of_credit_sale_with_negative_stock(client, db) -> None:
    shop = await make_shop(db, allow_negative_stock=True)
    tea = shop.products["tea"]  # no stock: the sale makes a deficit layer
    r = await client.post(
        "/sales",
        json=sale(shop, [{"xid": shop.xid("tea"), "quantity": 2, "unit_price": 9}]),
        headers=shop.headers,
    )
    assert r.status_code == 200, r.text
    r = await client.post(
        f"/sales/{r.json()['invoice_number']}/void", json={"reason": "wrong"}, headers=shop.headers
    )
    assert r.status_code == 200, r.text
    assert await stock_of(db, tea, shop.warehouse_id) == 0
    balance = await client.get(
        "/payments/user-invoices", params={"user_id": shop.customer_id}, headers=shop.headers
    )
    assert balance.json()["data"]["user"]["balance"] == "0.00"
    await check_books(db, shop.company_id)


async def test_void_refused_after_a_return_or_a_later_payment(client, shop, db) -> None:
    one = sale(shop, [{"xid": shop.xid("apple"), "quantity": 2, "unit_price": "3.50"}])
    first = (await client.post("/sales", json=one, headers=shop.headers)).json()
    second = (await client.post("/sales", json=one, headers=shop.headers)).json()
    r = await client.post(
        "/sales-returns",
        json={
            "user_id": shop.customer_id,
            "order_date": DAY,
            "invoice_number": first["invoice_number"],
            "items": [{"product_id": shop.products["apple"], "quantity": 1, "unit_price": "3.50"}],
        },
        headers=shop.headers,
    )
    assert r.status_code == 200, r.text
    r = await client.post(
        "/payments",
        json={
            "user_id": shop.customer_id,
            "payment_type": "in",
            "amount": "1.00",
            "payment_mode_id": "cash",
            "invoices": [{"order_id": second["order_id"], "amount": "1.00"}],
        },
        headers=shop.headers,
    )
    assert r.status_code == 200, r.text
    before = await snapshot(db, shop)
    for order in (first, second):
        r = await client.post(
            f"/sales/{order['order_id']}/void", json={"reason": "x"}, headers=shop.headers
        )
        assert r.status_code == 422, r.text
        assert "order_id" in r.json()["errors"]
    assert await snapshot(db, shop) == before
    await check_books(db, shop.company_id)


@pytest.mark.parametrize(
    ("path", "body", "status", "field"),
    [
        ("/sales/{other}/void", {"reason": "x"}, 404, None),
        ("/sales/999999999/void", {"reason": "x"}, 404, None),
        ("/sales/{own}/void", {"reason": ""}, 422, "reason"),
        ("/sales/{own}/void", {"reason": "   "}, 422, "reason"),
        ("/sales/{own}/void", {"reason": "a\x00b"}, 422, "reason"),
        ("/sales/{own}/void", {"reason": "a\x1bb"}, 422, "reason"),
        ("/sales/{own}/void", {"reason": "x" * 501}, 422, "reason"),
        ("/sales/{own}/void", {}, 422, "reason"),
        ("/sales/{own}/void", {"reason": 5}, 422, "reason"),
    ],
)
async def test_void_bad_input(client, shop, db, path, body, status, field) -> None:
    own = (
        await client.post(
            "/sales",
            json=sale(shop, [{"xid": shop.xid("apple"), "quantity": 1, "unit_price": 1}]),
            headers=shop.headers,
        )
    ).json()["order_id"]
    other = (
        await client.post(
            "/sales",
            json=sale(shop, [{"xid": shop.other_products["coffee"], "quantity": 1,
                              "unit_price": 1}]),
            headers=shop.other_key.headers,
        )
    ).json()["order_id"]  # fmt: skip
    before = await snapshot(db, shop)
    r = await client.post(path.format(own=own, other=other), json=body, headers=shop.headers)
    assert r.status_code == status, r.text
    if field:
        assert field in r.json()["errors"], r.text
    assert await snapshot(db, shop) == before


async def test_void_racing_a_payment(client, db, backend) -> None:
    """One wins; the other is refused with a clear 4xx; the books balance."""
    for _ in range(3):
        shop = await make_shop(db)
        body = sale(shop, [{"xid": shop.xid("apple"), "quantity": 2, "unit_price": "3.50"}])
        order_id = (await client.post("/sales", json=body, headers=shop.headers)).json()["order_id"]
        pay = {
            "user_id": shop.customer_id,
            "payment_type": "in",
            "amount": "7.00",
            "payment_mode_id": "cash",
            "invoices": [{"order_id": order_id, "amount": "7.00"}],
        }
        void, paid = await asyncio.gather(
            client.post(f"/sales/{order_id}/void", json={"reason": "x"}, headers=shop.headers),
            client.post("/payments", json=pay, headers=shop.headers),
        )
        codes = sorted([void.status_code, paid.status_code])
        assert codes[0] == 200 and codes[1] in (409, 422), (void.text, paid.text)
        await check_books(db, shop.company_id)
        refunds = await db.read(
            lambda s, sh=shop: s.scalar(
                select(func.count()).where(
                    Payment.company_id == sh.company_id, Payment.payment_type == "out"
                )
            )
        )
        assert refunds == 0
