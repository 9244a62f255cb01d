"""Where a webhook may be sent (DESIGN.md §12, "Webhook URLs"): the policy itself,
registration through the admin API and the CLI, and the check again at every delivery.

The machine has no DNS for the outside world, so host names are answered by an
injected resolver (``FakeDNS``); IP literals need none. A delivery the policy refuses
must never reach a socket: the worker gets an ``httpx.MockTransport`` that records
every request it would have sent, or a real receiver on 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import ipaddress
import os
import socket
import ssl
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import Any

import httpx
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from sqlalchemy import func, select

from tests.admin_helpers import ADMIN, login
from tests.cli_process import run_cli
from tests.events.test_webhook_reliability import attempts_of, fast, make_sales
from tests.invariants import check_books
from tests.outbox_quiet import quiet_outbox  # noqa: F401  (fixture)
from tillbook.app import create_app
from tillbook.config import Settings
from tillbook.db import Database
from tillbook.errors import ValidationFailed
from tillbook.events import webhook_service as service
from tillbook.events.urlpolicy import UrlPolicy, UrlRefused, check_url
from tillbook.events.worker import EXCERPT_CHARS, DeliveryWorker
from tillbook.models import Webhook, WebhookDelivery


class FakeDNS:
    """A resolver with answers the test sets and changes; unknown names do not resolve."""

    def __init__(self, answers: dict[str, list[str]] | None = None) -> None:
        self.answers = dict(answers or {})
        self.asked: list[str] = []

    async def __call__(self, host: str, port: int) -> Sequence[str]:
        self.asked.append(host)
        if host not in self.answers:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return self.answers[host]


PUBLIC_V6 = "2606:2800:220:1:248:1893:25c8:1946"
DNS = {
    "hooks.example": ["93.184.216.34"],
    "v6.example": [PUBLIC_V6, "93.184.216.34"],
    "internal.example": ["10.1.2.3"],
    "mixed.example": ["93.184.216.34", "10.1.2.3"],
    "meta.example": ["169.254.169.254"],
    "mapped.example": ["::ffff:127.0.0.1"],
    "dev.example": ["127.0.0.1"],
}


def policy(allow_private: bool) -> UrlPolicy:
    return UrlPolicy(allow_private=allow_private, resolver=FakeDNS(DNS))


# ---------------------------------------------------------------- the policy


REFUSED = [
    # (url, private networks allowed, what the refusal says)
    ("https://169.254.169.254/latest/meta-data/", False, "is a cloud metadata address"),
    ("http://169.254.169.254/latest/meta-data/", True, "is a cloud metadata address"),
    ("https://[fd00:ec2::254]/", True, "is a cloud metadata address"),
    ("https://100.100.100.200/", True, "is a cloud metadata address"),
    ("https://[::ffff:169.254.169.254]/", True, "is a cloud metadata address"),
    ("https://meta.example/", True, "host meta.example resolves to a cloud metadata address"),
    ("https://169.254.10.10/", True, "address 169.254.10.10 is link-local; refused"),
    ("https://[fe80::1]/", True, "address fe80::1 is link-local; refused"),
    ("https://10.0.0.1/", False, "address 10.0.0.1 is private; refused"),
    ("https://172.16.5.4/", False, "address 172.16.5.4 is private; refused"),
    ("https://192.168.1.1/", False, "address 192.168.1.1 is private; refused"),
    ("https://100.64.0.1/", False, "address 100.64.0.1 is private; refused"),
    ("https://[fc00::1]/", False, "address fc00::1 is private; refused"),
    ("https://[64:ff9b::a00:1]/", False, "is private; refused"),  # NAT64 of 10.0.0.1
    ("https://127.0.0.1:5432/", False, "address 127.0.0.1 is loopback; refused"),
    ("https://[::1]/", False, "address ::1 is loopback; refused"),
    ("https://[::ffff:127.0.0.1]/", False, "address ::ffff:127.0.0.1 is loopback; refused"),
    ("https://2130706433/", False, "address 2130706433 (127.0.0.1) is loopback; refused"),
    ("https://0x7f.1/", False, "address 0x7f.1 (127.0.0.1) is loopback; refused"),
    ("https://127.1:5432/", False, "address 127.1 (127.0.0.1) is loopback; refused"),
    ("https://mapped.example/", False, "host mapped.example resolves to a loopback address"),
    ("https://dev.example/", False, "host dev.example resolves to a loopback address"),
    ("https://internal.example/", False, "host internal.example resolves to a private address"),
    ("https://mixed.example/", False, "host mixed.example resolves to a private address"),
    ("https://0.0.0.0/", True, "address 0.0.0.0 is unspecified; refused"),
    ("https://[::]/", True, "address :: is unspecified; refused"),
    ("https://224.0.0.1/", True, "address 224.0.0.1 is multicast; refused"),
    ("https://[ff02::1]/", True, "address ff02::1 is multicast; refused"),
    ("https://240.0.0.1/", True, "address 240.0.0.1 is reserved"),
    ("https://192.0.2.10/", True, "address 192.0.2.10 is reserved"),
    ("http://93.184.216.34/", False, "must use https://"),
    ("http://127.0.0.1:5432/", False, "must use https://"),
    ("ftp://93.184.216.34/", True, "is not an https or http URL"),
    ("file:///etc/passwd", True, "is not an https or http URL"),
    ("https://user:secret@93.184.216.34/", False, "must not carry credentials"),
    ("https://user@hooks.example/", False, "must not carry credentials"),
    ("https://hooks.example/\r\nX-Injected: 1", False, "must not contain whitespace, CR, LF"),
    ("https://hooks.example/a\nb", False, "must not contain whitespace, CR, LF"),
    ("https://hooks.example/\x00", False, "must not contain whitespace, CR, LF"),
    ("https://hooks.example/a b", False, "must not contain whitespace, CR, LF"),
    ("https://hooks.example/\u200b", False, "must not contain whitespace, CR, LF"),
    ("https://hooks.example\\@10.0.0.1/", False, "a backslash"),
    ("https:///nothing", True, "names no host"),
    ("https://hooks.example:99999/", False, "port 99999 is not from 1 to 65535"),
    ("https://nowhere.example/", True, "host nowhere.example does not resolve"),
    ("https://hooks.example/" + "a" * 2000, False, "must be at most 2000 characters"),
]


@pytest.mark.parametrize(("url", "allow_private", "says"), REFUSED)
async def test_refused_urls(url, allow_private, says):
    with pytest.raises(UrlRefused) as refused:
        await check_url(url, policy(allow_private))
    assert says in str(refused.value)
    assert len(str(refused.value)) < 200  # a sentence, never the whole URL back


async def test_a_resolved_private_address_is_not_named():
    """For a host name the tenant learns the class, not the operator's address plan."""
    with pytest.raises(UrlRefused) as refused:
        await check_url("https://internal.example/", policy(False))
    assert "10.1.2.3" not in str(refused.value)


