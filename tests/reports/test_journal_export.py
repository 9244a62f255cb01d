"""The journal exported as beancount / hledger text is accepted by beancount itself."""

from __future__ import annotations

from decimal import Decimal

import pytest

from tests.cli_process import run_cli
from tests.invariants import check_books
from tillbook.reports.journal import account_ledger, export_journal


async def make_activity(client, shop):
    sale = {
        "user_id": shop.customer_id,
        "order_date": "2026-11-20",
        "product_items": [
            {"xid": shop.xid("apple"), "quantity": 3, "unit_price": 3.5, "tax_id": shop.tax10_id}
        ],
        "shipping": 1,
        "all_payments": [{"amount": 5, "payment_mode_id": "card"}],
    }
    assert (await client.post("/sales", json=sale, headers=shop.headers)).status_code == 200
    purchase = {
        "user_id": shop.supplier_id,
        "order_date": "2026-11-21",
        "product_items": [{"xid": shop.xid("tea"), "quantity": 2, "unit_price": 4}],
    }
    assert (await client.post("/purchases", json=purchase, headers=shop.headers)).status_code == 200


async def collect(db, company_id, fmt):
    async def run(s):
        return [line async for line in export_journal(s, company_id, fmt)]

    return "\n".join(await db.read(run)) + "\n"


async def test_beancount_export_checks_clean(client, shop, db, tmp_path):
    loader = pytest.importorskip("beancount.loader")
    await make_activity(client, shop)
    text = await collect(db, shop.company_id, "beancount")
    assert "Assets:11101-Cash-on-Hand" in text and "Income:41100-Sales-Revenue" in text
    entries, errors, _options = loader.load_string(text)
    assert errors == [], errors
    transactions = [e for e in entries if type(e).__name__ == "Transaction"]
    assert len(transactions) == 6  # 4 opening stock + sale + purchase
    await check_books(db, shop.company_id)


async def test_ledger_format_and_account_ledger(client, shop, db):
    await make_activity(client, shop)
    text = await collect(db, shop.company_id, "ledger")
    assert "account Assets:11700-Inventory-Asset" in text
    for block in text.split("\n\n")[2:]:
        amounts = [Decimal(line.split()[-2]) for line in block.splitlines()[1:] if line.strip()]
        assert sum(amounts) == 0, block
    report = await db.read(lambda s: account_ledger(s, shop.company_id, "11105"))
    assert report["closing_balance"] == "5.00" and len(report["lines"]) == 1
    with pytest.raises(Exception, match="format"):
        await collect(db, shop.company_id, "csv")


def test_cli_export_passes_bean_check(tmp_path):
    """As an accountant would: demo data, export, bean-check."""
    import os
    import shutil
    import subprocess
    import sys

    bean_check = shutil.which("bean-check", path=os.path.dirname(sys.executable))
    if bean_check is None:
        pytest.skip("bean-check is not installed")
    env = {**os.environ, "TILLBOOK_DATABASE_URL": f"sqlite:///{tmp_path}/demo.db"}
    run_cli(["demo", "--json"], env=env, cwd=tmp_path, check=True)
    journal = run_cli(
        ["export", "journal", "--company", "1", "--format", "beancount"],
        env=env, cwd=tmp_path, check=True,
    ).stdout  # fmt: skip
    (tmp_path / "books.beancount").write_text(journal)
    checked = subprocess.run(
        [bean_check, str(tmp_path / "books.beancount")], capture_output=True, text=True
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    import json

    lines, cursor = [], []
    while True:  # the demo's month of trading runs to several pages
        data = json.loads(
            run_cli(
                ["report", "ledger", "--company", "1", "--account", "11700", "--json",
                 "--limit", "1000", *cursor],
                env=env, cwd=tmp_path, check=True,
            ).stdout
        )  # fmt: skip
        lines += data["lines"]
        if not data["next_cursor"]:
            break
        cursor = ["--cursor", data["next_cursor"]]
    assert data["closing_balance"] == lines[-1]["balance"]
    # the stores opened before they traded: inventory never went below zero
    assert all(float(line["balance"]) >= 0 for line in lines)
