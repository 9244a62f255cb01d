"""The HTTP edge (DESIGN.md §12): the body cap before authentication, values quoted
short and secrets never, admin login limits per client address, the probes, the
headers every response carries, and one log line for an unexpected error.

Most tests drive the app in-process (httpx over ASGI); the ones about the wire
(a 100 MB body the server must not read, keep-alive, headers uvicorn adds) drive
``tillbook serve`` in its own process over TCP, on the same database.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import Request
from fastapi.responses import StreamingResponse
from sqlalchemy import func, select, text
from sqlalchemy.ext.asyncio import AsyncSession

import tillbook
from tests.factories import Shop, make_shop
from tests.invariants import check_books
from tillbook.app import create_app
from tillbook.config import Settings
from tillbook.db import Database
from tillbook.kit import crypto
from tillbook.models import Order, User

MIB = 1024 * 1024
CAP = MIB  # the default TILLBOOK_MAX_BODY_BYTES
TOO_LARGE = {"status": "error", "message": f"request body exceeds {CAP} bytes"}
PASSWORD = "correct horse battery"
BAD_KEY = {"X-Service-Public-Key": "pk_nobody", "X-Service-Secret-Key": "sk_nothing"}
JSON_TYPE = {"Content-Type": "application/json"}
SRC = str(Path(tillbook.__file__).resolve().parents[1])


def sale_body(shop: Shop, **extra: Any) -> dict[str, Any]:
    return {
        "user_id": shop.customer_id,
        "order_date": "2026-11-20",
        "product_items": [{"xid": shop.xid("apple"), "quantity": 1, "unit_price": 3.5}],
        **extra,
    }


def padded(body: dict[str, Any], size: int) -> bytes:
    """``body`` as JSON, padded with trailing whitespace to exactly ``size`` bytes."""
    raw = json.dumps(body).encode()
    assert len(raw) <= size
    return raw + b" " * (size - len(raw))


async def admin_email(db: Database, company_id: int) -> str:
    email = await db.read(
        lambda s: s.scalar(
            select(User.email).where(User.company_id == company_id, User.role == "owner")
        )
    )
    assert email
    return str(email)


async def count_orders(db: Database, company_id: int) -> int:
    async def run(s: AsyncSession) -> int:
        return int(
            await s.scalar(select(func.count(Order.id)).where(Order.company_id == company_id)) or 0
        )

    return await db.read(run)


@pytest.fixture
async def app_at(settings: Settings, db: Database) -> AsyncIterator[Any]:
    """A fresh app (its own login counters) and a client factory per client address."""
    app = create_app(settings, database=db)
    async with app.router.lifespan_context(app):
        clients: list[httpx.AsyncClient] = []

        def at(address: str) -> httpx.AsyncClient:
            transport = httpx.ASGITransport(app=app, client=(address, 40000))
            c = httpx.AsyncClient(transport=transport, base_url="http://testserver")
            clients.append(c)
            return c

        at.app = app  # type: ignore[attr-defined]
        yield at
        for c in clients:
            await c.aclose()


# --------------------------------------------------------------- the body cap, in-process


@pytest.mark.parametrize(
    "path",
    ["/sales", "http://testserver/api/v1/admin/login", "/terminal-callbacks/xyz"],
)
async def test_a_body_over_the_cap_is_refused_before_any_credential(client, shop, db, path):
    before = await count_orders(db, shop.company_id)
    body = padded(sale_body(shop), CAP + 1)
    r = await client.post(path, content=body, headers={**BAD_KEY, **JSON_TYPE})
    assert r.status_code == 413, r.text
    assert r.json() == TOO_LARGE
    assert r.headers["x-content-type-options"] == "nosniff"
    # Even with a good key: the cap comes first, and nothing is written.
    r = await client.post(path, content=body, headers={**shop.headers, **JSON_TYPE})
    assert (r.status_code, r.json()) == (413, TOO_LARGE)
    assert await count_orders(db, shop.company_id) == before


async def test_a_chunked_body_is_counted_as_it_arrives(client, shop, db):
    """No Content-Length: the read that crosses the cap ends the request with a 413
    (and the connection, whose remaining length nobody knows)."""
    before = await count_orders(db, shop.company_id)
    sent = 0

    async def chunks() -> AsyncIterator[bytes]:
        nonlocal sent
        raw = padded(sale_body(shop), 3 * CAP)
        for i in range(0, len(raw), 64 * 1024):
            sent += 64 * 1024
            yield raw[i : i + 64 * 1024]

    r = await client.post("/sales", content=chunks(), headers={**shop.headers, **JSON_TYPE})
    assert "content-length" not in r.request.headers
    assert (r.status_code, r.json()) == (413, TOO_LARGE)
    assert r.headers["connection"] == "close"
    assert await count_orders(db, shop.company_id) == before


async def test_a_body_at_the_cap_is_served(client, shop, db):
    before = await count_orders(db, shop.company_id)
    r = await client.post(
        "/sales", content=padded(sale_body(shop), CAP), headers={**shop.headers, **JSON_TYPE}
    )
    assert r.status_code == 200, r.text

    async def chunks() -> AsyncIterator[bytes]:
        raw = padded(sale_body(shop), CAP)
        for i in range(0, len(raw), 100_000):
            yield raw[i : i + 100_000]

    r = await client.post("/sales", content=chunks(), headers={**shop.headers, **JSON_TYPE})
    assert r.status_code == 200, r.text
    assert await count_orders(db, shop.company_id) == before + 2
    await check_books(db, shop.company_id)


async def test_the_cap_is_a_setting(settings: Settings, db: Database, monkeypatch):
    monkeypatch.setenv("TILLBOOK_MAX_BODY_BYTES", "2048")
    assert Settings().max_body_bytes == 2048
    assert Settings(database_url=settings.database_url).max_body_bytes == 2048
    monkeypatch.delenv("TILLBOOK_MAX_BODY_BYTES")
    assert Settings().max_body_bytes == CAP
    small = settings.model_copy(update={"max_body_bytes": 100})
    app = create_app(small, database=db)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as c:
            login = {"email": "x@example.com", "password": "p" * 40}
            r = await c.post("/api/v1/admin/login", content=padded(login, 101), headers=JSON_TYPE)
            assert r.json() == {"status": "error", "message": "request body exceeds 100 bytes"}
            assert r.status_code == 413
            r = await c.post("/api/v1/admin/login", content=padded(login, 100), headers=JSON_TYPE)
            assert r.status_code == 401, r.text


# --------------------------------------------------------------- the body cap, over TCP


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@pytest.fixture(scope="module")
def live(database_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, int]]:
    """``tillbook serve`` as an operator starts it, on a loopback port."""
    port = free_port()
    log_path = tmp_path_factory.mktemp("edge") / "serve.log"
    env = {
        **os.environ,
        "TILLBOOK_DATABASE_URL": database_url,
        "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", ""),
    }
    env.pop("TILLBOOK_REDIS_URL", None)
    with log_path.open("wb") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "tillbook.cli", "serve", "--no-worker", "--port", str(port)],
            env=env,
            cwd=tmp_path_factory.mktemp("cwd"),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, log_path.read_text()
            try:
                if httpx.get(f"http://127.0.0.1:{port}/health").status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "tillbook serve did not start"
            time.sleep(0.2)
        yield f"http://127.0.0.1:{port}", port
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def read_response(sock: socket.socket) -> tuple[int, dict[str, str], bytes]:
    """One HTTP/1.1 response with a Content-Length, read off a raw socket."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        assert chunk, f"connection closed before a response: {data!r}"
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {k.strip().lower(): v.strip() for k, _, v in (x.partition(":") for x in lines[1:])}
    length = int(headers["content-length"])
    while len(rest) < length:
        chunk = sock.recv(65536)
        assert chunk
        rest += chunk
    return status, headers, rest[:length]


