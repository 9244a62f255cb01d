"""The operator command line (DESIGN.md §11): a contract that scripts rely on.

Every command reads ``TILLBOOK_DATABASE_URL`` and applies migrations first. With
``--json`` a command prints exactly one JSON object on stdout; logs and errors go
to stderr. A domain error (unknown company, wrong password, bad rate limit) is one
line on stderr and exit code 1, never a traceback; a malformed option is click's
usage error, exit code 2.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import logging
import os
import signal
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Annotated, Any, NoReturn, TypeVar

import typer
from rich.console import Console
from rich.table import Column, Table
from sqlalchemy import select
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError, SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncSession

from tillbook.config import Settings, get_settings, master_key_bytes
from tillbook.db import Database, async_url
from tillbook.errors import TillbookError, invalid
from tillbook.kit import xid
from tillbook.models import ApiKey, Company, Warehouse
from tillbook.reports.common import check_scope
from tillbook.tenancy import service as tenancy

T = TypeVar("T")
log = logging.getLogger("tillbook.cli")

app = typer.Typer(
    help="tillbook: retail POS, inventory and double-entry accounting service.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_show_locals=False,
)
company_app = typer.Typer(help="Companies (tenants).", no_args_is_help=True)
warehouse_app = typer.Typer(help="Warehouses (branches) of a company.", no_args_is_help=True)
keys_app = typer.Typer(help="API key pairs, one warehouse each.", no_args_is_help=True)
report_app = typer.Typer(help="Read the books.", no_args_is_help=True)
app.add_typer(company_app, name="company")
app.add_typer(warehouse_app, name="warehouse")
app.add_typer(keys_app, name="keys")
app.add_typer(report_app, name="report")

out = Console(soft_wrap=True)
if not out.is_terminal:
    out.width = 160

JsonFlag = Annotated[bool, typer.Option("--json", help="Print one JSON object on stdout.")]


# ---------------------------------------------------------------- plumbing


def _fail(message: str) -> NoReturn:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(1)


def _shown_url(url: str) -> str:
    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:
        return "<unparseable URL>"


def _prepare(settings: Settings) -> None:
    """Refuse a bad database URL or master key with a message, then migrate."""
    from tillbook.migrate import upgrade

    try:
        url = make_url(async_url(settings.database_url))
    except Exception as exc:
        _fail(f"TILLBOOK_DATABASE_URL {_shown_url(settings.database_url)!r}: {exc}")
    file: Path | None = None
    if url.get_backend_name() == "sqlite" and url.database not in (None, "", ":memory:"):
        file = Path(url.database).resolve()
        if not file.parent.is_dir():
            _fail(f"TILLBOOK_DATABASE_URL: folder {file.parent} does not exist")
    try:
        master_key_bytes(settings)
    except Exception as exc:
        _fail(f"TILLBOOK_MASTER_KEY: {exc}")
    # One line on stderr naming the database, so that a command run from the wrong
    # folder (a relative SQLite path) shows it, and a new file is not a silent surprise.
    new = file is not None and not file.exists()
    if not new:
        where = f" ({file})" if file is not None else ""
        typer.echo(f"tillbook: database {_shown_url(settings.database_url)}{where}", err=True)
    try:
        upgrade(settings.database_url)
    except (SQLAlchemyError, OSError) as exc:
        _fail(_db_message(settings, exc))
    if new:
        typer.echo(
            f"tillbook: created a new empty database at {file} "
            f"({_shown_url(settings.database_url)})",
            err=True,
        )


def _db_message(settings: Settings, exc: BaseException) -> str:
    detail = exc.orig if isinstance(exc, DBAPIError) and exc.orig is not None else exc
    first = str(detail).strip().splitlines()[0] if str(detail).strip() else type(detail).__name__
    return f"cannot use the database {_shown_url(settings.database_url)}: {first}"


def _run(work: Callable[[Database], Awaitable[T]]) -> T:
    """Migrate, then run ``work`` against the configured database in one event loop."""
    settings = get_settings()
    _prepare(settings)

    async def main() -> T:
        db = Database(settings.database_url, pool_size=2)
        try:
            return await work(db)
        finally:
            await db.dispose()

    try:
        return asyncio.run(main())
    except TillbookError as exc:
        _fail(exc.message)
    except (SQLAlchemyError, OSError) as exc:
        _fail(_db_message(settings, exc))


def _write(fn: Callable[[AsyncSession], Awaitable[T]]) -> T:
    """One write transaction, committed once."""
    return _run(lambda db: db.write(fn))


def _read(fn: Callable[[AsyncSession], Awaitable[T]]) -> T:
    return _run(lambda db: db.read(fn))


def _print_json(obj: Any) -> None:
    sys.stdout.write(json.dumps(obj, indent=2, default=str) + "\n")
    sys.stdout.flush()


def _date(value: str | None, option: str) -> dt.date | None:
    if value is None:
        return None
    try:
        if len(value) != 10:
            raise ValueError
        return dt.date.fromisoformat(value)
    except ValueError:
        raise typer.BadParameter(f"expected YYYY-MM-DD, got {value!r}", param_hint=option) from None


def _iso(moment: dt.datetime | dt.date | None) -> str | None:
    if isinstance(moment, dt.datetime) and moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)  # SQLite hands back naive UTC times
    return None if moment is None else moment.isoformat()


# ---------------------------------------------------------------- serve, migrate, demo


@app.command()
def serve(
    host: Annotated[str, typer.Option(help="Interface to bind.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="TCP port.")] = 8000,
    workers: Annotated[int, typer.Option(min=1, help="Worker processes.")] = 1,
    no_worker: Annotated[
        bool, typer.Option("--no-worker", help="Do not run the webhook worker inside.")
    ] = False,
) -> None:
    """Migrate, then serve the API (uvicorn) on HOST:PORT."""
    import uvicorn

    os.environ["TILLBOOK_RUN_WORKER"] = "false" if no_worker else "true"
    get_settings.cache_clear()
    settings = get_settings()
    _prepare(settings)
    uvicorn.run(
        "tillbook.app:create_app",
        factory=True,
        host=host,
        port=port,
        workers=workers,
        log_level=settings.log_level.lower(),
    )


@app.command()
def worker() -> None:
    """Run the webhook delivery worker alone (no API), until interrupted."""
    from tillbook.events.worker import DeliveryWorker

    settings = get_settings()
    _prepare(settings)

    async def main() -> None:
        db = Database(settings.database_url)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        try:
            await DeliveryWorker(db, settings).run_forever(stop)
        finally:
            await db.dispose()

    asyncio.run(main())


@app.command()
def migrate() -> None:
    """Apply database migrations (every other command does this first too)."""
    from alembic.script import ScriptDirectory

    from tillbook.migrate import alembic_config

    settings = get_settings()
    _prepare(settings)
    head = ScriptDirectory.from_config(alembic_config(settings.database_url)).get_current_head()
    out.print(f"{_shown_url(settings.database_url)} is at revision {head}")


@app.command()
def demo(json_: JsonFlag = False) -> None:
    """Create a demo data set (two companies, stock, keys) and print its ids and keys."""
    from tillbook.demo import create_demo

    data = _write(create_demo)
    if json_:
        _print_json(data)
        return
    for company in data["companies"]:
        out.rule(f"[bold]{company['name']}[/] (company id {company['id']})")
        out.print(f"admin email    {company['admin']['email']}")
        out.print(f"admin password {company['admin']['password']}")
        for wh in company["warehouses"]:
            out.print(f"\n[bold]{wh['name']}[/] warehouse id {wh['id']} (xid {wh['xid']})")
            for key in wh["keys"]:
                out.print(f"  X-Service-Public-Key: {key['public_key']}")
                out.print(f"  X-Service-Secret-Key: {key['secret_key']}")
                out.print(f"  hmac_secret:          {key['hmac_secret']}")
                out.print(f"  rate limit:           {key['rate_limit']}")
            table = Table("id", "xid", "item_code", "name", "price", "stock", box=None)
            for p in company["products"]:
                if p["warehouse_id"] == wh["id"]:
                    table.add_row(
                        str(p["id"]),
                        p["xid"],
                        p["item_code"],
                        p["name"],
                        f"{p['sales_price']:.2f}",
                        str(p["current_stock"]),
                    )
            out.print(table)
        customers = ", ".join(f"{c['name']} ({c['id']})" for c in company["customers"])
        suppliers = ", ".join(f"{s['name']} ({s['id']})" for s in company["suppliers"])
        modes = ", ".join(f"{m['code']} ({m['id']})" for m in company["payment_modes"])
        taxes = ", ".join(f"{t['name']} ({t['id']})" for t in company["taxes"])
        out.print(f"\ncustomers: {customers}; walk-in id {company['walk_in_customer_id']}")
        out.print(f"suppliers: {suppliers}")
        out.print(f"payment modes: {modes}; taxes: {taxes}\n")
    key = data["companies"][0]["warehouses"][0]["keys"][0]
    out.print("Try it (after `tillbook serve`):")
    out.print(
        f"  curl -H 'X-Service-Public-Key: {key['public_key']}' "
        f"-H 'X-Service-Secret-Key: {key['secret_key']}' -H 'Accept: application/json' "
        "http://127.0.0.1:8000/api/v1/public/products",
        highlight=False,
    )


# ---------------------------------------------------------------- companies


@company_app.command("create")
def company_create(
    name: Annotated[str, typer.Argument(help="Company name.")],
    admin_email: Annotated[str, typer.Option("--admin-email", help="Administrator e-mail.")],
    admin_password: Annotated[
        str, typer.Option("--admin-password", help="Administrator password (8+ characters).")
    ],
    json_: JsonFlag = False,
) -> None:
    """Create a company with its chart of accounts, admin, Cash and Card modes."""

    async def work(session: AsyncSession) -> dict[str, Any]:
        company, admin = await tenancy.create_company(
            session, name, admin_email=admin_email, admin_password=admin_password
        )
        return {"id": company.id, "name": company.name, "admin_email": admin.email}

    data = _write(work)
    if json_:
        _print_json(data)
    else:
        out.print(f"Company {data['id']} {data['name']!r} created; admin {data['admin_email']}")


@company_app.command("subscription")
def company_subscription(
    company_id: Annotated[int, typer.Argument(help="Company id.")],
    expires: Annotated[
        str, typer.Option("--expires", help="Last valid day, YYYY-MM-DD, or 'never'.")
    ],
    json_: JsonFlag = False,
) -> None:
    """Set the last day the company's subscription is valid (API calls get 403 after)."""
    day = None if expires.lower() == "never" else _date(expires, "--expires")

    async def work(session: AsyncSession) -> dict[str, Any]:
        company = await check_scope(session, company_id)
        company.subscription_expires_on = day
        await session.flush()
        return {"id": company.id, "name": company.name, "subscription_expires_on": _iso(day)}

    data = _write(work)
    if json_:
        _print_json(data)
    else:
        until = data["subscription_expires_on"] or "no expiry"
        out.print(f"Company {data['id']} {data['name']!r}: subscription valid until {until}")


