"""A branch's staff act on their branch only, through every door that writes
(``auth/roles.py``, rules 1-3 of its docstring): the back-office API, the pages and
the import files.

Every write route of the app (admin API and pages) has a scope decision here, and a
route added without one fails ``test_every_write_route_has_a_scope_decision``:

- ``COMPANY``: it acts on the whole company (a period's close, settings, staff, the
  catalog's company-wide definitions): refused to every scoped staff member, even
  one whose role holds the permission, and nothing is written;
- ``BRANCH``: it names a warehouse (in its path, body, form, a file's row, as where
  an opening balance goes, or through the record it acts on): a manager of branch A
  acting on branch B is refused (403 naming the permission) and nothing is written;
  acting on A works (``BRANCH_CASES`` holds both requests);
- ``SHARED``: it changes a record no warehouse owns (a customer's contact details)
  and names no warehouse, so the scope has nothing to narrow;
- ``OWN``: it changes the signed-in staff member's own sign-in (their password) and
  nothing else: no warehouse, no one else's record, so the scope has nothing to
  narrow (a scoped cashier changes their own; ``test_own_sign_in_is_anyones``);
- ``NO_COMPANY``: the first-run page, before any company or staff member exists:
  a session plays no part, and once a company exists it is not found for anyone.

A BRANCH route that acts on a record rather than naming the warehouse (a transfer,
a sale, an expense, a register) refuses another branch's record with the 403 after
looking it up; a stocktake of another branch is not found instead (404, as for a
member who may not read it: ``web/stocktake.py``), so ``HIDDEN`` lists those.

Over HTTP through an app of this module's own (its own client address: failed
logins are counted per address)."""

from __future__ import annotations

import datetime as dt
import re
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from fastapi import routing
from sqlalchemy import func, select

from tests.factories import Shop, make_shop
from tests.invariants import check_books
from tests.web_helpers import OWNER_PASSWORD, STAFF_PASSWORD, add_staff, csrf_of, owner_email
from tests.written import snapshot
from tillbook.app import create_app
from tillbook.config import Settings
from tillbook.db import Database
from tillbook.kit import xid
from tillbook.models import ExpenseCategory, JournalEntry, PaymentMode, Product, User

ADMIN = "/api/v1/admin"
COMPANY, BRANCH, SHARED = "company", "branch", "shared"
OWN, NO_COMPANY = "own", "no company"

