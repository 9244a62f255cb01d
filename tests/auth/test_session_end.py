"""A new password, role or warehouse scope ends every session of the staff member at
once, on the back-office API (bearer tokens) and in the browser (the session
cookie), whichever door made the change; someone changing their own password stays
signed in where they did it. Other staff members' sessions carry on."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import pytest
from sqlalchemy import select

from tests.cli.test_cli import CLI, _env
from tests.factories import make_shop
from tests.web_helpers import OWNER_PASSWORD, STAFF_PASSWORD, csrf_of, owner_email, sign_in
from tillbook.app import create_app
from tillbook.config import Settings
from tillbook.db import Database
from tillbook.models import AuditEvent
from tillbook.web.session import COOKIE

BASE = "http://testserver"
ADMIN = "/api/v1/admin"
NEW_PASSWORD = "a brand new password"

Clients = Callable[[], httpx.AsyncClient]


@pytest.fixture(scope="module")
async def app(settings: Settings, db: Database) -> AsyncIterator[Any]:
    app = create_app(settings, database=db)
    async with app.router.lifespan_context(app):
        yield app


@pytest.fixture
async def browsers(app: Any) -> AsyncIterator[Clients]:
    """Separate browsers (each with its own cookies) on one app, from an address of
    this module's own (failed logins are counted per address)."""
    opened: list[httpx.AsyncClient] = []

    def new() -> httpx.AsyncClient:
        transport = httpx.ASGITransport(app=app, client=("10.78.0.1", 4321))
        c = httpx.AsyncClient(transport=transport, base_url=BASE)
        opened.append(c)
        return c

    yield new
    for c in opened:
        await c.aclose()


async def token(api: httpx.AsyncClient, email: str, password: str) -> dict[str, str]:
    r = await api.post(f"{ADMIN}/login", json={"email": email, "password": password})
    assert r.status_code == 200, r.text
    return {"Authorization": f"Bearer {r.json()['token']}"}


async def browser(new: Clients, email: str, password: str) -> httpx.AsyncClient:
    c = new()
    r = await sign_in(c, email, password)
    assert r.status_code == 303, r.text
    assert c.cookies.get(COOKIE)
    return c


async def signed_in(api: httpx.AsyncClient, headers: dict[str, str]) -> bool:
    r = await api.get(f"{ADMIN}/products", headers=headers)
    assert r.status_code in (200, 401), r.text
    return r.status_code == 200


async def page_open(web: httpx.AsyncClient) -> bool:
    r = await web.get("/account")
    if r.status_code == 303:
        assert r.headers["location"].startswith("/login"), r.headers
        return False
    assert r.status_code == 200, r.text
    return True


@pytest.mark.parametrize("change", ["own password", "reset", "role", "scope"])
async def test_a_change_ends_every_session_of_that_staff_member(
    change: str, browsers: Clients, db: Database
) -> None:
    shop = await make_shop(db)
    api = browsers()
    boss = await token(api, await owner_email(db, shop), OWNER_PASSWORD)
    boss_web = await browser(browsers, await owner_email(db, shop), OWNER_PASSWORD)

    async def member(role: str, warehouse_id: int | None) -> dict[str, Any]:
        email = f"{role}-{uuid.uuid4().hex[:8]}@example.com"
        body = {"name": f"A {role}", "email": email, "role": role, "password": STAFF_PASSWORD}
        if warehouse_id is not None:
            body["warehouse_id"] = warehouse_id
        r = await api.post(f"{ADMIN}/staff", json=body, headers=boss)
        assert r.status_code == 200, r.text
        data: dict[str, Any] = r.json()["data"]
        return data

    target = await member("manager", shop.warehouse_id)
    other = await member("manager", shop.warehouse_id)
    tokens = [await token(api, target["email"], STAFF_PASSWORD) for _ in range(2)]
    webs = [await browser(browsers, target["email"], STAFF_PASSWORD) for _ in range(2)]
    other_token = await token(api, other["email"], STAFF_PASSWORD)
    other_web = await browser(browsers, other["email"], STAFF_PASSWORD)
    for headers in (*tokens, other_token, boss):
        assert await signed_in(api, headers)
    for web in (*webs, other_web, boss_web):
        assert await page_open(web)

    kept: list[httpx.AsyncClient] = []
    if change == "own password":
        here, webs = webs[0], webs[1:]
        form = await here.get("/account")
        r = await here.post(
            "/account/password",
            data={
                "csrf": csrf_of(form.text),
                "current_password": STAFF_PASSWORD,
                "password": NEW_PASSWORD,
            },
        )
        assert r.status_code == 303 and r.headers["location"] == "/account?saved=1", r.text
        kept.append(here)
    else:
        patch = {
            "reset": {"password": NEW_PASSWORD},
            "role": {"role": "cashier"},
            "scope": {"warehouse_id": None},
        }[change]
        r = await api.patch(
            f"{ADMIN}/staff/{target['id']}",
            json=patch,
            headers={**boss, "If-Match": '"1"'},
        )
        assert r.status_code == 200, r.text

    # Every session opened before the change is refused on its next request.
    for headers in tokens:
        r = await api.get(f"{ADMIN}/products", headers=headers)
        assert r.status_code == 401, (change, r.text)
    for web in webs:
        assert not await page_open(web), change
    # The browser that changed its own password was given a new session.
    for web in kept:
        page = await web.get("/account?saved=1")
        assert page.status_code == 200 and "Password changed" in page.text
    # Nobody else is signed out.
    for headers in (other_token, boss):
        assert await signed_in(api, headers), change
    for web in (other_web, boss_web):
        assert await page_open(web), change
    # They sign in again with the password they have now.
    password = NEW_PASSWORD if change in ("own password", "reset") else STAFF_PASSWORD
    assert await signed_in(api, await token(api, target["email"], password))
    if password != STAFF_PASSWORD:
        r = await api.post(
            f"{ADMIN}/login", json={"email": target["email"], "password": STAFF_PASSWORD}
        )
        assert r.status_code == 401