ACCEPTED = [
    # (url, private networks allowed, the addresses the delivery may connect to)
    ("https://93.184.216.34/", False, ["93.184.216.34"]),
    ("https://93.184.216.34:8443/hooks?x=1", False, ["93.184.216.34"]),
    (f"https://[{PUBLIC_V6}]/", False, [PUBLIC_V6]),
    ("https://[::ffff:93.184.216.34]/", False, ["::ffff:93.184.216.34"]),
    ("https://hooks.example/tillbook", False, ["93.184.216.34"]),
    ("https://v6.example/", False, [PUBLIC_V6, "93.184.216.34"]),
    ("http://127.0.0.1:5432/", True, ["127.0.0.1"]),
    ("http://dev.example:8080/hook", True, ["127.0.0.1"]),
    ("https://10.0.0.1/", True, ["10.0.0.1"]),
    ("https://[fc00::1]/", True, ["fc00::1"]),
    ("https://internal.example/", True, ["10.1.2.3"]),
    ("https://mixed.example/", True, ["93.184.216.34", "10.1.2.3"]),
    ("https://2130706433/", True, ["127.0.0.1"]),
]  # fmt: skip


@pytest.mark.parametrize(("url", "allow_private", "addresses"), ACCEPTED)
async def test_accepted_urls(url, allow_private, addresses):
    target = await check_url(url, policy(allow_private))
    assert list(target.addresses) == [ipaddress.ip_address(a) for a in addresses]
    pinned = target.pinned(target.addresses[0])
    assert pinned.path == target.url.path and pinned.query == target.url.query
    assert pinned.port == target.url.port and pinned.scheme == target.url.scheme


