"""The floor: the SQL of one POST /sales, straight through asyncpg, no HTTP, no ORM.

Each simulated sale issues the statements the service issues for a 3-line,
split-tender sale, in the same order, with the same row locks and one transaction
(captured with a ``before_cursor_execute`` listener; ``python bench/floor.py
--capture`` prints them again from the running code):

    key lookup (autocommit, no transaction)       1
    BEGIN (lock_timeout is a connection setting)
    idempotency claim INSERT … ON CONFLICT        1
    customer, products FOR UPDATE (id order)      2
      (payment modes and taxes are cached:
      written once, never changed)
    order INSERT (placeholder invoice number)     1
    open batches of the 3 products SELECT,
      products and batches UPDATE (one
      statement of two CTEs over arrays)          2
    order items INSERT (3 rows), payments
      INSERT (2 rows)                             2
    one statement of data-modifying CTEs, each
      taking its rows as arrays: the invoice
      counter's upsert giving the number, stock
      movements, allocations, the journal entry
      (its narration naming the number: the
      journal is insert-only, so the entry is
      written once, complete) and its lines,
      order UPDATE (number, entry), 3 outbox
      events, idempotency response; the
      placeholder replaced by the number in SQL   1
    COMMIT
                                                 --
                                                 10

The invoice counter row is locked from that last statement to COMMIT, so every
sale of a warehouse queues there for one round trip.

The only Python work left is what the statements need (amounts, FIFO over the
fetched batches, a JSON payload of the same size). That is the cost of the work
itself on this PostgreSQL; the API's throughput divided by this one is the share
the service keeps after HTTP, validation, the ORM and its own bookkeeping.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import hashlib
import json
import os
import random
import statistics
import sys
import time
import uuid
from collections.abc import Awaitable, Callable
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any

import asyncpg

sys.path.insert(0, str(Path(__file__).resolve().parent))

from seed import pg_dsn

CLK_TCK = os.sysconf("SC_CLK_TCK")


def proc_cpu(pid: int) -> float:
    """User + system CPU seconds of one process so far (0 when it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def machine_cpu() -> tuple[float, float]:
    """(busy, total) CPU seconds of the whole machine so far, from /proc/stat: what
    every process used, PostgreSQL's background writers and the kernel included."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    total = sum(fields[:8])
    idle = fields[3] + fields[4]  # idle, iowait
    return (total - idle) / CLK_TCK, total / CLK_TCK


def machine_share(before: tuple[float, float], done: int) -> dict[str, float]:
    """The machine's busy share during a phase and its CPU per successful request:
    the figures that say whether a run was bound by the CPU."""
    busy, total = (a - b for a, b in zip(machine_cpu(), before, strict=True))
    return {
        "machine_busy_pct": round(100 * busy / total, 1) if total else 0.0,
        "machine_cpu_ms_per_ok": round(1000 * busy / max(done, 1), 2),
    }


CENT = Decimal("0.01")
STATEMENTS_PER_SALE = 10
# The floor's shapes: the reference every earlier figure was measured against, and
# the service's own since its sale sends 5 statements (``--floor-shape service``).
SHAPES = ("reference", "service")

AUTH = """
SELECT k.id AS key_id, k.secret_digest, k.status, k.require_signature, k.hmac_secret_encrypted,
       k.rate_limit, c.id AS company_id, c.subscription_expires_on, w.id AS warehouse_id,
       w.allow_negative_stock, u.id AS user_id, u.name AS user_name
FROM api_keys k JOIN companies c ON c.id = k.company_id
JOIN warehouses w ON w.id = k.warehouse_id JOIN users u ON u.id = k.user_id
WHERE k.public_key = $1
"""
CLAIM = """
INSERT INTO idempotency_records (warehouse_id, token, request_hash, created_at, company_id)
VALUES ($1, $2, $3, $4, $5) ON CONFLICT (warehouse_id, token, company_id) DO NOTHING RETURNING id
"""
CUSTOMER = """
SELECT id, company_id, user_type, name, email, phone, is_walk_in, password_hash, balance,
       warehouse_id, created_at
FROM users WHERE id = $1 AND company_id = $2 AND user_type = $3
"""
LOCK_PRODUCTS = """
SELECT p.id, l.id AS listing_id, p.company_id, l.warehouse_id, p.name, p.slug, p.item_code,
       p.barcode, p.product_type, p.category_id, p.brand_id, p.unit_id, p.tax_id,
       l.sales_price, l.purchase_price, l.mrp, l.current_stock, l.reorder_level, p.description
FROM products p JOIN listings l ON l.product_id = p.id
WHERE p.id = ANY($2::bigint[]) AND l.warehouse_id = $1 ORDER BY p.id FOR UPDATE OF l
"""
ORDER = """
INSERT INTO orders (company_id, warehouse_id, order_type, unique_id, invoice_number, order_date,
    order_datetime, user_id, staff_user_id, original_order_id, subtotal, tax_amount, discount,
    shipping, total, paid_amount, due_amount, credited_amount, order_status, payment_status,
    notes, journal_entry_id)
VALUES ($1, $2, 'sales', $3, $4, $5, NULL, $6, $7, NULL, $8, $9, 0, 0, $10, $10, 0, 0,
        'delivered', 'paid', '', NULL)
RETURNING id
"""
BATCHES = """
SELECT id, product_id, unit_cost, quantity_remaining, value_remaining
FROM stock_batches WHERE product_id = ANY($1::bigint[]) AND warehouse_id = $3
  AND quantity_remaining > 0
ORDER BY product_id, CASE WHEN expiry_date IS NOT NULL AND expiry_date < $2 THEN 1 ELSE 0 END, id
"""
LEVELS = """
WITH stock AS (
  UPDATE listings SET current_stock = current_stock + s.delta, updated_at = now()
  FROM unnest($1::bigint[], $2::numeric[]) AS s(id, delta) WHERE listings.id = s.id
), batches AS (
  UPDATE stock_batches SET quantity_remaining = b.q, value_remaining = b.v
  FROM unnest($3::bigint[], $4::numeric[], $5::numeric[]) AS b(id, q, v)
  WHERE stock_batches.id = b.id
)
SELECT 1
"""
ITEMS = """
INSERT INTO order_items (order_id, company_id, product_id, unit_id, quantity, base_quantity,
    unit_price, discount_rate, tax_id, tax_rate, tax_amount, subtotal, total, cost_amount,
    returned_quantity)
SELECT $1, $2, p, u, q, q, up, 0, $3, $4, t, n, g, c, 0
FROM unnest($5::bigint[], $6::bigint[], $7::numeric[], $8::numeric[], $9::numeric[],
            $10::numeric[], $11::numeric[], $12::numeric[]) WITH ORDINALITY
     AS x(p, u, q, up, t, n, g, c, k)
ORDER BY k RETURNING id
"""
PAYMENTS = """
INSERT INTO payments (company_id, warehouse_id, user_id, payment_type, amount,
    unallocated_amount, payment_mode_id, date, reference, notes, order_id, created_by)
VALUES ($1, $2, $3, 'in', $4, 0, $5, $6, NULL, '', $7, $8),
       ($1, $2, $3, 'in', $9, 0, $10, $6, $11, '', $7, $8)
RETURNING id
"""
# Everything nothing reads back: one statement just before COMMIT, each write a
# data-modifying CTE over arrays, the invoice number taken by its first CTE and put in
# place of the placeholder ($21) where the sale names it. The journal entry is
# inserted here, its narration complete: journal entries and lines are insert-only
# (database triggers), so no UPDATE can name the number afterwards.
# The CTEs both shapes of the floor's last statement share (their parameters by the
# same numbers): the number taken from the counter, the stock movements, the tender
# allocations, the events and the stored answer, each with the number in place of
# the placeholder ($21).
LATE_VALUE = """late_value AS (
  INSERT INTO invoice_counters (warehouse_id, counter_type, company_id, last_value)
  VALUES ($2, 'sales', $1, 1)
  ON CONFLICT (warehouse_id, counter_type, company_id)
  DO UPDATE SET last_value = invoice_counters.last_value + 1
  RETURNING 'SAL-' || lpad(last_value::text, greatest(5, length(last_value::text)), '0') AS value
"""
MOVEMENTS = """movements AS (
  INSERT INTO stock_movements (company_id, warehouse_id, product_id, batch_id, quantity,
      cost_amount, reason, source_type, source_id)
  SELECT $1, $2, p, b, q, c, 'sale', 'sale', $3
  FROM unnest($4::bigint[], $5::bigint[], $6::numeric[], $7::numeric[]) AS m(p, b, q, c)
"""
ALLOCATIONS = """allocations AS (
  INSERT INTO payment_allocations (company_id, payment_id, order_id, amount)
  SELECT $1, p, $3, a FROM unnest($8::bigint[], $9::numeric[]) AS x(p, a)
"""
EVENTS = """events AS (
  INSERT INTO outbox_events (event_id, company_id, warehouse_id, type, payload, dispatched,
      created_at)
  SELECT e, $1, $2, t, replace(p, $21, (SELECT value FROM late_value)), false, $15
  FROM unnest($16::varchar[], $17::varchar[], $18::text[]) AS ev(e, t, p)
"""
RESPONSE = """response AS (
  UPDATE idempotency_records SET response_status = 200,
      response_body = replace($19, $21, (SELECT value FROM late_value))
  WHERE warehouse_id = $2 AND token = $20
)"""
FINISH = f"""
WITH {LATE_VALUE}), entry AS (
  INSERT INTO journal_entries (company_id, warehouse_id, entry_date, narration, source_type,
      source_id, created_by)
  SELECT $1, $2, $10::date, replace($22, $21, value), 'sale', $3, $23 FROM late_value
  RETURNING id
), {MOVEMENTS}), {ALLOCATIONS}), lines AS (
  INSERT INTO journal_lines (entry_id, company_id, warehouse_id, account_id, party_id, debit,
      credit)
  SELECT (SELECT id FROM entry), $1, $2, acc, NULL, d, c
  FROM unnest($11::bigint[], $12::numeric[], $13::numeric[]) AS l(acc, d, c)
), numbered AS (
  UPDATE orders SET invoice_number = replace($14, $21, (SELECT value FROM late_value)),
      journal_entry_id = (SELECT id FROM entry)
  WHERE id = $3
), {EVENTS}), {RESPONSE}
SELECT value FROM late_value
"""


# The service's shape since 2026-11-28 (``--floor-shape service``, 5 statements):
# the key; the claim; the customer, the products and their layers read without
# locks in one statement (``UnitOfWork.read_ahead``: each read's rows an array of
# records); the order's insert reserving the ids of its journal entry, lines and
# payments; and one last statement with the number, the guarded stock changes, the
# lines, payments, movements, allocations, the entry and its lines, the order's
# number, the events and the stored answer.
CUSTOMER_NAMES = ("id", "company_id", "user_type", "name", "email", "phone", "is_walk_in",
                  "password_hash", "balance", "warehouse_id", "created_at")  # fmt: skip
PRODUCT_NAMES = ("id", "listing_id", "company_id", "warehouse_id", "name", "slug", "item_code",
                 "barcode", "product_type", "category_id", "brand_id", "unit_id", "tax_id",
                 "sales_price", "purchase_price", "mrp", "current_stock", "reorder_level",
                 "description")  # fmt: skip
BATCH_NAMES = ("id", "product_id", "unit_cost", "quantity_remaining", "value_remaining")
READS_SERVICE = f"""
SELECT
  ARRAY(SELECT ROW({", ".join(CUSTOMER_NAMES)}) FROM users
        WHERE id = $1 AND company_id = $2 AND user_type = 'customer') AS customer,
  ARRAY(SELECT ROW(p.id, l.id, p.company_id, l.warehouse_id, p.name, p.slug, p.item_code,
                   p.barcode, p.product_type, p.category_id, p.brand_id, p.unit_id, p.tax_id,
                   l.sales_price, l.purchase_price, l.mrp, l.current_stock, l.reorder_level,
                   p.description)
        FROM products p JOIN listings l ON l.product_id = p.id
        WHERE p.id = ANY($4::bigint[]) AND l.warehouse_id = $3 ORDER BY p.id) AS products,
  ARRAY(SELECT ROW({", ".join(BATCH_NAMES)}) FROM stock_batches
        WHERE product_id = ANY($4::bigint[]) AND warehouse_id = $3 AND quantity_remaining > 0
        ORDER BY product_id,
                 CASE WHEN expiry_date IS NOT NULL AND expiry_date < $5 THEN 1 ELSE 0 END, id
       ) AS batches
"""
ORDER_RESERVING = ORDER.replace(
    "RETURNING id",
    "RETURNING id, nextval('journal_entries_id_seq') AS entry_id,"
    " (SELECT array_agg(nextval('order_items_id_seq')) FROM generate_series(1, $11)) AS items,"
    " (SELECT array_agg(nextval('payments_id_seq')) FROM generate_series(1, 2)) AS payments",
)
FINISH_SERVICE = f"""
WITH {LATE_VALUE}), stock AS (
  UPDATE listings SET current_stock = current_stock + s.delta, updated_at = now()
  FROM unnest($24::bigint[], $25::numeric[]) AS s(id, delta)
  WHERE listings.id = s.id AND listings.company_id = $1
    AND listings.current_stock + s.delta >= 0
  RETURNING 1
), batches AS (
  UPDATE stock_batches SET quantity_remaining = quantity_remaining - b.q,
      value_remaining = value_remaining - b.v
  FROM unnest($26::bigint[], $27::numeric[], $28::numeric[]) AS b(id, q, v)
  WHERE stock_batches.id = b.id AND stock_batches.company_id = $1
    AND stock_batches.quantity_remaining >= b.q
  RETURNING 1
), items AS (
  INSERT INTO order_items (id, order_id, company_id, product_id, unit_id, quantity,
      base_quantity, unit_price, discount_rate, tax_id, tax_rate, tax_amount, subtotal, total,
      cost_amount, returned_quantity, promotion_id, promotion_discount, promotion_cost)
  SELECT i, $3, $1, p, u, q, q, up, 0, $29, $30, t, n, g, c, 0, NULL, 0, 0
  FROM unnest($31::bigint[], $32::bigint[], $33::bigint[], $34::numeric[], $35::numeric[],
              $36::numeric[], $37::numeric[], $38::numeric[], $39::numeric[])
       AS x(i, p, u, q, up, t, n, g, c)
), payments AS (
  INSERT INTO payments (id, company_id, warehouse_id, user_id, payment_type, amount,
      unallocated_amount, payment_mode_id, date, reference, notes, order_id, created_by)
  SELECT i, $1, $2, $40, 'in', a, 0, m, $10::date, r, '', $3, $23
  FROM unnest($8::bigint[], $9::numeric[], $41::bigint[], $42::varchar[]) AS x(i, a, m, r)
), entry AS (
  INSERT INTO journal_entries (id, company_id, warehouse_id, entry_date, narration,
      source_type, source_id, created_by)
  SELECT $43, $1, $2, $10::date, replace($22, $21, value), 'sale', $3, $23 FROM late_value
), {MOVEMENTS}), {ALLOCATIONS}), lines AS (
  INSERT INTO journal_lines (entry_id, company_id, warehouse_id, account_id, party_id, debit,
      credit)
  SELECT $43, $1, $2, acc, NULL, d, c
  FROM unnest($11::bigint[], $12::numeric[], $13::numeric[]) AS l(acc, d, c)
), numbered AS (
  UPDATE orders SET invoice_number = replace($14, $21, (SELECT value FROM late_value)),
      journal_entry_id = $43
  WHERE id = $3 AND company_id = $1
), {EVENTS}), {RESPONSE}
SELECT (SELECT value FROM late_value), (SELECT count(*) FROM stock),
       (SELECT count(*) FROM batches)