@company_app.command("list")
def company_list(json_: JsonFlag = False) -> None:
    """List companies and their warehouses."""

    async def work(session: AsyncSession) -> dict[str, Any]:
        companies = (await session.execute(select(Company).order_by(Company.id))).scalars().all()
        warehouses = (await session.execute(select(Warehouse).order_by(Warehouse.id))).scalars()
        by_company: dict[int, list[dict[str, Any]]] = {}
        for wh in warehouses:
            by_company.setdefault(wh.company_id, []).append({"id": wh.id, "name": wh.name})
        return {
            "companies": [
                {
                    "id": c.id,
                    "name": c.name,
                    "subscription_expires_on": _iso(c.subscription_expires_on),
                    "warehouses": by_company.get(c.id, []),
                }
                for c in companies
            ]
        }

    data = _read(work)
    if json_:
        _print_json(data)
        return
    table = Table("id", "name", "subscription", "warehouses")
    for c in data["companies"]:
        whs = ", ".join(f"{w['id']} {w['name']}" for w in c["warehouses"])
        table.add_row(str(c["id"]), c["name"], c["subscription_expires_on"] or "-", whs)
    out.print(table)


# ---------------------------------------------------------------- warehouses


@warehouse_app.command("create")
def warehouse_create(
    company_id: Annotated[int, typer.Argument(help="Company id.")],
    name: Annotated[str, typer.Argument(help="Warehouse name.")],
    allow_negative_stock: Annotated[
        bool,
        typer.Option("--allow-negative-stock", help="Let sales take stock below zero."),
    ] = False,
    json_: JsonFlag = False,
) -> None:
    """Create a warehouse (branch) of a company."""

    async def work(session: AsyncSession) -> dict[str, Any]:
        if not name.strip():
            raise invalid("name", "must not be empty")
        wh = await tenancy.create_warehouse(
            session, company_id, name.strip(), allow_negative_stock=allow_negative_stock
        )
        return {
            "id": wh.id,
            "xid": xid.encode(wh.id),
            "company_id": wh.company_id,
            "name": wh.name,
            "allow_negative_stock": wh.allow_negative_stock,
        }

    data = _write(work)
    if json_:
        _print_json(data)
    else:
        out.print(
            f"Warehouse {data['id']} (xid {data['xid']}) {data['name']!r} created in company "
            f"{data['company_id']}; negative stock "
            f"{'allowed' if data['allow_negative_stock'] else 'refused'}"
        )