async def test_pinned_url_goes_to_a_checked_address_only():
    target = await check_url("https://hooks.example:8443/in?a=1", policy(False))
    assert target.host == "hooks.example"
    assert str(target.pinned(target.addresses[0])) == "https://93.184.216.34:8443/in?a=1"
    with pytest.raises(UrlRefused):
        target.pinned(ipaddress.ip_address("10.0.0.1"))
    mapped = await check_url("https://[::ffff:93.184.216.34]/", policy(False))
    assert mapped.pinned(mapped.addresses[0]).host == "93.184.216.34"


async def test_a_resolver_that_hangs_is_a_refusal_in_time():
    async def hangs(host: str, port: int) -> Sequence[str]:
        await asyncio.sleep(30)
        return ["93.184.216.34"]

    with pytest.raises(UrlRefused) as refused:
        await check_url("https://slow.example/", UrlPolicy(resolver=hangs, timeout=0.05))
    assert "did not resolve within" in str(refused.value)


def test_the_setting_comes_from_the_environment(monkeypatch):
    assert Settings().webhook_allow_private_networks is False
    assert UrlPolicy.from_settings(Settings()).allow_private is False
    monkeypatch.setenv("TILLBOOK_WEBHOOK_ALLOW_PRIVATE_NETWORKS", "true")
    assert UrlPolicy.from_settings(Settings()).allow_private is True


async def test_registration_reports_url_and_events_together():
    with pytest.raises(ValidationFailed) as bad:
        await service.check_new_webhook(
            "https://10.0.0.1/", ["order.exploded"], UrlPolicy(allow_private=False)
        )
    assert bad.value.errors["url"] == ["address 10.0.0.1 is private; refused"]
    assert "order.exploded" in bad.value.errors["events"][0]


# ---------------------------------------------------------------- the admin API


@pytest.fixture(scope="module")
async def strict_client(database_url: str, db: Database) -> AsyncIterator[httpx.AsyncClient]:
    """The app as deployed: private networks not allowed."""
    app = create_app(Settings(database_url=database_url), database=db)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url=ADMIN) as c:
            yield c


async def webhook_count(db: Database, company_id: int) -> int:
    count = await db.read(
        lambda s: s.scalar(select(func.count(Webhook.id)).where(Webhook.company_id == company_id))
    )
    return int(count or 0)


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("https://169.254.169.254/latest/meta-data/", "is a cloud metadata address"),
        ("https://10.0.0.1/", "address 10.0.0.1 is private; refused"),
        ("https://127.0.0.1:5432/", "address 127.0.0.1 is loopback; refused"),
        ("https://[::ffff:127.0.0.1]/", "is loopback; refused"),
        ("https://2130706433/", "(127.0.0.1) is loopback; refused"),
        ("https://localhost:5432/", "host localhost resolves to a loopback address; refused"),
        ("http://93.184.216.34/", "must use https://"),
        ("https://user:pw@93.184.216.34/", "must not carry credentials"),
        ("https://93.184.216.34/\r\nX-Injected: 1", "must not contain whitespace, CR, LF"),
    ],
)
async def test_admin_api_refuses_with_422_naming_url(client, strict_client, db, shop, url, says):
    headers = await login(client, db, shop)
    before = await webhook_count(db, shop.company_id)
    r = await strict_client.post("/webhooks", json={"url": url}, headers=headers)
    assert r.status_code == 422, r.text
    body = r.json()
    assert body["status"] == "error"
    assert list(body["errors"]) == ["url"]
    assert says in body["errors"]["url"][0]
    assert body["message"].startswith("url: ")
    assert await webhook_count(db, shop.company_id) == before


