"""Staff members and their roles in the back office: who may call which admin route,
warehouse scope, tenants kept apart, archiving, the last owner, optimistic
concurrency, idempotent admin POSTs, the audit trail, and the staff CLI.

The admin API is driven over HTTP through an app of this module's own, whose
client address is not the other admin tests' (failed logins are counted per
address)."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import subprocess
import uuid
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from sqlalchemy import func, select

from tests.cli.test_cli import _env
from tests.cli_process import run_cli
from tests.factories import Shop, by_id, make_shop
from tests.written import snapshot
from tillbook.app import create_app
from tillbook.config import Settings
from tillbook.db import Database
from tillbook.models import AdminSession, AuditEvent, User, Webhook

ADMIN = "http://testserver/api/v1/admin"
OWNER_PASSWORD = "correct horse battery"
PASSWORD = "staff password 1"


@pytest.fixture(scope="module")
async def app_and_admin(
    settings: Settings, db: Database
) -> AsyncIterator[tuple[Any, httpx.AsyncClient]]:
    app = create_app(settings, database=db)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app, client=("10.77.0.1", 4321))
        async with httpx.AsyncClient(transport=transport, base_url=ADMIN) as c:
            yield app, c


@pytest.fixture
def admin(app_and_admin: tuple[Any, httpx.AsyncClient]) -> httpx.AsyncClient:
    return app_and_admin[1]


Ids = dict[str, int]


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def owner_email(db: Database, company_id: int) -> str:
    email = await db.read(
        lambda s: s.scalar(
            select(User.email).where(User.company_id == company_id, User.role == "owner")
        )
    )
    assert email
    return email


async def login(admin: httpx.AsyncClient, email: str, password: str) -> dict[str, str]:
    r = await admin.post("/login", json={"email": email, "password": password})
    assert r.status_code == 200, r.text
    return auth(r.json()["token"])


async def owner(admin: httpx.AsyncClient, db: Database, shop: Shop) -> dict[str, str]:
    return await login(admin, await owner_email(db, shop.company_id), OWNER_PASSWORD)


async def add_staff(
    admin: httpx.AsyncClient,
    headers: dict[str, str],
    role: str,
    warehouse_id: int | None = None,
    **extra: Any,
) -> dict[str, Any]:
    email = f"{role}-{uuid.uuid4().hex[:8]}@example.com"
    body = {"name": f"A {role}", "email": email, "role": role, "password": PASSWORD, **extra}
    if warehouse_id is not None:
        body["warehouse_id"] = warehouse_id
    r = await admin.post("/staff", json=body, headers=headers)
    assert r.status_code == 200, r.text
    data: dict[str, Any] = r.json()["data"]
    assert data["email"] == email and data["role"] == role
    return data


async def staff_session(
    admin: httpx.AsyncClient,
    headers: dict[str, str],
    role: str,
    warehouse_id: int | None = None,
) -> tuple[dict[str, Any], dict[str, str]]:
    member = await add_staff(admin, headers, role, warehouse_id)
    return member, await login(admin, member["email"], PASSWORD)


def error(r: httpx.Response, status: int) -> str:
    assert r.status_code == status, r.text
    body = r.json()
    assert body["status"] == "error" and body["message"], body
    message: str = body["message"]
    return message


# ------------------------------------------------------------------ the role matrix

O, M, A, C = "owner", "manager", "accountant", "cashier"  # noqa: E741
EVERYONE = {O, M, A, C}
# (method, route path, path filled in, JSON body or None, roles allowed, permission).
# A body may be a function of the run's ids (``Ids``) or "csv:<kind>", a file sent
# as the multipart field ``file``.
MATRIX: list[tuple[str, str, str, Any, set[str], str | None]] = [
    ("POST", "/logout", "/logout", None, EVERYONE, None),
    ("GET", "/webhooks", "/webhooks", None, {O}, "webhooks.manage"),
    ("POST", "/webhooks", "/webhooks", {"url": "http://127.0.0.1:9/x"}, {O}, "webhooks.manage"),
    ("GET", "/webhooks/deliveries", "/webhooks/deliveries", None, {O}, "webhooks.manage"),
    ("GET", "/webhooks/deliveries/{delivery_id}/attempts",
     "/webhooks/deliveries/999999999/attempts", None, {O}, "webhooks.manage"),
    ("POST", "/webhooks/deliveries/{delivery_id}/redeliver",
     "/webhooks/deliveries/999999999/redeliver", None, {O}, "webhooks.manage"),
    ("POST", "/webhooks/{webhook_id}/disable", "/webhooks/{hook}/disable", None, {O},
     "webhooks.manage"),
    ("POST", "/webhooks/{webhook_id}/enable", "/webhooks/{hook}/enable", None, {O},
     "webhooks.manage"),
    ("POST", "/webhooks/{webhook_id}/rotate-secret", "/webhooks/{hook}/rotate-secret", None,
     {O}, "webhooks.manage"),
    ("DELETE", "/webhooks/{webhook_id}", "/webhooks/{hook}", None, {O}, "webhooks.manage"),
    ("GET", "/reports/trial-balance", "/reports/trial-balance", None, {O, M, A}, "books.read"),
    ("GET", "/reports/promotions", "/reports/promotions", None, {O, M, A}, "books.read"),
    ("GET", "/reports/stock-valuation", "/reports/stock-valuation", None, {O, M, A},
     "books.read"),
    ("GET", "/reports/profit-loss", "/reports/profit-loss", None, {O, M, A}, "books.read"),
    ("GET", "/reports/balance-sheet", "/reports/balance-sheet", None, {O, M, A}, "books.read"),
    ("GET", "/reports/ledger", "/reports/ledger?account=11101", None, {O, M, A}, "books.read"),
    ("GET", "/reports/statement", "/reports/statement?party_id={customer}", None, {O, M, A},
     "books.read"),
    ("GET", "/reports/check-rollups", "/reports/check-rollups", None, {O, M, A}, "books.read"),
    ("GET", "/periods", "/periods", None, {O, M, A}, "books.read"),
    # The books closed through a day long past (nothing else in the run is dated
    # there), then opened again.
    ("POST", "/periods/close", "/periods/close", {"through": "2020-01-31"}, {O, A},
     "books.close"),
    ("POST", "/periods/reopen", "/periods/reopen", {"through": None}, {O}, "books.reopen"),
    ("GET", "/staff", "/staff", None, {O}, "staff.manage"),
    ("POST", "/staff", "/staff", "new-staff", {O}, "staff.manage"),
    ("GET", "/staff/{staff_id}", "/staff/{target}", None, {O}, "staff.manage"),
    ("PATCH", "/staff/{staff_id}", "/staff/{target}", {"name": "Renamed", "version": 1}, {O},
     "staff.manage"),
    ("PUT", "/staff/{staff_id}/pin", "/staff/{target}/pin", {"pin": "1234"}, {O},
     "staff.manage"),
    ("POST", "/staff/{staff_id}/archive", "/staff/{target}/archive", None, {O},
     "staff.manage"),
    ("GET", "/registers/branches", "/registers/branches", None, {O, M}, "registers.manage"),
    ("GET", "/registers", "/registers", None, {O, M}, "registers.manage"),
    ("POST", "/registers", "/registers", lambda ids: {"warehouse_id": ids["wa"], "name": "MX"},
     {O, M}, "registers.manage"),
    ("POST", "/registers/{register_id}/revoke", "/registers/999999999/revoke", None, {O, M},
     "registers.manage"),
    # Money in and out, for a branch named in the body (these staff are unscoped). A
    # customer's payment is a cashier's too (payments.receive); an expense, its
    # approval and a move between cash and bank are a manager's; reading the moves
    # is the books'.
    ("POST", "/payments", "/payments",
     lambda i: {"warehouse_id": i["wa"], "user_id": i["payer"], "payment_type": "in",
                "amount": "5.00", "payment_mode_id": "cash"},
     {O, M, C}, "payments.receive"),
    # Gift cards: the list and a statement are the books'; selling one is taking
    # a customer's money (a cashier's too).
    ("GET", "/gift-cards", "/gift-cards", None, {O, M, A}, "books.read"),
    ("GET", "/gift-cards/{card_id}", "/gift-cards/999999999", None, {O, M, A}, "books.read"),
    ("POST", "/gift-cards", "/gift-cards",
     lambda i: {"warehouse_id": i["wa"], "amount": "5.00",
                "all_payments": [{"amount": "5.00", "payment_mode_id": "cash"}]},
     {O, M, C}, "payments.receive"),
    # Loyalty: the programme is read with the books (its points are on 21400) and
    # set by the owner (settings, company-wide); a customer's points with the
    # customer.
    ("GET", "/loyalty", "/loyalty", None, {O, M, A}, "books.read"),
    ("PUT", "/loyalty", "/loyalty", {"earn_unit": "1.00", "point_value": "0.05"}, {O},
     "settings.write"),
    ("GET", "/customers/{customer_id}/loyalty", "/customers/{customer}/loyalty", None,
     EVERYONE, "parties.read"),
    ("POST", "/expenses", "/expenses",
     lambda i: {"warehouse_id": i["wa"], "expense_category_id": i["expense-categories"],
                "amount": "3.00", "date": dt.date.today().isoformat(),
                "payment_mode_id": "cash"},
     {O, M}, "expenses.write"),
    ("POST", "/expenses/{expense_id}/pay", "/expenses/999999999/pay",
     {"payment_mode_id": "cash"}, {O, M}, "expenses.approve"),
    ("POST", "/money-moves", "/money-moves",
     lambda i: {"warehouse_id": i["wa"], "from_payment_mode_id": "cash",
                "to_payment_mode_id": "bank", "amount": "1.00"},
     {O, M}, "money.move"),
    ("GET", "/money-moves", "/money-moves", None, {O, M, A}, "books.read"),
    # Stocktakes: the branch's stock work (the sheet shows costs).
    ("GET", "/stock-counts", "/stock-counts", None, {O, M}, "stock.write"),
    ("POST", "/stock-counts", "/stock-counts", lambda i: {"warehouse_id": i["wa"]}, {O, M},
     "stock.write"),
    ("GET", "/stock-counts/{count_id}", "/stock-counts/999999999", None, {O, M},
     "stock.write"),
    ("POST", "/stock-counts/{count_id}/entries", "/stock-counts/999999999/entries",
     {"items": []}, {O, M}, "stock.write"),
    ("POST", "/stock-counts/{count_id}/post", "/stock-counts/999999999/post", None, {O, M},
     "stock.write"),
    ("POST", "/stock-counts/{count_id}/cancel", "/stock-counts/999999999/cancel", None,
     {O, M}, "stock.write"),
    # Buying: purchase orders are the branch's (purchases.write); reading them is the
    # books'.
    ("GET", "/purchase-orders", "/purchase-orders", None, {O, M, A}, "books.read"),
    ("POST", "/purchase-orders", "/purchase-orders",
     lambda i: {"warehouse_id": i["wa"], "supplier_id": i["supplier"],
                "lines": [{"product_id": i["product"], "quantity": 1, "unit_cost": "1.00"}]},
     {O, M}, "purchases.write"),
    ("GET", "/purchase-orders/{po_id}", "/purchase-orders/999999999", None, {O, M, A},
     "books.read"),
    ("PUT", "/purchase-orders/{po_id}", "/purchase-orders/999999999",
     lambda i: {"supplier_id": i["supplier"],
                "lines": [{"product_id": i["product"], "quantity": 1, "unit_cost": "1.00"}]},
     {O, M}, "purchases.write"),
    ("POST", "/purchase-orders/{po_id}/order", "/purchase-orders/999999999/order", None,
     {O, M}, "purchases.write"),
    ("POST", "/purchase-orders/{po_id}/receipts", "/purchase-orders/999999999/receipts",
     lambda i: {"order_date": dt.date.today().isoformat(),
                "lines": [{"product_id": i["product"], "quantity": 1}]},
     {O, M}, "purchases.write"),
    ("POST", "/purchase-orders/{po_id}/close", "/purchase-orders/999999999/close", None,
     {O, M}, "purchases.write"),
    # Batch price changes: the branch's prices (prices.write). Applied to a branch that
    # does not exist: not found for those who may, refused to the others first.
    ("POST", "/price-changes/preview", "/price-changes/preview",
     lambda i: {"warehouse_ids": [i["wa"]], "scope": "list", "item_codes": ["MX-T"],
                "method": "percent", "value": "5"},
     {O, M}, "prices.write"),
    ("POST", "/price-changes", "/price-changes",
     {"warehouse_ids": [999999999], "scope": "list", "item_codes": ["MX-T"],
      "method": "percent", "value": "5", "fingerprint": "f"},
     {O, M}, "prices.write"),
    ("GET", "/price-changes", "/price-changes", None, {O, M}, "prices.write"),
    ("GET", "/audit", "/audit", None, {O, A}, "audit.read"),
    # The catalog: the listing rows before the product's archive.
    ("GET", "/products", "/products", None, EVERYONE, "catalog.read"),
    ("POST", "/products", "/products",
     lambda i: {"name": "Matrix tea", "item_code": "MX-NEW",
                "listings": [{"warehouse_id": i["wa"], "sales_price": "2.00",
                              "purchase_price": "1.00",
                              "opening_stock": {"quantity": 2, "unit_cost": "1.00"}}]},
     {O, M}, "catalog.write"),
    ("GET", "/products/{product_id}", "/products/{product}", None, EVERYONE, "catalog.read"),
    ("POST", "/products/{product_id}/listings", "/products/{product}/listings",
     lambda i: {"warehouse_id": i["wb"], "sales_price": "2.50", "purchase_price": "1.20"},
     {O, M}, "catalog.write"),
    ("PATCH", "/products/{product_id}/listings/{warehouse_id}",
     "/products/{product}/listings/{wb}", {"sales_price": "2.60", "version": 1}, {O, M},
     "catalog.write"),
    ("POST", "/products/{product_id}/listings/{warehouse_id}/opening-stock",
     "/products/{product}/listings/{wb}/opening-stock", {"quantity": 3, "unit_cost": "1.10"},
     {O, M}, "stock.write"),
    ("PATCH", "/products/{product_id}", "/products/{product}",
     {"name": "Matrix target renamed", "version": 1}, {O, M}, "catalog.write"),
    ("POST", "/products/{product_id}/archive", "/products/{product}/archive", None, {O, M},
     "catalog.write"),
    # Customers and suppliers.
    ("GET", "/customers", "/customers", None, EVERYONE, "parties.read"),
    ("POST", "/customers", "/customers", {"name": "Matrix customer", "phone": "555"},
     {O, M, C}, "parties.write"),
    ("GET", "/customers/{party_id}", "/customers/{customer}", None, EVERYONE, "parties.read"),
    ("PATCH", "/customers/{party_id}", "/customers/{customer}",
     {"name": "Renamed customer", "version": 1}, {O, M, C}, "parties.write"),
    ("POST", "/customers/{party_id}/archive", "/customers/{customer}/archive", None,
     {O, M, C}, "parties.write"),
    ("POST", "/import/customers", "/import/customers", "csv:customers", {O, M},
     "parties.credit"),
    ("GET", "/export/customers", "/export/customers", None, EVERYONE, "parties.read"),
    ("GET", "/suppliers", "/suppliers", None, EVERYONE, "parties.read"),
    ("POST", "/suppliers", "/suppliers", {"name": "Matrix supplier"}, {O, M},
     "suppliers.write"),
    ("GET", "/suppliers/{party_id}", "/suppliers/{supplier}", None, EVERYONE, "parties.read"),
    ("PATCH", "/suppliers/{party_id}", "/suppliers/{supplier}",
     {"name": "Renamed supplier", "version": 1}, {O, M}, "suppliers.write"),
    ("POST", "/suppliers/{party_id}/archive", "/suppliers/{supplier}/archive", None, {O, M},
     "suppliers.write"),
    ("POST", "/import/suppliers", "/import/suppliers", "csv:suppliers", {O, M},
     "parties.credit"),
    ("GET", "/export/suppliers", "/export/suppliers", None, EVERYONE, "parties.read"),
    # The catalog's import and export (the lead's routes; rows here so that they are
    # checked the day they exist, see COMING).
    ("POST", "/import/products", "/import/products", "csv:products", {O, M}, "catalog.write"),
    ("GET", "/export/products", "/export/products", None, EVERYONE, "catalog.read"),
    # Currencies and rates (DESIGN §16): read with the books, changed by the owner.
    ("GET", "/currencies", "/currencies", None, {O, M, A}, "books.read"),
    ("POST", "/currencies", "/currencies", {"currency": "EUR"}, {O}, "settings.write"),
    ("GET", "/exchange-rates", "/exchange-rates", None, {O, M, A}, "books.read"),
    ("POST", "/exchange-rates", "/exchange-rates",
     {"currency": "EUR", "date": "2026-11-02", "rate": "1.08"}, {O}, "settings.write"),
    ("POST", "/exchange-rates/import", "/exchange-rates/import", "csv:rates", {O},
     "settings.write"),
    ("POST", "/currencies/{code}/disable", "/currencies/EUR/disable", None, {O},
     "settings.write"),
]  # fmt: skip
# Reference data: every family has the same five routes.
REFERENCE = {
    # family: (permission of its writes, the target's body, a new record's body)
    "units": ("catalog.write", {"name": "Matrix crate", "short_name": "mxc"},
              {"name": "Matrix tub", "short_name": "mxt"}),
    "categories": ("catalog.write", {"name": "Matrix snacks"}, {"name": "Matrix nuts"}),
    "brands": ("catalog.write", {"name": "Matrix brand"}, {"name": "Matrix other brand"}),
    "taxes": ("settings.write", {"name": "Matrix tax", "rate": "7.5"},
              {"name": "Matrix levy", "rate": "2"}),
    "payment-modes": ("settings.write",
                      {"code": "mxbank", "name": "Matrix bank", "account_code": "11101"},
                      {"code": "mxcheque", "name": "Matrix cheque", "account_code": "11101"}),
    "expense-categories": ("settings.write", {"name": "Matrix rent", "account_code": "52900"},
                           {"name": "Matrix fuel", "account_code": "52900"}),
    "warehouses": ("settings.write", {"name": "Matrix depot"}, {"name": "Matrix kiosk"}),
    "promotions": ("prices.write",
                   {"name": "Matrix offer", "kind": "percent_off", "percent": "5",
                    "starts_on": "2099-01-01"},
                   {"name": "Matrix deal", "kind": "amount_off", "amount": "0.10",
                    "starts_on": "2099-01-01"}),
}  # fmt: skip
for _family, (_permission, _body, _new) in REFERENCE.items():
    _writers = {O, M} if _permission in ("catalog.write", "prices.write") else {O}
    _one = f"/{_family}/{{record_id}}"
    _target = f"/{_family}/{{{_family}}}"
    MATRIX += [
        ("GET", f"/{_family}", f"/{_family}", None, EVERYONE, "catalog.read"),
        ("POST", f"/{_family}", f"/{_family}", _new, _writers, _permission),
        ("GET", _one, _target, None, EVERYONE, "catalog.read"),
        ("PATCH", _one, _target, {"name": "Renamed", "version": 1}, _writers, _permission),
    ]  # fmt: skip
    if _family == "promotions":  # paused and resumed before it is archived
        MATRIX += [
            ("POST", f"{_one}/pause", f"{_target}/pause", {"version": 2}, _writers, _permission),
            ("POST", f"{_one}/resume", f"{_target}/resume", {"version": 3}, _writers,
             _permission),
        ]  # fmt: skip
    _archived = 4 if _family == "promotions" else 2
    MATRIX += [
        ("POST", f"{_one}/archive", f"{_target}/archive", {"version": _archived}, _writers,
         _permission),
    ]  # fmt: skip
# Routes being written at the same time as these rows (the lead's product import and
# export): checked once they exist, and only then required.
COMING = {("POST", "/import/products"), ("GET", "/export/products")}
CSV = {
    "customers": b"code,name\nMX-C1,Matrix import\n",
    "suppliers": b"code,name\nMX-S1,Matrix import\n",
    "products": b"item_code,name\n",
    "rates": b"date,currency,rate\n2026-11-03,EUR,1.09\n",
}


def admin_routes(app: Any) -> set[tuple[str, str]]:
    return {
        (method.upper(), path.removeprefix("/api/v1/admin"))
        for path, operations in app.openapi()["paths"].items()
        if path.startswith("/api/v1/admin")
        for method in operations
    }


def test_the_matrix_covers_every_admin_route(
    app_and_admin: tuple[Any, httpx.AsyncClient],
) -> None:
    """A route added without a row here fails this test, so no admin route goes
    unchecked by role."""
    routes = admin_routes(app_and_admin[0])
    routes.discard(("POST", "/login"))  # before any session
    rows = [(method, path) for method, path, *_ in MATRIX]
    assert len(rows) == len(set(rows))
    assert routes == set(rows) - (COMING - routes)


async def matrix_targets(admin: httpx.AsyncClient, boss: dict[str, str], shop: Shop) -> Ids:
    """The records the matrix reads, edits and archives, made afresh by the owner."""
    ids: Ids = {"wa": shop.warehouse_id, "wb": shop.other_warehouse_id}
    ids["payer"] = shop.customer_id  # pays in advance: not the customer archived
    made = await admin.post(
        "/products",
        json={"name": "Matrix target", "item_code": "MX-T", "listings": [
            {"warehouse_id": shop.warehouse_id, "sales_price": "2", "purchase_price": "1"}]},
        headers=boss,
    )  # fmt: skip
    assert made.status_code == 201, made.text
    ids["product"] = made.json()["data"]["id"]
    for kind in ("customers", "suppliers"):
        r = await admin.post(f"/{kind}", json={"name": f"Target {kind}"}, headers=boss)
        assert r.status_code == 200, r.text
        ids[kind[:-1]] = r.json()["data"]["id"]
    for family, (_permission, body, _new) in REFERENCE.items():
        r = await admin.post(f"/{family}", json=body, headers=boss)
        assert r.status_code == 201, r.text
        ids[family] = r.json()["data"]["id"]
    return ids


@pytest.mark.parametrize("role", [O, M, A, C])
async def test_role_matrix(
    app_and_admin: tuple[Any, httpx.AsyncClient], db: Database, role: str
) -> None:
    app, admin = app_and_admin
    present = admin_routes(app)
    shop = await make_shop(db)
    boss = await owner(admin, db, shop)
    hook = await admin.post("/webhooks", json={"url": "http://127.0.0.1:9/h"}, headers=boss)
    hook_id = hook.json()["data"]["id"]
    target = (await add_staff(admin, boss, C))["id"]
    ids = await matrix_targets(admin, boss, shop)
    if role == O:
        headers = await owner(admin, db, shop)  # a second session of the owner
    else:
        _member, headers = await staff_session(admin, boss, role)
    # Logout ends the session: run it last, on a session of its own.
    for method, route, path, body, allowed, permission in [*MATRIX[1:], MATRIX[0]]:
        if (method, route) not in present:
            assert (method, route) in COMING
            continue
        if path == "/logout":
            headers = await login(admin, _member["email"], PASSWORD) if role != O else headers
        url = path.format(hook=hook_id, target=target, **ids)
        if body == "new-staff":
            body = {"name": "N", "email": f"n-{uuid.uuid4().hex[:8]}@x.example",
                    "role": C, "password": PASSWORD}  # fmt: skip
        elif callable(body):
            body = body(ids)
        if isinstance(body, str) and body.startswith("csv:"):
            files = {"file": ("f.csv", CSV[body[4:]], "text/csv")}
            r = await admin.request(method, url, files=files, headers=headers)
        else:
            r = await admin.request(method, url, json=body, headers=headers)
        if role in allowed:
            if (method, route) in COMING:  # its body is the lead's to define
                assert r.status_code != 403 and r.status_code < 500, (role, url, r.text)
                continue
            assert r.status_code in (200, 201, 404), (role, method, url, r.text)
            if "999999999" not in url and "999999999" not in json.dumps(body):
                assert r.status_code in (200, 201), (role, method, url, r.text)
        else:
            message = error(r, 403)
            assert permission is not None and repr(permission) in message, message
            assert f"the {role} role" in message
    # Nothing a refused role asked for happened.
    stored = await db.read(lambda s: by_id(s, Webhook, hook_id))
    if role == O:
        assert stored is None
    else:
        assert stored is not None and stored.active
        target_row = await db.read(lambda s: by_id(s, User, target))
        assert target_row is not None and target_row.archived_at is None
        assert target_row.name == "A cashier" and target_row.version == 1
    for what, may in [
        (f"/products/{ids['product']}", {O, M}),
        (f"/customers/{ids['customer']}", {O, M, C}),
        (f"/suppliers/{ids['supplier']}", {O, M}),
        *[(f"/{f}/{ids[f]}", {O, M} if p in ("catalog.write", "prices.write") else {O})
          for f, (p, *_bodies) in REFERENCE.items()],
    ]:  # fmt: skip
        record = (await admin.get(what, headers=boss)).json()["data"]
        if role in may:
            assert record["version"] > 1 and record["archived_at"], (what, record)
        else:
            assert record["version"] == 1 and record["archived_at"] is None, (what, record)
    listings = (await admin.get(f"/products/{ids['product']}", headers=boss)).json()["data"]
    warehouses = {li["warehouse_id"] for li in listings["listings"]}
    assert (shop.other_warehouse_id in warehouses) == (role in {O, M}), listings


# ------------------------------------------------------------------ warehouse scope


async def test_a_scoped_manager_reads_their_own_warehouse_only(
    admin: httpx.AsyncClient, db: Database
) -> None:
    shop = await make_shop(db)
    boss = await owner(admin, db, shop)
    member, manager = await staff_session(admin, boss, M, shop.warehouse_id)
    assert member["warehouse_id"] == shop.warehouse_id

    mine = await admin.get(
        f"/reports/stock-valuation?warehouse_id={shop.warehouse_id}", headers=manager
    )
    assert mine.status_code == 200, mine.text
    # Unfiltered, the report narrows to their warehouse instead of the company.
    narrowed = await admin.get("/reports/stock-valuation", headers=manager)
    assert narrowed.status_code == 200, narrowed.text
    assert narrowed.json()["data"] == mine.json()["data"]
    assert narrowed.json()["data"]["warehouse_id"] == shop.warehouse_id
    company = await admin.get("/reports/stock-valuation", headers=boss)
    assert "warehouses" in company.json()["data"]

    for path in ("stock-valuation", "trial-balance"):
        r = await admin.get(
            f"/reports/{path}?warehouse_id={shop.other_warehouse_id}", headers=manager
        )
        message = error(r, 403)
        assert "'books.read'" in message and f"warehouse {shop.warehouse_id}" in message
        # A made-up warehouse gets the same answer: the scope reveals nothing.
        r = await admin.get(f"/reports/{path}?warehouse_id=987654321", headers=manager)
        error(r, 403)
    tb_mine = await admin.get(
        f"/reports/trial-balance?warehouse_id={shop.warehouse_id}", headers=manager
    )
    tb_narrowed = await admin.get("/reports/trial-balance", headers=manager)
    assert tb_narrowed.json()["data"] == tb_mine.json()["data"]

    # An unscoped manager reads the whole company; a scoped accountant cannot read
    # the company-wide audit trail.
    _m, unscoped = await staff_session(admin, boss, M)
    r = await admin.get("/reports/stock-valuation", headers=unscoped)
    assert r.json()["data"] == company.json()["data"]
    _a, scoped_accountant = await staff_session(admin, boss, A, shop.other_warehouse_id)
    assert "'audit.read'" in error(await admin.get("/audit", headers=scoped_accountant), 403)


async def test_scope_rules_on_staff_records(admin: httpx.AsyncClient, db: Database) -> None:
    shop = await make_shop(db)
    other = await make_shop(db)
    boss = await owner(admin, db, shop)
    base = {"name": "X", "password": PASSWORD}
    r = await admin.post(
        "/staff",
        json={**base, "email": "o@scope.example", "role": O, "warehouse_id": shop.warehouse_id},
        headers=boss,
    )
    assert "warehouse_id" in r.json()["errors"] and r.status_code == 422
    # another company's warehouse is an unknown one
    r = await admin.post(
        "/staff",
        json={
            **base,
            "email": "m@scope.example",
            "role": M,
            "warehouse_id": other.warehouse_id,
        },
        headers=boss,
    )
    assert r.status_code == 422 and "warehouse_id" in r.json()["errors"], r.text
    r = await admin.post(
        "/staff", json={**base, "email": "c@scope.example", "role": "boss"}, headers=boss
    )
    assert r.status_code == 422 and "role" in r.json()["errors"], r.text


# ------------------------------------------------------------------ tenants apart


async def test_another_company_sees_nothing_of_ours(admin: httpx.AsyncClient, db: Database) -> None:
    a, b = await make_shop(db), await make_shop(db)
    a_owner, b_owner = await owner(admin, db, a), await owner(admin, db, b)
    a_member = await add_staff(admin, a_owner, C)
    hook = await admin.post("/webhooks", json={"url": "http://127.0.0.1:9/a"}, headers=a_owner)
    hook_id = hook.json()["data"]["id"]
    for method, path, body in [
        ("GET", f"/staff/{a_member['id']}", None),
        ("PATCH", f"/staff/{a_member['id']}", {"name": "Mine now", "version": 1}),
        ("POST", f"/staff/{a_member['id']}/archive", None),
        ("POST", f"/webhooks/{hook_id}/disable", None),
        ("POST", f"/webhooks/{hook_id}/rotate-secret", None),
        ("DELETE", f"/webhooks/{hook_id}", None),
    ]:
        r = await admin.request(method, path, json=body, headers=b_owner)
        assert "not found" in error(r, 404)
    listed = (await admin.get("/staff", headers=b_owner)).json()["data"]
    assert [s["email"] for s in listed["data"]] == [await owner_email(db, b.company_id)]
    assert listed["total"] == 1
    events = (await admin.get("/audit", headers=b_owner)).json()["data"]
    assert events["total"] == 0
    r = await admin.get(f"/audit?entity_id={a_member['id']}", headers=b_owner)
    assert r.json()["data"]["total"] == 0
    stored = await db.read(lambda s: by_id(s, User, a_member["id"]))
    assert stored is not None and stored.name == "A cashier" and stored.archived_at is None


async def test_one_email_one_login(admin: httpx.AsyncClient, db: Database) -> None:
    a, b = await make_shop(db), await make_shop(db)
    b_owner = await owner(admin, db, b)
    taken = (await owner_email(db, a.company_id)).upper()
    r = await admin.post(
        "/staff", json={"name": "Twin", "email": taken, "role": C, "password": PASSWORD},
        headers=b_owner,
    )  # fmt: skip
    assert "already the login" in error(r, 409)
    member = await add_staff(admin, b_owner, C)
    r = await admin.patch(
        f"/staff/{member['id']}", json={"email": taken, "version": 1}, headers=b_owner
    )
    error(r, 409)
    # Two at once with one new email: one staff member, one 409.
    twin = {"name": "Twin", "email": f"twin-{uuid.uuid4().hex[:6]}@x.example", "role": C,
            "password": PASSWORD}  # fmt: skip
    answers = await asyncio.gather(
        *(admin.post("/staff", json=twin, headers=b_owner) for _ in range(3))
    )
    assert sorted(r.status_code for r in answers) == [200, 409, 409], [r.text for r in answers]


# ------------------------------------------------------------------ archiving, last owner


async def test_an_archived_staff_member_is_logged_out_for_good(
    admin: httpx.AsyncClient, client: httpx.AsyncClient, db: Database
) -> None:
    shop = await make_shop(db)
    boss = await owner(admin, db, shop)
    member, cashier = await staff_session(admin, boss, A)
    second = await login(admin, member["email"], PASSWORD)
    assert (await admin.get("/audit", headers=cashier)).status_code == 200

    r = await admin.post(f"/staff/{member['id']}/archive", headers=boss)
    assert r.status_code == 200, r.text
    data = r.json()["data"]
    assert data["archived_at"] and data["can_log_in"] is False and data["version"] == 2
    for headers in (cashier, second):
        error(await admin.get("/audit", headers=headers), 401)
    left = await db.read(
        lambda s: s.scalar(
            select(func.count())
            .select_from(AdminSession)
            .where(AdminSession.user_id == member["id"])
        )
    )
    assert left == 0
    r = await admin.post("/login", json={"email": member["email"], "password": PASSWORD})
    assert error(r, 401) == "invalid email or password"
    # Archiving again changes nothing.
    again = await admin.post(f"/staff/{member['id']}/archive", headers=boss)
    assert again.json()["data"] == data
    # Still listed, as archived; not among the active ones.
    active = await admin.get("/staff?archived=false", headers=boss)
    assert member["id"] not in [s["id"] for s in active.json()["data"]["data"]]
    everyone = await admin.get("/staff", headers=boss)
    assert member["id"] in [s["id"] for s in everyone.json()["data"]["data"]]


async def test_a_demotion_ends_the_session_at_once(admin: httpx.AsyncClient, db: Database) -> None:
    shop = await make_shop(db)
    boss = await owner(admin, db, shop)
    member, accountant = await staff_session(admin, boss, A)
    assert (await admin.get("/audit", headers=accountant)).status_code == 200
    r = await admin.patch(
        f"/staff/{member['id']}", json={"role": C}, headers={**boss, "If-Match": '"1"'}
    )
    assert r.status_code == 200, r.text
    error(await admin.get("/audit", headers=accountant), 401)
    # Signed in again, they have the new role's rights only.
    cashier = await login(admin, member["email"], PASSWORD)
    error(await admin.get("/audit", headers=cashier), 403)


async def test_the_last_owner_stays(admin: httpx.AsyncClient, db: Database) -> None:
    shop = await make_shop(db)
    boss = await owner(admin, db, shop)
    me = (await admin.get("/staff", headers=boss)).json()["data"]["data"][0]
    assert me["role"] == O
    r = await admin.post(f"/staff/{me['id']}/archive", headers=boss)
    assert "last active owner" in error(r, 422)
    r = await admin.patch(f"/staff/{me['id']}", json={"role": M, "version": 1}, headers=boss)
    assert "last active owner" in error(r, 422)

    second = await add_staff(admin, boss, O)
    r = await admin.patch(f"/staff/{me['id']}", json={"role": M, "version": 1}, headers=boss)
    assert r.status_code == 200 and r.json()["data"]["role"] == M, r.text
    # Demoted, the first owner's own session ended at once; signed in again, they
    # no longer have staff.manage.
    error(await admin.get("/staff", headers=boss), 401)
    me_again = await login(admin, me["email"], OWNER_PASSWORD)
    error(await admin.get("/staff", headers=me_again), 403)
    new_boss = await login(admin, second["email"], PASSWORD)
    r = await admin.post(f"/staff/{second['id']}/archive", headers=new_boss)
    assert "last active owner" in error(r, 422)
    r = await admin.post(f"/staff/{me['id']}/archive", headers=new_boss)
    assert r.status_code == 200, r.text


# ------------------------------------------------------------------ versions


async def test_edits_name_the_version_they_are_based_on(
    admin: httpx.AsyncClient, db: Database
) -> None:
    shop = await make_shop(db)
    boss = await owner(admin, db, shop)
    member = await add_staff(admin, boss, C, shop.warehouse_id)
    r = await admin.get(f"/staff/{member['id']}", headers=boss)
    assert r.headers["etag"] == '"1"' and r.json()["data"]["version"] == 1
    path = f"/staff/{member['id']}"

    assert "If-Match" in error(await admin.patch(path, json={"name": "B"}, headers=boss), 428)
    r = await admin.patch(path, json={"name": "B"}, headers={**boss, "If-Match": '"7"'})
    assert "version 1" in error(r, 412)
    error(await admin.patch(path, json={"name": "B", "version": 3}, headers=boss), 412)

    r = await admin.patch(path, json={"name": "Bea", "warehouse_id": None},
                          headers={**boss, "If-Match": r'W/"1"'})  # fmt: skip
    assert r.status_code == 200, r.text
    assert r.headers["etag"] == '"2"'
    data = r.json()["data"]
    assert data["name"] == "Bea" and data["warehouse_id"] is None and data["version"] == 2
    # The old ETag is stale now; the body version works as well as the header.
    error(await admin.patch(path, json={"name": "C"}, headers={**boss, "If-Match": '"1"'}), 412)
    r = await admin.patch(path, json={"password": "a new password", "version": 2}, headers=boss)
    assert r.status_code == 200 and r.json()["data"]["version"] == 3, r.text
    await login(admin, member["email"], "a new password")
    # An edit that changes nothing is no new version.
    r = await admin.patch(path, json={"name": "Bea", "version": 3}, headers=boss)
    assert r.json()["data"]["version"] == 3


# ------------------------------------------------------------------ idempotency


async def test_admin_posts_replay_with_the_same_idempotency_key(
    admin: httpx.AsyncClient, db: Database
) -> None:
    shop = await make_shop(db)
    boss = await owner(admin, db, shop)
    key = {"Idempotency-Key": f"staff-{uuid.uuid4()}"}
    body = {"name": "Once", "email": f"once-{uuid.uuid4().hex[:6]}@x.example", "role": C,
            "password": PASSWORD}  # fmt: skip
    first = await admin.post("/staff", json=body, headers={**boss, **key})
    again = await admin.post("/staff", json=body, headers={**boss, **key})
    assert first.status_code == again.status_code == 200, again.text
    assert again.json() == first.json()
    assert again.headers["idempotent-replayed"] == "true"
    assert "idempotent-replayed" not in first.headers
    assert again.headers["etag"] == first.headers["etag"] == '"1"'
    count = await db.read(
        lambda s: s.scalar(
            select(func.count()).select_from(User).where(func.lower(User.email) == body["email"])
        )
    )
    assert count == 1
    created = await db.read(
        lambda s: s.scalar(
            select(func.count())
            .select_from(AuditEvent)
            .where(
                AuditEvent.entity_id == first.json()["data"]["id"],
                AuditEvent.entity_type == "staff",
            )
        )
    )
    assert created == 1

    # The same key with another body, or from another staff member: a 422.
    changed = await admin.post("/staff", json={**body, "name": "Twice"}, headers={**boss, **key})
    assert "different request body" in error(changed, 422)
    second_owner = await add_staff(admin, boss, O)
    theirs = await login(admin, second_owner["email"], PASSWORD)
    error(await admin.post("/staff", json=body, headers={**theirs, **key}), 422)

    # The same key in another company is another request.
    other = await make_shop(db)
    other_boss = await owner(admin, db, other)
    fresh = {**body, "email": f"b-{body['email']}"}
    r = await admin.post("/staff", json=fresh, headers={**other_boss, **key})
    assert r.status_code == 200 and "idempotent-replayed" not in r.headers, r.text

    # Webhook creation: one endpoint, the secret shown the same both times.
    hook_key = {"Idempotency-Key": "hook-1"}
    made = [
        await admin.post("/webhooks", json={"url": "http://127.0.0.1:9/i"},
                         headers={**boss, **hook_key})
        for _ in range(2)
    ]  # fmt: skip
    assert made[0].json() == made[1].json()
    hooks = await db.read(
        lambda s: s.scalar(
            select(func.count()).select_from(Webhook).where(Webhook.company_id == shop.company_id)
        )
    )
    assert hooks == 1
    # Archive (no body) replays too.
    target = second_owner["id"]
    arch = [
        await admin.post(f"/staff/{target}/archive", headers={**boss, "Idempotency-Key": "a1"})
        for _ in range(2)
    ]
    assert arch[0].json() == arch[1].json() and arch[1].headers["idempotent-replayed"] == "true"
    bad = await admin.post("/staff", json=body, headers={**boss, "Idempotency-Key": "x" * 300})
    error(bad, 422)


# ------------------------------------------------------------------ audit trail


async def test_every_staff_change_is_in_the_audit_trail(
    admin: httpx.AsyncClient, db: Database
) -> None:
    shop = await make_shop(db)
    boss = await owner(admin, db, shop)
    owner_row = (await admin.get("/staff", headers=boss)).json()["data"]["data"][0]
    member = await add_staff(admin, boss, M, shop.warehouse_id)
    path = f"/staff/{member['id']}"
    r = await admin.patch(path, json={"role": A, "password": "another password", "version": 1},
                          headers=boss)  # fmt: skip
    assert r.status_code == 200, r.text
    assert (await admin.post(f"{path}/archive", headers=boss)).status_code == 200

    _acc, accountant = await staff_session(admin, boss, A)
    r = await admin.get(f"/audit?entity_type=staff&entity_id={member['id']}", headers=accountant)
    assert r.status_code == 200, r.text
    page = r.json()["data"]
    assert page["total"] == 3 and page["current_page"] == 1
    archived, updated, created = page["data"]
    assert [e["action"] for e in page["data"]] == ["archived", "updated", "created"]
    for event in page["data"]:
        assert event["user"] == {"id": owner_row["id"], "name": owner_row["name"]}
        assert event["entity_type"] == "staff" and event["entity_id"] == member["id"]
        assert event["at"].endswith("Z")
    assert created["before"] is None
    assert created["after"] == {"name": "A manager", "email": member["email"], "role": M,
                                "warehouse_id": shop.warehouse_id, "archived_at": None}  # fmt: skip
    assert updated["before"] == {"role": M, "password": None}
    assert updated["after"] == {"role": A, "password": "changed"}
    assert archived["before"] == {"archived_at": None}
    assert archived["after"]["archived_at"]
    assert "scrypt" not in r.text and PASSWORD not in r.text and "another password" not in r.text

    # Filters: by who, by day, paging.
    mine = await admin.get(f"/audit?user_id={owner_row['id']}&limit=2", headers=accountant)
    data = mine.json()["data"]
    assert data["total"] == 4 and len(data["data"]) == 2 and data["last_page"] == 2
    ids = [e["id"] for e in data["data"]]
    assert ids == sorted(ids, reverse=True)
    today = dt.datetime.now(dt.UTC).date()
    yesterday = today - dt.timedelta(days=1)
    none = await admin.get(f"/audit?to={yesterday}", headers=accountant)
    assert none.json()["data"]["total"] == 0
    some = await admin.get(f"/audit?from={today}&to={today}", headers=accountant)
    assert some.json()["data"]["total"] == 4
    r = await admin.get(f"/audit?from={today}&to={yesterday}", headers=accountant)
    assert r.status_code == 422 and "from" in r.json()["errors"]
    for bad in ("entity_id=abc", "user_id=-1", "from=2026-13-01", "page=0"):
        assert (await admin.get(f"/audit?{bad}", headers=accountant)).status_code == 422


# ------------------------------------------------------------------ command line


def cli(database_url: str, *args: str, code: int = 0, stdin: str | None = None,
        password: str | None = None) -> subprocess.CompletedProcess[str]:  # fmt: skip
    env = _env(database_url)
    env.pop("TILLBOOK_STAFF_PASSWORD", None)
    if password is not None:
        env["TILLBOOK_STAFF_PASSWORD"] = password
    result = run_cli(args, env=env, input=stdin)
    assert result.returncode == code, (args, result.stdout, result.stderr)
    assert "Traceback" not in result.stderr, result.stderr
    return result


async def test_cli_staff_and_keys_acting_as_them(
    admin: httpx.AsyncClient, client: httpx.AsyncClient, db: Database, database_url: str
) -> None:
    import json

    shop = await make_shop(db)
    other = await make_shop(db)
    cid = str(shop.company_id)
    email = f"till-{uuid.uuid4().hex[:6]}@example.com"
    made = cli(database_url, "staff", "create", "--company", cid, "--email", email, "--name",
               "Tina Till", "--role", "cashier", "--warehouse", str(shop.warehouse_id),
               "--json", password=PASSWORD)  # fmt: skip
    tina = json.loads(made.stdout)
    assert tina["email"] == email and tina["role"] == C and tina["company_id"] == shop.company_id
    assert tina["warehouse_id"] == shop.warehouse_id and "password" not in made.stdout
    await login(admin, email, PASSWORD)
    # The password may come on standard input instead.
    piped = f"pipe-{uuid.uuid4().hex[:6]}@example.com"
    cli(database_url, "staff", "create", "--company", cid, "--email", piped, "--name", "P",
        "--role", "accountant", "--json", stdin="piped password\n")  # fmt: skip
    await login(admin, piped, "piped password")
    refused = cli(database_url, "staff", "create", "--company", cid, "--email", "x@y.example",
                  "--name", "X", "--role", "janitor", password=PASSWORD, code=1)  # fmt: skip
    assert "\nerror: role: " in refused.stderr

    listed = json.loads(cli(database_url, "staff", "list", "--company", cid, "--json").stdout)
    assert [s["email"] for s in listed["staff"]][1:] == [email, piped]
    assert listed["staff"][0]["role"] == O

    key = json.loads(
        cli(database_url, "keys", "create", "--warehouse", str(shop.warehouse_id), "--name",
            "Tina's till", "--user", str(tina["id"]), "--json").stdout
    )  # fmt: skip
    assert key["user_id"] == tina["id"]
    headers = {"X-Service-Public-Key": key["public_key"], "X-Service-Secret-Key": key["secret_key"]}
    sale = await client.post(
        "/sales",
        json={"user_id": shop.customer_id, "order_date": "2026-11-20",
              "product_items": [{"xid": shop.xid("apple"), "quantity": 1, "unit_price": 3.5}]},
        headers=headers,
    )  # fmt: skip
    assert sale.status_code == 200, sale.text
    order_id = sale.json()["order_id"] if "order_id" in sale.json() else sale.json()["data"]["id"]
    shown = await client.get(f"/sales/{order_id}", headers=headers)
    assert shown.json()["data"]["staff_member"] == {"id": tina["id"], "name": "Tina Till"}

    # --user must name a staff member of the key's company, at that warehouse, active.
    for user, where in [
        (shop.customer_id, shop.warehouse_id),  # a customer
        (tina["id"], other.warehouse_id),  # another company's key
        (tina["id"], shop.other_warehouse_id),  # scoped to another warehouse
        (999999999, shop.warehouse_id),
    ]:
        r = cli(database_url, "keys", "create", "--warehouse", str(where), "--name", "x",
                "--user", str(user), "--json", code=1)  # fmt: skip
        assert "\nerror: " in r.stderr and r.stdout == ""

    archived = json.loads(
        cli(database_url, "staff", "archive", "--company", cid, "--id", str(tina["id"]),
            "--json").stdout
    )  # fmt: skip
    assert archived["archived_at"] and archived["id"] == tina["id"]
    r = cli(database_url, "keys", "create", "--warehouse", str(shop.warehouse_id), "--name", "y",
            "--user", str(tina["id"]), code=1)  # fmt: skip
    assert "archived" in r.stderr
    # Her key stopped with her login.
    r = await client.get("/products", headers=headers)
    assert r.status_code == 401 and "archived" in r.json()["message"]
    r = await admin.post("/login", json={"email": email, "password": PASSWORD})
    error(r, 401)
    # Another company's id is not found; the last owner stays.
    r = cli(database_url, "staff", "archive", "--company", str(other.company_id), "--id",
            str(tina["id"]), code=1)  # fmt: skip
    assert "not found" in r.stderr
    owner_id = listed["staff"][0]["id"]
    r = cli(database_url, "staff", "archive", "--company", cid, "--id", str(owner_id), code=1)
    assert "last active owner" in r.stderr
    # The CLI's changes are in the audit trail, with no staff member as the actor.
    events = (await admin.get(f"/audit?entity_id={tina['id']}",
                              headers=await owner(admin, db, shop))).json()["data"]  # fmt: skip
    assert [(e["action"], e["user"]) for e in events["data"]] == [
        ("archived", None), ("created", None)
    ]  # fmt: skip


async def test_webhook_changes_are_in_the_audit_trail_without_secrets(
    admin: httpx.AsyncClient, db: Database
) -> None:
    shop = await make_shop(db)
    boss = await owner(admin, db, shop)
    made = await admin.post("/webhooks", json={"url": "http://127.0.0.1:9/a"}, headers=boss)
    hook = made.json()["data"]
    rotated = await admin.post(f"/webhooks/{hook['id']}/rotate-secret", headers=boss)
    await admin.post(f"/webhooks/{hook['id']}/disable", headers=boss)
    assert (await admin.delete(f"/webhooks/{hook['id']}", headers=boss)).status_code == 200
    r = await admin.get(f"/audit?entity_type=webhook&entity_id={hook['id']}", headers=boss)
    events = r.json()["data"]["data"]
    assert [e["action"] for e in events] == ["removed", "disabled", "updated", "created"]
    assert events[3]["after"] == {"url": hook["url"], "events": "*", "active": True}
    assert events[2]["after"] == {"secret": "rotated"}
    assert events[1]["before"] == {"active": True} and events[1]["after"] == {"active": False}
    assert events[0]["after"] is None and events[0]["before"]["url"] == hook["url"]
    for secret in (hook["secret"], rotated.json()["data"]["secret"]):
        assert secret not in r.text


# Routes whose path parameter is a value every company has (an ISO currency code),
# not the id of a record: the caller's own company is meant.
COMPANY_OWN_PATHS = {"/currencies/{code}/disable"}


async def test_another_company_can_touch_nothing_of_ours_on_any_route(
    app_and_admin: tuple[Any, httpx.AsyncClient], db: Database
) -> None:
    """Every admin route of the matrix, by company B's owner, aimed at company A's
    records: each one that names an A record (in its path or its body) is a 4xx
    that does not say the record exists, no list shows A's records, and nothing of
    A changed."""
    app, admin = app_and_admin
    present = admin_routes(app)
    a, b = await make_shop(db), await make_shop(db)
    a_owner, b_owner = await owner(admin, db, a), await owner(admin, db, b)
    hook = await admin.post("/webhooks", json={"url": "http://127.0.0.1:9/a"}, headers=a_owner)
    hook_id = hook.json()["data"]["id"]
    target = (await add_staff(admin, a_owner, C))["id"]
    ids = await matrix_targets(admin, a_owner, a)
    # A's records, by the list that would show them (ids of different tables overlap)
    theirs: dict[str, set[int]] = {
        "/staff": {target},
        "/webhooks": {hook_id},
        "/products": {*a.products.values(), *a.other_products.values(), ids["product"]},
        "/customers": {a.customer_id, a.walk_in_id, ids["customer"]},
        "/suppliers": {a.supplier_id, ids["supplier"]},
        "/units": {a.piece_unit_id, a.box_unit_id, ids["units"]},
        "/categories": {a.category_id, a.child_category_id, ids["categories"]},
        "/brands": {a.brand_id, ids["brands"]},
        "/taxes": {a.tax10_id, a.tax_incl_id, ids["taxes"]},
        "/payment-modes": {a.cash_mode_id, a.card_mode_id, ids["payment-modes"]},
        "/warehouses": {a.warehouse_id, a.other_warehouse_id, ids["warehouses"]},
        "/expense-categories": {ids["expense-categories"]},
    }
    before = await snapshot(db, a)
    for method, route, path, body, _allowed, _permission in MATRIX[1:]:
        if (method, route) not in present or path == "/logout":
            continue
        url = path.format(hook=hook_id, target=target, **ids)
        # A currency code in a path names no record of A's: B acts on its own.
        names_ours = (url != path or "{" in route) and route not in COMPANY_OWN_PATHS
        if body == "new-staff":
            body = None
        elif callable(body):
            body = body(ids)  # names A's warehouses
            names_ours = True
        if isinstance(body, str) and body.startswith("csv:"):
            continue  # an upload names no record: it is B's own import
        r = await admin.request(method, url, json=body, headers=b_owner)
        if names_ours:
            assert 400 <= r.status_code < 500 and r.status_code != 403, (method, url, r.text)
            if r.status_code == 404:
                assert "not found" in r.json()["message"] or "not listed" in r.json()["message"]
            continue
        if method == "GET" and r.headers.get("content-type", "").startswith("application/json"):
            data = r.json().get("data")
            rows = data.get("data", []) if isinstance(data, dict) else data or []
            shown = {row.get("id") for row in rows if isinstance(row, dict)}
            assert not shown & theirs.get(route, set()), (url, shown)
    assert await snapshot(db, a) == before
