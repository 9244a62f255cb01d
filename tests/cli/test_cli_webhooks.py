"""``tillbook webhooks …`` and ``tillbook terminals …`` run as an operator runs them:
a separate process on the test database. What they print is then used for real: a
receiver on 127.0.0.1 checks signatures with the printed secret, a terminal callback
is signed with the printed provider secret."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from tests.cli_process import run_cli
from tests.events.test_webhook_reliability import Receiver, fast, make_sales, run_until
from tests.factories import by_id
from tests.invariants import check_books
from tests.outbox_quiet import quiet_outbox  # noqa: F401  (fixture)
from tillbook.events.worker import DeliveryWorker
from tillbook.kit import crypto
from tillbook.models import Order, WebhookDelivery
from tillbook.receiving import verify

Run = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture(scope="module")
def cli(database_url: str, tmp_path_factory: pytest.TempPathFactory) -> Run:
    workdir: Path = tmp_path_factory.mktemp("cli-webhooks")
    env = dict(os.environ)
    env["TILLBOOK_DATABASE_URL"] = database_url
    env["TILLBOOK_MASTER_KEY"] = os.environ["TILLBOOK_MASTER_KEY"]
    env.pop("TILLBOOK_REDIS_URL", None)
    env["TILLBOOK_WEBHOOK_ALLOW_PRIVATE_NETWORKS"] = "true"  # the receiver is on 127.0.0.1

    def run(*args: str, code: int = 0) -> subprocess.CompletedProcess[str]:
        result = run_cli(args, env=env, cwd=workdir)
        assert result.returncode == code, (args, result.stdout, result.stderr)
        assert "Traceback" not in result.stderr, result.stderr
        return result

    return run


def as_json(result: subprocess.CompletedProcess[str]) -> Any:
    return json.loads(result.stdout)  # exactly one JSON document on stdout


@pytest.fixture
async def receiver() -> AsyncIterator[Receiver]:
    rec = Receiver()
    await rec.start()
    yield rec
    await rec.stop()


async def deliver_all(db: Any, database_url: str, until: Callable[[], bool], **extra: Any) -> None:
    async with DeliveryWorker(db, fast(database_url, **extra)) as worker:
        await run_until(worker, until, seconds=15, what="the deliveries were made")


@pytest.mark.usefixtures("quiet_outbox")
async def test_webhooks_add_list_rotate(cli, client, db, shop, database_url, receiver):
    cid = str(shop.company_id)
    paid_only = as_json(
        cli("webhooks", "add", "--company", cid, "--url", receiver.url + "?paid",
            "--events", "order.created, order.paid", "--json")
    )  # fmt: skip
    assert set(paid_only) == {"id", "url", "events", "secret"}
    assert paid_only["url"] == receiver.url + "?paid"
    assert paid_only["events"] == ["order.created", "order.paid"]
    assert paid_only["secret"].startswith("whsec_")
    text = cli("webhooks", "add", "--company", cid, "--url", receiver.url + "?all").stdout
    assert "whsec_" in text and "?all" in text

    listing = cli("webhooks", "list", "--company", cid, "--json")
    assert paid_only["secret"] not in listing.stdout
    hooks = as_json(listing)["webhooks"]
    assert [h["url"] for h in hooks] == [receiver.url + "?paid", receiver.url + "?all"]
    assert all(set(h) == {"id", "url", "events", "active", "created_at"} for h in hooks)
    every = hooks[1]
    assert every["events"] == ["*"] and every["active"] is True

    # a credit sale: order.created to the first, order.created + sales.created to the second
    await make_sales(client, shop, 1)
    await deliver_all(db, database_url, lambda: len(receiver.answered) >= 3)
    first = [r for r in receiver.requests if r.path.endswith("?paid")]
    assert [r.headers["X-Service-Event"] for r in first] == ["order.created"]
    assert verify(first[0].body, first[0].headers, paid_only["secret"])
    second = [r for r in receiver.requests if r.path.endswith("?all")]
    assert sorted(r.headers["X-Service-Event"] for r in second) == [
        "order.created",
        "sales.created",
    ]
    assert not verify(second[0].body, second[0].headers, paid_only["secret"])

    # rotate: the new secret signs from now on, the old one no longer verifies
    rotated = as_json(cli("webhooks", "rotate", str(paid_only["id"]), "--company", cid, "--json"))
    assert set(rotated) == {"id", "url", "events", "secret"}
    assert rotated["id"] == paid_only["id"]
    assert rotated["secret"].startswith("whsec_") and rotated["secret"] != paid_only["secret"]

    # a paid sale: order.created and order.paid, signed with the new secret
    receiver.requests.clear()
    receiver.answered.clear()
    await make_sales(client, shop, 1, paid_every=1)
    await deliver_all(db, database_url, lambda: len(receiver.answered) >= 5)
    first = [r for r in receiver.requests if r.path.endswith("?paid")]
    assert sorted(r.headers["X-Service-Event"] for r in first) == ["order.created", "order.paid"]
    for got in first:
        assert verify(got.body, got.headers, rotated["secret"])
        assert not verify(got.body, got.headers, paid_only["secret"])
    await check_books(db, shop.company_id)


@pytest.mark.usefixtures("quiet_outbox")
async def test_webhooks_disable_enable_deliveries_remove(
    cli, client, db, shop, database_url, receiver
):
    cid = str(shop.company_id)
    kept = as_json(cli("webhooks", "add", "--company", cid, "--url", receiver.url + "?kept",
                       "--json"))  # fmt: skip
    every = as_json(cli("webhooks", "add", "--company", cid, "--url", receiver.url + "?all",
                        "--events", "*", "--json"))  # fmt: skip
    assert every["events"] == ["*"]
    # disabled: the webhook gets no deliveries for what happens meanwhile
    assert "disabled" in cli("webhooks", "disable", str(every["id"]), "--company", cid).stdout
    await make_sales(client, shop, 1, paid_every=1)
    await deliver_all(db, database_url, lambda: len(receiver.answered) >= 3)
    assert {r.path for r in receiver.requests} == {"/hook?kept"}
    enabled = as_json(cli("webhooks", "enable", str(every["id"]), "--company", cid, "--json"))
    assert enabled["active"] is True
    await make_sales(client, shop, 1)  # a credit sale: both webhooks hear of it
    await deliver_all(db, database_url, lambda: len(receiver.answered) >= 7)
    assert sorted(r.path for r in receiver.requests[3:]) == ["/hook?all"] * 2 + ["/hook?kept"] * 2

    deliveries = as_json(cli("webhooks", "deliveries", "--company", cid, "--json"))
    assert deliveries["company_id"] == shop.company_id
    rows = deliveries["deliveries"]
    assert len(rows) == 7 and {d["status"] for d in rows} == {"delivered"}
    assert [d["webhook_id"] for d in rows].count(every["id"]) == 2
    assert {d["webhook_id"] for d in rows} == {kept["id"], every["id"]}
    assert {d["event_type"] for d in rows} == {"order.created", "sales.created", "order.paid"}
    assert all(d["event_id"].startswith("evt_") and d["attempts"] == 1 for d in rows)
    dead = as_json(cli("webhooks", "deliveries", "--company", cid, "--status", "dead", "--json"))
    assert dead["deliveries"] == []

    removed = as_json(cli("webhooks", "remove", str(every["id"]), "--company", cid, "--json"))
    assert removed == {"id": every["id"], "removed": True}
    again = cli("webhooks", "remove", str(every["id"]), "--company", cid, code=1)
    assert f"webhook {every['id']} not found" in again.stderr
    await check_books(db, shop.company_id)


@pytest.mark.usefixtures("quiet_outbox")
async def test_dead_delivery_is_listed_and_redelivered(
    cli, client, db, shop, database_url, receiver
):
    cid = str(shop.company_id)
    hook = as_json(
        cli("webhooks", "add", "--company", cid, "--url", receiver.url,
            "--events", "sales.created", "--json")
    )  # fmt: skip
    receiver.statuses = [503]
    await make_sales(client, shop, 1)

    async def dead() -> bool:
        rows = await db.read(
            lambda s: s.scalars(
                select(WebhookDelivery).where(WebhookDelivery.webhook_id == hook["id"])
            )
        )
        return [d.status for d in rows] == ["dead"]

    # no retries left after the first failure: the delivery is dead at once
    await deliver_all(db, database_url, dead, webhook_max_age=0.0)
    assert len(receiver.requests) == 1

    listed = as_json(cli("webhooks", "deliveries", "--company", cid, "--status", "dead", "--json"))
    (row,) = listed["deliveries"]
    assert row["webhook_id"] == hook["id"] and row["status"] == "dead"
    assert row["last_status_code"] == 503 and "503" in row["last_error"]
    assert row["event_type"] == "sales.created"

    other = cli("webhooks", "redeliver", str(row["id"]), "--company", str(shop.company_id + 10**6),
                code=1)  # fmt: skip
    assert f"delivery {row['id']} not found" in other.stderr
    queued = as_json(cli("webhooks", "redeliver", str(row["id"]), "--company", cid, "--json"))
    assert queued["id"] == row["id"] and queued["status"] == "pending"
    assert "queued again" in cli("webhooks", "redeliver", str(row["id"]), "--company", cid).stdout

    await deliver_all(db, database_url, lambda: len(receiver.answered) >= 2)
    assert [r.delivery for r in receiver.requests] == [row["delivery_uid"]] * 2
    assert verify(receiver.requests[1].body, receiver.requests[1].headers, hook["secret"])
    (done,) = as_json(cli("webhooks", "deliveries", "--company", cid, "--json"))["deliveries"]
    assert done["status"] == "delivered" and done["last_status_code"] == 200


async def test_terminal_provider_from_the_cli_takes_a_callback(cli, client, db, shop):
    wid = str(shop.warehouse_id)
    provider = as_json(
        cli("terminals", "add", "--warehouse", wid, "--name", "acme-pay",
            "--payment-mode", "card", "--json")
    )  # fmt: skip
    assert set(provider) == {
        "id", "name", "warehouse_id", "payment_mode_id", "callback_path", "secret",
    }  # fmt: skip
    assert provider["name"] == "acme-pay"
    assert provider["warehouse_id"] == shop.warehouse_id
    assert provider["payment_mode_id"] == shop.card_mode_id
    assert provider["callback_path"].startswith("/api/v1/public/terminal-callbacks/")

    sale = await client.post(
        "/sales",
        json={
            "user_id": shop.customer_id,
            "order_date": "2026-11-20",
            "product_items": [{"xid": shop.xid("apple"), "quantity": 2, "unit_price": 3.5}],
        },
        headers=shop.headers,
    )
    assert sale.status_code == 200, sale.text
    raw = json.dumps(
        {
            "invoice_number": sale.json()["invoice_number"],
            "status": "confirmed",
            "amount": "7.00",
            "reference": "acq-cli-1",
        }
    ).encode()
    r = await client.post(
        "http://testserver" + provider["callback_path"],
        content=raw,
        headers={
            "Content-Type": "application/json",
            "X-Service-Signature": crypto.hmac_hex(provider["secret"], raw),
        },
    )
    assert r.status_code == 200, r.text
    order = await db.read(lambda s: by_id(s, Order, sale.json()["order_id"]))
    assert order.payment_status == "paid"

    listing = cli("terminals", "list", "--warehouse", wid, "--json")
    assert provider["secret"] not in listing.stdout
    (listed,) = as_json(listing)["providers"]
    assert listed == {
        **{k: v for k, v in provider.items() if k != "secret"},
        "active": True,
    }
    dup = cli("terminals", "add", "--warehouse", wid, "--name", "acme-pay", "--payment-mode",
              "card", code=1)  # fmt: skip
    assert "a provider named 'acme-pay' already exists" in dup.stderr
    text = cli("terminals", "add", "--warehouse", wid, "--name", "other", "--payment-mode", "cash")
    assert "tps_" in text.stdout and "/api/v1/public/terminal-callbacks/" in text.stdout
    await check_books(db, shop.company_id)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["webhooks", "add", "--company", "987654321", "--url", "http://127.0.0.1:9/x"],
         "company 987654321 not found"),
        (["webhooks", "add", "--company", "{cid}", "--url", "ftp://x.test/", "--events",
          "order.created,order.exploded"],
         "url: 'ftp://x.test/' is not an https or http URL; events: unknown event 'order."),
        (["webhooks", "rotate", "987654321", "--company", "{cid}"], "webhook 987654321 not found"),
        (["webhooks", "deliveries", "--company", "{cid}", "--status", "lost"],
         "status: 'lost' is not one of"),
        (["terminals", "add", "--warehouse", "{wid}", "--name", "x", "--payment-mode", "bitcoin"],
         "payment_mode: unknown payment mode 'bitcoin'"),
        (["terminals", "list", "--warehouse", "987654321"], "warehouse 987654321 not found"),
    ],
)  # fmt: skip
async def test_mistakes_exit_1_with_a_message(cli, shop, args, message):
    filled = [a.format(cid=shop.company_id, wid=shop.warehouse_id) for a in args]
    result = cli(*filled, code=1)
    assert message in result.stderr
    assert result.stdout == ""
