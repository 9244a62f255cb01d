"""Customers and suppliers set up in the back office: create with an opening balance
posted once, read with an ETag, edit on a version, archive; what a client can send
that must be refused; archived parties refused on new records; the credit limit."""

from __future__ import annotations

from decimal import Decimal

import pytest
from sqlalchemy import select

from tests.admin_helpers import ADMIN, assert_error, login, sale_body
from tests.cli_run import cli_run  # noqa: F401 (fixture)
from tests.factories import make_shop
from tests.invariants import check_books, gl_balance
from tillbook.models import AuditEvent, JournalEntry, JournalLine

D = Decimal


async def _new(client, headers, kind="customers", **fields):
    r = await client.post(f"{ADMIN}/{kind}", json=fields, headers=headers)
    assert r.status_code == 200, r.text
    return r.json()["data"]


async def _journal(db, company_id, party_id):
    async def read(s):
        rows = await s.execute(
            select(JournalLine.debit, JournalLine.credit, JournalLine.party_id, JournalEntry)
            .join(JournalEntry, JournalEntry.id == JournalLine.entry_id)
            .where(JournalEntry.company_id == company_id, JournalEntry.source_id == party_id)
        )
        return rows.all()

    return await db.read(read)


async def test_opening_balances_post_once_and_the_books_balance(client, db, shop):
    h = await login(client, db, shop)
    customer = await _new(
        client,
        h,
        name="  Bea Buyer ",
        code="C-1",
        email="bea@example.com",
        opening_balance="120.50",
    )
    assert customer["name"] == "Bea Buyer" and customer["balance"] == "120.50"
    assert customer["version"] == 1 and customer["type"] == "customer"
    supplier = await _new(
        client,
        h,
        "suppliers",
        name="Otto Wholesale",
        code="S-1",
        opening_balance="80.00",
        warehouse_id=shop.other_warehouse_id,
    )
    assert supplier["balance"] == "80.00"

    async def gl(s):
        return (
            await gl_balance(s, shop.company_id, "11500", shop.warehouse_id),
            await gl_balance(s, shop.company_id, "21100", shop.other_warehouse_id),
            await gl_balance(s, shop.company_id, "31100"),
        )

    ar, ap, equity = await db.read(gl)
    assert ar == D("120.50")  # the first warehouse, by default
    assert ap == D("-80.00")  # in the warehouse the supplier's balance names
    # 31100: credit 120.50 (customer) and debit 80.00 (supplier), beside opening stock
    lines = await _journal(db, shop.company_id, customer["id"])
    assert sorted((str(d), str(c), p) for d, c, p, _ in lines) == [
        ("0.00", "120.50", None),
        ("120.50", "0.00", customer["id"]),
    ]
    assert all(e.source_type == "opening_balance" for *_, e in lines)
    assert equity < 0
    await check_books(db, shop.company_id)

    # the till of each warehouse sees its own balance only
    r = await client.get("/customers", params={"search": "C-1"}, headers=shop.headers)
    assert [c["balance"] for c in r.json()["data"]["data"]] == ["120.50"]
    r = await client.get("/suppliers", params={"search": "otto"}, headers=shop.headers)
    assert [c["balance"] for c in r.json()["data"]["data"]] == ["0.00"]
    r = await client.get("/suppliers", params={"search": "otto"}, headers=shop.other_key.headers)
    assert [c["balance"] for c in r.json()["data"]["data"]] == ["80.00"]


