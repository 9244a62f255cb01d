"""Webhook endpoints, the outbox delivery worker against a real local receiver,
and the integrator's ``verify`` helper."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import pytest
from sqlalchemy import func, select, update

from tests.factories import by_id, make_shop
from tests.invariants import check_books
from tests.outbox_quiet import quiet_outbox  # noqa: F401  (fixture)
from tillbook.config import Settings
from tillbook.errors import NotFound, ValidationFailed
from tillbook.events import webhook_service as service
from tillbook.events.urlpolicy import UrlPolicy
from tillbook.events.worker import DeliveryWorker
from tillbook.models import DeliveryAttempt, OutboxEvent, Webhook, WebhookDelivery
from tillbook.receiving import sign, verify


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes

    @property
    def json(self) -> dict:
        return json.loads(self.body)


@dataclass
class Receiver:
    """A tiny HTTP/1.1 server on 127.0.0.1 that records every request."""

    statuses: list[int] = field(default_factory=list)  # answers in order, then 200
    requests: list[Received] = field(default_factory=list)
    delay: float = 0.0
    port: int = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hook"

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            _method, path, _version = lines[0].split(" ", 2)
            headers: dict[str, str] = {}
            for line in lines[1:]:
                if line:
                    name, _, value = line.partition(":")
                    headers[name.strip()] = value.strip()
            length = int(next((v for k, v in headers.items() if k.lower() == "content-length"), 0))
            body = await reader.readexactly(length)
            self.requests.append(Received(path, headers, body))
            if self.delay:
                await asyncio.sleep(self.delay)
            status = self.statuses.pop(0) if self.statuses else 200
            writer.write(
                f"HTTP/1.1 {status} X\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok".encode()
            )
            await writer.drain()
        finally:
            writer.close()

    def of_type(self, event_type: str) -> list[Received]:
        return [r for r in self.requests if r.headers.get("X-Service-Event") == event_type]


@pytest.fixture
async def receiver() -> AsyncIterator[Receiver]:
    rec = Receiver()
    server = await asyncio.start_server(rec.handle, "127.0.0.1", 0)
    rec.port = server.sockets[0].getsockname()[1]
    yield rec
    server.close()
    await server.wait_closed()


def fast_settings(database_url: str) -> Settings:
    return Settings(
        database_url=database_url,
        webhook_backoff_base=0.01,
        webhook_backoff_cap=0.02,
        webhook_timeout=5.0,
        webhook_allow_private_networks=True,  # the receiver listens on 127.0.0.1
    )


def sale_body(shop, quantity=1):
    return {
        "user_id": shop.customer_id,
        "order_date": "2026-11-20",
        "product_items": [{"xid": shop.xid("apple"), "quantity": quantity, "unit_price": 3.5}],
    }


LOCAL = UrlPolicy(allow_private=True)  # the receiver listens on 127.0.0.1


async def register(db, company_id, url, events=None):
    new = await service.check_new_webhook(url, events, LOCAL)
    return await db.write(lambda s: service.add_webhook(s, company_id, new))


async def deliveries_of(db, webhook_id):
    rows = await db.read(
        lambda s: s.scalars(
            select(WebhookDelivery)
            .where(WebhookDelivery.webhook_id == webhook_id)
            .order_by(WebhookDelivery.id)
        )
    )
    return list(rows)


async def drain(worker, until, *, rounds=100):
    for _ in range(rounds):
        await worker.run_once()
        if until():
            return
        await asyncio.sleep(0.02)
    raise AssertionError("the worker did not get there")


@pytest.mark.usefixtures("quiet_outbox")
async def test_sale_is_delivered_signed(client, shop, db, database_url, receiver):
    hook, secret = await register(db, shop.company_id, receiver.url)
    assert secret.startswith("whsec_") and len(secret) == 6 + 32
    stored = await db.read(lambda s: by_id(s, Webhook, hook.id))
    assert secret not in stored.secret_encrypted
    r = await client.post("/sales", json=sale_body(shop), headers=shop.headers)
    assert r.status_code == 200, r.text
    invoice = r.json()["invoice_number"]

    async with DeliveryWorker(db, fast_settings(database_url)) as worker:
        await drain(worker, lambda: len(receiver.requests) >= 2)
    types = sorted(r.headers["X-Service-Event"] for r in receiver.requests)
    assert types == ["order.created", "sales.created"]
    for got in receiver.requests:
        assert got.path == "/hook"
        assert verify(got.body, got.headers, secret)
        assert got.headers["Authorization"] == f"Bearer {secret}"
        assert got.headers["Content-Type"] == "application/json"
        assert got.headers["X-Service-Signature"] == sign(got.body, secret)
        assert got.headers["X-Service-Delivery"].startswith("dlv_")
        assert abs(int(got.headers["X-Service-Timestamp"]) - dt.datetime.now().timestamp()) < 60
        payload = got.json
        assert set(payload) == {"id", "type", "created_at", "company_id", "warehouse_id", "data"}
        assert payload["id"].startswith("evt_")
        assert payload["type"] == got.headers["X-Service-Event"]
        assert payload["created_at"].endswith("Z")
        assert payload["company_id"] == shop.company_id
        assert payload["warehouse_id"] == shop.warehouse_id
        assert payload["data"]["invoice_number"] == invoice
    # the exact stored bytes were sent
    events = await db.read(
        lambda s: s.scalars(select(OutboxEvent).where(OutboxEvent.company_id == shop.company_id))
    )
    stored_payloads = {e.payload.encode() for e in events}
    assert {got.body for got in receiver.requests} <= stored_payloads
    assert all(
        e.dispatched
        for e in await db.read(
            lambda s: s.scalars(
                select(OutboxEvent).where(OutboxEvent.company_id == shop.company_id)
            )
        )
    )
    rows = await deliveries_of(db, hook.id)
    assert [d.status for d in rows] == ["delivered", "delivered"]
    assert all(d.attempts == 1 and d.delivered_at is not None for d in rows)
    attempts = await db.read(
        lambda s: s.scalars(
            select(DeliveryAttempt).where(DeliveryAttempt.delivery_id.in_([d.id for d in rows]))
        )
    )
    assert sorted(a.status_code for a in attempts) == [200, 200]
    # nothing more to send
    async with DeliveryWorker(db, fast_settings(database_url)) as worker:
        await worker.run_once()
    assert len(receiver.requests) == 2
    await check_books(db, shop.company_id)


@pytest.mark.usefixtures("quiet_outbox")
async def test_only_subscribed_events_of_the_company(client, shop, db, database_url, receiver):
    other = await make_shop(db)
    only_paid, _ = await register(db, shop.company_id, receiver.url + "?paid", ["order.paid"])
    _, other_secret = await register(db, other.company_id, receiver.url + "?other")
    r = await client.post("/sales", json=sale_body(shop), headers=shop.headers)
    assert r.status_code == 200
    async with DeliveryWorker(db, fast_settings(database_url)) as worker:
        await worker.run_once()
        await worker.run_once()
    # the other company's webhook hears nothing; the order.paid-only webhook hears no
    # unpaid sale
    assert receiver.requests == []
    assert await deliveries_of(db, only_paid.id) == []
    # now a sale of the other company, paid in cash
    body = sale_body(other) | {"all_payments": [{"amount": 3.5, "payment_mode_id": "cash"}]}
    r = await client.post("/sales", json=body, headers=other.headers)
    assert r.status_code == 200, r.text
    async with DeliveryWorker(db, fast_settings(database_url)) as worker:
        await drain(worker, lambda: len(receiver.requests) >= 3)
    assert {r.path for r in receiver.requests} == {"/hook?other"}
    assert sorted(r.headers["X-Service-Event"] for r in receiver.requests) == [
        "order.created",
        "order.paid",
        "sales.created",
    ]
    assert all(verify(r.body, r.headers, other_secret) for r in receiver.requests)
    assert all(r.json["company_id"] == other.company_id for r in receiver.requests)
    await check_books(db, shop.company_id)
    await check_books(db, other.company_id)


@pytest.mark.usefixtures("quiet_outbox")
async def test_failed_sale_sends_nothing(client, shop, db, database_url, receiver):
    hook, _ = await register(db, shop.company_id, receiver.url)
    body = sale_body(shop)
    body["product_items"][0]["xid"] = "nope"
    r = await client.post("/sales", json=body, headers=shop.headers)
    assert r.status_code == 422
    async with DeliveryWorker(db, fast_settings(database_url)) as worker:
        await worker.run_once()
    assert receiver.requests == []
    assert await deliveries_of(db, hook.id) == []
    await check_books(db, shop.company_id)


@pytest.mark.usefixtures("quiet_outbox")
async def test_retries_until_the_receiver_answers(client, shop, db, database_url, receiver):
    hook, secret = await register(db, shop.company_id, receiver.url, ["order.created"])
    receiver.statuses = [500, 500]
    r = await client.post("/sales", json=sale_body(shop), headers=shop.headers)
    assert r.status_code == 200
    async with DeliveryWorker(db, fast_settings(database_url)) as worker:
        await worker.run_once()
        (first,) = await deliveries_of(db, hook.id)
        assert first.status == "retrying" and first.attempts == 1
        assert first.last_status_code == 500
        await drain(worker, lambda: len(receiver.requests) >= 3)
    assert len(receiver.requests) == 3
    assert len({r.headers["X-Service-Delivery"] for r in receiver.requests}) == 1
    assert len({r.body for r in receiver.requests}) == 1
    assert all(verify(r.body, r.headers, secret) for r in receiver.requests)
    (done,) = await deliveries_of(db, hook.id)
    assert done.status == "delivered" and done.attempts == 3
    attempts = await db.read(lambda s: service.list_attempts(s, done.company_id, done.id))
    assert [a.status_code for a in attempts] == [500, 500, 200]
    assert attempts[0].error and "500" in attempts[0].error


@pytest.mark.usefixtures("quiet_outbox")
async def test_unreachable_receiver_then_dead_and_redeliver(
    client, shop, db, database_url, receiver
):
    hook, _ = await register(db, shop.company_id, "http://127.0.0.1:9/nothing", ["order.created"])
    r = await client.post("/sales", json=sale_body(shop), headers=shop.headers)
    assert r.status_code == 200
    settings = fast_settings(database_url).model_copy(
        update={"webhook_max_age": 0.0, "webhook_timeout": 1.0}
    )
    async with DeliveryWorker(db, settings) as worker:
        await worker.run_once()
    (dead,) = await deliveries_of(db, hook.id)
    assert dead.status == "dead" and dead.last_status_code is None and dead.last_error
    dead_list = await db.read(lambda s: service.list_deliveries(s, shop.company_id, "dead"))
    assert [d.id for d in dead_list] == [dead.id]
    # the operator fixes the URL and redelivers
    await db.write(
        lambda s: s.execute(update(Webhook).where(Webhook.id == hook.id).values(url=receiver.url))
    )
    await db.write(lambda s: service.redeliver(s, dead.id))
    async with DeliveryWorker(db, fast_settings(database_url)) as worker:
        await drain(worker, lambda: len(receiver.requests) >= 1)
    (done,) = await deliveries_of(db, hook.id)
    assert done.status == "delivered"
    assert receiver.requests[0].headers["X-Service-Delivery"] == dead.delivery_uid


@pytest.mark.usefixtures("quiet_outbox")
async def test_two_workers_send_each_delivery_once(client, shop, db, database_url, receiver):
    hooks = [await register(db, shop.company_id, receiver.url + f"?{i}") for i in range(3)]
    for _ in range(3):
        r = await client.post("/sales", json=sale_body(shop), headers=shop.headers)
        assert r.status_code == 200
    receiver.delay = 0.05
    settings = fast_settings(database_url)
    async with (
        DeliveryWorker(db, settings, concurrency=4) as a,
        DeliveryWorker(db, settings, concurrency=4) as b,
    ):
        for _ in range(20):
            await asyncio.gather(a.run_once(), b.run_once())
            if len(receiver.requests) >= 18:
                break
    uids = [r.headers["X-Service-Delivery"] for r in receiver.requests]
    assert len(uids) == 18  # 3 sales x 2 events x 3 webhooks
    assert len(set(uids)) == 18
    for hook, _ in hooks:
        rows = await deliveries_of(db, hook.id)
        assert len(rows) == 6
        assert all(d.status == "delivered" and d.attempts == 1 for d in rows)
    await check_books(db, shop.company_id)


@pytest.mark.usefixtures("quiet_outbox")
async def test_expired_claim_is_redelivered(client, shop, db, database_url, receiver):
    hook, secret = await register(db, shop.company_id, receiver.url, ["sales.created"])
    r = await client.post("/sales", json=sale_body(shop), headers=shop.headers)
    assert r.status_code == 200
    worker = DeliveryWorker(db, fast_settings(database_url))
    while await db.read(lambda s: s.scalar(select(OutboxEvent.id).where(~OutboxEvent.dispatched))):
        await db.write(worker._fan_out)
    claimed = await db.write(worker._claim)
    mine = [c for c in claimed if c.url == receiver.url]
    assert len(mine) == 1
    # the worker "dies" here; a second worker skips the live claim...
    async with DeliveryWorker(db, fast_settings(database_url)) as other:
        await other.run_once()
        assert receiver.requests == []
        (row,) = await deliveries_of(db, hook.id)
        assert row.status == "delivering" and row.locked_until is not None
        # ...and takes it once the lock has expired
        past = dt.datetime.now(dt.UTC) - dt.timedelta(seconds=1)
        await db.write(
            lambda s: s.execute(
                update(WebhookDelivery)
                .where(WebhookDelivery.id == row.id)
                .values(locked_until=past)
            )
        )
        await drain(other, lambda: len(receiver.requests) >= 1)
    assert verify(receiver.requests[0].body, receiver.requests[0].headers, secret)
    (row,) = await deliveries_of(db, hook.id)
    assert row.status == "delivered" and row.attempts == 1
    await worker.aclose()


@pytest.mark.usefixtures("quiet_outbox")
async def test_disabled_webhook_gets_nothing(client, shop, db, database_url, receiver):
    hook, _ = await register(db, shop.company_id, receiver.url)
    await db.write(lambda s: service.disable_webhook(s, shop.company_id, hook.id))
    r = await client.post("/sales", json=sale_body(shop), headers=shop.headers)
    assert r.status_code == 200
    async with DeliveryWorker(db, fast_settings(database_url)) as worker:
        await worker.run_once()
    assert receiver.requests == []
    assert await deliveries_of(db, hook.id) == []


@pytest.mark.usefixtures("quiet_outbox")
async def test_run_forever_stops_gracefully(client, shop, db, database_url, receiver):
    hook, _ = await register(db, shop.company_id, receiver.url, ["order.created"])
    receiver.delay = 0.2
    r = await client.post("/sales", json=sale_body(shop), headers=shop.headers)
    assert r.status_code == 200
    stop = asyncio.Event()
    worker = DeliveryWorker(db, fast_settings(database_url))
    task = asyncio.create_task(worker.run_forever(stop))
    for _ in range(200):
        if receiver.requests:
            break
        await asyncio.sleep(0.01)
    stop.set()  # while the receiver is still answering
    await asyncio.wait_for(task, 5)
    (row,) = await deliveries_of(db, hook.id)
    assert row.status == "delivered"


async def test_webhook_management(db, shop):
    cid = shop.company_id
    with pytest.raises(ValidationFailed) as bad:
        await register(db, cid, "ftp://example.com/x", ["order.created", "order.exploded"])
    assert set(bad.value.errors) == {"url", "events"}
    assert "order.exploded" in bad.value.errors["events"][0]
    hook, secret = await register(db, cid, "https://93.184.216.34/a", ["order.paid", "order.paid"])
    assert hook.events == "order.paid"
    star, _ = await register(db, cid, "https://93.184.216.34/b", ["*", "order.paid"])
    assert star.events == "*"
    listed = await db.read(lambda s: service.list_webhooks(s, cid))
    assert [w.id for w in listed] == [hook.id, star.id]
    assert await db.read(lambda s: service.list_webhooks(s, cid + 10**9)) == []
    _, rotated = await db.write(lambda s: service.rotate_secret(s, cid, hook.id))
    assert rotated != secret and rotated.startswith("whsec_")
    stored = await db.read(lambda s: by_id(s, Webhook, hook.id))
    assert service.webhook_secret(stored) == rotated
    disabled = await db.write(lambda s: service.disable_webhook(s, cid, hook.id))
    assert disabled.active is False
    with pytest.raises(NotFound):
        await db.write(lambda s: service.disable_webhook(s, cid + 10**9, hook.id))
    with pytest.raises(ValidationFailed):
        await db.read(lambda s: service.list_deliveries(s, cid, "bogus"))
    await db.write(lambda s: service.remove_webhook(s, cid, star.id))
    listed = await db.read(lambda s: service.list_webhooks(s, cid))
    assert [w.id for w in listed] == [hook.id]
    with pytest.raises(NotFound):
        await db.write(lambda s: service.redeliver(s, 10**12))


def test_verify_rejects_tampering():
    secret = "whsec_" + "a" * 32
    body = b'{"id":"evt_1","type":"order.created"}'
    headers = {"x-service-signature": sign(body, secret), "AUTHORIZATION": f"Bearer {secret}"}
    assert verify(body, headers, secret)
    assert verify(body, {"X-Service-Signature": sign(body, secret)}, secret)  # no bearer
    assert not verify(body + b" ", headers, secret)
    assert not verify(body.replace(b"1", b"2"), headers, secret)
    assert not verify(body, headers, "whsec_" + "b" * 32)
    wrong_bearer = {**headers, "Authorization": "Bearer whsec_other"}
    assert not verify(body, wrong_bearer, secret)
    assert not verify(body, {"Authorization": f"Bearer {secret}"}, secret)  # unsigned
    assert not verify(body, {"X-Service-Signature": "zz"}, secret)


@pytest.mark.usefixtures("quiet_outbox")
async def test_another_companys_burst_does_not_hold_our_deliveries_back(
    client, shop, db, database_url, receiver
):
    """A company without webhooks announcing thousands of events (a catalog import)
    comes before ours in the outbox: one worker pass still fans ours out, because
    events nobody subscribed to are set aside in one statement, not 100 a pass."""
    other = await make_shop(db)
    burst = [
        {
            "event_id": f"evt_burst{n:06d}",
            "company_id": other.company_id,
            "warehouse_id": other.warehouse_id,
            "type": "product.updated",
            "payload": "{}",
            "dispatched": False,
            "created_at": dt.datetime.now(dt.UTC),
        }
        for n in range(1500)
    ]
    await db.write(lambda s: s.execute(OutboxEvent.__table__.insert(), burst))
    hook, _secret = await register(db, shop.company_id, receiver.url)
    r = await client.post("/sales", json=sale_body(shop), headers=shop.headers)
    assert r.status_code == 200, r.text
    async with DeliveryWorker(db, fast_settings(database_url)) as worker:
        await worker.run_once()
    assert len(await deliveries_of(db, hook.id)) >= 2
    left = await db.read(
        lambda s: s.scalar(
            select(func.count())
            .select_from(OutboxEvent)
            .where(OutboxEvent.company_id == other.company_id, OutboxEvent.dispatched.is_(False))
        )
    )
    assert left == 0