async def test_nothing_changed_ends_nothing(browsers: Clients, db: Database) -> None:
    """A name or email edit, or an edit that changes nothing, leaves sessions alone."""
    shop = await make_shop(db)
    api = browsers()
    boss = await token(api, await owner_email(db, shop), OWNER_PASSWORD)
    email = f"m-{uuid.uuid4().hex[:8]}@example.com"
    r = await api.post(
        f"{ADMIN}/staff",
        json={"name": "M", "email": email, "role": "manager", "password": STAFF_PASSWORD},
        headers=boss,
    )
    sid = r.json()["data"]["id"]
    theirs = await token(api, email, STAFF_PASSWORD)
    web = await browser(browsers, email, STAFF_PASSWORD)
    for n, patch in enumerate(({"name": "M two"}, {"role": "manager"}), start=1):
        r = await api.patch(
            f"{ADMIN}/staff/{sid}", json=patch, headers={**boss, "If-Match": f'"{n}"'}
        )
        assert r.status_code == 200, r.text
    assert await signed_in(api, theirs)
    assert await page_open(web)


async def test_own_password_needs_the_current_one(browsers: Clients, db: Database) -> None:
    shop = await make_shop(db)
    email = await owner_email(db, shop)
    api = browsers()
    theirs = await token(api, email, OWNER_PASSWORD)
    web = await browser(browsers, email, OWNER_PASSWORD)
    form = await web.get("/account")
    for current, new, field in (
        ("not my password", NEW_PASSWORD, "is not your current password"),
        (OWNER_PASSWORD, "short", "at least 8 characters"),
    ):
        r = await web.post(
            "/account/password",
            data={"csrf": csrf_of(form.text), "current_password": current, "password": new},
        )
        assert r.status_code == 422 and field in r.text, r.text
    # Refused: nothing changed, nobody signed out.
    assert await signed_in(api, theirs)
    assert await page_open(web)
    await token(api, email, OWNER_PASSWORD)
    changes = await db.read(
        lambda s: s.scalar(
            select(AuditEvent.id).where(
                AuditEvent.company_id == shop.company_id, AuditEvent.entity_type == "staff"
            )
        )
    )
    assert changes is None


async def test_a_reset_at_the_command_line_signs_them_out(
    browsers: Clients, db: Database, database_url: str
) -> None:
    import json
    import subprocess

    shop = await make_shop(db)
    email = await owner_email(db, shop)
    api = browsers()
    theirs = await token(api, email, OWNER_PASSWORD)
    web = await browser(browsers, email, OWNER_PASSWORD)
    me = (await api.get(f"{ADMIN}/staff", headers=theirs)).json()["data"]["data"][0]
    done = subprocess.run(
        [*CLI, "staff", "set-password", "--company", str(shop.company_id), "--id",
         str(me["id"]), "--json"],
        env={**_env(database_url), "TILLBOOK_STAFF_PASSWORD": NEW_PASSWORD},
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["version"] == me["version"] + 1
    assert not await signed_in(api, theirs)
    assert not await page_open(web)
    await token(api, email, NEW_PASSWORD)
