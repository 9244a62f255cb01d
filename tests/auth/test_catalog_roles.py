"""Who may change the catalog, prices, stock and parties in the back office
(``auth/roles.py``), as the issue puts it: a cashier signs up customers but changes
no product or price; an accountant reads the books but cannot change a price; a
manager of one branch cannot change another's listings nor the company-wide
product. And the catalog's POSTs replay on the same ``Idempotency-Key``.

Over HTTP through an app of this module's own (its own client address: failed
logins are counted per address)."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from decimal import Decimal
from typing import Any

import httpx
import pytest
from sqlalchemy import func, select

from tests.factories import Shop, by_id, make_shop
from tests.invariants import check_books
from tests.tenancy.test_staff import ADMIN, A, C, M, error, owner, staff_session
from tillbook.app import create_app
from tillbook.config import Settings
from tillbook.db import Database
from tillbook.models import AuditEvent, Listing, Product, StockBatch, User

D = Decimal


@pytest.fixture(scope="module")
async def admin(settings: Settings, db: Database) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(settings, database=db)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app, client=("10.77.0.2", 4321))
        async with httpx.AsyncClient(transport=transport, base_url=ADMIN) as c:
            yield c


def product_body(shop: Shop, code: str) -> dict[str, Any]:
    return {
        "name": f"Oat milk {code}",
        "item_code": code,
        "unit_id": shop.piece_unit_id,
        "listings": [
            {"warehouse_id": shop.warehouse_id, "sales_price": "2.20", "purchase_price": "1.10"},
            {
                "warehouse_id": shop.other_warehouse_id,
                "sales_price": "2.40",
                "purchase_price": "1.10",
            },
        ],
    }


async def two_branch_product(
    admin: httpx.AsyncClient, boss: dict[str, str], shop: Shop
) -> dict[str, Any]:
    r = await admin.post("/products", json=product_body(shop, "OAT-1"), headers=boss)
    assert r.status_code == 201, r.text
    data: dict[str, Any] = r.json()["data"]
    return data


async def listing_of(db: Database, product_id: int, warehouse_id: int) -> Listing:
    found = await db.read(
        lambda s: s.scalar(
            select(Listing).where(
                Listing.product_id == product_id, Listing.warehouse_id == warehouse_id
            )
        )
    )
    assert found is not None
    return found


async def test_a_cashier_signs_up_customers_but_changes_no_product_or_price(
    admin: httpx.AsyncClient, db: Database
) -> None:
    shop = await make_shop(db)
    boss = await owner(admin, db, shop)
    product = await two_branch_product(admin, boss, shop)
    _member, cashier = await staff_session(admin, boss, C, shop.warehouse_id)
    products_before = await db.read(
        lambda s: s.scalar(
            select(func.count()).select_from(Product).where(Product.company_id == shop.company_id)
        )
    )

    r = await admin.post("/products", json=product_body(shop, "OAT-2"), headers=cashier)
    assert "the cashier role lacks the permission 'catalog.write'" in error(r, 403)
    path = f"/products/{product['id']}/listings/{shop.warehouse_id}"
    r = await admin.patch(path, json={"sales_price": "9.99", "version": 1}, headers=cashier)
    assert "the cashier role lacks" in error(r, 403)
    r = await admin.post(f"{path}/opening-stock", json={"quantity": 1, "unit_cost": "1"},
                         headers=cashier)  # fmt: skip
    assert "'stock.write'" in error(r, 403)
    listing = await listing_of(db, product["id"], shop.warehouse_id)
    assert listing.sales_price == D("2.20") and listing.version == 1
    count = await db.read(
        lambda s: s.scalar(
            select(func.count()).select_from(Product).where(Product.company_id == shop.company_id)
        )
    )
    assert count == products_before

    # The cashier reads the catalog and signs up a customer at the counter ...
    assert (await admin.get("/products", headers=cashier)).status_code == 200
    r = await admin.post("/customers", json={"name": "Walk-up Wanda", "phone": "555-0199"},
                         headers=cashier)  # fmt: skip
    assert r.status_code == 200, r.text
    wanda = r.json()["data"]
    r = await admin.patch(f"/customers/{wanda['id']}", json={"email": "w@x.example",
                          "version": 1}, headers=cashier)  # fmt: skip
    assert r.status_code == 200, r.text
    # ... but gives no one credit, posts no opening balance, adds no supplier and
    # loads no file.
    for method, url, body in [
        ("POST", "/customers", {"name": "Credit Carl", "credit_limit": "500"}),
        ("POST", "/customers", {"name": "Owing Olga", "opening_balance": "120.50"}),
        ("PATCH", f"/customers/{wanda['id']}", {"credit_limit": "1000", "version": 2}),
    ]:
        r = await admin.request(method, url, json=body, headers=cashier)
        assert "'parties.credit'" in error(r, 403)
    r = await admin.post("/suppliers", json={"name": "Sly supplier"}, headers=cashier)
    assert "'suppliers.write'" in error(r, 403)
    r = await admin.post("/import/customers", files={"file": ("c.csv", b"code,name\nX,Y\n")},
                         headers=cashier)  # fmt: skip
    assert "'parties.credit'" in error(r, 403)
    names = await db.read(
        lambda s: s.scalars(
            select(User.name).where(
                User.company_id == shop.company_id,
                User.name.in_(["Credit Carl", "Owing Olga", "Sly supplier", "Y"]),
            )
        )
    )
    assert list(names) == []
    stored = await db.read(lambda s: by_id(s, User, wanda["id"]))
    assert stored is not None and stored.credit_limit is None and stored.version == 2
    await check_books(db, shop.company_id)


async def test_an_accountant_reads_but_cannot_change_a_price(
    admin: httpx.AsyncClient, db: Database
) -> None:
    shop = await make_shop(db)
    boss = await owner(admin, db, shop)
    product = await two_branch_product(admin, boss, shop)
    _member, accountant = await staff_session(admin, boss, A)

    r = await admin.get("/products", headers=accountant)
    assert r.status_code == 200 and r.json()["data"]["total"] >= 1, r.text
    r = await admin.get(f"/products/{product['id']}", headers=accountant)
    assert r.status_code == 200 and r.headers["etag"] == '"1"', r.text
    r = await admin.get(f"/audit?entity_type=product&entity_id={product['id']}",
                        headers=accountant)  # fmt: skip
    assert r.status_code == 200 and r.json()["data"]["total"] == 1, r.text
    assert (await admin.get("/reports/trial-balance", headers=accountant)).status_code == 200

    path = f"/products/{product['id']}/listings/{shop.warehouse_id}"
    for headers in (accountant, {**accountant, "If-Match": '"1"'}):
        r = await admin.patch(path, json={"sales_price": "0.01"}, headers=headers)
        assert "the accountant role lacks the permission" in error(r, 403)
    r = await admin.patch(f"/products/{product['id']}", json={"name": "X", "version": 1},
                          headers=accountant)  # fmt: skip
    error(r, 403)
    r = await admin.post("/taxes", json={"name": "T", "rate": "5"}, headers=accountant)
    assert "'settings.write'" in error(r, 403)
    listing = await listing_of(db, product["id"], shop.warehouse_id)
    assert listing.version == 1
    r = await admin.get(f"/products/{product['id']}", headers=accountant)
    assert D(str(r.json()["data"]["listings"][0]["sales_price"])) == D("2.20")


async def test_a_branch_manager_changes_their_branch_listings_only(
    admin: httpx.AsyncClient, db: Database
) -> None:
    shop = await make_shop(db)
    boss = await owner(admin, db, shop)
    product = await two_branch_product(admin, boss, shop)
    pid = product["id"]
    _member, manager = await staff_session(admin, boss, M, shop.warehouse_id)
    mine = f"/products/{pid}/listings/{shop.warehouse_id}"
    theirs = f"/products/{pid}/listings/{shop.other_warehouse_id}"

    r = await admin.patch(mine, json={"sales_price": "2.30", "reorder_level": 4, "version": 1},
                          headers=manager)  # fmt: skip
    assert r.status_code == 200, r.text
    assert D(str(r.json()["data"]["sales_price"])) == D("2.30") and r.headers["etag"] == '"2"'
    r = await admin.post(f"{mine}/opening-stock", json={"quantity": 5, "unit_cost": "1.00"},
                         headers=manager)  # fmt: skip
    assert r.status_code == 200, r.text

    for method, url, body in [
        ("PATCH", theirs, {"sales_price": "0.10", "version": 1}),
        ("PATCH", theirs, {"active": False, "version": 1}),
        ("POST", f"{theirs}/opening-stock", {"quantity": 5, "unit_cost": "1.00"}),
    ]:
        r = await admin.request(method, url, json=body, headers=manager)
        message = error(r, 403)
        assert f"limited to warehouse {shop.warehouse_id}" in message, message
        assert f"warehouse {shop.other_warehouse_id}" in message
    # A made-up warehouse is refused alike: the scope tells nothing of what exists.
    r = await admin.patch(f"/products/{pid}/listings/987654321",
                          json={"sales_price": "1", "version": 1}, headers=manager)  # fmt: skip
    error(r, 403)

    # The product itself is every branch's: its definition is company-wide.
    r = await admin.post("/products", json=product_body(shop, "OAT-3"), headers=manager)
    assert "company-wide request needs an unscoped staff member" in error(r, 403)
    only_mine = {**product_body(shop, "OAT-4"), "listings": product_body(shop, "x")["listings"][:1]}
    error(await admin.post("/products", json=only_mine, headers=manager), 403)
    r = await admin.patch(f"/products/{pid}", json={"name": "Mine", "version": 1},
                          headers=manager)  # fmt: skip
    error(r, 403)
    error(await admin.post(f"/products/{pid}/archive", headers=manager), 403)
    error(await admin.post("/units", json={"name": "Sack", "short_name": "sk"},
                           headers=manager), 403)  # fmt: skip

    # A new listing: in their own warehouse only.
    r = await admin.post("/products", json={"name": "Rye", "item_code": "RYE-1"}, headers=boss)
    rye = r.json()["data"]["id"]
    r = await admin.post(f"/products/{rye}/listings",
                         json={"warehouse_id": shop.other_warehouse_id, "sales_price": "1",
                               "purchase_price": "1"}, headers=manager)  # fmt: skip
    assert f"limited to warehouse {shop.warehouse_id}" in error(r, 403)
    r = await admin.post(f"/products/{rye}/listings",
                         json={"warehouse_id": shop.warehouse_id, "sales_price": "1",
                               "purchase_price": "1"}, headers=manager)  # fmt: skip
    assert r.status_code == 201, r.text

    other = await listing_of(db, pid, shop.other_warehouse_id)
    assert other.version == 1 and other.active and other.current_stock == 0
    names = await db.read(
        lambda s: s.scalars(select(Product.item_code).where(Product.company_id == shop.company_id))
    )
    assert not {"OAT-3", "OAT-4"} & set(names)
    assert (await db.read(lambda s: by_id(s, Product, pid))).version == 1
    await check_books(db, shop.company_id)


async def test_creating_a_product_replays_on_the_same_idempotency_key(
    admin: httpx.AsyncClient, db: Database
) -> None:
    shop = await make_shop(db)
    boss = await owner(admin, db, shop)
    key = {"Idempotency-Key": f"product-{uuid.uuid4()}"}
    body = product_body(shop, "ONCE-1")
    body["listings"][0]["opening_stock"] = {"quantity": 6, "unit_cost": "1.00"}
    first = await admin.post("/products", json=body, headers={**boss, **key})
    again = await admin.post("/products", json=body, headers={**boss, **key})
    assert first.status_code == again.status_code == 201, again.text
    assert again.json() == first.json()
    assert again.headers["idempotent-replayed"] == "true"
    assert "idempotent-replayed" not in first.headers
    assert again.headers["etag"] == first.headers["etag"] == '"1"'
    pid = first.json()["data"]["id"]

    async def counted(s: Any) -> tuple[int, int, int]:
        products = await s.scalar(
            select(func.count())
            .select_from(Product)
            .where(Product.company_id == shop.company_id, Product.item_code == "ONCE-1")
        )
        batches = await s.scalar(
            select(func.count()).select_from(StockBatch).where(StockBatch.product_id == pid)
        )
        created = await s.scalar(
            select(func.count())
            .select_from(AuditEvent)
            .where(AuditEvent.entity_type == "product", AuditEvent.entity_id == pid)
        )
        return products, batches, created

    assert await db.read(counted) == (1, 1, 1)
    changed = {**body, "name": "Another name"}
    r = await admin.post("/products", json=changed, headers={**boss, **key})
    assert "different request body" in error(r, 422)

    # A listing, opening stock, a reference record, a customer and an import file
    # replay alike.
    rye = (await admin.post("/products", json={"name": "Rye", "item_code": "RYE-2"},
                            headers=boss)).json()["data"]["id"]  # fmt: skip
    for url, payload in [
        (f"/products/{rye}/listings",
         {"warehouse_id": shop.warehouse_id, "sales_price": "1", "purchase_price": "1"}),
        (f"/products/{rye}/listings/{shop.warehouse_id}/opening-stock",
         {"quantity": 2, "unit_cost": "1.00"}),
        ("/brands", {"name": "Once brand"}),
        ("/customers", {"name": "Once customer"}),
    ]:  # fmt: skip
        token = {"Idempotency-Key": f"k-{uuid.uuid4()}"}
        made = [await admin.post(url, json=payload, headers={**boss, **token}) for _ in range(2)]
        assert made[0].status_code in (200, 201), made[0].text
        assert made[1].status_code == made[0].status_code and made[1].json() == made[0].json()
        assert made[1].headers["idempotent-replayed"] == "true"
    stock = await db.read(
        lambda s: s.scalar(
            select(Listing.current_stock).where(
                Listing.product_id == rye, Listing.warehouse_id == shop.warehouse_id
            )
        )
    )
    assert stock == 2
    onces = await db.read(
        lambda s: s.scalar(
            select(func.count())
            .select_from(User)
            .where(User.company_id == shop.company_id, User.name == "Once customer")
        )
    )
    assert onces == 1

    token = {"Idempotency-Key": f"file-{uuid.uuid4()}"}
    csv = b"code,name\nIMP-1,Imported Ivy\n"
    sent = [
        await admin.post("/import/customers", files={"file": ("c.csv", csv)},
                         headers={**boss, **token})
        for _ in range(2)
    ]  # fmt: skip
    assert sent[0].status_code == 200, sent[0].text
    assert sent[0].json()["data"]["created"] == 1
    assert sent[1].json() == sent[0].json() and sent[1].headers["idempotent-replayed"] == "true"
    r = await admin.post("/import/customers", files={"file": ("c.csv", csv + b"IMP-2,Ian\n")},
                         headers={**boss, **token})  # fmt: skip
    assert "different request body" in error(r, 422)
    ivies = await db.read(
        lambda s: s.scalar(
            select(func.count())
            .select_from(User)
            .where(User.company_id == shop.company_id, User.code.in_(["IMP-1", "IMP-2"]))
        )
    )
    assert ivies == 1
    await check_books(db, shop.company_id)
