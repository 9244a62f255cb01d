"""Seeding a benchmark database fast: a realistic catalog and, optionally, history.

The tenant (company with its chart, warehouses, API keys, tax, units, categories,
brands, walk-in customer) is made through the service's own functions, exactly as
``tillbook`` makes it. Everything bulky goes in with COPY and set-based SQL on
PostgreSQL: products, opening batches with their stock movements and opening
journal entries (Dr 11700 / Cr 31100 per batch, as ``catalog.create_product``
posts them), customers, and ``history`` past sales complete with items, FIFO stock
movements, split-tender payments and allocations, balanced journal entries,
outbox events and idempotency records. The books balance afterwards (every
invariant of DESIGN.md §5); ``check`` verifies the cheap ones.

Opening stock per product: batch 1 (older) carries 50 units plus whatever the
history sold, batch 2 carries 1,000; history draws only from batch 1, so after
seeding every product has 1,050 on hand, 50 in batch 1, whatever the history size.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import random
import time
import uuid
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import asyncpg

from tillbook.catalog import seeding as catalog
from tillbook.db import Database
from tillbook.kit import xid
from tillbook.ledger import chart
from tillbook.ledger.service import account_ids
from tillbook.tenancy import service as tenancy

D = Decimal
BENCH_RATE_LIMIT = "10000000/minute"
BATCH1_BASE = 50
BATCH2_QTY = 1000

ADJECTIVES = (
    "Organic", "Classic", "Fresh", "Premium", "Light", "Extra", "Natural", "Golden",
    "Smoked", "Spicy", "Sweet", "Crunchy", "Creamy", "Roasted", "Wholegrain", "Sparkling",
    "Frozen", "Mild", "Dark", "Family",
)  # fmt: skip
NOUNS = (
    "Apple Juice", "Orange Juice", "Cola", "Lemonade", "Mineral Water", "Green Tea",
    "Black Tea", "Coffee Beans", "Ground Coffee", "Whole Milk", "Oat Milk", "Yoghurt",
    "Cheddar", "Mozzarella", "Butter", "Eggs", "Sourdough", "Baguette", "Croissant",
    "Muffin", "Basmati Rice", "Spaghetti", "Penne", "Olive Oil", "Sunflower Oil",
    "Tomato Sauce", "Peanut Butter", "Strawberry Jam", "Honey", "Cornflakes", "Granola",
    "Chocolate Bar", "Potato Chips", "Tortilla Chips", "Salted Peanuts", "Cashews",
    "Bananas", "Apples", "Carrots", "Onions", "Tomatoes", "Chicken Breast", "Beef Mince",
    "Salmon Fillet", "Tuna Can", "Dish Soap", "Laundry Powder", "Toothpaste", "Shampoo",
    "Paper Towels", "LED Bulb", "AA Batteries", "Claw Hammer", "Wood Screws", "Wall Plugs",
    "Paint Brush", "Extension Cord", "Duct Tape", "Screwdriver Set", "Garden Gloves",
)  # fmt: skip
SIZES = ("100g", "250g", "500g", "1kg", "2kg", "330ml", "500ml", "1L", "2L", "6 pack", "12 pack")
BRANDS = (
    "Sunny Valley", "Fresh Farms", "Brewhouse", "Golden Mill", "Northwind", "BrightLite",
    "FixRight", "Stanwick", "Blue Harbor", "Green Basket", "Alpine", "Meadow Gold",
    "Riverside", "Oak & Iron", "Harvest Moon", "Silver Leaf", "Red Barn", "Ocean Pearl",
    "Maple Hill", "Cedar Creek",
)  # fmt: skip
CATEGORIES = (
    "Beverages", "Dairy", "Bakery", "Pantry", "Snacks", "Produce", "Meat & Fish",
    "Household", "Personal care", "Hardware",
)  # fmt: skip
FIRST = ("Maria", "Tom", "Aisha", "Chen", "Lukas", "Sofia", "Omar", "Yuki", "Ana", "Ivan")
LAST = ("Lopez", "Becker", "Khan", "Wang", "Novak", "Rossi", "Haddad", "Sato", "Silva", "Petrov")

Log = Callable[[str], None]


def pg_dsn(url: str) -> str:
    """asyncpg wants ``postgresql://``; the service takes either spelling."""
    return url.replace("postgresql+asyncpg://", "postgresql://", 1)


async def _branches(
    session: Any, company_id: int, count: int, name: str, key_name: str
) -> list[dict[str, Any]]:
    """``count`` warehouses of the company, each with a bench till's API key (no
    rate limit to speak of), as the clients need them."""
    out = []
    for i in range(count):
        wh = await tenancy.create_warehouse(session, company_id, name.format(n=i + 1))
        key = await tenancy.create_api_key(
            session, wh.id, key_name.format(n=i + 1), rate_limit=BENCH_RATE_LIMIT
        )
        out.append(
            {
                "id": wh.id,
                "public_key": key.key.public_key,
                "secret_key": key.secret_key,
                "staff_user_id": key.key.user_id,
            }
        )
    return out


