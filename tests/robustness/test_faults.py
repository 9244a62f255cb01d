"""Faults under load, on PostgreSQL (loopback only, bounded in time and count).

(a) The server is killed with SIGKILL while clients post sales, then restarted:
    every sale that got a 200 is in the database with its stock movements, journal
    entry and outbox events; no sale is half-written; a retry with the same
    ``unique_id`` of a request whose answer was lost yields exactly one sale.
(b) PostgreSQL connections are killed (``pg_terminate_backend``) during load: every
    answer is a 200 or a 503 with ``Retry-After`` in the envelope, and the service
    recovers by itself.
(c) 100 concurrent mixed writes keep every invariant of DESIGN.md §5.

(d) Without any PostgreSQL: a refused connection and the server's "cannot connect
    now" codes are a 503, never a 500.

Each PostgreSQL test gets a fresh database, created and dropped here; they are
skipped unless ``TILLBOOK_TEST_DATABASE_URL`` names a PostgreSQL server.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
import socket
import subprocess
import sys
import time
from collections import Counter, defaultdict
from collections.abc import AsyncIterator
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import func, select, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncSession

from tests.conftest import _create_pg_database, _drop_pg_database
from tests.factories import Shop, make_shop
from tests.invariants import check_books
from tillbook.app import create_app
from tillbook.config import Settings
from tillbook.db import Database, async_url, create_engine
from tillbook.errors import ServiceUnavailable
from tillbook.migrate import upgrade
from tillbook.models import (
    JournalEntry,
    JournalLine,
    Listing,
    Order,
    OrderItem,
    OutboxEvent,
    StockMovement,
)

PG_URL = os.environ.get("TILLBOOK_TEST_DATABASE_URL")
needs_pg = pytest.mark.skipif(
    not PG_URL, reason="fault tests need PostgreSQL (TILLBOOK_TEST_DATABASE_URL)"
)

CLIENTS = 8
DAY = "2026-11-20"
D = Decimal


# --- a fresh database per test --------------------------------------------------------


@dataclass
class Fresh:
    url: str
    name: str
    db: Database
    shop: Shop


@pytest.fixture
async def fresh() -> AsyncIterator[Fresh]:
    assert PG_URL is not None
    url, name = await _create_pg_database(PG_URL)
    await asyncio.to_thread(upgrade, url)
    db = Database(url, pool_size=5)
    shop = await make_shop(db)
    try:
        yield Fresh(url, name, db, shop)
    finally:
        await db.dispose()
        await _drop_pg_database(PG_URL, name)


async def stock_up(client: httpx.AsyncClient, shop: Shop) -> None:
    body = {
        "user_id": shop.supplier_id,
        "order_date": DAY,
        "product_items": [
            {"xid": shop.xid(code), "quantity": 100_000, "unit_price": "1.25"}
            for code in ("apple", "water", "tea")
        ],
    }
    r = await client.post("/purchases", json=body)
    assert r.status_code == 200, r.text


def sale_body(shop: Shop, unique_id: str, n: int) -> dict[str, Any]:
    """5.50 a sale: on credit, in cash, or split cash + card."""
    tenders: list[dict[str, Any]] = [
        [],
        [{"amount": "5.50", "payment_mode_id": "cash"}],
        [
            {"amount": "3.00", "payment_mode_id": "cash"},
            {"amount": "2.50", "payment_mode_id": "card"},
        ],
    ][n % 3]
    return {
        "user_id": shop.customer_id,
        "order_date": DAY,
        "unique_id": unique_id,
        "product_items": [
            {"xid": shop.xid("apple"), "quantity": 1, "unit_price": "3.50"},
            {"xid": shop.products["water"], "quantity": 2, "unit_price": "1.00"},
        ],
        "all_payments": tenders,
    }


# --- load ---------------------------------------------------------------------------


@dataclass
class Outcome:
    unique_id: str
    status: int | None  # None: no answer (connection refused, reset, cut short)
    body: Any
    headers: dict[str, str]
    error: str | None = None


async def post_sales(
    client: httpx.AsyncClient, shop: Shop, worker: int, stop: asyncio.Event, out: list[Outcome]
) -> None:
    n = 0
    while not stop.is_set():
        unique_id = f"w{worker}-{n}"
        try:
            r = await client.post("/sales", json=sale_body(shop, unique_id, n))
        except httpx.HTTPError as exc:
            out.append(Outcome(unique_id, None, None, {}, type(exc).__name__))
            await asyncio.sleep(0.2)
        else:
            try:
                body = r.json()
            except ValueError:
                body = r.text
            out.append(Outcome(unique_id, r.status_code, body, dict(r.headers)))
            if r.status_code == 503:  # a real client waits Retry-After; a test, briefly
                await asyncio.sleep(0.1)
        n += 1


# --- checks straight against the database --------------------------------------------


async def verify_sales(db: Database, shop: Shop, outcomes: list[Outcome]) -> dict[str, int]:
    """Every 200 is a whole sale; every sale in the database is whole; no orphans."""

    async def load(s: AsyncSession) -> dict[str, Any]:
        cid = shop.company_id
        orders = (
            await s.execute(
                select(Order.id, Order.unique_id, Order.journal_entry_id).where(
                    Order.company_id == cid, Order.order_type == "sales"
                )
            )
        ).all()
        items = (
            await s.execute(
                select(OrderItem.order_id, OrderItem.product_id)
                .join(Order, Order.id == OrderItem.order_id)
                .where(Order.company_id == cid, Order.order_type == "sales")
            )
        ).all()
        moves = (
            await s.execute(
                select(StockMovement.source_id, StockMovement.product_id).where(
                    StockMovement.company_id == cid, StockMovement.source_type == "sale"
                )
            )
        ).all()
        entries = (
            await s.execute(
                select(JournalEntry.id, JournalEntry.source_id, func.count(JournalLine.id))
                .join(JournalLine, JournalLine.entry_id == JournalEntry.id)
                .where(JournalEntry.company_id == cid, JournalEntry.source_type == "sale")
                .group_by(JournalEntry.id, JournalEntry.source_id)
            )
        ).all()
        events = (
            await s.execute(
                select(OutboxEvent.type, OutboxEvent.payload).where(
                    OutboxEvent.company_id == cid,
                    OutboxEvent.type.in_(["order.created", "sales.created", "order.paid"]),
                )
            )
        ).all()
        return {
            "orders": orders,
            "items": items,
            "moves": moves,
            "entries": entries,
            "events": events,
        }

    data = await db.read(load)
    by_uid: dict[str, list[int]] = defaultdict(list)
    entry_of: dict[int, int | None] = {}
    for oid, uid, entry_id in data["orders"]:
        by_uid[uid].append(oid)
        entry_of[oid] = entry_id
    order_ids = set(entry_of)
    item_products: dict[int, set[int]] = defaultdict(set)
    for oid, pid in data["items"]:
        item_products[oid].add(pid)
    move_products: dict[int, set[int]] = defaultdict(set)
    for oid, pid in data["moves"]:
        move_products[oid].add(pid)
    entries_of: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for eid, oid, lines in data["entries"]:
        entries_of[oid].append((eid, lines))
    events_of: dict[int, Counter[str]] = defaultdict(Counter)
    for etype, payload in data["events"]:
        events_of[json.loads(payload)["data"]["id"]][etype] += 1

    # no half-written sale, and nothing that points at a sale that is not there
    for oid in order_ids:
        assert len(item_products[oid]) == 2, f"sale {oid}: items {item_products[oid]}"
        assert move_products[oid] == item_products[oid], f"sale {oid}: stock movements"
        assert len(entries_of[oid]) == 1, f"sale {oid}: journal entries {entries_of[oid]}"
        eid, lines = entries_of[oid][0]
        assert entry_of[oid] == eid and lines >= 2, f"sale {oid}: journal entry {eid}"
        assert events_of[oid]["order.created"] == 1, f"sale {oid}: events {events_of[oid]}"
        assert events_of[oid]["sales.created"] == 1, f"sale {oid}: events {events_of[oid]}"
    assert set(move_products) <= order_ids, "stock movements of a sale that does not exist"
    assert set(entries_of) <= order_ids, "journal entry of a sale that does not exist"
    assert set(events_of) <= order_ids, "events of a sale that does not exist"

    # every 200 is there, once, under its own unique_id
    for o in outcomes:
        if o.status == 200:
            assert by_uid.get(o.unique_id) == [o.body["order_id"]], (
                f"{o.unique_id}: answered 200 as {o.body['order_id']}, "
                f"stored as {by_uid.get(o.unique_id)}"
            )
            paid = o.body["payment_status"] == "paid"
            assert events_of[o.body["order_id"]]["order.paid"] == (1 if paid else 0)
    assert all(len(ids) == 1 for ids in by_uid.values()), "a unique_id stored twice"
    return {"orders": len(order_ids)}


async def retry_unanswered(
    client: httpx.AsyncClient, shop: Shop, outcomes: list[Outcome]
) -> list[Outcome]:
    """The client's side of the contract: a request without a 200 is sent again with
    the same ``unique_id``; it is recorded exactly once, whatever happened before."""
    pending = [o for o in outcomes if o.status != 200]
    again: list[Outcome] = []

    async def worker(share: list[Outcome]) -> None:
        for o in share:
            n = int(o.unique_id.rsplit("-", 1)[1])
            r = await client.post("/sales", json=sale_body(shop, o.unique_id, n))
            assert r.status_code == 200, (o, r.status_code, r.text)
            again.append(Outcome(o.unique_id, 200, r.json(), dict(r.headers)))

    await asyncio.gather(*(worker(pending[i::CLIENTS]) for i in range(CLIENTS)))
    return again


# --- (a) SIGKILL during load ----------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class Server:
    """``tillbook serve --no-worker`` as a child process on a loopback port."""

    def __init__(self, url: str, port: int, log: Path):
        self.url, self.port, self.log = url, port, log
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        env = {
            **os.environ,
            "TILLBOOK_DATABASE_URL": self.url,
            "TILLBOOK_LOG_LEVEL": "WARNING",
        }
        with self.log.open("ab") as log:
            self.proc = subprocess.Popen(
                [
                    *(sys.executable, "-m", "tillbook.cli", "serve", "--no-worker"),
                    *("--host", "127.0.0.1", "--port", str(self.port)),
                ],
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    async def ready(self, client: httpx.AsyncClient, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.proc is not None and self.proc.poll() is None, self.tail()
            try:
                if (await client.get("/warehouses")).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            await asyncio.sleep(0.1)
        raise AssertionError(f"server not ready in {timeout}s\n{self.tail()}")

    def kill(self) -> None:
        assert self.proc is not None
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=10)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.kill()

    def tail(self) -> str:
        return self.log.read_text(errors="replace")[-3000:] if self.log.exists() else ""


@needs_pg
async def test_sigkill_during_load_loses_no_answered_sale(fresh: Fresh, tmp_path: Path) -> None:
    shop = fresh.shop
    port = free_port()
    server = Server(fresh.url, port, tmp_path / "server.log")
    base = f"http://127.0.0.1:{port}/api/v1/public"
    outcomes: list[Outcome] = []
    async with httpx.AsyncClient(base_url=base, headers=shop.headers, timeout=15) as client:
        try:
            server.start()
            await server.ready(client)
            await stock_up(client, shop)
            stop = asyncio.Event()
            workers = [
                asyncio.create_task(post_sales(client, shop, i, stop, outcomes))
                for i in range(CLIENTS)
            ]
            await asyncio.sleep(2.0)
            answered_before = sum(o.status == 200 for o in outcomes)
            server.kill()
            killed_at = len(outcomes)
            server.start()
            await server.ready(client)
            await asyncio.sleep(1.5)
            stop.set()
            await asyncio.gather(*workers)

            after = outcomes[killed_at:]
            assert answered_before > 20, f"only {answered_before} sales before the kill"
            assert sum(o.status == 200 for o in after) > 10, "no sales after the restart"
            bad = [o for o in outcomes if o.status not in (200, None)]
            assert not bad, bad[:5]
            # in flight at the kill: sent, answer lost (outcome unknown to the client)
            in_flight = [o for o in outcomes if o.status is None and o.error != "ConnectError"]
            refused = sum(o.error == "ConnectError" for o in outcomes)
            again = await retry_unanswered(client, shop, outcomes)
            replayed = sum(o.headers.get("idempotent-replayed") == "true" for o in again)
        finally:
            server.stop()
    figures = await verify_sales(fresh.db, shop, outcomes + again)
    await check_books(fresh.db, shop.company_id)
    answered = sum(o.status == 200 for o in outcomes)
    print(
        f"\nSIGKILL: {len(outcomes)} requests: {answered} answered 200, {len(in_flight)} in "
        f"flight at the kill, {refused} refused while down; retried {len(again)} "
        f"({replayed} replayed as already recorded); {figures['orders']} sales stored"
    )


# --- (b) connections killed, the database restarted, during load -----------------------


async def terminate_backends(url: str, name: str) -> int:
    """Kill every connection to database ``name`` but this one."""
    admin = create_engine(
        make_url(async_url(url)).set(database="postgres").render_as_string(hide_password=False),
        isolation_level="AUTOCOMMIT",
    )
    try:
        async with admin.connect() as conn:
            killed = (
                await conn.execute(
                    text(
                        "SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) "
                        "FROM pg_stat_activity WHERE datname = :db AND pid <> pg_backend_pid()"
                    ),
                    {"db": name},
                )
            ).scalar_one()
    finally:
        await admin.dispose()
    return int(killed)


class Outage:
    """A loopback TCP relay in front of PostgreSQL. ``down()`` is what the service sees
    when PostgreSQL restarts: every connection dropped, new ones refused; ``up()``
    listens again on the same port."""

    def __init__(self, host: str, port: int):
        self.target = (host, port)
        self.port = 0
        self.server: asyncio.Server | None = None
        self.links: set[asyncio.StreamWriter] = set()

    async def up(self) -> None:
        self.server = await asyncio.start_server(self._relay, "127.0.0.1", self.port)
        self.port = self.server.sockets[0].getsockname()[1]

    async def down(self) -> None:
        assert self.server is not None
        self.server.close()
        for writer in list(self.links):
            writer.transport.abort()
        self.links.clear()
        await self.server.wait_closed()

    async def _relay(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.target)
        except OSError:
            writer.transport.abort()
            return
        self.links |= {writer, up_writer}

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            try:
                while data := await src.read(65536):
                    dst.write(data)
                    await dst.drain()
            except OSError:
                pass
            finally:
                dst.transport.abort()
                self.links.discard(dst)

        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))


async def run_load_with_faults(
    fresh: Fresh, app_url: str, faults: list[Any]
) -> tuple[list[Outcome], list[Outcome]]:
    """8 clients post sales against the in-process app while ``faults`` run one after
    another (0.7 s apart); then 10 more sales, and the retries of every non-200."""
    shop = fresh.shop
    app_db = Database(app_url, pool_size=CLIENTS)
    app = create_app(Settings(database_url=app_url), database=app_db)
    outcomes: list[Outcome] = []
    try:
        async with (
            app.router.lifespan_context(app),
            httpx.AsyncClient(
                transport=httpx.ASGITransport(app=app),
                base_url="http://testserver/api/v1/public",
                headers=shop.headers,
            ) as client,
        ):
            await stock_up(client, shop)
            stop = asyncio.Event()
            workers = [
                asyncio.create_task(post_sales(client, shop, i, stop, outcomes))
                for i in range(CLIENTS)
            ]
            for fault in faults:
                await asyncio.sleep(0.7)
                await fault()
            await asyncio.sleep(0.7)
            stop.set()
            await asyncio.gather(*workers)

            wrong = [o for o in outcomes if o.status not in (200, 503)]
            assert not wrong, wrong[:5]
            for o in outcomes:
                if o.status == 503:
                    assert o.headers.get("retry-after", "").isdigit(), o
                    assert o.body["status"] == "error" and isinstance(o.body["message"], str), o
            # recovered by itself: the next sales succeed, with no restart
            for n in range(10):
                r = await client.post("/sales", json=sale_body(shop, f"after-{n}", n))
                assert r.status_code == 200, r.text
                outcomes.append(Outcome(f"after-{n}", 200, r.json(), dict(r.headers)))
            again = await retry_unanswered(client, shop, outcomes)
    finally:
        await app_db.dispose()
    await verify_sales(fresh.db, shop, outcomes + again)
    await check_books(fresh.db, shop.company_id)
    return outcomes, again


def summary(outcomes: list[Outcome], again: list[Outcome]) -> str:
    statuses = dict(Counter(o.status for o in outcomes))
    replayed = sum(o.headers.get("idempotent-replayed") == "true" for o in again)
    return (
        f"{len(outcomes)} requests {statuses}; {len(again)} retried with their unique_id "
        f"({replayed} had been recorded before their 503)"
    )


class DbLog(logging.Handler):
    """The messages ``tillbook.db`` logs: how the service met a lost connection."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())

    def __enter__(self) -> DbLog:
        logger = logging.getLogger("tillbook.db")
        self.level_before = logger.level
        logger.setLevel(logging.INFO)
        logger.addHandler(self)
        return self

    def __exit__(self, *_exc: object) -> None:
        logger = logging.getLogger("tillbook.db")
        logger.removeHandler(self)
        logger.setLevel(self.level_before)


