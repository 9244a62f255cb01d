"""The books at scale (issue 14): reports, ledger pages, the journal export and the
CLI's start, timed on a PostgreSQL database holding many past sales.

```sh
python bench/books.py --history 200000 --json books-200k.json
python bench/books.py --history 50000 \
    --database-url postgresql://postgres@127.0.0.1:5432/tillbook_bench_books_50k
python bench/books.py --never-closed --history 1000000 --no-export-all \
    --database-url postgresql://postgres@127.0.0.1:5432/tillbook_bench_books_never_1m
```

1. **Seed** (unless ``--reuse``): a fresh database (its name must contain
   ``bench``), migrated; a company with 2 warehouses through the service's own
   functions, ``--products`` products per warehouse with opening stock, 200
   customers; then ``--history`` past sales written set-based straight into the
   journal, as ``orders.sales`` posts a split-tender sale: one entry and six lines
   each (Dr 11101 cash, Dr 11105 card, Dr 51100 cost / Cr 41100 revenue, Cr 21200
   tax, Cr 11700 stock), one in ten a credit sale to a customer (Dr 11500 with the
   party instead of the card), dated evenly over the last 730 days like
   ``bench/seed.py``'s history. The reports read only the journal, the roll-ups,
   the listings and the FIFO layers, so orders and their items are left out (this
   seeder does not depend on the catalog's shape, which ``seed.py`` follows).
2. **Close** the books through the end of last month as an accountant would
   (``reports.periods.close``: closing entries for each year end passed, the
   roll-ups of every closed month), timed. With ``--never-closed`` (issue 27) the
   close is skipped, as in most shops: the company's roll-ups are forgotten first
   (so every run starts from a database nobody closed and nothing rolled up, and
   the same database measures the code before and after), the first report is
   timed on its own (it rolls up the months due, ``ledger.rollups.current``), and
   the reports after it are the ones measured.
3. **Reports**, each run ``--repeat`` times in-process (server time, the median
   reported): trial balance, profit and loss, balance sheet and stock valuation
   for the whole company and for one month (last month, closed; and the open
   month), the party balances of 200 customers, the first page of the cash
   account's ledger for last month and a page deep into it, a party statement
   page, and the roll-up check.
4. **Export**: ``tillbook export journal --format beancount`` of everything and of
   one month, to /dev/null, through the CLI in a child process: wall time and peak
   RSS (``/usr/bin/time``), and of the CLI's own start (``--help`` and a trial
   balance).
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

DEFAULT_URL = "postgresql://postgres@127.0.0.1:5432/tillbook_bench_books"
STATE = Path(os.environ.get("TMPDIR", "/tmp")) / "tillbook-bench"


async def fresh_database(url: str) -> None:
    import asyncpg
    from sqlalchemy.engine import make_url

    parsed = make_url(url)
    name = parsed.database or ""
    if "bench" not in name:
        raise SystemExit(f"refusing to drop database {name!r}: its name must contain 'bench'")
    admin = await asyncpg.connect(
        parsed.set(database="postgres", drivername="postgresql").render_as_string(False)
    )
    try:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.execute(f'CREATE DATABASE "{name}"')
    finally:
        await admin.close()


def dsn(url: str) -> str:
    from sqlalchemy.engine import make_url

    return make_url(url).set(drivername="postgresql").render_as_string(False)


async def seed(url: str, history: int, products: int) -> dict[str, Any]:
    import asyncpg

    from tillbook.catalog.seeding import create_product
    from tillbook.db import Database
    from tillbook.tenancy import service as tenancy
    from tillbook.unit import UnitOfWork

    db = Database(url, pool_size=2)

    async def tenant(uow: UnitOfWork) -> dict[str, Any]:
        session = uow.session
        company, _admin = await tenancy.create_company(
            session, "Books Bench", admin_email="books@bench.example", admin_password="bench pass 1"
        )
        warehouses = [await tenancy.create_warehouse(session, company.id, f"Branch {i}")
                      for i in (1, 2)]  # fmt: skip
        await session.flush()
        for w in warehouses:
            for n in range(products):
                await create_product(
                    uow,
                    company_id=company.id,
                    warehouse_id=w.id,
                    name=f"Product {w.id}-{n}",
                    item_code=f"P{w.id}-{n}",
                    sales_price=Decimal("5.00"),
                    purchase_price=Decimal("2.00"),
                    opening_batches=[(Decimal("100000"), Decimal("2.00"))],
                )
        return {"company_id": company.id, "warehouses": [w.id for w in warehouses]}

    try:
        info = await db.unit(tenant)
    finally:
        await db.dispose()
    cid = info["company_id"]
    conn = await asyncpg.connect(dsn(url))
    try:
        await conn.execute("SET session_replication_role = replica")
        acc = {
            r["code"]: r["id"]
            for r in await conn.fetch("SELECT code, id FROM accounts WHERE company_id = $1", cid)
        }
        await conn.execute(
            "INSERT INTO users (company_id, user_type, name, phone, is_walk_in, balance, "
            "version) SELECT $1, 'customer', 'Customer ' || n, '555-' || n, false, 0, 1 "
            "FROM generate_series(1, 200) n",
            cid,
        )
        customers = [
            r["id"]
            for r in await conn.fetch(
                "SELECT id FROM users WHERE company_id = $1 AND user_type = 'customer' ORDER BY id",
                cid,
            )
        ]
        # A large opening stock so that 11700 stays positive over the history.
        e0 = await conn.fetchval("SELECT coalesce(max(id), 0) FROM journal_entries")
        t0 = time.perf_counter()
        await conn.execute(
            """
            CREATE TEMP TABLE h AS
            SELECT n,
                   (current_date - ((($1::int - n) * 730) / greatest($1::int, 1)))::date AS d,
                   ($2::bigint[])[(n % 2) + 1] AS wh,
                   (n % 10 = 0) AS credit,
                   ($3::bigint[])[(n % array_length($3::bigint[], 1)) + 1] AS customer,
                   ((n % 7) + 2) * 5.00 AS net,
                   ((n % 7) + 2) * 0.50 AS tax,
                   ((n % 7) + 2) * 2.00 AS cost
            FROM generate_series(1, $1::int) n
            """,
            history,
            info["warehouses"],
            customers,
        )
        await conn.execute(
            """
            INSERT INTO journal_entries (id, company_id, warehouse_id, entry_date, narration,
                source_type, source_id, created_at)
            SELECT $1::bigint + n, $2, wh, d, 'Sale SAL-' || n, 'sale', n, d + time '12:00'
            FROM h ORDER BY n
            """,
            e0,
            cid,
        )
        # six lines a sale: cash 40 %, card 60 % (or the customer's credit), cost,
        # revenue, tax, stock
        await conn.execute(
            """
            INSERT INTO journal_lines (entry_id, company_id, warehouse_id, account_id, party_id,
                                       debit, credit)
            SELECT $1::bigint + h.n, $2, h.wh, l.account_id, l.party_id, l.debit, l.credit
            FROM h CROSS JOIN LATERAL (VALUES
                (1, $3::bigint, NULL::bigint, round((h.net + h.tax) * 0.4, 2), 0::numeric),
                (2, CASE WHEN h.credit THEN $4::bigint ELSE $5::bigint END,
                    CASE WHEN h.credit THEN h.customer END,
                    (h.net + h.tax) - round((h.net + h.tax) * 0.4, 2), 0),
                (3, $6::bigint, NULL, h.cost, 0),
                (4, $7::bigint, NULL, 0, h.net),
                (5, $8::bigint, NULL, 0, h.tax),
                (6, $9::bigint, NULL, 0, h.cost)
            ) AS l(k, account_id, party_id, debit, credit)
            ORDER BY h.n, l.k
            """,
            e0,
            cid,
            acc["11101"],
            acc["11500"],
            acc["11105"],
            acc["51100"],
            acc["41100"],
            acc["21200"],
            acc["11700"],
        )
        # what the credit sales left the customers owing, as the sale path keeps it
        await conn.execute(
            """
            UPDATE users u SET balance = u.balance + s.owed
            FROM (SELECT party_id, sum(debit - credit) AS owed FROM journal_lines
                  WHERE company_id = $1 AND party_id IS NOT NULL GROUP BY party_id) s
            WHERE u.id = s.party_id
            """,
            cid,
        )
        await conn.execute(
            "SELECT setval(pg_get_serial_sequence('journal_entries', 'id'), "
            "(SELECT max(id) FROM journal_entries))"
        )
        seconds = time.perf_counter() - t0
        await conn.execute("RESET session_replication_role")
        await conn.execute("VACUUM ANALYZE")
    finally:
        await conn.close()
    return {**info, "customers": customers, "history": history, "history_seconds": seconds}


def median_ms(samples: list[float]) -> float:
    return round(statistics.median(samples) * 1000, 1)


async def timed(
    db: Any, name: str, fn: Callable[[Any], Awaitable[Any]], repeat: int, out: dict[str, Any]
) -> Any:
    samples = []
    result = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = await db.read(fn)
        samples.append(time.perf_counter() - t0)
    out[name] = {"median_ms": median_ms(samples), "max_ms": round(max(samples) * 1000, 1)}
    print(f"  {name:<40} {out[name]['median_ms']:>9.1f} ms (max {out[name]['max_ms']})")
    return result


def child(args: list[str], env: dict[str, str]) -> dict[str, Any]:
    """Wall time and peak RSS of one CLI run, its stdout to /dev/null."""
    t0 = time.perf_counter()
    with open(os.devnull, "w") as devnull:
        proc = subprocess.run(
            ["/usr/bin/time", "-f", "%M", sys.executable, "-m", "tillbook.cli", *args],
            env=env,
            stdout=devnull,
            stderr=subprocess.PIPE,
            text=True,
            check=False,
        )
    seconds = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"{args}: exit {proc.returncode}: {proc.stderr[-2000:]}")
    rss_kb = int(proc.stderr.strip().splitlines()[-1])
    return {"seconds": round(seconds, 2), "peak_rss_mb": round(rss_kb / 1024, 1)}


async def forget_rollups(url: str, company_id: int) -> None:
    """The company as if nobody had ever closed or rolled up anything: refused on a
    database that was closed (its closing entries cannot be taken back)."""
    import asyncpg

    conn = await asyncpg.connect(dsn(url))
    try:
        closed = await conn.fetchval(
            "SELECT count(*) FROM journal_entries WHERE company_id = $1 "
            "AND source_type = 'year_end_close'",
            company_id,
        )
        if closed:
            raise SystemExit("--never-closed needs a database that was never closed: seed one")
        async with conn.transaction():
            for table in ("ledger_party_rollups", "ledger_rollups", "ledger_periods"):
                await conn.execute(f"DELETE FROM {table} WHERE company_id = $1", company_id)
    finally:
        await conn.close()


async def measure(
    url: str,
    info: dict[str, Any],
    repeat: int,
    never_closed: bool = False,
    export_all: bool = True,
) -> dict[str, Any]:
    from tillbook.db import Database
    from tillbook.ledger.parties import warehouse_balances
    from tillbook.reports import (
        balance_sheet,
        periods,
        profit_loss,
        stock_valuation_company,
        trial_balance,
    )
    from tillbook.reports.ledgers import account_ledger_page, party_statement_page

    cid = info["company_id"]
    today = dt.date.today()
    this_month = today.replace(day=1)
    last_end = this_month - dt.timedelta(days=1)
    last_start = last_end.replace(day=1)
    out: dict[str, Any] = {}
    db = Database(url, pool_size=2)
    try:
        if never_closed:
            await forget_rollups(url, cid)
            t0 = time.perf_counter()
            await db.read(lambda s: trial_balance(s, cid))
            out["first_report_seconds"] = round(time.perf_counter() - t0, 2)
            status = await db.read(lambda s: periods.status(s, cid))
            out["status_after_first_report"] = status
            print(f"  never closed; the first report: {out['first_report_seconds']} s "
                  f"(rolled up through {status['rolled_up_through']})")  # fmt: skip
        else:
            t0 = time.perf_counter()
            closed = await periods.close(db, cid, last_end)
            out["close_seconds"] = round(time.perf_counter() - t0, 2)
            out["closed"] = closed
            print(f"  closed through {last_end}: {out['close_seconds']} s "
                  f"(closing entries {closed['closing_entries']})")  # fmt: skip
        r: dict[str, Any] = {}
        out["reports"] = r
        await timed(db, "trial_balance_all", lambda s: trial_balance(s, cid), repeat, r)
        await timed(
            db,
            "trial_balance_last_month",
            lambda s: trial_balance(s, cid, None, last_start, last_end),
            repeat,
            r,
        )
        await timed(
            db,
            "trial_balance_this_month",
            lambda s: trial_balance(s, cid, None, this_month, today),
            repeat,
            r,
        )
        await timed(db, "profit_loss_all", lambda s: profit_loss(s, cid), repeat, r)
        await timed(
            db,
            "profit_loss_last_month",
            lambda s: profit_loss(s, cid, None, last_start, last_end),
            repeat,
            r,
        )
        await timed(
            db,
            "profit_loss_mid_month_range",
            lambda s: profit_loss(
                s, cid, None, last_start + dt.timedelta(days=9), today - dt.timedelta(days=1)
            ),
            repeat,
            r,
        )
        await timed(db, "balance_sheet_today", lambda s: balance_sheet(s, cid), repeat, r)
        await timed(
            db, "balance_sheet_last_month_end", lambda s: balance_sheet(s, cid, None, last_end),
            repeat, r,
        )  # fmt: skip
        await timed(
            db, "stock_valuation_company", lambda s: stock_valuation_company(s, cid), repeat, r
        )
        parties = dict.fromkeys(info["customers"], "customer")
        await timed(
            db,
            "party_balances_200_customers",
            lambda s: warehouse_balances(s, cid, info["warehouses"][0], parties),
            repeat,
            r,
        )
        first = await timed(
            db,
            "ledger_11101_last_month_page_1",
            lambda s: account_ledger_page(
                s, cid, "11101", date_from=last_start, date_to=last_end, limit=100
            ),
            repeat,
            r,
        )
        cursor = first["next_cursor"]
        for _ in range(20):  # a page deep into the month
            page = await db.read(
                lambda s, c=cursor: account_ledger_page(
                    s, cid, "11101", date_from=last_start, date_to=last_end, cursor=c, limit=100
                )
            )
            cursor = page["next_cursor"] or cursor
        await timed(
            db,
            "ledger_11101_last_month_page_21",
            lambda s: account_ledger_page(
                s, cid, "11101", date_from=last_start, date_to=last_end, cursor=cursor, limit=100
            ),
            repeat,
            r,
        )
        await timed(
            db,
            "ledger_11101_everything_page_1",
            lambda s: account_ledger_page(s, cid, "11101", limit=100),
            repeat,
            r,
        )
        await timed(
            db,
            "statement_customer_page_1",
            lambda s: party_statement_page(s, cid, info["customers"][0], limit=100),
            repeat,
            r,
        )
        t0 = time.perf_counter()
        check = await periods.check(db, cid)
        out["check_rollups"] = {
            "seconds": round(time.perf_counter() - t0, 2),
            "ok": check["ok"],
            "rollups": check["rollups"],
            "party_rollups": check["party_rollups"],
        }
        print(f"  check-rollups: {out['check_rollups']}")
    finally:
        await db.dispose()

    env = {**os.environ, "TILLBOOK_DATABASE_URL": url, "TILLBOOK_LOG_LEVEL": "warning"}
    cli: dict[str, Any] = {}
    out["cli"] = cli
    cli["help"] = [child(["--help"], env) for _ in range(3)]
    cli["trial_balance"] = [
        child(["report", "trial-balance", "--company", str(cid), "--json"], env) for _ in range(3)
    ]
    cli["export_month"] = child(
        ["export", "journal", "--company", str(cid), "--format", "beancount", "--from",
         last_start.isoformat(), "--to", last_end.isoformat()], env,
    )  # fmt: skip
    if export_all:
        cli["export_all"] = child(
            ["export", "journal", "--company", str(cid), "--format", "beancount"], env
        )
    for name, value in cli.items():
        print(f"  cli {name}: {value}")
    return out


def machine() -> dict[str, Any]:
    return {
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "load_avg": os.getloadavg(),
    }


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    from tillbook.migrate import upgrade

    url = args.database_url
    state = STATE / f"books-{url.rsplit('/', 1)[-1]}.json"
    results: dict[str, Any] = {"machine": machine(), "args": vars(args)}
    if args.reuse and state.exists():
        info = json.loads(state.read_text())
        print(f"database {url}: reused ({info['history']:,} sales)")
    else:
        print(f"database {url}: fresh, migrate, seed {args.history:,} sales")
        await fresh_database(url)
        t0 = time.perf_counter()
        await asyncio.to_thread(upgrade, url)
        info = await seed(url, args.history, args.products)
        results["seed_seconds"] = round(time.perf_counter() - t0, 1)
        STATE.mkdir(parents=True, exist_ok=True)
        state.write_text(json.dumps(info))
        print(f"  seeded in {results['seed_seconds']} s")
    import asyncpg

    conn = await asyncpg.connect(dsn(url))
    try:
        results["database"] = {
            "journal_entries": await conn.fetchval("SELECT count(*) FROM journal_entries"),
            "journal_lines": await conn.fetchval("SELECT count(*) FROM journal_lines"),
            "size_mb": round(
                await conn.fetchval("SELECT pg_database_size(current_database())") / 2**20
            ),
        }
    finally:
        await conn.close()
    print(f"  {results['database']}")
    results["info"] = {k: v for k, v in info.items() if k != "customers"}
    results.update(await measure(url, info, args.repeat, args.never_closed, not args.no_export_all))
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database-url", default=DEFAULT_URL)
    parser.add_argument("--history", type=int, default=200_000)
    parser.add_argument("--products", type=int, default=100, help="per warehouse")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--reuse", action="store_true", help="skip seeding if seeded")
    parser.add_argument(
        "--never-closed",
        action="store_true",
        help="no close: forget the roll-ups, time the first report, then the reports",
    )
    parser.add_argument(
        "--no-export-all",
        action="store_true",
        help="leave out the export of the whole journal (minutes at 1,000,000 sales)",
    )
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    os.environ.setdefault("TILLBOOK_MASTER_KEY", "Ym9va3MtYmVuY2gtbWFzdGVyLWtleS0zMi1ieXRlcyE=")
    results = asyncio.run(main_async(args))
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=2, default=str))


if __name__ == "__main__":
    main()