# ---------------------------------------------------------------- keys


@keys_app.command("create")
def keys_create(
    warehouse: Annotated[int, typer.Option("--warehouse", help="Warehouse id.")],
    name: Annotated[str, typer.Option("--name", help="A name for the key (terminal, shop).")],
    rate_limit: Annotated[
        str, typer.Option("--rate-limit", help="N/minute or N/day (also N/second, N/hour).")
    ] = "600/minute",
    require_signature: Annotated[
        bool, typer.Option("--require-signature", help="Refuse requests without HMAC signature.")
    ] = False,
    json_: JsonFlag = False,
) -> None:
    """Create a key pair for a warehouse; the secret is printed once."""

    async def work(session: AsyncSession) -> dict[str, Any]:
        new = await tenancy.create_api_key(
            session, warehouse, name, rate_limit=rate_limit, require_signature=require_signature
        )
        return {
            "id": new.key.id,
            "name": new.key.name,
            "warehouse_id": new.key.warehouse_id,
            "public_key": new.key.public_key,
            "secret_key": new.secret_key,
            "hmac_secret": new.hmac_secret,
            "rate_limit": new.key.rate_limit,
            "require_signature": new.key.require_signature,
        }

    data = _write(work)
    if json_:
        _print_json(data)
        return
    out.print(f"Key {data['id']} {data['name']!r} for warehouse {data['warehouse_id']}")
    out.print(f"  public_key   {data['public_key']}")
    out.print(f"  secret_key   {data['secret_key']}")
    out.print(f"  hmac_secret  {data['hmac_secret']}")
    out.print(f"  rate_limit   {data['rate_limit']}")
    out.print(f"  signature    {'required' if data['require_signature'] else 'optional'}")
    out.print("The secret is shown once; `tillbook keys reveal` needs the admin password.")


