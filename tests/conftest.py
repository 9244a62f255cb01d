"""Fixtures: one migrated database per backend per run, the app over HTTP, a shop.

Every test runs on SQLite; when ``TILLBOOK_TEST_DATABASE_URL`` points at a
PostgreSQL server, every test runs again there, on a fresh database created for
this run and dropped after it. Tests never share a company, so no test needs
cleanup and invariants are checked per company.

``TILLBOOK_TEST_PGBOUNCER=1`` (with ``TILLBOOK_TEST_DATABASE_URL``) runs the chosen
files once, on PostgreSQL through Debian's ``pgbouncer`` in transaction pooling
mode, started here (``tests/servers.py``): the backend is ``pgbouncer``, which the
tests treat as PostgreSQL, and every database ``_create_pg_database`` makes is
reached through the pooler (``.ci/run`` runs the concurrency and crash suites so).
"""

from __future__ import annotations

import asyncio
import json
import os
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import create_async_engine

from tests.factories import Shop, make_shop, public_client
from tests.live_server import pw, server  # noqa: F401  (fixtures of the browser tests)
from tests.router_check import MODE as ROUTER_CHECK
from tests.router_check import Recorder, RouterAnalyser, tenant_tables
from tests.servers import PgBouncer
from tillbook.app import create_app
from tillbook.config import Settings
from tillbook.db import Database, async_url
from tillbook.migrate import upgrade

os.environ.setdefault("TILLBOOK_MASTER_KEY", "dGlsbGJvb2stdGVzdC1tYXN0ZXIta2V5LTMyLWJ5dGU=")

PG_URL = os.environ.get("TILLBOOK_TEST_DATABASE_URL")
BEHIND_PGBOUNCER = os.environ.get("TILLBOOK_TEST_PGBOUNCER") == "1"
if BEHIND_PGBOUNCER and not PG_URL:
    raise RuntimeError("TILLBOOK_TEST_PGBOUNCER=1 needs TILLBOOK_TEST_DATABASE_URL")
BACKENDS = ["pgbouncer"] if BEHIND_PGBOUNCER else ["sqlite"] + (["postgresql"] if PG_URL else [])
_pgbouncer: PgBouncer | None = None
# Router queries (tests/router_check.py): on the PostgreSQL run, every statement the
# service sends names one company_id for each tenant table it touches.
_router = Recorder(RouterAnalyser(tenant_tables())) if PG_URL and ROUTER_CHECK != "off" else None


def pgbouncer() -> PgBouncer:
    """This process's pooler in front of ``TILLBOOK_TEST_DATABASE_URL``'s server,
    started on first use and stopped when the session ends (``pytest_unconfigure``)."""
    global _pgbouncer
    assert PG_URL is not None
    if _pgbouncer is None:
        _pgbouncer = PgBouncer(PG_URL, pool_size=40).start()
    return _pgbouncer


def pytest_configure(config: pytest.Config) -> None:
    if _router is not None:
        _router.install()


@pytest.fixture(autouse=True)
def router_queries() -> Iterator[None]:
    """Fail the test whose statements left a tenant table without one company_id
    (``TILLBOOK_TEST_ROUTER_CHECK=strict``); otherwise they are listed at the end."""
    if _router is None:
        yield
        return
    _router.take()
    yield
    found = _router.take()
    if found and ROUTER_CHECK == "strict":
        pytest.fail(
            "statements that are not router queries (tests/router_check.py):\n"
            + "\n".join(v.describe() for v in found),
            pytrace=False,
        )


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if _router is None:
        return
    found = list(_router.everything.values())
    out = os.environ.get("TILLBOOK_TEST_ROUTER_REPORT")
    if out:
        with open(out, "a", encoding="utf-8") as report:
            for v in found:
                report.write(json.dumps({"sql": v.sql, "problems": v.problems, "where": v.where}))
                report.write("\n")
    terminalreporter.write_sep("-", f"router queries: {len(found)} distinct violations")
    for v in found:
        terminalreporter.write_line(v.describe())


def pytest_unconfigure(config: pytest.Config) -> None:
    global _pgbouncer
    _drop_made_databases()
    if _router is not None:
        _router.uninstall()
    if _pgbouncer is not None:
        _pgbouncer.stop()
        _pgbouncer = None


async def _create_pg_database(base_url: str) -> tuple[str, str]:
    """A fresh database on ``base_url``'s server, created there directly; its URL is
    through the pooler when the run is behind one (``TILLBOOK_TEST_PGBOUNCER``)."""
    url = make_url(async_url(base_url))
    name = f"tillbook_test_{uuid.uuid4().hex[:8]}"
    admin = create_async_engine(url.set(database="postgres"), isolation_level="AUTOCOMMIT")
    async with admin.connect() as conn:
        await conn.execute(text(f'CREATE DATABASE "{name}"'))
    await admin.dispose()
    direct = url.set(database=name).render_as_string(hide_password=False)
    return (pgbouncer().through(direct) if BEHIND_PGBOUNCER else direct), name


async def _drop_pg_database(base_url: str, name: str) -> None:
    url = make_url(async_url(base_url))
    admin = create_async_engine(url.set(database="postgres"), isolation_level="AUTOCOMMIT")
    async with admin.connect() as conn:
        await conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    await admin.dispose()


# One migrated database per backend per test process, made on first use and kept
# until the process ends. pytest holds one parameter of a session fixture at a time:
# with ``--dist loadfile`` a worker runs a file's SQLite tests, then its PostgreSQL
# ones, then the next file's SQLite ones, tearing ``database_url`` down at each
# switch. Migrating afresh each time cost 8-10 s a switch on a slow VM (a few hundred
# switches a run); the databases themselves are what the tests share anyway, since no
# two tests share a company.
_databases: dict[str, str] = {}
_pg_made: list[str] = []


@pytest.fixture(scope="session", params=BACKENDS)
async def database_url(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[str]:
    backend: str = request.param
    if backend not in _databases:
        if backend == "sqlite":
            path: Path = tmp_path_factory.mktemp("db") / "tillbook.db"
            url = f"sqlite:///{path}"
        else:
            assert PG_URL is not None
            url, name = await _create_pg_database(PG_URL)
            _pg_made.append(name)
        await asyncio.to_thread(upgrade, url)
        _databases[backend] = url
    yield _databases[backend]


def _drop_made_databases() -> None:
    """The PostgreSQL databases this process made, dropped when its session ends
    (SQLite's files go with pytest's temporary folder)."""
    if PG_URL is not None:
        for name in _pg_made:
            asyncio.run(_drop_pg_database(PG_URL, name))
    _pg_made.clear()
    _databases.clear()


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
    async with public_client(settings, db) as c:
        yield c


@pytest.fixture
async def web(settings: Settings, db: Database) -> AsyncIterator[httpx.AsyncClient]:
    """The back office's pages over HTTP, as a browser without script reaches them.

    Function-scoped, unlike ``client``: a page test signs in, and the session cookie
    it keeps must not leak into the next test."""
    app = create_app(settings, database=db)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as c:
            yield c


@pytest.fixture
async def shop(db: Database) -> Shop:
    """A fresh company with two warehouses, keys, parties, products with stock."""
    return await make_shop(db)


@pytest.fixture
def backend(database_url: str) -> str:
    """``sqlite`` or ``postgresql`` (also behind PgBouncer: the same server)."""
    return "sqlite" if database_url.startswith("sqlite") else "postgresql"
