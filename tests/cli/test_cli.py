"""The operator command line, run as an operator runs it: a separate process with
``TILLBOOK_DATABASE_URL`` pointing at the test database (SQLite, and PostgreSQL
when ``TILLBOOK_TEST_DATABASE_URL`` is set). The keys it prints are then used
against the API, in-process and through a real ``tillbook serve``.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import time
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import pytest
from alembic import command as alembic_command
from sqlalchemy import text
from sqlalchemy.exc import IntegrityError

from tests.cli_process import CLI, run_cli
from tests.conftest import PG_URL, _create_pg_database, _drop_pg_database
from tillbook.app import create_app
from tillbook.auth.service import KEY_CACHE_S
from tillbook.config import Settings
from tillbook.db import Database, create_engine
from tillbook.migrate import alembic_config

Run = Callable[..., subprocess.CompletedProcess[str]]
BEFORE_UNIQUE_ADMIN_EMAIL = "56059980b159"  # the revision before uq_users_admin_email


def _env(database_url: str) -> dict[str, str]:
    env = dict(os.environ)
    env["TILLBOOK_DATABASE_URL"] = database_url
    env["TILLBOOK_MASTER_KEY"] = os.environ["TILLBOOK_MASTER_KEY"]
    env.pop("TILLBOOK_REDIS_URL", None)
    return env


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("cli")


@pytest.fixture(scope="module")
def cli(database_url: str, workdir: Path) -> Run:
    def run(*args: str, code: int = 0) -> subprocess.CompletedProcess[str]:
        result = run_cli(args, env=_env(database_url), cwd=workdir)
        assert result.returncode == code, (args, result.stdout, result.stderr)
        assert "Traceback" not in result.stderr, result.stderr
        return result

    return run


def as_json(result: subprocess.CompletedProcess[str]) -> Any:
    return json.loads(result.stdout)  # exactly one JSON document on stdout


@pytest.fixture(scope="module")
def demo(cli: Run) -> dict[str, Any]:
    data: dict[str, Any] = as_json(cli("demo", "--json"))
    return data


def _key_headers(key: dict[str, Any]) -> dict[str, str]:
    return {
        "X-Service-Public-Key": key["public_key"],
        "X-Service-Secret-Key": key["secret_key"],
        "Accept": "application/json",
    }


async def _get(database_url: str, path: str, headers: dict[str, str]) -> httpx.Response:
    """GET against the app in-process, with the settings an operator would use."""
    app = create_app(Settings(database_url=database_url))
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(
            transport=transport, base_url="http://testserver/api/v1/public"
        ) as client:
            return await client.get(path, headers=headers)


# ---------------------------------------------------------------- demo


def test_demo_json_shape(demo: dict[str, Any]) -> None:
    companies = demo["companies"]
    assert len(companies) == 2
    assert len(companies[0]["warehouses"]) == 2
    for company in companies:
        assert set(company) >= {
            "id", "name", "admin", "warehouses", "customers", "walk_in_customer_id",
            "suppliers", "payment_modes", "taxes", "expense_categories", "categories",
            "brands", "products",
        }  # fmt: skip
        assert set(company["admin"]) == {"email", "password"}
        assert len(company["admin"]["password"]) >= 8
        for wh in company["warehouses"]:
            assert set(wh) >= {"id", "xid", "name", "keys"}
            (key,) = wh["keys"]
            assert key["public_key"].startswith("pk_")
            assert key["secret_key"].startswith("sk_")
            assert key["hmac_secret"]
            assert key["rate_limit"] == "600/minute"
            products = [p for p in company["products"] if p["warehouse_id"] == wh["id"]]
            assert 6 <= len(products) <= 10
            codes = [p["item_code"] for p in products]
            assert len(set(codes)) == len(codes)
            for p in products:
                assert set(p) == {
                    "id", "xid", "name", "item_code", "warehouse_id", "sales_price",
                    "purchase_price", "mrp", "current_stock",
                }  # fmt: skip
                assert isinstance(p["sales_price"], int | float)
                assert p["current_stock"] > 0
        customers = {c["id"]: c for c in company["customers"]}
        assert company["walk_in_customer_id"] in customers
        assert len(customers) >= 2
        assert all(set(c) == {"id", "xid", "name"} for c in company["customers"])
        assert company["suppliers"]
        modes = {m["code"]: m for m in company["payment_modes"]}
        assert modes["cash"]["account_code"] == "11101"
        assert modes["card"]["account_code"] == "11105"
        assert all(set(m) == {"id", "xid", "code", "name", "account_code"} for m in modes.values())
        taxes = {(t["rate"], t["inclusive"]) for t in company["taxes"]}
        assert (10, False) in taxes
        assert (20, True) in taxes
        assert all(e["account_code"].startswith("52") for e in company["expense_categories"])
        parents = {c["parent_id"] for c in company["categories"]}
        assert parents & {c["id"] for c in company["categories"]}  # a category with a child
        assert company["brands"]


def test_demo_again_readable_output(cli: Run, demo: dict[str, Any]) -> None:
    """A second run prints keys readably and makes a second, independent data set."""
    text = cli("demo").stdout
    assert "X-Service-Public-Key: pk_" in text
    assert "X-Service-Secret-Key: sk_" in text
    assert "admin password" in text
    listed = as_json(cli("company", "list", "--json"))["companies"]
    by_id = {c["id"]: c for c in listed}
    first = demo["companies"][0]
    assert [w["id"] for w in by_id[first["id"]]["warehouses"]] == [
        w["id"] for w in first["warehouses"]
    ]
    newer = [c for c in listed if c["id"] > demo["companies"][1]["id"]]
    assert [c["name"] for c in newer][:2] == [c["name"] for c in demo["companies"]]


async def test_demo_key_works_in_process(database_url: str, demo: dict[str, Any]) -> None:
    for company in demo["companies"]:
        for wh in company["warehouses"]:
            r = await _get(database_url, "/warehouses", _key_headers(wh["keys"][0]))
            assert r.status_code == 200, r.text
            assert r.json()["data"][0]["id"] == wh["id"]
            assert r.headers["x-ratelimit-limit"] == "600"


async def test_demo_history_keeps_the_books(db: Database, demo: dict[str, Any]) -> None:
    """The demo's month of trading is real documents: every store sold on most of
    the thirty days up to today, bought on account, paid a bill, and each company's
    books keep DESIGN.md §5's invariants."""
    import datetime as dt

    from sqlalchemy import func, select

    from tests.invariants import check_books
    from tillbook.kit.changes import utc
    from tillbook.models import Expense, Order

    now = dt.datetime.now(dt.UTC)
    today = now.date()
    for company in demo["companies"]:
        for wh in company["warehouses"]:
            days, first, last = await db.read(
                lambda s, w=wh["id"]: _one(
                    s,
                    select(
                        func.count(func.distinct(Order.order_date)),
                        func.min(Order.order_date),
                        func.max(Order.order_date),
                    ).where(Order.warehouse_id == w, Order.order_type == "sales"),
                )
            )
            assert days >= 25 and first >= today - dt.timedelta(days=30) and last == today
            latest = await db.read(
                lambda s, w=wh["id"]: s.scalar(
                    select(func.max(Order.order_datetime)).where(Order.warehouse_id == w)
                )
            )
            assert utc(latest) <= now  # no sale later than the demo ran
            kinds = await db.read(
                lambda s, w=wh["id"]: s.scalars(
                    select(Order.order_type).where(Order.warehouse_id == w).distinct()
                )
            )
            assert set(kinds) == {"sales", "purchases"}
            bills = await db.read(
                lambda s, w=wh["id"]: s.scalar(
                    select(func.count()).select_from(Expense).where(Expense.warehouse_id == w)
                )
            )
            assert bills == 1
        await check_books(db, company["id"])