@keys_app.command("list")
def keys_list(
    company: Annotated[int, typer.Option("--company", help="Company id.")],
    json_: JsonFlag = False,
) -> None:
    """List a company's keys (never their secrets)."""

    async def work(session: AsyncSession) -> dict[str, Any]:
        await check_scope(session, company)
        keys = (
            await session.execute(
                select(ApiKey).where(ApiKey.company_id == company).order_by(ApiKey.id)
            )
        ).scalars()
        return {
            "company_id": company,
            "keys": [
                {
                    "id": k.id,
                    "public_key": k.public_key,
                    "name": k.name,
                    "warehouse_id": k.warehouse_id,
                    "status": k.status,
                    "rate_limit": k.rate_limit,
                    "require_signature": k.require_signature,
                    "created_at": _iso(k.created_at),
                    "revoked_at": _iso(k.revoked_at),
                }
                for k in keys
            ],
        }

    data = _read(work)
    if json_:
        _print_json(data)
        return
    table = Table("name", "warehouse", "status", "rate limit", "created")
    table.columns.insert(0, Column("public_key", no_wrap=True, min_width=35))
    for k in data["keys"]:
        status = "active" if k["status"] == 1 else "revoked"
        table.add_row(
            k["public_key"],
            k["name"],
            str(k["warehouse_id"]),
            status,
            k["rate_limit"],
            (k["created_at"] or "")[:10],
        )
    out.print(table)


@keys_app.command("revoke")
def keys_revoke(
    public_key: Annotated[str, typer.Argument(help="The key's public key (pk_...).")],
    json_: JsonFlag = False,
) -> None:
    """Revoke a key: requests with it get 401 from now on. Revoking it again changes
    nothing and keeps the first revoked_at."""

    async def work(session: AsyncSession) -> dict[str, Any]:
        done = await tenancy.revoke_key(session, public_key)
        return {
            "public_key": done.key.public_key,
            "status": done.key.status,
            "revoked_at": _iso(done.key.revoked_at),
            "already_revoked": done.already_revoked,
        }

    data = _write(work)
    if json_:
        _print_json(data)
    elif data["already_revoked"]:
        out.print(f"Key {data['public_key']} was already revoked at {data['revoked_at']}")
    else:
        out.print(f"Key {data['public_key']} revoked")


@keys_app.command("reveal")
def keys_reveal(
    public_key: Annotated[str, typer.Argument(help="The key's public key (pk_...).")],
    admin_password: Annotated[
        str,
        typer.Option(
            "--admin-password",
            prompt=True,
            hide_input=True,
            help="The company administrator's password (prompted when omitted).",
        ),
    ],
    json_: JsonFlag = False,
) -> None:
    """Print a key's secret again; needs the company administrator's password."""
    secret = _read(lambda s: tenancy.reveal_secret(s, public_key, admin_password))
    if json_:
        _print_json({"public_key": public_key, "secret_key": secret})
    else:
        typer.echo(secret)


# ---------------------------------------------------------------- reports

CompanyOpt = Annotated[int, typer.Option("--company", help="Company id.")]
WarehouseOpt = Annotated[
    int | None, typer.Option("--warehouse", help="Only lines of this warehouse.")
]
FromOpt = Annotated[str | None, typer.Option("--from", help="First day, YYYY-MM-DD.")]
ToOpt = Annotated[str | None, typer.Option("--to", help="Last day, YYYY-MM-DD.")]


_NUMERIC = {"debit", "credit", "balance", "amount", "stock", "value"}


def _money_table(title: str, columns: list[str], rows: list[list[str]]) -> Table:
    table = Table(title=title, title_justify="left")
    for name in columns:
        table.add_column(name, justify="right" if name in _NUMERIC else "left")
    for row in rows:
        table.add_row(*row)
    return table


