"""Webhook delivery when things go wrong, against a real HTTP receiver on 127.0.0.1:
the receiver is down for a while, the worker process is killed mid-send, or told to
stop mid-send. Nothing is lost; a receiver that is up gets each delivery once.

(Two workers at once are in ``test_webhooks.py``.)
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from tests.invariants import check_books
from tests.outbox_quiet import quiet_outbox  # noqa: F401  (fixture)
from tillbook.config import Settings
from tillbook.events import webhook_service as service
from tillbook.events.urlpolicy import UrlPolicy
from tillbook.events.worker import DeliveryWorker
from tillbook.models import DeliveryAttempt, OutboxEvent, Webhook, WebhookDelivery
from tillbook.receiving import verify

CLI = [sys.executable, "-m", "tillbook.cli"]


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes

    @property
    def json(self) -> dict[str, Any]:
        data: dict[str, Any] = json.loads(self.body)
        return data

    @property
    def delivery(self) -> str:
        return self.headers["X-Service-Delivery"]


@dataclass
class Receiver:
    """A small HTTP/1.1 receiver on 127.0.0.1 that can go down and come back on the
    same port. ``requests`` is every request read; ``answered`` those whose answer
    was written out."""

    port: int = 0
    delay: float = 0.0
    statuses: list[int] = field(default_factory=list)  # answers in order, then 200
    requests: list[Received] = field(default_factory=list)
    answered: list[Received] = field(default_factory=list)
    server: asyncio.Server | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hook"

    async def start(self) -> None:
        self.server = await asyncio.start_server(self._handle, "127.0.0.1", self.port)
        self.port = self.server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        if self.server is not None:
            self.server.close()
            await self.server.wait_closed()
            self.server = None

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            _method, path, _version = lines[0].split(" ", 2)
            headers: dict[str, str] = {}
            for line in lines[1:]:
                if line:
                    name, _, value = line.partition(":")
                    headers[name.strip()] = value.strip()
            length = next((int(v) for k, v in headers.items() if k.lower() == "content-length"), 0)
            got = Received(path, headers, await reader.readexactly(length))
            self.requests.append(got)
            if self.delay:
                await asyncio.sleep(self.delay)
            status = self.statuses.pop(0) if self.statuses else 200
            writer.write(
                f"HTTP/1.1 {status} X\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok".encode()
            )
            await writer.drain()
            self.answered.append(got)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass  # the sender went away (a killed worker)
        finally:
            writer.close()


def fast(database_url: str, **extra: Any) -> Settings:
    return Settings(
        database_url=database_url,
        webhook_backoff_base=0.01,
        webhook_backoff_cap=0.05,
        webhook_timeout=3.0,
        **({"webhook_allow_private_networks": True} | extra),  # receivers are on 127.0.0.1
    )


async def add_webhook(
    db: Any, company_id: int, url: str, events: list[str] | None = None
) -> tuple[Webhook, str]:
    """Register as the service does, with private networks allowed (a local receiver)."""
    new = await service.check_new_webhook(url, events, UrlPolicy(allow_private=True))
    return await db.write(lambda s: service.add_webhook(s, company_id, new))


def sale_body(shop: Any, *, paid: bool = False) -> dict[str, Any]:
    body: dict[str, Any] = {
        "user_id": shop.customer_id,
        "order_date": "2026-11-20",
        "product_items": [{"xid": shop.xid("apple"), "quantity": 1, "unit_price": 3.5}],
    }
    if paid:
        body["all_payments"] = [{"amount": 3.5, "payment_mode_id": "cash"}]
    return body


async def make_sales(client: Any, shop: Any, count: int, *, paid_every: int = 0) -> None:
    for i in range(count):
        paid = bool(paid_every) and i % paid_every == 0
        r = await client.post("/sales", json=sale_body(shop, paid=paid), headers=shop.headers)
        assert r.status_code == 200, r.text


async def event_ids(db: Any, company_id: int, types: set[str] | None = None) -> set[str]:
    rows = await db.read(
        lambda s: s.execute(
            select(OutboxEvent.event_id, OutboxEvent.type).where(
                OutboxEvent.company_id == company_id
            )
        )
    )
    return {eid for eid, type_ in rows.all() if types is None or type_ in types}


async def deliveries_of(db: Any, webhook_id: int) -> list[WebhookDelivery]:
    rows = await db.read(
        lambda s: s.scalars(
            select(WebhookDelivery)
            .where(WebhookDelivery.webhook_id == webhook_id)
            .order_by(WebhookDelivery.id)
        )
    )
    return list(rows)


async def attempts_of(db: Any, delivery_id: int) -> list[DeliveryAttempt]:
    return list(
        await db.read(
            lambda s: s.scalars(
                select(DeliveryAttempt)
                .where(DeliveryAttempt.delivery_id == delivery_id)
                .order_by(DeliveryAttempt.id)
            )
        )
    )


async def run_until(
    worker: DeliveryWorker, done: Callable[[], Any], *, seconds: float, what: str
) -> None:
    """Worker passes until ``done()`` (sync or async) is true, within ``seconds``."""
    deadline = time.monotonic() + seconds
    while True:
        await worker.run_once()
        result = done()
        if asyncio.iscoroutine(result):
            result = await result
        if result:
            return
        assert time.monotonic() < deadline, f"timed out waiting until {what}"
        await asyncio.sleep(0.02)


def worker_env(database_url: str, **settings: str) -> dict[str, str]:
    env = dict(os.environ)
    env["TILLBOOK_DATABASE_URL"] = database_url
    env["TILLBOOK_MASTER_KEY"] = os.environ["TILLBOOK_MASTER_KEY"]
    env.pop("TILLBOOK_REDIS_URL", None)
    env["TILLBOOK_WEBHOOK_ALLOW_PRIVATE_NETWORKS"] = "true"  # the receiver is on 127.0.0.1
    env.update({f"TILLBOOK_{name.upper()}": value for name, value in settings.items()})
    return env


def start_worker(database_url: str, workdir: Path, **settings: str) -> subprocess.Popen[bytes]:
    """``tillbook worker`` in its own process, as an operator runs it."""
    return subprocess.Popen(
        [*CLI, "worker"],
        env=worker_env(database_url, **settings),
        cwd=workdir,
        stdin=subprocess.DEVNULL,
        stdout=(workdir / "worker.log").open("wb"),
        stderr=subprocess.STDOUT,
    )


async def first_requests(rec: Receiver, proc: subprocess.Popen[bytes], workdir: Path) -> None:
    deadline = time.monotonic() + 30
    while not rec.requests:
        assert proc.poll() is None, (workdir / "worker.log").read_text()
        assert time.monotonic() < deadline, "the worker sent nothing"
        await asyncio.sleep(0.02)


def end(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.kill()
    proc.wait(timeout=10)


# ---------------------------------------------------------------- (a) receiver down


@pytest.mark.usefixtures("quiet_outbox")
async def test_receiver_down_then_back_gets_every_event_once(client, shop, db, database_url):
    rec = Receiver()
    await rec.start()
    await rec.stop()  # nothing listens on this port now
    hook, secret = await add_webhook(db, shop.company_id, rec.url)
    await make_sales(client, shop, 4, paid_every=2)  # 4 x (order.created, sales.created) + 2 paid
    expected = await event_ids(db, shop.company_id)
    assert len(expected) == 10

    async with DeliveryWorker(db, fast(database_url)) as worker:

        async def each_tried_three_times() -> bool:
            rows = await deliveries_of(db, hook.id)
            return len(rows) == len(expected) and all(d.attempts >= 3 for d in rows)

        await run_until(worker, each_tried_three_times, seconds=60, what="every delivery failed")
        down = await deliveries_of(db, hook.id)
        assert {d.status for d in down} == {"retrying"}
        assert all(d.last_status_code is None and d.last_error for d in down)
        assert rec.requests == []

        await rec.start()  # back up, on the same port
        try:

            async def all_delivered() -> bool:
                rows = await deliveries_of(db, hook.id)
                return all(d.status == "delivered" for d in rows)

            await run_until(worker, all_delivered, seconds=60, what="every delivery arrived")
            for _ in range(3):  # and nothing more goes out
                await worker.run_once()
                await asyncio.sleep(0.06)
        finally:
            await rec.stop()

    # every event arrived, each exactly once, each delivery in one successful attempt
    assert sorted(r.json["id"] for r in rec.requests) == sorted(expected)
    assert rec.answered == rec.requests
    rows = await deliveries_of(db, hook.id)
    assert sorted(r.delivery for r in rec.requests) == sorted(d.delivery_uid for d in rows)
    for got in rec.requests:
        assert verify(got.body, got.headers, secret)
        assert got.json["type"] == got.headers["X-Service-Event"]
    for d in rows:
        log = await attempts_of(db, d.id)
        assert len(log) == d.attempts >= 4
        assert [a.status_code for a in log][-1] == 200
        assert all(a.status_code is None and a.error for a in log[:-1])
    await check_books(db, shop.company_id)


# ---------------------------------------------------------------- (b) worker killed


@pytest.mark.usefixtures("quiet_outbox")
async def test_killed_worker_loses_nothing(client, shop, db, database_url, tmp_path):
    rec = Receiver(delay=1.0)  # slow: every delivery is in flight for a second
    await rec.start()
    types = ["order.created", "sales.created"]
    hook, secret = await add_webhook(db, shop.company_id, rec.url, types)
    try:
        await make_sales(client, shop, 5)
        expected = await event_ids(db, shop.company_id, set(types))
        assert len(expected) == 10

        # A short claim lease (timeout 3 s + grace 0.5 s) so the test need not wait 40 s.
        proc = start_worker(
            database_url,
            tmp_path,
            webhook_backoff_base="0.01",
            webhook_backoff_cap="0.05",
            webhook_timeout="3",
            webhook_lock_grace="0.5",
        )
        try:
            await first_requests(rec, proc, tmp_path)
            await asyncio.sleep(0.3)  # requests in the receiver's hands, none answered yet
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=10)
        finally:
            end(proc)
        assert proc.returncode == -signal.SIGKILL
        sent_before_kill = {r.delivery for r in rec.requests}

        rows = await deliveries_of(db, hook.id)
        assert len(rows) == 10  # fanned out by the dead worker
        in_flight = [d for d in rows if d.status == "delivering"]
        assert in_flight, [d.status for d in rows]
        assert not [d for d in rows if d.status == "delivered"]
        assert all(d.attempts == 0 for d in rows)  # no attempt was ever recorded
        assert sent_before_kill <= {d.delivery_uid for d in in_flight}

        rec.delay = 0.2
        async with DeliveryWorker(db, fast(database_url)) as fresh:
            # the dead worker's claims are still locked: a fresh worker leaves them alone...
            await fresh.run_once()
            in_flight_uids = {d.delivery_uid for d in in_flight}
            assert {r.delivery for r in rec.requests} & in_flight_uids == sent_before_kill
            assert len(rec.requests) == len(sent_before_kill) + sum(
                r.delivery not in in_flight_uids for r in rec.requests
            )

            # ...and takes them over once the lease has run out
            async def all_delivered() -> bool:
                return all(d.status == "delivered" for d in await deliveries_of(db, hook.id))

            await run_until(fresh, all_delivered, seconds=60, what="the claims were taken over")
    finally:
        await rec.stop()

    # every event arrived at least once; those in flight at the kill arrived again
    assert {r.json["id"] for r in rec.requests} == expected
    assert {r.json["id"] for r in rec.answered} == expected
    for uid in sent_before_kill:
        assert sum(r.delivery == uid for r in rec.requests) >= 2
    assert all(verify(r.body, r.headers, secret) for r in rec.requests)
    rows = await deliveries_of(db, hook.id)
    assert [d.status for d in rows] == ["delivered"] * 10
    for d in rows:
        assert [a.status_code for a in await attempts_of(db, d.id)] == [200]
    await check_books(db, shop.company_id)


# ---------------------------------------------------------------- stopped, not killed


@pytest.mark.usefixtures("quiet_outbox")
async def test_sigterm_finishes_the_deliveries_in_flight(client, shop, db, database_url, tmp_path):
    rec = Receiver(delay=1.0)
    await rec.start()
    hook, secret = await add_webhook(db, shop.company_id, rec.url, ["order.created"])
    try:
        await make_sales(client, shop, 3)
        proc = start_worker(database_url, tmp_path, webhook_backoff_base="0.01")
        try:
            await first_requests(rec, proc, tmp_path)
            proc.send_signal(signal.SIGTERM)  # while the receiver still holds the requests
            deadline = time.monotonic() + 15
            while proc.poll() is None:
                assert time.monotonic() < deadline, "the worker did not stop"
                await asyncio.sleep(0.05)
        finally:
            end(proc)
        assert proc.returncode == 0, (tmp_path / "worker.log").read_text()
    finally:
        await rec.stop()
    rows = await deliveries_of(db, hook.id)
    answered = {r.delivery for r in rec.answered}
    # what was in flight was answered and recorded before the worker exited
    assert answered == {r.delivery for r in rec.requests}
    for d in rows:
        if d.delivery_uid in answered:
            assert d.status == "delivered" and d.attempts == 1
        else:  # claimed after the signal? never: the worker stops claiming
            assert d.status == "pending" and d.attempts == 0
    assert any(d.status == "delivered" for d in rows)
    assert all(verify(r.body, r.headers, secret) for r in rec.requests)
    # leave no delivery due for later tests' workers
    await db.write(lambda s: service.disable_webhook(s, shop.company_id, hook.id))
    await check_books(db, shop.company_id)
