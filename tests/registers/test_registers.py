"""The register's server side (DESIGN.md §15, issue 24): pairing a device to a
branch, its credential, cashiers' PINs, the heartbeat shown in the back office,
offline sales below zero, register invoice numbers and shift references."""

from __future__ import annotations

import base64
import hashlib
from decimal import Decimal
from typing import Any

import httpx
from sqlalchemy import func, select

from tests.admin_helpers import ADMIN, login
from tests.factories import Shop
from tests.invariants import check_books
from tests.web_helpers import (
    STAFF_PASSWORD,
    add_staff,
    csrf_of,
    form_token_of,
    owner_email,
    sign_in,
)
from tillbook.db import Database
from tillbook.models import AuditEvent, Listing, Order, OutboxEvent, StockAlert, User

D = Decimal
DAY = "2026-11-20"


async def staff_login(client: httpx.AsyncClient, email: str) -> dict[str, str]:
    r = await client.post(f"{ADMIN}/login", json={"email": email, "password": STAFF_PASSWORD})
    assert r.status_code == 200, r.text
    return {"Authorization": f"Bearer {r.json()['token']}"}


async def pair(
    client: httpx.AsyncClient, admin: dict[str, str], warehouse_id: int, name: str, **extra: Any
) -> httpx.Response:
    return await client.post(
        f"{ADMIN}/registers",
        json={"warehouse_id": warehouse_id, "name": name},
        headers={**admin, **extra},
    )


async def paired(
    client: httpx.AsyncClient, admin: dict[str, str], warehouse_id: int, name: str
) -> dict[str, Any]:
    r = await pair(client, admin, warehouse_id, name)
    assert r.status_code == 201, r.text
    data: dict[str, Any] = r.json()["data"]
    return data


def credential(data: dict[str, Any]) -> dict[str, str]:
    return {
        "X-Service-Public-Key": data["public_key"],
        "X-Service-Secret-Key": data["secret_key"],
        "Accept": "application/json",
    }


def sale(shop: Shop, item: str = "apple", qty: Any = 1, **extra: Any) -> dict[str, Any]:
    price = {"apple": "3.50", "tea": "9.99"}[item]
    return {
        "user_id": shop.walk_in_id,
        "order_date": DAY,
        "product_items": [{"xid": shop.xid(item), "quantity": qty, "unit_price": price}],
        **extra,
    }


async def staff_id(db: Database, email: str) -> int:
    return int(await db.read(lambda s: s.scalar(select(User.id).where(User.email == email))))


async def stock(db: Database, shop: Shop, item: str) -> Decimal:
    return D(
        await db.read(
            lambda s: s.scalar(
                select(Listing.current_stock).where(
                    Listing.warehouse_id == shop.warehouse_id,
                    Listing.product_id == shop.products[item],
                )
            )
        )
    )


# ------------------------------------------------------------------------ pairing


async def test_an_owner_pairs_a_register_whose_credential_works(client, db, shop) -> None:
    owner = await login(client, db, shop)
    r = await pair(client, owner, shop.warehouse_id, "Front till 1", **{"Idempotency-Key": "p-1"})
    assert r.status_code == 201, r.text
    first = r.json()["data"]
    assert first["prefix"] == "R1" and first["name"] == "Front till 1"
    assert first["warehouse_id"] == shop.warehouse_id and first["warehouse_name"] == "Main street"
    assert first["secret_key"].startswith("sk_") and first["public_key"].startswith("pk_")
    assert first["company"]["id"] == shop.company_id and first["company"]["base_currency"]
    # the same pairing sent again answers the same register, without its secret
    again = await pair(
        client, owner, shop.warehouse_id, "Front till 1", **{"Idempotency-Key": "p-1"}
    )
    assert again.status_code == 201 and again.headers["Idempotent-Replayed"] == "true"
    assert again.json()["data"]["id"] == first["id"] and again.json()["data"]["secret_key"] is None
    second = await paired(client, owner, shop.warehouse_id, "Front till 2")
    assert second["prefix"] == "R2"

    till = credential(first)
    assert (await client.get("/products", headers=till)).status_code == 200
    me = (await client.get("/register", headers=till)).json()["data"]
    assert me["prefix"] == "R1" and me["name"] == "Front till 1"
    assert me["last_invoice_number"] is None and me["open_shift"] is None
    assert me["company_name"].startswith("Shop ")

    # an ordinary key is no register: 403 on every register endpoint
    for method, path in (
        ("GET", "/register"),
        ("GET", "/register/cashiers"),
        ("POST", "/register/heartbeat"),
    ):
        r = await client.request(
            method, path, headers=shop.headers, json={} if method == "POST" else None
        )
        assert r.status_code == 403, (path, r.text)

    audits = await db.read(
        lambda s: s.execute(
            select(AuditEvent.action, AuditEvent.entity_id).where(
                AuditEvent.company_id == shop.company_id, AuditEvent.entity_type == "register"
            )
        )
    )
    assert {(a, i) for a, i in audits.all()} == {("paired", first["id"]), ("paired", second["id"])}