async def _one(session: Any, statement: Any) -> Any:
    return (await session.execute(statement)).one()


async def test_demo_products_carry_mrp(database_url: str, demo: dict[str, Any]) -> None:
    """Packaged goods carry the printed maximum retail price, at or above the
    sales price; loose produce and nails sold by weight carry none."""
    for company in demo["companies"]:
        printed = {(p["id"], p["warehouse_id"]): p["mrp"] for p in company["products"]}
        for wh in company["warehouses"]:
            r = await _get(database_url, "/products?limit=100", _key_headers(wh["keys"][0]))
            assert r.status_code == 200, r.text
            listed = r.json()["data"]["data"]
            assert listed
            with_mrp = [p for p in listed if p["mrp"] is not None]
            assert len(with_mrp) > len(listed) // 2, listed
            for p in with_mrp:
                assert Decimal(str(p["mrp"])) >= Decimal(str(p["sales_price"])), p
            for p in listed:
                assert p["mrp"] == printed[(p["id"], wh["id"])]
                if p["unit"]["short_name"] == "kg":
                    assert p["mrp"] is None, p
    # the grocer's catalog is one: some products in both stores, at each store's price
    grocer = demo["companies"][0]
    stores = {}
    for p in grocer["products"]:
        stores.setdefault(p["id"], []).append((p["warehouse_id"], p["sales_price"]))
    both = [s for s in stores.values() if len(s) == 2]
    assert len(both) >= 2 and any(len(s) == 1 for s in stores.values())
    assert all(a[1] != b[1] for a, b in both)
    units = {p["name"]: p["mrp"] for c in demo["companies"] for p in c["products"]}
    assert units["Orange juice 1L"] == 2.79
    assert units["Bananas"] is None
    assert units["Galvanised nails 50mm, loose"] is None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def test_serve_with_demo_key(database_url: str, workdir: Path, demo: dict[str, Any]) -> None:
    """The real path: ``tillbook serve`` in its own process, hit over TCP."""
    port = _free_port()
    log = (workdir / f"serve-{port}.log").open("w")
    proc = subprocess.Popen(
        [*CLI, "serve", "--host", "127.0.0.1", "--port", str(port), "--no-worker"],
        env=_env(database_url),
        cwd=workdir,
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        wh = demo["companies"][0]["warehouses"][1]
        base = f"http://127.0.0.1:{port}/api/v1/public"
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, (workdir / f"serve-{port}.log").read_text()
            try:
                r = httpx.get(f"{base}/warehouses", headers=_key_headers(wh["keys"][0]))
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline, "tillbook serve did not start"
                time.sleep(0.2)
        assert r.status_code == 200, r.text
        assert r.json()["data"] == [
            {"id": wh["id"], "xid": wh["xid"], "name": wh["name"], "allow_negative_stock": False}
        ]
        bad = dict(_key_headers(wh["keys"][0]), **{"X-Service-Secret-Key": "sk_wrong"})
        r = httpx.get(f"{base}/warehouses", headers=bad)
        assert r.status_code == 401
        assert r.json() == {"status": "error", "message": "invalid secret key"}
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


# ---------------------------------------------------------------- operator tasks


def test_migrate(cli: Run) -> None:
    assert "is at revision" in cli("migrate").stdout


def _notices(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("tillbook: ")]


def test_database_named_on_stderr(cli: Run, database_url: str) -> None:
    """Every command that opens the database names it in one line on stderr; stdout
    keeps exactly the JSON document."""
    listed = cli("company", "list", "--json")
    assert "companies" in as_json(listed)
    (notice,) = _notices(listed.stderr)
    assert notice.startswith("tillbook: database ")
    if database_url.startswith("sqlite"):
        path = database_url.removeprefix("sqlite:///")
        assert notice == f"tillbook: database {database_url} ({Path(path).resolve()})"


def test_new_database_in_another_folder_says_so(tmp_path: Path) -> None:
    """The default URL is a relative SQLite path: run from the wrong folder, the
    command says it created a new empty database there; the next run names it."""
    folder = tmp_path / "somewhere else"
    folder.mkdir()
    env = _env("unused")
    del env["TILLBOOK_DATABASE_URL"]  # the default, sqlite:///./tillbook.db

    def run(*args: str, code: int = 0) -> subprocess.CompletedProcess[str]:
        result = run_cli(args, env=env, cwd=folder)
        assert result.returncode == code, result.stderr
        return result

    created = run("company", "list", "--json")
    assert as_json(created) == {"companies": []}
    db_file = folder / "tillbook.db"
    assert db_file.exists()
    assert _notices(created.stderr) == [
        f"tillbook: created a new empty database at {db_file} (sqlite:///./tillbook.db)"
    ]
    again = run("keys", "list", "--company", "1", code=1)
    assert _notices(again.stderr) == [f"tillbook: database sqlite:///./tillbook.db ({db_file})"]
    assert "company 1 not found" in again.stderr


def test_database_notice_hides_the_password(workdir: Path) -> None:
    env = _env("postgresql://till:hunter2-pw@127.0.0.1:1/tillbook")
    result = run_cli(["company", "list", "--json"], env=env, cwd=workdir)
    assert result.returncode == 1
    assert result.stdout == ""
    assert _notices(result.stderr) == [
        "tillbook: database postgresql://till:***@127.0.0.1:1/tillbook"
    ]
    assert "hunter2-pw" not in result.stderr


async def test_company_warehouse_and_keys(cli: Run, database_url: str) -> None:
    company = as_json(
        cli("company", "create", "Test Traders", "--admin-email", "boss@test.example",
            "--admin-password", "s3cret-pass", "--json")
    )  # fmt: skip
    assert set(company) == {"id", "name", "admin_email", "base_currency"}
    assert company["base_currency"] == "USD"
    assert company["name"] == "Test Traders"
    assert company["admin_email"] == "boss@test.example"
    cid = str(company["id"])

    wh = as_json(cli("warehouse", "create", cid, "Back store", "--allow-negative-stock", "--json"))
    assert set(wh) == {"id", "xid", "company_id", "name", "allow_negative_stock"}
    assert wh["company_id"] == company["id"]
    assert wh["allow_negative_stock"] is True

    key = as_json(
        cli("keys", "create", "--warehouse", str(wh["id"]), "--name", "till 7",
            "--rate-limit", "60/minute", "--json")
    )  # fmt: skip
    assert set(key) == {
        "id", "name", "warehouse_id", "public_key", "secret_key", "hmac_secret", "rate_limit",
        "require_signature",
    }  # fmt: skip
    assert key["warehouse_id"] == wh["id"]
    assert key["rate_limit"] == "60/minute"
    assert key["require_signature"] is False
    signed = as_json(
        cli("keys", "create", "--warehouse", str(wh["id"]), "--name", "web shop",
            "--rate-limit", "10000/day", "--require-signature", "--json")
    )  # fmt: skip
    assert signed["require_signature"] is True
    assert signed["rate_limit"] == "10000/day"

    r = await _get(database_url, "/warehouses", _key_headers(key))
    assert r.status_code == 200, r.text
    assert r.headers["x-ratelimit-limit"] == "60"
    r = await _get(database_url, "/warehouses", _key_headers(signed))
    assert r.status_code == 401  # unsigned request with a key that requires signing

    listing = cli("keys", "list", "--company", cid, "--json")
    assert key["secret_key"] not in listing.stdout
    assert key["hmac_secret"] not in listing.stdout
    keys = {k["public_key"]: k for k in as_json(listing)["keys"]}
    assert set(keys) == {key["public_key"], signed["public_key"]}
    listed = keys[key["public_key"]]
    assert listed["name"] == "till 7"
    assert listed["warehouse_id"] == wh["id"]
    assert listed["status"] == 1
    assert listed["rate_limit"] == "60/minute"
    assert listed["created_at"]
    assert not {"secret_key", "hmac_secret"} & set(listed)
    table = cli("keys", "list", "--company", cid).stdout
    assert key["public_key"] in table
    assert key["secret_key"] not in table

    wrong = cli("keys", "reveal", key["public_key"], "--admin-password", "not-it", code=1)
    assert "wrong administrator password" in wrong.stderr
    assert key["secret_key"] not in wrong.stdout + wrong.stderr
    shown = cli("keys", "reveal", key["public_key"], "--admin-password", "s3cret-pass")
    assert shown.stdout.strip() == key["secret_key"]

    # Rotation: new secrets for the same public key, the old ones refused. A key
    # changed by another process (the CLI) applies to this process's GETs within the
    # key cache's life (auth.service.KEY_CACHE_S): forked CLI calls take well under
    # it, so each GET after a rotation waits it out.
    rotated = as_json(cli("keys", "rotate", key["public_key"], "--json"))
    await asyncio.sleep(KEY_CACHE_S)
    assert rotated["public_key"] == key["public_key"]
    assert rotated["secret_key"] != key["secret_key"]
    assert rotated["hmac_secret"] != key["hmac_secret"]
    r = await _get(database_url, "/warehouses", _key_headers(key))
    assert r.status_code == 401
    key = {**key, "secret_key": rotated["secret_key"], "hmac_secret": rotated["hmac_secret"]}
    r = await _get(database_url, "/warehouses", _key_headers(key))
    assert r.status_code == 200, r.text
    shown = cli("keys", "reveal", key["public_key"], "--admin-password", "s3cret-pass")
    assert shown.stdout.strip() == rotated["secret_key"]
    assert rotated["old_secrets_valid_until"] is None

    # With --grace the old secrets keep working until then (tills moved one by one).
    bad = cli("keys", "rotate", key["public_key"], "--grace", "2d", code=1)
    assert "--grace" in bad.stderr and "24h" in bad.stderr
    graced = as_json(cli("keys", "rotate", key["public_key"], "--grace", "1h", "--json"))
    assert graced["old_secrets_valid_until"]
    await asyncio.sleep(KEY_CACHE_S)
    assert (await _get(database_url, "/warehouses", _key_headers(key))).status_code == 200
    key = {**key, "secret_key": graced["secret_key"], "hmac_secret": graced["hmac_secret"]}
    assert (await _get(database_url, "/warehouses", _key_headers(key))).status_code == 200
    said = cli("keys", "rotate", key["public_key"], "--grace", "24h").stdout
    assert "the old ones work until" in said
    secret_line = next(line for line in said.splitlines() if "secret key:" in line)
    key = {**key, "secret_key": secret_line.split()[-1]}

    revoked = as_json(cli("keys", "revoke", key["public_key"], "--json"))
    assert revoked["status"] == 0
    assert revoked["revoked_at"]
    assert revoked["already_revoked"] is False
    # Revoking again changes nothing: the first revoked_at stays, and it says so.
    time.sleep(0.01)
    again = as_json(cli("keys", "revoke", key["public_key"], "--json"))
    assert again == {**revoked, "already_revoked": True}
    said = cli("keys", "revoke", key["public_key"]).stdout
    assert f"Key {key['public_key']} was already revoked at {revoked['revoked_at']}" in said
    keys = {k["public_key"]: k for k in as_json(cli("keys", "list", "--company", cid, "--json"))
            ["keys"]}  # fmt: skip
    assert keys[key["public_key"]]["status"] == 0
    assert keys[key["public_key"]]["revoked_at"] == revoked["revoked_at"]
    assert keys[signed["public_key"]]["status"] == 1
    await asyncio.sleep(KEY_CACHE_S)
    r = await _get(database_url, "/warehouses", _key_headers(key))
    assert r.status_code == 401
    assert r.json()["message"] == "invalid or inactive public key"
    refused = cli("keys", "rotate", key["public_key"], code=1)
    assert "revoked" in refused.stderr


def test_admin_email_belongs_to_one_company(cli: Run) -> None:
    """A second company with an admin email already in use, in any case, is refused
    and nothing of it is written; admin login can then only mean one company."""
    first = as_json(
        cli("company", "create", "First Owner Ltd", "--admin-email", " Owner.One@Shop.example ",
            "--admin-password", "s3cret-pass", "--json")
    )  # fmt: skip
    assert first["admin_email"] == "Owner.One@Shop.example"
    before = as_json(cli("company", "list", "--json"))["companies"]
    for email in ("Owner.One@Shop.example", "owner.one@shop.example", "OWNER.ONE@SHOP.EXAMPLE"):
        refused = cli(
            "company", "create", "Second Owner Ltd", "--admin-email", email,
            "--admin-password", "other-pass", "--json", code=1,
        )  # fmt: skip
        assert refused.stdout == ""
        assert f"error: admin email {email} is already used by another company" in refused.stderr
    assert as_json(cli("company", "list", "--json"))["companies"] == before
    other = as_json(
        cli("company", "create", "Second Owner Ltd", "--admin-email", "owner.two@shop.example",
            "--admin-password", "other-pass", "--json")
    )  # fmt: skip
    assert other["id"] > first["id"]
    bad = cli("company", "create", "X", "--admin-email", "no-at-sign", "--admin-password",
              "long-enough", code=1)  # fmt: skip
    assert "admin_email: must be an email address" in bad.stderr


async def _old_database(backend: str, tmp_path: Path) -> tuple[str, str | None]:
    """A database at the revision before admin emails became unique (a fresh
    PostgreSQL database, or a SQLite file), and the PostgreSQL name to drop."""
    if backend == "sqlite":
        url = f"sqlite:///{tmp_path / 'old.db'}"
        name = None
    else:
        assert PG_URL is not None
        url, name = await _create_pg_database(PG_URL)
    await asyncio.to_thread(alembic_command.upgrade, alembic_config(url), BEFORE_UNIQUE_ADMIN_EMAIL)
    return url, name


async def _sql(url: str, statement: str, **params: Any) -> list[Any]:
    engine = create_engine(url)
    try:
        async with engine.begin() as conn:
            result = await conn.execute(text(statement), params)
            return list(result.all()) if result.returns_rows else []
    finally:
        await engine.dispose()


async def test_migration_renames_duplicate_admin_emails(
    backend: str, tmp_path: Path, workdir: Path
) -> None:
    """An older database with one admin email in two companies still migrates: the
    oldest admin keeps it, later ones get ``+duplicate-<id>``, the operator is told,
    and from then on the database itself refuses a duplicate login in any case
    (``staff_logins``, keyed by the lower-cased email). The admins
    are staff owners after the later staff revision (d4c7a2f9b613), and the index
    covers every staff member."""
    url, name = await _old_database(backend, tmp_path)
    try:
        ids = {}
        for n, email in enumerate(("Owner@Dup.example", "owner@dup.example", "OWNER@DUP.EXAMPLE")):
            await _sql(url, "INSERT INTO companies (name, base_currency) VALUES (:n, 'USD')",
                       n=f"Dup {n}")  # fmt: skip
            (cid,) = (await _sql(url, "SELECT max(id) FROM companies"))[0]
            for user_type in ("admin", "customer"):  # customers may share addresses
                await _sql(
                    url,
                    "INSERT INTO users (company_id, user_type, name, email, is_walk_in, balance)"
                    " VALUES (:c, :t, 'x', :e, false, 0)",
                    c=cid, t=user_type, e=email,
                )  # fmt: skip
            ((uid,),) = await _sql(
                url, "SELECT id FROM users WHERE company_id = :c AND user_type = 'admin'", c=cid
            )
            ids[email] = (cid, uid)
        migrated = run_cli(["migrate"], env=_env(url), cwd=workdir)
        assert migrated.returncode == 0, migrated.stderr
        rows = await _sql(
            url, "SELECT id, user_type, email FROM users WHERE company_id >= :c ORDER BY id",
            c=ids["Owner@Dup.example"][0],
        )  # fmt: skip
        admins = {uid: email for uid, kind, email in rows if kind == "staff"}
        first, second, third = (ids[e][1] for e in ids)
        assert admins == {
            first: "Owner@Dup.example",
            second: f"owner+duplicate-{second}@dup.example",
            third: f"OWNER+duplicate-{third}@DUP.EXAMPLE",
        }
        owners = await _sql(
            url, "SELECT DISTINCT role FROM users WHERE company_id >= :c AND user_type = 'staff'",
            c=ids["Owner@Dup.example"][0],
        )  # fmt: skip
        assert [tuple(r) for r in owners] == [("owner",)]
        customers = [email for _uid, kind, email in rows if kind == "customer"]
        assert customers == list(ids)
        for email in ("owner", "OWNER"):
            uid = second if email == "owner" else third
            assert f"renamed to {email}+duplicate-{uid}@" in migrated.stderr
        # The login is the lower-cased email, one row of ``staff_logins`` each (issue 28:
        # a rule across tenants has a coordinator table of its own): a second claim on it
        # is refused by the database, whatever the case.
        with pytest.raises(IntegrityError):
            await _sql(
                url,
                "INSERT INTO staff_logins (email, company_id, user_id) VALUES (lower(:e), :c, :u)",
                e="OWNER@dup.Example",
                c=ids["owner@dup.example"][0],
                u=ids["owner@dup.example"][1] + 1000,
            )
        refused = run_cli(
            ["company", "create", "Dup 4", "--admin-email", "owner@DUP.example",
             "--admin-password", "long-enough"],
            env=_env(url), cwd=workdir,
        )  # fmt: skip
        assert refused.returncode == 1, refused.stderr
        assert "is already used by another company" in refused.stderr
    finally:
        if name is not None:
            assert PG_URL is not None
            await _drop_pg_database(PG_URL, name)


async def test_subscription(cli: Run, database_url: str, demo: dict[str, Any]) -> None:
    company = demo["companies"][1]
    key = company["warehouses"][0]["keys"][0]
    cid = str(company["id"])
    expired = as_json(cli("company", "subscription", cid, "--expires", "2001-01-31", "--json"))
    assert expired == {
        "id": company["id"],
        "name": company["name"],
        "subscription_expires_on": "2001-01-31",
    }
    # A plan changed by another process applies to this process's GETs within the
    # key cache's life (auth.service.KEY_CACHE_S), not at once.
    await asyncio.sleep(KEY_CACHE_S)
    r = await _get(database_url, "/warehouses", _key_headers(key))
    assert r.status_code == 403
    cli("company", "subscription", cid, "--expires", "2999-12-31")
    await asyncio.sleep(KEY_CACHE_S)
    r = await _get(database_url, "/warehouses", _key_headers(key))
    assert r.status_code == 200
    cleared = as_json(cli("company", "subscription", cid, "--expires", "never", "--json"))
    assert cleared["subscription_expires_on"] is None
    bad = cli("company", "subscription", cid, "--expires", "31/12/2030", code=2)
    assert "YYYY-MM-DD" in bad.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["warehouse", "create", "987654321", "Nowhere"], "company 987654321 not found"),
        (["keys", "create", "--warehouse", "987654321", "--name", "x"], "warehouse 987654321"),
        (["keys", "revoke", "pk_does_not_exist"], "no such key"),
        (["keys", "rotate", "pk_does_not_exist"], "no such key"),
        (["keys", "rotate", "pk_\udcff\udcfe"], "no such key"),  # bytes that are no UTF-8
        (["keys", "reveal", "pk_does_not_exist", "--admin-password", "whatever1"], "no such key"),
        (["company", "create", "X", "--admin-email", "a@b.c", "--admin-password", "short"],
         "at least 8 characters"),
        (["report", "trial-balance", "--company", "987654321"], "company 987654321 not found"),
        (["keys", "create", "--warehouse", "1", "--name", "x", "--rate-limit", "5/week"],
         "rate limit must look like 60/minute"),
    ],
)  # fmt: skip
def test_user_mistakes_exit_1_without_traceback(cli: Run, args: list[str], message: str) -> None:
    result = cli(*args, code=1)
    assert message in result.stderr
    assert result.stdout == ""


