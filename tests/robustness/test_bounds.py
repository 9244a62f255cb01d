"""No 500 for anything a client can send (DESIGN.md §12, ``kit/bounds.py``).

Three classes of input reached the database and failed there: control characters
(PostgreSQL refuses NUL in text), numbers whose results overflow the NUMERIC
columns (or Decimal's context), and dates the database cannot hold or that lie
years ahead. Every case is a 4xx in the envelope naming the field, and nothing is
written.

The text class is driven by the OpenAPI document: every string property of every
request body (public and admin) gets a NUL, so a new field without the check fails
here; every query and path parameter gets one too.
"""

from __future__ import annotations

import copy
import datetime as dt
import json
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import httpx
import pytest
from sqlalchemy import select, update

from tests.factories import Shop, by_id, make_shop
from tests.invariants import check_books
from tests.written import snapshot
from tillbook.db import Database
from tillbook.kit import bounds, crypto, xid
from tillbook.models import (
    ExpenseCategory,
    Listing,
    Order,
    OrderItem,
    Payment,
    Product,
    StockBatch,
    User,
)
from tillbook.payments import terminal_callbacks as terminals

D = Decimal
ROOT = "http://testserver"
AD = "/api/v1/admin"
ADMIN = f"{ROOT}{AD}"
PUBLIC = "/api/v1/public"
PASSWORD = "correct horse battery"
BIG = "99999999999999"  # the largest whole quantity or price: 14 digits
MAX_MONEY = "9999999999999999.99"
DAY = "2026-11-20"
Body = dict[str, Any]


# --------------------------------------------------------------------- the module's world


@dataclass
class World:
    shop: Shop
    sale_id: int
    invoice_number: str
    provider_path: str
    provider_secret: str
    expense_category_id: int
    admin: dict[str, str]
    owner_id: int
    shift_id: int
    register: dict[str, str]  # a paired register's key headers (the /register routes)
    po_id: int  # a draft purchase order
    count_id: int  # a stocktake in progress
    promotion_id: int  # a promotion that starts in 2099

    def path_ids(self, route: str) -> dict[str, int]:
        """Real ids of this world for the path parameters of an admin route: a body
        or parameter refused on its own must be refused with a record there to find."""
        s = self.shop
        family = route.removeprefix(AD).split("/")[1]
        records = {
            "units": s.piece_unit_id,
            "categories": s.category_id,
            "brands": s.brand_id,
            "taxes": s.tax10_id,
            "payment-modes": s.cash_mode_id,
            "expense-categories": self.expense_category_id,
            "warehouses": s.warehouse_id,
            "promotions": self.promotion_id,
        }
        return {
            "staff_id": self.owner_id,
            "product_id": s.products["apple"],
            "warehouse_id": s.warehouse_id,
            "party_id": s.supplier_id if family == "suppliers" else s.customer_id,
            "record_id": records.get(family, 0),
            "webhook_id": 1,
            "delivery_id": 1,
            "expense_id": 1,
            "po_id": self.po_id,
            "count_id": self.count_id,
            "register_id": 1,
            "code": "EUR",
        }


async def admin_headers(
    client: httpx.AsyncClient, db: Database, shop: Shop
) -> tuple[dict[str, str], int]:
    """The owner's session, and the owner's id."""
    row = await db.read(
        lambda s: s.execute(
            select(User.email, User.id).where(
                User.company_id == shop.company_id, User.role == "owner"
            )
        )
    )
    email, owner_id = row.one()
    r = await client.post(f"{ADMIN}/login", json={"email": email, "password": PASSWORD})
    assert r.status_code == 200, r.text
    return {"Authorization": f"Bearer {r.json()['token']}"}, owner_id


@pytest.fixture(scope="module")
async def world(client: httpx.AsyncClient, db: Database) -> World:
    """One shop with a credit sale, a terminal provider and an admin session: the
    requests of this module that are refused write nothing, so they can share it."""
    shop = await make_shop(db)
    sale = await client.post("/sales", json=sale_body(shop), headers=shop.headers)
    assert sale.status_code == 200, sale.text

    async def setup(session: Any) -> tuple[str, str, int]:
        provider, secret = await terminals.add_provider(
            session, shop.warehouse_id, "bounds-pay", "card"
        )
        category = await session.scalar(
            select(ExpenseCategory.id).where(
                ExpenseCategory.company_id == shop.company_id,
                ExpenseCategory.name == "General Expenses",
            )
        )
        return terminals.callback_path(provider), secret, category

    path, secret, category = await db.write(setup)
    admin, owner_id = await admin_headers(client, db, shop)
    shift = await client.post("/shifts", json={"register": "bounds"}, headers=shop.headers)
    assert shift.status_code == 200, shift.text
    paired = await client.post(
        f"{ADMIN}/registers",
        json={"warehouse_id": shop.warehouse_id, "name": "Bounds"},
        headers=admin,
    )
    assert paired.status_code == 201, paired.text
    till = paired.json()["data"]
    po = await client.post(
        f"{ADMIN}/purchase-orders",
        json={"warehouse_id": shop.warehouse_id, "supplier_id": shop.supplier_id,
              "lines": [{"product_id": shop.products["apple"], "quantity": 5,
                         "unit_cost": "1.00"}]},
        headers=admin,
    )  # fmt: skip
    assert po.status_code in (200, 201), po.text
    count = await client.post(
        f"{ADMIN}/stock-counts", json={"warehouse_id": shop.warehouse_id}, headers=admin
    )
    assert count.status_code in (200, 201), count.text
    # A promotion that never runs (it starts in 2099): a record for its routes' ids.
    promo = await client.post(
        f"{ADMIN}/promotions",
        json={"name": "Later", "kind": "percent_off", "percent": "5", "starts_on": "2099-01-01"},
        headers=admin,
    )
    assert promo.status_code == 201, promo.text
    return World(
        shop=shop,
        sale_id=sale.json()["order_id"],
        invoice_number=sale.json()["invoice_number"],
        provider_path=path,
        provider_secret=secret,
        expense_category_id=category,
        admin=admin,
        owner_id=owner_id,
        shift_id=shift.json()["data"]["id"],
        register={
            "X-Service-Public-Key": till["public_key"],
            "X-Service-Secret-Key": till["secret_key"],
            "Accept": "application/json",
        },
        po_id=po.json()["data"]["id"],
        count_id=count.json()["count_id"],
        promotion_id=promo.json()["data"]["id"],
    )


def sale_body(shop: Shop, quantity: Any = 1, unit_price: Any = "3.50") -> Body:
    return {
        "user_id": shop.customer_id,
        "order_date": DAY,
        "product_items": [
            {"xid": shop.xid("apple"), "quantity": quantity, "unit_price": unit_price}
        ],
    }