def _no_period(report: str, date_from: str | None, date_to: str | None) -> None:
    if date_from is not None or date_to is not None:
        raise typer.BadParameter(f"{report} is as of now; it takes no --from/--to")


@report_app.command("trial-balance")
def report_trial_balance(
    company: CompanyOpt,
    warehouse: WarehouseOpt = None,
    date_from: FromOpt = None,
    date_to: ToOpt = None,
    json_: JsonFlag = False,
) -> None:
    """Debits, credits and balance of every posting account."""
    from tillbook.reports import trial_balance

    start, end = _date(date_from, "--from"), _date(date_to, "--to")
    data = _read(lambda s: trial_balance(s, company, warehouse, start, end))
    if json_:
        _print_json(data)
        return
    rows = [
        [a["code"], a["name"], a["type"], a["debit"], a["credit"], a["balance"]]
        for a in data["accounts"]
    ]
    rows.append(["", "Total", "", data["total_debit"], data["total_credit"], ""])
    title = f"Trial balance, company {company}{_scope(warehouse, data['date_from'])}"
    out.print(
        _money_table(
            f"{title} as of {data['as_of']}",
            ["code", "name", "type", "debit", "credit", "balance"],
            rows,
        )
    )


def _scope(warehouse: int | None, date_from: str | None) -> str:
    text = f", warehouse {warehouse}" if warehouse is not None else ""
    return text + (f", from {date_from}" if date_from else "")


@report_app.command("profit-loss")
def report_profit_loss(
    company: CompanyOpt,
    warehouse: WarehouseOpt = None,
    date_from: FromOpt = None,
    date_to: ToOpt = None,
    json_: JsonFlag = False,
) -> None:
    """Income and expenses over a period, and the net profit."""
    from tillbook.reports import profit_loss

    start, end = _date(date_from, "--from"), _date(date_to, "--to")
    data = _read(lambda s: profit_loss(s, company, warehouse, start, end))
    if json_:
        _print_json(data)
        return
    rows: list[list[str]] = []
    for label, key in (("Income", "income"), ("Expenses", "expenses")):
        rows += [[a["code"], a["name"], a["amount"]] for a in data[key]["accounts"]]
        rows.append(["", f"Total {label.lower()}", data[key]["total"]])
    rows.append(["", "Net profit", data["net_profit"]])
    period = f"{data['date_from'] or 'start'} to {data['date_to'] or 'today'}"
    out.print(
        _money_table(
            f"Profit and loss, company {company}" + _scope(warehouse, None) + f", {period}",
            ["code", "name", "amount"],
            rows,
        )
    )


@report_app.command("balance-sheet")
def report_balance_sheet(
    company: CompanyOpt,
    warehouse: WarehouseOpt = None,
    date_from: FromOpt = None,
    date_to: Annotated[
        str | None, typer.Option("--to", help="As of this day (YYYY-MM-DD).")
    ] = None,
    json_: JsonFlag = False,
) -> None:
    """Assets, liabilities and equity (with current earnings) as of a day."""
    from tillbook.reports import balance_sheet

    if date_from is not None:
        raise typer.BadParameter("the balance sheet is as of a day: use --to only")
    as_of = _date(date_to, "--to")
    data = _read(lambda s: balance_sheet(s, company, warehouse, as_of))
    if json_:
        _print_json(data)
        return
    rows: list[list[str]] = []
    for label, key in (("Assets", "assets"), ("Liabilities", "liabilities"), ("Equity", "equity")):
        rows += [[a["code"], a["name"], a["amount"]] for a in data[key]["accounts"]]
        if key == "equity":
            rows.append(["", "Current earnings", data["equity"]["current_earnings"]])
        rows.append(["", f"Total {label.lower()}", data[key]["total"]])
    rows.append(["", "Liabilities and equity", data["total_liabilities_and_equity"]])
    out.print(
        _money_table(
            f"Balance sheet, company {company}"
            + _scope(warehouse, None)
            + f" as of {data['as_of']}"
            + ("" if data["balanced"] else " (DOES NOT BALANCE)"),
            ["code", "name", "amount"],
            rows,
        )
    )