async def test_a_branch_manager_pairs_for_their_branch_only(client, db, shop) -> None:
    owner = await login(client, db, shop)
    theirs = await staff_login(client, await add_staff(db, shop, "manager", shop.warehouse_id))
    branches = (await client.get(f"{ADMIN}/registers/branches", headers=theirs)).json()["data"]
    assert [b["id"] for b in branches] == [shop.warehouse_id]
    mine = await paired(client, theirs, shop.warehouse_id, "Counter")
    refused = await pair(client, theirs, shop.other_warehouse_id, "Harbour till")
    assert refused.status_code == 403 and "registers.manage" in refused.json()["message"]
    harbour = await paired(client, owner, shop.other_warehouse_id, "Harbour till")
    # the manager lists and revokes their branch's registers only
    listed = (await client.get(f"{ADMIN}/registers", headers=theirs)).json()["data"]
    assert [r["id"] for r in listed] == [mine["id"]]
    r = await client.post(f"{ADMIN}/registers/{harbour['id']}/revoke", headers=theirs)
    assert r.status_code == 403
    assert (await client.get("/register", headers=credential(harbour))).status_code == 200
    # a cashier pairs nothing
    cashier = await staff_login(client, await add_staff(db, shop, "cashier", shop.warehouse_id))
    assert (await pair(client, cashier, shop.warehouse_id, "Mine")).status_code == 403
    owners_list = (await client.get(f"{ADMIN}/registers", headers=owner)).json()["data"]
    assert {r["id"] for r in owners_list} == {mine["id"], harbour["id"]}


async def test_heartbeat_in_the_back_office_and_a_revoked_register_refused(
    client, web, db, shop
) -> None:
    owner = await login(client, db, shop)
    reg = await paired(client, owner, shop.warehouse_id, "Front till 1")
    till = credential(reg)
    refused = {
        "key": "register-R1-sale-000004",
        "kind": "sale",
        "number": "R1-000004",
        "reason": "customer 99 not found",
        "at": "2026-11-20T10:00:00Z",
    }
    r = await client.post(
        "/register/heartbeat", json={"queued": 3, "attention": [refused]}, headers=till
    )
    assert r.status_code == 200, r.text
    assert r.json()["data"]["server_time"].endswith("Z")
    listed = (await client.get(f"{ADMIN}/registers", headers=owner)).json()["data"]
    assert listed[0]["queued"] == 3 and listed[0]["last_seen_at"] is not None
    assert listed[0]["attention"] == [refused]

    # Settings -> Registers in the browser
    await sign_in(web, await owner_email(db, shop), "correct horse battery")
    page = await web.get("/settings/registers")
    assert page.status_code == 200
    for shown in ("Front till 1", "R1", "Main street", "customer 99 not found", "R1-000004"):
        assert shown in page.text
    assert 'href="/settings/registers"' in page.text  # in the menu
    confirm = await web.get(f"/settings/registers/{reg['id']}/revoke")
    assert confirm.status_code == 200
    form = {"csrf": csrf_of(confirm.text), "form_token": form_token_of(confirm.text)}
    done = await web.post(f"/settings/registers/{reg['id']}/revoke", data=form)
    assert done.status_code == 303
    assert (await web.post(f"/settings/registers/{reg['id']}/revoke", data=form)).status_code == 303

    # its next request is refused, whatever it asks
    assert (await client.get("/register", headers=till)).status_code == 401
    assert (await client.post("/sales", json=sale(shop), headers=till)).status_code == 401
    listed = (await client.get(f"{ADMIN}/registers", headers=owner)).json()["data"]
    assert listed[0]["status"] == "revoked" and listed[0]["revoked_at"]
    actions = await db.read(
        lambda s: s.scalars(
            select(AuditEvent.action).where(
                AuditEvent.company_id == shop.company_id, AuditEvent.entity_type == "register"
            )
        )
    )
    assert sorted(actions) == ["paired", "revoked"]  # the second send changed nothing