async def test_read_edit_with_versions_and_audit(client, db, shop):
    h = await login(client, db, shop)
    c = await _new(client, h, name="Cleo", code="C-2", credit_limit="50")
    url = f"{ADMIN}/customers/{c['id']}"
    r = await client.get(url, headers=h)
    assert r.status_code == 200 and r.headers["etag"] == '"1"'
    assert r.json()["data"]["credit_limit"] == "50.00"

    assert_error(await client.patch(url, json={"phone": "1"}, headers=h), 428)
    r = await client.patch(url, json={"phone": "555"}, headers={**h, "If-Match": '"1"'})
    assert r.status_code == 200, r.text
    assert r.headers["etag"] == '"2"' and r.json()["data"]["phone"] == "555"
    # a stale version is refused; the body's version works like If-Match
    assert_error(await client.patch(url, json={"phone": "9", "version": 1}, headers=h), 412)
    r = await client.patch(url, json={"email": None, "phone": None, "version": 2}, headers=h)
    assert r.status_code == 200 and r.json()["data"]["phone"] is None
    assert r.json()["data"]["version"] == 3
    # nothing changed: no new version
    r = await client.patch(url, json={"name": "Cleo", "version": 3}, headers=h)
    assert r.json()["data"]["version"] == 3

    async def events(s):
        rows = await s.execute(
            select(AuditEvent.action, AuditEvent.before, AuditEvent.after)
            .where(AuditEvent.entity_id == c["id"], AuditEvent.entity_type == "customer")
            .order_by(AuditEvent.id)
        )
        return rows.all()

    found = await db.read(events)
    assert [a for a, _, _ in found] == ["customer.created", "customer.updated", "customer.updated"]
    assert '"phone":"555"' in found[1][2].replace(" ", "")


async def test_duplicate_codes_and_bad_input(client, db, shop):
    h = await login(client, db, shop)
    await _new(client, h, name="Dora", code="DUP")
    # the same code is free for the other kind
    await _new(client, h, "suppliers", name="Dora Supplies", code="DUP")
    bad = [
        ({"name": "X", "code": "DUP"}, "code"),
        ({}, "name"),
        ({"name": "   "}, "name"),
        ({"name": 5}, "name"),
        ({"name": "x" * 201}, "name"),
        ({"name": "Nul\x00"}, "name"),
        ({"name": "X", "email": "not-an-email"}, "email"),
        ({"name": "X", "email": "a@b"}, "email"),
        ({"name": "X", "phone": "9" * 51}, "phone"),
        ({"name": "X", "code": "c" * 51}, "code"),
        ({"name": "X", "address": "a" * 501}, "address"),
        ({"name": "X", "credit_limit": "-1"}, "credit_limit"),
        ({"name": "X", "credit_limit": "1.001"}, "credit_limit"),
        ({"name": "X", "credit_limit": "1e30"}, "credit_limit"),
        ({"name": "X", "opening_balance": "-5"}, "opening_balance"),
        ({"name": "X", "opening_balance": "abc"}, "opening_balance"),
        ({"name": "X", "opening_balance": "1", "warehouse_id": 999999999}, "warehouse_id"),
        ({"name": "X", "warehouse_id": shop.warehouse_id}, "warehouse_id"),
    ]
    for body, field in bad:
        assert_error(await client.post(f"{ADMIN}/customers", json=body, headers=h), 422, field)
    assert_error(
        await client.post(f"{ADMIN}/suppliers", json={"name": "S", "credit_limit": "5"}, headers=h),
        422,
        "credit_limit",
    )
    r = await client.post(f"{ADMIN}/customers", content=b"{", headers=h)
    assert r.status_code == 415
    r = await client.post(
        f"{ADMIN}/customers", content=b"{", headers={**h, "Content-Type": "application/json"}
    )
    assert r.status_code == 400
    c = await _new(client, h, name="Edna", code="E-1")
    url = f"{ADMIN}/customers/{c['id']}"
    for body, field in [
        ({"code": "DUP", "version": 1}, "code"),
        ({"name": None, "version": 1}, "name"),
        ({"opening_balance": "5", "version": 1}, "opening_balance"),
        ({"email": "x", "version": 1}, "email"),
        ({"credit_limit": -1, "version": 1}, "credit_limit"),
    ]:
        assert_error(await client.patch(url, json=body, headers=h), 422, field)
    # another company's opening warehouse is not found
    other = await make_shop(db)
    assert_error(
        await client.post(
            f"{ADMIN}/customers",
            json={"name": "X", "opening_balance": "1", "warehouse_id": other.warehouse_id},
            headers=h,
        ),
        422,
        "warehouse_id",
    )