SCOPE: dict[tuple[str, str], str] = {
    # --- the admin API
    ("POST", "/api/v1/admin/webhooks"): COMPANY,
    ("POST", "/api/v1/admin/webhooks/deliveries/{delivery_id}/redeliver"): COMPANY,
    ("POST", "/api/v1/admin/webhooks/{webhook_id}/disable"): COMPANY,
    ("POST", "/api/v1/admin/webhooks/{webhook_id}/enable"): COMPANY,
    ("POST", "/api/v1/admin/webhooks/{webhook_id}/rotate-secret"): COMPANY,
    ("DELETE", "/api/v1/admin/webhooks/{webhook_id}"): COMPANY,
    ("POST", "/api/v1/admin/staff"): COMPANY,
    ("PATCH", "/api/v1/admin/staff/{staff_id}"): COMPANY,
    ("POST", "/api/v1/admin/staff/{staff_id}/archive"): COMPANY,
    ("POST", "/api/v1/admin/periods/close"): COMPANY,
    ("POST", "/api/v1/admin/periods/reopen"): COMPANY,
    ("POST", "/api/v1/admin/products"): COMPANY,
    ("PATCH", "/api/v1/admin/products/{product_id}"): COMPANY,
    ("POST", "/api/v1/admin/products/{product_id}/archive"): COMPANY,
    ("POST", "/api/v1/admin/products/{product_id}/listings"): BRANCH,
    ("PATCH", "/api/v1/admin/products/{product_id}/listings/{warehouse_id}"): BRANCH,
    ("POST", "/api/v1/admin/products/{product_id}/listings/{warehouse_id}/opening-stock"): BRANCH,
    ("POST", "/api/v1/admin/import/products"): COMPANY,
    ("POST", "/api/v1/admin/customers"): BRANCH,
    ("PATCH", "/api/v1/admin/customers/{party_id}"): SHARED,
    ("POST", "/api/v1/admin/customers/{party_id}/archive"): SHARED,
    ("POST", "/api/v1/admin/import/customers"): BRANCH,
    ("POST", "/api/v1/admin/suppliers"): BRANCH,
    ("PATCH", "/api/v1/admin/suppliers/{party_id}"): SHARED,
    ("POST", "/api/v1/admin/suppliers/{party_id}/archive"): SHARED,
    ("POST", "/api/v1/admin/import/suppliers"): BRANCH,
    ("POST", "/api/v1/admin/payments"): BRANCH,
    ("POST", "/api/v1/admin/expenses"): BRANCH,
    ("POST", "/api/v1/admin/expenses/{expense_id}/pay"): BRANCH,
    ("POST", "/api/v1/admin/money-moves"): BRANCH,
    ("POST", "/api/v1/admin/gift-cards"): BRANCH,
    ("POST", "/api/v1/admin/registers"): BRANCH,
    ("POST", "/api/v1/admin/registers/{register_id}/revoke"): BRANCH,
    ("POST", "/api/v1/admin/stock-counts"): BRANCH,
    ("POST", "/api/v1/admin/stock-counts/{count_id}/entries"): BRANCH,
    ("POST", "/api/v1/admin/stock-counts/{count_id}/post"): BRANCH,
    ("POST", "/api/v1/admin/stock-counts/{count_id}/cancel"): BRANCH,
    # Another's PIN is staff.manage (company-wide); one's own is OWN-like, and
    # test_own_sign_in_is_anyones proves a scoped member sets it.
    ("PUT", "/api/v1/admin/staff/{staff_id}/pin"): COMPANY,
    # A rate values every branch's foreign documents (settings.write).
    ("POST", "/api/v1/admin/currencies"): COMPANY,
    ("POST", "/api/v1/admin/currencies/{code}/disable"): COMPANY,
    ("POST", "/api/v1/admin/exchange-rates"): COMPANY,
    ("POST", "/api/v1/admin/exchange-rates/import"): COMPANY,
    # A new point value revalues every branch's outstanding points (settings.write).
    ("PUT", "/api/v1/admin/loyalty"): COMPANY,
    # --- the pages
    ("POST", "/reports/periods/close"): COMPANY,
    ("POST", "/reports/periods/reopen"): COMPANY,
    ("POST", "/products/{product_id}/listings/{warehouse_id}"): BRANCH,
    ("POST", "/products/{product_id}/listings"): BRANCH,
    ("POST", "/settings/keys"): COMPANY,
    ("POST", "/settings/keys/{key_id}/revoke"): COMPANY,
    ("POST", "/settings/keys/{key_id}/rotate"): COMPANY,
    ("POST", "/settings/keys/{key_id}/reveal"): COMPANY,
    ("POST", "/import"): COMPANY,  # catalog.write company-wide, whatever the file
    ("POST", "/settings/staff"): COMPANY,
    ("POST", "/settings/staff/{staff_id}/edit"): COMPANY,
    ("POST", "/settings/staff/{staff_id}/archive"): COMPANY,
    ("POST", "/settings/webhooks"): COMPANY,
    ("POST", "/settings/webhooks/{webhook_id}/disable"): COMPANY,
    ("POST", "/settings/webhooks/{webhook_id}/enable"): COMPANY,
    ("POST", "/settings/webhooks/{webhook_id}/rotate"): COMPANY,
    ("POST", "/settings/webhooks/deliveries/{delivery_id}/redeliver"): COMPANY,
    ("POST", "/settings/payment-modes"): COMPANY,
    ("POST", "/settings/expense-categories"): COMPANY,
    ("POST", "/settings/payment-modes/{item_id}/edit"): COMPANY,
    ("POST", "/settings/payment-modes/{item_id}/archive"): COMPANY,
    ("POST", "/settings/expense-categories/{item_id}/edit"): COMPANY,
    ("POST", "/settings/expense-categories/{item_id}/archive"): COMPANY,
    ("POST", "/settings/company"): COMPANY,
    ("POST", "/settings/currencies"): COMPANY,
    ("POST", "/settings/currencies/{code}/disable"): COMPANY,
    ("POST", "/settings/currencies/rates"): COMPANY,
    ("POST", "/settings/currencies/import"): COMPANY,
    ("POST", "/settings/loyalty"): COMPANY,
    ("POST", "/settings/branches"): COMPANY,
    ("POST", "/settings/branches/{warehouse_id}/edit"): COMPANY,
    ("POST", "/customers/new"): BRANCH,
    ("POST", "/customers/{party_id}/edit"): SHARED,
    ("POST", "/customers/{party_id}/archive"): SHARED,
    ("POST", "/suppliers/new"): BRANCH,
    ("POST", "/suppliers/{party_id}/edit"): SHARED,
    ("POST", "/suppliers/{party_id}/archive"): SHARED,
    ("POST", "/stock/products/{product_id}/adjust"): BRANCH,
    ("POST", "/transfers/new"): BRANCH,
    ("POST", "/prices/preview"): BRANCH,
    ("POST", "/prices/apply"): BRANCH,
    ("POST", f"{ADMIN}/price-changes/preview"): BRANCH,
    ("POST", f"{ADMIN}/price-changes"): BRANCH,
    ("POST", "/transfers/{transfer_id}/receive"): BRANCH,
    ("POST", "/transfers/{transfer_id}/cancel"): BRANCH,
    ("POST", "/sales/{order_id}/void"): BRANCH,
    ("POST", "/sales/{order_id}/return"): BRANCH,
    ("POST", "/customers/{party_id}/payment"): BRANCH,
    ("POST", "/suppliers/{party_id}/payment"): BRANCH,
    ("POST", "/expenses/new"): BRANCH,
    ("POST", "/expenses/{expense_id}/pay"): BRANCH,
    ("POST", "/money-moves"): BRANCH,
    ("POST", "/purchases/new"): BRANCH,
    ("POST", f"{ADMIN}/purchase-orders"): BRANCH,
    ("PUT", f"{ADMIN}/purchase-orders/{{po_id}}"): BRANCH,
    ("POST", f"{ADMIN}/purchase-orders/{{po_id}}/order"): BRANCH,
    ("POST", f"{ADMIN}/purchase-orders/{{po_id}}/receipts"): BRANCH,
    ("POST", f"{ADMIN}/purchase-orders/{{po_id}}/close"): BRANCH,
    ("POST", "/purchase-orders/new"): BRANCH,
    ("POST", "/purchase-orders/{po_id}/edit"): BRANCH,
    ("POST", "/purchase-orders/{po_id}/order"): BRANCH,
    ("POST", "/purchase-orders/{po_id}/receive"): BRANCH,
    ("POST", "/purchase-orders/{po_id}/close"): BRANCH,
    ("POST", "/purchases/{order_id}/return"): BRANCH,
    ("POST", "/settings/registers/{register_id}/revoke"): BRANCH,
    ("POST", "/stock/counts"): BRANCH,
    ("POST", "/stock/counts/{count_id}/enter"): BRANCH,
    ("POST", "/stock/counts/{count_id}/post"): BRANCH,
    ("POST", "/stock/counts/{count_id}/cancel"): BRANCH,
    ("POST", "/settings/staff/{staff_id}/pin"): COMPANY,  # an owner's page (staff.manage)
    ("POST", "/account/password"): OWN,
    ("POST", "/start"): NO_COMPANY,
    ("POST", "/products/new"): COMPANY,
    ("POST", "/products/{product_id}/edit"): COMPANY,
    ("POST", "/products/{product_id}/archive"): COMPANY,
    ("POST", "/reference/{kind}"): COMPANY,  # units, categories, brands, taxes ...
    ("POST", "/promotions"): COMPANY,  # a promotion is the company's (prices.write)
    ("POST", "/promotions/{promotion_id}/pause"): COMPANY,
    ("POST", "/promotions/{promotion_id}/resume"): COMPANY,
    ("POST", "/promotions/{promotion_id}/archive"): COMPANY,
}
for _family in ("units", "categories", "brands", "taxes", "payment-modes",
                "expense-categories", "warehouses", "promotions"):  # fmt: skip
    for _method, _path in (
        ("POST", ""),
        ("PATCH", "/{record_id}"),
        ("POST", "/{record_id}/archive"),
    ):
        SCOPE[(_method, f"{ADMIN}/{_family}{_path}")] = COMPANY