async def test_scoped_manager_sees_their_branch_in_the_back_office(client, web, db, shop) -> None:
    owner = await login(client, db, shop)
    await paired(client, owner, shop.warehouse_id, "Main till")
    harbour = await paired(client, owner, shop.other_warehouse_id, "Harbour till")
    await sign_in(web, await add_staff(db, shop, "manager", shop.warehouse_id), STAFF_PASSWORD)
    page = await web.get("/settings/registers")
    assert page.status_code == 200
    assert "Main till" in page.text and "Harbour till" not in page.text
    assert (await web.get(f"/settings/registers/{harbour['id']}/revoke")).status_code == 403


# ------------------------------------------------------------------------ cashiers


async def test_cashiers_with_pins_checked_with_pbkdf2(client, web, db, shop) -> None:
    owner = await login(client, db, shop)
    reg = await paired(client, owner, shop.warehouse_id, "Front till 1")
    here = await staff_id(db, await add_staff(db, shop, "cashier", shop.warehouse_id))
    elsewhere_email = await add_staff(db, shop, "cashier", shop.other_warehouse_id)
    elsewhere = await staff_id(db, elsewhere_email)
    no_pin = await staff_id(db, await add_staff(db, shop, "manager", None))

    r = await client.put(f"{ADMIN}/staff/{here}/pin", json={"pin": "2468"}, headers=owner)
    assert r.status_code == 200, r.text
    assert r.json()["data"]["has_pin"] is True and "2468" not in r.text
    for bad in ("12a4", "123", "123456789", "١٢٣٤"):
        r = await client.put(f"{ADMIN}/staff/{here}/pin", json={"pin": bad}, headers=owner)
        assert r.status_code == 422 and "pin" in r.json()["errors"], bad
    # a cashier sets their own PIN, not someone else's
    theirs = await staff_login(client, elsewhere_email)
    r = await client.put(f"{ADMIN}/staff/{elsewhere}/pin", json={"pin": "13579"}, headers=theirs)
    assert r.status_code == 200, r.text
    r = await client.put(f"{ADMIN}/staff/{here}/pin", json={"pin": "0000"}, headers=theirs)
    assert r.status_code == 403

    # the owner's PIN through the staff page
    await sign_in(web, await owner_email(db, shop), "correct horse battery")
    owner_id = await staff_id(db, await owner_email(db, shop))
    member = await web.get(f"/settings/staff/{owner_id}")
    assert 'id="pin-form"' in member.text
    form = {"csrf": csrf_of(member.text), "form_token": form_token_of(member.text)}
    bad = await web.post(f"/settings/staff/{owner_id}/pin", data={**form, "pin": "12"})
    assert bad.status_code == 422
    member = await web.get(f"/settings/staff/{owner_id}")
    form = {"csrf": csrf_of(member.text), "form_token": form_token_of(member.text)}
    ok = await web.post(f"/settings/staff/{owner_id}/pin", data={**form, "pin": "97531"})
    assert ok.status_code == 303

    r = await client.get("/register/cashiers", headers=credential(reg))
    assert r.status_code == 200, r.text
    cashiers = {c["id"]: c for c in r.json()["data"]}
    assert set(cashiers) == {here, owner_id}  # another branch's and a PIN-less one: not here
    assert no_pin not in cashiers and elsewhere not in cashiers
    assert cashiers[here]["may_refund_without_invoice"] is False
    assert cashiers[owner_id]["may_refund_without_invoice"] is True
    for who, pin in ((here, "2468"), (owner_id, "97531")):
        params = cashiers[who]["pin"]
        assert params["algorithm"] == "PBKDF2-SHA256" and params["iterations"] == 100_000
        salt = base64.b64decode(params["salt"])
        assert len(salt) == 16
        derived = hashlib.pbkdf2_hmac("sha256", pin.encode(), salt, params["iterations"], 32)
        assert base64.b64encode(derived).decode() == params["hash"]
        wrong = hashlib.pbkdf2_hmac("sha256", b"0000", salt, params["iterations"], 32)
        assert base64.b64encode(wrong).decode() != params["hash"]
    audit = await db.read(
        lambda s: s.scalars(
            select(AuditEvent.after).where(
                AuditEvent.company_id == shop.company_id,
                AuditEvent.entity_type == "staff",
                AuditEvent.entity_id == here,
                AuditEvent.action == "updated",
            )
        )
    )
    audit = list(audit)
    assert all("2468" not in (a or "") for a in audit) and any("pin" in (a or "") for a in audit)