async def test_another_companys_party_is_not_found(client, db, shop):
    other = await make_shop(db)
    h = await login(client, db, shop)
    for path in (f"customers/{other.customer_id}", f"suppliers/{other.supplier_id}"):
        assert_error(await client.get(f"{ADMIN}/{path}", headers=h), 404)
        assert_error(
            await client.patch(f"{ADMIN}/{path}", json={"name": "x", "version": 1}, headers=h),
            404,
        )
        assert_error(await client.post(f"{ADMIN}/{path}/archive", headers=h), 404)
    # a supplier's id is not a customer
    assert_error(await client.get(f"{ADMIN}/customers/{shop.supplier_id}", headers=h), 404)
    assert_error(await client.get(f"{ADMIN}/customers/abc", headers=h), 404)
    r = await client.get(f"{ADMIN}/customers", headers=h)
    ids = {c["id"] for c in r.json()["data"]["data"]}
    assert shop.customer_id in ids and other.customer_id not in ids
    assert (await client.get(f"{ADMIN}/customers")).status_code == 401


async def test_archived_party_is_refused_and_left_out(client, db, shop):
    h = await login(client, db, shop)
    c = await _new(client, h, name="Fay", code="F-1")
    s = await _new(client, h, "suppliers", name="Gus", code="G-1")
    r = await client.post(f"{ADMIN}/customers/{c['id']}/archive", headers={**h, "If-Match": '"7"'})
    assert r.status_code == 412
    r = await client.post(f"{ADMIN}/customers/{c['id']}/archive", headers=h)
    assert r.status_code == 200 and r.json()["data"]["archived"] is True
    assert r.json()["data"]["version"] == 2
    r = await client.post(f"{ADMIN}/suppliers/{s['id']}/archive", headers=h)
    assert r.status_code == 200
    # twice: nothing changes
    r = await client.post(f"{ADMIN}/customers/{c['id']}/archive", headers=h)
    assert r.json()["data"]["version"] == 2

    sale = sale_body(shop) | {"user_id": c["id"]}
    body = assert_error(await client.post("/sales", json=sale, headers=shop.headers), 422)
    assert "archived" in body["errors"]["user_id"][0]
    purchase = {
        "user_id": s["id"],
        "order_date": "2026-11-20",
        "product_items": [{"xid": shop.xid("tea"), "quantity": 1, "unit_price": "5"}],
    }
    assert_error(
        await client.post("/purchases", json=purchase, headers=shop.headers), 422, "user_id"
    )
    payment = {
        "payment_type": "in",
        "user_id": c["id"],
        "amount": "1.00",
        "payment_mode_id": shop.cash_mode_id,
        "date": "2026-11-20",
    }
    assert_error(await client.post("/payments", json=payment, headers=shop.headers), 422, "user_id")
    ret = {
        "user_id": c["id"],
        "order_date": "2026-11-20",
        "items": [{"product_id": shop.xid("apple"), "quantity": 1, "unit_price": 3.5}],
    }
    assert_error(
        await client.post("/sales-returns", json=ret, headers=shop.headers), 422, "user_id"
    )

    r = await client.get("/customers", params={"search": "F"}, headers=shop.headers)
    assert c["id"] not in {x["id"] for x in r.json()["data"]["data"]}
    r = await client.get("/suppliers", headers=shop.headers)
    assert s["id"] not in {x["id"] for x in r.json()["data"]["data"]}
    r = await client.get(f"{ADMIN}/customers", headers=h)
    assert c["id"] not in {x["id"] for x in r.json()["data"]["data"]}
    r = await client.get(f"{ADMIN}/customers", params={"include_archived": "true"}, headers=h)
    assert c["id"] in {x["id"] for x in r.json()["data"]["data"]}
    assert_error(
        await client.get(f"{ADMIN}/customers", params={"include_archived": "maybe"}, headers=h),
        422,
        "include_archived",
    )
    # the code stays taken
    assert_error(
        await client.post(f"{ADMIN}/customers", json={"name": "F2", "code": "F-1"}, headers=h),
        422,
        "code",
    )