def request_head(method: str, path: str, headers: dict[str, str]) -> bytes:
    lines = [
        f"{method} {path} HTTP/1.1",
        "Host: 127.0.0.1",
        *(f"{k}: {v}" for k, v in headers.items()),
    ]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def closed_by_peer(sock: socket.socket) -> bool:
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True


def test_live_100mb_body_is_answered_before_it_is_sent(live):
    """The 413 comes while 99.9 MB of the body are still on the client's side: the
    server answered on the Content-Length alone and closed instead of reading on."""
    _base, port = live
    declared = 100 * MIB
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        started = time.monotonic()
        head = {**BAD_KEY, **JSON_TYPE, "Content-Length": str(declared)}
        sock.sendall(request_head("POST", "/api/v1/public/sales", head) + b"[" * 65536)
        status, headers, body = read_response(sock)
        elapsed = time.monotonic() - started
        assert (status, json.loads(body)) == (413, TOO_LARGE)
        assert headers["connection"] == "close"
        assert elapsed < 5
        assert closed_by_peer(sock)


def test_live_100mb_body_through_a_client_stops_early(live):
    """An ordinary client streaming 100 MB gets the 413 after a few megabytes at most:
    the server stopped reading, so the client's writes failed and it read the answer."""
    base, _port = live
    for path in ("/api/v1/public/sales", "/api/v1/admin/login"):
        for declared in (True, False):
            sent = 0

            def body() -> Iterator[bytes]:
                nonlocal sent
                block = b"x" * (256 * 1024)
                while sent < 100 * MIB:
                    sent += len(block)
                    yield block

            headers = {**BAD_KEY, **JSON_TYPE}
            if declared:
                headers["Content-Length"] = str(100 * MIB)
            started = time.monotonic()
            r = httpx.post(base + path, content=body(), headers=headers, timeout=30)
            assert (r.status_code, r.json()) == (413, TOO_LARGE), (path, declared)
            assert time.monotonic() - started < 10
            assert sent < 40 * MIB, (path, declared, sent)
    assert httpx.get(base + "/ready").status_code == 200


