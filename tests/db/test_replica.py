"""Reads that may lag, on a streaming replica (DESIGN.md §17, issue 28).

A primary and a hot standby of their own (``tests/servers.py``: ``initdb`` on a free
port, then ``pg_basebackup -R -X stream`` of it into a temporary directory, with
Debian's PostgreSQL 15 binaries); the service on the primary with
``TILLBOOK_READ_DATABASE_URL`` naming the standby. Replay on the standby is paused
(``pg_wal_replay_pause``) to make it lag: the change feeds, the reports and the
back-office lists then show the standby's older state, which is how they are seen
to be served there, while sales, their idempotent replays and every read that
decides a write work on the primary, which a read-only standby would refuse. A
change made during the pause reaches the till on its first sync after replay
resumes, however long the pause lasted (here longer than the feeds' overlap).
"""

from __future__ import annotations

import asyncio
import datetime as dt
import os
import shutil
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import httpx
import pytest
from sqlalchemy import func, select, text

from tests.admin_helpers import ADMIN, login
from tests.api.test_offline_sync import set_price
from tests.factories import Shop, make_shop
from tests.invariants import check_books
from tests.servers import PG_BIN, PgServer
from tillbook.app import create_app
from tillbook.config import Settings
from tillbook.db import Database, create_engine
from tillbook.kit import changes
from tillbook.migrate import upgrade
from tillbook.models import Order

pytestmark = pytest.mark.skipif(
    not (PG_BIN / "pg_basebackup").exists() or (os.geteuid() == 0 and not shutil.which("runuser")),
    reason="needs PostgreSQL 15's server binaries (postgresql-15) to start a primary and a replica",
)
EPOCH = "1970-01-01T00:00:00Z"


@dataclass
class Pair:
    primary: PgServer
    standby: PgServer
    db: Database
    client: httpx.AsyncClient
    shop: Shop


async def scalar(url: str, sql: str) -> Any:
    engine = create_engine(url, isolation_level="AUTOCOMMIT")
    try:
        async with engine.connect() as conn:
            return (await conn.execute(text(sql))).scalar()
    finally:
        await engine.dispose()


async def caught_up(pair: Pair) -> None:
    """Wait until the standby has replayed everything the primary has written."""
    target = await scalar(pair.primary.url(), "SELECT pg_current_wal_lsn()::text")
    for _ in range(200):
        behind = await scalar(
            pair.standby.url(),
            f"SELECT pg_wal_lsn_diff('{target}', pg_last_wal_replay_lsn()) > 0",
        )
        if not behind:
            return
        await asyncio.sleep(0.05)
    raise AssertionError("the standby did not catch up within 10 s")


@pytest.fixture(scope="module")
async def pair() -> AsyncIterator[Pair]:
    primary = PgServer("primary").init_primary().start()
    standby = None
    try:
        url = primary.url()
        await asyncio.to_thread(upgrade, url)
        standby = PgServer("standby").init_standby(primary).start()
        read_url = standby.url()
        db = Database(url, read_url=read_url, pool_size=5)
        app = create_app(Settings(database_url=url, read_database_url=read_url), database=db)
        try:
            shop = await make_shop(db)
            async with app.router.lifespan_context(app):
                transport = httpx.ASGITransport(app=app)
                async with httpx.AsyncClient(
                    transport=transport, base_url="http://testserver/api/v1/public"
                ) as client:
                    found = Pair(primary, standby, db, client, shop)
                    await caught_up(found)
                    yield found
        finally:
            await db.dispose()
    finally:
        if standby is not None:
            standby.stop()
        primary.stop()


async def feed(pair: Pair, since: str) -> tuple[dict[int, dict[str, Any]], str]:
    """The till's products feed since ``since``, every page: items by id, the token."""
    client, shop = pair.client, pair.shop
    items: dict[int, dict[str, Any]] = {}
    params: dict[str, Any] = {"updated_since": since, "limit": 100}
    while True:
        r = await client.get("/products", params=params, headers=shop.headers)
        assert r.status_code == 200, r.text
        page = r.json()["data"]
        items.update({i["id"]: i for i in page["data"]})
        if page["next_cursor"] is None:
            return items, page["sync_token"]
        params = {"cursor": page["next_cursor"], "limit": 100}


