"""Failover under load: a primary and a synchronous standby, the primary killed.

    python bench/failover.py [--clients 8] [--before 4] [--after 8] [--json out.json]

Starts a PostgreSQL primary (``initdb`` in a temporary directory, a free port) and a
hot standby streaming from it (``pg_basebackup -R -X stream``), with
``synchronous_standby_names = '*'``: a commit is acknowledged only once the standby
has it. Migrates the primary, makes a shop (``tests/factories.py``) and runs the
service in this process on the multi-host URL

    postgresql://postgres@/postgres?host=127.0.0.1:P1&host=127.0.0.1:P2&target_session_attrs=read-write

(SQLAlchemy's spelling of libpq's ``h1:p1,h2:p2``), so it connects to whichever of
the two accepts writes. ``--clients`` clients post sales, each with its own
``unique_id``; after ``--before`` seconds the primary's postmaster and backends are
killed with SIGKILL (its machine dying) and the standby is promoted
(``pg_promote()``). Every sale not answered 200 is retried with the same key until
it is, as a till does. ``--after`` seconds later the load stops and the new primary
is counted:

    acked         sales answered 200 at least once
    lost          acked sales the new primary does not have (must be 0)
    duplicated    unique_ids recorded as more than one sale (must be 0)
    seconds_to_recover
                  from the promotion to the first 200 after it
    answers       every status seen (503 while no primary accepts writes)

and the books are checked (``tests/invariants.check_books``). Loopback only,
bounded in time; the servers and their directories are removed at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import os
import signal
import sys
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import httpx

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
os.environ.setdefault("TILLBOOK_MASTER_KEY", "ZmFpbG92ZXItYmVuY2gtbWFzdGVyLWtleS0zMi1ieXQ=")

from sqlalchemy import func, select, text  # noqa: E402

from tests.factories import make_shop  # noqa: E402
from tests.invariants import check_books  # noqa: E402
from tests.robustness.test_faults import sale_body, stock_up  # noqa: E402
from tests.servers import PgServer  # noqa: E402
from tillbook.app import create_app  # noqa: E402
from tillbook.config import Settings  # noqa: E402
from tillbook.db import Database, create_engine  # noqa: E402
from tillbook.migrate import upgrade  # noqa: E402
from tillbook.models import Order  # noqa: E402

RETRY_FOR = 30.0  # seconds a client keeps retrying one sale
print = functools.partial(print, flush=True)  # progress as it happens


async def scalar(url: str, sql: str) -> Any:
    engine = create_engine(url, isolation_level="AUTOCOMMIT")
    try:
        async with engine.connect() as conn:
            result = await conn.execute(text(sql))
            return result.scalar() if result.returns_rows else None
    finally:
        await engine.dispose()


async def run(args: argparse.Namespace) -> dict[str, Any]:
    primary = PgServer("failover-primary").init_primary().start(synchronous_commit="on")
    standby: PgServer | None = None
    try:
        await asyncio.to_thread(upgrade, primary.url())
        standby = PgServer("failover-standby").init_standby(primary).start()
        # Synchronous only now: with no standby yet, every commit would wait for one.
        await scalar(primary.url(), "ALTER SYSTEM SET synchronous_standby_names = '*'")
        await scalar(primary.url(), "SELECT pg_reload_conf()")
        for _ in range(100):  # the standby is streaming, synchronously
            state = await scalar(primary.url(), "SELECT sync_state FROM pg_stat_replication")
            if state == "sync":
                break
            await asyncio.sleep(0.1)
        else:
            raise SystemExit("the standby did not become synchronous")
        url = (
            f"postgresql://postgres@/postgres?host=127.0.0.1:{primary.port}"
            f"&host=127.0.0.1:{standby.port}&target_session_attrs=read-write"
        )
        print(f"primary :{primary.port}, synchronous standby :{standby.port}")
        print(f"service on {url}")
        return await load(args, url, primary, standby)
    finally:
        if standby is not None:
            standby.stop()
        primary.stop()


async def load(
    args: argparse.Namespace, url: str, primary: PgServer, standby: PgServer
) -> dict[str, Any]:
    db = Database(url, pool_size=args.clients)
    app = create_app(Settings(database_url=url), database=db)
    statuses: Counter[str] = Counter()
    acked: dict[str, float] = {}  # unique_id -> time of its first 200
    stop = asyncio.Event()
    promoted_at: float | None = None
    timeline: dict[str, float] = {}
    try:
        shop = await make_shop(db)
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(
                transport=transport,
                base_url="http://testserver/api/v1/public",
                headers=shop.headers,
                timeout=60,
            ) as client:
                await stock_up(client, shop)

                async def one_sale(n: int) -> None:
                    key = str(uuid.uuid4())
                    body = sale_body(shop, key, n)
                    deadline = time.monotonic() + RETRY_FOR
                    while time.monotonic() < deadline:
                        try:
                            r = await client.post("/sales", json=body)
                            status = str(r.status_code)
                        except Exception as exc:  # an answer lost on the way
                            status = type(exc).__name__
                        statuses[status] += 1
                        if status == "200":
                            acked.setdefault(key, time.monotonic())
                            return
                        await asyncio.sleep(0.1)
                    statuses["gave up"] += 1

                async def till(i: int) -> None:
                    n = i
                    while not stop.is_set():
                        await one_sale(n)
                        n += args.clients

                tills = [asyncio.create_task(till(i)) for i in range(args.clients)]
                await asyncio.sleep(args.before)
                before = len(acked)
                killed_at = time.monotonic()
                timeline["killed"] = killed_at
                primary.kill(signal.SIGKILL)
                print(f"primary killed (SIGKILL) after {before} acknowledged sales")
                await scalar(standby.url(), "SELECT pg_promote(wait => true)")
                promoted_at = time.monotonic()
                print(f"standby promoted {promoted_at - killed_at:.2f} s later")
                await asyncio.sleep(args.after)
                stop.set()
                await asyncio.gather(*tills)

        rows = await db.read(
            lambda s: s.execute(
                select(Order.unique_id, func.count())
                .where(Order.company_id == shop.company_id, Order.order_type == "sales")
                .group_by(Order.unique_id)
            )
        )
        recorded = {unique_id: count for unique_id, count in rows}
        await check_books(db, shop.company_id)
    finally:
        await db.dispose()
    assert promoted_at is not None
    after = [t for t in acked.values() if t >= promoted_at]
    result = {
        "acked": len(acked),
        "lost": sum(1 for key in acked if key not in recorded),
        "duplicated": sum(1 for count in recorded.values() if count > 1),
        "recorded": sum(recorded.values()),
        "seconds_to_recover": round(min(after) - promoted_at, 2) if after else None,
        "seconds_kill_to_promoted": round(promoted_at - timeline["killed"], 2),
        "answers": dict(statuses),
        "books": "balanced",
    }
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--before", type=float, default=4, help="seconds of load before the kill")
    parser.add_argument("--after", type=float, default=8, help="seconds of load after promotion")
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    # a timeout's SIGTERM unwinds like Ctrl-C, so both servers are stopped
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    if args.clients > 64 or args.before > 120 or args.after > 120:
        parser.error("bounded: at most 64 clients and 120 s on either side of the kill")
    result = asyncio.run(run(args))
    names = ("acked", "lost", "duplicated", "recorded", "seconds_kill_to_promoted",
             "seconds_to_recover", "answers")  # fmt: skip
    for name in names:
        print(f"{name:>20}: {result[name]}")
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
    if result["lost"] or result["duplicated"]:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