async def test_admin_api_accepts_a_public_address_and_private_where_allowed(
    client, strict_client, db, shop
):
    headers = await login(client, db, shop)
    r = await strict_client.post(
        "/webhooks", json={"url": "https://93.184.216.34/hook"}, headers=headers
    )
    assert r.status_code == 200, r.text
    assert r.json()["data"]["url"] == "https://93.184.216.34/hook"
    # the test app allows private networks: loopback passes, metadata never does
    r = await client.post(
        f"{ADMIN}/webhooks", json={"url": "http://127.0.0.1:5432/"}, headers=headers
    )
    assert r.status_code == 200, r.text
    r = await client.post(
        f"{ADMIN}/webhooks", json={"url": "http://169.254.169.254/latest/"}, headers=headers
    )
    assert r.status_code == 422, r.text
    assert "cloud metadata" in r.json()["errors"]["url"][0]
    assert await webhook_count(db, shop.company_id) == 2
    for hook in (await client.get(f"{ADMIN}/webhooks", headers=headers)).json()["data"]:
        await client.post(f"{ADMIN}/webhooks/{hook['id']}/disable", headers=headers)


# ---------------------------------------------------------------- the CLI


def cli(database_url: str, cwd: Path, *args: str, allow_private: bool) -> Any:
    env = dict(os.environ)
    env["TILLBOOK_DATABASE_URL"] = database_url
    env.pop("TILLBOOK_REDIS_URL", None)
    env["TILLBOOK_WEBHOOK_ALLOW_PRIVATE_NETWORKS"] = "true" if allow_private else "false"
    result = run_cli(args, env=env, cwd=cwd)
    assert "Traceback" not in result.stderr, result.stderr
    return result


async def test_cli_refuses_with_exit_1(db, shop, database_url, tmp_path):
    cid = str(shop.company_id)
    cases = [
        ("https://10.0.0.1/", False, "error: url: address 10.0.0.1 is private; refused"),
        ("https://127.0.0.1:5432/", False, "error: url: address 127.0.0.1 is loopback; refused"),
        ("http://169.254.169.254/latest/meta-data/", True,
         "error: url: address 169.254.169.254 is a cloud metadata address; refused"),
        ("https://u:p@93.184.216.34/", False, "error: url: must not carry credentials"),
        ("https://93.184.216.34/\r\nX: 1", False, "error: url: must not contain whitespace"),
    ]  # fmt: skip
    for url, allow_private, says in cases:
        result = await asyncio.to_thread(
            cli, database_url, tmp_path, "webhooks", "add", "--company", cid, "--url", url,
            "--json", allow_private=allow_private,
        )  # fmt: skip
        assert result.returncode == 1, (url, result.stdout, result.stderr)
        # (the first line of stderr names the database the command opened)
        assert result.stderr.splitlines()[-1].startswith(says), result.stderr
        assert result.stdout == ""
    assert await webhook_count(db, shop.company_id) == 0
    ok = await asyncio.to_thread(
        cli, database_url, tmp_path, "webhooks", "add", "--company", cid,
        "--url", "https://93.184.216.34/hook", "--events", "order.created", allow_private=False,
    )  # fmt: skip
    assert ok.returncode == 0, ok.stderr
    assert "https://93.184.216.34/hook" in ok.stdout
    hooks = await db.read(lambda s: service.list_webhooks(s, shop.company_id))
    assert [h.url for h in hooks] == ["https://93.184.216.34/hook"]
    await db.write(lambda s: service.disable_webhook(s, shop.company_id, hooks[0].id))


# ---------------------------------------------------------------- at every delivery