# Valid bodies with every optional object present, so that every string property of
# the schema has a place in them.
def full_bodies(w: World) -> dict[tuple[str, str], Body]:
    s = w.shop
    tender = {"amount": "1.00", "payment_mode_id": "cash", "reference": "r-1", "notes": "n"}
    line = {
        "xid": s.xid("apple"),
        "quantity": 1,
        "unit_price": "3.50",
        "selected_unit_id": s.piece_unit_id,
        "tax_id": s.tax10_id,
        "discount_rate": "0",
    }
    order = {"order_date": DAY, "notes": "n", "unique_id": "u-1", "invoice_number": "INV-1"}
    returned = {
        **order,
        "items": [{"product_id": s.products["apple"], "quantity": 1, "unit_price": "1.00"}],
        "all_payments": [tender],
    }
    price_change = {
        "warehouse_ids": [s.warehouse_id],
        "scope": "list",
        "target": "sales",
        "method": "percent",
        "value": "10",
        "step": "0.05",
        "search": "apple",
        "category_id": s.category_id,
        "item_codes": ["apple"],
        "notes": "n",
    }
    return {
        ("POST", "/sales"): {
            **order,
            "user_id": s.customer_id,
            "product_items": [line],
            "all_payments": [tender],
            "discount": "0",
            "shipping": "0",
            "subtotal": "3.50",
            "tax_amount": "0.35",
            "total": "3.85",
        },
        ("POST", "/sales/preview"): {
            **order,
            "user_id": s.customer_id,
            "product_items": [line],
            "all_payments": [tender],
            "shift_id": w.shift_id,
        },
        ("POST", "/sales/{order_id}/void"): {"reason": "r", "unique_id": "u-1"},
        ("POST", "/gift-cards"): {
            "amount": "1.00",
            "all_payments": [tender],
            "code": "AAAA-BBBB-CCCC-DDDD",
            "user_id": s.customer_id,
            "expires_on": "2030-01-01",
            "date": DAY,
            "unique_id": "u-1",
        },
        ("POST", "/gift-cards/balance"): {"code": "AAAA-BBBB-CCCC-DDDD"},
        ("POST", "/shifts"): {
            "opening_float": "1.00",
            "register": "r",
            "cash_payment_mode_id": "cash",
            "notes": "n",
            "unique_id": "u-1",
        },
        ("POST", "/shifts/{shift_id}/cash"): {
            "direction": "out",
            "amount": "1.00",
            "reason": "r",
            "expense_category_id": w.expense_category_id,
            "payment_mode_id": "card",
            "unique_id": "u-1",
        },
        ("POST", "/shifts/{shift_id}/close"): {
            "counted": [{"payment_mode_id": "cash", "amount": "1.00"}],
            "notes": "n",
            "unique_id": "u-1",
        },
        ("POST", "/purchases"): {
            **order,
            "user_id": s.supplier_id,
            "product_items": [{k: v for k, v in line.items() if k in PURCHASE_LINE}],
            "all_payments": [tender],
        },
        ("POST", "/sales-returns"): {**returned, "user_id": s.customer_id},
        ("POST", "/purchase-returns"): {**returned, "user_id": s.supplier_id},
        ("POST", "/payments"): {
            "user_id": s.customer_id,
            "payment_type": "in",
            "amount": "1.00",
            "payment_mode_id": "cash",
            "date": DAY,
            "reference": "r-1",
            "notes": "n",
            "invoices": [{"order_id": w.sale_id, "amount": "1.00"}],
            "unique_id": "u-1",
        },
        ("POST", "/expenses"): {
            "expense_category_id": w.expense_category_id,
            "amount": "1.00",
            "date": DAY,
            "payment_mode_id": "cash",
            "user_id": s.supplier_id,
            "reference": "r-1",
            "notes": "n",
            "unique_id": "u-1",
        },
        ("POST", "/stock-adjustments"): {
            "product_id": s.xid("apple"),
            "quantity": 1,
            "adjustment_type": "add",
            "notes": "n",
            "batch_number": "B-1",
            "expiry_date": "2027-01-01",
            "unique_id": "u-1",
        },
        ("POST", "/price-adjustments"): {
            "product_id": s.xid("apple"),
            "new_sales_price": "3.50",
            "notes": "n",
            "unique_id": "u-1",
        },
        ("POST", "/stock-transfers"): {
            "to_warehouse_id": xid.encode(s.other_warehouse_id),
            "items": [{"product_id": s.xid("apple"), "quantity": 1}],
            "notes": "n",
            "unique_id": "u-1",
        },
        ("POST", "/stock-transfers/{ref}/receive"): {
            "items": [{"product_id": s.xid("apple"), "quantity": 1}],
            "reason": "r",
            "unique_id": "u-1",
        },
        ("POST", "/stock-transfers/{ref}/cancel"): {"reason": "r", "unique_id": "u-1"},
        ("POST", "/terminal-callbacks/{provider}"): {
            "order_id": w.sale_id,
            "invoice_number": w.invoice_number,
            "status": "failed",
            "amount": "7.00",
            "reference": "acq-1",
        },
        ("POST", "/customers"): {**CONTACT, "unique_id": "u-1"},
        ("POST", f"{AD}/login"): {"email": "admin@example.com", "password": "secret password"},
        # Days long past: nothing in the test world is dated there.
        ("POST", f"{AD}/payments"): {
            "warehouse_id": s.warehouse_id,
            "user_id": s.customer_id,
            "payment_type": "in",
            "amount": "1.00",
            "payment_mode_id": "cash",
            "date": DAY,
            "reference": "r-1",
            "notes": "n",
            "invoices": [{"order_id": w.sale_id, "amount": "1.00"}],
            "unique_id": "u-1",
        },
        ("POST", f"{AD}/expenses"): {
            "warehouse_id": s.warehouse_id,
            "expense_category_id": w.expense_category_id,
            "amount": "1.00",
            "date": DAY,
            "payment_mode_id": "cash",
            "user_id": s.supplier_id,
            "reference": "r-1",
            "notes": "n",
            "unique_id": "u-1",
        },
        ("POST", f"{AD}/expenses/{{expense_id}}/pay"): {
            "payment_mode_id": "cash",
            "date": DAY,
            "reference": "r-1",
            "unique_id": "u-1",
        },
        ("POST", f"{AD}/gift-cards"): {
            "warehouse_id": s.warehouse_id,
            "amount": "1.00",
            "all_payments": [tender],
            "code": "AAAA-BBBB-CCCC-DDDD",
            "user_id": s.customer_id,
            "expires_on": "2030-01-01",
            "date": DAY,
            "unique_id": "u-1",
        },
        ("POST", f"{AD}/money-moves"): {
            "warehouse_id": s.warehouse_id,
            "from_payment_mode_id": "cash",
            "to_payment_mode_id": "card",
            "amount": "1.00",
            "date": DAY,
            "reference": "r-1",
            "notes": "n",
            "unique_id": "u-1",
        },
        ("POST", f"{AD}/purchase-orders"): {
            "warehouse_id": s.warehouse_id,
            "supplier_id": s.supplier_id,
            "order_date": DAY,
            "expected_date": DAY,
            "lines": [{"product_id": s.products["apple"], "quantity": 1, "unit_cost": "1.00"}],
            "notes": "n",
            "unique_id": "u-1",
        },
        ("PUT", f"{AD}/purchase-orders/{{po_id}}"): {
            "supplier_id": s.supplier_id,
            "order_date": DAY,
            "expected_date": DAY,
            "lines": [{"product_id": s.products["apple"], "quantity": 1, "unit_cost": "1.00"}],
            "notes": "n",
            "unique_id": "u-1",
        },
        ("POST", f"{AD}/purchase-orders/{{po_id}}/receipts"): {
            "order_date": DAY,
            "lines": [
                {
                    "product_id": s.products["apple"],
                    "quantity": 1,
                    "unit_cost": "1.00",
                    "batch_number": "B-1",
                    "expiry_date": "2030-01-31",
                    "tax_id": s.tax10_id,
                }
            ],
            "invoice_number": "INV-1",
            "all_payments": [tender],
            "notes": "n",
            "unique_id": "u-1",
        },
        ("POST", f"{AD}/purchase-orders/{{po_id}}/close"): {"reason": "r", "unique_id": "u-1"},
        ("POST", f"{AD}/stock-counts"): {
            "warehouse_id": s.warehouse_id,
            "scope": "list",
            "category_id": s.category_id,
            "product_ids": [s.products["apple"]],
            "item_codes": ["apple"],
            "notes": "n",
            "unique_id": "u-1",
        },
        ("POST", f"{AD}/stock-counts/{{count_id}}/entries"): {
            "items": [{"product_id": s.products["apple"], "counted": 1}],
            "barcode": "apple",
            "unique_id": "u-1",
        },
        ("POST", f"{AD}/price-changes/preview"): price_change,
        ("POST", f"{AD}/price-changes"): {**price_change, "fingerprint": "f-1"},
        ("POST", f"{AD}/registers"): {"warehouse_id": s.warehouse_id, "name": "Till"},
        ("PUT", f"{AD}/staff/{{staff_id}}/pin"): {"pin": "1234"},
        ("POST", "/register/heartbeat"): {
            "queued": 0,
            "attention": [
                {
                    "key": "k",
                    "kind": "sale",
                    "number": "R1-000001",
                    "reason": "r",
                    "at": "2026-11-26T10:00:00Z",
                }
            ],
        },
        ("POST", f"{AD}/currencies"): {"currency": "EUR"},
        ("PUT", f"{AD}/loyalty"): {"earn_unit": "1.00", "point_value": "0.05"},
        ("POST", f"{AD}/exchange-rates"): {"currency": "EUR", "date": DAY, "rate": "1.08"},
        ("POST", f"{AD}/periods/close"): {"through": "2020-01-31"},
        ("POST", f"{AD}/periods/reopen"): {"through": "2019-12-31"},
        ("POST", f"{AD}/webhooks"): {
            "url": "https://example.test/hook",
            "events": ["order.created"],
        },
        ("POST", f"{AD}/staff"): STAFF_BODY | {"warehouse_id": s.warehouse_id},
        ("PATCH", f"{AD}/staff/{{staff_id}}"): STAFF_BODY | {"warehouse_id": None, "version": 1},
        **admin_catalog_bodies(w),
    }


