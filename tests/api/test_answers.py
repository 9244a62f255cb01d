"""Answers a worker serves again from its memory (``api.answers``): a read after any
write of this host sees it, in every worker; nothing is served to another branch
or company; what the host cannot see is read again once the answer is old.

Each "worker" here is an app of its own on a ``Database`` of its own, as the
processes of ``tillbook serve --workers N`` are; a change "the host cannot see" is
a statement sent on a connection of the test's, outside the service's units of
work, as one typed into ``psql`` would be."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from decimal import Decimal
from pathlib import Path
from typing import Any

import asyncpg
import httpx
from sqlalchemy import text, update

from tests.factories import Shop, make_shop, public_client
from tests.invariants import check_books
from tillbook.config import Settings
from tillbook.db import APPLICATION, Database, split_pooler
from tillbook.models import Listing

D = Decimal


@asynccontextmanager
async def worker(database_url: str, **settings: Any) -> AsyncIterator[httpx.AsyncClient]:
    """One more worker process's app: its own database connections, its own answers."""
    db = Database(database_url, pool_size=2)
    try:
        merged = Settings(database_url=database_url, **settings)
        async with public_client(merged, db) as client:
            yield client
    finally:
        await db.dispose()


async def stock(client: httpx.AsyncClient, shop: Shop, item: str = "apple") -> Decimal:
    r = await client.get(f"/products/{shop.xid(item)}", headers=shop.headers)
    assert r.status_code == 200, r.text
    return D(str(r.json()["data"]["current_stock"]))


async def unseen_stock(db: Database, shop: Shop, value: Decimal, item: str = "apple") -> None:
    """The listing's stock set outside the service's writes: no worker is told."""
    async with db.write_engine.begin() as conn:
        await conn.execute(
            update(Listing)
            .where(
                Listing.company_id == shop.company_id,
                Listing.warehouse_id == shop.warehouse_id,
                Listing.product_id == shop.products[item],
            )
            .values(current_stock=value)
        )


async def sell(client: httpx.AsyncClient, shop: Shop, quantity: int) -> dict[str, Any]:
    body = {
        "user_id": shop.customer_id,
        "order_date": "2026-11-20",
        "product_items": [{"xid": shop.xid("apple"), "quantity": quantity, "unit_price": 3.5}],
    }
    r = await client.post("/sales", json=body, headers=shop.headers)
    assert r.status_code == 200, r.text
    out: dict[str, Any] = r.json()
    return out


async def test_a_read_sees_what_another_worker_wrote(
    client: httpx.AsyncClient, shop: Shop, db: Database, database_url: str
) -> None:
    before = await stock(client, shop)
    # Kept: a change the host cannot see is not read while the answer is young
    # (this is what the rest of the test relies on to mean something).
    await unseen_stock(db, shop, before + 100)
    assert await stock(client, shop) == before
    await unseen_stock(db, shop, before)
    async with worker(database_url) as other:
        sale = await sell(other, shop, 2)
        assert await stock(client, shop) == before - 2
        path = f"/sales/{sale['order_id']}"
        assert (await client.get(path, headers=shop.headers)).json()["data"]["voided_at"] is None
        r = await other.post(f"{path}/void", json={"reason": "rung twice"}, headers=shop.headers)
        assert r.status_code == 200, r.text
        after = (await client.get(path, headers=shop.headers)).json()["data"]
        assert after["void_reason"] == "rung twice", after
        assert await stock(client, shop) == before
    await check_books(db, shop.company_id)


async def test_an_answer_is_one_branchs_and_one_companys(
    client: httpx.AsyncClient, shop: Shop, db: Database, database_url: str
) -> None:
    stranger = await make_shop(db)
    path = f"/products/{shop.xid('apple')}"
    sale = await sell(client, shop, 1)
    sale_path = f"/sales/{sale['order_id']}"
    for _ in range(2):  # the second time from memory
        assert (await client.get(path, headers=shop.headers)).status_code == 200
        assert (await client.get(sale_path, headers=shop.headers)).status_code == 200
    async with worker(database_url, answer_cache_s=0) as truth:
        for headers in (shop.other_key.headers, stranger.headers):
            for asked in (path, sale_path):
                kept = await client.get(asked, headers=headers)
                read = await truth.get(asked, headers=headers)
                assert (kept.status_code, kept.json()) == (read.status_code, read.json())
                if headers is stranger.headers or asked == sale_path:
                    assert kept.status_code == 404, kept.text
    await check_books(db, shop.company_id)