async def _company(
    session: Any, name: str, email: str, warehouses: int, branch: str, till: str
) -> dict[str, Any]:
    """A company through the services: its chart and modes (``create_company``), a
    unit, VAT 10%, a walk-in customer and ``warehouses`` branches with a key each."""
    company, admin = await tenancy.create_company(
        session, name, admin_email=email, admin_password=uuid.uuid4().hex
    )
    cid = company.id
    unit = await catalog.create_unit(session, cid, "Piece", "pc")
    tax = await catalog.create_tax(session, cid, "VAT 10%", D("10"), False)
    walk_in = await catalog.create_party(session, cid, "customer", "Walk-in customer", walk_in=True)
    return {
        "company_id": cid,
        "admin_id": admin.id,
        "unit_id": unit.id,
        "tax_id": tax.id,
        "tax_rate": "10",
        "walk_in_id": walk_in.id,
        "warehouses": await _branches(session, cid, warehouses, branch, till),
        "accounts": await account_ids(session, cid),
    }


async def _tenant(url: str, warehouses: int) -> dict[str, Any]:
    """Company, chart, warehouses, keys, tax, units, categories, brands via the services."""
    db = Database(url, pool_size=2)
    try:

        async def work(session: Any) -> dict[str, Any]:
            email = f"admin+{uuid.uuid4().hex[:6]}@bench.example"
            made = await _company(
                session, "Bench Mart", email, warehouses, "Store {n}", "Store {n} bench till"
            )
            cid = made["company_id"]
            made["categories"] = [
                (await catalog.create_category(session, cid, name)).id for name in CATEGORIES
            ]
            made["brands"] = [
                (await catalog.create_brand(session, cid, name)).id for name in BRANDS
            ]
            return made

        return await db.write(work)
    finally:
        await db.dispose()


def _product_rows(
    company_id: int, wh_id: int, wi: int, n: int, t: dict[str, Any], rng: random.Random
) -> list[tuple[Any, ...]]:
    """Products of one store's range (each store its own, so a store's sales draw on
    its own listings), as (product columns..., then the listing's warehouse, sales
    price, purchase price and stock)."""
    rows = []
    for i in range(n):
        name = (
            f"{rng.choice(BRANDS)} {rng.choice(ADJECTIVES)} {rng.choice(NOUNS)} "
            f"{rng.choice(SIZES)} #{i + 1}"
        )
        price = D(rng.randint(99, 4999)) / 100
        cost = (price * D("0.6")).quantize(D("0.01"))
        slug = name.lower().replace(" ", "-").replace("#", "").replace("&", "and")
        rows.append(
            (
                company_id,
                name,
                slug,
                f"SKU-{wi + 1}{i + 1:06d}",
                f"20{wi + 1:02d}{i + 1:09d}",
                "single",
                t["categories"][i % len(t["categories"])],
                t["brands"][i % len(t["brands"])],
                t["unit_id"],
                t["tax_id"],
                "",
                wh_id,
                price,
                cost,
                D(BATCH1_BASE + BATCH2_QTY),
            )
        )
    return rows


PRODUCT_COLUMNS = (
    "company_id", "name", "slug", "item_code", "barcode", "product_type",
    "category_id", "brand_id", "unit_id", "tax_id", "description",
)  # fmt: skip
LISTING_COLUMNS = (
    "company_id", "warehouse_id", "product_id", "sales_price", "purchase_price",
    "current_stock", "reorder_level", "active",
)  # fmt: skip


async def _copy_customers(
    conn: asyncpg.Connection, companies: list[int], each: int, rng: random.Random
) -> None:
    """``each`` customers of every company, named at random, with no balance."""
    await conn.copy_records_to_table(
        "users",
        records=[
            (
                company_id,
                "customer",
                f"{rng.choice(FIRST)} {rng.choice(LAST)} {i + 1}",
                f"555-{i:05d}",
                False,
                D("0.00"),
            )
            for company_id in companies
            for i in range(each)
        ],
        columns=("company_id", "user_type", "name", "phone", "is_walk_in", "balance"),
    )


async def _setval(conn: asyncpg.Connection, table: str) -> None:
    await conn.execute(
        f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), "
        f"(SELECT coalesce(max(id), 0) + 1 FROM {table}), false)"
    )


async def _max_id(conn: asyncpg.Connection, table: str) -> int:
    return int(await conn.fetchval(f"SELECT coalesce(max(id), 0) FROM {table}"))


