"""The register in Chromium against a branch with 10,000 products (issue 24).

    python bench/register.py [--database-url postgresql://postgres@127.0.0.1:5432/tillbook_bench_register]

Drops and recreates the database (its name must contain 'bench'), seeds one
branch with 10,000 products (bench/seed.py), starts ``tillbook serve`` and drives
the system's Chromium (headless) through: the first load online to the first sale
(pairing with the branch's key and the whole catalog sync included), later opens
from the service worker's cache, a scan to its line on screen, search per
keystroke, and tender to receipt online and offline. Figures in milliseconds."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from run import fresh_database
from seed import seed

from tillbook.migrate import upgrade

DEFAULT_URL = "postgresql://postgres@127.0.0.1:5432/tillbook_bench_register"
CHROMIUM = os.environ.get("TILLBOOK_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def measure(base: str, key: dict[str, Any], profile: Path) -> dict[str, Any]:
    from playwright.async_api import async_playwright

    out: dict[str, Any] = {}
    async with async_playwright() as pw:
        ctx = await pw.chromium.launch_persistent_context(
            str(profile), executable_path=CHROMIUM, args=["--no-sandbox"], headless=True
        )
        page = ctx.pages[0] if ctx.pages else await ctx.new_page()
        page.on("dialog", lambda d: d.accept())
        t0 = time.perf_counter()
        await page.goto(f"{base}/register")
        await page.get_by_text("Use an API key instead").click()
        await page.get_by_label("Public key").fill(key["public_key"])
        await page.get_by_label("Secret key").fill(key["secret_key"])
        await page.get_by_label("Invoice prefix").fill("B1")
        await page.get_by_role("button", name="Use this key").click()
        await page.locator("#screen-sell").wait_for(state="visible", timeout=120000)
        await page.locator("#search").fill("SKU-1000042")
        await page.locator("#search").press("Enter")
        await page.keyboard.press("F9")
        await page.locator("#pay-amount").press("Enter")
        await page.wait_for_function("() => window.__lastSale", timeout=60000)
        out["first_load_to_first_sale_ms"] = round((time.perf_counter() - t0) * 1000)
        out["products_on_device"] = await page.evaluate(
            "() => window.__register.state.products.size"
        )

        opens = []
        for _ in range(5):
            t = time.perf_counter()
            await page.reload()
            await page.locator("#screen-sell").wait_for(state="visible")
            opens.append((time.perf_counter() - t) * 1000)
        out["open_from_cache_ms_median"] = round(statistics.median(opens))

        # Scan to line: from the Enter ending the burst to the line rendered (in page).
        scans = []
        for i in range(20):
            code = f"2001{i + 100:09d}"
            await page.keyboard.type(code, delay=5)
            ms = await page.evaluate(
                """() => new Promise((resolve) => {
                    const t = performance.now();
                    const e = {key: 'Enter', bubbles: true};
                    window.dispatchEvent(new KeyboardEvent('keydown', e));
                    requestAnimationFrame(() => resolve(performance.now() - t));
                })"""
            )
            scans.append(ms)
        out["scan_to_line_ms_median"] = round(statistics.median(scans), 1)
        out["scan_to_line_ms_max"] = round(max(scans), 1)
        out["scans_that_were_scans"] = await page.locator("#lines tr").count()

        # Search per keystroke over the 10,000 products (search and render the list).
        per_key = await page.evaluate(
            """() => {
                const box = document.getElementById('search');
                const times = [];
                const qs = ['b', 'bl', 'blu', 'blue', 'blue m', 'sku-10004', '2001000', 'x#9'];
                for (const q of qs) {
                    const t = performance.now();
                    box.value = q;
                    box.dispatchEvent(new Event('input', {bubbles: true}));
                    document.getElementById('results').getBoundingClientRect();
                    times.push(performance.now() - t);
                }
                box.value = '';
                box.dispatchEvent(new Event('input', {bubbles: true}));
                return times;
            }"""
        )
        out["search_per_keystroke_ms_median"] = round(statistics.median(per_key), 1)
        out["search_per_keystroke_ms_max"] = round(max(per_key), 1)

        async def tender() -> float:
            await page.keyboard.press("F9")
            await page.locator("#pay-amount").press("Enter")
            await page.wait_for_function("() => !document.getElementById('dlg-pay').open")
            return float(await page.evaluate("() => window.__lastTenderMs"))

        online = [await tender()]
        for i in range(4):
            await page.locator("#search").fill(f"SKU-1{i + 200:06d}")
            await page.locator("#search").press("Enter")
            online.append(await tender())
        out["tender_to_receipt_online_ms_median"] = round(statistics.median(online), 1)
        await ctx.set_offline(True)
        offline = []
        for i in range(5):
            await page.locator("#search").fill(f"SKU-1{i + 300:06d}")
            await page.locator("#search").press("Enter")
            offline.append(await tender())
        out["tender_to_receipt_offline_ms_median"] = round(statistics.median(offline), 1)
        t = time.perf_counter()
        await page.reload()
        await page.locator("#screen-sell").wait_for(state="visible")
        out["open_from_cache_offline_ms"] = round((time.perf_counter() - t) * 1000)
        await ctx.set_offline(False)
        await page.evaluate("() => window.__register.flush()")
        out["queued_after_reconnect"] = int(await page.locator("#queued").text_content() or -1)
        await ctx.close()
    return out


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    await fresh_database(args.database_url, force=False)
    await asyncio.to_thread(upgrade, args.database_url)
    seeded = await seed(args.database_url, products=args.products, warehouses=1, customers=50)
    key = seeded["warehouses"][0]
    port = free_port()
    env = dict(os.environ, TILLBOOK_DATABASE_URL=args.database_url)
    proc = subprocess.Popen(
        [sys.executable, "-m", "tillbook.cli", "serve", "--port", str(port), "--no-worker"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        import httpx

        for _ in range(300):
            try:
                httpx.get(f"{base}/health")
                break
            except httpx.TransportError:
                time.sleep(0.2)
        with tempfile.TemporaryDirectory() as profile:
            return await measure(base, key, Path(profile))
    finally:
        proc.terminate()
        proc.wait(timeout=15)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--database-url", default=DEFAULT_URL)
    parser.add_argument("--products", type=int, default=10_000)
    args = parser.parse_args()
    print(json.dumps(asyncio.run(main_async(args)), indent=2))


if __name__ == "__main__":
    main()