def sale(shop: Shop, unique_id: str) -> dict[str, Any]:
    return {
        "user_id": shop.customer_id,
        "order_date": "2026-11-20",
        "unique_id": unique_id,
        "product_items": [{"xid": shop.xid("apple"), "quantity": 2, "unit_price": 3.5}],
        "payments": [{"amount": "7.00", "payment_mode_id": "cash"}],
    }


async def test_the_read_engine_is_the_standby(pair: Pair) -> None:
    in_recovery = select(func.pg_is_in_recovery())
    assert await pair.db.replica_read(lambda s: s.scalar(in_recovery)) is True
    assert await pair.db.read(lambda s: s.scalar(in_recovery)) is False
    # the standby refuses writes: none of the service's may ever be sent there
    with pytest.raises(Exception, match="read-only transaction"):
        await pair.db.replica_read(lambda s: s.execute(text("CREATE TABLE nope (id int)")))


async def test_a_paused_standby_serves_old_reads_and_never_a_write(
    pair: Pair, monkeypatch: pytest.MonkeyPatch
) -> None:
    client, shop, db = pair.client, pair.shop, pair.db
    admin = await login(client, db, shop)
    water = shop.products["water"]
    before, token = await feed(pair, EPOCH)
    tb_before = (await client.get(f"{ADMIN}/reports/trial-balance", headers=admin)).json()["data"]
    # The overlap a till's next sync goes back is one second here, so that a pause
    # of a few seconds is longer than it, as a replica minutes behind is longer than
    # the real 60 s.
    monkeypatch.setattr(changes, "OVERLAP", dt.timedelta(seconds=1))

    await scalar(pair.standby.url(), "SELECT pg_wal_replay_pause()")
    try:
        await set_price(db, shop, "water", "1.75")
        key = str(uuid.uuid4())
        first = await client.post("/sales", json=sale(shop, key), headers=shop.headers)
        assert first.status_code == 200, first.text
        again = await client.post("/sales", json=sale(shop, key), headers=shop.headers)
        assert again.status_code == 200, again.text
        assert again.headers.get("Idempotent-Replayed") == "true"  # read on the primary
        assert again.json() == first.json()
        await asyncio.sleep(2.5)  # the pause outlasts the overlap

        # served by the standby: neither the new price nor the sale are there yet
        during, token_during = await feed(pair, token)
        assert during.get(water, {}).get("sales_price") != 1.75
        tb = await client.get(f"{ADMIN}/reports/trial-balance", headers=admin)
        assert tb.status_code == 200, tb.text
        assert tb.json()["data"]["total_debit"] == tb_before["total_debit"]
        listed = await client.get(f"{ADMIN}/products", params={"limit": 100}, headers=admin)
        assert listed.status_code == 200, listed.text
        # ... while the primary has both
        orders = await db.read(
            lambda s: s.scalar(
                select(func.count()).select_from(Order).where(Order.company_id == shop.company_id)
            )
        )
        assert orders == 1, "a replayed sale must not be a second sale"
    finally:
        await scalar(pair.standby.url(), "SELECT pg_wal_replay_resume()")
    await caught_up(pair)

    # the first sync after the resume, from the token the lagging standby gave,
    # brings the change made during the pause
    after, _ = await feed(pair, token_during)
    assert water in after, "the till's next sync missed a change made while the replica lagged"
    assert after[water]["sales_price"] == 1.75, after[water]
    tb = (await client.get(f"{ADMIN}/reports/trial-balance", headers=admin)).json()["data"]
    assert Decimal(tb["total_debit"]) > Decimal(tb_before["total_debit"])
    assert before[water]["sales_price"] != 1.75
    await check_books(db, shop.company_id)


async def test_a_replica_that_is_down_costs_a_read_on_the_primary(pair: Pair) -> None:
    admin = await login(pair.client, pair.db, pair.shop)
    pair.standby.kill()
    try:
        r = await pair.client.get(f"{ADMIN}/reports/trial-balance", headers=admin)
        assert r.status_code == 200, r.text
        feed_page = await pair.client.get(
            "/products", params={"updated_since": EPOCH}, headers=pair.shop.headers
        )
        assert feed_page.status_code == 200, feed_page.text
        in_recovery = select(func.pg_is_in_recovery())
        assert await pair.db.replica_read(lambda s: s.scalar(in_recovery)) is False
    finally:
        pair.standby.start()
    await caught_up(pair)
    assert await pair.db.replica_read(lambda s: s.scalar(in_recovery)) is True