async def seed(
    url: str,
    *,
    products: int = 10_000,
    warehouses: int = 2,
    customers: int = 200,
    history: int = 0,
    log: Log = print,
) -> dict[str, Any]:
    """Seed an empty, migrated PostgreSQL database; returns what the clients need."""
    t0 = time.perf_counter()
    t = await _tenant(url, warehouses)
    cid = t["company_id"]
    acc = t["accounts"]
    whs = t["warehouses"]
    k = len(whs)
    rng = random.Random(42)
    conn = await asyncpg.connect(pg_dsn(url))
    try:
        # Foreign-key triggers off for the bulk load: the rows are consistent by
        # construction, and checking millions of references one by one would take
        # most of the time.
        await conn.execute("SET session_replication_role = replica")
        # ---- customers (company-wide)
        await _copy_customers(conn, [cid], customers, rng)
        customer_ids = [
            r["id"]
            for r in await conn.fetch(
                "SELECT id FROM users WHERE company_id = $1 AND user_type = 'customer' "
                "AND NOT is_walk_in ORDER BY id",
                cid,
            )
        ]
        # ---- products, in the order a chain adds them over time: the stores'
        # catalogs interleaved in the table, not one store's block after the other
        # (a block per warehouse makes PostgreSQL prefer the warehouse_id b-tree and
        # a filter over the trigram indexes for searches, see bench/README.md).
        catalog_rows = [
            row
            for wi, wh in enumerate(whs)
            for row in _product_rows(cid, wh["id"], wi, products, t, rng)
        ]
        rng.shuffle(catalog_rows)
        width = len(PRODUCT_COLUMNS)
        await conn.copy_records_to_table(
            "products", records=[row[:width] for row in catalog_rows], columns=PRODUCT_COLUMNS
        )
        listed = {row[3]: row[width:] for row in catalog_rows}  # item_code -> listing
        rows = await conn.fetch(
            "SELECT id, item_code, barcode FROM products WHERE company_id = $1 ORDER BY id", cid
        )
        await conn.copy_records_to_table(
            "listings",
            records=[
                (cid, wh_id, r["id"], price, cost, stock, 0, True)
                for r in rows
                for wh_id, price, cost, stock in [listed[r["item_code"]]]
            ],
            columns=LISTING_COLUMNS,
        )
        await conn.copy_records_to_table(
            "product_barcodes",
            records=[(cid, r["id"], r["barcode"]) for r in rows],
            columns=("company_id", "product_id", "barcode"),
        )
        wi_of = {wh["id"]: wi for wi, wh in enumerate(whs)}
        pos: dict[int, int] = {}
        prod_rows = []
        for r in rows:
            wh_id, price, cost, _stock = listed[r["item_code"]]
            wi = wi_of[wh_id]
            p = pos.get(wi, 0)
            pos[wi] = p + 1
            c2 = (cost * D("1.02")).quantize(D("0.01"))
            prod_rows.append((r["id"], wi, p, cost, c2, price))
        await conn.execute(
            "CREATE TEMP TABLE bench_prod (product_id bigint PRIMARY KEY, wi int, pos int, "
            "c1 numeric, c2 numeric, price numeric)"
        )
        await conn.copy_records_to_table(
            "bench_prod",
            records=prod_rows,
            columns=("product_id", "wi", "pos", "c1", "c2", "price"),
        )
        await conn.execute("CREATE INDEX ON bench_prod (wi, pos)")
        await conn.execute("ANALYZE bench_prod")
        took = time.perf_counter() - t0
        log(f"  tenant, {customers} customers, {len(rows)} products: {took:.1f}s")

        # ---- history plan (computed first: batch 1 must carry what history drew)
        t1 = time.perf_counter()
        await conn.execute(
            """
            CREATE TEMP TABLE h_items AS
            SELECT g.n, j.j, p.product_id, p.wi, (1 + (g.n + j.j) % 3)::numeric AS qty,
                   p.price, p.c1,
                   round((1 + (g.n + j.j) % 3) * p.price, 2) AS net,
                   round(round((1 + (g.n + j.j) % 3) * p.price, 2) * 0.10, 2) AS tax,
                   (1 + (g.n + j.j) % 3) * p.c1 AS cost
            FROM generate_series(1, $1::int) g(n)
            CROSS JOIN generate_series(0, 2) j(j)
            JOIN bench_prod p
              ON p.wi = g.n % $2::int
             AND p.pos = ((g.n::bigint / $2::int) * 7919 + j.j * 3331) % $3::int
            """,
            history,
            k,
            products,
        )
        await conn.execute(
            """
            CREATE TEMP TABLE h_orders AS
            SELECT n, min(wi) AS wi, sum(net) AS subtotal, sum(tax) AS tax,
                   sum(net) + sum(tax) AS total, sum(cost) AS cost,
                   round((sum(net) + sum(tax)) * 0.4, 2) AS cash,
                   row_number() OVER (PARTITION BY min(wi) ORDER BY n) AS seq,
                   (current_date - (($1::int - n) * 730 / greatest($1::int, 1)))::date AS d
            FROM h_items GROUP BY n
            """,
            history,
        )
        await conn.execute("ALTER TABLE h_orders ADD COLUMN card numeric")
        await conn.execute("UPDATE h_orders SET card = total - cash")
        await conn.execute("CREATE INDEX ON h_orders (n)")
        await conn.execute("ANALYZE h_orders")
        await conn.execute("ANALYZE h_items")

        # ---- opening batches: explicit ids so movements and entries can refer to them
        b0 = await _max_id(conn, "stock_batches")
        e0 = await _max_id(conn, "journal_entries")
        await conn.execute(
            """
            CREATE TEMP TABLE bench_batch AS
            SELECT row_number() OVER (ORDER BY p.product_id, b.bno) AS rn, p.product_id, p.wi,
                   b.bno,
                   CASE WHEN b.bno = 1 THEN $1::numeric + coalesce(h.drawn, 0)
                        ELSE $2::numeric END AS received,
                   CASE WHEN b.bno = 1 THEN $1::numeric ELSE $2::numeric END AS remaining,
                   CASE WHEN b.bno = 1 THEN p.c1 ELSE p.c2 END AS cost
            FROM bench_prod p
            CROSS JOIN (VALUES (1), (2)) b(bno)
            LEFT JOIN (SELECT product_id, sum(qty) AS drawn FROM h_items GROUP BY product_id) h
              ON h.product_id = p.product_id
            """,
            BATCH1_BASE,
            BATCH2_QTY,
        )
        wh_ids = [wh["id"] for wh in whs]
        await conn.execute(
            """
            INSERT INTO stock_batches (id, company_id, warehouse_id, product_id, batch_number,
                unit_cost, quantity_received, quantity_remaining, value_remaining,
                source_type, source_id, created_at)
            SELECT $1::bigint + rn, $2, ($3::bigint[])[wi + 1], product_id, 'B' || bno, cost,
                   received, remaining, remaining * cost, 'opening', product_id,
                   now() - interval '800 days'
            FROM bench_batch
            """,
            b0,
            cid,
            wh_ids,
        )
        await conn.execute(
            """
            INSERT INTO stock_movements (company_id, warehouse_id, product_id, batch_id,
                quantity, cost_amount, reason, source_type, source_id, created_at)
            SELECT $2, ($3::bigint[])[wi + 1], product_id, $1::bigint + rn, received,
                   received * cost, 'opening', 'opening', product_id, now() - interval '800 days'
            FROM bench_batch ORDER BY rn
            """,
            b0,
            cid,
            wh_ids,
        )
        await conn.execute(
            """
            INSERT INTO journal_entries (id, company_id, warehouse_id, entry_date, narration,
                source_type, source_id, created_by, created_at)
            SELECT $1::bigint + rn, $2, ($3::bigint[])[wi + 1],
                   current_date - 800, 'Opening stock ' || product_id || ' ' || received
                   || ' @ ' || cost, 'opening', product_id, $4, now() - interval '800 days'
            FROM bench_batch
            """,
            e0,
            cid,
            wh_ids,
            t["admin_id"],
        )
        await conn.execute(
            """
            INSERT INTO journal_lines (entry_id, company_id, warehouse_id, account_id, party_id,
                debit, credit)
            SELECT $1::bigint + rn, $2, ($3::bigint[])[wi + 1], a.account_id, NULL,
                   CASE WHEN a.side = 'd' THEN received * cost ELSE 0 END,
                   CASE WHEN a.side = 'c' THEN received * cost ELSE 0 END
            FROM bench_batch
            CROSS JOIN (VALUES ($4::bigint, 'd'), ($5::bigint, 'c')) a(account_id, side)
            ORDER BY rn, a.side DESC
            """,
            e0,
            cid,
            wh_ids,
            acc[chart.INVENTORY],
            acc[chart.OPENING_EQUITY],
        )
        batch1 = """
            CREATE TEMP TABLE bench_batch1 AS
            SELECT product_id, $1::bigint + rn AS batch_id FROM bench_batch WHERE bno = 1
        """
        await conn.execute(batch1, b0)
        await conn.execute("ALTER TABLE bench_batch1 ADD PRIMARY KEY (product_id)")
        for table in ("stock_batches", "journal_entries"):
            await _setval(conn, table)
        log(f"  opening batches, movements and entries: {time.perf_counter() - t1:.1f}s")

        first_order = await _max_id(conn, "orders") + 1
        if history:
            await _history(conn, t, history, customer_ids, log)
        for wi, wh in enumerate(whs):
            last = await conn.fetchval(
                "SELECT coalesce(max(seq), 0) FROM h_orders WHERE wi = $1", wi
            )
            if last:
                await conn.execute(
                    "INSERT INTO invoice_counters (warehouse_id, counter_type, company_id, "
                    "last_value) VALUES ($1, 'sales', $2, $3)",
                    wh["id"],
                    cid,
                    int(last),
                )
        await conn.execute("SET session_replication_role = DEFAULT")
        # As autovacuum would leave a long-lived database: statistics, visibility
        # map, and the GIN indexes' pending lists merged (their planner statistics
        # stay empty until then).
        t2 = time.perf_counter()
        await conn.execute("VACUUM ANALYZE")
        log(f"  vacuum analyze: {time.perf_counter() - t2:.1f}s")
        products_by_wh = {
            wh["id"]: [
                (r["product_id"], xid.encode(r["product_id"]), str(r["price"]))
                for r in await conn.fetch(
                    "SELECT product_id, price FROM bench_prod WHERE wi = $1 ORDER BY pos", wi
                )
            ]
            for wi, wh in enumerate(whs)
        }
    finally:
        await conn.close()
    log(f"  seeded in {time.perf_counter() - t0:.1f}s")
    return {
        "company_id": cid,
        "tax_id": t["tax_id"],
        "tax_rate": t["tax_rate"],
        "walk_in_id": t["walk_in_id"],
        "customer_ids": customer_ids,
        "warehouses": whs,
        "products": products_by_wh,
        "history": history,
        # past sale n (1-based) is order first_order + n - 1, in warehouse n % len(warehouses)
        "history_first_order_id": first_order,
    }


