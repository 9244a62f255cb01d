"""Fixtures: one migrated database per backend per run, the app over HTTP, a shop.

Every test runs on SQLite; when ``TILLBOOK_TEST_DATABASE_URL`` points at a
PostgreSQL server, every test runs again there, on a fresh database created for
this run and dropped after it. Tests never share a company, so no test needs
cleanup and invariants are checked per company.
"""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import create_async_engine

from tests.factories import Shop, make_shop
from tests.live_server import pw, server  # noqa: F401  (fixtures of the browser tests)
from tillbook.app import create_app
from tillbook.config import Settings
from tillbook.db import Database, async_url
from tillbook.migrate import upgrade

os.environ.setdefault("TILLBOOK_MASTER_KEY", "dGlsbGJvb2stdGVzdC1tYXN0ZXIta2V5LTMyLWJ5dGU=")

PG_URL = os.environ.get("TILLBOOK_TEST_DATABASE_URL")
BACKENDS = ["sqlite"] + (["postgresql"] if PG_URL else [])


async def _create_pg_database(base_url: str) -> tuple[str, str]:
    url = make_url(async_url(base_url))
    name = f"tillbook_test_{uuid.uuid4().hex[:8]}"
    admin = create_async_engine(url.set(database="postgres"), isolation_level="AUTOCOMMIT")
    async with admin.connect() as conn:
        await conn.execute(text(f'CREATE DATABASE "{name}"'))
    await admin.dispose()
    return url.set(database=name).render_as_string(hide_password=False), name


async def _drop_pg_database(base_url: str, name: str) -> None:
    url = make_url(async_url(base_url))
    admin = create_async_engine(url.set(database="postgres"), isolation_level="AUTOCOMMIT")
    async with admin.connect() as conn:
        await conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    await admin.dispose()


@pytest.fixture(scope="session", params=BACKENDS)
async def database_url(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[str]:
    if request.param == "sqlite":
        path: Path = tmp_path_factory.mktemp("db") / "tillbook.db"
        url = f"sqlite:///{path}"
        await asyncio.to_thread(upgrade, url)
        yield url
        return
    assert PG_URL is not None
    url, name = await _create_pg_database(PG_URL)
    await asyncio.to_thread(upgrade, url)
    yield url
    await _drop_pg_database(PG_URL, name)


@pytest.fixture(scope="session")
async def db(database_url: str) -> AsyncIterator[Database]:
    database = Database(database_url, pool_size=20)
    yield database
    await database.dispose()


@pytest.fixture(scope="session")
def settings(database_url: str) -> Settings:
    # Tests' webhook receivers listen on 127.0.0.1.
    return Settings(database_url=database_url, webhook_allow_private_networks=True)


@pytest.fixture(scope="session")
async def client(settings: Settings, db: Database) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(settings, database=db)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(
            transport=transport, base_url="http://testserver/api/v1/public"
        ) as c:
            yield c


@pytest.fixture
async def shop(db: Database) -> Shop:
    """A fresh company with two warehouses, keys, parties, products with stock."""
    return await make_shop(db)


@pytest.fixture
def backend(database_url: str) -> str:
    return "sqlite" if database_url.startswith("sqlite") else "postgresql"