@report_app.command("stock-valuation")
def report_stock_valuation(
    company: CompanyOpt,
    warehouse: Annotated[
        int | None,
        typer.Option("--warehouse", help="One warehouse; every warehouse when omitted."),
    ] = None,
    date_from: FromOpt = None,
    date_to: ToOpt = None,
    json_: JsonFlag = False,
) -> None:
    """FIFO layer value per product against the GL inventory account (11700)."""
    from tillbook.reports import stock_valuation, stock_valuation_company

    _no_period("stock-valuation", date_from, date_to)
    if warehouse is not None:
        wid = warehouse
        data = _read(lambda s: stock_valuation(s, company, wid))
        sections = [data]
    else:
        data = _read(lambda s: stock_valuation_company(s, company))
        sections = data["warehouses"]
    if json_:
        _print_json(data)
        return
    for section in sections:
        rows = [
            [str(p["product_id"]), p["xid"], p["name"], str(p["current_stock"]), p["value"]]
            for p in section["products"]
        ]
        rows.append(["", "", "Total", "", section["total_value"]])
        rows.append(["", "", "GL 11700 (this warehouse)", "", section["gl_inventory_balance"]])
        out.print(
            _money_table(
                f"Stock valuation, warehouse {section['warehouse_id']}",
                ["id", "xid", "name", "stock", "value"],
                rows,
            )
        )
    if warehouse is None:
        out.print(
            f"Company {company}: stock {data['total_value']}, "
            f"GL 11700 {data['gl_inventory_balance']}"
        )


@report_app.command("ledger")
def report_ledger(
    company: CompanyOpt,
    account: Annotated[str, typer.Option("--account", help="Account code, e.g. 11500.")],
    warehouse: WarehouseOpt = None,
    date_from: FromOpt = None,
    date_to: ToOpt = None,
    json_: JsonFlag = False,
) -> None:
    """Every line of one account with a running balance (debit - credit)."""
    from tillbook.reports.journal import account_ledger

    start, end = _date(date_from, "--from"), _date(date_to, "--to")
    data = _read(
        lambda s: account_ledger(
            s, company, account, warehouse_id=warehouse, date_from=start, date_to=end
        )
    )
    if json_:
        _print_json(data)
        return
    rows = [
        [
            line["date"],
            str(line["entry_id"]),
            line["narration"],
            line["debit"],
            line["credit"],
            line["balance"],
        ]
        for line in data["lines"]
    ]
    acc = data["account"]
    out.print(
        _money_table(
            f"Ledger {acc['code']} {acc['name']}, company {company}"
            f"{_scope(warehouse, data['date_from'])} (opening {data['opening_balance']})",
            ["date", "entry", "narration", "debit", "credit", "balance"],
            rows,
        )
    )


export_app = typer.Typer(help="Export the books.", no_args_is_help=True)
app.add_typer(export_app, name="export")


@export_app.command("journal")
def export_journal_command(
    company: CompanyOpt,
    fmt: Annotated[
        str, typer.Option("--format", help="beancount (bean-check) or ledger (hledger check).")
    ] = "beancount",
) -> None:
    """The whole journal on stdout as plain-text accounting, one transaction per entry."""
    from tillbook.reports.journal import export_journal

    async def work(session: AsyncSession) -> None:
        async for line in export_journal(session, company, fmt):
            sys.stdout.write(line + "\n")

    _read(work)
    sys.stdout.flush()


# ---------------------------------------------------------------- webhooks

webhooks_app = typer.Typer(help="Webhook endpoints and their deliveries.", no_args_is_help=True)
terminals_app = typer.Typer(
    help="Payment terminal providers that call back (per warehouse).", no_args_is_help=True
)
app.add_typer(webhooks_app, name="webhooks")
app.add_typer(terminals_app, name="terminals")

WebhookCompany = Annotated[int, typer.Option("--company", help="Company id.")]
WebhookId = Annotated[int, typer.Argument(help="Webhook id.")]


def _event_names(events: str | None) -> list[str] | None:
    """``a,b`` -> ["a", "b"]; omitted, empty or ``*`` -> every event."""
    if events is None:
        return None
    names = [name.strip() for name in events.split(",") if name.strip()]
    return names or None


def _every_problem(exc: Exception) -> Exception:
    """A 422 names only its first field; on the command line say every one."""
    from tillbook.errors import ValidationFailed

    if not isinstance(exc, ValidationFailed):
        return exc
    lines = [f"{field}: {msg}" for field, msgs in exc.errors.items() for msg in msgs]
    return ValidationFailed(exc.errors, "; ".join(lines))


def _webhook_secret_view(data: dict[str, Any]) -> dict[str, Any]:
    return {key: data[key] for key in ("id", "url", "events", "secret")}


def _print_webhook(data: dict[str, Any], what: str) -> None:
    state = "active" if data.get("active", True) else "disabled"
    out.print(f"Webhook {data['id']} {what}: {data['url']} ({', '.join(data['events'])}; {state})")