@needs_pg
async def test_killed_connections_answer_503_and_recover(fresh: Fresh) -> None:
    """A request whose connection is killed before COMMIT runs again on a fresh one
    (nothing was written); one killed during COMMIT answers 503 and its retry replays
    or redoes it. Either way: only 200 or 503, every 200 whole, no restart needed."""
    kills: list[int] = []

    async def kill() -> None:
        kills.append(await terminate_backends(fresh.url, fresh.name))

    with DbLog() as db_log:
        outcomes, again = await run_load_with_faults(fresh, fresh.url, [kill, kill, kill])
    assert min(kills) >= 1, f"killed backends per round: {kills}"
    retried = [m for m in db_log.messages if "connection lost" in m]
    answered_503 = sum(o.status == 503 for o in outcomes)
    assert retried or answered_503, f"no request met a killed connection: {db_log.messages}"
    print(
        f"\nconnections killed {kills}: {len(retried)} units re-run on a fresh connection; "
        f"{summary(outcomes, again)}"
    )


@needs_pg
async def test_database_restart_answers_503_and_recovers(fresh: Fresh) -> None:
    url = make_url(async_url(fresh.url))
    relay = Outage(url.host or "127.0.0.1", url.port or 5432)
    await relay.up()
    app_url = url.set(port=relay.port).render_as_string(hide_password=False)
    downtime = 0.8

    async def restart() -> None:
        await relay.down()
        await asyncio.sleep(downtime)
        await relay.up()

    try:
        outcomes, again = await run_load_with_faults(fresh, app_url, [restart])
    finally:
        await relay.down()
    assert any(o.status == 503 for o in outcomes), "no request met the outage"
    print(f"\ndatabase down {downtime}s: {summary(outcomes, again)}")


