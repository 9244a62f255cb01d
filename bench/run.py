"""The benchmark: tillbook on PostgreSQL under concurrent clients, next to its raw-SQL floor.

    python bench/run.py --workers 2 --clients 16 --duration 30 [--history 1000000] \
        [--database-url postgresql://postgres@127.0.0.1:5432/tillbook_bench] [--json out.json]
    python bench/run.py --companies 1000 --phases sales,tenants  # many tenants (issue 28)

Drops and recreates the database named in ``--database-url`` (its name must contain
``bench``), migrates it, seeds 10,000 products in each of 2 warehouses (and
``--history`` past sales), starts ``tillbook serve --workers N --no-worker`` on a
free loopback port, and runs one phase after another, each ``--duration`` seconds
with ``--clients`` concurrent clients (asyncio and the lean HTTP/1.1 client of
``loadclient.py``, one keep-alive connection each):

    sales       POST /sales: 3 lines, split tender cash + card, random products
    hot         POST /sales as above, every client on warehouse 0, every sale holding
                the same 3 products (topped up by 60,000 units each first)
    search      GET /products?search=TERM
    product     GET /products/{id}
    sale_get    GET /sales/{id}
    payments    POST /payments: in, allocated to one of the client's credit sales
    tenants     POST /sales as ``sales``, each sale in a company and branch chosen at
                random among ``--companies`` (issue 28: many tenants), with that
                branch's key, products and customers
    reads       four phases back to back, the yardstick first: GET /health (no key,
                no database), GET /products/{id}, GET /sales/{id}, and a page of 100
                of the products' change feed (a till's first sync, cursor after
                cursor); each read's ok/s is reported as a share of /health's in
                the same run (issue 27: at least a quarter)

with VACUUM ANALYZE between phases (autovacuum is off on the development
machines' PostgreSQL); then stops the server and runs the floor (``bench/floor.py``):
the statements of one sale straight through asyncpg by the same number of clients.
For every phase it also reads the CPU time the server, its PostgreSQL backends and
the clients spent per request, and samples what the database sessions wait on.
Prints a table, the ratio API ÷ floor and the targets of issue 6, and writes
everything as JSON. Loopback only; every phase is bounded by its duration.
``--companies N`` seeds N - 1 more companies of two branches each
(``--tenant-products`` per branch, ``seed.seed_tenants``) for the ``tenants``
phase, whose sales go to a branch of any company at random, beside the main
company's ``sales``. ``--reuse`` runs again on a database an earlier run seeded.
``--pgbouncer`` puts Debian's PgBouncer (transaction pooling, started here as in the tests,
``tests/servers.py``) between the server and PostgreSQL, and reports its CPU per
request too; the seeding, the meters and the floor stay direct. See bench/README.md.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import datetime as dt
import json
import os
import platform
import random
import signal
import socket
import statistics
import subprocess
import sys
import time
import uuid
from collections import Counter
from collections.abc import Awaitable, Callable
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

DEFAULT_URL = "postgresql://postgres@127.0.0.1:5432/tillbook_bench"
STATE = Path(os.environ.get("TMPDIR", "/tmp")) / "tillbook-bench"  # server log, --reuse state
PHASES = ("sales", "hot", "search", "product", "sale_get", "payments", "reads")
# ``tenants`` runs only when asked for (it needs ``--companies`` > 1).
OPTIONAL_PHASES = ("tenants",)
# The ``reads`` phase: what a read costs beside a request that costs nothing. Each
# runs ``--duration`` seconds; /health (no key, no database, a constant answer)
# first, as the yardstick the others are divided by.
READS = ("reads_health", "reads_product", "reads_sale", "reads_feed")
READS_TARGET = 0.25  # issue 27: a read by id and a feed page ≥ 1/4 of /health
# The reads measured against their own floors too (``floor.run_read_floor``).
READ_FLOOR_OF = {"reads_product": "product", "reads_sale": "sale", "reads_feed": "feed",
                 "product": "product", "sale_get": "sale"}  # fmt: skip
FEED_PAGE = 100
# The hot-item phase: every sale of one warehouse holds the same products, as a
# carrier bag or milk sits in most baskets of a shop, or every buyer of a web-store
# sale hits one item. Topped up before the phase so that it never runs out, which
# also leaves several FIFO layers for the sales to cross.
HOT_PRODUCTS = 3
HOT_TOP_UP = 60_000
# What a till types or scans: name words, brands, SKU prefixes, whole barcodes.
SEARCH_TERMS = (
    "juice", "cola", "coffee", "milk", "cheddar", "rice", "olive oil", "chips", "honey",
    "tea", "bulb", "screws", "organic", "premium", "sunny valley", "brewhouse", "SKU-10042",
    "SKU-2001", "2001000004217", "2002000000815", "spaghetti", "butter", "granola",
    "shampoo", "tape",
)  # fmt: skip
CENT = Decimal("0.01")


def money(x: Decimal) -> Decimal:
    return x.quantize(CENT, rounding=ROUND_HALF_UP)


# ------------------------------------------------------------------ the database


async def fresh_database(url: str, *, force: bool) -> None:
    import asyncpg
    from seed import pg_dsn
    from sqlalchemy.engine import make_url

    parsed = make_url(url)
    name = parsed.database or ""
    if "bench" not in name and not force:
        raise SystemExit(f"refusing to drop database {name!r}: its name must contain 'bench'")
    admin = await asyncpg.connect(pg_dsn(parsed.set(database="postgres").render_as_string(False)))
    try:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.execute(f'CREATE DATABASE "{name}"')
    finally:
        await admin.close()


async def database_facts(url: str) -> dict[str, Any]:
    import asyncpg
    from seed import pg_dsn

    conn = await asyncpg.connect(pg_dsn(url))
    try:
        return {
            "postgresql": await conn.fetchval("SHOW server_version"),
            "shared_buffers": await conn.fetchval("SHOW shared_buffers"),
            "synchronous_commit": await conn.fetchval("SHOW synchronous_commit"),
            "database_size": await conn.fetchval(
                "SELECT pg_size_pretty(pg_database_size(current_database()))"
            ),
            "orders": await conn.fetchval("SELECT count(*) FROM orders"),
        }
    finally:
        await conn.close()


async def maintain(url: str) -> float:
    """VACUUM ANALYZE between phases (not timed), as autovacuum would do in the
    background: this machine's PostgreSQL runs with autovacuum off, and with the
    statistics of a database that was empty when seeded, the planner keeps
    choosing plans for empty tables while they fill."""
    import asyncpg
    from seed import pg_dsn

    t0 = time.perf_counter()
    conn = await asyncpg.connect(pg_dsn(url))
    try:
        await conn.execute("VACUUM ANALYZE")
    finally:
        await conn.close()
    return time.perf_counter() - t0


def machine_facts() -> dict[str, Any]:
    model = ""
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    return {
        "nproc": os.cpu_count(),
        "cpu": model,
        "python": platform.python_version(),
        "loadavg_before": os.getloadavg(),
    }


def _seed_file(url: str) -> Path:
    from sqlalchemy.engine import make_url

    return STATE / f"seed-{make_url(url).database}.json"


def save_seed(url: str, args: argparse.Namespace, info: dict[str, Any]) -> None:
    """What ``--reuse`` needs to run again on this database without seeding it again."""
    STATE.mkdir(parents=True, exist_ok=True)
    state = {
        "master_key": os.environ["TILLBOOK_MASTER_KEY"],
        "products": args.products,
        "history": args.history,
        "companies": args.companies,
        "tenant_products": args.tenant_products,
        "info": info,
    }
    _seed_file(url).write_text(json.dumps(state, default=str))


def load_seed(url: str, args: argparse.Namespace) -> dict[str, Any] | None:
    try:
        state = json.loads(_seed_file(url).read_text())
    except (OSError, ValueError):
        return None
    # (the tenants' catalogs matter only when there are tenants)
    companies = getattr(args, "companies", 1)
    seeded = (state["products"], state["history"], state.get("companies", 1),
              state.get("tenant_products") if companies > 1 else None)  # fmt: skip
    wanted = (args.products, args.history, companies,
              getattr(args, "tenant_products", None) if companies > 1 else None)  # fmt: skip
    if seeded != wanted:
        return None
    os.environ["TILLBOOK_MASTER_KEY"] = state["master_key"]
    info: dict[str, Any] = state["info"]
    info["products"] = {int(k): [tuple(p) for p in v] for k, v in info["products"].items()}
    for tenant in info.get("tenants", []):
        tenant["products"] = {int(k): [tuple(p) for p in v] for k, v in tenant["products"].items()}
    return info


# ------------------------------------------------------------------ the server


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def tillbook_command() -> list[str]:
    exe = Path(sys.executable).parent / "tillbook"
    if exe.exists():
        return [str(exe)]
    return [sys.executable, "-c", "from tillbook.cli import main; main()"]


class Server:
    def __init__(self, url: str, master_key: str, workers: int, pool_size: int | None):
        self.port = free_port()
        env = dict(os.environ)
        env.update(
            TILLBOOK_DATABASE_URL=url,
            TILLBOOK_MASTER_KEY=master_key,
            TILLBOOK_LOG_LEVEL="warning",
        )
        if pool_size:
            env["TILLBOOK_DB_POOL_SIZE"] = str(pool_size)
        cmd = [
            *tillbook_command(),
            "serve",
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--workers",
            str(workers),
            "--no-worker",
        ]
        STATE.mkdir(parents=True, exist_ok=True)
        self.log = open(STATE / "server.log", "w")  # noqa: SIM115
        self.proc = subprocess.Popen(
            cmd, env=env, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True
        )
        self.root = f"http://127.0.0.1:{self.port}"
        self.base = f"{self.root}/api/v1/public"

    async def wait_ready(self, headers: dict[str, str], timeout: float = 60) -> None:
        from loadclient import Client, TransportError

        deadline = time.monotonic() + timeout
        async with Client(self.base, headers) as client:
            while time.monotonic() < deadline:
                if self.proc.poll() is not None:
                    raise SystemExit(
                        f"server exited with {self.proc.returncode}; see {STATE}/server.log"
                    )
                with contextlib.suppress(TransportError):
                    r = await client.get("/warehouses")
                    if r.status_code == 200:
                        return
                await asyncio.sleep(0.2)
        raise SystemExit(f"server did not answer within {timeout:.0f} s; see {STATE}/server.log")

    def worker_pids(self) -> list[int]:
        out = subprocess.run(
            ["ps", "-o", "pid=", "--ppid", str(self.proc.pid)], capture_output=True, text=True
        ).stdout.split()
        return [int(p) for p in out] or [self.proc.pid]

    def all_pids(self) -> list[int]:
        return sorted({self.proc.pid, *self.worker_pids()})

    def stop(self) -> None:
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)
        self.log.close()


# ------------------------------------------------------------------ CPU accounting


def pooler_seconds(bouncer: Any) -> float:
    """CPU seconds the benchmark's pgbouncer has spent so far (0 without one)."""
    from floor import proc_cpu

    if bouncer is None or bouncer.process is None:
        return 0.0
    return proc_cpu(bouncer.process.pid)