"""


def money(x: Decimal) -> Decimal:
    return x.quantize(CENT, rounding=ROUND_HALF_UP)


class Context:
    """What a till knows: its key, the catalog, the accounts."""

    def __init__(self, info: dict[str, Any], accounts: dict[str, int], modes: dict[str, int]):
        self.info = info
        self.company_id = info["company_id"]
        self.accounts = accounts
        self.modes = modes
        self.tax_id = info["tax_id"]
        self.tax_rate = Decimal(info["tax_rate"])


async def one_sale(
    conn: asyncpg.Connection,
    ctx: Context,
    wh: dict[str, Any],
    catalog: list[Any],
    rng: random.Random,
    shape: str = "reference",
) -> int:
    company_id, wh_id = ctx.company_id, wh["id"]
    token = uuid.uuid4().hex
    picked = rng.sample(catalog, 3)
    quantities = {pid: Decimal(rng.randint(1, 3)) for pid, _, _ in picked}
    prices = {pid: Decimal(price) for pid, _, price in picked}
    customer_id = rng.choice(ctx.info["customer_ids"])
    today = dt.date.today()
    now = dt.datetime.now(dt.UTC)

    key = await conn.fetchrow(AUTH, wh["public_key"])
    staff_id, staff_name = key["user_id"], key["user_name"]
    async with conn.transaction():
        digest = hashlib.sha256(token.encode()).hexdigest()
        await conn.fetchval(CLAIM, wh_id, token, digest, now, company_id)
        ids = sorted(quantities)
        service = shape == "service"
        if service:
            read = await conn.fetchrow(READS_SERVICE, customer_id, company_id, wh_id, ids, today)
            customer = dict(zip(CUSTOMER_NAMES, read["customer"][0], strict=True))
            products = {r[0]: dict(zip(PRODUCT_NAMES, r, strict=True)) for r in read["products"]}
            batches = [dict(zip(BATCH_NAMES, b, strict=True)) for b in read["batches"]]
        else:
            customer = await conn.fetchrow(CUSTOMER, customer_id, company_id, "customer")
            products = {r["id"]: r for r in await conn.fetch(LOCK_PRODUCTS, wh_id, ids)}
        lines = []
        subtotal = tax = Decimal(0)
        for pid, _, _ in picked:
            net = money(quantities[pid] * prices[pid])
            line_tax = money(net * ctx.tax_rate / 100)
            lines.append((pid, net, line_tax))
            subtotal += net
            tax += line_tax
        total = subtotal + tax
        if service:  # (the service reads the layers before it writes the order)
            order = await conn.fetchrow(
                ORDER_RESERVING, company_id, wh_id, token, None, today, customer_id,
                staff_id, subtotal, tax, total, len(lines),
            )  # fmt: skip
            order_id = order["id"]
        else:
            order_id = await conn.fetchval(
                ORDER, company_id, wh_id, token, f"pending-{uuid.uuid4().hex}", today,
                customer_id, staff_id, subtotal, tax, total,
            )  # fmt: skip
            batches = await conn.fetch(BATCHES, ids, today, wh_id)
        remaining = {b["id"]: [b["quantity_remaining"], b["value_remaining"]] for b in batches}
        movements = []
        costs = {}
        for pid, _, _ in lines:
            left = quantities[pid]
            cost = Decimal(0)
            for b in batches:
                if b["product_id"] != pid or left <= 0:
                    continue
                qty_left, value_left = remaining[b["id"]]
                take = min(left, qty_left)
                c = (
                    value_left
                    if take == qty_left
                    else min(money(take * b["unit_cost"]), value_left)
                )
                remaining[b["id"]] = [qty_left - take, value_left - c]
                movements.append((pid, b["id"], -take, -c))
                left -= take
                cost += c
            costs[pid] = cost
        touched = [bid for bid in remaining if bid in {m[1] for m in movements}]
        if not service:
            await conn.execute(
                LEVELS, [products[p]["listing_id"] for p in quantities],
                [-q for q in quantities.values()], touched,
                [remaining[b][0] for b in touched], [remaining[b][1] for b in touched],
            )  # fmt: skip
        cost_total = sum(costs.values(), Decimal(0))
        pids = [pid for pid, _, _ in lines]
        item_columns = (
            pids, [products[p]["unit_id"] for p in pids], [quantities[p] for p in pids],
            [prices[p] for p in pids], [t for _, _, t in lines], [n for _, n, _ in lines],
            [n + t for _, n, t in lines], [costs[p] for p in pids],
        )  # fmt: skip
        if service:
            item_ids = [{"id": i} for i in order["items"]]
        else:
            item_ids = await conn.fetch(
                ITEMS, order_id, company_id, ctx.tax_id, ctx.tax_rate, *item_columns
            )
        items = [  # the event payload carries about what the service's does
            {
                "id": r["id"], "product_id": pid, "quantity": str(quantities[pid]),
                "unit_price": str(prices[pid]), "tax_rate": str(ctx.tax_rate),
                "tax_amount": str(t), "subtotal": str(n), "total": str(n + t),
                "product": {
                    "id": pid, "name": products[pid]["name"],
                    "item_code": products[pid]["item_code"],
                },
            }
            for r, (pid, n, t) in zip(item_ids, lines, strict=True)
        ]  # fmt: skip
        cash = money(total * Decimal("0.4"))
        card = total - cash
        reference = f"T-{rng.randrange(10**9):09d}"
        if service:
            payment_ids = list(order["payments"])
        else:
            payment_ids = [
                r["id"]
                for r in await conn.fetch(
                    PAYMENTS, company_id, wh_id, customer_id, cash, ctx.modes["cash"], today,
                    order_id, staff_id, card, ctx.modes["card"], reference,
                )
            ]  # fmt: skip
        invoice = f"late-{uuid.uuid4().hex}"  # the number's placeholder
        narration = f"Sale {invoice} to {customer['name']}"
        a = ctx.accounts
        legs = [
            (a["11101"], cash, 0), (a["11105"], card, 0), (a["51100"], cost_total, 0),
            (a["41100"], 0, subtotal), (a["21200"], 0, tax), (a["11700"], 0, cost_total),
        ]  # fmt: skip
        data = {
            "id": order_id, "invoice_number": invoice, "unique_id": token,
            "subtotal": str(subtotal), "tax_amount": str(tax), "total": str(total),
            "user": {"id": customer_id, "name": customer["name"]},
            "staff_member": {"id": staff_id, "name": staff_name},
            "items": items,
            "payments": [{"id": p} for p in payment_ids],
        }  # fmt: skip
        event_ids, kinds, payloads = [], [], []
        for kind in ("order.created", "sales.created", "order.paid"):
            event_id = "evt_" + f"{time.time_ns() // 1_000_000:012x}{os.urandom(10).hex()}"
            event_ids.append(event_id)
            kinds.append(kind)
            payloads.append(json.dumps({"id": event_id, "type": kind, "data": data}))
        response = json.dumps({"status": "success", "order_id": order_id, "invoice": invoice})
        common = (
            company_id, wh_id, order_id,
            [m[0] for m in movements], [m[1] for m in movements], [m[2] for m in movements],
            [m[3] for m in movements],
            payment_ids, [cash, card],
            today, [leg[0] for leg in legs], [Decimal(leg[1]) for leg in legs],
            [Decimal(leg[2]) for leg in legs],
            invoice, now, event_ids, kinds, payloads, response, token, invoice, narration,
            staff_id,
        )  # fmt: skip
        if service:
            taken = {m[1]: (-m[2], -m[3]) for m in movements}
            number, *changed = await conn.fetchrow(
                FINISH_SERVICE, *common,
                [products[p]["listing_id"] for p in quantities], [-q for q in quantities.values()],
                touched, [taken[b][0] for b in touched], [taken[b][1] for b in touched],
                ctx.tax_id, ctx.tax_rate, list(order["items"]), *item_columns,
                customer_id, [ctx.modes["cash"], ctx.modes["card"]], [None, reference],
                order["entry_id"],
            )  # fmt: skip
            assert changed == [len(quantities), len(touched)], changed
        else:
            number = await conn.fetchval(FINISH, *common)
    assert number.startswith("SAL-"), number
    return int(order_id)


async def load_context(conn: asyncpg.Connection, info: dict[str, Any]) -> Context:
    cid = info["company_id"]
    accounts = {
        r["code"]: r["id"]
        for r in await conn.fetch("SELECT code, id FROM accounts WHERE company_id = $1", cid)
    }
    modes = {
        r["code"]: r["id"]
        for r in await conn.fetch("SELECT code, id FROM payment_modes WHERE company_id = $1", cid)
    }
    return Context(info, accounts, modes)


Op = Callable[[asyncpg.Connection, int, random.Random], Awaitable[Any]]


async def drive(
    url: str,
    op: Op,
    *,
    clients: int,
    duration: float,
    warmup: float,
    per: str,
    generic_plans: bool = False,
) -> dict[str, Any]:
    """``clients`` connections, each running ``op(connection, client, rng)`` back to
    back until time is up (after ``warmup`` seconds unmeasured): the latencies and
    the CPU that PostgreSQL's backends, this process and the machine spent.
    ``generic_plans``: the connections plan each prepared statement once, as the
    service's do (``tillbook.db.GENERIC_PLANS``)."""
    dsn = pg_dsn(url)
    # lock_timeout as the service sets it: once per connection, not per transaction
    settings = {"lock_timeout": "5000"}
    if generic_plans:
        settings["plan_cache_mode"] = "force_generic_plan"
    conns = [await asyncpg.connect(dsn, server_settings=settings) for _ in range(clients)]
    latencies: list[float] = []
    errors: dict[str, int] = {}

    async def loop(i: int, until: float, record: bool) -> None:
        rng = random.Random(f"floor-{i}-{record}")
        conn = conns[i]
        while time.perf_counter() < until:
            t0 = time.perf_counter()
            try:
                await op(conn, i, rng)
            except asyncpg.PostgresError as exc:
                errors[type(exc).__name__] = errors.get(type(exc).__name__, 0) + 1
                continue
            if record:
                latencies.append(time.perf_counter() - t0)

    try:
        if warmup:
            until = time.perf_counter() + warmup
            await asyncio.gather(*(loop(i, until, False) for i in range(clients)))
        pids = [c.get_server_pid() for c in conns]
        pg_before = sum(proc_cpu(p) for p in pids)
        client_before = time.process_time()
        machine_before = machine_cpu()
        start = time.perf_counter()
        until = start + duration
        await asyncio.gather(*(loop(i, until, True) for i in range(clients)))
        elapsed = time.perf_counter() - start
        client_cpu = time.process_time() - client_before
        pg_cpu = sum(proc_cpu(p) for p in pids) - pg_before
        machine = machine_share(machine_before, len(latencies))
    finally:
        for c in conns:
            await c.close()
    lat = sorted(latencies)
    n = len(lat)

    def pct(p: float) -> float | None:
        return round(lat[min(n - 1, int(p * n))] * 1000, 2) if lat else None

    return {
        "ok": n,
        "errors": errors,
        "seconds": round(elapsed, 2),
        "per_second": round(n / elapsed, 1) if elapsed else 0.0,
        "p50_ms": pct(0.5),
        "p95_ms": pct(0.95),
        "p99_ms": pct(0.99),
        "mean_ms": round(statistics.fmean(lat) * 1000, 2) if lat else None,
        "max_ms": round(lat[-1] * 1000, 2) if lat else None,
        f"statements_per_{per}": STATEMENTS_PER_SALE if per == "sale" else None,
        "postgres_cpu_s": round(pg_cpu, 2),
        "client_cpu_s": round(client_cpu, 2),
        "postgres_cpu_ms_per_ok": round(1000 * pg_cpu / max(n, 1), 2),
        "client_cpu_ms_per_ok": round(1000 * client_cpu / max(n, 1), 2),
        **machine,
    }