# A promotion may name one branch, but it is the company's record (``prices.write``
# company-wide, as its rule prices every branch it names).
SCOPE[("POST", f"{ADMIN}/promotions/{{record_id}}/pause")] = COMPANY
SCOPE[("POST", f"{ADMIN}/promotions/{{record_id}}/resume")] = COMPANY
# Signing in and out act on the session only.
NOT_WRITES = {("POST", f"{ADMIN}/login"), ("POST", f"{ADMIN}/logout"), ("POST", "/login"),
              ("POST", "/logout")}  # fmt: skip


def write_routes() -> set[tuple[str, str]]:
    """Every (method, path) of the app that is not a read, outside the public API
    (whose keys are bound to one warehouse each)."""
    app = create_app(Settings(database_url="sqlite://"))
    out: set[tuple[str, str]] = set()
    for route in routing.iter_route_contexts(app.routes):
        if route.path.startswith("/api/v1/public"):
            continue
        for method in set(route.methods or ()) - {"GET", "HEAD", "OPTIONS"}:
            out.add((method, route.path))
    return out - NOT_WRITES


def test_every_write_route_has_a_scope_decision() -> None:
    routes = write_routes()
    assert len(routes) > 80, len(routes)
    missing = sorted(routes - set(SCOPE))
    assert not missing, f"write routes without a scope decision in SCOPE: {missing}"
    assert not set(SCOPE) - routes, sorted(set(SCOPE) - routes)
    assert set(BRANCH_CASES) == {k for k, v in SCOPE.items() if v == BRANCH}


# --------------------------------------------------------------------------- sessions


@pytest.fixture(scope="module")
async def http(settings: Settings, db: Database) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(settings, database=db)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app, client=("10.77.0.9", 4321))
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as c:
            yield c