async def test_a_kept_answer_keeps_its_tag(client: httpx.AsyncClient, shop: Shop) -> None:
    path = f"/products/{shop.xid('apple')}"
    first = await client.get(path, headers=shop.headers)
    tag = first.headers["etag"]
    again = await client.get(path, headers={**shop.headers, "If-None-Match": tag})
    assert again.status_code == 304 and again.headers["etag"] == tag
    await sell(client, shop, 1)
    changed = await client.get(path, headers={**shop.headers, "If-None-Match": tag})
    assert changed.status_code == 200 and changed.headers["etag"] != tag
    sale = await sell(client, shop, 1)
    read = await client.get(f"/sales/{sale['order_id']}", headers=shop.headers)
    held = {**shop.headers, "If-None-Match": read.headers["etag"]}
    assert (await client.get(f"/sales/{sale['order_id']}", headers=held)).status_code == 304


async def test_a_write_of_another_process_of_the_host_is_seen(
    client: httpx.AsyncClient, shop: Shop, db: Database, database_url: str
) -> None:
    before = await stock(client, shop)
    await unseen_stock(db, shop, before + 7)
    assert await stock(client, shop) == before
    # What ``db._committed`` does in the CLI or another worker after its COMMIT.
    told = (
        "import sys; from tillbook.db import identity; from tillbook.kit import generations;"
        "generations.of_database(identity(sys.argv[1])).written(int(sys.argv[2]))"
    )
    subprocess.run([sys.executable, "-c", told, database_url, str(shop.company_id)], check=True)
    assert await stock(client, shop) == before + 7


async def test_what_the_host_cannot_see_is_read_once_the_answer_is_old(
    shop: Shop, db: Database, database_url: str
) -> None:
    async with worker(database_url, answer_cache_s=0.3) as young:
        before = await stock(young, shop)
        await unseen_stock(db, shop, before + 5)
        assert await stock(young, shop) == before
        await asyncio.sleep(0.4)
        assert await stock(young, shop) == before + 5
    async with worker(database_url, answer_cache_s=0) as off:
        assert await stock(off, shop) == before + 5
        await unseen_stock(db, shop, before + 6)
        assert await stock(off, shop) == before + 6


async def test_a_worker_keeps_no_more_than_its_budget(
    client: httpx.AsyncClient, shop: Shop, monkeypatch: Any
) -> None:
    from tillbook.api import answers

    app_answers = client._transport.app.state.answers  # type: ignore[attr-defined]
    items = ("apple", "water", "tea")
    sizes = {}
    for item in items:
        await stock(client, shop, item)
        sizes[item] = next(reversed(app_answers._kept.values())).size
    app_answers._kept.clear()
    app_answers._bytes = 0
    # Room for the two newest answers, not for the third.
    monkeypatch.setattr(answers, "MAX_KEPT_BYTES", sizes["water"] + sizes["tea"])
    for item in items:
        await stock(client, shop, item)
    paths = [path for path, *_ in app_answers._kept]
    assert [p.rsplit("/", 1)[1] for p in paths] == [shop.xid("water"), shop.xid("tea")]
    assert app_answers._bytes == sizes["water"] + sizes["tea"]


def answers_of(client: httpx.AsyncClient) -> Any:
    return client._transport.app.state.answers  # type: ignore[attr-defined]


async def test_nothing_is_kept_while_another_host_writes(
    shop: Shop, db: Database, database_url: str, backend: str
) -> None:
    if backend == "sqlite":
        assert await db.shares_writes()  # a file of this host's
        return
    async with worker(database_url) as mine:
        kept = answers_of(mine)
        before = await stock(mine, shop)
        await unseen_stock(db, shop, before + 3)
        assert await stock(mine, shop) == before  # alone: kept
        # Another host's process of the service connects (its page's signature).
        other = await asyncpg.connect(
            split_pooler(db.url)[0]
            .set(drivername="postgresql")
            .render_as_string(hide_password=False),
            server_settings={"application_name": f"{APPLICATION} 0123456789abcdef"},
            statement_cache_size=0,
        )
        # In a transaction: behind PgBouncer, a client holds a server connection (which
        # then bears its name) only while it is in one.
        await other.execute("BEGIN")
        try:
            await kept.look(db)
            assert not await db.shares_writes()
            assert await stock(mine, shop) == before + 3
            await unseen_stock(db, shop, before + 4)
            assert await stock(mine, shop) == before + 4  # neither kept nor served
        finally:
            await other.close()
        await kept.look(db)
        assert await db.shares_writes()
        assert await stock(mine, shop) == before + 4
        await unseen_stock(db, shop, before)
        assert await stock(mine, shop) == before + 4  # kept again
        await unseen_stock(db, shop, before)


