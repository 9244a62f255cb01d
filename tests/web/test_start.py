"""A shop starts in the browser (issue 25, item 6): on an empty service the first
visit offers to create the company, once; then a checklist on the dashboard until
the shop is ready to trade."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from sqlalchemy import func, select

from tests.conftest import PG_URL, _create_pg_database, _drop_pg_database
from tests.invariants import check_books
from tests.web_helpers import csrf_of
from tillbook.app import create_app
from tillbook.config import Settings
from tillbook.db import Database
from tillbook.migrate import upgrade
from tillbook.models import AuditEvent, Company, User, Warehouse

PASSWORD = "a long enough password"


@pytest.fixture
async def empty(backend: str, tmp_path: Path) -> AsyncIterator[tuple[str, Database]]:
    """A freshly migrated database with no company in it."""
    if backend == "sqlite":
        url = f"sqlite:///{tmp_path / 'empty.db'}"
        await asyncio.to_thread(upgrade, url)
        name = None
    else:
        assert PG_URL is not None
        url, name = await _create_pg_database(PG_URL)
        await asyncio.to_thread(upgrade, url)
    database = Database(url, pool_size=5)
    yield url, database
    await database.dispose()
    if name is not None:
        assert PG_URL is not None
        await _drop_pg_database(PG_URL, name)


@contextlib.asynccontextmanager
async def web_client(
    url: str, database: Database, **settings: object
) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(Settings(database_url=url, **settings), database=database)  # type: ignore[arg-type]
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://testserver"
        ) as c,
    ):
        yield c


def shop_form(csrf: str, **over: str) -> dict[str, str]:
    form = {
        "csrf": csrf,
        "company_name": "Corner Shop",
        "base_currency": "eur",
        "branch_name": "High Street",
        "owner_name": "Ada Owner",
        "owner_email": f"ada-{uuid.uuid4().hex[:8]}@example.com",
        "owner_password": PASSWORD,
        "owner_password_again": PASSWORD,
    }
    form.update(over)
    return form


async def test_the_first_visit_starts_the_shop_once(empty: tuple[str, Database]) -> None:
    url, database = empty
    async with web_client(url, database) as client:
        # nobody can sign in: the sign-in page sends the visitor to /start
        r = await client.get("/login")
        assert r.status_code == 303 and r.headers["location"] == "/start"
        page = await client.get("/start")
        assert page.status_code == 200 and "Start your shop" in page.text
        csrf = csrf_of(page.text)

        # bad input: every field named beside it, nothing written
        bad = await client.post(
            "/start",
            data=shop_form(
                csrf,
                company_name="",
                base_currency="E2",
                owner_email="nope",
                owner_password="short",
                owner_password_again="short",
            ),
        )
        assert bad.status_code == 422
        for name in ("company_name", "base_currency", "owner_email", "owner_password"):
            assert f'id="e-{name}"' in bad.text, name
        differ = await client.post(
            "/start", data=shop_form(csrf_of(bad.text), owner_password_again="x" * 12)
        )
        assert differ.status_code == 422 and 'id="e-owner_password_again"' in differ.text
        # a form without the cookie's token is refused
        forged = await client.post("/start", data=shop_form("forged"))
        assert forged.status_code == 403
        assert await database.read(lambda s: s.scalar(select(func.count(Company.id)))) == 0

        form = shop_form(csrf_of(differ.text))
        made = await client.post("/start", data=form)
        assert made.status_code == 303 and made.headers["location"] == "/", made.text
        # signed in as the owner, on a dashboard with the checklist
        home = await client.get("/")
        assert home.status_code == 200, home.text
        assert "Getting ready to trade" in home.text and "0 of 4 done" in home.text

        company = await database.read(lambda s: s.scalar(select(Company)))
        assert company.name == "Corner Shop" and company.base_currency == "EUR"
        branches = await database.read(
            lambda s: s.scalars(select(Warehouse.name).where(Warehouse.company_id == company.id))
        )
        assert list(branches) == ["High Street"]
        owner = await database.read(
            lambda s: s.scalar(select(User).where(User.email == form["owner_email"]))
        )
        assert owner.role == "owner" and owner.name == "Ada Owner"
        audited = await database.read(
            lambda s: s.scalar(
                select(func.count(AuditEvent.id)).where(
                    AuditEvent.company_id == company.id, AuditEvent.entity_type == "company"
                )
            )
        )
        assert audited == 1
        await check_books(database, company.id)

        # once: the page is gone, and a replayed form is refused
        assert (await client.get("/start")).status_code == 404
        again = await client.post("/start", data=shop_form(csrf))
        assert again.status_code == 404
        assert await database.read(lambda s: s.scalar(select(func.count(Company.id)))) == 1
        r = await client.get("/login")
        assert r.status_code in (200, 303) and r.headers.get("location") != "/start"


async def test_two_visitors_racing_make_one_company(empty: tuple[str, Database]) -> None:
    url, database = empty
    app = create_app(Settings(database_url=url), database=database)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        visitors = [httpx.AsyncClient(transport=transport, base_url="http://t") for _ in range(3)]
        pages = [await v.get("/start") for v in visitors]
        answers = await asyncio.gather(
            *(
                v.post("/start", data=shop_form(csrf_of(p.text)))
                for v, p in zip(visitors, pages, strict=True)
            )
        )
        for v in visitors:
            await v.aclose()
    codes = [a.status_code for a in answers]
    assert codes.count(303) == 1 and all(c in (303, 404, 409) for c in codes), codes
    assert await database.read(lambda s: s.scalar(select(func.count(Company.id)))) == 1


async def test_an_operator_may_turn_it_off(empty: tuple[str, Database]) -> None:
    url, database = empty
    async with web_client(url, database, first_run_setup=False) as client:
        assert (await client.get("/start")).status_code == 404
        r = await client.get("/login")
        assert r.status_code == 200 and "Sign in" in r.text