class Recorder:
    """An ``httpx.MockTransport`` handler: what the worker would have sent, answered 200
    for this test's host and 503 for any other (other tests' leftover deliveries)."""

    def __init__(self, host: str) -> None:
        self.host = host
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        if request.headers.get("host", "").split(":")[0] != self.host:
            return httpx.Response(503)
        self.requests.append(request)
        return httpx.Response(200)


async def deliveries(db: Database, webhook_id: int) -> list[WebhookDelivery]:
    rows = await db.read(
        lambda s: s.scalars(
            select(WebhookDelivery)
            .where(WebhookDelivery.webhook_id == webhook_id)
            .order_by(WebhookDelivery.id)
        )
    )
    return list(rows)


async def work_until(
    worker: DeliveryWorker,
    db: Database,
    webhook_id: int,
    done: Callable[[WebhookDelivery], bool],
) -> WebhookDelivery:
    """Worker passes until the webhook's one delivery is ``done`` (another test's due
    deliveries may take a pass's places first)."""
    for _ in range(100):
        await worker.run_once()
        rows = await deliveries(db, webhook_id)
        if len(rows) == 1 and done(rows[0]):
            return rows[0]
        await asyncio.sleep(0.03)
    raise AssertionError(f"the delivery of webhook {webhook_id} did not get there")


@pytest.mark.usefixtures("quiet_outbox")
async def test_a_host_that_later_resolves_privately_is_refused_at_delivery(
    client, db, shop, database_url
):
    dns = FakeDNS({"hooks.example": ["93.184.216.34"]})
    new = await service.check_new_webhook(
        "https://hooks.example/in", ["order.created"], UrlPolicy(resolver=dns)
    )
    hook, _ = await db.write(lambda s: service.add_webhook(s, shop.company_id, new))
    await make_sales(client, shop, 1)

    # the name now answers with an internal address (DNS rebinding, or a changed record)
    dns.answers["hooks.example"] = ["93.184.216.34", "10.0.0.7"]
    recorder = Recorder("hooks.example")
    strict = fast(database_url, webhook_allow_private_networks=False)
    async with httpx.AsyncClient(transport=httpx.MockTransport(recorder)) as http:
        async with DeliveryWorker(db, strict, client=http, resolver=dns) as worker:
            row = await work_until(worker, db, hook.id, lambda d: d.attempts >= 3)
        assert recorder.requests == []  # nothing was sent anywhere
        assert row.status == "retrying" and row.attempts == 3
        assert row.last_status_code is None
        refusal = "host hooks.example resolves to a private address; refused"
        assert row.last_error == refusal
        log = await attempts_of(db, row.id)
        assert [(a.status_code, a.error) for a in log] == [(None, refusal)] * 3

        # dead by the usual rule once the delivery is older than the max age
        past_age = fast(database_url, webhook_allow_private_networks=False, webhook_max_age=0.0)
        async with DeliveryWorker(db, past_age, client=http, resolver=dns) as worker:
            row = await work_until(worker, db, hook.id, lambda d: d.status == "dead")
        assert row.attempts == 4 and row.last_error == refusal
        assert recorder.requests == []

        # the record is fixed; redelivered, it goes to the checked address under its name
        dns.answers["hooks.example"] = ["93.184.216.34"]
        await db.write(lambda s: service.redeliver(s, row.id, company_id=shop.company_id))
        async with DeliveryWorker(db, strict, client=http, resolver=dns) as worker:
            row = await work_until(worker, db, hook.id, lambda d: d.status != "pending")
    assert row.status == "delivered", row.last_error
    (sent,) = recorder.requests
    assert sent.url.host == "93.184.216.34"  # connected by the checked address...
    assert sent.url.path == "/in" and sent.url.scheme == "https"
    assert sent.headers["host"] == "hooks.example"  # ...as the name the tenant gave
    assert sent.extensions["sni_hostname"] == "hooks.example"  # TLS checks that name
    assert sent.headers["x-service-delivery"] == row.delivery_uid
    assert dns.asked.count("hooks.example") >= 6  # once at registration, once per attempt
    await check_books(db, shop.company_id)