async def test_every_connection_of_the_service_names_its_page(db: Database, backend: str) -> None:
    if backend == "sqlite":
        return
    rows = await db.read(
        lambda s: s.execute(text("SELECT current_setting('application_name') AS name"))
    )
    assert rows.scalar_one() == db.application_name == f"{APPLICATION} {db.generations.signature}"


async def test_lists_and_feed_pages_see_what_another_worker_wrote(
    client: httpx.AsyncClient, shop: Shop, db: Database, database_url: str
) -> None:
    """A page of the list, a search, the change feed's first page and a reference
    list are kept like a read by id, and forgotten by the same writes."""
    apple = shop.products["apple"]

    async def stocks(path: str) -> Decimal:
        r = await client.get(path, headers=shop.headers)
        assert r.status_code == 200, r.text
        rows = r.json()["data"]["data"]  # a page of the list and of the feed alike
        return next(D(str(p["current_stock"])) for p in rows if p["id"] == apple)

    pages = [
        "/products?limit=100",
        "/products?search=apple",
        "/products?updated_since=1970-01-01T00:00:00Z&limit=100",
    ]
    before = {path: await stocks(path) for path in pages}
    await unseen_stock(db, shop, before[pages[0]] + 50)
    assert {path: await stocks(path) for path in pages} == before  # kept
    await unseen_stock(db, shop, before[pages[0]])
    taxes = (await client.get("/taxes", headers=shop.headers)).json()["data"]
    async with worker(database_url) as other:
        await sell(other, shop, 3)
        assert {path: await stocks(path) for path in pages} == {
            path: value - 3 for path, value in before.items()
        }
    assert (await client.get("/taxes", headers=shop.headers)).json()["data"] == taxes
    await check_books(db, shop.company_id)


async def test_an_idle_webhook_worker_forgets_no_answer(
    client: httpx.AsyncClient, shop: Shop, db: Database, settings: Settings
) -> None:
    from tillbook.events.worker import DeliveryWorker

    before = await stock(client, shop)
    await unseen_stock(db, shop, before + 2)
    stamp = db.generations.stamp(shop.company_id)
    await DeliveryWorker(db, settings).run_once()  # two commits, outbox and deliveries
    assert db.generations.stamp(shop.company_id) == stamp
    assert await stock(client, shop) == before  # still kept
    await unseen_stock(db, shop, before)


async def test_a_feed_page_read_from_a_replica_is_not_kept(
    shop: Shop, db: Database, database_url: str, backend: str, monkeypatch: Any
) -> None:
    if backend == "sqlite":
        return  # a replica is PostgreSQL's
    async with worker(database_url) as mine:
        app_db = mine._transport.app.state.db  # type: ignore[attr-defined]
        # The primary standing in for a replica: what matters is that one is named.
        monkeypatch.setattr(app_db, "replica_engine", app_db.engine)
        feed = "/products?updated_since=1970-01-01T00:00:00Z&limit=100"
        apple = shop.products["apple"]

        async def fed() -> Decimal:
            r = await mine.get(feed, headers=shop.headers)
            assert r.status_code == 200, r.text
            rows = r.json()["data"]["data"]
            return next(D(str(p["current_stock"])) for p in rows if p["id"] == apple)

        before = await fed()
        await unseen_stock(db, shop, before + 8)
        assert await fed() == before + 8  # read again: nothing was kept
        await unseen_stock(db, shop, before)


class _Writers:
    """A database for ``Answers.look`` whose other writers the test moves."""

    is_sqlite = False

    def __init__(self) -> None:
        self.alone = True

    async def shares_writes(self) -> bool:
        return self.alone


async def test_a_read_in_flight_when_another_host_came_keeps_nothing(tmp_path: Path) -> None:
    from starlette.requests import Request

    from tillbook.api.answers import Answers
    from tillbook.auth.actor import Actor
    from tillbook.auth.context import AuthContext
    from tillbook.kit.generations import Generations

    answers = Answers(10.0, Generations(tmp_path / "page"))
    writers = _Writers()
    await answers.look(writers)  # type: ignore[arg-type]
    key = AuthContext(Actor.system(), 1, 1, "", False)
    scope = {"type": "http", "path": "/p/1", "query_string": b"", "headers": []}
    reading = asyncio.Event()
    release = asyncio.Event()

    async def read() -> dict[str, str]:
        reading.set()
        await release.wait()
        return {"stock": "old"}

    served = asyncio.create_task(answers.serve(Request(scope), key, read))
    await reading.wait()
    writers.alone = False
    await answers.look(writers)  # type: ignore[arg-type]  another host connects
    writers.alone = True
    await answers.look(writers)  # type: ignore[arg-type]  ... and leaves
    release.set()
    assert (await served).status_code == 200
    assert not answers._kept  # read before the other host's writes: not kept