def test_live_keep_alive_survives_refusals_it_can(live):
    """A body a little over the cap is read and dropped, and the connection serves the
    next request; so does every other refusal (bad JSON, a bad key, a 404)."""
    _base, port = live
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        over = b" " * (CAP + CAP // 2)
        head = {**BAD_KEY, **JSON_TYPE, "Content-Length": str(len(over))}
        sock.sendall(request_head("POST", "/api/v1/public/sales", head) + over)
        status, headers, body = read_response(sock)
        assert (status, json.loads(body)) == (413, TOO_LARGE)
        assert "connection" not in headers
        for method, path, raw, expected in [
            ("POST", "/api/v1/admin/login", b"{not json", 400),
            ("POST", "/api/v1/admin/login", b'{"email": "a@b.c", "password": 1}', 422),
            ("GET", "/api/v1/public/products", b"", 401),
            ("GET", "/nowhere", b"", 404),
            ("GET", "/health", b"", 200),
        ]:
            head = {**BAD_KEY, **JSON_TYPE, "Content-Length": str(len(raw))}
            sock.sendall(request_head(method, path, head) + raw)
            status, headers, _ = read_response(sock)
            assert status == expected, (path, status)
            assert "connection" not in headers


async def test_live_a_body_under_the_cap_logs_in(live, db):
    base, _port = live
    shop = await make_shop(db)
    email = await admin_email(db, shop.company_id)
    raw = padded({"email": email, "password": PASSWORD}, CAP - 1)
    async with httpx.AsyncClient(base_url=base, timeout=30) as c:
        r = await c.post("/api/v1/admin/login", content=raw, headers=JSON_TYPE)
    assert r.status_code == 200, r.text
    assert r.json()["token"].startswith("adm_")


def test_live_headers_nosniff_date_and_no_server(live):
    base, _port = live
    with httpx.Client(base_url=base) as c:
        for path, status, kind in [
            ("/health", 200, "application/json"),
            ("/ready", 200, "application/json"),
            ("/api/v1/nowhere", 404, "application/json"),
            ("/api/v1/public/products", 401, "application/json"),
            # outside /api the back office's pages answer, errors as pages
            ("/nowhere", 404, "text/html; charset=utf-8"),
        ]:
            r = c.get(path)
            assert r.status_code == status, r.text
            assert r.headers["x-content-type-options"] == "nosniff"
            assert "server" not in r.headers
            assert r.headers["date"].endswith(" GMT")
            assert r.headers["content-type"] == kind
        assert c.get("/health").json() == {"status": "success"}
        assert c.get("/ready").json() == {"status": "success"}


# --------------------------------------------------------------- what an error message quotes


def longest_run(text: str, char: str) -> int:
    return max((len(m) for m in re.findall(f"{re.escape(char)}+", text)), default=0)


async def test_admin_login_never_quotes_the_password(app_at):
    c = app_at("192.0.2.10")
    secret = "s3cr3t-" + "z" * 1100
    for password in (secret, 12345678, ["hunter2-guess"], True):
        r = await c.post(
            "/api/v1/admin/login", json={"email": "a@example.com", "password": password}
        )
        assert r.status_code == 422, r.text
        assert set(r.json()["errors"]) == {"password"}
        for shown in ("s3cr3t", "zzz", "12345678", "hunter2", "True"):
            assert shown not in r.text, (password, r.text)
    long_email = "q" * 900 + "@example.com"
    r = await c.post("/api/v1/admin/login", json={"email": long_email, "password": secret})
    assert r.status_code == 422
    assert longest_run(r.text, "q") == 100
    assert "…" in r.json()["errors"]["email"][0]
    assert "s3cr3t" not in r.text


async def test_a_900_kb_field_is_quoted_100_characters(client, shop, db):
    before = await count_orders(db, shop.company_id)
    huge = "x" * 900_000
    for extra in ({"notes": huge}, {"order_date": huge}, {"user_id": huge}):
        body = sale_body(shop, **extra)
        r = await client.post("/sales", json=body, headers=shop.headers)
        assert r.status_code == 422, r.text
        field = next(iter(extra))
        assert field in r.json()["errors"]
        assert len(r.content) < 2000, (field, len(r.content))
        assert longest_run(r.text, "x") <= 100
        assert "…" in r.json()["message"]
    assert await count_orders(db, shop.company_id) == before


async def test_query_path_and_header_values_are_quoted_short(client, shop, db, app_at):
    r = await client.get("/products", params={"page": "9" * 5000}, headers=shop.headers)
    assert r.status_code == 422, r.text
    assert longest_run(r.text, "9") == 100
    r = await client.get("/sales", params={"dates": "d" * 5000}, headers=shop.headers)
    assert r.status_code == 422, r.text
    assert longest_run(r.text, "d") == 100
    for path in ("/sales/", "/products/", "/customers/"):
        r = await client.get(path + "8" * 5000, headers=shop.headers)
        assert r.status_code == 404, r.text
        assert longest_run(r.text, "8") <= 100
    r = await client.post(
        "/sales", content=b"{}", headers={**shop.headers, "Content-Type": "text/" + "p" * 5000}
    )
    assert r.status_code == 415, r.text
    assert longest_run(r.text, "p") == 100 - len("text/")
    c = app_at("192.0.2.11")
    email = await admin_email(db, shop.company_id)
    login = await c.post("/api/v1/admin/login", json={"email": email, "password": PASSWORD})
    bearer = {"Authorization": f"Bearer {login.json()['token']}"}
    for path in (
        "/webhooks/deliveries/" + "7" * 5000 + "/attempts",
        "/webhooks/deliveries?limit=" + "7" * 5000,
    ):
        r = await c.get("/api/v1/admin" + path, headers=bearer)
        assert r.status_code in (404, 422), r.text
        assert longest_run(r.text, "7") == 100


def test_request_errors_hide_secrets_and_cut_values():
    """FastAPI's own (query, path, header) errors go through the same rule."""
    from tillbook.api.body import errors_of_request

    errors = errors_of_request(
        [
            {
                "type": "string_too_long",
                "loc": ("header", "x-service-secret-key"),
                "msg": "String should have at most 64 characters",
                "input": "sk_live_" + "9" * 80,
            },
            {
                "type": "int_parsing",
                "loc": ("query", "limit"),
                "msg": "Input should be a valid integer",
                "input": "7" * 5000,
            },
        ]
    )
    assert "sk_live" not in str(errors)
    assert errors["x-service-secret-key"] == ["String should have at most 64 characters"]
    assert errors["limit"] == [f"Input should be a valid integer (got {'7' * 100!r}…)"]


# --------------------------------------------------------------- admin login limits


async def test_a_strangers_failures_do_not_lock_the_owner_out(app_at, db):
    shop = await make_shop(db)
    email = await admin_email(db, shop.company_id)
    stranger, owner = app_at("203.0.113.66"), app_at("198.51.100.7")
    for _ in range(10):
        r = await stranger.post("/api/v1/admin/login", json={"email": email, "password": "guess"})
        assert r.status_code == 401, r.text
    blocked = await stranger.post(
        "/api/v1/admin/login", json={"email": email, "password": PASSWORD}
    )
    assert blocked.status_code == 429, blocked.text
    assert "token" not in blocked.text  # the right password is refused there too
    assert 1 <= int(blocked.headers["retry-after"]) <= 15 * 60
    r = await owner.post("/api/v1/admin/login", json={"email": email, "password": PASSWORD})
    assert r.status_code == 200, r.text
    # The owner's own typos count on the owner's address, and a right password
    # forgets them.
    for _ in range(9):
        r = await owner.post("/api/v1/admin/login", json={"email": email, "password": "typo"})
        assert r.status_code == 401
    r = await owner.post("/api/v1/admin/login", json={"email": email, "password": PASSWORD})
    assert r.status_code == 200, r.text
    for _ in range(2):
        r = await owner.post("/api/v1/admin/login", json={"email": email, "password": "typo"})
        assert r.status_code == 401
    blocked = await stranger.post("/api/v1/admin/login", json={"email": email, "password": "x"})
    assert blocked.status_code == 429


async def test_guessing_across_many_emails_from_one_address_is_blocked(app_at, db, monkeypatch):
    shop = await make_shop(db)
    email = await admin_email(db, shop.company_id)
    calls = count_password_checks(monkeypatch)
    guesser = app_at("203.0.113.99")
    for i in range(30):
        r = await guesser.post(
            "/api/v1/admin/login", json={"email": f"victim-{i}@example.com", "password": "guess"}
        )
        assert r.status_code == 401, (i, r.text)
    assert len(calls) == 30
    for other in ("victim-99@example.com", email):
        r = await guesser.post("/api/v1/admin/login", json={"email": other, "password": PASSWORD})
        assert r.status_code == 429, r.text
        assert r.json()["message"].startswith("too many failed logins from this address")
        assert 1 <= int(r.headers["retry-after"]) <= 15 * 60
    assert len(calls) == 30  # refused before any scrypt work
    r = await app_at("203.0.113.100").post(
        "/api/v1/admin/login", json={"email": email, "password": PASSWORD}
    )
    assert r.status_code == 200, r.text


def count_password_checks(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    calls: list[str] = []
    real = crypto.verify_password

    def counting(password: str, stored: str) -> bool:
        calls.append(stored)
        return real(password, stored)

    monkeypatch.setattr(crypto, "verify_password", counting)
    return calls


async def test_a_refused_login_costs_no_scrypt_work(app_at, db, monkeypatch):
    shop = await make_shop(db)
    email = await admin_email(db, shop.company_id)
    calls = count_password_checks(monkeypatch)
    c = app_at("203.0.113.5")
    for _ in range(10):
        r = await c.post("/api/v1/admin/login", json={"email": email, "password": "guess"})
        assert r.status_code == 401
    assert len(calls) == 10
    refused = await asyncio.gather(
        *(
            c.post("/api/v1/admin/login", json={"email": email.upper(), "password": p})
            for p in ("guess", PASSWORD, "again", "x" * 1024)
        )
    )
    assert [r.status_code for r in refused] == [429] * 4
    assert len(calls) == 10
    assert "for this email from this address" in refused[0].json()["message"]


async def test_parallel_guesses_cannot_pass_the_limit(app_at, db):
    shop = await make_shop(db)
    email = await admin_email(db, shop.company_id)
    c = app_at("203.0.113.6")
    answers = await asyncio.gather(
        *(
            c.post("/api/v1/admin/login", json={"email": email, "password": f"guess-{i}"})
            for i in range(14)
        )
    )
    assert sorted(r.status_code for r in answers) == [401] * 10 + [429] * 4


async def test_a_keys_retry_after_never_exceeds_its_window(client, db):
    shop = await make_shop(db, rate_limit="5/minute")
    answers = [await client.get("/warehouses", headers=shop.headers) for _ in range(6)]
    assert [r.status_code for r in answers] == [200] * 5 + [429]
    assert 1 <= int(answers[-1].headers["retry-after"]) <= 60


# --------------------------------------------------------------- probes


async def test_health_and_ready_need_no_credentials(client):
    for path in ("/health", "/ready"):
        r = await client.get(f"http://testserver{path}")
        assert (r.status_code, r.json()) == (200, {"status": "success"})
        assert r.headers["x-content-type-options"] == "nosniff"


@pytest.mark.parametrize("where", ["postgresql-closed-port", "sqlite-missing-folder", "pg-no-db"])
async def test_ready_is_503_when_the_database_does_not_answer(settings, where, tmp_path):
    url = {
        "postgresql-closed-port": f"postgresql://postgres@127.0.0.1:{free_port()}/nowhere",
        "sqlite-missing-folder": f"sqlite:///{tmp_path}/missing/folder/tillbook.db",
        "pg-no-db": "postgresql://postgres@127.0.0.1:5432/tillbook_no_such_database",
    }[where]
    if where == "pg-no-db" and not os.environ.get("TILLBOOK_TEST_DATABASE_URL"):
        pytest.skip("needs a PostgreSQL server")
    database = Database(url)
    app = create_app(settings, database=database)
    try:
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as c:
                r = await c.get("/ready")
                assert r.status_code == 503, r.text
                assert r.json() == {
                    "status": "error",
                    "message": "the database is unavailable; retry shortly",
                }
                assert (await c.get("/health")).status_code == 200
    finally:
        await database.dispose()


# --------------------------------------------------------------- logs


@pytest.mark.parametrize("statement", ["not-null", "cast"])
async def test_a_database_error_logs_one_line_without_the_values(
    settings, db, backend, statement, caplog
):
    if statement == "cast" and backend == "sqlite":
        pytest.skip("SQLite casts anything")
    sql = {
        "not-null": "INSERT INTO users (email) VALUES (:v)",
        "cast": "SELECT CAST(:v AS INTEGER)",
    }[statement]
    app = create_app(settings, database=db)

    async def provoke(request: Request) -> dict[str, str]:
        value = (await request.json())["email"]

        async def unit(s: AsyncSession) -> None:
            await s.execute(text(sql), {"v": value})

        await db.write(unit)
        return {"status": "success"}

    app.add_api_route("/provoke", provoke, methods=["POST"])
    email = "alice.private@example.com"
    caplog.set_level(logging.DEBUG)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as c:
            r = await c.post("/provoke", json={"email": email})
    assert r.status_code == 500
    request_id = r.json()["request_id"]
    assert r.headers["x-request-id"] == request_id
    assert r.headers["x-content-type-options"] == "nosniff"
    errors = [rec for rec in caplog.records if rec.levelno >= logging.ERROR]
    assert len(errors) == 1, [rec.getMessage() for rec in errors]
    line = errors[0].getMessage()
    assert request_id in line and "Error" in line and "\n" not in line
    assert errors[0].exc_info is None
    logged = [rec for rec in caplog.records if rec.levelno >= logging.INFO]
    assert not [rec for rec in logged if "alice" in logging.Formatter().format(rec)]
    # The traceback (DEBUG) shows the statement, not its parameters. PostgreSQL's own
    # messages may quote a value (a bad cast, a failing row's DETAIL): they stay in
    # that DEBUG traceback, never at INFO and up.
    traceback = "\n".join(
        logging.Formatter().format(rec)
        for rec in caplog.records
        if rec.name.startswith("tillbook") and rec.exc_info
    )
    assert "SQL parameters hidden due to hide_parameters=True" in traceback
    assert "[parameters:" not in traceback
    if backend == "sqlite":
        assert "alice" not in traceback


async def test_an_error_after_the_answer_started_is_logged_once(settings, db, caplog):
    app = create_app(settings, database=db)

    async def stream() -> AsyncIterator[bytes]:
        yield b'{"status": "success", "data": ['
        raise RuntimeError("the stream broke")

    async def broken() -> StreamingResponse:
        return StreamingResponse(stream(), media_type="application/json")

    app.add_api_route("/broken", broken, methods=["GET"])
    caplog.set_level(logging.INFO)
    sent: list[dict[str, Any]] = []

    requested = False

    async def receive() -> dict[str, Any]:
        nonlocal requested
        if not requested:
            requested = True
            return {"type": "http.request", "body": b"", "more_body": False}
        await asyncio.Event().wait()  # the client stays connected
        raise AssertionError("unreachable")

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": "/broken",
        "raw_path": b"/broken",
        "query_string": b"",
        "root_path": "",
        "headers": [(b"host", b"testserver")],
        "client": ("127.0.0.1", 5000),
        "server": ("testserver", 80),
    }
    async with app.router.lifespan_context(app):
        # Returns (the server then closes the connection on the unfinished answer)
        # instead of raising for the server to log again with a traceback.
        await app(scope, receive, send)
    assert sent[0]["type"] == "http.response.start" and sent[0]["status"] == 200
    request_id = dict(sent[0]["headers"])[b"x-request-id"].decode()
    errors = [rec.getMessage() for rec in caplog.records if rec.levelno >= logging.ERROR]
    assert errors == [f"unhandled error (request {request_id}): RuntimeError: the stream broke"]


async def test_bad_input_logs_no_error(client, shop, caplog):
    caplog.set_level(logging.INFO)
    for body in (b"{", b"[]", json.dumps(sale_body(shop, notes="n" * 5000)).encode()):
        r = await client.post("/sales", content=body, headers={**shop.headers, **JSON_TYPE})
        assert 400 <= r.status_code < 500
    assert not [rec for rec in caplog.records if rec.levelno >= logging.WARNING]