async def backend_pids(url: str) -> list[int]:
    """PostgreSQL backends serving the service's pool (not autovacuum, not the sampler)."""
    import asyncpg
    from seed import pg_dsn

    conn = await asyncpg.connect(pg_dsn(url))
    try:
        rows = await conn.fetch(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
            "AND pid <> pg_backend_pid() AND backend_type = 'client backend' "
            "AND application_name <> 'bench-sampler'"
        )
        return [r["pid"] for r in rows]
    finally:
        await conn.close()


class CpuMeter:
    """CPU seconds spent during a phase by the server processes, the PostgreSQL
    backends of the bench database, and this process (the clients). Unlike
    throughput, these hardly depend on what else the machine is doing."""

    def __init__(self, url: str, server_pids: list[int]):
        self.url = url
        self.server_pids = server_pids

    async def start(self) -> None:
        from floor import machine_cpu, proc_cpu

        self.per_server = {p: proc_cpu(p) for p in self.server_pids}
        self.t_server = sum(self.per_server.values())
        self.pg_before = {p: proc_cpu(p) for p in await backend_pids(self.url)}
        self.t_client = time.process_time()
        self.machine = machine_cpu()

    async def stop(self, done: int) -> dict[str, Any]:
        from floor import machine_share, proc_cpu

        machine = machine_share(self.machine, done)
        split = [round(proc_cpu(p) - before, 2) for p, before in self.per_server.items()]
        server = sum(split)
        client = time.process_time() - self.t_client
        pg = sum(proc_cpu(p) - self.pg_before.get(p, 0.0) for p in await backend_pids(self.url))
        per = max(done, 1)
        return {
            "server_cpu_s": round(server, 2),
            # per process (the uvicorn supervisor first): how evenly the workers shared
            # the clients' connections
            "server_cpu_s_per_process": split,
            "postgres_cpu_s": round(pg, 2),
            "client_cpu_s": round(client, 2),
            "server_cpu_ms_per_ok": round(1000 * server / per, 2),
            "postgres_cpu_ms_per_ok": round(1000 * pg / per, 2),
            "client_cpu_ms_per_ok": round(1000 * client / per, 2),
            **machine,
        }