# A party's contact details, as every party body has them.
CONTACT = {"name": "n", "code": "C-1", "phone": "555", "email": "e@x.example",
           "tax_number": "T-1", "address": "1 Quay"}  # fmt: skip


def admin_catalog_bodies(w: World) -> dict[tuple[str, str], Body]:
    """The back office's catalog, party and reference writes."""
    s = w.shop
    listing = {"sales_price": "2.20", "purchase_price": "1.10", "mrp": "2.50",
               "reorder_level": "1", "active": True}  # fmt: skip
    opening = {"quantity": 1, "unit_cost": "1.00"}
    product = {
        "name": "n",
        "item_code": "IC-1",
        "barcodes": ["5901234"],
        "category_id": s.category_id,
        "brand_id": s.brand_id,
        "unit_id": s.piece_unit_id,
        "tax_id": s.tax10_id,
        "description": "d",
        "image": "https://cdn.example/i.png",
        "additional_units": [
            {"unit_id": s.box_unit_id, "operator_value": 6, "alternative_price": "10.00"}
        ],
    }
    party = {**CONTACT, "credit_limit": "10.00"}
    reference: dict[str, Body] = {
        "units": {"name": "n", "short_name": "sn"},
        "categories": {
            "name": "n",
            "slug": "n",
            "parent_id": s.category_id,
            "image": "https://cdn.example/c.png",
        },
        "brands": {"name": "n", "slug": "n", "image": "https://cdn.example/b.png"},
        "taxes": {"name": "n", "rate": "5", "inclusive": False},
        "payment-modes": {
            "code": "giro",
            "name": "n",
            "account_code": "11101",
            "create_account": False,
        },
        "expense-categories": {"name": "n", "account_code": "52900", "create_account": False},
        "warehouses": {
            "name": "n",
            "address": "a",
            "phone": "p",
            "allow_negative_stock": False,
            "receipt_header": "h",
            "receipt_footer": "f",
            "timezone": "Europe/Paris",
        },
    }
    bodies: dict[tuple[str, str], Body] = {
        ("POST", f"{AD}/products"): {
            **product,
            "product_type": "single",
            "listings": [{**listing, "warehouse_id": s.warehouse_id, "opening_stock": opening}],
        },
        ("PATCH", f"{AD}/products/{{product_id}}"): {**product, "version": 1},
        ("POST", f"{AD}/products/{{product_id}}/listings"): {
            **listing,
            "warehouse_id": s.other_warehouse_id,
            "opening_stock": opening,
        },
        ("PATCH", f"{AD}/products/{{product_id}}/listings/{{warehouse_id}}"): {
            **listing,
            "version": 1,
        },
        ("POST", f"{AD}/products/{{product_id}}/listings/{{warehouse_id}}/opening-stock"): opening,
        ("POST", f"{AD}/customers"): {
            **party,
            "opening_balance": "1.00",
            "warehouse_id": s.warehouse_id,
        },
        ("PATCH", f"{AD}/customers/{{party_id}}"): {**party, "version": 1},
        ("POST", f"{AD}/suppliers"): {
            **CONTACT,
            "opening_balance": "1.00",
            "warehouse_id": s.warehouse_id,
        },
        ("PATCH", f"{AD}/suppliers/{{party_id}}"): {**CONTACT, "version": 1},
        ("POST", f"{AD}/promotions"): {
            "name": "n",
            "kind": "bundle",
            "warehouse_id": s.warehouse_id,
            "applies_to": "all",
            "targets": [s.products["apple"]],
            "percent": "5",
            "amount": "1.00",
            "buy": 1,
            "get": 1,
            "tiers": [{"min_quantity": "2", "percent": "5"}],
            "items": [{"product_id": s.products["apple"], "quantity": "1"}],
            "price": "1.00",
            "starts_on": DAY,
            "ends_on": DAY,
            "weekdays": [1, 2],
            "from_time": "09:00",
            "until_time": "17:00",
            "priority": 1,
            "combines": True,
        },
        ("PATCH", f"{AD}/promotions/{{record_id}}"): {"name": "n", "ends_on": DAY, "version": 1},
    }
    for family, body in reference.items():
        bodies[("POST", f"{AD}/{family}")] = body
        bodies[("PATCH", f"{AD}/{family}/{{record_id}}")] = {**body, "version": 1}
    return bodies