# --- (c) 100 concurrent mixed writes --------------------------------------------------


@needs_pg
async def test_hundred_concurrent_mixed_writes_keep_the_books(fresh: Fresh) -> None:
    shop = fresh.shop
    app_db = Database(fresh.url, pool_size=10)
    app = create_app(Settings(database_url=fresh.url), database=app_db)
    try:
        async with (
            app.router.lifespan_context(app),
            httpx.AsyncClient(
                transport=httpx.ASGITransport(app=app),
                base_url="http://testserver/api/v1/public",
                headers=shop.headers,
            ) as client,
        ):
            await stock_up(client, shop)
            invoices = []
            for n in range(5):
                r = await client.post("/sales", json=sale_body(shop, f"credit-{n}", 0))
                assert r.status_code == 200, r.text
                invoices.append(r.json())
            requests = mixed_writes(shop, invoices)
            assert len(requests) == 100
            started = time.monotonic()
            answers = await asyncio.gather(
                *(client.post(path, json=body) for path, body in requests)
            )
            elapsed = time.monotonic() - started
    finally:
        await app_db.dispose()

    statuses = Counter(
        (path, r.status_code) for (path, _), r in zip(requests, answers, strict=True)
    )
    refused = [r.json()["message"] for r in answers if r.status_code != 200]
    assert all(r.status_code in (200, 422) for r in answers), statuses
    # the only refusals: allocations beyond an invoice's due balance, lost to a concurrent payer
    assert all("due" in m or "more than" in m for m in refused), refused
    assert sum(r.status_code == 200 for r in answers) >= 90, statuses

    async def stocks(s: AsyncSession) -> list[Decimal]:
        rows = await s.execute(
            select(Listing.current_stock).where(Listing.company_id == shop.company_id)
        )
        return list(rows.scalars())

    assert all(q >= 0 for q in await fresh.db.read(stocks))
    await check_books(fresh.db, shop.company_id)
    print(f"\n100 mixed writes in {elapsed:.2f}s: {dict(statuses)}")