async def run_floor(
    url: str,
    info: dict[str, Any],
    *,
    clients: int,
    duration: float,
    warmup: float = 2,
    shape: str = "reference",
    generic_plans: bool = False,
) -> dict[str, Any]:
    """``clients`` connections, each running sales back to back until time is up, in
    the reference shape (10 statements) or the service's (5, ``READS_SERVICE``, ``FINISH_SERVICE``),
    with PostgreSQL's default planning or ``generic_plans`` (``drive``)."""
    conn = await asyncpg.connect(pg_dsn(url))
    try:
        ctx = await load_context(conn, info)
    finally:
        await conn.close()
    warehouses = info["warehouses"]

    async def sale(conn: asyncpg.Connection, i: int, rng: random.Random) -> None:
        wh = warehouses[i % len(warehouses)]
        await one_sale(conn, ctx, wh, info["products"][wh["id"]], rng, shape)

    return await drive(
        url,
        sale,
        clients=clients,
        duration=duration,
        warmup=warmup,
        per="sale",
        generic_plans=generic_plans,
    )


# The reads' floors (issue 27): what a read by id or a page of the products' feed
# costs without HTTP, the key, the router or the pool: the service's own prebuilt
# statements and answer building (``tillbook.db.driver_reads``), each answer encoded
# in the envelope, over bare asyncpg connections. The API's read ÷ its floor is the
# share of the read the service keeps; /health, the first yardstick, does
# no database work, so a read's share of it is capped by what PostgreSQL alone
# spends on the read (bench/README.md).
READ_FLOORS = ("product", "sale", "feed")