STAFF_BODY = {"name": "n", "email": "e@x.example", "role": "cashier", "password": "pass word"}


PURCHASE_LINE = {"xid", "quantity", "unit_price", "selected_unit_id", "tax_id"}


async def send(
    client: httpx.AsyncClient, w: World, method: str, route: str, body: Body
) -> httpx.Response:
    """The body as JSON text with every non-ASCII character escaped (a lone surrogate
    can only travel so), with the credentials the route needs."""
    raw = json.dumps(body).encode()
    url, headers = target(w, method, route, raw)
    return await client.request(method, url, content=raw, headers=headers)


def target(w: World, method: str, route: str, raw: bytes) -> tuple[str, dict[str, str]]:
    """The URL of a route of ``body_operations`` and the headers it needs: the
    world's records in its path, its credentials, and for an admin edit the version
    it is based on (every record of the world is at version 1)."""
    headers = {"Content-Type": "application/json"}
    if route == "/terminal-callbacks/{provider}":
        headers["X-Service-Signature"] = crypto.hmac_hex(w.provider_secret, raw)
        return ROOT + w.provider_path, headers
    if route.startswith(AD):
        headers.update(w.admin)
        if method == "PATCH":
            headers["If-Match"] = '"1"'
        return ROOT + route.format(**w.path_ids(route)), headers
    headers.update(w.register if route.startswith("/register") else w.shop.headers)
    # A transfer of the world is not needed: its body is checked before its reference.
    ids = {"order_id": w.sale_id, "shift_id": w.shift_id, "ref": "999999999"}
    return ROOT + PUBLIC + route.format(**ids), headers


def assert_refused(r: httpx.Response, field: str, status: int = 422) -> dict[str, Any]:
    assert r.status_code == status, f"{field}: {r.status_code} {r.text}"
    out: dict[str, Any] = r.json()
    assert out["status"] == "error" and isinstance(out["message"], str) and out["message"], out
    if status == 422:
        assert field in out["errors"], f"expected errors[{field!r}]: {r.text}"
        messages = out["errors"][field]
        assert messages and all(isinstance(m, str) and m.strip() for m in messages), out
    return out


# --------------------------------------------------------------------- the OpenAPI document