def mixed_writes(shop: Shop, invoices: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    """30 sales, 15 purchases, 20 customer payments against 5 invoices (more than their
    due: some must be refused), 10 supplier payments, 20 stock adjustments, 5 returns."""
    out: list[tuple[str, dict[str, Any]]] = []
    for n in range(30):
        out.append(("/sales", sale_body(shop, f"mix-sale-{n}", n)))
    for n in range(15):
        body: dict[str, Any] = {
            "user_id": shop.supplier_id,
            "order_date": DAY,
            "product_items": [
                {
                    "xid": shop.xid(("apple", "water", "tea")[n % 3]),
                    "quantity": 3,
                    "unit_price": "1.10",
                }
            ],
        }
        if n % 2:
            body["all_payments"] = [{"amount": "1.00", "payment_mode_id": "cash"}]
        out.append(("/purchases", body))
    for n in range(20):
        invoice = invoices[n % len(invoices)]
        out.append(
            (
                "/payments",
                {
                    "user_id": shop.customer_id,
                    "payment_type": "in",
                    "amount": "1.50",
                    "payment_mode_id": "card" if n % 2 else "cash",
                    "invoices": [{"order_id": invoice["order_id"], "amount": "1.50"}],
                },
            )
        )
    for _n in range(10):
        out.append(
            (
                "/payments",
                {
                    "user_id": shop.supplier_id,
                    "payment_type": "out",
                    "amount": "2.00",
                    "payment_mode_id": "cash",
                },
            )
        )
    for n in range(20):
        out.append(
            (
                "/stock-adjustments",
                {
                    "product_id": shop.xid(("apple", "water")[n % 2]),
                    "quantity": "2",
                    "adjustment_type": "add" if n % 3 == 0 else "subtract",
                },
            )
        )
    for _n in range(5):
        out.append(
            (
                "/sales-returns",
                {
                    "user_id": shop.customer_id,
                    "order_date": DAY,
                    "items": [
                        {"product_id": shop.products["water"], "quantity": 1, "unit_price": 1}
                    ],
                },
            )
        )
    # interleave the kinds so that they really run side by side
    return [out[i] for i in sorted(range(len(out)), key=lambda i: (i * 37) % len(out))]


# --- (d) the mapping itself, no PostgreSQL needed ---------------------------------------


async def test_refused_connection_is_a_503() -> None:
    db = Database(f"postgresql://postgres@127.0.0.1:{free_port()}/nowhere")
    try:
        for run in (db.read, db.write):
            with pytest.raises(ServiceUnavailable) as caught:
                await run(lambda s: s.execute(text("SELECT 1")))
            assert caught.value.status_code == 503
            assert caught.value.headers["Retry-After"].isdigit()
    finally:
        await db.dispose()


class DriverError(Exception):
    def __init__(self, sqlstate: str):
        super().__init__(f"sqlstate {sqlstate}")
        self.sqlstate = sqlstate


@pytest.mark.parametrize(
    ("sqlstate", "unavailable"),
    [
        ("57P01", True),  # admin shutdown: the connection was terminated
        ("57P03", True),  # cannot connect now: starting up or shutting down
        ("53300", True),  # too many connections
        ("08006", True),  # connection failure
        ("42P01", False),  # undefined table: a bug, stays a 500
        ("22003", False),  # numeric out of range
    ],
)
def test_database_errors_by_sqlstate(sqlstate: str, unavailable: bool) -> None:
    exc = DBAPIError("SELECT 1", None, DriverError(sqlstate))
    mapped = Database._unavailable(exc)
    assert isinstance(mapped, ServiceUnavailable) is unavailable