class WaitSampler:
    """What the bench database's sessions are doing, sampled every 50 ms during a
    phase: running a statement, idle in a transaction (waiting for the service's
    Python), or waiting on a lock (and which kind)."""

    def __init__(self, url: str):
        self.url = url
        self.counts: Counter[str] = Counter()
        self.samples = 0
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def _run(self) -> None:
        import asyncpg
        from seed import pg_dsn

        conn = await asyncpg.connect(
            pg_dsn(self.url), server_settings={"application_name": "bench-sampler"}
        )
        try:
            while not self._stop.is_set():
                rows = await conn.fetch(
                    "SELECT state, wait_event_type, wait_event FROM pg_stat_activity "
                    "WHERE datname = current_database() AND pid <> pg_backend_pid() "
                    "AND state <> 'idle'"
                )
                self.samples += 1
                for r in rows:
                    if r["wait_event_type"] in ("Lock", "LWLock", "IO", "IPC"):
                        label = f"{r['state']}: {r['wait_event_type']}/{r['wait_event']}"
                    else:
                        label = r["state"]
                    self.counts[label] += 1
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._stop.wait(), 0.05)
        finally:
            await conn.close()

    def start(self) -> None:
        self._task = asyncio.create_task(self._run())

    async def stop(self) -> dict[str, float]:
        self._stop.set()
        if self._task is not None:
            await self._task
        n = max(self.samples, 1)
        return {k: round(v / n, 2) for k, v in self.counts.most_common()}


# ------------------------------------------------------------------ measuring


class Recorder:
    def __init__(self) -> None:
        self.latencies: list[float] = []
        self.statuses: Counter[str] = Counter()
        self.started = 0.0
        self.elapsed = 0.0

    def summary(self) -> dict[str, Any]:
        lat = sorted(self.latencies)
        ok = len(lat)

        def pct(p: float) -> float | None:
            if not lat:
                return None
            return round(lat[min(ok - 1, int(p * ok))] * 1000, 2)

        return {
            "ok": ok,
            "statuses": dict(self.statuses),
            "seconds": round(self.elapsed, 2),
            "per_second": round(ok / self.elapsed, 1) if self.elapsed else 0.0,
            "p50_ms": pct(0.50),
            "p95_ms": pct(0.95),
            "p99_ms": pct(0.99),
            "mean_ms": round(statistics.fmean(lat) * 1000, 2) if lat else None,
            "max_ms": round(lat[-1] * 1000, 2) if lat else None,
        }


Request = Callable[[Any, int, random.Random], Awaitable[tuple[int, Any]]]


CONNECT_GAP_S = 0.03


async def run_phase(
    name: str,
    base: str,
    keys: list[dict[str, str]],
    clients: int,
    duration: float,
    request: Request,
    started: Callable[[], Awaitable[None]] | None = None,
    opener: str = "/warehouses",
) -> Recorder:
    """``clients`` loops, each with its own keep-alive connection, calling ``request``
    until time is up. Only 200s count as done; other statuses are tallied.

    The clients connect one after another, ``CONNECT_GAP_S`` apart, each starting
    its requests as soon as it is connected, as tills come online during a working
    day; the clock starts when the last one has connected (``started`` runs then),
    and only requests sent after that count. uvicorn's workers share one listening
    socket and whichever wakes first accepts: connections that arrive while the
    service is idle land on the workers by the scheduler's chance (measured: 5 : 11
    and 6 : 10 splits of 16, the busier worker then capping the run while the
    machine sat idle), while a connection that arrives under load goes to the
    worker that is waiting, the less busy one. ``server_cpu_s_per_process`` in the
    JSON shows the split of every phase. ``opener`` is the request that opens each
    connection (under ``base``), not measured."""
    from loadclient import Client, TransportError

    rec = Recorder()
    connected = 0
    start = float("inf")
    deadline = float("inf")
    all_connected = asyncio.Event()

    async def loop(i: int) -> None:
        nonlocal connected, start, deadline
        rng = random.Random(f"{name}-{i}")
        key = keys[i % len(keys)]
        async with Client(base, key, timeout=60) as client:
            await asyncio.sleep(i * CONNECT_GAP_S)
            with contextlib.suppress(TransportError):
                await client.get(opener)  # opens the connection; not measured
            connected += 1
            if connected == clients:
                if started is not None:
                    await started()
                start = rec.started = time.perf_counter()
                deadline = start + duration
                all_connected.set()
            while True:
                t0 = time.perf_counter()
                if t0 >= deadline:
                    break
                try:
                    status, _ = await request(client, i, rng)
                except TransportError as exc:
                    if t0 >= start:
                        rec.statuses[type(exc).__name__] += 1
                    continue
                took = time.perf_counter() - t0
                if t0 < start:
                    continue  # before the last client connected: warm-up
                rec.statuses[str(status)] += 1
                if status == 200:
                    rec.latencies.append(took)
            await all_connected.wait()

    await asyncio.gather(*(loop(i) for i in range(clients)))
    rec.elapsed = time.perf_counter() - rec.started
    return rec