def resolve(doc: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        schema = doc["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]]
    return schema


def string_paths(
    doc: dict[str, Any], schema: dict[str, Any], path: tuple[str | int, ...] = ()
) -> list[tuple[str | int, ...]]:
    """Every place a string may go in a body of this schema (array items as index 0)."""
    schema = resolve(doc, schema)
    found: list[tuple[str | int, ...]] = []
    for key in ("anyOf", "oneOf", "allOf"):
        for branch in schema.get(key, []):
            found += string_paths(doc, branch, path)
    kind = schema.get("type")
    if kind == "string":
        found.append(path)
    elif kind == "array":
        found += string_paths(doc, schema["items"], (*path, 0))
    for name, prop in schema.get("properties", {}).items():
        found += string_paths(doc, prop, (*path, name))
    return list(dict.fromkeys(found))


def body_operations(doc: dict[str, Any]) -> dict[tuple[str, str], list[tuple[str | int, ...]]]:
    """(method, route) -> string paths, for every operation with a JSON body."""
    out = {}
    for full_path, item in doc["paths"].items():
        for method, operation in item.items():
            content = operation.get("requestBody", {}).get("content", {})
            if "application/json" not in content:
                continue
            route = full_path.removeprefix(PUBLIC)  # an admin route keeps its prefix
            out[(method.upper(), route)] = string_paths(doc, content["application/json"]["schema"])
    return out


@pytest.fixture(scope="module")
async def document(client: httpx.AsyncClient) -> dict[str, Any]:
    r = await client.get(f"{ROOT}/openapi.json")
    assert r.status_code == 200
    doc: dict[str, Any] = r.json()
    return doc


def put_at(body: Body, path: tuple[str | int, ...], value: Any) -> Body:
    out = copy.deepcopy(body)
    target: Any = out
    for part in path[:-1]:
        target = target[part]  # the full body must hold every container of the schema
    target[path[-1]] = value
    return out


def dotted(path: tuple[str | int, ...]) -> str:
    return ".".join(str(p) for p in path)


async def test_every_body_and_string_property_is_covered(
    document: dict[str, Any], world: World
) -> None:
    """A new write endpoint, or a new object in a body, must be added to
    ``full_bodies`` — and so to the NUL checks below."""
    operations = body_operations(document)
    bodies = full_bodies(world)
    assert set(operations) == set(bodies)
    for op, paths in operations.items():
        assert paths, op
        for path in paths:
            put_at(bodies[op], path, "x")  # raises when the body lacks a container


def nul_cases() -> list[tuple[str, str, tuple[str | int, ...]]]:
    """Computed from the document itself at collection time."""
    from tillbook.app import create_app
    from tillbook.config import Settings

    doc = create_app(Settings(database_url="sqlite://")).openapi()
    return [
        (method, route, path)
        for (method, route), paths in sorted(body_operations(doc).items())
        for path in paths
    ]


@pytest.mark.parametrize(
    ("method", "route", "path"), nul_cases(), ids=lambda v: dotted(v) if isinstance(v, tuple) else v
)
async def test_nul_in_any_string_property_is_a_422_naming_it(
    client: httpx.AsyncClient,
    db: Database,
    world: World,
    method: str,
    route: str,
    path: tuple[str | int, ...],
) -> None:
    before = await snapshot(db, world.shop)
    body = put_at(full_bodies(world)[(method, route)], path, "a\x00b")
    assert_refused(await send(client, world, method, route, body), dotted(path))
    assert await snapshot(db, world.shop) == before


@pytest.mark.parametrize("char", ["\x01", "\x08", "\x0b", "\x1f", "\ud800", "\udfff"])
async def test_other_control_characters_and_lone_surrogates_everywhere(
    client: httpx.AsyncClient, db: Database, world: World, document: dict[str, Any], char: str
) -> None:
    """All string properties of a body at once: each is named."""
    before = await snapshot(db, world.shop)
    for (method, route), paths in body_operations(document).items():
        body = full_bodies(world)[(method, route)]
        for path in paths:
            body = put_at(body, path, f"a{char}b")
        r = await send(client, world, method, route, body)
        assert r.status_code == 422, (route, r.text)
        named = set(r.json()["errors"])
        assert {dotted(p) for p in paths} <= named, (route, named)
    assert await snapshot(db, world.shop) == before


FREE_TEXT = "line one\r\n\tline two"


@pytest.mark.parametrize(
    ("route", "edit"),
    [
        ("/sales", lambda s, b: sale_body(s)),
        ("/purchases", lambda s, b: {**sale_body(s), "user_id": s.supplier_id}),
        ("/sales-returns", lambda s, b: returned("sales", (1, 1))(s, b)),
        ("/payments", lambda s, b: {**payment("1.00")(s, b), "reference": "tab\there"}),
        ("/expenses", lambda s, b: b),
        ("/stock-adjustments", lambda s, b: adjustment(1)(s, b)),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
async def test_tab_cr_lf_are_kept_in_free_text(
    client: httpx.AsyncClient, db: Database, route: str, edit: Edit
) -> None:
    shop = await make_shop(db)
    base = expense_body(await expense_category(db, shop))(shop, {}) if route == "/expenses" else {}
    body = {**edit(shop, base), "notes": FREE_TEXT}
    r = await client.post(route, content=json.dumps(body), headers=json_headers(shop))
    assert r.status_code == 200, r.text
    if route == "/sales":
        notes = await db.read(
            lambda s: s.scalar(select(Order.notes).where(Order.id == r.json()["order_id"]))
        )
        assert notes == FREE_TEXT
    await check_books(db, shop.company_id)


def query_cases() -> list[tuple[str, str, str]]:
    """(route, parameter, where) for every string parameter of every operation."""
    from tillbook.app import create_app
    from tillbook.config import Settings

    doc = create_app(Settings(database_url="sqlite://")).openapi()
    cases = []
    for full_path, item in sorted(doc["paths"].items()):
        for method, operation in item.items():
            for param in operation.get("parameters", []):
                if param["in"] in ("query", "path"):
                    cases.append((f"{method.upper()} {full_path}", param["name"], param["in"]))
    return cases


@pytest.mark.parametrize(("operation", "name", "where"), query_cases())
async def test_nul_in_any_query_or_path_parameter(
    client: httpx.AsyncClient,
    db: Database,
    world: World,
    operation: str,
    name: str,
    where: str,
) -> None:
    """A NUL (and other control characters) in a parameter is a 4xx in the envelope: a
    422 naming the parameter, or a 404 where it names a record."""
    method, full_path = operation.split(" ")
    before = await snapshot(db, world.shop)
    for value in ("%00", "1%00", "a%01b", "%1F"):
        path, query = full_path, ""
        if where == "path":
            path = full_path.replace("{" + name + "}", value)
        else:
            query = f"?{name}={value}"
        for other in ("provider", "order_id", "ref"):
            path = path.replace("{" + other + "}", "1")
        if full_path.startswith(AD):
            # The other path parameters name real records of the world.
            for other, real in world.path_ids(full_path).items():
                path = path.replace("{" + other + "}", str(real))
            headers = {**world.admin, "Content-Type": "application/json"}
            if method == "PATCH":
                headers["If-Match"] = '"1"'
        elif "terminal-callbacks" in full_path:
            headers = {"Content-Type": "application/json", "X-Service-Signature": "00"}
        else:
            headers = {**world.shop.headers, "Content-Type": "application/json"}
        r = await client.request(method, ROOT + path + query, headers=headers, content=b"{}")
        assert r.status_code in (404, 422), (operation, name, value, r.status_code, r.text)
        out = r.json()
        assert out["status"] == "error" and out["message"], out
        if r.status_code == 422:
            assert name in out["errors"], (operation, value, out)
    assert await snapshot(db, world.shop) == before


@pytest.mark.parametrize("number", ["1e99999999999999999999", "-2.5e-99999999999999999999"])
async def test_a_number_beyond_any_decimal_is_a_400_everywhere(
    client: httpx.AsyncClient, db: Database, world: World, document: dict[str, Any], number: str
) -> None:
    """JSON carries exponents that Decimal cannot represent (InvalidOperation, not a
    ValueError): refused while the body is parsed, like NaN, on every body."""
    before = await snapshot(db, world.shop)
    for method, route in body_operations(document):
        raw = json.dumps(full_bodies(world)[(method, route)])
        text = raw[:-1] + f', "extra": {number}}}'  # an unknown field: parsed, then ignored
        url, headers = target(world, method, route, text.encode())
        r = await client.request(method, url, content=text.encode(), headers=headers)
        assert_refused(r, "", status=400)
    assert await snapshot(db, world.shop) == before


async def test_idempotency_key_with_a_control_character(
    client: httpx.AsyncClient, db: Database, world: World
) -> None:
    before = await snapshot(db, world.shop)
    r = await client.post(
        "/sales",
        json=sale_body(world.shop),
        headers={**world.shop.headers, "Idempotency-Key": "till-1\x01"},
    )
    assert_refused(r, "Idempotency-Key")
    assert await snapshot(db, world.shop) == before


# --------------------------------------------------------------------- numbers


Edit = Callable[[Shop, Body], Body]


@dataclass(frozen=True)
class Case:
    id: str
    route: str
    body: Edit
    field: str
    before: tuple[tuple[str, Edit], ...] = ()  # requests that must succeed first
    allow_negative: bool = False
    purchase_price: str | None = None  # set on the apple first
    sales_price: str | None = None  # likewise
    taxed: bool = False  # the apple taxed at 10% (exclusive)


def line(quantity: Any, unit_price: Any, **more: Any) -> Edit:
    return lambda s, b: {
        **b,
        "product_items": [
            {**b["product_items"][0], "quantity": quantity, "unit_price": unit_price, **more}
        ],
    }


def lines(*pairs: tuple[Any, Any]) -> Edit:
    return lambda s, b: {
        **b,
        "product_items": [
            {"xid": s.xid("apple"), "quantity": q, "unit_price": p} for q, p in pairs
        ],
    }


def sale(edit: Edit) -> Edit:
    return lambda s, b: edit(s, sale_body(s))


def purchase(edit: Edit) -> Edit:
    return lambda s, b: edit(s, {**sale_body(s), "user_id": s.supplier_id})


def returned(kind: str, *pairs: tuple[Any, Any]) -> Edit:
    def build(s: Shop, b: Body) -> Body:
        return {
            "user_id": s.customer_id if kind == "sales" else s.supplier_id,
            "order_date": DAY,
            "items": [
                {"product_id": s.xid("apple"), "quantity": q, "unit_price": p} for q, p in pairs
            ],
        }

    return build


def fields(**values: Any) -> Edit:
    def build(s: Shop, b: Body) -> Body:
        out = dict(b)
        for key, value in values.items():
            out[key] = value(s) if callable(value) else value
        return out

    return build


def payment(amount: Any, **more: Any) -> Edit:
    return lambda s, b: {
        "user_id": s.customer_id,
        "payment_type": "in",
        "amount": amount,
        "payment_mode_id": "cash",
        **more,
    }


def adjustment(quantity: Any, kind: str = "add", **more: Any) -> Edit:
    return lambda s, b: {
        "product_id": s.xid("apple"),
        "quantity": quantity,
        "adjustment_type": kind,
        **more,
    }


NINE_E15 = "9000000000000000"  # money: a payment
# 9e15 as a line: 100 × a price of 9e13 (a unit price holds at most 14 whole digits)
LINE_9E15 = (100, "90000000000000")
NUMBER_CASES = [
    # a line whose product overflows money, though each number passes (the issue's example)
    Case("sale line BIG x BIG", "/sales", sale(line(BIG, BIG)), "product_items.0.quantity"),
    Case("sale line 1000 x BIG", "/sales", sale(line(1000, BIG)), "product_items.0.quantity"),
    Case(
        "sale lines summing past money",
        "/sales",
        sale(lines((1000, "6000000000000"), (1000, "6000000000000"))),
        "product_items.1.quantity",
    ),
    Case(
        "sale line pushed past money by its tax",
        "/sales",
        sale(lambda s, b: line(100, "95000000000000", tax_id=s.tax10_id)(s, b)),
        "product_items.0.quantity",
    ),
    Case(
        "sale pushed past money by shipping",
        "/sales",
        sale(lambda s, b: {**line(*LINE_9E15)(s, b), "shipping": MAX_MONEY}),
        "shipping",
    ),
    Case(
        "sale of boxes past the quantity column",
        "/sales",
        sale(
            lambda s, b: {
                **b,
                "product_items": [
                    {
                        "xid": s.xid("water"),
                        "quantity": "9999999999999.9999",
                        "unit_price": 0,
                        "selected_unit_id": s.box_unit_id,
                    }
                ],
            }
        ),
        "product_items.0.quantity",
    ),
    Case(
        "sale quantity 1e14", "/sales", sale(line("100000000000000", 0)), "product_items.0.quantity"
    ),
    Case(
        "sale unit_price 1e14",
        "/sales",
        sale(line(1, "100000000000000")),
        "product_items.0.unit_price",
    ),
    Case(
        "sale quantity 1E-99999999",
        "/sales",
        sale(line("1E-99999999", 1)),
        "product_items.0.quantity",
    ),
    Case(
        "sale unit_price 5E-1000000000",
        "/sales",
        sale(line(1, "5E-1000000000")),
        "product_items.0.unit_price",
    ),
    Case(
        "sale discount_rate 1E-99999999",
        "/sales",
        sale(line(1, 1, discount_rate="1E-99999999")),
        "product_items.0.discount_rate",
    ),
    Case("sale discount 1e16", "/sales", sale(fields(discount="10000000000000000")), "discount"),
    Case("sale shipping 1e16", "/sales", sale(fields(shipping="10000000000000000")), "shipping"),
    Case("sale total 1e16", "/sales", sale(fields(total="10000000000000000")), "total"),
    Case(
        "sale tender 1e16",
        "/sales",
        sale(fields(all_payments=[{"amount": "10000000000000000", "payment_mode_id": "cash"}])),
        "all_payments.0.amount",
    ),
    Case(
        "sale taking the customer's balance past money",
        "/sales",
        sale(line(*LINE_9E15)),
        "product_items",
        before=(("/sales", sale(line(*LINE_9E15))),),
        allow_negative=True,
    ),
    Case(
        "sale taking stock below the quantity column",
        "/sales",
        sale(line(100, 0)),
        "product_items.0.quantity",
        before=(("/sales", sale(line("99999999999999.9999", 0))),),
        allow_negative=True,
    ),
    Case(
        "sale whose deficit layer costs more than money",
        "/sales",
        sale(line(1000, 0)),
        "product_items.0.quantity",
        allow_negative=True,
        purchase_price=BIG,
    ),
    Case(
        "purchase line BIG x BIG",
        "/purchases",
        purchase(line(BIG, BIG)),
        "product_items.0.quantity",
    ),
    Case(
        "purchase pushing stock past the quantity column",
        "/purchases",
        purchase(line(BIG, 0)),
        "product_items.0.quantity",
    ),
    Case(
        "purchase of two lines pushing stock past the quantity column",
        "/purchases",
        purchase(lines(("60000000000000", 0), ("60000000000000", 0))),
        "product_items.1.quantity",
    ),
    Case(
        "purchase whose unit cost is beyond a price",
        "/purchases",
        purchase(line("0.0001", "99999999999999.9999")),
        "product_items.0.quantity",
    ),
    Case(
        "purchase taking the supplier's balance past money",
        "/purchases",
        purchase(line(*LINE_9E15)),
        "product_items",
        before=(("/purchases", purchase(line(*LINE_9E15))),),
    ),
    Case(
        "sales return BIG x BIG",
        "/sales-returns",
        returned("sales", (BIG, BIG)),
        "items.0.quantity",
    ),
    Case(
        "sales return lines summing past money",
        "/sales-returns",
        returned("sales", (100, "60000000000000"), (100, "60000000000000")),
        "items.1.quantity",
    ),
    Case(
        "sales return pushing stock past the quantity column",
        "/sales-returns",
        returned("sales", (BIG, 0)),
        "items.0.quantity",
    ),
    Case(
        "sales returns taking the customer's credit past money",
        "/sales-returns",
        returned("sales", LINE_9E15),
        "items",
        before=(("/sales-returns", returned("sales", LINE_9E15)),),
        sales_price=LINE_9E15[1],  # without an invoice a refund is at most the shelf price
    ),
    Case(
        "sales return pushed past money by the product's tax",
        "/sales-returns",
        returned("sales", (100, "95000000000000")),
        "items.0.quantity",
        sales_price="95000000000000",
        taxed=True,
    ),
    Case(
        "purchase return BIG x BIG",
        "/purchase-returns",
        returned("purchase", (BIG, BIG)),
        "items.0.quantity",
    ),
    Case("payment of 1e16", "/payments", payment("10000000000000000"), "amount"),
    Case("payment of 1E-99999999", "/payments", payment("1E-99999999"), "amount"),
    Case(
        "allocation of 1e16",
        "/payments",
        payment("1.00", invoices=[{"order_id": 1, "amount": "10000000000000000"}]),
        "invoices.0.amount",
    ),
    Case(
        "payments taking the customer's credit past money",
        "/payments",
        payment(NINE_E15),
        "amount",
        before=(("/payments", payment(NINE_E15)),),
    ),
    Case("expense of 1e16", "/expenses", fields(amount="10000000000000000"), "amount"),
    Case("adjustment of 1e14", "/stock-adjustments", adjustment("100000000000000"), "quantity"),
    Case("adjustment 1E-99999999", "/stock-adjustments", adjustment("1E-99999999"), "quantity"),
    Case(
        "adjustment pushing stock past the quantity column",
        "/stock-adjustments",
        adjustment(BIG),
        "quantity",
    ),
    Case(
        "adjustment whose cost is beyond money (and Decimal's 28 digits)",
        "/stock-adjustments",
        adjustment("10000000000000"),
        "quantity",
        purchase_price=BIG,
    ),
    Case(
        "adjustment taking stock below the quantity column",
        "/stock-adjustments",
        adjustment("100", "subtract"),
        "quantity",
        before=(("/stock-adjustments", adjustment("99999999999999.9999", "subtract")),),
        allow_negative=True,
    ),
    Case(
        "price of 1e14",
        "/price-adjustments",
        lambda s, b: {"product_id": s.xid("apple"), "new_sales_price": "100000000000000"},
        "new_sales_price",
    ),
]


def expense_body(category: int) -> Edit:
    return lambda s, b: {"expense_category_id": category, "amount": "1.00", "date": DAY, **b}


async def expense_category(db: Database, shop: Shop) -> int:
    found = await db.read(
        lambda s: s.scalar(
            select(ExpenseCategory.id).where(ExpenseCategory.company_id == shop.company_id)
        )
    )
    assert isinstance(found, int)
    return found


async def prepared_shop(db: Database, case: Case) -> Shop:
    shop = await make_shop(db, allow_negative_stock=case.allow_negative)
    prices = {
        name: D(value)
        for name, value in (
            ("purchase_price", case.purchase_price),
            ("sales_price", case.sales_price),
        )
        if value is not None
    }
    apple = shop.products["apple"]
    if prices:
        await db.write(
            lambda s: s.execute(
                update(Listing)
                .where(Listing.product_id == apple, Listing.warehouse_id == shop.warehouse_id)
                .values(**prices)
            )
        )
    if case.taxed:
        await db.write(
            lambda s: s.execute(
                update(Product).where(Product.id == apple).values(tax_id=shop.tax10_id)
            )
        )
    return shop


@pytest.mark.parametrize("case", NUMBER_CASES, ids=lambda c: c.id)
async def test_numbers_and_their_results_within_the_columns(
    client: httpx.AsyncClient, db: Database, backend: str, case: Case
) -> None:
    """Each case a 422 naming the field, nothing written, the books balanced. (SQLite
    keeps NUMERIC as floating point: after the cases that first write values near the
    bounds, its sums are not exact to the cent, so the books are checked on PostgreSQL
    there.)"""
    shop = await prepared_shop(db, case)
    category = await expense_category(db, shop)

    def body(edit: Edit) -> Body:
        base = expense_body(category)(shop, {}) if case.route == "/expenses" else {}
        return edit(shop, base)

    for route, edit in case.before:
        r = await client.post(route, content=json.dumps(body(edit)), headers=json_headers(shop))
        assert r.status_code == 200, (case.id, r.text)
    before = await snapshot(db, shop)
    r = await client.post(
        case.route, content=json.dumps(body(case.body)), headers=json_headers(shop)
    )
    assert_refused(r, case.field)
    assert await snapshot(db, shop) == before
    if backend == "postgresql" or not case.before:
        await check_books(db, shop.company_id)


def json_headers(shop: Shop) -> dict[str, str]:
    return {**shop.headers, "Content-Type": "application/json"}


async def test_terminal_callback_amount_beyond_money(
    client: httpx.AsyncClient, db: Database, world: World
) -> None:
    before = await snapshot(db, world.shop)
    for amount in ("10000000000000000", "1E-99999999"):
        body = {
            "order_id": world.sale_id,
            "status": "confirmed",
            "amount": amount,
            "reference": "x",
        }
        assert_refused(
            await send(client, world, "POST", "/terminal-callbacks/{provider}", body), "amount"
        )
    assert await snapshot(db, world.shop) == before


async def test_the_largest_values_the_books_hold_are_accepted(
    client: httpx.AsyncClient, db: Database, backend: str
) -> None:
    """The bounds are the columns', not tighter: stock up to the largest quantity, and
    a sale of exactly the largest amount (100 × the largest unit price)."""
    shop = await make_shop(db)
    top = bounds.QTY.max - 20  # the apple has 20 in stock
    r = await client.post(
        "/purchases",
        json={**sale_body(shop, str(top), 0), "user_id": shop.supplier_id},
        headers=shop.headers,
    )
    assert r.status_code == 200, r.text
    r = await client.post(
        "/sales", json=sale_body(shop, 100, str(bounds.PRICE.max)), headers=shop.headers
    )
    assert r.status_code == 200, r.text
    assert r.json()["due_amount"] == MAX_MONEY
    if backend == "postgresql":  # SQLite keeps these as floats
        stock = await db.read(
            lambda s: s.scalar(
                select(Listing.current_stock).where(Listing.product_id == shop.products["apple"])
            )
        )
        assert stock == bounds.QTY.max - 100
        customer = await db.read(lambda s: by_id(s, User, shop.customer_id))
        assert customer.balance == bounds.MONEY.max
    await check_books(db, shop.company_id)


# --------------------------------------------------------------------- dates


def tomorrow() -> dt.date:
    return dt.datetime.now(dt.UTC).date() + dt.timedelta(days=1)


BAD_BUSINESS_DAYS = [
    "0001-01-01",
    "9999-12-31",
    "1969-12-31",
    "2999-01-01",
    "later",  # replaced by the day after tomorrow (UTC)
]
BAD_ORDER_DATETIMES = [
    "0001-01-01T00:00:00+14:00",
    "9999-12-31T23:59:59-14:00",
    "1969-12-31T23:59:59Z",
]


def day_value(value: str) -> str:
    return (tomorrow() + dt.timedelta(days=1)).isoformat() if value == "later" else value


DATE_ROUTES: list[tuple[str, str, Edit]] = [
    ("/sales", "order_date", lambda s, b: sale_body(s)),
    ("/purchases", "order_date", lambda s, b: {**sale_body(s), "user_id": s.supplier_id}),
    ("/sales-returns", "order_date", returned("sales", (1, 1))),
    ("/purchase-returns", "order_date", returned("purchase", (1, 1))),
    ("/payments", "date", payment("1.00")),
    ("/expenses", "date", lambda s, b: b),
]


def date_cases() -> list[tuple[str, str, Edit, str]]:
    return [
        (route, field, edit, value)
        for route, field, edit in DATE_ROUTES
        for value in BAD_BUSINESS_DAYS + (BAD_ORDER_DATETIMES if field == "order_date" else [])
    ]


@pytest.mark.parametrize(
    ("route", "field", "edit", "value"),
    date_cases(),
    ids=lambda v: v if isinstance(v, str) else "",
)
async def test_business_dates_from_1970_to_tomorrow(
    client: httpx.AsyncClient,
    db: Database,
    world: World,
    route: str,
    field: str,
    edit: Edit,
    value: str,
) -> None:
    base = expense_body(world.expense_category_id)(world.shop, {}) if route == "/expenses" else {}
    body = {**edit(world.shop, base), field: day_value(value)}
    before = await snapshot(db, world.shop)
    r = await client.post(route, content=json.dumps(body), headers=json_headers(world.shop))
    assert_refused(r, field)
    assert await snapshot(db, world.shop) == before


@pytest.mark.parametrize(
    ("route", "field", "edit"), DATE_ROUTES, ids=lambda v: v if isinstance(v, str) else ""
)
async def test_the_first_and_the_last_business_day_are_accepted(
    client: httpx.AsyncClient, db: Database, route: str, field: str, edit: Edit
) -> None:
    shop = await make_shop(db)
    category = await expense_category(db, shop)
    for day in ("1970-01-01", tomorrow().isoformat()):
        base = expense_body(category)(shop, {}) if route == "/expenses" else {}
        body = {**edit(shop, base), field: day}
        r = await client.post(route, content=json.dumps(body), headers=json_headers(shop))
        assert r.status_code == 200, (day, r.text)
    await check_books(db, shop.company_id)


@pytest.mark.parametrize("value", ["0001-01-01", "9999-12-31", "1969-12-31"])
async def test_expiry_dates_the_database_cannot_hold(
    client: httpx.AsyncClient, db: Database, world: World, value: str
) -> None:
    before = await snapshot(db, world.shop)
    body = {
        "product_id": world.shop.xid("apple"),
        "quantity": 1,
        "adjustment_type": "add",
        "expiry_date": value,
    }
    r = await client.post("/stock-adjustments", json=body, headers=world.shop.headers)
    assert_refused(r, "expiry_date")
    assert await snapshot(db, world.shop) == before


async def test_an_expiry_years_ahead_is_kept(client: httpx.AsyncClient, db: Database) -> None:
    shop = await make_shop(db)
    for value in ("2099-12-31", "9999-12-30"):
        body = {
            "product_id": shop.xid("tea"),
            "quantity": 1,
            "adjustment_type": "add",
            "expiry_date": value,
        }
        r = await client.post("/stock-adjustments", json=body, headers=shop.headers)
        assert r.status_code == 200, r.text
    days = await db.read(
        lambda s: s.scalars(
            select(StockBatch.expiry_date)
            .where(StockBatch.product_id == shop.products["tea"])
            .order_by(StockBatch.id)
        )
    )
    assert list(days) == [dt.date(2099, 12, 31), dt.date(9999, 12, 30)]
    await check_books(db, shop.company_id)


@pytest.mark.parametrize(
    "query",
    [
        "dates=0001-01-01,2026-01-01",
        "dates=2026-01-01,9999-12-31",
        "dates=1969-12-31,",
        "dates=,9999-12-31",
        "dates=2026-01-01%00,2026-02-01",
    ],
)
@pytest.mark.parametrize(
    "route", ["/sales", "/purchases", "/sales-returns", "/purchase-returns", "/expenses"]
)
async def test_list_dates_the_database_cannot_hold(
    client: httpx.AsyncClient, world: World, route: str, query: str
) -> None:
    r = await client.get(f"{route}?{query}", headers=world.shop.headers)
    assert_refused(r, "dates")


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("from=0001-01-01", "from"),
        ("to=9999-12-31", "to"),
        ("from=1969-12-31", "from"),
        ("to=2026-01-01%00", "to"),
    ],
)
async def test_report_dates_the_database_cannot_hold(
    client: httpx.AsyncClient, world: World, query: str, field: str
) -> None:
    r = await client.get(f"{ADMIN}/reports/trial-balance?{query}", headers=world.admin)
    assert_refused(r, field)


# --------------------------------------------------------------------- the bounds themselves


def test_bounds_are_the_columns() -> None:
    """The limits and the model columns are one definition."""
    for column, kind in (
        (Order.total, bounds.MONEY),
        (User.balance, bounds.MONEY),
        (OrderItem.unit_price, bounds.PRICE),
        (Listing.current_stock, bounds.QTY),
        (StockBatch.value_remaining, bounds.MONEY),
        (OrderItem.discount_rate, bounds.RATE),
        (Payment.amount, bounds.MONEY),
    ):
        type_ = column.expression.type
        assert (type_.precision, type_.scale) == (kind.precision, kind.scale), column  # type: ignore[attr-defined]
    assert bounds.MONEY.max == D("9999999999999999.99")
    assert bounds.QTY.max == bounds.PRICE.max == D("99999999999999.9999")
    assert bounds.stored_length(Order.unique_id) == 100


def test_a_value_beyond_money_is_named_without_all_its_digits() -> None:
    """1e999999 is a valid decimal: the message for it must not be a megabyte."""
    from tillbook.kit.bounds import MONEY, exceeds

    huge = exceeds(Decimal("1e999999"), MONEY, "the total")
    assert huge is not None and len(huge) < 200 and "1.000000E+999999" in huge
    near = exceeds(Decimal("10000000000000000.00"), MONEY, "the total")
    assert near is not None and "10000000000000000.00" in near
    assert exceeds(Decimal("9999999999999999.99"), MONEY, "the total") is None
