"""Server time per back-office page on a large catalog: 10,000 products per branch
and a history of sales (``bench/seed.py``), each page fetched through the ASGI app
in process (no network, no browser: the figure is the server's own time).

    python bench/pages.py --history 3000
    python bench/pages.py --history 100000 --database-url postgresql://…/tillbook_bench_pages

Prints each page's median of ``--repeat`` GETs, the slowest first, and the pages
over the 200 ms the issue allows."""

from __future__ import annotations

import argparse
import asyncio
import re
import statistics
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))

PASSWORD = "bench pages password"
LIMIT_MS = 200.0


async def _owner(url: str, company_id: int) -> str:
    from tillbook.db import Database
    from tillbook.tenancy import staff

    db = Database(url)
    email = f"bench-owner-{company_id}@example.com"
    new = staff.NewStaff(name="Bench owner", email=email, role="owner", password=PASSWORD)
    try:
        await db.write(lambda s: staff.create_staff(s, company_id, new, actor_id=None))
    finally:
        await db.dispose()
    return email


def _pages(info: dict[str, Any], product_id: int, party_id: int) -> list[str]:
    wh = info["warehouses"][0]["id"]
    return [
        "/",
        "/products",
        "/products?q=coffee",
        f"/products/{product_id}",
        "/stock",
        "/stock?low=1",
        f"/stock?warehouse_id={wh}&q=tea",
        f"/stock/products/{product_id}",
        "/sales",
        "/sales?invoice=S",
        "/purchases",
        "/sales-returns",
        "/customers",
        "/customers?q=smith",
        f"/customers/{party_id}",
        f"/customers/{party_id}/statement",
        "/suppliers",
        "/reference",
        "/reports",
        "/reports?report=profit-loss",
        "/reports?report=balance-sheet",
        "/reports?report=stock-valuation",
        f"/reports?report=stock-valuation&warehouse_id={wh}",
        "/reports/ledger?account=11700",
        "/reports/ledger?account=41100",
        "/reports/periods",
        "/settings/keys",
        "/settings/staff",
        "/settings/webhooks",
        "/settings/branches",
        f"/settings/branches/{wh}",
        "/settings/payment-modes",
        "/settings/expense-categories",
        "/payments",
        "/expenses",
    ]


async def main(args: argparse.Namespace) -> None:
    import httpx
    from run import fresh_database
    from seed import seed

    from tillbook.app import create_app
    from tillbook.config import Settings
    from tillbook.migrate import upgrade

    url = args.database_url
    await fresh_database(url, force=args.force)
    await asyncio.to_thread(upgrade, url)
    t0 = time.perf_counter()
    info = await seed(url, products=args.products, history=args.history)
    print(f"seeded in {time.perf_counter() - t0:.0f} s")
    email = await _owner(url, info["company_id"])
    app = create_app(Settings(database_url=url))
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://bench") as c:
            login = await c.get("/login")
            csrf = re.search(r'name="csrf" value="([^"]+)"', login.text)
            assert csrf is not None
            r = await c.post(
                "/login",
                data={"email": email, "password": PASSWORD, "csrf": csrf.group(1), "next": "/"},
            )
            assert r.status_code == 303, r.text
            listed = await c.get("/products")
            product = re.search(r'href="/products/(\d+)"', listed.text)
            customers = await c.get("/customers")
            party = re.search(r'href="/customers/(\d+)"', customers.text)
            assert product and party
            timings: list[tuple[float, str, int]] = []
            for path in _pages(info, int(product.group(1)), int(party.group(1))):
                samples = []
                status = 0
                for _ in range(args.repeat):
                    t = time.perf_counter()
                    resp = await c.get(path)
                    samples.append((time.perf_counter() - t) * 1000)
                    status = resp.status_code
                timings.append((statistics.median(samples), path, status))
    print(f"{'median ms':>10}  status  page")
    for ms, path, status in sorted(timings, reverse=True):
        flag = "  over 200 ms" if ms > LIMIT_MS else ""
        print(f"{ms:10.1f}  {status:6d}  {path}{flag}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--database-url", default="postgresql://postgres@127.0.0.1:5432/tillbook_bench_pages"
    )
    parser.add_argument("--products", type=int, default=10_000)
    parser.add_argument("--history", type=int, default=3_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--force", action="store_true")
    asyncio.run(main(args=parser.parse_args()))