# ------------------------------------------------------------------------ selling


async def test_offline_is_a_registers_word_only(client, db, shop) -> None:
    for path in ("/sales", "/sales/preview"):
        r = await client.post(path, json=sale(shop, offline=True), headers=shop.headers)
        assert r.status_code == 422 and "offline" in r.json()["errors"], r.text
    r = await client.post("/sales", json=sale(shop, offline="yes"), headers=shop.headers)
    assert r.status_code == 422


async def test_an_offline_sale_below_zero_with_its_cashier(client, db, shop) -> None:
    owner = await login(client, db, shop)
    reg = await paired(client, owner, shop.warehouse_id, "Front till 1")
    till = credential(reg)
    cashier_email = await add_staff(db, shop, "cashier", shop.warehouse_id)
    cashier = await staff_id(db, cashier_email)
    other = await staff_id(db, await add_staff(db, shop, "cashier", shop.other_warehouse_id))
    assert await stock(db, shop, "tea") == 0

    # online, the branch's policy holds: no stock, no sale
    r = await client.post("/sales", json=sale(shop, "tea", 2), headers=till)
    assert r.status_code == 422, r.text
    # a cashier of another branch does not sell here
    r = await client.post("/sales/preview", json=sale(shop, staff_member=other), headers=till)
    assert r.status_code == 422 and "staff_member" in r.json()["errors"]
    r = await client.post("/sales/preview", json=sale(shop, staff_member=cashier, offline=True),
                          headers=till)  # fmt: skip
    assert r.status_code == 200, r.text

    body = sale(
        shop, "tea", 2, offline=True, staff_member=cashier, invoice_number="R1-000001",
        all_payments=[{"amount": "19.98", "payment_mode_id": shop.cash_mode_id}],
    )  # fmt: skip
    r = await client.post(
        "/sales", json=body, headers={**till, "Idempotency-Key": "register-R1-sale-000001"}
    )
    assert r.status_code == 200, r.text
    order_id = r.json()["order_id"]
    assert r.json()["invoice_number"] == "R1-000001"
    assert await stock(db, shop, "tea") == -2
    alerts = await db.read(
        lambda s: s.scalars(select(StockAlert).where(StockAlert.source_id == order_id))
    )
    alerts = list(alerts)
    assert len(alerts) == 1 and alerts[0].quantity_short == 2
    assert alerts[0].product_id == shop.products["tea"] and alerts[0].source_type == "sale"
    events = await db.read(
        lambda s: s.execute(
            select(OutboxEvent.type, OutboxEvent.payload).where(
                OutboxEvent.company_id == shop.company_id
            )
        )
    )
    discrepancies = [p for t, p in events.all() if t == "stock.discrepancy"]
    assert len(discrepancies) == 1 and "R1-000001" in discrepancies[0]

    detail = (await client.get(f"/sales/{order_id}", headers=till)).json()["data"]
    assert detail["staff_member"]["id"] == cashier and detail["staff_member"]["name"] == "A cashier"
    receipt = await client.get(f"/sales/{order_id}/receipt", headers=till)
    assert receipt.status_code == 200 and "A cashier" in receipt.text
    me = (await client.get("/register", headers=till)).json()["data"]
    assert me["last_invoice_number"] == "R1-000001"
    await check_books(db, shop.company_id)