async def run_read_floor(
    url: str,
    info: dict[str, Any],
    what: str,
    sale_ids: list[list[int]],
    *,
    clients: int,
    duration: float,
    warmup: float = 2,
    feed_page: int = 100,
    generic_plans: bool = False,
) -> dict[str, Any]:
    """``what`` (of ``READ_FLOORS``) read back to back by ``clients`` connections,
    half on each warehouse, as ``run.Workload`` reads through the API."""
    from types import SimpleNamespace

    from tillbook.api import envelope
    from tillbook.api.conditional import feed_walk
    from tillbook.catalog import changes
    from tillbook.catalog import queries as catalog
    from tillbook.db import driver_reads
    from tillbook.kit.jsonio import dumps
    from tillbook.kit.refs import ref_to_id
    from tillbook.orders import queries as orders

    warehouses = info["warehouses"]
    company = info["company_id"]
    keys = [SimpleNamespace(company_id=company, warehouse_id=w["id"]) for w in warehouses]
    cursors: dict[int, str | None] = {}

    async def read(conn: asyncpg.Connection, i: int, rng: random.Random) -> None:
        wi = i % len(warehouses)
        key, reads = keys[wi], driver_reads(conn)
        if what == "product":
            _, xid, _ = rng.choice(info["products"][warehouses[wi]["id"]])
            answer: Any = await catalog.product(reads, key, ref_to_id(xid))  # type: ignore[arg-type]
        elif what == "sale":
            ref = str(rng.choice(sale_ids[wi]))
            answer = await orders.order_detail(reads, key, "sales", ref)  # type: ignore[arg-type]
        else:
            cursor = cursors.get(i)
            since = "1970-01-01T00:00:00Z" if cursor is None else None
            walk = feed_walk(key, "products", since, cursor, str(feed_page))  # type: ignore[arg-type]
            assert walk is not None
            answer = await changes.products(reads, key, walk)  # type: ignore[arg-type]
            cursors[i] = answer["next_cursor"]
        dumps(envelope.ok(answer))

    return await drive(
        url,
        read,
        clients=clients,
        duration=duration,
        warmup=warmup,
        per=what,
        generic_plans=generic_plans,
    )