class RawReceiver:
    """An HTTP(S) receiver on 127.0.0.1 that answers every request with ``answer`` bytes."""

    def __init__(self, answer: bytes, tls: ssl.SSLContext | None = None) -> None:
        self.answer = answer
        self.tls = tls
        self.requests: list[bytes] = []
        self.server: asyncio.Server | None = None
        self.port = 0

    async def __aenter__(self) -> RawReceiver:
        self.server = await asyncio.start_server(self._handle, "127.0.0.1", 0, ssl=self.tls)
        self.port = self.server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self.server is not None
        self.server.close()
        await self.server.wait_closed()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n"):
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            self.requests.append(head + await reader.readexactly(length))
            writer.write(self.answer)
            await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()


@pytest.mark.usefixtures("quiet_outbox")
async def test_delivery_connects_to_the_checked_address_by_name(client, db, shop, database_url):
    """``receiver.example`` exists only in the injected resolver: the delivery arrives,
    so the worker connected to the address the policy checked, not to a second lookup."""
    async with RawReceiver(b"HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n") as rec:
        dns = FakeDNS({"receiver.example": ["127.0.0.1"]})
        url = f"http://receiver.example:{rec.port}/hook?x=1"
        new = await service.check_new_webhook(
            url, ["order.created"], UrlPolicy(allow_private=True, resolver=dns)
        )
        hook, _ = await db.write(lambda s: service.add_webhook(s, shop.company_id, new))
        await make_sales(client, shop, 1)
        async with DeliveryWorker(db, fast(database_url), resolver=dns) as worker:
            row = await work_until(worker, db, hook.id, lambda d: d.attempts > 0)
        assert row.status == "delivered", row.last_error
        (raw,) = rec.requests
        assert raw.startswith(b"POST /hook?x=1 HTTP/1.1\r\n")
        assert f"\r\nHost: receiver.example:{rec.port}\r\n".encode() in raw
    await db.write(lambda s: service.disable_webhook(s, shop.company_id, hook.id))
    await check_books(db, shop.company_id)