async def test_archive_refuses_walk_in_and_unsettled_balances(client, db, shop):
    h = await login(client, db, shop)
    assert_error(await client.post(f"{ADMIN}/customers/{shop.walk_in_id}/archive", headers=h), 409)
    owing = await _new(client, h, name="Hal", code="H-1", opening_balance="3.00")
    assert_error(await client.post(f"{ADMIN}/customers/{owing['id']}/archive", headers=h), 409)


async def test_credit_limit_refuses_a_credit_sale_over_it(client, db, shop):
    h = await login(client, db, shop)
    c = await _new(client, h, name="Ivy", code="I-1", credit_limit="10.00", opening_balance="5.00")
    one = sale_body(shop) | {"user_id": c["id"]}  # 3.50 on credit: 8.50 owed
    r = await client.post("/sales", json=one, headers=shop.headers)
    assert r.status_code == 200, r.text
    body = assert_error(await client.post("/sales", json=one, headers=shop.headers), 422)
    assert "credit limit" in body["errors"]["user_id"][0]
    # paid in cash: nothing left on credit, no limit applies
    paid = one | {"all_payments": [{"amount": "3.50", "payment_mode_id": shop.cash_mode_id}]}
    assert (await client.post("/sales", json=paid, headers=shop.headers)).status_code == 200
    # the limit is per warehouse balance: the other warehouse's till starts at 0 owed
    r = await client.patch(
        f"{ADMIN}/customers/{c['id']}", json={"credit_limit": None, "version": 1}, headers=h
    )
    assert r.status_code == 200 and r.json()["data"]["credit_limit"] is None
    assert (await client.post("/sales", json=one, headers=shop.headers)).status_code == 200
    await check_books(db, shop.company_id)


async def test_list_is_paged_and_searched(client, db, shop):
    h = await login(client, db, shop)
    for i in range(3):
        await _new(client, h, name=f"Page {i}", code=f"P-{i}", phone=f"77{i}")
    r = await client.get(f"{ADMIN}/customers", params={"search": "page", "limit": 2}, headers=h)
    data = r.json()["data"]
    assert data["total"] == 3 and len(data["data"]) == 2 and data["last_page"] == 2
    r = await client.get(f"{ADMIN}/customers", params={"search": "P-2"}, headers=h)
    assert [c["code"] for c in r.json()["data"]["data"]] == ["P-2"]
    assert_error(
        await client.get(f"{ADMIN}/customers", params={"page": "0"}, headers=h), 422, "page"
    )
    assert_error(
        await client.get(f"{ADMIN}/customers", params={"search": "\x00"}, headers=h), 422, "search"
    )


@pytest.mark.parametrize("kind", ["customer", "supplier"])
async def test_cli_create_list_archive(kind, shop, cli_run):  # noqa: F811
    run = cli_run
    made = run(kind, "create", "Jo CLI", "--company", str(shop.company_id), "--code", f"{kind}-J",
               "--opening-balance", "7.25", "--json")  # fmt: skip
    data = made.json()
    assert data["code"] == f"{kind}-J" and data["balance"] == "7.25"
    listed = run(kind, "list", "--company", str(shop.company_id), "--search", "Jo CLI", "--json")
    assert [p["id"] for p in listed.json()[f"{kind}s"]] == [data["id"]]
    # an unsettled balance cannot be archived: exit 1, one error line
    bad = run(kind, "archive", str(data["id"]), "--company", str(shop.company_id), code=1)
    assert bad.stderr.strip().splitlines()[-1].startswith("error:")
    plain = run(kind, "create", "No Balance", "--company", str(shop.company_id), "--json").json()
    done = run(kind, "archive", str(plain["id"]), "--company", str(shop.company_id), "--json")
    assert done.json()["archived"] is True
    bad = run(kind, "create", "X", "--company", str(shop.company_id), "--email", "nope", code=1)
    assert "error: email:" in bad.stderr
    run(kind, "create", "X", "--company", "999999999", code=1)
    run(kind, "archive", str(shop.customer_id if kind == "supplier" else shop.supplier_id),
        "--company", str(shop.company_id), code=1)  # fmt: skip
