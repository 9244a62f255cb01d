"""The back office's reference data over /api/v1/admin: units, categories, brands,
taxes, payment modes, expense categories and warehouses — create, read, edit with a
version, archive; bad input refused naming the field with nothing changed; another
company's ids not found; and what the changes mean for sales, payments, expenses,
the books and the outbox."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
from sqlalchemy import func, select

from tests.admin_helpers import login
from tests.factories import make_shop
from tests.invariants import check_books, gl_balance
from tillbook.catalog import reference
from tillbook.errors import ValidationFailed
from tillbook.kit.problems import Problems
from tillbook.models import (
    Account,
    AuditEvent,
    Brand,
    Category,
    Company,
    ExpenseCategory,
    OrderItem,
    OutboxEvent,
    PaymentMode,
    Tax,
    Unit,
    Warehouse,
)

D = Decimal
ADMIN = "http://testserver/api/v1/admin"

MODELS = {
    "units": Unit,
    "categories": Category,
    "brands": Brand,
    "taxes": Tax,
    "payment-modes": PaymentMode,
    "expense-categories": ExpenseCategory,
    "warehouses": Warehouse,
}


def valid_body(family: str, tag: str = "x") -> dict:
    return {
        "units": {"name": f"Crate {tag}", "short_name": f"cr{tag}"},
        "categories": {"name": f"Snacks {tag}"},
        "brands": {"name": f"Zeta {tag}"},
        "taxes": {"name": f"GST {tag}", "rate": "7.5"},
        "payment-modes": {"code": f"bank{tag}", "name": f"Bank {tag}", "account_code": "11101"},
        "expense-categories": {"name": f"Rent {tag}", "account_code": "52900"},
        "warehouses": {"name": f"Depot {tag}", "address": "1 Quay\nPort"},
    }[family]


async def snapshot(db, company_id: int) -> dict:
    """Every row count the reference routes could change, and the reference version."""

    async def read(s):
        counts = {}
        for name, model in MODELS.items():
            counts[name] = await s.scalar(
                select(func.count()).select_from(model).where(model.company_id == company_id)
            )
        for name, model in (("accounts", Account), ("audit", AuditEvent)):
            counts[name] = await s.scalar(
                select(func.count()).select_from(model).where(model.company_id == company_id)
            )
        versions = []
        for m in MODELS.values():
            versions.append(
                await s.scalar(select(func.sum(m.version)).where(m.company_id == company_id))
            )
        counts["versions"] = tuple(versions)
        counts["reference_version"] = await s.scalar(
            select(Company.reference_version).where(Company.id == company_id)
        )
        return counts

    return await db.read(read)


def assert_error(r, status: int, field: str | None = None) -> dict:
    assert r.status_code == status, r.text
    body = r.json()
    assert body["status"] == "error" and body["message"], body
    if field is not None:
        assert field in body.get("errors", {}), body
    return body


async def create(client, headers, family, body) -> dict:
    r = await client.post(f"{ADMIN}/{family}", json=body, headers=headers)
    assert r.status_code == 201, r.text
    assert r.headers["etag"] == '"1"'
    data = r.json()["data"]
    assert data["version"] == 1 and data["archived_at"] is None
    return data


# ------------------------------------------------------------- the lifecycle, every family

EDITS = {
    "units": {"name": "Crate large"},
    "categories": {"name": "Salty snacks", "image": "https://cdn.example.com/s.png"},
    "brands": {"name": "Zeta Foods", "slug": "zeta-foods"},
    "taxes": {"rate": "8"},
    "payment-modes": {"name": "Bank transfer"},
    "expense-categories": {"name": "Shop rent"},
    "warehouses": {"allow_negative_stock": True, "receipt_footer": "Thank you!\nCome again"},
}


@pytest.mark.parametrize("family", list(MODELS))
async def test_create_read_edit_archive(client, db, shop, family):
    headers = await login(client, db, shop)
    data = await create(client, headers, family, valid_body(family))
    url = f"{ADMIN}/{family}/{data['id']}"

    r = await client.get(url, headers=headers)
    assert r.status_code == 200 and r.headers["etag"] == '"1"'
    assert r.json()["data"] == data

    # An edit without a version is refused (428), a stale one too (412): nothing changes.
    before = await snapshot(db, shop.company_id)
    assert_error(await client.patch(url, json=EDITS[family], headers=headers), 428)
    stale = {**headers, "If-Match": '"7"'}
    assert_error(await client.patch(url, json=EDITS[family], headers=stale), 412)
    assert await snapshot(db, shop.company_id) == before

    r = await client.patch(url, json=EDITS[family], headers={**headers, "If-Match": '"1"'})
    assert r.status_code == 200, r.text
    assert r.headers["etag"] == '"2"'
    edited = r.json()["data"]
    assert edited["version"] == 2
    for key, value in EDITS[family].items():
        if key == "rate":
            assert edited[key] == 8
        else:
            assert edited[key] == value, (key, edited)

    # The first copy is stale now: an edit based on it is refused, by header or body.
    assert_error(
        await client.patch(url, json=EDITS[family], headers=stale | {"If-Match": '"1"'}), 412
    )
    assert_error(
        await client.patch(url, json={**EDITS[family], "version": 1}, headers=headers), 412
    )

    # (A new warehouse has no API keys, so it may be archived.)
    r = await client.post(f"{url}/archive", json={"version": 2}, headers=headers)
    assert r.status_code == 200, r.text
    archived = r.json()["data"]
    assert archived["version"] == 3 and archived["archived_at"] is not None
    assert_error(await client.post(f"{url}/archive", headers={**headers, "If-Match": '"3"'}), 409)

    listed = (await client.get(f"{ADMIN}/{family}", headers=headers)).json()
    assert data["id"] not in [row["id"] for row in listed["data"]]
    everything = (
        await client.get(f"{ADMIN}/{family}?include_archived=true&limit=100", headers=headers)
    ).json()
    assert data["id"] in [row["id"] for row in everything["data"]]
    assert everything["total"] == listed["total"] + 1

    # Every change was recorded, in order, by the admin.
    audit = await db.read(
        lambda s: s.execute(
            select(AuditEvent.action, AuditEvent.user_id)
            .where(AuditEvent.company_id == shop.company_id, AuditEvent.entity_id == data["id"])
            .order_by(AuditEvent.id)
        )
    )
    actions = [a for a, user in audit.all() if user is not None]
    assert [a.split(".")[1] for a in actions] == ["created", "updated", "archived"]


@pytest.mark.parametrize("family", list(MODELS))
async def test_another_companys_records_are_not_found(client, db, shop, family):
    other = await make_shop(db)
    theirs = await create(client, await login(client, db, other), family, valid_body(family))
    mine = await login(client, db, shop)
    before = await snapshot(db, other.company_id)
    url = f"{ADMIN}/{family}/{theirs['id']}"
    for r in (
        await client.get(url, headers=mine),
        await client.patch(url, json=EDITS[family], headers={**mine, "If-Match": '"1"'}),
        await client.post(f"{url}/archive", headers={**mine, "If-Match": '"1"'}),
        await client.get(f"{ADMIN}/{family}/99999999999", headers=mine),
        await client.get(f"{ADMIN}/{family}/abc", headers=mine),
    ):
        body = assert_error(r, 404)
        assert "not found" in body["message"]
    assert await snapshot(db, other.company_id) == before
    listed = (await client.get(f"{ADMIN}/{family}?include_archived=1", headers=mine)).json()
    assert theirs["id"] not in [row["id"] for row in listed["data"]]


# ------------------------------------------------------------------------ bad input

NUL = "bad\x00name"
CTRL = "bad\x07name"

BAD_CREATES = [
    ("units", {"name": 5, "short_name": "x"}, 422, "name"),
    ("units", {"name": "Crate", "short_name": "x" * 21}, 422, "short_name"),
    ("units", {"name": NUL, "short_name": "c"}, 422, "name"),
    ("units", {"name": "   ", "short_name": "c"}, 422, "name"),
    ("units", {"name": "piece", "short_name": "zz"}, 409, "name"),  # case-insensitive twin
    ("units", {"name": "Crate", "short_name": "PC"}, 409, "short_name"),
    ("categories", {"name": "Snacks", "parent_id": 99999999}, 422, "parent_id"),
    ("categories", {"name": "Snacks", "parent_id": "nope"}, 422, "parent_id"),
    ("categories", {"name": "Snacks", "parent_id": 1.5}, 422, "parent_id"),
    ("categories", {"name": "Snacks", "slug": "Not A Slug"}, 422, "slug"),
    ("categories", {"name": "Snacks", "image": "javascript:alert(1)"}, 422, "image"),
    ("categories", {"name": "drinks"}, 409, "name"),
    ("categories", {"name": "Other", "slug": "juice"}, 409, "slug"),
    ("categories", {"name": CTRL}, 422, "name"),
    ("brands", {"name": "ACME"}, 409, "name"),
    ("brands", {"name": ["Acme"]}, 422, "name"),
    ("brands", {"name": "B", "slug": "acme"}, 409, "slug"),
    ("brands", {"name": "B", "image": "x" * 501}, 422, "image"),
    ("taxes", {"name": "T", "rate": -1}, 422, "rate"),
    ("taxes", {"name": "T", "rate": "100.01"}, 422, "rate"),
    ("taxes", {"name": "T", "rate": "5.12345"}, 422, "rate"),
    ("taxes", {"name": "T", "rate": "NaN"}, 422, "rate"),
    ("taxes", {"name": "T", "rate": 5, "inclusive": "yes"}, 422, "inclusive"),
    ("taxes", {"name": "vat 10%", "rate": 5}, 409, "name"),
    ("taxes", {"name": "T" * 101, "rate": 5}, 422, "name"),
    ("taxes", {"rate": 5}, 422, "name"),
    ("payment-modes", {"code": "cash", "name": "Cash 2", "account_code": "11101"}, 409, "code"),
    ("payment-modes", {"code": "c2", "name": "cash", "account_code": "11101"}, 409, "name"),
    ("payment-modes", {"code": "c2", "name": "C2", "account_code": "41100"}, 422, "account_code"),
    ("payment-modes", {"code": "c2", "name": "C2", "account_code": "11100"}, 422, "account_code"),
    ("payment-modes", {"code": "c2", "name": "C2", "account_code": "99999"}, 422, "account_code"),
    ("payment-modes", {"code": "c2", "name": "C2"}, 422, "account_code"),
    (
        "payment-modes",
        {"code": "c2", "name": "C2", "account_code": "11101", "create_account": True},
        422,
        "account_code",
    ),
    ("payment-modes", {"code": "Has Space", "name": "C2", "create_account": True}, 422, "code"),
    ("payment-modes", {"code": "c\x002", "name": "C2", "create_account": True}, 422, "code"),
    ("expense-categories", {"name": "R", "account_code": "11101"}, 422, "account_code"),
    ("expense-categories", {"name": "R", "account_code": "51100"}, 422, "account_code"),
    ("expense-categories", {"name": "general expenses", "account_code": "52900"}, 409, "name"),
    ("expense-categories", {"name": "R", "create_account": "true"}, 422, "create_account"),
    ("warehouses", {"name": "main street"}, 409, "name"),
    ("warehouses", {"name": "W", "allow_negative_stock": 1}, 422, "allow_negative_stock"),
    ("warehouses", {"name": "W", "phone": "5" * 51}, 422, "phone"),
    ("warehouses", {"name": "W", "receipt_header": "Hi\x00"}, 422, "receipt_header"),
    ("warehouses", {"name": "W", "address": 12}, 422, "address"),
]


@pytest.mark.parametrize(("family", "body", "status", "field"), BAD_CREATES)
async def test_bad_creates_change_nothing(client, db, shop, family, body, status, field):
    headers = await login(client, db, shop)
    before = await snapshot(db, shop.company_id)
    r = await client.post(f"{ADMIN}/{family}", json=body, headers=headers)
    assert_error(r, status, field)
    assert await snapshot(db, shop.company_id) == before


@pytest.mark.parametrize("family", list(MODELS))
async def test_bodies_that_are_not_json_objects(client, db, shop, family):
    headers = await login(client, db, shop)
    before = await snapshot(db, shop.company_id)
    url = f"{ADMIN}/{family}"
    assert_error(
        await client.post(
            url, content=b"{", headers={**headers, "Content-Type": "application/json"}
        ),
        400,
    )
    assert_error(
        await client.post(
            url, content=b"[]", headers={**headers, "Content-Type": "application/json"}
        ),
        422,
        "body",
    )
    assert_error(
        await client.post(
            url, content=b"name=x", headers={**headers, "Content-Type": "text/plain"}
        ),
        415,
    )
    assert_error(
        await client.get(f"{url}?include_archived=maybe", headers=headers), 422, "include_archived"
    )
    assert_error(await client.get(f"{url}?page=0", headers=headers), 422, "page")
    assert await snapshot(db, shop.company_id) == before


async def test_other_companys_references_in_bodies_are_unknown(client, db, shop):
    other = await make_shop(db)
    headers = await login(client, db, shop)
    before = await snapshot(db, shop.company_id)
    r = await client.post(
        f"{ADMIN}/categories", json={"name": "X", "parent_id": other.category_id}, headers=headers
    )
    assert_error(r, 422, "parent_id")
    url = f"{ADMIN}/categories/{shop.child_category_id}"
    r = await client.patch(
        url, json={"parent_id": other.category_id, "version": 1}, headers=headers
    )
    assert_error(r, 422, "parent_id")
    assert await snapshot(db, shop.company_id) == before


# ------------------------------------------------------------------------ categories


async def test_a_category_cannot_move_under_itself_or_a_descendant(client, db, shop):
    headers = await login(client, db, shop)
    grandchild = await create(
        client, headers, "categories", {"name": "Orange", "parent_id": shop.child_category_id}
    )
    before = await snapshot(db, shop.company_id)
    root = f"{ADMIN}/categories/{shop.category_id}"
    for parent in (shop.category_id, shop.child_category_id, grandchild["id"]):
        r = await client.patch(root, json={"parent_id": parent, "version": 1}, headers=headers)
        body = assert_error(r, 422, "parent_id")
        assert "cannot be moved under" in body["errors"]["parent_id"][0]
    assert await snapshot(db, shop.company_id) == before

    # A legal move: the grandchild to the top, then under the root.
    url = f"{ADMIN}/categories/{grandchild['id']}"
    r = await client.patch(url, json={"parent_id": None, "version": 1}, headers=headers)
    assert r.status_code == 200 and r.json()["data"]["parent_id"] is None
    r = await client.patch(url, json={"parent_id": shop.category_id, "version": 2}, headers=headers)
    assert r.status_code == 200 and r.json()["data"]["parent_id"] == shop.category_id


async def test_archived_parent_and_live_children(client, db, shop):
    headers = await login(client, db, shop)
    # The root has a live child: archiving it is refused.
    root = f"{ADMIN}/categories/{shop.category_id}"
    assert_error(await client.post(f"{root}/archive", json={"version": 1}, headers=headers), 409)
    lone = await create(client, headers, "categories", {"name": "Lone"})
    r = await client.post(
        f"{ADMIN}/categories/{lone['id']}/archive", json={"version": 1}, headers=headers
    )
    assert r.status_code == 200
    before = await snapshot(db, shop.company_id)
    r = await client.post(
        f"{ADMIN}/categories", json={"name": "Kid", "parent_id": lone["id"]}, headers=headers
    )
    assert_error(r, 422, "parent_id")
    assert await snapshot(db, shop.company_id) == before


async def test_category_rename_emits_product_updated_once(client, db, shop):
    headers = await login(client, db, shop)

    async def events():
        rows = await db.read(
            lambda s: s.execute(
                select(OutboxEvent.payload)
                .where(
                    OutboxEvent.company_id == shop.company_id, OutboxEvent.type == "product.updated"
                )
                .order_by(OutboxEvent.id)
            )
        )
        return [json.loads(p) for (p,) in rows.all()]

    assert await events() == []
    url = f"{ADMIN}/categories/{shop.child_category_id}"
    r = await client.patch(url, json={"name": "Fresh juice", "version": 1}, headers=headers)
    assert r.status_code == 200, r.text
    (event,) = await events()
    assert event["type"] == "product.updated" and event["warehouse_id"] is None
    data = event["data"]
    assert data["reason"] == "category.updated" and data["changed"] == ["name"]
    assert data["category"]["id"] == shop.child_category_id
    assert data["category"]["name"] == "Fresh juice" and data["category"]["archived"] is False
    assert data["product_ids"] == [shop.products["apple"]]
    assert "id" not in data  # never mistaken for a product id

    # The till sees the new name on its product.
    product = (await client.get(f"/products/{shop.xid('apple')}", headers=shop.headers)).json()
    assert product["data"]["category"]["name"] == "Fresh juice"

    # A brand archive is one more event; an edit that changes nothing is none.
    r = await client.patch(url, json={"name": "Fresh juice", "version": 2}, headers=headers)
    assert r.status_code == 200 and r.json()["data"]["version"] == 2
    r = await client.post(
        f"{ADMIN}/brands/{shop.brand_id}/archive", headers={**headers, "If-Match": '"1"'}
    )
    assert r.status_code == 200
    events_now = await events()
    assert len(events_now) == 2
    assert events_now[1]["data"]["reason"] == "brand.archived"
    assert events_now[1]["data"]["product_ids"] == [shop.products["apple"]]


# ------------------------------------------------------------------ archived references


async def test_usable_refuses_archived_and_foreign_references(db, shop):
    other = await make_shop(db)

    async def archive_box(s):
        return await reference.archive_unit(s, shop.company_id, None, shop.box_unit_id, 1)

    await db.write(archive_box)

    async def check(s):
        problems = Problems()
        found = await reference.check_usable(
            s,
            shop.company_id,
            [
                ("unit_id", "unit", shop.piece_unit_id),
                ("box", "unit", shop.box_unit_id),
                ("category_id", "category", other.category_id),
                ("brand_id", "brand", None),
                ("tax_id", "tax", "garbage"),
            ],
            problems,
        )
        return found, problems.errors

    found, errors = await db.read(check)
    assert found == {"unit_id": shop.piece_unit_id}
    assert set(errors) == {"box", "category_id", "tax_id"}
    assert "archived" in errors["box"][0]
    with pytest.raises(ValidationFailed) as info:
        await db.read(lambda s: reference.usable(s, shop.company_id, "unit", shop.box_unit_id))
    assert "unit_id" in info.value.errors
    assert (
        await db.read(lambda s: reference.usable(s, shop.company_id, "tax", shop.tax10_id))
        == shop.tax10_id
    )


def sale(shop, tax_id=None, mode="cash", amount=None, quantity=1):
    item = {"xid": shop.xid("water"), "quantity": quantity, "unit_price": "10.00"}
    if tax_id is not None:
        item["tax_id"] = tax_id
    body = {"user_id": shop.customer_id, "order_date": "2026-11-20", "product_items": [item]}
    if amount is not None:
        body["all_payments"] = [{"payment_mode_id": mode, "amount": amount}]
    return body


async def test_archived_mode_tax_and_expense_category_take_no_new_use(client, db, shop):
    headers = await login(client, db, shop)
    # Fill this process's caches first: the archive must still be seen at once.
    r = await client.post(
        "/sales", json=sale(shop, shop.tax10_id, "card", "11.00"), headers=shop.headers
    )
    assert r.status_code == 200, r.text
    for family, id_ in (
        ("payment-modes", shop.card_mode_id),
        ("taxes", shop.tax10_id),
    ):
        r = await client.post(
            f"{ADMIN}/{family}/{id_}/archive", json={"version": 1}, headers=headers
        )
        assert r.status_code == 200, r.text
    cats = (await client.get(f"{ADMIN}/expense-categories", headers=headers)).json()["data"]
    general = next(c for c in cats if c["account_code"] == "52900")
    r = await client.post(
        f"{ADMIN}/expense-categories/{general['id']}/archive", json={"version": 1}, headers=headers
    )
    assert r.status_code == 200

    before = await snapshot(db, shop.company_id)
    r = await client.post("/sales", json=sale(shop, None, "card", "10.00"), headers=shop.headers)
    assert (
        "archived"
        in assert_error(r, 422, "all_payments.0.payment_mode_id")["errors"][
            "all_payments.0.payment_mode_id"
        ][0]
    )
    r = await client.post("/sales", json=sale(shop, shop.tax10_id), headers=shop.headers)
    assert_error(r, 422, "product_items.0.tax_id")
    r = await client.post(
        "/payments",
        json={
            "user_id": shop.customer_id,
            "payment_type": "in",
            "amount": "1.00",
            "payment_mode_id": shop.card_mode_id,
        },
        headers=shop.headers,
    )
    assert_error(r, 422, "payment_mode_id")
    r = await client.post(
        "/expenses",
        json={
            "expense_category_id": general["id"],
            "amount": "5.00",
            "date": "2026-11-20",
            "payment_mode_id": "cash",
        },
        headers=shop.headers,
    )
    assert_error(r, 422, "expense_category_id")
    assert await snapshot(db, shop.company_id) == before
    await check_books(db, shop.company_id)


async def test_a_warehouse_with_active_keys_is_not_archived(client, db, shop):
    headers = await login(client, db, shop)
    url = f"{ADMIN}/warehouses/{shop.warehouse_id}"
    before = await snapshot(db, shop.company_id)
    body = assert_error(
        await client.post(f"{url}/archive", json={"version": 1}, headers=headers), 409
    )
    assert "API key" in body["message"] and "revoke" in body["message"]
    assert await snapshot(db, shop.company_id) == before


async def test_a_warehouse_edit_applies_to_the_next_sale(client, db, shop):
    headers = await login(client, db, shop)
    too_many = sale(shop, quantity=500)
    assert_error(await client.post("/sales", json=too_many, headers=shop.headers), 422)
    url = f"{ADMIN}/warehouses/{shop.warehouse_id}"
    r = await client.patch(url, json={"allow_negative_stock": True, "version": 1}, headers=headers)
    assert r.status_code == 200, r.text
    r = await client.post("/sales", json=too_many, headers=shop.headers)
    assert r.status_code == 200, r.text
    await check_books(db, shop.company_id)


# ---------------------------------------------------------------------------- taxes


async def test_a_new_rate_applies_to_new_sales_only(client, db, shop):
    headers = await login(client, db, shop)
    first = await client.post("/sales", json=sale(shop, shop.tax10_id), headers=shop.headers)
    assert first.status_code == 200, first.text
    assert first.json()["total_amount"] == 11

    url = f"{ADMIN}/taxes/{shop.tax10_id}"
    r = await client.patch(
        url, json={"rate": "12.5", "name": "VAT 12.5%"}, headers={**headers, "If-Match": '"1"'}
    )
    assert r.status_code == 200, r.text
    assert r.json()["data"]["rate"] == 12.5

    second = await client.post("/sales", json=sale(shop, shop.tax10_id), headers=shop.headers)
    assert second.status_code == 200, second.text
    assert second.json()["total_amount"] == 11.25

    rows = await db.read(
        lambda s: s.execute(
            select(OrderItem.order_id, OrderItem.tax_rate, OrderItem.tax_amount).where(
                OrderItem.order_id.in_([first.json()["order_id"], second.json()["order_id"]])
            )
        )
    )
    by_order = {o: (D(rate), D(amount)) for o, rate, amount in rows.all()}
    assert by_order[first.json()["order_id"]] == (D("10"), D("1.00"))
    assert by_order[second.json()["order_id"]] == (D("12.5"), D("1.25"))
    detail = (await client.get(f"/sales/{first.json()['order_id']}", headers=shop.headers)).json()
    assert detail["data"]["tax_amount"] == "1.00"
    await check_books(db, shop.company_id)


async def test_the_inclusive_flag_is_fixed_once_charged(client, db, shop):
    headers = await login(client, db, shop)
    fresh = await create(client, headers, "taxes", {"name": "Eco", "rate": 3})
    r = await client.patch(
        f"{ADMIN}/taxes/{fresh['id']}", json={"inclusive": True, "version": 1}, headers=headers
    )
    assert r.status_code == 200 and r.json()["data"]["inclusive"] is True
    r = await client.post("/sales", json=sale(shop, shop.tax10_id), headers=shop.headers)
    assert r.status_code == 200
    before = await snapshot(db, shop.company_id)
    r = await client.patch(
        f"{ADMIN}/taxes/{shop.tax10_id}", json={"inclusive": True, "version": 1}, headers=headers
    )
    assert_error(r, 422, "inclusive")
    assert await snapshot(db, shop.company_id) == before


async def test_a_tax_edit_reaches_a_process_whose_cache_is_warm(client, db, shop):
    """The edit here goes through the service, as another worker process's would:
    this process's cached rate must not be served after it (the key lookup reads the
    company's reference version)."""
    r = await client.post("/sales", json=sale(shop, shop.tax10_id), headers=shop.headers)
    assert r.json()["total_amount"] == 11

    async def edit(s):
        await reference.edit_tax(s, shop.company_id, None, shop.tax10_id, 1, {"rate": D("20")})

    await db.write(edit)
    version = await db.read(
        lambda s: s.scalar(select(Company.reference_version).where(Company.id == shop.company_id))
    )
    assert version >= 1
    r = await client.post("/sales", json=sale(shop, shop.tax10_id), headers=shop.headers)
    assert r.json()["total_amount"] == 12


