"""The service behind PgBouncer in transaction pooling mode (DESIGN.md §17).

Here the pooler (Debian's ``pgbouncer``, started by ``tests/servers.py``) gets
only two server connections for many client ones, so consecutive transactions of
one client connection land on different server connections: a plain asyncpg
engine fails there (its named prepared statements do not exist on the next
server connection, or are another client's), the service's engine for a URL with
``?pooler=pgbouncer`` does not, and keeps its lock timeout in every transaction.
The concurrency and crash suites run whole behind the pooler with
``TILLBOOK_TEST_PGBOUNCER=1`` (``.ci/run``).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator

import pytest
from sqlalchemy import bindparam, literal_column, select, text
from sqlalchemy.ext.asyncio import AsyncSession, create_async_engine

from tests.servers import PGBOUNCER, PgBouncer
from tillbook.db import Database, async_url, split_pooler
from tillbook.unit import UnitOfWork

PG_URL = os.environ.get("TILLBOOK_TEST_DATABASE_URL")
needs_pgbouncer = pytest.mark.skipif(
    not PG_URL or not os.path.exists(PGBOUNCER),
    reason="needs PostgreSQL (TILLBOOK_TEST_DATABASE_URL) and pgbouncer (apt-get install)",
)
ROUNDS = 120


def test_the_url_names_the_pooler() -> None:
    url, pooler = split_pooler("postgresql://app@pool:6432/shop?pooler=pgbouncer&ssl=prefer")
    assert pooler == "pgbouncer"
    assert url.drivername == "postgresql+asyncpg"
    assert dict(url.query) == {"ssl": "prefer"}  # the driver never sees pooler=
    assert split_pooler("postgresql://app@db/shop")[1] is None
    with pytest.raises(ValueError, match="unsupported pooler"):
        split_pooler("postgresql://app@pool/shop?pooler=pgpool")
    with pytest.raises(ValueError, match="PostgreSQL URLs only"):
        split_pooler("sqlite:///x.db?pooler=pgbouncer")


@pytest.fixture
def narrow_pool() -> Iterator[PgBouncer]:
    assert PG_URL is not None
    bouncer = PgBouncer(PG_URL, pool_size=2).start()
    yield bouncer
    bouncer.stop()


# A prebuilt statement run on the driver connection, as the sale's hot path does.
PROBE = select(
    literal_column("current_setting('lock_timeout')").label("lock_timeout"),
    (bindparam("n") + 1).label("next"),
)


@needs_pgbouncer
async def test_service_engine_keeps_nothing_on_a_server_connection(
    narrow_pool: PgBouncer,
) -> None:
    db = Database(narrow_pool.url("postgres"), pool_size=8)
    seen: list[tuple[str, int, int]] = []

    async def in_unit(uow: UnitOfWork, n: int) -> None:
        # the session's path, then the driver's (``UnitOfWork.run``)
        named = await uow.session.execute(text("SELECT count(*) FROM pg_prepared_statements"))
        count = int(named.scalar_one())
        rows = await uow.run(PROBE, {"n": n})
        seen.append((rows[0]["lock_timeout"], rows[0]["next"] - n, count))

    async def read(session: AsyncSession, n: int) -> int:
        found = await session.execute(text("SELECT CAST(:n AS integer) * 2"), {"n": n})
        return int(found.scalar_one())

    async def one(n: int) -> int:
        await db.unit(lambda uow: in_unit(uow, n))
        return await db.read(lambda s: read(s, n))

    try:
        doubled = await asyncio.gather(*(one(n) for n in range(ROUNDS)))
        key = await db.first(PROBE, {"n": 41})  # outside any transaction
    finally:
        await db.dispose()
    assert doubled == [2 * n for n in range(ROUNDS)]
    assert key is not None and key["next"] == 42
    # every write transaction had the service's lock timeout, and no server
    # connection held a named prepared statement of anyone's
    assert set(seen) == {("5s", 1, 0)}, set(seen)


@needs_pgbouncer
async def test_a_plain_asyncpg_engine_fails_behind_the_same_pooler(
    narrow_pool: PgBouncer,
) -> None:
    """The control: without ``?pooler=pgbouncer`` asyncpg's named statements meet
    other server connections (so the test above would fail without it)."""
    direct_style = async_url(narrow_pool.url("postgres").split("?")[0])
    engine = create_async_engine(direct_style, pool_size=8)
    errors: list[str] = []

    async def one(n: int) -> None:
        try:
            async with engine.begin() as conn:
                await conn.execute(text(f"SELECT CAST(:n AS integer) + {n % 5}"), {"n": n})
        except Exception as exc:
            errors.append(str(exc))

    # Which server connection a transaction gets is PgBouncer's choice: a quiet
    # machine may hand each client the same one for a whole round, so rounds are
    # repeated until a named statement meets another connection (a few at most).
    try:
        for _round in range(30):
            await asyncio.gather(*(one(n) for n in range(ROUNDS)))
            if any("prepared statement" in e for e in errors):
                break
    finally:
        await engine.dispose()
    assert any("prepared statement" in e for e in errors), errors[:3]
