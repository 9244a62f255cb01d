"""A shop set up from nothing, as its owner would: a company and two branches from
the command line, staff, a key acting as the cashier, a catalog and its customers
and suppliers imported from spreadsheet exports; then a day of trade through the
public API on that catalog, and the books checked by beancount's own checker."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.cli.test_cli import Run, _key_headers, as_json, cli, workdir  # noqa: F401  (fixtures)
from tests.cli_process import run_cli
from tests.factories import public_client
from tests.invariants import check_books
from tillbook.config import Settings
from tillbook.db import Database

PRODUCTS = 60


def catalog(main: str, harbour: str) -> str:
    rows = [
        "item_code,name,barcode,category,brand,unit,tax,sales_price,purchase_price,mrp,"
        "warehouse,opening_stock,opening_cost,reorder_level"
    ]
    for i in range(PRODUCTS):
        own = f"SETUP-{i:03d},Item {i},880{i:05d},Aisle {i % 4},Brand {i % 3},Piece,VAT 10%"
        rows.append(f"{own},{2 + i % 5}.50,1.{i % 9}0,,{main},{10 + i},,2")
        if i % 2 == 0:  # half the range in the second branch too, at its own price
            rows.append(f"SETUP-{i:03d},,,,,,,{3 + i % 5}.00,1.{i % 9}0,,{harbour},5,,")
    return "\n".join(rows) + "\n"


PARTIES = """code,name,phone,email,tax_number,address,opening_balance
C-001,Northwind Cafe,555-0101,orders@northwind.example,GB123,1 High St,25.00
C-002,Maria Lopez,555-0102,,,,
"""
SUPPLIERS = """code,name,phone,email,tax_number,address,opening_balance
S-001,Valley Wholesale,555-0201,,,,120.00
"""


async def test_a_shop_from_nothing(
    cli: Run,  # noqa: F811
    database_url: str,
    workdir: Path,  # noqa: F811
    tmp_path: Path,
    db: Database,
) -> None:
    company = as_json(
        cli("company", "create", "Corner Grocers", "--admin-email", "owner@corner-setup.example",
            "--admin-password", "correct horse battery", "--json")
    )  # fmt: skip
    cid = str(company["id"])
    main = as_json(cli("warehouse", "create", cid, "Corner main", "--json"))
    harbour = as_json(cli("warehouse", "create", cid, "Corner harbour", "--json"))
    env_password = {"TILLBOOK_STAFF_PASSWORD": "till password 1"}
    cashier = _staff(cli, database_url, workdir, cid, "tina@corner-setup.example", "Tina Till",
                     "cashier", main["id"], env_password)  # fmt: skip
    key = as_json(
        cli("keys", "create", "--warehouse", str(main["id"]), "--name", "till 1",
            "--user", str(cashier["id"]), "--json")
    )  # fmt: skip
    other_key = as_json(
        cli("keys", "create", "--warehouse", str(harbour["id"]), "--name", "till 2", "--json")
    )  # fmt: skip

    # the tax the catalog names, through the back office's own service
    from decimal import Decimal

    from tillbook.catalog import seeding as catalog_service

    await db.write(lambda s: catalog_service.create_tax(s, int(cid), "VAT 10%", Decimal("10")))
    files = {
        "products.csv": catalog(main["name"], harbour["name"]),
        "customers.csv": PARTIES,
        "suppliers.csv": SUPPLIERS,
    }
    for name, content in files.items():
        (tmp_path / name).write_text(content)
    imported = as_json(
        cli("import", "products", str(tmp_path / "products.csv"), "--company", cid, "--json")
    )
    assert imported == {"created": PRODUCTS + PRODUCTS // 2, "updated": 0, "unchanged": 0}
    for kind in ("customers", "suppliers"):
        as_json(cli("import", kind, str(tmp_path / f"{kind}.csv"), "--company", cid, "--json"))

    async with public_client(Settings(database_url=database_url), db) as client:
        await _a_day_of_trade(client, _key_headers(key), _key_headers(other_key))
    await check_books(db, int(cid))
    _bean_check(cli, cid, tmp_path)


def _staff(
    cli: Run,  # noqa: F811
    database_url: str,
    workdir: Path,  # noqa: F811
    cid: str,
    email: str,
    name: str,
    role: str,
    warehouse: int,
    extra_env: dict[str, str],
) -> dict[str, Any]:
    env = {**os.environ, "TILLBOOK_DATABASE_URL": database_url, **extra_env}
    env.pop("TILLBOOK_REDIS_URL", None)
    done = run_cli(
        ["staff", "create", "--company", cid, "--email", email, "--name", name,
         "--role", role, "--warehouse", str(warehouse), "--json"],
        env=env, cwd=workdir,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    data: dict[str, Any] = as_json(done)
    return data


async def _a_day_of_trade(
    client: httpx.AsyncClient, till: dict[str, str], other_till: dict[str, str]
) -> None:
    async def ok(method: str, path: str, headers: dict[str, str], **kw: Any) -> Any:
        r = await client.request(method, path, headers=headers, **kw)
        assert r.status_code == 200, (path, r.text)
        return r.json()

    products = (await ok("GET", "/products", till, params={"limit": 100}))["data"]
    assert products["total"] == PRODUCTS
    there = (await ok("GET", "/products", other_till, params={"limit": 100}))["data"]
    assert there["total"] == PRODUCTS // 2
    by_code = {p["item_code"]: p for p in products["data"]}
    modes = {m["code"]: m for m in (await ok("GET", "/payment-modes", till))["data"]}
    assert {"cash", "card"} <= set(modes)
    taxes = (await ok("GET", "/taxes", till))["data"]
    assert [t["name"] for t in taxes] == ["VAT 10%"]
    suppliers = (await ok("GET", "/suppliers", till))["data"]["data"]
    customers = (await ok("GET", "/customers", till, params={"search": "Northwind"}))["data"]
    northwind = customers["data"][0]
    assert northwind["balance"] == "25.00"  # its opening balance, in the first branch
    walk_up = await ok(
        "POST", "/customers", till, json={"name": "Walk-up Wendy", "phone": "555-0199"}
    )
    item = by_code["SETUP-004"]
    sale = await ok(
        "POST",
        "/sales",
        till,
        json={
            "user_id": walk_up["data"]["id"],
            "order_date": "2026-11-20",
            "product_items": [
                {"xid": item["xid"], "quantity": 2, "unit_price": item["sales_price"]},
                {"xid": by_code["SETUP-007"]["xid"], "quantity": 1, "unit_price": 4.5},
            ],
            "all_payments": [{"amount": 10, "payment_mode_id": "cash"}],
        },
    )
    shown = (await ok("GET", f"/sales/{sale['order_id']}", till))["data"]
    assert shown["staff_member"]["name"] == "Tina Till"
    await ok(
        "POST",
        "/sales",
        till,
        json={
            "user_id": northwind["id"],
            "order_date": "2026-11-20",
            "product_items": [{"xid": item["xid"], "quantity": 3, "unit_price": 4.5}],
        },
    )
    await ok(
        "POST",
        "/purchases",
        till,
        json={
            "user_id": suppliers[0]["id"],
            "order_date": "2026-11-21",
            "product_items": [{"xid": item["xid"], "quantity": 24, "unit_price": 1.4}],
            "all_payments": [{"amount": 10, "payment_mode_id": "card"}],
        },
    )
    await ok(
        "POST",
        "/sales-returns",
        till,
        json={
            "user_id": walk_up["data"]["id"],
            "order_date": "2026-11-21",
            "invoice_number": sale["invoice_number"],
            "items": [
                {"product_id": item["xid"], "quantity": 1, "unit_price": item["sales_price"]}
            ],
        },
    )
    stock = (await ok("GET", f"/products/{item['xid']}", till))["data"]["current_stock"]
    assert stock == 14 - 2 - 3 + 24 + 1


def _bean_check(cli: Run, cid: str, tmp_path: Path) -> None:  # noqa: F811
    bean_check = shutil.which("bean-check", path=os.path.dirname(sys.executable))
    if bean_check is None:
        pytest.skip("bean-check is not installed")
    books = cli("export", "journal", "--company", cid, "--format", "beancount").stdout
    path = tmp_path / "books.beancount"
    path.write_text(books)
    done = subprocess.run([bean_check, str(path)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