TENANT_CUSTOMERS = 5


async def seed_tenants(
    url: str,
    companies: int,
    *,
    products: int = 100,
    warehouses: int = 2,
    log: Log = print,
) -> list[dict[str, Any]]:
    """``companies`` more companies beside the main one (issue 28: many tenants),
    each of ``warehouses`` branches with an API key, its chart, modes, a VAT 10%
    tax, a walk-in customer and ``TENANT_CUSTOMERS`` more, and ``products`` products
    per branch with one opening batch each (1,050 units, its movement and its
    opening entry Dr 11700 / Cr 31100, as ``seed`` makes them).

    The companies are made through the service's own functions, a few at a time
    (the owners' password hash computed once: scrypt per owner would be most of
    the time, and nobody logs in as a bench tenant's owner); the catalogs, batches,
    movements and entries of all of them go in bulk afterwards. Returns, per
    company, what the clients need (``Workload``)."""
    from tillbook.kit import crypto

    t0 = time.perf_counter()
    db = Database(url, pool_size=4)
    one_hash = crypto.hash_password(uuid.uuid4().hex)
    real_hash = crypto.hash_password
    crypto.hash_password = lambda _password: one_hash  # type: ignore[assignment]
    tenants: list[dict[str, Any]] = []
    try:

        async def one(i: int) -> dict[str, Any]:
            async def work(session: Any) -> dict[str, Any]:
                email = f"owner+{i + 1}-{uuid.uuid4().hex[:6]}@tenant.example"
                return await _company(
                    session, f"Tenant {i + 1}", email, warehouses, "Branch {n}", "Branch {n} till"
                )

            return await db.write(work)

        for start in range(0, companies, 8):
            tenants += await asyncio.gather(
                *(one(i) for i in range(start, min(start + 8, companies)))
            )
            if (start // 8) % 25 == 24:
                log(f"  tenants: {len(tenants)} companies, {time.perf_counter() - t0:.0f}s")
    finally:
        crypto.hash_password = real_hash  # type: ignore[assignment]
        await db.dispose()
    log(f"  {companies} tenant companies through the services: {time.perf_counter() - t0:.1f}s")

    t1 = time.perf_counter()
    rng = random.Random(28)
    conn = await asyncpg.connect(pg_dsn(url))
    try:
        await conn.execute("SET session_replication_role = replica")
        await _copy_customers(conn, [t["company_id"] for t in tenants], TENANT_CUSTOMERS, rng)
        by_company: dict[int, list[int]] = {}
        for r in await conn.fetch(
            "SELECT company_id, id FROM users WHERE company_id = ANY($1::bigint[]) "
            "AND user_type = 'customer' AND NOT is_walk_in ORDER BY id",
            [t["company_id"] for t in tenants],
        ):
            by_company.setdefault(r["company_id"], []).append(r["id"])
        plain = {"categories": [None], "brands": [None]}
        catalog_rows = [
            row
            for t in tenants
            for wi, wh in enumerate(t["warehouses"])
            for row in _product_rows(t["company_id"], wh["id"], wi, products, {**t, **plain}, rng)
        ]
        width = len(PRODUCT_COLUMNS)
        await conn.copy_records_to_table(
            "products", records=[row[:width] for row in catalog_rows], columns=PRODUCT_COLUMNS
        )
        listed = {(row[0], row[3]): row[width:] for row in catalog_rows}
        rows = await conn.fetch(
            "SELECT id, company_id, item_code, barcode FROM products "
            "WHERE company_id = ANY($1::bigint[]) ORDER BY id",
            [t["company_id"] for t in tenants],
        )
        await conn.copy_records_to_table(
            "listings",
            records=[
                (r["company_id"], wh_id, r["id"], price, cost, stock, 0, True)
                for r in rows
                for wh_id, price, cost, stock in [listed[(r["company_id"], r["item_code"])]]
            ],
            columns=LISTING_COLUMNS,
        )
        await conn.copy_records_to_table(
            "product_barcodes",
            records=[(r["company_id"], r["id"], r["barcode"]) for r in rows],
            columns=("company_id", "product_id", "barcode"),
        )
        accounts = {t["company_id"]: t["accounts"] for t in tenants}
        admin_of = {
            r["company_id"]: r["id"]
            for r in await conn.fetch(
                "SELECT DISTINCT ON (company_id) company_id, id FROM users "
                "WHERE company_id = ANY($1::bigint[]) AND user_type = 'staff' "
                "ORDER BY company_id, id",
                [t["company_id"] for t in tenants],
            )
        }
        await conn.execute(
            "CREATE TEMP TABLE tenant_batch (rn bigint, company_id bigint, warehouse_id bigint, "
            "product_id bigint, qty numeric, cost numeric, inventory bigint, equity bigint, "
            "admin_id bigint)"
        )
        await conn.copy_records_to_table(
            "tenant_batch",
            records=[
                (
                    n + 1,
                    r["company_id"],
                    wh_id,
                    r["id"],
                    stock,
                    cost,
                    accounts[r["company_id"]][chart.INVENTORY],
                    accounts[r["company_id"]][chart.OPENING_EQUITY],
                    admin_of[r["company_id"]],
                )
                for n, r in enumerate(rows)
                for wh_id, _price, cost, stock in [listed[(r["company_id"], r["item_code"])]]
            ],
        )
        b0 = await _max_id(conn, "stock_batches")
        e0 = await _max_id(conn, "journal_entries")
        await conn.execute(
            """
            INSERT INTO stock_batches (id, company_id, warehouse_id, product_id, batch_number,
                unit_cost, quantity_received, quantity_remaining, value_remaining,
                source_type, source_id, created_at)
            SELECT $1::bigint + rn, company_id, warehouse_id, product_id, 'B1', cost, qty, qty,
                   qty * cost, 'opening', product_id, now() - interval '800 days'
            FROM tenant_batch
            """,
            b0,
        )
        await conn.execute(
            """
            INSERT INTO stock_movements (company_id, warehouse_id, product_id, batch_id,
                quantity, cost_amount, reason, source_type, source_id, created_at)
            SELECT company_id, warehouse_id, product_id, $1::bigint + rn, qty, qty * cost,
                   'opening', 'opening', product_id, now() - interval '800 days'
            FROM tenant_batch ORDER BY rn
            """,
            b0,
        )
        await conn.execute(
            """
            INSERT INTO journal_entries (id, company_id, warehouse_id, entry_date, narration,
                source_type, source_id, created_by, created_at)
            SELECT $1::bigint + rn, company_id, warehouse_id, current_date - 800,
                   'Opening stock ' || product_id || ' ' || qty || ' @ ' || cost, 'opening',
                   product_id, admin_id, now() - interval '800 days'
            FROM tenant_batch
            """,
            e0,
        )
        await conn.execute(
            """
            INSERT INTO journal_lines (entry_id, company_id, warehouse_id, account_id, party_id,
                debit, credit)
            SELECT $1::bigint + rn, company_id, warehouse_id, a.account_id, NULL,
                   CASE WHEN a.side = 'd' THEN qty * cost ELSE 0 END,
                   CASE WHEN a.side = 'c' THEN qty * cost ELSE 0 END
            FROM tenant_batch
            CROSS JOIN LATERAL (VALUES (inventory, 'd'), (equity, 'c')) a(account_id, side)
            ORDER BY rn, a.side DESC
            """,
            e0,
        )
        for table in ("stock_batches", "journal_entries"):
            await _setval(conn, table)
        await conn.execute("SET session_replication_role = DEFAULT")
        listed_ids: dict[int, list[tuple[int, str, str]]] = {}
        for r in rows:
            wh_id, price, _cost, _stock = listed[(r["company_id"], r["item_code"])]
            listed_ids.setdefault(wh_id, []).append((r["id"], xid.encode(r["id"]), str(price)))
    finally:
        await conn.close()
    log(f"  tenants' catalogs: {len(rows)} products, batches and entries: "
        f"{time.perf_counter() - t1:.1f}s")  # fmt: skip
    return [
        {
            "company_id": t["company_id"],
            "tax_id": t["tax_id"],
            "customer_ids": by_company[t["company_id"]],
            "warehouses": t["warehouses"],
            "products": {wh["id"]: listed_ids[wh["id"]] for wh in t["warehouses"]},
        }
        for t in tenants
    ]


async def roll_up_all(url: str, company_ids: list[int], log: Log = print) -> None:
    """Every company's past months rolled up now, as ``tillbook serve``'s background
    step would at its start (``ledger.rollups``): with a thousand companies that
    pass would otherwise run through the first minutes of the measured phases."""
    from tillbook.ledger import rollups

    t0 = time.perf_counter()
    db = Database(url, pool_size=4)
    try:
        for start in range(0, len(company_ids), 4):
            await asyncio.gather(
                *(rollups.roll_up(db, cid) for cid in company_ids[start : start + 4])
            )
    finally:
        await db.dispose()
    log(f"  {len(company_ids)} companies rolled up: {time.perf_counter() - t0:.1f}s")


async def _history(
    conn: asyncpg.Connection,
    t: dict[str, Any],
    history: int,
    customer_ids: list[int],
    log: Log,
) -> None:
    """``history`` past split-tender sales, in set-based statements."""
    cid = t["company_id"]
    acc = t["accounts"]
    whs = t["warehouses"]
    wh_ids = [wh["id"] for wh in whs]
    staff_ids = [wh["staff_user_id"] for wh in whs]
    o0 = await _max_id(conn, "orders")
    e0 = await _max_id(conn, "journal_entries")
    p0 = await _max_id(conn, "payments")
    mode_sql = "SELECT id FROM payment_modes WHERE company_id = $1 AND code = $2"
    cash_mode = await conn.fetchval(mode_sql, cid, "cash")
    card_mode = await conn.fetchval(mode_sql, cid, "card")
    ncust = len(customer_ids)
    await conn.execute(
        "CREATE TEMP TABLE h_cust2 AS SELECT (ordinality - 1)::int AS pos, u AS id "
        "FROM unnest($1::bigint[]) WITH ORDINALITY AS t(u)",
        customer_ids,
    )
    await conn.execute("ALTER TABLE h_orders ADD COLUMN customer_id bigint")
    await conn.execute(
        "UPDATE h_orders h SET customer_id = c.id FROM h_cust2 c WHERE c.pos = (h.n * 31) % $1",
        ncust,
    )
    invoice = (
        "'SAL-' || CASE WHEN h.seq < 100000 THEN lpad(h.seq::text, 5, '0') ELSE h.seq::text END"
    )
    steps: list[tuple[str, str, tuple[Any, ...]]] = [
        (
            "orders",
            f"""
            INSERT INTO orders (id, company_id, warehouse_id, order_type, unique_id,
                invoice_number, order_date, order_datetime, user_id, staff_user_id, subtotal,
                tax_amount, discount, shipping, total, paid_amount, due_amount, credited_amount,
                order_status, payment_status, notes, journal_entry_id, created_at)
            SELECT $1::bigint + h.n, $2, ($3::bigint[])[h.wi + 1], 'sales', md5('u' || h.n),
                   {invoice}, h.d, h.d + time '12:00', h.customer_id, ($4::bigint[])[h.wi + 1],
                   h.subtotal, h.tax, 0, 0, h.total, h.total, 0, 0, 'delivered', 'paid', '',
                   $5::bigint + h.n, h.d + time '12:00'
            FROM h_orders h ORDER BY h.n
            """,
            (o0, cid, wh_ids, staff_ids, e0),
        ),
        (
            "order_items",
            """
            INSERT INTO order_items (order_id, company_id, product_id, unit_id, quantity,
                base_quantity, unit_price, discount_rate, tax_id, tax_rate, tax_amount, subtotal,
                total, cost_amount, returned_quantity)
            SELECT $1::bigint + i.n, $2, i.product_id, $3, i.qty, i.qty, i.price, 0, $4, 10,
                   i.tax, i.net, i.net + i.tax, i.cost, 0
            FROM h_items i ORDER BY i.n, i.j
            """,
            (o0, cid, t["unit_id"], t["tax_id"]),
        ),
        (
            "stock_movements",
            """
            INSERT INTO stock_movements (company_id, warehouse_id, product_id, batch_id,
                quantity, cost_amount, reason, source_type, source_id, created_at)
            SELECT $2, ($3::bigint[])[i.wi + 1], i.product_id, b.batch_id, -i.qty, -i.cost,
                   'sale', 'sale', $1::bigint + i.n, h.d + time '12:00'
            FROM h_items i JOIN bench_batch1 b USING (product_id) JOIN h_orders h USING (n)
            ORDER BY i.n, i.j
            """,
            (o0, cid, wh_ids),
        ),
        (
            "payments",
            """
            INSERT INTO payments (id, company_id, warehouse_id, user_id, payment_type, amount,
                unallocated_amount, payment_mode_id, date, notes, order_id, created_by,
                created_at)
            SELECT $1::bigint + 2 * h.n - 1 + m.k, $2, ($3::bigint[])[h.wi + 1], h.customer_id,
                   'in', CASE WHEN m.k = 0 THEN h.cash ELSE h.card END, 0,
                   CASE WHEN m.k = 0 THEN $5::bigint ELSE $6::bigint END, h.d, '',
                   $4::bigint + h.n, ($7::bigint[])[h.wi + 1], h.d + time '12:00'
            FROM h_orders h CROSS JOIN (VALUES (0), (1)) m(k) ORDER BY h.n, m.k
            """,
            (p0, cid, wh_ids, o0, cash_mode, card_mode, staff_ids),
        ),
        (
            "payment_allocations",
            """
            INSERT INTO payment_allocations (company_id, payment_id, order_id, amount,
                created_at)
            SELECT $2, $1::bigint + 2 * h.n - 1 + m.k, $3::bigint + h.n,
                   CASE WHEN m.k = 0 THEN h.cash ELSE h.card END, h.d + time '12:00'
            FROM h_orders h CROSS JOIN (VALUES (0), (1)) m(k) ORDER BY h.n, m.k
            """,
            (p0, cid, o0),
        ),
        (
            "journal_entries",
            f"""
            INSERT INTO journal_entries (id, company_id, warehouse_id, entry_date, narration,
                source_type, source_id, created_by, created_at)
            SELECT $1::bigint + h.n, $2, ($3::bigint[])[h.wi + 1], h.d,
                   'Sale ' || {invoice}, 'sale', $4::bigint + h.n,
                   ($5::bigint[])[h.wi + 1], h.d + time '12:00'
            FROM h_orders h ORDER BY h.n
            """,
            (e0, cid, wh_ids, o0, staff_ids),
        ),
        (
            "journal_lines",
            """
            INSERT INTO journal_lines (entry_id, company_id, warehouse_id, account_id, party_id,
                debit, credit)
            SELECT $1::bigint + h.n, $2, ($3::bigint[])[h.wi + 1], l.account_id, NULL,
                   CASE l.k WHEN 0 THEN h.cash WHEN 1 THEN h.card WHEN 2 THEN h.cost ELSE 0 END,
                   CASE l.k WHEN 3 THEN h.subtotal WHEN 4 THEN h.tax WHEN 5 THEN h.cost ELSE 0 END
            FROM h_orders h
            CROSS JOIN (VALUES (0, $4::bigint), (1, $5::bigint), (2, $6::bigint),
                               (3, $7::bigint), (4, $8::bigint), (5, $9::bigint))
                 l(k, account_id)
            WHERE NOT (l.k = 4 AND h.tax = 0)
            ORDER BY h.n, l.k
            """,
            (
                e0,
                cid,
                wh_ids,
                acc[chart.CASH_ON_HAND],
                acc[chart.CARD_CLEARING],
                acc[chart.COGS],
                acc[chart.SALES_REVENUE],
                acc[chart.SALES_TAX],
                acc[chart.INVENTORY],
            ),
        ),
        (
            "outbox_events",
            f"""
            INSERT INTO outbox_events (event_id, company_id, warehouse_id, type, payload,
                dispatched, created_at)
            SELECT e.id, $2, ($3::bigint[])[h.wi + 1], e.type,
                   json_build_object('id', e.id, 'type', e.type,
                       'company_id', $2::bigint, 'warehouse_id', ($3::bigint[])[h.wi + 1],
                       'data', json_build_object('order_id', $1::bigint + h.n,
                           'invoice_number', {invoice}, 'total', h.total))::text,
                   true, h.d + time '12:00'
            FROM h_orders h
            CROSS JOIN LATERAL (
                SELECT t.type,
                       'evt_' || lpad(to_hex((extract(epoch FROM h.d) * 1000)::bigint
                                             + h.n % 86400000), 12, '0')
                       || left(md5(h.n || t.type), 20) AS id
                FROM (VALUES ('order.created'), ('sales.created'), ('order.paid')) t(type)
            ) e
            ORDER BY h.n
            """,
            (o0, cid, wh_ids),
        ),
        (
            "idempotency_records",
            """
            INSERT INTO idempotency_records (warehouse_id, token, request_hash, response_status,
                response_body, created_at, company_id)
            SELECT ($2::bigint[])[h.wi + 1], md5('u' || h.n), md5('h' || h.n), 200,
                   json_build_object('status', 'success', 'order_id', $1::bigint + h.n)::text,
                   h.d + time '12:00', $3::bigint
            FROM h_orders h ORDER BY h.n
            """,
            (o0, wh_ids, cid),
        ),
    ]
    # Secondary indexes are rebuilt once at the end (a sort each) instead of being
    # maintained row by row; primary keys and unique constraints stay.
    indexes = await conn.fetch(
        """
        SELECT i.indexrelid::regclass::text AS name, pg_get_indexdef(i.indexrelid) AS def
        FROM pg_index i JOIN pg_class t ON t.oid = i.indrelid
        WHERE t.relname = ANY($1::text[])
          AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid)
        """,
        [table for table, _, _ in steps],
    )
    for ix in indexes:
        await conn.execute(f"DROP INDEX {ix['name']}")
    for table, sql, args in steps:
        ts = time.perf_counter()
        status = await conn.execute(sql, *args)
        log(f"  history {table}: {status.split()[-1]} rows, {time.perf_counter() - ts:.1f}s")
    ts = time.perf_counter()
    await conn.execute("SET maintenance_work_mem = '256MB'")
    for ix in indexes:
        await conn.execute(ix["def"])
    log(f"  history: {len(indexes)} secondary indexes rebuilt, {time.perf_counter() - ts:.1f}s")
    for table in ("orders", "payments", "journal_entries"):
        await _setval(conn, table)


async def check(url: str, company_id: int) -> dict[str, Any]:
    """The cheap invariants, set-based: entries balance, GL 11700 = Σ layer values,
    stock = Σ movements = Σ batch remaining, paid = Σ allocations."""
    conn = await asyncpg.connect(pg_dsn(url))
    try:
        unbalanced = await conn.fetchval(
            "SELECT count(*) FROM (SELECT entry_id FROM journal_lines WHERE company_id = $1 "
            "GROUP BY entry_id HAVING sum(debit) <> sum(credit)) x",
            company_id,
        )
        gl = await conn.fetchval(
            "SELECT coalesce(sum(debit - credit), 0) FROM journal_lines l "
            "JOIN accounts a ON a.id = l.account_id WHERE l.company_id = $1 AND a.code = '11700'",
            company_id,
        )
        layers = await conn.fetchval(
            "SELECT coalesce(sum(value_remaining), 0) FROM stock_batches WHERE company_id = $1",
            company_id,
        )
        stock_off = await conn.fetchval(
            """
            SELECT count(*) FROM listings p
            LEFT JOIN (SELECT product_id, warehouse_id, sum(quantity) q FROM stock_movements
                       WHERE company_id = $1 GROUP BY product_id, warehouse_id) m
              ON m.product_id = p.product_id AND m.warehouse_id = p.warehouse_id
            LEFT JOIN (SELECT product_id, warehouse_id, sum(quantity_remaining) q
                       FROM stock_batches WHERE company_id = $1
                       GROUP BY product_id, warehouse_id) b
              ON b.product_id = p.product_id AND b.warehouse_id = p.warehouse_id
            WHERE p.company_id = $1
              AND (p.current_stock <> coalesce(m.q, 0) OR p.current_stock <> coalesce(b.q, 0))
            """,
            company_id,
        )
        paid_off = await conn.fetchval(
            """
            SELECT count(*) FROM orders o
            LEFT JOIN (SELECT order_id, sum(amount) a FROM payment_allocations
                       WHERE company_id = $1 GROUP BY order_id) x ON x.order_id = o.id
            WHERE o.company_id = $1 AND o.order_type = 'sales'
              AND (o.paid_amount <> coalesce(x.a, 0)
                   OR o.due_amount <> o.total - o.paid_amount - o.credited_amount)
            """,
            company_id,
        )
    finally:
        await conn.close()
    ok = unbalanced == 0 and gl == layers and stock_off == 0 and paid_off == 0
    return {
        "ok": ok,
        "unbalanced_entries": unbalanced,
        "gl_11700": str(gl),
        "layer_values": str(layers),
        "products_off": stock_off,
        "orders_off": paid_off,
        "checked_at": dt.datetime.now(dt.UTC).isoformat(),
    }