async def capture(url: str, info: dict[str, Any]) -> list[str]:
    """The statements one POST /sales issues, from the running code (in-process app)."""
    import httpx
    from run import Workload
    from sqlalchemy import event

    from tillbook import unit
    from tillbook.app import create_app
    from tillbook.config import Settings
    from tillbook.db import Database

    db = Database(url)
    seen: list[str] = []

    @event.listens_for(db.engine.sync_engine, "before_cursor_execute")
    def _record(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        seen.append(" ".join(statement.split()))

    unit.statement_observers.append(lambda statement: seen.append(" ".join(statement.split())))

    app = create_app(Settings(database_url=url), database=db)
    work = Workload(info)
    rng = random.Random(7)
    try:
        async with (
            app.router.lifespan_context(app),
            httpx.AsyncClient(
                transport=httpx.ASGITransport(app=app),
                base_url="http://bench/api/v1/public",
                headers=work.keys[0],
            ) as client,
        ):
            await work.post_sale(client, 0, rng)  # first sale: counters, caches
            seen.clear()
            status, _ = await work.post_sale(client, 0, rng)
            assert status == 200, status
    finally:
        await db.dispose()
    return seen


def _main() -> None:
    """``--capture``: seed a small throwaway database and print one sale's statements."""
    import argparse
    import base64
    import os

    parser = argparse.ArgumentParser(description="the raw-SQL floor of POST /sales")
    parser.add_argument(
        "--database-url", default="postgresql://postgres@127.0.0.1:5432/tillbook_bench_floor"
    )
    parser.add_argument("--capture", action="store_true", help="print one sale's statements")
    parser.add_argument("--full", action="store_true", help="with --capture: whole statements")
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--duration", type=float, default=10)
    parser.add_argument("--shape", choices=SHAPES, default="reference")
    args = parser.parse_args()
    os.environ.setdefault("TILLBOOK_MASTER_KEY", base64.urlsafe_b64encode(os.urandom(32)).decode())

    from run import fresh_database
    from seed import seed

    from tillbook.migrate import upgrade

    async def go() -> None:
        await fresh_database(args.database_url, force=False)
        await asyncio.to_thread(upgrade, args.database_url)
        info = await seed(args.database_url, products=10_000)
        if args.capture:
            statements = await capture(args.database_url, info)
            for i, s in enumerate(statements, 1):
                print(f"{i:>3}  {s if args.full else s[:160]}")
            print(f"{len(statements)} statements (plus BEGIN/COMMIT of the read and the write)")
        else:
            result = await run_floor(
                args.database_url,
                info,
                clients=args.clients,
                duration=args.duration,
                shape=args.shape,
            )
            print(json.dumps(result, indent=2))

    asyncio.run(go())


if __name__ == "__main__":
    _main()