@webhooks_app.command("add")
def webhooks_add(
    company: WebhookCompany,
    url: Annotated[str, typer.Option("--url", help="https URL to POST events to.")],
    events: Annotated[
        str | None,
        typer.Option("--events", help="Comma-separated event types; every event when omitted."),
    ] = None,
    json_: JsonFlag = False,
) -> None:
    """Register a webhook endpoint; its signing secret is printed once.

    The URL must pass the address policy (see the README); a refused one exits 1."""
    from tillbook.api.admin.webhooks import webhook_view
    from tillbook.events import webhooks as service
    from tillbook.events.urlpolicy import UrlPolicy

    async def work(db: Database) -> dict[str, Any]:
        await db.read(lambda s: check_scope(s, company))
        try:
            new = await service.check_new_webhook(
                url, _event_names(events), UrlPolicy.from_settings(get_settings())
            )
        except TillbookError as exc:
            raise _every_problem(exc) from None
        webhook, secret = await db.write(lambda s: service.add_webhook(s, company, new))
        return webhook_view(webhook, secret)

    data = _run(work)
    if json_:
        _print_json(_webhook_secret_view(data))
        return
    _print_webhook(data, "added")
    out.print(f"  secret  {data['secret']}", highlight=False)
    out.print("The secret is shown once (`tillbook webhooks rotate` issues a new one).")


@webhooks_app.command("list")
def webhooks_list(company: WebhookCompany, json_: JsonFlag = False) -> None:
    """List a company's webhooks (never their secrets)."""
    from tillbook.api.admin.webhooks import webhook_view
    from tillbook.events import webhooks as service

    async def work(session: AsyncSession) -> dict[str, Any]:
        await check_scope(session, company)
        hooks = await service.list_webhooks(session, company)
        return {"company_id": company, "webhooks": [webhook_view(w) for w in hooks]}

    data = _read(work)
    if json_:
        _print_json(data)
        return
    table = Table("id", "url", "events", "active", "created", box=None)
    for w in data["webhooks"]:
        table.add_row(
            str(w["id"]), w["url"], ",".join(w["events"]), "yes" if w["active"] else "no",
            w["created_at"],
        )  # fmt: skip
    out.print(table)


def _set_webhook(company: int, webhook_id: int, active: bool, json_: bool) -> None:
    from tillbook.api.admin.webhooks import webhook_view
    from tillbook.events import webhooks as service

    change = service.enable_webhook if active else service.disable_webhook

    async def work(session: AsyncSession) -> dict[str, Any]:
        return webhook_view(await change(session, company, webhook_id))

    data = _write(work)
    if json_:
        _print_json(data)
    else:
        _print_webhook(data, "enabled" if active else "disabled")


@webhooks_app.command("disable")
def webhooks_disable(
    webhook_id: WebhookId, company: WebhookCompany, json_: JsonFlag = False
) -> None:
    """Stop sending to a webhook; its deliveries wait until it is enabled again."""
    _set_webhook(company, webhook_id, False, json_)


@webhooks_app.command("enable")
def webhooks_enable(
    webhook_id: WebhookId, company: WebhookCompany, json_: JsonFlag = False
) -> None:
    """Send to a disabled webhook again."""
    _set_webhook(company, webhook_id, True, json_)


@webhooks_app.command("remove")
def webhooks_remove(
    webhook_id: WebhookId, company: WebhookCompany, json_: JsonFlag = False
) -> None:
    """Delete a webhook with its deliveries and their attempts."""
    from tillbook.events import webhooks as service

    async def work(session: AsyncSession) -> dict[str, Any]:
        await service.remove_webhook(session, company, webhook_id)
        return {"id": webhook_id, "removed": True}

    data = _write(work)
    if json_:
        _print_json(data)
    else:
        out.print(f"Webhook {webhook_id} removed")


@webhooks_app.command("rotate")
def webhooks_rotate(
    webhook_id: WebhookId, company: WebhookCompany, json_: JsonFlag = False
) -> None:
    """Issue a new signing secret (printed once); the old one stops working at once."""
    from tillbook.api.admin.webhooks import webhook_view
    from tillbook.events import webhooks as service

    async def work(session: AsyncSession) -> dict[str, Any]:
        webhook, secret = await service.rotate_secret(session, company, webhook_id)
        return webhook_view(webhook, secret)

    data = _write(work)
    if json_:
        _print_json(_webhook_secret_view(data))
        return
    _print_webhook(data, "has a new secret")
    out.print(f"  secret  {data['secret']}", highlight=False)


