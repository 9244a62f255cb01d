"""The back office's pages over HTTP (no browser): sign-in, the role table's
refusals, CSRF, one-time form tokens, field errors next to their fields."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import AsyncIterator

import httpx
import pytest
from sqlalchemy import func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from tests.factories import Shop, make_shop
from tests.web_helpers import (
    OWNER_PASSWORD,
    STAFF_PASSWORD,
    add_staff,
    csrf_of,
    form_token_of,
    owner_email,
    sign_in,
)
from tillbook.app import create_app
from tillbook.config import Settings
from tillbook.db import Database
from tillbook.models import ApiKey, AuditEvent, Product, StockAdjustment, Webhook


@pytest.fixture
async def web(settings: Settings, db: Database) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(settings, database=db)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as c:
            yield c


async def _count(db: Database, model: type, company_id: int) -> int:
    return int(
        await db.read(
            lambda s: s.scalar(
                select(func.count()).select_from(model).where(model.company_id == company_id)
            )
        )
    )


async def test_pages_need_a_session(web: httpx.AsyncClient) -> None:
    r = await web.get("/products?q=x")
    assert r.status_code == 303
    assert r.headers["location"] == "/login?next=/products%3Fq%3Dx"
    assert (await web.get("/api/v1/admin/staff")).status_code == 401  # the API stays JSON


async def test_sign_in_sets_a_safe_cookie_and_signs_out(
    web: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    email = await owner_email(db, shop)
    wrong = await sign_in(web, email, "wrong password")
    assert wrong.status_code == 401 and "invalid email or password" in wrong.text
    r = await sign_in(web, email, OWNER_PASSWORD)
    assert r.status_code == 303, r.text
    cookie = r.headers["set-cookie"].lower()
    assert "httponly" in cookie and "samesite=lax" in cookie and "secure" not in cookie
    home = await web.get("/")
    assert home.status_code == 200 and "Sales and gross margin" in home.text
    out = await web.post("/logout", data={"csrf": csrf_of(home.text)})
    assert out.status_code == 303
    assert (await web.get("/")).status_code == 303


async def test_login_without_its_token_is_refused(
    web: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    email = await owner_email(db, shop)
    await web.get("/login")
    r = await web.post("/login", data={"email": email, "password": OWNER_PASSWORD})
    assert r.status_code == 403
    assert "tillbook_session" not in r.headers.get("set-cookie", "")


async def test_a_post_without_or_with_a_wrong_csrf_token_changes_nothing(
    web: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    await sign_in(web, await owner_email(db, shop), OWNER_PASSWORD)
    page = await web.get("/settings/keys")
    before = await _count(db, ApiKey, shop.company_id)
    form = {"name": "no token", "warehouse_id": str(shop.warehouse_id)}
    for extra in ({}, {"csrf": "0" * 64}):
        r = await web.post(
            "/settings/keys", data={**form, **extra, "form_token": form_token_of(page.text)}
        )
        assert r.status_code == 403, r.text
        assert "security token" in r.text
    assert await _count(db, ApiKey, shop.company_id) == before


async def test_a_cashier_is_refused_settings_by_the_server(
    web: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    email = await add_staff(db, shop, "cashier")
    r = await sign_in(web, email, STAFF_PASSWORD)
    assert r.status_code == 303
    landing = await web.get("/", follow_redirects=True)
    assert landing.status_code == 200
    assert "/settings/keys" not in landing.text and "/products/new" not in landing.text
    csrf = csrf_of(landing.text)
    for path in ("/settings/keys", "/settings/staff", "/settings/webhooks", "/reports"):
        r = await web.get(path)
        assert r.status_code == 403, path
        assert "lacks the permission" in r.text
    r = await web.post(
        "/settings/keys",
        data={"csrf": csrf, "name": "sneaky", "warehouse_id": str(shop.warehouse_id)},
    )
    assert r.status_code == 403
    r = await web.post("/products/new", data={"csrf": csrf, "name": "x", "item_code": "x"})
    assert r.status_code == 403
    assert await _count(db, ApiKey, shop.company_id) == 2


async def test_a_scoped_manager_lists_only_in_their_branch(
    web: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    """A product's definition is company-wide: a scoped manager is refused, as by the API."""
    email = await add_staff(db, shop, "manager", shop.warehouse_id)
    await sign_in(web, email, STAFF_PASSWORD)
    assert (await web.get("/products")).status_code == 200
    assert (await web.get("/products/new")).status_code == 403
    other = await web.get(f"/reports?warehouse_id={shop.other_warehouse_id}")
    assert other.status_code == 403