@dataclass
class Actor:
    """One staff member signed in at both doors: a bearer token for the API, a
    cookie (and its CSRF token) for the pages."""

    api: dict[str, str]
    web: httpx.AsyncClient
    csrf: str

    async def call(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        if path.startswith(ADMIN):
            return await self.web.request(method, path, headers=self.api, **kwargs)
        data = {"csrf": self.csrf, "form_token": uuid.uuid4().hex, **kwargs.pop("data", {})}
        return await self.web.request(method, path, data=data, **kwargs)


async def sign_in_both(http: httpx.AsyncClient, email: str, password: str) -> Actor:
    r = await http.post(f"{ADMIN}/login", json={"email": email, "password": password})
    assert r.status_code == 200, r.text
    token = r.json()["token"]
    web = httpx.AsyncClient(transport=http._transport, base_url="http://testserver")
    web.cookies.set("tillbook_session", token)
    home = await web.get("/customers")  # every role reads it
    assert home.status_code == 200, home.text
    return Actor({"Authorization": f"Bearer {token}"}, web, csrf_of(home.text))


async def staff(
    http: httpx.AsyncClient, db: Database, shop: Shop, role: str, wid: int | None
) -> Actor:
    return await sign_in_both(http, await add_staff(db, shop, role, wid), STAFF_PASSWORD)


async def owner(http: httpx.AsyncClient, db: Database, shop: Shop) -> Actor:
    return await sign_in_both(http, await owner_email(db, shop), OWNER_PASSWORD)


# ------------------------------------------------------------------ company-wide routes


def _filled(path: str, shop: Shop) -> str:
    """A company route's path with real ids where the shop has them: the refusal
    must come before any of them is looked up, so any id will do."""
    ids = {"warehouse_id": shop.other_warehouse_id, "product_id": shop.products["apple"],
           "party_id": shop.customer_id, "kind": "brand", "code": "EUR"}  # fmt: skip
    for name in ("warehouse_id", "product_id", "party_id", "kind", "record_id", "staff_id",
                 "webhook_id", "delivery_id", "key_id", "item_id", "code"):  # fmt: skip
        path = path.replace(f"{{{name}}}", str(ids.get(name, 1)))
    return path


@pytest.mark.parametrize("role", ["manager", "accountant", "cashier"])
async def test_company_wide_routes_refuse_scoped_staff(
    http: httpx.AsyncClient, db: Database, role: str
) -> None:
    """Even a role that holds the permission (an accountant closes periods, a manager
    defines products) is refused when scoped to one branch."""
    shop = await make_shop(db)
    member = await staff(http, db, shop, role, shop.warehouse_id)
    before = await snapshot(db, shop)
    for (method, path), decision in sorted(SCOPE.items()):
        if decision != COMPANY:
            continue
        url = _filled(path, shop)
        if url.startswith(ADMIN):
            r = await member.call(method, url, json={"through": "2020-01-31", "name": "X"})
        else:
            r = await member.call(method, url, data={"through": "2020-01-31", "name": "X"})
        assert r.status_code == 403, (role, method, url, r.status_code, r.text[:300])
        text = r.text
        assert "permission" in text, (method, url, text[:300])
    assert await snapshot(db, shop) == before


async def test_a_branch_accountant_cannot_close_the_company_books(
    http: httpx.AsyncClient, db: Database
) -> None:
    shop = await make_shop(db)
    scoped = await staff(http, db, shop, "accountant", shop.warehouse_id)
    r = await scoped.call("POST", f"{ADMIN}/periods/close", json={"through": "2020-01-31"})
    assert r.status_code == 403, r.text
    message = r.json()["message"]
    assert "'books.close'" in message and f"warehouse {shop.warehouse_id}" in message
    r = await scoped.call("POST", "/reports/periods/close", data={"through": "2020-01-31"})
    assert r.status_code == 403 and "books.close" in r.text
    assert (await scoped.web.get("/reports/periods")).status_code == 200  # reading is fine
    unscoped = await staff(http, db, shop, "accountant", None)
    r = await unscoped.call("POST", f"{ADMIN}/periods/close", json={"through": "2020-01-31"})
    assert r.status_code == 200, r.text


# ------------------------------------------------------------------------ branch routes


@dataclass
class Ctx:
    shop: Shop
    http: httpx.AsyncClient
    member: Actor  # a manager scoped to the shop's first branch
    boss: Actor  # the owner, who makes what a request acts on
    db: Database


# A case: the permission its refusal names; what is made first (a sale or a
# transfer the request then acts on; None: nothing); the request, given the
# warehouse acted on, whether it is the staff member's own, and what was made.
Setup = Callable[["Ctx", int], Awaitable[int]]
Request = Callable[["Ctx", int, bool, int], Awaitable[httpx.Response]]


async def _sale(c: Ctx, wid: int) -> int:
    key = c.shop.key if wid == c.shop.warehouse_id else c.shop.other_key
    product = _listed_in(c, wid)
    r = await c.http.post(
        "/api/v1/public/sales",
        headers=key.headers,
        json={
            "user_id": c.shop.customer_id,
            "order_date": dt.date.today().isoformat(),
            "product_items": [{"xid": xid.encode(product), "quantity": 1, "unit_price": "4"}],
        },
    )
    assert r.status_code == 200, r.text
    return int(r.json()["order_id"])


async def _transfer_from(c: Ctx, wid: int) -> int:
    key = c.shop.key if wid == c.shop.warehouse_id else c.shop.other_key
    r = await c.http.post(
        "/api/v1/public/stock-transfers",
        headers=key.headers,
        json={"to_warehouse_id": xid.encode(_other(c, wid)),
              "items": [{"product_id": xid.encode(_listed_in(c, wid)), "quantity": 1}]},
    )  # fmt: skip
    assert r.status_code == 200, r.text
    return int(r.json()["transfer_id"])


async def _transfer_to(c: Ctx, wid: int) -> int:
    return await _transfer_from(c, _other(c, wid))


def _other(c: Ctx, w: int) -> int:
    return c.shop.other_warehouse_id if w == c.shop.warehouse_id else c.shop.warehouse_id


def _listed_elsewhere(c: Ctx, wid: int) -> int:
    """A product listed in the other warehouse and not in ``wid``."""
    return _listed_in(c, _other(c, wid))


def _listed_in(c: Ctx, wid: int) -> int:
    if wid == c.shop.warehouse_id:
        return c.shop.products["apple"]
    return c.shop.other_products["coffee"]


def _party_file(wid: int, mine: bool) -> bytes:
    code = uuid.uuid4().hex[:8]
    if mine:  # no warehouse named: a scoped member's opening balances go home
        return f"code,name,opening_balance\nN{code},New {code},12.50\n".encode()
    return (
        "code,name,opening_balance,warehouse\n"
        f"A{code},Fine {code},1.00,\n"
        f"B{code},Elsewhere {code},12.50,{wid}\n"
    ).encode()


def _opening(kind: str) -> Request:
    def request(c: Ctx, w: int, mine: bool, _made: int) -> Awaitable[httpx.Response]:
        body: dict[str, Any] = {"name": "Day one", "opening_balance": "25.00"}
        return c.member.call(
            "POST", f"{ADMIN}/{kind}", json=body | ({} if mine else {"warehouse_id": w})
        )

    return request


def _opening_form(kind: str) -> Request:
    def request(c: Ctx, w: int, mine: bool, _made: int) -> Awaitable[httpx.Response]:
        form = {
            "name": "Day one",
            "opening_balance": "25.00",
            "warehouse_id": "" if mine else str(w),
        }
        return c.member.call("POST", f"/{kind}/new", data=form)

    return request


def _import(kind: str) -> Request:
    def request(c: Ctx, w: int, mine: bool, _made: int) -> Awaitable[httpx.Response]:
        files = {"file": (f"{kind}.csv", _party_file(w, mine), "text/csv")}
        return c.member.call("POST", f"{ADMIN}/import/{kind}", files=files)

    return request


async def _made(r: httpx.Response, *path: str) -> int:
    assert r.status_code in (200, 201), r.text
    out: Any = r.json()
    for name in path:
        out = out[name]
    return int(out)


async def _pending_expense(c: Ctx, wid: int) -> int:
    body = {"warehouse_id": wid, "expense_category_id": await _category(c),
            "amount": "40.00", "date": dt.date.today().isoformat()}  # fmt: skip
    return await _made(await c.boss.call("POST", f"{ADMIN}/expenses", json=body), "expense_id")


async def _register(c: Ctx, wid: int) -> int:
    body = {"warehouse_id": wid, "name": f"Till {uuid.uuid4().hex[:6]}"}
    return await _made(await c.boss.call("POST", f"{ADMIN}/registers", json=body), "data", "id")


async def _count(c: Ctx, wid: int) -> int:
    """A draft stocktake of the branch, one product counted (so that it posts)."""
    made = await c.boss.call("POST", f"{ADMIN}/stock-counts", json={"warehouse_id": wid})
    cid = await _made(made, "count_id")
    entry = {"items": [{"product_id": _listed_in(c, wid), "counted": 3}]}
    r = await c.boss.call("POST", f"{ADMIN}/stock-counts/{cid}/entries", json=entry)
    assert r.status_code == 200, r.text
    return cid


def _po_lines(c: Ctx, wid: int) -> list[dict[str, Any]]:
    return [{"product_id": _listed_in(c, wid), "quantity": 4, "unit_cost": "1.00"}]


async def _po(c: Ctx, wid: int) -> int:
    """A draft purchase order of the branch, made by the owner."""
    body = {"warehouse_id": wid, "supplier_id": c.shop.supplier_id, "lines": _po_lines(c, wid)}
    return await _made(await c.boss.call("POST", f"{ADMIN}/purchase-orders", json=body),
                       "data", "id")  # fmt: skip


async def _ordered_po(c: Ctx, wid: int) -> int:
    po = await _po(c, wid)
    r = await c.boss.call("POST", f"{ADMIN}/purchase-orders/{po}/order")
    assert r.status_code == 200, r.text
    return po


async def _purchase(c: Ctx, wid: int) -> int:
    """A purchase received by the branch (through its till key), to return from."""
    key = c.shop.key if wid == c.shop.warehouse_id else c.shop.other_key
    r = await c.http.post(
        "/api/v1/public/purchases",
        headers=key.headers,
        json={"user_id": c.shop.supplier_id, "order_date": dt.date.today().isoformat(),
              "product_items": [{"xid": xid.encode(_listed_in(c, wid)), "quantity": 3,
                                 "unit_price": "1.00"}]},
    )  # fmt: skip
    assert r.status_code == 200, r.text
    return int(r.json()["purchase_id"])


async def _price_form(c: Ctx, w: int) -> dict[str, str]:
    """10 % up on the branch's own product, named by its item code."""
    query = select(Product.item_code).where(Product.id == _listed_in(c, w))
    code = str(await c.db.read(lambda s: s.scalar(query)))
    return {"warehouse_ids": str(w), "scope": "list", "item_codes": code,
            "target": "sales", "method": "percent", "value": "10", "step": "0.01"}  # fmt: skip


async def _price_preview(c: Ctx, w: int, mine: bool, _made: int) -> httpx.Response:
    return await c.member.call("POST", "/prices/preview", data=await _price_form(c, w))


async def _price_apply(c: Ctx, w: int, mine: bool, _made: int) -> httpx.Response:
    """Applied as the page does: previewed first, the preview's fingerprint sent back
    (on another branch the preview itself is refused, so a made-up one is sent)."""
    fingerprint = "0" * 16
    form = await _price_form(c, w)
    preview = await c.member.call("POST", "/prices/preview", data=form)
    if preview.status_code == 200:
        found = re.search(r'name="fingerprint" value="([^"]*)"', preview.text)
        assert found, preview.text[:400]
        fingerprint = found.group(1)
    return await c.member.call("POST", "/prices/apply", data={**form, "fingerprint": fingerprint})


async def _price_body(c: Ctx, w: int) -> dict[str, Any]:
    form = await _price_form(c, w)
    return {"warehouse_ids": [w], "scope": "list", "item_codes": [form["item_codes"]],
            "target": "sales", "method": "percent", "value": "10"}  # fmt: skip


async def _price_preview_api(c: Ctx, w: int, mine: bool, _made: int) -> httpx.Response:
    return await c.member.call(
        "POST", f"{ADMIN}/price-changes/preview", json=await _price_body(c, w)
    )


async def _price_apply_api(c: Ctx, w: int, mine: bool, _made: int) -> httpx.Response:
    """As ``_price_apply``, through the admin API."""
    body = await _price_body(c, w)
    preview = await c.member.call("POST", f"{ADMIN}/price-changes/preview", json=body)
    fingerprint = preview.json()["data"]["fingerprint"] if preview.status_code == 200 else "0"
    return await c.member.call(
        "POST", f"{ADMIN}/price-changes", json={**body, "fingerprint": fingerprint}
    )


async def _mode(c: Ctx, code: str) -> int:
    query = select(PaymentMode.id).where(
        PaymentMode.company_id == c.shop.company_id, PaymentMode.code == code
    )
    return int(await c.db.read(lambda s: s.scalar(query)))


async def _category(c: Ctx) -> int:
    query = select(func.min(ExpenseCategory.id)).where(
        ExpenseCategory.company_id == c.shop.company_id
    )
    return int(await c.db.read(lambda s: s.scalar(query)))


def _home(w: int, mine: bool) -> dict[str, Any]:
    """The branch a money write names: none for their own (a scoped member's
    default), the other one by id."""
    return {} if mine else {"warehouse_id": w}


def _party_payment(segment: str, party: Callable[[Shop], int]) -> Request:
    async def request(c: Ctx, w: int, mine: bool, _made: int) -> httpx.Response:
        form = {"warehouse_id": str(w), "amount": "5.00",
                "payment_mode_id": str(await _mode(c, "cash"))}  # fmt: skip
        return await c.member.call("POST", f"/{segment}/{party(c.shop)}/payment", data=form)

    return request


async def _expense_form(c: Ctx, w: int, mine: bool, _made: int) -> httpx.Response:
    form = {"warehouse_id": str(w), "expense_category_id": str(await _category(c)),
            "amount": "7.00", "date": dt.date.today().isoformat(),
            "payment_mode_id": str(await _mode(c, "cash"))}  # fmt: skip
    return await c.member.call("POST", "/expenses/new", data=form)


async def _expense_api(c: Ctx, w: int, mine: bool, _made: int) -> httpx.Response:
    body = {**_home(w, mine), "expense_category_id": await _category(c), "amount": "6.00",
            "date": dt.date.today().isoformat(), "payment_mode_id": "cash"}  # fmt: skip
    return await c.member.call("POST", f"{ADMIN}/expenses", json=body)


async def _move_form(c: Ctx, w: int, mine: bool, _made: int) -> httpx.Response:
    form = {"warehouse_id": str(w), "from_payment_mode_id": str(await _mode(c, "cash")),
            "to_payment_mode_id": str(await _mode(c, "bank")), "amount": "9.00"}  # fmt: skip
    return await c.member.call("POST", "/money-moves", data=form)


async def _pay_form(c: Ctx, w: int, mine: bool, expense: int) -> httpx.Response:
    form = {"payment_mode_id": str(await _mode(c, "bank"))}
    return await c.member.call("POST", f"/expenses/{expense}/pay", data=form)


# Routes whose refusal on another branch is a 404 (module docstring).
HIDDEN = {
    ("POST", f"{ADMIN}/stock-counts/{{count_id}}/entries"),
    ("POST", f"{ADMIN}/stock-counts/{{count_id}}/post"),
    ("POST", f"{ADMIN}/stock-counts/{{count_id}}/cancel"),
    ("POST", "/stock/counts/{count_id}/enter"),
    ("POST", "/stock/counts/{count_id}/post"),
    ("POST", "/stock/counts/{count_id}/cancel"),
    ("PUT", f"{ADMIN}/purchase-orders/{{po_id}}"),
    ("POST", f"{ADMIN}/purchase-orders/{{po_id}}/order"),
    ("POST", f"{ADMIN}/purchase-orders/{{po_id}}/receipts"),
    ("POST", f"{ADMIN}/purchase-orders/{{po_id}}/close"),
    ("POST", "/purchase-orders/{po_id}/edit"),
    ("POST", "/purchase-orders/{po_id}/order"),
    ("POST", "/purchase-orders/{po_id}/receive"),
    ("POST", "/purchase-orders/{po_id}/close"),
}

BRANCH_CASES: dict[tuple[str, str], tuple[str, Setup | None, Request]] = {
    ("POST", "/prices/preview"): ("prices.write", None, _price_preview),
    ("POST", "/prices/apply"): ("prices.write", None, _price_apply),
    ("POST", f"{ADMIN}/price-changes/preview"): ("prices.write", None, _price_preview_api),
    ("POST", f"{ADMIN}/price-changes"): ("prices.write", None, _price_apply_api),
    ("POST", f"{ADMIN}/purchase-orders"): (
        "purchases.write", None,
        lambda c, w, m, _: c.member.call("POST", f"{ADMIN}/purchase-orders", json={
            "warehouse_id": w, "supplier_id": c.shop.supplier_id, "lines": _po_lines(c, w)}),
    ),
    ("PUT", f"{ADMIN}/purchase-orders/{{po_id}}"): (
        "purchases.write", _po,
        lambda c, w, m, n: c.member.call("PUT", f"{ADMIN}/purchase-orders/{n}", json={
            "supplier_id": c.shop.supplier_id, "lines": _po_lines(c, w)}),
    ),
    ("POST", f"{ADMIN}/purchase-orders/{{po_id}}/order"): (
        "purchases.write", _po,
        lambda c, w, m, n: c.member.call("POST", f"{ADMIN}/purchase-orders/{n}/order"),
    ),
    ("POST", f"{ADMIN}/purchase-orders/{{po_id}}/receipts"): (
        "purchases.write", _ordered_po,
        lambda c, w, m, n: c.member.call("POST", f"{ADMIN}/purchase-orders/{n}/receipts", json={
            "order_date": dt.date.today().isoformat(),
            "lines": [{"product_id": _listed_in(c, w), "quantity": 2}]}),
    ),
    ("POST", f"{ADMIN}/purchase-orders/{{po_id}}/close"): (
        "purchases.write", _ordered_po,
        lambda c, w, m, n: c.member.call("POST", f"{ADMIN}/purchase-orders/{n}/close",
                                         json={"reason": "not coming"}),
    ),
    ("POST", "/purchase-orders/new"): (
        "purchases.write", None,
        lambda c, w, m, _: c.member.call("POST", "/purchase-orders/new", data={
            "warehouse_id": str(w), "user_id": str(c.shop.supplier_id),
            f"qty-{_listed_in(c, w)}": "2", f"cost-{_listed_in(c, w)}": "1.00"}),
    ),
    ("POST", "/purchase-orders/{po_id}/edit"): (
        "purchases.write", _po,
        lambda c, w, m, n: c.member.call("POST", f"/purchase-orders/{n}/edit", data={
            "user_id": str(c.shop.supplier_id),
            f"qty-{_listed_in(c, w)}": "3", f"cost-{_listed_in(c, w)}": "1.00"}),
    ),
    ("POST", "/purchase-orders/{po_id}/order"): (
        "purchases.write", _po,
        lambda c, w, m, n: c.member.call("POST", f"/purchase-orders/{n}/order"),
    ),
    ("POST", "/purchase-orders/{po_id}/receive"): (
        "purchases.write", _ordered_po,
        lambda c, w, m, n: c.member.call("POST", f"/purchase-orders/{n}/receive", data={
            f"qty-{_listed_in(c, w)}": "2", f"cost-{_listed_in(c, w)}": "1.00"}),
    ),
    ("POST", "/purchase-orders/{po_id}/close"): (
        "purchases.write", _ordered_po,
        lambda c, w, m, n: c.member.call("POST", f"/purchase-orders/{n}/close",
                                         data={"reason": "not coming"}),
    ),
    ("POST", "/purchases/{order_id}/return"): (
        "purchases.write", _purchase,
        lambda c, w, m, n: c.member.call("POST", f"/purchases/{n}/return", data={
            f"qty-{_listed_in(c, w)}": "1"}),
    ),
    ("POST", f"{ADMIN}/products/{{product_id}}/listings"): (
        "catalog.write", None,
        lambda c, w, m, _: c.member.call(
            "POST", f"{ADMIN}/products/{_listed_elsewhere(c, w)}/listings",
            json={"warehouse_id": w, "sales_price": "2", "purchase_price": "1"}),
    ),
    ("PATCH", f"{ADMIN}/products/{{product_id}}/listings/{{warehouse_id}}"): (
        "prices.write", None,
        lambda c, w, m, _: c.member.call(
            "PATCH", f"{ADMIN}/products/{_listed_in(c, w)}/listings/{w}",
            json={"sales_price": "3.75", "version": 1}),
    ),
    ("POST", f"{ADMIN}/products/{{product_id}}/listings/{{warehouse_id}}/opening-stock"): (
        "stock.write", None,
        lambda c, w, m, _: c.member.call(
            "POST", f"{ADMIN}/products/{_listed_in(c, w)}/listings/{w}/opening-stock",
            json={"quantity": 2, "unit_cost": "1.00"}),
    ),
    ("POST", f"{ADMIN}/customers"): ("parties.credit", None, _opening("customers")),
    ("POST", f"{ADMIN}/suppliers"): ("parties.credit", None, _opening("suppliers")),
    ("POST", f"{ADMIN}/import/customers"): ("parties.credit", None, _import("customers")),
    ("POST", f"{ADMIN}/import/suppliers"): ("parties.credit", None, _import("suppliers")),
    ("POST", "/products/{product_id}/listings/{warehouse_id}"): (
        "catalog.write", None,
        lambda c, w, m, _: c.member.call(
            "POST", f"/products/{_listed_in(c, w)}/listings/{w}",
            data={"sales_price": "3.80", "purchase_price": "1.00", "reorder_level": "0",
                  "version": "1", "active": "1"}),
    ),
    ("POST", "/products/{product_id}/listings"): (
        "catalog.write", None,
        lambda c, w, m, _: c.member.call(
            "POST", f"/products/{_listed_elsewhere(c, w)}/listings",
            data={"warehouse_id": str(w), "sales_price": "2", "purchase_price": "1"}),
    ),
    ("POST", "/customers/new"): ("parties.credit", None, _opening_form("customers")),
    ("POST", "/suppliers/new"): ("parties.credit", None, _opening_form("suppliers")),
    ("POST", "/stock/products/{product_id}/adjust"): (
        "stock.write", None,
        lambda c, w, m, _: c.member.call(
            "POST", f"/stock/products/{_listed_in(c, w)}/adjust",
            data={"warehouse_id": str(w), "quantity": "1", "adjustment_type": "add",
                  "notes": "found one"}),
    ),
    ("POST", "/transfers/new"): (
        "stock.write", None,
        lambda c, w, m, _: c.member.call(
            "POST", "/transfers/new",
            data={"warehouse_id": str(w), "to_warehouse_id": str(_other(c, w)),
                  f"qty-{_listed_in(c, w)}": "1"}),
    ),
    # A transfer is received by the branch it goes to, cancelled by the one it left.
    ("POST", "/transfers/{transfer_id}/receive"): (
        "stock.write", _transfer_to,
        lambda c, w, m, t: c.member.call("POST", f"/transfers/{t}/receive"),
    ),
    ("POST", "/transfers/{transfer_id}/cancel"): (
        "stock.write", _transfer_from,
        lambda c, w, m, t: c.member.call("POST", f"/transfers/{t}/cancel",
                                         data={"reason": "wrong box"}),
    ),
    ("POST", "/sales/{order_id}/void"): (
        "sales.void", _sale,
        lambda c, w, m, o: c.member.call("POST", f"/sales/{o}/void",
                                         data={"reason": "rang up twice"}),
    ),
    ("POST", "/sales/{order_id}/return"): (
        "sales.return", _sale,
        lambda c, w, m, o: c.member.call("POST", f"/sales/{o}/return",
                                         data={f"qty-{_listed_in(c, w)}": "1",
                                               "refund_to": "account"}),
    ),
    # Money in and out: the API's body names the branch (or leaves it to the
    # member's own), the page's form does; paying an expense acts on its branch.
    ("POST", f"{ADMIN}/payments"): (
        "payments.receive", None,
        lambda c, w, m, _: c.member.call(
            "POST", f"{ADMIN}/payments",
            json={**_home(w, m), "user_id": c.shop.customer_id, "payment_type": "in",
                  "amount": "5.00", "payment_mode_id": "cash"}),
    ),
    ("POST", f"{ADMIN}/expenses"): ("expenses.write", None, _expense_api),
    ("POST", f"{ADMIN}/expenses/{{expense_id}}/pay"): (
        "expenses.approve", _pending_expense,
        lambda c, w, m, e: c.member.call("POST", f"{ADMIN}/expenses/{e}/pay",
                                         json={"payment_mode_id": "bank"}),
    ),
    ("POST", f"{ADMIN}/money-moves"): (
        "money.move", None,
        lambda c, w, m, _: c.member.call(
            "POST", f"{ADMIN}/money-moves",
            json={**_home(w, m), "from_payment_mode_id": "cash",
                  "to_payment_mode_id": "bank", "amount": "8.00"}),
    ),
    # A gift card sold in the back office is money taken in a branch.
    ("POST", f"{ADMIN}/gift-cards"): (
        "payments.receive", None,
        lambda c, w, m, _: c.member.call(
            "POST", f"{ADMIN}/gift-cards",
            json={**_home(w, m), "amount": "5.00",
                  "all_payments": [{"amount": "5.00", "payment_mode_id": "cash"}]}),
    ),
    ("POST", "/customers/{party_id}/payment"): (
        "payments.receive", None, _party_payment("customers", lambda s: s.customer_id),
    ),
    ("POST", "/suppliers/{party_id}/payment"): (
        "payments.make", None, _party_payment("suppliers", lambda s: s.supplier_id),
    ),
    ("POST", "/expenses/new"): ("expenses.write", None, _expense_form),
    ("POST", "/expenses/{expense_id}/pay"): ("expenses.approve", _pending_expense, _pay_form),
    ("POST", "/money-moves"): ("money.move", None, _move_form),
    # Registers: paired to a branch, revoked by whoever manages its branch.
    ("POST", f"{ADMIN}/registers"): (
        "registers.manage", None,
        lambda c, w, m, _: c.member.call("POST", f"{ADMIN}/registers",
                                         json={"warehouse_id": w, "name": "Front till"}),
    ),
    ("POST", f"{ADMIN}/registers/{{register_id}}/revoke"): (
        "registers.manage", _register,
        lambda c, w, m, r: c.member.call("POST", f"{ADMIN}/registers/{r}/revoke"),
    ),
    ("POST", "/settings/registers/{register_id}/revoke"): (
        "registers.manage", _register,
        lambda c, w, m, r: c.member.call("POST", f"/settings/registers/{r}/revoke"),
    ),
    # A delivery received into the branch the form names.
    ("POST", "/purchases/new"): (
        "stock.write", None,
        lambda c, w, m, _: c.member.call(
            "POST", "/purchases/new",
            data={"warehouse_id": str(w), "user_id": str(c.shop.supplier_id),
                  f"qty-{_listed_in(c, w)}": "2", f"cost-{_listed_in(c, w)}": "1.00"}),
    ),
    # Stocktakes: started for the branch named, then worked on through the count.
    ("POST", f"{ADMIN}/stock-counts"): (
        "stock.write", None,
        lambda c, w, m, _: c.member.call("POST", f"{ADMIN}/stock-counts",
                                         json={"warehouse_id": w}),
    ),
    ("POST", f"{ADMIN}/stock-counts/{{count_id}}/entries"): (
        "stock.write", _count,
        lambda c, w, m, n: c.member.call(
            "POST", f"{ADMIN}/stock-counts/{n}/entries",
            json={"items": [{"product_id": _listed_in(c, w), "counted": 4}]}),
    ),
    ("POST", f"{ADMIN}/stock-counts/{{count_id}}/post"): (
        "stock.write", _count,
        lambda c, w, m, n: c.member.call("POST", f"{ADMIN}/stock-counts/{n}/post"),
    ),
    ("POST", f"{ADMIN}/stock-counts/{{count_id}}/cancel"): (
        "stock.write", _count,
        lambda c, w, m, n: c.member.call("POST", f"{ADMIN}/stock-counts/{n}/cancel"),
    ),
    ("POST", "/stock/counts"): (
        "stock.write", None,
        lambda c, w, m, _: c.member.call("POST", "/stock/counts",
                                         data={"warehouse_id": str(w), "scope": "all"}),
    ),
    ("POST", "/stock/counts/{count_id}/enter"): (
        "stock.write", _count,
        lambda c, w, m, n: c.member.call(
            "POST", f"/stock/counts/{n}/enter",
            data={f"qty-{_listed_in(c, w)}": "5", f"was-{_listed_in(c, w)}": "3"}),
    ),
    ("POST", "/stock/counts/{count_id}/post"): (
        "stock.write", _count,
        lambda c, w, m, n: c.member.call("POST", f"/stock/counts/{n}/post"),
    ),
    ("POST", "/stock/counts/{count_id}/cancel"): (
        "stock.write", _count,
        lambda c, w, m, n: c.member.call("POST", f"/stock/counts/{n}/cancel"),
    ),
}  # fmt: skip


async def _openings(db: Database, shop: Shop) -> list[int | None]:
    """The warehouse of every opening balance entry of the company's parties."""

    async def read(s: Any) -> list[int | None]:
        rows = await s.execute(
            select(JournalEntry.warehouse_id).where(
                JournalEntry.company_id == shop.company_id,
                JournalEntry.source_type == "opening_balance",
            )
        )
        return [w for (w,) in rows.all()]

    return await db.read(read)


@pytest.mark.parametrize("route", sorted(BRANCH_CASES), ids=lambda r: f"{r[0]} {r[1]}")
async def test_a_branch_manager_acts_on_their_branch_only(
    http: httpx.AsyncClient, db: Database, route: tuple[str, str]
) -> None:
    permission, setup, request = BRANCH_CASES[route]
    shop = await make_shop(db)
    c = Ctx(
        shop,
        http,
        await staff(http, db, shop, "manager", shop.warehouse_id),
        await owner(http, db, shop),
        db,
    )
    mine, theirs = shop.warehouse_id, shop.other_warehouse_id

    # On the other branch: refused, naming the permission, and nothing written.
    made = await setup(c, theirs) if setup is not None else 0
    before = await snapshot(db, shop)
    r = await request(c, theirs, False, made)
    if route in HIDDEN:  # not found, telling nothing about the other branch
        assert r.status_code == 404, (route, r.status_code, r.text[:400])
        assert f"{made} not found" in r.text, r.text[:400]
    else:
        assert r.status_code == 403, (route, r.status_code, r.text[:400])
        assert f"{permission!r}" in r.text or f"&#39;{permission}&#39;" in r.text, r.text[:400]
        assert f"limited to warehouse {mine}" in r.text, r.text[:400]
    assert await snapshot(db, shop) == before, route

    # On their own branch: done, and an opening balance is posted at home.
    made = await setup(c, mine) if setup is not None else 0
    r = await request(c, mine, True, made)
    assert r.status_code in (200, 201, 303), (route, r.status_code, r.text[:400])
    assert set(await _openings(db, shop)) <= {mine}, "an opening balance went elsewhere"
    await check_books(db, shop.company_id)


# --------------------------------------------------------------- own sign-in, first run


async def test_own_sign_in_is_anyones(http: httpx.AsyncClient, db: Database) -> None:
    """``OWN``: a scoped cashier sets their own PIN and password (no warehouse in
    either), and not a colleague's PIN (``staff.manage``, company-wide). ``NO_COMPANY``:
    with a company in place the first-run page is not found, whoever asks."""
    shop = await make_shop(db)
    email = await add_staff(db, shop, "cashier", shop.warehouse_id)
    cashier = await sign_in_both(http, email, STAFF_PASSWORD)
    me = await db.read(lambda s: s.scalar(select(User.id).where(User.email == email)))
    boss = await owner_email(db, shop)
    colleague = await db.read(lambda s: s.scalar(select(User.id).where(User.email == boss)))
    before = await snapshot(db, shop)
    r = await cashier.call("PUT", f"{ADMIN}/staff/{colleague}/pin", json={"pin": "4321"})
    assert r.status_code == 403 and "'staff.manage'" in r.text, r.text
    r = await cashier.call("POST", "/start", data={"company_name": "Second shop"})
    assert r.status_code == 404, r.text
    assert await snapshot(db, shop) == before
    r = await cashier.call("PUT", f"{ADMIN}/staff/{me}/pin", json={"pin": "2468"})
    assert r.status_code == 200 and r.json()["data"]["has_pin"] is True, r.text
    r = await cashier.call(
        "POST",
        "/account/password",
        data={"current_password": STAFF_PASSWORD, "password": "a new password 2"},
    )
    assert r.status_code == 303, r.text
    assert await sign_in_both(http, email, "a new password 2")
