"""The till's reference reads (payment modes, taxes, units, expense categories,
suppliers) and POST /customers: company data only, archived rows left out, the
new customer idempotent like every public write."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import select, update

from tests.admin_helpers import assert_error
from tests.factories import make_shop
from tests.invariants import check_books
from tillbook.kit import xid
from tillbook.models import AuditEvent, ExpenseCategory, PaymentMode, Tax, Unit, User


async def _data(client, shop, path, **params):
    r = await client.get(path, params=params, headers=shop.headers)
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["status"] == "success"
    return body["data"]


async def test_reference_lists_and_archived_rows(client, db, shop):
    other = await make_shop(db)
    modes = await _data(client, shop, "/payment-modes")
    assert [(m["code"], m["name"], m["account_code"]) for m in modes] == [
        ("cash", "Cash", "11101"),
        ("card", "Card", "11105"),
        ("bank", "Bank", "11110"),
        ("gift-card", "Gift card", "21300"),
        ("loyalty", "Loyalty points", "21400"),
    ]
    assert modes[0]["id"] == shop.cash_mode_id and modes[0]["xid"] == xid.encode(shop.cash_mode_id)
    taxes = await _data(client, shop, "/taxes")
    assert {t["id"]: (t["rate"], t["inclusive"]) for t in taxes} == {
        shop.tax10_id: (10, False),
        shop.tax_incl_id: (20, True),
    }
    units = await _data(client, shop, "/units")
    assert {u["id"]: u["short_name"] for u in units} == {
        shop.box_unit_id: "box",
        shop.piece_unit_id: "pc",
    }
    cats = await _data(client, shop, "/expense-categories")
    assert {c["account_code"] for c in cats} == {"52100", "52300", "52900"}
    other_modes = await _data(client, other, "/payment-modes")
    assert not {m["id"] for m in modes} & {m["id"] for m in other_modes}

    async def archive(session):
        now = dt.datetime.now(dt.UTC)
        for model, id_ in (
            (Tax, shop.tax10_id),
            (Unit, shop.box_unit_id),
            (PaymentMode, shop.card_mode_id),
        ):
            await session.execute(update(model).where(model.id == id_).values(archived_at=now))
        await session.execute(
            update(ExpenseCategory)
            .where(
                ExpenseCategory.company_id == shop.company_id,
                ExpenseCategory.name.like("Fuel%"),
            )
            .values(archived_at=now)
        )

    await db.write(archive)
    assert [t["id"] for t in await _data(client, shop, "/taxes")] == [shop.tax_incl_id]
    assert [u["id"] for u in await _data(client, shop, "/units")] == [shop.piece_unit_id]
    assert [m["code"] for m in await _data(client, shop, "/payment-modes")] == [
        "cash",
        "bank",
        "gift-card",
        "loyalty",
    ]
    assert len(await _data(client, shop, "/expense-categories")) == 2
    for path in ("/payment-modes", "/taxes", "/units", "/expense-categories", "/suppliers"):
        assert (await client.get(path)).status_code == 401


async def test_suppliers_list_search_and_paging(client, shop):
    page = await _data(client, shop, "/suppliers")
    assert page["total"] == 1
    assert page["data"] == [
        {
            "id": shop.supplier_id,
            "xid": xid.encode(shop.supplier_id),
            "name": "Sam Supplier",
            "phone": "555-0200",
            "email": None,
            "balance": "0.00",
        }
    ]
    assert (await _data(client, shop, "/suppliers", search="0200"))["total"] == 1
    assert (await _data(client, shop, "/suppliers", search="Ada"))["total"] == 0
    for params, field in (
        ({"limit": "x"}, "limit"),
        ({"page": "0"}, "page"),
        ({"search": "\x01"}, "search"),
    ):
        r = await client.get("/suppliers", params=params, headers=shop.headers)
        assert_error(r, 422, field)
    # a purchase on credit shows in this warehouse's supplier balance only
    r = await client.post(
        "/purchases",
        json={
            "user_id": shop.supplier_id,
            "order_date": "2026-11-20",
            "product_items": [{"xid": shop.xid("tea"), "quantity": 2, "unit_price": "5"}],
        },
        headers=shop.headers,
    )
    assert r.status_code == 200, r.text
    assert (await _data(client, shop, "/suppliers"))["data"][0]["balance"] == "10.00"
    r = await client.get("/suppliers", headers=shop.other_key.headers)
    assert r.json()["data"]["data"][0]["balance"] == "0.00"


async def test_post_customer_is_idempotent_and_in_the_list_shape(client, db, shop):
    body = {"name": "Till Tom", "phone": "555-7", "email": "tom@example.com", "code": "T-1"}
    h = {**shop.headers, "Idempotency-Key": "new-customer-1"}
    r = await client.post("/customers", json=body, headers=h)
    assert r.status_code == 200, r.text
    created = r.json()
    assert created["status"] == "success"
    tom = created["data"]
    listed = await _data(client, shop, "/customers", search="Till Tom")
    assert listed["data"] == [tom]
    assert tom["balance"] == "0.00" and tom["is_walk_in"] is False

    again = await client.post("/customers", json=body, headers=h)
    assert again.status_code == 200 and again.json() == created
    assert again.headers.get("idempotent-replayed") == "true"
    changed = await client.post("/customers", json=body | {"name": "Other"}, headers=h)
    assert_error(changed, 422)
    # unique_id in the body works as the token too
    token = body | {"code": "T-2", "unique_id": "till-uid-1"}
    first = await client.post("/customers", json=token, headers=shop.headers)
    second = await client.post("/customers", json=token, headers=shop.headers)
    assert first.json() == second.json()

    async def count(session):
        rows = await session.execute(
            select(User.id).where(User.company_id == shop.company_id, User.name == "Till Tom")
        )
        return len(rows.all())

    assert await db.read(count) == 2
    audit = await db.read(
        lambda s: s.scalar(
            select(AuditEvent.action).where(
                AuditEvent.entity_id == tom["id"], AuditEvent.entity_type == "customer"
            )
        )
    )
    assert audit == "customer.created"
    # the new customer can buy at once
    sale = {
        "user_id": tom["id"],
        "order_date": "2026-11-20",
        "product_items": [{"xid": shop.xid("apple"), "quantity": 1, "unit_price": 3.5}],
    }
    assert (await client.post("/sales", json=sale, headers=shop.headers)).status_code == 200
    await check_books(db, shop.company_id)


async def test_post_customer_bad_input(client, shop):
    await client.post("/customers", json={"name": "Dup", "code": "DUP-1"}, headers=shop.headers)
    for body, field in [
        ({}, "name"),
        ({"name": ""}, "name"),
        ({"name": ["x"]}, "name"),
        ({"name": "x" * 201}, "name"),
        ({"name": "x", "email": "no"}, "email"),
        ({"name": "x", "phone": "1" * 51}, "phone"),
        ({"name": "x", "code": "DUP-1"}, "code"),
        ({"name": "x\x07"}, "name"),
    ]:
        r = await client.post("/customers", json=body, headers=shop.headers)
        assert_error(r, 422, field)
    r = await client.post("/customers", content=b"name=x", headers=shop.headers)
    assert_error(r, 415)
