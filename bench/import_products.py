"""Time a catalog import as a shop moving to tillbook would run it (issue: 10,000
products with listings in two warehouses in under 30 s on PostgreSQL).

Creates a fresh database (PostgreSQL by default; refuses to drop one whose name
lacks "bench" unless --force), a company with two warehouses, writes a CSV of
``--products`` products each listed in both warehouses with opening stock, and runs
``tillbook import products`` on it through the CLI (the operator's door, its own
process start included), then again (nothing changes), then exports it.

    .venv/bin/python bench/import_products.py [--products 10000] [--database-url URL]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import create_async_engine

from tillbook.db import async_url

DEFAULT_URL = "postgresql://postgres@127.0.0.1:5432/tillbook_bench_import"
CLI = [sys.executable, "-m", "tillbook.cli"]
HEADER = (
    "item_code,name,barcode,category,brand,unit,tax,sales_price,purchase_price,mrp,"
    "warehouse,opening_stock,opening_cost,reorder_level"
)


async def fresh_database(url: str, force: bool) -> None:
    parsed = make_url(async_url(url))
    name = parsed.database or ""
    if "bench" not in name and not force:
        raise SystemExit(f"refusing to drop {name!r}: its name lacks 'bench' (use --force)")
    admin = create_async_engine(parsed.set(database="postgres"), isolation_level="AUTOCOMMIT")
    async with admin.connect() as conn:
        await conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        await conn.execute(text(f'CREATE DATABASE "{name}"'))
    await admin.dispose()


def cli(env: dict[str, str], *args: str) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run([*CLI, *args], env=env, capture_output=True, text=True, check=False)
    took = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{args[:2]} failed ({done.returncode}): {done.stderr[-2000:]}")
    return took, done.stdout


def write_file(path: Path, products: int, warehouses: list[str]) -> int:
    rng = random.Random(7)
    categories = [f"Category {i}" for i in range(40)]
    brands = [f"Brand {i}" for i in range(25)]
    rows = [HEADER]
    for i in range(products):
        price = rng.randint(99, 4999) / 100
        cost = round(price * 0.6, 2)
        for w, wh in enumerate(warehouses):
            own = (
                f"SKU-{i:06d},Product {i} {rng.choice(['500ml', '1kg', 'pack of 6'])},"
                f"20{i:011d},{rng.choice(categories)},{rng.choice(brands)},Piece,VAT 10%"
                if w == 0
                else f"SKU-{i:06d},,,,,,"
            )
            rows.append(
                f"{own},{price + w * 0.1:.2f},{cost:.2f},{price + 1:.2f},{wh},"
                f"{rng.randint(0, 60)},,{rng.randint(0, 10)}"
            )
    path.write_text("\n".join(rows) + "\n")
    return len(rows) - 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--products", type=int, default=10_000)
    parser.add_argument("--database-url", default=DEFAULT_URL)
    parser.add_argument("--force", action="store_true")
    args = parser.parse_args()
    url = args.database_url
    if url.startswith("postgresql"):
        asyncio.run(fresh_database(url, args.force))
    env = {**os.environ, "TILLBOOK_DATABASE_URL": url}
    env.setdefault("TILLBOOK_MASTER_KEY", "dGlsbGJvb2stdGVzdC1tYXN0ZXIta2V5LTMyLWJ5dGU=")
    _, out = cli(
        env, "company", "create", "Bench Grocers", "--admin-email", "owner@bench.example",
        "--admin-password", "bench password", "--json",
    )  # fmt: skip
    company = json.loads(out)["id"]
    warehouses = ["Downtown", "Riverside"]
    for name in warehouses:
        cli(env, "warehouse", "create", str(company), name, "--json")

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "catalog.csv"
        rows = write_file(path, args.products, warehouses)
        size = path.stat().st_size
        # the tax the file names
        asyncio.run(_tax(url, company))
        first, out = cli(env, "import", "products", str(path), "--company", str(company), "--json")
        counts = json.loads(out)
        again, out2 = cli(env, "import", "products", str(path), "--company", str(company), "--json")
        export, csv_out = cli(env, "export", "products", "--company", str(company))
        start_only, _ = cli(env, "--help")
    print(
        json.dumps(
            {
                "database": make_url(url).get_backend_name(),
                "products": args.products,
                "rows": rows,
                "file_bytes": size,
                "import_s": round(first, 2),
                "import_counts": counts,
                "reimport_s": round(again, 2),
                "reimport_counts": json.loads(out2),
                "export_s": round(export, 2),
                "export_rows": len(csv_out.splitlines()) - 1,
                "cli_start_s": round(start_only, 2),
            },
            indent=2,
        )
    )


async def _tax(url: str, company: int) -> None:
    from decimal import Decimal

    from tillbook.catalog import seeding as catalog
    from tillbook.db import Database

    db = Database(url)
    try:
        await db.write(lambda s: catalog.create_tax(s, company, "VAT 10%", Decimal("10")))
    finally:
        await db.dispose()


if __name__ == "__main__":
    main()
