"""The reads as an outsider measures them: wrk against ``tillbook serve`` as the
README starts it, ``GET /health`` as the yardstick (issue 27, item 1).

    .venv/bin/python bench/outside.py [--database-url URL] [--products 1000] \
        [--duration 10] [--connections 16] [--workers 2] [--quiet] [--json out.json] \
        [--targets product,sale] [--profile DIR] [--answers-off]

In a fresh temporary folder: ``tillbook demo`` (the embedded SQLite default, or the
PostgreSQL database ``--database-url`` names, dropped and created first: its name
must contain ``bench``), ``--products`` more products imported into the demo's first
branch through ``tillbook import products`` (so that a page of the change feed holds
100), a key of that branch with a rate limit no load reaches, one sale through the
API; then ``tillbook serve --workers N`` with its default settings (the access log
on, as a shop runs it; ``--quiet`` sets ``TILLBOOK_LOG_LEVEL=warning``, as
``bench/run.py`` does) and, one after the other, ``wrk -t2 -cC -dD`` on:

    health      GET /health (no key, no database: the yardstick)
    product     GET /products/{xid}
    sale        GET /sales/{id}
    feed        GET /products?updated_since=1970-01-01T00:00:00Z&limit=100
    categories  GET /categories
    brands      GET /brands, taxes GET /taxes, units GET /units, modes GET
                /payment-modes, expenses GET /expense-categories, branch GET
                /warehouses (the reference lists of a till's sync)
    search      GET /products?search=product 12
    delta       GET /products?updated_since=<a minute after the import>&limit=100
                (a till polling its delta with nothing changed since; run once
                that time has passed)
    health      GET /health again (the machine's drift over the run)

Each line gives requests a second, non-2xx answers, latency, and the server's CPU
per request (its worker processes' user and system time, ``/proc``) and
PostgreSQL's (every ``postgres`` process's, so nothing else may use it), and each read
is reported as a share of the mean of the two /health runs. wrk runs on the same
machine (Debian's ``wrk`` package); nothing else of the bench is used.

Each read repeats one request, so with the service's defaults a worker serves all
but its first from memory (``api.answers``: kept until the company next writes);
``--answers-off`` (``TILLBOOK_ANSWER_CACHE_S=0``) measures the database's path.

``--targets`` runs only the named reads (between the two /health runs);
``--profile DIR`` records each worker with py-spy during each read into
``DIR/<read>.<pid>.txt`` (collapsed stacks, idle time left out). py-spy takes CPU
of its own: a profiled run's figures are not the unprofiled ones.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from import_products import fresh_database
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

from tillbook.db import async_url

CLI = [sys.executable, "-m", "tillbook.cli"]
HEADER = (
    "item_code,name,barcode,category,brand,unit,tax,sales_price,purchase_price,mrp,"
    "warehouse,opening_stock,opening_cost,reorder_level"
)
FEED = "/products?updated_since=1970-01-01T00:00:00Z&limit=100"


def run_cli(env: dict[str, str], cwd: Path, *args: str) -> str:
    done = subprocess.run([*CLI, *args], env=env, cwd=cwd, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"tillbook {' '.join(args[:2])} failed: {done.stderr[-2000:]}")
    return done.stdout


async def vacuum_analyze(url: str) -> None:
    engine = create_async_engine(async_url(url), isolation_level="AUTOCOMMIT")
    async with engine.connect() as conn:
        await conn.execute(text("VACUUM ANALYZE"))
    await engine.dispose()


def catalog_file(path: Path, products: int, warehouse: str) -> None:
    rows = [HEADER]
    for i in range(products):
        price = 1 + (i * 37 % 4000) / 100
        rows.append(
            f"OUT-{i:06d},Product {i},29{i:011d},Category {i % 12},Brand {i % 9},Piece,"
            f"VAT 10%,{price:.2f},{price * 0.6:.2f},{price + 1:.2f},{warehouse},50,,5"
        )
    path.write_text("\n".join(rows) + "\n")


def call(base: str, headers: dict[str, str], path: str, body: Any = None) -> Any:
    request = urllib.request.Request(
        base + path,
        data=None if body is None else json.dumps(body).encode(),
        headers={**headers, "Content-Type": "application/json"},
        method="GET" if body is None else "POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            found = json.loads(answer.read())
            return found.get("data", found)
    except urllib.error.HTTPError as exc:
        raise SystemExit(f"{request.method} {path}: {exc.code} {exc.read()[:500]!r}") from exc


def worker_pids(server: subprocess.Popen[bytes]) -> list[int]:
    found = subprocess.run(
        ["ps", "-o", "pid=", "--ppid", str(server.pid)], capture_output=True, text=True
    ).stdout.split()
    return [int(p) for p in found] or [server.pid]


def postgres_ticks() -> dict[int, int]:
    """CPU ticks of every PostgreSQL process on the machine, by pid (backends come
    and go with the pool: one that started during a run counts from zero)."""
    found = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            comm, rest = stat.read_text().split(") ", 1)
        except (FileNotFoundError, ProcessLookupError, ValueError):
            continue
        if comm.endswith("(postgres"):
            fields = rest.split()
            found[int(stat.parent.name)] = int(fields[11]) + int(fields[12])
    return found


def cpu_ticks(pids: list[int]) -> int:
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except FileNotFoundError:
            continue
        total += int(fields[11]) + int(fields[12])
    return total


def profile(args: argparse.Namespace, name: str, pids: list[int]) -> list[subprocess.Popen[bytes]]:
    """py-spy on each worker for the length of one wrk run (``--profile``)."""
    if not args.profile:
        return []
    folder = Path(args.profile)
    folder.mkdir(parents=True, exist_ok=True)
    spies = []
    for pid in pids:
        out = folder / f"{name}.{pid}.txt"
        command = ["py-spy", "record", "--pid", str(pid), "--duration", str(args.duration)]
        command += ["--rate", "250", "--format", "raw", "--output", str(out)]
        spies.append(
            subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        )
    return spies


def wrk(
    url: str, headers: dict[str, str], args: argparse.Namespace, pids: list[int]
) -> dict[str, Any]:
    command = ["wrk", "-t2", f"-c{args.connections}", f"-d{args.duration}s", "--latency"]
    for name, value in headers.items():
        command += ["-H", f"{name}: {value}"]
    before = cpu_ticks(pids)
    pg_before = postgres_ticks()
    out = subprocess.run([*command, url], capture_output=True, text=True, check=True).stdout
    ticks = cpu_ticks(pids) - before
    pg_ticks = sum(t - pg_before.get(pid, 0) for pid, t in postgres_ticks().items())
    requests = int(re.search(r"(\d+) requests in", out).group(1))  # type: ignore[union-attr]
    bad = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    p50 = re.search(r"^\s+50%\s+(\S+)", out, re.M)
    p99 = re.search(r"^\s+99%\s+(\S+)", out, re.M)
    return {
        "req_s": float(re.search(r"Requests/sec:\s+(\S+)", out).group(1)),  # type: ignore[union-attr]
        "non_2xx": int(bad.group(1)) if bad else 0,
        "p50": p50.group(1) if p50 else None,
        "p99": p99.group(1) if p99 else None,
        "server_cpu_ms": round(ticks * 1000 / os.sysconf("SC_CLK_TCK") / max(requests, 1), 3),
        # Every PostgreSQL process's (nothing else should be using it; 0 on SQLite).
        "postgres_cpu_ms": round(pg_ticks * 1000 / os.sysconf("SC_CLK_TCK") / max(requests, 1), 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--database-url", default=None, help="PostgreSQL (default: SQLite)")
    parser.add_argument("--products", type=int, default=1000)
    parser.add_argument("--duration", type=int, default=10)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--port", type=int, default=8731)
    parser.add_argument("--quiet", action="store_true", help="no access log")
    parser.add_argument(
        "--answers-off",
        action="store_true",
        help="every read from the database (TILLBOOK_ANSWER_CACHE_S=0)",
    )
    parser.add_argument("--force", action="store_true")
    parser.add_argument("--json", default=None)
    parser.add_argument("--targets", default=None, help="comma-separated reads to run")
    parser.add_argument("--profile", default=None, help="py-spy's stacks into this folder")
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        raise SystemExit("wrk is not installed (apt-get install wrk)")

    with tempfile.TemporaryDirectory(prefix="tillbook-outside-") as tmp:
        folder = Path(tmp)
        env = {k: v for k, v in os.environ.items() if not k.startswith("TILLBOOK_")}
        env["TILLBOOK_MASTER_KEY"] = os.environ.get(
            "TILLBOOK_MASTER_KEY", "dGlsbGJvb2stdGVzdC1tYXN0ZXIta2V5LTMyLWJ5dGU="
        )
        if args.database_url:
            asyncio.run(fresh_database(args.database_url, args.force))
            env["TILLBOOK_DATABASE_URL"] = args.database_url
        if args.quiet:
            env["TILLBOOK_LOG_LEVEL"] = "warning"
        if args.answers_off:
            env["TILLBOOK_ANSWER_CACHE_S"] = "0"
        demo = json.loads(run_cli(env, folder, "demo", "--json"))
        company = demo["companies"][0]
        warehouse = company["warehouses"][0]
        if args.products:
            catalog_file(folder / "catalog.csv", args.products, warehouse["name"])
            run_cli(
                env,
                folder,
                "import",
                "products",
                "catalog.csv",
                "--company",
                str(company["id"]),
                "--json",
            )
        # A till's token after the catalog settled: more than the feeds' overlap after
        # the import, so that its delta has nothing touched since (the delta runs last,
        # once that time has come).
        polled_at = time.time() + 61
        key = json.loads(
            run_cli(
                env, folder, "keys", "create", "--warehouse", str(warehouse["id"]),
                "--name", "wrk", "--rate-limit", "1000000000/minute", "--json",
            )
        )  # fmt: skip
        if args.database_url:
            # What autovacuum would have done by now (it is off on the development
            # machines' PostgreSQL): the planner's statistics of the imported catalog.
            asyncio.run(vacuum_analyze(args.database_url))
        headers = {
            "X-Service-Public-Key": key["public_key"],
            "X-Service-Secret-Key": key["secret_key"],
        }
        root = f"http://127.0.0.1:{args.port}"
        base = f"{root}/api/v1/public"
        log = open(folder / "serve.log", "wb")  # noqa: SIM115
        server = subprocess.Popen(
            [*CLI, "serve", "--workers", str(args.workers), "--port", str(args.port)],
            env=env, cwd=folder, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
        try:
            deadline = time.monotonic() + 60
            while True:
                try:
                    urllib.request.urlopen(f"{root}/health", timeout=2).read()
                    break
                except OSError:
                    if time.monotonic() > deadline or server.poll() is not None:
                        raise SystemExit(
                            f"the server did not start; see {folder}/serve.log"
                        ) from None
                    time.sleep(0.3)
            page = call(base, headers, FEED)
            product = page["data"][0]
            sale = call(
                base,
                headers,
                "/sales",
                {
                    "user_id": company["walk_in_customer_id"],
                    "order_date": time.strftime("%Y-%m-%d"),
                    "product_items": [
                        {"xid": product["xid"], "quantity": 1, "unit_price": product["sales_price"]}
                    ],
                    "subtotal": product["sales_price"],
                    "tax_amount": 0,
                    "total": product["sales_price"],
                    "unique_id": os.urandom(8).hex(),
                },
            )
            polled = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(polled_at))
            targets = [
                ("health", f"{root}/health"),
                ("product", f"{base}/products/{product['xid']}"),
                ("sale", f"{base}/sales/{sale['order_id']}"),
                ("feed", base + FEED),
                ("categories", f"{base}/categories"),
                ("brands", f"{base}/brands"),
                ("taxes", f"{base}/taxes"),
                ("units", f"{base}/units"),
                ("modes", f"{base}/payment-modes"),
                ("expenses", f"{base}/expense-categories"),
                ("branch", f"{base}/warehouses"),
                ("search", f"{base}/products?search=product%2012"),
                ("delta", f"{base}/products?updated_since={polled}&limit=100"),
                ("health_again", f"{root}/health"),
            ]
            if args.targets:
                wanted = {"health", "health_again", *args.targets.split(",")}
                unknown = wanted - {name for name, _ in targets}
                if unknown:
                    raise SystemExit(f"unknown --targets: {', '.join(sorted(unknown))}")
                targets = [(name, url) for name, url in targets if name in wanted]
            pids = worker_pids(server)
            # Unmeasured: each worker's first requests (imports, caches, the key's
            # lookup) and the start's upkeep (roll-ups, ANALYZE) are not the reads'.
            for url in (f"{root}/health", f"{base}/products/{product['xid']}", base + FEED):
                subprocess.run(
                    ["wrk", "-t2", f"-c{args.connections}", "-d2s", url]
                    + [x for name, value in headers.items() for x in ("-H", f"{name}: {value}")],
                    capture_output=True,
                    check=True,
                )
            results: dict[str, Any] = {}
            for name, url in targets:
                if name == "delta":
                    time.sleep(max(0.0, polled_at + 1 - time.time()))
                spies = [] if name.startswith("health") else profile(args, name, pids)
                results[name] = wrk(url, headers, args, pids)
                for spy in spies:
                    spy.wait(timeout=60)
                print(f"{name:13s} {json.dumps(results[name])}", flush=True)
        finally:
            server.terminate()
            server.wait(timeout=30)
    health = (results["health"]["req_s"] + results["health_again"]["req_s"]) / 2
    summary = {
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs",
        "database": "postgresql" if args.database_url else "sqlite",
        "access_log": not args.quiet,
        "workers": args.workers,
        "connections": args.connections,
        "duration_s": args.duration,
        "results": results,
        "share_of_health": {
            name: round(r["req_s"] / health, 3)
            for name, r in results.items()
            if not name.startswith("health")
        },
    }
    print(json.dumps(summary["share_of_health"]))
    if args.json:
        Path(args.json).write_text(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