# ---------------------------------------------------------------------- payment modes


async def test_a_new_mode_gets_its_own_cash_account_and_posts_there(client, db, shop):
    headers = await login(client, db, shop)
    mode = await create(
        client,
        headers,
        "payment-modes",
        {"code": "mpesa", "name": "M-Pesa", "create_account": True},
    )
    assert mode["account_code"] == "11102" and mode["account_name"] == "M-Pesa"
    second = await create(
        client, headers, "payment-modes", {"code": "giro", "name": "Giro", "create_account": True}
    )
    assert second["account_code"] == "11103"
    account = await db.read(
        lambda s: s.scalar(
            select(Account).where(Account.company_id == shop.company_id, Account.code == "11102")
        )
    )
    assert account.parent_code == "11100" and account.is_posting and account.type == "asset"

    r = await client.post(
        "/sales", json=sale(shop, shop.tax10_id, "mpesa", "11.00"), headers=shop.headers
    )
    assert r.status_code == 200, r.text
    assert r.json()["payment_status"] == "paid"
    assert await db.read(lambda s: gl_balance(s, shop.company_id, "11102")) == D("11.00")
    # By id too, and a mode repointed at an existing account posts there next time.
    r = await client.patch(
        f"{ADMIN}/payment-modes/{mode['id']}",
        json={"account_code": "11101", "version": 1},
        headers=headers,
    )
    assert r.status_code == 200 and r.json()["data"]["account_code"] == "11101"
    r = await client.post(
        "/sales", json=sale(shop, None, mode["id"], "10.00"), headers=shop.headers
    )
    assert r.status_code == 200, r.text
    assert await db.read(lambda s: gl_balance(s, shop.company_id, "11102")) == D("11.00")
    await check_books(db, shop.company_id)


async def test_a_new_expense_category_gets_a_52xxx_account(client, db, shop):
    headers = await login(client, db, shop)
    cat = await create(
        client, headers, "expense-categories", {"name": "Rent", "create_account": True}
    )
    assert cat["account_code"] == "52200"
    r = await client.post(
        "/expenses",
        json={
            "expense_category_id": cat["id"],
            "amount": "40.00",
            "date": "2026-11-20",
            "payment_mode_id": "cash",
        },
        headers=shop.headers,
    )
    assert r.status_code == 200, r.text
    assert await db.read(lambda s: gl_balance(s, shop.company_id, "52200")) == D("40.00")
    await check_books(db, shop.company_id)
