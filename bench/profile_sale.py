"""One POST /sales at a time, in-process, on a database ``bench/run.py`` seeded.

    python bench/profile_sale.py [--count 300] [--database-url URL] [--pstats out.prof]

Measures what a sale costs the service alone, without HTTP clients or other
requests competing for the cores: thread CPU per sale, the SQL statements it
issues (counted with a ``before_cursor_execute`` listener), and, with
``--pstats``, a cProfile of the measured sales (``python -m pstats out.prof``).
Run ``bench/run.py`` once first (any phases) so that the database and its seed
state exist; sales made here stay in that database like any others.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import os
import random
import statistics
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from run import DEFAULT_URL, Workload, load_seed  # noqa: E402


async def main(args: argparse.Namespace) -> None:
    import httpx
    from sqlalchemy import event

    state = argparse.Namespace(products=args.products, history=args.history)
    info = load_seed(args.database_url, state)
    if info is None:
        raise SystemExit("no seed state for this database: run bench/run.py on it first")
    os.environ.setdefault("TILLBOOK_LOG_LEVEL", "warning")
    from tillbook import unit
    from tillbook.app import create_app
    from tillbook.config import Settings
    from tillbook.db import Database

    settings = Settings(database_url=args.database_url)
    db = Database(args.database_url, pool_size=4)
    statements: Counter[str] = Counter()
    per_sale: list[int] = []

    @event.listens_for(db.engine.sync_engine, "before_cursor_execute")
    def _count(_conn: Any, _cursor: Any, statement: str, *_a: Any) -> None:
        statements[" ".join(statement.split())[:90]] += 1

    unit.statement_observers.append(lambda statement: _count(None, None, statement))

    app = create_app(settings, database=db)
    work = Workload(info)
    rng = random.Random(1)
    cpu: list[float] = []
    wall: list[float] = []
    profiler = cProfile.Profile() if args.pstats else None
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(
            transport=transport,
            base_url="http://bench/api/v1/public",
            headers={**work.keys[0], "Accept": "application/json"},
        ) as client:
            if args.concurrency > 1:
                await _concurrent(args, client, work, rng)
                await db.dispose()
                return
            for n in range(args.warmup + args.count):
                body = work.sale_body(0, rng)
                measured = n >= args.warmup
                before = sum(statements.values())
                if measured and profiler:
                    profiler.enable()
                t0, c0 = time.perf_counter(), time.thread_time()
                r = await client.post("/sales", json=body)
                c1, t1 = time.thread_time(), time.perf_counter()
                if measured and profiler:
                    profiler.disable()
                if r.status_code != 200:
                    raise SystemExit(f"sale failed: {r.status_code} {r.text}")
                if measured:
                    cpu.append(c1 - c0)
                    wall.append(t1 - t0)
                    per_sale.append(sum(statements.values()) - before)
    await db.dispose()
    print(f"{args.count} sales, one at a time, in-process (ASGI, no sockets)")
    print(f"  CPU per sale   median {statistics.median(cpu) * 1000:.2f} ms  "
          f"mean {statistics.fmean(cpu) * 1000:.2f} ms")  # fmt: skip
    print(f"  wall per sale  median {statistics.median(wall) * 1000:.2f} ms")
    print(f"  statements per sale: {statistics.median(per_sale):.0f}")
    if args.statements:
        for stmt, n in statements.most_common():
            print(f"  {n / (args.warmup + args.count):5.2f}  {stmt}")
    if profiler:
        profiler.dump_stats(args.pstats)
        print(f"  profile: {args.pstats}")


async def _concurrent(args: argparse.Namespace, client: Any, work: Any, rng: Any) -> None:
    """``--concurrency N``: N tasks selling at once in this one process and event
    loop, as a server worker serves its clients; the process's CPU over the
    measured sales (the in-process client's included, as above) ÷ their number.
    Sales of one warehouse, so that they queue for its counter as under load."""
    bodies = [work.sale_body(0, rng) for _ in range(args.warmup + args.count)]

    async def sell(mine: list[Any]) -> None:
        for body in mine:
            r = await client.post("/sales", json=body)
            if r.status_code != 200:
                raise SystemExit(f"sale failed: {r.status_code} {r.text}")

    def split(items: list[Any]) -> list[list[Any]]:
        return [items[i :: args.concurrency] for i in range(args.concurrency)]

    await asyncio.gather(*(sell(part) for part in split(bodies[: args.warmup])))
    t0, c0 = time.perf_counter(), time.process_time()
    await asyncio.gather(*(sell(part) for part in split(bodies[args.warmup :])))
    c1, t1 = time.process_time(), time.perf_counter()
    print(f"{args.count} sales, {args.concurrency} at a time, in-process (ASGI, no sockets)")
    print(f"  CPU per sale   {(c1 - c0) / args.count * 1000:.2f} ms (process, all tasks)")
    print(f"  sales per s    {args.count / (t1 - t0):.1f}")


def _main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--database-url", default=DEFAULT_URL)
    parser.add_argument("--products", type=int, default=10_000)
    parser.add_argument("--history", type=int, default=0)
    parser.add_argument("--count", type=int, default=300)
    parser.add_argument("--warmup", type=int, default=30)
    parser.add_argument("--pstats", help="write a cProfile of the measured sales here")
    parser.add_argument("--statements", action="store_true", help="list the statements")
    parser.add_argument(
        "--concurrency", type=int, default=1, help="sales at once in the one process"
    )
    asyncio.run(main(parser.parse_args()))


if __name__ == "__main__":
    _main()