async def test_two_registers_sell_with_their_own_numbers_once_each(client, db, shop) -> None:
    owner = await login(client, db, shop)
    tills = [
        credential(await paired(client, owner, shop.warehouse_id, f"Till {n}")) for n in (1, 2)
    ]
    before = await stock(db, shop, "apple")
    answers: dict[str, int] = {}
    for n in range(1, 4):
        for prefix, till in zip(("R1", "R2"), tills, strict=True):
            number = f"{prefix}-{n:06d}"
            body = sale(
                shop, "apple", 1, offline=True, invoice_number=number,
                all_payments=[{"amount": "3.50", "payment_mode_id": shop.cash_mode_id}],
            )  # fmt: skip
            headers = {**till, "Idempotency-Key": f"register-{prefix}-sale-{n:06d}"}
            first = await client.post("/sales", json=body, headers=headers)
            assert first.status_code == 200, first.text
            replay = await client.post("/sales", json=body, headers=headers)
            assert replay.status_code == 200 and replay.headers["Idempotent-Replayed"] == "true"
            assert replay.json()["order_id"] == first.json()["order_id"]
            answers[number] = first.json()["order_id"]
    numbers = await db.read(
        lambda s: s.scalars(
            select(Order.invoice_number).where(
                Order.company_id == shop.company_id, Order.order_type == "sales"
            )
        )
    )
    assert sorted(numbers) == sorted(answers)  # six sales, each once
    assert await stock(db, shop, "apple") == before - 6
    for prefix, till in zip(("R1", "R2"), tills, strict=True):
        me = (await client.get("/register", headers=till)).json()["data"]
        assert me["last_invoice_number"] == f"{prefix}-000003"
    await check_books(db, shop.company_id)


# ------------------------------------------------------------------------ shifts


async def test_a_registers_shift_by_its_reference(client, db, shop) -> None:
    owner = await login(client, db, shop)
    r1 = credential(await paired(client, owner, shop.warehouse_id, "Till 1"))
    r2 = credential(await paired(client, owner, shop.warehouse_id, "Till 2"))
    opening = {"opening_float": "50.00", "reference": "R1-S000001"}
    r = await client.post("/shifts", json=opening, headers={**r1, "Idempotency-Key": "r1-s1"})
    assert r.status_code == 200, r.text
    shift = r.json()["data"]
    assert shift["reference"] == "R1-S000001" and shift["register"] == "R1"
    # sent again (another key, a wiped queue): the same shift
    again = await client.post("/shifts", json=opening, headers=r1)
    assert again.status_code == 200 and again.json()["data"]["id"] == shift["id"]
    # the other register of the branch holds its own drawer
    other = await client.post("/shifts", json={"reference": "R2-S000001"}, headers=r2)
    assert other.status_code == 200 and other.json()["data"]["id"] != shift["id"]
    bad = await client.post("/shifts", json={"reference": "12345"}, headers=r1)
    assert bad.status_code == 422 and "reference" in bad.json()["errors"]

    me = (await client.get("/register", headers=r1)).json()["data"]
    assert me["open_shift"] == {"id": shift["id"], "reference": "R1-S000001"}
    tender = [{"amount": "7.00", "payment_mode_id": shop.cash_mode_id}]
    body = sale(shop, "apple", 2, offline=True, shift_id="R1-S000001",
                invoice_number="R1-000001", all_payments=tender)  # fmt: skip
    r = await client.post("/sales", json=body, headers=r1)
    assert r.status_code == 200, r.text
    detail = (await client.get(f"/sales/{r.json()['order_id']}", headers=r1)).json()["data"]
    assert detail["shift_id"] == shift["id"]
    r = await client.post("/sales", json=sale(shop, shift_id="R9-S000001"), headers=r1)
    assert r.status_code == 422 and "shift_id" in r.json()["errors"]

    bank = next(
        m["id"]
        for m in (await client.get("/payment-modes", headers=r1)).json()["data"]
        if m["code"] != "cash"
    )
    cash = {"direction": "out", "amount": "20.00", "reason": "to the bank", "payment_mode_id": bank}
    r = await client.post("/shifts/R1-S000001/cash", json=cash, headers=r1)
    assert r.status_code == 200, r.text
    x = (await client.get("/shifts/R1-S000001", headers=r1)).json()["data"]
    assert x["id"] == shift["id"] and x["report"] == "X"
    assert (
        await client.get("/shifts/R1-S000001", headers=shop.other_key.headers)
    ).status_code == 404
    counted = {"counted": [{"payment_mode_id": shop.cash_mode_id, "amount": "37.00"}]}
    r = await client.post("/shifts/R1-S000001/close", json=counted, headers=r1)
    assert r.status_code == 200, r.text
    z = r.json()["data"]
    assert z["report"] == "Z" and z["status"] == "closed"
    # the opening sent once more after the close still answers that shift
    late = await client.post("/shifts", json=opening, headers=r1)
    assert late.status_code == 200 and late.json()["data"]["id"] == shift["id"]
    count = await db.read(
        lambda s: s.scalar(
            select(func.count()).select_from(Order).where(Order.company_id == shop.company_id)
        )
    )
    assert count == 1
    await check_books(db, shop.company_id)