# ---------------------------------------------------------------- reports


def _check_valuation(sv: dict[str, Any], company: dict[str, Any]) -> Decimal:
    assert set(sv) == {"warehouse_id", "products", "total_value", "gl_inventory_balance"}
    assert sv["total_value"] == sv["gl_inventory_balance"]
    assert Decimal(sv["total_value"]) == sum(Decimal(p["value"]) for p in sv["products"])
    assert {p["product_id"] for p in sv["products"]} == {
        p["id"] for p in company["products"] if p["warehouse_id"] == sv["warehouse_id"]
    }
    assert all(set(p) == {"product_id", "xid", "name", "current_stock", "value"}
               for p in sv["products"])  # fmt: skip
    return Decimal(sv["total_value"])


def test_report_json_shapes_after_demo(cli: Run, demo: dict[str, Any]) -> None:
    for company in demo["companies"]:
        cid = str(company["id"])
        tb = as_json(cli("report", "trial-balance", "--company", cid, "--json"))
        assert set(tb) >= {"company_id", "as_of", "accounts", "total_debit", "total_credit"}
        assert tb["company_id"] == company["id"]
        assert tb["total_debit"] == tb["total_credit"]
        accounts = {a["code"]: a for a in tb["accounts"]}
        assert all(set(a) == {"code", "name", "type", "debit", "credit", "balance"}
                   for a in tb["accounts"])  # fmt: skip
        inventory = Decimal(accounts["11700"]["balance"])
        assert inventory > 0
        # a month of trading: takings in the drawer and the card account, goods sold
        # at a cost, a supplier owed, the opening stock's equity
        assert Decimal(accounts["11101"]["balance"]) > 0
        assert Decimal(accounts["11105"]["balance"]) != 0
        assert Decimal(accounts["41100"]["balance"]) < 0
        assert Decimal(accounts["51100"]["balance"]) > 0
        assert Decimal(accounts["21100"]["balance"]) < 0
        assert Decimal(accounts["31100"]["balance"]) < 0

        whole = as_json(cli("report", "stock-valuation", "--company", cid, "--json"))
        assert whole["company_id"] == company["id"]
        assert whole["total_value"] == whole["gl_inventory_balance"] == str(inventory)
        assert [w["warehouse_id"] for w in whole["warehouses"]] == [
            w["id"] for w in company["warehouses"]
        ]
        assert sum(_check_valuation(w, company) for w in whole["warehouses"]) == inventory

    company = demo["companies"][0]
    cid, wid = str(company["id"]), str(company["warehouses"][1]["id"])
    sv = as_json(cli("report", "stock-valuation", "--company", cid, "--warehouse", wid, "--json"))
    assert sv["warehouse_id"] == company["warehouses"][1]["id"]
    _check_valuation(sv, company)
    tb_wh = as_json(cli("report", "trial-balance", "--company", cid, "--warehouse", wid, "--json"))
    wh_accounts = {a["code"]: a for a in tb_wh["accounts"]}
    assert wh_accounts["11700"]["balance"] == sv["gl_inventory_balance"]
    assert tb_wh["total_debit"] == tb_wh["total_credit"]

    listed = {p["id"]: p for p in company["products"] if p["warehouse_id"] == sv["warehouse_id"]}
    for row in sv["products"]:  # the demo's output says the stock after its history
        assert Decimal(row["current_stock"]) == Decimal(
            str(listed[row["product_id"]]["current_stock"])
        )
    pl = as_json(cli("report", "profit-loss", "--company", cid, "--json"))
    assert set(pl) >= {"income", "expenses", "net_profit"}
    assert Decimal(pl["net_profit"]) != 0
    bs = as_json(cli("report", "balance-sheet", "--company", cid, "--json"))
    assert bs["balanced"] is True
    assert bs["assets"]["total"] == bs["total_liabilities_and_equity"]
    assert Decimal(bs["assets"]["total"]) > 0


def test_report_period_and_readable_output(cli: Run, demo: dict[str, Any]) -> None:
    cid = str(demo["companies"][1]["id"])
    old = as_json(
        cli("report", "trial-balance", "--company", cid, "--from", "2000-01-01", "--to",
            "2000-12-31", "--json")
    )  # fmt: skip
    assert old["as_of"] == "2000-12-31"
    assert old["total_debit"] == old["total_credit"] == "0.00"
    assert "Trial balance" in cli("report", "trial-balance", "--company", cid).stdout
    assert "Stock valuation" in cli("report", "stock-valuation", "--company", cid).stdout
    bad = cli("report", "profit-loss", "--company", cid, "--from", "2000-02-30", code=2)
    assert "YYYY-MM-DD" in bad.stderr