def self_signed(name: str, folder: Path) -> tuple[ssl.SSLContext, bytes]:
    """A server context with a certificate for ``name``, and that certificate (PEM)."""
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(hours=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(name)]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    pem = cert.public_bytes(serialization.Encoding.PEM)
    (folder / f"{name}.pem").write_bytes(
        pem
        + key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    server = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server.load_cert_chain(folder / f"{name}.pem")
    return server, pem


@pytest.mark.parametrize("served_name", ["receiver.example", "other.example"])
@pytest.mark.usefixtures("quiet_outbox")
async def test_tls_is_checked_against_the_name_while_connecting_by_address(
    client, db, shop, database_url, tmp_path, served_name
):
    """The socket goes to the checked address; TLS still sends and verifies the host
    name (SNI): a certificate for another name is refused, nothing is sent."""
    tls, pem = self_signed(served_name, tmp_path)
    trust = ssl.create_default_context(cadata=pem.decode())
    answer = b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    async with (
        RawReceiver(answer, tls) as rec,
        httpx.AsyncClient(
            verify=trust, trust_env=False, limits=httpx.Limits(max_keepalive_connections=0)
        ) as http,
    ):
        dns = FakeDNS({"receiver.example": ["127.0.0.1"]})
        url = f"https://receiver.example:{rec.port}/hook"
        new = await service.check_new_webhook(
            url, ["order.created"], UrlPolicy(allow_private=True, resolver=dns)
        )
        hook, _ = await db.write(lambda s: service.add_webhook(s, shop.company_id, new))
        await make_sales(client, shop, 1)
        async with DeliveryWorker(db, fast(database_url), client=http, resolver=dns) as worker:
            row = await work_until(worker, db, hook.id, lambda d: d.attempts > 0)
        if served_name == "receiver.example":
            assert row.status == "delivered", row.last_error
            (raw,) = rec.requests
            assert f"\r\nHost: receiver.example:{rec.port}\r\n".encode() in raw
        else:
            assert row.status == "retrying" and row.last_status_code is None
            assert "CERTIFICATE_VERIFY_FAILED" in (row.last_error or ""), row.last_error
            assert rec.requests == []
    await db.write(lambda s: service.disable_webhook(s, shop.company_id, hook.id))
    await check_books(db, shop.company_id)


@pytest.mark.usefixtures("quiet_outbox")
async def test_turning_private_networks_off_stops_deliveries_to_them(
    client, db, shop, database_url
):
    async with RawReceiver(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n") as rec:
        url = f"http://127.0.0.1:{rec.port}/hook"
        new = await service.check_new_webhook(url, ["order.created"], UrlPolicy(allow_private=True))
        hook, _ = await db.write(lambda s: service.add_webhook(s, shop.company_id, new))
        await make_sales(client, shop, 1)
        strict = fast(database_url, webhook_allow_private_networks=False)
        async with DeliveryWorker(db, strict) as worker:
            row = await work_until(worker, db, hook.id, lambda d: d.attempts > 0)
        assert rec.requests == []
    assert row.status == "retrying" and row.last_status_code is None
    assert row.last_error is not None and row.last_error.startswith("must use https://")
    await db.write(lambda s: service.disable_webhook(s, shop.company_id, hook.id))
    await check_books(db, shop.company_id)


@pytest.mark.usefixtures("quiet_outbox")
async def test_redirects_are_not_followed_and_answers_are_cut_short(client, db, shop, database_url):
    body = b"<html>" + b"\x1b[31m\r\nInternal\tdetail " * 20 + b"x" * 100_000 + b"</html>"
    noisy = (
        b"HTTP/1.1 500 Oops\r\nContent-Type: text/html\r\nConnection: close\r\n"
        + f"Content-Length: {len(body)}\r\n\r\n".encode()
        + body
    )
    async with RawReceiver(b"") as elsewhere, RawReceiver(noisy) as failing:
        redirect = (
            f"HTTP/1.1 307 Temporary Redirect\r\nLocation: http://127.0.0.1:{elsewhere.port}/x"
            "\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        ).encode()
        async with RawReceiver(redirect) as redirecting:
            hooks = []
            for rec in (redirecting, failing):
                new = await service.check_new_webhook(
                    f"http://127.0.0.1:{rec.port}/hook",
                    ["order.created"],
                    UrlPolicy(allow_private=True),
                )
                hooks.append(
                    await db.write(lambda s, new=new: service.add_webhook(s, shop.company_id, new))
                )
            await make_sales(client, shop, 1)
            once = fast(database_url, webhook_max_age=0.0)  # one attempt, then dead
            async with DeliveryWorker(db, once) as worker:
                for hook, _ in hooks:
                    await work_until(worker, db, hook.id, lambda d: d.attempts > 0)
            assert len(redirecting.requests) == 1 and len(failing.requests) == 1
    assert elsewhere.requests == []  # the Location was never visited
    (moved,) = await deliveries(db, hooks[0][0].id)
    assert moved.status == "dead" and moved.last_status_code == 307
    assert moved.last_error == "HTTP 307"
    (failed,) = await deliveries(db, hooks[1][0].id)
    assert failed.last_status_code == 500
    error = failed.last_error or ""
    assert error.startswith("HTTP 500: <html> [31m Internal detail [31m Internal detail")
    excerpt = error.removeprefix("HTTP 500: ")
    assert len(excerpt) <= EXCERPT_CHARS <= 200
    assert not any(c in error for c in "\r\n\t\x1b")
    (attempt,) = await attempts_of(db, failed.id)
    assert attempt.error == error
    for hook, _ in hooks:
        await db.write(lambda s, wid=hook.id: service.disable_webhook(s, shop.company_id, wid))
    await check_books(db, shop.company_id)
