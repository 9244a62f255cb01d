"""Who is behind a page (``web/session.py``, ``web/account.py``): no page without a
session, the sign-in cookie and signing out, the CSRF token on every post, and the
role table and branch scope applied by the server, whatever the links show."""

from __future__ import annotations

import httpx

from tests.factories import Shop
from tests.web_helpers import (
    OWNER_PASSWORD,
    STAFF_PASSWORD,
    add_staff,
    count_rows,
    csrf_of,
    form_token_of,
    owner_email,
    sign_in,
)
from tillbook.db import Database
from tillbook.models import ApiKey


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
    before = await count_rows(db, ApiKey, shop.company_id)
    form = {"name": "no token", "warehouse_id": str(shop.warehouse_id)}
    for extra in ({}, {"csrf": "0" * 64}):
        r = await web.post(
            "/settings/keys", data={**form, **extra, "form_token": form_token_of(page.text)}
        )
        assert r.status_code == 403, r.text
        assert "security token" in r.text
    assert await count_rows(db, ApiKey, shop.company_id) == before


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
    assert await count_rows(db, ApiKey, shop.company_id) == 2


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