async def test_field_errors_are_shown_next_to_the_field_and_a_form_works_once(
    web: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    await sign_in(web, await owner_email(db, shop), OWNER_PASSWORD)
    page = await web.get("/products/new")
    wh = shop.warehouse_id
    form = {
        "csrf": csrf_of(page.text),
        "form_token": form_token_of(page.text),
        "name": "Oat milk",
        "item_code": f"OAT-{shop.company_id}",
        "barcodes": f"77{shop.company_id}01",
        f"list.{wh}.on": "1",
        f"list.{wh}.sales_price": "abc",
        f"list.{wh}.purchase_price": "1.20",
    }
    bad = await web.post("/products/new", data=form)
    assert bad.status_code == 422
    assert f'id="e-list.{wh}.sales_price"' in bad.text and "must be a number" in bad.text
    assert 'value="Oat milk"' in bad.text
    products = await _count(db, Product, shop.company_id)
    form[f"list.{wh}.sales_price"] = "2.50"
    form[f"list.{wh}.opening_stock.quantity"] = "12"
    form[f"list.{wh}.opening_stock.unit_cost"] = "1.10"
    first = await web.post("/products/new", data=form)
    assert first.status_code == 303, first.text
    again = await web.post("/products/new", data=form)
    assert again.status_code == 303 and again.headers["location"] == first.headers["location"]
    assert await _count(db, Product, shop.company_id) == products + 1
    shown = await web.get(first.headers["location"])
    assert "Oat milk" in shown.text and "2.50" in shown.text and ">12<" in shown.text
    audited = await db.read(
        lambda s: s.scalar(
            select(func.count())
            .select_from(AuditEvent)
            .where(AuditEvent.company_id == shop.company_id, AuditEvent.entity_type == "product")
        )
    )
    assert audited == 1


async def test_an_api_key_secret_is_shown_once(
    web: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    await sign_in(web, await owner_email(db, shop), OWNER_PASSWORD)
    page = await web.get("/settings/keys")
    form = {
        "csrf": csrf_of(page.text),
        "form_token": form_token_of(page.text),
        "name": "back till",
        "warehouse_id": str(shop.warehouse_id),
    }
    first = await web.post("/settings/keys", data=form)
    assert first.status_code == 200 and 'id="secret-key">sk_' in first.text
    again = await web.post("/settings/keys", data=form)
    assert "sk_" not in again.text and "already created" in again.text
    assert await _count(db, ApiKey, shop.company_id) == 3
    listed = await web.get("/settings/keys")
    assert "back till" in listed.text and "sk_" not in listed.text


async def test_rotating_a_key_shows_new_secrets_once_and_retires_the_old(
    web: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    key_id = await db.read(
        lambda s: s.scalar(select(ApiKey.id).where(ApiKey.public_key == shop.key.public_key))
    )
    products = "/api/v1/public/products"
    assert (await web.get(products, headers=shop.headers)).status_code == 200
    await sign_in(web, await owner_email(db, shop), OWNER_PASSWORD)
    confirm = await web.get(f"/settings/keys/{key_id}/rotate")
    assert confirm.status_code == 200 and "stop working at once" in confirm.text
    form = {"csrf": csrf_of(confirm.text), "form_token": form_token_of(confirm.text)}
    rotated = await web.post(f"/settings/keys/{key_id}/rotate", data=form)
    assert rotated.status_code == 200 and "has new secrets" in rotated.text
    found = re.search(r'id="secret-key">(sk_[^<]+)<', rotated.text)
    assert found is not None and found.group(1) != shop.key.secret_key
    assert shop.key.public_key in rotated.text  # the public key stays
    # the old secret is refused from now on, the new one works on the same key
    assert (await web.get(products, headers=shop.headers)).status_code == 401
    new_headers = {**shop.headers, "X-Service-Secret-Key": found.group(1)}
    assert (await web.get(products, headers=new_headers)).status_code == 200
    # the same form sent again rotates nothing and shows no secret
    again = await web.post(f"/settings/keys/{key_id}/rotate", data=form)
    assert "sk_" not in again.text and "already rotated" in again.text
    assert (await web.get(products, headers=new_headers)).status_code == 200
    rotations = await db.read(
        lambda s: s.scalar(
            select(func.count())
            .select_from(AuditEvent)
            .where(
                AuditEvent.company_id == shop.company_id,
                AuditEvent.entity_type == "api_key",
                AuditEvent.action == "rotated",
            )
        )
    )
    assert rotations == 1
    # a revoked key is not rotated; another company's key is not found
    page = await web.get(f"/settings/keys/{key_id}/revoke")
    revoke = {"csrf": csrf_of(page.text), "form_token": form_token_of(page.text)}
    assert (await web.post(f"/settings/keys/{key_id}/revoke", data=revoke)).status_code == 303
    page = await web.get(f"/settings/keys/{key_id}/rotate")
    form = {"csrf": csrf_of(page.text), "form_token": form_token_of(page.text)}
    refused = await web.post(f"/settings/keys/{key_id}/rotate", data=form)
    assert refused.status_code == 409 and "revoked" in refused.text
    other = await make_shop(db)
    other_key = await db.read(
        lambda s: s.scalar(select(ApiKey.id).where(ApiKey.public_key == other.key.public_key))
    )
    page = await web.get("/settings/keys")
    form = {"csrf": csrf_of(page.text), "form_token": form_token_of(page.text)}
    assert (await web.post(f"/settings/keys/{other_key}/rotate", data=form)).status_code == 404
    assert (await web.get(products, headers=other.headers)).status_code == 200


def _signed(headers: dict[str, str], hmac_secret: str, target: str) -> dict[str, str]:
    import time as _time

    from tillbook.auth.service import sign

    stamp = str(int(_time.time()))
    return {
        **headers,
        "X-Service-Timestamp": stamp,
        "X-Service-Signature": sign(hmac_secret, stamp, "GET", target.encode(), b""),
    }


async def test_a_rotation_with_grace_lets_the_old_secrets_work_until_then(
    web: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    """A chain moving its tills one by one: both secrets work until the grace ends;
    the old secret signs with its own signing secret; rotating again or revoking
    ends the grace at once; a grace that has run out is refused."""
    key_id = await db.read(
        lambda s: s.scalar(select(ApiKey.id).where(ApiKey.public_key == shop.key.public_key))
    )
    products = "/api/v1/public/products"
    await sign_in(web, await owner_email(db, shop), OWNER_PASSWORD)

    async def rotate(grace: str) -> httpx.Response:
        page = await web.get(f"/settings/keys/{key_id}/rotate")
        assert 'name="grace"' in page.text and "For 24 hours" in page.text
        form = {"csrf": csrf_of(page.text), "form_token": form_token_of(page.text)}
        return await web.post(f"/settings/keys/{key_id}/rotate", data={**form, "grace": grace})

    bad = await rotate("2d")
    assert bad.status_code == 422 and 'id="e-grace"' in bad.text and "1h, 24h" in bad.text
    assert (await web.get(products, headers=shop.headers)).status_code == 200  # not rotated

    rotated = await rotate("24h")
    assert rotated.status_code == 200 and 'id="old-until"' in rotated.text
    first = re.search(r'id="secret-key">(sk_[^<]+)<', rotated.text)
    first_hmac = re.search(r'id="hmac-secret">(hs_[^<]+)<', rotated.text)
    assert first is not None and first_hmac is not None
    new_headers = {**shop.headers, "X-Service-Secret-Key": first.group(1)}
    assert (await web.get(products, headers=shop.headers)).status_code == 200
    assert (await web.get(products, headers=new_headers)).status_code == 200
    # each secret signs with its own signing secret, not the other's
    old_signed = _signed(shop.headers, shop.key.hmac_secret, products)
    assert (await web.get(products, headers=old_signed)).status_code == 200
    mixed = _signed(shop.headers, first_hmac.group(1), products)
    assert (await web.get(products, headers=mixed)).status_code == 401
    new_signed = _signed(new_headers, first_hmac.group(1), products)
    assert (await web.get(products, headers=new_signed)).status_code == 200
    crossed = _signed(new_headers, shop.key.hmac_secret, products)
    assert (await web.get(products, headers=crossed)).status_code == 401
    assert "old secrets work until" in (await web.get("/settings/keys")).text
    audit = await db.read(
        lambda s: s.scalar(
            select(AuditEvent.after)
            .where(AuditEvent.entity_type == "api_key", AuditEvent.entity_id == key_id)
            .order_by(AuditEvent.id.desc())
            .limit(1)
        )
    )
    assert "old_secrets_valid_until" in str(audit) and "sk_" not in str(audit)

    # a grace that has run out
    await db.write(
        lambda s: s.execute(
            update(ApiKey)
            .where(ApiKey.id == key_id)
            .values(previous_valid_until=dt.datetime.now(dt.UTC) - dt.timedelta(seconds=1))
        )
    )
    assert (await web.get(products, headers=shop.headers)).status_code == 401
    assert (await web.get(products, headers=new_headers)).status_code == 200
    assert "old secrets work until" not in (await web.get("/settings/keys")).text

    # rotating again keeps only the secrets it replaces; without grace, none
    again = await rotate("1h")
    second = re.search(r'id="secret-key">(sk_[^<]+)<', again.text)
    assert second is not None
    second_headers = {**shop.headers, "X-Service-Secret-Key": second.group(1)}
    assert (await web.get(products, headers=shop.headers)).status_code == 401
    assert (await web.get(products, headers=new_headers)).status_code == 200
    assert (await web.get(products, headers=second_headers)).status_code == 200
    third = await rotate("none")
    assert "no longer work" in third.text
    assert (await web.get(products, headers=new_headers)).status_code == 401
    found = re.search(r'id="secret-key">(sk_[^<]+)<', third.text)
    assert found is not None
    third_headers = {**shop.headers, "X-Service-Secret-Key": found.group(1)}
    assert (await web.get(products, headers=third_headers)).status_code == 200

    # revoking ends a grace at once
    await rotate("7d")
    page = await web.get(f"/settings/keys/{key_id}/revoke")
    revoke = {"csrf": csrf_of(page.text), "form_token": form_token_of(page.text)}
    assert (await web.post(f"/settings/keys/{key_id}/revoke", data=revoke)).status_code == 303
    assert (await web.get(products, headers=third_headers)).status_code == 401
    key = await db.read(lambda s: s.get(ApiKey, key_id))
    assert key is not None and key.previous_secret_digest is None


# --- customers and suppliers ----------------------------------------------------------


async def _audits(db: Database, company_id: int, entity_type: str) -> int:
    return int(
        await db.read(
            lambda s: s.scalar(
                select(func.count())
                .select_from(AuditEvent)
                .where(AuditEvent.company_id == company_id, AuditEvent.entity_type == entity_type)
            )
        )
    )


async def test_customers_list_create_edit_and_archive(
    web: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    await sign_in(web, await owner_email(db, shop), OWNER_PASSWORD)
    listed = await web.get("/customers?q=")
    assert listed.status_code == 200 and "Balance" in listed.text
    page = await web.get("/customers/new")
    form = {
        "csrf": csrf_of(page.text),
        "form_token": form_token_of(page.text),
        "name": "Ada Web",
        "code": f"ADA-{shop.company_id}",
        "email": "not an email",
        "credit_limit": "100",
    }
    bad = await web.post("/customers/new", data=form)
    assert bad.status_code == 422 and 'id="e-email"' in bad.text
    assert 'value="Ada Web"' in bad.text
    form["email"] = "ada@example.com"
    before = await _audits(db, shop.company_id, "customer")
    first = await web.post("/customers/new", data=form)
    assert first.status_code == 303, first.text
    again = await web.post("/customers/new", data=form)
    assert again.headers["location"] == first.headers["location"]
    assert await _audits(db, shop.company_id, "customer") == before + 1
    detail = await web.get(first.headers["location"])
    assert "Ada Web" in detail.text and "Outstanding invoices" in detail.text
    found = await web.get("/customers?q=Ada+Web")
    assert "Ada Web" in found.text
    pid = first.headers["location"].split("/customers/")[1].split("?")[0]

    # An edit based on an old version is refused with a clear message.
    edit = {
        "csrf": csrf_of(detail.text),
        "form_token": form_token_of(detail.text),
        "name": "Ada Lovelace",
        "version": "1",
        "credit_limit": "150",
    }
    saved = await web.post(f"/customers/{pid}/edit", data=edit)
    assert saved.status_code == 303, saved.text
    stale = await web.post(
        f"/customers/{pid}/edit", data={**edit, "form_token": "form-other", "name": "Lost"}
    )
    assert stale.status_code == 412 and "changed this record" in stale.text
    assert "Ada Lovelace" in (await web.get(f"/customers/{pid}")).text

    confirm = await web.get(f"/customers/{pid}/archive")
    assert confirm.status_code == 200 and "Archive Ada Lovelace?" in confirm.text
    done = await web.post(
        f"/customers/{pid}/archive",
        data={"csrf": csrf_of(confirm.text), "form_token": form_token_of(confirm.text)},
    )
    assert done.status_code == 303
    assert "(archived)" in (await web.get(f"/customers/{pid}")).text
    assert await _audits(db, shop.company_id, "customer") == before + 3


async def test_a_cashier_adds_a_customer_but_not_a_supplier_nor_a_credit_limit(
    web: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    await sign_in(web, await add_staff(db, shop, "cashier"), STAFF_PASSWORD)
    page = await web.get("/customers/new")
    assert page.status_code == 200 and "credit_limit" not in page.text
    assert (await web.get("/suppliers")).status_code == 200
    assert (await web.get("/suppliers/new")).status_code == 403
    csrf = csrf_of(page.text)
    r = await web.post(
        "/customers/new", data={"csrf": csrf, "name": "Sneaky", "credit_limit": "1000"}
    )
    assert r.status_code == 403
    r = await web.post("/suppliers/new", data={"csrf": csrf, "name": "Sneaky supplier"})
    assert r.status_code == 403
    assert (await web.get(f"/customers/{shop.customer_id}/statement")).status_code == 403
    r = await web.post("/customers/new", data={"name": "No token", "form_token": "form-x"})
    assert r.status_code == 403


async def test_a_party_statement_pages_and_downloads(
    web: httpx.AsyncClient, db: Database, shop: Shop, client: httpx.AsyncClient
) -> None:
    import datetime as dt

    for _n in range(3):
        sale = await client.post(
            "/sales",
            headers=shop.headers,
            json={
                "user_id": shop.customer_id,
                "order_date": dt.date.today().isoformat(),
                "product_items": [{"xid": shop.xid("apple"), "quantity": 1, "unit_price": "4"}],
            },
        )
        assert sale.status_code == 200, sale.text
    await sign_in(web, await owner_email(db, shop), OWNER_PASSWORD)
    detail = await web.get(f"/customers/{shop.customer_id}")
    assert detail.text.count('href="/sales/') == 3  # three invoices still due
    statement = await web.get(f"/customers/{shop.customer_id}/statement")
    assert statement.status_code == 200 and "Opening balance" in statement.text
    assert 'id="closing">12.00' in statement.text
    csv_file = await web.get(f"/customers/{shop.customer_id}/statement?format=csv")
    assert csv_file.headers["content-type"].startswith("text/csv")
    assert "Closing balance" in csv_file.text
    bad = await web.get(f"/customers/{shop.customer_id}/statement?date_from=2024-13-01")
    assert bad.status_code == 422 and 'id="e-date_from"' in bad.text


# --- stock ----------------------------------------------------------------------------


async def test_stock_levels_and_an_adjustment_recorded_once(
    web: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    await sign_in(web, await owner_email(db, shop), OWNER_PASSWORD)
    levels = await web.get("/stock?q=")
    assert levels.status_code == 200 and "Reorder level" in levels.text
    assert (await web.get("/stock?low=1")).status_code == 200
    apple = shop.products["apple"]
    page = await web.get(f"/stock/products/{apple}")
    assert page.status_code == 200 and "Batches" in page.text and "Movements" in page.text
    form = {
        "csrf": csrf_of(page.text),
        "form_token": form_token_of(page.text),
        "warehouse_id": str(shop.warehouse_id),
        "adjustment_type": "subtract",
        "quantity": "abc",
        "notes": "dropped",
    }
    bad = await web.post(f"/stock/products/{apple}/adjust", data=form)
    assert bad.status_code == 422 and 'id="e-quantity"' in bad.text
    form["quantity"] = "2"
    before = await _audits(db, shop.company_id, "stock_adjustment")
    first = await web.post(f"/stock/products/{apple}/adjust", data=form)
    assert first.status_code == 303, first.text
    again = await web.post(f"/stock/products/{apple}/adjust", data=form)
    assert again.headers["location"] == first.headers["location"]
    assert await _audits(db, shop.company_id, "stock_adjustment") == before + 1
    shown = await web.get(first.headers["location"])
    assert f'id="stock-{shop.warehouse_id}">18<' in shown.text  # 20 opening - 2
    assert "adjustment" in shown.text
    assert await _count(db, StockAdjustment, shop.company_id) == 1


async def test_a_scoped_manager_adjusts_stock_in_their_branch_only(
    web: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    await sign_in(web, await add_staff(db, shop, "manager", shop.warehouse_id), STAFF_PASSWORD)
    apple = shop.products["apple"]
    page = await web.get(f"/stock/products/{apple}")
    assert page.status_code == 200
    r = await web.post(
        f"/stock/products/{apple}/adjust",
        data={
            "csrf": csrf_of(page.text),
            "warehouse_id": str(shop.other_warehouse_id),
            "adjustment_type": "add",
            "quantity": "1",
        },
    )
    assert r.status_code == 403
    accountant = httpx.AsyncClient(transport=web._transport, base_url="http://testserver")
    async with accountant:
        await sign_in(accountant, await add_staff(db, shop, "accountant"), STAFF_PASSWORD)
        seen = await accountant.get(f"/stock/products/{apple}")
        assert seen.status_code == 200 and "Record an adjustment" not in seen.text
        r = await accountant.post(
            f"/stock/products/{apple}/adjust",
            data={"csrf": csrf_of(seen.text), "warehouse_id": str(shop.warehouse_id)},
        )
        assert r.status_code == 403
    assert await _count(db, StockAdjustment, shop.company_id) == 0


# --- reports ----------------------------------------------------------------------------


async def test_the_reports_render_and_download(
    web: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    await sign_in(web, await owner_email(db, shop), OWNER_PASSWORD)
    for report, words in (
        ("balance-sheet", "Total liabilities and equity"),
        ("stock-valuation", "Stock at cost"),
        ("profit-loss", "Net profit by month"),
        ("trial-balance", "Total"),
    ):
        r = await web.get(f"/reports?report={report}")
        assert r.status_code == 200 and words in r.text, report
        csv_file = await web.get(f"/reports?report={report}&format=csv")
        assert csv_file.headers["content-type"].startswith("text/csv"), report
    ledger = await web.get("/reports/ledger?account=11700")
    assert ledger.status_code == 200 and "Opening balance" in ledger.text
    assert "Opening stock" in ledger.text
    csv_file = await web.get("/reports/ledger?account=11700&format=csv")
    assert "Closing balance" in csv_file.text
    bad = await web.get("/reports/ledger?account=11700&date_to=yesterday")
    assert bad.status_code == 422 and 'id="e-date_to"' in bad.text


async def test_closing_the_books_once_and_who_may(
    web: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    import datetime as dt

    await sign_in(web, await add_staff(db, shop, "accountant"), STAFF_PASSWORD)
    page = await web.get("/reports/periods")
    assert page.status_code == 200 and "Close the books" in page.text
    assert "Reopen" not in page.text  # an owner's decision
    through = (dt.date.today() - dt.timedelta(days=1)).isoformat()
    form = {"csrf": csrf_of(page.text), "form_token": form_token_of(page.text)}
    bad = await web.post("/reports/periods/close", data={**form, "through": "soon"})
    assert bad.status_code == 422 and 'id="e-through"' in bad.text
    first = await web.post("/reports/periods/close", data={**form, "through": through})
    assert first.status_code == 303, first.text
    again = await web.post("/reports/periods/close", data={**form, "through": through})
    assert again.status_code == 303
    closes = await db.read(
        lambda s: s.scalar(
            select(func.count())
            .select_from(AuditEvent)
            .where(AuditEvent.company_id == shop.company_id, AuditEvent.action == "period.close")
        )
    )
    assert closes == 1
    shown = await web.get("/reports/periods")
    assert f'id="closed-through">{through}<' in shown.text
    other = await web.post(
        "/reports/periods/close",
        data={"csrf": csrf_of(shown.text), "form_token": "form-2", "through": through},
    )
    assert other.status_code == 409 and "already closed" in other.text
    r = await web.post("/reports/periods/reopen", data={"csrf": csrf_of(shown.text)})
    assert r.status_code == 403


# --- listings after creation ------------------------------------------------------------


async def test_a_listing_edit_once_a_stale_edit_refused_and_price_history(
    web: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    await sign_in(web, await owner_email(db, shop), OWNER_PASSWORD)
    apple, wh = shop.products["apple"], shop.warehouse_id
    page = await web.get(f"/products/{apple}")
    assert page.status_code == 200
    tokens = re.findall(r'name="form_token" value="([^"]+)"', page.text)
    assert len(tokens) == len(set(tokens)) > 1  # one token per form
    version = re.search(
        rf'action="/products/{apple}/listings/{wh}">.*?name="version" value="(\d+)"', page.text
    )
    assert version is not None
    form = {
        "csrf": csrf_of(page.text),
        "form_token": "form-listing-1",
        "version": version.group(1),
        "sales_price": "x",
        "purchase_price": "1.00",
        "reorder_level": "3",
        "active": "1",
    }
    bad = await web.post(f"/products/{apple}/listings/{wh}", data=form)
    assert bad.status_code == 422 and f'id="e-{wh}-sales_price"' in bad.text
    form["sales_price"] = "9.99"
    before = await _audits(db, shop.company_id, "listing")
    first = await web.post(f"/products/{apple}/listings/{wh}", data=form)
    assert first.status_code == 303, first.text
    again = await web.post(f"/products/{apple}/listings/{wh}", data=form)
    assert again.status_code == 303
    assert await _audits(db, shop.company_id, "listing") == before + 1
    stale = await web.post(
        f"/products/{apple}/listings/{wh}",
        data={**form, "form_token": "form-listing-2", "sales_price": "1.00"},
    )
    assert stale.status_code == 412 and "Someone else changed this listing" in stale.text
    shown = await web.get(f"/products/{apple}")
    assert "Price changes" in shown.text and "9.99" in shown.text


async def test_a_product_listed_in_another_branch(
    web: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    await sign_in(web, await owner_email(db, shop), OWNER_PASSWORD)
    tea = shop.products["tea"]
    page = await web.get(f"/products/{tea}")
    listed = re.findall(r'id="listing-(\d+)"', page.text)
    other = next(w for w in (shop.warehouse_id, shop.other_warehouse_id) if str(w) not in listed)
    form = {
        "csrf": csrf_of(page.text),
        "form_token": "form-add-1",
        "warehouse_id": str(other),
        "sales_price": "3.00",
        "purchase_price": "",
    }
    bad = await web.post(f"/products/{tea}/listings", data=form)
    assert bad.status_code == 422 and 'id="e-purchase_price"' in bad.text
    form.update({"purchase_price": "2.00", "opening_stock.quantity": "4"})
    form["opening_stock.unit_cost"] = "2.00"
    done = await web.post(f"/products/{tea}/listings", data=form)
    assert done.status_code == 303, done.text
    shown = await web.get(f"/products/{tea}")
    assert f'id="listing-{other}"' in shown.text


async def test_returns_lists_and_who_may_read_them(
    web: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    await sign_in(web, await owner_email(db, shop), OWNER_PASSWORD)
    for path in ("/sales-returns", "/purchase-returns"):
        r = await web.get(path)
        assert r.status_code == 200 and "Sales returns" in r.text, path
    await web.post("/logout", data={"csrf": csrf_of(r.text)})
    await sign_in(web, await add_staff(db, shop, "cashier"), STAFF_PASSWORD)
    assert (await web.get("/sales-returns")).status_code == 403
    assert (await web.get("/stock")).status_code == 200
    assert (await web.get("/reports/ledger?account=11700")).status_code == 403
    assert (await web.get("/reports/periods")).status_code == 403


async def test_the_dashboard_shows_top_products_and_what_is_due(
    web: httpx.AsyncClient, db: Database, shop: Shop, client: httpx.AsyncClient
) -> None:
    import datetime as dt

    for item, quantity in (("apple", 3), ("water", 1)):
        sale = await client.post(
            "/sales",
            headers=shop.headers,
            json={
                "user_id": shop.customer_id,
                "order_date": dt.date.today().isoformat(),
                "product_items": [{"xid": shop.xid(item), "quantity": quantity, "unit_price": "4"}],
            },
        )
        assert sale.status_code == 200, sale.text
    await sign_in(web, await owner_email(db, shop), OWNER_PASSWORD)
    page = await web.get("/")
    assert page.status_code == 200, page.text
    top = page.text.split("Top products")[1].split("</section>")[0]
    assert top.index("Apple juice") < top.index("Still water")  # 12.00 before 4.00
    due = page.text.split("<h2>Due</h2>")[1].split("</section>")[0]
    assert "16.00" in due  # two credit sales, nothing paid


# --- settings: staff, API keys, webhooks ------------------------------------------------


async def _owner_page(web: httpx.AsyncClient, db: Database, shop: Shop, path: str) -> str:
    await sign_in(web, await owner_email(db, shop), OWNER_PASSWORD)
    page = await web.get(path)
    assert page.status_code == 200, page.text
    return page.text


def _tokens(html: str) -> dict[str, str]:
    return {"csrf": csrf_of(html), "form_token": form_token_of(html)}


async def test_staff_created_once_edited_stale_refused_and_archived(
    web: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    page = await _owner_page(web, db, shop, "/settings/staff")
    assert "New staff member" in page
    form = {
        **_tokens(page),
        "name": "Bea Branch",
        "email": "not an email",
        "role": "manager",
        "warehouse_id": str(shop.warehouse_id),
        "password": "short",
    }
    bad = await web.post("/settings/staff", data=form)
    assert bad.status_code == 422 and 'id="e-email"' in bad.text
    assert 'value="Bea Branch"' in bad.text and "short" not in bad.text  # no password echoed
    form["email"] = f"bea-{shop.company_id}@example.com"
    bad = await web.post("/settings/staff", data=form)
    assert bad.status_code == 422 and 'id="e-password"' in bad.text
    form["password"] = "a long enough password"
    before = await _audits(db, shop.company_id, "staff")
    first = await web.post("/settings/staff", data=form)
    assert first.status_code == 303, first.text
    again = await web.post("/settings/staff", data=form)
    assert again.headers["location"] == first.headers["location"]
    assert await _audits(db, shop.company_id, "staff") == before + 1
    taken = await web.post(
        "/settings/staff", data={**form, "form_token": "form-twin", "name": "Twin"}
    )
    assert taken.status_code == 409 and 'id="e-email"' in taken.text

    member = await web.get(first.headers["location"])
    assert member.status_code == 200 and "Bea Branch" in member.text
    sid = first.headers["location"].split("/settings/staff/")[1].split("?")[0]
    version = re.search(r'name="version" value="(\d+)"', member.text)
    assert version is not None
    edit = {
        **_tokens(member.text),
        "version": version.group(1),
        "name": "Bea Boss",
        "email": form["email"],
        "role": "accountant",
        "warehouse_id": "",
    }
    saved = await web.post(f"/settings/staff/{sid}/edit", data=edit)
    assert saved.status_code == 303, saved.text
    stale = await web.post(
        f"/settings/staff/{sid}/edit", data={**edit, "form_token": "form-old", "name": "Lost"}
    )
    assert stale.status_code == 412 and "Someone else changed" in stale.text
    shown = await web.get(f"/settings/staff/{sid}")
    assert "Bea Boss" in shown.text and "Lost" not in shown.text
    scoped_owner = await web.post(
        f"/settings/staff/{sid}/edit",
        data={
            **edit,
            **_tokens(shown.text),
            "version": str(int(edit["version"]) + 1),
            "role": "owner",
            "warehouse_id": str(shop.warehouse_id),
        },
    )
    assert scoped_owner.status_code == 422 and 'id="e-warehouse_id"' in scoped_owner.text

    confirm = await web.get(f"/settings/staff/{sid}/archive")
    assert confirm.status_code == 200 and "Archive Bea Boss?" in confirm.text
    done = await web.post(f"/settings/staff/{sid}/archive", data=_tokens(confirm.text))
    assert done.status_code == 303
    assert "(archived)" in (await web.get(f"/settings/staff/{sid}")).text
    assert await _audits(db, shop.company_id, "staff") == before + 3
    assert (await sign_in(web, form["email"], form["password"])).status_code == 401


async def test_the_last_owner_cannot_be_archived_nor_demoted_from_the_page(
    web: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    listed = await _owner_page(web, db, shop, "/settings/staff")
    owner_id = re.search(r'href="/settings/staff/(\d+)">', listed)
    assert owner_id is not None
    sid = owner_id.group(1)
    confirm = await web.get(f"/settings/staff/{sid}/archive")
    refused = await web.post(f"/settings/staff/{sid}/archive", data=_tokens(confirm.text))
    assert refused.status_code == 422 and "last active owner" in refused.text
    member = await web.get(f"/settings/staff/{sid}")
    version = re.search(r'name="version" value="(\d+)"', member.text)
    assert version is not None
    email = await owner_email(db, shop)
    demoted = await web.post(
        f"/settings/staff/{sid}/edit",
        data={
            **_tokens(member.text),
            "version": version.group(1),
            "name": "Owner",
            "email": email,
            "role": "manager",
            "warehouse_id": "",
        },
    )
    assert demoted.status_code == 422 and "last active owner" in demoted.text
    assert (await web.get("/settings/staff")).status_code == 200  # still signed in, still owner


@pytest.mark.parametrize("role", ["cashier", "accountant", "manager"])
async def test_settings_pages_are_refused_to_other_roles(
    web: httpx.AsyncClient, db: Database, shop: Shop, role: str
) -> None:
    email = await add_staff(db, shop, role)
    await sign_in(web, email, STAFF_PASSWORD)
    landing = await web.get("/", follow_redirects=True)
    csrf = csrf_of(landing.text)
    key_id = await db.read(
        lambda s: s.scalar(select(ApiKey.id).where(ApiKey.company_id == shop.company_id))
    )
    for path in (
        "/settings/staff",
        "/settings/staff/1",
        "/settings/staff/1/archive",
        f"/settings/keys/{key_id}/reveal",
        f"/settings/keys/{key_id}/revoke",
        "/settings/webhooks",
        "/settings/webhooks/1",
        "/settings/webhooks/1/rotate",
        "/settings/webhooks/deliveries/1",
    ):
        r = await web.get(path)
        assert r.status_code == 403, (path, r.status_code)
        assert "lacks the permission" in r.text
    for path, data in (
        ("/settings/staff", {"name": "x", "email": "x@example.com", "role": "owner"}),
        (f"/settings/keys/{key_id}/revoke", {}),
        (f"/settings/keys/{key_id}/reveal", {"password": STAFF_PASSWORD}),
        ("/settings/webhooks", {"url": "http://127.0.0.1:9/x"}),
    ):
        r = await web.post(path, data={"csrf": csrf, **data})
        assert r.status_code == 403, path
    assert await _count(db, Webhook, shop.company_id) == 0
    revoked = await db.read(lambda s: s.get(ApiKey, key_id))
    assert revoked is not None and revoked.status == 1


async def test_a_key_revealed_with_the_password_only_and_revoked_once(
    web: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    keys = await _owner_page(web, db, shop, "/settings/keys")
    key_id = await db.read(
        lambda s: s.scalar(
            select(ApiKey.id).where(ApiKey.company_id == shop.company_id).order_by(ApiKey.id)
        )
    )
    assert f"/settings/keys/{key_id}/reveal" in keys and "/rotate" in keys
    form = await web.get(f"/settings/keys/{key_id}/reveal")
    assert form.status_code == 200 and "sk_" not in form.text
    wrong = await web.post(
        f"/settings/keys/{key_id}/reveal",
        data={"csrf": csrf_of(form.text), "password": "not the password"},
    )
    assert wrong.status_code == 403 and 'id="e-password"' in wrong.text and "sk_" not in wrong.text
    await add_staff(db, shop, "owner")  # a fellow owner's password is not the signed-in one's
    fellows = await web.post(
        f"/settings/keys/{key_id}/reveal",
        data={"csrf": csrf_of(form.text), "password": STAFF_PASSWORD},
    )
    assert fellows.status_code == 403 and "sk_" not in fellows.text
    no_csrf = await web.post(f"/settings/keys/{key_id}/reveal", data={"password": OWNER_PASSWORD})
    assert no_csrf.status_code == 403 and "sk_" not in no_csrf.text
    shown = await web.post(
        f"/settings/keys/{key_id}/reveal",
        data={"csrf": csrf_of(form.text), "password": OWNER_PASSWORD},
    )
    assert shown.status_code == 200 and 'id="secret-key">sk_' in shown.text
    assert await _audits(db, shop.company_id, "api_key") == 1  # the showing, not the secret

    confirm = await web.get(f"/settings/keys/{key_id}/revoke")
    assert confirm.status_code == 200 and "Revoke the key" in confirm.text
    done = await web.post(f"/settings/keys/{key_id}/revoke", data=_tokens(confirm.text))
    assert done.status_code == 303
    again = await web.post(f"/settings/keys/{key_id}/revoke", data=_tokens(confirm.text))
    assert again.status_code == 303
    key = await db.read(lambda s: s.get(ApiKey, key_id))
    assert key is not None and key.status == 0
    assert await _audits(db, shop.company_id, "api_key") == 2
    assert (await web.get(f"/settings/keys/{key_id + 10_000}/revoke")).status_code == 404


async def test_a_webhook_added_once_its_secret_shown_once_rotated_and_disabled(
    web: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    page = await _owner_page(web, db, shop, "/settings/webhooks")
    form = {**_tokens(page), "url": "ftp://127.0.0.1/x", "events": "order.created"}
    bad = await web.post("/settings/webhooks", data=form)
    assert bad.status_code == 422 and 'id="f-url"' in bad.text and 'class="error"' in bad.text
    assert await _count(db, Webhook, shop.company_id) == 0
    no_csrf = await web.post(
        "/settings/webhooks", data={**form, "csrf": "", "url": "http://127.0.0.1:9/h"}
    )
    assert no_csrf.status_code == 403
    form["url"] = "http://127.0.0.1:9/hook"
    first = await web.post("/settings/webhooks", data=form)
    assert first.status_code == 200 and 'id="webhook-secret">whsec_' in first.text
    again = await web.post("/settings/webhooks", data=form)
    assert "whsec_" not in again.text and "already created" in again.text
    assert await _count(db, Webhook, shop.company_id) == 1
    listed = await web.get("/settings/webhooks")
    assert "127.0.0.1:9/hook" in listed.text and "whsec_" not in listed.text
    hook_id = await db.read(
        lambda s: s.scalar(select(Webhook.id).where(Webhook.company_id == shop.company_id))
    )

    confirm = await web.get(f"/settings/webhooks/{hook_id}/rotate")
    assert confirm.status_code == 200
    rotated = await web.post(f"/settings/webhooks/{hook_id}/rotate", data=_tokens(confirm.text))
    assert rotated.status_code == 200 and 'id="webhook-secret">whsec_' in rotated.text
    secret = re.search(r'id="webhook-secret">(whsec_[^<]+)<', rotated.text)
    first_secret = re.search(r'id="webhook-secret">(whsec_[^<]+)<', first.text)
    assert secret and first_secret and secret.group(1) != first_secret.group(1)
    replay = await web.post(f"/settings/webhooks/{hook_id}/rotate", data=_tokens(confirm.text))
    assert "whsec_" not in replay.text and "already rotated" in replay.text

    detail = await web.get(f"/settings/webhooks/{hook_id}")
    assert detail.status_code == 200 and "No deliveries" in detail.text
    off = await web.post(f"/settings/webhooks/{hook_id}/disable", data=_tokens(detail.text))
    assert off.status_code == 303
    hook = await db.read(lambda s: s.get(Webhook, hook_id))
    assert hook is not None and hook.active is False
    assert "Enable" in (await web.get(f"/settings/webhooks/{hook_id}")).text
    # created, rotated, disabled: each once
    assert await _audits(db, shop.company_id, "webhook") == 3


async def test_the_delivery_log_shows_each_attempt_and_redelivers_once(
    web: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    from tillbook.events import webhook_service
    from tillbook.kit import crypto
    from tillbook.models import DeliveryAttempt, OutboxEvent, WebhookDelivery

    now = dt.datetime.now(dt.UTC)

    async def seed(s: AsyncSession) -> int:
        hook, _secret = await webhook_service.add_webhook(
            s, shop.company_id, webhook_service.NewWebhook(url="http://127.0.0.1:9/log", events="*")
        )
        event = OutboxEvent(
            event_id="evt_" + crypto.random_token("", 8),
            company_id=shop.company_id,
            warehouse_id=shop.warehouse_id,
            type="order.created",
            payload="{}",
            dispatched=True,  # fanned out already: its delivery is the one below
        )
        s.add(event)
        await s.flush()
        delivery = WebhookDelivery(
            company_id=shop.company_id,
            event_id=event.id,
            webhook_id=hook.id,
            delivery_uid="dlv_test",
            status="dead",
            attempts=2,
            next_attempt_at=now,
            last_status_code=500,
            last_error="server error",
        )
        s.add(delivery)
        await s.flush()
        for code, error in ((None, "connection refused"), (500, "server error")):
            s.add(
                DeliveryAttempt(
                    company_id=delivery.company_id,
                    delivery_id=delivery.id,
                    attempted_at=now,
                    status_code=code,
                    latency_ms=12.5,
                    error=error,
                )
            )
        return int(delivery.id)

    did = await db.write(seed)
    hook_page = await _owner_page(web, db, shop, "/settings/webhooks")
    hook_id = re.search(r'href="/settings/webhooks/(\d+)"', hook_page)
    assert hook_id is not None
    log = await web.get(f"/settings/webhooks/{hook_id.group(1)}?status=dead")
    assert f"/settings/webhooks/deliveries/{did}" in log.text and "order.created" in log.text
    assert (
        "No deliveries"
        in (await web.get(f"/settings/webhooks/{hook_id.group(1)}?status=delivered")).text
    )
    bad = await web.get(f"/settings/webhooks/{hook_id.group(1)}?status=nonsense")
    assert bad.status_code == 422 and 'id="e-status"' in bad.text
    page = await web.get(f"/settings/webhooks/deliveries/{did}")
    assert page.status_code == 200
    assert "connection refused" in page.text and "server error" in page.text
    again = await web.post(
        f"/settings/webhooks/deliveries/{did}/redeliver", data=_tokens(page.text)
    )
    assert again.status_code == 303
    await web.post(f"/settings/webhooks/deliveries/{did}/redeliver", data=_tokens(page.text))
    delivery = await db.read(lambda s: s.get(WebhookDelivery, did))
    assert delivery is not None and delivery.status == "pending" and delivery.attempts == 0
    assert await _audits(db, shop.company_id, "webhook_delivery") == 1
    other = await make_shop(db)
    await sign_in(web, await owner_email(db, other), OWNER_PASSWORD)
    assert (await web.get(f"/settings/webhooks/deliveries/{did}")).status_code == 404


# --- settings: payment modes, expense categories, branches, the category tree ----------


async def test_payment_modes_and_expense_categories_created_once(
    web: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    from tillbook.models import ExpenseCategory, PaymentMode

    page = await _owner_page(web, db, shop, "/settings/payment-modes")
    assert "<code>cash</code>" in page
    form = {**_tokens(page), "code": "Bad Code", "name": "Mobile money", "create_account": "1"}
    bad = await web.post("/settings/payment-modes", data=form)
    assert bad.status_code == 422 and 'id="e-code"' in bad.text
    assert 'value="Mobile money"' in bad.text
    before = await _count(db, PaymentMode, shop.company_id)
    form["code"] = "mobile"
    first = await web.post("/settings/payment-modes", data=form)
    assert first.status_code == 303, first.text
    again = await web.post("/settings/payment-modes", data=form)
    assert again.status_code == 303
    assert await _count(db, PaymentMode, shop.company_id) == before + 1
    assert await _audits(db, shop.company_id, "payment_mode") == 1
    twin = await web.post(
        "/settings/payment-modes", data={**form, "form_token": "form-twin", "name": "Other"}
    )
    assert twin.status_code == 422 and 'id="e-code"' in twin.text and "already exists" in twin.text
    assert "Mobile money" in (await web.get("/settings/payment-modes")).text

    cats = await web.get("/settings/expense-categories")
    assert cats.status_code == 200 and "General Expenses" in cats.text
    neither = {**_tokens(cats.text), "name": "Rent"}
    refused = await web.post("/settings/expense-categories", data=neither)
    assert refused.status_code == 422 and 'id="e-account_code"' in refused.text
    made = {**neither, "create_account": "1"}
    assert (await web.post("/settings/expense-categories", data=made)).status_code == 303
    assert (await web.post("/settings/expense-categories", data=made)).status_code == 303
    rents = await db.read(
        lambda s: s.scalar(
            select(func.count())
            .select_from(ExpenseCategory)
            .where(ExpenseCategory.company_id == shop.company_id, ExpenseCategory.name == "Rent")
        )
    )
    assert rents == 1
    no_csrf = await web.post(
        "/settings/expense-categories", data={**made, "csrf": "", "name": "Sneaky"}
    )
    assert no_csrf.status_code == 403


async def test_a_branch_edited_once_and_a_stale_edit_refused(
    web: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    from tillbook.models import Warehouse

    listed = await _owner_page(web, db, shop, "/settings/branches")
    wh = shop.warehouse_id
    assert f"/settings/branches/{wh}" in listed
    page = await web.get(f"/settings/branches/{wh}")
    version = re.search(r'name="version" value="(\d+)"', page.text)
    assert version is not None
    name = re.search(r'id="f-name" name="name" type="text" value="([^"]*)"', page.text)
    assert name is not None
    form = {
        **_tokens(page.text),
        "version": version.group(1),
        "name": name.group(1),
        "address": "1 High Street",
        "receipt_header": "Thank you\r\nfor shopping",
        "receipt_footer": "x" * 5000,
        "allow_negative_stock": "1",
    }
    bad = await web.post(f"/settings/branches/{wh}/edit", data=form)
    assert bad.status_code == 422 and 'id="e-receipt_footer"' in bad.text
    form["receipt_footer"] = "See you soon"
    first = await web.post(f"/settings/branches/{wh}/edit", data=form)
    assert first.status_code == 303, first.text
    again = await web.post(f"/settings/branches/{wh}/edit", data=form)
    assert again.status_code == 303
    stored = await db.read(lambda s: s.get(Warehouse, wh))
    assert stored is not None
    assert stored.receipt_header == "Thank you\nfor shopping" and stored.allow_negative_stock
    assert stored.require_shift is False and stored.version == int(version.group(1)) + 1
    assert await _audits(db, shop.company_id, "warehouse") == 1
    stale = await web.post(
        f"/settings/branches/{wh}/edit", data={**form, "form_token": "form-b2", "address": "Lost"}
    )
    assert stale.status_code == 412 and "Someone else changed this branch" in stale.text
    assert "1 High Street" in stale.text


async def test_a_payment_mode_renamed_stale_refused_and_archived(
    web: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    from tillbook.models import ExpenseCategory, PaymentMode

    await _owner_page(web, db, shop, "/settings/payment-modes")
    card = await db.read(lambda s: s.get(PaymentMode, shop.card_mode_id))
    assert card is not None
    listed = await web.get("/settings/payment-modes")
    assert f'href="/settings/payment-modes/{card.id}"' in listed.text
    page = await web.get(f"/settings/payment-modes/{card.id}")
    assert page.status_code == 200 and "<code>card</code>" in page.text
    version = re.search(r'name="version" value="(\d+)"', page.text)
    assert version is not None
    form = {**_tokens(page.text), "version": version.group(1), "name": "", "account_code": ""}
    bad = await web.post(f"/settings/payment-modes/{card.id}/edit", data=form)
    assert bad.status_code == 422 and 'id="e-name"' in bad.text
    form["name"] = "Card terminal"
    done = await web.post(f"/settings/payment-modes/{card.id}/edit", data=form)
    assert done.status_code == 303, done.text
    modes = await web.get("/api/v1/public/payment-modes", headers=shop.headers)
    assert "Card terminal" in modes.text  # the tills see the new name
    stale = await web.post(
        f"/settings/payment-modes/{card.id}/edit",
        data={**form, "form_token": "mode-2", "name": "Lost"},
    )
    assert stale.status_code == 412 and "Someone else changed this payment mode" in stale.text
    confirm = await web.get(f"/settings/payment-modes/{card.id}/archive")
    assert confirm.status_code == 200 and "Archive the payment mode" in confirm.text
    current = re.search(r'name="version" value="(\d+)"', confirm.text)
    assert current is not None
    archive = {**_tokens(confirm.text), "version": current.group(1)}
    archived = await web.post(f"/settings/payment-modes/{card.id}/archive", data=archive)
    assert archived.status_code == 303, archived.text
    stored = await db.read(lambda s: s.get(PaymentMode, shop.card_mode_id))
    assert stored is not None and stored.archived_at is not None and stored.name == "Card terminal"
    assert (
        "Card terminal"
        not in (await web.get("/api/v1/public/payment-modes", headers=shop.headers)).text
    )
    assert await _audits(db, shop.company_id, "payment_mode") == 2

    async def general(s: AsyncSession) -> ExpenseCategory:
        found = await s.scalar(
            select(ExpenseCategory).where(ExpenseCategory.company_id == shop.company_id)
        )
        assert found is not None
        return found

    cat = await db.read(general)
    page = await web.get(f"/settings/expense-categories/{cat.id}")
    assert page.status_code == 200
    version = re.search(r'name="version" value="(\d+)"', page.text)
    assert version is not None
    form = {
        **_tokens(page.text),
        "version": version.group(1),
        "name": "Shop running costs",
        "account_code": "11100",  # not an expense account
    }
    bad = await web.post(f"/settings/expense-categories/{cat.id}/edit", data=form)
    assert bad.status_code == 422 and 'id="e-account_code"' in bad.text
    form["account_code"] = ""
    renamed = await web.post(f"/settings/expense-categories/{cat.id}/edit", data=form)
    assert renamed.status_code == 303, renamed.text
    assert (await db.read(general)).name == "Shop running costs"
    other = await make_shop(db)
    assert (await web.get(f"/settings/payment-modes/{other.card_mode_id}")).status_code == 404


async def test_an_owner_adds_a_branch_once_with_its_errors_beside_the_fields(
    web: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    from tillbook.models import Warehouse

    listed = await _owner_page(web, db, shop, "/settings/branches")
    assert "New branch" in listed
    page = await web.get("/settings/branches")
    taken = await db.read(lambda s: s.get(Warehouse, shop.warehouse_id))
    assert taken is not None
    form = {**_tokens(page.text), "name": taken.name, "timezone": "Mars/Olympus"}
    bad = await web.post("/settings/branches", data=form)
    assert bad.status_code == 422 and 'id="e-timezone"' in bad.text
    assert "Mars/Olympus" in bad.text  # what was typed stays in the form
    form.update(timezone="UTC", form_token="branch-2")
    bad = await web.post("/settings/branches", data=form)
    assert bad.status_code == 422 and 'id="e-name"' in bad.text and "already exists" in bad.text
    form.update(name="Riverside", timezone="Europe/Paris", address="2 Quay", require_shift="1")
    first = await web.post("/settings/branches", data=form)
    assert first.status_code == 303, first.text
    again = await web.post("/settings/branches", data=form)
    assert again.status_code == 303 and again.headers["location"] == first.headers["location"]
    branch = await web.get(first.headers["location"])
    assert branch.status_code == 200 and "Riverside" in branch.text and "Saved." in branch.text

    async def riverside(s: AsyncSession) -> list[Warehouse]:
        rows = await s.execute(
            select(Warehouse).where(
                Warehouse.company_id == shop.company_id, Warehouse.name == "Riverside"
            )
        )
        return list(rows.scalars())

    stored = await db.read(riverside)
    assert len(stored) == 1
    assert stored[0].timezone == "Europe/Paris" and stored[0].require_shift
    assert stored[0].address == "2 Quay" and not stored[0].allow_negative_stock
    assert await _audits(db, shop.company_id, "warehouse") == 1


@pytest.mark.parametrize("role", ["cashier", "accountant", "manager"])
async def test_company_settings_are_the_owners(
    web: httpx.AsyncClient, db: Database, shop: Shop, role: str
) -> None:
    key_id = await db.read(
        lambda s: s.scalar(select(ApiKey.id).where(ApiKey.public_key == shop.key.public_key))
    )
    email = await add_staff(db, shop, role)
    await sign_in(web, email, STAFF_PASSWORD)
    landing = await web.get("/", follow_redirects=True)
    assert "/settings/branches" not in landing.text
    for path in (
        "/settings/payment-modes",
        "/settings/expense-categories",
        "/settings/branches",
        f"/settings/branches/{shop.warehouse_id}",
        f"/settings/payment-modes/{shop.card_mode_id}",
        f"/settings/payment-modes/{shop.card_mode_id}/archive",
        f"/settings/keys/{key_id}/rotate",
        f"/settings/keys/{key_id}/reveal",
        "/settings/company",
    ):
        assert (await web.get(path)).status_code == 403, path
    csrf = csrf_of(landing.text)
    for path, data in (
        ("/settings/payment-modes", {"code": "x", "name": "X", "create_account": "1"}),
        ("/settings/expense-categories", {"name": "X", "create_account": "1"}),
        (f"/settings/branches/{shop.warehouse_id}/edit", {"name": "X", "version": "1"}),
        ("/settings/branches", {"name": "Sneaky branch"}),
        (f"/settings/payment-modes/{shop.card_mode_id}/edit", {"name": "X", "version": "1"}),
        (f"/settings/payment-modes/{shop.card_mode_id}/archive", {"version": "1"}),
        (f"/settings/keys/{key_id}/rotate", {}),
        (f"/settings/keys/{key_id}/rotate", {"grace": "7d"}),
        (f"/settings/keys/{key_id}/revoke", {}),
        ("/settings/company", {"money_format": "1.234,56"}),
    ):
        assert (await web.post(path, data={"csrf": csrf, **data})).status_code == 403, path
    assert await _audits(db, shop.company_id, "payment_mode") == 0
    assert await _audits(db, shop.company_id, "warehouse") == 0
    assert await _audits(db, shop.company_id, "api_key") == 0
    # the key still answers with its own secret: not rotated, not revoked
    assert (await web.get("/api/v1/public/products", headers=shop.headers)).status_code == 200
    assert await _audits(db, shop.company_id, "company") == 0


async def test_categories_are_shown_as_a_tree(
    web: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    page = await _owner_page(web, db, shop, "/reference")
    token = csrf_of(page)
    made = await web.post(
        "/reference/category", data={"csrf": token, "form_token": "form-c1", "name": "Teas"}
    )
    assert made.status_code == 303, made.text
    page = await web.get("/reference")
    parent = re.search(r'<option value="(\d+)">Teas</option>', page.text)
    assert parent is not None
    child = await web.post(
        "/reference/category",
        data={
            "csrf": token,
            "form_token": "form-c2",
            "name": "Green tea",
            "parent_id": parent.group(1),
        },
    )
    assert child.status_code == 303, child.text
    tree = (await web.get("/reference")).text
    assert re.search(r"<li>Teas<ul class=\"plain tree\"><li>Green tea</li></ul></li>", tree)


# --- payments and expenses --------------------------------------------------------------


async def test_payments_and_expenses_lists_and_who_may_read_them(
    web: httpx.AsyncClient, client: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    from tillbook.models import ExpenseCategory

    general = await db.read(
        lambda s: s.scalar(
            select(ExpenseCategory.id).where(
                ExpenseCategory.company_id == shop.company_id,
                ExpenseCategory.name == "General Expenses",
            )
        )
    )
    spent = await client.post(
        "/expenses",
        json={
            "expense_category_id": general,
            "amount": "1234.50",
            "date": "2026-11-20",
            "payment_mode_id": "cash",
            "reference": "RCPT-WEB-1",
        },
        headers=shop.headers,
    )
    assert spent.status_code == 200, spent.text
    paid = await client.post(
        "/payments",
        json={
            "user_id": shop.customer_id,
            "payment_type": "in",
            "amount": "20.00",
            "payment_mode_id": "cash",
            "reference": "PAY-WEB-1",
        },
        headers=shop.headers,
    )
    assert paid.status_code == 200, paid.text

    listed = await _owner_page(web, db, shop, "/payments")
    assert "PAY-WEB-1" in listed and "20.00" in listed and "received" in listed
    assert "PAY-WEB-1" not in (await web.get("/payments?reference=NOPE")).text
    assert "PAY-WEB-1" not in (await web.get("/payments?date_to=2000-01-01")).text
    bad = await web.get("/payments?date_from=yesterday")
    assert bad.status_code == 422 and 'id="e-date_from"' in bad.text
    expenses = await web.get("/expenses?reference=RCPT-WEB")
    assert expenses.status_code == 200
    assert "RCPT-WEB-1" in expenses.text and "1,234.50" in expenses.text
    assert "General Expenses" in expenses.text
    assert "RCPT-WEB-1" in (await web.get("/expenses?reference=General")).text
    assert "RCPT-WEB-1" not in (await web.get("/expenses?date_from=2026-11-21")).text

    accountant = await add_staff(db, shop, "accountant")
    await sign_in(web, accountant, STAFF_PASSWORD)
    assert (await web.get("/payments")).status_code == 200
    other_branch = await add_staff(db, shop, "accountant", shop.other_warehouse_id)
    await sign_in(web, other_branch, STAFF_PASSWORD)
    scoped = await web.get("/payments")
    assert scoped.status_code == 200 and "PAY-WEB-1" not in scoped.text
    cashier = await add_staff(db, shop, "cashier")
    await sign_in(web, cashier, STAFF_PASSWORD)
    for path in ("/payments", "/expenses"):
        r = await web.get(path)
        assert r.status_code == 403 and "lacks the permission" in r.text


async def test_wrong_passwords_to_reveal_a_key_are_throttled(
    web: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    await _owner_page(web, db, shop, "/settings/keys")
    key_id = await db.read(
        lambda s: s.scalar(select(ApiKey.id).where(ApiKey.company_id == shop.company_id))
    )
    form = await web.get(f"/settings/keys/{key_id}/reveal")
    path, csrf = f"/settings/keys/{key_id}/reveal", csrf_of(form.text)
    for _ in range(10):
        wrong = await web.post(path, data={"csrf": csrf, "password": "guess guess"})
        assert wrong.status_code == 403
    right = await web.post(path, data={"csrf": csrf, "password": OWNER_PASSWORD})
    assert right.status_code == 429 and "sk_" not in right.text
    assert "too many failed" in right.text and "retry-after" in right.headers


# --- a branch's day: transfers, voids, shifts -------------------------------------------


def _stock_cell(html: str, warehouse_id: int) -> str:
    found = re.search(rf'id="stock-{warehouse_id}">([^<]*)<', html)
    return found.group(1) if found else ""


async def test_a_transfer_sent_and_received_from_the_pages(
    web: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    from tests.invariants import check_books

    await sign_in(web, await owner_email(db, shop), OWNER_PASSWORD)
    apple, water = shop.products["apple"], shop.products["water"]
    listing = await web.get("/transfers")
    assert listing.status_code == 200 and "Send stock to another branch" in listing.text
    page = await web.get(f"/transfers/new?warehouse_id={shop.warehouse_id}")
    assert page.status_code == 200 and f'name="qty-{apple}"' in page.text
    form = {
        "csrf": csrf_of(page.text),
        "form_token": form_token_of(page.text),
        "warehouse_id": str(shop.warehouse_id),
        "to_warehouse_id": str(shop.other_warehouse_id),
        "notes": "weekend rush",
        f"qty-{apple}": "50",
        f"qty-{water}": "10",
    }
    too_many = await web.post("/transfers/new", data=form)
    assert too_many.status_code == 422, too_many.text
    assert f'id="e-qty-{apple}"' in too_many.text  # the service's message, by its row
    form[f"qty-{apple}"] = "5"
    sent = await web.post("/transfers/new", data=form)
    assert sent.status_code == 303, sent.text
    again = await web.post("/transfers/new", data=form)
    assert again.headers["location"] == sent.headers["location"]  # sent once
    where = sent.headers["location"]
    assert _stock_cell((await web.get(f"/stock/products/{apple}")).text, shop.warehouse_id) == "15"
    shown = await web.get(where)
    assert shown.status_code == 200 and 'id="transfer-status">dispatched<' in shown.text
    assert "Cancel the transfer" in shown.text and f'name="qty-{apple}"' in shown.text
    listed = await web.get(f"/transfers?warehouse_id={shop.other_warehouse_id}")
    assert where.rsplit("/", 1)[1] in listed.text and "In" in listed.text
    await check_books(db, shop.company_id)

    # the apples arrived in part, the water not at all: written off with the reason
    receive = {
        "csrf": csrf_of(shown.text),
        "form_token": form_token_of(shown.text),
        f"qty-{apple}": "4",
        f"qty-{water}": "",
        "reason": "a box fell off the van",
    }
    over = await web.post(f"{where}/receive", data={**receive, f"qty-{apple}": "9"})
    assert over.status_code == 422 and f'id="e-qty-{apple}"' in over.text
    got = await web.post(f"{where}/receive", data=receive)
    assert got.status_code == 303, got.text
    done = await web.get(where)
    assert 'id="transfer-status">received<' in done.text
    assert f'id="received-{apple}">4<' in done.text and f'id="received-{water}">0<' in done.text
    assert "Cancel the transfer" not in done.text
    product = await web.get(f"/stock/products/{apple}")
    assert _stock_cell(product.text, shop.other_warehouse_id) == "4"
    twice = await web.post(f"{where}/receive", data={**receive, "form_token": "form-another"})
    assert twice.status_code == 409  # the service's refusal: received once
    await check_books(db, shop.company_id)


async def test_a_transfer_cancelled_and_who_may_move_stock(
    web: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    from tests.invariants import check_books

    apple = shop.products["apple"]
    await sign_in(web, await add_staff(db, shop, "manager", shop.warehouse_id), STAFF_PASSWORD)
    page = await web.get("/transfers/new")
    assert page.status_code == 200
    sent = await web.post(
        "/transfers/new",
        data={
            "csrf": csrf_of(page.text),
            "form_token": form_token_of(page.text),
            "warehouse_id": str(shop.warehouse_id),
            "to_warehouse_id": str(shop.other_warehouse_id),
            f"qty-{apple}": "3",
        },
    )
    assert sent.status_code == 303, sent.text
    where = sent.headers["location"]
    shown = await web.get(where)
    # the manager of the sending branch may call it back, not receive it
    assert "Cancel the transfer" in shown.text and f'name="qty-{apple}"' not in shown.text
    refused = await web.post(f"{where}/receive", data={"csrf": csrf_of(shown.text)})
    assert refused.status_code == 403
    from_other = await web.post(
        "/transfers/new",
        data={
            "csrf": csrf_of(shown.text),
            "warehouse_id": str(shop.other_warehouse_id),
            "to_warehouse_id": str(shop.warehouse_id),
            f"qty-{apple}": "1",
        },
    )
    assert from_other.status_code == 403
    no_csrf = await web.post(f"{where}/cancel", data={"reason": "wrong branch"})
    assert no_csrf.status_code == 403
    back = await web.post(
        f"{where}/cancel",
        data={
            "csrf": csrf_of(shown.text),
            "form_token": form_token_of(shown.text),
            "reason": "wrong branch",
        },
    )
    assert back.status_code == 303, back.text
    assert 'id="transfer-status">cancelled<' in (await web.get(where)).text
    assert _stock_cell((await web.get(f"/stock/products/{apple}")).text, shop.warehouse_id) == "20"
    await check_books(db, shop.company_id)
    for role in ("cashier", "accountant"):
        other = httpx.AsyncClient(transport=web._transport, base_url="http://testserver")
        async with other:
            await sign_in(other, await add_staff(db, shop, role), STAFF_PASSWORD)
            landing = await other.get("/", follow_redirects=True)
            assert (await other.get("/transfers/new")).status_code == 403, role
            r = await other.post(f"{where}/cancel", data={"csrf": csrf_of(landing.text)})
            assert r.status_code == 403, role
            seen = await other.get(where)
            if role == "cashier":
                assert (
                    seen.status_code == 403 and (await other.get("/transfers")).status_code == 403
                )
            else:
                assert seen.status_code == 200 and "Cancel the transfer" not in seen.text


async def test_a_sale_voided_from_its_page_once(
    web: httpx.AsyncClient, client: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    from tests.invariants import check_books

    sale = await client.post(
        "/sales",
        json={
            "user_id": shop.customer_id,
            "order_date": "2026-11-20",
            "product_items": [{"xid": shop.xid("apple"), "quantity": 2, "unit_price": 3.5}],
            "payments": [{"amount": "7.70", "payment_mode_id": "cash"}],
        },
        headers=shop.headers,
    )
    assert sale.status_code == 200, sale.text
    oid = sale.json()["order_id"]
    apple = shop.products["apple"]
    accountant = httpx.AsyncClient(transport=web._transport, base_url="http://testserver")
    async with accountant:
        await sign_in(accountant, await add_staff(db, shop, "accountant"), STAFF_PASSWORD)
        seen = await accountant.get(f"/sales/{oid}")
        assert seen.status_code == 200 and f"/sales/{oid}/void" not in seen.text
        assert (await accountant.get(f"/sales/{oid}/void")).status_code == 403
        r = await accountant.post(
            f"/sales/{oid}/void", data={"csrf": csrf_of(seen.text), "reason": "x"}
        )
        assert r.status_code == 403
    await sign_in(web, await owner_email(db, shop), OWNER_PASSWORD)
    detail = await web.get(f"/sales/{oid}")
    assert f'href="/sales/{oid}/void"' in detail.text
    confirm = await web.get(f"/sales/{oid}/void")
    assert confirm.status_code == 200 and "Void sale" in confirm.text
    form = {"csrf": csrf_of(confirm.text), "form_token": form_token_of(confirm.text)}
    forged = await web.post(f"/sales/{oid}/void", data={**form, "csrf": "", "reason": "x"})
    assert forged.status_code == 403
    blank = await web.post(f"/sales/{oid}/void", data={**form, "reason": "  "})
    assert blank.status_code == 422 and 'id="e-reason"' in blank.text
    voided = await web.post(f"/sales/{oid}/void", data={**form, "reason": "rang up twice"})
    assert voided.status_code == 303, voided.text
    after = await web.get(f"/sales/{oid}")
    assert "cancelled" in after.text and f'href="/sales/{oid}/void"' not in after.text
    assert _stock_cell((await web.get(f"/stock/products/{apple}")).text, shop.warehouse_id) == "20"
    second = await web.get(f"/sales/{oid}/void")
    again = await web.post(
        f"/sales/{oid}/void",
        data={
            "csrf": csrf_of(second.text),
            "form_token": form_token_of(second.text),
            "reason": "again",
        },
    )
    assert again.status_code == 409 and "already voided" in again.text
    await check_books(db, shop.company_id)


async def test_shifts_and_their_reports_for_who_reads_the_books(
    web: httpx.AsyncClient, client: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    opened = await client.post(
        "/shifts", json={"register": "till-1", "opening_float": "100.00"}, headers=shop.headers
    )
    assert opened.status_code == 200, opened.text
    sid = opened.json()["data"]["id"]
    await sign_in(web, await owner_email(db, shop), OWNER_PASSWORD)
    listing = await web.get(f"/shifts?warehouse_id={shop.warehouse_id}")
    assert listing.status_code == 200 and "till-1" in listing.text and "X report" in listing.text
    x = await web.get(f"/shifts/{sid}")
    assert x.status_code == 200 and "X report" in x.text and "100.00" in x.text
    closed = await client.post(
        f"/shifts/{sid}/close",
        json={"counted": [{"payment_mode_id": "cash", "amount": "99.00"}]},
        headers=shop.headers,
    )
    assert closed.status_code == 200, closed.text
    z = await web.get(f"/shifts/{sid}")
    assert "Z report" in z.text and 'id="over-short">-1.00<' in z.text
    assert (await web.get("/shifts/999999999")).status_code == 404
    other = httpx.AsyncClient(transport=web._transport, base_url="http://testserver")
    async with other:
        await sign_in(other, await add_staff(db, shop, "cashier"), STAFF_PASSWORD)
        # A cashier lists the shifts they opened (none here) and not this one.
        assert "till-1" not in (await other.get("/shifts")).text
        assert (await other.get(f"/shifts/{sid}")).status_code == 404
    scoped = httpx.AsyncClient(transport=web._transport, base_url="http://testserver")
    async with scoped:
        email = await add_staff(db, shop, "accountant", shop.other_warehouse_id)
        await sign_in(scoped, email, STAFF_PASSWORD)
        assert (await scoped.get(f"/shifts/{sid}")).status_code == 403
        mine = await scoped.get("/shifts")
        assert mine.status_code == 200 and "till-1" not in mine.text


# --- time zones, money format, search as you type ---------------------------------------


def _branch_form(html: str) -> dict[str, str]:
    fields = dict(re.findall(r'name="(\w+)" type="(?:text|tel)" value="([^"]*)"', html))
    version = re.search(r'name="version" value="(\d+)"', html)
    assert version is not None
    return {**_tokens(html), **fields, "version": version.group(1)}


async def test_a_branch_time_zone_changes_how_an_order_time_is_shown(
    web: httpx.AsyncClient, db: Database, shop: Shop, client: httpx.AsyncClient
) -> None:
    from tillbook.models import Order, Warehouse

    sale = await client.post(
        "/sales",
        headers=shop.headers,
        json={
            "user_id": shop.customer_id,
            "order_date": "2026-01-15",
            "product_items": [{"xid": shop.xid("apple"), "quantity": 1, "unit_price": "4"}],
        },
    )
    assert sale.status_code == 200, sale.text
    oid = sale.json()["order_id"]

    async def pin(s: AsyncSession) -> None:  # a known moment: 23:30 UTC on 15 January
        order = await s.get(Order, oid)
        assert order is not None
        order.created_at = dt.datetime(2026, 1, 15, 23, 30, tzinfo=dt.UTC)

    await db.write(pin)
    await sign_in(web, await owner_email(db, shop), OWNER_PASSWORD)
    before = await web.get(f"/sales/{oid}")
    assert before.status_code == 200, before.text
    assert '<dd id="recorded-at">2026-01-15 23:30 UTC</dd>' in before.text

    wh = shop.warehouse_id
    page = await web.get(f"/settings/branches/{wh}")
    assert 'id="f-timezone"' in page.text and 'value="UTC"' in page.text
    form = _branch_form(page.text)
    bad = await web.post(
        f"/settings/branches/{wh}/edit", data={**form, "timezone": "Mars/Olympus_Mons"}
    )
    assert bad.status_code == 422
    assert '<p class="error" id="e-timezone">' in bad.text and "Mars/Olympus_Mons" in bad.text
    stored = await db.read(lambda s: s.get(Warehouse, wh))
    assert stored is not None and stored.timezone == "UTC"
    sneaky = await web.post(
        f"/settings/branches/{wh}/edit",
        data={**form, "form_token": "form-tz2", "timezone": "../../etc/passwd"},
    )
    assert sneaky.status_code == 422 and 'id="e-timezone"' in sneaky.text

    done = await web.post(
        f"/settings/branches/{wh}/edit",
        data={**form, "form_token": "form-tz3", "timezone": "Asia/Kolkata"},
    )
    assert done.status_code == 303, done.text
    after = await web.get(f"/sales/{oid}")
    # 23:30 UTC is 05:00 the next morning in India; the business date is left alone.
    assert '<dd id="recorded-at">2026-01-16 05:00 IST</dd>' in after.text
    assert "<dd>2026-01-15</dd>" in after.text
    other = await web.get(f"/settings/branches/{shop.other_warehouse_id}")
    assert 'value="UTC"' in other.text  # each branch keeps its own zone


async def test_the_company_money_format_changes_how_money_is_shown(
    web: httpx.AsyncClient, db: Database, shop: Shop, client: httpx.AsyncClient
) -> None:
    from tillbook.models import Company

    sale = await client.post(
        "/sales",
        headers=shop.headers,
        json={
            "user_id": shop.customer_id,
            "order_date": dt.date.today().isoformat(),
            "product_items": [{"xid": shop.xid("apple"), "quantity": 1, "unit_price": "2125"}],
        },
    )
    assert sale.status_code == 200, sale.text
    page = await _owner_page(web, db, shop, "/")
    due = page.split("<h2>Due</h2>")[1].split("</section>")[0]
    assert "2,125.00" in due

    settings = await web.get("/settings/company")
    assert settings.status_code == 200 and 'id="f-money_format"' in settings.text
    bad = await web.post(
        "/settings/company", data={**_tokens(settings.text), "money_format": "1'234.56"}
    )
    assert bad.status_code == 422 and 'id="e-money_format"' in bad.text
    saved = await web.post(
        "/settings/company", data={**_tokens(settings.text), "money_format": "1.234,56"}
    )
    assert saved.status_code == 303, saved.text
    company = await db.read(lambda s: s.get(Company, shop.company_id))
    assert company is not None and company.money_format == "1.234,56"
    assert await _audits(db, shop.company_id, "company") == 1

    page = (await web.get("/")).text
    due = page.split("<h2>Due</h2>")[1].split("</section>")[0]
    assert "2.125,00" in due and "2,125.00" not in due
    spaced = await web.post(
        "/settings/company",
        data={**_tokens((await web.get("/settings/company")).text), "money_format": "1 234,56"},
    )
    assert spaced.status_code == 303
    due = (await web.get("/")).text.split("<h2>Due</h2>")[1].split("</section>")[0]
    assert "2\u00a0125,00" in due


def test_money_is_written_in_each_format() -> None:
    from tillbook.web.render import money_text

    assert money_text("1234567.5") == "1,234,567.50"
    assert money_text("1234567.5", "1.234,56") == "1.234.567,50"
    assert money_text("-1234.5", "1 234,56") == "-1\u00a0234,50"
    assert money_text(None, "1.234,56") == ""


async def test_the_products_page_searches_as_you_type_and_without_javascript(
    web: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    page = await _owner_page(web, db, shop, "/products")
    assert '<script src="/static/search.js" defer></script>' in page
    assert 'data-live="results"' in page and 'id="results"' in page
    script = await web.get("/static/search.js")
    assert script.status_code == 200 and "DOMParser" in script.text
    found = await web.get("/products", params={"q": "apple"})
    assert found.status_code == 200
    results = found.text.split('id="results"')[1]
    assert "Apple juice" in results and "Still water" not in results


# --- hostile input on every page ------------------------------------------------------

HOSTILE_IDS = ("0", "-1", "abc", "9" * 40, "1.5", "%00")
# percent-encoded as sent: a NUL, a lone surrogate and a byte that is no UTF-8 at all
HOSTILE_VALUES = ("a%00b", "%ED%A0%80", "9" * 400, "-1e999999", "%3Cscript%3Ex", "", "%FF%FE")
FORM_FIELDS = (
    "name", "code", "version", "warehouse_id", "account_code", "quantity", "price",
    "sales_price", "purchase_price", "reason", "password", "email", "role", "url", "events",
    "timezone", "money_format", "date", "date_from", "date_to", "amount", "notes", "q",
    "item_code", "barcode", "unit_id", "category_id", "tax_id", "counted", "kind",
    "currency", "rate",
)  # fmt: skip


async def test_no_page_answers_a_500_to_hostile_input(
    web: httpx.AsyncClient, db: Database, shop: Shop, client: httpx.AsyncClient
) -> None:
    """Every web route, GET and POST, with ids that are not ids, query parameters
    and form fields holding NUL, lone surrogates, huge numbers and markup: a page
    that refuses (4xx) or answers, never a server error (DESIGN.md §12)."""
    from fastapi.routing import APIRoute

    from tillbook.web import ROUTERS

    home = await _owner_page(web, db, shop, "/")
    csrf = csrf_of(home)
    routes = [
        r
        for router in ROUTERS
        for r in router.routes
        if isinstance(r, APIRoute) and r.path not in ("/logout", "/login")
    ]
    assert len(routes) > 80, len(routes)
    made = await client.post(
        "/sales",
        headers=shop.headers,
        json={
            "user_id": shop.customer_id,
            "order_date": dt.date.today().isoformat(),
            "product_items": [{"xid": shop.xid("apple"), "quantity": 1, "unit_price": "4"}],
        },
    )
    assert made.status_code == 200, made.text
    sale = made.json()["order_id"]
    key_id = await db.read(
        lambda s: s.scalar(select(ApiKey.id).where(ApiKey.public_key == shop.key.public_key))
    )
    # real records, so that forms reach the services' own checks, not only a 404
    real = {
        "product_id": str(shop.products["apple"]),
        "warehouse_id": str(shop.warehouse_id),
        "party_id": str(shop.customer_id),
        "order_id": str(sale),
        "key_id": str(key_id),
        "item_id": str(shop.card_mode_id),
        "kind": "brand",
    }
    failures: list[str] = []
    statuses: dict[tuple[str, int], int] = {}
    cases: list[tuple[APIRoute, dict[str, str], str]] = []
    for route in routes:
        params = re.findall(r"{(\w+)}", route.path)
        for i, bad in enumerate(HOSTILE_IDS if params else ("",)):
            cases.append((route, dict.fromkeys(params, bad), HOSTILE_VALUES[i % 7]))
        if params and all(p in real for p in params):
            for junk in HOSTILE_VALUES:
                cases.append((route, {p: real[p] for p in params}, junk))
    for n, (route, ids, junk) in enumerate(cases):
        path = route.path
        for name, value in ids.items():
            path = path.replace(f"{{{name}}}", value)
        for method in sorted(route.methods or ()):
            if method == "GET":
                query = "&".join(f"{f}={junk}" for f in ("q", "page", "date_from", "report"))
                r = await web.get(f"{path}?{query}")
            else:
                form = "&".join(f"{f}={junk}" for f in FORM_FIELDS)
                r = await web.post(
                    path,
                    content=f"{form}&csrf={csrf}&form_token=hostile-{n}".encode(),
                    headers={"content-type": "application/x-www-form-urlencoded"},
                )
            statuses[(method, r.status_code)] = statuses.get((method, r.status_code), 0) + 1
            if r.status_code >= 500:
                failures.append(f"{method} {path}: {r.status_code}")
    assert not failures, failures
    # the forms reached the services: some were taken, most refused by their checks
    assert statuses.get(("POST", 303), 0) > 5 and statuses.get(("POST", 422), 0) > 50, statuses


# --- digits are ASCII digits (issue 22, item 5) ---------------------------------------

# Python's int() and Decimal() read all of these as numbers (or fail with a 500 for
# "²"); a page reads none of them. Percent-encoded as a browser sends them.
OTHER_DIGITS = ("%C2%B2", "%EF%BC%92", "%D9%A1", "%201", "1_000", "%2B1")


async def test_no_page_reads_other_scripts_digits_as_numbers(
    web: httpx.AsyncClient, db: Database, shop: Shop
) -> None:
    """Every GET page, with ``warehouse_id`` or ``page`` written in another script's
    digits, with a sign, a space or an underscore: refused like ``abc`` (a 4xx page)
    or ignored like it, never a 500, never read as a number. A path id written so is
    not found."""
    from fastapi.routing import APIRoute

    from tillbook.web import ROUTERS

    await _owner_page(web, db, shop, "/")
    real = {
        "product_id": str(shop.products["apple"]),
        "warehouse_id": str(shop.warehouse_id),
        "party_id": str(shop.customer_id),
        "item_id": str(shop.card_mode_id),
        "kind": "brand",
    }
    routes = [
        r
        for router in ROUTERS
        for r in router.routes
        if isinstance(r, APIRoute) and "GET" in (r.methods or ()) and r.path != "/logout"
    ]
    failures: list[str] = []
    refused = 0
    for route in routes:
        names = re.findall(r"{(\w+)}", route.path)
        if not all(n in real for n in names):
            continue
        path = route.path
        for name in names:
            path = path.replace(f"{{{name}}}", real[name])
        for param in ("warehouse_id", "page"):
            plain = await web.get(f"{path}?{param}=abc")
            for bad in OTHER_DIGITS:
                r = await web.get(f"{path}?{param}={bad}")
                if r.status_code >= 500 or (plain.status_code >= 400) != (r.status_code >= 400):
                    failures.append(f"{path}?{param}={bad}: {r.status_code} ({plain.status_code})")
                refused += r.status_code >= 400
        for name in names:
            if name == "kind":
                continue
            for bad in OTHER_DIGITS:
                r = await web.get(route.path.replace(f"{{{name}}}", bad).format(**real))
                if r.status_code not in (404, 422):
                    failures.append(f"{route.path} {name}={bad}: {r.status_code}")
    assert not failures, failures
    assert refused >= 9 * len(OTHER_DIGITS), refused  # the pages that take them


@pytest.mark.parametrize("bad", ["２", "١", "²", "+1", "1_000"])
async def test_form_numbers_in_other_scripts_are_refused_and_nothing_written(
    web: httpx.AsyncClient, db: Database, shop: Shop, bad: str
) -> None:
    """A branch, a quantity and a price typed in a form: ASCII digits or a 4xx with
    the form again, and nothing sent, changed or audited."""
    from tillbook.models import StockTransfer

    apple, wh = shop.products["apple"], shop.warehouse_id
    page = await _owner_page(web, db, shop, f"/transfers/new?warehouse_id={wh}")
    form = {
        "csrf": csrf_of(page),
        "form_token": form_token_of(page),
        "warehouse_id": str(wh),
        "to_warehouse_id": str(shop.other_warehouse_id),
        f"qty-{apple}": "2",
    }
    for field in ("warehouse_id", "to_warehouse_id", f"qty-{apple}"):
        r = await web.post("/transfers/new", data={**form, field: bad})
        assert 400 <= r.status_code < 500, (field, r.status_code)
    assert await _count(db, StockTransfer, shop.company_id) == 0

    product = await web.get(f"/products/{apple}")
    version = re.search(
        rf'action="/products/{apple}/listings/{wh}">.*?name="version" value="(\d+)"', product.text
    )
    assert version is not None
    listing = {
        "csrf": csrf_of(product.text),
        "form_token": "form-listing-digits",
        "version": version.group(1),
        "sales_price": "9.99",
        "purchase_price": "1.00",
        "reorder_level": "3",
        "active": "1",
    }
    before = await _audits(db, shop.company_id, "listing")
    for field in ("sales_price", "purchase_price", "reorder_level", "version"):
        r = await web.post(f"/products/{apple}/listings/{wh}", data={**listing, field: bad})
        assert r.status_code in (412, 422, 428), (field, r.status_code)
    assert await _audits(db, shop.company_id, "listing") == before