class Workload:
    """Request bodies built from the seeded catalog."""

    def __init__(self, info: dict[str, Any]):
        self.info = info
        self.warehouses = info["warehouses"]
        self.keys = [
            {"X-Service-Public-Key": w["public_key"], "X-Service-Secret-Key": w["secret_key"]}
            for w in self.warehouses
        ]
        self.products = [info["products"][w["id"]] for w in self.warehouses]
        self.tax_rate = Decimal(info["tax_rate"])
        self.customers = info["customer_ids"]
        self.sale_ids: list[list[int]] = [[] for _ in self.warehouses]
        self.credit: dict[int, tuple[int, int]] = {}  # client -> (order id, customer id)
        self.feed_cursor: dict[int, str | None] = {}  # client -> where its walk is
        self.today = dt.date.today().isoformat()
        # Every branch of every company (``--companies``): the main company's, then
        # the tenants', each with what a sale there needs.
        self.branches: list[dict[str, Any]] = [
            {
                "headers": self.keys[wi],
                "products": self.products[wi],
                "customers": self.customers,
                "tax_id": info["tax_id"],
            }
            for wi in range(len(self.warehouses))
        ] + [
            {
                "headers": {
                    "X-Service-Public-Key": w["public_key"],
                    "X-Service-Secret-Key": w["secret_key"],
                },
                "products": tenant["products"][w["id"]],
                "customers": tenant["customer_ids"],
                "tax_id": tenant["tax_id"],
            }
            for tenant in info.get("tenants", [])
            for w in tenant["warehouses"]
        ]

    def wi(self, client: int) -> int:
        return client % len(self.warehouses)

    def sale_body(
        self,
        client: int,
        rng: random.Random,
        *,
        paid: bool = True,
        qty: int = 0,
        hot: bool = False,
        branch: dict[str, Any] | None = None,
    ):
        catalog = self.products[0 if hot else self.wi(client)]
        tax_id, customers = self.info["tax_id"], self.customers
        if branch is not None:
            catalog, tax_id, customers = branch["products"], branch["tax_id"], branch["customers"]
        lines = []
        subtotal = tax = Decimal(0)
        chosen = catalog[:HOT_PRODUCTS] if hot else rng.sample(catalog, 3)
        for _, xid, price in chosen:
            q = qty or rng.randint(1, 3)
            net = money(q * Decimal(price))
            line_tax = money(net * self.tax_rate / 100)
            subtotal += net
            tax += line_tax
            lines.append(
                {
                    "xid": xid,
                    "quantity": q,
                    "unit_price": float(price),
                    "tax_id": tax_id,
                }
            )
        total = subtotal + tax
        body: dict[str, Any] = {
            "user_id": rng.choice(customers),
            "order_date": self.today,
            "product_items": lines,
            "subtotal": float(subtotal),
            "tax_amount": float(tax),
            "total": float(total),
            "unique_id": uuid.uuid4().hex,
        }
        if paid:
            cash = money(total * Decimal("0.4"))
            body["all_payments"] = [
                {"amount": float(cash), "payment_mode_id": "cash"},
                {
                    "amount": float(total - cash),
                    "payment_mode_id": "card",
                    "reference": f"T-{rng.randrange(10**9):09d}",
                },
            ]
        return body

    async def post_sale(self, client: Any, i: int, rng: random.Random) -> tuple[int, Any]:
        r = await client.post("/sales", json=self.sale_body(i, rng))
        if r.status_code == 200:
            self.sale_ids[self.wi(i)].append(r.json()["order_id"])
        return r.status_code, None

    async def post_tenant_sale(self, client: Any, i: int, rng: random.Random) -> tuple[int, Any]:
        """A sale in a branch chosen at random among every company's (the phase's
        clients connect with no key; each request names its branch's)."""
        branch = rng.choice(self.branches)
        body = self.sale_body(i, rng, branch=branch)
        r = await client.post("/sales", json=body, headers=branch["headers"])
        return r.status_code, None

    async def post_hot_sale(self, client: Any, i: int, rng: random.Random) -> tuple[int, Any]:
        """A sale in warehouse 0 holding its first ``HOT_PRODUCTS`` products (the
        phase runs every client on warehouse 0's key)."""
        r = await client.post("/sales", json=self.sale_body(i, rng, hot=True))
        if r.status_code == 200:
            self.sale_ids[0].append(r.json()["order_id"])
        return r.status_code, None

    async def top_up_hot(self, base: str) -> None:
        """Stock for the hot phase: an addition of ``HOT_TOP_UP`` units of each hot
        product (a new FIFO layer behind the seeded ones)."""
        from loadclient import Client

        async with Client(base, self.keys[0], timeout=60) as client:
            for _, xid, _price in self.products[0][:HOT_PRODUCTS]:
                r = await client.post(
                    "/stock-adjustments",
                    json={
                        "product_id": xid,
                        "quantity": HOT_TOP_UP,
                        "adjustment_type": "add",
                        "notes": "bench: hot-item stock",
                        "unique_id": uuid.uuid4().hex,
                    },
                )
                if r.status_code != 200:
                    raise RuntimeError(f"hot-item top-up failed: {r.status_code} {r.text}")

    async def search(self, client: Any, i: int, rng: random.Random) -> tuple[int, Any]:
        r = await client.get("/products", params={"search": rng.choice(SEARCH_TERMS)})
        return r.status_code, None

    async def product(self, client: Any, i: int, rng: random.Random) -> tuple[int, Any]:
        _, xid, _ = rng.choice(self.products[self.wi(i)])
        r = await client.get(f"/products/{xid}")
        return r.status_code, None

    async def health(self, client: Any, i: int, rng: random.Random) -> tuple[int, Any]:
        """The yardstick: ``client`` is on the server's root (``Server.root``)."""
        r = await client.get("/health")
        return r.status_code, None

    async def feed(self, client: Any, i: int, rng: random.Random) -> tuple[int, Any]:
        """One page of ``FEED_PAGE`` products of the change feed, as a till's first
        sync walks it: from the epoch, then cursor after cursor; at the end (the
        warehouse's 10,000 products are 100 pages) the walk starts again."""
        cursor = self.feed_cursor.get(i)
        if cursor is None:
            params = {"updated_since": "1970-01-01T00:00:00Z", "limit": FEED_PAGE}
        else:
            params = {"cursor": cursor, "limit": FEED_PAGE}
        r = await client.get("/products", params=params)
        if r.status_code == 200:
            page = r.json()["data"]
            if len(page["data"]) != FEED_PAGE and page["next_cursor"] is not None:
                raise RuntimeError(f"feed page of {len(page['data'])} products, not {FEED_PAGE}")
            self.feed_cursor[i] = page["next_cursor"]
        return r.status_code, None

    def some_sale_id(self, i: int, rng: random.Random) -> int:
        """A sale of the client's warehouse: one made in this run, or (half the time,
        when there is history) a past one, as when a receipt is reprinted."""
        k, wi = len(self.warehouses), self.wi(i)
        history = self.info["history"]
        if history >= k and (not self.sale_ids[wi] or rng.random() < 0.5):
            n = rng.randrange(1, history // k) * k + wi
            return int(self.info["history_first_order_id"]) + n - 1
        return rng.choice(self.sale_ids[wi])

    async def sale_get(self, client: Any, i: int, rng: random.Random) -> tuple[int, Any]:
        r = await client.get(f"/sales/{self.some_sale_id(i, rng)}")
        return r.status_code, None

    async def ensure_sales(self, base: str) -> None:
        """Sales to read back when the sales phase did not run."""
        if all(self.sale_ids) or self.info["history"] >= len(self.warehouses):
            return
        from loadclient import Client

        for i, key in enumerate(self.keys):
            async with Client(base, key, timeout=60) as client:
                rng = random.Random(f"ensure-{i}")
                for _ in range(20):
                    await self.post_sale(client, i, rng)

    async def new_credit_sale(self, client: Any, i: int, rng: random.Random) -> None:
        """A credit sale for this client's own customer (clients never share a row)."""
        customer = self.customers[i % len(self.customers)]
        for _ in range(5):
            body = self.sale_body(i, rng, paid=False, qty=20)
            body["user_id"] = customer
            r = await client.post("/sales", json=body)
            if r.status_code == 200:
                self.credit[i] = (r.json()["order_id"], customer)
                return
            await asyncio.sleep(0.2)
        r.raise_for_status()

    async def payment(self, client: Any, i: int, rng: random.Random) -> tuple[int, Any]:
        if i not in self.credit:
            await self.new_credit_sale(client, i, rng)
        order_id, customer = self.credit[i]
        body = {
            "user_id": customer,
            "payment_type": "in",
            "amount": 0.05,
            "payment_mode_id": "cash",
            "date": self.today,
            "invoices": [{"order_id": order_id, "amount": 0.05}],
            "unique_id": uuid.uuid4().hex,
        }
        r = await client.post("/payments", json=body)
        if r.status_code == 422 and "exceeds the due amount" in r.text:
            del self.credit[i]  # paid off: the next call opens another credit sale
        return r.status_code, None

    async def setup_payments(self, base: str, clients: int) -> None:
        from loadclient import Client

        async def one(i: int) -> None:
            async with Client(base, self.keys[i % len(self.keys)], timeout=60) as client:
                await self.new_credit_sale(client, i, random.Random(f"credit-{i}"))

        await asyncio.gather(*(one(i) for i in range(clients)))


# ------------------------------------------------------------------ profiling


def start_profiler(server: Server, duration: float, out: Path) -> subprocess.Popen[bytes] | None:
    pyspy = Path(sys.executable).parent / "py-spy"
    if not pyspy.exists():
        print("py-spy not found next to this python; no profile", file=sys.stderr)
        return None
    pids = server.worker_pids()
    cmd = [str(pyspy), "record", "--pid", str(server.proc.pid), "--subprocesses",
           "--duration", str(int(duration)), "--rate", "200", "--nonblocking",
           "--output", str(out)]  # fmt: skip
    if out.suffix == ".txt":
        cmd += ["--format", "raw"]
    print(f"  profiling pids {pids} -> {out}")
    return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


# ------------------------------------------------------------------ report


def print_table(results: dict[str, Any]) -> None:
    print()
    head = ("phase", "ok/s", "p50 ms", "p95 ms", "p99 ms", "max ms", "ok")
    print(
        f"{head[0]:<10} " + " ".join(f"{h:>8}" for h in head[1:])
        + f" {'cpu ms per request: server':>27} {'pg':>6} {'client':>7} {'machine':>8}"
        + f" {'busy':>5}  other statuses"
    )  # fmt: skip
    rows = dict(results["phases"])
    if results.get("floor"):
        rows["floor"] = {**results["floor"], "statuses": results["floor"]["errors"]}
    for name, r in rows.items():
        other = {k: v for k, v in r["statuses"].items() if k != "200"}
        print(
            f"{name:<10} {r['per_second']:>8} {r['p50_ms'] or '-':>8} {r['p95_ms'] or '-':>8} "
            f"{r['p99_ms'] or '-':>8} {r['max_ms'] or '-':>8} {r['ok']:>7} "
            f"{r.get('server_cpu_ms_per_ok', '-'):>27} {r.get('postgres_cpu_ms_per_ok', '-'):>6} "
            f"{r.get('client_cpu_ms_per_ok', '-'):>7} {r.get('machine_cpu_ms_per_ok', '-'):>8} "
            f"{r.get('machine_busy_pct', '-'):>4}%  {other or ''}"
        )
    print()
    for line in results["targets"]:
        print(line)


def targets(results: dict[str, Any]) -> list[str]:
    out = []
    phases = results["phases"]
    sales = phases.get("sales")
    floor = results.get("floor")
    if sales and floor and floor["per_second"]:
        ratio = sales["per_second"] / floor["per_second"]
        results["api_over_floor"] = round(ratio, 3)
        out.append(
            f"POST /sales ÷ floor ({floor.get('shape', 'reference')} shape): "
            f"{sales['per_second']} / {floor['per_second']} = "
            f"{ratio:.0%}  (target ≥ 40%) {'OK' if ratio >= 0.4 else 'MISSED'}"
        )
    if "rounds" in results:
        ratios = ", ".join(f"{one['ratio']:.0%}" for one in results["rounds"])
        median = results["api_over_floor_median"]
        out.append(
            f"  over {len(results['rounds'])} rounds (sales, then floor): {ratios}; median "
            f"{median:.0%}  (target ≥ 40%) {'OK' if median >= 0.4 else 'MISSED'}"
        )
    if sales and floor and floor["ok"] and sales["ok"]:
        # The same comparison in CPU time per sale, which hardly depends on what else
        # the machine runs: the service (server + its PostgreSQL backends) against
        # the floor (its client, which plays the service, + its backends).
        api_cpu = sales["server_cpu_ms_per_ok"] + sales["postgres_cpu_ms_per_ok"]
        floor_cpu = floor["client_cpu_ms_per_ok"] + floor["postgres_cpu_ms_per_ok"]
        results["floor_over_api_cpu_per_sale"] = round(floor_cpu / api_cpu, 3)
        out.append(
            f"  in CPU per sale: floor {floor_cpu:.1f} ms ÷ service {api_cpu:.1f} ms = "
            f"{floor_cpu / api_cpu:.0%} (server {sales['server_cpu_ms_per_ok']} + PostgreSQL "
            f"{sales['postgres_cpu_ms_per_ok']}; the HTTP clients' own "
            f"{sales['client_cpu_ms_per_ok']} ms not counted)"
        )
    if sales and sales["p50_ms"]:
        k = sales["p99_ms"] / sales["p50_ms"]
        results["sales_p99_over_p50"] = round(k, 2)
        out.append(
            f"POST /sales p99 ÷ p50: {sales['p99_ms']} / {sales['p50_ms']} = {k:.1f}×  "
            f"(target ≤ 5×) {'OK' if k <= 5 else 'MISSED'}"
        )
    hot = phases.get("hot")
    if hot and hot["p50_ms"]:
        k = hot["p99_ms"] / hot["p50_ms"]
        results["hot_p99_over_p50"] = round(k, 2)
        out.append(
            f"hot-item POST /sales p99 ÷ p50: {hot['p99_ms']} / {hot['p50_ms']} = {k:.1f}×  "
            f"(target ≤ 5×) {'OK' if k <= 5 else 'MISSED'}"
        )
    if hot and sales and sales["per_second"]:
        k = hot["per_second"] / sales["per_second"]
        results["hot_over_random"] = round(k, 3)
        out.append(
            f"hot-item ÷ random-product POST /sales: {hot['per_second']} / "
            f"{sales['per_second']} = {k:.0%}  (target ≥ 70%) {'OK' if k >= 0.7 else 'MISSED'}"
        )
    s, p = phases.get("search"), phases.get("product")
    if s and p and s["p50_ms"] and p["p50_ms"]:
        k = s["p50_ms"] / p["p50_ms"]
        results["search_over_product_p50"] = round(k, 2)
        out.append(
            f"GET /products?search= p50 ÷ GET /products/{{id}} p50: {s['p50_ms']} / "
            f"{p['p50_ms']} = {k:.1f}×  (target ≤ 2×) {'OK' if k <= 2 else 'MISSED'}"
        )
    tenants = phases.get("tenants")
    if tenants and sales and sales["per_second"] and sales["p99_ms"]:
        # issue 28: sales spread over many companies against one company's
        k = tenants["per_second"] / sales["per_second"]
        t99 = tenants["p99_ms"] / sales["p99_ms"]
        results["tenants_over_sales"] = {"per_second": round(k, 3), "p99": round(t99, 3)}
        good = k >= 0.85 and t99 <= 1.15
        out.append(
            f"{results['args'].get('companies')} companies ÷ one: ok/s {tenants['per_second']} "
            f"/ {sales['per_second']} = {k:.0%}, p99 {tenants['p99_ms']} / {sales['p99_ms']} "
            f"ms = {t99:.0%}  (target: within 15%) {'OK' if good else 'MISSED'}"
        )
    out += reads_targets(results)
    out.append(
        "history: compare POST /sales ok/s of a run with --history 1000000 against one "
        "without (target: within 15%)"
    )
    return out


def reads_targets(results: dict[str, Any]) -> list[str]:
    """Each read of the ``reads`` phase as a share of /health's ok/s in the same
    run (throughput moves with the machine's neighbours; the ratio much less), and
    its server CPU per request beside /health's."""
    phases = results["phases"]
    health = phases.get("reads_health")
    out = reads_over_floors(results, health)
    if not health or not health["per_second"]:
        return out
    ratios = {}
    for name, label in (("reads_product", "GET /products/{id}"),
                        ("reads_sale", "GET /sales/{id}"),
                        ("reads_feed", f"GET /products feed page of {FEED_PAGE}")):  # fmt: skip
        r = phases.get(name)
        if not r:
            continue
        k = r["per_second"] / health["per_second"]
        ratios[name] = round(k, 3)
        out.append(
            f"{label} ÷ GET /health: {r['per_second']} / {health['per_second']} = {k:.0%}  "
            f"(target ≥ {READS_TARGET:.0%}) {'OK' if k >= READS_TARGET else 'MISSED'}; "
            f"server CPU {r['server_cpu_ms_per_ok']} ms per request "
            f"(/health {health['server_cpu_ms_per_ok']})"
        )
    results["reads_over_health"] = ratios
    return out


def reads_over_floors(results: dict[str, Any], health: dict[str, Any] | None) -> list[str]:
    """Each read against its floor (``floor.run_read_floor``): the share of the
    read the service keeps; and, beside /health, the share of /health that the
    floor's own CPU leaves a read at most."""
    out: list[str] = []
    floors, shares = results.get("read_floors", {}), {}
    for name, r in results["phases"].items():
        f = floors.get(name)
        if not f or not f["per_second"] or not f["machine_cpu_ms_per_ok"]:
            continue
        k = r["per_second"] / f["per_second"]
        shares[name] = round(k, 3)
        line = (
            f"{name} ÷ its floor: {r['per_second']} / {f['per_second']} = {k:.0%} (the floor's "
            f"machine CPU {f['machine_cpu_ms_per_ok']} ms per read, PostgreSQL's "
            f"{f['postgres_cpu_ms_per_ok']}"
        )
        if health and health["machine_cpu_ms_per_ok"]:
            cap = health["machine_cpu_ms_per_ok"] / f["machine_cpu_ms_per_ok"]
            line += f"; at the floor's cost a read would be {cap:.0%} of /health"
        out.append(line + ")")
    results["reads_over_floor"] = shares
    return out


# ------------------------------------------------------------------ main


async def more_rounds(
    args: argparse.Namespace, url: str, work: Workload, results: dict[str, Any]
) -> None:
    """``--rounds N``: N - 1 more pairs of a POST /sales phase and a floor run, one
    after the other, so that both sides of the ratio meet the same neighbours. On a
    shared 2-core VM the machine's speed drifts by ±15% within minutes (the same
    code measured 342 and 437 floor sales/s ten minutes apart); the median of the
    rounds' ratios is the figure to quote."""
    from floor import run_floor

    rounds = [{"sales": results["phases"]["sales"]["per_second"],
               "floor": results["floor"]["per_second"]}]  # fmt: skip
    for r in range(1, args.rounds):
        server = Server(url, os.environ["TILLBOOK_MASTER_KEY"], args.workers, args.pool_size)
        try:
            await server.wait_ready(work.keys[0])
            await run_phase("warmup", server.base, work.keys, args.clients, args.warmup,
                            work.post_sale)  # fmt: skip
            rec = await run_phase(
                "sales", server.base, work.keys, args.clients, args.duration, work.post_sale
            )
        finally:
            server.stop()
        await maintain(url)
        floor = await run_floor(
            url,
            work.info,
            clients=args.clients,
            duration=args.duration,
            warmup=args.warmup,
            shape=args.floor_shape,
            generic_plans=args.floor_plans == "generic",
        )
        rounds.append({"sales": rec.summary()["per_second"], "floor": floor["per_second"]})
        print(f"  round {r + 1}: sales {rounds[-1]['sales']}/s, floor {rounds[-1]['floor']}/s")
    for one in rounds:
        one["ratio"] = round(one["sales"] / one["floor"], 3) if one["floor"] else 0.0
    results["rounds"] = rounds
    results["api_over_floor_median"] = statistics.median(one["ratio"] for one in rounds)


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    from floor import run_floor
    from seed import check, roll_up_all, seed, seed_tenants

    from tillbook.migrate import upgrade

    url = args.database_url
    results: dict[str, Any] = {
        "started_at": dt.datetime.now(dt.UTC).isoformat(),
        "args": {k: v for k, v in vars(args).items() if k != "func"},
        "machine": machine_facts(),
        "phases": {},
    }
    info = load_seed(url, args) if args.reuse else None
    if info is None:
        print(f"database {url}: fresh, migrate, seed (history {args.history:,} sales)")
        await fresh_database(url, force=args.force)
        t0 = time.perf_counter()
        await asyncio.to_thread(upgrade, url)
        info = await seed(url, products=args.products, history=args.history)
        if args.companies > 1:
            info["tenants"] = await seed_tenants(
                url, args.companies - 1, products=args.tenant_products
            )
            companies = [info["company_id"], *(t["company_id"] for t in info["tenants"])]
            await roll_up_all(url, companies)
            await maintain(url)
        results["seed_seconds"] = round(time.perf_counter() - t0, 1)
        save_seed(url, args, info)
    else:
        print(f"database {url}: reused as seeded (history {args.history:,} sales)")
        results["reused"] = True
    results["database"] = await database_facts(url)
    work = Workload(info)

    phases = [q for p in args.phases.split(",") if p for q in (READS if p == "reads" else [p])]
    if "tenants" in phases and not info.get("tenants"):
        raise SystemExit("the tenants phase needs --companies > 1")
    if phases:
        bouncer = None
        server_url = url
        if args.pgbouncer:
            sys.path.insert(0, str(HERE.parent))
            from tests.servers import PgBouncer

            bouncer = PgBouncer(url, pool_size=args.pgbouncer_pool).start()
            server_url = bouncer.through(url)
            results["pgbouncer"] = {"port": bouncer.port, "default_pool_size": args.pgbouncer_pool}
            print(f"through pgbouncer (pool_mode = transaction, pool {args.pgbouncer_pool})")
        server = Server(server_url, os.environ["TILLBOOK_MASTER_KEY"], args.workers, args.pool_size)
        try:
            await server.wait_ready(work.keys[0])
            print(f"server on port {server.port}, {args.workers} worker(s), pids "
                  f"{server.worker_pids()}")  # fmt: skip
            # Warm-up: connections, caches, first-use imports; not counted.
            await run_phase("warmup", server.base, work.keys, args.clients, args.warmup,
                            work.post_sale)  # fmt: skip
            requests: dict[str, Request] = {
                "sales": work.post_sale,
                "hot": work.post_hot_sale,
                "search": work.search,
                "product": work.product,
                "sale_get": work.sale_get,
                "payments": work.payment,
                "reads_health": work.health,
                "reads_product": work.product,
                "reads_sale": work.sale_get,
                "reads_feed": work.feed,
                "tenants": work.post_tenant_sale,
            }
            results["maintenance_seconds"] = [round(await maintain(url), 1)]
            for name in phases:
                if name == "payments":
                    await work.setup_payments(server.base, args.clients)
                if name in ("sale_get", "reads_sale"):
                    await work.ensure_sales(server.base)
                if name == "hot":
                    await work.top_up_hot(server.base)
                if name == "tenants":
                    # Warm-up spread over the companies too (as a sales phase's
                    # warm-up is over its one company), not measured. A company's
                    # first sale in a server process reads its accounts, taxes and
                    # modes (``kit/refcache.py``): ``--tenants-warmup`` long enough
                    # for most companies to have sold in both processes measures
                    # the steady state, a short one mostly first sales.
                    warmup = args.warmup if args.tenants_warmup is None else args.tenants_warmup
                    await run_phase("warmup", server.base, [{}], args.clients, warmup,
                                    work.post_tenant_sale)  # fmt: skip
                profiler = None
                if args.profile and name in args.profile_phases.split(","):
                    where = Path(args.profile)
                    profiler = start_profiler(
                        server, args.duration, where.with_name(f"{where.stem}.{name}{where.suffix}")
                    )
                load = os.getloadavg()[0]
                meter = CpuMeter(url, server.all_pids())
                pooler_cpu = pooler_seconds(bouncer)
                waits = WaitSampler(url)

                async def measure() -> None:
                    await meter.start()  # noqa: B023 (awaited within this iteration)
                    waits.start()  # noqa: B023

                health = name == "reads_health"
                rec = await run_phase(
                    name,
                    server.root if health else server.base,
                    work.keys[:1] if name == "hot" else [{}] if name == "tenants" else work.keys,
                    args.clients,
                    args.duration,
                    requests[name],
                    started=measure,
                    opener="/health" if health else "/warehouses",
                )
                sessions = await waits.stop()
                cpu = await meter.stop(len(rec.latencies))
                if bouncer is not None:
                    pooler_ms = 1000 * (pooler_seconds(bouncer) - pooler_cpu)
                    per_ok = pooler_ms / max(len(rec.latencies), 1)
                    cpu["pgbouncer_cpu_ms_per_ok"] = round(per_ok, 3)
                results["phases"][name] = {
                    **rec.summary(),
                    **cpu,
                    "db_sessions": sessions,
                    "loadavg_1m_before": load,
                }
                r = results["phases"][name]
                print(f"  {name:<9} {r['per_second']:>7}/s  p50 {r['p50_ms']} ms  "
                      f"p99 {r['p99_ms']} ms  {r['statuses']}  cpu ms/req: server "
                      f"{cpu['server_cpu_ms_per_ok']} pg {cpu['postgres_cpu_ms_per_ok']} "
                      f"client {cpu['client_cpu_ms_per_ok']} machine "
                      f"{cpu['machine_cpu_ms_per_ok']} ({cpu['machine_busy_pct']}% busy)"
                      )  # fmt: skip
                print(f"            server CPU s per process: {cpu['server_cpu_s_per_process']}")
                print(f"            db sessions (mean count): {sessions}")
                if bouncer is not None:
                    print(f"            pgbouncer cpu ms/req: {cpu['pgbouncer_cpu_ms_per_ok']}")
                if profiler is not None:
                    profiler.wait(timeout=args.duration + 60)
                results["maintenance_seconds"].append(round(await maintain(url), 1))
        finally:
            server.stop()
            if bouncer is not None:
                bouncer.stop()

    if not args.skip_floor:
        if not phases:
            await maintain(url)
        print(f"floor ({args.floor_shape}, {args.floor_plans} plans): {args.clients} asyncpg "
              f"clients, {args.duration:.0f} s")  # fmt: skip
        results["floor"] = await run_floor(
            url,
            info,
            clients=args.clients,
            duration=args.duration,
            warmup=args.warmup,
            shape=args.floor_shape,
            generic_plans=args.floor_plans == "generic",
        )
        results["floor"]["shape"] = args.floor_shape
        results["floor"]["plans"] = args.floor_plans
    reads = [name for name in phases if name in READ_FLOOR_OF]
    if reads and not args.skip_floor:
        from floor import run_read_floor

        results["read_floors"] = {}
        for name in reads:
            what = READ_FLOOR_OF[name]
            await maintain(url)
            print(f"floor of {name}: {args.clients} asyncpg clients, {args.duration:.0f} s")
            results["read_floors"][name] = r = await run_read_floor(
                url, info, what, work.sale_ids, clients=args.clients,
                duration=args.duration, warmup=args.warmup, feed_page=FEED_PAGE,
                generic_plans=args.floor_plans == "generic",
            )  # fmt: skip
            print(f"  {what:<9} {r['per_second']:>7}/s  p50 {r['p50_ms']} ms  cpu ms/read: pg "
                  f"{r['postgres_cpu_ms_per_ok']} client {r['client_cpu_ms_per_ok']} machine "
                  f"{r['machine_cpu_ms_per_ok']} ({r['machine_busy_pct']}% busy)")  # fmt: skip
    if args.rounds > 1 and "sales" in phases and "floor" in results:
        await more_rounds(args, url, work, results)
    results["books"] = await check(url, info["company_id"])
    if info.get("tenants"):
        # The tenants' books: a sample of companies (each check scans its company).
        sample = random.Random(28).sample(info["tenants"], min(20, len(info["tenants"])))
        checks = [await check(url, tenant["company_id"]) for tenant in sample]
        results["books_tenants"] = {
            "companies_checked": len(checks),
            "ok": all(c["ok"] for c in checks),
            "failed": [c for c in checks if not c["ok"]],
        }
        print(f"books of {len(checks)} tenant companies: "
              f"{'ok' if results['books_tenants']['ok'] else 'NOT OK'}")  # fmt: skip
    results["database_after"] = await database_facts(url)
    results["machine"]["loadavg_after"] = os.getloadavg()
    results["targets"] = targets(results)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=2, help="server worker processes")
    parser.add_argument("--clients", type=int, default=16, help="concurrent clients")
    parser.add_argument("--duration", type=float, default=30, help="seconds per phase")
    parser.add_argument("--warmup", type=float, default=3, help="seconds of unmeasured sales")
    parser.add_argument("--database-url", default=DEFAULT_URL)
    parser.add_argument("--history", type=int, default=0, help="past sales to seed")
    parser.add_argument("--products", type=int, default=10_000, help="per warehouse")
    parser.add_argument(
        "--companies",
        type=int,
        default=1,
        help="companies in all (issue 28): the main one and N - 1 tenants of two branches "
        "each, for the tenants phase",
    )
    parser.add_argument(
        "--tenant-products", type=int, default=100, help="products per branch of a tenant"
    )
    parser.add_argument(
        "--tenants-warmup",
        type=float,
        default=None,
        help="seconds of unmeasured sales spread over the companies before the tenants "
        "phase (default --warmup)",
    )
    parser.add_argument(
        "--phases",
        default=",".join(PHASES),
        help=f"comma-separated, of {', '.join(PHASES + OPTIONAL_PHASES)}",
    )
    parser.add_argument("--pool-size", type=int, default=None, help="TILLBOOK_DB_POOL_SIZE")
    parser.add_argument("--skip-floor", action="store_true")
    parser.add_argument(
        "--floor-shape",
        choices=("reference", "service"),
        default="reference",
        help="the floor's statements: the reference shape every earlier figure was measured "
        "against (10 statements), or the service's own since 2026-11-28 (5: the customer, "
        "products and layers in one read, the order's insert reserving ids, everything else "
        "in the last statement)",
    )
    parser.add_argument(
        "--floor-plans",
        choices=("auto", "generic"),
        default="auto",
        help="how PostgreSQL plans the floor's prepared statements: its default (auto), as "
        "every earlier figure was measured, or one generic plan each (plan_cache_mode = "
        "force_generic_plan), as the service's connections have since 2026-11-28",
    )
    parser.add_argument(
        "--pgbouncer",
        action="store_true",
        help="serve through a pgbouncer in transaction pooling mode started for the run",
    )
    parser.add_argument(
        "--pgbouncer-pool", type=int, default=40, help="its server connections per database"
    )
    parser.add_argument(
        "--rounds", type=int, default=1, help="pairs of POST /sales and floor runs (median ratio)"
    )
    parser.add_argument(
        "--profile",
        default=None,
        help="py-spy output, e.g. profile.svg (flame graph) or profile.txt (collapsed stacks)",
    )
    parser.add_argument("--profile-phases", default="sales")
    parser.add_argument("--json", default=None, help="write the results here")
    parser.add_argument("--force", action="store_true", help="drop a database without 'bench'")
    parser.add_argument(
        "--reuse",
        action="store_true",
        help="run on the database a previous run seeded with the same --products and "
        "--history (skips the drop and the seeding; the sales earlier runs made stay)",
    )
    args = parser.parse_args()
    if (args.tenants_warmup or 0) > 600:
        parser.error("bounded: --tenants-warmup at most 600 s")
    if args.duration > 600 or args.clients > 256:
        parser.error("bounded: --duration at most 600 s, --clients at most 256")

    # One master key for the seeding (xids, encrypted secrets) and the server.
    os.environ["TILLBOOK_MASTER_KEY"] = os.environ.get(
        "TILLBOOK_MASTER_KEY", base64.urlsafe_b64encode(os.urandom(32)).decode()
    )
    os.environ["TILLBOOK_DATABASE_URL"] = args.database_url
    with contextlib.suppress(ImportError):
        import uvloop

        uvloop.install()
    results = asyncio.run(main_async(args))
    print_table(results)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2, default=str) + "\n")
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