@webhooks_app.command("deliveries")
def webhooks_deliveries(
    company: WebhookCompany,
    status: Annotated[
        str | None,
        typer.Option("--status", help="pending, delivering, retrying, delivered or dead."),
    ] = None,
    webhook: Annotated[int | None, typer.Option("--webhook", help="One webhook's only.")] = None,
    limit: Annotated[int, typer.Option("--limit", min=1, max=1000, help="Newest N.")] = 100,
    json_: JsonFlag = False,
) -> None:
    """List a company's deliveries, newest first."""
    from tillbook.api.admin.webhooks import delivery_view
    from tillbook.events import webhooks as service

    async def work(session: AsyncSession) -> dict[str, Any]:
        await check_scope(session, company)
        if webhook is not None:
            await service.get_webhook(session, company, webhook)
        rows = await service.list_deliveries(
            session, company, status, webhook_id=webhook, limit=limit
        )
        events = await service.event_refs(session, rows)
        return {"company_id": company, "deliveries": [delivery_view(d, events) for d in rows]}

    data = _read(work)
    if json_:
        _print_json(data)
        return
    table = Table("id", "webhook", "event", "status", "attempts", "last", "next attempt", box=None)
    for d in data["deliveries"]:
        last = str(d["last_status_code"] or d["last_error"] or "-")[:40]
        table.add_row(
            str(d["id"]), str(d["webhook_id"]), f"{d['event_type']} {d['event_id']}",
            d["status"], str(d["attempts"]), last, d["next_attempt_at"],
        )  # fmt: skip
    out.print(table)


@webhooks_app.command("redeliver")
def webhooks_redeliver(
    delivery_id: Annotated[int, typer.Argument(help="Delivery id (from `deliveries`).")],
    company: WebhookCompany,
    json_: JsonFlag = False,
) -> None:
    """Queue a delivery again now, whatever its state (a dead one gets a fresh 24 h)."""
    from tillbook.api.admin.webhooks import delivery_view
    from tillbook.events import webhooks as service

    async def work(session: AsyncSession) -> dict[str, Any]:
        delivery = await service.redeliver(session, delivery_id, company_id=company)
        return delivery_view(delivery, await service.event_refs(session, [delivery]))

    data = _write(work)
    if json_:
        _print_json(data)
    else:
        out.print(f"Delivery {data['id']} ({data['event_type']}) queued again")


# ---------------------------------------------------------------- terminals


def _provider_view(provider: Any, secret: str | None = None) -> dict[str, Any]:
    from tillbook.events.terminals import callback_path

    view: dict[str, Any] = {
        "id": provider.id,
        "name": provider.name,
        "warehouse_id": provider.warehouse_id,
        "payment_mode_id": provider.payment_mode_id,
        "callback_path": callback_path(provider),
    }
    if secret is not None:
        view["secret"] = secret
    else:
        view["active"] = provider.active
    return view


@terminals_app.command("add")
def terminals_add(
    warehouse: Annotated[int, typer.Option("--warehouse", help="Warehouse id.")],
    name: Annotated[str, typer.Option("--name", help="Provider name, unique per warehouse.")],
    payment_mode: Annotated[
        str, typer.Option("--payment-mode", help="Payment mode code (card) or id.")
    ],
    json_: JsonFlag = False,
) -> None:
    """Register a terminal provider; its callback path and secret are printed once."""
    from tillbook.events import terminals

    async def work(session: AsyncSession) -> dict[str, Any]:
        provider, secret = await terminals.add_provider(session, warehouse, name, payment_mode)
        return _provider_view(provider, secret)

    data = _write(work)
    if json_:
        _print_json(data)
        return
    out.print(f"Terminal provider {data['id']} {data['name']!r} for warehouse {warehouse}")
    out.print(f"  callback  POST {data['callback_path']}", highlight=False)
    out.print(f"  secret    {data['secret']}", highlight=False)
    out.print("Callbacks are signed: X-Service-Signature = hex HMAC-SHA256(secret, raw body).")


@terminals_app.command("list")
def terminals_list(
    warehouse: Annotated[int, typer.Option("--warehouse", help="Warehouse id.")],
    json_: JsonFlag = False,
) -> None:
    """List a warehouse's terminal providers (never their secrets)."""
    from tillbook.events import terminals

    async def work(session: AsyncSession) -> dict[str, Any]:
        providers = await terminals.list_providers(session, warehouse)
        return {"warehouse_id": warehouse, "providers": [_provider_view(p) for p in providers]}

    data = _read(work)
    if json_:
        _print_json(data)
        return
    table = Table("id", "name", "payment mode", "callback path", "active", box=None)
    for p in data["providers"]:
        table.add_row(
            str(p["id"]), p["name"], str(p["payment_mode_id"]), p["callback_path"],
            "yes" if p["active"] else "no",
        )  # fmt: skip
    out.print(table)


def main() -> None:
    try:
        settings = get_settings()
    except ValueError as exc:  # pydantic's ValidationError: a malformed TILLBOOK_* variable
        typer.echo(f"error: invalid settings: {exc}", err=True)
        raise SystemExit(1) from None
    level = logging.getLevelName(settings.log_level.upper())
    logging.basicConfig(
        stream=sys.stderr,
        level=level if isinstance(level, int) else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    if logging.getLogger().level > logging.DEBUG:
        logging.getLogger("alembic").setLevel(logging.WARNING)
    app()


if __name__ == "__main__":
    main()
